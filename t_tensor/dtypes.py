"""Data types ("dtypes") of t_tensor and the rules for mixing them.

What a dtype is
---------------
A tensor's memory is a flat run of bytes. The dtype says how to read it: how many bytes one element
takes (``itemsize``) and what those bytes mean (``kind``: a bool, a signed integer, an unsigned integer
or an IEEE floating-point number). t_tensor has nine dtypes, the same nine the C core knows::

    code  name     kind  itemsize     PyTorch aliases
    0     bool     b     1
    1     int8     i     1
    2     int16    i     2            short
    3     int32    i     4            int
    4     int64    i     8            long
    5     uint8    u     1
    6     float16  f     2            half
    7     float32  f     4            float
    8     float64  f     8            double

Each dtype is a single immutable object (a singleton), so ``x.dtype is float32`` is the right test.
``code`` is the number the C core uses for the same dtype, and ``numpy`` is the matching
``numpy.dtype``, which is how data moves in and out of NumPy.

Promotion
---------
When an operation mixes dtypes, e.g. ``int8_tensor + float32_tensor``, the result needs one dtype
that can hold both inputs reasonably. ``promote_types`` gives it; the full 9x9 answer is written out in
``_PROMOTION_TABLE`` below, and it is PyTorch's table. Its shape:

* bool is the bottom: ``bool + x -> x``.
* Integers widen to the larger size; mixing signed and unsigned needs a signed type one size up,
  so ``uint8 + int8 -> int16`` (int16 is the smallest type holding both -128 and 255).
* Any float beats any integer, keeping the float's size: ``int64 + float16 -> float16``. That can
  lose information (float16 cannot hold every int64), a trade-off PyTorch accepts.
* Floats widen to the larger size: ``float16 + float32 -> float32``.

Operands are not all equal, though. ``result_type`` follows PyTorch: a tensor with dimensions decides
the result dtype over a 0-d tensor, which decides it over a plain Python number, unless the weaker
operand belongs to a higher *category* (bool < integer < float). So ``int8_tensor + 1000`` stays int8,
while ``int8_tensor + 1.5`` becomes a float (the default float dtype, ``get_default_dtype()``).

>>> promote_types(uint8, int8)
t_tensor.int16
>>> result_type(int8, 1000), result_type(int8, 1.5)
(t_tensor.int8, t_tensor.float32)
"""

from __future__ import annotations

import builtins
import operator
import sys
from dataclasses import dataclass
from typing import Any, Final, NoReturn

import numpy as np

# This module defines dtypes named `bool`, `int` and `float` (as `torch.bool`, `torch.int`, `torch.float`),
# which shadows the builtins for every line of code in this file, including function bodies, which look
# names up when they run. So the builtins are only ever used through these private names, also in
# annotations (there, `int` would mean the dtype int32).
_builtin_bool = builtins.bool
_builtin_int = builtins.int
_builtin_float = builtins.float

__all__ = [
    "ALL_DTYPES",
    "DType",
    "FInfo",
    "IInfo",
    "as_dtype",
    "bool",
    "by_code",
    "can_cast",
    "double",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy_dtype",
    "get_default_dtype",
    "half",
    "iinfo",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "long",
    "promote_types",
    "result_type",
    "set_default_dtype",
    "short",
    "uint8",
]

# Multi-byte types are stored in the machine's byte order; the array-interface typestr says which.
_NATIVE_ORDER: Final = "<" if sys.byteorder == "little" else ">"


