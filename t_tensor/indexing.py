"""Indexing with tensors: advanced indexing, masks, gather/scatter, take, nonzero, masked fill.

Basic indexing (ints, slices, ``None``, ``...``) gives views and lives in :mod:`t_tensor.strides`.
A key holding a tensor, a list, a NumPy array or a bool is *advanced*, and the result is a copy,
as in PyTorch and NumPy:

* integer index tensors (lists, arrays) are broadcast together; negative indices count from the
  end, out-of-range ones raise ``IndexError`` naming the index and the size;
* a bool mask stands for the integer indices of its ``True`` elements (``nonzero``) over as many
  dimensions as it has; a bool scalar adds a dimension of size 1 (``True``) or 0 (``False``);
* where the broadcast index dimensions go: in place of the indexed dimensions when the advanced
  indices are next to each other, first when a slice or ``None`` separates them. Ints are applied
  first, as views (PyTorch's rule; NumPy counts an int as an advanced index too).

Everything reaches C through two kernels: ``tt_index_gather`` (read ``x[idx]``) and
``tt_index_scatter`` (write ``x[idx] = v``, or combine: sum, prod, amax, amin), which visit a
result shape and find each element through up to 64 int64 index tensors, bounds-checked in C
(``csrc/src/kernels/index.c``). ``nonzero`` counts then fills; ``masked_fill`` runs on the
shared strided iterator.

>>> import t_tensor as tt
>>> x = tt.arange(12).view(3, 4)
>>> x[[0, 2], [1, -1]].tolist(), x[:, [0, 0]].shape, x[x > 8].tolist()
([1, 11], (3, 2), [9, 10, 11])
>>> x[x % 2 == 0] = 0
>>> x[0].tolist()
[0, 1, 0, 3]
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from t_tensor import dtypes
from t_tensor import elementwise as E
from t_tensor import strides as S
from t_tensor._capi import check, ffi, lib
from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import wants_grad
from t_tensor.tensor_impl import TensorImpl, wrap_new

__all__ = [
    "argwhere",
    "gather",
    "index_add",
    "index_fill",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_select",
    "nonzero",
    "one_hot",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "take",
    "take_along_axis",
    "take_along_dim",
]

_REDUCE_MODES = {
    "sum": lib.TT_SCATTER_SUM,
    "prod": lib.TT_SCATTER_PROD,
    "mean": lib.TT_SCATTER_SUM,
    "amax": lib.TT_SCATTER_AMAX,
    "amin": lib.TT_SCATTER_AMIN,
}
_LEGACY_REDUCE = {"add": lib.TT_SCATTER_SUM, "multiply": lib.TT_SCATTER_PROD}
_FULL = slice(None)
_INTEGER_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)
_INDEX_TYPES_MESSAGE = "tensors used as indices must be long, int, byte or bool tensors"


# ---------------------------------------------------------------------- small helpers


def _tensor(value: Any, fn: str) -> Any:
    """A tensor for `value` (tensors pass through; lists and arrays are copied)."""
    if isinstance(value, TensorImpl):
        return value
    from t_tensor.creation import tensor

    return tensor(value)


def _int64_index(index: Any, fn: str, accepted: tuple = (dtypes.int64,), what: str = "int64") -> Any:
    """`index` as an int64 tensor; other dtypes in `accepted` are converted, the rest refused."""
    if not isinstance(index, TensorImpl):
        raise TypeError(f"{fn}: index must be a Tensor, got {type(index).__name__}")
    if index._dtype not in accepted:
        raise RuntimeError(f"{fn}: Expected dtype {what} for index, got {index._dtype.name}")
    return index if index._dtype is dtypes.int64 else index.to(dtypes.int64)


def _scalar_tensor(template: TensorImpl, value: Any, fn: str) -> Any:
    """A 0-d tensor of template's dtype holding `value` (a number or a one-element tensor)."""
    if isinstance(value, TensorImpl):
        if value.ndim != 0:
            raise RuntimeError(f"{fn}: only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        return value.to(template._dtype)
    return type(template)._empty((), template._dtype, fn).fill_(value)


def _unique_operand(target: TensorImpl, operand: Any) -> Any:
    """`operand`, copied when it shares bytes with `target` (which is about to be written). The
    copy keeps the operand's strides (in a buffer just long enough for them), because the plan's
    strides were computed from the operand: a contiguous clone of a transposed value was read
    with the transposed strides (``y[idx] = y.t()`` left y unchanged, and ``y[y[:, 0]] = 9`` read
    indices past the clone's end)."""
    if not target._overlaps(operand) or 0 in operand._shape:
        return operand
    span = 1 + sum((size - 1) * step for size, step in zip(operand._shape, operand._strides, strict=True))
    copy = type(operand)._empty((span,), operand._dtype, "__setitem__")._view(operand._shape, operand._strides, 0)
    status = lib.tt_copy_strided(len(operand._shape), operand._shape, operand.data_ptr(), operand._strides,
                                 operand._dtype.code, copy.data_ptr(), copy._strides, operand._dtype.code)
    check(status, "__setitem__")
    return copy


def _address(tensor: TensorImpl, offset: int) -> int:
    return tensor._storage._data + offset * tensor._dtype.itemsize


def _raise_out_of_range(fn: str, indices: list, sizes: tuple, dims: tuple, wrap: bool) -> None:
    """Called after C reported TT_ERR_INDEX: find the culprit for the message."""
    for index, size, dim in zip(indices, sizes, dims, strict=True):
        values = np.asarray(index)
        bad = values[(values < (-size if wrap else 0)) | (values >= size)]
        if bad.size:
            where = dim if isinstance(dim, str) else f"dimension {dim}"
            raise IndexError(f"{fn}: index {bad.flat[0]} is out of bounds for {where} with size {size}")
    raise IndexError(f"{fn}: index out of range")


class _Indexed(NamedTuple):
    """Where each element of a `shape`-shaped gather or scatter lives (see index.h)."""

    shape: tuple[int, ...]
    base: int                       # address of the indexed tensor's element (0, ..., 0)
    base_strides: tuple[int, ...]   # strides of the plain dims over `shape` (0 along indexed dims)
    indices: list                   # int64 index tensors
    index_strides: tuple[int, ...]  # each index tensor's strides over `shape`, flattened
    dim_sizes: tuple[int, ...]
    dim_strides: tuple[int, ...]
    dims: tuple                     # what each index indexes, for messages
    wrap: bool


def _gather(fn: str, plan: _Indexed, out: TensorImpl) -> TensorImpl:
    status = lib.tt_index_gather(
        len(plan.shape), plan.shape, out.data_ptr(), out._strides, plan.base, plan.base_strides,
        len(plan.indices), [t.data_ptr() for t in plan.indices], plan.index_strides,
        plan.dim_sizes, plan.dim_strides, int(plan.wrap), out._dtype.code,
    )
    if status == lib.TT_ERR_INDEX:
        _raise_out_of_range(fn, plan.indices, plan.dim_sizes, plan.dims, plan.wrap)
    check(status, fn)
    return out


def _scatter(fn: str, plan: _Indexed, target: TensorImpl, src: TensorImpl, src_strides: tuple, mode: int) -> None:
    """Write (or combine) `src` into `target` at the plan's elements. Checks that target can be
    written and clones operands that share its bytes."""
    target._check_writable(fn)
    src = _unique_operand(target, src)
    indices = [_unique_operand(target, t) for t in plan.indices]
    status = lib.tt_index_scatter(
        len(plan.shape), plan.shape, plan.base, plan.base_strides, src.data_ptr(), src_strides,
        len(indices), [t.data_ptr() for t in indices], plan.index_strides,
        plan.dim_sizes, plan.dim_strides, int(plan.wrap), mode, target._dtype.code,
    )
    if status == lib.TT_ERR_INDEX:
        _raise_out_of_range(fn, indices, plan.dim_sizes, plan.dims, plan.wrap)   # as read, before any write
    check(status, fn)


def _along_dim(x: TensorImpl, dim: int, shape: tuple, index: TensorImpl, index_strides: tuple, wrap: bool) -> _Indexed:
    """The plan for "element p of `shape` is x at p, except along `dim`, where it is index[p]"
    (gather, scatter, index_select, index_add_, ...). A 0-d x counts as 1-d."""
    sizes, steps = (x._shape, x._strides) if x._shape else ((1,), (0,))
    base_strides = tuple(0 if d == dim else steps[d] for d in range(len(shape)))
    return _Indexed(shape, x.data_ptr(), base_strides, [index], index_strides, (sizes[dim],), (steps[dim],),
                    (dim,), wrap)


# ---------------------------------------------------------------------- advanced indexing


def is_advanced(key: Any) -> bool:
    """True when `key` needs advanced indexing: it holds a tensor, list, array, tuple or bool."""
    for k in key if type(key) is tuple else (key,):
        kind = type(k)
        if kind is int or kind is slice or k is None or k is Ellipsis:
            continue
        if isinstance(k, (TensorImpl, np.ndarray, list, tuple, bool, np.bool_)):
            return True
    return False


def _index_item(k: Any, fn: str) -> Any:
    """One item of a key: returned as is if basic, else a bool (scalar mask) or a tensor that is
    int64 (an index) or bool (a mask)."""
    if isinstance(k, TensorImpl):
        kind = k._dtype
        if kind is dtypes.uint8:  # PyTorch's (deprecated) byte mask
            k, kind = k.to(dtypes.bool), dtypes.bool
        if kind is not dtypes.bool and kind is not dtypes.int64 and kind is not dtypes.int32:
            raise IndexError(f"{fn}: {_INDEX_TYPES_MESSAGE}")
        if not k._shape:          # a 0-d tensor is a plain int (a view) or a bool scalar
            return bool(k.item()) if kind is dtypes.bool else int(k.item())
        return k if kind is not dtypes.int32 else k.to(dtypes.int64)
    kind = type(k)
    if kind is int or kind is slice or k is None or k is Ellipsis:
        return k
    if isinstance(k, (bool, np.bool_)):
        return bool(k)
    if isinstance(k, (list, tuple, np.ndarray)):
        from t_tensor.creation import as_tensor

        array = np.asarray(k)
        if array.dtype.kind not in "biu" and array.size:
            raise IndexError(f"{fn}: {_INDEX_TYPES_MESSAGE}")
        if array.ndim == 0:   # a 0-d array is a plain int (or bool), as in NumPy
            return bool(array) if array.dtype.kind == "b" else int(array)
        return as_tensor(array if array.dtype.kind == "b" else array.astype(np.int64, copy=False))
    return k


def _plan(x: TensorImpl, key: Any, fn: str) -> _Indexed | tuple:
    """The gather/scatter plan of an advanced key, or the basic key left when nothing in it is
    advanced (a 0-d integer tensor is an int)."""
    if isinstance(key, TensorImpl) and key._dtype is dtypes.int64 and key._shape and x._shape:
        # The commonest advanced key, rows picked by an index tensor (x[idx]): the plan the
        # general code below makes for it, without its walk over the key (a 4-element x[idx]:
        # 9.6 -> about 4 us). The index's dims replace dim 0, which the index steps along.
        rest = len(x._shape) - 1
        return _Indexed(key._shape + x._shape[1:], _address(x, x._offset), (0,) * len(key._shape) + x._strides[1:],
                        [key], key._strides + (0,) * rest, x._shape[:1], x._strides[:1], (0,), True)
    items = [_index_item(k, fn) for k in (key if type(key) is tuple else (key,))]
    basic: list[Any] = []
    advanced: list[tuple[int, Any]] = []   # (position in `basic`, bool scalar or tensor)
    for k in items:
        if isinstance(k, bool):
            advanced.append((len(basic), k))
            basic.append(None)                      # a new dim of size 1, then indexed by [0] or []
        elif isinstance(k, TensorImpl):
            advanced.append((len(basic), k))
            basic.extend([slice(None)] * (k.ndim if k._dtype is dtypes.bool else 1))
        else:
            basic.append(k)
    if not advanced:
        return tuple(basic)
    if len(basic) <= len(x._shape) and all(type(k) is slice and k == _FULL for k in basic):
        shape, steps, offset = x._shape, x._strides, x._offset   # only index tensors: no view to make
    else:
        shape, steps, offset = S.basic_index(x._shape, x._strides, x._offset, tuple(basic), fn=fn)

    # Where each item of `basic` lands among the view's dims (and the input's, for messages).
    consumed = sum(1 for k in basic if k is not None and k is not Ellipsis)
    view_dim, input_dim = [], []
    v = d = 0
    for k in basic:
        view_dim.append(v)
        input_dim.append(d)
        if k is Ellipsis:
            v += len(x._shape) - consumed
            d += len(x._shape) - consumed
        elif k is None:
            v += 1
        elif isinstance(k, slice):
            v += 1
            d += 1
        else:
            d += 1

    int64 = dtypes.int64
    indices, positions, dims = [], [], []
    for n, (at, k) in enumerate(advanced):
        p = view_dim[at]
        if isinstance(k, bool):
            indices.append(type(x)._empty((1,), int64, fn)._fill_unchecked(0) if k else type(x)._empty((0,), int64, fn))
            positions.append(p)
            dims.append(p)
        elif k._dtype is dtypes.bool:
            if k._shape != shape[p : p + k.ndim]:
                raise IndexError(
                    f"{fn}: The shape of the mask {list(k._shape)} at index {n} does not match the shape of the "
                    f"indexed tensor {list(x._shape)} at index {input_dim[at]}"
                )
            coordinates = nonzero(k)
            for j in range(k.ndim):   # column j of the (n, ndim) coordinates
                indices.append(coordinates._view(coordinates._shape[:1], (k.ndim,), j))
                positions.append(p + j)
                dims.append(input_dim[at] + j)
        else:
            indices.append(k)
            positions.append(p)
            dims.append(input_dim[at])
    try:
        broadcast = indices[0]._shape if len(indices) == 1 else S.broadcast_shapes(*(t._shape for t in indices), fn=fn)
    except (ValueError, RuntimeError):
        shapes = ", ".join(str(list(t._shape)) for t in indices)
        message = f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        raise IndexError(f"{fn}: {message}") from None

    # NumPy's placement rule, on the dims of the basic view: adjacent -> in place, else first.
    rest = [i for i in range(len(shape)) if i not in positions]
    first = positions[0]
    start = first if positions == list(range(first, first + len(positions))) else 0
    before = [i for i in rest if i < first] if start else []
    after = [i for i in rest if i not in before]
    out_shape = tuple(shape[i] for i in before) + broadcast + tuple(shape[i] for i in after)
    zeros = (0,) * len(broadcast)
    base_strides = tuple(steps[i] for i in before) + zeros + tuple(steps[i] for i in after)
    index_strides: list[int] = []
    for t in indices:
        inner = t._strides if t._shape == broadcast else S.expand_strides(t._shape, t._strides, broadcast, fn=fn)
        index_strides += [0] * len(before) + list(inner) + [0] * len(after)
    return _Indexed(
        out_shape, _address(x, offset), base_strides, indices, tuple(index_strides),
        tuple(shape[p] for p in positions), tuple(steps[p] for p in positions), tuple(dims), True,
    )


def getitem(x: TensorImpl, key: Any) -> Any:
    """``x[key]`` for a key with an advanced part (a copy); a basic key gives a view."""
    if type(key) is type(x) and key._dtype is dtypes.bool and key._shape == x._shape and x._shape:
        result = _masked_select_contiguous(x, key)
        if result is not None:
            return result
    return _getitem(x, key, "__getitem__")


_MASKED_SELECT_NEW = lib.tt_masked_select_new
_INDEX_ROWS_NEW = lib.tt_index_rows_new


def index_rows(x: TensorImpl, index: TensorImpl) -> Any:
    """``x[index]`` for a 1-D int64 ``index`` and a row-major ``x`` of at least one dim (any offset)
    that records no autograd here: one C call (``tt_index_rows_new``) allocates the result and
    copies the picked rows, checking each index as it reads it. None to take the general path
    (``getitem``), which gives the same elements and reports a bad index. The general path plans a
    gather over the result's shape first: a 3-row pick of a 3x4 tensor took 44,300 instructions
    that way, about 13,800 this way (docs/performance_dispatch.md).

    >>> import t_tensor as tt
    >>> index_rows(tt.arange(6).view(3, 2), tt.tensor([2, -3])).tolist()
    [[4, 5], [0, 1]]
    """
    if not x._shape or (x._ag is not None and wants_grad(x)) or not (x._dense or x._is_dense()):
        return None
    rest = x._shape[1:]
    ptr = _INDEX_ROWS_NEW(
        _address(x, x._offset), x._shape[0], math.prod(rest),
        _address(index, index._offset), index._shape[0], index._strides[0], x._dtype.code,
    )
    if not ptr:
        return None
    shape = index._shape + rest
    return wrap_new(type(x), ptr, shape, S.contiguous_strides_of_valid_shape(shape), x._dtype)


def _masked_select_contiguous(x: TensorImpl, mask: TensorImpl) -> Any:
    """``x[mask]`` with a bool mask of x's shape, both contiguous, nothing to record: one C call
    (``tt_masked_select_new``: count, allocate, copy the selected elements in order); None to take
    the general path (through ``nonzero``), which gives the same elements."""
    if not (x._dense or x._is_dense()) or not (mask._dense or mask._is_dense()) or wants_grad(x):
        return None
    count = ffi.new("int64_t *")
    ptr = _MASKED_SELECT_NEW(
        math.prod(x._shape),
        x._storage._data + x._offset * x._dtype.itemsize, mask._storage._data + mask._offset, x._dtype.code, count,
    )
    return wrap_new(type(x), ptr, (count[0],), (1,), x._dtype) if ptr else None


def _getitem(x: TensorImpl, key: Any, fn: str) -> Any:
    plan = _plan(x, key, fn)
    if not isinstance(plan, _Indexed):
        return x._view(*S.basic_index(x._shape, x._strides, x._offset, plan, fn=fn))
    if wants_grad(x):
        return FUNCTIONS["IndexGet"].apply(x, key, fn)
    return _gather(fn, plan, type(x)._empty(plan.shape, x._dtype, fn))


def _inplace(target: TensorImpl, function: str, fn: str, *args: Any) -> Any:
    """An in-place indexing write under autograd: ``target`` takes over the history of the
    out-of-place ``FUNCTIONS[function].apply(target, *args)`` (see ``apply_inplace``)."""
    return FUNCTIONS["apply_inplace"](target, lambda old: FUNCTIONS[function].apply(old, *args), fn, False)


def setitem(x: TensorImpl, key: Any, value: Any, accumulate: bool = False, fn: str = "__setitem__") -> None:
    """``x[key] = value`` (or ``+=`` with duplicates summed, for ``accumulate``): value is broadcast
    to the indexed shape and converted to x's dtype."""
    if wants_grad(x, value):
        _inplace(x, "IndexPut", fn, value, key, accumulate, fn)
        return
    plan = _plan(x, key, fn)
    if not isinstance(plan, _Indexed):
        if accumulate:
            plan = _plan(x, tuple(_as_index_tensor(k, x) for k in plan), fn)
        else:
            x._view(*S.basic_index(x._shape, x._strides, x._offset, plan, fn=fn)).copy_(_value(x, value, fn))
            return
    value = _value(x, value, fn)
    shape = value._shape
    while len(shape) > len(plan.shape) and shape[0] == 1:   # PyTorch drops leading size-1 dims
        value, shape = value[0], shape[1:]
    try:
        value_strides = S.expand_strides(value._shape, value._strides, plan.shape, fn=fn)
    except (ValueError, RuntimeError):
        raise RuntimeError(f"{fn}: shape mismatch: value tensor of shape {list(value._shape)} cannot be broadcast "
                           f"to indexing result of shape {list(plan.shape)}") from None
    _scatter(fn, plan, x, value, value_strides, lib.TT_SCATTER_SUM if accumulate else lib.TT_SCATTER_ASSIGN)


def _as_index_tensor(k: Any, x: TensorImpl) -> Any:
    """An int key item as a 1-element index (so that index_put_ with accumulate sees a tensor)."""
    if isinstance(k, int):
        return type(x)._empty((), dtypes.int64)._fill_unchecked(k).view(1)
    return k


def _value(x: TensorImpl, value: Any, fn: str) -> Any:
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return type(x)._empty((), x._dtype, fn).fill_(value)
    return _tensor(value, fn).to(x._dtype)


def index_put(input: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    """A copy of ``input`` with ``input[indices] = values`` (``+=``, summing duplicates, with ``accumulate``).

    >>> import t_tensor as tt
    >>> idx = tt.tensor([0, 0, 2])
    >>> tt.index_put(tt.zeros(3), (idx,), tt.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
    [3.0, 0.0, 3.0]
    """
    result = input.clone()
    setitem(result, tuple(indices), values, accumulate, "index_put")
    return result


# ---------------------------------------------------------------------- gather and scatter


def _check_dims_like(fn: str, x: TensorImpl, index: TensorImpl, what: str = "input") -> None:
    if max(index.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError(f"{fn}: Index tensor must have the same number of dimensions as {what} tensor")


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Any:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for any dim).

    ``index`` (int64 or int32) has input's number of dims and is no larger along the others.
    Negative indices are out of range, as in PyTorch.

    >>> import t_tensor as tt
    >>> tt.gather(tt.tensor([[1, 2], [3, 4]]), 1, tt.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    fn = "gather"
    if wants_grad(input):
        return FUNCTIONS["Gather"].apply(input, dim, index, fn)
    index = _int64_index(index, fn, (dtypes.int64, dtypes.int32), "int32/int64")
    dim = S.normalize_dim(dim, max(input.ndim, 1), fn=fn)
    _check_dims_like(fn, input, index)
    for d in range(index.ndim):
        if d != dim and input.ndim and index._shape[d] > input._shape[d]:
            raise RuntimeError(f"{fn}: Size does not match at dimension {d} expected index {list(index._shape)} to be "
                               f"no larger than self {list(input._shape)} apart from dimension {dim}")
    plan = _along_dim(input, dim, index._shape, index, index._strides, wrap=False)
    return _gather(fn, plan, type(input)._empty(index._shape, input._dtype, fn))


def _scatter_into(fn: str, target: Any, dim: int, index: Any, src: Any, mode: int) -> Any:
    """The in-place scatter family: target[... index ...] (combined with) src, along dim."""
    index = _int64_index(index, fn, (dtypes.int64, dtypes.int32), "int32/int64")
    dim = S.normalize_dim(dim, max(target.ndim, 1), fn=fn)
    _check_dims_like(fn, target, index, "self")
    if isinstance(src, TensorImpl):
        if src._dtype is not target._dtype:
            raise RuntimeError(f"{fn}: Expected self.dtype to be equal to src.dtype "
                               f"({target._dtype.name} vs {src._dtype.name})")
        _check_dims_like(fn, src, index, "src")
        too_big = any(
            index._shape[d] > (src._shape[d] if src.ndim else 1)
            or (d != dim and index._shape[d] > (target._shape[d] if target.ndim else 1))
            for d in range(index.ndim)
        )
        src_strides = src._strides if src.ndim == index.ndim else (0,) * index.ndim
    else:
        src = _scalar_tensor(target, src, fn)
        too_big = any(d != dim and index._shape[d] > target._shape[d] for d in range(index.ndim) if target.ndim)
        src_strides = (0,) * index.ndim
    if too_big:
        raise RuntimeError(f"{fn}: Expected index {list(index._shape)} to be no larger than self {list(target._shape)} "
                           f"apart from dimension {dim} and to be no larger size than src {list(src._shape)}")
    plan = _along_dim(target, dim, index._shape, index, index._strides, wrap=False)
    _scatter(fn, plan, target, src, src_strides, mode)
    return target


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: str | None = None) -> Any:
    """A copy of ``input`` with ``out[index[i][j]][j] = src[i][j]`` (``dim=0``); ``src`` may be a number
    (or given as ``value=``). ``reduce='add'`` or ``'multiply'`` combines instead of writing.

    >>> import t_tensor as tt
    >>> tt.scatter(tt.zeros(2, 3), 0, tt.tensor([[1, 0, 1]]), tt.ones(1, 3)).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    """
    if wants_grad(input, src) and reduce is None and (src is None) != (value is None):
        return FUNCTIONS["Scatter"].apply(input, dim, index, *_src_or_value(src, value))
    return _scatter_method(input.clone(), dim, index, src, value, reduce, "scatter")


def _src_or_value(src: Any, value: Any) -> tuple[Any, Any]:
    """scatter's operand as (a tensor src, None) or (None, a number): a number may come as src."""
    return (src, None) if isinstance(src, TensorImpl) else (None, value if src is None else src)


def _scatter_method(target: Any, dim: int, index: Any, src: Any, value: Any, reduce: str | None, fn: str) -> Any:
    if (src is None) == (value is None):
        raise TypeError(f"{fn}: expected exactly one of src and value")
    if wants_grad(target, src):
        if reduce is not None:
            raise RuntimeError(f"{fn}: the gradient of scatter with reduce= is not implemented (use scatter_add)")
        return _inplace(target, "Scatter", fn, dim, index, *_src_or_value(src, value))
    mode = lib.TT_SCATTER_ASSIGN
    if reduce is not None:
        if reduce not in _LEGACY_REDUCE:
            raise RuntimeError(f"{fn}: reduce argument must be either add or multiply, got {reduce!r}")
        mode = _LEGACY_REDUCE[reduce]
    return _scatter_into(fn, target, dim, index, value if src is None else src, mode)


def scatter_add(input: Any, dim: int, index: Any, src: Any) -> Any:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; duplicates all add up.

    >>> import t_tensor as tt
    >>> tt.scatter_add(tt.zeros(3), 0, tt.tensor([0, 0, 2]), tt.tensor([1.0, 2.0, 3.0])).tolist()
    [3.0, 0.0, 3.0]
    """
    if wants_grad(input, src):
        return FUNCTIONS["ScatterAdd"].apply(input, dim, index, _tensor(src, "scatter_add"))
    return _scatter_into("scatter_add", input.clone(), dim, index, _tensor(src, "scatter_add"), lib.TT_SCATTER_SUM)


def _scatter_add_(target: Any, dim: int, index: Any, src: Any, fn: str) -> Any:
    src = _tensor(src, fn)
    if wants_grad(target, src):
        return _inplace(target, "ScatterAdd", fn, dim, index, src)
    return _scatter_into(fn, target, dim, index, src, lib.TT_SCATTER_SUM)


def _identity(dtype: Any, reduce: str) -> Any:
    """The value that leaves every element unchanged under the reduction."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype is dtypes.bool:
        return reduce == "amin"
    if dtype.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    info = dtypes.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _scatter_reduce_(target: Any, dim: int, index: Any, src: Any, reduce: str, include_self: bool, fn: str) -> Any:
    if wants_grad(target, src):
        raise RuntimeError(f"{fn}: the gradient of scatter_reduce is not implemented")
    if reduce not in _REDUCE_MODES:
        raise RuntimeError(f"{fn}: reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "mean" and target._dtype is dtypes.bool:
        raise RuntimeError(f"{fn}: reduce='mean' is not implemented for bool tensors")
    src = _tensor(src, fn)
    if not include_self:
        _scatter_into(fn, target, dim, index, _identity(target._dtype, reduce), lib.TT_SCATTER_ASSIGN)
    _scatter_into(fn, target, dim, index, src, _REDUCE_MODES[reduce])
    if reduce == "mean":
        count_dtype = target._dtype if target._dtype.is_floating_point else dtypes.int64
        count = type(target)._empty(target._shape, count_dtype, fn)._fill_unchecked(1 if include_self else 0)
        ones = type(target)._empty((), count_dtype, fn)._fill_unchecked(1).expand(src._shape)
        _scatter_into(fn, count, dim, index, ones, lib.TT_SCATTER_SUM)
        count = E.maximum(count, 1)
        target.copy_(E.div(target, count) if target._dtype.is_floating_point else E.floor_divide(target, count))
    return target


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True) -> Any:
    """A copy of ``input`` where the ``src`` values sent to each position by ``index`` (along
    ``dim``) are reduced with ``reduce``: ``'sum'``, ``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'``,
    together with the original value unless ``include_self=False``. Integer means round down.

    >>> import t_tensor as tt
    >>> x = tt.tensor([0.0, 10.0])
    >>> tt.scatter_reduce(x, 0, tt.tensor([1, 1, 0]), tt.tensor([1.0, 5.0, 2.0]), "amax").tolist()
    [2.0, 10.0]
    >>> tt.scatter_reduce(x, 0, tt.tensor([1, 1]), tt.tensor([1.0, 5.0]), "mean", include_self=False).tolist()
    [0.0, 3.0]
    """
    return _scatter_reduce_(input.clone(), dim, index, src, reduce, include_self, "scatter_reduce")


# ---------------------------------------------------------------------- along one dim


def _vector_index(fn: str, index: Any, accepted: tuple, what: str) -> Any:
    index = _int64_index(_tensor(index, fn) if isinstance(index, list) else index, fn, accepted, what)
    if index.ndim > 1:
        raise IndexError(f"{fn}: Index is supposed to be a vector")
    return index


def _dim_plan(fn: str, x: Any, dim: int, index: Any, wrap: bool) -> _Indexed:
    """Plan for selecting the entries `index` (a vector) of `x` along `dim`: the result has x's
    shape with dim's size replaced by len(index)."""
    shape = x._shape[:dim] + (index.numel(),) + x._shape[dim + 1 :] if x.ndim else ()
    step = index._strides[0] if index.ndim else 0
    index_strides = tuple(step if d == dim else 0 for d in range(len(shape)))
    return _along_dim(x, dim, shape, index, index_strides, wrap)


def index_select(input: Any, dim: int, index: Any) -> Any:
    """The entries ``index`` (a vector of int64 or int32) of ``input`` along ``dim``, copied.

    >>> import t_tensor as tt
    >>> tt.index_select(tt.tensor([[1, 2, 3], [4, 5, 6]]), 1, tt.tensor([2, 0])).tolist()
    [[3, 1], [6, 4]]
    """
    fn = "index_select"
    if wants_grad(input):
        return FUNCTIONS["IndexSelect"].apply(input, dim, index)
    index = _vector_index(fn, index, (dtypes.int64, dtypes.int32), "int32 or int64")
    dim = S.normalize_dim(dim, max(input.ndim, 1), fn=fn)
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"{fn}: Index to scalar can have only 1 value, got {index.numel()} value(s)")
    plan = _dim_plan(fn, input, dim, index, wrap=False)
    return _gather(fn, plan, type(input)._empty(plan.shape, input._dtype, fn))


def _index_add_(target: Any, dim: int, index: Any, source: Any, alpha: Any, fn: str) -> Any:
    if wants_grad(target, source):
        return _inplace(target, "IndexAdd", fn, dim, index, source, alpha)
    index = _vector_index(fn, index, (dtypes.int64, dtypes.int32), "int32 or int64")
    dim = S.normalize_dim(dim, max(target.ndim, 1), fn=fn)
    source = _tensor(source, fn)
    if source._dtype is not target._dtype:
        raise RuntimeError(f"{fn}: self ({target._dtype.name}) and source ({source._dtype.name}) must have the "
                           "same scalar type")
    plan = _dim_plan(fn, target, dim, index, wrap=False)
    if max(source.ndim, 1) != max(target.ndim, 1) or source.numel() != S.numel(plan.shape) or (
        source.ndim and source._shape != plan.shape
    ):
        raise RuntimeError(f"{fn}: source tensor shape must match self tensor shape, excluding the specified "
                           f"dimension. Got self.shape = {list(target._shape)} source.shape = {list(source._shape)}")
    if not (type(alpha) is int and alpha == 1):
        source = E.mul(source, alpha).to(target._dtype)
    source_strides = source._strides if source.ndim == len(plan.shape) else (0,) * len(plan.shape)
    _scatter(fn, plan, target, source, source_strides, lib.TT_SCATTER_SUM)
    return target


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    """A copy of ``input`` with ``alpha * source[..., i, ...]`` added to ``input[..., index[i], ...]``
    (along ``dim``); repeated indices all add up.

    >>> import t_tensor as tt
    >>> tt.index_add(tt.zeros(3), 0, tt.tensor([0, 0]), tt.tensor([1.0, 2.0]), alpha=2).tolist()
    [6.0, 0.0, 0.0]
    """
    if wants_grad(input, source):
        return FUNCTIONS["IndexAdd"].apply(input, dim, index, source, alpha)
    return _index_add_(input.clone(), dim, index, source, alpha, "index_add")


def _index_fill_(target: Any, dim: int, index: Any, value: Any, fn: str) -> Any:
    if wants_grad(target, value):
        return _inplace(target, "IndexFill", fn, dim, index, value)
    index = _int64_index(_tensor(index, fn) if isinstance(index, list) else index, fn, (dtypes.int64,), "int64")
    if index.ndim > 1:
        raise RuntimeError(f"{fn}: Index has to be a vector/scalar")
    dim = S.normalize_dim(dim, max(target.ndim, 1), fn=fn)
    plan = _dim_plan(fn, target, dim, index, wrap=True)
    _scatter(fn, plan, target, _scalar_tensor(target, value, fn), (0,) * len(plan.shape), lib.TT_SCATTER_ASSIGN)
    return target


def index_fill(input: Any, dim: int, index: Any, value: Any) -> Any:
    """A copy of ``input`` with the entries ``index`` along ``dim`` set to ``value`` (negative
    indices count from the end).

    >>> import t_tensor as tt
    >>> tt.index_fill(tt.zeros(2, 3), 1, tt.tensor([0, -1]), 7.0).tolist()
    [[7.0, 0.0, 7.0], [7.0, 0.0, 7.0]]
    """
    if wants_grad(input, value):
        return FUNCTIONS["IndexFill"].apply(input, dim, index, value)
    return _index_fill_(input.clone(), dim, index, value, "index_fill")


def take(input: Any, index: Any, axis: int | None = None) -> Any:
    """Elements of ``input`` at ``index``.

    Without ``axis`` (PyTorch's ``take``): ``input`` is read as if flattened in row-major order,
    the result has ``index``'s shape, negative indices count from the end. With ``axis`` (the array
    API's ``take``): the entries along that axis, like ``input[:, ..., index]``.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[1, 2, 3], [4, 5, 6]])
    >>> tt.take(x, tt.tensor([[0, -1]])).tolist(), tt.take(x, tt.tensor([2, 0]), axis=1).tolist()
    ([[1, 6]], [[3, 1], [6, 4]])
    """
    fn = "take"
    if axis is not None:
        axis = S.normalize_dim(axis, input.ndim, fn=fn)
        index = _tensor(index, fn)
        if index._dtype.kind not in "iu":
            raise IndexError(f"{fn}: indices must be an integer tensor, got {index._dtype.name}")
        return getitem(input, (slice(None),) * axis + (index.to(dtypes.int64),))
    index = _int64_index(_tensor(index, fn) if isinstance(index, list) else index, fn, (dtypes.int64,), "int64")
    if wants_grad(input):
        return _getitem(input.reshape(-1), (index,), fn)
    flat = input.contiguous()
    plan = _Indexed(index._shape, flat.data_ptr(), (0,) * index.ndim, [index], index._strides, (flat.numel(),), (1,),
                    ("the flattened input",), True)
    return _gather(fn, plan, type(input)._empty(index._shape, input._dtype, fn))


def take_along_dim(input: Any, indices: Any, dim: int | None = None) -> Any:
    """Entries of ``input`` picked along ``dim`` by ``indices`` (int64, same number of dims,
    broadcast with ``input`` over the other dims); without ``dim``, both are flattened first.
    Negative indices count from the end. The partner of ``argsort`` and ``argmax(keepdim=True)``.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[10, 30, 20], [60, 40, 50]])
    >>> tt.take_along_dim(x, tt.tensor([[1], [0]]), dim=1).tolist()
    [[30], [60]]
    """
    return _take_along("take_along_dim", input, indices, dim, (dtypes.int64,))


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    """The array API's name for :func:`take_along_dim` (``axis`` defaults to the last one; any
    integer dtype of indices).

    >>> import t_tensor as tt
    >>> tt.take_along_axis(tt.tensor([[3, 1, 2]]), tt.tensor([[1, 2, 0]])).tolist()
    [[1, 2, 3]]
    """
    return _take_along("take_along_axis", x, indices, axis, _INTEGER_DTYPES)


def _take_along(fn: str, input: Any, indices: Any, dim: int | None, accepted: tuple) -> Any:
    if not isinstance(indices, TensorImpl):
        indices = _tensor(indices, fn)
    if indices._dtype not in accepted:
        raise RuntimeError(f"{fn}: dtype of indices should be Long but got {indices._dtype.name}")
    indices = indices.to(dtypes.int64)
    if dim is None:
        input, indices, dim = input.reshape(-1), indices.reshape(-1), 0
    if input.ndim != indices.ndim:
        raise RuntimeError(f"{fn}: input and indices should have the same number of dimensions, but got "
                           f"{input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    dim = S.normalize_dim(dim, max(input.ndim, 1), fn=fn)
    if input.ndim:
        others = S.broadcast_shapes(
            input._shape[:dim] + (1,) + input._shape[dim + 1 :],
            indices._shape[:dim] + (1,) + indices._shape[dim + 1 :],
            fn=fn,
        )
        input = input.expand(others[:dim] + (input._shape[dim],) + others[dim + 1 :])
        indices = indices.expand(others[:dim] + (indices._shape[dim],) + others[dim + 1 :])
    if wants_grad(input):
        return FUNCTIONS["Gather"].apply(input, dim, indices, fn)
    return _take_along_planned(fn, input, dim, indices)


def _take_along_planned(fn: str, input: Any, dim: int, indices: Any) -> Any:
    """take_along_dim once ``input`` and ``indices`` are broadcast and ``dim`` normalized."""
    plan = _along_dim(input, dim, indices._shape, indices, indices._strides, wrap=True)
    return _gather(fn, plan, type(input)._empty(indices._shape, input._dtype, fn))


# ---------------------------------------------------------------------- nonzero and masks


def _count_nonzero(x: TensorImpl, fn: str) -> int:
    count = ffi.new("int64_t *")
    check(lib.tt_count_nonzero(x.ndim, x._shape, x.data_ptr(), x._strides, x._dtype.code, count), fn)
    return count[0]


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:
    """Coordinates of the nonzero elements (NaN counts), in row-major order: an ``(n, ndim)`` int64
    tensor, or with ``as_tuple=True`` one 1-d tensor per dimension (what ``x[mask]`` uses).

    >>> import t_tensor as tt
    >>> m = tt.tensor([[0.0, 1.5], [2.0, 0.0]])
    >>> tt.nonzero(m).tolist(), [t.tolist() for t in tt.nonzero(m, as_tuple=True)]
    ([[0, 1], [1, 0]], [[0, 1], [1, 0]])
    """
    fn = "nonzero"
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{fn}: expected a Tensor, got {type(input).__name__}")
    n = _count_nonzero(input, fn)
    result = type(input)._empty((n, input.ndim), dtypes.int64, fn)
    check(lib.tt_nonzero(input.ndim, input._shape, input.data_ptr(), input._strides, input._dtype.code,
                         result.data_ptr(), n), fn)
    if not as_tuple:
        return result
    if input.ndim == 0:
        return (type(input)._empty((n,), dtypes.int64, fn)._fill_unchecked(0),)
    return tuple(result[:, d] for d in range(input.ndim))


def argwhere(input: Any) -> Any:
    """Same as ``nonzero(input)``: an ``(n, ndim)`` int64 tensor of coordinates.

    >>> import t_tensor as tt
    >>> tt.argwhere(tt.tensor([0, 3, 0, 4])).tolist()
    [[1], [3]]
    """
    return nonzero(input)


def _check_mask(fn: str, mask: Any, name: str) -> None:
    if not isinstance(mask, TensorImpl) or mask._dtype is not dtypes.bool:
        got = mask._dtype.name if isinstance(mask, TensorImpl) else type(mask).__name__
        raise RuntimeError(f"{fn}: {name} only supports boolean masks, but got mask with dtype {got}")


def _masked_fill_(target: Any, mask: Any, value: Any, fn: str) -> Any:
    _check_mask(fn, mask, "masked_fill_")
    if wants_grad(target, value):
        return _inplace(target, "MaskedFill", fn, mask, value)
    fill = _scalar_tensor(target, value, fn)
    mask_strides = S.expand_strides(mask._shape, mask._strides, target._shape, fn=fn)
    target._check_writable(fn)
    if target._overlaps(mask):
        mask = mask.clone()
        mask_strides = S.expand_strides(mask._shape, mask._strides, target._shape, fn=fn)
    status = lib.tt_masked_fill(target.ndim, target._shape, target.data_ptr(), target._strides, mask.data_ptr(),
                                mask_strides, fill.data_ptr(), target._dtype.code)
    check(status, fn)
    return target


def masked_fill(input: Any, mask: Any, value: Any) -> Any:
    """A copy of ``input`` with ``value`` where the bool ``mask`` (broadcast) is True.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[1, 2], [3, 4]])
    >>> tt.masked_fill(x, x > 2, 0).tolist(), tt.masked_fill(x, tt.tensor([True, False]), -1).tolist()
    ([[1, 2], [0, 0]], [[-1, 2], [-1, 4]])
    """
    _check_mask("masked_fill", mask, "masked_fill")
    if wants_grad(input, value):
        return FUNCTIONS["MaskedFill"].apply(input, mask, value)
    shape = S.broadcast_shapes(input._shape, mask._shape, fn="masked_fill")
    return _masked_fill_(input.expand(shape).clone(), mask, value, "masked_fill")


def masked_select(input: Any, mask: Any) -> Any:
    """The elements of ``input`` where the bool ``mask`` is True (both broadcast), as a 1-d tensor.

    >>> import t_tensor as tt
    >>> tt.masked_select(tt.tensor([[1, 2], [3, 4]]), tt.tensor([False, True])).tolist()
    [2, 4]
    """
    fn = "masked_select"
    if not isinstance(mask, TensorImpl) or mask._dtype is not dtypes.bool:
        raise RuntimeError(f"{fn}: expected BoolTensor for mask")
    shape = S.broadcast_shapes(input._shape, mask._shape, fn=fn)
    return getitem(input.expand(shape), mask.expand(shape))


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """int64 one-hot encoding: a new last dim of size ``num_classes`` (``max + 1`` when -1) with a
    1 at each value (``torch.nn.functional.one_hot``).

    >>> import t_tensor as tt
    >>> tt.one_hot(tt.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    fn = "one_hot"
    if not isinstance(tensor, TensorImpl) or tensor._dtype is not dtypes.int64:
        raise RuntimeError(f"{fn}: one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = operator.index(num_classes)
    values = np.asarray(tensor)
    if num_classes == -1:
        if values.size == 0:
            raise RuntimeError(f"{fn}: Can not infer total number of classes from empty tensor.")
        num_classes = int(values.max()) + 1
    elif num_classes < 0:
        raise RuntimeError(f"{fn}: num_classes should be positive or -1, got {num_classes}")
    if values.size and values.min() < 0:
        raise RuntimeError(f"{fn}: Class values must be non-negative.")
    if values.size and values.max() >= num_classes:
        raise RuntimeError(f"{fn}: Class values must be smaller than num_classes.")
    result = type(tensor)._empty(tensor._shape + (num_classes,), dtypes.int64, fn)._fill_unchecked(0)
    index = tensor.unsqueeze(-1)
    plan = _along_dim(result, result.ndim - 1, index._shape, index, index._strides, wrap=False)
    one = type(tensor)._empty((), dtypes.int64, fn)._fill_unchecked(1)
    _scatter(fn, plan, result, one, (0,) * index.ndim, lib.TT_SCATTER_ASSIGN)
    return result


# ---------------------------------------------------------------------- Tensor methods


class IndexingOps:
    """Indexing methods mixed into :class:`~t_tensor.tensor.Tensor`; the ``_`` forms work in place."""

    __slots__ = ()

    def gather(self, dim, index, *, sparse_grad=False): return gather(self, dim, index)
    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return scatter(self, dim, index, src, value=value, reduce=reduce)
    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return _scatter_method(self, dim, index, src, value, reduce, "scatter_")
    def scatter_add(self, dim, index, src): return scatter_add(self, dim, index, src)
    def scatter_add_(self, dim, index, src): return _scatter_add_(self, dim, index, src, "scatter_add_")
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return _scatter_reduce_(self, dim, index, src, reduce, include_self, "scatter_reduce_")
    def index_select(self, dim, index): return index_select(self, dim, index)
    def index_add(self, dim, index, source, *, alpha=1): return index_add(self, dim, index, source, alpha=alpha)
    def index_add_(self, dim, index, source, *, alpha=1):
        return _index_add_(self, dim, index, source, alpha, "index_add_")
    def index_fill(self, dim, index, value): return index_fill(self, dim, index, value)
    def index_fill_(self, dim, index, value): return _index_fill_(self, dim, index, value, "index_fill_")
    def index_put(self, indices, values, accumulate=False): return index_put(self, indices, values, accumulate)
    def index_put_(self, indices, values, accumulate=False):
        setitem(self, tuple(indices), values, accumulate, "index_put_")
        return self
    def take(self, index): return take(self, index)
    def take_along_dim(self, indices, dim=None): return take_along_dim(self, indices, dim)
    def nonzero(self, *, as_tuple=False): return nonzero(self, as_tuple=as_tuple)
    def argwhere(self): return nonzero(self)
    def masked_fill(self, mask, value): return masked_fill(self, mask, value)
    def masked_fill_(self, mask, value): return _masked_fill_(self, mask, value, "masked_fill_")
    def masked_select(self, mask): return masked_select(self, mask)
