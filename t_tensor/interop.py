"""Zero-copy exchange with NumPy and with any DLPack library (PyTorch, JAX, CuPy, ...).

Lifetimes are the point of this module: memory is shared, so whoever frees it last must be the
one that frees it, whichever library that is.

* NumPy -> t_tensor (:func:`from_numpy`): the array's memory is wrapped in an *external* C
  storage. The storage keeps a handle to the array; the storage's deleter (a cffi callback)
  drops that handle when the last strong reference goes, and only then may NumPy free it.
* t_tensor -> NumPy (``Tensor.numpy()``, ``np.asarray(t)``): NumPy reads
  ``__array_interface__`` and keeps the tensor as the array's ``base``; the tensor keeps its
  storage.
* DLPack out (``Tensor.__dlpack__``): the exported C struct owns a strong reference to the
  storage; the consumer calls its deleter when done (or the capsule does, if nobody consumed it).
* DLPack in (:func:`from_dlpack`): the producer's struct becomes the context of an external
  storage whose deleter calls the producer's deleter.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from t_tensor import dtypes
from t_tensor import strides as S
from t_tensor._capi import check, ffi, lib
from t_tensor.storage import Storage, adopt

if TYPE_CHECKING:
    from t_tensor.tensor import Tensor

__all__ = ["from_numpy", "wrap_numpy", "from_dlpack", "array_interface", "to_dlpack_capsule"]

# ---------------------------------------------------------------------- keeping Python objects alive
# A C storage that wraps a Python object's memory holds a cffi handle to that object. The handle
# itself must stay alive until the storage is done, so it is parked here, keyed by its address.

_handles: dict[int, Any] = {}
_UINTPTR = ffi.typeof("uintptr_t")
_VOID_P = ffi.typeof("void *")  # parsed once: casts run on every from_numpy


def _park(obj: Any):
    handle = ffi.new_handle(obj)
    _handles[int(ffi.cast(_UINTPTR, handle))] = handle
    return handle


@ffi.def_extern()
def tt_py_release_handle(ctx, data):  # noqa: ARG001 - the C deleter signature
    """Called by C when the last strong reference to a wrapped NumPy array's storage goes."""
    try:
        _handles.pop(int(ffi.cast(_UINTPTR, ctx)), None)
    except Exception:  # interpreter shutdown: the dict may already be gone; nothing to free then
        pass


def _address(cdata) -> int:
    return int(ffi.cast(_UINTPTR, cdata))


# ---------------------------------------------------------------------- NumPy


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (no copy); the array stays alive as long as needed.

    Like PyTorch, negative strides are refused (copy the array first), and a read-only array is
    shared with a warning: writing through the tensor would change memory NumPy considers
    immutable.

    >>> import numpy as np, t_tensor as tt
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> t = tt.from_numpy(a)
    >>> t[0, 0] = 100
    >>> a[0, 0]
    np.float32(100.0)
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    if not array.flags.writeable:
        warnings.warn(
            "from_numpy: the given NumPy array is not writable; the tensor shares its memory anyway, "
            "so writing through the tensor is undefined behaviour",
            UserWarning,
            stacklevel=2,
        )
    return wrap_numpy(array, "from_numpy")


