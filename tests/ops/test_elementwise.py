"""Elementwise operations: binary and unary functions, operators, in-place forms and ``out=``.

PyTorch is the oracle throughout: for every case the same function runs on torch tensors made from
the same NumPy data, and result shape, dtype and values must agree (floats within a tolerance that
depends on the result dtype, integers and bools exactly, NaN where torch has NaN). Where torch
rejects an input (a dtype it has no kernel for, integer division by zero, ...), t_tensor must raise
too. Inputs are hypothesis-drawn broadcastable shape pairs (0-4 dims, sizes 0-4) in several memory
layouts (contiguous, transposed, step-sliced with an offset, expanded with stride 0); values come
from a NumPy generator seeded per example and stay inside each op's domain.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import subprocess
import sys
import textwrap
from functools import partial

import numpy as np
import pytest
import torch
from helpers import (
    LAYOUTS,
    TORCH_DTYPES,
    apply_layout,
    base_shape,
    broadcast_shapes,
    helper_test_exception,
    helper_test_op,
    tolerance,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt

ALL_DTYPES = list(TORCH_DTYPES)
TORCH_DTYPES_INV = {v: k for k, v in TORCH_DTYPES.items()}
FLOAT_DTYPES = [tt.float16, tt.float32, tt.float64]
INT_DTYPES = [tt.int8, tt.int16, tt.int32, tt.int64, tt.uint8]
EXAMPLES = 6  # hypothesis examples per (op, dtype); the tables below make that a few thousand cases

# ---------------------------------------------------------------------- op tables: (name, domain(s))

BINARY = [
    ("add", "real", "real"),
    ("sub", "real", "real"),
    ("mul", "real", "real"),
    ("div", "real", "nonzero"),
    ("true_divide", "real", "nonzero"),
    ("floor_divide", "real", "nonzero"),
    ("remainder", "real", "nonzero"),
    ("pow", "base", "exponent"),
    ("maximum", "real", "real"),
    ("minimum", "real", "real"),
    ("atan2", "real", "real"),
    ("eq", "real", "real"),
    ("ne", "real", "real"),
    ("lt", "real", "real"),
    ("le", "real", "real"),
    ("gt", "real", "real"),
    ("ge", "real", "real"),
    ("logical_and", "real", "real"),
    ("logical_or", "real", "real"),
    ("logical_xor", "real", "real"),
    ("bitwise_and", "bits", "bits"),
    ("bitwise_or", "bits", "bits"),
    ("bitwise_xor", "bits", "bits"),
    ("hypot", "real", "real"),
    ("copysign", "real", "real"),
    ("logaddexp", "real", "real"),
    ("logaddexp2", "real", "real"),
    ("fmod", "real", "nonzero"),
    ("bitwise_left_shift", "bits", "shift"),
    ("bitwise_right_shift", "bits", "shift"),
]
BINARY_DOMAINS = {name: (a, b) for name, a, b in BINARY}

UNARY = [
    ("neg", "real"),
    ("abs", "real"),
    ("sign", "real"),
    ("exp", "real"),
    ("expm1", "real"),
    ("log", "pos"),
    ("log1p", "pos"),
    ("log2", "pos"),
    ("log10", "pos"),
    ("sqrt", "pos"),
    ("rsqrt", "pos"),
    ("square", "real"),
    ("reciprocal", "nonzero"),
    ("sin", "real"),
    ("cos", "real"),
    ("tan", "tan"),
    ("asin", "unit"),
    ("acos", "unit"),
    ("atan", "real"),
    ("sinh", "real"),
    ("cosh", "real"),
    ("tanh", "real"),
    ("asinh", "real"),
    ("acosh", "ge1"),
    ("atanh", "unit"),
    ("floor", "real"),
    ("ceil", "real"),
    ("round", "real"),
    ("trunc", "real"),
    ("sigmoid", "real"),
    ("relu", "real"),
    ("erf", "real"),
    ("logical_not", "real"),
    ("bitwise_not", "bits"),
    ("isnan", "special"),
    ("isinf", "special"),
    ("isfinite", "special"),
    ("signbit", "special"),
    ("positive", "real"),
    ("exp2", "real"),
    ("logit", "prob"),
    ("logit_eps", "prob"),
    ("gelu", "real"),
    ("gelu_tanh", "real"),
    ("silu", "real"),
    ("softplus", "real"),
    ("softplus_beta", "real"),
    ("leaky_relu", "real"),
    ("leaky_relu_slope", "real"),
    ("elu", "real"),
    ("elu_alpha", "real"),
    ("hardtanh", "real"),
    ("hardtanh_limits", "real"),
]
UNARY_DOMAINS = dict(UNARY)
# Table names that are a function called with arguments: name -> (function, keyword arguments).
UNARY_WITH_ARGS = {
    "logit_eps": ("logit", {"eps": 0.2}),
    "gelu_tanh": ("gelu", {"approximate": "tanh"}),
    "softplus_beta": ("softplus", {"beta": 2.0, "threshold": 1.5}),
    "leaky_relu_slope": ("leaky_relu", {"negative_slope": -0.3}),
    "elu_alpha": ("elu", {"alpha": 0.7}),
    "hardtanh_limits": ("hardtanh", {"min_val": -2.5, "max_val": 1.5}),
}
# In torch these live in torch.nn.functional only (t_tensor has them at the top and as methods).
TORCH_FUNCTIONAL = {"gelu", "silu", "softplus", "leaky_relu", "elu", "hardtanh"}
UNARY_WITHOUT_OUT = TORCH_FUNCTIONAL | {"positive"}
# Unary functions that promote integer inputs to the default float dtype; each has an in-place form.
FLOAT_UNARY = [
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "exp2", "logit",
]  # fmt: skip

# torch takes only a tensor as the second operand of these; t_tensor also takes a Python scalar.
TORCH_TENSOR_ONLY = {
    "maximum", "minimum", "atan2", "logical_and", "logical_or", "logical_xor", "hypot", "logaddexp", "logaddexp2",
}  # fmt: skip

# ---------------------------------------------------------------------- values

# Float domains (low, high); a share of the values snaps to multiples of 0.5 (exact zeros, ties for
# round, equal elements for the comparisons), clipped back into the domain.
FLOAT_DOMAINS = {
    "real": (-3.0, 3.0),
    "special": (-3.0, 3.0),
    "pos": (0.05, 4.0),
    "nonzero": (0.25, 3.0),  # magnitude; the sign is random
    "unit": (-0.95, 0.95),
    "tan": (-1.4, 1.4),
    "ge1": (1.0, 5.0),
    "base": (0.1, 3.0),
    "exponent": (-3.0, 3.0),
    "prob": (0.02, 0.98),
    "weight": (-1.0, 2.0),  # lerp: both of torch's formulas (|w| < 0.5 and the other)
    "shift": (-3.0, 70.0),  # floats cannot be shifted; any values do for the error cases
}
INT_DOMAINS = {
    "real": (-20, 20),
    "special": (-20, 20),
    "pos": (1, 20),
    "nonzero": (1, 9),  # magnitude; the sign is random for signed dtypes
    "unit": (-1, 1),
    "tan": (-1, 1),
    "ge1": (1, 20),
    "base": (-5, 5),
    "exponent": (0, 3),  # integers to negative powers are an error, tested separately
    "prob": (0, 1),
    "weight": (-1, 2),
    "shift": (-3, 70),  # negative and >= 64 included: PyTorch defines both
}
BOOL_ALL_TRUE = {"pos", "nonzero", "ge1"}


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: tt.DType, domain: str) -> np.ndarray:
    """Random values of ``dtype`` inside ``domain`` (see the tables above), always an ndarray (also 0-d)."""
    return np.asarray(_values(rng, shape, dtype, domain), dtype=dtype.numpy)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: tt.DType, domain: str) -> np.ndarray:
    if dtype is tt.bool:
        return np.ones(shape, bool) if domain in BOOL_ALL_TRUE else rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        if domain == "bits":
            return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype.numpy)
        low, high = INT_DOMAINS[domain]
        if dtype.kind == "u":
            low = max(low, 0)
        data = rng.integers(low, high, size=shape, endpoint=True)
        if domain == "nonzero" and dtype.kind == "i":
            data = data * rng.choice([-1, 1], size=shape)
        return data.astype(dtype.numpy)
    low, high = FLOAT_DOMAINS["real" if domain == "bits" else domain]
    data = rng.uniform(low, high, size=shape)
    snap = rng.random(shape) < 0.3
    data = np.where(snap, np.clip(np.round(data * 2) / 2, low, high), data)
    if domain == "nonzero":
        data = data * rng.choice([-1.0, 1.0], size=shape)
    if domain == "special":
        specials = np.array([np.nan, np.inf, -np.inf, 0.0])
        data = np.where(rng.random(shape) < 0.3, specials[rng.integers(0, 4, size=shape)], data)
    return data.astype(dtype.numpy)


def scalar_value(rng: np.random.Generator, dtype: tt.DType, domain: str) -> bool | int | float:
    """A Python scalar from ``domain`` whose kind (bool/int/float) matches ``dtype``."""
    value = values(rng, (), dtype, domain)
    return bool(value) if dtype is tt.bool else int(value) if dtype.kind in "iu" else float(value)


# ---------------------------------------------------------------------- running an op in both libraries


def torch_inputs(inputs):
    return [torch.from_numpy(a.copy()) for a in inputs]


def check(inputs: list[np.ndarray], fn) -> tt.Tensor:
    """``fn(lib, *tensors)`` through t_tensor and torch, via ``helper_test_op``; the tolerance follows
    torch's result dtype and integer/bool results are also compared exactly (int64 does not survive
    the helper's float64 comparison)."""
    want = fn(torch, *torch_inputs(inputs))
    atol, rtol = tolerance(want.dtype)
    got = helper_test_op(inputs, partial(fn, tt), partial(fn, torch), ref="torch", atol=atol, rtol=rtol)
    if not want.dtype.is_floating_point:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    return got


def torch_raises(fn, inputs) -> bool:
    try:
        fn(torch, *torch_inputs(inputs))
    except Exception:  # noqa: BLE001 - any rejection by torch counts
        return True
    return False


def other_operand(lib, name: str, x, y):
    """torch's maximum/atan2/logical_* want a tensor: give them the scalar as a 0-d tensor of the
    dtype the op computes in (the result type, or the default float dtype for atan2 of integers),
    which promotes as the Python scalar does and converts it as torch converts scalars."""
    if lib is torch and name in TORCH_TENSOR_ONLY and not isinstance(y, torch.Tensor):
        dtype = torch.result_type(x, y)
        if name == "atan2" and not dtype.is_floating_point:
            dtype = torch.get_default_dtype()
        return torch.tensor(y, dtype=dtype)
    return y


def call_binary(lib, name: str, form: str, x, y):
    y = other_operand(lib, name, x, y)
    if form == "method":
        return getattr(x, name)(y)
    return getattr(lib, name)(x, y)


