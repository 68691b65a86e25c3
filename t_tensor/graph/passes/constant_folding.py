"""Constant folding: a node whose inputs are all constants (initializers that are not graph
inputs, or outputs of nodes already folded) is run once, now, and replaced by initializers
holding its results.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import fold_constants
>>> g = Graph()
>>> _ = g.add_input("x", (3,), tt.float32)
>>> _ = g.add_initializer("w", tt.tensor([1.0, 2.0, 3.0]))
>>> _ = g.add_node("Mul", ["w", "w"], ["w2"])      # constant: folded
>>> _ = g.add_node("Add", ["x", "w2"], ["y"])
>>> g.outputs = ["y"]
>>> f = fold_constants(g)
>>> [n.op_type for n in f.nodes], f.initializers["w2"].tolist()
(['Add'], [1.0, 4.0, 9.0])
"""

from __future__ import annotations

import math
from typing import Any

from ... import dtypes as D
from ...creation import tensor
from ..ir import Graph, Node
from ..kernels import KERNELS, run_node
from ._common import finish, with_shapes

__all__ = ["fold_constants", "FOLD_LIMIT", "NOT_FOLDED"]

# A folded result may have at most this many elements, or as many as its inputs together: a
# small constant expanded into a huge tensor would blow the model up for no gain.
FOLD_LIMIT = 1 << 16

# Op types never folded (nor merged by CSE): their result is not a function of their inputs alone.
# Traced graphs' "tt.<Primitive>" nodes are left alone too.
NOT_FOLDED = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
                        "Multinomial"})


def _static_shape(node: Node, shape: tuple[int, ...]) -> list[Any]:
    """The result of a Shape (with ``start``/``end``) or Size node on a value of known shape;
    ValueError when the dims it needs are symbolic (known only at run time)."""
    start, end = node.attrs.get("start", 0), node.attrs.get("end")
    dims = shape if node.op_type == "Size" else shape[int(start):None if end is None else int(end)]
    if not all(isinstance(d, int) for d in dims):
        raise ValueError(f"{node.op_type}: symbolic dims {tuple(dims)}")
    if node.op_type == "Size":
        return [tensor(math.prod(dims), dtype=D.int64)]
    return [tensor(list(dims), dtype=D.int64)]


def fold_constants(graph: Graph, limit: int = FOLD_LIMIT) -> Graph:
    """A new graph where every node computable from constants alone is replaced by initializers
    (names unchanged). ``graph`` itself is not modified.

    A node is folded when it has a kernel, all its (present) inputs are constants, and each result
    has at most ``max(limit, total elements of its inputs)`` elements. ``Shape`` and ``Size`` of a
    value whose shape inference knows are folded too (the shape arithmetic exporters write before
    a Reshape then collapses). A node whose kernel raises on its constants is left in place. Folding follows the
    topological order, so whole constant subgraphs collapse. Initializers no longer read are
    dropped (dead code elimination removes nothing else).
    """
    g = with_shapes(graph.copy())
    consts = {k: v for k, v in g.initializers.items() if k not in g.inputs}
    kept = []
    for node in g.topo_sort():
        present = [i for i in node.inputs if i]
        static = node.op_type in ("Shape", "Size") and g.values.get(node.inputs[0]) is not None \
            and g.values[node.inputs[0]].shape is not None
        if static or (node.op_type in KERNELS and node.op_type not in NOT_FOLDED
                      and not node.op_type.startswith("tt.")
                      and all(i in consts for i in present)
                      and not (node.op_type != "Constant" and not present)):
            try:
                results = (_static_shape(node, g.values[node.inputs[0]].shape) if static
                           else run_node(node, [consts[i] if i else None for i in node.inputs]))
            except (ValueError, TypeError, IndexError, RuntimeError, NotImplementedError):
                kept.append(node)  # left for run time, which reports the error in context
                continue
            budget = max(limit, sum(consts[i].numel() for i in present if i in consts))
            if all(r.numel() <= budget for r in results[:len(node.outputs)]):
                for o, r in zip(node.outputs, results, strict=False):
                    if o:
                        consts[o] = r
                        g.add_initializer(o, r)
                continue
        kept.append(node)
    g.nodes = kept
    read = {i for n in g.nodes for i in n.inputs} | set(g.outputs) | set(g.inputs)
    g.initializers = {k: v for k, v in g.initializers.items() if k in read or k in graph.initializers}
    return finish(g)
