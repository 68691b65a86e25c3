"""Convolution, pooling and resampling (``t_tensor.nn.functional``) against ``torch.nn.functional``.

Each test draws a configuration with hypothesis (batch, channels, sizes, kernel, stride, padding,
dilation, groups, ceil_mode, ...), an input memory layout (contiguous, transposed, step-sliced,
expanded; also unbatched inputs) and a float dtype, runs the same call through ``lib.nn.functional``
for ``lib`` in (t_tensor, torch) on the same NumPy data, and compares shape, dtype and values
(indices exactly). When torch rejects a drawn configuration (a kernel larger than the padded
input, a padding over half the kernel, ...), t_tensor must reject it too, with a RuntimeError
whose message starts with the function's name. Named error cases go through
``helper_test_exception``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import LAYOUTS, apply_layout, base_shape, helper_test_exception, helper_test_op
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt

FLOATS = [tt.float16, tt.float32, tt.float64]
TORCH_OF = {tt.float16: torch.float16, tt.float32: torch.float32, tt.float64: torch.float64}
EXAMPLES = 15  # hypothesis examples per test and dtype
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")  # torch's note on a copy


def tol(dtype: tt.DType, terms: int = 1) -> tuple[float, float]:
    """(atol, rtol) for a result that sums ``terms`` products of values of magnitude about 1.
    float16: both libraries accumulate in float32 and round once, so a rounding boundary can put
    them one half-precision step apart."""
    if dtype is tt.float16:
        return 2e-3 * max(1, terms) ** 0.5, 2e-3
    if dtype is tt.float32:
        return 2e-6 * max(1, terms) ** 0.5, 1e-5
    return 1e-13 * max(1, terms), 1e-12


def data(seed: int, shape: tuple[int, ...], dtype: tt.DType) -> np.ndarray:
    """Normal values with a share snapped to multiples of 0.5 (ties for max pooling)."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    values = np.where(rng.random(shape) < 0.25, np.round(values * 2) / 2, values)
    return values.astype(dtype.numpy)


def run(fn, arrays: list[np.ndarray], dtype: tt.DType, terms: int = 1):
    """``fn(lib, *tensors)`` through t_tensor and torch. If torch raises, t_tensor must raise a
    RuntimeError naming the function; else results must agree (tuples element by element, int64
    index tensors exactly). Returns the t_tensor result or None."""
    try:
        want = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays])
    except (RuntimeError, ValueError) as error:
        with pytest.raises(RuntimeError) as caught:
            fn(tt, *[tt.tensor(a.copy()) for a in arrays])
        assert str(caught.value).split(":")[0] in FUNCTION_NAMES, (str(caught.value), str(error))
        return None
    atol, rtol = tol(dtype, terms)
    got = helper_test_op(arrays, lambda *xs: fn(tt, *xs), lambda *xs: fn(torch, *xs), ref="torch", atol=atol,
                         rtol=rtol)
    if isinstance(want, tuple):
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    return got


FUNCTION_NAMES = {
    "conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "interpolate",
}  # fmt: skip


@st.composite
def layout_input(draw, nd: int, min_size: int = 1, max_size: int = 6, channels: int | None = None,
                 batch_optional: bool = True):
    """(shape, layout, base array shape): a batched (N, C, *spatial) or, sometimes, unbatched shape."""
    n = draw(st.integers(0, 2))
    c = channels if channels is not None else draw(st.integers(1, 3))
    spatial = tuple(draw(st.integers(min_size, max_size)) for _ in range(nd))
    unbatched = batch_optional and draw(st.booleans())
    shape = ((c,) if unbatched else (n, c)) + spatial
    layout = draw(st.sampled_from(LAYOUTS))
    return shape, layout, base_shape(shape, layout)


def laid_out(x, layout: str, shape: tuple[int, ...]):
    out = apply_layout(x, layout, shape)
    assert tuple(out.shape) == shape
    return out


# ---------------------------------------------------------------------- convolution


@st.composite
def conv_config(draw, nd: int):
    groups = draw(st.integers(1, 3))
    cin_g, cout_g = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    shape, layout, base = draw(layout_input(nd, min_size=0, channels=groups * cin_g))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride = draw(st.one_of(st.integers(1, 3), st.tuples(*[st.integers(1, 3)] * nd)))
    dilation = draw(st.one_of(st.integers(1, 2), st.tuples(*[st.integers(1, 2)] * nd)))
    padding = draw(st.one_of(st.integers(0, 2), st.tuples(*[st.integers(0, 2)] * nd), st.just("valid"),
                             st.just("same")))
    if padding == "same":
        stride = 1
    w_shape = (groups * cout_g, cin_g) + kernel
    return dict(shape=shape, layout=layout, base=base, w_shape=w_shape, groups=groups, stride=stride,
                dilation=dilation, padding=padding, bias=draw(st.booleans()),
                w_layout=draw(st.sampled_from(["contiguous", "transposed"])),
                b_layout=draw(st.sampled_from(["contiguous", "sliced", "expanded"])))


