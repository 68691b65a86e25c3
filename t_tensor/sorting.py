"""Sorting and searching: sort, argsort, topk, kthvalue, searchsorted, unique and its array-API forms.

Every function validates and computes shapes in Python, then makes one C call
(``csrc/src/kernels/sort.c``):

* ``tt_sort`` sorts each row along one dimension with a **stable** merge sort and keeps a range of
  sorted positions: all of them (``sort``, ``argsort``), the first ``k`` (``topk``) or the ``k``-th
  (``kthvalue``). The value written is copied from the input element, bit for bit.
* ``tt_searchsorted`` bisects a sorted row for each value, exactly as PyTorch does.
* ``tt_unique_runs`` groups runs of equal neighbours of a sorted (or, for ``unique_consecutive``,
  unsorted) sequence, giving values, counts, first positions and the inverse map in one pass.
  With ``dim=``, the sequence is of slices: ``tt_sort_rows`` sorts them lexicographically first.

The order is PyTorch's: NaN sorts after every number (before, when descending), ``-0.0`` equals
``0.0``, and equal elements keep their input order, so ``stable=False`` gives the stable result
too. For ``unique``, each NaN is distinct (PyTorch's behaviour and the array API standard's).

``tt.sort`` follows PyTorch and returns ``(values, indices)``; the array API's ``sort`` returns the
values only (that variant belongs to the array-API namespace). ``dim=`` and ``axis=`` are both
accepted.

>>> import t_tensor as tt
>>> x = tt.tensor([3.0, float("nan"), 1.0, 3.0])
>>> tt.sort(x).values.tolist(), tt.sort(x).indices.tolist()
([1.0, 3.0, 3.0, nan], [2, 0, 3, 1])
>>> tt.searchsorted(tt.tensor([1, 3, 5]), tt.tensor([3, 4])).tolist()
[1, 2]
"""

from __future__ import annotations

from typing import Any, NamedTuple

from t_tensor import dtypes
from t_tensor import strides as S
from t_tensor._capi import check, ffi, lib
from t_tensor.autograd.grad_mode import wants_grad
from t_tensor.elementwise import _as_input, _operand
from t_tensor.tensor_impl import TensorImpl, expect_tensor

__all__ = [
    "sort", "argsort", "topk", "kthvalue", "searchsorted",
    "unique", "unique_consecutive", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "SortResult", "TopkResult", "KthvalueResult", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult",
]  # fmt: skip


class SortResult(NamedTuple):
    """What :func:`sort` returns (``torch.return_types.sort``)."""

    values: Any
    indices: Any


class TopkResult(NamedTuple):
    """What :func:`topk` returns."""

    values: Any
    indices: Any


class KthvalueResult(NamedTuple):
    """What :func:`kthvalue` returns."""

    values: Any
    indices: Any


