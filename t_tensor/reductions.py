"""Reductions: sums, means, extrema, arg-extrema, variance, norms, logical reductions, cumulative
scans and softmax.

Every reduction goes through one C kernel, ``tt_reduce`` (``csrc/src/kernels/reduce.c``): Python
normalizes ``dim`` (an int, a tuple of ints, or ``None``/``()`` for all dimensions), checks the
dtype and the empty cases the way PyTorch does, allocates the output and makes one C call with a
bit mask of the reduced dimensions. The output is described to C with the input's shape and
stride 0 on the reduced dimensions, so ``keepdim`` only changes the shape Python gives it.
Cumulative sums and products (``tt_scan``) and softmax (``tt_softmax``, fused: max, sum of
exponentials and normalization in one pass over each line) have kernels of their own.

Result dtypes follow PyTorch: ``sum``/``prod``/``cumsum`` of bool and integers give int64,
``mean``/``var``/``std``/norms need a float input, ``argmax`` gives int64, ``any``/``all`` give
bool (uint8 for a uint8 input). Both PyTorch's and the array API's spellings are accepted:
``dim=``/``axis=`` and ``keepdim=``/``keepdims=``.

``out=`` (as ``torch.sum(x, dim, out=y)``): the result is written into ``y``, which must have the
result's shape (a wrong shape raises, as the elementwise ops do; PyTorch would resize). When
``y`` has the result's dtype and does not overlap the input, the kernel writes straight into it
(any strides); otherwise the result is computed and copied in. As in PyTorch, the sums, products,
means and scans compute in ``y``'s dtype (``dtype=``, if given, must then equal it), ``amax``,
``amin``, ``max``/``min`` values need the input's dtype and indices need int64, ``any``/``all``
write bool or uint8, the other float reductions convert their result into ``y``.

>>> import t_tensor as tt
>>> x = tt.tensor([[1, 2, 3], [4, 5, 6]], dtype=tt.int8)
>>> x.sum(), x.sum(dim=0).tolist(), x.sum(1, keepdim=True).shape
(tensor(21), [5, 7, 9], (2, 1))
>>> x.max(dim=1)
ValuesIndices(values=tensor([3, 6], dtype=t_tensor.int8), indices=tensor([2, 2]))
>>> x.float().softmax(dim=1).sum(dim=1).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

from t_tensor import dtypes
from t_tensor import strides as S
from t_tensor._capi import check, lib
from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import STATE as _GRAD
from t_tensor.autograd.grad_mode import wants_grad
from t_tensor.autograd.graph import bump_version
from t_tensor.dtypes import DType
from t_tensor.tensor_impl import TensorImpl, expect_tensor, wrap_new

__all__ = [
    "sum", "nansum", "mean", "nanmean", "prod", "max", "min", "amax", "amin", "argmax", "argmin",
    "var", "std", "any", "all", "logsumexp", "count_nonzero", "cumsum", "cumprod", "cumulative_sum",
    "norm", "vector_norm", "matrix_norm", "softmax", "log_softmax", "trace", "ValuesIndices",
]

_builtin_min = builtins.min
_INF = math.inf
_MAX_DIMS = lib.tt_max_dims()


class ValuesIndices(NamedTuple):
    """What ``max(x, dim)`` and ``min(x, dim)`` return: the values and their int64 indices."""

    values: Any
    indices: Any


# ---------------------------------------------------------------------- shared steps


_tensor = expect_tensor  # the shared check, under this module's short name
_contiguous_strides = S.contiguous_strides_of_valid_shape


def _alias(value: Any, alias: Any, name: str, alias_name: str, fn: str, default: Any) -> Any:
    """One of the PyTorch / array API spellings of an argument (dim/axis, keepdim/keepdims)."""
    if alias is None:
        return default if value is None else value
    if value is not None:
        raise TypeError(f"{fn}: got both {name}= and {alias_name}=")
    return alias


def _reduced_dims(x: TensorImpl, dim: Any, fn: str) -> tuple[int, ...]:
    """The reduced dimensions, sorted: ``None`` or an empty sequence means all of them (as torch)."""
    ndim = len(x._shape)
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        dims = S.normalize_dims(tuple(dim), ndim, fn=fn)
    else:
        dims = (S.normalize_dim(dim, ndim, fn=fn),)
    return () if ndim == 0 else tuple(sorted(dims))


def _checked_shape(x: TensorImpl, fn: str) -> tuple[int, ...]:
    if len(x._shape) > _MAX_DIMS:
        raise RuntimeError(f"{fn}: tensors with more than {_MAX_DIMS} dimensions are not supported")
    return x._shape


def _dtype_arg(dtype: Any, fn: str) -> DType | None:
    return None if dtype is None else dtypes.as_dtype(dtype, fn=fn)


def _result_shape(x: TensorImpl, dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    """The shape of a reduction of ``x`` over ``dims``."""
    return tuple(1 if d in dims else n for d, n in enumerate(x._shape) if keepdim or d not in dims)


def _check_out(fn: str, out: Any, shape: tuple[int, ...], dtype: DType | None = None, name: str = "out") -> Any:
    """Validates an ``out=`` tensor: a Tensor of the result's shape (and of ``dtype`` when given)."""
    if not isinstance(out, TensorImpl):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(out).__name__}")
    if out._shape != tuple(shape):
        raise RuntimeError(f"{fn}: output with shape {list(out._shape)} doesn't match the result shape {list(shape)}")
    if dtype is not None and out._dtype is not dtype:
        raise RuntimeError(f"{fn}: expected {name} to have dtype {dtype.name}, but got {out._dtype.name}")
    out._check_writable(fn)
    bump_version(out)  # it is about to be written
    return out


def _deliver(fn: str, result: Any, out: Any) -> Any:
    """``result``, or ``out`` after copying ``result`` into it (converting the dtype)."""
    if out is None:
        return result
    _check_out(fn, out, result._shape)
    return out.copy_(result)


