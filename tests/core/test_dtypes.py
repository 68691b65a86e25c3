"""Tests for t_tensor.dtypes, with PyTorch (and NumPy) as the oracle."""

from __future__ import annotations

import builtins
import copy
import dataclasses
import doctest
import itertools
import pickle
import random
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import t_tensor.dtypes as dt

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")
ALIASES = ("half", "float", "double", "short", "int", "long")
TORCH_DTYPE = {d: getattr(torch, d.name) for d in dt.ALL_DTYPES}
SCALARS = (True, 3, 1.5)  # one Python bool, int and float


class FakeTensor:
    """Stand-in for t_tensor's Tensor: result_type only looks at .dtype and .ndim."""

    def __init__(self, dtype: dt.DType, ndim: int) -> None:
        self.dtype = dtype
        self.ndim = ndim

    def __repr__(self) -> str:
        return f"FakeTensor({self.dtype!r}, ndim={self.ndim})"


# An operand spec is (kind, value): ("dtype", DType) is a bare dtype, ("dim", DType) a tensor with
# ndim > 0, ("zero", DType) a 0-d tensor, ("scalar", x) a Python scalar.
Spec = tuple[str, Any]
TENSOR_SPECS: list[Spec] = [(k, d) for k in ("dim", "zero") for d in dt.ALL_DTYPES]
SCALAR_SPECS: list[Spec] = [("scalar", s) for s in SCALARS]
ALL_SPECS: list[Spec] = [("dtype", d) for d in dt.ALL_DTYPES] + TENSOR_SPECS + SCALAR_SPECS


def ours(spec: Spec) -> object:
    kind, value = spec
    if kind == "dim":
        return FakeTensor(value, 2)
    if kind == "zero":
        return FakeTensor(value, 0)
    return value  # a DType or a Python scalar is passed as is


def theirs(spec: Spec) -> object:
    kind, value = spec
    # Meta tensors carry dtype and shape without memory, and ops on them still run type promotion.
    if kind in ("dtype", "dim"):  # our bare DType behaves as a tensor with dimensions
        return torch.empty(2, dtype=TORCH_DTYPE[value], device="meta")
    if kind == "zero":
        return torch.empty((), dtype=TORCH_DTYPE[value], device="meta")
    return value


def name_of(torch_dtype: torch.dtype) -> str:
    return str(torch_dtype).removeprefix("torch.")


@pytest.fixture(autouse=True)
def restore_default_dtype() -> Iterator[None]:
    """Whatever a test does, leave both libraries' default dtype as they were."""
    ours_before, torch_before = dt.get_default_dtype(), torch.get_default_dtype()
    yield
    dt.set_default_dtype(ours_before)
    torch.set_default_dtype(torch_before)


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request: pytest.FixtureRequest) -> dt.DType:
    """Run the test with both default dtypes, set the same way in t_tensor and torch."""
    d = getattr(dt, request.param)
    dt.set_default_dtype(d)
    torch.set_default_dtype(TORCH_DTYPE[d])
    return d


# ---------------------------------------------------------------------------------------------------------
# The DType objects
# ---------------------------------------------------------------------------------------------------------


def test_codes_match_c_enum_and_order() -> None:
    assert [d.name for d in dt.ALL_DTYPES] == list(NAMES)
    assert [d.code for d in dt.ALL_DTYPES] == list(range(9))
    for d in dt.ALL_DTYPES:
        assert dt.by_code(d.code) is d
        assert dt.by_code(np.int32(d.code)) is d  # codes may come back as NumPy ints
        assert getattr(dt, d.name) is d


@pytest.mark.parametrize("bad", [9, -1, 100])
def test_by_code_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="by_code"):
        dt.by_code(bad)