def check_conv(nd: int, cfg: dict, dtype: tt.DType, seed: int) -> None:
    w_base = base_shape(cfg["w_shape"], cfg["w_layout"])
    b_shape = (cfg["w_shape"][0],)
    b_base = base_shape(b_shape, cfg["b_layout"])
    arrays = [data(seed, cfg["base"], dtype), data(seed + 1, w_base, dtype), data(seed + 2, b_base, dtype)]

    def fn(lib, x, w, b):
        f = lib.nn.functional.conv1d if nd == 1 else lib.nn.functional.conv2d
        half_in_torch = lib is torch and x.dtype == torch.float16
        if half_in_torch:
            # torch 2.13's float16 CPU convolution crashes the process on some configurations (conv1d
            # of a (2, 2, 1) input, stride 2, padding 1, dilation 2 segfaults): the reference is
            # computed in float32 and rounded to float16, which is how torch's own kernel accumulates.
            x, w, b = x.float(), w.float(), b.float()
        bias = laid_out(b, cfg["b_layout"], b_shape) if cfg["bias"] else None
        result = f(laid_out(x, cfg["layout"], cfg["shape"]), laid_out(w, cfg["w_layout"], cfg["w_shape"]), bias,
                   stride=cfg["stride"], padding=cfg["padding"], dilation=cfg["dilation"], groups=cfg["groups"])
        return result.half() if half_in_torch else result

    terms = int(np.prod(cfg["w_shape"][1:])) + 1
    run(fn, arrays, dtype, terms)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(cfg=conv_config(2), seed=st.integers(0, 2**16))
def test_conv2d(dtype, cfg, seed):
    check_conv(2, cfg, dtype, seed)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(cfg=conv_config(1), seed=st.integers(0, 2**16))
def test_conv1d(dtype, cfg, seed):
    check_conv(1, cfg, dtype, seed)


# The configuration that crashes torch 2.13's oneDNN convolution (see tests/conftest.py).
ONEDNN_CRASH = dict(shape=(4, 1), layout="transposed", base=(1, 4), w_shape=(4, 2, 1), groups=2, stride=3,
                    dilation=2, padding=2, bias=True, w_layout="contiguous", b_layout="contiguous")
