"""Dispatch benchmark: what one tiny op costs in t_tensor, NumPy and PyTorch, in one run.

Every row is an op on a handful of elements, so the time is almost all fixed per-call cost: Python
work, cffi crossings, allocating the result. Microseconds per call, the best of ``--repeat`` short
timing runs: on a shared, loaded machine a run longer than a scheduler time slice is always
interrupted and its per-call time inflates (2-3x here for runs of 10000 calls), so many short runs
and their minimum estimate the cost on an unshared core best. Rerun when in doubt.

Run by hand: ``python benchmarks/bench_dispatch.py [--quick] [--before PATH]``. ``--before`` takes
another checkout of t_tensor (built in place) and adds a column with its timings, measured in a
subprocess right before this one's, so that a change can be shown as before/after on one machine.
torch runs with one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

import numpy as np

import t_tensor as tt

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the benchmark still compares against NumPy
    torch = None


def rows() -> dict:
    a_np = np.arange(4, dtype=np.float32)
    m_np = np.arange(12, dtype=np.float32).reshape(3, 4)
    s_np = np.zeros((4, 4), np.float32)
    i_np = np.array([2, 0, 1])
    a, m, s, i = (tt.from_numpy(x) for x in (a_np, m_np, s_np, i_np))
    two = np.float32(2.0)
    if torch is not None:
        a_t, m_t, s_t, i_t = (torch.from_numpy(x) for x in (a_np, m_np, s_np, i_np))
    else:
        a_t = m_t = s_t = i_t = None
    row_np, w_np, z_np = np.arange(4, dtype=np.float32), np.ones(4, np.float32), np.zeros(4, np.float32)
    row, w, z = tt.from_numpy(row_np), tt.from_numpy(w_np.copy()), tt.from_numpy(z_np)
    g = tt.ones(4, requires_grad=True)
    if torch is not None:
        row_t, w_t, z_t = torch.from_numpy(row_np), torch.from_numpy(w_np.copy()), torch.from_numpy(z_np)
        g_t = torch.ones(4, requires_grad=True)
    else:
        row_t = w_t = z_t = g_t = None
    t = torch
    return {
        "a + b (4 f32)": (lambda: a + a, lambda: a_np + a_np, t and (lambda: a_t + a_t)),
        "a * 2.0 (4 f32)": (lambda: a * 2.0, lambda: a_np * two, t and (lambda: a_t * 2.0)),
        "x.exp() (4 f32)": (lambda: a.exp(), lambda: np.exp(a_np), t and (lambda: a_t.exp())),
        "a > 1 (4 f32)": (lambda: a > 1, lambda: a_np > 1, t and (lambda: a_t > 1)),
        "m + row (3x4 + 4)": (lambda: m + row, lambda: m_np + row_np, t and (lambda: m_t + row_t)),
        "x.T + x (4x4)": (lambda: s.T + s, lambda: s_np.T + s_np, t and (lambda: s_t.T + s_t)),
        "w.add_(z) (4 f32)": (lambda: w.add_(z), lambda: np.add(w_np, z_np, out=w_np), t and (lambda: w_t.add_(z_t))),
        "a * g, g requires grad (4 f32)": (lambda: a * g, None, t and (lambda: a_t * g_t)),
        "(a * g).sum().backward() (4 f32)": (
            lambda: (a * g).sum().backward(), None, t and (lambda: (a_t * g_t).sum().backward())
        ),
        "x.sum() (3x4)": (lambda: m.sum(), lambda: m_np.sum(), t and (lambda: m_t.sum())),
        "x.sum(dim=1) (3x4)": (lambda: m.sum(dim=1), lambda: m_np.sum(axis=1), t and (lambda: m_t.sum(dim=1))),
        "x[1:, ::2] (4x4)": (lambda: s[1:, ::2], lambda: s_np[1:, ::2], t and (lambda: s_t[1:, ::2])),
        "x[1] (4x4)": (lambda: s[1], lambda: s_np[1], t and (lambda: s_t[1])),
        "x.view(16) (4x4)": (lambda: s.view(16), lambda: s_np.reshape(16), t and (lambda: s_t.view(16))),
        "x.T (4x4)": (lambda: s.T, lambda: s_np.T, t and (lambda: s_t.T)),
        "zeros(4)": (lambda: tt.zeros(4), lambda: np.zeros(4, np.float32), t and (lambda: t.zeros(4))),
        "empty((64, 64))": (
            lambda: tt.empty(64, 64), lambda: np.empty((64, 64), np.float32), t and (lambda: t.empty(64, 64))
        ),
        "tensor([1.0, 2.0, 3.0])": (
            lambda: tt.tensor([1.0, 2.0, 3.0]),
            lambda: np.array([1.0, 2.0, 3.0], np.float32),
            t and (lambda: t.tensor([1.0, 2.0, 3.0])),
        ),
        "from_numpy (4x4)": (lambda: tt.from_numpy(s_np), lambda: np.asarray(s_np), t and (lambda: t.from_numpy(s_np))),
        "x.numpy() (4x4)": (lambda: s.numpy(), lambda: s_np.view(), t and (lambda: s_t.numpy())),
        "x[1].item() (4 f32)": (lambda: a[1].item(), lambda: a_np[1].item(), t and (lambda: a_t[1].item())),
        "x[idx] (3x4, 3 rows)": (lambda: m[i], lambda: m_np[i_np], t and (lambda: m_t[i_t])),
        "cat([a, a]) (4 f32)": (
            lambda: tt.cat([a, a]), lambda: np.concatenate([a_np, a_np]), t and (lambda: t.cat([a_t, a_t]))
        ),
        "stack([a, a]) (4 f32)": (
            lambda: tt.stack([a, a]), lambda: np.stack([a_np, a_np]), t and (lambda: t.stack([a_t, a_t]))
        ),
        "x.reshape(2, -1) (4x4)": (
            lambda: s.reshape(2, -1), lambda: s_np.reshape(2, -1), t and (lambda: s_t.reshape(2, -1))
        ),
        "0.5 * a (4 f32)": (lambda: 0.5 * a, lambda: 0.5 * a_np, t and (lambda: 0.5 * a_t)),
        "a.clamp(0, 1) (4 f32)": (lambda: a.clamp(0, 1), lambda: np.clip(a_np, 0, 1), t and (lambda: a_t.clamp(0, 1))),
        "where(a > 1, a, 0.0) (4 f32)": (
            lambda: tt.where(a > 1, a, 0.0),
            lambda: np.where(a_np > 1, a_np, np.float32(0)),
            t and (lambda: t.where(a_t > 1, a_t, 0.0)),
        ),
        "softmax(x, -1) (3x4)": (lambda: tt.softmax(m, -1), None, t and (lambda: t.softmax(m_t, -1))),
        "x @ y (3x4 @ 4x3)": (lambda: m @ m.T, lambda: m_np @ m_np.T, t and (lambda: m_t @ m_t.T)),
    }


def breakdown(number: int, repeat: int) -> None:
    """Where the time of ``a + b`` on 4 float32 goes: cumulative steps of the fast path, each
    timed on its own (so each row's cost is the difference to the row above)."""
    from t_tensor._capi import lib
    from t_tensor.elementwise import binary
    from t_tensor.storage import adopt
    from t_tensor.tensor_impl import wrap_new

    a = tt.from_numpy(np.arange(4, dtype=np.float32))
    address, shape, strides, dtype = a.data_ptr(), a.shape, a.stride(), a.dtype
    release, new_default, binary_new = lib.tt_storage_release, lib.tt_storage_new_default, lib.tt_binary_new
    steps = {
        "an empty cffi call (tt_max_dims)": lambda: lib.tt_max_dims(),
        "C: allocate + free 16 bytes (2 calls)": lambda: release(new_default(16)),
        "C: allocate + add 4 floats + free (2 calls)": lambda: release(binary_new(0, 4, address, address, 7, 7)),
        "+ Storage object (adopt, __del__ frees)": lambda: adopt(binary_new(0, 4, address, address, 7, 7)),
        "+ Tensor object (wrap_new)": lambda: wrap_new(
            tt.Tensor, binary_new(0, 4, address, address, 7, 7), shape, strides, dtype
        ),
        "+ checks and table lookup (binary)": lambda: binary("add", a, a),
        "+ operator dispatch (a + a)": lambda: a + a,
    }
    print("| step of a + b (4 float32) | us per call (cumulative) |")
    print("|---|---|")
    for name, fn in steps.items():
        print(f"| {name} | {best_us(fn, number, repeat):6.2f} |", flush=True)


def best_us(fn, number: int, repeat: int) -> float:
    fn()  # warm-up: first-call costs (caches, imports) are not what we measure
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls per timing run")
    parser.add_argument("--repeat", type=int, default=25, help="timing runs per row (the best is reported)")
    parser.add_argument("--before", help="path of another t_tensor checkout to time first (a 'before' column)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (each cell keeps its best)")
    parser.add_argument("--breakdown", action="store_true", help="time the steps of a + b instead")
    parser.add_argument("--tt-only-json", action="store_true", help=argparse.SUPPRESS)  # used for --before
    args = parser.parse_args()
    number = 300 if args.quick else 1000
    if args.breakdown:
        breakdown(number, args.repeat)
        return
    table = rows()
    if args.tt_only_json:
        print(json.dumps({name: best_us(fns[0], number, args.repeat) for name, fns in table.items()}))
        return
    # Rounds alternate between the checkouts (and the libraries), and each cell keeps its best,
    # so that a drift in the machine's load hits both sides alike.
    best: dict[tuple[str, str], float] = {}

    def keep(key: tuple[str, str], value: float) -> None:
        best[key] = min(value, best.get(key, value))

    for _ in range(args.rounds):
        if args.before:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(args.before))
            command = [sys.executable, os.path.abspath(__file__), "--tt-only-json", "--repeat", str(args.repeat)]
            command += ["--quick"] if args.quick else []
            output = subprocess.run(command, env=env, cwd=args.before, check=True, capture_output=True, text=True)
            for name, value in json.loads(output.stdout).items():
                keep((name, "before"), value)
        for name, fns in table.items():
            for lib, fn in zip(("tt", "numpy", "torch"), fns, strict=True):
                if fn:
                    keep((name, lib), best_us(fn, number, args.repeat))
    columns = (["before"] if args.before else []) + ["tt", "numpy", "torch"]
    print("| op (us per call, lower is better) | " + " | ".join(f"{c:>6}" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name in table:
        cells = [f"{best[(name, c)]:6.2f}" if (name, c) in best else "   n/a" for c in columns]
        print(f"| {name:<33} | " + " | ".join(cells) + " |", flush=True)
    print(f"\ntorch runs with 1 thread; best of {args.rounds} x {args.repeat} timing runs of {number} calls each.")


if __name__ == "__main__":
    main()
