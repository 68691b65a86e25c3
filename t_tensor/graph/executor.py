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
from ..tensor_impl import TensorImpl
from .ir import Graph, Node
from .kernels import prepare, run_node
from .shape_inference import bind_symbols

__all__ = ["execute", "bind_inputs", "given_inputs", "Profiler"]

# views (of their first input) that the plain executor makes once when they view constants
_VIEW_OPS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Expand", "Slice", "tt.View"})


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


class _Plan:
    """A graph prepared for the plain executor: every value an integer index into one list, the
    initializers placed in it once (and the views of them, made once), and per other node (in
    topological order) ``(fn, ins, outs, free, node)``: the kernel already bound to the node's
    parsed attributes (:func:`~t_tensor.graph.kernels.prepare`), the indices it reads and writes,
    and the values that die after it (dropped at once)."""

    def __init__(self, graph: Graph) -> None:
        from .arena import graph_signature

        self.signature = graph_signature(graph)
        index: dict[str, int] = {"": 0}

        def idx(name: str) -> int:
            if name not in index:
                index[name] = len(index)
            return index[name]

        order = graph.topo_sort()
        for name in list(graph.initializers) + list(graph.inputs):
            idx(name)
        last_use: dict[str, int] = {}
        for k, node in enumerate(order):
            for i in node.inputs:
                last_use[i] = k
        keep = set(graph.outputs) | set(graph.initializers)
        self.nodes = order
        self.steps = []
        self.made_once: list[Node] = []  # views of constants, made here: 0 ms in a profile
        self.template: list[Any] = [None] * len(index)
        for name, t in graph.initializers.items():
            self.template[index[name]] = t
        # views of constants (a traced weight's transpose...): made once, here
        constant = {name for name in graph.initializers if name not in graph.inputs}
        for k, node in enumerate(order):
            if (node.op_type in _VIEW_OPS and node.inputs and all(not i or i in constant for i in node.inputs)
                    and all(o not in keep for o in node.outputs)):
                results = run_node(node, [self.template[index[i]] if i else None for i in node.inputs])
                if all(r.is_shared_with(self.template[index[node.inputs[0]]]) for r in results):
                    for o, r in zip(node.outputs, results, strict=False):
                        if o:
                            self.template.extend([None] * (idx(o) + 1 - len(self.template)))
                            self.template[index[o]] = r
                            constant.add(o)
                    self.made_once.append(node)
                    continue
            ins = tuple(idx(i) if i else 0 for i in node.inputs)
            outs = tuple(idx(o) if o else 0 for o in node.outputs)
            free = tuple(sorted({index[i] for i in node.inputs if i and last_use.get(i) == k and i not in keep}))
            self.steps.append((prepare(node), ins, outs, free, node))
        self.template.extend([None] * (len(index) - len(self.template)))
        self.inputs = [(name, index[name]) for name in graph.inputs]
        missing = [o for o in graph.outputs if o not in index]
        self.outputs = [(o, index.get(o, 0), o in graph.initializers) for o in graph.outputs]
        self.missing = missing

    def run(self, given: dict[str, Any], profiler: Profiler | None) -> list[Any]:
        if profiler is not None:
            for node in self.made_once:
                profiler.add(node.op_type, 0.0)
        vals = list(self.template)
        for name, k in self.inputs:
            if name in given:
                vals[k] = given[name]
        for fn, ins, outs, free, node in self.steps:
            if profiler is not None:
                t0 = time.perf_counter()
            r = fn([vals[i] for i in ins])
            if len(outs) == 1 and type(r) not in (tuple, list):
                vals[outs[0]] = r
            else:
                r = list(r) if type(r) in (tuple, list) else [r]
                if len(r) < len(outs) and sum(1 for o in outs if o) > len(r):
                    raise NotImplementedError(f"run: node {node.name!r} ({node.op_type}) asks for {len(outs)} "
                                              f"outputs; the kernel gives {len(r)}")
                for o, v in zip(outs, r, strict=False):
                    if o:
                        vals[o] = v
            if profiler is not None:
                profiler.add(node.op_type, time.perf_counter() - t0)
            for i in free:
                vals[i] = None
        vals[0] = None
        if self.missing or any(vals[k] is None for _, k, _ in self.outputs):
            missing = [o for o, k, _ in self.outputs if vals[k] is None]
            raise ValueError(f"run: graph outputs {missing} were not computed")
        # An output that is a constant of the graph (folded) is returned as a copy: a caller writing
        # into its result must not change the graph.
        return [vals[k].clone() if const else vals[k] for _, k, const in self.outputs]


def execute(graph: Graph, inputs: Sequence[Any] | Mapping[str, Any], profiler: Profiler | None = None) -> list[Any]:
    """Run ``graph`` on ``inputs`` (a sequence in ``graph.inputs`` order, or a name -> value
    mapping; numpy arrays and nested lists are converted); returns the list of graph outputs.

    Each input must have the shape and dtype the graph declares for it (when it declares one).
    Graph inputs that have an initializer (a default value) may be omitted. A value's memory is
    dropped after its last reader has run.

    The graph is prepared once (a flat list of steps, kernels bound to their parsed attributes,
    values as integer indices) and the preparation cached on it; it is made again when the graph
    changes (see :func:`~t_tensor.graph.arena.graph_signature`).
    """
    from .arena import graph_signature

    plan = getattr(graph, "_plain_plan", None)
    if plan is None or plan.signature != graph_signature(graph):
        plan = graph._plain_plan = _Plan(graph)  # type: ignore[attr-defined]
    return plan.run(given_inputs(graph, inputs), profiler)


def bind_inputs(graph: Graph, inputs: Sequence[Any] | Mapping[str, Any]) -> dict[str, Any]:
    """The initializers and the given ``inputs`` (see :func:`execute`) as a name -> tensor dict,
    each input checked against the shape and dtype the graph declares for it."""
    env: dict[str, Any] = dict(graph.initializers)
    env.update(given_inputs(graph, inputs))
    return env


def given_inputs(graph: Graph, inputs: Sequence[Any] | Mapping[str, Any]) -> dict[str, Any]:
    """The given ``inputs`` (see :func:`execute`) as a name -> tensor dict, each checked against
    the shape and dtype the graph declares for it; a missing input without a default raises."""
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
    result = {}
    bindings: dict[str, int] = {}  # symbolic dims: each name one size across the inputs
    for name in graph.inputs:
        if name in given:
            t = given[name]
            if not isinstance(t, TensorImpl):
                t = as_tensor(t)
            info = graph.values.get(name)
            if info is not None and ((info.shape is not None and t._shape != info.shape
                                      and not bind_symbols(info.shape, t._shape, bindings))
                                     or (info.dtype is not None and t._dtype != info.dtype)):
                bound = f" (with {bindings})" if bindings else ""
                raise ValueError(f"run: input {name!r} is {tuple(t.shape)} {t.dtype.name}; the graph declares "
                                 f"{info.describe()}{bound}")
            result[name] = t
        elif name not in graph.initializers:
            raise ValueError(f"run: missing input {name!r}")
    return result