ONEDNN_CRASH_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import conftest  # noqa: F401  (switches oneDNN off, as for every test)
import torch
x = torch.randn(1, 4).permute(1, 0)
torch.nn.functional.conv1d(x, torch.randn(4, 2, 1), torch.randn(4), stride=3, padding=2, dilation=2, groups=2)
print("survived")
"""


def test_torch_reference_survives_onednn_crash():
    """The torch reference runs in a fresh process (the crash is certain there) with the suite's
    torch settings: it must survive the configuration that segfaults oneDNN."""
    tests_dir = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", ONEDNN_CRASH_SCRIPT, tests_dir], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "survived", (done.returncode, done.stderr[-2000:])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_conv1d_onednn_crash_configuration(dtype):
    check_conv(1, ONEDNN_CRASH, dtype, 3)


@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("padding", [0, 1, "same"])
def test_conv2d_depthwise(multiplier, padding):
    cfg = dict(shape=(2, 4, 7, 6), layout="sliced", base=base_shape((2, 4, 7, 6), "sliced"),
               w_shape=(4 * multiplier, 1, 3, 3), groups=4, stride=1, dilation=1, padding=padding, bias=True,
               w_layout="contiguous", b_layout="sliced")
    check_conv(2, cfg, tt.float32, 7)


def test_conv2d_large_is_fast_and_right():
    """(32, 3, 64, 64) with 16 3x3 filters, padding 1: milliseconds, not seconds."""
    x, w, b = data(1, (32, 3, 64, 64), tt.float32), data(2, (16, 3, 3, 3), tt.float32), data(3, (16,), tt.float32)
    X, W, B = tt.tensor(x), tt.tensor(w), tt.tensor(b)
    tt.conv2d(X, W, B, padding=1)  # warm the allocator's cache
    start = time.perf_counter()
    got = tt.conv2d(X, W, B, padding=1)
    elapsed = time.perf_counter() - start
    want = torch.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), padding=1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-4, rtol=1e-5)
    assert elapsed < 0.5, f"conv2d took {elapsed:.3f} s"


def test_conv2d_blocks_of_columns():
    """Many input channels: K = 64 * 9 is large enough that the output positions go in several
    column blocks, and the last block is partial."""
    x, w = data(4, (1, 64, 23, 31), tt.float64), data(5, (5, 64, 3, 3), tt.float64)
    got = tt.conv2d(tt.tensor(x), tt.tensor(w), padding=(1, 2), stride=(1, 1))
    want = torch.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=(1, 2))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-11, rtol=1e-12)


def _gemm_kernels() -> list[str]:
    """The GEMM micro-kernels this CPU can run (each has its own convolution paths)."""
    from t_tensor._capi import ffi, lib

    kernels = [name for name in ("generic", "avx2", "avx512") if lib.tt_gemm_set_kernel(name.encode()) == 0]
    lib.tt_gemm_set_kernel(ffi.NULL)
    return kernels


def test_conv_zero_input_channels_without_addresses():
    """Empty operands may carry no address (torch's empty tensors through DLPack, or storages from
    the host allocator under TT_ALLOCATOR=host): the result is still the bias."""
    x, w = tt.from_dlpack(torch.zeros(2, 0, 4, 4)), tt.from_dlpack(torch.zeros(3, 0, 2, 2))
    assert x.data_ptr() == 0 and w.data_ptr() == 0
    got = tt.conv2d(x, w, tt.tensor([1.0, 2.0, 3.0]))
    assert got.shape == (2, 3, 3, 3) and got[1, :, 2, 2].tolist() == [1.0, 2.0, 3.0]
    got = tt.conv1d(tt.from_dlpack(torch.zeros(1, 0, 3)), tt.from_dlpack(torch.zeros(2, 0, 2)), tt.tensor([4.0, 5.0]))
    assert got.tolist() == [[[4.0, 4.0], [5.0, 5.0]]]


@pytest.mark.parametrize("kernel", _gemm_kernels())
def test_conv_zero_input_channels(kernel):
    """No input channels (PyTorch returns an empty (N, 0, ...) tensor here): every output is the
    bias, the empty sum being 0. Rows of 8 or more outputs too, which every direct kernel takes
    (the AVX2 one divided by the channel count: a review found the process killed by SIGFPE)."""
    from t_tensor._capi import ffi, lib

    assert lib.tt_gemm_set_kernel(kernel.encode()) == 0
    try:
        got = tt.conv2d(tt.zeros(2, 0, 4, 4), tt.zeros(3, 0, 2, 2), tt.tensor([1.0, 2.0, 3.0]))
        assert got.shape == (2, 3, 3, 3)
        assert got[1, :, 2, 2].tolist() == [1.0, 2.0, 3.0]
        got = tt.conv2d(tt.zeros(1, 0, 8, 20), tt.zeros(4, 0, 1, 1), tt.tensor([1.0, 2.0, 3.0, 4.0]))
        assert got.shape == (1, 4, 8, 20) and got[0, :, 7, 19].tolist() == [1.0, 2.0, 3.0, 4.0]
        got = tt.conv1d(tt.zeros(2, 0, 30), tt.zeros(2, 0, 3), tt.tensor([5.0, 6.0]), padding=1)
        assert got.shape == (2, 2, 30) and got[1, :, 0].tolist() == [5.0, 6.0]
    finally:
        lib.tt_gemm_set_kernel(ffi.NULL)


# ---------------------------------------------------------------------- pooling


@st.composite
def pool_config(draw, nd: int):
    shape, layout, base = draw(layout_input(nd, min_size=1, max_size=7))
    ints = lambda lo, hi: st.one_of(st.integers(lo, hi), st.tuples(*[st.integers(lo, hi)] * nd))  # noqa: E731
    return dict(shape=shape, layout=layout, base=base, kernel=draw(ints(1, 3)),
                stride=draw(st.one_of(st.none(), ints(1, 3))), padding=draw(ints(0, 1)), dilation=draw(ints(1, 2)),
                ceil_mode=draw(st.booleans()))


@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(cfg=pool_config(2), seed=st.integers(0, 2**16), return_indices=st.booleans())
def test_max_pool(nd, dtype, cfg, seed, return_indices):
    if nd == 1:
        cfg = {**cfg, **{k: cfg[k] if isinstance(cfg[k], int) or cfg[k] is None else cfg[k][:1]
                         for k in ("kernel", "stride", "padding", "dilation")}}
        cfg["shape"] = cfg["shape"][:-1]
        cfg["base"] = base_shape(cfg["shape"], cfg["layout"])
    arrays = [data(seed, cfg["base"], dtype)]

    def fn(lib, x):
        f = lib.nn.functional.max_pool1d if nd == 1 else lib.nn.functional.max_pool2d
        return f(laid_out(x, cfg["layout"], cfg["shape"]), cfg["kernel"], cfg["stride"], cfg["padding"],
                 cfg["dilation"], cfg["ceil_mode"], return_indices)

    run(fn, arrays, dtype)


@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(cfg=pool_config(2), seed=st.integers(0, 2**16), include_pad=st.booleans(),
       divisor=st.one_of(st.none(), st.integers(1, 5)))
def test_avg_pool(nd, dtype, cfg, seed, include_pad, divisor):
    if nd == 1:
        cfg = {**cfg, **{k: cfg[k] if isinstance(cfg[k], int) or cfg[k] is None else cfg[k][:1]
                         for k in ("kernel", "stride", "padding")}}
        cfg["shape"] = cfg["shape"][:-1]
        cfg["base"] = base_shape(cfg["shape"], cfg["layout"])
    arrays = [data(seed, cfg["base"], dtype)]

    def fn(lib, x):
        x = laid_out(x, cfg["layout"], cfg["shape"])
        if nd == 1:
            return lib.nn.functional.avg_pool1d(x, cfg["kernel"], cfg["stride"], cfg["padding"], cfg["ceil_mode"],
                                                include_pad)
        return lib.nn.functional.avg_pool2d(x, cfg["kernel"], cfg["stride"], cfg["padding"], cfg["ceil_mode"],
                                            include_pad, divisor)

    run(fn, arrays, dtype, terms=9)


NAN_INF = np.array([[[[1.0, np.nan, 2.0, -np.inf], [np.nan, 0.0, -np.inf, -np.inf], [3.0, 3.0, 1.0, 1.0]]]])


NAN_POOLS = [dict(kernel_size=2), dict(kernel_size=2, stride=1), dict(kernel_size=3, padding=1, stride=1),
             dict(kernel_size=2, dilation=2, padding=1)]


@pytest.mark.parametrize("kwargs", NAN_POOLS)
def test_max_pool_nan_and_infinities(kwargs):
    """NaN wins (its index is reported); -inf windows keep their first element's index."""
    run(lambda lib, t: lib.nn.functional.max_pool2d(t, **kwargs, return_indices=True), [NAN_INF], tt.float64)


