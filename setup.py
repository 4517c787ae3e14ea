"""Build the optional C inner loops; without a compiler the pure-Python engine is used."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("bpeproof.impl._fastbpe", ["impl/_fastbpe.c"], optional=True),
        Extension("bpeproof.impl._fastenc", ["impl/_fastenc.c"], optional=True),
    ]
)
