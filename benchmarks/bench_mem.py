"""Memory-bound benchmarks: transposed copies and adds, float16 casts (t_tensor vs NumPy vs torch).

Run: ``PYTHONPATH=. python benchmarks/bench_mem.py [--threads N]``. Prints the best of several
runs in GB/s (bytes read + bytes written per second) for each library, measured in one process.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import t_tensor as tt


def median_time(fn, repeat: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def report(name: str, nbytes: int, fns: dict) -> None:
    cells = []
    for lib, fn in fns.items():
        seconds = median_time(fn)
        cells.append(f"{lib} {nbytes / seconds / 1e9:6.2f} GB/s ({seconds * 1e3:7.2f} ms)")
    print(f"{name:28s} " + " | ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    tt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    n = 4096
    a_np = np.random.rand(n, n).astype(np.float32)
    b_np = np.random.rand(n, n).astype(np.float32)
    a_tt, b_tt = tt.from_numpy(a_np), tt.from_numpy(b_np)
    a_th, b_th = torch.from_numpy(a_np), torch.from_numpy(b_np)
    size = a_np.nbytes
    report("x.T.contiguous() 4096^2 f32", 2 * size, {
        "tt": lambda: a_tt.T.contiguous(),
        "numpy": lambda: np.ascontiguousarray(a_np.T),
        "torch": lambda: a_th.T.contiguous(),
    })
    report("a.T + b 4096^2 f32", 3 * size, {
        "tt": lambda: a_tt.T + b_tt,
        "numpy": lambda: a_np.T + b_np,
        "torch": lambda: a_th.T + b_th,
    })
    x_np = np.random.randn(16 * 1024 * 1024).astype(np.float32)
    h_np = x_np.astype(np.float16)
    x_tt, h_tt = tt.from_numpy(x_np), tt.from_numpy(h_np)
    x_th, h_th = torch.from_numpy(x_np), torch.from_numpy(h_np)
    report("to(float16) 16M", 6 * x_np.size, {
        "tt": lambda: x_tt.to(tt.float16),
        "numpy": lambda: x_np.astype(np.float16),
        "torch": lambda: x_th.to(torch.float16),
    })
    report("to(float32) from f16 16M", 6 * x_np.size, {
        "tt": lambda: h_tt.to(tt.float32),
        "numpy": lambda: h_np.astype(np.float32),
        "torch": lambda: h_th.to(torch.float32),
    })
    report("a + b 16M f32", 12 * x_np.size, {
        "tt": lambda: x_tt + x_tt,
        "numpy": lambda: x_np + x_np,
        "torch": lambda: x_th + x_th,
    })


if __name__ == "__main__":
    main()
