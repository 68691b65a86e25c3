"""Accuracy of the vectorized float32 kernels (csrc/src/kernels/vmath.c) in ULP.

For each function, t_tensor's float32 result is compared with the correctly rounded result: the
function evaluated in float64 by NumPy (math.erf/erfc for the error function) and rounded to
float32. The error of one element is the number of float32 values between the two (0 when
t_tensor's result is correctly rounded), NaN must match NaN, infinities must match exactly. The
inputs are dense sweeps: 2^20 points evenly spaced in bit pattern over every finite float32 of
both signs (every exponent, denormals included), a dense linear sweep of the interval where the
function varies, and the special values. Every kernel path is measured: the SIMD ones this CPU has
("avx512" and "avx2"), chosen in this process with tt_vmath_set_kernel, and the
generic one, in a subprocess with TT_GENERIC_KERNELS=1. The bounds asserted here are the ones
docs/performance_vmath.md lists.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import sweep_inputs, ulp_distance

import t_tensor as tt
from t_tensor._capi import ffi, lib

ROOT = Path(__file__).resolve().parents[2]


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0, e) / (1.0 + e)


_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _gelu64(x: np.ndarray) -> np.ndarray:
    c = _ERFC(-x / math.sqrt(2.0)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return 0.5 * x * c


def _gelu_tanh64(x: np.ndarray) -> np.ndarray:
    # 0.5 x (1 + tanh(u)) written as x * sigmoid(2u): the same function, without the cancellation
    # that makes float64's 1 + tanh(u) useless below x = -6.
    with np.errstate(over="ignore", invalid="ignore"):
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return x * _sigmoid64(2.0 * u)


# name -> (t_tensor function, float64 reference, interval of the linear sweep)
FUNCTIONS = {
    "exp": (tt.exp, np.exp, (-104.0, 89.0)),
    "log": (tt.log, np.log, (0.0, 10.0)),
    "tanh": (tt.tanh, np.tanh, (-10.0, 10.0)),
    "sigmoid": (tt.sigmoid, _sigmoid64, (-105.0, 20.0)),
    "silu": (tt.silu, lambda x: x * _sigmoid64(x), (-105.0, 20.0)),
    "erf": (tt.erf, lambda x: _ERF(x).astype(np.float64), (-5.0, 5.0)),
    "gelu": (tt.gelu, _gelu64, (-15.0, 10.0)),
    "gelu_tanh": (lambda x: tt.gelu(x, approximate="tanh"), _gelu_tanh64, (-15.0, 10.0)),
}

# Max ULP error asserted per function and path: the measured maximum (docs/performance_vmath.md)
# plus one ULP of margin.
MEASURED = {"exp": 1, "log": 1, "tanh": 1, "sigmoid": 2, "silu": 3, "erf": 1, "gelu": 4, "gelu_tanh": 3}
BOUNDS = {path: {name: ulp + 1 for name, ulp in MEASURED.items()} for path in ("avx512", "avx2", "generic")}

def measure(name: str) -> dict:
    """Max ULP error of one function over its sweep, the input where it occurs, and the count of
    non-finite mismatches (NaN vs number, or different infinities)."""
    fn, reference, interval = FUNCTIONS[name]
    x = sweep_inputs(interval)
    got = fn(tt.from_numpy(x)).numpy()
    with np.errstate(all="ignore"):
        want = reference(x.astype(np.float64)).astype(np.float32)
    finite = np.isfinite(want) & np.isfinite(got)
    both_nan = np.isnan(want) & np.isnan(got)
    same_inf = np.isinf(want) & (got == want)
    mismatches = int(np.count_nonzero(~(finite | both_nan | same_inf)))
    err = ulp_distance(got[finite], want[finite])
    worst = int(np.argmax(err)) if err.size else 0
    return {"max_ulp": int(err.max()), "at": float(x[finite][worst]), "mismatches": mismatches,
            "exact_fraction": float(np.mean(err == 0))}


def kernel_name() -> str:
    return ffi.string(lib.tt_vmath_kernel_name()).decode()


def simd_paths() -> list[str]:
    """The SIMD paths this CPU can run, widest first (the default choice is the first)."""
    return [path for path in ("avx512", "avx2") if lib.tt_vmath_set_kernel(path.encode()) == lib.TT_OK] or ["none"]


@contextlib.contextmanager
def vmath_path(path: str):
    """Run the block on one kernel path, then go back to the default choice."""
    if path == "none":
        pytest.skip("this CPU has no SIMD path")   # only on a CPU without AVX2+FMA
    assert lib.tt_vmath_set_kernel(path.encode()) == lib.TT_OK
    try:
        assert kernel_name() == path
        yield
    finally:
        lib.tt_vmath_set_kernel(ffi.NULL)


SIMD_PATHS = simd_paths()
lib.tt_vmath_set_kernel(ffi.NULL)


def measure_all() -> dict:
    return {"kernel": kernel_name(), "results": {name: measure(name) for name in FUNCTIONS}}


def _check(report: dict) -> None:
    bounds = BOUNDS[report["kernel"]]
    for name, result in report["results"].items():
        assert result["mismatches"] == 0, (report["kernel"], name, result)
        assert result["max_ulp"] <= bounds[name], (report["kernel"], name, result)


@pytest.mark.parametrize("path", SIMD_PATHS)
def test_vmath_ulp_simd_paths(path):
    with vmath_path(path):
        _check(measure_all())


def test_vmath_default_is_widest_path():
    assert kernel_name() == (SIMD_PATHS[0] if SIMD_PATHS != ["none"] else "generic")


def test_vmath_set_kernel_refuses_unknown_names():
    before = kernel_name()
    assert lib.tt_vmath_set_kernel(b"sse9") == lib.TT_ERR_INVALID_ARG
    assert kernel_name() == before


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_avx512_bit_identical_to_avx2(name):
    """The AVX-512 kernels scale by 2^n with vscalefps instead of two exponent-bit products (both
    round once) and select with masks instead of blends, so every function must give the same
    bits as AVX2, denormals, infinities and NaN included, on the sweep and on every tail length."""
    if "avx512" not in SIMD_PATHS:
        pytest.skip("this CPU has no AVX-512F")
    fn, _, interval = FUNCTIONS[name]
    values = sweep_inputs(interval)
    inputs = [values] + [values[:length] for length in range(1, 34)]
    with vmath_path("avx512"):
        wide = [fn(tt.from_numpy(x)).numpy() for x in inputs]
    with vmath_path("avx2"):
        narrow = [fn(tt.from_numpy(x)).numpy() for x in inputs]
    for a, b in zip(wide, narrow, strict=True):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_vmath_ulp_generic_path():
    env = dict(os.environ, TT_GENERIC_KERNELS="1", PYTHONPATH=str(ROOT))
    code = ("import json, sys; sys.path[:0] = ['tests', 'tests/ops']; import test_vmath as v; "
            "print(json.dumps(v.measure_all()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["kernel"] == "generic"
    _check(report)


@pytest.mark.parametrize("path", SIMD_PATHS)
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_vmath_row_paths_agree(name, path):
    """Every way into the kernel gives the contiguous float32 result: the SIMD tails (lengths
    0-33), strided rows (through the float buffer), in place, and float16 (rounded from float32)."""
    with vmath_path(path):
        _row_paths_agree(name)


def _row_paths_agree(name):
    fn = FUNCTIONS[name][0]
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(1000) * 6).astype(np.float32)
    full = fn(tt.from_numpy(x)).numpy()
    for n in range(34):
        np.testing.assert_array_equal(fn(tt.from_numpy(x[:n].copy())).numpy(), full[:n])
    wide = np.stack([x, -x], axis=1)                  # column 0 is x with a stride of 2 elements
    np.testing.assert_array_equal(fn(tt.from_numpy(wide)[:, 0]).numpy(), full)
    np.testing.assert_array_equal(fn(tt.from_numpy(wide).T).numpy()[0], full)
    half = x.astype(np.float16)
    with np.errstate(over="ignore"):                  # exp of the largest inputs overflows float16
        want16 = fn(tt.from_numpy(half.astype(np.float32))).numpy().astype(np.float16)
    np.testing.assert_array_equal(fn(tt.from_numpy(half)).numpy(), want16)


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "erf"])
def test_vmath_in_place(name):
    x = np.linspace(0.01, 9.0, 37, dtype=np.float32)
    want = getattr(tt, name)(tt.from_numpy(x)).numpy()
    t = tt.from_numpy(x.copy())
    getattr(t, name + "_")()
    np.testing.assert_array_equal(t.numpy(), want)


def softmax_errors() -> dict:
    """Max relative error of float32 softmax / log_softmax along a contiguous last dimension (the
    fused vmath line) against float64 NumPy, over line lengths that exercise the 8- and 16-lane tails, with
    lines holding NaN, +-inf and all -inf; the count of NaN-position mismatches."""
    rng = np.random.default_rng(3)
    worst = {"softmax": 0.0, "log_softmax": 0.0, "nan_mismatches": 0}
    for length in (1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1029):
        x = (rng.standard_normal((6, length)) * 20).astype(np.float32)
        x[1, length // 2] = np.nan
        x[2, 0] = np.inf
        x[3, :] = -np.inf
        x[4, length - 1] = -np.inf
        with np.errstate(invalid="ignore"):       # x - max rounded to float32, as every float32 kernel
            shifted = (x - x.max(axis=1, keepdims=True)).astype(np.float64)
            total = np.exp(shifted).sum(axis=1, keepdims=True)
            want = {"softmax": np.exp(shifted) / total, "log_softmax": shifted - np.log(total)}
        for name, ref in want.items():
            got = getattr(tt, name)(tt.from_numpy(x), dim=-1).numpy().astype(np.float64)
            worst["nan_mismatches"] += int(np.count_nonzero(np.isnan(got) != np.isnan(ref)))
            ok = np.isfinite(ref) & np.isfinite(got)
            worst["nan_mismatches"] += int(np.count_nonzero(np.isinf(ref) & (got != ref)))
            floor = 1.1754944e-38 if name == "softmax" else 1.0   # denormal outputs: absolute error
            scale = np.maximum(np.abs(ref[ok]), floor)
            rel = float(np.max(np.abs(got[ok] - ref[ok]) / scale)) if ok.any() else 0.0
            worst[name] = max(worst[name], rel)
    return worst


def _check_softmax(worst: dict) -> None:
    assert worst["nan_mismatches"] == 0, worst
    assert worst["softmax"] < 3e-7 and worst["log_softmax"] < 1e-7, worst   # measured 1.5e-7, 5.4e-8


@pytest.mark.parametrize("path", SIMD_PATHS)
def test_softmax_lines_simd_paths(path):
    with vmath_path(path):
        _check_softmax(softmax_errors())


@pytest.mark.parametrize("path", SIMD_PATHS)
def test_softmax_exp_has_the_bits_of_exp_across_the_denormal_boundary(path):
    """softmax's exp of x - max takes a one-multiplication 2^n where no lane can end in the
    denormals and the two-halves one where some can (n < -126, x - max below about -87.3). With
    the max 0 and every other value at most e^-60, the double sum is exactly 1, so the softmax is
    e itself and must have the bits of ``tt.exp``, lanes of both kinds mixed in one vector."""
    rng = np.random.default_rng(11)
    x = rng.uniform(-104.0, -60.0, (8, 1031)).astype(np.float32)
    x[:, 0] = 0.0
    x[1] = np.linspace(-88.5, -86.0, 1031, dtype=np.float32)      # the boundary, densely
    x[1, 500] = 0.0
    with vmath_path(path):
        got = tt.softmax(tt.from_numpy(x), dim=-1).numpy()
        want = tt.exp(tt.from_numpy(x)).numpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert np.count_nonzero((want > 0) & (want < np.finfo(np.float32).tiny)) > 1000   # denormals were made


def test_softmax_lines_generic_path():
    env = dict(os.environ, TT_GENERIC_KERNELS="1", PYTHONPATH=str(ROOT))
    code = ("import json, sys; sys.path[:0] = ['tests', 'tests/ops']; import test_vmath as v; "
            "print(json.dumps(v.softmax_errors()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    _check_softmax(json.loads(out.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    print(json.dumps(measure_all(), indent=1))