class UniqueAllResult(NamedTuple):
    """What :func:`unique_all` returns (array API)."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """What :func:`unique_counts` returns (array API)."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """What :func:`unique_inverse` returns (array API)."""

    values: Any
    inverse_indices: Any


# ---------------------------------------------------------------------- shared steps


_tensor = expect_tensor  # the shared check, under this module's short name


def _alias(value: Any, alias: Any, fn: str, names: tuple[str, str] = ("dim", "axis"), default: Any = -1) -> Any:
    """PyTorch's spelling (``dim=``, ``keepdim=``) or the array API's (``axis=``, ``keepdims=``),
    not both; ``default`` when neither is given."""
    if alias is None:
        return default if value is None else value
    if value is not None:
        raise TypeError(f"{fn}: got both {names[0]} and {names[1]}; give one of them")
    return alias


def _select_sorted(fn: str, x: TensorImpl, dim: Any, descending: bool, start: int, count: int,
                   values: bool = True) -> tuple[Any, Any]:
    """Sort every row of ``x`` along ``dim`` (stable) and keep sorted positions [start, start+count):
    (values or None, int64 indices), with ``count`` along ``dim``. A 0-d ``x`` gives 0-d results.
    Under autograd the values are read with the differentiable ``take_along_dim`` at the indices."""
    d = S.normalize_dim(dim, x.ndim, fn=fn)
    if values and wants_grad(x):
        from t_tensor.indexing import take_along_dim

        _, indices = _select_sorted(fn, x, dim, descending, start, count, values=False)
        return (take_along_dim(x, indices, d) if x._shape else x.clone()), indices
    shape = x._shape or (1,)
    out_shape = x._shape if not x._shape else shape[:d] + (count,) + shape[d + 1 :]
    indices = type(x)._empty(out_shape, dtypes.int64, fn)
    result = type(x)._empty(out_shape, x._dtype, fn) if values else None
    status = lib.tt_sort(
        len(shape), shape, d, x.data_ptr(), x._strides or (1,),
        result.data_ptr() if values else 0, (result._strides or (1,)) if values else ffi.NULL,
        indices.data_ptr(), indices._strides or (1,), start, count, x._dtype.code, bool(descending),
    )
    check(status, fn)
    return result, indices


def _size_along(x: TensorImpl, dim: Any, fn: str) -> int:
    return x._shape[S.normalize_dim(dim, x.ndim, fn=fn)] if x._shape else 1


def _check_bool_flag(value: Any, name: str, fn: str) -> bool:
    if not isinstance(value, (bool, int)):
        raise TypeError(f"{fn}: {name} must be a bool, got {type(value).__name__}")
    return bool(value)


# ---------------------------------------------------------------------- sort, argsort, topk, kthvalue


def sort(input: Any, dim: Any = None, descending: bool = False, stable: bool = False, *,
         axis: Any = None) -> SortResult:
    """Sort along ``dim`` (default: the last); returns ``(values, indices)`` as PyTorch.

    The sort is always stable (equal elements keep their order, so their indices ascend), whatever
    ``stable`` says. NaN goes last (first when ``descending``). ``axis=`` is the array API's name
    for ``dim``; unlike the array API's ``sort``, the result is the pair, not the values alone.

    >>> import t_tensor as tt
    >>> r = tt.sort(tt.tensor([[2, 1, 2], [0, 5, 3]]), descending=True)
    >>> r.values.tolist(), r.indices.tolist()
    ([[2, 2, 1], [5, 3, 0]], [[0, 2, 1], [1, 2, 0]])
    """
    fn = "sort"
    x = _tensor(input, fn)
    dim = _alias(dim, axis, fn)
    _check_bool_flag(stable, "stable", fn)
    n = _size_along(x, dim, fn)
    values, indices = _select_sorted(fn, x, dim, _check_bool_flag(descending, "descending", fn), 0, n)
    return SortResult(values, indices)


def argsort(input: Any, dim: Any = None, descending: bool = False, stable: bool = False, *, axis: Any = None) -> Any:
    """The indices that sort ``input`` along ``dim``: ``sort(...).indices`` (always stable).

    >>> import t_tensor as tt
    >>> tt.argsort(tt.tensor([3, 1, 2, 1])).tolist()
    [1, 3, 2, 0]
    """
    fn = "argsort"
    x = _tensor(input, fn)
    dim = _alias(dim, axis, fn)
    _check_bool_flag(stable, "stable", fn)
    n = _size_along(x, dim, fn)
    return _select_sorted(fn, x, dim, _check_bool_flag(descending, "descending", fn), 0, n, values=False)[1]


def _check_k(k: Any, fn: str) -> int:
    if isinstance(k, bool) or not hasattr(k, "__index__"):
        raise TypeError(f"{fn}: k must be an int, got {type(k).__name__}")
    return int(k)


def topk(input: Any, k: int, dim: Any = None, largest: bool = True, sorted: bool = True, *,
         axis: Any = None) -> TopkResult:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, best first.

    NaN counts as larger than every number. The result is always sorted (``sorted=False`` allows
    any order, and sorted is one); among equal elements the lower index comes first.

    >>> import t_tensor as tt
    >>> r = tt.topk(tt.tensor([1.0, 5.0, 3.0, 5.0]), 3)
    >>> r.values.tolist(), r.indices.tolist()
    ([5.0, 5.0, 3.0], [1, 3, 2])
    """
    fn = "topk"
    x = _tensor(input, fn)
    dim = _alias(dim, axis, fn)
    k = _check_k(k, fn)
    largest = _check_bool_flag(largest, "largest", fn)
    _check_bool_flag(sorted, "sorted", fn)
    n = _size_along(x, dim, fn)
    if not 0 <= k <= n:
        raise RuntimeError(f"{fn}: selected index k out of range (k = {k}, dimension size {n})")
    if x._dtype is dtypes.bool:
        raise RuntimeError(f"{fn}: topk does not support bool dtypes")
    if not x._shape:
        k = 1  # PyTorch: a 0-d input gives its element back, for k = 0 too
    return TopkResult(*_select_sorted(fn, x, dim, largest, 0, k))