def wrap_numpy(array: np.ndarray, fn: str) -> Tensor:
    """The zero-copy wrapping behind :func:`from_numpy`, for callers that checked the array."""
    global _Tensor
    if _Tensor is None:  # imported on first use: tensor.py imports this module
        from t_tensor.tensor import Tensor as _Tensor

    dtype = _NUMPY_DTYPES.get(array.dtype) or dtypes.from_numpy_dtype(array.dtype, fn=fn)
    itemsize = dtype.itemsize
    shape = array.shape
    strides = []
    extent = 1  # storage elements needed: one past the farthest element (0 if empty)
    for size, step in zip(shape, array.strides, strict=True):
        if step < 0:
            raise ValueError(
                f"{fn}: at least one stride in the given numpy array is negative; tensors do not "
                "support negative strides (use array.copy())"
            )
        elements, remainder = divmod(step, itemsize)
        if remainder:
            raise ValueError(f"{fn}: strides {array.strides} are not multiples of the element size {itemsize}")
        strides.append(elements)
        extent = 0 if size == 0 or extent == 0 else extent + (size - 1) * elements
    flags = array.flags
    if not flags.aligned:
        raise ValueError(f"{fn}: the array is not aligned to its element size (use array.copy())")
    # The address of the first element: through the buffer protocol (fast) for C-contiguous
    # arrays with elements, else NumPy's ctypes attribute.
    if flags.c_contiguous and extent:
        address = _address(ffi.from_buffer(array))
    else:
        address = array.ctypes.data
    handle = _park(array)
    ptr = lib.tt_external_new(ffi.cast(_VOID_P, address), extent * itemsize, lib.tt_py_release_handle, handle)
    if not ptr:
        _handles.pop(_address(handle), None)
        raise MemoryError(f"{fn}: out of memory")
    return _Tensor._make(adopt(ptr), shape, tuple(strides), 0, dtype)


_Tensor = None

# NumPy dtypes t_tensor has, for the per-call lookup (anything else goes through from_numpy_dtype,
# which also explains why it is refused).
_NUMPY_DTYPES = {dtype.numpy: dtype for dtype in dtypes.ALL_DTYPES}


def array_interface(tensor: Tensor) -> dict[str, Any]:
    """The ``__array_interface__`` dict (version 3) describing a tensor's memory."""
    dtype = tensor._dtype
    itemsize = dtype.itemsize
    return {
        "version": 3,
        "shape": tensor._shape,
        "typestr": dtype.typestr,
        "data": (tensor._storage._data + tensor._offset * itemsize, False),
        "strides": None if tensor.is_contiguous() else tuple(s * itemsize for s in tensor._strides),
    }


# ---------------------------------------------------------------------- DLPack: the capsule API
# PyCapsules can only be made and opened through the C API; ctypes.pythonapi calls it with the
# GIL held. Names are passed as addresses of static C strings (py_glue.c): a capsule keeps the
# pointer it was given, so a temporary Python bytes object would leave it dangling.

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_void_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]

_CAPSULE_DESTRUCTOR = lib.tt_py_capsule_destructor()


def _capsule_name(versioned: bool, used: bool = False) -> int:
    return _address(lib.tt_py_capsule_name(int(versioned), int(used)))


_DL_CPU = 1
_DL_CODES = {(0, 8): dtypes.int8, (0, 16): dtypes.int16, (0, 32): dtypes.int32, (0, 64): dtypes.int64,
             (1, 8): dtypes.uint8, (2, 16): dtypes.float16, (2, 32): dtypes.float32, (2, 64): dtypes.float64,
             (6, 8): dtypes.bool}
_DL_READ_ONLY = 1


_DL_IS_COPIED = 2


def to_dlpack_capsule(tensor: Tensor, versioned: bool, copied: bool = False) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory; it holds one strong reference to the storage.

    ``copied`` sets the versioned format's "is copied" flag (the tensor is a fresh copy made for
    this export, as ``__dlpack__(copy=True)`` does)."""
    out = ffi.new("void **")
    status = lib.tt_dlpack_export(
        tensor._storage._ptr, tensor.data_ptr(), tensor.ndim, tensor.shape, tensor.stride(),
        tensor.dtype.code, int(versioned), out,
    )
    check(status, "__dlpack__")
    managed = out[0]
    if versioned and copied:
        ffi.cast("DLManagedTensorVersioned *", managed).flags = _DL_IS_COPIED
    try:
        return _api.PyCapsule_New(_address(managed), _capsule_name(versioned), _CAPSULE_DESTRUCTOR)
    except BaseException:
        # No capsule owns the export: free it here, or the storage would never be released.
        if versioned:
            struct = ffi.cast("DLManagedTensorVersioned *", managed)
        else:
            struct = ffi.cast("DLManagedTensor *", managed)
        struct.deleter(struct)
        raise


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


def from_dlpack(source: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing memory with any object that speaks DLPack (or a raw DLPack capsule).

    ``device`` may only be ``'cpu'``. ``copy=True`` returns a copy with its own storage;
    ``copy=None`` and ``copy=False`` share memory (importing CPU memory never needs a copy).

    >>> import numpy as np, t_tensor as tt
    >>> a = np.arange(4.0)
    >>> t = tt.from_dlpack(a)
    >>> t.tolist(), t.data_ptr() == a.ctypes.data, tt.from_dlpack(a, copy=True).data_ptr() == a.ctypes.data
    ([0.0, 1.0, 2.0, 3.0], True, False)
    """
    from t_tensor.tensor import check_device

    check_device(device, "from_dlpack")
    if copy not in (None, True, False):
        raise TypeError(f"from_dlpack: copy must be True, False or None, got {copy!r}")
    shared = _import_dlpack(source)
    return shared.clone() if copy else shared


