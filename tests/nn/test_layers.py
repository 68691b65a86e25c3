"""Layers against torch.nn with the same weights (copied through load_state_dict): outputs, input
gradients and parameter gradients; the functional forms through helpers.helper_test_grad (with
second-order gradients in float64); init and dropout by their statistics."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import t_tensor as tt
import t_tensor.nn.functional as F
from tests.helpers import helper_test_grad

TOL = {np.float32: (1e-5, 1e-4), np.float64: (1e-10, 1e-9)}


def _values(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def check_module(module: tt.nn.Module, reference: torch.nn.Module, *inputs: np.ndarray, dtype: type = np.float32,
                 seed: int = 0) -> None:
    """Load ``reference``'s weights into ``module``, run both on ``inputs`` (float ones require
    grad), backpropagate the same random gradient and compare outputs and every gradient."""
    if dtype == np.float64:
        module.double()
        reference.double()
    module.load_state_dict({k: v.detach().numpy() for k, v in reference.state_dict().items()})
    atol, rtol = TOL[dtype]
    tt_in = [tt.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in inputs]
    th_in = [torch.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in inputs]
    got, want = module(*tt_in), reference(*th_in)
    assert got.shape == tuple(want.shape) and got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=atol, rtol=rtol)
    seed_grad = np.random.default_rng(seed + 1).standard_normal(tuple(want.shape)).astype(dtype)
    got.backward(tt.tensor(seed_grad))
    want.backward(torch.tensor(seed_grad))
    for i, (a, b) in enumerate(zip(tt_in, th_in, strict=True)):
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=atol, rtol=rtol, err_msg=f"input {i}")
    reference_params = dict(reference.named_parameters())
    for name, p in module.named_parameters():
        want_grad = reference_params[name].grad
        if want_grad is None:
            assert p.grad is None or not np.any(p.grad.numpy()), name
        else:
            np.testing.assert_allclose(p.grad.numpy(), want_grad.numpy(), atol=atol, rtol=rtol, err_msg=name)


# ---------------------------------------------------------------------- Linear


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3), (0, 3)])
def test_linear_matches_torch(shape: tuple[int, ...], bias: bool, dtype: type) -> None:
    check_module(tt.nn.Linear(3, 2, bias=bias), torch.nn.Linear(3, 2, bias=bias), _values(shape, dtype), dtype=dtype)


def test_linear_functional_second_order() -> None:
    x, w, b = _values((4, 3), np.float64, 1), _values((2, 3), np.float64, 2), _values((2,), np.float64, 3)
    helper_test_grad([x, w, b], F.linear, torch.nn.functional.linear, atol=1e-10, rtol=1e-9, create_graph=True)
    helper_test_grad([x, w], F.linear, torch.nn.functional.linear, atol=1e-10, rtol=1e-9)
    helper_test_grad([x, w[0]], F.linear, torch.nn.functional.linear, atol=1e-10, rtol=1e-9)


def test_linear_default_init_statistics() -> None:
    tt.manual_seed(0)
    layer = tt.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound and abs(w.mean()) < 0.01 * bound
    assert np.abs(b).max() > 0.9 * bound
    assert layer.weight.dtype == tt.float32 and tt.nn.Linear(2, 2, dtype=tt.float64).bias.dtype == tt.float64
    assert tt.nn.Linear(2, 2, bias=False).bias is None
    empty = tt.nn.Linear(0, 3)
    assert empty.weight.shape == (3, 0) and empty.bias.tolist() == [0.0, 0.0, 0.0]
    tt.manual_seed(5)
    first = tt.nn.Linear(3, 3).weight.tolist()
    tt.manual_seed(5)
    assert tt.nn.Linear(3, 3).weight.tolist() == first


def test_linear_errors() -> None:
    with pytest.raises(RuntimeError, match="^linear: input of shape"):
        tt.nn.Linear(3, 2)(tt.ones(2, 4))
    with pytest.raises(RuntimeError, match="^linear: weight must be 1-D or 2-D"):
        F.linear(tt.ones(2), tt.ones(1, 1, 2))
    with pytest.raises(TypeError, match="^linear: input must be a Tensor"):
        F.linear(np.ones(2), tt.ones(2, 2))
    with pytest.raises(ValueError, match="^Linear: in_features"):
        tt.nn.Linear(-1, 2)
    with pytest.raises(RuntimeError, match="^Linear: only the 'cpu' device"):
        tt.nn.Linear(1, 2, device="cuda")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_one_gemm_path_matches_torch(dtype) -> None:
    """A 2-D input takes one GEMM with the bias in it (one LinearBackward node); a weight that is a
    transposed or sliced view, and an input that is, read where they lie; every gradient matches
    torch's and the weight's is contiguous (what the leaf keeps without a copy)."""
    atol, rtol = TOL[dtype]
    x, w, b = _values((33, 20), dtype, 1), _values((20, 40), dtype, 2), _values((17,), dtype, 3)
    views = [
        (lambda t: t, lambda t: t[:, :17].T),                 # the weight as a transposed (in, out) block
        (lambda t: t[::2], lambda t: t[:, 1:35:2].T),         # sliced input, strided weight
    ]
    for input_view, weight_view in views:
        got = [tt.tensor(v, requires_grad=True) for v in (x, w, b)]
        want = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
        y = F.linear(input_view(got[0]), weight_view(got[1]), got[2])
        ty = torch.nn.functional.linear(input_view(want[0]), weight_view(want[1]), want[2])
        assert type(y.grad_fn).__name__ == "LinearBackward"
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), atol=atol, rtol=rtol)
        seed = _values(tuple(ty.shape), dtype, 4)
        y.backward(tt.tensor(seed))
        ty.backward(torch.tensor(seed))
        for a, t in zip(got, want, strict=True):
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), atol=atol, rtol=rtol)
        with tt.no_grad():
            plain = F.linear(input_view(got[0]), weight_view(got[1]), got[2])
        assert plain.grad_fn is None and np.array_equal(plain.numpy(), y.detach().numpy())
    layer = tt.nn.Linear(20, 6, dtype=tt.float64 if dtype == np.float64 else tt.float32)
    layer(tt.tensor(x)).sum().backward()
    assert layer.weight.grad.is_contiguous() and layer.weight.grad.shape == (6, 20)


def test_linear_other_cases_keep_the_composite_path() -> None:
    """Batched inputs, a broadcasting 2-D bias and integer tensors take the product and the add,
    as before (and as torch does for a batched input)."""
    x, w = tt.ones(2, 3, 4, requires_grad=True), tt.ones(5, 4, requires_grad=True)
    assert type(F.linear(x, w, tt.zeros(5)).grad_fn).__name__ == "AddBackward"
    assert type(F.linear(x[0], w, tt.zeros(1, 5)).grad_fn).__name__ == "AddBackward"
    assert F.linear(tt.ones(2, 3, dtype=tt.int64), tt.ones(4, 3, dtype=tt.int64), tt.ones(4, dtype=tt.int64)).tolist() \
        == [[4] * 4] * 2
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(tt.ones(2, 3), tt.ones(4, 3, dtype=tt.float64))


def test_matmul_gradient_of_a_transposed_weight_is_contiguous() -> None:
    """x @ w.T: w's gradient is computed as the transpose of the transposed product, so the
    transpose's backward hands w a contiguous gradient, as in PyTorch."""
    x, w = _values((6, 5), np.float64, 1), _values((4, 5), np.float64, 2)
    got_x, got_w = tt.tensor(x, requires_grad=True), tt.tensor(w, requires_grad=True)
    want_x, want_w = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (got_x @ got_w.T).square().sum().backward()
    (want_x @ want_w.T).square().sum().backward()
    assert got_w.grad.is_contiguous()
    np.testing.assert_allclose(got_w.grad.numpy(), want_w.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got_x.grad.numpy(), want_x.grad.numpy(), rtol=1e-12)
    a, b = tt.tensor(x.T.copy(), requires_grad=True), tt.tensor(w, requires_grad=True)
    (a.T @ b.T).sum().backward()  # a transposed first operand too
    assert a.grad.is_contiguous()
    np.testing.assert_allclose(a.grad.numpy(), (np.ones((6, 4)) @ w).T, rtol=1e-12)


