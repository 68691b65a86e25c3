"""Gradients of the products built on the matrix product kernel (einsum, tensordot, inner,
vecdot) and of the composites (outer, cross, linalg.trace, linalg.diagonal) against PyTorch;
first and second order in float64."""

from __future__ import annotations

import pytest
import torch

import t_tensor as tt
from tests.helpers import helper_test_grad, lib_of, random_arrays

lib = lib_of
_values = random_arrays


def check(inputs, tt_fn, torch_fn=None, **kwargs) -> None:
    helper_test_grad(inputs, tt_fn, torch_fn, atol=1e-11, rtol=1e-10, create_graph=True, **kwargs)


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("ij,ij->", ((2, 3), (2, 3))),
    ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)),
    ("ij->ji", ((2, 3),)),
    ("i,j->ij", ((2,), (3,))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (3, 3, 2))),
    ("ij,jk,kl->il", ((2, 3), (3, 2), (2, 4))),
    ("bi,bi->b", ((4, 3), (1, 3))),
    ("ijk,ik->j", ((2, 3, 4), (2, 4))),
])
def test_einsum(equation, shapes) -> None:
    check(_values(*shapes), lambda *ops: lib(ops[0]).einsum(equation, *ops))


@pytest.mark.parametrize("dims,shapes", [
    (2, ((2, 3, 4), (3, 4, 5))),
    (([1], [0]), ((2, 3, 4), (3, 4, 5))),
    (0, ((2, 3), (4,))),
    (([0, 2], [2, 0]), ((2, 3, 4), (4, 5, 2))),
    (([1], [0]), ((2, 1), (3, 4))),     # a contracted dim of size 1 broadcasts
])
def test_tensordot(dims, shapes) -> None:
    check(_values(*shapes), lambda a, b: lib(a).tensordot(a, b, dims=dims))


def test_inner_outer_vecdot_cross() -> None:
    a, b = _values((2, 3), (4, 3))
    check([a, b], lambda x, y: lib(x).inner(x, y))
    check([a[0], b[1]], lambda x, y: lib(x).outer(x, y))
    check([a, b[:1]], lambda x, y: lib(x).linalg.vecdot(x, y))
    check([a, b[:2]], lambda x, y: lib(x).linalg.vecdot(x, y, dim=0))
    check([a, b[:2]], lambda x, y: lib(x).linalg.cross(x, y))


def test_cross_with_broadcasting() -> None:
    a, b = _values((2, 3), (1, 3))
    check([a, b], lambda x, y: lib(x).linalg.cross(x, y))


def test_linalg_trace_and_diagonal() -> None:
    (x,) = _values((2, 3, 3))
    check([x], lambda a: tt.linalg.trace(a, offset=1) if lib(a) is tt else torch.diagonal(a, 1, -2, -1).sum(-1))
    check([x], lambda a: lib(a).linalg.diagonal(a, offset=-1))


def test_only_one_operand_requires_grad() -> None:
    a, b = _values((2, 3), (3, 4))
    check([a, b], lambda x, y: lib(x).einsum("ij,jk->ik", x, y), grad_inputs=[False, True])
    check([a, b], lambda x, y: lib(x).tensordot(x, y, dims=1), grad_inputs=[True, False])


def test_singular_values_refuse_grad() -> None:
    x = tt.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^linalg.svdvals: the gradient"):
        tt.linalg.svdvals(x)
    with tt.no_grad():
        assert tt.linalg.svdvals(x).tolist() == [2.0, 0.0]
