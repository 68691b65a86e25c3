"""Tensor's operators, unary methods, ``@``, ``_empty`` and ``_view``, Storage's finalizer, and the
one-call paths of the reductions, softmax and joins as C methods and functions
(``csrc/python/fast_ops.c``).

Every other call into C goes through cffi, which releases and retakes the GIL around each call
and is reached from a Python frame. For a tiny ``a + b`` that overhead was most of the cost, so
the plain cases and ``Storage.__del__`` run as CPython methods instead. The plain cases are the
Python methods' fast paths with nothing recording autograd: two contiguous tensors of one dtype
and shape (``a + b``, ``a < b``), a contiguous tensor and a Python int or float on either side
(``a * 2.0``, ``1 - a``, ``a > 0``), and a unary method of a contiguous tensor without arguments
(``x.exp()``, ``-x``). ``Tensor._empty`` (the new result of every other op) and ``Tensor._view``
(every view) run in C for exactly the Tensor class with no autograd record. ``reductions._fast_reduce``,
``reductions._fast_softmax`` and ``manipulation._fast_join`` are replaced in their modules by C functions,
and ``Tensor.__matmul__`` by a C method, each taking the plain case (dense float tensors, exact
argument types) and calling the Python function or method it replaces for the rest (see
:func:`python_function`). The operators decide nothing of their own: which (op, dtype) pairs may run
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

import inspect
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
    _in_place_entry,
)

__all__ = ["install", "python_function", "python_method"]

_SPEC: tuple | None = None
_METHODS: dict[str, Any] = {}
_ERROR: BaseException | None = None
_FUNCTIONS: dict[str, Any] = {}  # the Python functions the C ones replace, by name

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
# The in-place methods whose whole body is ``binary(fn, self, other, self)``: ``__iadd__`` for each
# forward operator that has one, and the named ones (``add_``/``sub_`` called without ``alpha``
# come to the same).
_IN_PLACE = {
    **{"__i" + name[2:]: fn for name, fn in _FORWARD.items() if "__i" + name[2:] in _PYTHON_METHODS},
    **{name: fn for name, fn in [
        ("add_", "add"), ("sub_", "sub"), ("mul_", "mul"), ("div_", "div"), ("true_divide_", "div"),
        ("floor_divide_", "floor_divide"), ("remainder_", "remainder"), ("pow_", "pow"), ("hypot_", "hypot"),
        ("copysign_", "copysign"), ("fmod_", "fmod"), ("bitwise_left_shift_", "bitwise_left_shift"),
        ("bitwise_right_shift_", "bitwise_right_shift"),
    ]},
}


def python_function(name: str) -> Any:
    """The Python function (of ``t_tensor.reductions`` or ``t_tensor.manipulation``) that the C
    function ``name`` (``"_fast_reduce"``, ``"_fast_softmax"``, ``"_fast_join"``) replaces in its
    module, and calls for every case it does not take.

    >>> python_function("_fast_softmax").__module__
    't_tensor.reductions'
    """
    return _FUNCTIONS[name]


def python_method(name: str) -> Any:
    """The Python method that the C method ``name`` (``"__add__"``, ``"__rsub__"``, ...) replaces,
    and calls for every case it does not take itself.

    >>> python_method("__add__").__name__, python_method("__rsub__").__name__
    ('add', '__rsub__')
    """
    return _PYTHON_METHODS[name]


def _doc(name: str, method: Any = None) -> str:
    """The C method's docstring: the Python method's signature (as ``__text_signature__``, so
    that ``inspect.signature`` reads it) and its docstring, and a line on what runs in C."""
    method = _PYTHON_METHODS[name] if method is None else method
    plain = inspect.signature(method)  # without annotations: a text signature cannot hold them
    plain = plain.replace(
        parameters=[p.replace(annotation=p.empty) for p in plain.parameters.values()], return_annotation=plain.empty
    )
    signature = "($" + str(plain)[1:]  # "$": the first parameter is the bound object
    where = "Runs in C for the plain cases (csrc/python/fast_ops.c), else as the Python method."
    return f"{name}{signature}\n--\n\n{method.__doc__ or ''}\n\n{where}".replace("\n\n\n\n", "\n\n")


def _takes_numbers(fn: str, reflected: bool) -> bool:
    # `x ** 2` and friends must keep pow's own rewriting (elementwise._pow_as_ops), so __pow__,
    # __ipow__ and pow_ take no numbers in C; `2 ** x` has no rewriting and may.
    return reflected or fn != "pow"


def _operator_spec(name: str, fn: str, reflected: bool) -> tuple:
    # (name, fallback, number first, in place, tensor-tensor entries, int entries, float entries,
    # unary entries, docstring); each table a tuple of one entry per dtype code, or None for none.
    takes_numbers = _takes_numbers(fn, reflected)
    return (
        name,
        _PYTHON_METHODS[name],
        reflected,
        False,
        None if reflected else tuple(_FAST_BINARY[fn]),
        tuple(_FAST_SCALAR_INT[fn]) if takes_numbers else None,
        tuple(_FAST_SCALAR_FLOAT[fn]) if takes_numbers else None,
        None,
        _doc(name),
    )


def _unary_spec(name: str, fn: str) -> tuple:
    return (name, _PYTHON_METHODS[name], False, False, None, None, None, tuple(_FAST_UNARY[fn]), _doc(name))


def _in_place_spec(name: str, fn: str) -> tuple:
    # which entries an in-place write may use: elementwise._fast_inplace's own rule
    def own_dtype(row):
        return tuple(_in_place_entry(fn, d, entry) for d, entry in zip(dtypes.ALL_DTYPES, row, strict=True))

    takes_numbers = _takes_numbers(fn, False)
    return (
        name,
        _PYTHON_METHODS[name],
        False,
        True,
        own_dtype(_FAST_BINARY[fn]),
        own_dtype(_FAST_SCALAR_INT[fn]) if takes_numbers else None,
        own_dtype(_FAST_SCALAR_FLOAT[fn]) if takes_numbers else None,
        None,
        _doc(name),
    )


def install(tensor_type: type, storage_type: type) -> None:
    """Replace the operators, unary and in-place methods of `tensor_type` and the finalizer of
    `storage_type` by the C methods; raises RuntimeError if C refuses the spec.

    C installs them once per process. A second import of t_tensor (its modules removed from
    ``sys.modules``) makes new classes, which keep their Python methods: the C methods' state
    stays that of the first classes, whose tensors must keep working."""
    global _SPEC
    operators = (
        tuple(_operator_spec(name, fn, False) for name, fn in _FORWARD.items())
        + tuple(_operator_spec(name, fn, True) for name, fn in _REFLECTED.items())
        + tuple(_unary_spec(name, fn) for name, fn in _UNARY.items())
        + tuple(_in_place_spec(name, fn) for name, fn in _IN_PLACE.items())
    )
    # the Python methods themselves, from the classes that define them: tensor_type holds the C
    # ones after the first install
    from t_tensor import manipulation, reductions
    from t_tensor.linalg import LinalgOps
    from t_tensor.tensor_impl import TensorImpl
    from t_tensor.views import ViewOps

    empty_fallback = TensorImpl.__dict__["_empty"].__func__
    view_fallback = ViewOps.__dict__["_view"]
    matmul_fallback = LinalgOps.__dict__["__matmul__"]
    c_functions = {"_fast_reduce": reductions, "_fast_softmax": reductions, "_fast_join": manipulation}
    # the module functions C replaces: the Python ones, from the module until the first install
    # and from _FUNCTIONS after it (the module then holds the C ones)
    python_functions = _FUNCTIONS or {name: getattr(module, name) for name, module in c_functions.items()}
    helpers = (python_functions["_fast_reduce"], python_functions["_fast_softmax"], python_functions["_fast_join"],
               matmul_fallback, _doc("__matmul__", matmul_fallback))
    _SPEC = (tensor_type, storage_type, ffi.typeof("tt_storage *"), dtypes.ALL_DTYPES, operators, empty_fallback,
             view_fallback, helpers)
    status = lib.tt_py_install_fast_ops(__name__.encode())
    if status == 1:
        return  # installed for the classes of an earlier import
    if status != 0:
        raise RuntimeError(f"t_tensor: installing the C operators failed: {_ERROR!r}")
    for spec in operators:
        setattr(tensor_type, spec[0], _METHODS[spec[0]])
    storage_type.__del__ = _METHODS["Storage.__del__"]
    tensor_type._empty = _METHODS["_empty"]
    tensor_type._view = _METHODS["_view"]
    tensor_type.__matmul__ = _METHODS["__matmul__"]
    _FUNCTIONS.update(python_functions)
    for name, module in c_functions.items():
        setattr(module, name, _METHODS[name])
