"""Common subexpression elimination: two nodes with the same op type, the same inputs and the
same attributes compute the same values; the later one is removed and its readers read the
earlier one's outputs.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import eliminate_common_subexpressions
>>> g = Graph()
>>> _ = g.add_input("x", (2,), tt.float32)
>>> _ = g.add_node("Exp", ["x"], ["a"])
>>> _ = g.add_node("Exp", ["x"], ["b"])           # same as a
>>> _ = g.add_node("Add", ["a", "b"], ["y"])
>>> g.outputs = ["y"]
>>> print(eliminate_common_subexpressions(g))
graph graph(%x: (2,) float32) -> (%y)
  %a = Exp(%x)  # (2,) float32
  %y = Add(%a, %a)  # (2,) float32
"""

from __future__ import annotations

from typing import Any

from ..ir import Graph
from ._common import finish, rename_uses
from .constant_folding import NOT_FOLDED

__all__ = ["eliminate_common_subexpressions"]


def _key(value: Any) -> Any:
    """A hashable, exact form of an attribute value (tensors by dtype, shape and contents)."""
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in value.items())))
    if hasattr(value, "tolist") and hasattr(value, "dtype") and hasattr(value, "shape"):
        return ("tensor", str(value.dtype), tuple(value.shape), _key(value.tolist()))
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """A new graph where, among nodes with equal op type, inputs (in order) and attributes, only
    the first in topological order remains. ``graph`` itself is not modified.

    Repeats to a fixed point in one walk: once two nodes are merged, their readers may become
    equal in turn. A duplicate whose output is a graph output is kept (graph output names are the
    graph's interface), as are random ops (two draws are not the same value) and the
    ``tt.<Primitive>`` nodes of traced graphs.
    """
    g = graph.copy()
    seen: dict[Any, list[str]] = {}
    outputs = set(g.outputs)
    kept = []
    for node in g.topo_sort():
        if node.op_type in NOT_FOLDED or node.op_type.startswith("tt."):
            kept.append(node)
            continue
        key = (node.op_type, tuple(node.inputs), len(node.outputs), _key(node.attrs))
        first = seen.get(key)
        if first is None or any(o in outputs for o in node.outputs if o):
            seen.setdefault(key, node.outputs)
            kept.append(node)
            continue
        for old, new in zip(node.outputs, first, strict=True):
            if old and not new:
                kept.append(node)  # the earlier node does not produce an output this one does
                break
        else:
            for old, new in zip(node.outputs, first, strict=True):
                if old:
                    rename_uses(g, old, new)
    g.nodes = kept
    return finish(g)
