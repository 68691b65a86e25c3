"""Graph optimization passes, each in its own module and each a function ``Graph -> Graph`` that
returns a new graph (the argument is never modified) computing the same outputs:

- :func:`eliminate_dead_code` (dce.py), :func:`fold_constants` (constant_folding.py),
  :func:`eliminate_common_subexpressions` (cse.py);
- :func:`optimize_transposes` (transpose.py): transpose pairs composed or cancelled, 2-d
  transposes folded into Gemm's ``transA``/``transB``;
- :func:`fold_batchnorm` (batchnorm_fold.py), :func:`fuse_conv` (conv_fuse.py): BatchNorm into
  the preceding Conv, Conv + bias + Relu into one ``FusedConv``;
- :func:`fold_reshapes` (reshape_fold.py): chains of Reshape / Flatten / Squeeze / Unsqueeze
  into one Reshape to a constant shape, Reshapes to the same shape removed;
- :func:`fuse_gemm_activation` (gemm_activation.py): MatMul + bias into Gemm, Gemm / MatMul +
  Relu (or constant Clip) into one ``FusedGemm`` / ``FusedMatMul``;
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
from .gemm_activation import fuse_gemm_activation
from .reshape_fold import fold_reshapes
from .transpose import optimize_transposes

__all__ = [
    "optimize", "DEFAULT_PASSES", "eliminate_dead_code", "fold_constants", "FOLD_LIMIT",
    "eliminate_common_subexpressions", "optimize_transposes", "fold_batchnorm", "fuse_conv", "fuse_elementwise",
    "fold_reshapes", "fuse_gemm_activation",
]

Pass = Callable[[Graph], Graph]

# The order matters: constants are folded before CSE compares inputs and before view chains are
# folded (a shape computed from constants becomes one), transposes are folded into Gemm before
# Gemm takes its bias and activation, BatchNorm is folded into a Conv before the Conv is fused with
# its bias and activation, the products and convolutions take their Add and Relu before the
# elementwise fusion would, and dead code is removed first (less work) and last (what the others
# left behind).
DEFAULT_PASSES: tuple[Pass, ...] = (
    eliminate_dead_code, fold_constants, fold_reshapes, eliminate_common_subexpressions, optimize_transposes,
    fuse_gemm_activation, fold_batchnorm, fuse_conv, fuse_elementwise, eliminate_dead_code,
)


def optimize(graph: Graph, passes: Sequence[Pass] = DEFAULT_PASSES) -> Graph:
    """Run ``passes`` in order; returns the optimized graph (a new one: ``graph`` is unchanged)."""
    for p in passes:
        graph = p(graph)
    return graph
