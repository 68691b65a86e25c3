"""The autograd engine, grad mode, hooks, views and in-place rules, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import t_tensor as tt
from tests.helpers import helper_test_grad


def test_leaf_and_non_leaf_attributes() -> None:
    x = tt.ones(3, requires_grad=True)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    assert not y.is_leaf and type(y.grad_fn).__name__ == "MulBackward"
    assert tt.ones(3).is_leaf and not tt.ones(3).requires_grad


def test_requires_grad_only_for_floats() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        tt.ones(3, dtype=tt.int64, requires_grad=True)


def test_gradient_accumulates_over_uses_and_calls() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    (x * x + x).sum().backward()
    assert x.grad.tolist() == [3.0, 5.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 8.0]


def test_chain_of_100000_ops_backpropagates_without_recursion() -> None:
    x = tt.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_second_backward_through_freed_graph_raises() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_modified_saved_tensor_raises_as_torch() -> None:
    for lib in (tt, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1.0
        y = h.exp()        # exp saves its output
        y.add_(1.0)        # ... which is then modified in place
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_inplace_on_leaf_requiring_grad_raises() -> None:
    x = tt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0:2].mul_(2.0)
    with tt.no_grad():
        x.add_(1.0)  # allowed without grad: how optimizers update parameters
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_version_counter_is_shared_by_views() -> None:
    x = tt.zeros(4)
    v = x[1:3]
    before = x._version
    v.add_(1.0)
    assert x._version == v._version == before + 1
    x.fill_(2.0)
    assert v._version == before + 2


def test_no_grad_enable_grad_set_grad_enabled() -> None:
    x = tt.ones(2, requires_grad=True)
    with tt.no_grad():
        assert not (x * 2).requires_grad
        with tt.enable_grad():
            assert (x * 2).requires_grad
    tt.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        tt.set_grad_enabled(True)

    @tt.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and tt.is_grad_enabled()


def test_detach_shares_memory_without_history() -> None:
    x = tt.ones(2, requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf


def test_hooks_on_leaf_and_non_leaf() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    y = x * 3
    y.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 2)
    y.sum().backward()
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [6.0, 6.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retain_grad() -> None:
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    (y * 2).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0]


def test_backward_of_non_scalar_needs_a_gradient() -> None:
    x = tt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(tt.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_autograd_grad_allow_unused_and_errors() -> None:
    x = tt.ones(2, requires_grad=True)
    z = tt.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="not have been used"):
        tt.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = tt.autograd.grad(y, [x, z], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gz is None and x.grad is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        tt.autograd.grad(tt.ones(2).sum(), x)


def test_higher_order_gradients() -> None:
    x = tt.tensor([0.5, 1.5], dtype=tt.float64, requires_grad=True)
    assert tt.autograd.gradcheck(lambda t: (t.tanh() * t.exp()).sum(), (x,))
    assert tt.autograd.gradgradcheck(lambda t: (t.sin() * t * t).sum(), (x,))


def test_custom_function() -> None:
    class Square(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = tt.tensor([3.0], requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [6.0]


# ---------------------------------------------------------------------- views


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("view", [
    lambda t: t[1:, ::2],
    lambda t: t.T,
    lambda t: t.permute(1, 0).reshape(-1),
    lambda t: t[None, :, 1].expand(3, 3),
    lambda t: t.unsqueeze(0).expand(2, 3, 4),
    lambda t: t.view(2, 6)[:, 1:5].reshape(4, 2),
    lambda t: t.diagonal(),
    lambda t: t.as_strided((2, 2), (1, 1), 1),
    lambda t: t.narrow(1, 1, 2).select(0, 2),
    lambda t: t.T.contiguous().flatten(),
    lambda t: t[:1].expand(2, 4)[:, 0],             # views of an expanded tensor: aliases share a gradient
    lambda t: t[0].expand(4, 4).diagonal(),
    lambda t: t[1].expand(3, 4).as_strided((2, 2), (0, 1), 5),
])
def test_gradients_flow_through_views(view) -> None:
    helper_test_grad([_rand(3, 4)], lambda t: view(t * 1.0) * 2.0, atol=1e-12, rtol=1e-12, create_graph=True)


def test_setitem_and_inplace_through_views_match_torch() -> None:
    def write_slice(x, y):
        h = x * 1.0
        h[0] = y * 2.0
        h[1:, 1:3].mul_(y[:2])
        return h

    helper_test_grad([_rand(3, 4), _rand(4, seed=1)], write_slice, atol=1e-12, rtol=1e-12)

    def into_constant(y):
        h = tt.zeros(3, 4, dtype=y.dtype) if isinstance(y, tt.Tensor) else torch.zeros(3, 4, dtype=y.dtype)
        h[1] = y
        h[:, 0] = 5.0
        return h * h

    helper_test_grad([_rand(4, seed=2)], into_constant, atol=1e-12, rtol=1e-12)


def test_sum_mean_matmul_match_torch() -> None:
    helper_test_grad([_rand(2, 3, 4)], lambda t: t.sum(1), create_graph=True)
    helper_test_grad([_rand(2, 3, 4)], lambda t: t.sum((0, 2), keepdim=True))
    helper_test_grad([_rand(2, 3, 4)], lambda t: t.mean(-1), create_graph=True)
    helper_test_grad([_rand(2, 3, 4)], lambda t: t.mean())
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2)),
                   ((2, 3, 4), (4, 2))]:
        helper_test_grad([_rand(*sa), _rand(*sb, seed=1)], lambda a, b: a @ b, create_graph=True)


def test_graphs_are_freed_without_the_garbage_collector() -> None:
    import gc

    gc.collect()
    gc.disable()
    try:
        before = tt.live_storages()
        for _ in range(50):
            x = tt.ones(100, requires_grad=True)
            y = (x * 2).exp()[1:].sum()
            y.backward()
            del x, y
        assert tt.live_storages() == before  # no cycle kept any tensor of any graph alive
    finally:
        gc.enable()


def test_a_users_function_classes_are_freed_after_backward() -> None:
    """Nothing the engine keeps between calls holds a user's Function class: code that defines
    one per call (a closure) must not keep every one of them alive."""
    import gc
    import weakref

    refs = []
    for i in range(20):
        class Twice(tt.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = tt.tensor([float(i)], requires_grad=True)
        Twice.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0]
        refs.append(weakref.ref(Twice))
        del Twice, x
    gc.collect()
    assert all(ref() is None for ref in refs)


def test_a_users_function_never_replaces_a_library_primitive() -> None:
    """The ops find their primitives by name; a user's Function with the same name (Linear,
    Matmul) must not be found instead."""

    class Linear(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b=None):
            return x * 0 + 123.0

        @staticmethod
        def backward(ctx, grad):
            return grad, None, None

    class Matmul(Linear):
        pass

    x, w = tt.ones(4, 3, requires_grad=True), tt.ones(2, 3, requires_grad=True)
    assert tt.nn.functional.linear(x, w).tolist() == [[3.0, 3.0]] * 4
    assert (x @ w.T).tolist() == [[3.0, 3.0]] * 4
    assert Linear.apply(tt.ones(2), tt.ones(2)).tolist() == [123.0, 123.0]  # the user's own still works


def test_a_leafs_grad_never_aliases_a_gradient_someone_else_holds() -> None:
    """Writing to a gradient that a hook kept, or that a user Function changes in place after an
    add passed it to two inputs, must not change a leaf's .grad (as in PyTorch)."""
    x = tt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * tt.tensor([1.0, 2.0, 3.0])).sum().backward()
    (x * tt.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert kept[0].tolist() == [1.0, 2.0, 3.0] and x.grad.tolist() == [2.0, 4.0, 6.0]

    class DoubleInPlace(tt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2.0

        @staticmethod
        def backward(ctx, g):
            return g.mul_(2.0)

    a = tt.tensor([1.0, 1.0], requires_grad=True)
    b = tt.tensor([1.0, 1.0], requires_grad=True)
    ((a + DoubleInPlace.apply(b)) * tt.tensor([1.0, 1.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [2.0, 2.0]


def test_first_gradient_is_kept_without_a_copy(monkeypatch) -> None:
    """A gradient that a t_tensor backward just computed, that nothing else holds, becomes the
    leaf's .grad as it is (PyTorch's AccumulateGrad steals it too): a Linear layer's backward
    makes no copies, and the values are torch's."""
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((8, 5), (3, 5), (3,)))
    weight, bias = tt.tensor(w, requires_grad=True), tt.tensor(b, requires_grad=True)
    copies = []
    original = tt.Tensor.clone
    monkeypatch.setattr(tt.Tensor, "clone", lambda self, *a, **k: copies.append(self) or original(self, *a, **k))
    (tt.nn.functional.linear(tt.tensor(x), weight, bias) ** 2).sum().backward()
    assert copies == []
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    (torch.nn.functional.linear(torch.tensor(x), tw, tb) ** 2).sum().backward()
    np.testing.assert_allclose(weight.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(bias.grad.numpy(), tb.grad.numpy(), rtol=1e-5)
    assert weight.grad._storage.use_count() == 1


def test_a_kept_gradient_is_never_one_someone_else_can_reach() -> None:
    """Each way a gradient object can be held elsewhere makes the leaf keep a copy: an add passing
    one gradient to two leaves, the caller's root gradient, a hook on an intermediate, and a
    user's Function that stashes its grad_output. Writing to the leaf's .grad (a second backward
    adds in place) must leave the other holder alone, as in PyTorch."""
    a, b = tt.ones(3, requires_grad=True), tt.ones(3, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(1.0)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]

    w = tt.ones(3, requires_grad=True)
    root = tt.tensor([1.0, 2.0, 3.0])
    (w + 0.0).backward(root)
    (w + 0.0).backward(root)
    assert root.tolist() == [1.0, 2.0, 3.0] and w.grad.tolist() == [2.0, 4.0, 6.0]
    leaf = tt.ones(3, requires_grad=True)
    leaf.backward(root)
    leaf.backward(root)
    assert root.tolist() == [1.0, 2.0, 3.0] and leaf.grad.tolist() == [2.0, 4.0, 6.0]

    w = tt.ones(3, requires_grad=True)
    kept = []
    for _ in range(2):
        h = w + 0.0
        h.register_hook(lambda g: kept.append(g))
        (h * tt.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert kept[0].tolist() == [1.0, 2.0, 3.0] and w.grad.tolist() == [2.0, 4.0, 6.0]

    stash = []

    class Stash(tt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            stash.append(g)
            return g

    w = tt.ones(3, requires_grad=True)
    for _ in range(2):
        (Stash.apply(w) * tt.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert stash[0].tolist() == [1.0, 2.0, 3.0] and w.grad.tolist() == [2.0, 4.0, 6.0]


def test_create_graph_and_inputs_keep_a_copy_of_a_held_gradient() -> None:
    """With create_graph, and for a non-leaf named in backward(inputs=...), .grad is a copy too:
    writing into it must not reach the caller's gradient or a hook's argument (as PyTorch)."""
    v = tt.tensor([1.0, 2.0, 3.0])
    w = tt.ones(3, requires_grad=True)
    (w + 0.0).backward(v, create_graph=True)
    (w * 1.0).sum().backward()
    assert v.tolist() == [1.0, 2.0, 3.0] and w.grad.tolist() == [2.0, 3.0, 4.0]

    kept = []
    w = tt.ones(3, requires_grad=True)
    w.register_hook(lambda g: kept.append(g))
    (w * tt.tensor([1.0, 2.0, 3.0])).sum().backward(create_graph=True)
    w.grad.detach().zero_()
    assert kept[0].tolist() == [1.0, 2.0, 3.0]

    w = tt.ones(3, requires_grad=True)
    y = w * 2.0
    y.backward(v, inputs=[y])
    y.grad.zero_()
    assert v.tolist() == [1.0, 2.0, 3.0]
