"""Reshape folding: a chain of shape-only views -- ``Reshape``, ``Flatten``, ``Squeeze``,
``Unsqueeze`` -- becomes one ``Reshape`` of the chain's first input to a constant shape (the
shape inference found), and a ``Reshape`` to its input's own shape disappears. A view whose shape
comes from computed values (``Shape`` -> ``Gather`` -> ``Concat``, as exporters write it) gets a
constant shape as well, which leaves that computation dead. Only values whose shapes are fully
known (no symbolic dims) are rewritten.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import fold_reshapes
>>> g = Graph()
>>> _ = g.add_input("x", (2, 3, 4), tt.float32)
>>> _ = g.add_node("Flatten", ["x"], ["f"], {"axis": 1})             # (2, 12)
>>> _ = g.add_node("Unsqueeze", ["f"], ["u"], {"axes": (0,)})       # (1, 2, 12)
>>> _ = g.add_node("Squeeze", ["u"], ["s"], {"axes": (0,)})         # (2, 12)
>>> _ = g.add_node("Relu", ["s"], ["y"])
>>> g.outputs = ["y"]
>>> print(fold_reshapes(g))
graph graph(%x: (2, 3, 4) float32) -> (%y)
  %s_shape = initializer  # (2,) int64
  %s = Reshape(%x, %s_shape)  # (2, 12) float32
  %y = Relu(%s)  # (2, 12) float32
"""

from __future__ import annotations

from ... import dtypes as D
from ...creation import tensor
from ..ir import Graph
from ._common import finish, fresh_name, rename_uses, use_counts, with_shapes

__all__ = ["fold_reshapes", "SHAPE_VIEWS"]

SHAPE_VIEWS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
"""Op types whose output is their first input's elements in the same order, another shape."""


def _static(g: Graph, name: str) -> tuple[int, ...] | None:
    info = g.values.get(name)
    if info is None or info.shape is None or not all(isinstance(d, int) for d in info.shape):
        return None
    return tuple(info.shape)


def fold_reshapes(graph: Graph) -> Graph:
    """A new graph with view chains folded into one constant-shape Reshape and Reshapes to the same
    shape removed (see the module docstring). ``graph`` itself is not modified.

    A view whose output is a graph output is kept as a node (as ``Identity`` when it would
    vanish), so the graph's output names do not change. Views left without readers are dropped.
    """
    g = with_shapes(graph.copy())
    producer = g.producers()
    for node in g.topo_sort():
        if node.op_type not in SHAPE_VIEWS or len(node.outputs) != 1 or not node.inputs:
            continue
        out = node.outputs[0]
        target = _static(g, out)
        if target is None or _static(g, node.inputs[0]) is None:
            continue
        # walk up the chain of views to its first input
        src = node.inputs[0]
        while src in producer and producer[src].op_type in SHAPE_VIEWS and producer[src].inputs \
                and _static(g, producer[src].inputs[0]) is not None:
            src = producer[src].inputs[0]
        if _static(g, src) == target:
            if out in g.outputs:
                node.op_type, node.inputs, node.attrs = "Identity", [src], {}
            else:
                rename_uses(g, out, src)
                g.nodes = [n for n in g.nodes if n is not node]
            continue
        shape_input = node.inputs[1] if node.op_type == "Reshape" and len(node.inputs) > 1 else ""
        already = (node.op_type == "Reshape" and src == node.inputs[0] and shape_input in g.initializers
                   and shape_input not in g.inputs
                   and [int(v) for v in g.initializers[shape_input].reshape(-1).tolist()] == list(target))
        if already:
            continue
        shape = g.add_initializer(fresh_name(g, out + "_shape"), tensor(list(target), dtype=D.int64))
        # a 0 in the target means "this input's dim" unless allowzero: an empty dim needs allowzero
        node.op_type, node.inputs = "Reshape", [src, shape]
        node.attrs = {"allowzero": 1} if 0 in target else {}
    # drop the views (and what computed their shapes) left without readers
    changed = True
    while changed:
        uses = use_counts(g)
        keep = [n for n in g.nodes if n.op_type not in SHAPE_VIEWS | {"Shape", "Gather", "Concat", "Constant",
                                                                       "Cast", "Identity"}
                or any(uses.get(o, 0) for o in n.outputs if o)]
        changed = len(keep) != len(g.nodes)
        g.nodes = keep
    read = {i for n in g.nodes for i in n.inputs} | set(g.outputs) | set(g.inputs)
    original = {i for n in graph.nodes for i in n.inputs}
    # the shapes made here that ended up unread go; the graph's own initializers stay as they were
    g.initializers = {k: v for k, v in g.initializers.items()
                      if k in read or (k in graph.initializers and k not in original)}
    return finish(g)