@pytest.mark.parametrize("bad", ["7", 7.0, None, True])
def test_by_code_not_an_int(bad: object) -> None:
    with pytest.raises(TypeError, match="by_code"):
        dt.by_code(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("d", dt.ALL_DTYPES, ids=NAMES)
def test_attributes_match_numpy_and_torch(d: dt.DType) -> None:
    t = TORCH_DTYPE[d]
    assert d.numpy == np.dtype(d.name)
    assert d.itemsize == d.numpy.itemsize == t.itemsize
    assert d.kind == d.numpy.kind
    assert d.typestr == d.numpy.str  # the array interface's typestr, e.g. "<f4" on little endian
    assert d.is_floating_point is t.is_floating_point
    assert d.is_signed is t.is_signed
    assert repr(d) == str(d) == repr(t).replace("torch.", "t_tensor.")


def test_typestr_literals() -> None:
    if sys.byteorder != "little":
        pytest.skip("the literals below are for little-endian machines")
    assert [d.typestr for d in dt.ALL_DTYPES] == [
        "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<f2", "<f4", "<f8",
    ]  # fmt: skip


@pytest.mark.parametrize("alias", ALIASES)
def test_aliases_match_torch(alias: str) -> None:
    ours_dtype = getattr(dt, alias)
    assert isinstance(ours_dtype, dt.DType)
    assert TORCH_DTYPE[ours_dtype] is getattr(torch, alias)


def test_module_keeps_builtins_usable() -> None:
    # The module shadows bool/int/float inside itself, never for its importers.
    assert dt.bool is not builtins.bool and dt.int is dt.int32 and dt.float is dt.float32
    assert bool is builtins.bool


def test_all_lists_public_names() -> None:
    for name in dt.__all__:
        assert hasattr(dt, name), name
    expected = {
        *NAMES, *ALIASES, "DType", "ALL_DTYPES", "by_code", "promote_types", "result_type", "can_cast",
        "get_default_dtype", "set_default_dtype", "as_dtype", "from_numpy_dtype", "finfo", "iinfo", "FInfo",
        "IInfo", "isdtype",
    }  # fmt: skip
    assert set(dt.__all__) == expected


def test_dtype_cannot_be_constructed() -> None:
    with pytest.raises(TypeError, match="DType"):
        dt.DType()
    with pytest.raises(TypeError, match="DType"):
        dt.DType("float32", 4, 7, "f")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="DType"):
        type("MyDType", (dt.DType,), {})


def test_dtype_is_immutable() -> None:
    with pytest.raises(AttributeError, match="immutable"):
        dt.float32.itemsize = 8  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del dt.float32.name
    with pytest.raises(AttributeError):
        dt.float32.extra = 1  # type: ignore[attr-defined]
    assert dt.float32.itemsize == 4


def test_identity_equality_and_hashing() -> None:
    assert len(set(dt.ALL_DTYPES)) == 9
    assert {d: d.name for d in dt.ALL_DTYPES}[dt.float32] == "float32"
    assert dt.float32 == dt.float32 and dt.float32 != dt.float64
    assert dt.float32 != "float32" and dt.float32 != np.float32 and dt.float32 != torch.float32


@pytest.mark.parametrize("d", dt.ALL_DTYPES, ids=NAMES)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip_is_the_singleton(d: dt.DType, protocol: int) -> None:
    assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
    assert pickle.loads(pickle.dumps([d, dt.half], protocol=protocol)) == [d, dt.float16]


@pytest.mark.parametrize("d", dt.ALL_DTYPES, ids=NAMES)
def test_copy_is_the_singleton(d: dt.DType) -> None:
    assert copy.copy(d) is d
    assert copy.deepcopy({"x": d})["x"] is d


# ---------------------------------------------------------------------------------------------------------
# promote_types and can_cast
# ---------------------------------------------------------------------------------------------------------


def test_promotion_table_is_complete_and_in_code_order() -> None:
    assert [row_dtype for row_dtype, _ in dt._PROMOTION_ROWS] == list(dt.ALL_DTYPES)
    assert len(dt._PROMOTION_TABLE) == 81


@pytest.mark.parametrize("a", dt.ALL_DTYPES, ids=NAMES)
@pytest.mark.parametrize("b", dt.ALL_DTYPES, ids=NAMES)
def test_promote_types_matches_torch(a: dt.DType, b: dt.DType) -> None:
    assert dt.promote_types(a, b).name == name_of(torch.promote_types(TORCH_DTYPE[a], TORCH_DTYPE[b]))


def test_promote_types_examples() -> None:
    assert dt.promote_types(dt.uint8, dt.int8) is dt.int16
    assert dt.promote_types(dt.bool, dt.uint8) is dt.uint8
    assert dt.promote_types(dt.int64, dt.float16) is dt.float16
    assert dt.promote_types(dt.float16, dt.float32) is dt.float32


def test_promote_types_is_symmetric_idempotent_and_associative() -> None:
    # result_type folds promote_types over many operands; this makes the fold order irrelevant.
    for a, b in itertools.product(dt.ALL_DTYPES, repeat=2):
        assert dt.promote_types(a, b) is dt.promote_types(b, a)
    for a in dt.ALL_DTYPES:
        assert dt.promote_types(a, a) is a
    for a, b, c in itertools.product(dt.ALL_DTYPES, repeat=3):
        assert dt.promote_types(dt.promote_types(a, b), c) is dt.promote_types(a, dt.promote_types(b, c))