def unary_fn(lib, name: str, form: str = "function"):
    """The callable for a UNARY table entry: ``lib.name``, ``x.name`` for the method form, torch's
    ``torch.nn.functional.name`` for the activations, with the entry's arguments bound."""
    base, kwargs = UNARY_WITH_ARGS.get(name, (name, {}))
    if lib is torch and base in TORCH_FUNCTIONAL:
        return lambda x: getattr(torch.nn.functional, base)(x, **kwargs)
    if form == "method":
        return lambda x: getattr(x, base)(**kwargs)
    return lambda x: getattr(lib, base)(x, **kwargs)


def base_name(name: str) -> str:
    return UNARY_WITH_ARGS.get(name, (name, {}))[0]


def call_unary(lib, name: str, form: str, x):
    return unary_fn(lib, name, form)(x)


def sample(dtype: tt.DType, shape=(2, 3), domain: str = "real", seed: int = 0) -> np.ndarray:
    return values(np.random.default_rng(seed), shape, dtype, domain)


@functools.cache
def _torch_supports_binary(name: str, a: tt.DType, b: tt.DType) -> bool:
    da, db = BINARY_DOMAINS[name]
    inputs = [sample(a, (3,), da), sample(b, (3,), db, seed=1)]
    return not torch_raises(lambda lib, x, y: getattr(lib, name)(x, y), inputs)


def _torch_supports_unary(name: str, dtype: tt.DType) -> bool:
    return not torch_raises(lambda lib, x: unary_fn(lib, name)(x), [sample(dtype, (3,), UNARY_DOMAINS[name])])


def _dtype_id(d) -> str:
    return d.name if isinstance(d, tt.DType) else str(d)


# ---------------------------------------------------------------------- binary functions, all layouts