def _direct(fn: str, out: Any, x: TensorImpl, shape: tuple[int, ...], dtype: DType) -> Any:
    """``out`` when the kernel can write into it directly (validated, same dtype, no overlap with
    the input), else None (the result then goes through a fresh tensor and a copy)."""
    if out is None:
        return None
    _check_out(fn, out, shape)
    return out if out._dtype is dtype and not out._overlaps(x) else None


def _run(fn: str, op: int, x: TensorImpl, dims: tuple[int, ...], keepdim: bool, out_dtype: DType,
         param: float = 0.0, values_dtype: DType | None = None, out: Any = None, out_values: Any = None) -> Any:
    """One call of tt_reduce; returns the result (and the values tensor for arg-reductions).
    ``out`` (``out_values``) receive the result (values) when given."""
    shape = _checked_shape(x, fn)
    mask = 0
    for d in dims:
        mask |= 1 << d
    result_shape = _result_shape(x, dims, keepdim)
    result = _direct(fn, out, x, result_shape, out_dtype)
    if result is None:
        result = type(x)._empty(result_shape, out_dtype, fn)
    values = None
    if values_dtype is not None:
        values = _direct(fn, out_values, x, result_shape, values_dtype)
        if values is None or values._overlaps(result):
            values = type(x)._empty(result_shape, values_dtype, fn)
    # The outputs are described with the input's shape: their strides on the kept dims, 0 on the reduced ones.
    out_strides, values_strides, j = [0] * len(shape), [0] * len(shape), 0
    for d in range(len(shape)):
        if not mask >> d & 1:
            out_strides[d] = result._strides[j]
            values_strides[d] = 0 if values is None else values._strides[j]
        j += 1 if keepdim or not mask >> d & 1 else 0
    status = lib.tt_reduce(
        op, len(shape), shape, x.data_ptr(), x._strides, x._dtype.code, mask, float(param),
        result.data_ptr(), tuple(out_strides), 0 if values is None else values.data_ptr(), tuple(values_strides),
    )
    check(status, fn)
    result = result if out is None or result is out else _deliver(fn, result, out)
    if values is None:
        return result
    values = values if out_values is None or values is out_values else _deliver(fn, values, out_values)
    return values, result


# ---------------------------------------------------------------------- the fast path
# The commonest reductions (sum or mean of a contiguous float tensor over everything or one dim,
# no dtype=, no out=) in one C call that allocates and reduces (``tt_reduce_new``, dispatch.h):
# the same kernel, op and dtypes as the general path, so the results are the same bits. Anything
# else returns None and takes the general path, which also raises the precise errors.

_reduce_new = lib.tt_reduce_new
_prod = math.prod
_SUM, _MEAN = lib.TT_RED_SUM, lib.TT_RED_MEAN


def _fast_reduce(op: int, x: Any, dim: Any, keepdim: Any, needs_elements: bool = False):
    """`op` over `dim` (None: all dims, or one int) of a contiguous float `x` that records no
    grad, as a fresh tensor of x's dtype; None when the general path must run (also when
    `needs_elements` and the reduced range is empty: max and min have no identity, and the general
    path raises)."""
    if not isinstance(x, TensorImpl) or not x._dtype.is_floating_point or (x._ag is not None and _GRAD.enabled) or (
        keepdim is not None and type(keepdim) is not bool
    ) or not (x._dense or x._is_dense()):
        return None
    shape = x._shape
    if len(shape) > _MAX_DIMS:
        return None  # the general path refuses it, as PyTorch does
    if dim is None:
        outer, size, inner = 1, _prod(shape), 1
        result_shape = (1,) * len(shape) if keepdim else ()
    elif type(dim) is int and shape and -len(shape) <= dim < len(shape):
        d = dim % len(shape)
        outer, size, inner = _prod(shape[:d]), shape[d], _prod(shape[d + 1:])
        result_shape = shape[:d] + (1,) + shape[d + 1:] if keepdim else shape[:d] + shape[d + 1:]
    else:
        return None
    if needs_elements and size == 0:
        return None
    dtype = x._dtype
    ptr = _reduce_new(op, outer, size, inner, x._storage._data + x._offset * dtype.itemsize, dtype.code,
                      dtype.code, 0.0)
    return wrap_new(type(x), ptr, result_shape, _contiguous_strides(result_shape), dtype) if ptr else None


def _check_nonempty(x: TensorImpl, dims: tuple[int, ...], all_dims: bool, fn: str) -> None:
    """PyTorch refuses max, min, argmax, ... over nothing (they have no identity)."""
    if all_dims and x.numel() == 0:
        raise IndexError(f"{fn}: Expected reduction dim to be specified for input.numel() == 0.")
    for d in dims:
        if x._shape[d] == 0:
            raise IndexError(f"{fn}: Expected reduction dim {d} to have non-zero size.")


def _sum_like(fn: str, op: int, input: Any, dim: Any, keepdim: Any, dtype: Any, axis: Any, keepdims: Any,
              out: Any = None):
    if wants_grad(input):
        return FUNCTIONS["Sum"].apply(input, fn, dim, keepdim, dtype, axis, keepdims, out)
    x = _tensor(input, fn)
    dims = _reduced_dims(x, _alias(dim, axis, "dim", "axis", fn, None), fn)
    keep = _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False)
    target = _out_dtype(fn, _dtype_arg(dtype, fn), out, x._dtype if x._dtype.is_floating_point else dtypes.int64)
    if target is not None:
        x = x.to(target)
    kernel_dtype = x._dtype if x._dtype.is_floating_point else dtypes.int64
    if target is None or target is kernel_dtype:
        return _run(fn, op, x, dims, keep, kernel_dtype, out=out)
    return _deliver(fn, _run(fn, op, x, dims, keep, kernel_dtype).to(target), out)


def _out_dtype(fn: str, target: DType | None, out: Any, natural: DType) -> DType | None:
    """The dtype a sum-like op computes in: ``dtype=``, else ``out``'s dtype when it differs from
    the natural result dtype (PyTorch computes in the out dtype); ``dtype=`` must match ``out``."""
    if out is None or not isinstance(out, TensorImpl):
        return target
    if target is not None and out._dtype is not target:
        raise RuntimeError(f"{fn}: expected out to have dtype {target.name}, but got {out._dtype.name}")
    return target if target is not None or out._dtype is natural else out._dtype


