"""Helpers shared by the optimization passes: use counts, renaming a value's readers, tidying
the value table and refreshing shapes after a rewrite.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> g = Graph()
>>> _ = g.add_input("x", (2,), tt.float32)
>>> _ = g.add_node("Relu", ["x"], ["y"])
>>> g.outputs = ["y"]
>>> use_counts(g)
{'x': 1, 'y': 1}
"""

from __future__ import annotations

from typing import Any

from ..ir import Graph, Node

__all__ = ["use_counts", "rename_uses", "constants", "finish", "is_constant", "with_shapes", "new_node", "fresh_name"]


def use_counts(graph: Graph) -> dict[str, int]:
    """How many times each value is read: by node inputs, plus once per graph output slot."""
    counts: dict[str, int] = {}
    for node in graph.nodes:
        for i in node.inputs:
            if i:
                counts[i] = counts.get(i, 0) + 1
    for o in graph.outputs:
        counts[o] = counts.get(o, 0) + 1
    return counts


def rename_uses(graph: Graph, old: str, new: str) -> None:
    """Make every node that reads ``old`` read ``new`` instead (graph outputs are not renamed)."""
    for node in graph.nodes:
        node.inputs = [new if i == old else i for i in node.inputs]


def constants(graph: Graph) -> dict[str, Any]:
    """The constant values: initializers that are not graph inputs (an input's initializer is only
    a default the caller may override)."""
    return {k: v for k, v in graph.initializers.items() if k not in graph.inputs}


def is_constant(graph: Graph, name: str) -> bool:
    """Whether ``name`` is an initializer that is not also a graph input."""
    return name in graph.initializers and name not in graph.inputs


def with_shapes(graph: Graph) -> Graph:
    """Run shape inference (non-strict) on ``graph`` when every input's shape and dtype is known;
    returns ``graph``. Passes only rewrite what has known shapes, so an op without a shape rule
    just leaves the values after it unknown."""
    if all(n in graph.values and graph.values[n].shape is not None and graph.values[n].dtype is not None
           for n in graph.inputs if n not in graph.initializers):
        try:
            graph.infer_shapes(strict=False)
        except NotImplementedError:
            pass  # an op without a shape rule: the shapes found before it are kept, the rest unknown
    return graph


def finish(graph: Graph) -> Graph:
    """After a rewrite: drop unused initializers' and vanished values' entries, order the nodes
    topologically, and re-run shape inference (non-strict) when every input's shape is known."""
    defined = set(graph.inputs) | set(graph.initializers)
    for node in graph.nodes:
        defined.update(o for o in node.outputs if o)
    graph.values = {k: v for k, v in graph.values.items() if k in defined}
    graph.nodes = graph.topo_sort()
    return with_shapes(graph)


def new_node(graph: Graph, op_type: str, inputs: list[str], outputs: list[str], attrs: dict[str, Any],
             name: str) -> Node:
    """A node (not yet in the graph) whose name does not clash with an existing node name."""
    taken = {n.name for n in graph.nodes}
    k, base = 0, name
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return Node(op_type, list(inputs), list(outputs), dict(attrs), name)


def fresh_name(graph: Graph, stem: str) -> str:
    """A value name not yet used in ``graph`` (``stem``, or ``stem_1``, ``stem_2``, ...)."""
    taken = set(graph.values) | set(graph.inputs) | set(graph.initializers)
    for node in graph.nodes:
        taken.update(node.outputs)
    name, k = stem, 0
    while name in taken:
        k += 1
        name = f"{stem}_{k}"
    return name