@st.composite
def binary_cases(draw):
    result, (shape_a, shape_b) = draw(broadcast_shapes(2))
    return {
        "shapes": (shape_a, shape_b),
        "layouts": (draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS))),
        # the second operand: a tensor of the same dtype, of any dtype, or a Python scalar
        "other": draw(st.sampled_from(["same", "same", "any", "scalar"])),
        "other_dtype": draw(st.sampled_from(ALL_DTYPES)),
        "form": draw(st.sampled_from(["function", "method"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


BINARY_CASES = [
    (name, dtype) for name, _, _ in BINARY for dtype in ALL_DTYPES if _torch_supports_binary(name, dtype, dtype)
]


@pytest.mark.parametrize("name, dtype", BINARY_CASES, ids=[f"{n}-{d.name}" for n, d in BINARY_CASES])
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=binary_cases())
def test_binary_matches_torch(name, dtype, case):
    rng = np.random.default_rng(case["seed"])
    domain_a, domain_b = BINARY_DOMAINS[name]
    (shape_a, shape_b), (layout_a, layout_b) = case["shapes"], case["layouts"]
    other_dtype = dtype if case["other"] == "same" else case["other_dtype"]
    a = values(rng, base_shape(shape_a, layout_a), dtype, domain_a)
    if case["other"] == "scalar":  # torch may reject e.g. int_tensor & 2.5: then t_tensor must raise too
        s = scalar_value(rng, other_dtype, domain_b)
        expect_same_outcome(
            [a], lambda lib, x: call_binary(lib, name, case["form"], apply_layout(x, layout_a, shape_a), s)
        )
        return
    if not _torch_supports_binary(name, dtype, other_dtype):
        return  # test_binary_dtypes_torch_rejects_raise covers these pairs
    b = values(rng, base_shape(shape_b, layout_b), other_dtype, domain_b)
    check(
        [a, b],
        lambda lib, x, y: call_binary(
            lib, name, case["form"], apply_layout(x, layout_a, shape_a), apply_layout(y, layout_b, shape_b)
        ),
    )


# ---------------------------------------------------------------------- unary functions, all layouts


@st.composite
def unary_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    return {
        "shape": shape,
        "layout": draw(st.sampled_from(LAYOUTS)),
        "form": draw(st.sampled_from(["function", "method"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


UNARY_CASES = [(name, dtype) for name, _ in UNARY for dtype in ALL_DTYPES if _torch_supports_unary(name, dtype)]


@pytest.mark.parametrize("name, dtype", UNARY_CASES, ids=[f"{n}-{d.name}" for n, d in UNARY_CASES])
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=unary_cases())
def test_unary_matches_torch(name, dtype, case):
    rng = np.random.default_rng(case["seed"])
    shape, layout = case["shape"], case["layout"]
    a = values(rng, base_shape(shape, layout), dtype, UNARY_DOMAINS[name])
    check([a], lambda lib, x: call_unary(lib, name, case["form"], apply_layout(x, layout, shape)))


# ---------------------------------------------------------------------- dtypes torch has no kernel for

BINARY_UNSUPPORTED = [
    (name, a, b)
    for name, _, _ in BINARY
    for a in ALL_DTYPES
    for b in ALL_DTYPES
    if not _torch_supports_binary(name, a, b)
]
UNARY_UNSUPPORTED = [(name, d) for name, _ in UNARY for d in ALL_DTYPES if not _torch_supports_unary(name, d)]


@pytest.mark.parametrize(
    "name, a, b", BINARY_UNSUPPORTED, ids=[f"{n}-{a.name}-{b.name}" for n, a, b in BINARY_UNSUPPORTED]
)
def test_binary_dtypes_torch_rejects_raise(name, a, b):
    # bitwise ops on floats: TypeError; the rest (bool - x, bool // bool, ...): RuntimeError
    exc = TypeError if name.startswith("bitwise") else (RuntimeError, TypeError)
    da, db = BINARY_DOMAINS[name]
    inputs = [sample(a, (3,), da), sample(b, (3,), db, seed=1)]
    helper_test_exception(inputs, lambda x, y: tt_or_torch(x, name)(x, y), exception=exc, match=name)


def tt_or_torch(x, name):
    return getattr(torch if isinstance(x, torch.Tensor) else tt, name)


@pytest.mark.parametrize("name, dtype", UNARY_UNSUPPORTED, ids=[f"{n}-{d.name}" for n, d in UNARY_UNSUPPORTED])
def test_unary_dtypes_torch_rejects_raise(name, dtype):
    exc = TypeError if name.startswith("bitwise") else (RuntimeError, TypeError)
    inputs = [sample(dtype, (3,), UNARY_DOMAINS[name])]
    fn = lambda x: unary_fn(torch if isinstance(x, torch.Tensor) else tt, name)(x)  # noqa: E731
    helper_test_exception(inputs, fn, exception=exc, match=base_name(name))


def test_unsupported_tables_are_what_torch_213_rejects():
    """Guards the two tables above against an empty probe (which would silently skip the error tests)."""
    assert ("abs", tt.bool) in UNARY_UNSUPPORTED and ("neg", tt.bool) in UNARY_UNSUPPORTED
    assert ("bitwise_not", tt.float32) in UNARY_UNSUPPORTED and ("relu", tt.bool) in UNARY_UNSUPPORTED
    assert ("sub", tt.bool, tt.bool) in BINARY_UNSUPPORTED and ("pow", tt.bool, tt.bool) in BINARY_UNSUPPORTED
    assert ("bitwise_and", tt.int32, tt.float32) in BINARY_UNSUPPORTED
    assert ("sign", tt.bool) not in UNARY_UNSUPPORTED and ("square", tt.bool) not in UNARY_UNSUPPORTED


# ---------------------------------------------------------------------- special float values


SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-3, 100.0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("name", [n for n, _ in UNARY if n != "bitwise_not"])
def test_unary_special_values_match_torch(name, dtype):
    specials = SPECIALS
    if name == "gelu" and dtype is not tt.float64:
        # torch's vectorized float32/float16 gelu gives NaN for +inf (its float64 and one-element
        # paths give inf, as t_tensor does): test_gelu_of_infinity covers it
        specials = [v for v in SPECIALS if v != math.inf]
    check([np.array(specials, dtype=dtype.numpy)], lambda lib, x: unary_fn(lib, name)(x))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=_dtype_id)
@pytest.mark.parametrize("name", [n for n, _, _ in BINARY if not n.startswith("bitwise")])
def test_binary_special_values_match_torch(name, dtype):
    grid_a, grid_b = np.meshgrid(SPECIALS, SPECIALS + [2.0, -3.0], indexing="ij")
    check([grid_a.astype(dtype.numpy), grid_b.astype(dtype.numpy)], lambda lib, x, y: getattr(lib, name)(x, y))


def test_round_is_half_to_even_and_integer_rounding_keeps_values():
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5, -0.49, 0.51], dtype=np.float32)
    got = check([halves], lambda lib, x: lib.round(x))
    assert got.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 4.0, 4.0, -0.0, 1.0]
    for name in ("floor", "ceil", "round", "trunc"):
        ints = np.array([-7, 0, 5, 120], dtype=np.int16)
        got = check([ints], lambda lib, x, name=name: getattr(lib, name)(x))
        assert got.dtype is tt.int16 and got.tolist() == [-7, 0, 5, 120]


def test_floor_semantics_for_negative_operands():
    a = np.array([7, -7, 7, -7, 0, 6, -6], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, -3, 4], dtype=np.int32)
    assert check([a, b], lambda lib, x, y: lib.floor_divide(x, y)).tolist() == [3, -4, -4, 3, 0, -2, -2]
    assert check([a, b], lambda lib, x, y: lib.remainder(x, y)).tolist() == [1, 1, -1, -1, 0, 0, 2]
    fa, fb = a.astype(np.float64) + 0.5, b.astype(np.float64)
    assert check([fa, fb], lambda lib, x, y: x // y).tolist() == [float(p // q) for p, q in zip(fa, fb, strict=True)]
    assert check([fa, fb], lambda lib, x, y: x % y).tolist() == [float(p % q) for p, q in zip(fa, fb, strict=True)]


# ---------------------------------------------------------------------- type promotion


PROMOTION_OPS = ["add", "mul", "div", "eq", "maximum"]


def small(dtype: tt.DType, shape=(2, 3), offset: int = 0) -> np.ndarray:
    """Small nonzero-ish values valid for every op in PROMOTION_OPS."""
    data = (np.arange(math.prod(shape)) + offset) % 3 + 1
    if dtype.kind == "i":
        data = data * np.where(np.arange(data.size) % 2, -1, 1)
    return (data.astype(dtype.numpy) if dtype is not tt.bool else data % 2 == 1).reshape(shape)


@pytest.mark.parametrize("b", ALL_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("a", ALL_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("name", PROMOTION_OPS)
def test_promotion_tensor_tensor_matches_torch(name, a, b):
    got = check([small(a), small(b, (3,), 1)], lambda lib, x, y: getattr(lib, name)(x, y))
    if name != "eq":
        want = tt.get_default_dtype() if name == "div" and tt.promote_types(a, b).kind != "f" else None
        assert got.dtype is (want or tt.promote_types(a, b))


@pytest.mark.parametrize("scalar", [True, 3, -2.5], ids=repr)
@pytest.mark.parametrize("a", ALL_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("name", PROMOTION_OPS)
def test_promotion_tensor_scalar_matches_torch(name, a, scalar):
    check([small(a)], lambda lib, x: call_binary(lib, name, "function", x, scalar))


@pytest.mark.parametrize("b", ALL_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("a", ALL_DTYPES, ids=_dtype_id)
def test_promotion_with_zero_dim_tensors_matches_torch(a, b):
    check([small(a), small(b, ())], lambda lib, x, y: lib.add(x, y))  # dimensioned beats 0-d
    check([small(a, ()), small(b, (), 1)], lambda lib, x, y: lib.mul(x, y))  # both 0-d: promote


@pytest.mark.parametrize(
    "make, scalar",
    [
        (lambda: np.array([100, -100, 27], dtype=np.int8), 1000),
        (lambda: np.array([100, -100, 27], dtype=np.int8), -1000),
        (lambda: np.array([0, 200, 255], dtype=np.uint8), 300),
        (lambda: np.array([0, 200, 255], dtype=np.uint8), -1),
        (lambda: np.array([1, -7], dtype=np.int32), 1.5),
        (lambda: np.array([True, False]), 5),
        (lambda: np.array([True, False]), 0.5),
        (lambda: np.array([1.5, -2.0], dtype=np.float16), 2.5),
        (lambda: np.array([1.5, -2.0], dtype=np.float16), 1e6),
        (lambda: np.array([1.5, -2.0], dtype=np.float32), 1e-40),
    ],
)
def test_python_scalars_promote_and_wrap_like_torch(make, scalar):
    for fn in (
        lambda lib, x: x + scalar,
        lambda lib, x: scalar + x,
        lambda lib, x: x * scalar,
        lambda lib, x: x - scalar,  # bool_tensor - 5 is an error in torch
        lambda lib, x: scalar - x,
    ):
        expect_same_outcome([make()], fn)


@pytest.mark.parametrize("a, b", [(tt.uint8, tt.int8), (tt.int8, tt.uint8), (tt.uint8, tt.int16)])
def test_mixed_sign_integers_promote_to_a_wider_signed_type(a, b):
    extremes = {tt.uint8: [0, 200, 255], tt.int8: [-128, 5, 127], tt.int16: [-32768, 300, 32767]}
    x, y = np.array(extremes[a], a.numpy), np.array(extremes[b], b.numpy)
    for name in ("add", "sub", "mul", "maximum", "lt", "bitwise_xor"):
        check([x, y], lambda lib, p, q, name=name: getattr(lib, name)(p, q))


def test_float16_is_computed_in_float32_and_rounded_once():
    # 2049 is not a float16; float16 arithmetic step by step would round 2048 + 1 down to 2048
    a = np.array([2048.0, 1e-4, 60000.0], dtype=np.float16)
    b = np.array([1.0, 1e-4, 10000.0], dtype=np.float16)
    check([a, b], lambda lib, x, y: lib.add(x, y))
    check([a, b], lambda lib, x, y: lib.mul(x, y))
    check([a, b], lambda lib, x, y: lib.div(x, y))
    got = check([np.array([-3.0, 0.0, 4.0], dtype=np.float16)], lambda lib, x: lib.sigmoid(x))
    assert got.dtype is tt.float16


def test_default_dtype_float64_changes_int_to_float_results():
    tt.set_default_dtype(tt.float64)
    torch.set_default_dtype(torch.float64)
    try:
        ints = np.array([1, -2, 3], dtype=np.int32)
        check([ints], lambda lib, x: x / 2)
        check([ints], lambda lib, x: x + 1.5)
        check([ints], lambda lib, x: lib.exp(x))
        check([ints], lambda lib, x: lib.atan2(x, x))
        check([np.array([1.5], dtype=np.float32)], lambda lib, x: x + 1.5)  # a float32 tensor stays float32
    finally:
        tt.set_default_dtype(tt.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_dtype_id)
def test_integer_arithmetic_wraps_like_torch(dtype):
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype.numpy)
    a = np.concatenate([[info.min, info.max, info.min + 1, 0, 1], sample(dtype, (20,), "bits")]).astype(dtype.numpy)
    b = np.concatenate([[info.max, 1, -1 if dtype.kind == "i" else 3, info.min, info.max], rng.permutation(a[5:])])
    b = b.astype(dtype.numpy)
    for fn in (
        lambda lib, x, y: x + y,
        lambda lib, x, y: x - y,
        lambda lib, x, y: x * y,
        lambda lib, x, y: lib.maximum(x, y),
        lambda lib, x, y: x < y,
        lambda lib, x, y: x ^ y,
        lambda lib, x, y: lib.add(x, y, alpha=3),
    ):
        check([a, b], fn)
    for fn in (lambda lib, x: -x, lambda lib, x: lib.abs(x), lambda lib, x: lib.square(x), lambda lib, x: ~x):
        check([a], fn)
    check([a, (np.abs(b.astype(np.int64)) % 4).astype(dtype.numpy)], lambda lib, x, y: x**y)


def test_integer_min_divided_by_minus_one_wraps_and_does_not_crash():
    # INT_MIN / -1 traps (SIGFPE) on x86 when done naively in C, so this runs in a child process
    code = textwrap.dedent(
        """
        import json, t_tensor as tt
        out = {}
        for name in ("int8", "int16", "int32", "int64"):
            d = getattr(tt, name)
            x = tt.tensor([tt.iinfo(d).min, 7, -7], dtype=d)
            m = tt.tensor([-1, -1, -1], dtype=d)
            out[name] = [(x // -1).tolist(), (x % -1).tolist(), tt.floor_divide(x, m).tolist(),
                         tt.remainder(x, m).tolist()]
        print(json.dumps(out))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"child exited with {proc.returncode}: {proc.stderr[-2000:]}"
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("int8", "int16", "int32", "int64"):
        d = getattr(torch, name)
        x = torch.tensor([torch.iinfo(d).min, 7, -7], dtype=d)
        m = torch.tensor([-1, -1, -1], dtype=d)
        want = [
            (x // -1).tolist(),
            (x % -1).tolist(),
            torch.floor_divide(x, m).tolist(),
            torch.remainder(x, m).tolist(),
        ]
        assert got[name] == want, name


# ---------------------------------------------------------------------- operators

BINARY_OPERATORS = {
    "+": ("add", operator.add),
    "-": ("sub", operator.sub),
    "*": ("mul", operator.mul),
    "/": ("div", operator.truediv),
    "//": ("floor_divide", operator.floordiv),
    "%": ("remainder", operator.mod),
    "**": ("pow", operator.pow),
    "&": ("bitwise_and", operator.and_),
    "|": ("bitwise_or", operator.or_),
    "^": ("bitwise_xor", operator.xor),
    "<": ("lt", operator.lt),
    "<=": ("le", operator.le),
    ">": ("gt", operator.gt),
    ">=": ("ge", operator.ge),
    "==": ("eq", operator.eq),
    "!=": ("ne", operator.ne),
    "<<": ("bitwise_left_shift", operator.lshift),
    ">>": ("bitwise_right_shift", operator.rshift),
}
OPERATOR_DTYPES = [tt.bool, tt.int8, tt.uint8, tt.int32, tt.int64, tt.float16, tt.float32, tt.float64]


def expect_same_outcome(inputs, fn):
    """Compare with torch, or, when torch raises, require t_tensor to raise RuntimeError/TypeError."""
    if torch_raises(fn, inputs):
        with pytest.raises((RuntimeError, TypeError)):
            fn(tt, *[tt.tensor(a.copy()) for a in inputs])
    else:
        check(inputs, fn)


@pytest.mark.parametrize("dtype", OPERATOR_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize("symbol", list(BINARY_OPERATORS))
def test_binary_operators_match_torch(symbol, dtype):
    name, op = BINARY_OPERATORS[symbol]
    domain_a, domain_b = BINARY_DOMAINS[name]
    a, b = sample(dtype, (3, 4), domain_a, 1), sample(dtype, (4,), domain_b, 2)
    expect_same_outcome([a, b], lambda lib, x, y: op(x, y))
    expect_same_outcome([a, b], lambda lib, x, y: op(x.T[:2], y[:3]))  # strided operands
    for scalar in (True, 2, 2.5):
        expect_same_outcome([a], lambda lib, x, s=scalar: op(x, s))
        # reflected: the tensor is now the right operand, so it needs the right operand's domain
        expect_same_outcome([b], lambda lib, y, s=scalar: op(s, y))


@pytest.mark.parametrize("dtype", OPERATOR_DTYPES, ids=_dtype_id)
def test_unary_operators_match_torch(dtype):
    a = sample(dtype, (3, 4))
    for fn in (lambda lib, x: -x, lambda lib, x: abs(x), lambda lib, x: ~x, lambda lib, x: -(x.T)):
        expect_same_outcome([a], fn)
    if dtype.kind == "f":
        with pytest.raises(TypeError):
            ~tt.tensor(a)


def test_comparisons_return_bool_tensors_and_tensors_stay_hashable():
    x = tt.tensor([1.0, 2.0, 3.0])
    for result in (x < 2, x <= 2, x > 2, x >= 2, x == 2, x != 2, 2 < x, 2.0 == x, x == x):
        assert isinstance(result, tt.Tensor) and result.dtype is tt.bool and result.shape == (3,)
    assert (x == 2).tolist() == [False, True, False] and (2 < x).tolist() == [False, False, True]
    assert len({x, x}) == 1 and {x: 1}[x] == 1  # torch tensors hash by identity


def test_every_function_is_also_a_method():
    a = tt.tensor(sample(tt.float32, (3,), "unit"))
    b = tt.tensor(sample(tt.float32, (3,), "nonzero", 1))
    for name, _, _ in BINARY:
        if name.startswith("bitwise"):
            continue
        np.testing.assert_array_equal(getattr(a, name)(b).numpy(), getattr(tt, name)(a, b).numpy(), err_msg=name)
    for name, _ in UNARY:
        if name != "bitwise_not":
            method, function = unary_fn(tt, name, "method"), unary_fn(tt, name)
            np.testing.assert_array_equal(method(a).numpy(), function(a).numpy(), err_msg=name)
    i = tt.tensor([3, 5])
    assert i.bitwise_and(6).tolist() == [2, 4] and i.bitwise_not().tolist() == [-4, -6]


# ---------------------------------------------------------------------- alpha


@pytest.mark.parametrize("dtype", [tt.int32, tt.int8, tt.float32, tt.float64, tt.float16], ids=_dtype_id)
def test_add_sub_alpha_match_torch(dtype):
    a, b = sample(dtype, (3, 4)), sample(dtype, (4,), seed=1)
    alphas = [2, -3, 0] + ([0.5, -1.25] if dtype.kind == "f" else [])
    for alpha in alphas:
        check([a, b], lambda lib, x, y, al=alpha: lib.add(x, y, alpha=al))
        check([a, b], lambda lib, x, y, al=alpha: lib.sub(x, y, alpha=al))
        check([a, b], lambda lib, x, y, al=alpha: x.add(y, alpha=al))
        check([a], lambda lib, x, al=alpha: lib.sub(x, 2, alpha=al))
        check([a, b], lambda lib, x, y, al=alpha: x.clone().add_(y, alpha=al))
        check([a, b], lambda lib, x, y, al=alpha: x.clone().sub_(y, alpha=al))
    check([sample(tt.bool), sample(tt.bool, seed=1)], lambda lib, x, y: lib.add(x, y, alpha=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_sub_alpha_one_pass_gives_the_two_op_bits(dtype):
    """float32/float64 add and sub with alpha run as one kernel (TT_ADD_SCALED) that rounds the
    product before the sum: the same bits as a product then a sum, for broadcast, strided, out=
    and in-place operands; with autograd recording they take the differentiable path."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 5)).astype(dtype)
    b = rng.standard_normal((5, 6)).astype(dtype).T   # transposed: strided
    c = rng.standard_normal((5,)).astype(dtype)       # broadcast
    small = tt.elementwise._ADD_SCALED_MIN
    tt.elementwise._ADD_SCALED_MIN = 0   # the kernel from any size here (larger sizes below)
    try:
        _check_add_scaled(a, b, c)
    finally:
        tt.elementwise._ADD_SCALED_MIN = small
    big = rng.standard_normal((300, 200)).astype(dtype)
    _check_add_scaled(big, rng.standard_normal((200, 300)).astype(dtype).T, rng.standard_normal((200,)).astype(dtype))


def _check_add_scaled(a, b, c):
    rows, cols = a.shape
    for alpha in (0.3, -1.7, 3, 1e-3):
        for other in (b, c):
            x, y = tt.tensor(a), tt.tensor(other.copy()) if other is c else tt.tensor(other.T.copy()).T
            two_ops = (x + y * alpha).numpy()
            assert np.array_equal(tt.add(x, y, alpha=alpha).numpy(), two_ops)
            assert np.array_equal(tt.sub(x, y, alpha=alpha).numpy(), (x - y * alpha).numpy())
            out = tt.empty(rows, cols, dtype=x.dtype)
            assert tt.add(x, y, alpha=alpha, out=out) is out and np.array_equal(out.numpy(), two_ops)
            inplace = x.clone()
            assert inplace.add_(y, alpha=alpha) is inplace and np.array_equal(inplace.numpy(), two_ops)
    w = tt.tensor(a, requires_grad=True)
    tt.add(w, tt.tensor(c), alpha=2.5).sum().backward()
    assert w.grad.tolist() == np.ones((rows, cols)).tolist()
    v = tt.tensor(c, requires_grad=True)
    tt.sub(tt.tensor(a), v, alpha=2.5).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), np.full(cols, -2.5 * rows))


# ---------------------------------------------------------------------- in-place

INPLACE_OPERATORS = {
    "+=": ("add", operator.iadd),
    "-=": ("sub", operator.isub),
    "*=": ("mul", operator.imul),
    "/=": ("div", operator.itruediv),
    "//=": ("floor_divide", operator.ifloordiv),
    "%=": ("remainder", operator.imod),
    "**=": ("pow", operator.ipow),
    "&=": ("bitwise_and", operator.iand),
    "|=": ("bitwise_or", operator.ior),
    "^=": ("bitwise_xor", operator.ixor),
    "<<=": ("bitwise_left_shift", operator.ilshift),
    ">>=": ("bitwise_right_shift", operator.irshift),
}
INPLACE_TARGETS = [("contiguous", "tensor"), ("transposed", "row"), ("sliced", "scalar"), ("sliced", "tensor")]


def _make(lib, array):
    return tt.tensor(array.copy()) if lib is tt else torch.from_numpy(array.copy())


def run_inplace(lib, op, base_array, layout, shape, other):
    """Apply ``op`` in place to a view of a fresh tensor; check identity and storage; return (base, view)."""
    base = _make(lib, base_array)
    x = apply_layout(base, layout, shape)
    ptr = x.data_ptr()
    if isinstance(other, np.ndarray):
        other = _make(lib, other)
    result = op(x, other)
    assert result is x, "an in-place op must return the same object"
    assert x.data_ptr() == ptr and x.shape == tuple(shape)
    return base, x


def compare_inplace(op, base_array, layout, shape, other):
    try:
        want_base, want = run_inplace(torch, op, base_array, layout, shape, other)
    except Exception:  # noqa: BLE001 - torch rejects it (RuntimeError, NotImplementedError, TypeError)
        with pytest.raises((RuntimeError, TypeError)):
            run_inplace(tt, op, base_array, layout, shape, other)
        return
    got_base, got = run_inplace(tt, op, base_array, layout, shape, other)
    atol, rtol = tolerance(want.dtype)
    for g, w in ((got, want), (got_base, want_base)):
        assert TORCH_DTYPES[g.dtype] == w.dtype and g.shape == tuple(w.shape)
        np.testing.assert_allclose(g.numpy().astype(np.float64), w.numpy().astype(np.float64), atol=atol, rtol=rtol)


@pytest.mark.parametrize("layout, other", INPLACE_TARGETS)
@pytest.mark.parametrize(
    "dtype", [tt.bool, tt.uint8, tt.int32, tt.int64, tt.float16, tt.float32, tt.float64], ids=_dtype_id
)
@pytest.mark.parametrize("symbol", list(INPLACE_OPERATORS))
def test_inplace_operators_write_into_the_tensor(symbol, dtype, layout, other):
    name, op = INPLACE_OPERATORS[symbol]
    domain_a, domain_b = BINARY_DOMAINS[name]
    shape = (3, 4)
    base_array = sample(dtype, base_shape(shape, layout), domain_a, 3)
    if other == "scalar":
        operand = scalar_value(np.random.default_rng(4), dtype, domain_b)
    else:
        operand = sample(dtype, shape if other == "tensor" else shape[-1:], domain_b, 4)
    compare_inplace(op, base_array, layout, shape, operand)


@pytest.mark.parametrize(
    "target, other",
    [
        (tt.float32, tt.int64),
        (tt.float16, tt.float32),
        (tt.float32, tt.float64),
        (tt.int32, tt.int64),
        (tt.int8, tt.int32),
        (tt.int64, tt.bool),
        (tt.uint8, tt.int8),
        (tt.int32, tt.float32),
        (tt.bool, tt.int32),
        (tt.bool, tt.float32),
    ],
    ids=_dtype_id,
)
@pytest.mark.parametrize("symbol", ["+=", "*=", "-=", "/=", "//="])
def test_inplace_casts_to_the_target_dtype_or_raises_like_torch(symbol, target, other):
    name, op = INPLACE_OPERATORS[symbol]
    domain_a, domain_b = BINARY_DOMAINS[name]
    compare_inplace(op, sample(target, (2, 3), domain_a), "contiguous", (2, 3), sample(other, (3,), domain_b, 1))


@pytest.mark.parametrize("scalar", [1000, 1.5, True, -2], ids=repr)
@pytest.mark.parametrize("dtype", [tt.int8, tt.uint8, tt.int32, tt.bool, tt.float16], ids=_dtype_id)
def test_inplace_with_python_scalars(dtype, scalar):
    for op in (operator.iadd, operator.imul):
        compare_inplace(op, sample(dtype, (2, 3)), "contiguous", (2, 3), scalar)


@pytest.mark.parametrize(
    "name",
    [
        "add_", "sub_", "mul_", "div_", "true_divide_", "floor_divide_", "remainder_", "pow_", "hypot_", "copysign_",
        "fmod_", "bitwise_left_shift_", "bitwise_right_shift_",
    ],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.int32], ids=_dtype_id)
def test_inplace_binary_methods(name, dtype):
    domain_a, domain_b = BINARY_DOMAINS[name[:-1]]
    for layout, other in INPLACE_TARGETS:
        base_array = sample(dtype, base_shape((3, 4), layout), domain_a, 5)
        if other == "scalar":
            operand = scalar_value(np.random.default_rng(6), dtype, domain_b)
            if name[:-1] in TORCH_TENSOR_ONLY:  # torch's hypot_ wants a tensor: give both a 0-d one
                operand = np.array(operand, dtype=dtype.numpy)
        else:
            operand = sample(dtype, (3, 4) if other == "tensor" else (4,), domain_b, 6)
        compare_inplace(lambda x, y, name=name: getattr(x, name)(y), base_array, layout, (3, 4), operand)


@pytest.mark.parametrize("name", ["neg", "abs"] + FLOAT_UNARY)
@pytest.mark.parametrize("dtype", [tt.float32, tt.float16, tt.int32], ids=_dtype_id)
def test_inplace_unary_methods(name, dtype):
    # int32.exp_() etc. must raise (the float result can't be cast back), as in torch
    for layout in ("contiguous", "transposed", "sliced"):
        base_array = sample(dtype, base_shape((3, 4), layout), UNARY_DOMAINS[name], 8)
        compare_inplace(lambda x, _, name=name: getattr(x, name + "_")(), base_array, layout, (3, 4), None)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.expand(3, 4).add_(1),
        lambda x: operator.iadd(x.expand(3, 4), 1),
        lambda x: x.expand(3, 4).mul_(x.expand(3, 4)),
        lambda x: x.expand(3, 4).exp_(),
        lambda x: x.expand(3, 4).neg_(),
    ],
)
def test_inplace_on_an_expanded_tensor_raises(fn):
    helper_test_exception([np.ones((3, 1), np.float32)], fn, exception=RuntimeError, match=".")


