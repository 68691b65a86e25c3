"""Conv, pooling, batch/group norm and attention modules against torch.nn with the same weights:
outputs, input gradients and parameter gradients (``check_module``), repr and state_dict keys."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import t_tensor as tt
from tests.nn.test_layers import _values, check_module


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [
    {"padding": 1}, {"stride": 2, "bias": False}, {"padding": "same", "dilation": 2}, {"groups": 2, "padding": 1},
    {"padding": 1, "padding_mode": "reflect"}, {"padding": 2, "padding_mode": "circular"},
])
def test_conv2d_module(kwargs: dict, dtype: type) -> None:
    torch.manual_seed(0)
    check_module(tt.nn.Conv2d(4, 6, 3, **kwargs), torch.nn.Conv2d(4, 6, 3, **kwargs), _values((2, 4, 7, 6), dtype),
                 dtype=dtype)
    assert repr(tt.nn.Conv2d(4, 6, 3, **kwargs)) == repr(torch.nn.Conv2d(4, 6, 3, **kwargs))


@pytest.mark.parametrize("kwargs", [{"padding": 1}, {"stride": 2, "dilation": 2}, {"groups": 3, "bias": False}])
def test_conv1d_module(kwargs: dict) -> None:
    torch.manual_seed(0)
    check_module(tt.nn.Conv1d(3, 6, 3, **kwargs), torch.nn.Conv1d(3, 6, 3, **kwargs), _values((2, 3, 9), np.float32))
    assert repr(tt.nn.Conv1d(3, 6, 3, **kwargs)) == repr(torch.nn.Conv1d(3, 6, 3, **kwargs))


@pytest.mark.parametrize("name, args", [
    ("MaxPool2d", (2,)), ("MaxPool2d", (3, 2, 1)), ("AvgPool2d", (2,)), ("AvgPool2d", (3, 2, 1)),
    ("AdaptiveAvgPool2d", ((2, 3),)), ("AdaptiveAvgPool2d", (1,)), ("AdaptiveMaxPool2d", (2,)),
    ("MaxPool1d", (2,)), ("AvgPool1d", (3, 1, 1)), ("AdaptiveAvgPool1d", (3,)),
])
def test_pooling_modules(name: str, args: tuple) -> None:
    shape = (2, 3, 7, 6) if name.endswith("2d") else (2, 3, 9)
    check_module(getattr(tt.nn, name)(*args), getattr(torch.nn, name)(*args), _values(shape, np.float64),
                 dtype=np.float64)
    assert repr(getattr(tt.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (8, 4, 5)),
                                         ("BatchNorm2d", (6, 4, 3, 5))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_train_then_eval(name: str, shape: tuple, momentum: float | None) -> None:
    ours, ref = getattr(tt.nn, name)(4, momentum=momentum), getattr(torch.nn, name)(4, momentum=momentum)
    ref.weight.data.uniform_(0.5, 1.5)
    ref.bias.data.uniform_(-0.5, 0.5)
    for step in range(3):  # training: batch statistics, running statistics updated
        check_module(ours, ref, _values(shape, np.float64, seed=step), dtype=np.float64)
        for key, value in ref.state_dict().items():
            np.testing.assert_allclose(np.asarray(ours.state_dict()[key]), value.numpy(), rtol=1e-10, err_msg=key)
        ours.zero_grad()
        ref.zero_grad()
    ours.eval()
    ref.eval()
    check_module(ours, ref, _values(shape, np.float64, seed=9), dtype=np.float64)
    assert repr(ours) == repr(ref)


def test_groupnorm_module() -> None:
    ours, ref = tt.nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)
    ref.weight.data.uniform_(0.5, 1.5)
    check_module(ours, ref, _values((3, 4, 5, 2), np.float64), dtype=np.float64)
    assert repr(ours) == repr(ref)


class _TorchMHA(torch.nn.Module):
    """torch's MultiheadAttention with the call shape of a single-output module."""

    def __init__(self, inner: torch.nn.MultiheadAttention, **call: object) -> None:
        super().__init__()
        self.inner, self.call = inner, call

    def forward(self, q, k, v):
        return self.inner(q, k, v, **self.call)[0]


class _OurMHA(tt.nn.Module):
    def __init__(self, inner: tt.nn.MultiheadAttention, **call: object) -> None:
        super().__init__()
        self.inner, self.call = inner, call

    def forward(self, q, k, v):
        return self.inner(q, k, v, **self.call)[0]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("call", ["plain", "causal", "float_mask", "padding"])
def test_multihead_attention_matches_torch(batch_first: bool, call: str) -> None:
    torch.manual_seed(0)
    length, batch, embed, heads = 5, 3, 8, 2
    kwargs: dict = {}
    if call == "causal":
        kwargs = {"attn_mask": "causal"}
    mask = np.triu(np.ones((length, length), dtype=bool), 1)
    if call == "float_mask":
        float_mask = np.random.default_rng(3).standard_normal((length, length))
    padding = np.zeros((batch, length), dtype=bool)
    padding[:, -1] = True

    def make_call(lib):
        if call == "causal":
            return {"attn_mask": lib.tensor(mask)}
        if call == "float_mask":
            return {"attn_mask": lib.tensor(float_mask)}
        if call == "padding":
            return {"key_padding_mask": lib.tensor(padding)}
        return {}

    del kwargs
    ref = _TorchMHA(torch.nn.MultiheadAttention(embed, heads, batch_first=batch_first), **make_call(torch))
    ours = _OurMHA(tt.nn.MultiheadAttention(embed, heads, batch_first=batch_first), **make_call(tt))
    shape = (batch, length, embed) if batch_first else (length, batch, embed)
    q, k, v = (_values(shape, np.float64, seed=s) for s in (1, 2, 3))
    check_module(ours, ref, q, k, v, dtype=np.float64)


def test_multihead_attention_weights_and_state_dict() -> None:
    ours, ref = tt.nn.MultiheadAttention(4, 2), torch.nn.MultiheadAttention(4, 2)
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    x = _values((3, 2, 4), np.float32)
    out, weights = ours(tt.tensor(x), tt.tensor(x), tt.tensor(x))
    out_t, weights_t = ref(torch.tensor(x), torch.tensor(x), torch.tensor(x))
    np.testing.assert_allclose(weights.detach().numpy(), weights_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    _, per_head = ours(tt.tensor(x), tt.tensor(x), tt.tensor(x), average_attn_weights=False)
    assert per_head.shape == (2, 2, 3, 3)


def test_scaled_dot_product_attention_matches_torch() -> None:
    from tests.helpers import helper_test_grad

    q, k, v = (_values((2, 3, 4, 5), np.float64, seed=s) for s in (1, 2, 3))
    for kwargs in ({}, {"is_causal": True}, {"scale": 0.3}):
        helper_test_grad([q, k, v], lambda a, b, c, kw=kwargs: (tt if isinstance(a, tt.Tensor) else torch)
                         .nn.functional.scaled_dot_product_attention(a, b, c, **kw))
    # torch's fused CPU kernel has no double backward; check ours against finite differences
    small = [tt.tensor(_values((1, 2, 3), np.float64, seed=s), requires_grad=True) for s in (4, 5, 6)]
    assert tt.autograd.gradgradcheck(lambda a, b, c: tt.nn.functional.scaled_dot_product_attention(a, b, c).sum(),
                                     small)
