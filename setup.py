"""Build the optional C inner loops; without a compiler the pure-Python engine is used."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("bpeproof.impl._fastbpe", ["impl/_fastbpe.c"], optional=True),
        # _fastenc.c includes the pre-tokenizers of _fastenc_scan.h: one translation unit, rebuilt when either changes.
        Extension("bpeproof.impl._fastenc", ["impl/_fastenc.c"], depends=["impl/_fastenc_scan.h"], optional=True),
    ]
)