class DType:
    """One of t_tensor's nine element types; compare with ``is`` (each dtype exists exactly once).

    >>> float32.name, float32.itemsize, float32.code, float32.kind, float32.typestr
    ('float32', 4, 7, 'f', '<f4')
    >>> int8.is_signed, uint8.is_signed, bool.is_floating_point
    (True, False, False)
    """

    __slots__ = ("code", "is_floating_point", "is_signed", "itemsize", "kind", "name", "numpy", "typestr")

    name: str
    itemsize: _builtin_int
    code: _builtin_int
    kind: str
    is_floating_point: _builtin_bool
    is_signed: _builtin_bool
    numpy: np.dtype[Any]
    typestr: str

    def __new__(cls, *args: object, **kwargs: object) -> NoReturn:
        # Equality and hashing are by identity, so a second float32 object would silently compare
        # unequal to the real one. The nine instances are made once, below, by `_make_dtype`.
        raise TypeError(
            "t_tensor.DType cannot be instantiated; use the module's dtypes (t_tensor.float32, ...) "
            "or t_tensor.dtypes.as_dtype()"
        )

    def __init_subclass__(cls, **kwargs: object) -> None:
        raise TypeError("t_tensor.DType cannot be subclassed")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"t_tensor.DType is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"t_tensor.DType is immutable (cannot delete {name!r})")

    def __repr__(self) -> str:
        return f"t_tensor.{self.name}"

    def __reduce__(self) -> str:
        # Returning a string tells pickle (and copy) "this object is the module global of that name",
        # so unpickling and copying give back the singleton rather than a new object.
        return self.name


def _make_dtype(name: str, code: _builtin_int, kind: str, itemsize: _builtin_int) -> DType:
    dtype = object.__new__(DType)  # bypasses DType.__new__, which refuses on purpose
    byte_order = "|" if itemsize == 1 else _NATIVE_ORDER  # one byte has no byte order
    fields = {
        "name": name,
        "itemsize": itemsize,
        "code": code,
        "kind": kind,
        "is_floating_point": kind == "f",
        "is_signed": kind in ("i", "f"),  # bool counts as unsigned, as in torch
        "numpy": np.dtype(name),
        "typestr": f"{byte_order}{kind}{itemsize}",
    }
    for field, value in fields.items():
        object.__setattr__(dtype, field, value)
    return dtype


# The codes must equal the C core's enum; the C code and saved data depend on them.
bool = _make_dtype("bool", 0, "b", 1)
int8 = _make_dtype("int8", 1, "i", 1)
int16 = _make_dtype("int16", 2, "i", 2)
int32 = _make_dtype("int32", 3, "i", 4)
int64 = _make_dtype("int64", 4, "i", 8)
uint8 = _make_dtype("uint8", 5, "u", 1)
float16 = _make_dtype("float16", 6, "f", 2)
float32 = _make_dtype("float32", 7, "f", 4)
float64 = _make_dtype("float64", 8, "f", 8)

# PyTorch's C-style aliases: the same objects under a second name.
half = float16
float = float32
double = float64
short = int16
int = int32
long = int64

#: All dtypes, in code order, so ``ALL_DTYPES[d.code] is d``.
ALL_DTYPES: Final[tuple[DType, ...]] = (bool, int8, int16, int32, int64, uint8, float16, float32, float64)

# Every name a dtype is known by in this module (canonical names and aliases), for as_dtype("float").
_BY_NAME: Final[dict[str, DType]] = {
    **{dtype.name: dtype for dtype in ALL_DTYPES},
    "half": half,
    "float": float,
    "double": double,
    "short": short,
    "int": int,
    "long": long,
}


def by_code(code: _builtin_int) -> DType:
    """Return the dtype with the given C enum code (0 to 8).

    >>> by_code(7)
    t_tensor.float32
    """
    if isinstance(code, _builtin_bool):  # True is an int to Python, but surely a mistake here
        raise TypeError(f"by_code: expected an int code, got {code!r}")
    try:
        index = operator.index(code)  # also accepts NumPy integers coming back from the C side
    except TypeError:
        raise TypeError(f"by_code: expected an int code, got {code!r}") from None
    if not 0 <= index < len(ALL_DTYPES):
        raise ValueError(f"by_code: no dtype has code {index} (codes are 0 to {len(ALL_DTYPES) - 1})")
    return ALL_DTYPES[index]


# ---------------------------------------------------------------------------------------------------------
# Promotion
# ---------------------------------------------------------------------------------------------------------

