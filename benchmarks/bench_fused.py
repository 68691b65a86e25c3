"""Fused elementwise kernel benchmark: relu(a * b + c) on 16M float32 elements.

Compares the fused kernel (``FusedKernel("relu(add(mul(@0,@1),@2))")``, one pass: reads a, b, c,
writes the result; also into a preallocated ``out=``) with the same three ops run eagerly in
t_tensor (three passes, two intermediate tensors), NumPy (three ops, in place after the first to
be fair to it: ``np.multiply``, ``+=``, ``np.maximum(.., 0, out=)``) and PyTorch (eager ``torch.relu(a * b + c)``, plus
``torch.addcmul(c, a, b).relu_()``, two passes). Every variant runs with one thread and with the
default thread count. GB/s counts the compulsory traffic only: 3 inputs read and 1 output written
once, 16 bytes per element, whatever the variant really moves. Every result is checked against
NumPy first.

Run by hand: ``python benchmarks/bench_fused.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import median_seconds  # noqa: E402 - the shared timing

import t_tensor as tt  # noqa: E402
from t_tensor.graph import FusedKernel  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

N = 16 * 1024 * 1024
BYTES = 16 * N


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 3 if args.quick else 9
    rng = np.random.default_rng(0)
    a_np, b_np, c_np = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    a, b, c = tt.tensor(a_np), tt.tensor(b_np), tt.tensor(c_np)
    kernel = FusedKernel("relu(add(mul(@0,@1),@2))")
    expected = np.maximum(a_np * b_np + c_np, 0)

    def numpy_ops():
        out = np.multiply(a_np, b_np)
        out += c_np
        return np.maximum(out, 0, out=out)

    out = tt.empty(N)  # a preallocated result, as an executor's arena gives
    default_threads = tt.get_num_threads()
    tt_threads = (tt.set_num_threads, default_threads)
    variants = [  # name, function, (how to set its thread count, its default count) or None
        ("t_tensor fused", lambda: kernel(a, b, c), tt_threads),
        ("t_tensor fused, out=", lambda: kernel(a, b, c, out=out), tt_threads),
        ("t_tensor eager (3 ops)", lambda: tt.relu(tt.add(tt.mul(a, b), c)), tt_threads),
        ("numpy (3 ops, in place)", numpy_ops, None),
    ]
    if torch is not None:
        a_t, b_t, c_t = (torch.from_numpy(x) for x in (a_np, b_np, c_np))
        torch_threads = (torch.set_num_threads, torch.get_num_threads())
        variants += [
            ("torch eager (3 ops)", lambda: torch.relu(a_t * b_t + c_t), torch_threads),
            ("torch addcmul + relu_", lambda: torch.addcmul(c_t, a_t, b_t).relu_(), torch_threads),
        ]
    print(f"relu(a * b + c), {N} float32 elements ({N * 4 / 2**20:.0f} MiB per tensor); "
          f"GB/s = {BYTES / 1e9:.2f} GB / time; cpus: {os.cpu_count()}, t_tensor threads: {default_threads}")
    print(f"{'variant':<26}{'threads':>8}{'ms':>10}{'GB/s':>8}")
    for name, fn, threading in variants:
        result = fn()
        got = result.numpy() if hasattr(result, "numpy") else result
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
        counts = (1,) if threading is None else sorted({1, threading[1]})  # NumPy: one thread
        for threads in counts:
            if threading is not None:
                threading[0](threads)
            seconds = median_seconds(fn, 1, repeat)
            print(f"{name:<26}{threads:>8}{seconds * 1e3:>10.2f}{BYTES / seconds / 1e9:>8.2f}")
        if threading is not None:
            threading[0](threading[1])


if __name__ == "__main__":
    main()
