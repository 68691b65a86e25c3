"""Tensor's operators, unary methods and Storage's finalizer as C methods (``csrc/python/fast_ops.c``).

Every other call into C goes through cffi, which releases and retakes the GIL around each call
and is reached from a Python frame. For a tiny ``a + b`` that overhead was most of the cost, so
the plain cases and ``Storage.__del__`` run as CPython methods instead. The plain cases are the
Python methods' fast paths with nothing recording autograd: two contiguous tensors of one dtype
and shape (``a + b``, ``a < b``), a contiguous tensor and a Python int or float on either side
(``a * 2.0``, ``1 - a``, ``a > 0``), and a unary method of a contiguous tensor without arguments
(``x.exp()``, ``-x``). The methods decide nothing of their own: which (op, dtype) pairs may run
and what dtype they give are elementwise.py's tables (``_FAST_BINARY``, ``_FAST_SCALAR_INT``,
``_FAST_SCALAR_FLOAT``, ``_FAST_UNARY``), handed to C here, and every other call runs the Python
method each one replaces.

:func:`install` runs once, when :mod:`t_tensor.tensor` has made the Tensor class. C reads the spec
from this module's ``_SPEC`` and leaves the methods in ``_METHODS`` (or what went wrong in
``_ERROR``), because a cffi call cannot take or return Python objects.

>>> import t_tensor as tt
>>> type(tt.Tensor.__add__).__name__, tt.Tensor.__add__.__name__
('method_descriptor', '__add__')
>>> (tt.ones(3) + tt.ones(3)).tolist(), (1 - tt.ones(2)).tolist()
([2.0, 2.0, 2.0], [0.0, 0.0])
"""

from __future__ import annotations

from typing import Any

from t_tensor import dtypes
from t_tensor._capi import ffi, lib
from t_tensor.elementwise import (
    _FAST_BINARY,
    _FAST_SCALAR_FLOAT,
    _FAST_SCALAR_INT,
    _FAST_UNARY,
    _OPERATORS,
    ElementwiseOps,
)

__all__ = ["install", "python_method"]

_SPEC: tuple | None = None
_METHODS: dict[str, Any] = {}
_ERROR: BaseException | None = None

# Which Tensor method runs which op: read off ElementwiseOps, which assigns the Python operators
# (``__add__ = _OPERATORS["add"]``), so the two cannot disagree. A reflected method (``__radd__``)
# exists for each arithmetic and bitwise one; comparisons have none (Python swaps them instead).
_PYTHON_METHODS = dict(vars(ElementwiseOps))
_FORWARD = {
    name: fn for name, value in _PYTHON_METHODS.items() for fn, operator in _OPERATORS.items() if value is operator
}
_REFLECTED = {"__r" + name[2:]: fn for name, fn in _FORWARD.items() if "__r" + name[2:] in _PYTHON_METHODS}
# The unary methods whose whole body is ``unary(fn, self[, out])`` (ElementwiseOps), by name.
_UNARY_NAMES = (
    "neg", "abs", "sign", "relu", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "floor", "ceil", "round", "trunc", "sigmoid", "erf", "bitwise_not", "logical_not", "isnan",
    "isinf", "isfinite", "signbit", "exp2",
)
_UNARY = {"__neg__": "neg", "negative": "neg", "__abs__": "abs", **{fn: fn for fn in _UNARY_NAMES}}


def python_method(name: str) -> Any:
    """The Python method that the C method ``name`` (``"__add__"``, ``"__rsub__"``, ...) replaces,
    and calls for every case it does not take itself.

    >>> python_method("__add__").__name__, python_method("__rsub__").__name__
    ('add', '__rsub__')
    """
    return _PYTHON_METHODS[name]


def _operator_spec(name: str, fn: str, reflected: bool) -> tuple:
    # (name, fallback, number first, tensor-tensor entries, int entries, float entries, unary
    # entries), each a tuple of one entry per dtype code, or None for none. `x ** 2` and friends
    # must keep pow's own rewriting (elementwise._pow_as_ops), so __pow__ takes no numbers;
    # `2 ** x` has none and may.
    takes_numbers = reflected or fn != "pow"
    return (
        name,
        _PYTHON_METHODS[name],
        reflected,
        None if reflected else tuple(_FAST_BINARY[fn]),
        tuple(_FAST_SCALAR_INT[fn]) if takes_numbers else None,
        tuple(_FAST_SCALAR_FLOAT[fn]) if takes_numbers else None,
        None,
    )


def _unary_spec(name: str, fn: str) -> tuple:
    return (name, _PYTHON_METHODS[name], False, None, None, None, tuple(_FAST_UNARY[fn]))


def install(tensor_type: type, storage_type: type) -> None:
    """Replace the operators and unary methods of `tensor_type` and the finalizer of `storage_type`
    by the C methods (once per process); raises RuntimeError if C refuses the spec."""
    global _SPEC
    operators = (
        tuple(_operator_spec(name, fn, False) for name, fn in _FORWARD.items())
        + tuple(_operator_spec(name, fn, True) for name, fn in _REFLECTED.items())
        + tuple(_unary_spec(name, fn) for name, fn in _UNARY.items())
    )
    _SPEC = (tensor_type, storage_type, ffi.typeof("tt_storage *"), dtypes.ALL_DTYPES, operators)
    if lib.tt_py_install_fast_ops(__name__.encode()) != 0:
        raise RuntimeError(f"t_tensor: installing the C operators failed: {_ERROR!r}")
    for spec in operators:
        setattr(tensor_type, spec[0], _METHODS[spec[0]])
    storage_type.__del__ = _METHODS["Storage.__del__"]
