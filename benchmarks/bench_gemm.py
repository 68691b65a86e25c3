"""GEMM and convolution benchmark (issue 4): t_tensor's own GEMM beside NumPy and PyTorch, in one run.

Rows: matmul 1024^3 and 2048^3 float32, batched matmul (64, 128, 128) float32, and conv2d of a
(32, 3, 64, 64) batch with 16 3x3 filters, padding 1. Each row is printed twice: in GFLOP/s
(2*m*n*k per product; for the convolution 2 * N * C_out * C_in * 9 * H * W) and in milliseconds,
with torch on its default thread count and again with torch on one thread. t_tensor uses
tt.get_num_threads() threads (all cores unless TT is told otherwise). Every row first checks that
t_tensor's result agrees with torch's, so that a fast wrong kernel cannot look good.

Run by hand: ``python benchmarks/bench_gemm.py [--quick] [--generic] [--threads N]``.
``--generic`` forces the generic (plain C) micro-kernel, ``--kernel avx2`` (or ``avx512``, ``generic``)
names one. The machine is shared: numbers are
medians of repeats and still noisy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import median_seconds, row  # noqa: E402 - the shared timing and table helpers

import t_tensor as tt  # noqa: E402
from t_tensor._capi import ffi, lib  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark still compares against NumPy
    torch = None


def cases(quick: bool):
    rng = np.random.default_rng(0)

    def mat(*shape):
        return rng.uniform(-1, 1, shape).astype(np.float32)

    sizes = [1024] if quick else [1024, 2048]
    for n in sizes:
        a, b = mat(n, n), mat(n, n)
        yield f"matmul {n}^3 f32", 2.0 * n**3, (a, b), "matmul"
    a, b = mat(64, 128, 128), mat(64, 128, 128)
    yield "bmm (64,128,128) f32", 2.0 * 64 * 128**3, (a, b), "matmul"
    x, w, bias = mat(32, 3, 64, 64), mat(16, 3, 3, 3), mat(16)
    yield "conv2d (32,3,64,64)x16 3x3 p1", 2.0 * 32 * 16 * 3 * 9 * 64 * 64, (x, w, bias), "conv"


def runners(kind: str, arrays):
    t_args = [tt.from_numpy(x) for x in arrays]
    p_args = [torch.from_numpy(x) for x in arrays] if torch is not None else None
    if kind == "matmul":
        f_tt = lambda: t_args[0] @ t_args[1]  # noqa: E731
        f_np = lambda: arrays[0] @ arrays[1]  # noqa: E731
        f_torch = (lambda: p_args[0] @ p_args[1]) if p_args else None  # noqa: E731
    else:
        f_tt = lambda: tt.nn.functional.conv2d(*t_args, padding=1)  # noqa: E731
        f_np = None  # NumPy has no convolution
        f_torch = (lambda: torch.nn.functional.conv2d(*p_args, padding=1)) if p_args else None  # noqa: E731
    return f_tt, f_np, f_torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip 2048^3, fewer repeats")
    parser.add_argument("--generic", action="store_true", help="force the generic micro-kernel")
    parser.add_argument("--kernel", choices=["generic", "avx2", "avx512"], help="force this micro-kernel")
    parser.add_argument("--threads", type=int, default=None, help="t_tensor's thread count")
    args = parser.parse_args()
    if args.generic:
        lib.tt_gemm_force_generic(1)
    if args.kernel and lib.tt_gemm_set_kernel(args.kernel.encode()) != 0:
        raise SystemExit(f"this CPU cannot run the {args.kernel} micro-kernel")
    if args.threads:
        tt.set_num_threads(args.threads)
    repeat = 3 if args.quick else 7
    default_torch_threads = torch.get_num_threads() if torch is not None else None
    print(f"t_tensor: {tt.get_num_threads()} threads, micro-kernel {ffi.string(lib.tt_gemm_kernel_name()).decode()}; "
          f"torch default threads: {default_torch_threads}")
    header = (f"| {'case':<34} | {'unit':<5} | {'tt':>10} | {'np':>10} | {'torch':>10} | {'vs np':>7} "
              f"| {'vs torch':>7} |")
    lines = []
    for name, flops, arrays, kind in cases(args.quick):
        f_tt, f_np, f_torch = runners(kind, arrays)
        if f_torch is not None:
            got, want = f_tt().numpy(), f_torch().numpy()
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
        number = 1 if flops > 1e9 else 5
        for label, threads in (("torch default", default_torch_threads), ("torch 1 thread", 1)):
            seconds = {"tt": median_seconds(f_tt, number, repeat),
                       "np": median_seconds(f_np, number, repeat) if f_np else None}
            if f_torch is not None:
                torch.set_num_threads(threads)
                seconds["torch"] = median_seconds(f_torch, number, repeat)
                torch.set_num_threads(default_torch_threads)
            gflops = {k: (flops / v / 1e9 if v else None) for k, v in seconds.items()}
            ms = {k: (v * 1e3 if v else None) for k, v in seconds.items()}
            lines.append(row(f"{name} [{label}]", "GF/s", gflops, True))
            lines.append(row(f"{name} [{label}]", "ms", ms, False))
    print(header)
    print("|" + "---|" * 7)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
