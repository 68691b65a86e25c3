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

from ..ir import Graph
from ..kernels import KERNELS, run_node
from ._common import finish

__all__ = ["fold_constants", "FOLD_LIMIT", "NOT_FOLDED"]

# A folded result may have at most this many elements, or as many as its inputs together: a
# small constant expanded into a huge tensor would blow the model up for no gain.
FOLD_LIMIT = 1 << 16

# Op types never folded: their result is not a function of their inputs alone.
NOT_FOLDED = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
                        "Multinomial"})


def fold_constants(graph: Graph, limit: int = FOLD_LIMIT) -> Graph:
    """A new graph where every node computable from constants alone is replaced by initializers
    (names unchanged). ``graph`` itself is not modified.

    A node is folded when it has a kernel, all its (present) inputs are constants, and each result
    has at most ``max(limit, total elements of its inputs)`` elements. Folding follows the
    topological order, so whole constant subgraphs collapse. Initializers no longer read are
    dropped (dead code elimination removes nothing else).
    """
    g = graph.copy()
    consts = {k: v for k, v in g.initializers.items() if k not in g.inputs}
    kept = []
    for node in g.topo_sort():
        present = [i for i in node.inputs if i]
        if (node.op_type in KERNELS and node.op_type not in NOT_FOLDED
                and all(i in consts for i in present)
                and not (node.op_type != "Constant" and not present)):
            results = run_node(node, [consts[i] if i else None for i in node.inputs])
            budget = max(limit, sum(consts[i].numel() for i in present))
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