@pytest.mark.parametrize(
    "fn, exc",
    [
        (lambda x: x[0].add_(x), RuntimeError),  # result shape (3, 4) != (4,)
        (lambda x: operator.iadd(x[0], x), RuntimeError),
        (lambda x: x[:, :1].mul_(x), RuntimeError),
        (lambda x: operator.iadd(x.int(), 1.5), RuntimeError),
        (lambda x: operator.itruediv(x.int(), 2), RuntimeError),
        (lambda x: x.int().div_(2), RuntimeError),
        (lambda x: x.long().exp_(), RuntimeError),
        (lambda x: x.int().add_(x), RuntimeError),
        (lambda x: operator.iadd(x.bool(), 1), RuntimeError),
        (lambda x: x.bool().neg_(), RuntimeError),
        (lambda x: operator.ior(x, 1), TypeError),
    ],
)
def test_inplace_errors_match_torch(fn, exc):
    helper_test_exception([np.arange(1.0, 13.0).reshape(3, 4)], fn, exception=exc, match=".")


@pytest.mark.parametrize(
    "write",
    [
        lambda x, d: x.floor_divide_(d),
        lambda x, d: operator.ifloordiv(x, d),
        lambda x, d: x.remainder_(d),
        lambda x, d: operator.imod(x, d),
        lambda x, d: x.fmod_(d),
        lambda x, d: tt.floor_divide(x, d, out=x),
        lambda x, d: x.floor_divide_(0),
        lambda x, d: operator.imod(x, 0),
    ],
)
def test_inplace_integer_division_by_zero_leaves_the_target_untouched(write):
    # torch raises before writing; a kernel that stopped part way must not leave half a result
    x = tt.arange(1, 7, dtype=tt.int32)
    divisor = tt.tensor([1, 2, 0, 4, 5, 6], dtype=tt.int32)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        write(x, divisor)
    assert x.tolist() == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    "target, source",
    [
        (lambda x: x, lambda x: x),  # the same tensor: each element is read before it is written
        (lambda x: x[1:], lambda x: x[:-1]),  # partly overlapping: computed as from a copy (NumPy)
        (lambda x: x[:-1], lambda x: x[1:]),
        (lambda x: x[:4], lambda x: x[4:]),  # one storage, disjoint halves
        (lambda x: x[::2], lambda x: x[1::2]),  # interleaved, strided
    ],
)
@pytest.mark.parametrize("share", ["views", "two from_numpy"])
@pytest.mark.parametrize("op", [operator.iadd, operator.imul, lambda x, y: x.sub_(y)])
def test_inplace_ops_on_aliasing_operands_match_numpy(target, source, share, op):
    base = np.arange(1.0, 9.0, dtype=np.float32)
    want_base = base.copy()
    np_target, np_source = target(want_base), source(want_base)
    result = {operator.iadd: np.add, operator.imul: np.multiply}.get(op, np.subtract)(np_target, np_source)
    np_target[...] = result  # NumPy's ufuncs buffer overlapping operands: the result is as from copies
    if share == "views":
        x = tt.tensor(base)
        got_target, got_source = target(x), source(x)
    else:  # two storages over one buffer: overlap is found by address, not by storage
        got_target, got_source = tt.from_numpy(target(base)), tt.from_numpy(source(base))
    op(got_target, got_source)
    got = x.numpy() if share == "views" else base
    np.testing.assert_array_equal(got, want_base)


