"""The elementwise and conversion row functions give the same bits on every instruction set.

The rows are compiled three times (baseline x86-64, AVX2, AVX-512; see csrc/src/kernels/
elementwise.c and copy.c) and the widest the CPU has is picked once per process, capped by the
environment variable TT_GENERIC_KERNELS ("1" baseline, "avx2", "0" the widest). A script calls
every op of every family on every dtype it takes, and every conversion between two dtypes,
straight through the C entry points, over inputs full of
special values (NaN with payloads, infinities, signed zeros, denormals, integer extremes, shift
amounts past the width) and over every row layout (contiguous, a broadcast scalar operand,
strided, lengths that leave vector tails), and prints a digest of each result's bytes and status.
The digests of the three settings must be equal.

Two things are held fixed so that only the rows' builds differ: the float32 transcendental rows
call the vectorized math kernels, whose own paths test_vmath.py measures, so the script pins
those to their generic path; and a NaN result compares as NaN whatever its sign and payload.
Which input NaN's payload an operation passes on is left open by IEEE 754, and the scalar and
vector forms differ there: x86 passes the first operand's, the compiler may swap the operands of
a commutative op, and libm's ceil returns a signaling NaN unquieted where the SSE4.1 instruction
quiets it. NumPy and PyTorch differ in the same way. The ops' values themselves are checked
against NumPy and PyTorch by the other tests, on the widest path.
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
from t_tensor._C import ffi, lib

rng = np.random.default_rng(11)
assert lib.tt_vmath_set_kernel(b"generic") == lib.TT_OK   # the vmath paths are test_vmath.py's
NP = {0: np.bool_, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.int64, 5: np.uint8,
      6: np.float16, 7: np.float32, 8: np.float64}


def values(code, n, salt):
    dt = np.dtype(NP[code])
    r = np.random.default_rng(salt)
    if code == 0:
        return r.integers(0, 2, n).astype(np.bool_)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        full = r.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        small = r.integers(max(info.min, -70), 70, n).astype(dt)
        out = np.where(r.random(n) < 0.5, full, small)
        out[:4] = [info.min, info.max, 0, 1 if info.min == 0 else -1]
        return out
    finfo = np.finfo(dt)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, finfo.tiny / 4, -finfo.tiny,
                        finfo.max, -finfo.max, 1.0, -1.0, 0.5, 2.0, 1e-3, 88.0, -104.0], dtype=dt)
    normal = (r.standard_normal(n) * np.where(r.random(n) < 0.2, 50.0, 1.5)).astype(dt)
    bits = r.integers(0, 2 ** (8 * dt.itemsize), n, dtype=np.uint64).astype(
        {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)   # NaN payloads too
    out = np.where(r.random(n) < 0.15, bits, normal)
    out[r.integers(0, n, 3 * len(special))] = np.resize(special, 3 * len(special))
    out[:min(n, len(special))] = special[:n]
    return out


def addr(a):
    return ffi.cast("uintptr_t", a.ctypes.data)


def i64(seq):
    return ffi.new("int64_t[]", list(seq) or [0])


# Layouts of one row: (length, stride of each input, stride of the output, in elements), and
# which inputs are broadcast instead (stride 0: the first element everywhere): none, the first,
# the last, or (ternary) both bounds, as clamp to two numbers passes them.
LAYOUTS = [(1000, 1, 1), (37, 1, 1), (1000, 3, 1), (5, 1, 1), (300, 1, 2), (67, -2, 1)]
BROADCASTS = {1: [()], 2: [(), (0,), (1,)], 3: [(), (0,), (2,), (1, 2)]}


def run(call, n_inputs, code, out_code, layout, broadcast, salt):
    n, step, out_step = layout
    inputs = []
    for k in range(n_inputs):
        kind = 0 if (call == "ternary_where" and k == 0) else code
        data = values(kind, n * abs(step) + 1, salt + 7 * k)
        if call == "ternary_where" and k == 0:
            data = data.view(np.uint8) * np.uint8(rng.choice([1, 2, 255]))   # any nonzero is true
        inputs.append(data)
    strides = [0 if k in broadcast else step for k in range(n_inputs)]
    out = np.zeros(n * out_step, dtype=NP[out_code])
    shape = i64([n])
    args = []
    for data, stride in zip(inputs, strides):
        start = data[(n - 1) * -stride:] if stride < 0 else data   # a negative stride reads backwards
        args += [addr(start), i64([stride])]
    return out, shape, args, inputs            # the inputs must outlive the call


results = {}


def record(key, status, out):
    if out.dtype.kind == "f":                   # NaN compares as NaN, whatever its sign and payload
        out = np.where(np.isnan(out), np.array(np.nan, out.dtype), out)
    h = results.setdefault(key, hashlib.sha256())
    h.update(int(status).to_bytes(4, "little", signed=True))
    h.update(out.tobytes())


FAMILIES = [
    # name, C function, number of inputs, op count, extra parameter sets, is a predicate op
    ("unary", lib.tt_unary, 1, lib.TT_NUM_UNARY_OPS, [()], lambda op: op >= lib.TT_LOGICAL_NOT),
    ("binary", lib.tt_binary, 2, lib.TT_NUM_BINARY_OPS, [()], lambda op: op >= lib.TT_EQ),
    ("unary_param", lib.tt_unary_param, 1, lib.TT_NUM_UNARY_PARAM_OPS,
     [(1.0, 20.0), (0.5, 2.0), (1e-6, 1.0), (0.01, 0.0)], lambda op: False),
    ("binary_param", lib.tt_binary_param, 2, lib.TT_NUM_BINARY_PARAM_OPS, [(0.3,), (0.7,), (-2.5,)],
     lambda op: False),
    ("ternary", lib.tt_ternary, 3, lib.TT_NUM_TERNARY_OPS, [()], lambda op: False),
]

supported = 0
for name, fn, n_inputs, n_ops, params, is_pred in FAMILIES:
    for op in range(n_ops):
        for code in range(9):
            out_code = 0 if is_pred(op) else code
            call = "ternary_where" if (name == "ternary" and op == lib.TT_WHERE) else name
            key = f"{name}:{op}:{code}"
            cases = [(layout, broadcast, p) for layout in LAYOUTS for p in params for broadcast in BROADCASTS[n_inputs]]
            for layout, broadcast, p in cases:
                out, shape, args, _keep = run(call, n_inputs, code, out_code, layout, broadcast, op * 31 + code)
                status = fn(op, 1, shape, *args, addr(out), i64([layout[2]]), code, *p)
                if status == lib.TT_ERR_UNSUPPORTED_DTYPE:
                    break                       # the op does not take this dtype
                record(key, status, out)
            supported += key in results
# fmod, remainder and floor_divide once more, on operands whose quotients sit at, just under and
# just over integers and powers of two (the rows' vectorized fmod and its hand-over to the C
# library; values() gives mostly small or huge quotients), over the same layouts.
for op in (lib.TT_FMOD, lib.TT_REMAINDER, lib.TT_FLOOR_DIVIDE):
    for code in (6, 7, 8):
        dt = np.dtype(NP[code])
        key = f"mod:{op}:{code}"
        for layout in LAYOUTS:
            n, step, out_step = layout
            m = n * abs(step) + 1
            r = np.random.default_rng(op * 9 + code)
            b = values(code, m, 5 * op + code)
            k = np.round(2.0 ** r.uniform(0, 40 if code == 8 else 22, m)) * r.choice([-1, 1], m)
            with np.errstate(all="ignore"):
                a = (k * b.astype(np.float64)).astype(dt)
                a = np.where(r.random(m) < 0.5, np.nextafter(a, r.choice([-np.inf, np.inf], m).astype(dt)), a)
            for broadcast in ((), (1,)):
                out = np.zeros(n * out_step, dtype=dt)
                args = []
                for data, stride in zip((a, b), [0 if j in broadcast else step for j in range(2)]):
                    start = data[(n - 1) * -stride:] if stride < 0 else data
                    args += [addr(start), i64([stride])]
                status = lib.tt_binary(op, 1, i64([n]), *args, addr(out), i64([out_step]), code)
                record(key, status, out)
        supported += 1
# Conversions (tt_copy_strided between two dtypes; its rows have the same three builds), over the
# same layouts; a broadcast source is converted once and then filled.
for src in range(9):
    for dst in range(9):
        if src == dst:
            continue
        key = f"cast:{src}:{dst}"
        for layout in LAYOUTS:
            for broadcast in ((), (0,)):
                out, shape, args, _keep = run("cast", 1, src, dst, layout, broadcast, 97 * src + dst)
                status = lib.tt_copy_strided(1, shape, args[0], args[1], src, addr(out), i64([layout[2]]), dst)
                record(key, status, out)
        supported += 1

print(json.dumps({"kernel": ffi.string(lib.tt_elementwise_kernel_name()).decode(),
                  "supported": supported, "digests": {k: h.hexdigest() for k, h in results.items()}}))
"""