# ---------------------------------------------------------------------- sums and means


def sum(input: Any, dim: Any = None, keepdim: Any = None, *, dtype: Any = None, axis: Any = None,
        keepdims: Any = None, out: Any = None) -> Any:
    """Sum over ``dim`` (an int, a tuple, or all dimensions); bool and integers give int64, and
    ``dtype=`` converts the input first.

    >>> import t_tensor as tt
    >>> tt.sum(tt.tensor([[True, False], [True, True]]), dim=1).tolist()
    [1, 2]
    >>> tt.sum(tt.tensor([100, 100], dtype=tt.int8), dtype=tt.int8)
    tensor(-56, dtype=t_tensor.int8)
    """
    if dtype is None and axis is None and keepdims is None and out is None:
        result = _fast_reduce(_SUM, input, dim, keepdim)
        if result is not None:
            return result
    return _sum_like("sum", _SUM, input, dim, keepdim, dtype, axis, keepdims, out)


def nansum(input: Any, dim: Any = None, keepdim: Any = None, *, dtype: Any = None, axis: Any = None,
           keepdims: Any = None, out: Any = None) -> Any:
    """Sum treating NaN as zero.

    >>> import t_tensor as tt
    >>> tt.nansum(tt.tensor([1.0, float("nan"), 2.0])).item()
    3.0
    """
    return _sum_like("nansum", lib.TT_RED_NANSUM, input, dim, keepdim, dtype, axis, keepdims, out)


def mean(input: Any, dim: Any = None, keepdim: Any = None, *, dtype: Any = None, axis: Any = None,
         keepdims: Any = None, out: Any = None) -> Any:
    """Arithmetic mean; the input (or ``dtype=``) must be a float dtype, as in PyTorch. The mean
    of nothing is NaN.

    >>> import t_tensor as tt
    >>> tt.mean(tt.tensor([[1.0, 2.0], [3.0, 5.0]]), dim=0).tolist()
    [2.0, 3.5]
    >>> tt.mean(tt.tensor([1, 2]), dtype=tt.float64).item()
    1.5
    """
    fn = "mean"
    if dtype is None and axis is None and keepdims is None and out is None:
        result = _fast_reduce(_MEAN, input, dim, keepdim)
        if result is not None:
            return result
    if wants_grad(input):
        return FUNCTIONS["Mean"].apply(input, dim, keepdim, dtype, axis, keepdims, out)
    x = _tensor(input, fn)
    target = _out_dtype(fn, _dtype_arg(dtype, fn), out, x._dtype)
    if target is not None and not target.is_floating_point:
        raise RuntimeError(f"{fn}: could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {target.name}")
    if target is None and not x._dtype.is_floating_point:
        raise RuntimeError(f"{fn}: could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {x._dtype.name}")
    x = x.to(target) if target is not None else x
    dims = _reduced_dims(x, _alias(dim, axis, "dim", "axis", fn, None), fn)
    return _run(fn, lib.TT_RED_MEAN, x, dims, _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False), x._dtype,
                out=out)


def nanmean(input: Any, dim: Any = None, keepdim: Any = None, *, dtype: Any = None, axis: Any = None,
            keepdims: Any = None) -> Any:
    """Mean of the elements that are not NaN (float inputs only).

    >>> import t_tensor as tt
    >>> tt.nanmean(tt.tensor([1.0, float("nan"), 2.0])).item()
    1.5
    """
    fn = "nanmean"
    x = _tensor(input, fn)
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected input to have floating point or complex dtype but got {x._dtype.name}")
    total = nansum(x, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)
    counted = sum(x.isnan().logical_not(), dim, keepdim, axis=axis, keepdims=keepdims)
    return total.div_(counted)


def prod(input: Any, dim: Any = None, keepdim: Any = None, *, dtype: Any = None, axis: Any = None,
         keepdims: Any = None, out: Any = None) -> Any:
    """Product; bool and integers give int64 (wrapping), the product of nothing is 1.

    >>> import t_tensor as tt
    >>> tt.prod(tt.tensor([[1, 2], [3, 4]]), dim=1).tolist()
    [2, 12]
    """
    if wants_grad(input):
        return FUNCTIONS["Prod"].apply(input, dim, keepdim, dtype, axis, keepdims, out)
    return _sum_like("prod", lib.TT_RED_PROD, input, dim, keepdim, dtype, axis, keepdims, out)


# ---------------------------------------------------------------------- extrema