def kthvalue(input: Any, k: int, dim: Any = None, keepdim: Any = None, *, axis: Any = None,
             keepdims: Any = None) -> KthvalueResult:
    """The ``k``-th smallest element along ``dim`` (``k`` counts from 1) and its index.

    NaN counts as larger than every number; among equal elements the lowest index is given.

    >>> import t_tensor as tt
    >>> r = tt.kthvalue(tt.tensor([[4, 1, 3], [2, 2, 0]]), 2)
    >>> r.values.tolist(), r.indices.tolist()
    ([3, 2], [2, 0])
    """
    fn = "kthvalue"
    x = _tensor(input, fn)
    dim = _alias(dim, axis, fn)
    keepdim = _check_bool_flag(_alias(keepdim, keepdims, fn, ("keepdim", "keepdims"), False), "keepdim", fn)
    k = _check_k(k, fn)
    n = _size_along(x, dim, fn)
    if not 1 <= k <= n:
        raise RuntimeError(f"{fn}: selected number k out of range (k = {k}, dimension size {n})")
    if x._dtype is dtypes.bool:
        raise TypeError(f"{fn}: not implemented for bool tensors")
    values, indices = _select_sorted(fn, x, dim, False, k - 1, 1)
    if not keepdim and x._shape:
        d = S.normalize_dim(dim, x.ndim, fn=fn)
        values, indices = values.squeeze(d), indices.squeeze(d)
    return KthvalueResult(values, indices)


# ---------------------------------------------------------------------- searchsorted


def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Any = None) -> Any:
    """Where each element of ``input`` would be inserted into ``sorted_sequence`` to keep it sorted.

    ``sorted_sequence`` is 1-D (one sequence for every value) or N-D, whose leading dimensions
    match those of ``input`` (one sequence per row). ``side='left'`` (or ``right=False``) gives
    the first position whose element is ``>=`` the value, ``'right'`` the first that is ``>``.
    ``sorter`` (int64, the sequence's shape) holds the indices that sort an unsorted sequence.
    ``input`` may be a Python number (with a 1-D sequence). Both are compared in their promoted
    dtype; NaN goes to the end. The result is int64 (int32 with ``out_int32``), shaped as
    ``input``. The array API's ``searchsorted(x1, x2, side=..., sorter=...)`` is the same call.

    >>> import t_tensor as tt
    >>> seq = tt.tensor([1.0, 2.0, 2.0, 3.0])
    >>> tt.searchsorted(seq, 2.0), tt.searchsorted(seq, tt.tensor([2.0, 9.0]), side="right").tolist()
    (tensor(1), [3, 4])
    """
    fn = "searchsorted"
    seq = _tensor(sorted_sequence, fn)
    value = _operand(input, fn)
    right = _check_bool_flag(right, "right", fn)
    out_int32 = _check_bool_flag(out_int32, "out_int32", fn)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{fn}: side can only be 'left' or 'right' but got {side!r}")
        if right and side == "left":
            raise RuntimeError(f"{fn}: side and right can't be set to opposites, got side of left while right was True")
        right = side == "right"
    if not seq._shape:
        raise RuntimeError(f"{fn}: boundaries tensor should have positive dimension, but got 0 dimension")
    is_scalar = not isinstance(value, TensorImpl)
    if (is_scalar or not value._shape) and seq.ndim != 1:
        raise RuntimeError(
            f"{fn}: input value can be a scalar only when boundaries tensor dimension is 1, but we got "
            f"boundaries tensor dim({seq.ndim}) and input value's dim(0)"
        )
    shape = () if is_scalar else value._shape
    if seq.ndim != 1 and seq._shape[:-1] != shape[:-1]:
        raise RuntimeError(
            f"{fn}: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
            f"and input value tensor must match, but we got boundaries tensor {list(seq._shape)} and input "
            f"value tensor {list(shape)}"
        )
    dtype = dtypes.result_type(seq, value)
    if dtype is dtypes.bool:
        raise TypeError(f"{fn}: not implemented for bool tensors")
    value, value_strides = _as_input(value, dtype, shape, seq, fn)
    seq = seq.to(dtype)
    row_strides = (0,) * len(shape) if seq.ndim == 1 else seq._strides[:-1] + (0,)
    sorter_args: tuple = (0, ffi.NULL, 0, 0)
    if sorter is not None:
        sorter = _tensor(sorter, fn)
        if sorter._dtype is not dtypes.int64:
            raise RuntimeError(f"{fn}: sorter must be a tensor of long dtype but got dtype {sorter._dtype.name}")
        if sorter._shape != seq._shape:
            raise RuntimeError(
                f"{fn}: boundary and sorter must have the same size, but got boundary tensor "
                f"{list(seq._shape)} and got sorter tensor {list(sorter._shape)}"
            )
        sorter = sorter.contiguous()
        sorter_rows = (0,) * len(shape) if seq.ndim == 1 else sorter._strides[:-1] + (0,)
        sorter_args = (sorter.data_ptr(), sorter_rows, sorter._strides[-1], sorter.numel())
    out = type(seq)._empty(shape, dtypes.int32 if out_int32 else dtypes.int64, fn)
    status = lib.tt_searchsorted(
        len(shape), shape, value.data_ptr(), value_strides,
        seq.data_ptr(), row_strides, seq._shape[-1], seq._strides[-1], *sorter_args,
        out.data_ptr(), out._strides, out_int32, dtype.code, right,
    )
    check(status, fn, "sorter index out of range" if status == lib.TT_ERR_INDEX else "")
    return out


