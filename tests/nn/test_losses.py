"""Losses against torch.nn.functional and the torch loss modules: values and gradients (of the
input, and of the target where torch differentiates it), every reduction, class weights,
ignore_index, label_smoothing, probability targets; second order in float64; errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import t_tensor as tt
import t_tensor.nn.functional as F
from tests.helpers import helper_test_grad

TF = torch.nn.functional
REDUCTIONS = ["mean", "sum", "none"]
TOL = {np.float32: (1e-5, 1e-4), np.float64: (1e-10, 1e-9)}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _normal(shape, dtype, seed=0, scale=1.0) -> np.ndarray:
    return (_rng(seed).standard_normal(shape) * scale).astype(dtype)


# ---------------------------------------------------------------------- pointwise losses

POINTWISE = [
    ("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("name", "kwargs"), POINTWISE)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((), ()), ((2, 3), (3,)), ((0, 2), (0, 2))])
def test_pointwise_losses_match_torch(name, kwargs, reduction, dtype, shapes) -> None:
    x, y = _normal(shapes[0], dtype, 1), _normal(shapes[1], dtype, 2)
    atol, rtol = TOL[dtype]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about broadcasting targets
        helper_test_grad([x, y], lambda a, b: getattr(F, name)(a, b, reduction=reduction, **kwargs),
                         lambda a, b: getattr(TF, name)(a, b, reduction=reduction, **kwargs), atol=atol, rtol=rtol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("with_weight", [False, True])
def test_binary_cross_entropy_matches_torch(reduction, with_weight) -> None:
    for dtype in (np.float32, np.float64):
        x = _rng(3).uniform(0.05, 0.95, (4, 3)).astype(dtype)
        y = _rng(4).uniform(0.0, 1.0, (4, 3)).astype(dtype)
        w = _rng(5).uniform(0.5, 2.0, (3,)).astype(dtype)
        inputs = [x, y, w] if with_weight else [x, y]
        atol, rtol = TOL[dtype]
        helper_test_grad(inputs, lambda a, b, *c: F.binary_cross_entropy(a, b, *c, reduction=reduction),
                         lambda a, b, *c: TF.binary_cross_entropy(a, b, *c, reduction=reduction),
                         grad_inputs=[True, True, False][:len(inputs)], atol=atol, rtol=rtol)


def test_binary_cross_entropy_clamps_logs_as_torch() -> None:
    x = np.array([0.0, 1.0, 0.5, 1e-30], dtype=np.float32)
    y = np.array([1.0, 0.0, 0.5, 1.0], dtype=np.float32)
    got = F.binary_cross_entropy(tt.tensor(x), tt.tensor(y), reduction="none")
    np.testing.assert_allclose(got.numpy(), TF.binary_cross_entropy(torch.tensor(x), torch.tensor(y),
                                                                     reduction="none").numpy(), rtol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", [(), ("weight",), ("pos_weight",), ("weight", "pos_weight")])
def test_binary_cross_entropy_with_logits_matches_torch(reduction, options) -> None:
    for dtype in (np.float32, np.float64):
        x = _normal((5, 4), dtype, 6, scale=3.0)
        y = _rng(7).uniform(0.0, 1.0, (5, 4)).astype(dtype)
        extra = {"weight": _rng(8).uniform(0.5, 2.0, (4,)).astype(dtype),
                 "pos_weight": _rng(9).uniform(0.5, 3.0, (4,)).astype(dtype)}
        names = list(options)

        def call(fn, a, b, *rest, names=names):
            return fn(a, b, reduction=reduction, **dict(zip(names, rest, strict=True)))

        atol, rtol = TOL[dtype]
        helper_test_grad([x, y] + [extra[n] for n in names],
                         lambda *args: call(F.binary_cross_entropy_with_logits, *args),
                         lambda *args: call(TF.binary_cross_entropy_with_logits, *args),
                         grad_inputs=[True, True] + [False] * len(names), atol=atol, rtol=rtol)


def test_pointwise_second_order() -> None:
    x, y = _normal((3, 4), np.float64, 10), _normal((3, 4), np.float64, 11)
    for name in ("mse_loss", "smooth_l1_loss", "binary_cross_entropy_with_logits"):
        helper_test_grad([x, y], getattr(F, name), getattr(TF, name), atol=1e-10, rtol=1e-9, create_graph=True)
    p = _rng(12).uniform(0.1, 0.9, (3, 4))
    helper_test_grad([p, _rng(13).uniform(0, 1, (3, 4))], F.binary_cross_entropy, TF.binary_cross_entropy,
                     atol=1e-10, rtol=1e-9, create_graph=True)


# ---------------------------------------------------------------------- nll_loss and cross_entropy

SHAPES = [((5, 4), (5,)), ((4,), ()), ((2, 3, 2, 2), (2, 2, 2)), ((0, 3), (0,))]


def _targets(target_shape, classes, seed, ignore_index=None):
    t = _rng(seed).integers(0, classes, target_shape).astype(np.int64)
    if ignore_index is not None and t.size > 1:
        t.reshape(-1)[:: 3] = ignore_index
    return np.asarray(t)


def _log_probs(shape, dtype, seed):
    x = _normal(shape, dtype, seed)
    axis = 0 if len(shape) == 1 else 1
    return (x - np.log(np.exp(x).sum(axis=axis, keepdims=True))).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("input_shape", "target_shape"), SHAPES)
@pytest.mark.parametrize(("with_weight", "ignore_index"), [(False, -100), (True, -100), (False, 1), (True, 2)])
def test_nll_loss_matches_torch(input_shape, target_shape, reduction, dtype, with_weight, ignore_index) -> None:
    classes = input_shape[0] if len(input_shape) == 1 else input_shape[1]
    x = _log_probs(input_shape, dtype, 20)
    t = _targets(target_shape, classes, 21, ignore_index if ignore_index >= 0 else None)
    if t.size and (t != ignore_index).sum() == 0:
        t.reshape(-1)[0] = 0
    w = _rng(22).uniform(0.5, 2.0, (classes,)).astype(dtype)
    inputs = [x, t, w] if with_weight else [x, t]
    atol, rtol = TOL[dtype]
    helper_test_grad(inputs, lambda a, b, *c: F.nll_loss(a, b, *c, ignore_index=ignore_index, reduction=reduction),
                     lambda a, b, *c: TF.nll_loss(a, b, *c, ignore_index=ignore_index, reduction=reduction),
                     grad_inputs=[True, False, False][:len(inputs)], atol=atol, rtol=rtol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("input_shape", "target_shape"), SHAPES)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize(("with_weight", "ignore_index"), [(False, -100), (True, -100), (False, 0), (True, 1)])
def test_cross_entropy_class_indices_match_torch(input_shape, target_shape, reduction, label_smoothing,
                                                 with_weight, ignore_index) -> None:
    kwargs = {"ignore_index": ignore_index, "reduction": reduction, "label_smoothing": label_smoothing}
    for dtype in ((np.float32,) if label_smoothing else (np.float32, np.float64)):
        classes = input_shape[0] if len(input_shape) == 1 else input_shape[1]
        x = _normal(input_shape, dtype, 30, scale=2.0)
        t = _targets(target_shape, classes, 31, ignore_index if ignore_index >= 0 else None)
        w = _rng(32).uniform(0.5, 2.0, (classes,)).astype(dtype)
        inputs = [x, t, w] if with_weight else [x, t]
        atol, rtol = TOL[dtype]
        helper_test_grad(inputs, lambda a, b, *c: F.cross_entropy(a, b, *c, **kwargs),
                         lambda a, b, *c: TF.cross_entropy(a, b, *c, **kwargs),
                         grad_inputs=[True, False, False][:len(inputs)], atol=atol, rtol=rtol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 2)])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
@pytest.mark.parametrize("with_weight", [False, True])
def test_cross_entropy_probability_targets_match_torch(shape, reduction, label_smoothing, with_weight) -> None:
    kwargs = {"reduction": reduction, "label_smoothing": label_smoothing}
    for dtype in (np.float32, np.float64):
        classes = shape[0] if len(shape) == 1 else shape[1]
        x = _normal(shape, dtype, 40, scale=2.0)
        p = np.exp(_log_probs(shape, dtype, 41))
        w = _rng(42).uniform(0.5, 2.0, (classes,)).astype(dtype)
        inputs = [x, p, w] if with_weight else [x, p]
        atol, rtol = TOL[dtype]
        helper_test_grad(inputs, lambda a, b, *c: F.cross_entropy(a, b, *c, **kwargs),
                         lambda a, b, *c: TF.cross_entropy(a, b, *c, **kwargs),
                         grad_inputs=[True, True, False][:len(inputs)], atol=atol, rtol=rtol)


def test_cross_entropy_second_order() -> None:
    x = _normal((4, 3), np.float64, 50)
    t = np.array([0, 2, 1, 2])
    helper_test_grad([x, t], lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1),
                     lambda a, b: TF.cross_entropy(a, b, label_smoothing=0.1), atol=1e-10, rtol=1e-9,
                     create_graph=True)
    p = np.exp(_log_probs((4, 3), np.float64, 51))
    helper_test_grad([x, p], F.cross_entropy, TF.cross_entropy, atol=1e-10, rtol=1e-9, create_graph=True)
    helper_test_grad([_log_probs((4, 3), np.float64, 52), t], F.nll_loss, TF.nll_loss, atol=1e-10, rtol=1e-9,
                     create_graph=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_plain_case_is_one_node_with_second_derivatives(reduction) -> None:
    """(N, C) logits, int64 indices, no weight, smoothing or ignored target: one CrossEntropy node,
    whose backward is differentiable again; a strided target and an ignore_index past every target
    take it too, an ignored target the general path."""
    x = _normal((6, 4), np.float64, 60)
    t = np.array([0, 3, 1, 3, 2, 0])
    got = F.cross_entropy(tt.tensor(x, requires_grad=True), tt.tensor(t), reduction=reduction)
    assert type(got.grad_fn).__name__ == "CrossEntropyBackward"
    helper_test_grad([x, t], lambda a, b: F.cross_entropy(a, b, reduction=reduction),
                     lambda a, b: TF.cross_entropy(a, b, reduction=reduction), atol=1e-10, rtol=1e-9,
                     create_graph=True)
    strided = np.array([0, 9, 3, 9, 1, 9, 3, 9, 2, 9, 0, 9])
    assert type(F.cross_entropy(tt.tensor(x, requires_grad=True), tt.tensor(strided)[::2],
                                ignore_index=7).grad_fn).__name__ == "CrossEntropyBackward"
    helper_test_grad([x, strided], lambda a, b: F.cross_entropy(a, b[::2], reduction=reduction, ignore_index=7),
                     lambda a, b: TF.cross_entropy(a, b[::2], reduction=reduction, ignore_index=7),
                     grad_inputs=[True, False], atol=1e-10, rtol=1e-9)
    ignored = F.cross_entropy(tt.tensor(x, requires_grad=True), tt.tensor(t), reduction=reduction, ignore_index=3)
    assert type(ignored.grad_fn).__name__ != "CrossEntropyBackward"
    with pytest.raises(IndexError, match="^cross_entropy: Target 4 is out of bounds"):
        F.cross_entropy(tt.tensor(x), tt.tensor([0, 1, 4, 0, 0, 0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_plain_case_c_kernels_match_torch(dtype, reduction) -> None:
    """The plain case's C pick (tt_nll_pick) and backward (tt_cross_entropy_backward), with nothing
    recording: transposed logits, a strided target, an upstream gradient that differs per row
    (reduction "none") or is one number, enough rows for the backward's threads; against torch."""
    atol, rtol = TOL[dtype]
    for n, c in [(7, 3), (300, 130)]:
        x = _normal((c, n), dtype, n).T  # transposed: rows are not contiguous
        t = _rng(n).integers(0, c, 2 * n)[::2]
        w = _normal((n,), dtype, n + 1)
        xt, xp = tt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        got, want = F.cross_entropy(xt, tt.tensor(t), reduction=reduction), TF.cross_entropy(
            xp, torch.tensor(t), reduction=reduction)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=atol, rtol=rtol)
        if reduction == "none":
            (got * tt.tensor(w)).sum().backward()
            (want * torch.tensor(w)).sum().backward()
        else:
            (got * 3.0).backward()
            (want * 3.0).backward()
        np.testing.assert_allclose(xt.grad.numpy(), xp.grad.numpy(), atol=atol, rtol=rtol)