def _import_dlpack(source: Any) -> Tensor:
    """The zero-copy import behind :func:`from_dlpack`."""
    from t_tensor.tensor import Tensor

    if isinstance(source, Tensor):
        return source
    if _is_capsule(source):
        capsule = source
    elif hasattr(source, "__dlpack__"):
        if hasattr(source, "__dlpack_device__"):
            device_type, _ = source.__dlpack_device__()
            if int(device_type) != _DL_CPU:
                raise RuntimeError(f"from_dlpack: only CPU memory can be imported, got device type {device_type}")
        try:
            capsule = source.__dlpack__(max_version=(1, 0))
        except TypeError:  # producers older than DLPack 1.0 take no max_version
            capsule = source.__dlpack__()
    else:
        kind = type(source).__name__
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {kind}")

    if _api.PyCapsule_IsValid(capsule, _capsule_name(True)):
        versioned = True
    elif _api.PyCapsule_IsValid(capsule, _capsule_name(False)):
        versioned = False
    else:
        raise ValueError("from_dlpack: the capsule was already consumed or is not a DLPack capsule")
    address = _api.PyCapsule_GetPointer(capsule, _capsule_name(versioned))
    if versioned:
        managed = ffi.cast("DLManagedTensorVersioned *", address)
        if managed.version.major > 1:
            raise BufferError(f"from_dlpack: DLPack version {managed.version.major} is newer than 1")
    else:
        managed = ffi.cast("DLManagedTensor *", address)
    dl = managed.dl_tensor

    # Validate everything before taking ownership: on error the capsule still frees the tensor.
    if dl.device.device_type != _DL_CPU:
        raise RuntimeError(f"from_dlpack: only CPU memory can be imported, got device type {dl.device.device_type}")
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or key not in _DL_CODES:
        raise TypeError(f"from_dlpack: unsupported DLPack dtype (code={key[0]}, bits={key[1]}, lanes={dl.dtype.lanes})")
    dtype = _DL_CODES[key]
    ndim = dl.ndim
    if not 0 <= ndim <= lib.tt_max_dims():
        raise ValueError(f"from_dlpack: ndim {ndim} out of range")
    shape = tuple(dl.shape[i] for i in range(ndim))
    if dl.strides == ffi.NULL:
        strides = S.contiguous_strides(shape)
    else:
        strides = tuple(dl.strides[i] for i in range(ndim))
    if any(s < 0 for s in shape):
        raise ValueError(f"from_dlpack: negative size in shape {shape}")
    if any(st < 0 for st in strides):
        raise ValueError(f"from_dlpack: negative strides {strides} are not supported (copy in the producer first)")
    data = _address(dl.data) + int(dl.byte_offset)
    nbytes = S.storage_extent(shape, strides, 0) * dtype.itemsize
    if versioned and managed.flags & _DL_READ_ONLY:
        warnings.warn("from_dlpack: the producer marked this memory read-only; the tensor shares it anyway",
                      UserWarning, stacklevel=3)

    out = ffi.new("tt_storage **")
    check(lib.tt_storage_from_dlpack(managed, int(versioned), data, nbytes, out), "from_dlpack")
    storage = Storage(out[0])          # owns the producer's tensor from here on
    _api.PyCapsule_SetName(capsule, _capsule_name(versioned, used=True))
    return Tensor._make(storage, shape, strides, 0, dtype)