# The result of promote_types(row, column), copied by hand from PyTorch. It is symmetric, and
# promote_types(a, a) is a. The tests check every cell against torch.promote_types.
# fmt: off
_PROMOTION_ROWS: Final[tuple[tuple[DType, tuple[DType, ...]], ...]] = (
    #            bool     int8     int16    int32    int64    uint8    float16  float32  float64
    (bool,     (bool,    int8,    int16,   int32,   int64,   uint8,   float16, float32, float64)),
    (int8,     (int8,    int8,    int16,   int32,   int64,   int16,   float16, float32, float64)),
    (int16,    (int16,   int16,   int16,   int32,   int64,   int16,   float16, float32, float64)),
    (int32,    (int32,   int32,   int32,   int32,   int64,   int32,   float16, float32, float64)),
    (int64,    (int64,   int64,   int64,   int64,   int64,   int64,   float16, float32, float64)),
    (uint8,    (uint8,   int16,   int16,   int32,   int64,   uint8,   float16, float32, float64)),
    (float16,  (float16, float16, float16, float16, float16, float16, float16, float32, float64)),
    (float32,  (float32, float32, float32, float32, float32, float32, float32, float32, float64)),
    (float64,  (float64, float64, float64, float64, float64, float64, float64, float64, float64)),
)
# fmt: on

_PROMOTION_TABLE: Final[dict[tuple[DType, DType], DType]] = {
    (row_dtype, column_dtype): result
    for row_dtype, row in _PROMOTION_ROWS
    for column_dtype, result in zip(ALL_DTYPES, row, strict=True)
}

# Categories for result_type and can_cast: bool < integral < floating.
_CATEGORY: Final[dict[str, _builtin_int]] = {"b": 0, "i": 1, "u": 1, "f": 2}


def _check_dtype(x: object, fn: str, arg: str) -> DType:
    if not isinstance(x, DType):
        raise TypeError(f"{fn}: expected a t_tensor dtype for {arg}, got {x!r}")
    return x


def promote_types(a: DType, b: DType) -> DType:
    """Return the smallest dtype both ``a`` and ``b`` promote to (PyTorch's ``torch.promote_types``).

    >>> promote_types(uint8, int8), promote_types(int64, float16), promote_types(bool, int32)
    (t_tensor.int16, t_tensor.float16, t_tensor.int32)
    """
    return _PROMOTION_TABLE[_check_dtype(a, "promote_types", "a"), _check_dtype(b, "promote_types", "b")]


# result_type's operand tiers, strongest first.
_TIER_DIMENSIONED: Final = 0  # DType objects and tensors with ndim > 0
_TIER_ZERO_DIM: Final = 1  # 0-d tensors
_TIER_SCALAR: Final = 2  # Python bool, int and float


def _tier_and_dtype(arg: object) -> tuple[_builtin_int, DType]:
    if isinstance(arg, DType):
        # A bare dtype has no shape; like the array API we treat it as an array with dimensions.
        return _TIER_DIMENSIONED, arg
    arg_dtype = getattr(arg, "dtype", None)
    if isinstance(arg_dtype, DType):
        ndim = arg.ndim  # type: ignore[attr-defined]
        return (_TIER_DIMENSIONED if ndim > 0 else _TIER_ZERO_DIM), arg_dtype
    # bool before int, because Python's bool is a subclass of int.
    if isinstance(arg, _builtin_bool):
        return _TIER_SCALAR, bool
    if isinstance(arg, _builtin_int):
        return _TIER_SCALAR, int64
    if isinstance(arg, _builtin_float):
        return _TIER_SCALAR, _default_dtype
    raise TypeError(
        f"result_type: expected a dtype, a tensor or a Python bool/int/float, got {type(arg).__name__} "
        f"{arg!r}"
    )


