"""Gradients of the reductions against PyTorch: softmax/log_softmax, max/min (with and without
dim), amax/amin, prod (with zeros), var/std, logsumexp, the norms, cumsum/cumprod, nanmean,
trace; first and second order, in float64 (and first order in float32), over several shapes
and dims, keepdim included."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import t_tensor as tt
from tests.helpers import helper_test_grad, lib_of

lib = lib_of


INF = math.inf
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom")

# name: (function of one tensor, [(shape, ...)])
CASES = {
    "softmax": lambda a, d: a.softmax(d),
    "log_softmax": lambda a, d: a.log_softmax(d),
    "softmax_dtype": lambda a, d: lib(a).softmax(a, d, dtype=lib(a).float64),
    "max_dim": lambda a, d: tuple(a.max(d)),
    "min_dim_keepdim": lambda a, d: tuple(a.min(d, keepdim=True)),
    "max_all": lambda a, d: a.max(),
    "min_all": lambda a, d: a.min(),
    "amax": lambda a, d: a.amax(d),
    "amin_keepdim": lambda a, d: a.amin(d, keepdim=True),
    "amax_all": lambda a, d: a.amax(),
    "prod_dim": lambda a, d: a.prod(d),
    "prod_keepdim": lambda a, d: a.prod(d, keepdim=True),
    "prod_all": lambda a, d: a.prod(),
    "var": lambda a, d: a.var(d),
    "var_all": lambda a, d: a.var(),
    "var_correction0_keepdim": lambda a, d: a.var(d, keepdim=True, correction=0),
    "std": lambda a, d: a.std(d),
    "std_all_keepdim": lambda a, d: a.std(keepdim=True) if lib(a) is tt else a.std(dim=None, keepdim=True),
    "logsumexp": lambda a, d: a.logsumexp(d),
    "logsumexp_keepdim": lambda a, d: a.logsumexp(d, keepdim=True),
    "vector_norm_2": lambda a, d: lib(a).linalg.vector_norm(a, 2, d),
    "vector_norm_2_all": lambda a, d: lib(a).linalg.vector_norm(a),
    "vector_norm_1": lambda a, d: lib(a).linalg.vector_norm(a, 1, d, keepdim=True),
    "vector_norm_inf": lambda a, d: lib(a).linalg.vector_norm(a, INF, d),
    "vector_norm_neginf": lambda a, d: lib(a).linalg.vector_norm(a, -INF, d),
    "vector_norm_3": lambda a, d: lib(a).linalg.vector_norm(a, 3, d),
    "vector_norm_0": lambda a, d: lib(a).linalg.vector_norm(a, 0, d),
    "vector_norm_half": lambda a, d: lib(a).linalg.vector_norm(a, 0.5, d),
    "vector_norm_neg1": lambda a, d: lib(a).linalg.vector_norm(a, -1, d),
    "norm_fro": lambda a, d: a.norm(),
    "norm_p1_dim": lambda a, d: a.norm(p=1, dim=d),
    "linalg_norm": lambda a, d: lib(a).linalg.norm(a, dim=d),
    "cumsum": lambda a, d: a.cumsum(d),
    "cumprod": lambda a, d: a.cumprod(d),
    "nanmean": lambda a, d: a.nanmean(d),
    "nansum": lambda a, d: a.nansum(d),
    "mean": lambda a, d: a.mean(d),
}

SHAPES = [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2), ((5,), 0), ((1, 3), 0)]
ZERO_D = {"softmax", "log_softmax", "max_all", "amax_all", "prod_all", "logsumexp", "cumsum", "cumprod",
          "vector_norm_2_all", "norm_fro", "max_dim", "prod_dim"}


def _values(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Distinct values away from 0 (no ties, no kinks of |x|)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.3, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    return values


@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_grad_matches_torch(name: str, shape: tuple[int, ...], dim: int) -> None:
    fn = CASES[name]
    x = _values(shape, len(name) + len(shape))
    helper_test_grad([x], lambda a: fn(a, dim), atol=1e-10, rtol=1e-9, create_graph=True)


@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_reduction_grad_of_0d_tensor(name: str) -> None:
    x = np.array(-0.7)
    helper_test_grad([x], lambda a: CASES[name](a, 0), atol=1e-10, rtol=1e-9, create_graph=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "max_dim", "amax", "prod_dim", "std", "logsumexp",
                                  "vector_norm_2", "cumprod"])
def test_reduction_grad_float32(name: str) -> None:
    x = _values((3, 5), 11).astype(np.float32)
    helper_test_grad([x], lambda a: CASES[name](a, 1), atol=1e-5, rtol=1e-4)


def test_ties_share_the_gradient_as_torch() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [-1.0, -1.0, -1.0]])
    for fn in (lambda a: a.max(), lambda a: a.min(), lambda a: a.amax(1), lambda a: a.amin(0, keepdim=True),
               lambda a: tuple(a.max(1)), lambda a: lib(a).linalg.vector_norm(a, INF, 1),
               lambda a: lib(a).linalg.vector_norm(a, -INF, 0)):
        helper_test_grad([x], fn, atol=1e-12, rtol=1e-12, create_graph=True)


def test_nan_extremum_sends_the_gradient_to_the_nans_as_torch() -> None:
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 0.5]])
    for fn in (lambda a: a.max(), lambda a: a.min(), lambda a: tuple(a.max(1))):
        helper_test_grad([x], fn, atol=1e-12, rtol=1e-12)


def test_nan_amax_shares_the_gradient_between_the_nans() -> None:
    """torch's amax gradient is NaN everywhere when the result is NaN; here amax does as max."""
    x = tt.tensor([[1.0, float("nan"), 3.0], [float("nan"), 2.0, float("nan")]], requires_grad=True)
    x.amax(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]