@pytest.mark.parametrize("size", [(2, 3), (1, 1), (3, 4)])
def test_adaptive_max_pool_nan_and_infinities(size):
    run(lambda lib, t: lib.nn.functional.adaptive_max_pool2d(t, size, return_indices=True), [NAN_INF], tt.float64)


@pytest.mark.parametrize("max", [False, True])
@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=layout_input(2, max_size=9), seed=st.integers(0, 2**16), out=st.tuples(st.integers(0, 6),
       st.integers(0, 6)), none=st.sampled_from([None, 0, 1]), as_int=st.booleans(), indices=st.booleans())
def test_adaptive_pool(max, nd, dtype, case, seed, out, none, as_int, indices):
    shape, layout, _ = case
    if nd == 1:
        shape, out = shape[:-1], out[:1]
    base = base_shape(shape, layout)
    if nd == 1:
        none = None  # torch's 1-D functions take ints only
    size = out[0] if as_int else tuple(None if i == none else o for i, o in enumerate(out))
    name = f"adaptive_{'max' if max else 'avg'}_pool{nd}d"

    def fn(lib, x):
        f = getattr(lib.nn.functional, name)
        x = laid_out(x, layout, shape)
        return f(x, size, return_indices=indices) if max else f(x, size)

    run(fn, [data(seed, base, dtype)], dtype, terms=9)


# ---------------------------------------------------------------------- interpolate

SCALES = [0.5, 0.7, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0]


