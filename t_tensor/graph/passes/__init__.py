"""Graph optimization passes, each in its own module and each a function ``Graph -> Graph`` that
returns a new graph (the argument is never modified) computing the same outputs:

- :func:`eliminate_dead_code` (dce.py), :func:`fold_constants` (constant_folding.py),
  :func:`eliminate_common_subexpressions` (cse.py);
- :func:`optimize_transposes` (transpose.py): transpose pairs composed or cancelled, 2-d
  transposes folded into Gemm's ``transA``/``transB``;
- :func:`fold_batchnorm` (batchnorm_fold.py), :func:`fuse_conv` (conv_fuse.py): BatchNorm into
  the preceding Conv, Conv + bias + Relu into one ``FusedConv``;
- :func:`fuse_elementwise` (elementwise_fusion.py): elementwise trees into one
  ``FusedElementwise`` node evaluated in one pass in C.

``optimize(graph)`` (or ``graph.optimize()``) runs ``DEFAULT_PASSES`` in order.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> g = Graph()
>>> _ = g.add_input("x", (2, 2), tt.float32)
>>> _ = g.add_initializer("k", tt.ones(2, 2))
>>> _ = g.add_node("Add", ["k", "k"], ["k2"])            # constant
>>> _ = g.add_node("Mul", ["x", "k2"], ["a"])
>>> _ = g.add_node("Mul", ["x", "k2"], ["b"])            # same as a
>>> _ = g.add_node("Add", ["a", "b"], ["c"])
>>> _ = g.add_node("Relu", ["c"], ["y"])
>>> _ = g.add_node("Exp", ["x"], ["unused"])             # dead
>>> g.outputs = ["y"]
>>> print(g.optimize())
graph graph(%x: (2, 2) float32) -> (%y)
  %k2 = initializer  # (2, 2) float32
  %a = Mul(%x, %k2)  # (2, 2) float32
  %y = FusedElementwise[expr='relu(add(@0,@0))'](%a)  # (2, 2) float32
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir import Graph
from .batchnorm_fold import fold_batchnorm
from .constant_folding import FOLD_LIMIT, fold_constants
from .conv_fuse import fuse_conv
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .elementwise_fusion import fuse_elementwise
from .transpose import optimize_transposes

__all__ = [
    "optimize", "DEFAULT_PASSES", "eliminate_dead_code", "fold_constants", "FOLD_LIMIT",
    "eliminate_common_subexpressions", "optimize_transposes", "fold_batchnorm", "fuse_conv", "fuse_elementwise",
]

Pass = Callable[[Graph], Graph]

# The order matters: constants are folded before CSE compares inputs, transposes are folded before
# fusion hides them, BatchNorm is folded into a Conv before the Conv is fused with its bias and
# activation, and dead code is removed first (less work) and last (what the others left behind).
DEFAULT_PASSES: tuple[Pass, ...] = (
    eliminate_dead_code, fold_constants, eliminate_common_subexpressions, optimize_transposes, fold_batchnorm,
    fuse_conv, fuse_elementwise, eliminate_dead_code,
)


def optimize(graph: Graph, passes: Sequence[Pass] = DEFAULT_PASSES) -> Graph:
    """Run ``passes`` in order; returns the optimized graph (a new one: ``graph`` is unchanged)."""
    for p in passes:
        graph = p(graph)
    return graph
