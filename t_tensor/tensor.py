"""Tensor: a :class:`~t_tensor.tensor_impl.TensorImpl` plus the operations users call.

This module holds what every tensor needs from day one: copying and casting through the C
strided copy kernel, indexing, conversion to Python and NumPy, and the DLPack protocol. Views
come from :class:`~t_tensor.views.ViewOps`, arithmetic and comparisons from
:class:`~t_tensor.elementwise.ElementwiseOps`,
matrix products from :class:`~t_tensor.linalg.LinalgOps`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from t_tensor import _cfast, dtypes, indexing
from t_tensor import strides as S
from t_tensor._capi import check, ffi, lib
from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import STATE as _GRAD
from t_tensor.autograd.grad_mode import no_grad, wants_grad
from t_tensor.autograd.graph import bump_version
from t_tensor.autograd.tensor_methods import AutogradOps
from t_tensor.dtypes import DType
from t_tensor.elementwise import ElementwiseOps
from t_tensor.indexing import IndexingOps
from t_tensor.interop import array_interface, to_dlpack_capsule
from t_tensor.linalg import LinalgOps
from t_tensor.manipulation import ManipulationOps
from t_tensor.printing import tensor_repr
from t_tensor.reductions import ReductionOps
from t_tensor.sorting import SortingOps
from t_tensor.storage import Storage
from t_tensor.tensor_impl import TensorImpl
from t_tensor.views import ViewOps

__all__ = ["Tensor", "check_device", "copy_into"]


def check_device(device: Any, fn: str) -> None:
    """Accept ``None`` or the CPU (``'cpu'``, or any object whose ``str`` is ``'cpu'``); refuse the rest."""
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"{fn}: only the 'cpu' device exists, got {device!r}")


def copy_into(dst: TensorImpl, src: TensorImpl, shape: tuple[int, ...], src_strides: tuple[int, ...]) -> None:
    """Run the C copy kernel: dst[i] = src[i] over ``shape``, converting dtypes."""
    if len(shape) > _MAX_DIMS:
        raise RuntimeError(f"copy_: tensors with more than {_MAX_DIMS} dimensions are not supported, got {len(shape)}")
    status = lib.tt_copy_strided(
        len(shape), shape,
        src.data_ptr(), src_strides, src._dtype.code,
        dst.data_ptr(), dst._strides, dst._dtype.code,
    )
    check(status, "copy_")


_MAX_DIMS = lib.tt_max_dims()
_simple_index = S.simple_index
_INT64 = dtypes.int64
_prod = math.prod

# item() reads the element through a typed C pointer (cffi gives a Python int or float), by dtype code.
_ITEM_POINTERS = tuple(
    None if ctype is None else ffi.typeof(ctype)
    for ctype in ("uint8_t *", "int8_t *", "int16_t *", "int32_t *", "int64_t *", "uint8_t *", None, "float *",
                  "double *")
)

# The array API standard versions whose namespace t_tensor is (each is a subset of the next).
_API_VERSIONS = ("2021.12", "2022.12", "2023.12")

# A scalar is written by copying from a one-element source with all strides 0 (a broadcast).
_SCALAR_TYPES = {
    bool: (dtypes.bool, "uint8_t *"),
    int: (dtypes.int64, "int64_t *"),
    float: (dtypes.float64, "double *"),
}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _full_like(x: Tensor, value: Any) -> Tensor:
    from t_tensor.creation import full

    return full(x._shape, value, dtype=x._dtype)


def _broadcast_copy(src: Tensor, like: Tensor) -> Tensor:
    """``src`` converted to ``like``'s dtype and broadcast to its shape, as a new tensor (what
    copy_ writes, computed out of place so that autograd can record it)."""
    converted = src.to(like._dtype)
    return converted.expand(like._shape).clone() if converted._shape != like._shape else converted.clone()


def _check_scalar_fits(value: Any, dtype: DType, fn: str) -> None:
    """PyTorch refuses to write a number an integer dtype cannot hold; so do we."""
    if dtype.kind not in "iu":
        return
    info = dtypes.iinfo(dtype)
    if isinstance(value, float) and not math.isfinite(value):
        raise RuntimeError(f"{fn}: value {value} cannot be converted to type {dtype.name} without overflow")
    if not info.min <= int(value) <= info.max:
        raise RuntimeError(f"{fn}: value {value} cannot be converted to type {dtype.name} without overflow")


def _python_scalar(value: Any, fn: str) -> bool | int | float:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"{fn}: expected a number or a one-element tensor, got shape {value.shape}")
        return value.item()
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise TypeError(f"{fn}: expected a number, got {type(value).__name__}")


class Tensor(AutogradOps, ViewOps, ElementwiseOps, ManipulationOps, SortingOps, IndexingOps, LinalgOps, ReductionOps,
             TensorImpl):
    """An n-dimensional array of one dtype over reference-counted storage.

    Make tensors with :func:`t_tensor.tensor`, :func:`t_tensor.zeros`, :func:`t_tensor.from_numpy`
    and the other creation functions, not with this class.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[1, 2], [3, 4]])
    >>> x.shape, x.dtype, x.stride()
    ((2, 2), t_tensor.int64, (2, 1))
    """

    __slots__ = ("__weakref__",)

    def __new__(cls, *args: Any, **kwargs: Any):
        raise TypeError("Tensor: use t_tensor.tensor(data), t_tensor.empty(shape) or another creation function")

    # ------------------------------------------------------------------ printing

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    @property
    def device(self) -> str:
        """Where the data lives. Always ``'cpu'``."""
        return "cpu"

    # ------------------------------------------------------------------ the array API standard

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The module holding the array API standard's functions for this tensor: ``t_tensor``.

        >>> import t_tensor as tt
        >>> tt.zeros(2).__array_namespace__() is tt
        True
        """
        import t_tensor

        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(
                f"__array_namespace__: unsupported array API version {api_version!r}; "
                f"supported: {', '.join(_API_VERSIONS)}"
            )
        return t_tensor

    def to_device(self, device: Any, /, stream: Any = None) -> Tensor:
        """This tensor on ``device``; the only device is ``'cpu'``, so it is the tensor itself.

        >>> import t_tensor as tt
        >>> x = tt.zeros(2)
        >>> x.to_device("cpu") is x
        True
        """
        check_device(device, "to_device")
        if stream is not None:
            raise ValueError(f"to_device: stream must be None for the CPU, got {stream!r}")
        return self

    # ------------------------------------------------------------------ copies and casts

    def contiguous(self) -> Tensor:
        """This tensor if it is already contiguous, else a contiguous copy.

        >>> import t_tensor as tt
        >>> x = tt.zeros(2, 3).T
        >>> x.is_contiguous(), x.contiguous().is_contiguous()
        (False, True)
        """
        if self.is_contiguous():
            return self
        return self.clone()

    def clone(self) -> Tensor:
        """A contiguous copy with its own storage."""
        return self._copy_as(self._dtype, "clone")

    def _copy_as(self, dtype: DType, fn: str) -> Tensor:
        """A new contiguous tensor holding this one's values converted to ``dtype``."""
        if self._ag is not None and _GRAD.enabled and self._ag.requires_grad:
            return FUNCTIONS["Copy"].apply(self, dtype, fn)
        result = Tensor._empty(self._shape, dtype, fn)
        copy_into(result, self, self._shape, self._strides)
        return result

    def to(self, dtype: Any = None, *, copy: bool = False, device: Any = None) -> Tensor:
        """This tensor converted to ``dtype`` (itself when it already has that dtype and not ``copy``).

        ``device`` may be ``'cpu'``; a dtype may also be given positionally after a device.

        >>> import t_tensor as tt
        >>> tt.tensor([1.7, -1.7]).to(tt.int32).tolist()
        [1, -1]
        """
        if isinstance(dtype, str) and dtype == "cpu":
            dtype = None
        check_device(device, "to")
        target = self._dtype if dtype is None else dtypes.as_dtype(dtype, fn="to")
        if target is self._dtype and not copy:
            return self
        return self._copy_as(target, "to")

    def type(self, dtype: Any = None):
        """The dtype name (no argument) or a copy converted to ``dtype``."""
        if dtype is None:
            return f"t_tensor.{self._dtype.name}"
        return self.to(dtype)

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def half(self) -> Tensor:
        return self.to(dtypes.float16)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def short(self) -> Tensor:
        return self.to(dtypes.int16)

    def char(self) -> Tensor:
        return self.to(dtypes.int8)

    def byte(self) -> Tensor:
        return self.to(dtypes.uint8)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool)

    def copy_(self, src: Any) -> Tensor:
        """Write ``src`` (broadcast to this shape, converted to this dtype) into this tensor's memory.

        >>> import t_tensor as tt
        >>> x = tt.zeros(2, 3)
        >>> _ = x.copy_(tt.tensor([1, 2, 3]))
        >>> x.tolist()
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
        """
        from t_tensor.creation import tensor as make_tensor

        if not isinstance(src, Tensor):
            src = make_tensor(src)
        if wants_grad(self, src):
            return FUNCTIONS["apply_inplace"](self, lambda old: _broadcast_copy(src, self), "copy_", False)
        self._check_writable("copy_")
        src_strides = S.expand_strides(src._shape, src._strides, self._shape, fn="copy_")
        if self._overlaps(src):
            src = src.clone()  # reading while writing the same bytes would see half-written data
            src_strides = S.expand_strides(src._shape, src._strides, self._shape, fn="copy_")
        copy_into(self, src, self._shape, src_strides)
        bump_version(self)
        return self

    def fill_(self, value: Any) -> Tensor:
        """Set every element to ``value``.

        >>> import t_tensor as tt
        >>> tt.empty(3, dtype=tt.int32).fill_(7).tolist()
        [7, 7, 7]
        """
        if isinstance(value, Tensor) and wants_grad(self, value):
            return self.copy_(value.reshape(()) if value.numel() == 1 else value)
        if wants_grad(self):
            return FUNCTIONS["apply_inplace"](self, lambda old: _full_like(old, value), "fill_", False)
        scalar = _python_scalar(value, "fill_")
        _check_scalar_fits(scalar, self._dtype, "fill_")
        self._check_writable("fill_")
        if type(scalar) is int and not _INT64_MIN <= scalar <= _INT64_MAX:
            raise RuntimeError(f"fill_: value {scalar} does not fit in int64")
        return self._fill_unchecked(scalar)

    def _fill_unchecked(self, scalar: bool | int | float) -> Tensor:
        """fill_ for a value and a tensor already known to be valid (e.g. a fresh zeros())."""
        if len(self._shape) > _MAX_DIMS:
            raise RuntimeError(f"fill_: tensors with more than {_MAX_DIMS} dimensions are not supported")
        src_dtype, ctype = _SCALAR_TYPES[type(scalar)]
        buffer = ffi.new(ctype, scalar)
        status = lib.tt_copy_strided(
            len(self._shape), self._shape, int(ffi.cast("uintptr_t", buffer)), (0,) * len(self._shape),
            src_dtype.code, self.data_ptr(), self._strides, self._dtype.code,
        )
        check(status, "fill_")
        bump_version(self)
        return self

    def zero_(self) -> Tensor:
        """Set every element to zero."""
        return self.fill_(0)

    def _has_internal_overlap(self) -> bool:
        """``strides.has_internal_overlap`` of this layout; a dense tensor, the common case, has
        none and skips the walk (~1.5 us, a third of a small product with out=)."""
        return not (self._dense or self._is_dense()) and S.has_internal_overlap(self._shape, self._strides)

    def _check_writable(self, fn: str) -> None:
        if self._has_internal_overlap():
            raise RuntimeError(
                f"{fn}: unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation."
            )

    def _overlaps(self, other: TensorImpl) -> bool:
        """True when the byte ranges the two tensors span intersect. Addresses, not storages, are
        compared: two storages can wrap one buffer (``from_numpy`` of overlapping slices)."""
        if self.numel() == 0 or other.numel() == 0:
            return False
        a_start, b_start = self.data_ptr(), other.data_ptr()
        return a_start < b_start + other._byte_span() and b_start < a_start + self._byte_span()

    def _byte_span(self) -> int:
        """Bytes from the first element to past the last one (a dense tensor: its nbytes, without
        the stride walk, which an optimizer pays per parameter per step)."""
        if self._dense or self._is_dense():
            return self.nbytes
        return S.storage_extent(self._shape, self._strides, 0) * self.itemsize

    # ------------------------------------------------------------------ indexing

    def __getitem__(self, key: Any) -> Tensor:
        """Basic indexing (ints, slices with positive steps, None, ...) returns a view; a key with
        a tensor, list, array or bool is advanced indexing (:mod:`t_tensor.indexing`), a copy.

        >>> import t_tensor as tt
        >>> x = tt.arange(12).view(3, 4)
        >>> x[1].tolist(), x[:, ::2].shape, x[None, ..., -1].shape
        ([4, 5, 6, 7], (3, 2), (1, 3))
        >>> x[[0, 2], 1:3].tolist()
        [[1, 2], [9, 10]]
        """
        if type(key) is type(self) and key._dtype is _INT64 and len(key._shape) == 1:   # rows by an index
            result = indexing.index_rows(self, key)
            if result is not None:
                return result
        simple = _simple_index(self._shape, self._strides, self._offset, key)
        if simple is not None:
            return self._view(*simple)
        if indexing.is_advanced(key):
            return indexing.getitem(self, key)
        shape, strides, offset = S.basic_index(self._shape, self._strides, self._offset, key, fn="__getitem__")
        return self._view(shape, strides, offset)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write ``value`` (a number, a tensor or array-like, broadcast) into the selected view.

        >>> import t_tensor as tt
        >>> x = tt.zeros(2, 3, dtype=tt.int64)
        >>> x[:, 1] = 5
        >>> x[0] = tt.tensor([1, 2, 3])
        >>> x.tolist()
        [[1, 2, 3], [0, 5, 0]]
        """
        if indexing.is_advanced(key):
            indexing.setitem(self, key, value)
            return
        if wants_grad(value) and not self.requires_grad:
            # A tensor without grad receives values that have one: it joins the graph, its history
            # being "these values in this region" (PyTorch's CopySlices).
            with no_grad():
                self[key] = value
                region = self[key]
            geometry = (region._shape, region._strides, region._offset)
            self._ag = FUNCTIONS["WriteView"].apply(self, value, geometry)._ag
            return
        target = self[key]
        if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            target.fill_(value)
        else:
            target.copy_(value)

    # ------------------------------------------------------------------ Python conversions

    def item(self) -> bool | int | float:
        """The single element as a Python number.

        >>> import t_tensor as tt
        >>> tt.tensor([[2.5]]).item()
        2.5
        """
        if _prod(self._shape) != 1:
            raise RuntimeError(f"item: a Tensor with {self.numel()} elements cannot be converted to Scalar")
        dtype = self._dtype
        pointer = _ITEM_POINTERS[dtype.code]
        if pointer is None:  # float16: NumPy converts it
            return np.asarray(self).reshape(()).item()
        value = ffi.cast(pointer, self._storage._data + self._offset * dtype.itemsize)[0]
        return bool(value) if dtype is dtypes.bool else value

    def tolist(self) -> Any:
        """Nested Python lists of Python numbers (a number for a 0-d tensor).

        >>> import t_tensor as tt
        >>> tt.tensor([[1, 2], [3, 4]]).tolist()
        [[1, 2], [3, 4]]
        """
        return np.asarray(self).tolist()

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no' if self.numel() == 0 else 'more than one'} "
                "value is ambiguous"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self._scalar("__float__"))

    def __int__(self) -> int:
        return int(self._scalar("__int__"))

    def __index__(self) -> int:
        if self._dtype.kind not in "iu" or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def _scalar(self, fn: str) -> bool | int | float:
        if self.numel() != 1:
            raise TypeError(f"{fn}: only one element tensors can be converted to Python scalars")
        return self.item()

    # ------------------------------------------------------------------ NumPy and DLPack

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return array_interface(self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = np.asarray(_ArrayView(self))
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError("__array__: a dtype change needs a copy, but copy=False was given")
            return array.astype(dtype)
        return array.copy() if copy else array

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy array sharing this tensor's memory (a copy with ``force=True``).

        >>> import t_tensor as tt
        >>> x = tt.zeros(3)
        >>> a = x.numpy(); a[0] = 5
        >>> x[0].item()
        5.0
        """
        array = np.asarray(_ArrayView(self))
        return array.copy() if force else array

    def __dlpack__(
        self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None, copy: bool | None = None,
    ) -> Any:
        """Export as a DLPack capsule (zero copy unless ``copy=True``); see :func:`t_tensor.from_dlpack`."""
        if stream is not None and stream != -1:
            raise ValueError(f"__dlpack__: stream must be None for CPU tensors, got {stream!r}")
        if dl_device is not None and tuple(dl_device)[0] != 1:
            raise BufferError(f"__dlpack__: cannot export a CPU tensor to device {dl_device}")
        source = self.clone() if copy else self
        versioned = max_version is not None and max_version[0] >= 1
        return to_dlpack_capsule(source, versioned, copied=bool(copy))

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


# The plain cases of the operators, unary and in-place methods, and Storage's finalizer, run in C
# from here on (t_tensor/_cfast.py).
_cfast.install(Tensor, Storage)


class _ArrayView:
    """What NumPy wraps: it becomes the array's ``base`` and keeps the tensor (and storage) alive.

    A separate object, rather than the tensor itself, so that the tensor's own
    ``__array__`` is not consulted recursively.
    """

    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor
        self.__array_interface__ = array_interface(tensor)
