"""Optimizers against torch.optim: same parameters, same gradients, every option combination,
compared after every step (parameters and the whole optimizer state); state dicts (their layout,
round trips, and loading each library's state dict into the other); parameter groups; errors."""

from __future__ import annotations

import io
import itertools
from typing import Any

import numpy as np
import pytest
import torch
from torch.optim.optimizer import required as torch_required

import t_tensor as tt
from t_tensor.optim.optimizer import required

SHAPES = [(2, 3), (4,), ()]
DTYPES = [(tt.float32, torch.float32, np.float32), (tt.float64, torch.float64, np.float64)]
TOLERANCE = {tt.float32: (1e-5, 1e-6), tt.float64: (1e-12, 1e-14)}  # rtol, atol


def _grid(**options: tuple) -> list[dict[str, Any]]:
    names = list(options)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*options.values())]


def _sgd_configs() -> list[dict[str, Any]]:
    grid = _grid(lr=(0.1,), momentum=(0, 0.9), dampening=(0, 0.3), nesterov=(False, True),
                 weight_decay=(0, 0.05), maximize=(False, True))
    return [c for c in grid if not c["nesterov"] or (c["momentum"] > 0 and c["dampening"] == 0)]


def _adam_configs() -> list[dict[str, Any]]:
    grid = _grid(lr=(0.01,), weight_decay=(0, 0.1), amsgrad=(False, True), maximize=(False, True))
    return grid + [{"lr": 0.01, "betas": (0.5, 0.8), "eps": 1e-2, "weight_decay": 0.1, "amsgrad": True}]


def _rmsprop_configs() -> list[dict[str, Any]]:
    grid = _grid(lr=(0.01,), alpha=(0.99, 0.5), weight_decay=(0, 0.1), momentum=(0, 0.5), centered=(False, True),
                 maximize=(False, True))
    return grid + [{"lr": 0.01, "eps": 1e-2, "momentum": 0.5, "centered": True}]


CASES = (
    [("SGD", c) for c in _sgd_configs()]
    + [("Adam", c) for c in _adam_configs()]
    + [("AdamW", c) for c in _adam_configs()]
    + [("RMSprop", c) for c in _rmsprop_configs()]
)


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, config = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in config.items() if k != "lr")


# ---------------------------------------------------------------------- conversions


def to_tt(obj: Any) -> Any:
    """A copy of a (nested) torch object with every tensor turned into a t_tensor tensor."""
    if isinstance(obj, torch.Tensor):
        return tt.tensor(obj.detach().numpy().copy())
    if isinstance(obj, dict):
        return {k: to_tt(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_tt(v) for v in obj)
    return obj


def to_torch(obj: Any) -> Any:
    if isinstance(obj, tt.Tensor):
        return torch.from_numpy(obj.detach().numpy().copy())
    if isinstance(obj, dict):
        return {k: to_torch(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_torch(v) for v in obj)
    return obj


def _pair_params(rng: np.random.Generator, shapes=SHAPES, np_dtype=np.float32):
    data = [rng.standard_normal(s).astype(np_dtype) for s in shapes]
    return ([tt.tensor(d, requires_grad=True) for d in data],
            [torch.tensor(d, requires_grad=True) for d in data])


def _set_grads(rng: np.random.Generator, ours, theirs, np_dtype, skip: int | None = None) -> None:
    for i, (p, q) in enumerate(zip(ours, theirs, strict=True)):
        if i == skip:
            p.grad, q.grad = None, None
            continue
        g = rng.standard_normal(p.shape).astype(np_dtype)
        p.grad, q.grad = tt.tensor(g), torch.tensor(g)


def _close(got: Any, want: Any, dtype, where: str) -> None:
    rtol, atol = TOLERANCE.get(dtype, TOLERANCE[tt.float32])
    assert isinstance(got, tt.Tensor), f"{where}: expected a Tensor, got {type(got).__name__}"
    assert got.shape == tuple(want.shape), f"{where}: shape {got.shape} vs {tuple(want.shape)}"
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), f"{where}: dtype {got.dtype} vs {want.dtype}"
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=rtol, atol=atol, err_msg=where)


def _compare_state(ours: tt.optim.Optimizer, theirs: torch.optim.Optimizer, dtype, where: str) -> None:
    got, want = ours.state_dict(), theirs.state_dict()
    assert got["param_groups"] == want["param_groups"], where
    assert sorted(got["state"]) == sorted(want["state"]), where
    for index, entry in want["state"].items():
        assert sorted(got["state"][index]) == sorted(entry), f"{where}: state {index}"
        for key, value in entry.items():
            _close(got["state"][index][key], value, dtype if key != "step" else tt.float32, f"{where}: {key}")