# ---------------------------------------------------------------------- unique


def _runs(fn: str, x: TensorImpl, consecutive: bool, want_inverse: bool, want_counts: bool,
          want_first: bool, dim: int | None = None) -> tuple[Any, Any, Any, Any]:
    """(values, first indices, inverse, counts): runs of equal neighbours among the elements of x
    flattened (``dim=None``) or among its slices along ``dim``, after a stable sort unless
    ``consecutive``. The inverse has x's shape (``dim=None``) or ``(x.shape[dim],)``. Outputs not
    asked for are None."""
    make = type(x)._empty
    if dim is None:
        rows = x.contiguous().reshape(-1)
        n, row_len, others = rows.numel(), 1, ()
        perm = None
        if not consecutive:
            rows, perm = _select_sorted(fn, rows, 0, False, 0, n)
    else:
        order = (dim,) + tuple(d for d in range(x.ndim) if d != dim)
        rows = x.permute(*order).contiguous()
        n, others = x._shape[dim], rows._shape[1:]
        row_len = rows.numel() // n if n else 0
        perm = None
        if not consecutive:
            sorted_rows, perm = make(rows._shape, x._dtype, fn), make((n,), dtypes.int64, fn)
            check(lib.tt_sort_rows(n, row_len, rows.data_ptr(), sorted_rows.data_ptr(), perm.data_ptr(),
                                   x._dtype.code), fn)
            rows = sorted_rows
    values = make((n,) + others, x._dtype, fn)
    counts = make((n,), dtypes.int64, fn) if want_counts else None
    first = make((n,), dtypes.int64, fn) if want_first else None
    inverse = make(x._shape if dim is None else (n,), dtypes.int64, fn) if want_inverse else None
    num_runs = ffi.new("int64_t *")
    status = lib.tt_unique_runs(
        n, row_len, rows.data_ptr(), 0 if perm is None else perm.data_ptr(), values.data_ptr(),
        0 if counts is None else counts.data_ptr(), 0 if first is None else first.data_ptr(),
        0 if inverse is None else inverse.data_ptr(), x._dtype.code, num_runs,
    )
    check(status, fn)
    g = num_runs[0]

    def shrink(t: Any) -> Any:
        return t if t is None or g == n else t[:g].clone()

    values = shrink(values)
    if dim is not None and dim != 0:
        values = values.permute(*[order.index(d) for d in range(x.ndim)]).contiguous()
    return values, shrink(first), inverse, shrink(counts)