# ---------------------------------------------------------------------- activations, Flatten, Identity

ACTIVATIONS = [
    ("ReLU", {}), ("GELU", {}), ("GELU", {"approximate": "tanh"}), ("SiLU", {}), ("Tanh", {}), ("Sigmoid", {}),
    ("Softmax", {"dim": 1}), ("Softmax", {"dim": -1}), ("Softmax", {"dim": 0}), ("LogSoftmax", {"dim": 1}),
    ("LogSoftmax", {"dim": -1}), ("Flatten", {}), ("Flatten", {"start_dim": 0, "end_dim": 1}), ("Identity", {}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs"), ACTIVATIONS)
def test_activation_modules_match_torch(name: str, kwargs: dict, dtype: type) -> None:
    x = _values((3, 4, 2), dtype)
    x[np.abs(x) < 0.05] = 0.5  # away from relu's kink
    check_module(getattr(tt.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs), x, dtype=dtype)


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_softmax_implicit_dim_matches_torch(ndim: int) -> None:
    x = _values((2, 3, 2, 2)[:ndim], np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for tt_fn, th_fn in ((F.softmax, torch.nn.functional.softmax),
                             (F.log_softmax, torch.nn.functional.log_softmax)):
            helper_test_grad([x], tt_fn, th_fn, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_functional_second_order(dim: int) -> None:
    x = _values((3, 4), np.float64, 4)
    helper_test_grad([x], lambda t: F.softmax(t, dim), lambda t: torch.softmax(t, dim), atol=1e-10, rtol=1e-9,
                     create_graph=True)
    helper_test_grad([x], lambda t: F.log_softmax(t, dim), lambda t: torch.log_softmax(t, dim), atol=1e-10,
                     rtol=1e-9, create_graph=True)
    got = F.softmax(tt.tensor(x), dim, dtype=tt.float32)
    assert got.dtype == tt.float32 and not got.requires_grad
    ints = np.arange(12).reshape(3, 4)
    np.testing.assert_allclose(F.log_softmax(tt.tensor(ints), dim, dtype=tt.float64).numpy(),
                               torch.log_softmax(torch.tensor(ints), dim, dtype=torch.float64).numpy(), rtol=1e-12)


def test_activation_errors_and_inplace() -> None:
    with pytest.raises(ValueError, match="^GELU: approximate"):
        tt.nn.GELU("fast")
    with pytest.raises(RuntimeError, match="^softmax: input must have a floating-point dtype"):
        F.softmax(tt.ones(2, dtype=tt.int64), 0)
    x = tt.tensor([-1.0, 2.0])
    assert tt.nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]
    x = tt.tensor([0.0, 1.0])
    assert F.silu(x, inplace=True) is x and round(x.tolist()[1], 4) == 0.7311
    identity = tt.nn.Identity(3, unused=True)
    assert identity(x) is x


# ---------------------------------------------------------------------- Dropout


def test_dropout_statistics_and_scale() -> None:
    tt.manual_seed(0)
    for p in (0.1, 0.5, 0.8):
        y = F.dropout(tt.ones(200_000), p=p).numpy()
        kept = y != 0
        assert abs(1 - kept.mean() - p) < 0.005, p
        np.testing.assert_allclose(y[kept], 1 / (1 - p), rtol=1e-6)
        assert abs(y.mean() - 1) < 0.02  # the scale keeps the expectation
    y64 = F.dropout(tt.ones(10, dtype=tt.float64), 0.5)
    assert y64.dtype == tt.float64 and set(y64.tolist()) <= {0.0, 2.0}


def test_dropout_gradient_is_mask_times_scale() -> None:
    tt.manual_seed(1)
    x = tt.tensor(_values((50, 40), np.float32, 5) + 3.0, requires_grad=True)  # no zeros in x
    layer = tt.nn.Dropout(0.3)
    y = layer(x)
    g = _values((50, 40), np.float32, 6)
    y.backward(tt.tensor(g))
    mask = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), g * mask / 0.7, rtol=1e-6)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * mask / 0.7, rtol=1e-6)


