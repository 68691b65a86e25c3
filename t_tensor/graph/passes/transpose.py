"""Transpose optimizations: a Transpose of a Transpose becomes one Transpose with the composed
permutation, or nothing when the two cancel; a Transpose swapping the two axes of a 2-d operand
of MatMul (or Gemm) is folded into a Gemm's ``transA``/``transB``.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import optimize_transposes
>>> g = Graph()
>>> _ = g.add_input("x", (2, 3), tt.float32)
>>> _ = g.add_input("w", (4, 3), tt.float32)
>>> _ = g.add_node("Transpose", ["w"], ["wt"], {"perm": (1, 0)})
>>> _ = g.add_node("MatMul", ["x", "wt"], ["y"])
>>> g.outputs = ["y"]
>>> print(optimize_transposes(g))
graph graph(%x: (2, 3) float32, %w: (4, 3) float32) -> (%y)
  %y = Gemm[transB=1](%x, %w)  # (2, 4) float32
"""

from __future__ import annotations

from ..ir import Graph, Node
from ._common import finish, rename_uses, use_counts, with_shapes

__all__ = ["optimize_transposes"]


def _perm(graph: Graph, node: Node) -> tuple[int, ...] | None:
    """A Transpose's permutation (the default reverses the axes; None if the rank is unknown)."""
    if "perm" in node.attrs:
        return tuple(int(p) for p in node.attrs["perm"])
    info = graph.values.get(node.inputs[0])
    if info is None or info.shape is None:
        return None
    return tuple(range(len(info.shape) - 1, -1, -1))


def _rank(graph: Graph, name: str) -> int | None:
    info = graph.values.get(name)
    return None if info is None or info.shape is None else len(info.shape)


def optimize_transposes(graph: Graph) -> Graph:
    """A new graph with Transpose pairs composed or cancelled and 2-d transposes folded into Gemm.
    ``graph`` itself is not modified.

    - ``Transpose(Transpose(x, p1), p2)`` reads ``x`` through the permutation ``p1[p2[i]]``: when
      that is the identity the readers of the second transpose read ``x`` directly (unless its
      output is a graph output), otherwise the pair becomes one Transpose of ``x``.
    - ``MatMul(A, B)`` with both operands 2-d, where A or B is ``Transpose(X, (1, 0))``, becomes
      ``Gemm(X, ..., transA=1)`` / ``transB=1``; an existing Gemm's flag is flipped. (ONNX MatMul
      has no transpose flags, so N-d MatMuls keep their Transpose.)

    A transpose left without readers is removed.
    """
    g = with_shapes(graph.copy())
    changed = True
    while changed:
        changed = False
        producer = g.producers()
        for node in g.topo_sort():
            if node.op_type == "Transpose":
                src = producer.get(node.inputs[0])
                if src is None or src.op_type != "Transpose":
                    continue
                p1, p2 = _perm(g, src), _perm(g, node)
                if p1 is None or p2 is None or len(p1) != len(p2):
                    continue
                composed = tuple(p1[p] for p in p2)
                if composed == tuple(range(len(composed))):
                    if node.outputs[0] in g.outputs:
                        node.op_type, node.inputs, node.attrs = "Identity", [src.inputs[0]], {}
                    else:
                        rename_uses(g, node.outputs[0], src.inputs[0])
                        g.nodes.remove(node)
                else:
                    node.inputs, node.attrs = [src.inputs[0]], {"perm": composed}
                changed = True
            elif node.op_type in ("MatMul", "Gemm"):
                for k, flag in ((0, "transA"), (1, "transB")):
                    src = producer.get(node.inputs[k])
                    if (src is None or src.op_type != "Transpose" or _rank(g, src.inputs[0]) != 2
                            or _perm(g, src) != (1, 0)):
                        continue
                    if node.op_type == "MatMul":
                        if _rank(g, node.inputs[1 - k]) != 2:
                            break
                        node.op_type = "Gemm"
                    node.inputs[k] = src.inputs[0]
                    node.attrs[flag] = 1 - int(node.attrs.get(flag, 0))
                    changed = True
            if changed:
                break
        # drop the transposes this left without readers
        uses = use_counts(g)
        g.nodes = [n for n in g.nodes if n.op_type != "Transpose" or any(uses.get(o, 0) for o in n.outputs)]
    return finish(g)