def test_out_that_is_the_left_number_is_refused():
    # out= the same Python object as the first operand must not be taken for an in-place tensor
    with pytest.raises(TypeError, match="add: out must be a Tensor"):
        tt.add(3, tt.ones(2), out=3)
    with pytest.raises(TypeError, match="mul: out must be a Tensor"):
        tt.mul(2.5, tt.ones(2), out=2.5)


def test_inplace_fast_path_bumps_the_version_so_saved_tensors_are_checked():
    x = tt.arange(4.0, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    with tt.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    y = x * 1
    z = y * y
    with tt.no_grad():
        y.mul_(tt.ones(4))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# ---------------------------------------------------------------------- out=


def out_for(lib, want: torch.Tensor, transposed: bool):
    """An uninitialised output of ``want``'s shape and dtype, column-major when ``transposed``."""
    dtype = want.dtype if lib is torch else TORCH_DTYPES_INV[want.dtype]
    shape = tuple(want.shape)
    if transposed:
        return lib.zeros(shape[::-1], dtype=dtype).permute(*reversed(range(len(shape))))
    return lib.zeros(shape, dtype=dtype)


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous_out", "transposed_out"])
@pytest.mark.parametrize("name", [n for n, _, _ in BINARY])
def test_binary_out_matches_torch(name, transposed):
    domain_a, domain_b = BINARY_DOMAINS[name]
    dtype = tt.int32 if name.startswith("bitwise") else tt.float32
    inputs = [sample(dtype, (3, 4), domain_a), sample(dtype, (4,), domain_b, 1)]
    want = getattr(torch, name)(*torch_inputs(inputs))
    x, y = (tt.tensor(a) for a in inputs)
    out = out_for(tt, want, transposed)
    ptr = out.data_ptr()
    result = getattr(tt, name)(x, y, out=out)
    assert result is out and out.data_ptr() == ptr and out.dtype is TORCH_DTYPES_INV[want.dtype]
    atol, rtol = tolerance(want.dtype)
    np.testing.assert_allclose(out.numpy().astype(np.float64), want.numpy().astype(np.float64), atol=atol, rtol=rtol)
    scalar_result = getattr(tt, name)(x, 2, out=out_for(tt, want, transposed))
    x_ref = torch.from_numpy(inputs[0].copy())
    want_scalar = getattr(torch, name)(x_ref, other_operand(torch, name, x_ref, 2))
    np.testing.assert_allclose(scalar_result.numpy().astype(np.float64), want_scalar.numpy().astype(np.float64))


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous_out", "transposed_out"])
@pytest.mark.parametrize("name", [n for n, _ in UNARY if base_name(n) not in UNARY_WITHOUT_OUT])
def test_unary_out_matches_torch(name, transposed):
    dtype = tt.int32 if name == "bitwise_not" else tt.float32
    a = sample(dtype, (3, 4), UNARY_DOMAINS[name])
    base, kwargs = UNARY_WITH_ARGS.get(name, (name, {}))
    want = getattr(torch, base)(torch.from_numpy(a.copy()), **kwargs)  # torch.isnan & co. have no out=
    out = out_for(tt, want, transposed)
    result = getattr(tt, base)(tt.tensor(a), out=out, **kwargs)
    assert result is out and out.dtype is TORCH_DTYPES_INV[want.dtype]
    atol, rtol = tolerance(want.dtype)
    np.testing.assert_allclose(out.numpy().astype(np.float64), want.numpy().astype(np.float64), atol=atol, rtol=rtol)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, y: lib.add(x.int(), y.int(), out=lib.zeros(2, 3, dtype=lib.float64)),
        lambda lib, x, y: lib.eq(x, y, out=lib.zeros(2, 3, dtype=lib.float32)),
        lambda lib, x, y: lib.mul(x, y, out=lib.zeros(2, 3, dtype=lib.float16)),
        lambda lib, x, y: lib.lt(x, y, out=lib.zeros(2, 3, dtype=lib.int8)),
        lambda lib, x, y: lib.exp(x, out=lib.zeros(2, 3, dtype=lib.float64)),
        lambda lib, x, y: lib.add(x.bool(), True, out=lib.zeros(2, 3, dtype=lib.int8)),
        lambda lib, x, y: lib.maximum(x.int(), y.int(), out=lib.zeros(3, 2, dtype=lib.int64).T),
    ],
)
def test_out_of_a_wider_castable_dtype(fn):
    check([sample(tt.float32, (2, 3)), sample(tt.float32, (2, 3), seed=1)], fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: tt_or_torch(x, "add")(x, x, out=tt_or_torch(x, "zeros")(3, dtype=tt_or_torch(x, "int64"))),
        lambda x: tt_or_torch(x, "div")(x.int(), 2, out=tt_or_torch(x, "zeros")(3, dtype=tt_or_torch(x, "int32"))),
        lambda x: tt_or_torch(x, "exp")(x.long(), out=tt_or_torch(x, "zeros")(3, dtype=tt_or_torch(x, "int64"))),
        lambda x: tt_or_torch(x, "add")(x.int(), 1, out=tt_or_torch(x, "zeros")(3, dtype=tt_or_torch(x, "bool"))),
        lambda x: tt_or_torch(x, "sqrt")(x, out=tt_or_torch(x, "zeros")(3, dtype=tt_or_torch(x, "int32"))),
    ],
)
def test_out_that_cannot_hold_the_result_type_raises(fn):
    helper_test_exception([np.array([1.0, 2.0, 3.0], np.float32)], fn, exception=RuntimeError, match="cast")


def test_out_on_an_expanded_tensor_raises():
    helper_test_exception(
        [np.array([1.0, 2.0], np.float32)],
        lambda x: tt_or_torch(x, "add")(x, 1, out=tt_or_torch(x, "zeros")(1).expand(2)),
        exception=RuntimeError,
        match=".",
    )


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize("name", [n for n, _, _ in BINARY])
def test_broadcast_mismatch_raises_naming_the_op(name):
    dtype = np.int32 if name.startswith("bitwise") else np.float32
    inputs = [np.ones((2, 3), dtype), np.ones((2,), dtype)]
    match = "div" if name == "true_divide" else name  # an alias may report the op it stands for
    helper_test_exception(inputs, lambda x, y: tt_or_torch(x, name)(x, y), exception=RuntimeError, match=match)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_dtype_id)