def test_dropout_modes_edges_and_seeding() -> None:
    x = tt.ones(100, requires_grad=True)
    layer = tt.nn.Dropout(0.5).eval()
    assert layer(x) is x
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.9, training=False) is x
    zero = F.dropout(x, 1.0)
    assert zero.tolist() == [0.0] * 100 and zero.requires_grad
    tt.manual_seed(3)
    first = F.dropout(tt.ones(64), 0.5).tolist()
    tt.manual_seed(3)
    assert F.dropout(tt.ones(64), 0.5).tolist() == first
    y = tt.ones(1000)
    assert F.dropout(y, 0.5, inplace=True) is y and 0.0 in y.tolist()
    for bad in (-0.1, 1.5, True):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            F.dropout(x, bad)
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            tt.nn.Dropout(bad)


# ---------------------------------------------------------------------- Embedding


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("indices", [[3, 1, 3, 0], [[1, 2], [4, 4]], 2])
def test_embedding_matches_torch(indices, padding_idx) -> None:
    idx = np.array(indices, dtype=np.int64)
    check_module(tt.nn.Embedding(5, 3, padding_idx=padding_idx), torch.nn.Embedding(5, 3, padding_idx=padding_idx),
                 idx, dtype=np.float64)


def test_embedding_functional_and_second_order() -> None:
    w = _values((6, 4), np.float64, 7)
    idx = np.array([[0, 5, 5], [2, 0, 1]], dtype=np.int64)
    for padding in (None, 0):
        helper_test_grad([w, idx], lambda a, i, p=padding: F.embedding(i, a, padding_idx=p),
                         lambda a, i, p=padding: torch.nn.functional.embedding(i, a, padding_idx=p),
                         atol=1e-12, rtol=1e-12, create_graph=True)
        # a first gradient made with create_graph (through EmbeddingGrad) has torch's values
        weight = tt.tensor(w, requires_grad=True)
        (first,) = tt.autograd.grad(F.embedding(tt.tensor(idx), weight, padding_idx=padding).sum(), weight,
                                    create_graph=True)
        ref_weight = torch.tensor(w, requires_grad=True)
        (ref_first,) = torch.autograd.grad(torch.nn.functional.embedding(torch.tensor(idx), ref_weight,
                                                                         padding_idx=padding).sum(), ref_weight)
        np.testing.assert_array_equal(first.detach().numpy(), ref_first.numpy())
    # EmbeddingGrad's own backward (what a second derivative goes through): rows picked back, padding zeroed
    upstream = tt.tensor(_values((2, 3, 4), np.float64, 8), requires_grad=True)
    table = tt.autograd.function.FUNCTIONS["EmbeddingGrad"].apply(upstream, tt.tensor(idx), 6, 0)
    weights = _values((6, 4), np.float64, 9)
    (back,) = tt.autograd.grad(table, upstream, tt.tensor(weights))
    expected = weights[idx] * (idx != 0)[..., None]
    np.testing.assert_array_equal(back.numpy(), expected)