def _max_min(fn: str, input: Any, dim: Any, keepdim: Any, axis: Any, keepdims: Any, out: Any = None) -> Any:
    from t_tensor import elementwise

    x = _tensor(input, fn)
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    keep = _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False)
    if isinstance(dim, TensorImpl):                      # max(x, other): the elementwise maximum
        return elementwise.binary("maximum" if fn == "max" else "minimum", x, dim, out)
    if wants_grad(x):
        if dim is None:
            return FUNCTIONS["Extremum"].apply(x, fn, None, keep, out)
        return ValuesIndices(*FUNCTIONS["MaxMinDim"].apply(x, fn, dim, keep, out))
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError(f"{fn}: Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        if out is not None:
            _check_out(fn, out, (1,) * len(x._shape) if keep else (), x._dtype)
        return _run(fn, lib.TT_RED_MAX if fn == "max" else lib.TT_RED_MIN, x, _reduced_dims(x, None, fn), keep,
                    x._dtype, out=out)
    if not hasattr(dim, "__index__"):
        raise TypeError(f"{fn}: dim must be an int, got {type(dim).__name__}")
    dims = _reduced_dims(x, dim, fn)
    _check_nonempty(x, dims, False, fn)
    op = lib.TT_RED_ARGMAX if fn == "max" else lib.TT_RED_ARGMIN
    out_values = out_indices = None
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{fn}: out must be a (values, indices) pair of tensors")
        out_values, out_indices = out
        shape = _result_shape(x, dims, keep)
        _check_out(fn, out_values, shape, x._dtype, "values")
        _check_out(fn, out_indices, shape, dtypes.int64, "indices")
    values, indices = _run(fn, op, x, dims, keep, dtypes.int64, values_dtype=x._dtype, out=out_indices,
                           out_values=out_values)
    return ValuesIndices(values, indices)


def max(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
        out: Any = None) -> Any:
    """The largest element (a 0-d tensor); with an int ``dim``, the named tuple ``(values,
    indices)`` along it; with a tensor as second argument, the elementwise :func:`maximum`.
    NaN is the largest value.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[1, 5], [7, 2]])
    >>> tt.max(x).item(), tt.max(x, 1).indices.tolist(), tt.max(x, tt.tensor(3)).tolist()
    (7, [1, 0], [[3, 5], [7, 3]])
    """
    return _max_min("max", input, dim, keepdim, axis, keepdims, out)


def min(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
        out: Any = None) -> Any:
    """The smallest element; see :func:`max` for the forms.

    >>> import t_tensor as tt
    >>> tt.min(tt.tensor([[1, 5], [7, 2]]), dim=0).values.tolist()
    [1, 2]
    """
    return _max_min("min", input, dim, keepdim, axis, keepdims, out)


def _amax_amin(fn: str, op: int, input: Any, dim: Any, keepdim: Any, axis: Any, keepdims: Any, out: Any = None) -> Any:
    if axis is None and keepdims is None and out is None:
        result = _fast_reduce(op, input, dim, keepdim, True)  # positional: the C twin takes no keywords
        if result is not None:
            return result
    x = _tensor(input, fn)
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    if wants_grad(x):
        return FUNCTIONS["Extremum"].apply(x, fn, dim, _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False), out)
    dims = _reduced_dims(x, dim, fn)
    all_dims = dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)
    if all_dims and x.numel() == 0:
        raise RuntimeError(f"{fn}: Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    _check_nonempty(x, dims, False, fn)
    keep = _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False)
    if out is not None:
        _check_out(fn, out, _result_shape(x, dims, keep), x._dtype)
    return _run(fn, op, x, dims, keep, x._dtype, out=out)


def amax(input: Any, dim: Any = (), keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
         out: Any = None) -> Any:
    """The maximum over one or several dimensions (all by default); NaN propagates.

    >>> import t_tensor as tt
    >>> tt.amax(tt.tensor([[1.0, float("nan")], [3.0, 4.0]]), dim=1).tolist()
    [nan, 4.0]
    """
    return _amax_amin("amax", lib.TT_RED_MAX, input, None if dim == () else dim, keepdim, axis, keepdims, out)


def amin(input: Any, dim: Any = (), keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
         out: Any = None) -> Any:
    """The minimum over one or several dimensions (all by default); NaN propagates.

    >>> import t_tensor as tt
    >>> tt.amin(tt.tensor([[1, 2], [3, 0]]), dim=(0, 1)).item()
    0
    """
    return _amax_amin("amin", lib.TT_RED_MIN, input, None if dim == () else dim, keepdim, axis, keepdims, out)


def _argmax_argmin(fn: str, op: int, input: Any, dim: Any, keepdim: Any, axis: Any, keepdims: Any,
                   out: Any = None) -> Any:
    x = _tensor(input, fn)
    if x._dtype is dtypes.bool:
        raise RuntimeError(f"{fn}: does not support bool input")
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    keep = _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False)
    if dim is not None and not hasattr(dim, "__index__"):
        raise TypeError(f"{fn}: dim must be an int or None, got {type(dim).__name__}")
    dims = _reduced_dims(x, dim, fn)
    _check_nonempty(x, dims, dim is None, fn)
    if out is not None:
        _check_out(fn, out, _result_shape(x, dims, keep), dtypes.int64)
    return _run(fn, op, x, dims, keep, dtypes.int64, out=out)


def argmax(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
           out: Any = None) -> Any:
    """Index of the first largest element (NaN counts as largest), over the flattened tensor or
    along ``dim``.

    >>> import t_tensor as tt
    >>> tt.argmax(tt.tensor([[1, 9], [9, 2]])).item(), tt.argmax(tt.tensor([[1, 9], [9, 2]]), dim=0).tolist()
    (1, [1, 0])
    """
    return _argmax_argmin("argmax", lib.TT_RED_ARGMAX, input, dim, keepdim, axis, keepdims, out)


def argmin(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
           out: Any = None) -> Any:
    """Index of the first smallest element (NaN counts as smallest).

    >>> import t_tensor as tt
    >>> tt.argmin(tt.tensor([3.0, 1.0, 1.0])).item()
    1
    """
    return _argmax_argmin("argmin", lib.TT_RED_ARGMIN, input, dim, keepdim, axis, keepdims, out)


# ---------------------------------------------------------------------- variance


def _var_std(fn: str, op: int, input: Any, dim: Any, unbiased: Any, keepdim: Any, correction: Any, axis: Any,
             keepdims: Any, out: Any = None) -> Any:
    x = _tensor(input, fn)
    if isinstance(dim, builtins.bool):                   # var(x, True): the old (input, unbiased) form
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fn}: give either unbiased= or correction=, not both")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    correction = 1 if correction is None else correction
    if not isinstance(correction, (int, float)):
        raise TypeError(f"{fn}: correction must be a number, got {type(correction).__name__}")
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{fn}: std and var only support floating point and complex dtypes, got {x._dtype.name}")
    dims = _reduced_dims(x, _alias(dim, axis, "dim", "axis", fn, None), fn)
    keep = _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False)
    if wants_grad(x):                                    # composite: differentiable to any order
        if out is not None:
            raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        centered = x - mean(x, dims, True)
        variance = sum(centered * centered, dims, keep) / builtins.max(0, math.prod(x._shape[d] for d in dims)
                                                                      - correction)
        return variance if fn == "var" else FUNCTIONS["Std"].apply(variance)
    return _run(fn, op, x, dims, keep, x._dtype, float(correction), out=out)


