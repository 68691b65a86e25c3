"""Gradients of convolution and pooling (t_tensor.nn.functional) against PyTorch: values and the
gradients of input, weight and bias, over strides, padding, dilation, groups (depthwise too),
1-D and 2-D, batched and unbatched, strided inputs and gradients, float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import t_tensor as tt
import t_tensor.nn.functional as F
from tests.helpers import helper_test_exception, helper_test_grad

DTYPES = (np.float32, np.float64)


def _tol(dtype: type) -> dict:
    return {"atol": 2e-4, "rtol": 2e-4} if dtype == np.float32 else {"atol": 1e-10, "rtol": 1e-9}


def _conv_case(nd: int, n: int | None, c_in: int, c_out: int, size: int, k: int, groups: int, bias: bool,
               dtype: type, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x_shape = ((n,) if n is not None else ()) + (c_in,) + (size,) * nd
    arrays = [rng.standard_normal(x_shape).astype(dtype),
              rng.standard_normal((c_out, c_in // groups) + (k,) * nd).astype(dtype)]
    if bias:
        arrays.append(rng.standard_normal(c_out).astype(dtype))
    return arrays


CONV_CASES = [
    # nd, n, c_in, c_out, size, k, kwargs
    (2, 2, 3, 4, 6, 3, {}),
    (2, 2, 3, 4, 7, 3, {"stride": 2, "padding": 1}),
    (2, 1, 2, 2, 7, 2, {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    (2, 2, 4, 6, 6, 3, {"groups": 2, "padding": "same"}),
    (2, 2, 4, 4, 5, 3, {"groups": 4, "padding": 1}),          # depthwise
    (2, 2, 3, 6, 5, 3, {"groups": 3, "stride": 2}),           # depthwise, channel multiplier 2
    (2, None, 3, 2, 5, 2, {"padding": "valid"}),               # unbatched
    (2, 2, 2, 3, 8, 3, {"dilation": 2, "padding": 2, "stride": 3}),
    (2, 4, 8, 8, 12, 3, {"padding": 1}),                       # enough work for several threads
    (1, 2, 3, 4, 9, 3, {}),
    (1, 3, 4, 4, 10, 3, {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}),
    (1, 2, 3, 3, 6, 4, {"groups": 3, "padding": "same"}),     # 1-D depthwise, even kernel
    (1, None, 2, 3, 5, 2, {"stride": 2}),                      # unbatched 1-D
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's own performance note
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_grad(case, bias, dtype):
    nd, n, c_in, c_out, size, k, kwargs = case
    arrays = _conv_case(nd, n, c_in, c_out, size, k, kwargs.get("groups", 1), bias, dtype, seed=CONV_CASES.index(case))
    tt_fn = getattr(F, f"conv{nd}d")
    th_fn = getattr(TF, f"conv{nd}d")
    helper_test_grad(arrays, lambda *a: tt_fn(*a, **kwargs), lambda *a: th_fn(*a, **kwargs), **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_grad_strided_operands(dtype):
    """A transposed input and weight, and a gradient that arrives transposed (and expanded through
    a sum): the kernels read every operand through its strides."""
    arrays = _conv_case(2, 2, 4, 4, 6, 3, 2, True, dtype, seed=7)

    def fn(lib, conv):
        def run(x, w, b):
            y = conv(x.transpose(2, 3), w.transpose(2, 3), b, padding=1, groups=2)
            return y.transpose(2, 3) * 1.5, y.sum(2)
        return run

    helper_test_grad(arrays, fn(tt, F.conv2d), fn(torch, TF.conv2d), **_tol(dtype))


@pytest.mark.parametrize("which", [(True, False, False), (False, True, False), (False, False, True)])
def test_conv_grad_only_some_inputs(which):
    arrays = _conv_case(2, 2, 2, 2, 5, 3, 1, True, np.float64, seed=3)
    helper_test_grad(arrays, lambda *a: F.conv2d(*a, padding=1), lambda *a: TF.conv2d(*a, padding=1),
                     grad_inputs=list(which), **_tol(np.float64))


# Small planes (one block of positions an image) with products big enough for the GEMM path: the
# gradients take a batch of images per product (their positions side by side), each worker its
# share of the images (7 over 2 threads: 3 and 4); with stride and dilation 1, im2col and col2im go
# through a zero-padded copy of each plane (rows narrower than 8 position by position, wider ones
# as runs).
BATCH_CASES = [
    # nd, n, c_in, c_out, size, k, kwargs
    (2, 6, 16, 8, 4, 3, {"padding": 1}),
    (2, 7, 16, 16, 3, 3, {"padding": 1, "groups": 2}),
    (2, 5, 8, 12, 2, 3, {"padding": 2}),
    (1, 4, 16, 8, 5, 3, {"padding": 1}),
    (2, 3, 16, 8, 9, 3, {"padding": 1}),                  # 9-wide rows: runs
    (2, 3, 8, 16, 6, 3, {"padding": (2, 0)}),
    (2, 1, 16, 8, 4, 3, {"padding": 2}),                  # one image: a batch of one
    (2, 4, 16, 8, 6, 3, {"stride": 2, "padding": 1}),     # stride 2: batches, the general im2col
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BATCH_CASES)
def test_conv_grad_batches_images_per_product(case, dtype, threads):
    nd, n, c_in, c_out, size, k, kwargs = case
    arrays = _conv_case(nd, n, c_in, c_out, size, k, kwargs.get("groups", 1), True, dtype, seed=BATCH_CASES.index(case))
    tt_fn, th_fn = getattr(F, f"conv{nd}d"), getattr(TF, f"conv{nd}d")

    def fn(lib, conv):
        def run(x, w, b):  # also a transposed input and a gradient that arrives transposed
            y = conv(x.transpose(-1, -2) if nd == 2 else x, w, b, **kwargs)
            return y.transpose(-1, -2) * 1.5 if nd == 2 else y * 1.5
        return run

    before = tt.get_num_threads()
    tt.set_num_threads(threads)
    try:
        helper_test_grad(arrays, fn(tt, tt_fn), fn(torch, th_fn), **_tol(dtype))
    finally:
        tt.set_num_threads(before)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_conv_grad_random_geometry(data):
    nd = data.draw(st.sampled_from([1, 2]))
    groups = data.draw(st.integers(1, 3))
    c_in, c_out = groups * data.draw(st.integers(1, 2)), groups * data.draw(st.integers(1, 2))
    k, s, d = (data.draw(st.integers(1, 3)) for _ in range(3))
    p = data.draw(st.integers(0, (d * (k - 1)) // 2 + 1))
    size = data.draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 7))
    n = data.draw(st.sampled_from([None, 1, 3]))
    arrays = _conv_case(nd, n, c_in, c_out, size, k, groups, data.draw(st.booleans()), np.float64, seed=size)
    kwargs = {"stride": s, "padding": p, "dilation": d, "groups": groups}
    tt_fn, th_fn = getattr(F, f"conv{nd}d"), getattr(TF, f"conv{nd}d")
    helper_test_grad(arrays, lambda *a: tt_fn(*a, **kwargs), lambda *a: th_fn(*a, **kwargs), **_tol(np.float64))


def test_conv_empty_batch_grad():
    x = tt.zeros(0, 2, 4, 4, requires_grad=True)
    w = tt.ones(3, 2, 3, 3, requires_grad=True)
    b = tt.ones(3, requires_grad=True)
    F.conv2d(x, w, b).sum().backward()
    assert x.grad.shape == (0, 2, 4, 4)
    assert w.grad.tolist() == np.zeros((3, 2, 3, 3)).tolist()
    assert b.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("case", [CONV_CASES[i] for i in (1, 2, 5, 6, 10, 12)])
def test_conv_second_order(case):
    """create_graph: the gradient kernels are differentiable again (each one's derivative is the
    convolution or the other kernel)."""
    nd, n, c_in, c_out, size, k, kwargs = case
    arrays = _conv_case(nd, n, c_in, c_out, size, k, kwargs.get("groups", 1), True, np.float64, seed=11)
    tt_fn, th_fn = getattr(F, f"conv{nd}d"), getattr(TF, f"conv{nd}d")
    helper_test_grad(arrays, lambda *a: tt_fn(*a, **kwargs), lambda *a: th_fn(*a, **kwargs), create_graph=True,
                     **_tol(np.float64))


def test_conv_third_order():
    x, w = _conv_case(2, 2, 2, 2, 5, 3, 1, False, np.float64, seed=12)

    def grads(lib, conv):
        tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = (conv(tx, tw, padding=1) ** 2).sum()
        (gx,) = lib.autograd.grad(y, [tx], create_graph=True)
        (gw,) = lib.autograd.grad((gx * gx).sum(), [tw], create_graph=True)
        (gxx,) = lib.autograd.grad(gw.sum(), [tx])
        return gw, gxx

    for ours, theirs in zip(grads(tt, F.conv2d), grads(torch, TF.conv2d), strict=True):
        np.testing.assert_allclose(np.asarray(ours.detach()), theirs.detach().numpy(), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------- pooling


def _pool_input(shape: tuple[int, ...], dtype: type, seed: int, ties: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if ties:  # few distinct values: windows with several maxima
        return rng.integers(0, 3, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


MAX_POOL_CASES = [
    # nd, shape, kwargs
    (2, (2, 3, 6, 6), {"kernel_size": 2}),
    (2, (2, 2, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    (2, (1, 2, 7, 7), {"kernel_size": (3, 2), "stride": (1, 2), "dilation": (2, 1), "ceil_mode": True}),
    (2, (2, 5, 5), {"kernel_size": 3, "stride": 1}),            # unbatched, overlapping windows
    (2, (2, 2, 6, 7), {"kernel_size": 2, "stride": 3, "padding": 1, "ceil_mode": True}),
    (1, (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}),
    (1, (2, 8), {"kernel_size": 2, "ceil_mode": True, "dilation": 2}),
]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", MAX_POOL_CASES)
def test_max_pool_grad(case, dtype, ties):
    nd, shape, kwargs = case
    x = _pool_input(shape, dtype, seed=len(shape) + int(ties), ties=ties)
    tt_fn, th_fn = getattr(F, f"max_pool{nd}d"), getattr(TF, f"max_pool{nd}d")
    helper_test_grad([x], lambda a: tt_fn(a, **kwargs), lambda a: th_fn(a, **kwargs), **_tol(dtype))


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_pool_grad_random_geometry(data):
    """Random windows (kernel, stride, padding up to half the window, dilation, ceil mode) for max
    and average pooling, with few distinct values so that maxima tie."""
    nd = data.draw(st.sampled_from([1, 2]))
    kind = data.draw(st.sampled_from(["max", "avg"]))
    k = data.draw(st.integers(1, 3))
    d = data.draw(st.integers(1, 2)) if kind == "max" else 1
    p = data.draw(st.integers(0, k // 2))
    s = data.draw(st.integers(1, 3))
    size = data.draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 7))
    ceil_mode = data.draw(st.booleans())
    kwargs = {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil_mode}
    if kind == "max":
        kwargs["dilation"] = d
    else:
        kwargs["count_include_pad"] = data.draw(st.booleans())
    shape = data.draw(st.sampled_from([(2, 2), (3,)])) + (size,) * nd
    x = _pool_input(shape, np.float64, seed=size + k, ties=kind == "max")
    name = f"{kind}_pool{nd}d"
    if kind == "max":  # a window past the plane: PyTorch writes out of bounds (tested separately above)
        _, indices = F.max_pool2d(tt.tensor(x), **kwargs, return_indices=True) if nd == 2 else F.max_pool1d(
            tt.tensor(x), **kwargs, return_indices=True)
        assume(not (np.asarray(indices) >= size**nd).any())
    helper_test_grad([x], lambda a: getattr(F, name)(a, **kwargs), lambda a: getattr(TF, name)(a, **kwargs))


def test_max_pool_grad_window_in_padding():
    """A window wholly in the padding (dilation 2 skips the only column) gives -inf and the index of
    its clamped start, here the next row's pixel: its gradient goes there, as in PyTorch."""
    x = _pool_input((1, 1, 2, 1), np.float64, seed=3)
    kwargs = {"kernel_size": (1, 2), "stride": 1, "padding": (0, 1), "dilation": (1, 2)}
    helper_test_grad([x], lambda a: F.max_pool2d(a, **kwargs), lambda a: TF.max_pool2d(a, **kwargs))