def result_type(*args: object) -> DType:
    """Return the dtype of an elementwise operation on ``args``, by PyTorch's rules.

    Each argument is a DType (treated like a tensor with dimensions), an object with ``.dtype``
    (a DType) and ``.ndim``, or a Python bool, int or float.

    >>> result_type(int16, uint8, bool)
    t_tensor.int16
    >>> result_type(int16, 7), result_type(int16, 7.0), result_type(True, False)
    (t_tensor.int16, t_tensor.float32, t_tensor.bool)
    """
    if not args:
        raise TypeError("result_type: at least one argument is required")
    # PyTorch sorts operands into three tiers: tensors with dimensions, 0-d tensors, and Python
    # scalars (a Python bool counts as bool, an int as int64, a float as the default dtype). Inside a
    # tier the dtypes promote normally. Across tiers, a weaker tier only matters when its category
    # (bool < integral < floating) is higher than everything stronger: `int8_tensor + 1000` is int8
    # (1000 is only "an integer"), but `int8_tensor + 1.5` is a float. The idea is that a scalar
    # should not silently widen a big tensor, yet an integer tensor cannot hold 1.5.
    # (PyTorch promotes the strong dtype with the weak one when the weak one wins; by the shape of
    # the table that promotion is always the weak dtype itself, e.g. int32 + float16 -> float16.)
    tier_dtypes: list[DType | None] = [None, None, None]
    for arg in args:
        tier, arg_dtype = _tier_and_dtype(arg)
        current = tier_dtypes[tier]
        tier_dtypes[tier] = arg_dtype if current is None else promote_types(current, arg_dtype)

    result: DType | None = None
    for tier_dtype in tier_dtypes:  # strongest tier first
        if tier_dtype is None:
            continue
        if result is None or _CATEGORY[tier_dtype.kind] > _CATEGORY[result.kind]:
            result = tier_dtype
    assert result is not None  # at least one argument, so at least one tier is filled
    return result


def can_cast(from_: DType | Any, to: DType) -> _builtin_bool:
    """Return True if casting ``from_`` to ``to`` keeps the value's category, as ``torch.can_cast``.

    ``from_`` may also be a tensor (anything whose ``.dtype`` is a DType).

    >>> can_cast(int64, int8), can_cast(uint8, float16), can_cast(float32, int64), can_cast(int8, bool)
    (True, True, False, False)
    """
    # PyTorch's rule (used e.g. for in-place ops and out= arguments) is about categories only:
    # bool < integral < floating, and a cast may stay in its category or move up, never down. It is
    # looser than the array API standard, which allows only value-preserving casts (not int64 ->
    # int8) and never crosses between integers and floats.
    from_dtype = from_ if isinstance(from_, DType) else getattr(from_, "dtype", from_)
    _check_dtype(from_dtype, "can_cast", "from_")
    _check_dtype(to, "can_cast", "to")
    return _CATEGORY[from_dtype.kind] <= _CATEGORY[to.kind]


# ---------------------------------------------------------------------------------------------------------
# Default floating-point dtype
# ---------------------------------------------------------------------------------------------------------

# The dtype of Python floats in result_type and of new float tensors made without an explicit dtype.
_default_dtype: DType = float32


def get_default_dtype() -> DType:
    """Return the default floating-point dtype (float32 unless changed with ``set_default_dtype``).

    >>> get_default_dtype()
    t_tensor.float32
    """
    return _default_dtype


def set_default_dtype(d: DType) -> None:
    """Set the default floating-point dtype; only float32 and float64 are allowed.

    >>> set_default_dtype(float64); result_type(int32, 0.5)
    t_tensor.float64
    >>> set_default_dtype(float32)
    """
    global _default_dtype
    if d is not float32 and d is not float64:
        # PyTorch 2.x also accepts float16 here; we keep to the two dtypes every operation supports.
        raise TypeError(
            f"set_default_dtype: only floating-point types are supported as the default type "
            f"(float32 or float64), got {d!r}"
        )
    _default_dtype = d


# ---------------------------------------------------------------------------------------------------------
# Conversion from other dtype spellings
# ---------------------------------------------------------------------------------------------------------

_SUPPORTED_NAMES: Final = ", ".join(dtype.name for dtype in ALL_DTYPES)


def _unsupported(fn: str, x: object, detail: str = "") -> TypeError:
    return TypeError(f"{fn}: unsupported dtype {x!r}{detail}; supported dtypes are {_SUPPORTED_NAMES}")


