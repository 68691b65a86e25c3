"""The graph layer: capture, an IR, optimization passes, memory planning and an executor.

>>> from t_tensor.graph import FusedKernel
>>> FusedKernel("relu(add(@0,@1))").program
[load @0, load @1, add, relu]
"""

__all__: list[str] = []

# --- fused elementwise kernels (graph-fuse) ---
from t_tensor.graph.fused_expr import (  # noqa: E402
    FUSED_OPS,
    ONNX_TO_FUSED,
    FusedExprError,
    FusedKernel,
    Instr,
    Node,
    Token,
    parse,
    to_postfix,
    tokenize,
)

__all__ += [
    "FUSED_OPS", "ONNX_TO_FUSED", "FusedExprError", "FusedKernel", "Instr", "Node", "Token", "parse",
    "to_postfix", "tokenize",
]
# --- end fused elementwise kernels ---