@pytest.mark.parametrize("mode", ["nearest", "linear", "bilinear"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(case=layout_input(2, max_size=7, batch_optional=False), seed=st.integers(0, 2**16),
       how=st.sampled_from(["size", "scale", "recompute"]), sizes=st.tuples(st.integers(1, 9), st.integers(1, 9)),
       scales=st.tuples(st.sampled_from(SCALES), st.sampled_from(SCALES)), one=st.booleans(),
       align=st.sampled_from([None, False, True]))
def test_interpolate(mode, dtype, case, seed, how, sizes, scales, one, align):
    shape, layout, base = case
    nd = 1 if mode == "linear" else 2 if mode == "bilinear" else len(shape) - 2 - (seed % 2)
    shape = shape[: nd + 2]
    base = base_shape(shape, layout)
    pick = (lambda v: v[0]) if one else (lambda v: v[:nd])
    kwargs = dict(size=pick(sizes)) if how == "size" else dict(scale_factor=pick(scales))
    if how == "recompute":
        kwargs["recompute_scale_factor"] = True
    if mode != "nearest":
        kwargs["align_corners"] = align

    def fn(lib, x):
        return lib.nn.functional.interpolate(laid_out(x, layout, shape), mode=mode, **kwargs)

    run(fn, [data(seed, base, dtype)], dtype, terms=4)


def test_interpolate_exact_values():
    x = tt.tensor([[[0.0, 10.0, 20.0]]])
    F = tt.nn.functional
    assert F.interpolate(x, size=5).tolist() == [[[0.0, 0.0, 10.0, 10.0, 20.0]]]  # floor(i * 3 / 5)
    assert F.interpolate(x, size=5, mode="linear", align_corners=True).tolist() == [[[0.0, 5.0, 10.0, 15.0, 20.0]]]
    assert F.interpolate(x, scale_factor=2, mode="linear").tolist() == [[[0.0, 2.5, 7.5, 12.5, 17.5, 20.0]]]


# ---------------------------------------------------------------------- errors

X4 = np.zeros((1, 3, 5, 5), np.float32)
W4 = np.zeros((4, 3, 3, 3), np.float32)

ERRORS = [
    # (inputs, call, exception, match)
    ([X4[:, :2], W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError,
     r"^conv2d: Given groups=1, weight of size \[4, 3, 3, 3\], expected input\[1, 2, 5, 5\] to have 3 channels"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=2), RuntimeError, r"^conv2d: Given groups=2"),
    ([np.zeros((1, 6, 5, 5), np.float32), np.zeros((4, 2, 3, 3), np.float32)],
     lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=3), RuntimeError,
     r"^conv2d: Given groups=3, expected weight to be divisible by 3"),
    ([X4[:, :, :2, :2], W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError,
     r"^conv2d: Calculated padded input size per channel: \(2x2\)"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, dilation=3), RuntimeError,
     r"^conv2d: Calculated padded input size per channel: \(5x5\). Kernel size: \(7x7\)"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="foo"), RuntimeError,
     r"^conv2d: Invalid padding string: 'foo'"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="SAME"), RuntimeError,
     r"^conv2d: Invalid padding string"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", stride=2), RuntimeError,
     r"^conv2d: padding='same' is not supported for strided convolutions"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=-1), RuntimeError, r"^conv2d: negative pad"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=0), RuntimeError,
     r"^conv2d: non-positive stride"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, dilation=0), RuntimeError,
     r"^conv2d: dilation should be greater than zero"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=0), RuntimeError,
     r"^conv2d: non-positive groups"),
    ([X4, W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=(1, 2, 3)), RuntimeError,
     r"^conv2d: expected padding to be a single int or a tuple of 2 ints"),
    ([X4, W4, np.zeros(3, np.float32)], lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b), RuntimeError,
     r"^conv2d: Given weight of size \[4, 3, 3, 3\], expected bias to be 1-dimensional with 4 elements"),
    ([X4, W4.astype(np.float64)], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError,
     r"^conv2d: expected input and weight of the same dtype"),
    ([X4, W4, np.zeros(4)], lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b), RuntimeError,
     r"^conv2d: expected input and bias of the same dtype"),
    ([X4[0, 0], W4], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError,
     r"^conv2d: Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d"),
    ([X4, W4[0]], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError, r"^conv2d: expected a 4-D weight"),
    ([X4[0, 0], W4[:, :, 0]], lambda lib, x, w: lib.nn.functional.conv1d(x[0], w), RuntimeError,
     r"^conv1d: Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d"),
    ([X4, np.zeros((0, 3, 3, 3), np.float32)], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError,
     r"^conv2d: Given groups=1, expected weight to be divisible by 1 \(and at least 1\)"),
    ([X4, np.zeros((4, 3, 0, 3), np.float32)], lambda lib, x, w: lib.nn.functional.conv2d(x, w), RuntimeError,
     r"^conv2d: kernel size should be greater than zero"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, 3, padding=2), RuntimeError,
     r"^max_pool2d: pad should be at most half of effective kernel size, but got pad=2, kernel_size=3"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, 6), RuntimeError,
     r"^max_pool2d: Given input size: \(3x5x5\). Calculated output size: \(3x0x0\). Output size is too small"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, (2, 2, 2)), RuntimeError,
     r"^max_pool2d: expected kernel_size to be a single int or a tuple of 2 ints"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, 0, stride=1), RuntimeError,
     r"^max_pool2d: kernel size should be greater than zero"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, 2, stride=0), RuntimeError,
     r"^max_pool2d: stride should be greater than zero"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, 2, dilation=0), RuntimeError,
     r"^max_pool2d: dilation should be greater than zero"),
    ([X4], lambda lib, x: lib.nn.functional.max_pool2d(x, 2, padding=-1), RuntimeError,
     r"^max_pool2d: pad must be non-negative"),
    ([X4[:, :0]], lambda lib, x: lib.nn.functional.max_pool2d(x, 2), RuntimeError,
     r"^max_pool2d: Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size"),
    ([X4[0, 0]], lambda lib, x: lib.nn.functional.max_pool2d(x, 2), RuntimeError, r"^max_pool2d: Expected 3D or 4D"),
    ([X4[0, 0, 0]], lambda lib, x: lib.nn.functional.max_pool1d(x, 2), RuntimeError, r"^max_pool1d: Expected 2D or 3D"),
    ([X4], lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, divisor_override=0), RuntimeError,
     r"^avg_pool2d: divisor must be not zero"),
    ([X4], lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, padding=2), RuntimeError,
     r"^avg_pool2d: pad should be at most half"),
    ([X4[0]], lambda lib, x: lib.nn.functional.avg_pool1d(x, 7), RuntimeError,
     r"^avg_pool1d: Given input size: \(5x5\). Calculated output size: \(5x0\)"),
    ([X4], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (1, 2, 3)), RuntimeError,
     r"^adaptive_avg_pool2d: output_size must be 2"),
    ([X4], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, -1), RuntimeError,
     r"^adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0"),
    ([X4[:, :, :0]], lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, 2), RuntimeError,
     r"^adaptive_max_pool2d: Expected input to have non-zero size for non-batch dimensions"),
    ([X4[0, 0]], lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 2), RuntimeError,
     r"^adaptive_avg_pool2d: Expected 3D or 4D tensor"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=0), RuntimeError,
     r"^interpolate: Input and output sizes should be greater than 0, but got input \(H: 5, W: 5\) and output "
     r"\(H: 0, W: 0\)"),
    ([X4[:, :, :0]], lambda lib, x: lib.nn.functional.interpolate(x, size=2), RuntimeError,
     r"^interpolate: Input and output sizes should be greater than 0"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=0.1), RuntimeError,
     r"^interpolate: Input and output sizes should be greater than 0"),
    ([X4[:, :0]], lambda lib, x: lib.nn.functional.interpolate(x, size=2), RuntimeError,
     r"^interpolate: Non-empty 4D data tensor expected"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=3, scale_factor=2), ValueError,
     r"^interpolate: only one of size or scale_factor should be defined"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x), ValueError,
     r"^interpolate: either size or scale_factor should be defined"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=(3,)), ValueError,
     r"^interpolate: Input and output size must have the same number of spatial dimensions"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=(2, 2, 2)), ValueError,
     r"^interpolate: Input and scale_factor must have the same number of spatial dimensions"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=3, recompute_scale_factor=True), ValueError,
     r"^interpolate: recompute_scale_factor is not meaningful with an explicit size"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=3, align_corners=True), ValueError,
     r"^interpolate: align_corners option can only be set with the interpolating modes"),
    ([X4[0]], lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="bilinear"), NotImplementedError,
     r"^interpolate: Got 3D input, but bilinear mode needs 4D input"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="linear"), NotImplementedError,
     r"^interpolate: Got 4D input, but linear mode needs 3D input"),
    ([X4], lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="bicubicx"), NotImplementedError,
     r"^interpolate: unknown mode 'bicubicx'"),
    ([X4[0, 0]], lambda lib, x: lib.nn.functional.interpolate(x, size=3), NotImplementedError,
     r"^interpolate: Only 3D and 4D input tensors are supported"),
    ([X4.astype(np.int64)], lambda lib, x: lib.nn.functional.interpolate(x, size=3), NotImplementedError,
     r"^interpolate: not implemented for int64"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    inputs, call, exception, match = ERRORS[case]
    helper_test_exception(inputs, lambda *xs: call(tt, *xs), lambda *xs: call(torch, *xs), exception=exception,
                          match=match)


def test_errors_without_torch_counterpart():
    """Where PyTorch computes and t_tensor does not (integer convolution and pooling, more modes),
    the refusal is explicit."""
    F = tt.nn.functional
    with pytest.raises(NotImplementedError, match="^conv2d: not implemented for int64"):
        F.conv2d(tt.zeros(1, 1, 3, 3, dtype=tt.int64), tt.zeros(1, 1, 2, 2, dtype=tt.int64))
    with pytest.raises(NotImplementedError, match="^max_pool2d: not implemented for int64"):
        F.max_pool2d(tt.zeros(1, 1, 3, 3, dtype=tt.int64), 2)
    with pytest.raises(NotImplementedError, match="^interpolate: mode 'bicubic' is not implemented"):
        F.interpolate(tt.zeros(1, 1, 3, 3), size=2, mode="bicubic")
    with pytest.raises(TypeError, match="^conv2d: weight must be a Tensor"):
        F.conv2d(tt.zeros(1, 1, 3, 3), [[1.0]])
    with pytest.raises(TypeError, match="^conv2d: groups must be an int"):
        F.conv2d(tt.zeros(1, 1, 3, 3), tt.zeros(1, 1, 2, 2), groups=1.5)


def test_top_level_names_follow_torch():
    """tt.conv2d etc. exist where torch.conv2d etc. do, and are the nn.functional functions."""
    for name in ["conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "adaptive_avg_pool1d"]:
        assert hasattr(torch, name)
        assert getattr(tt, name) is getattr(tt.nn.functional, name)
    for name in ["avg_pool2d", "adaptive_avg_pool2d", "interpolate"]:
        assert not hasattr(torch, name) and not hasattr(tt, name)


@pytest.mark.parametrize(
    "shape, scale", [((1, 1, 2), 1.3), ((1, 1, 10), 2.04), ((1, 1, 2, 2), 1.3), ((1, 1, 1, 10), (1, 2.04))]
)
def test_interpolate_nearest_follows_torchs_1d_and_2d_rules(shape, scale):
    # torch's 2-D nearest kernel keeps the same index when the size is unchanged, and halves it when
    # the size doubles, whatever the scale factor; its 1-D kernel always applies the scale factor.
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want = torch.nn.functional.interpolate(torch.from_numpy(x), scale_factor=scale, mode="nearest")
    got = tt.nn.functional.interpolate(tt.tensor(x), scale_factor=scale, mode="nearest")
    np.testing.assert_array_equal(got.numpy(), want.numpy())
# ---------------------------------------------------------------------- threads and micro-kernels
# conv runs on the float GEMM (AVX2 or generic micro-kernel) with its (image, group, block) units
# split across threads; pooling splits the (N, C) planes. Same values on every configuration.

@pytest.mark.parametrize("generic", [0, 1])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16])
def test_conv_and_pool_threads_and_kernels(generic, threads, dtype):
    from t_tensor._capi import lib

    before = tt.get_num_threads()
    lib.tt_gemm_force_generic(generic)
    tt.set_num_threads(threads)
    try:
        x = data(11, (5, 6, 19, 23), dtype)
        cases = [
            (data(12, (16, 6, 3, 3), dtype), data(13, (16,), dtype), dict(padding=1)),   # the benchmark's shape
            (data(14, (6, 1, 3, 3), dtype), None, dict(padding=2, groups=6, stride=2)),  # depthwise
            (data(15, (4, 3, 2, 5), dtype), data(16, (4,), dtype), dict(groups=2, dilation=(2, 1))),
        ]
        for w, b, kwargs in cases:
            def conv(lib_, x_, w_, *rest, kwargs=kwargs):
                return lib_.nn.functional.conv2d(x_, w_, *rest, **kwargs)
            run(conv, [x, w] + ([] if b is None else [b]), dtype, terms=w.shape[1] * 9 + 1)
        x1 = data(17, (3, 4, 301), dtype)  # conv1d: long rows split into position blocks
        run(lambda lib_, x_, w_: lib_.nn.functional.conv1d(x_, w_, padding=3), [x1, data(18, (5, 4, 7), dtype)],
            dtype, terms=29)
        run(lambda lib_, x_: lib_.nn.functional.max_pool2d(x_, 3, stride=2, padding=1), [x], dtype)
        run(lambda lib_, x_: lib_.nn.functional.avg_pool2d(x_, 2), [x], dtype, terms=4)
        run(lambda lib_, x_: lib_.nn.functional.adaptive_avg_pool2d(x_, (4, 5)), [x], dtype, terms=30)
        run(lambda lib_, x_: lib_.nn.functional.interpolate(x_, scale_factor=2, mode="bilinear"), [x], dtype, terms=4)
    finally:
        lib.tt_gemm_force_generic(0)
        tt.set_num_threads(before)