def test_nansum_nanmean_with_nans() -> None:
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 0.5]])   # (an all-NaN slice: torch's gradient is NaN, here 0)
    for fn in (lambda a: a.nanmean(1), lambda a: a.nanmean(), lambda a: a.nansum(0), lambda a: a.nanmean(0)):
        helper_test_grad([x], fn, atol=1e-12, rtol=1e-12, create_graph=True)


def test_max_dim_indices_get_no_gradient() -> None:
    x = tt.tensor([[1.0, 2.0], [4.0, 3.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.requires_grad and not indices.requires_grad
    assert values.grad_fn is not None
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_with_zeros(dim) -> None:
    x = _values((3, 4), 3)
    x[0, 1] = 0.0                   # one zero in row 0 and column 1
    x[2, 2] = x[2, 3] = 0.0         # two zeros in row 2
    fn = (lambda a: a.prod()) if dim is None else (lambda a: a.prod(dim))
    helper_test_grad([x], fn, atol=1e-12, rtol=1e-10, create_graph=True)


def test_prod_with_zeros_over_several_dims() -> None:
    y = _values((2, 3, 4), 7)
    y[0, 1, 2] = y[1, 0, 0] = y[1, 2, 3] = 0.0
    helper_test_grad([y], lambda a: a.prod((0, 2)) if lib(a) is tt else a.prod(2).prod(0), atol=1e-12,
                     rtol=1e-10, create_graph=True)
    helper_test_grad([np.array(0.0)], lambda a: a.prod(), create_graph=True)


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_with_zeros(dim) -> None:
    x = _values((4, 5), 6)
    x[1, 1] = x[0, 3] = x[2, 3] = x[3, 0] = x[3, 4] = 0.0    # one or two zeros in some lines
    helper_test_grad([x], lambda a: a.cumprod(dim), atol=1e-12, rtol=1e-10)


def test_zero_norm_and_zero_std_have_zero_gradient_as_torch() -> None:
    helper_test_grad([np.zeros((2, 3))], lambda a: a.norm(dim=1))
    helper_test_grad([np.ones((2, 3))], lambda a: a.std(1))


@pytest.mark.parametrize("ord", ["fro", 1, -1, INF, -INF])
def test_matrix_norms(ord) -> None:
    x = _values((2, 3, 4), 9)
    helper_test_grad([x], lambda a: lib(a).linalg.matrix_norm(a, ord), atol=1e-10, rtol=1e-9, create_graph=True)


def test_spectral_norm_refuses_grad() -> None:
    x = tt.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="matrix_norm"):
        tt.linalg.matrix_norm(x, 2)


def test_cumulative_sum_include_initial() -> None:
    x = _values((3, 4), 4)
    helper_test_grad([x], lambda a: tt.cumulative_sum(a, axis=1, include_initial=True),
                     lambda a: torch.nn.functional.pad(torch.cumsum(a, 1), (1, 0)), atol=1e-12, create_graph=True)


def test_trace_grad() -> None:
    helper_test_grad([_values((3, 4), 5)], lambda a: a.trace(), create_graph=True)


def test_out_with_grad_raises() -> None:
    x = tt.ones(2, 3, requires_grad=True)
    for call in (lambda: tt.softmax(x, 1, out=tt.empty(2, 3)), lambda: tt.prod(x, 1, out=tt.empty(2)),
                 lambda: tt.var(x, 1, out=tt.empty(2)), lambda: tt.amax(x, 1, out=tt.empty(2)),
                 lambda: tt.cumsum(x, 1, out=tt.empty(2, 3)), lambda: tt.logsumexp(x, 1, out=tt.empty(2))):
        with pytest.raises(RuntimeError, match="out="):
            call()
