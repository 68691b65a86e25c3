"""Learning-rate schedulers against torch.optim.lr_scheduler: the same learning rates (exactly, the
formulas are evaluated in the same order) over many epochs, for two parameter groups; closed forms
(``step(epoch)``), state dicts, resuming, and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import t_tensor as tt

LRS = (0.1, 0.03)
EPOCHS = 60


class Scale:
    """A callable object: LambdaLR saves its attributes in the state dict."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __call__(self, epoch: int) -> float:
        return self.factor**epoch


CASES: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("StepLR", lambda: {"step_size": 3, "gamma": 0.5}),
    ("StepLR", lambda: {"step_size": 1, "gamma": 0.9}),
    ("MultiStepLR", lambda: {"milestones": [2, 5, 5, 9, 30], "gamma": 0.3}),
    ("ExponentialLR", lambda: {"gamma": 0.95}),
    ("ConstantLR", lambda: {"factor": 0.3, "total_iters": 4}),
    ("ConstantLR", lambda: {}),
    ("LinearLR", lambda: {"start_factor": 0.1, "end_factor": 0.9, "total_iters": 12}),
    ("LinearLR", lambda: {}),
    ("CosineAnnealingLR", lambda: {"T_max": 10, "eta_min": 0.001}),
    ("CosineAnnealingLR", lambda: {"T_max": 7}),
    ("LambdaLR", lambda: {"lr_lambda": lambda epoch: 1 / (1 + epoch) ** 0.5}),
    ("LambdaLR", lambda: {"lr_lambda": [Scale(0.9), lambda epoch: min(1.0, (epoch + 1) / 10)]}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


def _optimizers():
    ours = tt.optim.SGD([{"params": [tt.zeros(2, requires_grad=True)], "lr": LRS[0]},
                         {"params": [tt.zeros(1, requires_grad=True)], "lr": LRS[1]}], momentum=0.9)
    theirs = torch.optim.SGD([{"params": [torch.zeros(2, requires_grad=True)], "lr": LRS[0]},
                              {"params": [torch.zeros(1, requires_grad=True)], "lr": LRS[1]}], momentum=0.9)
    return ours, theirs


def _pair(name: str, config: Callable[[], dict[str, Any]], **extra: Any):
    ours, theirs = _optimizers()
    return (getattr(tt.optim.lr_scheduler, name)(ours, **config(), **extra),
            getattr(torch.optim.lr_scheduler, name)(theirs, **config(), **extra))


def _same_lrs(sched, ref, where: str) -> None:
    assert sched.get_last_lr() == ref.get_last_lr(), where
    assert [g["lr"] for g in sched.optimizer.param_groups] == [g["lr"] for g in ref.optimizer.param_groups], where
    assert sched.last_epoch == ref.last_epoch, where


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_schedule_matches_torch(case) -> None:
    sched, ref = _pair(*case)
    assert sched.base_lrs == ref.base_lrs == list(LRS)
    _same_lrs(sched, ref, "after construction")
    for epoch in range(EPOCHS):
        sched.optimizer.step()
        ref.optimizer.step()
        sched.step()
        ref.step()
        _same_lrs(sched, ref, f"epoch {epoch}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_explicit_epoch_matches_torch(case) -> None:
    sched, ref = _pair(*case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates step(epoch)
        for epoch in (3, 4, 10, 7, 25, 0, 59):
            sched.step(epoch)
            ref.step(epoch)
            _same_lrs(sched, ref, f"epoch {epoch}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_dict_and_resume(case) -> None:
    sched, ref = _pair(*case)
    for _ in range(7):
        for s in (sched, ref):
            s.optimizer.step()
            s.step()
    state, ref_state = sched.state_dict(), ref.state_dict()
    assert "optimizer" not in state
    assert set(state) <= set(ref_state)
    for key, value in state.items():
        if key != "lr_lambdas":
            assert value == ref_state[key], key
    # a new optimizer and scheduler restored from the state dicts, in each library, carry on alike
    # (for ConstantLR and LinearLR, in both, the new scheduler's first step rescales the loaded lr)
    optimizer, ref_optimizer = _optimizers()
    optimizer.load_state_dict(sched.optimizer.state_dict())
    ref_optimizer.load_state_dict(ref.optimizer.state_dict())
    resumed = getattr(tt.optim.lr_scheduler, case[0])(optimizer, **case[1]())
    ref_resumed = getattr(torch.optim.lr_scheduler, case[0])(ref_optimizer, **case[1]())
    resumed.load_state_dict(state)
    ref_resumed.load_state_dict(ref_state)
    _same_lrs(resumed, ref_resumed, "resumed")
    for epoch in range(20):
        for s in (sched, ref, resumed, ref_resumed):
            s.optimizer.step()
            s.step()
        _same_lrs(sched, ref, f"epoch {epoch}")
        _same_lrs(resumed, ref_resumed, f"resumed, epoch {epoch}")
    if case[0] not in ("ConstantLR", "LinearLR"):
        _same_lrs(resumed, ref, "resumed")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_last_epoch_resumes_as_torch(case) -> None:
    ours, theirs = _optimizers()
    for group in ours.param_groups + theirs.param_groups:
        group["initial_lr"] = group["lr"] * 2
    sched = getattr(tt.optim.lr_scheduler, case[0])(ours, **case[1](), last_epoch=4)
    ref = getattr(torch.optim.lr_scheduler, case[0])(theirs, **case[1](), last_epoch=4)
    assert sched.base_lrs == ref.base_lrs
    for epoch in range(15):
        _same_lrs(sched, ref, f"epoch {epoch}")
        for s in (sched, ref):
            s.optimizer.step()
            s.step()


def test_lambda_state_dict_keeps_callable_objects() -> None:
    ours, _ = _optimizers()
    sched = tt.optim.lr_scheduler.LambdaLR(ours, [Scale(0.5), lambda epoch: 1.0])
    assert sched.state_dict()["lr_lambdas"] == [{"factor": 0.5}, None]
    other, _ = _optimizers()
    restored = tt.optim.lr_scheduler.LambdaLR(other, [Scale(0.1), lambda epoch: 2.0])
    restored.load_state_dict(sched.state_dict())
    assert restored.lr_lambdas[0].factor == 0.5
    assert restored.lr_lambdas[1](3) == 2.0  # functions are not saved: the new one stays


def test_optimizer_uses_the_scheduled_lr() -> None:
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(3).astype(np.float32)
    w, tw = tt.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    opt, ref = tt.optim.SGD([w], lr=0.5), torch.optim.SGD([tw], lr=0.5)
    sched = tt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
    ref_sched = torch.optim.lr_scheduler.CosineAnnealingLR(ref, T_max=5)
    for _ in range(8):
        g = rng.standard_normal(3).astype(np.float32)
        w.grad, tw.grad = tt.tensor(g), torch.tensor(g)
        opt.step()
        ref.step()
        sched.step()
        ref_sched.step()
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_warns_when_stepped_before_the_optimizer() -> None:
    ours, theirs = _optimizers()
    sched = tt.optim.lr_scheduler.StepLR(ours, 2)
    ref = torch.optim.lr_scheduler.StepLR(theirs, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        ref.step()
    with pytest.warns(UserWarning, match="^Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()  # only the first step is checked
        ours, _ = _optimizers()
        sched = tt.optim.lr_scheduler.StepLR(ours, 2)
        ours.step()
        sched.step()
        assert ours.step.__name__ == "step" and "closure" in (ours.step.__doc__ or "")


def test_errors() -> None:
    ours, theirs = _optimizers()
    with pytest.raises(TypeError):
        torch.optim.lr_scheduler.StepLR(object(), 2)
    with pytest.raises(TypeError, match="^StepLR: object is not an Optimizer"):
        tt.optim.lr_scheduler.StepLR(object(), 2)
    with pytest.raises(KeyError):
        torch.optim.lr_scheduler.StepLR(theirs, 2, last_epoch=3)
    with pytest.raises(KeyError, match="initial_lr"):
        tt.optim.lr_scheduler.StepLR(ours, 2, last_epoch=3)
    with pytest.raises(ValueError):
        torch.optim.lr_scheduler.LambdaLR(theirs, [lambda e: 1.0])
    with pytest.raises(ValueError, match="^LambdaLR: Expected 2 lr_lambdas, but got 1"):
        tt.optim.lr_scheduler.LambdaLR(ours, [lambda e: 1.0])
    with pytest.raises(TypeError, match="^LambdaLR: lr_lambda should be a function"):
        tt.optim.lr_scheduler.LambdaLR(ours, 0.5)
    with pytest.raises(ValueError, match="^StepLR: step_size must be a positive int"):
        tt.optim.lr_scheduler.StepLR(ours, 0)
    with pytest.raises(ValueError, match="^CosineAnnealingLR: T_max must be a positive int"):
        tt.optim.lr_scheduler.CosineAnnealingLR(ours, 0)
    for kwargs in ({"factor": 1.5}, {"factor": -0.1}):
        with pytest.raises(ValueError):
            torch.optim.lr_scheduler.ConstantLR(theirs, **kwargs)
        with pytest.raises(ValueError, match="^ConstantLR: "):
            tt.optim.lr_scheduler.ConstantLR(ours, **kwargs)
    for kwargs in ({"start_factor": 0}, {"start_factor": 1.5}, {"end_factor": -1.0}):
        with pytest.raises(ValueError):
            torch.optim.lr_scheduler.LinearLR(theirs, **kwargs)
        with pytest.raises(ValueError, match="^LinearLR: "):
            tt.optim.lr_scheduler.LinearLR(ours, **kwargs)
    with pytest.raises(NotImplementedError):
        tt.optim.lr_scheduler.LRScheduler(ours)