def var(input: Any, dim: Any = None, unbiased: Any = None, keepdim: Any = None, *, correction: Any = None,
        axis: Any = None, keepdims: Any = None, out: Any = None) -> Any:
    """Variance ``sum((x - mean)**2) / max(0, N - correction)``; ``correction`` defaults to 1
    (Bessel's), ``unbiased=False`` means 0. Float inputs only.

    >>> import t_tensor as tt
    >>> x = tt.tensor([1.0, 2.0, 3.0, 4.0])
    >>> tt.var(x).item(), tt.var(x, correction=0).item(), tt.var(x, unbiased=False).item()
    (1.6666666269302368, 1.25, 1.25)
    """
    return _var_std("var", lib.TT_RED_VAR, input, dim, unbiased, keepdim, correction, axis, keepdims, out)


def std(input: Any, dim: Any = None, unbiased: Any = None, keepdim: Any = None, *, correction: Any = None,
        axis: Any = None, keepdims: Any = None, out: Any = None) -> Any:
    """Standard deviation, the square root of :func:`var`.

    >>> import t_tensor as tt
    >>> tt.std(tt.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1).tolist()
    [1.4142135381698608, 0.0]
    """
    return _var_std("std", lib.TT_RED_STD, input, dim, unbiased, keepdim, correction, axis, keepdims, out)


# ---------------------------------------------------------------------- logical and counting


def _any_all(fn: str, op: int, input: Any, dim: Any, keepdim: Any, axis: Any, keepdims: Any, out: Any = None) -> Any:
    x = _tensor(input, fn)
    dims = _reduced_dims(x, _alias(dim, axis, "dim", "axis", fn, None), fn)
    out_dtype = dtypes.uint8 if x._dtype is dtypes.uint8 else dtypes.bool   # the kernel writes 0/1 bytes
    if isinstance(out, TensorImpl):
        if out._dtype not in (dtypes.bool, dtypes.uint8):
            raise RuntimeError(f"{fn}: only supports bool or uint8 tensors for out, got {out._dtype.name}")
        out_dtype = out._dtype
    return _run(fn, op, x, dims, _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False), out_dtype, out=out)


def any(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
        out: Any = None) -> Any:
    """True where some element is nonzero (NaN counts); uint8 inputs give uint8, as in PyTorch.

    >>> import t_tensor as tt
    >>> tt.any(tt.tensor([[0, 1], [0, 0]]), dim=1).tolist()
    [True, False]
    """
    return _any_all("any", lib.TT_RED_ANY, input, dim, keepdim, axis, keepdims, out)


def all(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
        out: Any = None) -> Any:
    """True where every element is nonzero; ``all`` of nothing is True.

    >>> import t_tensor as tt
    >>> tt.all(tt.tensor([[1, 1], [0, 1]]), dim=1).tolist(), tt.all(tt.zeros(0)).item()
    ([True, False], True)
    """
    return _any_all("all", lib.TT_RED_ALL, input, dim, keepdim, axis, keepdims, out)


def count_nonzero(input: Any, dim: Any = None, *, axis: Any = None, keepdims: Any = None) -> Any:
    """How many elements are nonzero, as int64 (``keepdims=`` from the array API).

    >>> import t_tensor as tt
    >>> tt.count_nonzero(tt.tensor([[0, 1, 2], [0, 0, 3]]), dim=0).tolist()
    [0, 1, 2]
    """
    fn = "count_nonzero"
    x = _tensor(input, fn)
    dims = _reduced_dims(x, _alias(dim, axis, "dim", "axis", fn, None), fn)
    return _run(fn, lib.TT_RED_COUNT_NONZERO, x, dims, builtins.bool(keepdims), dtypes.int64)


def logsumexp(input: Any, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
              out: Any = None) -> Any:
    """``log(sum(exp(x)))`` over ``dim``, computed without overflow (the max is factored out).
    Integers and bool compute in the default float dtype.

    >>> import t_tensor as tt
    >>> tt.logsumexp(tt.tensor([1000.0, 1000.0]), dim=0).item()
    1000.6931762695312
    """
    fn = "logsumexp"
    x = _tensor(input, fn)
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    if dim is None:
        raise TypeError(f"{fn}: missing the dim argument (an int or a tuple of ints)")
    if not x._dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    if wants_grad(x):
        return FUNCTIONS["Logsumexp"].apply(x, dim, keepdim, None, keepdims, out)
    dims = _reduced_dims(x, dim, fn)
    return _run(fn, lib.TT_RED_LOGSUMEXP, x, dims, _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False),
                x._dtype, out=out)


# ---------------------------------------------------------------------- norms

