"""Dead code elimination: drop the nodes whose outputs no graph output needs, and the constants
nothing reads any more.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import eliminate_dead_code
>>> g = Graph()
>>> _ = g.add_input("x", (2,), tt.float32)
>>> _ = g.add_node("Relu", ["x"], ["y"])
>>> _ = g.add_node("Neg", ["x"], ["unused"])
>>> g.outputs = ["y"]
>>> [n.op_type for n in eliminate_dead_code(g).nodes]
['Relu']
"""

from __future__ import annotations

from ..ir import Graph
from ._common import finish

__all__ = ["eliminate_dead_code"]


def eliminate_dead_code(graph: Graph) -> Graph:
    """A new graph without the nodes that do not contribute to any graph output, and without the
    initializers that no remaining node reads (initializers that are graph inputs or graph
    outputs stay). ``graph`` itself is not modified.

    A node is kept when any of its outputs is needed, even if others are not (a node's outputs
    are computed together). Graph inputs are never removed: they are the graph's signature.
    """
    g = graph.copy()
    producer = g.producers()
    needed: set[str] = set()
    stack = [o for o in g.outputs]
    live_nodes: set[int] = set()
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producer.get(name)
        if node is not None and id(node) not in live_nodes:
            live_nodes.add(id(node))
            stack.extend(i for i in node.inputs if i)
    g.nodes = [n for n in g.nodes if id(n) in live_nodes]
    g.initializers = {k: v for k, v in g.initializers.items()
                      if k in needed or k in g.inputs}
    return finish(g)