def _compare_params(ours, theirs, dtype, where: str) -> None:
    for i, (p, q) in enumerate(zip(ours, theirs, strict=True)):
        _close(p, q, dtype, f"{where}: param {i}")


# ---------------------------------------------------------------------- every option, step by step


@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_steps_match_torch(case, dtypes) -> None:
    name, config = case
    tt_dtype, _, np_dtype = dtypes
    rng = np.random.default_rng(0)
    ours, theirs = _pair_params(rng, np_dtype=np_dtype)
    opt = getattr(tt.optim, name)(ours, **config)
    ref = getattr(torch.optim, name)(theirs, **config)
    for step in range(5):
        _set_grads(rng, ours, theirs, np_dtype, skip=1 if step == 2 else None)  # one step without a grad
        assert opt.step() is None
        ref.step()
        _compare_params(ours, theirs, tt_dtype, f"step {step}")
        _compare_state(opt, ref, tt_dtype, f"step {step}")
        assert all(p.requires_grad and p.is_leaf and p.grad_fn is None for p in ours)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [7, 40000])  # 40000: the one-pass update splits over threads
def test_sgd_one_pass_update_gives_the_ops_bits(np_dtype, size, monkeypatch) -> None:
    """SGD's one C pass per parameter (tt_sgd_update) against the tensor ops it replaces, bit for
    bit, over three steps with every option; a transposed (non-dense) parameter takes the ops."""
    from t_tensor.optim import sgd

    rng = np.random.default_rng(size)
    for options in _sgd_configs() + [{"lr": 0.013, "momentum": 0.5, "dampening": 0.3, "weight_decay": 0.01}]:
        init = rng.standard_normal(size).astype(np_dtype)
        grads = [rng.standard_normal(size).astype(np_dtype) for _ in range(3)]
        results = []
        for fused in (True, False):
            if not fused:
                monkeypatch.setattr(sgd, "_fused_update", lambda *args: False)
            p = tt.tensor(init.copy(), requires_grad=True)
            opt = tt.optim.SGD([p], **options)
            for g in grads:
                p.grad = tt.tensor(g)
                opt.step()
            results.append((p.detach().numpy().copy(), [np.asarray(v).copy() for v in opt.state[p].values()]))
            monkeypatch.undo()
        assert np.array_equal(results[0][0], results[1][0]), options
        assert all(np.array_equal(a, b) for a, b in zip(results[0][1], results[1][1], strict=True)), options
    taken = []
    original = sgd._fused_update
    monkeypatch.setattr(sgd, "_fused_update", lambda *args: taken.append(original(*args)) or taken[-1])
    w = tt.tensor(rng.standard_normal((3, 4)).astype(np_dtype)).T.requires_grad_()
    w.grad = tt.ones((4, 3), dtype=w.dtype)
    tt.optim.SGD([w], lr=0.1, momentum=0.9).step()
    v = tt.tensor(rng.standard_normal((3, 4)).astype(np_dtype), requires_grad=True)
    v.grad = tt.ones((3, 4), dtype=v.dtype)
    tt.optim.SGD([v], lr=0.1, momentum=0.9).step()
    shared = rng.standard_normal(5).astype(np_dtype)
    q = tt.from_numpy(shared).requires_grad_()
    q.grad = tt.from_numpy(shared)  # another storage over the same bytes
    tt.optim.SGD([q], lr=0.5).step()
    assert taken == [False, True, False]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_defaults_match_torch(name: str) -> None:
    ours = getattr(tt.optim, name)([tt.zeros(1, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


def test_options_are_stored_as_torch_stores_them() -> None:
    ours = tt.optim.Adam([tt.zeros(1, requires_grad=True)], betas=[0.8, 0.9], eps=1, weight_decay=1)
    theirs = torch.optim.Adam([torch.zeros(1, requires_grad=True)], betas=[0.8, 0.9], eps=1, weight_decay=1)
    assert ours.state_dict() == theirs.state_dict()
    assert type(ours.param_groups[0]["betas"]) is tuple and type(ours.param_groups[0]["eps"]) is int  # as torch


def test_param_without_grad_gets_no_state() -> None:
    rng = np.random.default_rng(1)
    ours, theirs = _pair_params(rng)
    opt, ref = tt.optim.Adam(ours), torch.optim.Adam(theirs)
    _set_grads(rng, ours, theirs, np.float32, skip=0)
    opt.step()
    ref.step()
    assert sorted(opt.state_dict()["state"]) == sorted(ref.state_dict()["state"]) == [1, 2]
    _compare_params(ours, theirs, tt.float32, "after one step")


def test_training_with_backward_matches_torch() -> None:
    """A least-squares fit: gradients from t_tensor's autograd, updates by Adam, against torch."""
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    w0, b0 = rng.standard_normal((3, 1)), rng.standard_normal(1)
    w, b = tt.tensor(w0, requires_grad=True), tt.tensor(b0, requires_grad=True)
    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    opt = tt.optim.Adam([w, b], lr=0.05, amsgrad=True)
    ref = torch.optim.Adam([tw, tb], lr=0.05, amsgrad=True)
    tx, ty = tt.tensor(x), tt.tensor(y)
    rx, ry = torch.tensor(x), torch.tensor(y)
    for _ in range(10):
        opt.zero_grad()
        ref.zero_grad()
        loss = ((tx @ w + b - ty) ** 2).mean()
        loss.backward()
        ((rx @ tw + tb - ry) ** 2).mean().backward()
        opt.step()
        ref.step()
    _compare_params([w, b], [tw, tb], tt.float64, "after training")


def test_closure() -> None:
    w = tt.tensor([2.0], requires_grad=True)
    opt = tt.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with tt.no_grad():  # the closure still runs with grad enabled
        loss = opt.step(closure)
    assert loss.item() == 4.0
    assert w.tolist() == [1.0]


# ---------------------------------------------------------------------- parameter groups


def test_param_groups_with_their_own_options() -> None:
    rng = np.random.default_rng(3)
    ours, theirs = _pair_params(rng)
    opt = tt.optim.SGD([{"params": ours[:2]}, {"params": ours[2], "lr": 0.5, "nesterov": True}],
                       lr=0.1, momentum=0.9)
    ref = torch.optim.SGD([{"params": theirs[:2]}, {"params": theirs[2], "lr": 0.5, "nesterov": True}],
                          lr=0.1, momentum=0.9)
    for step in range(4):
        _set_grads(rng, ours, theirs, np.float32)
        opt.step()
        ref.step()
        _compare_params(ours, theirs, tt.float32, f"step {step}")
        _compare_state(opt, ref, tt.float32, f"step {step}")
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]


def test_add_param_group_between_steps() -> None:
    rng = np.random.default_rng(4)
    ours, theirs = _pair_params(rng)
    opt = tt.optim.RMSprop(ours[:1], lr=0.01, momentum=0.5)
    ref = torch.optim.RMSprop(theirs[:1], lr=0.01, momentum=0.5)
    for step in range(4):
        if step == 2:
            opt.add_param_group({"params": ours[1:], "alpha": 0.5, "centered": True})
            ref.add_param_group({"params": theirs[1:], "alpha": 0.5, "centered": True})
        _set_grads(rng, ours, theirs, np.float32)
        opt.step()
        ref.step()
        _compare_params(ours, theirs, tt.float32, f"step {step}")
        _compare_state(opt, ref, tt.float32, f"step {step}")


def test_the_given_group_dict_is_the_group() -> None:
    group = {"params": (tt.zeros(1, requires_grad=True),), "lr": 0.5}
    opt = tt.optim.SGD([tt.zeros(2, requires_grad=True)], lr=0.1)
    opt.add_param_group(group)
    assert opt.param_groups[1] is group and type(group["params"]) is list and group["momentum"] == 0
    bad = {"params": [tt.zeros(1, requires_grad=True)], "fused": True}
    with pytest.raises(ValueError):
        opt.add_param_group(bad)
    assert len(opt.param_groups) == 2 and "lr" not in bad  # a refused group is left as it was


def test_named_parameters() -> None:
    a, b = tt.zeros(2, requires_grad=True), tt.zeros(3, requires_grad=True)
    opt = tt.optim.SGD([("a", a), ("b", b)], lr=0.1)
    ref = torch.optim.SGD([("a", torch.zeros(2, requires_grad=True)), ("b", torch.zeros(3, requires_grad=True))],
                          lr=0.1)
    assert opt.param_groups[0]["params"][0] is a
    assert opt.state_dict()["param_groups"] == ref.state_dict()["param_groups"]
    assert repr(opt) == repr(ref)


def test_zero_grad() -> None:
    p = tt.ones(2, requires_grad=True)
    opt = tt.optim.SGD([p], lr=0.1)
    p.grad = tt.tensor([1.0, 2.0])
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0] and not p.grad.requires_grad
    grad = p.grad
    opt.zero_grad()
    assert p.grad is None
    assert grad.tolist() == [0.0, 0.0]
    opt.zero_grad()  # nothing to do
    # a gradient with history (create_graph) is detached, then zeroed
    q = tt.tensor([3.0], requires_grad=True)
    (q * q).sum().backward(create_graph=True)
    assert q.grad.grad_fn is not None
    tt.optim.SGD([q]).zero_grad(set_to_none=False)
    assert q.grad.grad_fn is None and q.grad.tolist() == [0.0]


# ---------------------------------------------------------------------- state dicts


@pytest.mark.parametrize("name,config", [("SGD", {"momentum": 0.9, "nesterov": True}), ("Adam", {"amsgrad": True}),
                                         ("AdamW", {"weight_decay": 0.1}), ("RMSprop", {"centered": True,
                                                                                          "momentum": 0.3})])
def test_state_dict_round_trip_and_interchange(name: str, config: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    ours, theirs = _pair_params(rng)
    opt = getattr(tt.optim, name)([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.05}], **config)
    ref = getattr(torch.optim, name)([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.05}], **config)
    for _ in range(3):
        _set_grads(rng, ours, theirs, np.float32)
        opt.step()
        ref.step()

    # our state dict, through tt.save / tt.load, into a fresh optimizer over copies of the parameters
    buffer = io.BytesIO()
    tt.save(opt.state_dict(), buffer)
    buffer.seek(0)
    copies = [p.detach().clone().requires_grad_() for p in ours]
    resumed = getattr(tt.optim, name)([{"params": copies[:1]}, {"params": copies[1:]}])
    resumed.load_state_dict(tt.load(buffer))
    assert resumed.param_groups[1]["lr"] == 0.05 and resumed.param_groups[1]["params"][0] is copies[1]
    # torch's state dict loads into ours, and ours into torch's
    from_torch = [p.detach().clone().requires_grad_() for p in ours]
    loaded_from_torch = getattr(tt.optim, name)([{"params": from_torch[:1]}, {"params": from_torch[1:]}])
    loaded_from_torch.load_state_dict(to_tt(ref.state_dict()))
    to_ref = [q.detach().clone().requires_grad_() for q in theirs]
    ref_loaded_from_ours = getattr(torch.optim, name)([{"params": to_ref[:1]}, {"params": to_ref[1:]}])
    ref_loaded_from_ours.load_state_dict(to_torch(opt.state_dict()))

    runs = [(opt, ours), (resumed, copies), (loaded_from_torch, from_torch)]
    refs = [(ref, theirs), (ref_loaded_from_ours, to_ref)]
    for step in range(3):
        g = [rng.standard_normal(p.shape).astype(np.float32) for p in ours]
        for optimizer, params in runs + refs:
            convert = tt.tensor if isinstance(optimizer, tt.optim.Optimizer) else torch.tensor
            for p, gi in zip(params, g, strict=True):
                p.grad = convert(gi)
            optimizer.step()
        for optimizer, params in runs:
            for reference, ref_params in refs:
                _compare_params(params, ref_params, tt.float32, f"{name} step {step}")
                _compare_state(optimizer, reference, tt.float32, f"{name} step {step}")


