"""Elementwise operations: broadcasting, type promotion and the C kernels behind ``+ - * /`` and friends.

Every call does the same four steps, in Python, before one C call does the work:

1. **Promote.** The compute dtype is :func:`t_tensor.result_type` of the operands, PyTorch's rule:
   a Python float does not upcast a float32 tensor, ``int8_tensor + 1000`` stays int8, and
   ``int_tensor / 2`` is a float. Operands of another dtype are converted first.
2. **Broadcast.** The output shape is the broadcast of the inputs' shapes; each input is viewed at
   that shape with stride 0 along repeated dimensions (no copy). A Python number becomes a 0-d
   tensor, which broadcasts the same way.
3. **Allocate.** A fresh contiguous output, or the caller's ``out=`` tensor (an in-place op is an
   op whose ``out`` is its first operand).
4. **Run.** ``tt_binary`` / ``tt_unary`` (or their ``_param`` twins, or ``tt_ternary`` for
   ``where``, ``clamp`` and ``lerp``) in C loop over the strided operands
   (``csrc/src/kernels/elementwise.c``).

>>> import t_tensor as tt
>>> x = tt.tensor([[1, 2, 3]], dtype=tt.int8)
>>> (x + 1000).tolist(), (x / 2).dtype, (x * tt.tensor([[1], [2]])).shape
([[-23, -22, -21]], t_tensor.float32, (2, 3))
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
import warnings
from typing import Any, NamedTuple

import numpy as np

from t_tensor import dtypes
from t_tensor import strides as S
from t_tensor._capi import check, lib
from t_tensor.autograd.grad_mode import STATE as _GRAD
from t_tensor.autograd.grad_mode import no_grad as _no_grad
from t_tensor.autograd.graph import bump_version
from t_tensor.dtypes import DType
from t_tensor.storage import Storage
from t_tensor.tensor_impl import TensorImpl, wrap_new

__all__ = [
    # binary
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow", "maximum", "minimum",
    "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "hypot", "copysign", "logaddexp", "logaddexp2", "fmod",
    "bitwise_left_shift", "bitwise_right_shift",
    # ternary
    "where", "clamp", "clip", "clamp_min", "clamp_max", "lerp",
    # unary
    "neg", "negative", "abs", "sign", "square", "relu", "exp", "expm1", "log", "log1p", "log2", "log10",
    "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "floor", "ceil", "round", "trunc", "sigmoid", "erf", "bitwise_not",
    "logical_not", "isnan", "isinf", "isfinite", "signbit", "positive", "exp2", "logit",
    # activations (torch.nn.functional's signatures)
    "gelu", "silu", "softplus", "leaky_relu", "leaky_relu_", "elu", "elu_", "hardtanh", "hardtanh_",
    # closeness
    "isclose", "allclose",
]


class _Op(NamedTuple):
    """What an op takes and gives. ``takes``: the dtypes its kernel accepts after promotion
    ("all", "numeric" = no bool, "integral" = bool and integers, "integer" = integers without bool,
    "float"); ``gives``: "same" (the compute dtype), "float" (integers are promoted to the default
    float dtype first) or "bool" (predicates). ``param``: the op is one of ``tt_unary_param``'s."""

    code: int
    takes: str
    gives: str
    param: bool = False


_BINARY = {
    "add": _Op(lib.TT_ADD, "all", "same"),
    "sub": _Op(lib.TT_SUB, "numeric", "same"),
    "mul": _Op(lib.TT_MUL, "all", "same"),
    "div": _Op(lib.TT_DIV, "float", "float"),
    "floor_divide": _Op(lib.TT_FLOOR_DIVIDE, "numeric", "same"),
    "remainder": _Op(lib.TT_REMAINDER, "numeric", "same"),
    "pow": _Op(lib.TT_POW, "numeric", "same"),
    "maximum": _Op(lib.TT_MAXIMUM, "all", "same"),
    "minimum": _Op(lib.TT_MINIMUM, "all", "same"),
    "atan2": _Op(lib.TT_ATAN2, "float", "float"),
    "bitwise_and": _Op(lib.TT_BITWISE_AND, "integral", "same"),
    "bitwise_or": _Op(lib.TT_BITWISE_OR, "integral", "same"),
    "bitwise_xor": _Op(lib.TT_BITWISE_XOR, "integral", "same"),
    "eq": _Op(lib.TT_EQ, "all", "bool"),
    "ne": _Op(lib.TT_NE, "all", "bool"),
    "lt": _Op(lib.TT_LT, "all", "bool"),
    "le": _Op(lib.TT_LE, "all", "bool"),
    "gt": _Op(lib.TT_GT, "all", "bool"),
    "ge": _Op(lib.TT_GE, "all", "bool"),
    "logical_and": _Op(lib.TT_LOGICAL_AND, "all", "bool"),
    "logical_or": _Op(lib.TT_LOGICAL_OR, "all", "bool"),
    "logical_xor": _Op(lib.TT_LOGICAL_XOR, "all", "bool"),
    "hypot": _Op(lib.TT_HYPOT, "float", "same"),
    "copysign": _Op(lib.TT_COPYSIGN, "float", "float"),
    "logaddexp": _Op(lib.TT_LOGADDEXP, "float", "same"),
    "logaddexp2": _Op(lib.TT_LOGADDEXP2, "float", "same"),
    "fmod": _Op(lib.TT_FMOD, "numeric", "same"),
    "bitwise_left_shift": _Op(lib.TT_BITWISE_LEFT_SHIFT, "integer", "same"),
    "bitwise_right_shift": _Op(lib.TT_BITWISE_RIGHT_SHIFT, "integer", "same"),
    # clamp with one bound: maximum / minimum under clamp's names (so errors name clamp_min)
    "clamp_min": _Op(lib.TT_MAXIMUM, "all", "same"),
    "clamp_max": _Op(lib.TT_MINIMUM, "all", "same"),
}

# Unary ops of "float" kind compute integers and bools in the default float dtype, as PyTorch.
_UNARY = {
    "neg": _Op(lib.TT_NEG, "numeric", "same"),
    "abs": _Op(lib.TT_ABS, "numeric", "same"),
    "sign": _Op(lib.TT_SIGN, "all", "same"),
    "square": _Op(lib.TT_SQUARE, "numeric", "same"),
    "relu": _Op(lib.TT_RELU, "numeric", "same"),
    "floor": _Op(lib.TT_FLOOR, "numeric", "same"),
    "ceil": _Op(lib.TT_CEIL, "numeric", "same"),
    "round": _Op(lib.TT_ROUND, "numeric", "same"),
    "trunc": _Op(lib.TT_TRUNC, "numeric", "same"),
    "bitwise_not": _Op(lib.TT_BITWISE_NOT, "integral", "same"),
    "logical_not": _Op(lib.TT_LOGICAL_NOT, "all", "bool"),
    "isnan": _Op(lib.TT_ISNAN, "all", "bool"),
    "isinf": _Op(lib.TT_ISINF, "all", "bool"),
    "isfinite": _Op(lib.TT_ISFINITE, "all", "bool"),
    "signbit": _Op(lib.TT_SIGNBIT, "all", "bool"),
    # float-only activations: PyTorch has no integer kernels for them
    "gelu": _Op(lib.TT_GELU, "float", "same"),
    "gelu_tanh": _Op(lib.TT_GELU_TANH, "float", "same"),
    "silu": _Op(lib.TT_SILU, "float", "same"),
    "cube": _Op(lib.TT_CUBE, "float", "same"),  # internal: x ** 3 (see _POW_AS_OPS)
    # with parameters (tt_unary_param)
    "softplus": _Op(lib.TT_SOFTPLUS, "float", "same", True),
    "leaky_relu": _Op(lib.TT_LEAKY_RELU, "float", "same", True),
    "elu": _Op(lib.TT_ELU, "float", "same", True),
    "logit": _Op(lib.TT_LOGIT, "float", "float", True),
}
for _name, _code in [
    ("exp", lib.TT_EXP), ("expm1", lib.TT_EXPM1), ("log", lib.TT_LOG), ("log1p", lib.TT_LOG1P),
    ("log2", lib.TT_LOG2), ("log10", lib.TT_LOG10), ("sqrt", lib.TT_SQRT), ("rsqrt", lib.TT_RSQRT),
    ("reciprocal", lib.TT_RECIPROCAL), ("sin", lib.TT_SIN), ("cos", lib.TT_COS), ("tan", lib.TT_TAN),
    ("asin", lib.TT_ASIN), ("acos", lib.TT_ACOS), ("atan", lib.TT_ATAN), ("sinh", lib.TT_SINH),
    ("cosh", lib.TT_COSH), ("tanh", lib.TT_TANH), ("asinh", lib.TT_ASINH), ("acosh", lib.TT_ACOSH),
    ("atanh", lib.TT_ATANH), ("sigmoid", lib.TT_SIGMOID), ("erf", lib.TT_ERF), ("exp2", lib.TT_EXP2),
]:
    _UNARY[_name] = _Op(_code, "float", "float")

# Integer inputs of these give their own values back (PyTorch: floor of an int is the int).
_IDENTITY_ON_INTEGERS = {"floor", "ceil", "round", "trunc"}

# PyTorch's own words for the bool cases it refuses.
_SUB_ONE_BOOL = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
    "use the `~` or `logical_not()` operator instead."
)
_BOOL_ERRORS = {
    "sub": "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
    "`logical_xor()` operator instead.",
    "neg": "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
    "a mask, use the `~` or `logical_not()` operator instead.",
    "relu": "Boolean inputs not supported for relu",
    "positive": "The `+` operator, on a bool tensor is not supported.",
}

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# ---------------------------------------------------------------------- the four steps


def _operand(value: Any, fn: str) -> Any:
    """A tensor or a Python number; NumPy numbers become Python numbers, arrays become tensors."""
    if isinstance(value, TensorImpl):
        return value
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    if isinstance(value, np.ndarray):
        from t_tensor.creation import as_tensor

        return as_tensor(value)
    raise TypeError(f"{fn}: unsupported operand type {type(value).__name__}")


def _compute_dtype(fn: str, op: _Op, dtype: DType) -> DType:
    """Check that the op takes `dtype` (after promotion); give the dtype it computes in."""
    if op.gives == "float" and not dtype.is_floating_point:
        return dtypes.get_default_dtype()
    if dtype is dtypes.bool and op.takes in ("numeric", "float", "integer"):
        if fn in _BOOL_ERRORS:
            raise RuntimeError(f"{fn}: {_BOOL_ERRORS[fn]}")
        raise TypeError(f"{fn}: not implemented for bool tensors")
    if dtype.is_floating_point and op.takes in ("integral", "integer"):
        kinds = "integer" if op.takes == "integer" else "integer and bool"
        raise TypeError(f"{fn}: only {kinds} tensors are supported, got {dtype.name}")
    if op.takes == "float" and not dtype.is_floating_point:
        raise TypeError(f"{fn}: not implemented for {dtype.name} tensors (only floating point)")
    return dtype


