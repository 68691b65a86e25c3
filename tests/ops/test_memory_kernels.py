"""Memory-bound kernels: blocked (tiled) transposed copies and elementwise ops, F16C float16
conversions, the host allocator's huge-page blocks and cache reuse, and ``out=`` on reductions.

Transposed operands are compared with NumPy bit for bit (copies and casts are exact; the
elementwise ops compute each element from its own inputs, so tiling must not change a bit).
Shapes straddle the 32 x 256 tiles (1, 7, 31, 33, 255, 257, ...) so that every tile edge runs.
Both kernel paths run: the generic one in a subprocess with TT_GENERIC_KERNELS=1.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
from helpers import TORCH_DTYPES
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt

ALL = [tt.bool, tt.int8, tt.int16, tt.int32, tt.int64, tt.uint8, tt.float16, tt.float32, tt.float64]
NUMERIC = [d for d in ALL if d is not tt.bool]
EDGES = [1, 7, 8, 31, 32, 33, 63, 65, 255, 256, 257, 300]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def data(shape, dtype: tt.DType, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype is tt.bool:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        return rng.uniform(-100, 100, shape).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype.numpy)


def same_bits(got: tt.Tensor, want: np.ndarray) -> None:
    got_np = np.ascontiguousarray(got.numpy())
    assert got_np.shape == want.shape and got_np.dtype == want.dtype, (got_np.shape, want.shape, got_np.dtype)
    np.testing.assert_array_equal(got_np.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


# ---------------------------------------------------------------------- transposed copies


@pytest.mark.parametrize("dtype", ALL, ids=str)
@settings(max_examples=12, deadline=None)
@given(rows=st.sampled_from(EDGES), cols=st.sampled_from(EDGES))
def test_transposed_contiguous_matches_numpy(dtype, rows, cols):
    x = data((rows, cols), dtype)
    same_bits(tt.from_numpy(x).T.contiguous(), np.ascontiguousarray(x.T))
    same_bits(tt.from_numpy(x)[::2].T.contiguous(), np.ascontiguousarray(x[::2].T))   # strided source too


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
@pytest.mark.parametrize("dtype", [tt.uint8, tt.int16, tt.float32, tt.float64], ids=str)
def test_permuted_3d_contiguous(dtype, perm):
    x = data((5, 67, 290), dtype, seed=1)
    same_bits(tt.from_numpy(x).permute(*perm).contiguous(), np.ascontiguousarray(x.transpose(perm)))


@pytest.mark.parametrize("src", [tt.float32, tt.float16, tt.int32, tt.float64], ids=str)
@pytest.mark.parametrize("dst", [tt.float16, tt.float32, tt.int64, tt.uint8], ids=str)
def test_transposed_casts_match_contiguous_casts(src, dst):
    """The cast of a transposed tensor (tiled, packed) equals the cast of its contiguous copy."""
    x = data((257, 300), src, seed=2)
    got = tt.from_numpy(x).T.to(dst)
    same_bits(got, tt.from_numpy(np.ascontiguousarray(x.T)).to(dst).numpy())
    if dst is tt.float32 or src is tt.float16:       # exact conversions: NumPy agrees bit for bit
        same_bits(got, np.ascontiguousarray(x.T.astype(dst.numpy)))


@pytest.mark.parametrize("dtype", [tt.int8, tt.float32, tt.float64], ids=str)
def test_copy_into_transposed_destination(dtype):
    x = data((300, 257), dtype, seed=3)
    out = tt.zeros((257, 300), dtype=dtype)
    out.T.copy_(tt.from_numpy(x))
    same_bits(out, np.ascontiguousarray(x.T))


# ---------------------------------------------------------------------- transposed elementwise ops


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@settings(max_examples=8, deadline=None)
@given(rows=st.sampled_from(EDGES), cols=st.sampled_from(EDGES))
def test_transposed_binary_matches_numpy(dtype, rows, cols):
    a, b = data((cols, rows), dtype, 4), data((rows, cols), dtype, 5)
    ta, tb = tt.from_numpy(a), tt.from_numpy(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_bits(ta.T + tb, a.T + b)
        same_bits(tb - ta.T, b - a.T)
        same_bits(ta.T * ta.T, a.T * a.T)             # both inputs transposed: the output follows them
        same_bits(tt.maximum(ta.T, tb), np.maximum(a.T, b))
        same_bits(ta.T < tb, a.T < b)


@pytest.mark.parametrize("dtype", [tt.float16, tt.float32, tt.float64, tt.int32], ids=str)
def test_transposed_with_broadcast_and_out(dtype):
    a, b, c = data((300, 70), dtype, 6), data((70,), dtype, 7), data((300, 1), dtype, 8)
    ta = tt.from_numpy(a)
    same_bits(ta.T + tt.from_numpy(c).T, a.T + c.T)
    same_bits(ta + tt.from_numpy(b), a + b)
    out = tt.empty((300, 70), dtype=dtype)
    tt.add(ta, tt.from_numpy(a.T.copy()).T, out=out.T.contiguous().T)   # into a transposed output
    dst = tt.zeros((70, 300), dtype=dtype)
    tt.add(tt.from_numpy(a), tt.from_numpy(a), out=dst.T)
    same_bits(dst, np.ascontiguousarray((a + a).T))


def test_transposed_unary_ternary_and_batched():
    a = data((3, 129, 257), tt.float32, 9)
    b = data((3, 257, 129), tt.float32, 10)
    ta, tb = tt.from_numpy(a), tt.from_numpy(b)
    same_bits(tt.where(ta.transpose(1, 2) > 0, ta.transpose(1, 2), tb), np.where(a.transpose(0, 2, 1) > 0,
                                                                                  a.transpose(0, 2, 1), b))
    same_bits(ta.transpose(1, 2).neg(), -a.transpose(0, 2, 1))
    same_bits(ta.transpose(1, 2) + tb, a.transpose(0, 2, 1) + b)
    same_bits(ta.transpose(1, 2).exp(), tt.from_numpy(np.ascontiguousarray(a.transpose(0, 2, 1))).exp().numpy())


def test_transposed_reductions_still_right():
    """Reductions and masked fills also walk tt_iter (blocked, never packed)."""
    x = data((300, 257), tt.float64, 11)
    t = tt.from_numpy(x).T
    np.testing.assert_allclose(t.sum(0).numpy(), x.T.sum(0), rtol=1e-12)
    np.testing.assert_allclose(t.sum(1).numpy(), x.T.sum(1), rtol=1e-12)
    assert tt.count_nonzero(t > 0).item() == int((x > 0).sum())
    filled = t.contiguous()
    filled.T.masked_fill_(tt.from_numpy(x > 0), 0.0)
    same_bits(filled, np.ascontiguousarray(np.where(x > 0, 0.0, x).T))


# ---------------------------------------------------------------------- float16 <-> float32


def all_halves() -> np.ndarray:
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def float_sweep() -> np.ndarray:
    """A dense sweep of float32 bit patterns plus, for every exponent, the patterns around the
    half rounding points (ties to even up and down, just above and below a tie)."""
    sweep = np.arange(0, 2**32, 2039, dtype=np.uint64).astype(np.uint32)
    exponents = np.arange(256, dtype=np.uint32) << 23
    mantissas = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x2FFF, 0x3000, 0x3001, 0x2000, 0x400000, 0x401000,
                          0x7FEFFF, 0x7FF000, 0x7FFFFF], dtype=np.uint32)
    near = (exponents[:, None] | mantissas[None, :]).ravel()
    # every half subnormal and its neighbourhood, at the scale where subnormal ties happen
    sub = (np.arange(0x33000000, 0x38800000, 97, dtype=np.uint64)).astype(np.uint32)
    bits = np.concatenate([sweep, near, sub])
    return np.concatenate([bits, bits | np.uint32(0x80000000)]).view(np.float32)


def test_half_to_float_all_patterns_match_numpy():
    h = all_halves()
    got = tt.from_numpy(h).to(tt.float32).numpy().view(np.uint32)
    np.testing.assert_array_equal(got, h.astype(np.float32).view(np.uint32))


def test_float_to_half_sweep_matches_numpy():
    f = float_sweep()
    got = tt.from_numpy(f).to(tt.float16).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f.astype(np.float16)
    nan = np.isnan(f)
    np.testing.assert_array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])
    assert np.isnan(got[nan]).all()
    # NaN keeps its sign; the payload is quieted and truncated (as the hardware does, unlike NumPy)
    np.testing.assert_array_equal(got.view(np.uint16)[nan] & 0x8000, want.view(np.uint16)[nan] & 0x8000)


def test_half_conversions_strided_and_tails():
    h = all_halves()[: 8 * 1000 + 5]
    same_bits(tt.from_numpy(h)[::3].to(tt.float32), h[::3].astype(np.float32))
    f = float_sweep()[: 1003].copy()
    f = f[~np.isnan(f)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_bits(tt.from_numpy(f)[1::2].to(tt.float16), f[1::2].astype(np.float16))
        for n in range(0, 20):
            same_bits(tt.from_numpy(f[:n]).to(tt.float16), f[:n].astype(np.float16))


GENERIC_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from test_memory_kernels import all_halves, float_sweep, data
    import t_tensor as tt
    h, f = all_halves(), float_sweep()
    a, b = data((300, 257), tt.float32, 1), data((257, 300), tt.float32, 2)
    parts = [tt.from_numpy(h).to(tt.float32).numpy(), tt.from_numpy(f).to(tt.float16).numpy(),
             (tt.from_numpy(a).T + tt.from_numpy(b)).numpy(), tt.from_numpy(a).T.contiguous().numpy(),
             tt.from_numpy(data((100, 200), tt.float64, 3)).T.contiguous().numpy()]
    print(hashlib.sha256(b"".join(p.tobytes() for p in parts)).hexdigest())
""")