@pytest.mark.parametrize("nd, shape, kwargs", [
    (1, (2, 2, 1), {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2}),
    (2, (1, 2, 1, 3), {"kernel_size": 2, "stride": 2, "padding": 1, "dilation": 2}),
])
def test_max_pool_grad_window_past_the_plane(nd, shape, kwargs):
    """When that clamped start is past the plane, the gradient is dropped. (PyTorch 2.13 instead
    adds it into the next plane's memory, or past the tensor for the last plane, and can crash:
    not reproduced.) Values and indices still agree with PyTorch."""
    x = _pool_input(shape, np.float64, seed=3)
    tt_fn, th_fn = getattr(F, f"max_pool{nd}d"), getattr(TF, f"max_pool{nd}d")
    ours = tt.tensor(x, requires_grad=True)
    values, indices = tt_fn(ours, **kwargs, return_indices=True)
    expected_values, expected_indices = th_fn(torch.tensor(x), **kwargs, return_indices=True)
    np.testing.assert_array_equal(np.asarray(values.detach()), expected_values.numpy())
    np.testing.assert_array_equal(np.asarray(indices), expected_indices.numpy())
    assert (np.asarray(indices) >= np.prod(shape[-nd:])).any()   # the case under test
    (values * 2).sum().backward()
    assert np.asarray(ours.grad).tolist() == np.zeros(shape).tolist()
    (g,) = tt.autograd.grad((tt_fn(ours, **kwargs) ** 2).sum(), [ours], create_graph=True)
    assert np.asarray(g.detach()).tolist() == np.zeros(shape).tolist()


