"""The reductions give the same bits on every instruction set.

tt_reduce's op functions are compiled three times (baseline x86-64, AVX2, AVX-512; see
csrc/src/kernels/reduce_rows.h), and the widest the CPU has is picked once per process, capped by
the environment variable TT_GENERIC_KERNELS ("1" baseline, "avx2", "0" the widest), which also
turns off the hand-written float32 row kernels on the baseline. A script runs every reduction
(sum, nansum, prod, mean, amax, amin, max/min with indices, argmax, argmin, any, all,
count_nonzero, var, std, logsumexp and the vector norms) on every dtype it takes, over inputs full
of special values (NaN, infinities, signed zeros, integer extremes) and over the layouts that reach
each loop of the driver: the last dim of a contiguous array (rows), a leading dim (columns, several
accumulators at a time), everything, a transposed and a sliced array, lengths that leave vector
tails. It prints a digest of each result's bytes; the digests of the three settings must be equal.
NaN compares as NaN whatever its payload (which NaN an operation passes on is open, as in
test_elementwise_isa.py).

One documented exception: a float32 sum or mean of contiguous rows takes the hand-written AVX2 or
AVX-512 kernel on those builds, which adds in 64 lanes where the generic row adds in 16 (both
pairwise, both checked against NumPy by test_reductions.py): those results may differ from the
baseline's in the last bits, and must still agree between AVX2 and AVX-512.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import hashlib, json
import numpy as np
import t_tensor as tt

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.float16, np.float32, np.float64]


def values(dt, shape, salt):
    dt = np.dtype(dt)
    r = np.random.default_rng(salt)
    n = int(np.prod(shape))
    if dt == np.bool_:
        return r.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        small = r.integers(max(info.min, -9), 10, n).astype(dt)
        small[r.integers(0, n, 4)] = [info.min, info.max, 0, 1]
        return small.reshape(shape)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 3e4], dtype=dt)
    out = (r.standard_normal(n) * 2).astype(dt)
    where = r.random(n)
    out[where < 0.01] = np.nan
    out[(where > 0.5) & (where < 0.52)] = -0.0
    out[(where > 0.6) & (where < 0.605)] = np.inf
    out[:len(special)] = special[:n]
    return out.reshape(shape)


def ops(x):
    floating = x.dtype.is_floating_point
    calls = {
        "sum": lambda d: tt.sum(x, d), "prod": lambda d: tt.prod(x, d), "amax": lambda d: tt.amax(x, d),
        "amin": lambda d: tt.amin(x, d), "any": lambda d: tt.any(x, d), "all": lambda d: tt.all(x, d),
        "count_nonzero": lambda d: tt.count_nonzero(x, d),
    }
    if x.dtype is not tt.bool:
        calls.update({"argmax": lambda d: tt.argmax(x, d), "argmin": lambda d: tt.argmin(x, d),
                      "max": lambda d: tt.max(x, d), "min": lambda d: tt.min(x, d)})
    if floating:
        calls.update({"nansum": lambda d: tt.nansum(x, d), "mean": lambda d: tt.mean(x, d),
                      "var": lambda d: tt.var(x, d), "std": lambda d: tt.std(x, d, correction=0),
                      "logsumexp": lambda d: tt.logsumexp(x, d)})
        for order in (0, 1, 2, 3, float("inf"), float("-inf")):
            calls[f"norm{order}"] = lambda d, order=order: tt.linalg.vector_norm(x, order, d)
    return calls


results = {}


def record(key, value):
    parts = value if isinstance(value, tuple) else (value,)
    h = results.setdefault(key, hashlib.sha256())
    for part in parts:
        out = part.numpy()
        if out.dtype.kind == "f":
            out = np.where(np.isnan(out), np.array(np.nan, out.dtype), out)
        h.update(out.tobytes())


for k, dt in enumerate(DTYPES):
    base = values(dt, (67, 130), 5 + k)
    layouts = {"contiguous": tt.from_numpy(base), "transposed": tt.from_numpy(base).t(),
               "sliced": tt.from_numpy(base)[1:, ::3], "3d": tt.from_numpy(values(dt, (3, 5, 67), 50 + k))}
    for lname, x in layouts.items():
        dims = [-1, 0, None] + ([(0, 2), 1] if x.ndim == 3 else [])
        for oname, call in ops(x).items():
            for d in dims:
                if d is None and oname in ("max", "min"):
                    continue            # tt.max(x) is amax: no indices
                if isinstance(d, tuple) and oname in ("argmax", "argmin", "max", "min"):
                    continue
                whole = tuple(range(x.ndim)) if d is None and oname == "logsumexp" else d   # needs a dim
                record(f"{np.dtype(dt).name}:{lname}:{oname}:{d}", call(whole))

print(json.dumps({"count": len(results), "digests": {k: h.hexdigest() for k, h in results.items()}}))
"""


def _digests(setting: str) -> dict:
    env = dict(os.environ, TT_GENERIC_KERNELS=setting, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def baseline() -> dict:
    return _digests("1")


def test_the_script_reaches_every_reduction(baseline):
    # 9 dtypes x 4 layouts x (7 to 23 ops) x 3 to 5 dims: a script that skipped a family would
    # compare nothing
    assert baseline["count"] == len(baseline["digests"]) >= 1500


def _float32_kernel_sum(key: str) -> bool:
    dtype, _layout, op, _dim = key.split(":")
    return dtype == "float32" and op in ("sum", "mean")


@pytest.fixture(scope="module")
def avx2() -> dict:
    return _digests("avx2")


def test_avx2_gives_the_baseline_bits(baseline, avx2):
    assert avx2["digests"].keys() == baseline["digests"].keys()
    differ = [k for k in baseline["digests"]
              if avx2["digests"][k] != baseline["digests"][k] and not _float32_kernel_sum(k)]
    assert differ == []


def test_the_widest_build_gives_the_avx2_bits(avx2):
    widest = _digests("0")
    assert widest["digests"] == avx2["digests"]