def test_embedding_init_pretrained_and_errors() -> None:
    tt.manual_seed(0)
    emb = tt.nn.Embedding(1000, 50, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert not np.any(w[3]) and abs(w.std() - 1) < 0.02 and abs(w.mean()) < 0.02
    table = tt.arange(6.0).reshape(3, 2)
    frozen = tt.nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad and frozen(tt.tensor([2])).tolist() == [[4.0, 5.0]]
    assert tt.nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    with pytest.raises(IndexError, match="^embedding: index 1000 is out of range for a weight with 1000 rows"):
        emb(tt.tensor([5, 1000]))
    with pytest.raises(IndexError, match="^embedding: index -1 is out of range"):
        emb(tt.tensor([-1]))
    with pytest.raises(RuntimeError, match="^embedding: Expected tensor for argument #1 'indices'"):
        emb(tt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="^embedding: weight must be 2-D"):
        F.embedding(tt.tensor([0]), tt.ones(3))
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        tt.nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(NotImplementedError, match="max_norm"):
        tt.nn.Embedding(3, 2, max_norm=1.0)
    assert emb(tt.zeros((0, 2), dtype=tt.int64)).shape == (0, 2, 50)


# ---------------------------------------------------------------------- LayerNorm


def _randomized(module: torch.nn.Module) -> torch.nn.Module:
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    return module


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "normalized"), [((2, 5), 5), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)), ((4,), 4)])
@pytest.mark.parametrize("options", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 0.1}])
def test_layer_norm_matches_torch(shape, normalized, options, dtype) -> None:
    check_module(tt.nn.LayerNorm(normalized, **options), _randomized(torch.nn.LayerNorm(normalized, **options)),
                 _values(shape, dtype) * 3 + 1, dtype=dtype)


def test_layer_norm_functional_second_order() -> None:
    x, w, b = _values((3, 4), np.float64, 1) * 2, _values((4,), np.float64, 2), _values((4,), np.float64, 3)
    helper_test_grad([x, w, b], lambda a, c, d: F.layer_norm(a, (4,), c, d),
                     lambda a, c, d: torch.nn.functional.layer_norm(a, (4,), c, d), atol=1e-9, rtol=1e-8,
                     create_graph=True)