@pytest.mark.parametrize("nd, match", [(1, "max_pool1d: padding should be at most half of kernel size"),
                                       (2, "max_pool2d: pad should be smaller than or equal to half of kernel size")])
def test_max_pool_padding_rule(nd, match):
    """PyTorch's max pooling bounds the padding by half the kernel size, whatever the dilation (a
    forward check: with the dilated window's half only, a window could lie wholly in the padding)."""
    x = np.ones((1, 2) + (6,) * nd, np.float32)
    tt_fn, th_fn = getattr(F, f"max_pool{nd}d"), getattr(TF, f"max_pool{nd}d")
    helper_test_exception([x], lambda a: tt_fn(a, 3, 1, 2, 2), lambda a: th_fn(a, 3, 1, 2, 2),
                          exception=RuntimeError, match=match)
    helper_test_exception([x], lambda a: tt_fn(a, 3, 1, 2, 1), lambda a: th_fn(a, 3, 1, 2, 1),
                          exception=RuntimeError, match="padding should be at most half|at most half of effective")


def test_max_pool_grad_with_indices():
    x = _pool_input((2, 2, 5, 6), np.float64, seed=1, ties=True)
    kwargs = {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True}
    helper_test_grad([x], lambda a: F.max_pool2d(a, **kwargs), lambda a: TF.max_pool2d(a, **kwargs))
    values, indices = F.max_pool2d(tt.tensor(x, requires_grad=True), **kwargs)
    assert values.requires_grad and not indices.requires_grad


