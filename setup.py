"""Build script: the C core is compiled by cffi (API mode, out of line) through cffi_modules."""

from setuptools import setup

setup(
    cffi_modules=["t_tensor/_build/ffi_build.py:ffibuilder"],
    zip_safe=False,
)