@pytest.mark.parametrize(
    ("a", "b"),
    [("float32", dt.int8), (dt.int8, np.float32), (None, dt.bool), (torch.float32, dt.float32),
     (FakeTensor(dt.int8, 1), dt.int8)],
)  # fmt: skip
def test_promote_types_rejects_non_dtypes(a: Any, b: Any) -> None:
    with pytest.raises(TypeError, match="promote_types"):
        dt.promote_types(a, b)


@pytest.mark.parametrize("a", dt.ALL_DTYPES, ids=NAMES)
@pytest.mark.parametrize("b", dt.ALL_DTYPES, ids=NAMES)
def test_can_cast_matches_torch(a: dt.DType, b: dt.DType) -> None:
    expected = torch.can_cast(TORCH_DTYPE[a], TORCH_DTYPE[b])
    assert dt.can_cast(a, b) is expected
    assert dt.can_cast(FakeTensor(a, 1), b) is expected  # the array API also allows an array as from_


def test_can_cast_examples() -> None:
    assert dt.can_cast(dt.int64, dt.int8)  # torch: same category is enough, even if values may not fit
    assert dt.can_cast(dt.int8, dt.uint8)
    assert dt.can_cast(dt.int64, dt.float16)
    assert not dt.can_cast(dt.float16, dt.int64)
    assert not dt.can_cast(dt.uint8, dt.bool)


@pytest.mark.parametrize(("a", "b"), [("int8", dt.int8), (dt.int8, "int8"), (dt.int8, FakeTensor(dt.int8, 1)),
                                      (np.int8, dt.int8), (3, dt.int8)])  # fmt: skip
def test_can_cast_rejects_non_dtypes(a: Any, b: Any) -> None:
    with pytest.raises(TypeError, match="can_cast"):
        dt.can_cast(a, b)


# ---------------------------------------------------------------------------------------------------------
# result_type
# ---------------------------------------------------------------------------------------------------------


def torch_result_type(specs: tuple[Spec, ...]) -> str:
    """torch's result dtype name for the operands, from a public op where one exists."""
    args = [theirs(s) for s in specs]
    is_tensor = [isinstance(a, torch.Tensor) for a in args]
    if len(args) == 1:
        return name_of(args[0].dtype) if is_tensor[0] else name_of(torch.result_type(args[0], args[0]))
    if len(args) == 2:
        return name_of(torch.result_type(*args))
    if len(args) == 3 and is_tensor[0] and is_tensor[1] == is_tensor[2]:
        # clamp(Tensor, Tensor, Tensor) and clamp(Tensor, Scalar, Scalar) promote all three operands
        # with torch's C++ result-type logic (the meta function runs on meta tensors).
        return name_of(torch.clamp(*args).dtype)
    # No public op takes these mixes (e.g. two tensors and a scalar), so use the reference
    # implementation PyTorch's own decompositions use; test_torch_oracles_agree checks it against clamp.
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

    return name_of(elementwise_dtypes(*args, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1])


def check_result_types(all_specs: Any) -> list[str]:
    mismatches = []
    for specs in all_specs:
        got = dt.result_type(*(ours(s) for s in specs)).name
        expected = torch_result_type(specs)
        if got != expected:
            mismatches.append(f"{specs}: got {got}, torch says {expected}")
    return mismatches


@pytest.mark.usefixtures("default_dtype")
@pytest.mark.parametrize("first", ALL_SPECS, ids=str)
def test_result_type_pairs_match_torch(first: Spec) -> None:
    assert check_result_types((first, second) for second in ALL_SPECS) == []


@pytest.mark.usefixtures("default_dtype")
@pytest.mark.parametrize("spec", ALL_SPECS, ids=str)
def test_result_type_single_operand(spec: Spec) -> None:
    assert check_result_types([(spec,)]) == []


@pytest.mark.parametrize("first", TENSOR_SPECS + SCALAR_SPECS, ids=str)
def test_result_type_triples_match_torch(first: Spec, default_dtype: dt.DType) -> None:
    # Every ordered triple of dimensioned tensors, 0-d tensors and scalars. The default dtype only
    # matters when a Python float takes part, so with float64 only those triples are checked (the
    # torch side costs about 4 s for all of them).
    triples = ((first, *rest) for rest in itertools.product(TENSOR_SPECS + SCALAR_SPECS, repeat=2))
    if default_dtype is dt.float64:
        triples = (specs for specs in triples if ("scalar", 1.5) in specs)
    assert check_result_types(triples) == []


