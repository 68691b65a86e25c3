"""The Python array API standard (version 2023.12): what ``t_tensor`` adds to be its namespace.

Code written against the standard gets its functions from the array's namespace, ``xp =
x.__array_namespace__()``, which for a tensor is the ``t_tensor`` module itself. Most of the
standard's functions are t_tensor's own functions (``tt.sum``, ``tt.concat``, ...), which accept the
standard's keywords next to PyTorch's (``axis=``/``dim=``, ``keepdims=``/``keepdim=``). This module
holds the rest: the version string, the inspection API (``__array_namespace_info__``), ``asarray``
with the standard's copy rules, the standard's names for functions PyTorch spells differently
(``multiply`` for ``mul``, ``greater`` for ``gt``, ...), ``real``/``imag``/``conj`` and the constants.

>>> import t_tensor as tt
>>> x = tt.asarray([1.0, 2.0])
>>> xp = x.__array_namespace__()
>>> xp is tt, xp.__array_api_version__
(True, '2023.12')
>>> xp.multiply(x, xp.pi).tolist()
[3.1415927410125732, 6.2831854820251465]

Where t_tensor follows PyTorch rather than the standard: the default floating dtype is float32
(``default_dtypes()`` says so), ``x.size`` is PyTorch's method (the standard's ``size`` attribute is
``x.numel()``), ``x.T`` reverses all dimensions of any tensor, and there are no complex dtypes.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from t_tensor import dtypes
from t_tensor.creation import tensor
from t_tensor.dtypes import DType
from t_tensor.elementwise import bitwise_not, div, eq, ge, gt, le, lt, mul, ne, sub
from t_tensor.interop import from_dlpack, wrap_numpy
from t_tensor.tensor import _API_VERSIONS, Tensor, check_device

__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "ArrayNamespaceInfo",
    "asarray",
    "bitwise_invert",
    "conj",
    "divide",
    "e",
    "equal",
    "greater",
    "greater_equal",
    "imag",
    "inf",
    "less",
    "less_equal",
    "multiply",
    "nan",
    "newaxis",
    "not_equal",
    "pi",
    "real",
    "subtract",
]

__array_api_version__: str = _API_VERSIONS[-1]

# ---------------------------------------------------------------------- constants

e: float = math.e
pi: float = math.pi
inf: float = math.inf
nan: float = math.nan
newaxis = None  # x[:, newaxis] inserts a dimension, as x[:, None] does

# ---------------------------------------------------------------------- the standard's names for existing functions
# Plain aliases: the same function object, so behaviour, keywords and error messages are the originals'.

bitwise_invert = bitwise_not
equal = eq
not_equal = ne
less = lt
less_equal = le
greater = gt
greater_equal = ge
multiply = mul
subtract = sub
divide = div


def _require_tensor(x: Any, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(x).__name__}")
    return x


def real(x: Tensor, /) -> Tensor:
    """The real part: for t_tensor's real dtypes, the tensor itself (as in PyTorch).

    >>> import t_tensor as tt
    >>> x = tt.tensor([1.5, -2.0])
    >>> tt.real(x) is x
    True
    """
    return _require_tensor(x, "real")


def conj(x: Tensor, /) -> Tensor:
    """The complex conjugate: for t_tensor's real dtypes, the tensor itself (as in PyTorch).

    >>> import t_tensor as tt
    >>> tt.conj(tt.tensor([1, -2])).tolist()
    [1, -2]
    """
    return _require_tensor(x, "conj")


def imag(x: Tensor, /) -> Tensor:
    """The imaginary part, which only complex tensors have: an error for every t_tensor dtype.

    PyTorch raises RuntimeError here, and the standard defines ``imag`` for complex input only.

    >>> import t_tensor as tt
    >>> tt.imag(tt.tensor([1.0]))
    Traceback (most recent call last):
    ...
    RuntimeError: imag: is not implemented for tensors with non-complex dtypes (got float32)
    """
    x = _require_tensor(x, "imag")
    raise RuntimeError(f"imag: is not implemented for tensors with non-complex dtypes (got {x.dtype.name})")


# ---------------------------------------------------------------------- asarray


def _no_copy_error(why: str) -> ValueError:
    return ValueError(f"asarray: copy=False, but {why}, so a copy is needed")


def _copied(obj: Any, target: DType | None) -> Tensor:
    """A new tensor holding ``obj``'s values (the one copying path); errors name ``asarray``."""
    try:
        return tensor(obj, dtype=target)
    except (TypeError, ValueError, RuntimeError) as error:
        message = str(error)
        if message.startswith("tensor:"):
            raise type(error)("asarray:" + message[len("tensor:"):]) from None
        raise


