"""Build the optional C inner loops; without a compiler the pure-Python engine is used."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("bpeproof.impl._c._fastbpe", ["impl/_c/_fastbpe.c"], optional=True),
        # _fastenc.c includes the pre-tokenizers of _fastenc_scan.h and the word counter of _fastenc_count.h: one
        # translation unit, rebuilt when any of them changes.
        Extension("bpeproof.impl._c._fastenc", ["impl/_c/_fastenc.c"],
                  depends=["impl/_c/_fastenc_scan.h", "impl/_c/_fastenc_count.h"], optional=True),
    ]
)
