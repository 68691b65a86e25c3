"""tt.compile / tt.jit.trace: traced graphs of real models give eager's values on new inputs;
their memory plans are valid; a function the tracer cannot record is refused."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import t_tensor as tt
from t_tensor.graph.trace import TraceError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def _example_module():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class EncoderBlock(tt.nn.Module):
    def __init__(self, embed: int = 16, heads: int = 4) -> None:
        super().__init__()
        self.attention = tt.nn.MultiheadAttention(embed, heads, batch_first=True)
        self.norm1, self.norm2 = tt.nn.LayerNorm(embed), tt.nn.LayerNorm(embed)
        self.ffn = tt.nn.Sequential(tt.nn.Linear(embed, 32), tt.nn.GELU(), tt.nn.Linear(32, embed))

    def forward(self, x):
        x = self.norm1(x + self.attention(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.ffn(x))


def _models():
    digits = _example_module()
    return {
        "mlp": (digits.MLP(), (4, 1, 8, 8)),
        "cnn": (digits.SmallCNN(), (4, 1, 8, 8)),
        "encoder": (EncoderBlock(), (2, 5, 16)),
    }


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder"])
def test_compiled_model_matches_eager_on_new_inputs(name: str) -> None:
    tt.manual_seed(0)
    model, shape = _models()[name]
    model.eval()
    compiled = tt.compile(model, (tt.randn(*shape),))
    for seed in (1, 2):
        tt.manual_seed(seed)
        x = tt.randn(*shape)
        with tt.no_grad():
            want = model(x)
        np.testing.assert_allclose(compiled(x).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    plan = compiled.memory_plan()
    plan.check()
    assert plan.lower_bound <= plan.arena_bytes <= plan.naive_bytes
    assert "tt." in str(compiled.graph) and compiled.profile(tt.randn(*shape)).records


def test_parameters_become_initializers_and_tuples_come_back() -> None:
    layer = tt.nn.Linear(3, 2)
    traced = tt.jit.trace(lambda x: (layer(x), x.sum()), tt.ones(4, 3))
    assert len(traced.graph.initializers) >= 2   # weight and bias
    out, total = traced(tt.ones(4, 3) * 2)
    np.testing.assert_allclose(out.numpy(), layer(tt.ones(4, 3) * 2).detach().numpy(), rtol=1e-6)
    assert total.item() == 24.0


def test_value_dependent_code_is_refused() -> None:
    def pick_largest(x):
        return x.reshape(-1)[int(x.argmax())] * 2.0  # the argmax is frozen by the trace

    with pytest.raises(TraceError, match="differs from the function"):
        tt.compile(pick_largest, (tt.arange(10.0),))


def test_outputs_must_be_tensors() -> None:
    with pytest.raises(TraceError, match="not a tensor"):
        tt.compile(lambda x: 3, (tt.ones(2),))


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder"])
def test_onnx_names_keep_the_values(name: str) -> None:
    from t_tensor.graph.onnx_names import to_onnx_ops

    tt.manual_seed(0)
    model, shape = _models()[name]
    model.eval()
    compiled = tt.compile(model, (tt.randn(*shape),))
    renamed = to_onnx_ops(compiled.graph)
    kept = [n.op_type for n in renamed.nodes if n.op_type.startswith("tt.")]
    assert len(kept) < len(renamed.nodes) / 2, kept   # most nodes have an ONNX name now
    renamed.infer_shapes()
    x = tt.randn(*shape)
    with tt.no_grad():
        np.testing.assert_allclose(renamed.run(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_views_replay_on_inputs_with_another_offset_or_layout() -> None:
    compiled = tt.compile(lambda x: x.reshape(2, 3).T.exp(), (tt.ones(6),))
    for x in (tt.arange(12.0)[6:], tt.arange(12.0)[::2], tt.arange(6.0)):
        np.testing.assert_allclose(compiled(x).numpy(), x.reshape(2, 3).T.exp().numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder"])
@pytest.mark.parametrize("arena", [False, True])
def test_optimized_compilation_keeps_the_values(name: str, arena: bool) -> None:
    tt.manual_seed(0)
    model, shape = _models()[name]
    model.eval()
    plain = tt.compile(model, (tt.randn(*shape),))
    optimized = tt.compile(model, (tt.randn(*shape),), optimize=True, arena=arena)
    assert len(optimized.graph.nodes) < len(plain.graph.nodes)
    x = tt.randn(*shape)
    with tt.no_grad():
        np.testing.assert_allclose(optimized(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 1.5])
@pytest.mark.parametrize("optimize", [False, True])
def test_compiled_pow_gives_eager_bits(exponent, optimize) -> None:
    """Eager ``x ** n`` runs square/sqrt/rsqrt/reciprocal for these n (as PyTorch does); a compiled
    graph keeps that node as it is instead of an ONNX Pow, so it gives the same bits, signed zeros,
    infinities and NaN included."""
    rng = np.random.default_rng(3)
    x = tt.tensor(np.concatenate([[-0.0, 0.0, -np.inf, np.inf, 4097.0], rng.standard_normal(4096) * 20]).astype(
        np.float32))
    compiled = tt.compile(lambda t: t ** exponent, (tt.ones(x.shape[0]),), arena=True, optimize=optimize)
    got, want = compiled(x).numpy(), (x ** exponent).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    number = ~np.isnan(want)
    np.testing.assert_array_equal(got[number].view(np.uint32), want[number].view(np.uint32))


@pytest.mark.parametrize("affine", [{}, {"elementwise_affine": False}, {"bias": False}])
@pytest.mark.parametrize("optimize", [False, True])
@pytest.mark.parametrize("arena", [False, True])
def test_compiled_layer_norm_gives_eager_bits(affine, optimize, arena) -> None:
    """A traced layer_norm stays one tt.LayerNorm node, run by the same kernel as eager code."""
    tt.manual_seed(2)
    model = tt.nn.Sequential(tt.nn.Linear(64, 64), tt.nn.LayerNorm(64, **affine))
    x = tt.randn(32, 64) * 3 + 2
    compiled = tt.compile(model, (x,), arena=arena, optimize=optimize)
    with tt.no_grad():
        np.testing.assert_array_equal(compiled(x).numpy().view(np.uint32), model(x).numpy().view(np.uint32))