def _match_numpy(np_dtype: np.dtype[Any]) -> tuple[DType | None, str]:
    """Return (our dtype or None, reason for None) for a NumPy dtype."""
    # Match on (kind, itemsize) rather than dtype equality: NumPy has several equal-looking types
    # (e.g. C long and long long are both int64) and dtypes can carry metadata.
    for dtype in ALL_DTYPES:
        if np_dtype.kind == dtype.kind and np_dtype.itemsize == dtype.itemsize:
            if not np_dtype.isnative:
                # The C core reads memory in native byte order; swapped data must be converted first.
                return None, " (non-native byte order; convert with .astype(dtype.newbyteorder('=')))"
            return dtype, ""
    return None, ""


def from_numpy_dtype(np_dtype: np.dtype[Any] | type, *, fn: str = "from_numpy_dtype") -> DType:
    """Return the dtype matching a NumPy dtype (or NumPy scalar type such as ``np.float32``).

    ``fn`` names the calling function in error messages.

    >>> from_numpy_dtype(np.dtype("float32")), from_numpy_dtype(np.uint8)
    (t_tensor.float32, t_tensor.uint8)
    """
    if isinstance(np_dtype, type) and issubclass(np_dtype, np.generic):
        np_dtype = np.dtype(np_dtype)
    if not isinstance(np_dtype, np.dtype):
        raise TypeError(f"{fn}: expected a numpy dtype, got {np_dtype!r}")
    dtype, reason = _match_numpy(np_dtype)
    if dtype is None:
        raise _unsupported(fn, np_dtype, reason)
    return dtype


def as_dtype(x: object, *, fn: str = "as_dtype") -> DType:
    """Turn a dtype-like value into a DType.

    Accepted: a DType; the name of one of this module's dtypes, including the PyTorch aliases (so
    ``"float"`` is float32, as ``t_tensor.float`` is); the Python types ``bool``, ``int`` (int64) and
    ``float`` (the default dtype); and anything ``numpy.dtype()`` accepts that maps to one of our
    dtypes (``np.int64``, ``"f4"``, ``np.dtype("uint8")``). ``None`` is rejected (callers decide what
    a missing dtype means). ``fn`` names the calling function in error messages.

    Careful inside this module and its doctests: the name ``int`` is the dtype int32 here, so the
    Python type has to be spelled ``builtins.int``.

    >>> as_dtype("float32"), as_dtype(np.int64), as_dtype("f2"), as_dtype("float")
    (t_tensor.float32, t_tensor.int64, t_tensor.float16, t_tensor.float32)
    >>> as_dtype(builtins.int), as_dtype(builtins.float)
    (t_tensor.int64, t_tensor.float32)
    """
    if isinstance(x, DType):
        return x
    # Python's own types first: numpy would read `float` as float64, but it means the default here.
    if x is _builtin_bool:
        return bool
    if x is _builtin_int:
        return int64
    if x is _builtin_float:
        return _default_dtype
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    if x is None:
        # numpy.dtype(None) silently means float64; here a missing dtype must be handled by the caller.
        raise _unsupported(fn, x)
    try:
        np_dtype = np.dtype(x)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise _unsupported(fn, x) from None
    dtype, reason = _match_numpy(np_dtype)
    if dtype is None:
        raise _unsupported(fn, x, reason)
    return dtype


def _dtype_argument(x: object, fn: str) -> DType:
    # finfo/iinfo take a dtype-like value or, as in the array API, a tensor.
    x_dtype = getattr(x, "dtype", None)
    if not isinstance(x, DType) and isinstance(x_dtype, DType):
        return x_dtype
    return as_dtype(x, fn=fn)


# ---------------------------------------------------------------------------------------------------------
# finfo / iinfo / isdtype
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FInfo:
    """Machine limits of a floating-point dtype (returned by ``finfo``)."""

    bits: _builtin_int
    eps: _builtin_float  # difference between 1.0 and the next larger representable number
    max: _builtin_float
    min: _builtin_float  # the most negative finite value, i.e. -max
    smallest_normal: _builtin_float
    resolution: _builtin_float  # 10 ** -(decimal digits of precision), as in NumPy and PyTorch
    dtype: DType

    @property
    def tiny(self) -> _builtin_float:
        """Alias of ``smallest_normal`` (the name NumPy and PyTorch also use)."""
        return self.smallest_normal


