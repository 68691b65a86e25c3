"""Traced nodes under ONNX's names: ``to_onnx_ops(graph)`` rewrites the ``tt.<Primitive>`` nodes
that have an exact ONNX equivalent (elementwise math, MatMul, reshapes and transposes,
ReduceSum/ReduceMean, Softmax, 2-d Conv, inference BatchNormalization), so that the
optimization passes, which are written for ONNX graphs, apply to traced graphs too. Nodes without
an equivalent stay as they are (they still run through their primitive), and so do two that have
one but would round differently from eager code: ``layer_norm`` (eager runs one fused kernel,
which the arena runs too) and a ``x ** n`` that eager code computes with cheaper ops than pow
(``x * x`` for 2, sqrt for 0.5, ...). A compiled graph then gives eager's bits.

>>> import t_tensor as tt
>>> from t_tensor.graph.onnx_names import to_onnx_ops
>>> w = tt.ones(3, 2)
>>> compiled = tt.compile(lambda x: (x @ w.T * 2.0).relu(), (tt.ones(4, 2),))
>>> [n.op_type for n in to_onnx_ops(compiled.graph).nodes]
['MatMul', 'Mul', 'Relu']
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import dtypes
from t_tensor.autograd.functions.views import _permutation
from t_tensor.graph.ir import Graph, Node
from t_tensor.strides import contiguous_strides

__all__ = ["to_onnx_ops"]

BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "Div", "Pow": "Pow", "Maximum": "Max", "Minimum": "Min"}
UNARY = {name: name for name in ("Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Relu", "Neg", "Abs", "Erf", "Reciprocal",
                                 "Sin", "Cos", "Floor", "Ceil")}


def _pow_as_ops_takes(exponent: Any, dtype: Any) -> bool:
    """Whether eager ``x ** exponent`` with a result of ``dtype`` runs cheaper ops than pow
    (``elementwise._POW_AS_OPS``): then the node keeps the eager op."""
    from t_tensor.elementwise import _POW_AS_OPS

    return type(exponent) in (int, float) and exponent in _POW_AS_OPS and dtype in (dtypes.float32, dtypes.float64)


class _Rewriter:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.count = 0

    def constant(self, value: Any, dtype: Any) -> str:
        from t_tensor.creation import tensor

        self.count += 1
        name = f"k{self.count}"
        while name in self.graph.values:
            name += "_"
        self.graph.add_initializer(name, tensor(value, dtype=dtype))
        return name

    def operand(self, arg: Any, node: Node, dtype: Any) -> str:
        """An argument as a value name: a tensor slot, or a number made a constant of ``dtype``."""
        if hasattr(arg, "index"):
            return node.inputs[arg.index]
        return self.constant(arg, dtype)

    def rewrite(self, node: Node) -> Node | None:
        name = node.op_type[3:]
        args = node.attrs.get("args", ())
        out = node.outputs[0]
        info = self.graph.values.get(out)
        dtype = info.dtype if info is not None else None
        if node.attrs.get("kwargs") or dtype is None:
            return None
        if name == "Pow" and len(args) > 1 and _pow_as_ops_takes(args[1], dtype):
            return None  # eager x ** n is square/sqrt/... for these: ONNX Pow would round differently
        if name in BINARY:
            return Node(BINARY[name], [self.operand(a, node, dtype) for a in args[:2]], [out], {}, node.name)
        if name in UNARY:
            return Node(UNARY[name], [node.inputs[0]], [out], {}, node.name)
        if name == "Matmul":
            return Node("MatMul", list(node.inputs[:2]), [out], {}, node.name)
        if name == "View":
            return self.view(node, args)
        if name in ("Sum", "Mean"):
            return self.reduce(node, name, args)
        if name == "Softmax":
            _, _, log, dim, dtype_arg, _ = args
            if dtype_arg is not None or dim is None:
                return None
            return Node("LogSoftmax" if log else "Softmax", [node.inputs[0]], [out], {"axis": int(dim)}, node.name)
        if name == "Convolution":
            return self.conv(node, args)
        if name == "BatchNorm":
            return self.batch_norm(node, args, dtype)
        return None

    def view(self, node: Node, args: tuple) -> Node | None:
        b_shape, b_strides, b_offset, b_dense = node.attrs["base"]
        _, shape, strides, offset = args
        out = node.outputs[0]
        if b_dense and offset == b_offset and math.prod(shape) == math.prod(b_shape) and (
            tuple(strides) == contiguous_strides(tuple(shape))
        ):
            target = self.constant(list(shape), dtypes.int64)
            return Node("Reshape", [node.inputs[0], target], [out], {}, node.name)
        permutation = _permutation((b_shape, b_strides, b_offset), (tuple(shape), tuple(strides), offset))
        if permutation is not None:
            return Node("Transpose", [node.inputs[0]], [out], {"perm": tuple(permutation)}, node.name)
        return None

    def reduce(self, node: Node, name: str, args: tuple) -> Node | None:
        if name == "Sum":
            _, fn, dim, keepdim, dtype_arg, axis, keepdims, _ = args
            if fn != "sum":
                return None
        else:
            _, dim, keepdim, dtype_arg, axis, keepdims, _ = args
        dim = axis if dim is None else dim
        keep = bool(keepdims if keepdim is None else keepdim)
        if dtype_arg is not None:
            return None
        ndim = len(self.graph.values[node.inputs[0]].shape)
        axes = list(range(ndim)) if dim is None or dim == () else (
            [d % ndim for d in dim] if isinstance(dim, (tuple, list)) else [dim % ndim])
        out = node.outputs[0]
        if name == "Sum":
            return Node("ReduceSum", [node.inputs[0], self.constant(axes, dtypes.int64)], [out],
                        {"keepdims": int(keep)}, node.name)
        return Node("ReduceMean", [node.inputs[0]], [out], {"axes": tuple(axes), "keepdims": int(keep)}, node.name)

    def conv(self, node: Node, args: tuple) -> Node | None:
        _, _, bias, fn, nd, stride, padding, dilation, groups = args
        if nd != 2 or isinstance(padding, str):
            return None
        def pair(value: Any) -> tuple:
            return (value, value) if isinstance(value, int) else tuple(value)

        pads = pair(padding)
        inputs = [node.inputs[0], node.inputs[1]] + ([node.inputs[2]] if bias is not None else [])
        attrs = {"strides": pair(stride), "pads": pads + pads, "dilations": pair(dilation), "group": int(groups)}
        return Node("Conv", inputs, [node.outputs[0]], attrs, node.name)

    def batch_norm(self, node: Node, args: tuple, dtype: Any) -> Node | None:
        _, running_mean, running_var, weight, bias, training, _, eps = args
        if training or running_mean is None or running_var is None:
            return None
        channels = self.graph.values[node.inputs[0]].shape[1]
        scale = self.operand(weight, node, dtype) if weight is not None else self.constant([1.0] * channels, dtype)
        shift = self.operand(bias, node, dtype) if bias is not None else self.constant([0.0] * channels, dtype)
        inputs = [node.inputs[0], scale, shift, self.operand(running_mean, node, dtype),
                  self.operand(running_var, node, dtype)]
        return Node("BatchNormalization", inputs, [node.outputs[0]], {"epsilon": float(eps)}, node.name)


def to_onnx_ops(graph: Graph) -> Graph:
    """A copy of ``graph`` with the ``tt.*`` nodes that have an exact ONNX equivalent rewritten
    (see the module docstring); it computes the same values."""
    result = graph.copy()
    rewriter = _Rewriter(result)
    nodes = []
    for node in result.nodes:
        replaced = rewriter.rewrite(node) if node.op_type.startswith("tt.") and len(node.outputs) == 1 else None
        nodes.append(replaced or node)
    result.nodes = nodes
    return result