def _as_input(value: Any, dtype: DType, shape: tuple[int, ...], template: TensorImpl, fn: str):
    """`value` as a tensor of `dtype` and the strides that show it at `shape` (no copy of data,
    except a dtype conversion). Returns (tensor, strides); the tensor keeps the data alive."""
    if isinstance(value, TensorImpl):
        if value._dtype is not dtype:
            value = value.to(dtype)
        if value._shape == shape:
            return value, value._strides
        return value, S.expand_strides(value._shape, value._strides, shape, fn=fn)
    if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
        raise RuntimeError(f"{fn}: Overflow when unpacking long: {value} does not fit in int64")
    # A 0-d tensor holding the number converted like a cast (wraps), made in one C call.
    is_float = type(value) is float
    ptr = _scalar_new(0 if is_float else value, value if is_float else 0.0, not is_float, dtype.code)
    if ptr:
        scalar = wrap_new(type(template), ptr, (), (), dtype)
    else:  # out of memory: the general fill raises the MemoryError
        scalar = type(template)._empty((), dtype, fn)._fill_unchecked(value)
    return scalar, (0,) * len(shape)


def _aliases_safely(out: TensorImpl, tensor: TensorImpl, strides: tuple[int, ...]) -> bool:
    """True when writing `out` cannot clobber an element of `tensor` before it is read: they share
    no bytes, or they are the same elements in the same order (then each element is read just
    before it is written, which is how in-place ops work)."""
    if not out._overlaps(tensor):
        return True
    return tensor.data_ptr() == out.data_ptr() and strides == out._strides and tensor._dtype is out._dtype


def _output(
    fn: str, shape: tuple[int, ...], dtype: DType, out: Any, template: TensorImpl, inputs, may_fail: bool = False
) -> tuple:
    """The tensor the kernel writes, and the `out` tensor to copy it into afterwards (or None).
    `may_fail`: the kernel can stop with an error after writing part of its output (an integer
    division by zero), so it writes a fresh tensor and `out` is only touched on success."""
    if out is None:
        return type(template)._empty(shape, dtype, fn), None
    if not isinstance(out, TensorImpl):
        raise TypeError(f"{fn}: out must be a Tensor, got {type(out).__name__}")
    if out._shape != shape:
        raise RuntimeError(
            f"{fn}: output with shape {list(out._shape)} doesn't match the broadcast shape {list(shape)}"
        )
    if not dtypes.can_cast(dtype, out._dtype):
        raise RuntimeError(f"{fn}: result type {dtype.name} can't be cast to the desired output type {out._dtype.name}")
    out._check_writable(fn)
    bump_version(out)  # an in-place write: autograd's saved copies of `out` are now stale
    if not may_fail and out._dtype is dtype and all(_aliases_safely(out, t, s) for t, s in inputs):
        return out, None
    return type(template)._empty(shape, dtype, fn), out


# ---------------------------------------------------------------------- the fast paths
# Most calls are the simple case: tensors of one dtype and one shape, laid out contiguously, or a
# tensor and a Python number, and a fresh output. For those, the four steps above reduce to one
# table lookup and one C call that allocates the output and runs the same kernel
# (``tt_binary_new`` and friends, csrc/include/tt/kernels/dispatch.h). The tables are computed
# from the general path's own rules below, so the two paths cannot disagree: an entry exists only
# where the general path would compute in the operand's dtype without any error or special case.
# Anything else (broadcasting, promotion, strides, out=, a C failure) takes the general path,
# which then also raises the precise error.


def _fast_entry(fn: str, op: _Op, dtype: DType):
    """(op code, output dtype) when `fn` on `dtype` operands computes in `dtype` with no error."""
    try:
        if _compute_dtype(fn, op, dtype) is not dtype:
            return None
    except (RuntimeError, TypeError):
        return None
    return (op.code, dtypes.bool if op.gives == "bool" else dtype)


# fn -> list indexed by dtype code. Tensor-tensor, same dtype: no promotion step changes anything.
_FAST_BINARY = {fn: [_fast_entry(fn, op, d) for d in dtypes.ALL_DTYPES] for fn, op in _BINARY.items()}
# Tensor and Python int or float with the tensor's dtype winning (result_type: a number never
# widens a tensor of its category or above). Bool tensors are left out (bool + 1 is int64), and
# integer pow (negative exponents are refused) and bool-special rules stay on the general path.
_FAST_SCALAR_INT = {
    fn: [None if d is dtypes.bool or (fn == "pow" and not d.is_floating_point) else e
         for d, e in zip(dtypes.ALL_DTYPES, row, strict=True)]
    for fn, row in _FAST_BINARY.items()
}
_FAST_SCALAR_FLOAT = {
    fn: [e if d.is_floating_point else None for d, e in zip(dtypes.ALL_DTYPES, row, strict=True)]
    for fn, row in _FAST_BINARY.items()
}
_FAST_UNARY = {
    fn: [None if op.param or (fn in _IDENTITY_ON_INTEGERS and not d.is_floating_point) else _fast_entry(fn, op, d)
         for d in dtypes.ALL_DTYPES]
    for fn, op in _UNARY.items()
}

_prod = _math.prod
_new = object.__new__
_binary_new = lib.tt_binary_new
_binary_scalar_new = lib.tt_binary_scalar_new
_clamp_scalars_new = lib.tt_clamp_scalars_new
_binary_contiguous = lib.tt_binary_contiguous
_binary_strided_new = lib.tt_binary_strided_new
_contiguous_strides = S.contiguous_strides_of_valid_shape
_binary_scalar_contiguous = lib.tt_binary_scalar_contiguous
_unary_new = lib.tt_unary_new
_scalar_new = lib.tt_scalar_new


def _scalar_entry(fn: str, dtype: DType, number: Any):
    """The fast-path table entry of `fn` on a `dtype` tensor and the Python number, with the
    number as tt_binary_scalar_new takes it: (entry, is_int, s_int, s_float); None when the
    general path must run (no entry, a bool, an int outside int64)."""
    kind = type(number)
    if kind is float:
        entry = _FAST_SCALAR_FLOAT[fn][dtype.code]
        return None if entry is None else (entry, 0, 0, number)
    if kind is int and _INT64_MIN <= number <= _INT64_MAX:
        entry = _FAST_SCALAR_INT[fn][dtype.code]
        return None if entry is None else (entry, 1, number, 0.0)
    return None


def _fast_scalar(fn: str, tensor: TensorImpl, number: Any, first: int):
    """`fn` of a contiguous tensor and a Python int or float in one C call (`first` is 1 when the
    number is the left operand), or None to take the general path."""
    dtype = tensor._dtype
    scalar = _scalar_entry(fn, dtype, number)
    if scalar is None or (tensor._ag is not None and _GRAD.enabled) or not (tensor._dense or tensor._is_dense()):
        return None
    entry, is_int, s_int, s_float = scalar
    ptr = _binary_scalar_new(entry[0], _prod(tensor._shape), tensor._storage._data + tensor._offset * dtype.itemsize,
                             s_int, s_float, is_int, first, dtype.code, entry[1].code)
    return wrap_new(type(tensor), ptr, tensor._shape, tensor._strides, entry[1]) if ptr else None


# (shape, strides) of both operands -> (result shape, a's strides, b's strides) at that shape, or
# None when they do not broadcast. Programs use few layouts; the table is emptied when it fills.
_BROADCAST_PLANS: dict = {}


def _broadcast_plan(a: TensorImpl, b: TensorImpl):
    key = (a._shape, a._strides, b._shape, b._strides)
    plan = _BROADCAST_PLANS.get(key, False)
    if plan is False:
        try:
            shape = S.broadcast_shapes(a._shape, b._shape)
            plan = (shape, S.expand_strides(a._shape, a._strides, shape), S.expand_strides(b._shape, b._strides, shape))
        except (RuntimeError, ValueError):
            plan = None  # the general path raises the error
        if len(_BROADCAST_PLANS) >= 4096:
            _BROADCAST_PLANS.clear()
        _BROADCAST_PLANS[key] = plan
    return plan


def _fast_strided(entry, a: TensorImpl, b: TensorImpl):
    """`entry` (a _FAST_BINARY entry) on two tensors of one dtype with any shapes that broadcast
    and any strides, in one C call (``tt_binary_strided_new``); None for the general path."""
    if entry is None:
        return None
    plan = _broadcast_plan(a, b)
    if plan is None:
        return None
    shape, a_strides, b_strides = plan
    itemsize = a._dtype.itemsize
    ptr = _binary_strided_new(entry[0], len(shape), shape, a._storage._data + a._offset * itemsize, a_strides,
                              b._storage._data + b._offset * itemsize, b_strides, a._dtype.code, entry[1].code)
    return wrap_new(type(a), ptr, shape, _contiguous_strides(shape), entry[1]) if ptr else None


def _make_operator(fn: str):
    """``fn(a, b)`` without `out`: the function behind ``a + b`` and friends, and what `binary`
    runs when there is no `out`. The same-layout fast path is written out inside it (not called)
    because a Python call is a tenth of a tiny op's cost."""
    row = _FAST_BINARY[fn]

    def operator(a: Any, b: Any) -> Any:
        if type(a) is type(b) and isinstance(a, TensorImpl):
            dtype = a._dtype
            if b._dtype is dtype and a._shape == b._shape and (a._ag is b._ag is None or not _GRAD.enabled) and (
                a._dense or a._is_dense()
            ) and (b._dense or b._is_dense()):
                entry = row[dtype.code]
                if entry is not None:
                    a_data, b_data = a._storage._data, b._storage._data
                    if a._offset:  # most tensors start their storage: skip the int arithmetic
                        a_data += a._offset * dtype.itemsize
                    if b._offset:
                        b_data += b._offset * dtype.itemsize
                    ptr = _binary_new(entry[0], _prod(a._shape), a_data, b_data, dtype.code, entry[1].code)
                    if ptr:  # wrap_new, written out (see above)
                        storage = _new(Storage)
                        storage._data = ptr.data_address
                        storage._ptr = ptr
                        result = _new(type(a))
                        result._storage = storage
                        result._shape = a._shape
                        result._strides = a._strides
                        result._offset = 0
                        result._dtype = entry[1]
                        result._dense = True
                        result._ag = None
                        return result
            elif b._dtype is dtype and (a._ag is b._ag is None or not _GRAD.enabled):
                result = _fast_strided(row[dtype.code], a, b)
                if result is not None:
                    return result
        elif isinstance(a, TensorImpl):
            result = _fast_scalar(fn, a, b, 0)
            if result is not None:
                return result
        elif isinstance(b, TensorImpl):
            result = _fast_scalar(fn, b, a, 1)
            if result is not None:
                return result
        return _binary_general(fn, a, b, None)

    operator.__name__ = operator.__qualname__ = fn
    return operator