@pytest.mark.parametrize(("shape", "normalized"), [((70, 600), (600,)), ((3, 40, 8, 8), (8, 8)), ((33, 1), (1,))])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_kernel_float32_matches_torch(shape, normalized, affine) -> None:
    """The one-call forward and backward (tt_layer_norm_forward / _backward) against torch in
    float32: rows past the 512-value sum block and the backward's 32-row blocks, every affine
    combination, every gradient."""
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    w = rng.standard_normal(normalized).astype(np.float32) if affine in ("both", "weight") else None
    b = rng.standard_normal(normalized).astype(np.float32) if affine in ("both", "bias") else None
    g = rng.standard_normal(shape).astype(np.float32)
    results = {}
    for lib in (tt, torch):
        make = (lambda a: None if a is None else tt.tensor(a, requires_grad=True)) if lib is tt else (
            lambda a: None if a is None else torch.tensor(a, requires_grad=True))
        tx, tw, tb = make(x), make(w), make(b)
        y = lib.nn.functional.layer_norm(tx, normalized, tw, tb)
        y.backward(lib.tensor(g))
        results[lib] = [y.detach().numpy()] + [t.grad.numpy() for t in (tx, tw, tb) if t is not None]
    for got, want in zip(results[tt], results[torch], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-4)


def test_layer_norm_kernel_column_gradients_same_on_any_thread_count() -> None:
    rng = np.random.default_rng(9)
    x, g = rng.standard_normal((200, 300)).astype(np.float32), rng.standard_normal((200, 300)).astype(np.float32)
    grads = []
    before = tt.get_num_threads()
    try:
        for threads in (1, 2, 3):
            tt.set_num_threads(threads)
            tx, tw = tt.tensor(x, requires_grad=True), tt.ones(300, requires_grad=True)
            tb = tt.zeros(300, requires_grad=True)
            F.layer_norm(tx, (300,), tw, tb).backward(tt.tensor(g))
            grads.append((tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()))
    finally:
        tt.set_num_threads(before)
    for other in grads[1:]:
        for a, b in zip(grads[0], other, strict=True):
            np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_layer_norm_outside_the_kernel_keeps_the_tensor_ops() -> None:
    """float16, no rows and rows of nothing take the tensor-op path, and agree with torch."""
    x = _values((4, 6), np.float32) * 2
    half = F.layer_norm(tt.tensor(x).half(), (6,))
    want = torch.nn.functional.layer_norm(torch.tensor(x).half(), (6,))
    np.testing.assert_allclose(half.float().numpy(), want.float().numpy(), atol=3e-3)
    assert F.layer_norm(tt.ones(0, 6), (6,)).shape == (0, 6)
    assert tuple(torch.nn.functional.layer_norm(torch.ones(3, 0), (0,)).shape) == (3, 0)
    assert F.layer_norm(tt.ones(3, 0), (0,)).shape == (3, 0)


def test_layer_norm_init_and_errors() -> None:
    ln = tt.nn.LayerNorm((2, 3))
    assert ln.weight.tolist() == [[1.0] * 3] * 2 and ln.bias.tolist() == [[0.0] * 3] * 2
    assert tt.nn.LayerNorm(3, elementwise_affine=False).weight is None
    with pytest.raises(RuntimeError, match=r"^layer_norm: Given normalized_shape=\[4\], expected input with shape"):
        F.layer_norm(tt.ones(2, 3), (4,))
    with pytest.raises(RuntimeError, match=r"^layer_norm: Given normalized_shape=\[2, 3\]"):
        ln(tt.ones(2, 4))
    with pytest.raises(RuntimeError, match="^layer_norm: Given normalized_shape"):
        F.layer_norm(tt.ones(3), (2, 3))
    with pytest.raises(RuntimeError, match="^layer_norm: weight of shape"):
        F.layer_norm(tt.ones(2, 3), (3,), tt.ones(2))


# ---------------------------------------------------------------------- init