@pytest.mark.usefixtures("default_dtype")
def test_result_type_many_operands_match_torch() -> None:
    rng = random.Random(1234)
    combos = [tuple(rng.choice(ALL_SPECS) for _ in range(rng.randint(4, 7))) for _ in range(500)]
    assert check_result_types(combos) == []


def test_torch_oracles_agree() -> None:
    # The private reference implementation must match the C++ logic wherever clamp can tell.
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

    rng = random.Random(99)
    specs = TENSOR_SPECS + SCALAR_SPECS
    both_or_neither_scalar = [
        (a, b, c)
        for a, b, c in itertools.product(TENSOR_SPECS, specs, specs)
        if (b in SCALAR_SPECS) == (c in SCALAR_SPECS)
    ]
    for a, b, c in rng.sample(both_or_neither_scalar, 1000):
        args = [theirs(a), theirs(b), theirs(c)]
        reference = elementwise_dtypes(*args, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]
        assert torch.clamp(*args).dtype == reference, (a, b, c)


def test_result_type_tier_examples() -> None:
    t = FakeTensor
    assert dt.result_type(t(dt.int8, 1), 1000) is dt.int8  # a scalar int does not widen an int tensor
    assert dt.result_type(t(dt.int8, 1), 1.5) is dt.float32  # but a float scalar changes the category
    assert dt.result_type(t(dt.float16, 1), 1.5) is dt.float16
    assert dt.result_type(t(dt.uint8, 1), t(dt.int64, 0)) is dt.uint8
    assert dt.result_type(t(dt.bool, 1), t(dt.int16, 0), 7) is dt.int16
    assert dt.result_type(t(dt.int32, 1), t(dt.float64, 0), 1.5) is dt.float64
    assert dt.result_type(t(dt.uint8, 0), t(dt.int8, 0)) is dt.int16
    assert dt.result_type(True, 2) is dt.int64
    assert dt.result_type(dt.uint8, dt.int8) is dt.int16  # bare dtypes count as dimensioned tensors
    assert dt.result_type(dt.float16, t(dt.float64, 0)) is dt.float16


def test_result_type_uses_current_default_dtype() -> None:
    assert dt.result_type(dt.int64, 1.0) is dt.float32
    dt.set_default_dtype(dt.float64)
    assert dt.result_type(dt.int64, 1.0) is dt.float64
    assert dt.result_type(1, 1.0) is dt.float64
    assert dt.result_type(dt.float16, 1.0) is dt.float16


@pytest.mark.parametrize("x", ["float32", 1j, np.int64(1), None, torch.float32, [1], FakeTensor(np.int8, 1)],
                         ids=repr)  # fmt: skip
def test_result_type_rejects_other_operands(x: object) -> None:
    with pytest.raises(TypeError, match="result_type"):
        dt.result_type(dt.int8, x)


def test_result_type_needs_an_argument() -> None:
    with pytest.raises(TypeError, match="result_type"):
        dt.result_type()


# ---------------------------------------------------------------------------------------------------------
# Default dtype
# ---------------------------------------------------------------------------------------------------------


def test_default_dtype_starts_as_float32() -> None:
    assert dt.get_default_dtype() is dt.float32
    assert torch.get_default_dtype() is torch.float32


def test_set_default_dtype() -> None:
    dt.set_default_dtype(dt.float64)
    assert dt.get_default_dtype() is dt.float64
    assert dt.as_dtype(builtins.float) is dt.float64
    dt.set_default_dtype(dt.float32)
    assert dt.get_default_dtype() is dt.float32
    assert dt.as_dtype(builtins.float) is dt.float32


@pytest.mark.parametrize("bad", [dt.int32, dt.bool, dt.float16, "float64", np.float64, builtins.float, None],
                         ids=repr)  # fmt: skip
def test_set_default_dtype_rejects(bad: Any) -> None:
    with pytest.raises(TypeError, match="set_default_dtype: only floating-point types"):
        dt.set_default_dtype(bad)
    assert dt.get_default_dtype() is dt.float32


def test_torch_rejects_integer_default_too() -> None:
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        torch.set_default_dtype(torch.int32)


# ---------------------------------------------------------------------------------------------------------
# as_dtype and from_numpy_dtype
# ---------------------------------------------------------------------------------------------------------