@pytest.mark.parametrize("kernel", _gemm_kernels())
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16])
def test_conv_blocking_edges_on_every_micro_kernel(kernel, threads, dtype):
    """conv2d writes im2col into the micro-kernel's panels itself: check its edges on each kernel
    (12- and 8-row AVX-512 tiles, 6-row AVX2/generic ones): channel counts that are not a multiple
    of a tile, k past one 256-row slice (with the bias row in the second), several position blocks
    per image, a single image whose output channels are split across threads."""
    from t_tensor._capi import ffi, lib

    before = tt.get_num_threads()
    assert lib.tt_gemm_set_kernel(kernel.encode()) == 0
    tt.set_num_threads(threads)
    try:
        cases = [
            ((2, 32, 41, 40), (13, 32, 3, 3), True, dict(padding=1)),  # k = 289: two slices, 2 position blocks
            ((1, 8, 30, 33), (24, 8, 3, 3), False, dict(stride=2, padding=2)),  # one image, 24 channels
            ((3, 4, 9, 70), (6, 2, 1, 3), True, dict(groups=2, dilation=(1, 3))),  # 3 channels per group
        ]
        for i, (xs, ws, has_bias, kwargs) in enumerate(cases):
            arrays = [data(40 + i, xs, dtype), data(50 + i, ws, dtype)]
            if has_bias:
                arrays.append(data(60 + i, (ws[0],), dtype))

            def conv(lib_, *tensors, kwargs=kwargs):
                return lib_.nn.functional.conv2d(*tensors, **kwargs)

            run(conv, arrays, dtype, terms=ws[1] * ws[2] * ws[3] + 1)
    finally:
        lib.tt_gemm_set_kernel(ffi.NULL)
        tt.set_num_threads(before)