@pytest.mark.parametrize(
    "fn, match",
    [
        (lambda x, y: x // 0, "."),
        (lambda x, y: x % 0, "."),
        (lambda x, y: tt_or_torch(x, "floor_divide")(x, y), "floor_divide"),
        (lambda x, y: tt_or_torch(x, "remainder")(x, y), "remainder"),
        (lambda x, y: tt_or_torch(x, "remainder")(x[:1], y), "remainder"),  # broadcast, 0 in the divisor
        (lambda x, y: operator.ifloordiv(x, y), "."),
        (lambda x, y: operator.imod(x, 0), "."),
        (lambda x, y: 7 // y, "."),
    ],
)
def test_integer_division_by_zero_raises(dtype, fn, match):
    x = np.array([5, 1, 3], dtype.numpy)
    y = np.array([2, 0, 1], dtype.numpy)
    helper_test_exception([x, y], fn, exception=RuntimeError, match=match)


@pytest.mark.parametrize(
    "fn, exc, match",
    [
        (lambda x: x.int() ** -1, RuntimeError, "."),
        (lambda x: tt_or_torch(x, "pow")(x.long(), -2), RuntimeError, "pow"),
        (lambda x: operator.ipow(x.int(), -1), RuntimeError, "."),
        (lambda x: -x.bool(), RuntimeError, "."),
        (lambda x: tt_or_torch(x, "neg")(x.bool()), RuntimeError, "neg"),
        (lambda x: x.bool() - x.bool(), RuntimeError, "."),
        (lambda x: tt_or_torch(x, "sub")(x.bool(), x), RuntimeError, "sub"),
        (lambda x: abs(x.bool()), (RuntimeError, TypeError), "."),
        (lambda x: ~x, TypeError, "."),
        (lambda x: x & x, TypeError, "."),
        (lambda x: x.int() | x, TypeError, "."),
        (lambda x: x ^ 1, TypeError, "."),
        (lambda x: 1 & x, TypeError, "."),
        (lambda x: tt_or_torch(x, "bitwise_not")(x), TypeError, "bitwise_not"),
        (lambda x: tt_or_torch(x, "bitwise_or")(x.int(), 1.5), TypeError, "bitwise_or"),
        (lambda x: tt_or_torch(x, "add")(x.int(), x.int(), alpha=2.5), RuntimeError, "add"),
        (lambda x: tt_or_torch(x, "sub")(x.int(), 1, alpha=0.5), RuntimeError, "sub"),
        (lambda x: x.int().add(x.int(), alpha=True), RuntimeError, "."),
        (lambda x: x.int().add_(1, alpha=1.5), RuntimeError, "."),
        (lambda x: tt_or_torch(x, "relu")(x.bool()), RuntimeError, "relu"),
        (lambda x: tt_or_torch(x, "floor_divide")(x.bool(), x.bool()), (RuntimeError, TypeError), "floor_divide"),
    ],
)
def test_errors_match_torch(fn, exc, match):
    helper_test_exception([np.array([1.0, 2.0, 3.0], np.float32)], fn, exception=exc, match=match)


def test_integer_to_a_float_power_or_a_negative_tensor_exponent_of_a_float_base_is_fine():
    ints = np.array([1, 2, 3], dtype=np.int32)
    assert check([ints], lambda lib, x: x**2.5).dtype is tt.float32
    assert check([ints], lambda lib, x: x**-1.0).dtype is tt.float32
    assert check([ints], lambda lib, x: 2**x).dtype is tt.int32
    assert check([ints], lambda lib, x: 2.5**x).dtype is tt.float32
    check([np.array([0.5, 2.0], np.float32)], lambda lib, x: x**-2)
    check([ints], lambda lib, x: x**0)


# ---------------------------------------------------------------------- where, clamp, lerp (three operands)


@st.composite
def ternary_cases(draw):
    _, shapes = draw(broadcast_shapes(3))
    return {
        "shapes": shapes,
        "layouts": tuple(draw(st.sampled_from(LAYOUTS)) for _ in range(3)),
        # each of the two value operands: a tensor of the same dtype, of any dtype, a Python number, or absent
        "kinds": (
            draw(st.sampled_from(["same", "any", "scalar", "none"])),
            draw(st.sampled_from(["same", "any", "scalar"])),
        ),
        "dtypes": (draw(st.sampled_from(ALL_DTYPES)), draw(st.sampled_from(ALL_DTYPES))),
        "form": draw(st.sampled_from(["function", "method", "alias", "inplace"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def domain_of(dtype: tt.DType) -> str:
    return "special" if dtype.kind == "f" else "real"  # NaN and infinities for floats


def operand_maker(rng, kind, dtype, other_dtype, shape, layout, domain):
    """(arrays to add to the inputs, function of the lib and those tensors giving the operand)."""
    if kind == "none":
        return [], lambda: None
    if kind == "scalar":
        value = scalar_value(rng, other_dtype, domain)
        return [], lambda: value
    d = dtype if kind == "same" else other_dtype
    return [values(rng, base_shape(shape, layout), d, domain)], lambda t: apply_layout(t, layout, shape)


def run_ternary(case, dtype, first, value_domains, call):
    """Build ``first`` (a bool mask or the input) and the two value operands as the case says,
    then compare ``call(lib, first_tensor, v1, v2)`` between t_tensor and torch."""
    rng = np.random.default_rng(case["seed"])
    shapes, layouts = case["shapes"], case["layouts"]
    if first == "mask":
        arrays = [np.asarray(rng.random(base_shape(shapes[0], layouts[0])) < 0.5)]
    else:
        arrays = [values(rng, base_shape(shapes[0], layouts[0]), dtype, value_domains[0])]
    makers = []
    for k in (0, 1):
        extra, make = operand_maker(
            rng, case["kinds"][k], dtype, case["dtypes"][k], shapes[k + 1], layouts[k + 1], value_domains[k + 1]
        )
        makers.append((len(extra), make))
        arrays += extra

    def fn(lib, head, *rest):
        operands, rest = [], list(rest)
        for n, make in makers:
            operands.append(make(rest.pop(0)) if n else make())
        return call(lib, apply_layout(head, layouts[0], shapes[0]), *operands)

    expect_same_outcome(arrays, fn)


def call_where(form):
    def call(lib, mask, x, y):
        if x is None:
            x = 1.5  # where needs both values; the one-argument form is nonzero's
        if form == "method" and not isinstance(x, (bool, int, float)):
            return x.where(mask, y)
        return lib.where(mask, x, y)

    return call


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_dtype_id)
@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(case=ternary_cases())
def test_where_matches_torch(dtype, case):
    d = domain_of(dtype)
    run_ternary(case, dtype, "mask", (None, d, d), call_where(case["form"]))


def call_clamp(form):
    def call(lib, x, low, high):
        if low is None and high is None:
            high = 2  # clamp needs a bound (tested among the errors)
        if form == "method":
            return x.clamp(low, high)
        if form == "alias":
            return lib.clip(x, min=low, max=high)
        if form == "inplace":
            return x.clamp_(low, high)
        return lib.clamp(x, low, high)

    return call


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_dtype_id)
@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(case=ternary_cases())
def test_clamp_matches_torch(dtype, case):
    d = domain_of(dtype)
    if "scalar" in case["kinds"]:  # torch takes two numbers or two tensors (the mix: test_clamp_mixed_bounds)
        case = dict(case, kinds=tuple("none" if k in ("same", "any") and j == 0 else "scalar" if k != "none" else k
                                      for j, k in enumerate(case["kinds"])))  # fmt: skip
    run_ternary(case, dtype, "input", (d, d, d), call_clamp(case["form"]))


def call_lerp(form):
    def call(lib, start, end, weight):
        if end is None or not isinstance(end, (tt.Tensor, torch.Tensor)):
            end = start * 2 - 1  # end must be a tensor; the scalar end is among the errors
        if form == "method":
            return start.lerp(end, weight)
        if form == "inplace":
            return start.lerp_(end, weight)
        return lib.lerp(start, end, weight)

    return call


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_id)
@settings(max_examples=3 * EXAMPLES, deadline=None)
@given(case=ternary_cases())
def test_lerp_matches_torch(dtype, case):
    case = dict(case, kinds=("same", "same" if case["kinds"][1] == "any" else case["kinds"][1]))
    run_ternary(case, dtype, "input", ("real", "real", "weight"), call_lerp(case["form"]))


@pytest.mark.parametrize("values_", [(1.0, 0), (1, 0), (True, 0), (True, False), (2**40, -3), (1, 0.5), (-2.5, True)])
def test_where_of_two_numbers_promotes_like_torch(values_):
    a, b = values_
    got = check([np.array([True, False, True])], lambda lib, c: lib.where(c, a, b))
    assert got.dtype is tt.result_type(a, b)


def test_where_with_a_uint8_mask_warns_like_torch():
    mask = np.array([1, 0, 7], np.uint8)
    with pytest.warns(UserWarning, match="uint8"):
        check([mask, np.array([1.0, 2.0, 3.0], np.float32)], lambda lib, c, x: lib.where(c, x, -x))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, c, x: lib.where(c, x.half(), 1e5),  # converted unchecked to float16: inf
        lambda lib, c, x: lib.lerp(x.half(), x.half() * 2, 1e10),  # a float16 lerp's weight is not checked
        lambda lib, c, x: lib.where(c, x.to(lib.uint8), -200),  # unsigned: -255..-1 wrap
        lambda lib, c, x: lib.clamp(x.to(lib.uint8), -255),
        lambda lib, c, x: lib.where(c, x.long(), 2**62),
    ],
)
def test_scalar_conversion_quirks_match_torch(fn):
    check([np.array([True, False, True]), np.array([1.0, 2.0, 3.0], np.float32)], fn)


def test_where_copies_the_chosen_bits():
    x = np.array([-0.0, np.nan, 1.0, -np.inf], np.float32)
    got = check([np.array([True, True, False, True]), x], lambda lib, c, v: lib.where(c, v, 7.0))
    assert math.copysign(1.0, got.tolist()[0]) == -1.0


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, c, x: lib.where(c, x, x.T, out=lib.zeros(3, 3)),
        lambda lib, c, x: lib.clamp(x, x[0], x[1, 1], out=lib.zeros(3, 3).T),
        lambda lib, c, x: lib.clamp(x.int(), 0, out=lib.zeros(3, 3, dtype=lib.int32).T),
        lambda lib, c, x: lib.lerp(x, x.T, x[:, :1], out=lib.zeros(3, 3).T),
        lambda lib, c, x: lib.lerp(x, x.T, 0.75, out=lib.zeros(3, 3, dtype=lib.float64)),
        lambda lib, c, x: x.clamp_min(0.1),
        lambda lib, c, x: x.clamp_max(x[1]),
        lambda lib, c, x: lib.clamp_min(x, -0.5),
        lambda lib, c, x: lib.clamp_max(x.int(), 1.5),
        lambda lib, c, x: x.T.clamp_min_(0.2),
        lambda lib, c, x: x.clamp_max_(x[2].clone()),
        lambda lib, c, x: x.T.clip_(-0.5, 0.5),
        lambda lib, c, x: x[::2].clamp_(x[:1].clone(), x[1].clone()),
    ],
)
def test_ternary_out_views_and_one_bound_forms(fn):
    x = sample(tt.float32, (3, 3), "real", 11)
    c = sample(tt.bool, (3, 3), "real", 12)
    check([c, x], fn)


@pytest.mark.parametrize(
    "x_dtype, bound_dtype, number",
    [(tt.float32, tt.float32, 2.0), (tt.int32, tt.int32, 3), (tt.int16, tt.int64, 2), (tt.int32, tt.float32, 1.5),
     (tt.float64, tt.float32, -1.0), (tt.uint8, tt.uint8, 4)],
)  # fmt: skip
def test_clamp_mixed_bounds(x_dtype, bound_dtype, number):
    """A tensor and a number as the two bounds (torch takes only two of a kind): compared with torch
    given the number as a 0-d tensor of the type it promotes as."""
    x, bound = sample(x_dtype, (3, 4), "real", 1), sample(bound_dtype, (4,), "real", 2)
    dtype = tt.result_type(tt.tensor(x), tt.tensor(bound), number)
    as_tensor = {tt: lambda v: v, torch: lambda v: torch.tensor(v, dtype=TORCH_DTYPES[dtype])}
    check([x, bound], lambda lib, a, b: lib.clamp(a, b, as_tensor[lib](number)))
    check([x, bound], lambda lib, a, b: lib.clamp(a, as_tensor[lib](number), b))


def test_clamp_nan_in_bounds_and_min_above_max_like_torch():
    x = np.array([1.0, np.nan, 3.0, -np.inf, np.inf], np.float32)
    lows = np.array([np.nan, 1.0, 0.0, 0.0, 0.0], np.float32)
    highs = np.array([0.0, np.nan, 1.0, np.nan, 2.0], np.float32)
    check([x, lows, highs], lambda lib, a, lo, hi: lib.clamp(a, lo, hi))
    check([x], lambda lib, a: lib.clamp(a, math.nan, 1.0))
    check([x], lambda lib, a: lib.clamp(a, max=math.nan))
    got = check([x], lambda lib, a: lib.clamp(a, 5.0, 2.0))  # min > max: max wins
    assert got.tolist()[0] == 2.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.bool_])