def test_calculate_gain_and_fans_match_torch() -> None:
    for name in ("linear", "conv1d", "conv2d", "sigmoid", "tanh", "relu", "selu", "conv_transpose2d"):
        assert tt.nn.init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    for slope in (None, 0.2, 1):
        assert tt.nn.init.calculate_gain("leaky_relu", slope) == pytest.approx(
            torch.nn.init.calculate_gain("leaky_relu", slope))
    with pytest.raises(ValueError, match="^calculate_gain: unsupported nonlinearity"):
        tt.nn.init.calculate_gain("softsign")
    with pytest.raises(ValueError, match="not a valid number"):
        tt.nn.init.calculate_gain("leaky_relu", "x")
    from t_tensor.nn.init import _calculate_fan_in_and_fan_out

    for shape in ((3, 5), (8, 4, 3), (6, 2, 3, 3), (2, 1, 1, 1, 2)):
        assert _calculate_fan_in_and_fan_out(tt.empty(*shape)) == torch.nn.init._calculate_fan_in_and_fan_out(
            torch.empty(shape))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16])
def test_init_statistics(dtype) -> None:
    tt.manual_seed(0)
    shape = (300, 200, 3)  # fan_in 600, fan_out 900
    fan_in, fan_out = 600, 900
    n = math.prod(shape)
    t = tt.empty(*shape, dtype=dtype)

    def check(x, mean, std, bound=None):
        """Sample mean and std within 5 standard errors of the distribution's; inside the bounds."""
        v = x.numpy().astype(np.float64)
        assert abs(v.mean() - mean) < 5 * std / math.sqrt(n), (v.mean(), mean)
        assert abs(v.std() - std) < 5 * std / math.sqrt(2 * n) + 1e-3 * std, (v.std(), std)  # (+ float16 rounding)
        if bound is not None:
            slack = float(np.finfo(dtype.numpy).eps) * max(abs(low := bound[0]), abs(high := bound[1]))  # rounding
            low, high = low - slack, high + slack
            assert low <= v.min() < low + 1e-3 * (high - low) and high - 1e-3 * (high - low) < v.max() <= high

    check(tt.nn.init.uniform_(t, -2.0, 3.0), 0.5, 5 / math.sqrt(12), (-2.0, 3.0))
    check(tt.nn.init.normal_(t, 1.0, 2.0), 1.0, 2.0)
    bound = math.sqrt(6 / (fan_in + fan_out)) * 2.0
    check(tt.nn.init.xavier_uniform_(t, gain=2.0), 0.0, bound / math.sqrt(3), (-bound, bound))
    check(tt.nn.init.xavier_normal_(t), 0.0, math.sqrt(2 / (fan_in + fan_out)))
    bound = math.sqrt(2) * math.sqrt(3 / fan_out)
    check(tt.nn.init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"), 0.0, bound / math.sqrt(3),
          (-bound, bound))
    check(tt.nn.init.kaiming_normal_(t, a=0.3), 0.0, tt.nn.init.calculate_gain("leaky_relu", 0.3) / math.sqrt(fan_in))
    check(tt.nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="tanh"), 0.0, (5 / 3) / math.sqrt(fan_out))
    assert tt.nn.init.constant_(t, 0.25).numpy().astype(float).tolist()[0][0] == [0.25] * 3
    assert not tt.nn.init.zeros_(t).numpy().any()
    assert (tt.nn.init.ones_(t).numpy() == 1).all()
    assert t.dtype == dtype


def test_init_on_parameters_in_place_and_seeded() -> None:
    p = tt.nn.Parameter(tt.empty(4, 3))
    ptr = p.data_ptr()
    for fill in (tt.nn.init.kaiming_uniform_, tt.nn.init.kaiming_normal_, tt.nn.init.xavier_uniform_,
                 tt.nn.init.xavier_normal_, tt.nn.init.uniform_, tt.nn.init.normal_, tt.nn.init.zeros_,
                 tt.nn.init.ones_, lambda x: tt.nn.init.constant_(x, 2.0)):
        assert fill(p) is p
        assert p.is_leaf and p.requires_grad and p.grad_fn is None and p.data_ptr() == ptr
    gen = tt.Generator().manual_seed(11)
    a = tt.nn.init.normal_(tt.empty(5), generator=gen).tolist()
    gen.manual_seed(11)
    assert tt.nn.init.normal_(tt.empty(5), generator=gen).tolist() == a
    assert tt.nn.init.kaiming_uniform_(tt.empty(0, 3)).shape == (0, 3)


