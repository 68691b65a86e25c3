"""Import ONNX models into the t_tensor graph IR, and run them.

``load(path_or_model)`` reads a model (a path, bytes or an ``onnx.ModelProto``) into a
:class:`t_tensor.graph.Graph`: initializers become t_tensor tensors, each node goes through a
builder chosen by op type (``BUILDERS``; ops without a special builder are copied as they are if
the kernel registry has them). Builders adapt the semantics that changed between opsets:
Softmax/LogSoftmax/Hardmax before opset 13 (flatten to 2-d at ``axis``), TopK's ``k`` (an
attribute in opset 1, an input later), Split (sizes as attribute, as
input from opset 13, ``num_outputs`` from 18), Cast's ``to`` given as a string in opset 1-5,
Constant's ``value_*`` spellings. Axes given as an attribute (Squeeze/Unsqueeze/ReduceSum before
13, the other reductions before 18) or as an input (later) are both understood by the IR.

The ``onnx`` package is optional: ``pip install 't_tensor[onnx]'``.

>>> import numpy as np
>>> import onnx
>>> from onnx import TensorProto, helper
>>> import t_tensor.onnx as tt_onnx
>>> node = helper.make_node("Relu", ["x"], ["y"])
>>> graph = helper.make_graph([node], "relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
...                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
>>> print(tt_onnx.load(model))
graph relu(%x: (2,) float32) -> (%y)
  %y = Relu(%x)  # (2,) float32
>>> tt_onnx.run(model, [np.array([-1.0, 2.0], dtype=np.float32)])[0].tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import dtypes as D
from .graph.executor import Profiler, execute
from .graph.ir import ONNX_DTYPE_CODES, Graph
from .graph.kernels import KERNELS
from .interop import from_numpy

__all__ = ["load", "run", "BUILDERS", "to_tensor"]


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as exc:  # pragma: no cover - exercised only without onnx installed
        raise ImportError("t_tensor.onnx needs the onnx package: pip install 't_tensor[onnx]'") from exc
    return onnx


def to_tensor(array: Any) -> Any:
    """A numpy array (or an ``onnx.TensorProto``) as a t_tensor tensor (a copy)."""
    if not isinstance(array, np.ndarray):
        array = _onnx().numpy_helper.to_array(array)
    try:
        D.from_numpy_dtype(array.dtype)
    except (TypeError, ValueError, KeyError) as exc:
        raise NotImplementedError(f"load: numpy dtype {array.dtype} has no t_tensor dtype") from exc
    return from_numpy(np.array(array, copy=True, order="C"))


def _attr_value(attr: Any) -> Any:
    onnx = _onnx()
    if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        raise NotImplementedError(f"load: graph attribute {attr.name!r} (control flow) is not supported")
    v = onnx.helper.get_attribute_value(attr)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, onnx.TensorProto):
        return to_tensor(v)
    if isinstance(v, list):
        return tuple(x.decode() if isinstance(x, bytes) else x for x in v)
    return v


# -- builders -----------------------------------------------------------------------------------
# a builder appends the IR nodes of one ONNX node: (graph, op_type, name, inputs, outputs, attrs)
Builder = Callable[[Graph, str, str, list[str], list[str], dict[str, Any]], None]
BUILDERS: dict[str, Builder] = {}


def builder(*ops: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        for op in ops:
            BUILDERS[op] = fn
        return fn
    return deco


def _copy(g: Graph, op: str, name: str, ins: list[str], outs: list[str], attrs: dict[str, Any]) -> None:
    """The default builder: the node as it is (its kernel implements the ONNX semantics)."""
    g.add_node(op, ins, outs, attrs, name)


@builder("Softmax", "LogSoftmax", "Hardmax")
def _softmax(g: Graph, op: str, name: str, ins: list[str], outs: list[str], attrs: dict[str, Any]) -> None:
    if g.opset >= 13:
        g.add_node(op, ins, outs, attrs, name)
        return
    # before opset 13: the input is flattened to 2-d at `axis` (default 1), normalized per row
    axis = int(attrs.get("axis", 1))
    shape = g.add_node("Shape", [ins[0]], [f"{outs[0]}__shape"], {}, f"{name}__shape")
    flat = g.add_node("Flatten", [ins[0]], [f"{outs[0]}__flat"], {"axis": axis}, f"{name}__flatten")
    y = g.add_node(op, [flat], [f"{outs[0]}__2d"], {"axis": 1}, name)
    g.add_node("Reshape", [y, shape], outs, {}, f"{name}__reshape")


@builder("Split")
def _split(g: Graph, op: str, name: str, ins: list[str], outs: list[str], attrs: dict[str, Any]) -> None:
    has_sizes = (len(ins) > 1 and ins[1]) or "split" in attrs
    if not has_sizes and "num_outputs" not in attrs:
        attrs["num_outputs"] = len(outs)
    g.add_node("Split", ins, outs, attrs, name)


@builder("TopK")
def _topk(g: Graph, op: str, name: str, ins: list[str], outs: list[str], attrs: dict[str, Any]) -> None:
    if "k" in attrs:  # opset 1: k is an attribute; the IR takes it as an input (opset 10 on)
        from .creation import tensor

        k = g.add_initializer(f"{name}__k", tensor([int(attrs.pop("k"))]))
        ins = [ins[0], k]
    g.add_node("TopK", ins, outs, attrs, name)


@builder("Cast")
def _cast(g: Graph, op: str, name: str, ins: list[str], outs: list[str], attrs: dict[str, Any]) -> None:
    to = attrs["to"]
    if isinstance(to, str):  # opset 1-5 spelled the type as a string
        to = int(getattr(_onnx().TensorProto, to.upper()))
    attrs["to"] = ONNX_DTYPE_CODES.get(to, to)
    g.add_node("Cast", ins, outs, attrs, name)


@builder("Constant")
def _constant(g: Graph, op: str, name: str, ins: list[str], outs: list[str], attrs: dict[str, Any]) -> None:
    from .creation import tensor

    if "value" in attrs:
        value = attrs["value"]
    elif "value_float" in attrs:
        value = tensor(attrs["value_float"], dtype=D.float32)
    elif "value_floats" in attrs:
        value = tensor(list(attrs["value_floats"]), dtype=D.float32)
    elif "value_int" in attrs:
        value = tensor(attrs["value_int"], dtype=D.int64)
    elif "value_ints" in attrs:
        value = tensor(list(attrs["value_ints"]), dtype=D.int64)
    else:
        raise NotImplementedError(f"load: Constant {name!r} with attributes {sorted(attrs)} is not supported")
    g.add_node("Constant", ins, outs, {"value": value}, name)


# -- load / run ---------------------------------------------------------------------------------
def _shape_of(type_proto: Any) -> tuple[Any, ...] | None:
    t = type_proto.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)


def load(model: Any, input_shapes: Mapping[str, Sequence[int]] | None = None, infer_shapes: bool = True) -> Graph:
    """Import an ONNX model (a path, serialized bytes or a ``ModelProto``) as a Graph.

    An input dim that the model names (``dim_param``, as ``torch.onnx.export(dynamic_axes=...)``
    writes a dynamic batch) stays symbolic: a string such as ``"batch"``, and shape inference
    carries it through (``("batch", 10)``); the executors accept any size for it.
    ``input_shapes`` fixes input shapes instead. Shapes are inferred when every input's shape is
    declared (``infer_shapes=False`` skips it); an input dim with neither a value nor a name
    leaves that input's shape unknown.
    """
    onnx = _onnx()
    if isinstance(model, (str, os.PathLike)):
        model = onnx.load(os.fspath(model))
    elif isinstance(model, (bytes, bytearray)):
        model = onnx.load_from_string(bytes(model))
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=1)
    gp = model.graph
    g = Graph(name=gp.name or "onnx", opset=opset)
    for t in gp.initializer:
        g.add_initializer(t.name, to_tensor(t))
    shapes = dict(input_shapes or {})
    for vi in gp.input:
        if vi.name in g.initializers:
            continue  # an input with a default value: a constant here
        code = vi.type.tensor_type.elem_type
        if code not in ONNX_DTYPE_CODES:
            raise NotImplementedError(f"load: input {vi.name!r} has ONNX data type {code}, which t_tensor lacks")
        shape = tuple(shapes[vi.name]) if vi.name in shapes else _shape_of(vi.type)
        g.add_input(vi.name, None if shape is None or None in shape else shape, ONNX_DTYPE_CODES[code])
    for k, node in enumerate(gp.node):
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"load: node {node.name!r} uses domain {node.domain!r}, not supported")
        attrs = {a.name: _attr_value(a) for a in node.attribute}
        name = node.name or f"{node.op_type}_{k}"
        b = BUILDERS.get(node.op_type)
        if b is None:
            if node.op_type not in KERNELS:
                raise NotImplementedError(f"load: ONNX op {node.op_type!r} (opset {opset}) is not supported "
                                          f"(node {name!r})")
            b = _copy
        b(g, node.op_type, name, list(node.input), list(node.output), attrs)
    g.outputs = [o.name for o in gp.output]
    g.validate()
    if infer_shapes and all(g.values[i].shape is not None for i in g.inputs):
        g.infer_shapes(strict=False)  # shapes computed from runtime inputs stay unknown
    return g


def run(model: Any, inputs: Sequence[Any] | Mapping[str, Any], profiler: Profiler | None = None) -> list[Any]:
    """Run an ONNX model (anything ``load`` takes, or a loaded Graph) on ``inputs`` (a sequence
    in input order or a name -> array mapping; numpy arrays, t_tensor tensors or
    ``onnx.TensorProto``); returns the list of outputs as t_tensor tensors."""
    graph = model if isinstance(model, Graph) else load(model, infer_shapes=False)
    proto = _onnx().TensorProto

    def conv(v: Any) -> Any:
        return to_tensor(v) if isinstance(v, proto) else v

    if isinstance(inputs, Mapping):
        inputs = {k: conv(v) for k, v in inputs.items()}
    else:
        inputs = [conv(v) for v in inputs]
    return execute(graph, inputs, profiler=profiler)