def test_where_fast_call_and_general_path_agree(dtype):
    """where with a dense bool condition and a dense input takes one C call (tt_where_new) when
    `other` is a dense tensor of that shape and dtype, or a Python number a float input holds;
    the same operands in a transposed layout take the general ternary path. Both give the same
    bits (NaN payloads and -0.0 kept, numbers converted alike) and torch's values; numbers a
    float16 input cannot hold (1e5) and numbers for integer inputs stay on the general path."""
    rng = np.random.default_rng(3)
    if dtype == np.bool_:
        x, y = rng.random((5, 8)) < 0.5, rng.random((5, 8)) < 0.5
    elif dtype == np.int32:
        x, y = rng.integers(-9, 9, (5, 8)).astype(dtype), rng.integers(-9, 9, (5, 8)).astype(dtype)
    else:
        x, y = rng.standard_normal((5, 8)).astype(dtype), rng.standard_normal((5, 8)).astype(dtype)
        x[0, :4] = [np.nan, -0.0, np.inf, -np.inf]
        if dtype == np.float32:
            x[1, 0] = np.array([0x7FC00123], np.uint32).view(np.float32)[0]   # a NaN with a payload
        y[0, :2] = [-0.0, np.nan]
    cond = rng.random((5, 8)) < 0.5
    others = [y] + ([0, -0.0, 0.1, 2**40, -3, float("inf"), 1e5] if dtype not in (np.int32, np.bool_) else [3])
    transposed = {k: tt.from_numpy(np.ascontiguousarray(v.T)).T for k, v in (("c", cond), ("x", x), ("y", y))}
    for other in others:
        def call(lib, c, a, b, other=other):
            return lib.where(c, a, b if isinstance(other, np.ndarray) else other)

        dense = check([cond, x, y], call).numpy()
        strided = tt.where(transposed["c"], transposed["x"],
                           transposed["y"] if isinstance(other, np.ndarray) else other).numpy()
        assert dense.dtype == strided.dtype
        np.testing.assert_array_equal(dense.view(np.uint8), strided.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clamp_vector_loop_has_the_bits_of_maximum_then_minimum(dtype):
    """The clamp row is written as plain compares and NaN selects so that it vectorizes; over
    rows long enough for the vector loop (and its tail), with NaNs of distinct payloads in x and
    in either bound, signed zeros, infinities and low > high, it gives the bits of
    minimum(maximum(x, low), high), for number bounds and for tensor bounds."""
    rng = np.random.default_rng(5)
    uint = np.uint32 if dtype == np.float32 else np.uint64
    nan_x, nan_low, nan_high = (np.array([q], uint).view(dtype)[0] for q in (
        (0x7FC00011, 0x7FC00022, 0x7FC00033) if dtype == np.float32
        else (0x7FF8000000000011, 0x7FF8000000000022, 0x7FF8000000000033)))
    specials = np.array([nan_x, -0.0, 0.0, np.inf, -np.inf, 0.5, -0.5, 2.0], dtype)
    x = rng.choice(specials, 203).astype(dtype)
    low = rng.choice(np.array([nan_low, -0.0, 0.0, -np.inf, 0.5, 1.0], dtype), 203).astype(dtype)
    high = rng.choice(np.array([nan_high, 0.0, -0.0, np.inf, 0.25, 1.5], dtype), 203).astype(dtype)
    tx, tlow, thigh = tt.from_numpy(x), tt.from_numpy(low), tt.from_numpy(high)

    def bits(t):
        return t.numpy().view(uint)

    want = bits(tt.minimum(tt.maximum(tx, tlow), thigh))
    np.testing.assert_array_equal(bits(tt.clamp(tx, tlow, thigh)), want)
    for lo, hi in [(0.0, 1.0), (-0.0, 0.0), (1.0, 0.5), (float(nan_low), 1.0), (0.0, float(nan_high))]:
        lo_t, hi_t = tt.full((203,), lo, dtype=tx.dtype), tt.full((203,), hi, dtype=tx.dtype)
        want = bits(tt.minimum(tt.maximum(tx, lo_t), hi_t))
        np.testing.assert_array_equal(bits(tt.clamp(tx, lo, hi)), want)


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=_dtype_id)
@pytest.mark.parametrize("exponent", [2, 2.0, 3, 0.5, -0.5, -1, -2.0])
@pytest.mark.parametrize("form", ["operator", "function", "out", "inplace"])
def test_pow_to_a_python_number_bit_identical_to_torch(dtype, exponent, form):
    """Python-number exponents PyTorch computes with cheaper ops (x * x, sqrt, rsqrt, 1 / x and
    their compositions): the same bits as torch, signed zeros, infinities and NaN included, by
    every way of calling pow. (0.5 and -0.5 are compared with NumPy's sqrt, which is correctly
    rounded: torch's sqrt is 1 ULP off on some inputs.)"""
    rng = np.random.default_rng(5)
    specials = [-0.0, 0.0, -np.inf, np.inf, np.nan, -2.0, 3.0, 1e-45, 1.7e38, 1e-300, 1e300]
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        x = np.concatenate([specials, rng.standard_normal(200) * 10]).astype(dtype.numpy)

    def call(lib, t):
        if form == "operator":
            return t ** exponent
        if form == "function":
            return lib.pow(t, exponent)
        if form == "out":
            out = lib.empty(t.shape, dtype=t.dtype)
            lib.pow(t, exponent, out=out)
            return out
        return t.clone().pow_(exponent)

    got = call(tt, tt.from_numpy(x.copy())).numpy()
    want = call(torch, torch.from_numpy(x.copy())).numpy()
    if exponent in (0.5, -0.5):  # NumPy's sqrt is correctly rounded; torch's is not on every input
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.sqrt(x) if exponent == 0.5 else 1 / np.sqrt(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))  # a NaN's sign and payload may differ
    number = ~np.isnan(want)
    np.testing.assert_array_equal(got[number].view(np.uint8), want[number].view(np.uint8))


@pytest.mark.parametrize("dtype", [tt.int32, tt.int64, tt.bool], ids=_dtype_id)
@pytest.mark.parametrize("exponent", [2.0, 0.5, -0.5, -1.0, 3.0, -2.0, 2])
def test_pow_of_integers_to_a_python_number_as_torch(dtype, exponent):
    """PyTorch picks the cheaper op by the promoted dtype: an integer tensor ** 2.0 is float32 and
    squared (4097 ** 2.0 is 16785408 exactly); ** 2 stays an integer power (bool ** 2 is int64)."""
    x = np.array([0, 1, 3, 4097, 12345, 99999, 2], dtype.numpy) if dtype is not tt.bool else np.array([True, False])
    got = (tt.from_numpy(x) ** exponent).numpy()
    want = (torch.from_numpy(x) ** exponent).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got) if got.dtype.kind == "f" else got,
                                  np.isnan(want) if want.dtype.kind == "f" else want)
    if got.dtype.kind == "f":
        finite = ~np.isnan(want)
        np.testing.assert_array_equal(got[finite], want[finite])


@pytest.mark.parametrize(
    "call",
    [lambda: tt.pow(tt.ones(3), 2, out=tt.empty(3, dtype=tt.int32)), lambda: tt.pow(tt.ones(3), 3, out=tt.empty(4)),
     lambda: tt.ones(1).expand(3).pow_(0.5), lambda: tt.pow(tt.ones(3), -2, out=[1])],
)
def test_pow_errors_name_pow(call):
    with pytest.raises((RuntimeError, TypeError), match="^pow"):
        call()


@pytest.mark.parametrize("dtype", [tt.float16, tt.float32, tt.float64, tt.int32, tt.uint8], ids=_dtype_id)
@pytest.mark.parametrize(
    "bounds", [(-0.0, 0.5), (0.0, -0.0), (1, 3), (2.5, float("nan")), (float("nan"), 1), (3, 1), (-1, 2.5), (0.5, 2)]
)
def test_clamp_to_numbers_fast_call_and_general_path_agree(dtype, bounds):
    """A dense tensor clamped to two numbers takes one C call (tt_clamp_scalars_new: both bounds
    converted to its dtype, each an int or a float); a transposed one takes the general ternary
    path. Same bits, signed zeros and NaN included, and both as torch."""
    values = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 0.25, 2.0, 7.0, -3.0, 1.0, 3.0, 0.5], np.float64)
    if not dtype.is_floating_point:
        values = np.nan_to_num(values, posinf=9, neginf=0).clip(0, 9)
        if any(isinstance(b, float) for b in bounds):
            bounds = (1, 3)
    x = values.reshape(3, 4).astype(dtype.numpy)
    dense = check([x], lambda lib, a: a.clamp(*bounds)).numpy()
    strided = check([np.ascontiguousarray(x.T)], lambda lib, a: a.T.clamp(*bounds)).numpy()
    np.testing.assert_array_equal(dense.view(np.uint8), strided.view(np.uint8))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_dtype_id)
def test_every_shift_amount_matches_torch(dtype):
    info = np.iinfo(dtype.numpy)
    xs = [info.min, -1, 0, 1, 3, info.max, -77] if dtype.kind == "i" else [0, 1, 3, 128, 255, 77]
    xs = np.array(xs, dtype.numpy)
    amounts = np.arange(-70, 71) if dtype.kind == "i" else np.arange(0, 256)
    amounts = amounts.astype(dtype.numpy)
    grid_x, grid_s = (a.ravel() for a in np.meshgrid(xs, amounts, indexing="ij"))
    for fn in (
        lambda lib, x, s: x << s,
        lambda lib, x, s: x >> s,
        lambda lib, x, s: lib.bitwise_left_shift(x, s.long()),
        lambda lib, x, s: x.bitwise_right_shift(s.long()),
        lambda lib, x, s: 3 << s,
        lambda lib, x, s: -100 >> s,
        lambda lib, x, s: x.clone().__ilshift__(2),
        lambda lib, x, s: x.clone().bitwise_right_shift_(s),
    ):
        check([grid_x, grid_s], fn)


def test_logaddexp_is_stable_for_large_and_infinite_arguments():
    a = np.array([1e30, -1e30, 1000.0, 80.0, -80.0, -np.inf, np.inf, -np.inf, 0.0], np.float64)
    b = np.array([1e30, -1e30, 999.0, -80.0, -80.0, -np.inf, -np.inf, 5.0, 1e-20], np.float64)
    for dtype in (np.float32, np.float64):
        check([a.astype(dtype), b.astype(dtype)], lambda lib, x, y: lib.logaddexp(x, y))
        check([a.astype(dtype), b.astype(dtype)], lambda lib, x, y: lib.logaddexp2(x, y))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_id)
