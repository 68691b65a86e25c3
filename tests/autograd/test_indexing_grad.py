"""Gradients of the indexing ops against PyTorch: advanced ``x[key]`` (integer arrays, masks,
mixed with slices), ``x[key] = v`` and index_put (with and without accumulate), gather,
take_along_dim, take, scatter, scatter_add, index_select, index_add, index_fill, masked_fill,
masked_select and the in-place forms; first and second order in float64."""

from __future__ import annotations

import numpy as np
import pytest

import t_tensor as tt
from tests.helpers import helper_test_grad, lib_of

lib = lib_of


def T(a, values, dtype=None):
    """``values`` as a tensor of ``a``'s library (an index, a mask)."""
    return lib(a).tensor(np.asarray(values))


def _values(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def check(inputs, tt_fn, torch_fn=None, **kwargs) -> None:
    helper_test_grad(inputs, tt_fn, torch_fn, atol=1e-12, rtol=1e-10, create_graph=True, **kwargs)


MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, False]])
KEYS = {
    "ints": lambda a: a[T(a, [2, 0, 2])],
    "ints_2d_repeated": lambda a: a[T(a, [[1, 1], [0, 2]])],
    "two_arrays": lambda a: a[T(a, [0, 2, 2]), T(a, [1, -1, 1])],
    "slice_then_array": lambda a: a[:, T(a, [3, 0, 3])],
    "array_slice_array": lambda a: a[T(a, [0, 1]), 1:, None],
    "mask": lambda a: a[T(a, MASK)],
    "row_mask": lambda a: a[T(a, [True, False, True])],
    "mask_then_int_list": lambda a: a[T(a, [False, True, True]), T(a, [0, 3])],
    "list_key": lambda a: a[[0, 0, 1]],
    "bool_scalar": lambda a: a[True],
    "int_then_array": lambda a: a[1, T(a, [0, 2, 0])],
    "ellipsis_array": lambda a: a[..., T(a, [[1], [3]])],
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_advanced_getitem(name) -> None:
    check(_values((3, 4)), KEYS[name])


def test_float32() -> None:
    x = _values((3, 4))[0].astype(np.float32)
    helper_test_grad([x], lambda a: (a[T(a, [2, 0, 2])] * a[:, T(a, [1, 1, 0, 2])]).sum(0))
    helper_test_grad([x], lambda a: lib(a).gather(a, 1, T(a, [[0, 0], [3, 1], [2, 2]])))
    helper_test_grad([x], lambda a: a.masked_fill(T(a, MASK), 1.0))


def test_masked_select_broadcast() -> None:
    check(_values((3, 4)), lambda a: lib(a).masked_select(a, T(a, MASK)))
    check(_values((1, 4)), lambda a: lib(a).masked_select(a, T(a, MASK)))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate) -> None:
    x, v = _values((3, 4), (3,))
    check([x, v], lambda a, b: a.index_put((T(a, [0, 2, 2]), T(a, [1, 3, 0])), b, accumulate=accumulate))
    check([x, v[:1]], lambda a, b: a.index_put((T(a, [0, 2, 0]),), b, accumulate=accumulate))


def test_setitem_on_non_leaf() -> None:
    x, v = _values((3, 4), (2, 4))

    def run(a, b):
        h = a * 1.5
        h[T(a, [2, 0])] = b
        h[T(a, MASK)] = 0.25
        h[:, T(a, [1])] = b[:1, :1] * 2.0
        return h * h

    check([x, v], run)


def test_index_writes_through_views_and_augmented_assignment() -> None:
    x, v = _values((3, 4), (2, 4))

    def run(a, b):
        h = a * 1.0
        h[T(a, [2, 0])] += b                                       # getitem, in-place add, setitem
        h[:, 1].masked_fill_(T(a, [True, False, True]), 0.5)      # in-place writes through views
        h[1].index_add_(0, T(a, [3, 3]), b[0, :2])
        return h * a

    check([x, v], run)


def test_setitem_value_requires_grad_target_does_not() -> None:
    v = _values((2,))[0]

    def run(b):
        h = lib(b).zeros(3, 2, dtype=lib(b).float64)
        h[T(b, [2, 0])] = b
        return h * lib(b).arange(6, dtype=lib(b).float64).reshape(3, 2)

    check([v], run)


def test_setitem_on_leaf_raises() -> None:
    x = tt.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[tt.tensor([0])] = 1.0


def test_bad_indices_under_autograd_name_the_op() -> None:
    x = tt.zeros(3, requires_grad=True)
    h = x * 1.0
    with pytest.raises(IndexError, match="^__getitem__: index 5 is out of bounds"):
        h[tt.tensor([5])]
    with pytest.raises(IndexError, match="^__setitem__: index 5 is out of bounds"):
        h[tt.tensor([5])] = 1.0
    with pytest.raises(IndexError, match="^index_put_: index -4 is out of bounds"):
        h.index_put_((tt.tensor([-4]),), tt.ones(1))
    with pytest.raises(IndexError, match="^gather: index 3 is out of bounds"):
        tt.gather(x, 0, tt.tensor([3]))
    with pytest.raises(IndexError, match="^take: index 3 is out of bounds"):
        tt.take(x, tt.tensor([3]))
    with pytest.raises(IndexError, match="^take_along_dim: index 3 is out of bounds"):
        tt.take_along_dim(x, tt.tensor([3]), 0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim) -> None:
    rng = np.random.default_rng(1)
    index = rng.integers(0, 3, (2, 3))   # smaller than the input along the other dim, repeats
    check(_values((3, 4)), lambda a: lib(a).gather(a, dim, T(a, index)))


