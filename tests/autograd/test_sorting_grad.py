"""Gradients of the sorting ops that return values (sort, topk, kthvalue) against PyTorch: the
values read the input at the indices, so each gets the gradient of its element; first and
second order in float64."""

from __future__ import annotations

import numpy as np
import pytest

import t_tensor as tt
from tests.helpers import helper_test_grad, lib_of

lib = lib_of


def _values(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(0).permutation(np.prod(shape, dtype=int)).reshape(shape) / 7.0 - 1.0


def check(inputs, fn) -> None:
    helper_test_grad(inputs, fn, atol=1e-12, rtol=1e-10, create_graph=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dim, descending) -> None:
    check([_values((3, 4))], lambda a: tuple(lib(a).sort(a, dim, descending=descending)))


@pytest.mark.parametrize("k,dim,largest", [(2, 1, True), (1, 0, False), (4, -1, True), (0, 1, True)])
def test_topk(k, dim, largest) -> None:
    check([_values((3, 4))], lambda a: tuple(lib(a).topk(a, k, dim, largest=largest)))


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(keepdim) -> None:
    check([_values((3, 4))], lambda a: tuple(lib(a).kthvalue(a, 2, 1, keepdim=keepdim)))
    check([_values((3, 4))], lambda a: tuple(lib(a).kthvalue(a, 3, 0, keepdim=keepdim)))


def test_0d_and_ties() -> None:
    check([np.array(1.5)], lambda a: tuple(lib(a).sort(a)))
    check([np.array(1.5)], lambda a: tuple(lib(a).topk(a, 1)))
    check([np.array([[1.0, 2.0, 1.0, 2.0]])], lambda a: tuple(lib(a).topk(a, 2)))


def test_indices_get_no_gradient() -> None:
    x = tt.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = x.sort() if hasattr(x, "sort") else tt.sort(x)
    assert values.requires_grad and not indices.requires_grad
    (values * tt.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