ACCEPTED: list[tuple[object, str]] = [
    *[(d, d.name) for d in dt.ALL_DTYPES],
    *[(name, name) for name in NAMES],
    ("half", "float16"), ("float", "float32"), ("double", "float64"),  # names follow t_tensor's aliases,
    ("short", "int16"), ("int", "int32"), ("long", "int64"),  # so "float" is float32 as in torch
    (builtins.bool, "bool"), (builtins.int, "int64"), (builtins.float, "float32"),
    (np.bool_, "bool"), (np.int8, "int8"), (np.int16, "int16"), (np.int32, "int32"), (np.int64, "int64"),
    (np.uint8, "uint8"), (np.float16, "float16"), (np.float32, "float32"), (np.float64, "float64"),
    (np.intp, "int64"), (np.longlong, "int64"), (np.double, "float64"), (np.half, "float16"),
    ("?", "bool"), ("b1", "bool"), ("i1", "int8"), ("b", "int8"), ("i2", "int16"), ("i4", "int32"),
    ("i8", "int64"), ("u1", "uint8"), ("B", "uint8"), ("f2", "float16"), ("e", "float16"), ("f4", "float32"),
    ("f8", "float64"), ("d", "float64"), ("=f4", "float32"), ("|u1", "uint8"), ("<i8", "int64"),
    (np.dtype("float32"), "float32"), (np.dtype("uint8"), "uint8"), (np.dtype("bool"), "bool"),
    (np.dtype("f8", metadata={"unit": "m"}), "float64"),
]  # fmt: skip


@pytest.mark.skipif(sys.byteorder != "little", reason="'<i8' is non-native on big-endian machines")
@pytest.mark.parametrize(("x", "expected"), ACCEPTED, ids=repr)
def test_as_dtype_accepts(x: object, expected: str) -> None:
    assert dt.as_dtype(x) is getattr(dt, expected)


REJECTED: list[object] = [
    None, "complex64", np.complex128, builtins.complex, "uint16", np.uint32, np.uint64, object, "O",
    "bfloat16", "S3", "U2", "datetime64[s]", np.dtype("f4,f4"), np.dtype(("f4", (2,))), "notadtype", 3, 1.5,
    torch.float32, [dt.float32], np.zeros(3), FakeTensor(dt.float32, 1),
    np.dtype("f4").newbyteorder("S"),  # non-native byte order: the C core could not read it as is
]  # fmt: skip
if np.dtype(np.longdouble).itemsize > 8:  # float80/float128 on most x86 and aarch64 Linux builds
    REJECTED.append(np.longdouble)


@pytest.mark.parametrize("x", REJECTED, ids=repr)
def test_as_dtype_rejects(x: object) -> None:
    with pytest.raises(TypeError, match=r"^as_dtype: unsupported dtype "):
        dt.as_dtype(x)


def test_as_dtype_error_names_caller_and_value() -> None:
    with pytest.raises(TypeError, match=r"^zeros: unsupported dtype 'uint16'.*float32"):
        dt.as_dtype("uint16", fn="zeros")
    with pytest.raises(TypeError, match=r"non-native byte order"):
        dt.as_dtype(np.dtype("f4").newbyteorder("S"), fn="tensor")


@pytest.mark.parametrize("d", dt.ALL_DTYPES, ids=NAMES)
def test_numpy_mapping_agrees_with_torch_from_numpy(d: dt.DType) -> None:
    assert name_of(torch.from_numpy(np.zeros(2, dtype=d.numpy)).dtype) == d.name
    assert dt.from_numpy_dtype(d.numpy) is d
    assert dt.from_numpy_dtype(d.numpy.type) is d  # the scalar type, e.g. np.float32


@pytest.mark.parametrize("x", [np.dtype("uint16"), np.dtype("complex64"), np.dtype("O"), np.dtype("f4,f4")],
                         ids=repr)  # fmt: skip
def test_from_numpy_dtype_rejects_unsupported(x: np.dtype[Any]) -> None:
    with pytest.raises(TypeError, match=r"^from_numpy: unsupported dtype .*bool, int8, .*float64"):
        dt.from_numpy_dtype(x, fn="from_numpy")


@pytest.mark.parametrize("x", ["float32", dt.float32, builtins.float, None, np.zeros(2)], ids=repr)
def test_from_numpy_dtype_rejects_non_numpy(x: object) -> None:
    with pytest.raises(TypeError, match="^from_numpy_dtype: expected a numpy dtype"):
        dt.from_numpy_dtype(x)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------
# finfo, iinfo, isdtype
# ---------------------------------------------------------------------------------------------------------

