"""Functions that make new tensors: from data, filled with a value, ranges, and random numbers.

Every new tensor gets fresh storage from the caching allocator, contiguous (row-major) strides
and offset 0. Defaults follow PyTorch: Python floats give the default float dtype (float32),
Python ints give int64, and bools give bool.

>>> import t_tensor as tt
>>> tt.zeros(2, 3).shape, tt.arange(5).dtype, tt.full((2,), 1.5).dtype
((2, 3), t_tensor.int64, t_tensor.float32)
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from t_tensor import dtypes
from t_tensor._capi import check, ffi, lib
from t_tensor.dtypes import DType
from t_tensor.interop import wrap_numpy
from t_tensor.random import Generator, default_generator
from t_tensor.storage import _MAX_NBYTES
from t_tensor.strides import contiguous_strides_of_valid_shape
from t_tensor.tensor import Tensor, check_device, copy_into
from t_tensor.tensor_impl import wrap_new
from t_tensor.views import _shape_args

__all__ = [
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "tensor",
    "zeros",
    "zeros_like",
]


def _size(args: tuple, fn: str) -> tuple[int, ...]:
    sizes = args[0] if len(args) == 1 and type(args[0]) is tuple else args
    for size in sizes:  # fast path: plain non-negative ints (bool is not an int here)
        if type(size) is not int or size < 0:
            break
    else:
        return sizes
    shape = _shape_args(args, fn)
    for size in shape:
        if size < 0:
            raise RuntimeError(f"{fn}: Trying to create tensor with negative dimension {size}: {list(shape)}")
    return shape


def _shape(size: tuple, shape: Any, fn: str) -> tuple[int, ...]:
    """The shape given positionally (``zeros(2, 3)``, ``zeros((2, 3))``) or as ``shape=`` (array API)."""
    if shape is not None:
        if size:
            raise TypeError(f"{fn}: got the shape both positionally and as shape=")
        size = (shape,)
    return _size(size, fn)


def _dtype(dtype: Any, default: DType, fn: str) -> DType:
    return default if dtype is None else dtypes.as_dtype(dtype, fn=fn)


def _scalar_dtype(value: Any) -> DType:
    """The dtype PyTorch infers for a Python number: bool, int64, or the default float dtype."""
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, (bool, np.bool_)):
        return dtypes.bool
    if isinstance(value, (int, np.integer)):
        return dtypes.int64
    return dtypes.get_default_dtype()


def _accepts_requires_grad(function: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Give a creation function PyTorch's ``requires_grad=`` keyword: the new tensor becomes a
    leaf that autograd tracks (floating point dtypes only)."""

    @functools.wraps(function)
    def create(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Tensor:
        result = function(*args, **kwargs)
        return result.requires_grad_(requires_grad) if requires_grad else result

    signature = inspect.signature(function)
    keyword = inspect.Parameter("requires_grad", inspect.Parameter.KEYWORD_ONLY, default=False, annotation="bool")
    create.__signature__ = signature.replace(parameters=[*signature.parameters.values(), keyword])  # type: ignore
    return create


# ---------------------------------------------------------------------- filled tensors


@_accepts_requires_grad
def empty(*size: Any, shape: Any = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor with uninitialized memory (whatever the cached block held).

    The shape is given as sizes, a tuple, or ``shape=`` (the array API spelling); ``device``
    may only be ``'cpu'``, as for every creation function.

    >>> import t_tensor as tt
    >>> tt.empty(2, 3).shape, tt.empty(shape=(4,), device="cpu").shape
    ((2, 3), (4,))
    """
    check_device(device, "empty")
    return Tensor._empty(_shape(size, shape, "empty"), _dtype(dtype, dtypes.get_default_dtype(), "empty"))


@_accepts_requires_grad
def zeros(*size: Any, shape: Any = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of zeros.

    >>> import t_tensor as tt
    >>> tt.zeros(2, dtype=tt.int32).tolist()
    [0, 0]
    """
    check_device(device, "zeros")
    shape = _shape(size, shape, "zeros")
    target = _dtype(dtype, dtypes.get_default_dtype(), "zeros")
    nbytes = math.prod(shape) * target.itemsize
    ptr = lib.tt_zeros_new(nbytes) if nbytes <= _MAX_NBYTES else ffi.NULL  # zero bytes are zero in every dtype
    if not ptr:
        return Tensor._empty(shape, target, "zeros")._fill_unchecked(0)  # raises the MemoryError
    return wrap_new(Tensor, ptr, shape, contiguous_strides_of_valid_shape(shape), target)


@_accepts_requires_grad
def ones(*size: Any, shape: Any = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of ones.

    >>> import t_tensor as tt
    >>> tt.ones(2, 2).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    check_device(device, "ones")
    shape = _shape(size, shape, "ones")
    result = Tensor._empty(shape, _dtype(dtype, dtypes.get_default_dtype(), "ones"), "ones")
    return result._fill_unchecked(1)


class _Required:
    """The default of an argument that has two names (PyTorch's and the array API's): one must be given."""

    def __repr__(self) -> str:
        return "<required>"


_REQUIRED: Any = _Required()


@_accepts_requires_grad
def full(shape: Any = _REQUIRED, fill_value: Any = _REQUIRED, *, dtype: Any = None, device: Any = None,
         size: Any = _REQUIRED) -> Tensor:
    """A tensor with every element ``fill_value``; the dtype follows the value unless given.

    The shape may be passed as ``shape=`` (array API) or ``size=`` (PyTorch).

    >>> import t_tensor as tt
    >>> tt.full((2,), 7).tolist(), tt.full((2,), 7).dtype, tt.full(size=3, fill_value=0.5).tolist()
    ([7, 7], t_tensor.int64, [0.5, 0.5, 0.5])
    """
    if (shape is _REQUIRED) == (size is _REQUIRED):
        raise TypeError("full: give the shape once, positionally or as shape= or size=")
    if fill_value is _REQUIRED:
        raise TypeError("full: missing required argument 'fill_value'")
    check_device(device, "full")
    size = size if shape is _REQUIRED else shape
    shape = _size((size,) if not isinstance(size, (tuple, list)) else (tuple(size),), "full")
    target = _dtype(dtype, _scalar_dtype(fill_value), "full")
    result = Tensor._empty(shape, target, "full")
    try:
        return result.fill_(fill_value)
    except (RuntimeError, TypeError) as error:
        raise type(error)(str(error).replace("fill_:", "full:", 1)) from None


@_accepts_requires_grad
def empty_like(x: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An uninitialized tensor with ``x``'s shape (and dtype, unless given)."""
    check_device(device, "empty_like")
    return empty(x.shape, dtype=_dtype(dtype, x.dtype, "empty_like"))


@_accepts_requires_grad
def zeros_like(x: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Zeros with ``x``'s shape and dtype."""
    check_device(device, "zeros_like")
    return zeros(x.shape, dtype=_dtype(dtype, x.dtype, "zeros_like"))


@_accepts_requires_grad
def ones_like(x: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Ones with ``x``'s shape and dtype."""
    check_device(device, "ones_like")
    return ones(x.shape, dtype=_dtype(dtype, x.dtype, "ones_like"))


@_accepts_requires_grad
def full_like(x: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """``fill_value`` everywhere, with ``x``'s shape and dtype."""
    check_device(device, "full_like")
    return full(x.shape, fill_value, dtype=_dtype(dtype, x.dtype, "full_like"))


# ---------------------------------------------------------------------- from data


def _infer_dtype(array: np.ndarray, from_numpy: bool, fn: str) -> DType:
    """PyTorch's inference: NumPy data keeps its dtype; Python numbers map to bool/int64/default float."""
    if from_numpy:
        return dtypes.from_numpy_dtype(array.dtype, fn=fn)
    kind = array.dtype.kind
    if kind == "b":
        return dtypes.bool
    if kind == "i":
        return dtypes.int64
    if kind == "u":
        if array.dtype.itemsize == 8:  # NumPy chose uint64: some value is above int64's range
            raise RuntimeError(f"{fn}: Overflow when unpacking long (a value does not fit in int64)")
        return dtypes.int64
    if kind == "f":
        # float64 is what Python floats become in NumPy; narrower floats came from typed elements.
        return dtypes.get_default_dtype() if array.dtype.itemsize == 8 else dtypes.from_numpy_dtype(array.dtype, fn=fn)
    if kind == "O":
        raise TypeError(f"{fn}: could not convert the data to numbers (integers beyond int64, or mixed objects)")
    raise TypeError(f"{fn}: unsupported data of NumPy dtype {array.dtype} (complex, string, ...)")


def _from_flat_list(data: list, target: DType | None) -> Tensor | None:
    """tensor() of a non-empty list of Python floats only (or ints only), in one C call and
    without NumPy: cffi turns the list into a double (int64) array, which C converts to the dtype
    as the general path's copy does. None for anything else (nested lists, mixed or other types,
    ints beyond int64): the general path handles those and raises the precise errors."""
    kind = type(data[0])
    if kind is float:
        make, inferred = lib.tt_new_from_doubles, dtypes.get_default_dtype()
    elif kind is int:
        make, inferred = lib.tt_new_from_int64s, dtypes.int64
    else:
        return None
    for value in data:
        if type(value) is not kind:
            return None
    dtype = target or inferred
    try:
        ptr = make(len(data), data, dtype.code)
    except OverflowError:  # an int beyond int64
        return None
    if not ptr:
        return None
    shape = (len(data),)
    return wrap_new(Tensor, ptr, shape, (1,), dtype)


@_accepts_requires_grad
def tensor(data: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, NumPy arrays, tensors).

    >>> import t_tensor as tt
    >>> tt.tensor([[1, 2], [3, 4]]).dtype, tt.tensor(1.5).shape, tt.tensor([True]).dtype
    (t_tensor.int64, (), t_tensor.bool)
    """
    check_device(device, "tensor")
    target = None if dtype is None else dtypes.as_dtype(dtype, fn="tensor")
    if type(data) is list and data:
        result = _from_flat_list(data, target)
        if result is not None:
            return result
    if isinstance(data, Tensor):
        return data.detach().to(target or data.dtype, copy=True)
    from_numpy = isinstance(data, (np.ndarray, np.generic))
    try:
        array = np.asarray(data)
    except (ValueError, TypeError) as error:
        raise ValueError(f"tensor: could not build a tensor from the data: {error}") from None
    inferred = _infer_dtype(array, from_numpy, "tensor")
    # Python floats keep their double precision until the one cast to an explicit target dtype
    # (tensor([0.1], dtype=float64) is exactly 0.1, not 0.1 rounded to float32 first).
    source_dtype = dtypes.float64 if target is not None and array.dtype == np.float64 else inferred
    if array.dtype != source_dtype.numpy:
        array = array.astype(source_dtype.numpy)
    elif not (array.flags.c_contiguous and array.flags.aligned):
        array = array.copy(order="C")
    source = wrap_numpy(array, "tensor")
    result = Tensor._empty(source.shape, target or inferred)
    copy_into(result, source, source.shape, source.stride())
    return result


def as_tensor(data: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Like :func:`tensor`, but shares memory when it can: a tensor of the right dtype is returned
    as is, and a NumPy array of the right dtype is wrapped without a copy.

    >>> import numpy as np, t_tensor as tt
    >>> a = np.zeros(3, dtype=np.float32)
    >>> tt.as_tensor(a).data_ptr() == a.ctypes.data
    True
    """
    check_device(device, "as_tensor")
    target = None if dtype is None else dtypes.as_dtype(dtype, fn="as_tensor")
    if isinstance(data, Tensor):
        return data.to(target) if target is not None else data
    if isinstance(data, np.ndarray):
        inferred = dtypes.from_numpy_dtype(data.dtype, fn="as_tensor")
        if (target is None or target is inferred) and data.flags.writeable and min(data.strides, default=0) >= 0:
            return wrap_numpy(data, "as_tensor")
    return tensor(data, dtype=target)


# ---------------------------------------------------------------------- ranges


def _number(value: Any, name: str, fn: str) -> int | float:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise RuntimeError(f"{fn}: {name} must be finite, got {value}")
    return value


_MAX_RANGE_ELEMENTS = 2**40  # 8 TiB of float64: far beyond this machine, and NumPy's own limit nears


def _check_count(count: int, fn: str) -> None:
    if count > _MAX_RANGE_ELEMENTS:
        raise MemoryError(f"{fn}: {count} elements is more than can be allocated")


def _from_values(values: np.ndarray, target: DType) -> Tensor:
    """Copy computed values (int64 or float64 NumPy data) into a new tensor, casting in C."""
    source = wrap_numpy(np.ascontiguousarray(values), "_from_values")
    result = Tensor._empty(source.shape, target)
    copy_into(result, source, source.shape, source.stride())
    return result


@_accepts_requires_grad
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           stop: Any = None) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` in steps of ``step``.

    Integer arguments give int64, any float argument gives the default float dtype. Element i
    is ``start + i * step`` computed in double precision, as PyTorch does. ``stop=`` is the
    array API's name for ``end``.

    >>> import t_tensor as tt
    >>> tt.arange(5).tolist(), tt.arange(1, 2, 0.25).tolist(), tt.arange(2, stop=4).tolist()
    ([0, 1, 2, 3, 4], [1.0, 1.25, 1.5, 1.75], [2, 3])
    """
    check_device(device, "arange")
    if stop is not None:
        if end is not None:
            raise TypeError("arange: got both end and stop (they are the same argument)")
        end = stop
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, n, "arange") for v, n in ((start, "start"), (end, "end"), (step, "step")))
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("arange: upper bound and larger bound inconsistent with step sign")
    all_ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    target = _dtype(dtype, dtypes.int64 if all_ints else dtypes.get_default_dtype(), "arange")
    if all_ints:
        count = -((int(start) - int(end)) // int(step))   # exact ceil((end - start) / step)
        _check_count(count, "arange")
        values = int(start) + np.arange(count, dtype=np.int64) * int(step)
    else:
        count = math.ceil((float(end) - float(start)) / float(step))
        _check_count(count, "arange")
        values = float(start) + np.arange(count, dtype=np.float64) * float(step)
    return _from_values(values, target)


@_accepts_requires_grad
def linspace(start: Any, end: Any, steps: Any = _REQUIRED, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True, num: Any = _REQUIRED) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included.

    As in PyTorch, the first half is computed from ``start`` and the second half from ``end``,
    so both ends are exact. The array API spells ``steps`` as ``num``; with ``endpoint=False``
    the values are the first ``num`` of ``num + 1`` points, so ``end`` is left out.

    >>> import t_tensor as tt
    >>> tt.linspace(0, 1, 5).tolist(), tt.linspace(0, 1, num=4, endpoint=False).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.25, 0.5, 0.75])
    """
    if (steps is _REQUIRED) == (num is _REQUIRED):
        raise TypeError("linspace: give the number of points once, positionally or as steps= or num=")
    steps = num if steps is _REQUIRED else steps
    check_device(device, "linspace")
    start, end = float(_number(start, "start", "linspace")), float(_number(end, "end", "linspace"))
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"linspace: steps must be an int, got {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    target = _dtype(dtype, dtypes.get_default_dtype(), "linspace")
    _check_count(steps, "linspace")
    count = steps
    if not endpoint:
        steps += 1  # the points of the closed range with one more step; the last one is dropped below
    index = np.arange(steps, dtype=np.float64)
    if steps == 1:
        values = np.array([start])
    else:
        step = (end - start) / (steps - 1)
        values = np.where(index < steps // 2, start + index * step, end - (steps - 1 - index) * step)
    return _from_values(values[:count], target)


@_accepts_requires_grad
def eye(n: int, m: int | None = None, *, k: int = 0, dtype: Any = None, device: Any = None) -> Tensor:
    """An n x m matrix with ones on the diagonal ``k`` (0: the main one, > 0: above, < 0: below).

    >>> import t_tensor as tt
    >>> tt.eye(2, 3).tolist(), tt.eye(2, 3, k=1).tolist()
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    """
    check_device(device, "eye")
    m = n if m is None else m
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"eye: k must be an int, got {type(k).__name__}")
    result = zeros(n, m, dtype=dtype)
    # The diagonal is a strided view: one step down and one right is m + 1 elements. Diagonal k
    # starts at column k (k >= 0) or at row -k (k < 0).
    n, m, k = int(n), int(m), int(k)
    length = min(n, m - k) if k >= 0 else min(n + k, m)
    if length > 0:
        result.as_strided((length,), (m + 1,), k if k >= 0 else -k * m).fill_(1)
    return result


# ---------------------------------------------------------------------- random


def _generator(generator: Generator | None) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a t_tensor.Generator, got {type(generator).__name__}")
    return generator


def _random_float(fill, size: tuple, generator: Generator | None, dtype: Any, fn: str, a: float, b: float) -> Tensor:
    target = _dtype(dtype, dtypes.get_default_dtype(), fn)
    if not target.is_floating_point:
        raise TypeError(f"{fn}: expected a floating-point dtype, got {target.name}")
    result = Tensor._empty(_size(size, fn), target, fn)
    check(fill(_generator(generator)._state, result.data_ptr(), result.numel(), target.code, a, b), fn)
    return result


@_accepts_requires_grad
def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    """Uniform random numbers in [0, 1).

    >>> import t_tensor as tt
    >>> x = tt.rand(1000)
    >>> bool(((x.numpy() >= 0) & (x.numpy() < 1)).all())
    True
    """
    check_device(device, "rand")
    return _random_float(lib.tt_random_uniform, size, generator, dtype, "rand", 0.0, 1.0)


@_accepts_requires_grad
def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    """Standard normal random numbers (mean 0, standard deviation 1).

    >>> import t_tensor as tt
    >>> abs(float(tt.randn(100_000).numpy().mean())) < 0.02
    True
    """
    check_device(device, "randn")
    return _random_float(lib.tt_random_normal, size, generator, dtype, "randn", 0.0, 1.0)


def randint(*args: Any, size: Any = None, generator: Generator | None = None, dtype: Any = None,
            device: Any = None) -> Tensor:
    """Uniform random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    >>> import t_tensor as tt
    >>> x = tt.randint(3, 7, (1000,))
    >>> x.dtype, int(x.numpy().min()) >= 3, int(x.numpy().max()) < 7
    (t_tensor.int64, True, True)
    """
    check_device(device, "randint")
    if size is not None:
        args = args + (size,)
    if len(args) == 2:
        low, high, shape = 0, args[0], args[1]
    elif len(args) == 3:
        low, high, shape = args
    else:
        raise TypeError("randint: expected (high, size) or (low, high, size)")
    low, high = _number(low, "low", "randint"), _number(high, "high", "randint")
    low, high = int(low), int(high)
    shape = _size((shape,) if not isinstance(shape, (tuple, list)) else (tuple(shape),), "randint")
    target = _dtype(dtype, dtypes.int64, "randint")
    if low >= high:
        raise RuntimeError(f"randint: random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if target.kind in "iu":
        info = dtypes.iinfo(target)
        if low < info.min or high - 1 > info.max:
            raise RuntimeError(f"randint: range [{low}, {high}) does not fit in {target.name}")
    if target is dtypes.bool:
        if low < 0 or high > 2:
            raise RuntimeError(f"randint: range [{low}, {high}) does not fit in bool")
        return randint(low, high, shape, generator=generator, dtype=dtypes.uint8).to(dtypes.bool)
    result = Tensor._empty(shape, target, "randint")
    state = _generator(generator)._state
    status = lib.tt_random_integers(state, result.data_ptr(), result.numel(), target.code, low, high)
    check(status, "randint", f"low={low}, high={high}")
    return result


@_accepts_requires_grad
def rand_like(x: Tensor, *, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    """:func:`rand` with ``x``'s shape and dtype."""
    return rand(x.shape, generator=generator, dtype=_dtype(dtype, x.dtype, "rand_like"))


@_accepts_requires_grad
def randn_like(x: Tensor, *, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    """:func:`randn` with ``x``'s shape and dtype."""
    return randn(x.shape, generator=generator, dtype=_dtype(dtype, x.dtype, "randn_like"))


def randint_like(x: Tensor, low: int, high: int | None = None, *, dtype: Any = None,
                 generator: Generator | None = None) -> Tensor:
    """:func:`randint` with ``x``'s shape and dtype: ``randint_like(x, high)`` or ``(x, low, high)``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, x.shape, generator=generator, dtype=_dtype(dtype, x.dtype, "randint_like"))
