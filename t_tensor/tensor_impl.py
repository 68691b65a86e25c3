"""TensorImpl: how a tensor sees its storage. Metadata only, no operations.

A tensor is a window onto a :class:`~t_tensor.storage.Storage` (raw bytes). The window is:

* ``shape``: the size of each dimension;
* ``strides``: how many ELEMENTS to step in storage to move by one along each dimension;
* ``storage_offset``: which element of the storage is ``tensor[0, 0, ...]``;
* ``dtype``: how to read each element's bytes.

Element ``[i, j, k]`` lives at byte ``data_ptr + (offset + i*s0 + j*s1 + k*s2) * itemsize``.
Views (slices, transposes, expand, ...) make a new TensorImpl over the same storage: only these
four fields change, no byte moves. The arithmetic lives in :mod:`t_tensor.strides`.

:class:`~t_tensor.tensor.Tensor` subclasses TensorImpl, so one Python object per tensor carries
both the metadata and the operations, which keeps creating a tensor cheap.
"""

from __future__ import annotations

import math

from t_tensor import strides as S
from t_tensor._capi import lib
from t_tensor.dtypes import DType
from t_tensor.storage import _MAX_NBYTES, Storage

__all__ = ["TensorImpl", "wrap_new"]

_new = object.__new__
_NEW_DEFAULT = lib.tt_storage_new_default
_contiguous_strides = S.contiguous_strides_of_valid_shape


def wrap_new(cls: type, ptr, shape: tuple[int, ...], strides: tuple[int, ...], dtype: DType):
    """A fresh tensor of class `cls` over the new storage `ptr` (a non-NULL ``tt_storage *``
    carrying one new reference, from a dispatch.h function), offset 0. `strides` must be the
    contiguous strides of `shape`."""
    storage = _new(Storage)  # storage.adopt, inlined: this runs once per op
    storage._data = ptr.data_address
    storage._ptr = ptr
    result = _new(cls)
    result._storage = storage
    result._shape = shape
    result._strides = strides
    result._offset = 0
    result._dtype = dtype
    result._dense = True
    result._ag = None
    return result


class TensorImpl:
    """Shape, strides (in elements), storage offset and dtype over one :class:`Storage`."""

    # _dense caches whether the strides are exactly the contiguous (row-major) strides of the
    # shape: None until someone asks (views), True for fresh tensors. Shape and strides never
    # change after creation, so the answer never goes stale. The per-op fast paths read it.
    # _ag is the autograd record (t_tensor.autograd.graph.AutogradMeta), None for a tensor that
    # does not require grad: the fast paths test it with one `is None`.
    __slots__ = ("_storage", "_shape", "_strides", "_offset", "_dtype", "_dense", "_ag")

    _storage: Storage
    _shape: tuple[int, ...]
    _strides: tuple[int, ...]
    _offset: int
    _dtype: DType

    @classmethod
    def _make(
        cls, storage: Storage, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, dtype: DType
    ):
        """Build a tensor over `storage`, stealing its strong reference. No checks: internal."""
        self = object.__new__(cls)
        self._storage = storage
        self._shape = shape
        self._strides = strides
        self._offset = offset
        self._dtype = dtype
        self._dense = None
        self._ag = None
        return self

    def _alias(self):
        """Another tensor over the same memory with the same metadata and no autograd history."""
        result = _new(type(self))
        result._storage = self._storage.share()
        result._shape = self._shape
        result._strides = self._strides
        result._offset = self._offset
        result._dtype = self._dtype
        result._dense = self._dense
        result._ag = None
        return result

    @classmethod
    def _empty(cls, shape: tuple[int, ...], dtype: DType, fn: str = "empty"):
        """A new contiguous tensor with uninitialized memory. `shape` must already be a valid
        tuple of non-negative ints (it comes from a tensor or a checked argument)."""
        nbytes = math.prod(shape) * dtype.itemsize
        ptr = _NEW_DEFAULT(nbytes) if nbytes <= _MAX_NBYTES else None
        if ptr:
            return wrap_new(cls, ptr, shape, _contiguous_strides(shape), dtype)
        storage = Storage._allocate_default(nbytes, fn)  # too large or out of memory: raises
        return cls._make(storage, shape, _contiguous_strides(shape), 0, dtype)  # (if memory came back)

    def _is_dense(self) -> bool:
        """True when the strides are exactly the row-major contiguous strides of the shape (so
        the elements are ``numel`` consecutive items from ``data_ptr()``); cached."""
        dense = self._dense
        if dense is None:
            dense = self._dense = self._strides == _contiguous_strides(self._shape)
        return dense

    # ------------------------------------------------------------------ metadata

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension (a tuple, where PyTorch returns ``torch.Size``)."""
        return self._shape

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension.

        >>> import t_tensor as tt
        >>> tt.zeros(2, 3).size(), tt.zeros(2, 3).size(-1)
        ((2, 3), 3)
        """
        if dim is None:
            return self._shape
        return self._shape[S.normalize_dim(dim, len(self._shape), fn="size")]

    def stride(self, dim: int | None = None):
        """Strides in elements, or the stride of one dimension.

        >>> import t_tensor as tt
        >>> tt.zeros(2, 3).stride(), tt.zeros(2, 3).T.stride()
        ((3, 1), (1, 3))
        """
        if dim is None:
            return self._strides
        return self._strides[S.normalize_dim(dim, len(self._shape), fn="stride")]

    def storage_offset(self) -> int:
        """Index (in elements) of ``self[0, ..., 0]`` within the storage."""
        return self._offset

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        """Number of dimensions (same as ``ndim``)."""
        return len(self._shape)

    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self._shape)  # the shape was checked when the tensor was made

    def element_size(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take (``numel() * itemsize``), not the storage size."""
        return math.prod(self._shape) * self._dtype.itemsize

    def untyped_storage(self) -> Storage:
        """This tensor's own owner of the storage (its strong reference)."""
        return self._storage

    def data_ptr(self) -> int:
        """Address of the first element: storage address plus offset times itemsize."""
        return self._storage._data + self._offset * self._dtype.itemsize

    def is_contiguous(self) -> bool:
        """True when the elements sit in row-major order with no gaps (size-1 dims ignored)."""
        return self._dense or self._is_dense() or S.is_contiguous(self._shape, self._strides)

    def is_shared_with(self, other: TensorImpl) -> bool:
        """True when both tensors view the same storage."""
        return self._storage._ptr == other._storage._ptr


def expect_tensor(x: object, fn: str) -> TensorImpl:
    """``x`` itself when it is a tensor; else the TypeError every op family raises, naming ``fn``."""
    if not isinstance(x, TensorImpl):
        raise TypeError(f"{fn}: expected a Tensor, got {type(x).__name__}")
    return x
