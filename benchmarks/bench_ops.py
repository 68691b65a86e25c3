"""Ops benchmark: the eager op set of issue 3 beside NumPy and PyTorch, in one run.

Four groups, each row timed in all three libraries in the same process and printed with ratios:

* per-op dispatch on tiny tensors (microseconds per call: the Python cost of promotion,
  broadcasting, allocation and one C call);
* 16M-element elementwise ops (GB/s, counting every array the op must read or write once);
* reductions and softmax (GB/s of input read, plus the output for softmax);
* indexing, sorting, matmul and convolution (milliseconds per call).

Run by hand: ``python benchmarks/bench_ops.py [--quick] [--only GROUP]``. torch runs with one
thread, t_tensor with its default thread count (``benchmarks/bench_speed.py --threads`` sets
both). Every row first checks that t_tensor's result equals NumPy's (or torch's) so that a fast
wrong kernel cannot look good.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import row  # noqa: E402 - the shared table helper

import t_tensor as tt  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the benchmark still compares against NumPy
    torch = None

Fn = Callable[[], object] | None
SETTLE_SECONDS = 0.2  # pause before each timing (see run_rows)
WARM_SECONDS = 0.05  # untimed calls after the pause (see run_rows)


def as_numpy(result: object) -> np.ndarray:
    if isinstance(result, (tuple, list)):
        result = result[0]
    if isinstance(result, tt.Tensor):
        return result.numpy()
    if torch is not None and isinstance(result, torch.Tensor):
        return result.numpy()
    return np.asarray(result)


def agree(name: str, f_tt: Fn, reference: Fn) -> None:
    """Stop the benchmark when t_tensor and the reference disagree on this row."""
    got, want = as_numpy(f_tt()), as_numpy(reference())
    if got.shape != want.shape or not np.allclose(
        got.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=1e-3
    ):
        raise SystemExit(f"{name}: t_tensor's result differs from the reference; not timing a wrong kernel")


def run_rows(title: str, unit: str, rows: dict, number: int, repeat: int, higher_is_better: bool) -> None:
    """Time each row in the three libraries and print it. A row is ((tt, np, torch), scale): with
    ``higher_is_better`` the scale is bytes (or flops) per call and the table shows G per second,
    else it converts seconds to the unit (1e6 for microseconds, 1e3 for milliseconds)."""
    print()
    better = "higher" if higher_is_better else "lower"
    ratio_heads = "tt/np   | tt/torch" if higher_is_better else "np/tt   | torch/tt"
    print(f"| {title + f' ({better} is better)':<34} | unit  |         tt |         np |      torch | {ratio_heads} |")
    print("|---|---|---|---|---|---|---|")
    for name, ((f_tt, f_np, f_torch), scale) in rows.items():
        agree(name, f_tt, f_np or f_torch)
        # The libraries take turns, one timed batch each per round (the order rotating), and each
        # library's figure is the median of its batches: this VM's speed drifts by up to 40% over
        # seconds (torch's own 128^3 products swing between 100 and 150 GFLOP/s), and timing one
        # library's batches back to back let the drift decide the ratio. A pause before each batch:
        # NumPy's OpenBLAS threads keep spinning for up to about 0.1 s after a call, and on a
        # 2-core machine they took a core from whatever was timed next (t_tensor's 1024^3 matmul
        # measured 175 instead of 250 GFLOP/s right after a NumPy product, the same 0.1 s later).
        # After the pause the vCPUs (and sleeping worker threads) are slow to come back: the first
        # 128^3 batched products after 0.2 s idle ran at half speed in every library, so each turn
        # warms up for WARM_SECONDS, untimed, before its timed batch.
        order = [(lib, fn) for lib, fn in (("np", f_np), ("torch", f_torch), ("tt", f_tt)) if fn]
        samples: dict[str, list[float]] = {lib: [] for lib, _ in order}
        for round_ in range(repeat):
            shift = round_ % len(order)
            for lib, fn in order[shift:] + order[:shift]:
                time.sleep(SETTLE_SECONDS)
                warm_until = time.perf_counter() + WARM_SECONDS
                fn()  # at least once: first-call costs are not what we measure
                while time.perf_counter() < warm_until:
                    fn()
                samples[lib].append(timeit.timeit(fn, number=number) / number)
        seconds = {lib: statistics.median(samples[lib]) if lib in samples else None for lib in ("np", "torch", "tt")}
        results = {
            lib: (None if s is None else (scale / s / 1e9 if higher_is_better else s * scale))
            for lib, s in seconds.items()
        }
        print(row(name, unit, results, higher_is_better))


def trio(array: np.ndarray) -> tuple:
    """The same data as a NumPy array, a t_tensor tensor and a torch tensor (None without torch)."""
    return array, tt.from_numpy(array), torch.from_numpy(array) if torch else None


def dispatch_rows() -> dict:
    a_np, a_tt, a_t = trio(np.arange(4, dtype=np.float32))
    m_np, m_tt, m_t = trio(np.arange(12, dtype=np.float32).reshape(3, 4))
    idx_np, idx_tt, idx_t = trio(np.array([2, 0, 1]))
    us = 1e6
    return {
        "a + b (4 float32)": ((lambda: a_tt + a_tt, lambda: a_np + a_np, torch and (lambda: a_t + a_t)), us),
        "a * 2.0 (4 float32)": (
            (lambda: a_tt * 2.0, lambda: a_np * np.float32(2.0), torch and (lambda: a_t * 2.0)),
            us,
        ),
        "x.exp() (4 float32)": ((lambda: a_tt.exp(), lambda: np.exp(a_np), torch and (lambda: a_t.exp())), us),
        "x.sum() (3x4)": ((lambda: m_tt.sum(), lambda: m_np.sum(), torch and (lambda: m_t.sum())), us),
        "x.sum(dim=1) (3x4)": (
            (lambda: m_tt.sum(dim=1), lambda: m_np.sum(axis=1), torch and (lambda: m_t.sum(dim=1))),
            us,
        ),
        "softmax(x, -1) (3x4)": (
            (lambda: tt.softmax(m_tt, -1), None, torch and (lambda: torch.softmax(m_t, -1))),
            us,
        ),
        "x[idx] (3x4, 3 rows)": ((lambda: m_tt[idx_tt], lambda: m_np[idx_np], torch and (lambda: m_t[idx_t])), us),
        "cat([a, a]) (4 float32)": (
            (
                lambda: tt.cat([a_tt, a_tt]),
                lambda: np.concatenate([a_np, a_np]),
                torch and (lambda: torch.cat([a_t, a_t])),
            ),
            us,
        ),
        "where(a > 1, a, 0) (4 float32)": (
            (
                lambda: tt.where(a_tt > 1, a_tt, 0.0),
                lambda: np.where(a_np > 1, a_np, np.float32(0)),
                torch and (lambda: torch.where(a_t > 1, a_t, 0.0)),
            ),
            us,
        ),
        "x @ y (3x4 @ 4x3)": ((lambda: m_tt @ m_tt.T, lambda: m_np @ m_np.T, torch and (lambda: m_t @ m_t.T)), us),
    }


def elementwise_rows(n: int) -> dict:
    rng = np.random.default_rng(0)
    a_np, a_tt, a_t = trio(rng.random(n, dtype=np.float32))
    b_np, b_tt, b_t = trio(rng.random(n, dtype=np.float32))
    sq_np, sq_tt, sq_t = trio(a_np.reshape(4096, -1))
    mask_np, mask_tt, mask_t = trio(a_np > 0.5)
    nbytes = a_np.nbytes
    return {
        "a + b (16M f32, new output)": (
            (lambda: a_tt + b_tt, lambda: a_np + b_np, torch and (lambda: a_t + b_t)),
            3 * nbytes,
        ),
        "exp (16M f32)": ((lambda: a_tt.exp(), lambda: np.exp(a_np), torch and (lambda: a_t.exp())), 2 * nbytes),
        "a.T + a (4096x4096 f32)": (
            (lambda: sq_tt.T + sq_tt, lambda: sq_np.T + sq_np, torch and (lambda: sq_t.T + sq_t)),
            3 * nbytes,
        ),
        "where(mask, a, b) (16M f32)": (
            (
                lambda: tt.where(mask_tt, a_tt, b_tt),
                lambda: np.where(mask_np, a_np, b_np),
                torch and (lambda: torch.where(mask_t, a_t, b_t)),
            ),
            3 * nbytes + n,
        ),
        "clamp(a, 0.2, 0.8) (16M f32)": (
            (
                lambda: tt.clamp(a_tt, 0.2, 0.8),
                lambda: np.clip(a_np, 0.2, 0.8),
                torch and (lambda: torch.clamp(a_t, 0.2, 0.8)),
            ),
            2 * nbytes,
        ),
    }


def reduction_rows(n: int) -> dict:
    rng = np.random.default_rng(1)
    flat_np, flat_tt, flat_t = trio(rng.random(n, dtype=np.float32))
    sq_np, sq_tt, sq_t = trio(flat_np.reshape(4096, -1))
    sm_np, sm_tt, sm_t = trio(flat_np.reshape(-1, 1024))
    nbytes = flat_np.nbytes

    def np_softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return {
        "sum (16M f32)": ((lambda: flat_tt.sum(), lambda: flat_np.sum(), torch and (lambda: flat_t.sum())), nbytes),
        "sum over axis 0 (4096x4096)": (
            (lambda: sq_tt.sum(dim=0), lambda: sq_np.sum(axis=0), torch and (lambda: sq_t.sum(dim=0))),
            nbytes,
        ),
        "sum over axis 1 (4096x4096)": (
            (lambda: sq_tt.sum(dim=1), lambda: sq_np.sum(axis=1), torch and (lambda: sq_t.sum(dim=1))),
            nbytes,
        ),
        "max (16M f32)": ((lambda: flat_tt.max(), lambda: flat_np.max(), torch and (lambda: flat_t.max())), nbytes),
        "argmax (16M f32)": (
            (lambda: flat_tt.argmax(), lambda: flat_np.argmax(), torch and (lambda: flat_t.argmax())),
            nbytes,
        ),
        "var over axis 1 (4096x4096)": (
            (lambda: sq_tt.var(dim=1), lambda: sq_np.var(axis=1, ddof=1), torch and (lambda: sq_t.var(dim=1))),
            nbytes,
        ),
        "softmax over last axis (16384x1024)": (
            (lambda: tt.softmax(sm_tt, -1), lambda: np_softmax(sm_np), torch and (lambda: torch.softmax(sm_t, -1))),
            2 * nbytes,
        ),
        "log_softmax over last axis (16384x1024)": (
            (
                lambda: tt.log_softmax(sm_tt, -1),
                lambda: np.log(np_softmax(sm_np)),
                torch and (lambda: torch.log_softmax(sm_t, -1)),
            ),
            2 * nbytes,
        ),
    }


def other_rows() -> dict:
    rng = np.random.default_rng(2)
    src_np, src_tt, src_t = trio(rng.random(1 << 22, dtype=np.float32))
    idx_np, idx_tt, idx_t = trio(rng.integers(0, 1 << 22, 1 << 20))
    mat_np, mat_tt, mat_t = trio(rng.random((1024, 1024), dtype=np.float32))
    rows_np, rows_tt, rows_t = trio(rng.integers(0, 1024, 512))
    vec_np, vec_tt, vec_t = trio(rng.random(1 << 20, dtype=np.float32))
    a_np, a_tt, a_t = trio(rng.random((512, 512), dtype=np.float32))
    b_np, b_tt, b_t = trio(rng.random((512, 512), dtype=np.float32))
    _, img_tt, img_t = trio(rng.random((32, 3, 64, 64), dtype=np.float32))
    _, w_tt, w_t = trio(rng.random((16, 3, 3, 3), dtype=np.float32))
    ms = 1e3
    return {
        "x[idx] (1M of 4M f32)": (
            (lambda: src_tt[idx_tt], lambda: src_np[idx_np], torch and (lambda: src_t[idx_t])),
            ms,
        ),
        "x[x > 0.5] (4M f32)": (
            (lambda: src_tt[src_tt > 0.5], lambda: src_np[src_np > 0.5], torch and (lambda: src_t[src_t > 0.5])),
            ms,
        ),
        "index_select rows (512 of 1024x1024)": (
            (
                lambda: tt.index_select(mat_tt, 0, rows_tt),
                lambda: np.take(mat_np, rows_np, axis=0),
                torch and (lambda: torch.index_select(mat_t, 0, rows_t)),
            ),
            ms,
        ),
        "sort (1M f32)": (
            (lambda: tt.sort(vec_tt).values, lambda: np.sort(vec_np), torch and (lambda: torch.sort(vec_t).values)),
            ms,
        ),
        "topk(k=10) (1M f32)": (
            (lambda: tt.topk(vec_tt, 10).values, None, torch and (lambda: torch.topk(vec_t, 10).values)),
            ms,
        ),
        "matmul 512^3 f32": ((lambda: a_tt @ b_tt, lambda: a_np @ b_np, torch and (lambda: a_t @ b_t)), ms),
        "conv2d (32,3,64,64) x 16 3x3 pad 1": (
            (
                lambda: tt.nn.functional.conv2d(img_tt, w_tt, padding=1),
                None,
                torch and (lambda: torch.nn.functional.conv2d(img_t, w_t, padding=1)),
            ),
            ms,
        ),
    }


GROUPS = ("dispatch", "elementwise", "reductions", "other")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", choices=GROUPS, help="run one group")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    n = 1 << 24
    wanted = [args.only] if args.only else list(GROUPS)
    if "dispatch" in wanted:
        run_rows("per call", "us", dispatch_rows(), 2000 if args.quick else 20000, repeat, higher_is_better=False)
    if "elementwise" in wanted:
        run_rows("elementwise", "GB/s", elementwise_rows(n), 3, repeat, higher_is_better=True)
    if "reductions" in wanted:
        run_rows("reductions", "GB/s", reduction_rows(n), 3, repeat, higher_is_better=True)
    if "other" in wanted:
        run_rows("per call", "ms", other_rows(), 3, repeat, higher_is_better=False)
    print(f"\ntorch runs with 1 thread; t_tensor with {tt.get_num_threads()} (tt.set_num_threads to change it).")


if __name__ == "__main__":
    main()