FLOATS = [d for d in dt.ALL_DTYPES if d.is_floating_point]
INTS = [d for d in dt.ALL_DTYPES if d.kind in "iu"]


@pytest.mark.parametrize("d", FLOATS, ids=repr)
def test_finfo_matches_torch(d: dt.DType) -> None:
    info, expected = dt.finfo(d), torch.finfo(TORCH_DTYPE[d])
    for field in ("bits", "eps", "max", "min", "smallest_normal", "tiny", "resolution"):
        value = getattr(info, field)
        assert value == getattr(expected, field), field
        assert type(value) is type(getattr(expected, field)), field  # Python int/float, not NumPy scalars
    assert info.dtype is d and expected.dtype == d.name
    assert dt.finfo(FakeTensor(d, 1)) is info
    assert dt.finfo(d.name) is info


@pytest.mark.parametrize("d", INTS, ids=repr)
def test_iinfo_matches_torch(d: dt.DType) -> None:
    info, expected = dt.iinfo(d), torch.iinfo(TORCH_DTYPE[d])
    for field in ("bits", "max", "min"):
        value = getattr(info, field)
        assert value == getattr(expected, field) and type(value) is builtins.int, field
    assert info.dtype is d and expected.dtype == d.name
    assert dt.iinfo(FakeTensor(d, 0)) is info


def test_info_objects_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        dt.finfo(dt.float32).eps = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        dt.iinfo(dt.int8).max = 1  # type: ignore[misc]


@pytest.mark.parametrize("d", [*INTS, dt.bool], ids=repr)
def test_finfo_rejects_non_floats(d: dt.DType) -> None:
    with pytest.raises(TypeError, match="^finfo"):
        dt.finfo(d)
    with pytest.raises(TypeError, match="finfo"):
        torch.finfo(TORCH_DTYPE[d])


@pytest.mark.parametrize("d", [*FLOATS, dt.bool], ids=repr)
def test_iinfo_rejects_floats_and_bool(d: dt.DType) -> None:
    with pytest.raises(TypeError, match="^iinfo"):
        dt.iinfo(d)
    with pytest.raises(TypeError):
        torch.iinfo(TORCH_DTYPE[d])


@pytest.mark.parametrize("x", ["uint16", None, object()], ids=repr)
def test_info_rejects_unsupported(x: object) -> None:
    with pytest.raises(TypeError, match="^finfo: unsupported dtype"):
        dt.finfo(x)
    with pytest.raises(TypeError, match="^iinfo: unsupported dtype"):
        dt.iinfo(x)


# The array API standard's kinds, written out per dtype.
ISDTYPE_EXPECTED: dict[str, set[str]] = {
    "bool": {"bool"},
    "signed integer": {"int8", "int16", "int32", "int64"},
    "unsigned integer": {"uint8"},
    "integral": {"int8", "int16", "int32", "int64", "uint8"},
    "real floating": {"float16", "float32", "float64"},
    "complex floating": set(),
    "numeric": {"int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"},
}


@pytest.mark.parametrize("kind", ISDTYPE_EXPECTED)
def test_isdtype_kinds(kind: str) -> None:
    for d in dt.ALL_DTYPES:
        assert dt.isdtype(d, kind) is (d.name in ISDTYPE_EXPECTED[kind]), d


def test_isdtype_dtypes_and_tuples() -> None:
    for a, b in itertools.product(dt.ALL_DTYPES, repeat=2):
        assert dt.isdtype(a, b) is (a is b)
    assert dt.isdtype(dt.uint8, ("bool", "unsigned integer"))
    assert dt.isdtype(dt.float16, (dt.int8, "real floating"))
    assert not dt.isdtype(dt.float16, (dt.int8, "integral"))
    assert not dt.isdtype(dt.float16, ())
    assert dt.isdtype(dt.float32, (dt.float32,))


def test_isdtype_errors() -> None:
    with pytest.raises(ValueError, match="isdtype: unknown kind 'integer'"):
        dt.isdtype(dt.int8, "integer")
    with pytest.raises(TypeError, match="isdtype"):
        dt.isdtype(dt.int8, np.int8)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="isdtype"):
        dt.isdtype(dt.int8, (("integral",),))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="isdtype"):
        dt.isdtype("int8", "integral")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------
# Docstring examples
# ---------------------------------------------------------------------------------------------------------


def test_docstring_examples_run() -> None:
    result = doctest.testmod(dt, verbose=False)
    assert result.attempted > 10
    assert result.failed == 0
