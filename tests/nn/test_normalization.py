"""batch_norm and group_norm (t_tensor.nn.normalization) against PyTorch: values, the gradients of
input, weight and bias, the running statistics batch_norm updates, and the error cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
import t_tensor.nn.functional as F
from tests.helpers import helper_test_exception, helper_test_grad, num_threads

DTYPES = (np.float32, np.float64)
SHAPES = [(4, 3), (2, 3, 5), (2, 4, 3, 3), (3, 2, 2, 1, 3)]


def _tol(dtype: type) -> dict:
    return {"atol": 1e-4, "rtol": 1e-4} if dtype == np.float32 else {"atol": 1e-10, "rtol": 1e-9}


def _arrays(shape: tuple[int, ...], dtype: type, seed: int, affine: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = [(rng.standard_normal(shape) * 2 + 1).astype(dtype)]
    if affine:
        arrays += [rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)]
    return arrays


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_batch_norm_values_and_grads(shape, dtype, training, affine):
    rng = np.random.default_rng(1)
    stats = [rng.standard_normal(shape[1]).astype(dtype), rng.uniform(0.5, 2, shape[1]).astype(dtype)]
    buffers = {}

    def run(lib, fn):
        def call(x, *wb):
            mean, var = (lib.tensor(s.copy()) for s in stats)
            buffers[lib.__name__] = (mean, var)
            return fn(x, mean, var, *wb, training=training, momentum=0.3, eps=1e-3)
        return call

    helper_test_grad(_arrays(shape, dtype, 0, affine), run(tt, F.batch_norm), run(torch, TF.batch_norm),
                     **_tol(dtype))
    for ours, theirs in zip(buffers["t_tensor"], buffers["torch"], strict=True):
        np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), **_tol(dtype))
        assert np.asarray(ours).dtype == theirs.numpy().dtype


def test_batch_norm_training_without_running_stats():
    helper_test_grad(_arrays((5, 2, 3), np.float64, 3, True),
                     lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                     lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True))


def test_batch_norm_running_stats_accumulate():
    x = np.random.default_rng(2).standard_normal((6, 3, 4)).astype(np.float32)
    ours = [tt.zeros(3), tt.ones(3)]
    theirs = [torch.zeros(3), torch.ones(3)]
    for _ in range(3):
        F.batch_norm(tt.tensor(x), *ours, training=True)
        TF.batch_norm(torch.tensor(x), *theirs, training=True)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5, atol=1e-6)


def test_batch_norm_grad_only_weight():
    arrays = _arrays((4, 3, 2), np.float64, 5, True)
    helper_test_grad(arrays, lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
                     lambda x, w, b: TF.batch_norm(x, None, None, w, b, True), grad_inputs=[False, True, False])


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, groups", [((2, 4), 2), ((2, 6, 5), 3), ((3, 4, 3, 3), 1), ((2, 4, 2, 3), 4),
                                           ((1, 6, 2, 1, 2), 2)])
def test_group_norm_values_and_grads(shape, groups, dtype, affine):
    arrays = _arrays(shape, dtype, 4, affine)
    helper_test_grad(arrays, lambda x, *wb: F.group_norm(x, groups, *wb, eps=1e-3),
                     lambda x, *wb: TF.group_norm(x, groups, *wb, eps=1e-3), **_tol(dtype))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.lists(st.integers(1, 3), max_size=2),
       st.booleans())
def test_group_norm_random_shapes(n, groups, per_group, spatial, affine):
    shape = (n, groups * per_group, *spatial)
    if n * per_group * np.prod(spatial, dtype=int) == 1:  # torch refuses this (tested below)
        return
    helper_test_grad(_arrays(shape, np.float64, n, affine), lambda x, *wb: F.group_norm(x, groups, *wb),
                     lambda x, *wb: TF.group_norm(x, groups, *wb), **_tol(np.float64))


@settings(max_examples=10, deadline=None)
@given(st.integers(2, 4), st.integers(1, 3), st.lists(st.integers(1, 3), max_size=2), st.booleans())
def test_batch_norm_random_shapes(n, c, spatial, affine):
    shape = (n, c, *spatial)
    helper_test_grad(_arrays(shape, np.float64, n + c, affine),
                     lambda x, *wb: F.batch_norm(x, None, None, *wb, training=True),
                     lambda x, *wb: TF.batch_norm(x, None, None, *wb, training=True), **_tol(np.float64))


def test_normalization_graph_and_no_grad():
    x = tt.ones(2, 2, 3, requires_grad=True)
    assert F.group_norm(x, 1).grad_fn is not None
    assert F.batch_norm(x, None, None, training=True).grad_fn is not None
    with tt.no_grad():
        assert not F.group_norm(x, 2).requires_grad


def test_normalization_errors():
    x = np.ones((2, 4, 3), np.float32)
    helper_test_exception([x], lambda a: F.group_norm(a, 3), lambda a: TF.group_norm(a, 3), exception=RuntimeError,
                          match="group_norm: Expected number of channels in input to be divisible by num_groups")
    helper_test_exception([np.ones((1, 3), np.float32)],
                          lambda a: F.batch_norm(a, None, None, training=True),
                          lambda a: TF.batch_norm(a, None, None, training=True), exception=ValueError,
                          match="batch_norm: Expected more than 1 value per channel when training")
    helper_test_exception([np.ones((1, 2), np.float32)], lambda a: F.group_norm(a, 2),
                          lambda a: TF.group_norm(a, 2), exception=ValueError,
                          match="group_norm: Expected more than 1 value per channel when training")
    with pytest.raises(RuntimeError, match="batch_norm: expected weight of size \\[4\\]"):
        F.batch_norm(tt.tensor(x), None, None, tt.ones(3), training=True)
    with pytest.raises(RuntimeError, match="batch_norm: running_mean and running_var must be defined"):
        F.batch_norm(tt.tensor(x), None, None)
    with pytest.raises(RuntimeError, match="group_norm: expected bias of dtype float32"):
        F.group_norm(tt.tensor(x), 2, None, tt.ones(4, dtype=tt.float64))
    helper_test_exception([np.ones(4, np.float32)], lambda a: F.group_norm(a, 1), lambda a: TF.group_norm(a, 1),
                          exception=RuntimeError,
                          match="group_norm: Expected at least 2 dimensions for input tensor but received 1")
    for training, eps, match in ((True, 0.0, "eps must be positive during training"),
                                 (False, -1.0, "eps must be non-negative")):
        helper_test_exception([x], lambda a, t=training, e=eps: F.batch_norm(a, tt.zeros(4), tt.ones(4), training=t,
                                                                            eps=e),
                              lambda a, t=training, e=eps: TF.batch_norm(a, torch.zeros(4), torch.ones(4),
                                                                        training=t, eps=e),
                              exception=ValueError, match=f"batch_norm: {match}")
    with pytest.raises(NotImplementedError, match="batch_norm: not implemented for int64"):
        F.batch_norm(tt.ones(2, 2, dtype=tt.int64), None, None, training=True)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_second_order(training):
    arrays = _arrays((3, 2, 4), np.float64, 8, True)
    stats = [np.array([0.5, -1.0]), np.array([2.0, 0.5])]

    def run(lib, fn):
        return lambda x, w, b: fn(x, *(lib.tensor(s.copy()) for s in stats), w, b, training=training)

    helper_test_grad(arrays, run(tt, F.batch_norm), run(torch, TF.batch_norm), create_graph=True,
                     **_tol(np.float64))


def test_group_norm_second_order():
    helper_test_grad(_arrays((2, 4, 3), np.float64, 9, True), lambda x, w, b: F.group_norm(x, 2, w, b),
                     lambda x, w, b: TF.group_norm(x, 2, w, b), create_graph=True, **_tol(np.float64))


def test_float16():
    arrays = [a.astype(np.float16) for a in _arrays((4, 3, 5), np.float32, 10, True)]
    helper_test_grad(arrays, lambda x, w, b: F.group_norm(x, 3, w, b), lambda x, w, b: TF.group_norm(x, 3, w, b),
                     atol=3e-2, rtol=2e-2)
    helper_test_grad(arrays, lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                     lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), atol=3e-2, rtol=2e-2)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_kernel_large_and_threaded(dtype, training):
    """(6, 4, 40, 40): 1600 values per image and channel cross the kernel's 512-value sum blocks,
    and 38400 elements split the channels across two threads; a mean of ~100 checks the two-pass
    variance."""
    shape = (6, 4, 40, 40)
    arrays = _arrays(shape, dtype, 11, True)
    arrays[0] += 100
    stats = [np.full(4, 100, dtype), np.full(4, 4, dtype)]

    def run(lib, fn):
        return lambda x, w, b: fn(x, *(lib.tensor(s.copy()) for s in stats), w, b, training=training)

    with num_threads(2):
        helper_test_grad(arrays, run(tt, F.batch_norm), run(torch, TF.batch_norm),
                         **_tol(dtype))


def test_batch_norm_strided_operands():
    """A channels-last input (a permuted view), a gradient that arrives through a transpose, and
    per-channel tensors that are strided slices (these take the tensor-op path): all against
    torch."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((3, 5, 4, 2))  # (N, H, W, C) in memory
    wb = rng.standard_normal((2, 4))        # weight and bias are every other element of a row

    def run(lib):
        def call(x, wb):
            return lib.nn.functional.batch_norm(x.permute(0, 3, 1, 2), None, None, wb[0, ::2], wb[1, ::2],
                                                training=True).transpose(2, 3) * 2
        return call

    helper_test_grad([x, wb], run(tt), run(torch), **_tol(np.float64))


def test_batch_norm_no_grad_matches_recorded():
    """The no-grad call (no x_hat kept) and the recorded one give the same output and the same
    running statistics."""
    x = np.random.default_rng(13).standard_normal((4, 3, 6)).astype(np.float32)
    outs, stats = [], []
    for grad in (False, True):
        mean, var = tt.zeros(3), tt.ones(3)
        with tt.set_grad_enabled(grad):
            outs.append(np.asarray(F.batch_norm(tt.tensor(x, requires_grad=True), mean, var,
                                                training=True).detach()))
        stats.append((np.asarray(mean), np.asarray(var)))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(stats[0][0], stats[1][0])
    np.testing.assert_array_equal(stats[0][1], stats[1][1])
