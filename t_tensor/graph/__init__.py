"""The graph layer: an IR of ONNX-style nodes, shape inference, kernels and executors.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> g = Graph()
>>> _ = g.add_input("x", (2,), tt.float32)
>>> _ = g.add_node("Neg", ["x"], ["y"])
>>> g.outputs = ["y"]
>>> g.run(tt.tensor([1.0, -2.0])).tolist()
[-1.0, 2.0]
"""

# graph-core: IR, shape inference, kernels, plain executor
from .executor import Profiler, execute
from .ir import Graph, Node, ValueInfo
from .kernels import KERNELS, run_node
from .shape_inference import SHAPE_RULES, infer_shapes

__all__ = [
    # graph-core
    "Graph", "Node", "ValueInfo", "infer_shapes", "SHAPE_RULES", "KERNELS", "run_node", "execute", "Profiler",
]