def _digests(setting: str) -> dict:
    env = dict(os.environ, TT_GENERIC_KERNELS=setting, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


BUILDS = ["baseline", "avx2", "avx512"]


def _widest() -> str:
    """The widest build this CPU takes: from the CPU's flags where Linux lists them, else the
    library's own pick with nothing capping it."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and "flags" in cpuinfo.read_text():
        flags = cpuinfo.read_text().split()
        if all(f in flags for f in ("avx512f", "avx512bw", "avx512dq", "avx512vl")):
            return "avx512"
        return "avx2" if "avx2" in flags else "baseline"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TT_GENERIC_KERNELS", None)
    code = "from t_tensor._C import ffi, lib; print(ffi.string(lib.tt_elementwise_kernel_name()).decode())"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    name = done.stdout.strip()
    assert name in BUILDS, name
    return name


@pytest.fixture(scope="module")
def baseline() -> dict:
    return _digests("1")


def test_the_script_reaches_every_op_and_dtype(baseline):
    # 30 binary, 43 unary, 4 + 2 param and 3 ternary ops over the dtypes each takes (439 rows), the
    # float fmod, remainder and floor_divide rows on near-integer quotients (9) and the 72
    # conversions: a script that silently skipped a family would compare nothing.
    assert baseline["supported"] == len(baseline["digests"]) >= 500
    assert baseline["kernel"] == "baseline"


@pytest.mark.parametrize("setting", ["avx2", "0"])
def test_every_row_gives_the_baseline_bits(baseline, setting):
    report = _digests(setting)
    widest = _widest()
    assert report["kernel"] == (widest if setting == "0" else min("avx2", widest, key=BUILDS.index))
    got = report["digests"]
    assert got.keys() == baseline["digests"].keys()
    differing = sorted(k for k in got if got[k] != baseline["digests"][k])
    assert differing == [], f"rows whose bits differ from the baseline build ({setting}): {differing}"