def _numpy_source(array: np.ndarray, copy: bool | None) -> Tensor | None:
    """A tensor sharing ``array``'s memory, or None when sharing is impossible or unwanted."""
    if copy or (copy is None and not array.flags.writeable):
        return None  # memory NumPy considers immutable is shared only when the caller insists (copy=False)
    try:
        shared = wrap_numpy(array, "asarray")
    except ValueError:  # negative or unaligned strides: a tensor cannot describe this memory
        if copy is False:
            raise _no_copy_error("the array's strides cannot be shared (negative or unaligned)") from None
        return None
    if not array.flags.writeable:
        warnings.warn(
            "asarray: copy=False shares read-only memory; writing through the tensor is undefined behaviour",
            UserWarning,
            stacklevel=3,
        )
    return shared


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor from ``obj``: a tensor, a NumPy array, anything with ``__dlpack__`` or the buffer
    protocol, a Python number or a nested sequence of numbers.

    ``copy=True`` always copies. ``copy=False`` never does: it shares ``obj``'s memory and raises
    ValueError when that is impossible (a dtype change, Python data, a NumPy scalar, strides a
    tensor cannot describe). ``copy=None`` shares when it can and copies otherwise; read-only
    memory (a read-only array, ``bytes``) is copied then, and shared only with ``copy=False``
    (with a warning). Dtypes are inferred as :func:`tensor` does:
    Python floats give the default float dtype (float32), ints give int64.

    >>> import numpy as np, t_tensor as tt
    >>> a = np.zeros(3, dtype=np.float32)
    >>> tt.asarray(a).data_ptr() == a.ctypes.data, tt.asarray(a, copy=True).data_ptr() == a.ctypes.data
    (True, False)
    >>> tt.asarray([1, 2], copy=False)
    Traceback (most recent call last):
    ...
    ValueError: asarray: copy=False, but Python data has no memory to share, so a copy is needed
    """
    check_device(device, "asarray")
    if copy not in (None, True, False):
        raise TypeError(f"asarray: copy must be True, False or None, got {copy!r}")
    target = None if dtype is None else dtypes.as_dtype(dtype, fn="asarray")

    shared: Tensor | None = None  # a tensor over obj's own memory, when there is one
    if isinstance(obj, Tensor):
        shared = obj
    elif isinstance(obj, np.ndarray):
        shared = _numpy_source(obj, copy)
        if shared is None:
            return _copied(obj, target)
    elif isinstance(obj, np.generic):
        if copy is False:
            raise _no_copy_error("a NumPy scalar has no memory to share")
        return _copied(obj, target)
    elif hasattr(obj, "__dlpack__"):
        shared = from_dlpack(obj)
    else:
        try:
            view = memoryview(obj)
        except TypeError:  # not a buffer: Python numbers and (nested) sequences
            if copy is False:
                raise _no_copy_error("Python data has no memory to share") from None
            return _copied(obj, target)
        array = np.asarray(view)
        shared = _numpy_source(array, copy)
        if shared is None:
            return _copied(array, target)

    if target is None or target is shared.dtype:
        return shared.clone() if copy else shared
    if copy is False:
        raise _no_copy_error(f"converting {shared.dtype.name} to {target.name} makes new values")
    return shared.to(target)


# ---------------------------------------------------------------------- inspection


_STANDARD_DTYPES: tuple[DType, ...] = (
    dtypes.bool, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.float32, dtypes.float64,
)


class ArrayNamespaceInfo:
    """What ``__array_namespace_info__()`` returns: the inspection API of the standard (2023.12).

    There is one device, ``'cpu'``. The data types listed are the standard's that t_tensor has
    (float16 exists too, but is not a data type of the standard).

    >>> import t_tensor as tt
    >>> info = tt.__array_namespace_info__()
    >>> info.default_device(), info.devices(), info.default_dtypes()["integral"]
    ('cpu', ['cpu'], t_tensor.int64)
    >>> list(info.dtypes(kind="real floating"))
    ['float32', 'float64']
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "t_tensor.__array_namespace_info__()"

    def capabilities(self) -> dict[str, bool]:
        """Optional features: both are supported, data-dependent output shapes (``nonzero``,
        ``unique_*``) and indexing with a boolean mask (``x[mask]``)."""
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self) -> str:
        """The device new tensors are made on: ``'cpu'``."""
        return "cpu"

    def devices(self) -> list[str]:
        """Every device: ``['cpu']``."""
        return ["cpu"]

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType]:
        """The dtypes creation functions choose: for Python floats (``get_default_dtype()``, float32
        unless changed), Python ints, and indices. There is no complex dtype, so no such entry."""
        check_device(device, "default_dtypes")
        return {"real floating": dtypes.get_default_dtype(), "integral": dtypes.int64, "indexing": dtypes.int64}

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, DType]:
        """The standard's dtypes, by name, optionally only those of ``kind`` (as in :func:`isdtype`)."""
        check_device(device, "dtypes")
        return {d.name: d for d in _STANDARD_DTYPES if kind is None or dtypes.isdtype(d, kind)}


_INFO = ArrayNamespaceInfo()


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The inspection API of the array API standard: devices, dtypes and capabilities.

    >>> import t_tensor as tt
    >>> tt.__array_namespace_info__().capabilities()["data-dependent shapes"]
    True
    """
    return _INFO