AVG_POOL_CASES = [
    (2, (2, 3, 6, 6), {"kernel_size": 2}),
    (2, (2, 2, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    (2, (2, 2, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    (2, (1, 2, 6, 7), {"kernel_size": (3, 2), "stride": 2, "padding": 1, "ceil_mode": True}),
    (2, (1, 2, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    (2, (2, 5, 5), {"kernel_size": 3, "stride": 1, "divisor_override": 4}),   # unbatched
    (2, (2, 2, 5, 5), {"kernel_size": 2, "stride": 3, "padding": 1, "ceil_mode": True, "divisor_override": 3}),
    (1, (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}),
    (1, (2, 3, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    (1, (3, 7), {"kernel_size": 2, "stride": 1}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", AVG_POOL_CASES)
def test_avg_pool_grad(case, dtype):
    nd, shape, kwargs = case
    x = _pool_input(shape, dtype, seed=len(shape))
    tt_fn, th_fn = getattr(F, f"avg_pool{nd}d"), getattr(TF, f"avg_pool{nd}d")
    helper_test_grad([x], lambda a: tt_fn(a, **kwargs), lambda a: th_fn(a, **kwargs), **_tol(dtype))


ADAPTIVE_CASES = [
    (2, (2, 3, 7, 5), 3),
    (2, (2, 3, 4, 6), (5, None)),        # upsampling rows: overlapping windows
    (2, (2, 6, 6), 1),                   # unbatched, global pooling
    (2, (1, 2, 5, 7), (2, 4)),
    (1, (2, 3, 10), 4),
    (1, (3, 4), 6),
]


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ADAPTIVE_CASES)
def test_adaptive_pool_grad(case, dtype, kind):
    nd, shape, size = case
    x = _pool_input(shape, dtype, seed=len(shape), ties=kind == "max")
    tt_fn, th_fn = getattr(F, f"adaptive_{kind}_pool{nd}d"), getattr(TF, f"adaptive_{kind}_pool{nd}d")
    helper_test_grad([x], lambda a: tt_fn(a, size), lambda a: th_fn(a, size), **_tol(dtype))


def test_adaptive_max_pool_grad_with_indices():
    x = _pool_input((2, 3, 7), np.float32, seed=0)
    helper_test_grad([x], lambda a: F.adaptive_max_pool1d(a, 3, return_indices=True),
                     lambda a: TF.adaptive_max_pool1d(a, 3, return_indices=True), **_tol(np.float32))


def test_pool_grad_strided_gradient():
    """A gradient that arrives transposed and expanded (the backward of transpose and of sum)."""
    x = _pool_input((2, 3, 6, 6), np.float64, seed=5)

    def fn(mod):
        def run(a):
            y = mod.avg_pool2d(a.transpose(2, 3), 3, stride=1, padding=1)
            z = mod.max_pool2d(a, 2)
            return y.transpose(2, 3), z.sum((0, 1)), mod.adaptive_avg_pool2d(a, 2).transpose(0, 1)
        return run

    helper_test_grad([x], fn(F), fn(TF))


@pytest.mark.parametrize("name, args", [
    ("max_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool1d", {"kernel_size": 2, "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ("avg_pool1d", {"kernel_size": 3, "stride": 1, "padding": 1}),
    ("adaptive_avg_pool2d", {"output_size": (3, 2)}),
    ("adaptive_max_pool1d", {"output_size": 4}),
])
def test_pool_second_order(name, args):
    """The pooling gradients are linear in grad: second derivatives through a nonlinearity of the
    first-order gradient (here, its square) still need their own derivatives."""
    nd = int(name[-2])
    x = _pool_input((2, 2) + (7,) * nd, np.float64, seed=9)

    def fn(mod, lib):
        def run(a):
            y = getattr(mod, name)(a, **args)
            (g,) = lib.autograd.grad((y * y).sum(), [a], create_graph=True)
            return g * g
        return run

    helper_test_grad([x], fn(F, tt), fn(TF, torch))


@pytest.mark.parametrize("name, args", [("max_pool2d", (2,)), ("avg_pool1d", (2,)), ("adaptive_max_pool2d", (2,)),
                                        ("adaptive_avg_pool1d", (3,))])
def test_pool_grad_empty_batch(name, args):
    nd = int(name[-2])
    x = np.zeros((0, 2) + (4,) * nd, np.float32)
    helper_test_grad([x], lambda a: getattr(F, name)(a, *args), lambda a: getattr(TF, name)(a, *args))


@pytest.mark.parametrize("name, args", [("conv2d", ()), ("max_pool2d", (2,)), ("avg_pool2d", (3, 1, 1)),
                                        ("adaptive_avg_pool2d", (3,)), ("adaptive_max_pool2d", (2,))])
def test_float16_grads(name, args):
    """float16 gradients (computed in float32 in the kernels) against torch's float16."""
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 6, 6)).astype(np.float16)
    inputs = [x, np.random.default_rng(1).uniform(-1, 1, (4, 3, 3, 3)).astype(np.float16)] if name == "conv2d" else [x]
    helper_test_grad(inputs, lambda *a: getattr(F, name)(*a, *args), lambda *a: getattr(TF, name)(*a, *args),
                     atol=2e-2, rtol=1e-2, grad_inputs=[True] * len(inputs))


def test_pool_no_grad_outside_grad_mode():
    x = tt.ones(1, 1, 4, 4, requires_grad=True)
    with tt.no_grad():
        assert not F.max_pool2d(x, 2).requires_grad
        assert not F.conv2d(x, tt.ones(1, 1, 2, 2)).requires_grad
    assert F.adaptive_avg_pool2d(x, 2).grad_fn is not None


INTERPOLATE_CASES = [
    ((2, 3, 5, 4), {"size": (7, 3), "mode": "bilinear"}),
    ((2, 3, 5, 4), {"scale_factor": 1.7, "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 4), {"scale_factor": (0.6, 2.0), "mode": "bilinear", "recompute_scale_factor": True}),
    ((2, 3, 5, 4), {"size": (3, 9), "mode": "nearest"}),
    ((1, 2, 4, 4), {"scale_factor": 2, "mode": "nearest"}),
    ((2, 3, 6), {"scale_factor": 2.5, "mode": "linear"}),
    ((2, 3, 6), {"size": 4, "mode": "nearest"}),
]


@pytest.mark.parametrize("shape, kwargs", INTERPOLATE_CASES)
def test_interpolate_gradient_matches_torch(shape, kwargs):
    """interpolate is linear and separable: with grad it runs as products with per-dimension
    interpolation matrices read off the forward kernel; values, gradients and (zero) second
    derivatives as torch."""
    x = np.random.default_rng(0).standard_normal(shape)
    helper_test_grad([x], lambda t: (tt if isinstance(t, tt.Tensor) else torch).nn.functional.interpolate(
        t, **kwargs), atol=1e-10, rtol=1e-9, create_graph=True)
    with tt.no_grad():
        assert not F.interpolate(tt.ones(*shape, requires_grad=True), **kwargs).requires_grad