def _torch_unique(fn: str, input: Any, return_inverse: Any, return_counts: Any, dim: Any, consecutive: bool) -> Any:
    x = _tensor(input, fn)
    want_inverse = _check_bool_flag(return_inverse, "return_inverse", fn)
    want_counts = _check_bool_flag(return_counts, "return_counts", fn)
    if dim is not None:
        if not x._shape:
            raise IndexError(f"{fn}: Dimension specified as {dim} but tensor has no dimensions")
        dim = S.normalize_dim(dim, x.ndim, fn=fn)
        if any(size == 0 for d, size in enumerate(x._shape) if d != dim):
            raise RuntimeError(
                f"{fn}: There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
            )
    values, _, inverse, counts = _runs(fn, x, consecutive, want_inverse, want_counts, False, dim)
    if not (want_inverse or want_counts):
        return values
    return (values,) + ((inverse,) if want_inverse else ()) + ((counts,) if want_counts else ())


def unique(input: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: Any = None) -> Any:
    """The distinct elements of the flattened ``input``, ascending (NaNs last, each NaN distinct).

    With ``return_inverse``, also the index into the result of each input element (shaped as
    ``input``); with ``return_counts``, how often each distinct element occurs. The result is
    sorted whatever ``sorted`` says. With ``dim``, the distinct slices along ``dim``, ordered
    lexicographically; the inverse then has one entry per slice.

    >>> import t_tensor as tt
    >>> values, inverse, counts = tt.unique(tt.tensor([[3, 1], [3, 2]]), return_inverse=True, return_counts=True)
    >>> values.tolist(), inverse.tolist(), counts.tolist()
    ([1, 2, 3], [[2, 0], [2, 1]], [1, 1, 2])
    >>> tt.unique(tt.tensor([[1, 2], [0, 5], [1, 2]]), dim=0).tolist()
    [[0, 5], [1, 2]]
    """
    _check_bool_flag(sorted, "sorted", "unique")
    return _torch_unique("unique", input, return_inverse, return_counts, dim, consecutive=False)


def unique_consecutive(input: Any, return_inverse: bool = False, return_counts: bool = False, dim: Any = None) -> Any:
    """Collapse each run of equal neighbours of the flattened ``input`` (or, with ``dim``, of its
    slices along ``dim``) into one.

    >>> import t_tensor as tt
    >>> values, counts = tt.unique_consecutive(tt.tensor([1, 1, 2, 1, 1, 1]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 2, 1], [2, 1, 3])
    """
    return _torch_unique("unique_consecutive", input, return_inverse, return_counts, dim, consecutive=True)


def unique_all(x: Any, /) -> UniqueAllResult:
    """Array API: the distinct values (ascending, each NaN distinct), the index of each one's first
    occurrence in the flattened ``x``, the inverse indices (shaped as ``x``) and the counts.

    >>> import t_tensor as tt
    >>> r = tt.unique_all(tt.tensor([5, 4, 5]))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([4, 5], [1, 0], [1, 0, 1], [1, 2])
    """
    values, first, inverse, counts = _runs("unique_all", _tensor(x, "unique_all"), False, True, True, True)
    return UniqueAllResult(values, first, inverse, counts)


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """Array API: the distinct values and how often each occurs."""
    values, _, _, counts = _runs("unique_counts", _tensor(x, "unique_counts"), False, False, True, False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """Array API: the distinct values and, for each element of ``x``, the index of its value."""
    values, _, inverse, _ = _runs("unique_inverse", _tensor(x, "unique_inverse"), False, True, False, False)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Any, /) -> Any:
    """Array API: the distinct values, ascending, each NaN distinct.

    >>> import t_tensor as tt
    >>> tt.unique_values(tt.tensor([2.0, float("nan"), 2.0, float("nan")])).tolist()
    [2.0, nan, nan]
    """
    return _runs("unique_values", _tensor(x, "unique_values"), False, False, False, False)[0]


# ---------------------------------------------------------------------- Tensor methods


class SortingOps:
    """Sorting methods mixed into :class:`~t_tensor.tensor.Tensor`."""

    __slots__ = ()

    def sort(self, dim=None, descending=False, stable=False, *, axis=None):
        return sort(self, dim, descending, stable, axis=axis)

    def argsort(self, dim=None, descending=False, stable=False, *, axis=None):
        return argsort(self, dim, descending, stable, axis=axis)

    def topk(self, k, dim=None, largest=True, sorted=True, *, axis=None):
        return topk(self, k, dim, largest, sorted, axis=axis)

    def kthvalue(self, k, dim=None, keepdim=None, *, axis=None, keepdims=None):
        return kthvalue(self, k, dim, keepdim, axis=axis, keepdims=keepdims)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return unique_consecutive(self, return_inverse, return_counts, dim)
