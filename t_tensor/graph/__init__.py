"""The graph layer: an IR of ONNX-named ops, shape inference, kernels and an executor, static
memory planning and the arena executor that runs a graph with every intermediate in one arena
(:mod:`t_tensor.graph.arena`), its nodes prepared once into C calls (:mod:`t_tensor.graph.steps`),
fused elementwise kernels (an expression such as
``relu(add(@0,@1))`` compiled to one pass in C, :mod:`t_tensor.graph.fused_expr`), and
optimization passes (:mod:`t_tensor.graph.passes`, ``graph.optimize()``).

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> g = Graph()
>>> _ = g.add_input("x", (2,), tt.float32)
>>> _ = g.add_node("Neg", ["x"], ["y"])
>>> g.outputs = ["y"]
>>> g.run(tt.tensor([1.0, -2.0])).tolist()
[-1.0, 2.0]
"""

# arena executor (t_tensor/graph/arena.py)
from t_tensor.graph.arena import (
    ALIAS_OPS,
    INPLACE_OPS,
    OUT_KERNELS,
    ArenaExecutor,
    GraphMemoryPlan,
    graph_signature,
    plan_graph,
)

# graph-core: IR, shape inference, kernels, plain executor
from t_tensor.graph.executor import Profiler, execute

# fused elementwise kernels (t_tensor/graph/fused_expr.py)
from t_tensor.graph.fused_expr import (
    FUSED_OPS,
    MAX_NESTING,
    ONNX_TO_FUSED,
    ExprNode,
    FusedExprError,
    FusedKernel,
    Instr,
    Token,
    parse,
    to_postfix,
    tokenize,
)
from t_tensor.graph.ir import Graph, Node, ValueInfo
from t_tensor.graph.kernels import KERNELS, run_node

# memory planning (t_tensor/graph/memory_plan.py)
from t_tensor.graph.memory_plan import (
    PLANNERS,
    MemoryPlan,
    PlannedTensor,
    PlannerComparison,
    compare_planners,
    liveness,
    plan_greedy_by_size,
    plan_offset_allocator,
)

# optimization passes (t_tensor/graph/passes/); importing them registers the FusedConv and
# FusedElementwise kernels and shape rules
from t_tensor.graph.passes import (
    DEFAULT_PASSES,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_batchnorm,
    fold_constants,
    fold_reshapes,
    fuse_conv,
    fuse_elementwise,
    fuse_gemm_activation,
    optimize,
    optimize_transposes,
)
from t_tensor.graph.shape_inference import SHAPE_RULES, infer_shapes
from t_tensor.graph.steps import STEP_BUILDERS

__all__ = [
    # graph-core
    "Graph", "Node", "ValueInfo", "infer_shapes", "SHAPE_RULES", "KERNELS", "run_node", "execute", "Profiler",
    # memory planning
    "PLANNERS", "MemoryPlan", "PlannedTensor", "PlannerComparison", "compare_planners", "liveness",
    "plan_greedy_by_size", "plan_offset_allocator",
    # arena executor
    "ALIAS_OPS", "INPLACE_OPS", "OUT_KERNELS", "ArenaExecutor", "GraphMemoryPlan", "plan_graph", "graph_signature",
    "STEP_BUILDERS",
    # fused elementwise kernels
    "FUSED_OPS", "MAX_NESTING", "ONNX_TO_FUSED", "ExprNode", "FusedExprError", "FusedKernel", "Instr", "Token",
    "parse", "to_postfix", "tokenize",
    # optimization passes
    "DEFAULT_PASSES", "optimize", "eliminate_dead_code", "fold_constants", "eliminate_common_subexpressions",
    "optimize_transposes", "fold_batchnorm", "fuse_conv", "fuse_elementwise", "fold_reshapes", "fuse_gemm_activation",
]  # fmt: skip
