"""Gradients of the elementwise ops against PyTorch: every differentiable binary and unary op,
over broadcast shapes, in float32 and float64, first and second order."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
from t_tensor.autograd.functions.elementwise import BINARY_DERIVATIVES, UNARY_DERIVATIVES
from tests.helpers import broadcast_shapes, helper_test_grad

# Domains that keep every op (and its derivative) finite and away from kinks.
POSITIVE = {"log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "acosh", "pow"}
UNIT = {"asin", "acos", "atanh", "logit"}

TORCH_UNARY = {
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu": torch.nn.functional.gelu,
    "silu": torch.nn.functional.silu,
    "softplus": torch.nn.functional.softplus,
    "leaky_relu": torch.nn.functional.leaky_relu,
    "elu": torch.nn.functional.elu,
    "relu": torch.relu,
    "logit": torch.logit,
}
TT_UNARY = {
    "gelu_tanh": lambda x: tt.gelu(x, approximate="tanh"),
}


def _values(shape: tuple[int, ...], op: str, dtype: np.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if op in UNIT:
        return rng.uniform(0.1, 0.9, shape).astype(dtype)
    if op == "acosh":
        return rng.uniform(1.5, 3.0, shape).astype(dtype)
    if op in POSITIVE:
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    values = rng.uniform(-2.0, 2.0, shape)
    values[np.abs(values) < 0.05] = 0.5  # away from the kinks of abs, relu, sign ...
    return values.astype(dtype)


@pytest.mark.parametrize("op", sorted(UNARY_DERIVATIVES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_grad_matches_torch(op: str, dtype: np.dtype) -> None:
    x = _values((3, 4), op, dtype, 1)
    tt_fn = TT_UNARY.get(op) or getattr(tt, op)
    th_fn = TORCH_UNARY.get(op) or getattr(torch, op)
    tol = (1e-5, 1e-4) if dtype == np.float32 else (1e-10, 1e-9)
    helper_test_grad([x], tt_fn, th_fn, atol=tol[0], rtol=tol[1], create_graph=dtype == np.float64)


@pytest.mark.parametrize("op", sorted(set(BINARY_DERIVATIVES) - {"clamp_min", "clamp_max"}))
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_binary_grad_matches_torch_with_broadcasting(op: str, data: st.DataObject) -> None:
    _, (shape_a, shape_b) = data.draw(broadcast_shapes(2))
    a = _values(shape_a, op, np.float64, 2)
    b = _values(shape_b, op, np.float64, 3)
    if op in ("fmod", "remainder"):
        b = np.where(np.abs(b) < 0.5, 1.5, b)  # no division by (nearly) zero
    helper_test_grad([a, b], getattr(tt, op), getattr(torch, op), atol=1e-9, rtol=1e-8,
                     create_graph=op not in ("fmod", "remainder", "copysign"))


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__radd__",
                                "__rsub__", "__rmul__", "__rtruediv__", "__rpow__"])
def test_operators_with_python_numbers(op: str) -> None:
    x = _values((2, 3), "pow", np.float64, 4)
    helper_test_grad([x], lambda t: getattr(t, op)(1.5), create_graph=True, atol=1e-10, rtol=1e-9)


def test_mixed_dtypes_give_each_input_its_own_dtype() -> None:
    a = tt.ones(3, dtype=tt.float32, requires_grad=True)
    b = tt.ones(3, dtype=tt.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == tt.float32 and b.grad.dtype == tt.float64


def test_where_clamp_lerp_match_torch() -> None:
    rng = np.random.default_rng(5)
    x, y, w = (rng.standard_normal((3, 4)) for _ in range(3))
    cond = x > 0
    helper_test_grad([x, y], lambda a, b: tt.where(tt.tensor(cond), a, b),
                     lambda a, b: torch.where(torch.tensor(cond), a, b), create_graph=True)
    helper_test_grad([x, y, w], lambda a, lo, hi: tt.clamp(a, lo, lo + 1.0),
                     lambda a, lo, hi: torch.clamp(a, lo, lo + 1.0))
    helper_test_grad([x], lambda a: tt.clamp(a, -0.5, 0.5), lambda a: torch.clamp(a, -0.5, 0.5))
    helper_test_grad([x], lambda a: tt.clamp(a, min=-0.5), lambda a: torch.clamp(a, min=-0.5))
    helper_test_grad([x, y, w], tt.lerp, torch.lerp, create_graph=True)
    helper_test_grad([x, y], lambda a, b: tt.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3))


def test_comparisons_give_outputs_without_grad() -> None:
    x = tt.ones(3, requires_grad=True)
    assert not (x > 0).requires_grad and not x.isnan().requires_grad
    assert x.floor().requires_grad  # as PyTorch: piecewise constant ops have a zero gradient


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_inplace_on_non_leaf_matches_torch(op: str) -> None:
    x = _values((2, 3), "pow", np.float64, 6)
    y = _values((3,), "pow", np.float64, 7)

    def run(a, b):
        h = a * 2.0
        getattr(h, op)(b)
        return h * h

    helper_test_grad([x, y], run, atol=1e-10, rtol=1e-9)


def test_inplace_unary_on_non_leaf() -> None:
    x = _values((4,), "pow", np.float64, 8)
    helper_test_grad([x], lambda a: (a * 1.0).sin_().mul_(a) * 3.0, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_relu_backward_one_pass_and_composite_match_torch(dtype) -> None:
    """relu's backward: one C pass (TT_RELU_GRAD) for dense same-shape operands, the composite
    where(out <= 0, 0, grad) otherwise (a transposed gradient) and when it must record
    (create_graph). Zeros of either sign get no gradient, a NaN passes it, as in PyTorch."""
    x = np.array([[-2.0, -0.0, 0.0, 3.0], [np.nan, 1.5, -np.inf, np.inf], [0.5, -0.5, 2.0, -3.0]])
    g = np.arange(1, 13, dtype=np.float64).reshape(3, 4)
    if dtype == np.int64:
        x, g = np.nan_to_num(x, posinf=7, neginf=-7), g
    x, g = x.astype(dtype), g.astype(dtype)
    out = tt.tensor(x).relu()
    from t_tensor import elementwise as E
    want = torch.ops.aten.threshold_backward(torch.tensor(g), torch.tensor(x).relu(), 0).numpy()
    np.testing.assert_array_equal(E._relu_grad(tt.tensor(g), out).numpy(), want)
    np.testing.assert_array_equal(E._relu_grad(tt.tensor(g.T.copy()).T, out).numpy(), want)
    if dtype != np.int64:
        got, ref = tt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        (first,) = tt.autograd.grad(got.relu().square().sum(), got, create_graph=True)
        (ref_first,) = torch.autograd.grad(ref.relu().square().sum(), ref, create_graph=True)
        first.sum().backward()
        ref_first.sum().backward()
        np.testing.assert_array_equal(first.detach().numpy(), ref_first.detach().numpy())
        np.testing.assert_array_equal(got.grad.numpy(), ref.grad.numpy())
