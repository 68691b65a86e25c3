"""Core benchmark: what issue 2's layers cost, beside NumPy and PyTorch, in one run.

Per-call overheads (creating small tensors, views, interop) in microseconds, and bandwidth of the
strided copy kernel (contiguous copies, transposed copies, casts) in GB/s counting bytes read plus
bytes written. Run by hand: ``python benchmarks/bench_core.py [--quick]``; torch is optional.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np

import t_tensor as tt

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the benchmark still compares against NumPy
    torch = None


def median_seconds(fn, number: int, repeat: int) -> float:
    fn()  # warm-up: first-call costs (allocation of the cache, imports) are not what we measure
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def row(name: str, unit: str, results: dict[str, float | None], higher_is_better: bool) -> str:
    cells = [
        f"{results[lib]:10.3f}" if results.get(lib) is not None else f"{'n/a':>10}" for lib in ("tt", "np", "torch")
    ]
    ratios = []
    for peer in ("np", "torch"):
        if results.get(peer) and results.get("tt"):
            ratio = results["tt"] / results[peer] if higher_is_better else results[peer] / results["tt"]
            ratios.append(f"{ratio:6.2f}x")
        else:
            ratios.append(f"{'n/a':>7}")
    return f"| {name:<34} | {unit:<5} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7

    small_np = np.zeros((4, 4), dtype=np.float32)
    small_tt = tt.from_numpy(small_np)
    small_torch = torch.from_numpy(small_np) if torch else None
    vec_np = np.ones(4, dtype=np.float32)
    vec_tt = tt.from_numpy(vec_np)
    vec_torch = torch.from_numpy(vec_np) if torch else None
    overhead = {
        "zeros(4)": (lambda: tt.zeros(4), lambda: np.zeros(4, np.float32), torch and (lambda: torch.zeros(4))),
        "empty((64, 64))": (
            lambda: tt.empty(64, 64),
            lambda: np.empty((64, 64), np.float32),
            torch and (lambda: torch.empty(64, 64)),
        ),
        "tensor([1.0, 2.0, 3.0])": (
            lambda: tt.tensor([1.0, 2.0, 3.0]),
            lambda: np.array([1.0, 2.0, 3.0], np.float32),
            torch and (lambda: torch.tensor([1.0, 2.0, 3.0])),
        ),
        "x.T (4x4)": (lambda: small_tt.T, lambda: small_np.T, torch and (lambda: small_torch.T)),
        "x[1:, ::2] (4x4)": (
            lambda: small_tt[1:, ::2],
            lambda: small_np[1:, ::2],
            torch and (lambda: small_torch[1:, ::2]),
        ),
        "x.view(16) (4x4)": (
            lambda: small_tt.view(16),
            lambda: small_np.reshape(16),
            torch and (lambda: small_torch.view(16)),
        ),
        "from_numpy (4x4)": (
            lambda: tt.from_numpy(small_np),
            lambda: np.asarray(small_np),
            torch and (lambda: torch.from_numpy(small_np)),
        ),
        "a + b (4 float32)": (
            lambda: vec_tt + vec_tt,
            lambda: vec_np + vec_np,
            torch and (lambda: vec_torch + vec_torch),
        ),
        "x.numpy() (4x4)": (lambda: small_tt.numpy(), lambda: small_np.view(), torch and (lambda: small_torch.numpy())),
    }
    print("| per call (lower is better)         | unit  |         tt |         np |      torch | np/tt   | torch/tt |")
    print("|---|---|---|---|---|---|---|")
    for name, (f_tt, f_np, f_torch) in overhead.items():
        number = 2000 if args.quick else 20000
        results = {
            "tt": median_seconds(f_tt, number, repeat) * 1e6,
            "np": median_seconds(f_np, number, repeat) * 1e6,
            "torch": median_seconds(f_torch, number, repeat) * 1e6 if f_torch else None,
        }
        print(row(name, "us", results, higher_is_better=False))

    n = 4096
    big_np = np.random.default_rng(0).random((n, n), dtype=np.float32)
    big_tt = tt.from_numpy(big_np)
    big_torch = torch.from_numpy(big_np) if torch else None
    nbytes = big_np.nbytes
    bandwidth = {
        # name: (functions, bytes moved)
        "clone (4096x4096 f32)": (
            (lambda: big_tt.clone(), lambda: big_np.copy(), torch and (lambda: big_torch.clone())),
            2 * nbytes,
        ),
        "x.T.contiguous() (4096x4096 f32)": (
            (
                lambda: big_tt.T.contiguous(),
                lambda: np.ascontiguousarray(big_np.T),
                torch and (lambda: big_torch.T.contiguous()),
            ),
            2 * nbytes,
        ),
        "to(float64) (4096x4096 f32)": (
            (
                lambda: big_tt.to(tt.float64),
                lambda: big_np.astype(np.float64),
                torch and (lambda: big_torch.to(torch.float64)),
            ),
            3 * nbytes,
        ),
        "to(float16) (4096x4096 f32)": (
            (
                lambda: big_tt.to(tt.float16),
                lambda: big_np.astype(np.float16),
                torch and (lambda: big_torch.to(torch.float16)),
            ),
            nbytes * 3 // 2,
        ),
        "a + b (4096x4096 f32, new output)": (
            (lambda: big_tt + big_tt, lambda: big_np + big_np, torch and (lambda: big_torch + big_torch)),
            3 * nbytes,
        ),
        "exp (4096x4096 f32)": (
            (lambda: big_tt.exp(), lambda: np.exp(big_np), torch and (lambda: big_torch.exp())),
            2 * nbytes,
        ),
        "a.T + b (4096x4096 f32)": (
            (lambda: big_tt.T + big_tt, lambda: big_np.T + big_np, torch and (lambda: big_torch.T + big_torch)),
            3 * nbytes,
        ),
        "fill_(1) (4096x4096 f32)": (
            (lambda: big_tt.fill_(1.0), lambda: big_np.fill(1.0), torch and (lambda: big_torch.fill_(1.0))),
            nbytes,
        ),
    }
    print()
    print("| bandwidth (higher is better)       | unit  |         tt |         np |      torch | tt/np   | tt/torch |")
    print("|---|---|---|---|---|---|---|")
    for name, ((f_tt, f_np, f_torch), moved) in bandwidth.items():
        number = 3
        results = {
            "tt": moved / median_seconds(f_tt, number, repeat) / 1e9,
            "np": moved / median_seconds(f_np, number, repeat) / 1e9,
            "torch": moved / median_seconds(f_torch, number, repeat) / 1e9 if f_torch else None,
        }
        print(row(name, "GB/s", results, higher_is_better=True))
    print("\ntorch runs with 1 thread; t_tensor's kernels are single-threaded until the speed issue.")


if __name__ == "__main__":
    main()