def binary(fn: str, a: Any, b: Any, out: Any = None) -> Any:
    """Run the binary op `fn` ("add", "lt", ...) with broadcasting, promotion and optional `out`."""
    if out is None:
        return _OPERATORS[fn](a, b)
    if fn == "pow":
        result = _pow_as_ops(a, b, out)
        if result is not None:
            return result
    if out is a and isinstance(out, TensorImpl) and (out._ag is None or not _GRAD.enabled) and (
        out._dense or out._is_dense()
    ):
        done = _fast_inplace(fn, out, b)
        if done is not None:
            return done
    return _binary_general(fn, a, b, out)


# Integer kernels that can stop on a zero divisor after writing part of their output.
_INTEGER_DIVISIONS = frozenset({"floor_divide", "remainder", "fmod"})


def _in_place_entry(fn: str, dtype: DType, entry: Any) -> Any:
    """`entry` (a fast-path table entry for a `dtype` tensor) when an in-place fast path may use
    it, else None. It must give `dtype` itself (comparisons, which give bool, are left out), and
    integer floor_divide, remainder and fmod are left out too: they can stop on a zero divisor
    after writing part of the tensor, where the general path keeps it untouched. Shared with the
    C in-place methods (t_tensor/_cfast.py)."""
    if entry is None or entry[1] is not dtype or (fn in _INTEGER_DIVISIONS and dtype.kind in "iu"):
        return None
    return entry


def _fast_inplace(fn: str, out: TensorImpl, b: Any):
    """``out = fn(out, b)`` in one C call, for a contiguous `out` (not recording grad) and `b` a
    Python number or a contiguous tensor of out's shape and dtype that does not partly overlap
    it (optimizer updates, gradient accumulation); None to take the general path. The entry
    must compute in out's dtype and give it (so comparisons, which give bool, are left out)."""
    dtype = out._dtype
    itemsize = dtype.itemsize
    address = out._storage._data + out._offset * itemsize
    if type(b) is float or type(b) is int:
        scalar = _scalar_entry(fn, dtype, b)
        if scalar is None or _in_place_entry(fn, dtype, scalar[0]) is None:
            return None
        entry, is_int, s_int, s_float = scalar
        status = _binary_scalar_contiguous(entry[0], _prod(out._shape), address, s_int, s_float, is_int, 0, address,
                                           dtype.code)
    elif type(b) is type(out):
        entry = _in_place_entry(fn, dtype, _FAST_BINARY[fn][dtype.code])
        if entry is None or b._dtype is not dtype or b._shape != out._shape or not (
            b._dense or b._is_dense()
        ) or (b._ag is not None and _GRAD.enabled):
            return None
        n = _prod(out._shape)
        b_address = b._storage._data + b._offset * itemsize
        if b_address != address and _builtins.abs(b_address - address) < n * itemsize:
            return None  # partly overlapping: the general path copies
        status = _binary_contiguous(entry[0], n, address, b_address, address, dtype.code)
    else:
        return None
    bump_version(out)  # an in-place write: autograd's saved copies of `out` are now stale
    check(status, fn)
    return out


def _binary_general(fn: str, a: Any, b: Any, out: Any) -> Any:
    """`binary` for every case the fast paths leave: grad, broadcasting, promotion, strides, out."""
    if _GRAD.enabled and (_requires_grad(a) or _requires_grad(b)):
        return _autograd_functions().binary(fn, a, b, out)
    op = _BINARY[fn]
    a, b = _operand(a, fn), _operand(b, fn)
    template = a if isinstance(a, TensorImpl) else b
    if not isinstance(template, TensorImpl):
        raise TypeError(f"{fn}: expected at least one tensor operand")
    promoted = dtypes.result_type(a, b)
    if fn == "sub" and promoted is not dtypes.bool and (_is_bool(a) or _is_bool(b)):
        raise RuntimeError(f"{fn}: {_SUB_ONE_BOOL}")  # a bool minus a number is refused too
    if fn == "pow" and type(b) is int and b < 0 and not promoted.is_floating_point:
        raise RuntimeError(f"{fn}: Integers to negative integer powers are not allowed.")
    if fn == "pow" and promoted is dtypes.bool and type(b) is bool:
        # PyTorch allows a bool tensor to a Python bool power: x ** True is x, x ** False is all
        # True, which is exactly x OR (not exponent).
        return binary("logical_or", a, not b, out)
    dtype = _compute_dtype(fn, op, promoted)
    shape_a = a._shape if isinstance(a, TensorImpl) else ()
    shape_b = b._shape if isinstance(b, TensorImpl) else ()
    shape = shape_a if shape_a == shape_b else S.broadcast_shapes(shape_a, shape_b, fn=fn)
    a, a_strides = _as_input(a, dtype, shape, template, fn)
    b, b_strides = _as_input(b, dtype, shape, template, fn)
    result_dtype = dtypes.bool if op.gives == "bool" else dtype
    may_fail = fn in _INTEGER_DIVISIONS and dtype.kind in "iu"
    result, copy_to = _output(fn, shape, result_dtype, out, template, ((a, a_strides), (b, b_strides)), may_fail)
    status = lib.tt_binary(
        op.code, len(shape), shape, a.data_ptr(), a_strides, b.data_ptr(), b_strides,
        result.data_ptr(), result._strides, dtype.code,
    )
    check(status, fn)
    return result if copy_to is None else copy_to.copy_(result)


_OPERATORS = {fn: _make_operator(fn) for fn in _BINARY}

# Python-number exponents that PyTorch computes with cheaper ops for float32 and float64 (ATen's
# pow with a scalar exponent), and so do we: x * x is pow(x, 2) to the bit, and libm's pow takes
# ~4 ns an element (a (256, 512) x ** 2: 543 -> 13 us). For 3 and -2 the products round twice,
# as PyTorch's do (3 is one pass, `cube`: 19 -> ~9 us, where square then mul took two); 0.5 and
# -0.5 give sqrt's -0.0 and NaN at -0.0 and -inf, as PyTorch and NumPy do (pow's would be +0.0
# and +inf).
_POW_AS_OPS = {2: ("square",), 0.5: ("sqrt",), -0.5: ("rsqrt",), -1: ("reciprocal",), 3: ("cube",),
               -2: ("square", "reciprocal")}


def _pow_as_ops(a: Any, b: Any, out: Any) -> Any:
    """``a ** b`` through `_POW_AS_OPS` for a tensor and a Python number there, when the result
    is float32 or float64 (PyTorch decides by the promoted dtype: an int64 tensor ** 2.0 too) and
    nothing records (the graph keeps pow's own node); None otherwise. Errors name "pow": `out`
    is checked before anything is computed."""
    if type(b) is not int and type(b) is not float or not isinstance(a, TensorImpl):
        return None
    ops = _POW_AS_OPS.get(b)
    if ops is None or (_GRAD.enabled and _requires_grad(a)):
        return None
    dtype = a._dtype if type(b) is int or a._dtype.is_floating_point else dtypes.result_type(a, b)
    if dtype is not dtypes.float32 and dtype is not dtypes.float64:
        return None
    x = a if a._dtype is dtype else a.to(dtype)
    if len(ops) == 1:
        return unary(ops[0], x, out, name="pow")
    if out is not None:  # the two ops write a new tensor, copied into `out` once checked
        _output("pow", x._shape, dtype, out, a, ((a, a._strides),))
    result = unary(ops[1], unary("square", x))
    return result if out is None else out.copy_(result)


_pow_general = _OPERATORS["pow"]


def _pow_operator(a: Any, b: Any) -> Any:
    """``a ** b`` without `out`: `_pow_as_ops`, else the operator every binary op has."""
    result = _pow_as_ops(a, b, None)
    return _pow_general(a, b) if result is None else result


_OPERATORS["pow"] = _pow_operator


def _requires_grad(value: Any) -> bool:
    meta = getattr(value, "_ag", None)
    return meta is not None and meta.requires_grad


def _autograd_functions():
    """The elementwise primitives of autograd (imported on first use: they import this module)."""
    global _AUTOGRAD_ELEMENTWISE
    if _AUTOGRAD_ELEMENTWISE is None:
        from t_tensor.autograd.functions import elementwise

        _AUTOGRAD_ELEMENTWISE = elementwise
    return _AUTOGRAD_ELEMENTWISE


_AUTOGRAD_ELEMENTWISE = None


def _is_bool(value: Any) -> bool:
    return type(value) is bool or (isinstance(value, TensorImpl) and value._dtype is dtypes.bool)


