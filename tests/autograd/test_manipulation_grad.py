"""Gradients of the manipulation ops against PyTorch: cat/concat and the stacks, flip, roll,
tile/repeat, repeat_interleave, pad (every mode, negative amounts), tril/triu, diag/diag_embed;
first and second order in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import t_tensor as tt
from tests.helpers import helper_test_grad, lib_of, random_arrays

lib = lib_of
_values = random_arrays


def check(inputs, tt_fn, torch_fn=None, **kwargs) -> None:
    helper_test_grad(inputs, tt_fn, torch_fn, atol=1e-12, rtol=1e-10, create_graph=True, **kwargs)


@pytest.mark.parametrize("shapes,dim", [
    (((2, 3), (4, 3)), 0), (((2, 3), (2, 1), (2, 2)), 1), (((2, 3, 2), (2, 3, 2)), -1), (((3,), (0,), (2,)), 0),
    (((0, 3), (2, 3)), 0),
])
def test_cat(shapes, dim) -> None:
    check(_values(*shapes), lambda *ts: lib(ts[0]).cat(ts, dim))


def test_cat_of_only_skipped_empty_tensors_ignores_dim() -> None:
    # (found by review) every input a 1-D empty tensor: the (0,) result ignores dim, also when
    # recording; the gradients are empty
    for lib_ in (tt, torch):
        x = lib_.zeros(0, requires_grad=True)
        y = lib_.cat([x, lib_.zeros(0)], 1)
        assert tuple(y.shape) == (0,) and y.requires_grad
        y.sum().backward()
        assert tuple(x.grad.shape) == (0,)


def test_cat_concat_axis_none_and_mixed_requires_grad() -> None:
    a, b = _values((2, 3), (3,))
    check([a, b], lambda x, y: tt.concat([x, y], axis=None), lambda x, y: torch.cat([x.reshape(-1), y]))
    check([a, b], lambda x, y: lib(x).cat([x, y.reshape(1, 3)]), grad_inputs=[False, True])
    # an integer input gets no gradient; the float one does
    x = tt.ones(2, requires_grad=True)
    y = tt.cat([x, tt.tensor([1, 2])])
    assert y.requires_grad
    (y * tt.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("fn", ["stack", "hstack", "vstack", "dstack"])
def test_stacks(fn) -> None:
    check(_values((2, 3), (2, 3), (2, 3)), lambda *ts: getattr(lib(ts[0]), fn)(ts))


def test_stack_dims() -> None:
    for dim in (0, 1, 2, -1):
        check(_values((2, 3), (2, 3)), lambda a, b, d=dim: lib(a).stack([a, b], d))


@pytest.mark.parametrize("dims", [0, 1, (0, 1), (-1,), (0, 2)])
def test_flip(dims) -> None:
    check(_values((2, 3, 4)), lambda a: lib(a).flip(a, dims if isinstance(dims, tuple) else (dims,)))


def test_fliplr_flipud() -> None:
    check(_values((2, 3)), lambda a: lib(a).fliplr(a))
    check(_values((2, 3)), lambda a: lib(a).flipud(a))


@pytest.mark.parametrize("shifts,dims", [(1, 0), (-2, 1), ((1, 2), (0, 1)), (5, None), ((1, 1), (1, 1))])
def test_roll(shifts, dims) -> None:
    check(_values((3, 4)), lambda a: lib(a).roll(a, shifts, dims))


@pytest.mark.parametrize("sizes", [(2, 1), (1, 3), (2, 2, 2), (1, 1)])
def test_tensor_repeat(sizes) -> None:
    check(_values((2, 3)), lambda a: a.repeat(*sizes))


@pytest.mark.parametrize("reps", [(2,), (2, 1), (3, 1, 2)])
def test_tile(reps) -> None:
    check(_values((2, 3)), lambda a: lib(a).tile(a, reps))


def test_tile_broadcast_input() -> None:
    check(_values((1, 3)), lambda a: lib(a).tile(a.expand(2, 3), (2, 2)))


@pytest.mark.parametrize("repeats,dim", [(2, 0), (3, 1), ([1, 0, 2], 1), (2, None)])
def test_repeat_interleave(repeats, dim) -> None:
    def fn(a):
        r = repeats if isinstance(repeats, int) else lib(a).tensor(repeats)
        return lib(a).repeat_interleave(a, r, dim)

    check(_values((2, 3)), fn)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("amounts", [(1, 2), (2, 1, 1, 0), (0, 1, 1, 1)])
def test_pad(mode, amounts) -> None:
    x = _values((2, 3, 4))[0]
    check([x], lambda a: tt.pad(a, amounts, mode=mode) if isinstance(a, tt.Tensor) else
          torch.nn.functional.pad(a, amounts, mode=mode))


def test_pad_constant_with_value_and_crop() -> None:
    x = _values((3, 4))[0]
    for amounts in [(1, -2), (-1, -1, 2, 0), (-1, 2, 1, -2)]:
        check([x], lambda a, p=amounts: tt.pad(a, p, value=3.5) if isinstance(a, tt.Tensor) else
              torch.nn.functional.pad(a, p, value=3.5))


@pytest.mark.parametrize("fn", ["tril", "triu"])
@pytest.mark.parametrize("k", [0, 1, -1, 5])
def test_triangles(fn, k) -> None:
    check(_values((2, 3, 4)), lambda a: getattr(lib(a), fn)(a, k))


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag(k) -> None:
    check(_values((3,)), lambda a: lib(a).diag(a, k))
    check(_values((3, 4)), lambda a: lib(a).diag(a, k))


def test_diag_embed() -> None:
    check(_values((2, 3)), lambda a: lib(a).diag_embed(a))
    check(_values((2, 3)), lambda a: lib(a).diag_embed(a, 1, 0, 2))


def test_chain_of_manipulations() -> None:
    a, b = _values((2, 3), (2, 3))
    check([a, b], lambda x, y: (lib(x).cat([x.flip(1), lib(x).roll(y, 1, 0)], 1).tril() * x.repeat(1, 2)).sin())


def test_float32() -> None:
    a, b = (v.astype(np.float32) for v in _values((2, 3), (2, 3)))
    helper_test_grad([a, b], lambda x, y: lib(x).cat([x.flip(1), lib(x).roll(y, 1, 0)], 1).tril() * x.repeat(1, 2))
    helper_test_grad([a], lambda x: tt.pad(x, (1, 2), mode="reflect") if lib(x) is tt else
                     torch.nn.functional.pad(x, (1, 2), mode="reflect"))


def test_empty_result_gives_zero_gradient() -> None:
    check(_values((2, 3)), lambda a: a.repeat(0, 1))
    check(_values((2, 3)), lambda a: lib(a).repeat_interleave(a, 0, 0))
