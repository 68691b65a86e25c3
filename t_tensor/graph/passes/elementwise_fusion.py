"""Elementwise fusion: a tree of elementwise nodes whose intermediates each have one reader is
replaced by one ``FusedElementwise`` node whose ``expr`` attribute is the tree written as a
fused expression (``add(mul(@0,@1),@2)``, see :mod:`t_tensor.graph.fused_expr`). Its kernel
(:class:`~t_tensor.graph.fused_expr.FusedKernel`, compiled once per expression and cached) reads
each input once and writes the result once, without materializing the intermediates.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import fuse_elementwise
>>> g = Graph()
>>> for name in "abc":
...     _ = g.add_input(name, (2, 3), tt.float32)
>>> _ = g.add_node("Mul", ["a", "b"], ["ab"])
>>> _ = g.add_node("Add", ["ab", "c"], ["s"])
>>> _ = g.add_node("Relu", ["s"], ["y"])
>>> g.outputs = ["y"]
>>> f = fuse_elementwise(g)
>>> print(f)
graph graph(%a: (2, 3) float32, %b: (2, 3) float32, %c: (2, 3) float32) -> (%y)
  %y = FusedElementwise[expr='relu(add(mul(@0,@1),@2))'](%a, %b, %c)  # (2, 3) float32
>>> a, b, c = tt.randn(2, 3), tt.randn(2, 3), tt.randn(2, 3)
>>> bool((f.run(a, b, c) == g.run(a, b, c)).all())
True
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from ... import dtypes as D
from ..fused_expr import ONNX_TO_FUSED, FusedKernel
from ..ir import Graph, Node
from ..kernels import KERNELS
from ..shape_inference import SHAPE_RULES, Ctx, Out, _bcast
from ._common import finish, is_constant, use_counts, with_shapes

__all__ = ["fuse_elementwise", "fused_kernel", "MAX_TREE_DEPTH", "MAX_TREE_NODES"]

_FLOATS = (D.float32, D.float64)


@lru_cache(maxsize=256)
def fused_kernel(expr: str) -> FusedKernel:
    """The compiled kernel of ``expr`` (compiled once per distinct expression, then cached)."""
    return FusedKernel(expr)


def _fused_elementwise(xs: list[Any], attrs: dict[str, Any]) -> Any:
    """Kernel of FusedElementwise: the cached FusedKernel of ``attrs["expr"]`` on the inputs."""
    return fused_kernel(attrs["expr"])(*xs)


def _fused_shape(ctx: Ctx) -> list[Out]:
    shapes = [ctx.shape(k) for k in range(len(ctx.node.inputs))]
    if len(set(ctx.dtypes)) != 1:
        raise ctx.error("inputs have different dtypes " + " and ".join(d.name for d in ctx.dtypes if d))
    return [(_bcast(ctx, shapes), ctx.dtypes[0])]


KERNELS["FusedElementwise"] = _fused_elementwise
SHAPE_RULES["FusedElementwise"] = _fused_shape


def _fusible(graph: Graph, node: Node) -> bool:
    """An elementwise node with a fused-expression equivalent, one output, and every input and the
    output of one known float dtype with a known shape."""
    if node.op_type not in ONNX_TO_FUSED or len(node.outputs) != 1 or not node.outputs[0]:
        return False
    if node.op_type in ("Max", "Min") and len(node.inputs) != 2:
        return False
    if node.op_type == "Gelu" and node.attrs.get("approximate", "none") not in ("none", b"none"):
        return False
    if len(node.inputs) != (2 if ONNX_TO_FUSED[node.op_type] in _BINARY else 1) or not all(node.inputs):
        return False
    infos = [graph.values.get(n) for n in [*node.inputs, node.outputs[0]]]
    if any(v is None or v.shape is None or v.dtype not in _FLOATS for v in infos):
        return False
    return len({v.dtype for v in infos}) == 1


_BINARY = {"add", "sub", "mul", "div", "maximum", "minimum", "pow"}

# A fused tree is at most this deep and this large: deeper chains are cut into several fused
# nodes (well within the C evaluator's stack depth of 64 and 4096 instructions, and Python's
# recursion limit).
MAX_TREE_DEPTH = 32
MAX_TREE_NODES = 512


def _literal(g: Graph, name: str, dtype: D.DType, rank: int) -> str | None:
    """``name`` as a number in the expression when it is a finite one-element constant of ``dtype``
    of rank at most ``rank`` (the caller checks the other leaves still give the result's rank)."""
    if not is_constant(g, name):
        return None
    c = g.initializers[name]
    if c.dtype != dtype or c.numel() != 1 or c.ndim > rank:
        return None
    v = float(c.reshape(-1).tolist()[0])
    return repr(v) if math.isfinite(v) else None


def _build(g: Graph, node: Node, dtype: D.DType, rank: int, uses: dict[str, int], producer: dict[str, Node],
           absorbed: set[int], leaves: list[str], members: list[Node], depth: int = 1) -> str:
    """The fused expression of the tree rooted at ``node`` (appended to ``members``): an input
    joins the tree when its producer is fusible, of ``dtype``, read once and not yet in a tree;
    other inputs are leaves ``@k`` (``leaves[k]``). Beyond MAX_TREE_DEPTH levels or MAX_TREE_NODES
    nodes, inputs are leaves (their producers start trees of their own)."""
    members.append(node)
    args = []
    for i in node.inputs:
        src = producer.get(i)
        if (src is not None and uses.get(i, 0) == 1 and id(src) not in absorbed and depth < MAX_TREE_DEPTH
                and len(members) < MAX_TREE_NODES and _fusible(g, src) and g.values[i].dtype == dtype):
            args.append(_build(g, src, dtype, rank, uses, producer, absorbed, leaves, members, depth + 1))
        elif (lit := _literal(g, i, dtype, rank)) is not None:
            args.append(lit)
        else:
            if i not in leaves:
                leaves.append(i)
            args.append(f"@{leaves.index(i)}")
    return f"{ONNX_TO_FUSED[node.op_type]}({','.join(args)})"


def fuse_elementwise(graph: Graph) -> Graph:
    """A new graph where every maximal tree of at least two fusible elementwise nodes (Add, Sub,
    Mul, Div, Pow, two-input Max/Min, Neg, Abs, Relu, Exp, Log, Sqrt, Reciprocal, Tanh, Sigmoid,
    Erf, exact Gelu) is one FusedElementwise node. ``graph`` itself is not modified.

    A node joins its reader's tree when its output has exactly that one reader and is not a graph
    output, and when both have the same float dtype (float32 or float64) and known shapes. The
    tree's distinct leaf values become the inputs ``@0, @1, ...`` in order of first appearance,
    except one-element constants that cannot change the result's shape, which are written into
    the expression as numbers (the kernel rounds them to the dtype: the same value);
    the fused node keeps the root's output name.
    """
    g = with_shapes(graph.copy())
    uses = use_counts(g)
    producer = g.producers()
    order = g.topo_sort()
    absorbed: set[int] = set()
    replaced: dict[int, Node] = {}
    for root in reversed(order):
        if id(root) in absorbed or not _fusible(g, root):
            continue
        leaves: list[str] = []
        members: list[Node] = []
        root_info = g.values[root.outputs[0]]
        expr = _build(g, root, root_info.dtype, len(root_info.shape), uses, producer, absorbed, leaves, members)
        if max((len(g.values[n].shape) for n in leaves), default=-1) != len(root_info.shape):
            # the literals carried the result's rank: keep every leaf as an input
            leaves, members = [], []
            expr = _build(g, root, root_info.dtype, -1, uses, producer, absorbed, leaves, members)
        if len(members) < 2 or not leaves or len(leaves) > 64:
            continue
        try:
            fused_kernel(expr)  # compile now (and cache): a tree too deep for the C stack stays unfused
        except ValueError:
            continue
        for m in members:
            absorbed.add(id(m))
        replaced[id(root)] = Node("FusedElementwise", leaves, [root.outputs[0]], {"expr": expr},
                                  f"fused_{root.name}")
    g.nodes = [replaced.get(id(n), n) for n in g.nodes if id(n) not in absorbed or id(n) in replaced]
    return finish(g)
