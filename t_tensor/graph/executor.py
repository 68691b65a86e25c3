"""The plain executor: run the nodes in topological order, each through its kernel from the
registry, allocating every result normally (no arena yet), and an optional profiler that records
the time spent per op type.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph, Profiler, execute
>>> g = Graph()
>>> _ = g.add_input("x", (2, 2), tt.float32)
>>> _ = g.add_node("Relu", ["x"], ["y"])
>>> _ = g.add_node("Add", ["y", "y"], ["z"])
>>> g.outputs = ["z"]
>>> prof = Profiler()
>>> execute(g, [tt.tensor([[-1.0, 2.0], [3.0, -4.0]])], profiler=prof)[0].tolist()
[[0.0, 4.0], [6.0, 0.0]]
>>> print(prof.table())  # doctest: +ELLIPSIS
op type  count  total ms   share
...
total        2  ...  100.0%
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..creation import as_tensor
from .ir import Graph
from .kernels import run_node

__all__ = ["execute", "bind_inputs", "Profiler"]


class Profiler:
    """Time per op type over one or more runs: ``records[op_type] = [count, total_seconds]``."""

    def __init__(self) -> None:
        self.records: dict[str, list[float]] = {}

    def add(self, op_type: str, seconds: float) -> None:
        r = self.records.setdefault(op_type, [0, 0.0])
        r[0] += 1
        r[1] += seconds

    def table(self) -> str:
        """A text table, slowest op type first: count, total milliseconds, share of the total."""
        total = sum(r[1] for r in self.records.values())
        width = max([len("op type"), len("total")] + [len(k) for k in self.records])
        lines = [f"{'op type':<{width}}  {'count':>5}  {'total ms':>8}  {'share':>6}"]
        for op, (count, secs) in sorted(self.records.items(), key=lambda kv: -kv[1][1]):
            share = 100.0 * secs / total if total else 0.0
            lines.append(f"{op:<{width}}  {int(count):>5}  {secs * 1e3:>8.3f}  {share:>5.1f}%")
        count = int(sum(r[0] for r in self.records.values()))
        lines.append(f"{'total':<{width}}  {count:>5}  {total * 1e3:>8.3f}  {100.0:>5.1f}%")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def execute(graph: Graph, inputs: Sequence[Any] | Mapping[str, Any], profiler: Profiler | None = None) -> list[Any]:
    """Run ``graph`` on ``inputs`` (a sequence in ``graph.inputs`` order, or a name -> value
    mapping; numpy arrays and nested lists are converted); returns the list of graph outputs.

    Each input must have the shape and dtype the graph declares for it (when it declares one).
    Graph inputs that have an initializer (a default value) may be omitted. A value's memory is
    dropped after its last reader has run.
    """
    env = bind_inputs(graph, inputs)
    order = graph.topo_sort()
    last_use: dict[str, int] = {}
    for k, node in enumerate(order):
        for i in node.inputs:
            last_use[i] = k
    keep = set(graph.outputs)
    for k, node in enumerate(order):
        args = [env[i] if i else None for i in node.inputs]
        if profiler is not None:
            t0 = time.perf_counter()
            results = run_node(node, args)
            profiler.add(node.op_type, time.perf_counter() - t0)
        else:
            results = run_node(node, args)
        for o, r in zip(node.outputs, results, strict=False):
            if o:
                env[o] = r
        for i in node.inputs:
            if i and last_use.get(i) == k and i not in keep and i not in graph.initializers:
                env.pop(i, None)
    missing = [o for o in graph.outputs if o not in env]
    if missing:
        raise ValueError(f"run: graph outputs {missing} were not computed")
    # An output that is a constant of the graph (folded) is returned as a copy: a caller writing
    # into its result must not change the graph.
    return [env[o].clone() if o in graph.initializers else env[o] for o in graph.outputs]


def bind_inputs(graph: Graph, inputs: Sequence[Any] | Mapping[str, Any]) -> dict[str, Any]:
    """The initializers and the given ``inputs`` (see :func:`execute`) as a name -> tensor dict,
    each input checked against the shape and dtype the graph declares for it."""
    env: dict[str, Any] = dict(graph.initializers)
    if isinstance(inputs, Mapping):
        unknown = set(inputs) - set(graph.inputs)
        if unknown:
            raise ValueError(f"run: unknown inputs {sorted(unknown)}; the graph's inputs are {graph.inputs}")
        given = dict(inputs)
    else:
        required = [n for n in graph.inputs if n not in graph.initializers]
        names = graph.inputs if len(inputs) > len(required) else required
        if len(inputs) > len(names) or len(inputs) < len(required):
            raise ValueError(f"run: expected {len(required)} inputs {required}, got {len(inputs)}")
        given = dict(zip(names, inputs, strict=False))
    for name in graph.inputs:
        if name in given:
            t = as_tensor(given[name])
            info = graph.values.get(name)
            if info is not None and ((info.shape is not None and tuple(t.shape) != tuple(info.shape))
                                     or (info.dtype is not None and t.dtype != info.dtype)):
                raise ValueError(f"run: input {name!r} is {tuple(t.shape)} {t.dtype.name}; the graph declares "
                                 f"{info.describe()}")
            env[name] = t
        elif name not in env:
            raise ValueError(f"run: missing input {name!r}")
    return env