# ---------------------------------------------------------------------- the direct kernels
# float32, stride and dilation 1, when the GEMM runs its AVX-512 kernel (the im2col path on the
# generic kernel; all must match torch):
# * groups 1 with at most 160 taps per window: conv.c's direct kernel (16 output channels in
#   registers, masked loads at the borders); with the AVX2 GEMM kernel, its AVX2 direct kernel
#   (4 channels x 24 columns, zero-padded row copies shared by a band of up to 16 output rows,
#   fewer when there would be under 4 bands a thread; 3-, 2- and 1-vector last segments), while
#   one output row's copies fit its buffer;
# * depthwise (groups == C_in, any channel multiplier): conv.c's depthwise kernel (16-column chunks
#   of each output row);
# * groups 1 with an output plane of at most 16 positions whose zero-padded input plane fits 32
#   floats, any number of taps: conv.c's tiny-plane kernel (a whole plane per register), for the
#   forward and for dx (through the flipped weights); dW by sums in registers up to 16 taps.

DIRECT_CASES = [
    # (x shape, w shape, padding, groups): rows narrower and wider than 16 columns, c_out below, at
    # and past 16, paddings up to the kernel's reach, kernels from 1x1 to the 160-tap limit
    ((2, 3, 17, 40), (20, 3, 3, 3), 1, 1),
    ((1, 1, 9, 8), (6, 1, 5, 5), 2, 1),
    ((3, 2, 5, 33), (16, 2, 3, 5), (0, 2), 1),
    ((1, 4, 6, 19), (17, 4, 2, 4), (1, 3), 1),
    ((2, 32, 4, 18), (5, 32, 1, 1), 0, 1),
    ((1, 3, 12, 70), (33, 3, 3, 3), 0, 1),
    ((2, 1, 1, 50), (7, 1, 1, 9), (0, 4), 1),
    ((2, 16, 5, 20), (18, 16, 3, 3), 1, 1),      # 144 taps, a second channel block of 2
    ((1, 6, 9, 17), (16, 6, 5, 5), 0, 1),        # 150 taps
    ((1, 10, 3, 24), (3, 10, 4, 4), (1, 2), 1),  # the 160-tap limit
    ((1, 161, 2, 9), (4, 161, 1, 1), 0, 1),      # one past it: im2col
    ((2, 3, 5, 26), (9, 3, 3, 3), 0, 1),         # one full 24-column AVX2 segment, blocks of 4, 4, 1
    ((1, 16, 4, 700), (5, 16, 3, 3), 1, 1),      # 16 x 3 rows of 706 floats: past the AVX2 buffer, im2col
    ((1, 16, 7, 390), (5, 16, 3, 3), 1, 1),      # AVX2: bands of 3 output rows (the buffer's limit), 3 + 3 + 1
    ((3, 2, 37, 30), (6, 2, 3, 3), 1, 1),        # AVX2: bands of 16 + 16 + 5 rows (1 thread), 13 + 13 + 11 (2)
    # depthwise
    ((2, 4, 9, 37), (4, 1, 3, 3), 1, 4),
    ((1, 3, 6, 70), (6, 1, 5, 5), 2, 3),
    ((2, 5, 4, 16), (5, 1, 1, 7), (0, 3), 5),
    ((1, 2, 8, 8), (8, 1, 3, 2), (1, 0), 2),
    ((3, 6, 2, 130), (6, 1, 2, 3), 0, 6),
    # tiny planes
    ((4, 16, 4, 4), (32, 16, 3, 3), 1, 1),       # the digits CNN's second convolution (fewer images)
    ((3, 5, 2, 2), (17, 5, 3, 3), 1, 1),
    ((2, 3, 1, 3), (16, 3, 1, 3), (0, 1), 1),
    ((2, 2, 2, 2), (33, 2, 5, 5), 2, 1),         # 25 taps: dW by the general code
    ((2, 40, 3, 3), (4, 40, 3, 3), 0, 1),        # 360 taps, past the direct kernel's limit
    ((2, 3, 4, 2), (9, 3, 3, 2), (1, 0), 1),
]