_VECTOR_NORM_OPS = {0: lib.TT_RED_NORM_L0, 1: lib.TT_RED_NORM_L1, 2: lib.TT_RED_NORM_L2,
                    _INF: lib.TT_RED_NORM_LINF, -_INF: lib.TT_RED_NORM_LNEGINF}


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: Any = None, *, dtype: Any = None,
                axis: Any = None, keepdims: Any = None) -> Any:
    """The vector ``ord``-norm over ``dim`` (all dimensions by default): ``(sum |x|**ord)**(1/ord)``;
    ``inf``/``-inf`` are the max/min of ``|x|``, 0 counts the nonzeros. Float inputs only.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[3.0, -4.0], [0.0, 1.0]])
    >>> tt.vector_norm(x).item(), tt.vector_norm(x, 1, dim=1).tolist(), tt.vector_norm(x, float("inf")).item()
    (5.099019527435303, [7.0, 1.0], 4.0)
    """
    fn = "vector_norm"
    x = _tensor(x, fn)
    if wants_grad(x):
        return FUNCTIONS["VectorNorm"].apply(x, ord, dim, keepdim, dtype, axis, keepdims)
    if isinstance(ord, builtins.bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{fn}: ord must be a number, got {ord!r}")
    target = _dtype_arg(dtype, fn)
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {x._dtype.name}")
    if target is not None:
        if not target.is_floating_point:
            raise RuntimeError(f"{fn}: dtype should be floating point, got {target.name}")
        x = x.to(target)
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    dims = _reduced_dims(x, dim, fn)
    keep = _alias(keepdim, keepdims, "keepdim", "keepdims", fn, False)
    if ord < 0 or ord == _INF:                           # no identity: refuse to reduce nothing
        if dim is None and x.numel() == 0:
            raise RuntimeError(f"{fn}: cannot compute the {ord} norm on an empty tensor because the operation "
                               "does not have an identity")
        for d in dims:
            if x._shape[d] == 0:
                raise RuntimeError(f"{fn}: cannot compute the {ord} norm on the dimension {d} because this "
                                   "dimension is empty and the operation does not have an identity")
    op = _VECTOR_NORM_OPS.get(ord, lib.TT_RED_NORM_LP)
    return _run(fn, op, x, dims, keep, x._dtype, float(ord))


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: Any = None, *, dtype: Any = None,
                axis: Any = None, keepdims: Any = None) -> Any:
    """The matrix norm over the two dimensions ``dim``: ``'fro'`` (Frobenius), 1 / -1 (max / min
    column sum of ``|A|``), ``inf`` / ``-inf`` (max / min row sum), 2 / -2 (largest / smallest
    singular value) and ``'nuc'`` (sum of the singular values).

    >>> import t_tensor as tt
    >>> A = tt.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> tt.matrix_norm(A, 1).item(), tt.matrix_norm(A, float("inf")).item(), tt.matrix_norm(A).item()
    (6.0, 7.0, 5.4772257804870605)
    >>> tt.matrix_norm(tt.tensor([[3.0, 0.0], [0.0, -4.0]]), 2).item()
    4.0
    """
    fn = "matrix_norm"
    x = _tensor(A, fn)
    if len(x._shape) < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    keep = builtins.bool(_alias(keepdim, keepdims, "keepdim", "keepdims", fn, False))
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {dim!r}")
    d0, d1 = (S.normalize_dim(d, len(x._shape), fn=fn) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({d0}, {d1})")
    if isinstance(ord, str) and ord == "fro":
        return vector_norm(x, 2, (d0, d1), keep, dtype=dtype)
    if ord == "nuc" or (not isinstance(ord, str) and ord in (2, -2)):
        return _spectral_norm(x, ord, d0, d1, keep, dtype)
    if isinstance(ord, str) or ord not in (1, -1, _INF, -_INF):
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    summed, across = (d0, d1) if abs(ord) == 1 else (d1, d0)   # 1: column sums, inf: row sums
    sums = vector_norm(x, 1, summed, True, dtype=dtype)
    if ord > 0 and x._shape[across] == 0:              # the max of no sums of |x| is 0, as in torch
        from t_tensor.creation import zeros

        extreme = zeros(tuple(1 if d == across else n for d, n in enumerate(sums._shape)), dtype=sums._dtype)
    else:
        extreme = amax(sums, across, True) if ord > 0 else amin(sums, across, True)
    if keep:
        return extreme
    return extreme.reshape(tuple(n for d, n in enumerate(extreme._shape) if d not in (d0, d1)))


def singular_values(x: TensorImpl, d0: int, d1: int, fn: str) -> Any:
    """The singular values of the matrices over dims (d0, d1), descending, as a tensor of shape
    (other dims..., min(m, n)); one C call (one-sided Jacobi) for the whole batch."""
    rest = [d for d in range(len(x._shape)) if d not in (d0, d1)]
    m, n = x._shape[d0], x._shape[d1]
    batch_shape = tuple(x._shape[d] for d in rest)
    batch = math.prod(batch_shape)
    matrices = x.permute(*rest, d0, d1).reshape(batch, m, n)
    k = _builtin_min(m, n)
    values = type(x)._empty(batch_shape + (k,), x._dtype, fn)
    status = lib.tt_singular_values(batch, m, n, matrices.data_ptr(), matrices._strides, x._dtype.code,
                                    values.data_ptr(), (k, 1))
    check(status, fn)
    return values


def _spectral_norm(x: TensorImpl, ord: Any, d0: int, d1: int, keep: bool, dtype: Any) -> Any:
    """ord 2 (largest singular value), -2 (smallest) or 'nuc' (their sum) over dims (d0, d1)."""
    fn = "matrix_norm"
    if wants_grad(x):
        raise RuntimeError(f"{fn}: the gradient of the ord={ord!r} norm (singular values) is not implemented")
    target = _dtype_arg(dtype, fn)
    x = x if target is None else x.to(target)
    if x._dtype is dtypes.float16:
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {x._dtype.name}")
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {x._dtype.name}")
    values = singular_values(x, d0, d1, fn)
    if any(values.isnan()).item():
        raise RuntimeError(f"{fn}: The algorithm failed to converge because the input matrix contained "
                           "non-finite values.")
    if ord == "nuc":
        result = sum(values, -1)
    elif ord == -2:
        result = amin(values, -1)
    elif values._shape[-1] == 0:                         # the largest of no singular values is 0, as torch
        from t_tensor.creation import zeros

        result = zeros(values._shape[:-1], dtype=values._dtype)
    else:
        result = amax(values, -1)
    if keep:
        return result.reshape(tuple(1 if d in (d0, d1) else n for d, n in enumerate(x._shape)))
    return result


def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: Any = False, dtype: Any = None) -> Any:
    """PyTorch's ``torch.norm``: ``'fro'`` is the 2-norm over ``dim`` (all dimensions by default),
    a number ``p`` the vector p-norm (see :func:`vector_norm`), ``'nuc'`` the nuclear norm of the
    matrices over ``dim`` (the last two by default).

    >>> import t_tensor as tt
    >>> tt.norm(tt.tensor([[3.0, 4.0]])).item(), tt.norm(tt.tensor([[3.0, 4.0]]), p=1, dim=1).tolist()
    (5.0, [7.0])
    """
    fn = "norm"
    x = _tensor(input, fn)
    if isinstance(p, str):
        if p == "fro":
            if isinstance(dim, (tuple, list)) and len(dim) > 2:
                raise RuntimeError(f"{fn}: the Frobenius norm takes at most 2 dims, got {len(dim)}")
            return vector_norm(x, 2, dim, keepdim, dtype=dtype)
        if p == "nuc":
            matrix_dims = (-2, -1) if dim is None else dim
            return matrix_norm(x, "nuc", matrix_dims, keepdim, dtype=dtype)
        raise RuntimeError(f"{fn}: unknown norm {p!r}")
    return vector_norm(x, 2 if p is None else p, dim, keepdim, dtype=dtype)