def test_gelu_of_infinity(dtype):
    """gelu(inf) = inf, gelu(-inf) = NaN (-inf * 0): torch's float64 kernel and its one-element
    float32/float16 path agree; its vectorized float32/float16 path gives NaN for +inf."""
    x = tt.tensor([math.inf, -math.inf], dtype=dtype)
    got = tt.gelu(x).tolist()
    assert got[0] == math.inf and math.isnan(got[1])
    assert torch.nn.functional.gelu(torch.tensor([math.inf], dtype=torch.float64)).item() == math.inf
    assert torch.nn.functional.gelu(torch.tensor([math.inf], dtype=TORCH_DTYPES[dtype])).item() == math.inf


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize(
    "name, kwargs",
    [("silu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 1.5}), ("hardtanh", {"min_val": 0.0})],
)
def test_activation_inplace_flag(name, kwargs, inplace):
    def run(lib, x):
        f = getattr(torch.nn.functional if lib is torch else tt, name)
        view = x.T
        result = f(view, inplace=inplace, **kwargs)
        assert (result is view) == inplace
        return result, x

    for pick in (0, 1):  # the result, then the base tensor (written through the view only in place)
        check([sample(tt.float32, (3, 4), "real", 2)], lambda lib, x, pick=pick: run(lib, x)[pick])


@pytest.mark.parametrize("name, args", [("leaky_relu_", (0.2,)), ("elu_", (1.5,)), ("hardtanh_", (-0.5, 0.5))])
def test_activation_underscore_functions_write_in_place(name, args):
    def run(lib, x):
        f = getattr(torch.nn.functional if lib is torch else tt, name)
        view = x[:, 1:]
        assert f(view, *args) is view
        return x

    check([sample(tt.float32, (3, 4), "real", 3)], run)


@pytest.mark.parametrize("eps", [None, 0.1, -0.5, 0.7, 0])
def test_logit_eps_matches_torch(eps):
    x = np.array([0.0, 1.0, 0.05, 0.5, 0.99, -0.5, 2.0, np.nan], np.float32)
    check([x], lambda lib, t: lib.logit(t, eps))
    check([x], lambda lib, t: t.clone().logit_(eps))


@pytest.mark.parametrize(
    "fn, exc, match",
    [
        (lambda lib, x: lib.where(x, x, x), RuntimeError, "where"),
        (lambda lib, x: lib.where(x > 0, x), TypeError, "where"),
        (lambda lib, x: lib.where(x > 0, x, 0.0, out=lib.zeros(3, dtype=lib.float64)), RuntimeError, "where"),
        (lambda lib, x: lib.where(x > 0, x.to(lib.int8), 1000), RuntimeError, "where"),
        (lambda lib, x: lib.where(x > 0, x, 1e40), RuntimeError, "where"),
        (lambda lib, x: lib.where(x[:2] > 0, x, 0.0), RuntimeError, "where"),
        (lambda lib, x: lib.clamp(x), RuntimeError, "clamp"),
        (lambda lib, x: lib.clamp(x.to(lib.int8), 2, 1000), RuntimeError, "clamp"),
        (lambda lib, x: lib.clamp(x.half(), 1e6), RuntimeError, "clamp"),
        (lambda lib, x: lib.clamp(x.to(lib.uint8), -256), RuntimeError, "clamp"),
        (lambda lib, x: x.long().clamp_(2.5), RuntimeError, "clamp"),
        (lambda lib, x: lib.clamp(x, 0.5, out=lib.zeros(3, dtype=lib.float64)), RuntimeError, "clamp"),
        (lambda lib, x: lib.clamp(x.int(), 0, 1, out=lib.zeros(3)), RuntimeError, "clamp"),
        (lambda lib, x: x.clamp_(x.reshape(3, 1)), RuntimeError, "clamp"),
        (lambda lib, x: lib.clamp(x, x[:2], 1.0), RuntimeError, "clamp"),
        (lambda lib, x: lib.lerp(x.long(), x.long(), 0.5), (RuntimeError, TypeError), "lerp"),
        (lambda lib, x: lib.lerp(x, x.double(), 0.5), RuntimeError, "lerp"),
        (lambda lib, x: lib.lerp(x, x, x.double()), RuntimeError, "lerp"),
        (lambda lib, x: lib.lerp(x, x, 1e40), RuntimeError, "lerp"),
        (lambda lib, x: lib.lerp(x, 3.0, 0.5), TypeError, "lerp"),
        (lambda lib, x: x.lerp_(x.reshape(3, 1), 0.5), RuntimeError, "lerp"),
        (lambda lib, x: +x.bool(), RuntimeError, "."),
        (lambda lib, x: lib.positive(x.bool()), RuntimeError, "positive"),
        (lambda lib, x: x.int() << 1.5, (RuntimeError, TypeError), "."),
        (lambda lib, x: x.bool() >> x.bool(), (RuntimeError, TypeError), "."),
        (lambda lib, x: lib.hypot(x.int(), x.int()), (RuntimeError, TypeError), "hypot"),
        (lambda lib, x: lib.fmod(x.int(), 0), RuntimeError, "fmod"),
        (lambda lib, x: x.fmod_(x.reshape(3, 1)), RuntimeError, "fmod"),
    ],
)
def test_errors_of_the_new_functions_match_torch(fn, exc, match):
    helper_test_exception(
        [np.array([1.0, -2.0, 3.0], np.float32)], lambda x: fn(torch if isinstance(x, torch.Tensor) else tt, x),
        exception=exc, match=match,
    )  # fmt: skip


@pytest.mark.parametrize(
    "fn, exc, match",
    [
        (lambda F, x: F.gelu(x, approximate="erf"), RuntimeError, "gelu"),
        (lambda F, x: F.hardtanh(x, 2.0, 1.0), ValueError, "hardtanh"),
        (lambda F, x: F.hardtanh(x.bool()), RuntimeError, "hardtanh"),
        (
            lambda F, x: F.hardtanh(x.to(torch.uint8 if F is torch.nn.functional else tt.uint8)),
            RuntimeError,
            "hardtanh",
        ),
        (lambda F, x: F.silu(x.long()), (RuntimeError, TypeError), "silu"),
        (lambda F, x: F.softplus(x.int()), (RuntimeError, TypeError), "softplus"),
    ],
)
def test_activation_errors_match_torch(fn, exc, match):
    helper_test_exception(
        [np.array([1.0, -2.0, 3.0], np.float32)],
        lambda x: fn(torch.nn.functional if isinstance(x, torch.Tensor) else tt, x),
        exception=exc, match=match,
    )  # fmt: skip


@pytest.mark.parametrize("limits", [(-2.5, 3.5), (0, 7), (-1, 1), (-100, 100)])
@pytest.mark.parametrize("dtype", [tt.int8, tt.int32, tt.int64, tt.float16, tt.float64], ids=_dtype_id)
def test_hardtanh_truncates_integer_limits_like_torch(dtype, limits):
    x = sample(dtype, (2, 5), "real", 5)
    check([x], lambda lib, t: (torch.nn.functional if lib is torch else tt).hardtanh(t, *limits))


# ---------------------------------------------------------------------- isclose / allclose

CLOSE_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_]


def _close_values(rng: np.random.Generator, shape: tuple[int, ...], dtype) -> tuple[np.ndarray, np.ndarray]:
    """A pair where about half the elements are nearly equal, with NaN and infinities for floats."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.5, rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
        step = rng.integers(-2, 3, size=shape)
        b = np.clip(a.astype(np.int64) + step, info.min, info.max).astype(dtype)
        return a, np.where(rng.random(shape) < 0.3, rng.integers(info.min, info.max, size=shape, dtype=dtype), b)
    a = rng.standard_normal(shape) * 10
    b = a * (1 + rng.choice([0.0, 1e-7, 1e-5, 1e-3, 0.1], size=shape)) + rng.choice([0.0, 1e-9, 1e-6], size=shape)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    a = np.where(rng.random(shape) < 0.15, rng.choice(specials, size=shape), a)
    b = np.where(rng.random(shape) < 0.15, rng.choice(specials, size=shape), b)
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", CLOSE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("tolerances", [(1e-05, 1e-08), (1e-3, 0.0), (0.0, 1.0), (0.1, 2.0)])
@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("shapes", [((5, 7), (5, 7)), ((3, 1, 4), (2, 4)), ((), (6,))])
def test_isclose_and_allclose_match_torch(dtype, tolerances, equal_nan, shapes):
    rng = np.random.default_rng(hash((np.dtype(dtype).name, tolerances, equal_nan, shapes)) % 2**32)
    a, _ = _close_values(rng, shapes[0], dtype)
    _, b = _close_values(rng, shapes[1], dtype)
    a, b = np.asarray(a), np.asarray(b)  # 0-d draws come back as NumPy scalars
    rtol, atol = tolerances
    helper_test_op([a, b], lambda x, y: tt.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan),
                   lambda x, y: torch.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan), ref="torch")
    helper_test_op([a, b], lambda x, y: x.isclose(y, rtol, atol, equal_nan),
                   lambda x, y: x.isclose(y, rtol, atol, equal_nan), ref="torch")
    for x, y in [(a, b), (a, a)]:
        want = torch.allclose(torch.from_numpy(np.array(x)), torch.from_numpy(np.array(y)), rtol, atol, equal_nan)
        assert tt.allclose(tt.tensor(x), tt.tensor(y), rtol, atol, equal_nan) is want
        assert tt.tensor(x).allclose(tt.tensor(y), rtol, atol, equal_nan) is want


@pytest.mark.parametrize("case", [
    ([np.ones(2, np.float32), np.ones(2, np.int64)], {}, RuntimeError, r"^isclose: float32 did not match int64"),
    ([np.ones(2), np.ones(2)], {"rtol": -1.0}, RuntimeError, r"^isclose: rtol must be greater than or equal to zero"),
    ([np.ones(2), np.ones(2)], {"atol": -1.0}, RuntimeError, r"^isclose: atol must be greater than or equal to zero"),
    ([np.ones(2), np.ones(3)], {}, RuntimeError, r"^(eq|isclose): "),
])
def test_isclose_errors(case):
    arrays, kwargs, exception, match = case
    helper_test_exception(arrays, lambda x, y: tt.isclose(x, y, **kwargs),
                          lambda x, y: torch.isclose(x, y, **kwargs), exception=exception, match=match)


@pytest.mark.parametrize("dtype, low, high, match", [
    (np.float16, 0, 70000, "70000 cannot be converted to type float16 without overflow"),
    (np.float16, 0, 70000.0, "70000.0 cannot be converted to type float16 without overflow"),
    (np.float32, 0, 1e39, "1e\\+39 cannot be converted to type float32 without overflow"),
    (np.float32, -(2**70), 1.0, "does not fit in int64"),
])
def test_clamp_refuses_numbers_the_dtype_cannot_hold(dtype, low, high, match):
    # clamp's one-call path for Python-number bounds takes only bounds the tensor's dtype holds;
    # the others get the general path's error, as PyTorch refuses them
    helper_test_exception([np.ones(3, dtype)], lambda x: x.clamp(low, high), exception=RuntimeError, match=match)
