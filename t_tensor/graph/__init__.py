"""The graph layer: a graph IR of ONNX-named ops, passes over it, static memory planning and an executor."""

# --- memory planning (t_tensor/graph/memory_plan.py) ---
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

__all__ = [
    # --- memory planning ---
    "PLANNERS",
    "MemoryPlan",
    "PlannedTensor",
    "PlannerComparison",
    "compare_planners",
    "liveness",
    "plan_greedy_by_size",
    "plan_offset_allocator",
]
