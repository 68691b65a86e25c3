"""Tensor's binary operators and Storage's finalizer as C methods (``csrc/python/fast_ops.c``).

Every other call into C goes through cffi, which releases and retakes the GIL around each call
and is reached from a Python frame. For a tiny ``a + b`` that overhead was most of the cost, so
the operators' plain case (two contiguous tensors of one dtype and shape, neither recording
autograd) and ``Storage.__del__`` run as CPython methods instead. They decide nothing of their
own: the table of which (op, dtype) pairs may run and what dtype they give is elementwise.py's
``_FAST_BINARY``, handed to C here, and every other call runs the Python operator it replaces.

:func:`install` runs once, when :mod:`t_tensor.tensor` has made the Tensor class. C reads the spec
from this module's ``_SPEC`` and leaves the methods in ``_METHODS`` (or what went wrong in
``_ERROR``), because a cffi call cannot take or return Python objects.

>>> import t_tensor as tt
>>> type(tt.Tensor.__add__).__name__, tt.Tensor.__add__.__name__
('method_descriptor', '__add__')
>>> (tt.ones(3) + tt.ones(3)).tolist()
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

from typing import Any

from t_tensor import dtypes
from t_tensor._capi import ffi, lib
from t_tensor.elementwise import _FAST_BINARY, _OPERATORS, ElementwiseOps

__all__ = ["install", "python_operator"]

_SPEC: tuple | None = None
_METHODS: dict[str, Any] = {}
_ERROR: BaseException | None = None

# Which Tensor method runs which op: read off ElementwiseOps, which assigns the Python operators
# (``__add__ = _OPERATORS["add"]``), so the two cannot disagree.
_OPERATOR_METHODS = {
    name: fn for name, value in vars(ElementwiseOps).items() for fn, operator in _OPERATORS.items() if value is operator
}


def python_operator(name: str) -> Any:
    """The Python operator that the C method ``name`` (``"__add__"``, ...) falls back to.

    >>> python_operator("__add__").__name__
    'add'
    """
    return _OPERATORS[_OPERATOR_METHODS[name]]


def install(tensor_type: type, storage_type: type) -> None:
    """Replace the binary operators of `tensor_type` and the finalizer of `storage_type` by the C
    methods (once per process); raises RuntimeError if C refuses the spec."""
    global _SPEC
    operators = tuple(
        (name, _OPERATORS[fn], tuple(_FAST_BINARY[fn])) for name, fn in _OPERATOR_METHODS.items()
    )
    _SPEC = (tensor_type, storage_type, ffi.typeof("tt_storage *"), dtypes.ALL_DTYPES, operators)
    if lib.tt_py_install_fast_ops(__name__.encode()) != 0:
        raise RuntimeError(f"t_tensor: installing the C operators failed: {_ERROR!r}")
    for name in _OPERATOR_METHODS:
        setattr(tensor_type, name, _METHODS[name])
    storage_type.__del__ = _METHODS["Storage.__del__"]