def test_take_along_dim() -> None:
    index = np.array([[0, -1, 1], [2, 2, 0]])
    check(_values((2, 3)), lambda a: lib(a).take_along_dim(a, T(a, index), 1))
    check(_values((1, 3)), lambda a: lib(a).take_along_dim(a, T(a, index), 1))   # broadcast input
    check(_values((2, 3)), lambda a: lib(a).take_along_dim(a, T(a, [5, 0, 0])))  # flattened
    check(_values((3, 2)), lambda a: lib(a).take_along_dim(a, a.argsort(0), 0))


def test_take() -> None:
    check(_values((2, 3)), lambda a: lib(a).take(a, T(a, [[0, -1], [4, 4]])))
    check(_values((2, 3)), lambda a: tt.take(a, T(a, [2, 0]), axis=1) if lib(a) is tt else a[:, [2, 0]])


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add(dim) -> None:
    x, src = _values((3, 4), (2, 4))
    index = np.array([[0, 1, 0, 2], [2, 2, 1, 0]]) if dim == 0 else np.array([[3, 3, 0, 1], [1, 0, 2, 2]])
    check([x, src], lambda a, b: lib(a).scatter_add(a, dim, T(a, index), b))


@pytest.mark.parametrize("fn", ["scatter", "scatter_add"])
def test_scatter_src_larger_than_index(fn) -> None:
    """Only the part of src the index covers is read, so only it gets a gradient (torch refuses
    this backward: its src gradient has the index's shape)."""
    x = tt.zeros(3, 4, dtype=tt.float64, requires_grad=True)
    src = tt.arange(8, dtype=tt.float64).reshape(2, 4).requires_grad_()
    weights = tt.arange(12, dtype=tt.float64).reshape(3, 4)
    (getattr(tt, fn)(x, 0, tt.tensor([[2, 0, 1]]), src) * weights).sum().backward()
    assert src.grad.tolist() == [[8.0, 1.0, 6.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    expected = weights.tolist()
    if fn == "scatter":                  # the overwritten elements get nothing
        expected[2][0] = expected[0][1] = expected[1][2] = 0.0
    assert x.grad.tolist() == expected


def test_scatter() -> None:
    x, src = _values((3, 4), (2, 4))
    index = np.array([[0, 1, 2, 2], [1, 0, 0, 1]])       # distinct targets per column
    check([x, src], lambda a, b: lib(a).scatter(a, 0, T(a, index), b))
    check([x], lambda a: lib(a).scatter(a, 1, T(a, index[:, :2]), 2.5))


def test_scatter_reduce_refuses_grad() -> None:
    x = tt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="scatter_reduce"):
        tt.scatter_reduce(x, 0, tt.tensor([0]), tt.ones(1), "sum")
    with pytest.raises(RuntimeError, match="scatter"):
        tt.scatter(x, 0, tt.tensor([0]), tt.ones(1), reduce="add")


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select(dim) -> None:
    check(_values((3, 4)), lambda a: lib(a).index_select(a, dim, T(a, [2, 0, 2])))


def test_index_add() -> None:
    x, src = _values((3, 4), (3, 2))
    check([x, src], lambda a, b: lib(a).index_add(a, 1, T(a, [3, 0]), b))
    x, src = _values((3, 4), (2, 4))
    check([x, src], lambda a, b: a.index_add(0, T(a, [1, 1]), b, alpha=2.5))


def test_index_fill() -> None:
    check(_values((3, 4)), lambda a: a.index_fill(1, T(a, [0, 2]), -1.0))
    x, v = _values((3, 4), ())
    check([x, v], lambda a, b: a.index_fill(0, T(a, [1]), b))


def test_masked_fill() -> None:
    check(_values((3, 4)), lambda a: a.masked_fill(T(a, MASK), 0.5))
    check(_values((1, 4)), lambda a: a.masked_fill(T(a, MASK), 0.5))   # input broadcast to the mask
    x, v = _values((3, 4), ())
    check([x, v], lambda a, b: a.masked_fill(T(a, MASK), b))


@pytest.mark.parametrize("op", ["masked_fill_", "index_fill_", "index_add_", "scatter_", "scatter_add_"])
def test_inplace_forms_on_non_leaf(op) -> None:
    x, src = _values((3, 4), (3, 4))
    args = {
        "masked_fill_": lambda a, b: (T(a, MASK), 2.0),
        "index_fill_": lambda a, b: (1, T(a, [0, 3]), 2.0),
        "index_add_": lambda a, b: (0, T(a, [2, 0, 2]), b),
        "scatter_": lambda a, b: (1, T(a, [[0, 1, 2, 3], [2, 3, 1, 0], [1, 0, 3, 2]]), b),
        "scatter_add_": lambda a, b: (1, T(a, [[0, 0, 1, 1], [2, 3, 3, 3], [1, 1, 0, 0]]), b),
    }[op]

    def run(a, b):
        h = a * 2.0
        getattr(h, op)(*args(a, b))
        return h * a

    check([x, src], run)


def test_gradient_through_nll_like_pick() -> None:
    """What cross_entropy does: log_softmax, then pick one entry per row."""
    x = _values((4, 5))[0]
    target = np.array([1, 0, 4, 4])
    check([x], lambda a: -a.log_softmax(1)[lib(a).arange(4), T(a, target)].mean())
    check([x], lambda a: -a.log_softmax(1).gather(1, T(a, target[:, None])).sum())