def test_init_errors_match_torch() -> None:
    for fill in (tt.nn.init.xavier_uniform_, tt.nn.init.xavier_normal_, tt.nn.init.kaiming_uniform_,
                 tt.nn.init.kaiming_normal_):
        with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
            fill(tt.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        tt.nn.init.kaiming_uniform_(tt.empty(2, 2), mode="fan_avg")
    with pytest.raises(ValueError, match="^uniform_: expects a <= b"):
        tt.nn.init.uniform_(tt.empty(2), 1.0, 0.0)
    with pytest.raises(ValueError, match="^normal_: expects std >= 0.0"):
        tt.nn.init.normal_(tt.empty(2), 0.0, -1.0)
    with pytest.raises(TypeError, match="^zeros_: expected a Tensor"):
        tt.nn.init.zeros_(np.zeros(2))


# ---------------------------------------------------------------------- any shape, any layout

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.helpers import LAYOUTS, apply_layout, base_shape  # noqa: E402


def _laid_out(shape: tuple[int, ...], layout: str, seed: int) -> tuple[np.ndarray, object]:
    """Base-shaped values and the function giving the laid-out view (t_tensor or torch)."""
    return _values(base_shape(shape, layout), np.float64, seed), lambda t: apply_layout(t, layout, shape)


@settings(max_examples=25, deadline=None)
@given(batch=st.lists(st.integers(0, 4), max_size=3), features=st.tuples(st.integers(0, 4), st.integers(0, 4)),
       layout=st.sampled_from(LAYOUTS), bias=st.booleans())
def test_linear_any_shape_and_layout(batch, features, layout, bias) -> None:
    shape = tuple(batch) + (features[0],)
    x, view = _laid_out(shape, layout, 1)
    w, b = _values(features[::-1], np.float64, 2), _values((features[1],), np.float64, 3)
    inputs = [x, w, b] if bias else [x, w]
    helper_test_grad(inputs, lambda a, *p: F.linear(view(a), *p),
                     lambda a, *p: torch.nn.functional.linear(view(a), *p), atol=1e-10, rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), layout=st.sampled_from(LAYOUTS))
def test_layer_norm_any_shape_and_layout(shape, data, layout) -> None:
    shape = tuple(shape)
    n = data.draw(st.integers(1, len(shape)))
    normalized = shape[len(shape) - n:]
    x, view = _laid_out(shape, layout, 4)
    w, b = _values(normalized, np.float64, 5), _values(normalized, np.float64, 6)
    helper_test_grad([x, w, b], lambda a, c, d: F.layer_norm(view(a), normalized, c, d, eps=1e-3),
                     lambda a, c, d: torch.nn.functional.layer_norm(view(a), normalized, c, d, eps=1e-3),
                     atol=1e-9, rtol=1e-8)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), layout=st.sampled_from(["contiguous", "sliced"]),
       dim=st.integers(0, 2))
def test_softmax_any_shape_and_layout(shape, layout, dim) -> None:
    shape = tuple(shape)
    dim = dim % len(shape)
    x, view = _laid_out(shape, layout, 7)
    helper_test_grad([x], lambda a: F.log_softmax(view(a), dim), lambda a: torch.log_softmax(view(a), dim),
                     atol=1e-10, rtol=1e-9)
    helper_test_grad([x], lambda a: F.softmax(view(a), dim), lambda a: torch.softmax(view(a), dim),
                     atol=1e-10, rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(index_shape=st.lists(st.integers(0, 3), max_size=3), rows=st.integers(1, 5), width=st.integers(0, 3),
       layout=st.sampled_from(LAYOUTS), data=st.data())
def test_embedding_any_index_shape_and_weight_layout(index_shape, rows, width, layout, data) -> None:
    idx = np.asarray(_rng_ints(data, tuple(index_shape), rows))
    w, view = _laid_out((rows, width), layout, 8)
    padding = data.draw(st.sampled_from([None, 0, rows - 1]))
    helper_test_grad([w, idx], lambda a, i: F.embedding(i, view(a), padding_idx=padding),
                     lambda a, i: torch.nn.functional.embedding(i, view(a), padding_idx=padding),
                     atol=1e-12, rtol=1e-12)


def _rng_ints(data, shape: tuple[int, ...], high: int) -> np.ndarray:
    values = data.draw(st.lists(st.integers(0, high - 1), min_size=math.prod(shape), max_size=math.prod(shape)))
    return np.array(values, dtype=np.int64).reshape(shape)
