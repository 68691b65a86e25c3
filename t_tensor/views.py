"""Views: new shapes, strides and offsets over the same storage. None of these copies data,
except ``reshape``/``flatten`` when the strides make a view impossible (as in PyTorch).

Every view holds its own strong reference to the storage, so ``use_count()`` shows how many
tensors share it:

>>> import t_tensor as tt
>>> x = tt.arange(6).view(2, 3)
>>> y = x.T                          # a transpose: strides swap, nothing moves
>>> y.stride(), y.is_contiguous(), x.untyped_storage().use_count()
((1, 3), False, 2)
>>> x[1, 2] = 50
>>> y[2, 1].item()                   # the view sees the write
50
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from t_tensor import strides as S
from t_tensor.autograd import grad_mode
from t_tensor.autograd.function import FUNCTIONS

if TYPE_CHECKING:
    from t_tensor.tensor import Tensor

__all__ = [
    "as_strided",
    "broadcast_tensors",
    "broadcast_to",
    "chunk",
    "flatten",
    "narrow",
    "permute",
    "reshape",
    "select",
    "split",
    "squeeze",
    "swapaxes",
    "t",
    "transpose",
    "unbind",
    "unsqueeze",
]


_new = object.__new__
_GRAD = grad_mode.STATE
_prod = math.prod
_contiguous_strides = S.contiguous_strides_of_valid_shape


def _shape_args(args: tuple, fn: str) -> tuple[int, ...]:
    """Accept both ``f(2, 3)`` and ``f((2, 3))`` (and a list), as PyTorch does."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for value in args:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"{fn}: sizes must be ints, got {type(value).__name__}")
    return tuple(int(v) for v in args)