def test_load_state_dict_casts_to_the_parameters_dtype_and_copies() -> None:
    p = tt.zeros(2, dtype=tt.float64, requires_grad=True)
    opt = tt.optim.Adam([p])
    state = {"state": {0: {"step": tt.tensor(2.0), "exp_avg": tt.ones(2), "exp_avg_sq": tt.ones(2)}},
             "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=0.5)]}
    opt.load_state_dict(state)
    loaded = opt.state[p]
    assert loaded["exp_avg"].dtype is tt.float64 and loaded["step"].dtype is tt.float32
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is p
    p.grad = tt.ones(2, dtype=tt.float64)
    opt.step()
    assert state["state"][0]["step"].item() == 2.0  # the loaded dict is not modified by later steps
    assert loaded["step"].item() == 3.0


def test_state_dict_refers_to_the_live_state_as_torch() -> None:
    p = tt.zeros(2, requires_grad=True)
    opt = tt.optim.SGD([p], momentum=0.9)
    p.grad = tt.ones(2)
    opt.step()
    assert opt.state_dict()["state"][0]["momentum_buffer"] is opt.state[p]["momentum_buffer"]


# ---------------------------------------------------------------------- errors


def _both_raise(make_ours, make_theirs, kind: type[Exception], match: str) -> None:
    with pytest.raises(kind):
        make_theirs()
    with pytest.raises(kind, match=match):
        make_ours()


def test_bad_params() -> None:
    p, q = tt.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    _both_raise(lambda: tt.optim.SGD([]), lambda: torch.optim.SGD([]), ValueError, "^SGD: .*empty parameter list")
    _both_raise(lambda: tt.optim.SGD(p), lambda: torch.optim.SGD(q), TypeError, "^SGD: .*iterable of Tensors")
    _both_raise(lambda: tt.optim.SGD([p * 2]), lambda: torch.optim.SGD([q * 2]), ValueError, "non-leaf")
    _both_raise(lambda: tt.optim.SGD([1.0]), lambda: torch.optim.SGD([1.0]), TypeError, "only optimize Tensors")
    _both_raise(lambda: tt.optim.SGD([{"params": {p}}]), lambda: torch.optim.SGD([{"params": {q}}]), TypeError,
                "ordered collections")
    _both_raise(lambda: tt.optim.SGD([{"params": [p]}, {"params": [p]}]),
                lambda: torch.optim.SGD([{"params": [q]}, {"params": [q]}]), ValueError, "more than one")
    _both_raise(lambda: tt.optim.Optimizer([p], {"lr": required}),
                lambda: torch.optim.Optimizer([q], {"lr": torch_required}),
                ValueError, "^Optimizer.add_param_group: parameter group didn't specify a value of required "
                "optimization parameter lr")
    assert tt.optim.Optimizer([{"params": [p], "lr": 0.5}], {"lr": required}).param_groups[0]["lr"] == 0.5
    with pytest.raises(ValueError, match="twice"):
        tt.optim.SGD([p, p])
    with pytest.raises(TypeError, match="param_group must be a dict"):
        tt.optim.SGD([p]).add_param_group([p])
    with pytest.raises(ValueError, match="with/without names"):
        tt.optim.SGD([p]).add_param_group({"params": [("b", tt.zeros(1, requires_grad=True))]})
    with pytest.raises(ValueError, match="Some param names are missing"):
        tt.optim.SGD([("a", p), tt.zeros(1, requires_grad=True)])


@pytest.mark.parametrize("name,config", [
    ("SGD", {"lr": -1.0}), ("SGD", {"momentum": -0.5}), ("SGD", {"weight_decay": -1}), ("SGD", {"nesterov": True}),
    ("SGD", {"momentum": 0.9, "dampening": 0.1, "nesterov": True}), ("Adam", {"lr": -1e-3}), ("Adam", {"eps": -1.0}),
    ("Adam", {"betas": (1.0, 0.9)}), ("Adam", {"betas": (0.9, -0.1)}), ("AdamW", {"weight_decay": -0.1}),
    ("RMSprop", {"alpha": -0.5}), ("RMSprop", {"momentum": -1.0}), ("RMSprop", {"eps": -1.0}),
])
def test_bad_hyperparameters(name: str, config: dict[str, Any]) -> None:
    _both_raise(lambda: getattr(tt.optim, name)([tt.zeros(1, requires_grad=True)], **config),
                lambda: getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **config),
                ValueError, f"^{name}: ")


@pytest.mark.parametrize("option", ["fused", "differentiable"])
def test_unsupported_implementations_are_refused(option: str) -> None:
    with pytest.raises(ValueError, match=f"^Adam: {option}=True is not supported"):
        tt.optim.Adam([tt.zeros(1, requires_grad=True)], **{option: True})
    opt = tt.optim.Adam([tt.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match=f"{option}=True is not supported"):
        opt.add_param_group({"params": [tt.zeros(1, requires_grad=True)], option: True})


def test_bad_state_dicts() -> None:
    a, b = tt.zeros(1, requires_grad=True), tt.zeros(2, requires_grad=True)
    two_groups = tt.optim.SGD([{"params": [a]}, {"params": [b]}]).state_dict()
    opt = tt.optim.SGD([a, b])
    with pytest.raises(ValueError, match="^SGD.load_state_dict: .*different number of parameter groups"):
        opt.load_state_dict(two_groups)
    with pytest.raises(ValueError, match="doesn't match the size"):
        tt.optim.SGD([a]).load_state_dict(opt.state_dict())
    with pytest.raises(ValueError, match="expected a dict with 'state' and 'param_groups'"):
        opt.load_state_dict({"state": {}})