@pytest.mark.parametrize("kernel", _gemm_kernels())
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", DIRECT_CASES)
def test_conv2d_direct_kernels(case, bias, threads, kernel):
    from t_tensor._capi import ffi, lib

    x_shape, w_shape, padding, groups = case
    before = tt.get_num_threads()
    assert lib.tt_gemm_set_kernel(kernel.encode()) == 0
    tt.set_num_threads(threads)
    try:
        arrays = [data(21, x_shape, tt.float32), data(22, w_shape, tt.float32)]
        if bias:
            arrays.append(data(23, (w_shape[0],), tt.float32))
        run(lambda lib_, *xs: lib_.nn.functional.conv2d(*xs, padding=padding, groups=groups), arrays, tt.float32,
            terms=int(np.prod(w_shape[1:])) + 1)
    finally:
        lib.tt_gemm_set_kernel(ffi.NULL)
        tt.set_num_threads(before)


# im2col from a zero-padded copy of each input plane (stride and dilation 1, a unit covering the
# whole output plane, the padded plane within 4096 values): output rows narrower than 8 are read
# position by position, wider ones as runs. Cases that skip the direct kernels: more than 160 taps,
# float64, or rows narrower than 8.
PLANE_CASES = [
    ((4, 16, 4, 4), (32, 16, 3, 3), 1, 1),       # the digits CNN's second convolution: 4-wide rows
    ((2, 32, 6, 6), (8, 32, 3, 3), 1, 1),        # 289 rows of K: the second slice starts mid-channel
    ((2, 20, 9, 9), (8, 20, 3, 3), 0, 1),        # 7-wide rows, no padding
    ((2, 24, 12, 12), (8, 24, 3, 3), 2, 1),      # 14-wide rows: runs; padding wider than needed
    ((3, 8, 5, 7), (4, 8, 3, 5), (2, 1), 1),     # non-square window and padding
    ((2, 4, 3, 3), (6, 4, 5, 5), 3, 1),          # a window larger than the input
    ((2, 16, 5, 5), (8, 8, 3, 3), 1, 2),         # groups
    ((2, 40, 62, 62), (4, 40, 3, 3), 1, 1),      # 64 x 64 padded: the largest plane taken
    ((1, 20, 63, 63), (2, 20, 3, 3), 1, 1),      # 65 x 65 padded, past 4096: the general im2col
]


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("case", PLANE_CASES)
def test_conv2d_padded_plane_im2col(case, layout, threads, dtype):
    x_shape, w_shape, padding, groups = case
    before = tt.get_num_threads()
    tt.set_num_threads(threads)
    try:
        arrays = [data(31, x_shape, dtype), data(32, w_shape, dtype), data(33, (w_shape[0],), dtype)]

        def fn(lib, x, w, b):
            if layout == "channels_last":  # the same values, read through non-unit column strides
                x = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
            return lib.nn.functional.conv2d(x, w, b, padding=padding, groups=groups)

        run(fn, arrays, dtype, terms=int(np.prod(w_shape[1:])) + 1)
    finally:
        tt.set_num_threads(before)


def test_tiny_plane_input_gradient_with_an_infinite_weight():
    """dx through the tiny-plane kernel convolves dy, zero-padded, with the flipped weights: an inf
    weight would meet the padding's zeros (NaN) where torch adds only the windows that exist. Such
    weights take the general code, so dx matches torch's, NaNs and infinities included."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    w[0, 0, 0, 0] = np.inf
    g = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    got, want = tt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    tt.nn.functional.conv2d(got, tt.tensor(w), padding=1).backward(tt.tensor(g))
    torch.nn.functional.conv2d(want, torch.tensor(w), padding=1).backward(torch.tensor(g))
    np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("shape, ceil_mode", [((3, 4, 6, 8), False), ((2, 3, 5, 7), False), ((2, 3, 5, 7), True)])
@pytest.mark.parametrize("transposed", [False, True])
def test_max_pool_2x2_ties_and_nans(dtype, shape, ceil_mode, transposed):
    """The 2x2 stride-2 window (its own kernel when every window lies inside the input; ceil_mode's
    partial last windows take the general one) on values from {0, 1, nan, -inf}, so that windows
    hold ties, several NaNs and only -inf: values and indices against torch, also on a transposed
    (H and W swapped) input."""
    values = np.array([0.0, 1.0, np.nan, -np.inf])
    x = values[np.random.default_rng(sum(shape)).integers(0, 4, shape)]

    def fn(lib, t):
        t = t.transpose(2, 3).contiguous().transpose(2, 3) if transposed else t
        return lib.nn.functional.max_pool2d(t, 2, ceil_mode=ceil_mode, return_indices=True)

    run(fn, [x], dtype)
