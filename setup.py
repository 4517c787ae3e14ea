"""Build the optional C inner loops; without a compiler the pure-Python engine is used."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("bpeproof.impl._fastbpe", ["impl/_fastbpe.c"], optional=True),
        # _fastenc.c includes the pre-tokenizers of _fastenc_scan.h and the word counter of _fastenc_count.h: one
        # translation unit, rebuilt when any of them changes.
        Extension("bpeproof.impl._fastenc", ["impl/_fastenc.c"],
                  depends=["impl/_fastenc_scan.h", "impl/_fastenc_count.h"], optional=True),
    ]
)
