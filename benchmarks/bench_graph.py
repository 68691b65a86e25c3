"""Graph executor benchmark: the plain executor (``graph.run``: every result a fresh allocation)
vs the arena executor (every intermediate planned in one arena allocated once, the nodes prepared
into C calls; also with ``tune=True``, which picks per node the faster of direct kernel and
kernel + copy, and on the graph after ``graph.optimize()``) vs onnxruntime
with 1 and 2 threads, and the planned arena vs the naive sum vs the lower bound (with and
without in-place reuse), per model.

Each model (MLP, LeNet-style CNN, ResNet-style block with BatchNorm, MobileNet-style depthwise
block, transformer encoder block) is built in PyTorch, exported with
``torch.onnx.export(dynamo=False)`` into a temporary directory and imported with
``t_tensor.onnx.load``. Every executor's output is checked against PyTorch first. Latency is the
median of several timed batches of runs (milliseconds per run).

Run by hand: ``python benchmarks/bench_graph.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from bench_core import median_seconds  # noqa: E402 - the shared timing

import t_tensor as tt  # noqa: E402
from t_tensor import onnx as tt_onnx  # noqa: E402
from t_tensor.graph import ArenaExecutor  # noqa: E402
from tests.graph.onnx_export import export_to_onnx  # noqa: E402 - the tests' exporter
from tests.graph.torch_models import EncoderBlock, ResBlock  # noqa: E402 - the tests' models

nn = torch.nn


def models() -> dict:
    return {
        "mlp": (nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                              nn.Linear(256, 10)), (64, 1, 28, 28)),
        "lenet": (nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                                nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(),
                                nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10)), (16, 1, 28, 28)),
        "resnet_block": (nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                       ResBlock(16), ResBlock(16), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                       nn.Linear(16, 10)), (8, 3, 32, 32)),
        "mobilenet_block": (nn.Sequential(nn.Conv2d(16, 64, 1), nn.BatchNorm2d(64), nn.ReLU6(),
                                          nn.Conv2d(64, 64, 3, padding=1, groups=64), nn.BatchNorm2d(64), nn.ReLU6(),
                                          nn.Conv2d(64, 16, 1), nn.BatchNorm2d(16), nn.AdaptiveAvgPool2d(1),
                                          nn.Flatten(), nn.Linear(16, 10)), (8, 16, 32, 32)),
        "encoder_block": (EncoderBlock(d=64, heads=4, mlp_ratio=4), (8, 32, 64)),
    }


def export(net: nn.Module, shape: tuple, folder: Path, name: str) -> tuple[Path, np.ndarray, np.ndarray]:
    """The model exported to ``folder/name.onnx`` (the tests' exporter), an input, torch's output."""
    data, x, expected = export_to_onnx(net, shape)
    path = folder / f"{name}.onnx"
    path.write_bytes(data)
    return path, x, expected


def median_ms(fn, repeat: int, number: int) -> float:
    return 1e3 * median_seconds(fn, number, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeat, number = (3, 3) if args.quick else (7, 10)
    latency_rows, memory_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (net, shape) in models().items():
            path, x, expected = export(net, shape, Path(tmp), name)
            g = tt_onnx.load(str(path))
            arena = ArenaExecutor(g)
            tuned = ArenaExecutor(g, tune=True)
            optimized = ArenaExecutor(g.optimize())
            xt = tt.tensor(x)
            for got in (g.run(xt), arena(xt), tuned(xt), optimized(xt)):
                np.testing.assert_allclose(got.numpy(), expected, rtol=1e-3, atol=1e-4)
            sessions = {}
            for threads in (1, 2):
                opts = ort.SessionOptions()
                opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
                sessions[threads] = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
                np.testing.assert_allclose(sessions[threads].run(None, {"x": x})[0], expected, rtol=1e-3, atol=1e-4)
            feeds = {"x": x}
            runs = [lambda g=g, xt=xt: g.run(xt), lambda arena=arena, xt=xt: arena(xt), lambda t=tuned, xt=xt: t(xt),
                    lambda o=optimized, xt=xt: o(xt),
                    lambda s=sessions[1], f=feeds: s.run(None, f), lambda s=sessions[2], f=feeds: s.run(None, f)]
            times = [median_ms(run, repeat, number) for run in runs]
            latency_rows.append((name, len(g.nodes), *times, arena.stats))
            plan_in = g.plan_memory(inplace=True)
            plan_out = g.plan_memory(inplace=False)
            memory_rows.append((name, plan_out.naive_bytes, plan_out.lower_bound, plan_out.arena_bytes,
                                plan_in.arena_bytes))
    print("latency, ms per run (median)")
    print(f"{'model':<16} {'nodes':>5} {'plain':>8} {'arena':>8} {'tuned':>8} {'opt+ar':>8} {'ort 1t':>8} "
          f"{'ort 2t':>8}  arena stats")
    for name, nodes, plain, ar, tu, op, o1, o2, stats in latency_rows:
        st = (f"direct {stats['direct']}, copied {stats['copied']}, views {stats['aliases']}, "
              f"constants {stats['constants']}")
        print(f"{name:<16} {nodes:>5} {plain:>8.3f} {ar:>8.3f} {tu:>8.3f} {op:>8.3f} {o1:>8.3f} {o2:>8.3f}  {st}")
    print()
    print("memory, KiB (greedy by size, 64-byte aligned; graph outputs planned, inputs and weights bound)")
    print(f"{'model':<16} {'naive':>9} {'lower bd':>9} {'arena':>9} {'in place':>9} {'arena/bd':>9}")
    for name, naive, bound, arena_b, inplace_b in memory_rows:
        print(f"{name:<16} {naive / 1024:>9.1f} {bound / 1024:>9.1f} {arena_b / 1024:>9.1f} {inplace_b / 1024:>9.1f} "
              f"{arena_b / bound:>9.3f}")


def compiled_vs_eager(repeat: int, number: int) -> None:
    """The same t_tensor model run eagerly and through tt.compile (plain executor; optimized +
    arena), checked against each other first: what capture and the passes buy on a tt model."""
    from examples.train_digits import MLP, SmallCNN

    class TTEncoder(tt.nn.Module):
        def __init__(self, d: int = 64, heads: int = 4) -> None:
            super().__init__()
            self.attention = tt.nn.MultiheadAttention(d, heads, batch_first=True)
            self.ln1, self.ln2 = tt.nn.LayerNorm(d), tt.nn.LayerNorm(d)
            self.mlp = tt.nn.Sequential(tt.nn.Linear(d, 4 * d), tt.nn.GELU(), tt.nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attention(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    tt.manual_seed(0)
    cases = {"digits mlp": (MLP(), (64, 1, 8, 8)), "digits cnn": (SmallCNN(), (64, 1, 8, 8)),
             "encoder_block": (TTEncoder(), (8, 32, 64))}
    print()
    print("t_tensor models: eager vs tt.compile, ms per run (median)")
    print(f"{'model':<16} {'eager':>8} {'compiled':>9} {'arena':>8} {'optimized+arena':>16}  "
          "nodes (traced -> optimized)")
    for name, (model, shape) in cases.items():
        model.eval()
        x = tt.randn(*shape)
        plain = tt.compile(model, (x,))
        arena = tt.compile(model, (x,), arena=True)
        best = tt.compile(model, (x,), optimize=True, arena=True)
        with tt.no_grad():
            want = model(x).numpy()

            def eager(m=model, x=x):
                return m(x)

            for got in (plain(x), arena(x), best(x)):
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
            runs = (eager, lambda p=plain, x=x: p(x), lambda a=arena, x=x: a(x), lambda b=best, x=x: b(x))
            times = [median_ms(f, repeat, number) for f in runs]
        print(f"{name:<16} {times[0]:>8.3f} {times[1]:>9.3f} {times[2]:>8.3f} {times[3]:>16.3f}  "
              f"{len(plain.graph.nodes)} -> {len(best.graph.nodes)}")


if __name__ == "__main__":
    main()
    compiled_vs_eager(*((3, 3) if "--quick" in sys.argv else (7, 10)))
