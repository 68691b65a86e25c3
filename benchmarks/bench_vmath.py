"""Vectorized float32 math benchmark: exp, log, tanh, sigmoid, erf, gelu, silu on 16M elements.

Every function runs in t_tensor (new output and out=), NumPy (where it has the function or a
one-line expression of it) and PyTorch with one thread and with its default thread count, in one
process. Throughput is GB/s counting the input read and the output written once (8 bytes per
element). t_tensor's kernel path (avx2 or generic) is printed; run with TT_GENERIC_KERNELS=1 to
time the generic path. Every t_tensor result is first checked against torch in float64 (rtol 1e-5).

Run by hand: ``python benchmarks/bench_vmath.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import t_tensor as tt  # noqa: E402
from t_tensor._capi import ffi, lib  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

N = 16 * 1024 * 1024


def median_seconds(fn, repeat: int) -> float:
    fn()
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeat))


def gbps(seconds: float | None) -> str:
    return f"{8 * N / seconds / 1e9:8.2f}" if seconds else f"{'n/a':>8}"


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 3 if args.quick else 9
    rng = np.random.default_rng(0)
    data = {"real": (rng.standard_normal(N) * 4).astype(np.float32),
            "positive": (rng.random(N) * 100 + 1e-3).astype(np.float32)}
    table = [  # name, domain, t_tensor, numpy, torch
        ("exp", "real", tt.exp, np.exp, torch.exp if torch else None),
        ("log", "positive", tt.log, np.log, torch.log if torch else None),
        ("tanh", "real", tt.tanh, np.tanh, torch.tanh if torch else None),
        ("sigmoid", "real", tt.sigmoid, np_sigmoid, torch.sigmoid if torch else None),
        ("erf", "real", tt.erf, None, torch.erf if torch else None),
        ("gelu", "real", tt.gelu, None, torch.nn.functional.gelu if torch else None),
        ("gelu_tanh", "real", lambda x: tt.gelu(x, approximate="tanh"), None,
         (lambda x: torch.nn.functional.gelu(x, approximate="tanh")) if torch else None),
        ("silu", "real", tt.silu, lambda x: x * np_sigmoid(x), torch.nn.functional.silu if torch else None),
    ]
    kernel = ffi.string(lib.tt_vmath_kernel_name()).decode()
    default_threads = torch.get_num_threads() if torch else 0
    print(f"16M float32, GB/s (8 bytes per element); t_tensor kernel: {kernel}, "
          f"t_tensor threads: {tt.get_num_threads()}, torch default threads: {default_threads}")
    print(f"| {'function':<10} | {'tt':>8} | {'tt out=':>8} | {'numpy':>8} | {'torch 1t':>8} | {'torch':>8} |")
    print(f"|{'-' * 12}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for name, domain, tt_fn, np_fn, torch_fn in table:
        results = bench_one(name, data[domain], tt_fn, np_fn, torch_fn, default_threads, repeat)
        cells = " | ".join(gbps(results.get(k)) for k in ("tt", "tt_out", "np", "torch1", "torch"))
        print(f"| {name:<10} | {cells} |")


def bench_one(name, x_np, tt_fn, np_fn, torch_fn, default_threads: int, repeat: int) -> dict:
    x_tt = tt.from_numpy(x_np)
    out_tt = tt.empty(N, dtype=tt.float32)
    results = {}
    if torch_fn is not None:
        x_torch = torch.from_numpy(x_np)
        want = torch_fn(x_torch.double()).float().numpy()   # float64 oracle: torch's float gelu is less exact
        np.testing.assert_allclose(tt_fn(x_tt).numpy(), want, rtol=1e-5, atol=1e-6)
        torch.set_num_threads(1)
        results["torch1"] = median_seconds(lambda: torch_fn(x_torch), repeat)
        torch.set_num_threads(default_threads)
        results["torch"] = median_seconds(lambda: torch_fn(x_torch), repeat)
    results["tt"] = median_seconds(lambda: tt_fn(x_tt), repeat)
    if name in ("exp", "log", "tanh", "sigmoid", "erf"):
        fn = getattr(tt, name)
        results["tt_out"] = median_seconds(lambda: fn(x_tt, out=out_tt), repeat)
    if np_fn is not None:
        results["np"] = median_seconds(lambda: np_fn(x_np), repeat)
    return results

if __name__ == "__main__":
    main()