@dataclass(frozen=True, slots=True)
class IInfo:
    """Machine limits of an integer dtype (returned by ``iinfo``)."""

    bits: _builtin_int
    max: _builtin_int
    min: _builtin_int
    dtype: DType


def _make_finfo(dtype: DType) -> FInfo:
    info = np.finfo(dtype.numpy)
    # Convert NumPy scalars to Python floats; resolution is computed rather than read from NumPy,
    # whose float32 value of 1e-06 is stored as a float32 and so is not exactly Python's 1e-06.
    return FInfo(
        bits=info.bits,
        eps=_builtin_float(info.eps),
        max=_builtin_float(info.max),
        min=_builtin_float(info.min),
        smallest_normal=_builtin_float(info.smallest_normal),
        resolution=10.0**-info.precision,
        dtype=dtype,
    )


def _make_iinfo(dtype: DType) -> IInfo:
    info = np.iinfo(dtype.numpy)
    return IInfo(bits=info.bits, max=_builtin_int(info.max), min=_builtin_int(info.min), dtype=dtype)


_FINFO: Final[dict[DType, FInfo]] = {d: _make_finfo(d) for d in ALL_DTYPES if d.kind == "f"}
_IINFO: Final[dict[DType, IInfo]] = {d: _make_iinfo(d) for d in ALL_DTYPES if d.kind in ("i", "u")}


def finfo(dtype: DType | Any) -> FInfo:
    """Return the limits of a floating-point dtype (or of a tensor's dtype).

    >>> finfo(float16).max, finfo(float32).eps == 2.0**-23, finfo(float64).bits
    (65504.0, True, 64)
    """
    d = _dtype_argument(dtype, "finfo")
    if d not in _FINFO:
        raise TypeError(f"finfo: requires a floating-point dtype, got {d!r} (use iinfo for integers)")
    return _FINFO[d]


def iinfo(dtype: DType | Any) -> IInfo:
    """Return the limits of an integer dtype (or of a tensor's dtype); bool is not an integer here.

    >>> iinfo(uint8).max, iinfo(int8).min, iinfo(int64).bits
    (255, -128, 64)
    """
    d = _dtype_argument(dtype, "iinfo")
    if d not in _IINFO:
        raise TypeError(f"iinfo: requires an integer dtype, got {d!r} (use finfo for floating point)")
    return _IINFO[d]


# The array API standard's dtype kinds, as sets of DType.kind letters. t_tensor has no complex dtypes,
# but the kind is part of the standard, so it exists and matches nothing.
_ISDTYPE_KINDS: Final[dict[str, frozenset[str]]] = {
    "bool": frozenset("b"),
    "signed integer": frozenset("i"),
    "unsigned integer": frozenset("u"),
    "integral": frozenset("iu"),
    "real floating": frozenset("f"),
    "complex floating": frozenset(),
    "numeric": frozenset("iuf"),
}


def _isdtype_one(dtype: DType, kind: object) -> _builtin_bool:
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str):
        if kind not in _ISDTYPE_KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_ISDTYPE_KINDS)}")
        return dtype.kind in _ISDTYPE_KINDS[kind]
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of those, got {kind!r}")


def isdtype(dtype: DType, kind: DType | str | tuple[DType | str, ...]) -> _builtin_bool:
    """Return True if ``dtype`` is of ``kind`` (array API standard ``isdtype``).

    ``kind`` is a DType, one of 'bool', 'signed integer', 'unsigned integer', 'integral',
    'real floating', 'complex floating', 'numeric', or a tuple of these (true if any matches).

    >>> isdtype(uint8, "integral"), isdtype(bool, "numeric"), isdtype(float16, ("bool", "real floating"))
    (True, False, True)
    """
    _check_dtype(dtype, "isdtype", "dtype")
    if isinstance(kind, tuple):
        return any(_isdtype_one(dtype, k) for k in kind)
    return _isdtype_one(dtype, kind)