def test_all_targets_ignored_gives_nan_mean_as_torch() -> None:
    x = _normal((3, 4), np.float32, 60)
    t = np.full(3, -100)
    for tt_fn, th_fn in ((F.nll_loss, TF.nll_loss), (F.cross_entropy, TF.cross_entropy)):
        got = tt_fn(tt.tensor(x), tt.tensor(t))
        want = th_fn(torch.tensor(x), torch.tensor(t))
        assert np.isnan(got.item()) and np.isnan(want.item())
        assert tt_fn(tt.tensor(x), tt.tensor(t), reduction="sum").item() == 0.0
        helper_test_grad([x, t], tt_fn, th_fn)  # the gradients are zeros, not NaN


def test_large_logits_stay_finite() -> None:
    x = np.array([[1000.0, 0.0, -1000.0], [-500.0, 500.0, 0.0]], dtype=np.float32)
    t = np.array([2, 1])
    helper_test_grad([x, t], F.cross_entropy, TF.cross_entropy)
    helper_test_grad([x, x * 0 + 1], F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits)


# ---------------------------------------------------------------------- modules


def test_loss_modules_match_torch() -> None:
    x = _normal((6, 4), np.float32, 70)
    y = _normal((6, 4), np.float32, 71)
    probs = _rng(72).uniform(0.05, 0.95, (6, 4)).astype(np.float32)
    t = _rng(73).integers(0, 4, 6)
    w = _rng(74).uniform(0.5, 2.0, (4,)).astype(np.float32)
    cases = [
        ("MSELoss", {"reduction": "sum"}, x, y), ("L1Loss", {}, x, y), ("SmoothL1Loss", {"beta": 0.5}, x, y),
        ("BCELoss", {"weight": w}, probs, probs[::-1].copy()),
        ("BCEWithLogitsLoss", {"pos_weight": w, "weight": w}, x, probs),
        ("NLLLoss", {"weight": w, "ignore_index": 1}, _log_probs((6, 4), np.float32, 75), t),
        ("CrossEntropyLoss", {"weight": w, "ignore_index": 3, "label_smoothing": 0.1, "reduction": "none"}, x, t),
        ("CrossEntropyLoss", {}, x, np.exp(_log_probs((6, 4), np.float32, 76))),
    ]
    for name, kwargs, a, b in cases:
        tt_kwargs = {k: tt.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        th_kwargs = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        module = getattr(tt.nn, name)(**tt_kwargs)
        reference = getattr(torch.nn, name)(**th_kwargs)
        assert list(module.state_dict()) == list(reference.state_dict()), name
        assert repr(module) == repr(reference)
        helper_test_grad([a, b], module, reference, grad_inputs=[True, b.dtype.kind == "f"])
    assert tt.nn.CrossEntropyLoss(weight=tt.ones(3)).double().weight.dtype == tt.float64


# ---------------------------------------------------------------------- errors


def test_loss_errors() -> None:
    x, t = tt.zeros(3, 4), tt.tensor([0, 1, 2])
    with pytest.raises(ValueError, match="^bad is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="bad")
    with pytest.raises(ValueError, match="^bad is not a valid value for reduction"):
        tt.nn.CrossEntropyLoss(reduction="bad")
    with pytest.raises(IndexError, match="^nll_loss: Target 4 is out of bounds"):
        F.nll_loss(x, tt.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="^cross_entropy: Target -1 is out of bounds"):
        F.cross_entropy(x, tt.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match=r"^nll_loss: Expected input batch_size \(3\) to match target batch_size"):
        F.nll_loss(x, tt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="^nll_loss: expected target of an integer dtype"):
        F.nll_loss(x, tt.zeros(3))
    with pytest.raises(RuntimeError, match="^nll_loss: weight tensor should be defined"):
        F.nll_loss(x, t, weight=tt.ones(3))
    with pytest.raises(RuntimeError, match="^cross_entropy: expected a probability target of the input's shape"):
        F.cross_entropy(x, tt.zeros(3, 3))
    with pytest.raises(RuntimeError, match="^cross_entropy: ignore_index is not supported for floating point"):
        F.cross_entropy(x, tt.zeros(3, 4), ignore_index=1)
    with pytest.raises(RuntimeError, match="^cross_entropy: label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, t, label_smoothing=1.5)
    with pytest.raises(ValueError, match="^cross_entropy: input tensor should be 1D or more"):
        F.cross_entropy(tt.tensor(1.0), tt.tensor(0))
    with pytest.raises(RuntimeError, match="^binary_cross_entropy: all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(tt.tensor([1.5]), tt.tensor([1.0]))
    with pytest.raises(ValueError, match="^binary_cross_entropy: Using a target size"):
        F.binary_cross_entropy(tt.tensor([0.5, 0.5]), tt.tensor([1.0]))
    with pytest.raises(ValueError, match="^binary_cross_entropy_with_logits: Using a target size"):
        F.binary_cross_entropy_with_logits(tt.zeros(2, 1), tt.zeros(2))
    with pytest.raises(RuntimeError, match="^smooth_l1_loss does not support negative values for beta"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(TypeError, match="^mse_loss: target must be a Tensor"):
        F.mse_loss(x, np.zeros((3, 4)))
    with pytest.raises(RuntimeError, match="^l1_loss: input must have a floating-point dtype"):
        F.l1_loss(t, t)


# ---------------------------------------------------------------------- any shape, any layout

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.helpers import LAYOUTS, apply_layout, base_shape, broadcast_shapes  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(0, 4), classes=st.integers(1, 4), extra=st.lists(st.integers(0, 3), max_size=2),
       layout=st.sampled_from(LAYOUTS), reduction=st.sampled_from(REDUCTIONS), smoothing=st.sampled_from([0.0, 0.25]),
       data=st.data())
def test_cross_entropy_any_shape_and_layout(batch, classes, extra, layout, reduction, smoothing, data) -> None:
    shape = (batch, classes) + tuple(extra)
    x = _normal(base_shape(shape, layout), np.float64, 80)
    target_shape = (batch,) + tuple(extra)
    count = int(np.prod(target_shape))
    t = np.array(data.draw(st.lists(st.sampled_from(list(range(classes)) + [-100]), min_size=count, max_size=count)),
                 dtype=np.int64).reshape(target_shape)
    kwargs = {"reduction": reduction, "label_smoothing": smoothing}
    helper_test_grad([x, t], lambda a, b: F.cross_entropy(apply_layout(a, layout, shape), b, **kwargs),
                     lambda a, b: TF.cross_entropy(apply_layout(a, layout, shape), b, **kwargs),
                     atol=1e-10, rtol=1e-9)


@settings(max_examples=30, deadline=None)
@given(shapes=broadcast_shapes(2), name=st.sampled_from(["mse_loss", "l1_loss", "smooth_l1_loss"]),
       reduction=st.sampled_from(REDUCTIONS))
def test_pointwise_losses_broadcast(shapes, name, reduction) -> None:
    _, (a_shape, b_shape) = shapes
    x, y = _normal(a_shape, np.float64, 81), _normal(b_shape, np.float64, 82)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        helper_test_grad([x, y], lambda a, b: getattr(F, name)(a, b, reduction=reduction),
                         lambda a, b: getattr(TF, name)(a, b, reduction=reduction), atol=1e-10, rtol=1e-9)