class ViewOps:
    """View methods mixed into :class:`~t_tensor.tensor.Tensor`."""

    __slots__ = ()

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Tensor:
        """A tensor over the same storage with new metadata (one more strong reference). Every
        view is made here, so this is also where views join the autograd graph."""
        if self._ag is not None and _GRAD.enabled and self._ag.requires_grad:
            return FUNCTIONS["View"].make(self, shape, strides, offset)
        result = _new(type(self))  # TensorImpl._make, inlined: views are made on every index
        result._storage = self._storage.share()
        result._shape = shape
        result._strides = strides
        result._offset = offset
        result._dtype = self._dtype
        result._dense = None
        result._ag = None
        return result

    # ------------------------------------------------------------------ reshaping

    def view(self, *shape) -> Tensor:
        """The same data with a new shape, without copying; fails when the strides don't allow it.

        One dimension may be -1 (inferred). Use :meth:`reshape` to copy when needed.

        >>> import t_tensor as tt
        >>> tt.arange(6).view(2, -1).shape
        (2, 3)
        """
        if self._dense or self._is_dense():
            result = self._dense_view(shape)
            if result is not None:
                return result
        new_shape = S.infer_size(_shape_args(shape, "view"), self.numel(), fn="view")
        new_strides = S.view_strides(self._shape, self._strides, new_shape, fn="view")
        if new_strides is None:
            raise RuntimeError(
                "view: view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        return self._view(new_shape, new_strides, self._offset)

    def _dense_view(self, shape: tuple) -> Tensor | None:
        """Fast path of view and reshape for a contiguous tensor: plain int sizes (``f(2, -1)`` or
        ``f((2, -1))``), at most one -1, holding its elements, give the contiguous strides of the
        new shape (what view_strides computes for it). None for the general path, which also
        raises the errors. A (4, 4) reshape(2, 8): 5.4 -> about 1 us."""
        sizes = shape[0] if len(shape) == 1 and type(shape[0]) in (tuple, list) else shape
        numel = _prod(self._shape)
        explicit = True
        for size in sizes:
            if type(size) is not int or size < 0:
                explicit = False
                break
        if explicit:  # the commonest call: one loop and a product
            if _prod(sizes) != numel:
                return None
            sizes = tuple(sizes)
        else:  # a -1 to resolve (or a size the general path refuses)
            known, infer = 1, -1
            for i, size in enumerate(sizes):
                if type(size) is not int:
                    return None
                if size >= 0:
                    known *= size
                elif size == -1 and infer < 0:
                    infer = i
                else:
                    return None
            if infer < 0 or known == 0 or numel % known:
                return None
            sizes = (*sizes[:infer], numel // known, *sizes[infer + 1 :])
        result = self._view(sizes, _contiguous_strides(sizes), self._offset)
        result._dense = True
        return result

    def reshape(self, *shape) -> Tensor:
        """A view with the new shape when the strides allow it, otherwise a contiguous copy.

        >>> import t_tensor as tt
        >>> x = tt.arange(6).view(2, 3).T          # not viewable as (6,)
        >>> x.reshape(-1).tolist()
        [0, 3, 1, 4, 2, 5]
        """
        if self._dense or self._is_dense():
            result = self._dense_view(shape)
            if result is not None:
                return result
        new_shape = S.infer_size(_shape_args(shape, "reshape"), self.numel(), fn="reshape")
        new_strides = S.view_strides(self._shape, self._strides, new_shape, fn="reshape")
        if new_strides is not None:
            return self._view(new_shape, new_strides, self._offset)
        result = self.contiguous()
        return result._view(new_shape, S.contiguous_strides(new_shape), result._offset)

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dimensions start_dim..end_dim into one (a view when possible).

        >>> import t_tensor as tt
        >>> tt.zeros(2, 3, 4).flatten(1).shape
        (2, 12)
        """
        if self.ndim == 0:
            return self.reshape(1)
        start = S.normalize_dim(start_dim, self.ndim, fn="flatten")
        end = S.normalize_dim(end_dim, self.ndim, fn="flatten")
        if start > end:
            raise RuntimeError("flatten: start_dim cannot come after end_dim")
        if start == end:
            return self  # nothing to merge; PyTorch also returns the input itself
        merged = S.numel(self._shape[start : end + 1])
        return self.reshape(self._shape[:start] + (merged,) + self._shape[end + 1 :])

    # ------------------------------------------------------------------ reordering

    def permute(self, *dims) -> Tensor:
        """Reorder dimensions: result dimension i is input dimension dims[i].

        >>> import t_tensor as tt
        >>> tt.zeros(2, 3, 4).permute(2, 0, 1).shape
        (4, 2, 3)
        """
        shape, strides = S.permute(self._shape, self._strides, _shape_args(dims, "permute"), fn="permute")
        return self._view(shape, strides, self._offset)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions.

        >>> import t_tensor as tt
        >>> tt.zeros(2, 3).transpose(0, 1).shape
        (3, 2)
        """
        shape, strides = S.transpose(self._shape, self._strides, dim0, dim1)
        return self._view(shape, strides, self._offset)

    swapaxes = transpose
    swapdims = transpose

    def t(self) -> Tensor:
        """Transpose of a tensor with at most 2 dimensions."""
        if self.ndim > 2:
            raise RuntimeError(f"t: expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self if self.ndim < 2 else self.transpose(0, 1)

    @property
    def T(self) -> Tensor:
        """All dimensions reversed (the matrix transpose for 2-D).

        A permutation that needs no checking: the reversed shape and strides directly.
        """
        return self._view(self._shape[::-1], self._strides[::-1], self._offset)

    @property
    def mT(self) -> Tensor:
        """The last two dimensions swapped (a batch of matrices transposed)."""
        if self.ndim < 2:
            raise RuntimeError(
                f"mT: tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    # ------------------------------------------------------------------ adding and removing size-1 dims

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tensor:
        """Remove dimensions of size 1 (all, or those among ``dim`` that have size 1).

        >>> import t_tensor as tt
        >>> tt.zeros(1, 3, 1).squeeze().shape, tt.zeros(1, 3, 1).squeeze(0).shape
        ((3,), (3, 1))
        """
        shape, strides = S.squeeze(self._shape, self._strides, dim)
        return self._view(shape, strides, self._offset)

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a dimension of size 1 at position ``dim``.

        >>> import t_tensor as tt
        >>> tt.zeros(3).unsqueeze(0).shape, tt.zeros(3).unsqueeze(-1).shape
        ((1, 3), (3, 1))
        """
        shape, strides = S.unsqueeze(self._shape, self._strides, dim)
        return self._view(shape, strides, self._offset)

    # ------------------------------------------------------------------ broadcasting

    def expand(self, *sizes) -> Tensor:
        """Repeat size-1 dimensions (and add leading ones) without copying: their stride is 0.

        >>> import t_tensor as tt
        >>> x = tt.tensor([[1], [2]]).expand(2, 3)
        >>> x.tolist(), x.stride()
        ([[1, 1, 1], [2, 2, 2]], (1, 0))
        """
        new_shape = _shape_args(sizes, "expand")
        strides = S.expand_strides(self._shape, self._strides, new_shape, fn="expand")
        resolved = tuple(
            self._shape[i - (len(new_shape) - self.ndim)] if size == -1 else size for i, size in enumerate(new_shape)
        )
        return self._view(resolved, strides, self._offset)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        """Same as :meth:`expand`, under NumPy's name."""
        return self.expand(tuple(shape))

    # ------------------------------------------------------------------ selecting

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """Elements start..start+length-1 along ``dim``.

        >>> import t_tensor as tt
        >>> tt.arange(10).narrow(0, 2, 3).tolist()
        [2, 3, 4]
        """
        dim = S.normalize_dim(dim, self.ndim, fn="narrow")
        if self.ndim == 0:
            raise RuntimeError("narrow: cannot be applied to a 0-dim tensor.")
        start = S.narrow_check(self._shape[dim], start, length, fn="narrow")
        shape = self._shape[:dim] + (length,) + self._shape[dim + 1 :]
        return self._view(shape, self._strides, self._offset + start * self._strides[dim])

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at ``index`` along ``dim``, with that dimension removed."""
        if self.ndim == 0:
            raise IndexError("select: cannot be applied to a 0-dim tensor.")
        dim = S.normalize_dim(dim, self.ndim, fn="select")
        key = (slice(None),) * dim + (index,)
        return self[key]

    def split(self, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces of a given size (the last may be smaller), or of the given sizes, along ``dim``.

        >>> import t_tensor as tt
        >>> [p.tolist() for p in tt.arange(5).split(2)]
        [[0, 1], [2, 3], [4]]
        """
        if self.ndim == 0:
            raise RuntimeError("split: expected at least a 1-dimensional tensor")
        dim = S.normalize_dim(dim, self.ndim, fn="split")
        sizes = S.split_sizes(self._shape[dim], split_size_or_sections, fn="split")
        return self._pieces(dim, sizes)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """Split into ``chunks`` pieces of equal size (the last may be smaller; maybe fewer pieces).

        >>> import t_tensor as tt
        >>> [p.numel() for p in tt.arange(5).chunk(3)]
        [2, 2, 1]
        """
        if self.ndim == 0:
            raise RuntimeError("chunk: expected at least a 1-dimensional tensor")
        dim = S.normalize_dim(dim, self.ndim, fn="chunk")
        return self._pieces(dim, S.chunk_sizes(self._shape[dim], chunks, fn="chunk"))

    def _pieces(self, dim: int, sizes: Sequence[int]) -> tuple[Tensor, ...]:
        pieces, start = [], 0
        for size in sizes:
            shape = self._shape[:dim] + (size,) + self._shape[dim + 1 :]
            pieces.append(self._view(shape, self._strides, self._offset + start * self._strides[dim]))
            start += size
        return tuple(pieces)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """All slices along ``dim``, each with that dimension removed.

        >>> import t_tensor as tt
        >>> [r.tolist() for r in tt.arange(4).view(2, 2).unbind(1)]
        [[0, 2], [1, 3]]
        """
        if self.ndim == 0:
            raise IndexError("unbind: dimension specified as 0 but tensor has no dimensions")
        dim = S.normalize_dim(dim, self.ndim, fn="unbind")
        shape = self._shape[:dim] + self._shape[dim + 1 :]
        strides = self._strides[:dim] + self._strides[dim + 1 :]
        step = self._strides[dim]
        return tuple(self._view(shape, strides, self._offset + i * step) for i in range(self._shape[dim]))

    def as_strided(self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
        """Any (size, stride, offset) window onto this tensor's storage, checked against its bounds.

        >>> import t_tensor as tt
        >>> tt.arange(6).as_strided((2, 2), (1, 2), 1).tolist()
        [[1, 3], [2, 4]]
        """
        offset = self._offset if storage_offset is None else storage_offset
        size = _shape_args((size,), "as_strided")
        stride = _shape_args((stride,), "as_strided")
        storage_numel = self._storage.nbytes // self._dtype.itemsize
        S.as_strided_check(size, stride, offset, storage_numel, fn="as_strided")
        return self._view(size, stride, int(offset))


# ---------------------------------------------------------------------- functional forms


def reshape(x: Tensor, shape: Sequence[int], *, copy: bool | None = None) -> Tensor:
    """Functional :meth:`Tensor.reshape`; ``copy`` as in the array API standard.

    ``copy=None`` gives a view when the strides allow it, else a copy; ``copy=True`` always
    copies; ``copy=False`` never does, and raises ValueError when a view is impossible.

    >>> import t_tensor as tt
    >>> x = tt.arange(6).view(2, 3)
    >>> tt.reshape(x, (3, 2), copy=False).data_ptr() == x.data_ptr()
    True
    >>> tt.reshape(x.T, (6,), copy=False)
    Traceback (most recent call last):
    ...
    ValueError: reshape: copy=False, but the strides make a view impossible (a copy is needed)
    """
    if copy is None:
        return x.reshape(tuple(shape))
    if copy:
        return x.clone().reshape(tuple(shape))
    new_shape = S.infer_size(_shape_args((tuple(shape),), "reshape"), x.numel(), fn="reshape")
    new_strides = S.view_strides(x._shape, x._strides, new_shape, fn="reshape")
    if new_strides is None:
        raise ValueError("reshape: copy=False, but the strides make a view impossible (a copy is needed)")
    return x._view(new_shape, new_strides, x._offset)


def permute(x: Tensor, dims: Sequence[int]) -> Tensor:
    """Functional :meth:`Tensor.permute`."""
    return x.permute(tuple(dims))


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Functional :meth:`Tensor.transpose`."""
    return x.transpose(dim0, dim1)


swapaxes = transpose


def t(x: Tensor) -> Tensor:
    """Functional :meth:`Tensor.t`."""
    return x.t()


def squeeze(x: Tensor, dim: int | Sequence[int] | None = None, *, axis: int | Sequence[int] | None = None) -> Tensor:
    """Functional :meth:`Tensor.squeeze`; ``axis=`` is the array API's name for ``dim``.

    As in PyTorch, a named dimension whose size is not 1 is left alone.

    >>> import t_tensor as tt
    >>> tt.squeeze(tt.zeros(1, 3, 1), axis=(0, 2)).shape
    (3,)
    """
    if axis is not None:
        if dim is not None:
            raise TypeError("squeeze: got both dim and axis (they are the same argument)")
        dim = axis
    return x.squeeze(dim)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Functional :meth:`Tensor.unsqueeze`."""
    return x.unsqueeze(dim)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Functional :meth:`Tensor.flatten`."""
    return x.flatten(start_dim, end_dim)


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Functional :meth:`Tensor.narrow`."""
    return x.narrow(dim, start, length)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """Functional :meth:`Tensor.select`."""
    return x.select(dim, index)


def split(x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Functional :meth:`Tensor.split`."""
    return x.split(split_size_or_sections, dim)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Functional :meth:`Tensor.chunk`."""
    return x.chunk(chunks, dim)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Functional :meth:`Tensor.unbind`."""
    return x.unbind(dim)


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    """Functional :meth:`Tensor.broadcast_to`."""
    return x.broadcast_to(shape)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Expand every tensor to their common broadcast shape (views, no copies).

    >>> import t_tensor as tt
    >>> a, b = tt.broadcast_tensors(tt.zeros(3, 1), tt.zeros(4))
    >>> a.shape, b.shape
    ((3, 4), (3, 4))
    """
    shape = S.broadcast_shapes(*(x.shape for x in tensors), fn="broadcast_tensors")
    return tuple(x.expand(shape) for x in tensors)


def as_strided(x: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """Functional :meth:`Tensor.as_strided`."""
    return x.as_strided(size, stride, storage_offset)