def test_generic_and_simd_paths_agree_bit_for_bit():
    """TT_GENERIC_KERNELS=1 (read once per process) forces the scalar conversions and packing."""
    here = os.path.dirname(os.path.abspath(__file__))
    digests = []
    for generic in ("0", "1"):
        env = dict(os.environ, TT_GENERIC_KERNELS=generic, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
        done = subprocess.run([sys.executable, "-c", GENERIC_SCRIPT, here], env=env, capture_output=True, text=True,
                              check=True, cwd=ROOT)
        digests.append(done.stdout.strip())
    assert digests[0] == digests[1] and len(digests[0]) == 64


# ---------------------------------------------------------------------- allocation


def test_large_blocks_are_huge_page_aligned():
    big = tt.empty(1 << 20, dtype=tt.float32)        # 4 MiB: a fresh large block
    assert big.data_ptr() % (2 << 20) == 0
    small = tt.empty(1000, dtype=tt.float32)
    assert small.data_ptr() % 64 == 0


def test_repeated_large_add_reuses_cached_blocks():
    """16M floats: after the first a + b, every further one takes its output from the cache:
    no system allocation and (almost) no fresh page faults."""
    a = tt.ones(16 << 20, dtype=tt.float32)
    b = tt.ones(16 << 20, dtype=tt.float32)
    c = a + b                                   # warms the cache with one 64 MiB block
    del c
    before, faults = tt.memory_stats(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(4):
        c = a + b
        del c
    after, faults = tt.memory_stats(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    assert after["cache_hits"] - before["cache_hits"] == 4
    assert after["num_system_allocs"] == before["num_system_allocs"]
    assert faults < 64, f"{faults} minor page faults for 4 cached 64 MiB outputs"


# ---------------------------------------------------------------------- out= on reductions


def torch_of(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(x.copy())


def check_out(got, out, want: torch.Tensor, rtol: float = 1e-5) -> None:
    assert got is out
    assert TORCH_DTYPES[out.dtype] == want.dtype and out.shape == tuple(want.shape)
    np.testing.assert_allclose(out.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=rtol,
                               atol=1e-6)


REDUCTIONS = ["sum", "nansum", "prod", "mean", "amax", "amin", "var", "std", "logsumexp"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_reduction_out_matches_torch(name, keepdim, layout):
    x = data((5, 6), tt.float32, 12) / 50
    want = getattr(torch, name)(torch_of(x), 1, keepdim=keepdim)
    shape = tuple(want.shape)
    out = tt.full(shape, 7.0) if layout == "contiguous" else tt.full(shape[::-1], 7.0).T
    ptr = out.data_ptr()
    got = getattr(tt, name)(tt.from_numpy(x), 1, keepdim=keepdim, out=out)
    check_out(got, out, want)
    assert out.data_ptr() == ptr


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "logsumexp", "nansum"])
def test_reduction_out_of_another_float_dtype(name):
    x = data((4, 7), tt.float32, 13) / 50
    out = tt.empty(7, dtype=tt.float64)
    want = getattr(torch, name)(torch_of(x), 0, out=torch.empty(7, dtype=torch.float64))
    check_out(getattr(tt, name)(tt.from_numpy(x), 0, out=out), out, want)


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
def test_out_dtype_is_the_compute_dtype(name):
    """As torch: sum of floats into an int64 out sums the truncated values."""
    x = np.array([[0.5, 0.7, 1.9], [2.5, -1.5, 3.2]], dtype=np.float32)
    shape = (2, 3) if name.startswith("cum") else (3,)
    out = tt.empty(shape, dtype=tt.int64)
    want = getattr(torch, name)(torch_of(x), 0, out=torch.empty(shape, dtype=torch.int64))
    check_out(getattr(tt, name)(tt.from_numpy(x), 0, out=out), out, want)


def test_sum_out_with_dtype():
    x = data((3, 4), tt.int32, 14)
    out = tt.empty(4, dtype=tt.float64)
    check_out(tt.sum(tt.from_numpy(x), 0, dtype=tt.float64, out=out), out,
              torch.sum(torch_of(x), 0, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="^sum:"):
        tt.sum(tt.from_numpy(x), 0, dtype=tt.float32, out=out)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_out(name):
    x = data((5, 6), tt.float32, 15)
    out = tt.empty(6, dtype=tt.int64)
    check_out(getattr(tt, name)(tt.from_numpy(x), 0, out=out), out, getattr(torch, name)(torch_of(x), 0))
    with pytest.raises(RuntimeError, match=f"^{name}:"):
        getattr(tt, name)(tt.from_numpy(x), 0, out=tt.empty(6, dtype=tt.int32))


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_out_pair(name, keepdim):
    x = data((5, 6), tt.int16, 16)
    want = getattr(torch, name)(torch_of(x), 1, keepdim=keepdim)
    shape = tuple(want.values.shape)
    values, indices = tt.empty(shape, dtype=tt.int16), tt.empty(shape[::-1], dtype=tt.int64).T
    got = getattr(tt, name)(tt.from_numpy(x), 1, keepdim, out=(values, indices))
    assert got.values is values and got.indices is indices
    check_out(got.values, values, want.values)
    check_out(got.indices, indices, want.indices)
    total = tt.empty((), dtype=tt.int16)
    check_out(getattr(tt, name)(tt.from_numpy(x), out=total), total, getattr(torch, name)(torch_of(x)))
    with pytest.raises(RuntimeError, match=f"^{name}:"):
        getattr(tt, name)(tt.from_numpy(x), 1, out=(tt.empty(shape, dtype=tt.int32), tt.empty(shape, dtype=tt.int64)))
    with pytest.raises(TypeError, match=f"^{name}:"):
        getattr(tt, name)(tt.from_numpy(x), 1, out=values)


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("out_dtype", [tt.bool, tt.uint8])
def test_any_all_out(name, out_dtype):
    x = data((4, 5), tt.int8, 17) % 3
    out = tt.empty(5, dtype=out_dtype)
    want = getattr(torch, name)(torch_of(x), 0, out=torch.empty(5, dtype=TORCH_DTYPES[out_dtype]))
    check_out(getattr(tt, name)(tt.from_numpy(x), 0, out=out), out, want)
    with pytest.raises(RuntimeError, match=f"^{name}:"):
        getattr(tt, name)(tt.from_numpy(x), 0, out=tt.empty(5, dtype=tt.float32))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "softmax", "log_softmax"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_scan_and_softmax_out(name, layout):
    x = data((4, 5), tt.float32, 18) / 100
    out = tt.empty((4, 5)) if layout == "contiguous" else tt.empty((5, 4)).T
    ptr = out.data_ptr()
    check_out(getattr(tt, name)(tt.from_numpy(x), 1, out=out), out, getattr(torch, name)(torch_of(x), 1))
    assert out.data_ptr() == ptr


@pytest.mark.parametrize("name", REDUCTIONS + ["argmax", "cumsum", "softmax", "any"])
def test_reduction_out_wrong_shape_raises(name):
    x = tt.from_numpy(data((3, 4), tt.float32, 19))
    with pytest.raises(RuntimeError, match=f"^{name}: output with shape"):
        getattr(tt, name)(x, 1, out=tt.empty(5, dtype=tt.bool if name == "any" else tt.float32))
    with pytest.raises(TypeError, match=f"^{name}:"):
        getattr(tt, name)(x, 1, out=np.empty(3, dtype=np.float32))


def test_amax_out_dtype_must_match():
    with pytest.raises(RuntimeError, match="^amax:"):
        tt.amax(tt.ones(3, 4), 1, out=tt.empty(3, dtype=tt.float64))


def test_out_overlapping_the_input():
    """An out that is a view of the input gets the result after the whole input was read."""
    x = data((4, 4), tt.float32, 20)
    t = tt.from_numpy(x.copy())
    tt.sum(t, 0, out=t[0])
    want = x.copy()
    want[0] = x.sum(0)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
    c = tt.from_numpy(x.copy())
    tt.cumsum(c, 1, out=c)
    np.testing.assert_allclose(c.numpy(), np.cumsum(x, 1), rtol=1e-5, atol=1e-5)