def trace(input: Any) -> Any:
    """Sum of the main diagonal of a 2-D tensor, PyTorch's ``torch.trace`` (integers and bool sum
    in int64). The array API's batched form with ``offset=`` is :func:`t_tensor.linalg.trace`.

    >>> import t_tensor as tt
    >>> tt.trace(tt.arange(9).view(3, 3)).item()
    12
    """
    fn = "trace"
    x = _tensor(input, fn)
    if x.ndim != 2:
        raise RuntimeError(f"{fn}: expected a matrix, but got tensor with dim {x.ndim}")
    if x._dtype is dtypes.bool:
        raise TypeError(f"{fn}: not implemented for bool tensors")
    diagonal = x._view((_builtin_min(x._shape),), (builtins.sum(x._strides),), x._offset)
    return sum(diagonal, 0)


# ---------------------------------------------------------------------- scans


def _scan(fn: str, op: int, x: TensorImpl, dim: int, dtype: Any, out: TensorImpl | None = None) -> Any:
    """Run tt_scan along ``dim``; writes into ``out`` (a view of the right shape) when given."""
    target = _dtype_arg(dtype, fn)
    if target is not None:
        x = x.to(target)
    kernel_dtype = x._dtype if x._dtype.is_floating_point else dtypes.int64
    if target is not None and target is not kernel_dtype:
        return _deliver(fn, _scan(fn, op, x, dim, None).to(target), out)
    d = S.normalize_dim(dim, len(x._shape), fn=fn)
    result = type(x)._empty(x._shape, kernel_dtype, fn) if out is None else out
    if out is not None and (out._dtype is not kernel_dtype or out._overlaps(x)):   # compute, then copy in
        return out.copy_(_scan(fn, op, x, d, None))
    shape, x_strides, out_strides = _checked_shape(x, fn), x._strides, result._strides
    if not shape:                                        # a 0-d tensor: one line of one element
        shape, x_strides, out_strides, d = (1,), (0,), (0,), 0
    status = lib.tt_scan(op, len(shape), shape, x.data_ptr(), x_strides, x._dtype.code, d, result.data_ptr(),
                         out_strides)
    check(status, fn)
    return result


def _cumulative(fn: str, op: int, input: Any, dim: Any, dtype: Any, axis: Any, out: Any) -> Any:
    """cumsum and cumprod: ``dim`` (or ``axis``) is required; integers and bool scan in int64."""
    dim = _alias(dim, axis, "dim", "axis", fn, None)
    if dim is None:
        raise TypeError(f"{fn}: missing the dim argument")
    x = _tensor(input, fn)
    if wants_grad(x):
        return FUNCTIONS["Cumulative"].apply(x, fn, dim, dtype, out)
    if out is not None:
        _check_out(fn, out, x._shape)
        dtype = _out_dtype(fn, _dtype_arg(dtype, fn), out, x._dtype if x._dtype.is_floating_point else dtypes.int64)
    return _scan(fn, op, x, dim, dtype, out)


def cumsum(input: Any, dim: Any = None, *, dtype: Any = None, axis: Any = None, out: Any = None) -> Any:
    """Cumulative sum along ``dim`` (required); bool and integers give int64.

    >>> import t_tensor as tt
    >>> tt.cumsum(tt.tensor([[1, 2], [3, 4]], dtype=tt.int8), dim=0).tolist()
    [[1, 2], [4, 6]]
    """
    return _cumulative("cumsum", lib.TT_SCAN_SUM, input, dim, dtype, axis, out)