def _scaled(fn: str, input: Any, other: Any, alpha: Any) -> Any:
    """``alpha * other`` for add and sub, with PyTorch's checks on alpha's type."""
    if alpha == 1 and type(alpha) is int:
        return other
    promoted = dtypes.result_type(_operand(input, fn), _operand(other, fn))
    if type(alpha) is bool and promoted is not dtypes.bool:
        raise RuntimeError(f"{fn}: Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not promoted.is_floating_point:
        raise RuntimeError(f"{fn}: For integral input tensors, argument alpha must not be a floating point number.")
    return binary("mul", other, alpha) if isinstance(other, TensorImpl) else other * alpha


def unary(fn: str, x: Any, out: Any = None, params: tuple[float, float] = (0.0, 0.0), name: str = "") -> Any:
    """Run the unary op `fn` ("exp", "isnan", ...) with promotion and optional `out`; `params` go to
    the ops of ``tt_unary_param``. `name` (default `fn`) is the function errors are reported as."""
    if out is None and isinstance(x, TensorImpl) and (x._ag is None or not _GRAD.enabled) and (
        x._dense or x._is_dense()
    ):
        dtype = x._dtype
        entry = _FAST_UNARY[fn][dtype.code]
        if entry is not None:
            ptr = _unary_new(entry[0], _prod(x._shape), x._storage._data + x._offset * dtype.itemsize, dtype.code,
                             entry[1].code)
            if ptr:
                return wrap_new(type(x), ptr, x._shape, x._strides, entry[1])
    if _GRAD.enabled and _requires_grad(x):
        return _autograd_functions().unary(fn, x, out, params, name)
    op = _UNARY[fn]
    fn = name or fn
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{fn}: expected a Tensor, got {type(x).__name__}")
    dtype = _compute_dtype(fn, op, x._dtype)
    if fn in _IDENTITY_ON_INTEGERS and dtype.kind in "iu":
        result = x.clone()
        return result if out is None else out.copy_(result)
    x, x_strides = _as_input(x, dtype, x._shape, x, fn)
    result_dtype = dtypes.bool if op.gives == "bool" else dtype
    result, copy_to = _output(fn, x._shape, result_dtype, out, x, ((x, x_strides),))
    if op.param:
        status = lib.tt_unary_param(op.code, len(x._shape), x._shape, x.data_ptr(), x_strides, result.data_ptr(),
                                    result._strides, dtype.code, *params)
    else:
        status = lib.tt_unary(op.code, len(x._shape), x._shape, x.data_ptr(), x_strides, result.data_ptr(),
                              result._strides, dtype.code)
    check(status, fn)
    return result if copy_to is None else copy_to.copy_(result)


def _check_scalar_converts(value: Any, dtype: DType, fn: str) -> None:
    """Refuse a Python number that `dtype` cannot hold, by PyTorch's rule for scalar arguments of
    where, clamp and lerp (c10's ``overflows``): integers must fit (an unsigned dtype also takes
    -max..-1, which wraps), and a finite float must be within the float dtype's range (inf and NaN
    pass). Arithmetic operators wrap instead; this check is only for these functions."""
    if isinstance(value, TensorImpl) or dtype is dtypes.bool:
        return
    if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
        raise RuntimeError(f"{fn}: Overflow when unpacking long: {value} does not fit in int64")
    if dtype.kind in "iu":
        info = dtypes.iinfo(dtype)
        low = -info.max if dtype.kind == "u" else info.min
        fits = low <= value <= info.max
    else:
        fits = _float_holds(value, _FLOAT_MAX[dtype])
    if not fits:
        raise RuntimeError(f"{fn}: value {value} cannot be converted to type {dtype.name} without overflow")


def _broadcast_inputs(fn: str, values: list, in_dtypes: list[DType], template: TensorImpl):
    """The broadcast shape of the tensors among `values`, and each value as (tensor, strides) at
    that shape in its dtype (see `_as_input`)."""
    shapes = [v._shape for v in values if isinstance(v, TensorImpl)]
    shape = shapes[0] if shapes.count(shapes[0]) == len(shapes) else S.broadcast_shapes(*shapes, fn=fn)
    return shape, [_as_input(v, d, shape, template, fn) for v, d in zip(values, in_dtypes, strict=True)]


def ternary(fn: str, code: int, a: Any, b: Any, c: Any, a_dtype: DType, dtype: DType, out: Any = None) -> Any:
    """Run ``tt_ternary`` (WHERE, CLAMP, LERP): `a` converted to `a_dtype`, `b` and `c` to `dtype`,
    all three broadcast; the result is of `dtype`. Python numbers must already be checked."""
    if _GRAD.enabled and (_requires_grad(a) or _requires_grad(b) or _requires_grad(c)):
        return _autograd_functions().ternary(fn, a, b, c, out)
    template = next(v for v in (a, b, c) if isinstance(v, TensorImpl))
    shape, inputs = _broadcast_inputs(fn, [a, b, c], [a_dtype, dtype, dtype], template)
    result, copy_to = _output(fn, shape, dtype, out, template, inputs)
    (a, a_strides), (b, b_strides), (c, c_strides) = inputs
    status = lib.tt_ternary(
        code, len(shape), shape, a.data_ptr(), a_strides, b.data_ptr(), b_strides, c.data_ptr(), c_strides,
        result.data_ptr(), result._strides, dtype.code,
    )
    check(status, fn)
    return result if copy_to is None else copy_to.copy_(result)


# ---------------------------------------------------------------------- binary functions


# Elements from which add/sub with alpha take the one-pass kernel: below, the two fast-path ops
# (about 2 us in all for 16 elements) beat the general path's broadcasting and output checks (15).
_ADD_SCALED_MIN = 1 << 15


def _add_scaled(fn: str, input: Any, other: Any, alpha: Any, out: Any) -> Any:
    """``input + alpha * other`` (``sub``: ``-alpha``) in one pass, ``TT_ADD_SCALED``, for two
    float32 or float64 tensors of one dtype when alpha is a plain number other than 1 and nothing records
    (an optimizer's ``p.add_(buf, alpha=-lr)``: one kernel instead of a product into a new tensor
    and then the sum). The product is rounded before the sum, as in the two-op path, so float32
    and float64 results are the same bits. None when the case is another one."""
    if type(alpha) not in (int, float) or alpha == 1:
        return None
    if not isinstance(input, TensorImpl) or not isinstance(other, TensorImpl):
        return None
    if _prod(input._shape) < _ADD_SCALED_MIN and _prod(other._shape) < _ADD_SCALED_MIN:
        return None  # small: the two fast-path ops cost less than this general path's Python
    dtype = input._dtype
    if other._dtype is not dtype or dtype not in (dtypes.float32, dtypes.float64):
        return None  # float16 keeps the two ops: the product rounded to half first, as PyTorch
    if out is not None and (not isinstance(out, TensorImpl) or out._dtype is not dtype):
        return None
    if _GRAD.enabled and (_requires_grad(input) or _requires_grad(other) or _requires_grad(out)):
        return None
    shape, inputs = _broadcast_inputs(fn, [input, other], [dtype, dtype], input)
    result, copy_to = _output(fn, shape, dtype, out, input, inputs)
    (a, a_strides), (b, b_strides) = inputs
    status = lib.tt_binary_param(
        lib.TT_ADD_SCALED, len(shape), shape, a.data_ptr(), a_strides, b.data_ptr(), b_strides,
        result.data_ptr(), result._strides, dtype.code, float(alpha) if fn == "add" else -float(alpha),
    )
    check(status, fn)
    return result if copy_to is None else copy_to.copy_(result)


def add(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Any:
    """``input + alpha * other``, broadcast.

    >>> import t_tensor as tt
    >>> tt.add(tt.tensor([1, 2]), tt.tensor([[10], [20]])).tolist()
    [[11, 12], [21, 22]]
    """
    fused = _add_scaled("add", input, other, alpha, out)
    if fused is not None:
        return fused
    return binary("add", input, _scaled("add", input, other, alpha), out)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Any:
    """``input - alpha * other``, broadcast.

    >>> import t_tensor as tt
    >>> tt.sub(tt.tensor([5.0, 6.0]), 1.5).tolist()
    [3.5, 4.5]
    """
    fused = _add_scaled("sub", input, other, alpha, out)
    if fused is not None:
        return fused
    return binary("sub", input, _scaled("sub", input, other, alpha), out)


def mul(input: Any, other: Any, *, out: Any = None) -> Any:
    """``input * other``, broadcast."""
    return binary("mul", input, other, out)


def div(input: Any, other: Any, *, out: Any = None) -> Any:
    """True division; integers give the default float dtype.

    >>> import t_tensor as tt
    >>> tt.div(tt.tensor([3, 4]), 2).tolist()
    [1.5, 2.0]
    """
    return binary("div", input, other, out)


true_divide = div


def floor_divide(input: Any, other: Any, *, out: Any = None) -> Any:
    """Division rounded toward negative infinity (Python's ``//``).

    >>> import t_tensor as tt
    >>> tt.floor_divide(tt.tensor([7, -7]), 2).tolist()
    [3, -4]
    """
    return binary("floor_divide", input, other, out)


def remainder(input: Any, other: Any, *, out: Any = None) -> Any:
    """Remainder with the divisor's sign (Python's ``%``).

    >>> import t_tensor as tt
    >>> tt.remainder(tt.tensor([7, -7]), 3).tolist()
    [1, 2]
    """
    return binary("remainder", input, other, out)


def pow(input: Any, exponent: Any, *, out: Any = None) -> Any:
    """``input ** exponent``.

    >>> import t_tensor as tt
    >>> tt.pow(tt.tensor([2, 3]), 3).tolist(), tt.pow(2, tt.tensor([0.5])).dtype
    ([8, 27], t_tensor.float32)
    """
    return binary("pow", input, exponent, out)


def maximum(input: Any, other: Any, *, out: Any = None) -> Any:
    """The larger of each pair; NaN wins (propagates)."""
    return binary("maximum", input, other, out)


def minimum(input: Any, other: Any, *, out: Any = None) -> Any:
    """The smaller of each pair; NaN wins (propagates)."""
    return binary("minimum", input, other, out)


def atan2(input: Any, other: Any, *, out: Any = None) -> Any:
    """The angle of the point (other, input), in radians."""
    return binary("atan2", input, other, out)


def bitwise_and(input: Any, other: Any, *, out: Any = None) -> Any:
    """Bitwise AND of integer or bool tensors (logical AND for bool)."""
    return binary("bitwise_and", input, other, out)


def bitwise_or(input: Any, other: Any, *, out: Any = None) -> Any:
    """Bitwise OR of integer or bool tensors."""
    return binary("bitwise_or", input, other, out)


def bitwise_xor(input: Any, other: Any, *, out: Any = None) -> Any:
    """Bitwise XOR of integer or bool tensors."""
    return binary("bitwise_xor", input, other, out)


def eq(input: Any, other: Any, *, out: Any = None) -> Any:
    """Elementwise ``==`` as a bool tensor.

    >>> import t_tensor as tt
    >>> tt.eq(tt.tensor([1, 2]), 2).tolist()
    [False, True]
    """
    return binary("eq", input, other, out)


def ne(input: Any, other: Any, *, out: Any = None) -> Any:
    """Elementwise ``!=`` as a bool tensor."""
    return binary("ne", input, other, out)


def lt(input: Any, other: Any, *, out: Any = None) -> Any:
    """Elementwise ``<`` as a bool tensor."""
    return binary("lt", input, other, out)


def le(input: Any, other: Any, *, out: Any = None) -> Any:
    """Elementwise ``<=`` as a bool tensor."""
    return binary("le", input, other, out)


def gt(input: Any, other: Any, *, out: Any = None) -> Any:
    """Elementwise ``>`` as a bool tensor."""
    return binary("gt", input, other, out)


def ge(input: Any, other: Any, *, out: Any = None) -> Any:
    """Elementwise ``>=`` as a bool tensor."""
    return binary("ge", input, other, out)


def logical_and(input: Any, other: Any, *, out: Any = None) -> Any:
    """True where both are nonzero."""
    return binary("logical_and", input, other, out)


def logical_or(input: Any, other: Any, *, out: Any = None) -> Any:
    """True where either is nonzero."""
    return binary("logical_or", input, other, out)


def logical_xor(input: Any, other: Any, *, out: Any = None) -> Any:
    """True where exactly one is nonzero."""
    return binary("logical_xor", input, other, out)


def hypot(input: Any, other: Any, *, out: Any = None) -> Any:
    """``sqrt(input**2 + other**2)`` without overflow in the squares; floating point only.

    >>> import t_tensor as tt
    >>> tt.hypot(tt.tensor([3.0, 5.0]), tt.tensor([4.0, 12.0])).tolist()
    [5.0, 13.0]
    """
    return binary("hypot", input, other, out)


def copysign(input: Any, other: Any, *, out: Any = None) -> Any:
    """The magnitude of `input` with the sign of `other` (sign bit, so -0.0 counts as negative);
    integers give the default float dtype.

    >>> import t_tensor as tt
    >>> tt.copysign(tt.tensor([1, 2, 3]), tt.tensor([-1.0, 0.0, -0.0])).tolist()
    [-1.0, 2.0, -3.0]
    """
    return binary("copysign", input, other, out)


def logaddexp(input: Any, other: Any, *, out: Any = None) -> Any:
    """``log(exp(input) + exp(other))``, computed as ``max + log1p(exp(-|input - other|))`` so it
    neither overflows nor loses small terms; floating point only.

    >>> import t_tensor as tt
    >>> tt.logaddexp(tt.tensor([1000.0, -float("inf")]), tt.tensor([1000.0, 2.0])).tolist()
    [1000.6931762695312, 2.0]
    """
    return binary("logaddexp", input, other, out)


def logaddexp2(input: Any, other: Any, *, out: Any = None) -> Any:
    """``log2(2**input + 2**other)``, computed stably; floating point only."""
    return binary("logaddexp2", input, other, out)


def fmod(input: Any, other: Any, *, out: Any = None) -> Any:
    """C's remainder: the result takes the sign of `input` (``remainder`` takes the divisor's).
    Integer division by zero raises.

    >>> import t_tensor as tt
    >>> tt.fmod(tt.tensor([7, -7]), 3).tolist(), tt.remainder(tt.tensor([7, -7]), 3).tolist()
    ([1, -1], [1, 2])
    """
    return binary("fmod", input, other, out)


def bitwise_left_shift(input: Any, other: Any, *, out: Any = None) -> Any:
    """``input << other`` for integer tensors, wrapping to the dtype; a shift by a negative amount
    or by 64 or more gives 0 (PyTorch's rule).

    >>> import t_tensor as tt
    >>> (tt.tensor([1, 3], dtype=tt.int8) << tt.tensor([7, 1], dtype=tt.int8)).tolist()
    [-128, 6]
    """
    return binary("bitwise_left_shift", input, other, out)


def bitwise_right_shift(input: Any, other: Any, *, out: Any = None) -> Any:
    """``input >> other`` (arithmetic: negative numbers stay negative); a shift by a negative amount
    or by 64 or more gives -1 for negative inputs and 0 for the others.

    >>> import t_tensor as tt
    >>> (tt.tensor([-8, 8]) >> 2).tolist(), (tt.tensor([-8, 8]) >> 70).tolist()
    ([-2, 2], [-1, 0])
    """
    return binary("bitwise_right_shift", input, other, out)


# ---------------------------------------------------------------------- where, clamp, lerp


def _relu_grad(grad: Any, output: Any) -> Any:
    """relu's backward: 0 where relu's ``output`` is <= 0, else ``grad`` (a NaN output passes its
    gradient, as in PyTorch). One C pass (``TT_RELU_GRAD``) when both are dense tensors of one
    shape and numeric dtype and nothing records (a ``create_graph`` backward takes the composite,
    which is differentiable); else ``where(output <= 0, 0, grad)``. Internal: not a public op."""
    if (type(grad) is type(output) and isinstance(grad, TensorImpl) and grad._dtype is output._dtype
            and grad._shape == output._shape and grad._dtype is not dtypes.bool
            and (not _GRAD.enabled or grad._ag is output._ag is None)
            and (grad._dense or grad._is_dense()) and (output._dense or output._is_dense())):
        dtype = grad._dtype
        itemsize = dtype.itemsize
        ptr = _binary_new(lib.TT_RELU_GRAD, _prod(grad._shape), grad._storage._data + grad._offset * itemsize,
                          output._storage._data + output._offset * itemsize, dtype.code, dtype.code)
        if ptr:
            return wrap_new(type(grad), ptr, grad._shape, grad._strides, dtype)
    return where(le(output, 0), 0.0, grad)


def where(condition: Any, input: Any = None, other: Any = None, *, out: Any = None) -> Any:
    """``input`` where `condition` is true, else ``other``; all three broadcast. The result dtype is
    ``result_type(input, other)`` (Python numbers take part as in arithmetic). With the condition
    alone, the indices of its true elements: ``nonzero(condition, as_tuple=True)``.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[1, -2], [-3, 4]])
    >>> tt.where(x > 0, x, 0.5).tolist()
    [[1.0, 0.5], [0.5, 4.0]]
    """
    if out is None and type(condition) is type(input) and isinstance(input, TensorImpl):
        result = _fast_where(condition, input, other)
        if result is not None:
            return result
    if input is None and other is None:
        from t_tensor.indexing import nonzero

        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: expected a condition and both input and other, or the condition alone")
    if not isinstance(condition, TensorImpl):
        raise TypeError(f"where: condition must be a Tensor, got {type(condition).__name__}")
    if condition._dtype is dtypes.uint8:  # accepted with a warning, as PyTorch
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and will be removed in a future "
            "version of PyTorch. Use a boolean condition instead.",
            UserWarning,
            stacklevel=2,
        )
    elif condition._dtype is not dtypes.bool:
        raise RuntimeError(
            f"where: expected condition to be a boolean tensor, but got a tensor with dtype {condition._dtype.name}"
        )
    input, other = _operand(input, "where"), _operand(other, "where")
    dtype = dtypes.result_type(input, other)
    for value in (input, other):
        if dtype is not dtypes.float16:  # PyTorch converts a number to float16 unchecked here (1e5 -> inf)
            _check_scalar_converts(value, dtype, "where")
    if out is not None and isinstance(out, TensorImpl) and out._dtype is not dtype:
        raise RuntimeError(f"where: Expected out type to be {dtype.name} but got {out._dtype.name}")
    return ternary("where", lib.TT_WHERE, condition, input, other, dtypes.bool, dtype, out)


def _fast_where(condition: TensorImpl, input: TensorImpl, other: Any) -> Any:
    """``where(condition, input, other)`` in one C call (``tt_where_new``) for the plain case: a
    dense bool condition and a dense `input` of one shape, and `other` a dense tensor of that
    shape and input's dtype, or a Python number a float `input` holds (what `where`'s checks
    would accept and result_type would keep in input's dtype), nothing recording. None to take
    the general path, which decides everything else and raises the errors."""
    dtype, shape = input._dtype, input._shape
    if condition._dtype is not dtypes.bool or condition._shape != shape or (
        _GRAD.enabled and (input._ag is not None or getattr(other, "_ag", None) is not None)
    ):
        return None
    if not ((condition._dense or condition._is_dense()) and (input._dense or input._is_dense())):
        return None
    if type(other) is type(input):
        if other._dtype is not dtype or other._shape != shape or not (other._dense or other._is_dense()):
            return None
        number = (0, 0, 0.0, 0)
        b = other._storage._data + other._offset * dtype.itemsize
    elif type(other) in (int, float) and dtype.is_floating_point and _plain_float_bound(other, dtype):
        number = (1, other, 0, 1) if type(other) is int else (1, 0, other, 0)
        b = 0
    else:
        return None
    ptr = lib.tt_where_new(_prod(shape), condition._storage._data + condition._offset,
                           input._storage._data + input._offset * dtype.itemsize, b, *number, dtype.code)
    return wrap_new(type(input), ptr, shape, input._strides, dtype) if ptr else None


def clamp(input: Any, min: Any = None, max: Any = None, *, out: Any = None) -> Any:
    """Each element limited to ``[min, max]``: ``minimum(maximum(input, min), max)``. Either bound
    may be None, a Python number or a tensor (broadcast). The result dtype is
    ``result_type(input, min, max)``; a NaN in the input or in a bound gives NaN, and where
    ``min > max`` the result is ``max``, as in PyTorch. (PyTorch takes two numbers or two tensors;
    a number with a tensor is fine here.) With numbers for bounds, ``out`` must be of the result
    dtype; with tensors, of a dtype it can be cast to. Bool tensors take only one tensor bound.

    >>> import t_tensor as tt
    >>> tt.clamp(tt.tensor([1, 5, 9]), 2, 6).tolist(), tt.clamp(tt.tensor([1, 5, 9]), max=4.5).tolist()
    ([2, 5, 6], [1.0, 4.5, 4.5])
    """
    if out is None and isinstance(input, TensorImpl) and (min is not None or max is not None) and (
            _plain_float_bound(min, input._dtype) and _plain_float_bound(max, input._dtype)):
        # a float tensor and Python numbers it holds: the checks below would pass and keep its
        # dtype, so straight to the one-call path (4-element clamp(0, 1): ~4.1 -> ~1.5 us)
        result = _fast_clamp_to_numbers(input, min, max)
        if result is not None:
            return result
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    if not isinstance(input, TensorImpl):
        raise TypeError(f"clamp: expected a Tensor, got {type(input).__name__}")
    bounds = [_operand(b, "clamp") for b in (min, max) if b is not None]
    dtype = dtypes.result_type(input, *bounds)
    numbers_only = not any(isinstance(b, TensorImpl) for b in bounds)
    if dtype is dtypes.bool and (len(bounds) == 2 or numbers_only):  # PyTorch: only maximum/minimum take bools
        raise TypeError("clamp: not implemented for bool tensors (except with one tensor bound)")
    for bound in bounds:
        _check_scalar_converts(bound, dtype, "clamp")
    if numbers_only and isinstance(out, TensorImpl) and out._dtype is not dtype:
        # PyTorch's clamp to numbers writes no other out dtype (in place, a castable dtype)
        if out is not input or not dtypes.can_cast(dtype, out._dtype):
            raise RuntimeError(f"clamp: Found dtype {out._dtype.name} but expected {dtype.name}")
    if out is None and numbers_only and dtype is input._dtype:
        result = _fast_clamp_to_numbers(input, min, max)
        if result is not None:
            return result
    if max is None:
        return binary("clamp_min", input, bounds[0], out)
    if min is None:
        return binary("clamp_max", input, bounds[0], out)
    return ternary("clamp", lib.TT_CLAMP, input, bounds[0], bounds[1], dtype, dtype, out)


_FLOAT_MAX = {d: dtypes.finfo(d).max for d in (dtypes.float16, dtypes.float32, dtypes.float64)}


def _float_holds(value: Any, limit: float) -> bool:
    """A float dtype whose largest finite value is `limit` holds the number `value` (an int within
    int64): inf and NaN pass, a finite value beyond the range does not (c10's ``overflows``)."""
    return not (_math.isfinite(value) and _builtins.abs(value) > limit)


def _plain_float_bound(value: Any, dtype: DType) -> bool:
    """A clamp bound that needs none of clamp's checks for a tensor of `dtype`: None, or a Python
    int or float (not bool) that a float `dtype` holds: what ``_check_scalar_converts`` accepts,
    by the same rule; the refused ones take the general path, which raises."""
    if value is None:
        return True
    limit = _FLOAT_MAX.get(dtype)
    if limit is None or (type(value) is int and not _INT64_MIN <= value <= _INT64_MAX):
        return False
    return (type(value) is int or type(value) is float) and _float_holds(value, limit)


def _fast_clamp_to_numbers(input: TensorImpl, low: Any, high: Any) -> Any:
    """``clamp`` of a dense tensor to Python numbers (checked, of the tensor's dtype), not
    recording, in one C call without the general path's broadcasting: the scalar kernel of
    ``maximum`` or ``minimum`` for one bound, the ternary kernel with both bounds broadcast for
    two (one pass: a (256, 512) float32 clamp went from 27 to 12 us, a 4-element one from 5.2 to
    4.7; with clamp's checks skipped for plain float bounds, ``_plain_float_bound``, ~1.5). None to
    take the general path."""
    if low is None:
        return _fast_scalar("clamp_max", input, high, 0)
    if high is None:
        return _fast_scalar("clamp_min", input, low, 0)
    dtype = input._dtype
    bounds = _scalar_entry("clamp_min", dtype, low), _scalar_entry("clamp_max", dtype, high)
    if None in bounds or (input._ag is not None and _GRAD.enabled) or not (input._dense or input._is_dense()):
        return None
    (_, low_is_int, low_int, low_float), (_, high_is_int, high_int, high_float) = bounds
    ptr = _clamp_scalars_new(_prod(input._shape), input._storage._data + input._offset * dtype.itemsize,
                             low_int, low_float, low_is_int, high_int, high_float, high_is_int, dtype.code)
    return wrap_new(type(input), ptr, input._shape, input._strides, dtype) if ptr else None


clip = clamp


def clamp_min(input: Any, min: Any, *, out: Any = None) -> Any:
    """``clamp(input, min=min)``."""
    return clamp(input, min, None, out=out)


def clamp_max(input: Any, max: Any, *, out: Any = None) -> Any:
    """``clamp(input, max=max)``."""
    return clamp(input, None, max, out=out)


def lerp(input: Any, end: Any, weight: Any, *, out: Any = None) -> Any:
    """Linear interpolation ``input + weight * (end - input)``, computed as PyTorch does (from the
    nearer end: ``end - (end - input) * (1 - weight)`` when ``|weight| >= 0.5``). `input` and `end`
    are floating point tensors of one dtype; `weight` is a number or a tensor of that dtype. All
    broadcast.

    >>> import t_tensor as tt
    >>> tt.lerp(tt.tensor([0.0, 10.0]), tt.tensor([10.0, 20.0]), 0.25).tolist()
    [2.5, 12.5]
    """
    for name, value in (("input", input), ("end", end)):
        if not isinstance(value, TensorImpl):
            raise TypeError(f"lerp: {name} must be a Tensor, got {type(value).__name__}")
    dtype = input._dtype
    if not dtype.is_floating_point:
        raise TypeError(f"lerp: not implemented for {dtype.name} tensors (only floating point)")
    weight = _operand(weight, "lerp")
    for name, value in (("end", end), ("weight", weight)):
        if isinstance(value, TensorImpl) and value._dtype is not dtype:
            raise RuntimeError(f"lerp: expected dtype {dtype.name} for `{name}` but got dtype {value._dtype.name}")
    if isinstance(weight, TensorImpl) or (_GRAD.enabled and (_requires_grad(input) or _requires_grad(end))):
        return ternary("lerp", lib.TT_LERP, input, end, weight, dtype, dtype, out)
    if dtype is not dtypes.float16:  # as where: PyTorch checks a float32 weight, not a float16 one
        _check_scalar_converts(weight, dtype, "lerp")
    shape, inputs = _broadcast_inputs("lerp", [input, end], [dtype, dtype], input)
    result, copy_to = _output("lerp", shape, dtype, out, input, inputs)
    (a, a_strides), (b, b_strides) = inputs
    status = lib.tt_binary_param(
        lib.TT_LERP_SCALAR, len(shape), shape, a.data_ptr(), a_strides, b.data_ptr(), b_strides,
        result.data_ptr(), result._strides, dtype.code, float(weight),
    )
    check(status, "lerp")
    return result if copy_to is None else copy_to.copy_(result)


# ---------------------------------------------------------------------- unary functions


def neg(input: Any, *, out: Any = None) -> Any:
    """``-input`` (integers wrap: -(-128) is -128 in int8)."""
    return unary("neg", input, out)


negative = neg


def abs(input: Any, *, out: Any = None) -> Any:
    """Absolute value.

    >>> import t_tensor as tt
    >>> tt.abs(tt.tensor([-1.5, 2.0])).tolist()
    [1.5, 2.0]
    """
    return unary("abs", input, out)


def sign(input: Any, *, out: Any = None) -> Any:
    """-1, 0 or 1 by the sign (NaN gives 0, as in PyTorch; NumPy gives NaN)."""
    return unary("sign", input, out)


def square(input: Any, *, out: Any = None) -> Any:
    """``input * input``; bool gives int64, as in PyTorch."""
    if isinstance(input, TensorImpl) and input._dtype is dtypes.bool:
        input = input.to(dtypes.int64)
    return unary("square", input, out)


def relu(input: Any, *, out: Any = None) -> Any:
    """``max(input, 0)``, keeping NaN.

    >>> import t_tensor as tt
    >>> tt.relu(tt.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return unary("relu", input, out)


def exp(input: Any, *, out: Any = None) -> Any:
    """e to the power of each element; integers give the default float dtype.

    >>> import t_tensor as tt
    >>> tt.exp(tt.tensor([0, 1])).tolist()
    [1.0, 2.7182817459106445]
    """
    return unary("exp", input, out)


def expm1(input: Any, *, out: Any = None) -> Any:
    """``exp(x) - 1``, accurate near 0."""
    return unary("expm1", input, out)


def log(input: Any, *, out: Any = None) -> Any:
    """Natural logarithm."""
    return unary("log", input, out)


def log1p(input: Any, *, out: Any = None) -> Any:
    """``log(1 + x)``, accurate near 0."""
    return unary("log1p", input, out)


def log2(input: Any, *, out: Any = None) -> Any:
    """Base-2 logarithm."""
    return unary("log2", input, out)


def log10(input: Any, *, out: Any = None) -> Any:
    """Base-10 logarithm."""
    return unary("log10", input, out)


def sqrt(input: Any, *, out: Any = None) -> Any:
    """Square root (NaN for negative numbers)."""
    return unary("sqrt", input, out)


def rsqrt(input: Any, *, out: Any = None) -> Any:
    """``1 / sqrt(x)``."""
    return unary("rsqrt", input, out)


def reciprocal(input: Any, *, out: Any = None) -> Any:
    """``1 / x``; integers give the default float dtype."""
    return unary("reciprocal", input, out)


def sin(input: Any, *, out: Any = None) -> Any:
    """Sine (radians)."""
    return unary("sin", input, out)


def cos(input: Any, *, out: Any = None) -> Any:
    """Cosine (radians)."""
    return unary("cos", input, out)


def tan(input: Any, *, out: Any = None) -> Any:
    """Tangent (radians)."""
    return unary("tan", input, out)


def asin(input: Any, *, out: Any = None) -> Any:
    """Inverse sine."""
    return unary("asin", input, out)


def acos(input: Any, *, out: Any = None) -> Any:
    """Inverse cosine."""
    return unary("acos", input, out)


def atan(input: Any, *, out: Any = None) -> Any:
    """Inverse tangent."""
    return unary("atan", input, out)


def sinh(input: Any, *, out: Any = None) -> Any:
    """Hyperbolic sine."""
    return unary("sinh", input, out)


def cosh(input: Any, *, out: Any = None) -> Any:
    """Hyperbolic cosine."""
    return unary("cosh", input, out)


def tanh(input: Any, *, out: Any = None) -> Any:
    """Hyperbolic tangent."""
    return unary("tanh", input, out)


def asinh(input: Any, *, out: Any = None) -> Any:
    """Inverse hyperbolic sine."""
    return unary("asinh", input, out)


def acosh(input: Any, *, out: Any = None) -> Any:
    """Inverse hyperbolic cosine."""
    return unary("acosh", input, out)


def atanh(input: Any, *, out: Any = None) -> Any:
    """Inverse hyperbolic tangent."""
    return unary("atanh", input, out)


def floor(input: Any, *, out: Any = None) -> Any:
    """Round down; integers are returned as they are."""
    return unary("floor", input, out)


def ceil(input: Any, *, out: Any = None) -> Any:
    """Round up; integers are returned as they are."""
    return unary("ceil", input, out)


def round(input: Any, *, out: Any = None) -> Any:
    """Round to the nearest integer, halves to even (as PyTorch and NumPy).

    >>> import t_tensor as tt
    >>> tt.round(tt.tensor([0.5, 1.5, 2.5, -0.5])).tolist()
    [0.0, 2.0, 2.0, -0.0]
    """
    return unary("round", input, out)


def trunc(input: Any, *, out: Any = None) -> Any:
    """Round toward zero."""
    return unary("trunc", input, out)


def sigmoid(input: Any, *, out: Any = None) -> Any:
    """``1 / (1 + exp(-x))``."""
    return unary("sigmoid", input, out)


def erf(input: Any, *, out: Any = None) -> Any:
    """The error function."""
    return unary("erf", input, out)


def bitwise_not(input: Any, *, out: Any = None) -> Any:
    """``~x`` for integers, logical not for bool."""
    return unary("bitwise_not", input, out)


def logical_not(input: Any, *, out: Any = None) -> Any:
    """True where the element is zero."""
    return unary("logical_not", input, out)


def isnan(input: Any, *, out: Any = None) -> Any:
    """True where the element is NaN."""
    return unary("isnan", input, out)


def isinf(input: Any, *, out: Any = None) -> Any:
    """True where the element is +inf or -inf."""
    return unary("isinf", input, out)


def isfinite(input: Any, *, out: Any = None) -> Any:
    """True where the element is neither infinite nor NaN."""
    return unary("isfinite", input, out)


def signbit(input: Any, *, out: Any = None) -> Any:
    """True where the sign bit is set: negative numbers, -0.0 and NaNs with the sign bit.

    >>> import t_tensor as tt
    >>> tt.signbit(tt.tensor([-1.0, -0.0, 0.0, 2.0])).tolist()
    [True, True, False, False]
    """
    return unary("signbit", input, out)


def positive(input: Any) -> Any:
    """`input` itself (the array API's ``+x``); bool tensors are refused, as in PyTorch."""
    if not isinstance(input, TensorImpl):
        raise TypeError(f"positive: expected a Tensor, got {type(input).__name__}")
    if input._dtype is dtypes.bool:
        raise RuntimeError(f"positive: {_BOOL_ERRORS['positive']}")
    return input


def exp2(input: Any, *, out: Any = None) -> Any:
    """``2 ** x``; integers give the default float dtype."""
    return unary("exp2", input, out)


def logit(input: Any, eps: float | None = None, *, out: Any = None) -> Any:
    """``log(x / (1 - x))``, the inverse of ``sigmoid``; with `eps`, x is first clamped to
    ``[eps, 1 - eps]``. Integers give the default float dtype.

    >>> import t_tensor as tt
    >>> tt.logit(tt.tensor([0.5, 0.0]), eps=0.25).tolist()
    [0.0, -1.0986123085021973]
    """
    params = (0.0, 0.0) if eps is None else (_number(eps, "logit", "eps"), 1.0)
    return unary("logit", input, out, params)


def _number(value: Any, fn: str, name: str) -> float:
    """A parameter that must be a real number, as a Python float."""
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")


def _inplace_target(fn: str, input: Any, inplace: bool) -> Any:
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{fn}: expected a Tensor, got {type(input).__name__}")
    return input if inplace else None


# ---------------------------------------------------------------------- activations


def gelu(input: Any, approximate: str = "none") -> Any:
    """Gaussian error linear unit: ``x * Phi(x)`` with Phi the normal CDF, exactly
    (``0.5 * x * (1 + erf(x / sqrt(2)))``) or, with ``approximate="tanh"``,
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``. Floating point only.

    >>> import t_tensor as tt
    >>> [f"{v:.4f}" for v in tt.gelu(tt.tensor([-1.0, 0.0, 1.0])).tolist()]
    ['-0.1587', '0.0000', '0.8413']
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("gelu: approximate argument must be either none or tanh.")
    return unary("gelu" if approximate == "none" else "gelu_tanh", input, name="gelu")


def silu(input: Any, inplace: bool = False) -> Any:
    """``x * sigmoid(x)`` (also called swish). Floating point only."""
    return unary("silu", input, _inplace_target("silu", input, inplace))


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """``log(1 + exp(beta * x)) / beta``, a smooth relu; where ``beta * x > threshold`` the result
    is ``x`` itself (as PyTorch). Floating point only.

    >>> import t_tensor as tt
    >>> [f"{v:.4f}" for v in tt.softplus(tt.tensor([-1.0, 0.0, 30.0])).tolist()]
    ['0.3133', '0.6931', '30.0000']
    """
    params = (_number(beta, "softplus", "beta"), _number(threshold, "softplus", "threshold"))
    return unary("softplus", input, None, params)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    """``x`` where ``x > 0``, else ``negative_slope * x``. Floating point only."""
    params = (_number(negative_slope, "leaky_relu", "negative_slope"), 0.0)
    return unary("leaky_relu", input, _inplace_target("leaky_relu", input, inplace), params)


def leaky_relu_(input: Any, negative_slope: float = 0.01) -> Any:
    """``leaky_relu`` in place."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``. Floating point only."""
    params = (_number(alpha, "elu", "alpha"), 0.0)
    return unary("elu", input, _inplace_target("elu", input, inplace), params)


def elu_(input: Any, alpha: float = 1.0) -> Any:
    """``elu`` in place."""
    return elu(input, alpha, inplace=True)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Any:
    """``clamp(input, min_val, max_val)``; integer tensors take the limits truncated to integers
    and keep their dtype (PyTorch's rule), bool tensors are refused.

    >>> import t_tensor as tt
    >>> tt.hardtanh(tt.tensor([-3.0, 0.5, 2.0])).tolist(), tt.hardtanh(tt.tensor([-5, 5]), -2.5, 3.5).tolist()
    ([-1.0, 0.5, 1.0], [-2, 3])
    """
    out = _inplace_target("hardtanh", input, inplace)
    low, high = _number(min_val, "hardtanh", "min_val"), _number(max_val, "hardtanh", "max_val")
    if low > high:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    if input._dtype is dtypes.bool:
        raise RuntimeError("hardtanh: Bool inputs not supported for hardtanh")
    if input._dtype.kind in "iu":
        if not (_math.isfinite(low) and _math.isfinite(high)):
            raise RuntimeError("hardtanh: integer tensors need finite limits")
        low, high = int(low), int(high)
        if input._dtype is dtypes.uint8 and (low < 0 or high < 0):
            raise RuntimeError("hardtanh: cannot do hardtanh on an unsigned type with negative limits")
    try:
        return clamp(input, low, high, out=out)
    except RuntimeError as error:  # report it as hardtanh's
        raise RuntimeError(f"hardtanh: {str(error).removeprefix('clamp: ')}") from None


def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    """``hardtanh`` in place."""
    return hardtanh(input, min_val, max_val, inplace=True)


# ---------------------------------------------------------------------- closeness


def isclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Where ``|input - other| <= atol + rtol * |other|`` (broadcast; ``torch.isclose``).

    Equal values are close (infinities of one sign too), NaN is close to NaN only with
    ``equal_nan``. Both tensors must have one dtype; bool and integer values are compared as
    numbers (in float64, so a difference cannot wrap around), as torch does.

    >>> import t_tensor as tt
    >>> tt.isclose(tt.tensor([1.0, 2.0, float("inf")]), tt.tensor([1.0 + 1e-9, 2.1, float("inf")])).tolist()
    [True, False, True]
    """
    fn = "isclose"
    if not isinstance(input, TensorImpl) or not isinstance(other, TensorImpl):
        raise TypeError(f"{fn}: expected two tensors, got {type(input).__name__} and {type(other).__name__}")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{fn}: {input._dtype.name} did not match {other._dtype.name}")
    if rtol < 0:
        raise RuntimeError(f"{fn}: rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"{fn}: atol must be greater than or equal to zero, but got {atol}")
    with _no_grad():
        close = eq(input, other)
        if input._dtype.is_floating_point:
            a, b = input, other
        else:  # bool and integers: the difference in float64, where it cannot wrap around
            a, b = input.to(dtypes.float64), other.to(dtypes.float64)
        diff = abs(sub(a, b))
        allowed = add(mul(abs(b), rtol), atol)
        close = logical_or(close, logical_and(isfinite(diff), le(diff, allowed)))
        if equal_nan:
            close = logical_or(close, logical_and(isnan(a), isnan(b)))
        return close


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True when every element of :func:`isclose` is (``torch.allclose``).

    >>> import t_tensor as tt
    >>> tt.allclose(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.000001])), tt.allclose(tt.ones(2), tt.zeros(2))
    (True, False)
    """
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# ---------------------------------------------------------------------- Tensor methods and operators


class ElementwiseOps:
    """Operators and methods mixed into :class:`~t_tensor.tensor.Tensor`.

    Reflected operators (``2 - t``) swap the operands; in-place ones (``t += 1``, ``t.add_(1)``)
    pass the tensor itself as ``out``, so the result must keep its shape and dtype.
    """

    __slots__ = ()
    __array_priority__ = 1000  # NumPy defers to our reflected operators: ndarray + Tensor is a Tensor

    # arithmetic
    __add__ = _OPERATORS["add"]
    def __radd__(self, other): return _OPERATORS["add"](other, self)
    def __iadd__(self, other): return binary("add", self, other, self)
    __sub__ = _OPERATORS["sub"]
    def __rsub__(self, other): return _OPERATORS["sub"](other, self)
    def __isub__(self, other): return binary("sub", self, other, self)
    __mul__ = _OPERATORS["mul"]
    def __rmul__(self, other): return _OPERATORS["mul"](other, self)
    def __imul__(self, other): return binary("mul", self, other, self)
    __truediv__ = _OPERATORS["div"]
    def __rtruediv__(self, other): return _OPERATORS["div"](other, self)
    def __itruediv__(self, other): return binary("div", self, other, self)
    __floordiv__ = _OPERATORS["floor_divide"]
    def __rfloordiv__(self, other): return _OPERATORS["floor_divide"](other, self)
    def __ifloordiv__(self, other): return binary("floor_divide", self, other, self)
    __mod__ = _OPERATORS["remainder"]
    def __rmod__(self, other): return _OPERATORS["remainder"](other, self)
    def __imod__(self, other): return binary("remainder", self, other, self)
    __pow__ = _OPERATORS["pow"]
    def __rpow__(self, other): return _OPERATORS["pow"](other, self)
    def __ipow__(self, other): return binary("pow", self, other, self)
    def __neg__(self): return unary("neg", self)
    def __pos__(self): return positive(self)
    def __abs__(self): return unary("abs", self)

    # bits and logic
    __and__ = _OPERATORS["bitwise_and"]
    def __rand__(self, other): return _OPERATORS["bitwise_and"](other, self)
    def __iand__(self, other): return binary("bitwise_and", self, other, self)
    __or__ = _OPERATORS["bitwise_or"]
    def __ror__(self, other): return _OPERATORS["bitwise_or"](other, self)
    def __ior__(self, other): return binary("bitwise_or", self, other, self)
    __xor__ = _OPERATORS["bitwise_xor"]
    def __rxor__(self, other): return _OPERATORS["bitwise_xor"](other, self)
    def __ixor__(self, other): return binary("bitwise_xor", self, other, self)
    __lshift__ = _OPERATORS["bitwise_left_shift"]
    def __rlshift__(self, other): return _OPERATORS["bitwise_left_shift"](other, self)
    def __ilshift__(self, other): return binary("bitwise_left_shift", self, other, self)
    __rshift__ = _OPERATORS["bitwise_right_shift"]
    def __rrshift__(self, other): return _OPERATORS["bitwise_right_shift"](other, self)
    def __irshift__(self, other): return binary("bitwise_right_shift", self, other, self)

    def __invert__(self):
        if self._dtype.is_floating_point:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return unary("bitwise_not", self)

    # comparisons return bool tensors, so a tensor is hashed by identity (as in PyTorch)
    __eq__ = _OPERATORS["eq"]  # type: ignore[override]
    __ne__ = _OPERATORS["ne"]  # type: ignore[override]
    __lt__ = _OPERATORS["lt"]
    __le__ = _OPERATORS["le"]
    __gt__ = _OPERATORS["gt"]
    __ge__ = _OPERATORS["ge"]
    __hash__ = object.__hash__

    # methods, binary
    def add(self, other, *, alpha=1, out=None): return add(self, other, alpha=alpha, out=out)
    def sub(self, other, *, alpha=1, out=None): return sub(self, other, alpha=alpha, out=out)
    def mul(self, other, *, out=None): return binary("mul", self, other, out)
    def div(self, other, *, out=None): return binary("div", self, other, out)
    true_divide = div
    def floor_divide(self, other, *, out=None): return binary("floor_divide", self, other, out)
    def remainder(self, other, *, out=None): return binary("remainder", self, other, out)
    def pow(self, exponent, *, out=None): return binary("pow", self, exponent, out)
    def maximum(self, other, *, out=None): return binary("maximum", self, other, out)
    def minimum(self, other, *, out=None): return binary("minimum", self, other, out)
    def atan2(self, other, *, out=None): return binary("atan2", self, other, out)
    def bitwise_and(self, other, *, out=None): return binary("bitwise_and", self, other, out)
    def bitwise_or(self, other, *, out=None): return binary("bitwise_or", self, other, out)
    def bitwise_xor(self, other, *, out=None): return binary("bitwise_xor", self, other, out)
    def eq(self, other, *, out=None): return binary("eq", self, other, out)
    def ne(self, other, *, out=None): return binary("ne", self, other, out)
    def lt(self, other, *, out=None): return binary("lt", self, other, out)
    def le(self, other, *, out=None): return binary("le", self, other, out)
    def gt(self, other, *, out=None): return binary("gt", self, other, out)
    def ge(self, other, *, out=None): return binary("ge", self, other, out)
    def logical_and(self, other, *, out=None): return binary("logical_and", self, other, out)
    def logical_or(self, other, *, out=None): return binary("logical_or", self, other, out)
    def logical_xor(self, other, *, out=None): return binary("logical_xor", self, other, out)
    def hypot(self, other, *, out=None): return binary("hypot", self, other, out)
    def copysign(self, other, *, out=None): return binary("copysign", self, other, out)
    def logaddexp(self, other, *, out=None): return binary("logaddexp", self, other, out)
    def logaddexp2(self, other, *, out=None): return binary("logaddexp2", self, other, out)
    def fmod(self, other, *, out=None): return binary("fmod", self, other, out)
    def bitwise_left_shift(self, other, *, out=None): return binary("bitwise_left_shift", self, other, out)
    def bitwise_right_shift(self, other, *, out=None): return binary("bitwise_right_shift", self, other, out)

    # where, clamp, lerp
    def where(self, condition, other): return where(condition, self, other)
    def clamp(self, min=None, max=None, *, out=None): return clamp(self, min, max, out=out)
    clip = clamp
    def clamp_min(self, min, *, out=None): return clamp(self, min, None, out=out)
    def clamp_max(self, max, *, out=None): return clamp(self, None, max, out=out)
    def clamp_(self, min=None, max=None): return clamp(self, min, max, out=self)
    clip_ = clamp_
    def clamp_min_(self, min): return clamp(self, min, None, out=self)
    def clamp_max_(self, max): return clamp(self, None, max, out=self)
    def lerp(self, end, weight, *, out=None): return lerp(self, end, weight, out=out)
    def lerp_(self, end, weight): return lerp(self, end, weight, out=self)

    # methods, binary in place
    def add_(self, other, *, alpha=1): return add(self, other, alpha=alpha, out=self)
    def sub_(self, other, *, alpha=1): return sub(self, other, alpha=alpha, out=self)
    def mul_(self, other): return binary("mul", self, other, self)
    def div_(self, other): return binary("div", self, other, self)
    true_divide_ = div_
    def floor_divide_(self, other): return binary("floor_divide", self, other, self)
    def remainder_(self, other): return binary("remainder", self, other, self)
    def pow_(self, exponent): return binary("pow", self, exponent, self)
    def hypot_(self, other): return binary("hypot", self, other, self)
    def copysign_(self, other): return binary("copysign", self, other, self)
    def fmod_(self, other): return binary("fmod", self, other, self)
    def bitwise_left_shift_(self, other): return binary("bitwise_left_shift", self, other, self)
    def bitwise_right_shift_(self, other): return binary("bitwise_right_shift", self, other, self)

    # methods, unary (and their in-place forms)
    def neg(self, *, out=None): return unary("neg", self, out)
    negative = neg
    def abs(self, *, out=None): return unary("abs", self, out)
    def sign(self, *, out=None): return unary("sign", self, out)
    def square(self, *, out=None): return square(self, out=out)
    def relu(self, *, out=None): return unary("relu", self, out)
    def exp(self, *, out=None): return unary("exp", self, out)
    def expm1(self, *, out=None): return unary("expm1", self, out)
    def log(self, *, out=None): return unary("log", self, out)
    def log1p(self, *, out=None): return unary("log1p", self, out)
    def log2(self, *, out=None): return unary("log2", self, out)
    def log10(self, *, out=None): return unary("log10", self, out)
    def sqrt(self, *, out=None): return unary("sqrt", self, out)
    def rsqrt(self, *, out=None): return unary("rsqrt", self, out)
    def reciprocal(self, *, out=None): return unary("reciprocal", self, out)
    def sin(self, *, out=None): return unary("sin", self, out)
    def cos(self, *, out=None): return unary("cos", self, out)
    def tan(self, *, out=None): return unary("tan", self, out)
    def asin(self, *, out=None): return unary("asin", self, out)
    def acos(self, *, out=None): return unary("acos", self, out)
    def atan(self, *, out=None): return unary("atan", self, out)
    def sinh(self, *, out=None): return unary("sinh", self, out)
    def cosh(self, *, out=None): return unary("cosh", self, out)
    def tanh(self, *, out=None): return unary("tanh", self, out)
    def asinh(self, *, out=None): return unary("asinh", self, out)
    def acosh(self, *, out=None): return unary("acosh", self, out)
    def atanh(self, *, out=None): return unary("atanh", self, out)
    def floor(self, *, out=None): return unary("floor", self, out)
    def ceil(self, *, out=None): return unary("ceil", self, out)
    def round(self, *, out=None): return unary("round", self, out)
    def trunc(self, *, out=None): return unary("trunc", self, out)
    def sigmoid(self, *, out=None): return unary("sigmoid", self, out)
    def erf(self, *, out=None): return unary("erf", self, out)
    def bitwise_not(self, *, out=None): return unary("bitwise_not", self, out)
    def logical_not(self, *, out=None): return unary("logical_not", self, out)
    def isnan(self): return unary("isnan", self)
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False): return isclose(self, other, rtol, atol,
                                                                                    equal_nan)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False): return allclose(self, other, rtol, atol,
                                                                                      equal_nan)
    def isinf(self): return unary("isinf", self)
    def isfinite(self): return unary("isfinite", self)
    def signbit(self, *, out=None): return unary("signbit", self, out)
    def positive(self): return positive(self)
    def exp2(self, *, out=None): return unary("exp2", self, out)
    def logit(self, eps=None, *, out=None): return logit(self, eps, out=out)
    # activations (torch has these in torch.nn.functional only; here they are methods too)
    def gelu(self, approximate="none"): return gelu(self, approximate)
    def silu(self): return silu(self)
    def softplus(self, beta=1.0, threshold=20.0): return softplus(self, beta, threshold)
    def leaky_relu(self, negative_slope=0.01): return leaky_relu(self, negative_slope)
    def elu(self, alpha=1.0): return elu(self, alpha)
    def hardtanh(self, min_val=-1.0, max_val=1.0): return hardtanh(self, min_val, max_val)

    def neg_(self): return unary("neg", self, self)
    def abs_(self): return unary("abs", self, self)
    def sign_(self): return unary("sign", self, self)
    def square_(self): return square(self, out=self)
    def relu_(self): return unary("relu", self, self)
    def exp_(self): return unary("exp", self, self)
    def expm1_(self): return unary("expm1", self, self)
    def log_(self): return unary("log", self, self)
    def log1p_(self): return unary("log1p", self, self)
    def log2_(self): return unary("log2", self, self)
    def log10_(self): return unary("log10", self, self)
    def sqrt_(self): return unary("sqrt", self, self)
    def rsqrt_(self): return unary("rsqrt", self, self)
    def reciprocal_(self): return unary("reciprocal", self, self)
    def sin_(self): return unary("sin", self, self)
    def cos_(self): return unary("cos", self, self)
    def tan_(self): return unary("tan", self, self)
    def asin_(self): return unary("asin", self, self)
    def acos_(self): return unary("acos", self, self)
    def atan_(self): return unary("atan", self, self)
    def sinh_(self): return unary("sinh", self, self)
    def cosh_(self): return unary("cosh", self, self)
    def asinh_(self): return unary("asinh", self, self)
    def acosh_(self): return unary("acosh", self, self)
    def atanh_(self): return unary("atanh", self, self)
    def erf_(self): return unary("erf", self, self)
    def tanh_(self): return unary("tanh", self, self)
    def sigmoid_(self): return unary("sigmoid", self, self)
    def floor_(self): return unary("floor", self, self)
    def ceil_(self): return unary("ceil", self, self)
    def round_(self): return unary("round", self, self)
    def trunc_(self): return unary("trunc", self, self)
    def exp2_(self): return unary("exp2", self, self)
    def logit_(self, eps=None): return logit(self, eps, out=self)
