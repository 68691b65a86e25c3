"""Speed benchmark: the rows of the speed issue's table, t_tensor beside NumPy and PyTorch, one run.

Each row is checked for agreement with the reference before it is timed (``bench_ops.agree``).
Bandwidth rows count every array the op must read or write once (STREAM convention); matmul rows
count 2*m*n*k flops per product. By default every library uses all cores (t_tensor's
``set_num_threads``, torch's ``set_num_threads``; NumPy's elementwise ops are single-threaded and
its matmul uses its BLAS's threads); ``--threads 1`` gives per-core figures.

Run by hand: ``python benchmarks/bench_speed.py [--quick] [--threads N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_ops import run_rows, torch, trio  # noqa: E402 - shared agreement check, timing and table

import t_tensor as tt  # noqa: E402

TARGETS = {  # the speed issue's targets for t_tensor, printed beside the measurement
    "a + b (4 f32)": "<= 1.5 us",
    "a + b (16M f32, new output)": ">= 20 GB/s",
    "exp (16M f32)": ">= 6 GB/s",
    "sum (16M f32)": ">= 25 GB/s",
    "sum over axis 0 (4096x4096)": ">= 20 GB/s",
    "a.T + b (4096x4096)": ">= 10 GB/s",
    "softmax last axis (4096x1024)": ">= 12 GB/s",
    "matmul 1024^3 f32": ">= 150 GFLOP/s",
    "matmul 2048^3 f32": ">= 160 GFLOP/s",
    "batched matmul (64,128,128)": ">= 100 GFLOP/s",
    "conv2d (32,3,64,64) x 16 3x3 pad 1": "<= 1.4 ms",
}


def np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def tiny_rows() -> dict:
    a_np, a_tt, a_t = trio(np.arange(4, dtype=np.float32))
    return {"a + b (4 f32)": ((lambda: a_tt + a_tt, lambda: a_np + a_np, torch and (lambda: a_t + a_t)), 1e6)}


def bandwidth_rows() -> dict:
    rng = np.random.default_rng(0)
    n = 1 << 24
    a_np, a_tt, a_t = trio(rng.random(n, dtype=np.float32))
    b_np, b_tt, b_t = trio(rng.random(n, dtype=np.float32))
    sq_np, sq_tt, sq_t = trio(a_np.reshape(4096, 4096))
    sqb_np, sqb_tt, sqb_t = trio(b_np.reshape(4096, 4096))
    sm_np, sm_tt, sm_t = trio(rng.random((4096, 1024), dtype=np.float32))
    nbytes = a_np.nbytes
    return {
        "a + b (16M f32, new output)": (
            (lambda: a_tt + b_tt, lambda: a_np + b_np, torch and (lambda: a_t + b_t)),
            3 * nbytes,
        ),
        "exp (16M f32)": ((lambda: a_tt.exp(), lambda: np.exp(a_np), torch and (lambda: a_t.exp())), 2 * nbytes),
        "sum (16M f32)": ((lambda: a_tt.sum(), lambda: a_np.sum(), torch and (lambda: a_t.sum())), nbytes),
        "sum over axis 0 (4096x4096)": (
            (lambda: sq_tt.sum(dim=0), lambda: sq_np.sum(axis=0), torch and (lambda: sq_t.sum(dim=0))),
            nbytes,
        ),
        "a.T + b (4096x4096)": (
            (lambda: sq_tt.T + sqb_tt, lambda: sq_np.T + sqb_np, torch and (lambda: sq_t.T + sqb_t)),
            3 * nbytes,
        ),
        "softmax last axis (4096x1024)": (
            (lambda: tt.softmax(sm_tt, -1), lambda: np_softmax(sm_np), torch and (lambda: torch.softmax(sm_t, -1))),
            2 * sm_np.nbytes,
        ),
    }


def flop_rows() -> dict:
    rng = np.random.default_rng(1)
    rows = {}
    for n in (1024, 2048):
        a_np, a_tt, a_t = trio(rng.random((n, n), dtype=np.float32))
        b_np, b_tt, b_t = trio(rng.random((n, n), dtype=np.float32))
        rows[f"matmul {n}^3 f32"] = (
            (lambda a=a_tt, b=b_tt: a @ b, lambda a=a_np, b=b_np: a @ b, torch and (lambda a=a_t, b=b_t: a @ b)),
            2 * n**3,
        )
    x_np, x_tt, x_t = trio(rng.random((64, 128, 128), dtype=np.float32))
    y_np, y_tt, y_t = trio(rng.random((64, 128, 128), dtype=np.float32))
    rows["batched matmul (64,128,128)"] = (
        (lambda: x_tt @ y_tt, lambda: x_np @ y_np, torch and (lambda: x_t @ y_t)),
        2 * 64 * 128**3,
    )
    return rows


def conv_rows() -> dict:
    rng = np.random.default_rng(2)
    _, img_tt, img_t = trio(rng.random((32, 3, 64, 64), dtype=np.float32))
    _, w_tt, w_t = trio(rng.random((16, 3, 3, 3), dtype=np.float32))
    return {
        "conv2d (32,3,64,64) x 16 3x3 pad 1": (
            (
                lambda: tt.nn.functional.conv2d(img_tt, w_tt, padding=1),
                None,
                torch and (lambda: torch.nn.functional.conv2d(img_t, w_t, padding=1)),
            ),
            1e3,
        )
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for t_tensor and torch")
    args = parser.parse_args()
    tt.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    repeat = 3 if args.quick else 7
    print(f"threads: t_tensor {tt.get_num_threads()}, torch {torch.get_num_threads() if torch else 'n/a'}")
    run_rows("per call", "us", tiny_rows(), 2000 if args.quick else 20000, repeat, higher_is_better=False)
    run_rows("bandwidth", "GB/s", bandwidth_rows(), 3, repeat, higher_is_better=True)
    run_rows("matmul", "GF/s", flop_rows(), 1 if args.quick else 3, repeat, higher_is_better=True)
    run_rows("convolution", "ms", conv_rows(), 3 if args.quick else 10, repeat, higher_is_better=False)
    print("\ntargets for t_tensor (the speed issue):")
    for name, target in TARGETS.items():
        print(f"  {name:<36} {target}")


if __name__ == "__main__":
    main()