def cumprod(input: Any, dim: Any = None, *, dtype: Any = None, axis: Any = None, out: Any = None) -> Any:
    """Cumulative product along ``dim`` (required); bool and integers give int64.

    >>> import t_tensor as tt
    >>> tt.cumprod(tt.tensor([1.0, 2.0, 3.0]), 0).tolist()
    [1.0, 2.0, 6.0]
    """
    return _cumulative("cumprod", lib.TT_SCAN_PROD, input, dim, dtype, axis, out)


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False) -> Any:
    """The array API's cumulative sum: ``axis`` may be omitted for a 1-d input, and
    ``include_initial=True`` prepends the zero of the sum (the result is one longer along ``axis``).

    >>> import t_tensor as tt
    >>> tt.cumulative_sum(tt.tensor([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    fn = "cumulative_sum"
    x = _tensor(x, fn)
    if len(x._shape) == 0:
        raise ValueError(f"{fn}: expected a tensor of at least one dimension")
    if axis is None:
        if len(x._shape) != 1:
            raise ValueError(f"{fn}: axis must be given for a tensor of more than one dimension")
        axis = 0
    d = S.normalize_dim(axis, len(x._shape), fn=fn)
    if wants_grad(x):
        from t_tensor.creation import zeros
        from t_tensor.manipulation import cat

        result = cumsum(x, d, dtype=dtype)
        if not include_initial:
            return result
        return cat([zeros(tuple(1 if i == d else n for i, n in enumerate(x._shape)), dtype=result._dtype), result], d)
    if not include_initial:
        return _scan(fn, lib.TT_SCAN_SUM, x, d, dtype)
    target = _dtype_arg(dtype, fn)
    source = x if target is None else x.to(target)
    result_dtype = source._dtype if source._dtype.is_floating_point else dtypes.int64
    if target is not None:
        result_dtype = target
    shape = tuple(n + 1 if i == d else n for i, n in enumerate(x._shape))
    result = type(x)._empty(shape, result_dtype, fn)
    result.narrow(d, 0, 1).fill_(0)
    result.narrow(d, 1, x._shape[d]).copy_(_scan(fn, lib.TT_SCAN_SUM, source, d, None))
    return result


# ---------------------------------------------------------------------- softmax


def _fast_softmax(x: Any, dim: Any, log: bool) -> Any:
    """softmax (log_softmax when `log`) of a contiguous float `x` that records no grad, over the
    plain int `dim`, as a fresh tensor; None when the general path must run (which also raises
    the errors). The same kernel as the general path, so the same bits. In C for exactly the
    Tensor class (``csrc/python/fast_ops.c``), which calls this for everything else."""
    if not isinstance(x, TensorImpl) or type(dim) is not int or not x._dtype.is_floating_point or (
        x._ag is not None and _GRAD.enabled
    ) or not -len(x._shape) <= dim < len(x._shape) or len(x._shape) > _MAX_DIMS or not (x._dense or x._is_dense()):
        return None  # a 0-d x has no int dim in range; the general path refuses more than _MAX_DIMS dims
    fn = "log_softmax" if log else "softmax"
    result = type(x)._empty(x._shape, x._dtype, fn)
    check(lib.tt_softmax(int(log), len(x._shape), x._shape, x.data_ptr(), x._strides, x._dtype.code,
                         dim % len(x._shape), result.data_ptr(), result._strides), fn)
    return result


def _softmax(fn: str, log: bool, input: Any, dim: Any, dtype: Any, out: Any = None) -> Any:
    x = _tensor(input, fn)
    if dim is None:
        raise TypeError(f"{fn}: missing the dim argument")
    if wants_grad(x):
        return FUNCTIONS["Softmax"].apply(x, fn, log, dim, dtype, out)
    target = _dtype_arg(dtype, fn)
    if out is not None:
        _check_out(fn, out, x._shape)
        target = _out_dtype(fn, target, out, x._dtype)
    if target is not None:
        x = x.to(target)
    if not x._dtype.is_floating_point:
        raise NotImplementedError(f"{fn}: not implemented for {x._dtype.name} tensors")
    d = S.normalize_dim(dim, len(x._shape), fn=fn)
    result = _direct(fn, out, x, x._shape, x._dtype)
    if result is None:
        result = type(x)._empty(x._shape, x._dtype, fn)
    shape, x_strides, out_strides = _checked_shape(x, fn), x._strides, result._strides
    if not shape:
        shape, x_strides, out_strides, d = (1,), (0,), (0,), 0
    status = lib.tt_softmax(int(log), len(shape), shape, x.data_ptr(), x_strides, x._dtype.code, d,
                            result.data_ptr(), out_strides)
    check(status, fn)
    return result if out is None or result is out else _deliver(fn, result, out)


def softmax(input: Any, dim: Any = None, dtype: Any = None, *, axis: Any = None, out: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``dim`` (required), computed stably (the max is subtracted
    first) in one fused kernel. Float inputs, or ``dtype=`` to convert first.

    >>> import t_tensor as tt
    >>> tt.softmax(tt.tensor([1000.0, 1000.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dtype is None and axis is None and out is None:
        result = _fast_softmax(input, dim, False)
        if result is not None:
            return result
    return _softmax("softmax", False, input, _alias(dim, axis, "dim", "axis", "softmax", None), dtype, out)


def log_softmax(input: Any, dim: Any = None, dtype: Any = None, *, axis: Any = None, out: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``dim`` (required), fused and stable.

    >>> import t_tensor as tt
    >>> tt.log_softmax(tt.tensor([0.0, 0.0]), dim=0).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """
    if dtype is None and axis is None and out is None:
        result = _fast_softmax(input, dim, True)
        if result is not None:
            return result
    return _softmax("log_softmax", True, input, _alias(dim, axis, "dim", "axis", "log_softmax", None), dtype, out)


# ---------------------------------------------------------------------- Tensor methods


class ReductionOps:
    """The reduction methods of :class:`~t_tensor.tensor.Tensor` (``x.sum(1)``, ``x.max()``, ...)."""

    __slots__ = ()

    def trace(self):
        return trace(self)

    def sum(self, dim=None, keepdim=None, *, dtype=None, axis=None, keepdims=None):
        return sum(self, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    def nansum(self, dim=None, keepdim=None, *, dtype=None, axis=None, keepdims=None):
        return nansum(self, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    def mean(self, dim=None, keepdim=None, *, dtype=None, axis=None, keepdims=None):
        return mean(self, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    def nanmean(self, dim=None, keepdim=None, *, dtype=None, axis=None, keepdims=None):
        return nanmean(self, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    def prod(self, dim=None, keepdim=None, *, dtype=None, axis=None, keepdims=None):
        return prod(self, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    def max(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return max(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def min(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return min(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def amax(self, dim=(), keepdim=None, *, axis=None, keepdims=None):
        return amax(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def amin(self, dim=(), keepdim=None, *, axis=None, keepdims=None):
        return amin(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def argmax(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return argmax(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def argmin(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return argmin(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def var(self, dim=None, unbiased=None, keepdim=None, *, correction=None, axis=None, keepdims=None):
        return var(self, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)

    def std(self, dim=None, unbiased=None, keepdim=None, *, correction=None, axis=None, keepdims=None):
        return std(self, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims)

    def any(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return any(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def all(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return all(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def logsumexp(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return logsumexp(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def count_nonzero(self, dim=None, *, axis=None, keepdims=None):
        return count_nonzero(self, dim, axis=axis, keepdims=keepdims)

    def cumsum(self, dim=None, *, dtype=None, axis=None):
        return cumsum(self, dim, dtype=dtype, axis=axis)

    def cumprod(self, dim=None, *, dtype=None, axis=None):
        return cumprod(self, dim, dtype=dtype, axis=axis)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        return norm(self, p, dim, keepdim, dtype)

    def softmax(self, dim=None, dtype=None, *, axis=None):
        return softmax(self, dim, dtype, axis=axis)

    def log_softmax(self, dim=None, dtype=None, *, axis=None):
        return log_softmax(self, dim, dtype, axis=axis)
