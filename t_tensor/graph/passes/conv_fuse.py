"""Conv + bias + activation fusion: ``Relu(Add(Conv(x, W, b), c))`` -- where ``c`` is a constant
holding one value per output channel -- becomes one ``FusedConv`` node with the bias ``b + c``
and ``activation="Relu"``. Its kernel runs the convolution (bias included) and then applies the
ReLU in place on the convolution's output, so no intermediate tensor is written.

A Conv followed by a constant per-channel Add alone has the Add folded into the Conv's bias (a
plain Conv); a Conv followed by Relu alone becomes a FusedConv. ``Clip`` with constant bounds
(ReLU6 as exporters write it) fuses the same way, as ``activation="Clip"`` with
``activation_min`` / ``activation_max``.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import fuse_conv
>>> g = Graph()
>>> _ = g.add_input("x", (1, 1, 2, 2), tt.float32)
>>> _ = g.add_initializer("w", tt.ones(2, 1, 1, 1))
>>> _ = g.add_initializer("c", tt.tensor([[[-1.0]], [[0.5]]]))     # (2, 1, 1): per channel
>>> _ = g.add_node("Conv", ["x", "w"], ["conv"])
>>> _ = g.add_node("Add", ["conv", "c"], ["biased"])
>>> _ = g.add_node("Relu", ["biased"], ["y"])
>>> g.outputs = ["y"]
>>> print(fuse_conv(g))
graph graph(%x: (1, 1, 2, 2) float32) -> (%y)
  %w = initializer  # (2, 1, 1, 1) float32
  %conv_bias = initializer  # (2,) float32
  %y = FusedConv[activation='Relu'](%x, %w, %conv_bias)  # (1, 2, 2, 2) float32
>>> x = tt.tensor([[[[0.5, 2.0], [-3.0, 1.0]]]])
>>> bool((fuse_conv(g).run(x) == g.run(x)).all())
True
"""

from __future__ import annotations

from typing import Any

from ... import elementwise as E
from ..ir import Graph
from ..kernels import KERNELS
from ..shape_inference import SHAPE_RULES
from ._common import finish, fresh_name, is_constant, use_counts

__all__ = ["fuse_conv", "FUSED_ACTIVATIONS"]

# activation attribute -> function applying it in place to the convolution's output (given the
# node's attributes: Clip's bounds are ``activation_min`` / ``activation_max``, absent if unbounded)
FUSED_ACTIVATIONS = {
    "Relu": lambda y, attrs: E.relu(y, out=y),
    "Clip": lambda y, attrs: E.clamp(y, attrs.get("activation_min"), attrs.get("activation_max"), out=y),
}


def _fused_conv(xs: list[Any], attrs: dict[str, Any]) -> Any:
    """Kernel of FusedConv: Conv (same attributes), then the activation in place on its output."""
    conv_attrs = {k: v for k, v in attrs.items() if not k.startswith("activation")}
    y = KERNELS["Conv"](xs, conv_attrs)
    act = attrs.get("activation")
    if act is None:
        return y
    if act not in FUSED_ACTIVATIONS:
        raise NotImplementedError(f"FusedConv: unknown activation {act!r} (known: {sorted(FUSED_ACTIVATIONS)})")
    if not y.is_contiguous():
        y = y.contiguous()
    return FUSED_ACTIVATIONS[act](y, attrs)


KERNELS["FusedConv"] = _fused_conv
SHAPE_RULES["FusedConv"] = SHAPE_RULES["Conv"]


def _channel_bias(graph: Graph, name: str, channels: int, rank: int) -> Any:
    """``name``'s value as a (channels,) tensor if it is a constant that broadcasts as one value per
    channel against a (N, channels, spatial...) tensor of the given rank without growing it; else
    None."""
    if not is_constant(graph, name):
        return None
    c = graph.initializers[name]
    shape = tuple(c.shape)
    if len(shape) > rank:
        return None
    full = (1,) * (rank - len(shape)) + shape
    if full[0] != 1 or full[1] != channels or any(d != 1 for d in full[2:]):
        return None
    return c.reshape(channels)


def _only_reader(value: str, uses: dict[str, int], consumers: dict[str, list[Any]]) -> Any:
    """The node that is the only reader of ``value`` (None if several, none, or a graph output)."""
    readers = consumers.get(value, [])
    return readers[0] if uses.get(value, 0) == 1 and len(readers) == 1 else None


def _activation(graph: Graph, node: Any) -> dict[str, Any] | None:
    """The FusedConv attributes for ``node`` as the activation (Relu, or Clip with constant scalar
    bounds), or None if it cannot be fused."""
    if node.op_type == "Relu":
        return {"activation": "Relu"}
    if node.op_type != "Clip":
        return None
    bounds: dict[str, Any] = {"activation": "Clip"}
    for k, what in ((1, "min"), (2, "max")):
        name = node.inputs[k] if len(node.inputs) > k else ""
        if name:
            if not is_constant(graph, name) or graph.initializers[name].numel() != 1:
                return None
            bounds["activation_" + what] = float(graph.initializers[name].reshape(-1).tolist()[0])
        elif what in node.attrs:
            bounds["activation_" + what] = float(node.attrs[what])
    return bounds


def fuse_conv(graph: Graph) -> Graph:
    """A new graph with Conv + per-channel constant Add + Relu fused (see the module docstring).
    ``graph`` itself is not modified.

    Conditions: the Conv's weight has a known shape; every fused intermediate has exactly one
    reader and is not a graph output; the added constant has the Conv output's dtype; an existing
    Conv bias must be a constant to be merged with the added one.
    """
    g = graph.copy()
    removed: list[Any] = []
    for conv in list(g.nodes):
        if conv.op_type != "Conv" or any(conv is r for r in removed):
            continue
        uses = use_counts(g)
        consumers = g.consumers()
        w_info = g.values.get(conv.inputs[1])
        out = conv.outputs[0]
        if w_info is None or w_info.shape is None:
            continue
        channels, rank = w_info.shape[0], len(w_info.shape)

        nxt = _only_reader(out, uses, consumers)
        if nxt is not None and nxt.op_type == "Add" and len(nxt.inputs) == 2 and out in nxt.inputs:
            other = nxt.inputs[1 - nxt.inputs.index(out)]
            c = _channel_bias(g, other, channels, rank)
            has_b = len(conv.inputs) > 2 and bool(conv.inputs[2])
            if (c is not None and nxt.inputs[0] != nxt.inputs[1] and c.dtype == w_info.dtype
                    and (not has_b or is_constant(g, conv.inputs[2]))):
                bias = c if not has_b else E.add(g.initializers[conv.inputs[2]], c)
                b_name = g.add_initializer(fresh_name(g, out + "_bias"), bias)
                conv.inputs = [conv.inputs[0], conv.inputs[1], b_name]
                conv.outputs = [nxt.outputs[0]]
                removed.append(nxt)
                out = conv.outputs[0]
                nxt = _only_reader(out, uses, consumers)
        act = _activation(g, nxt) if nxt is not None else None
        if act is not None:
            conv.op_type = "FusedConv"
            conv.attrs.update(act)
            conv.outputs = [nxt.outputs[0]]
            removed.append(nxt)
    g.nodes = [n for n in g.nodes if all(n is not r for r in removed)]
    read = {i for n in g.nodes for i in n.inputs} | set(g.outputs) | set(g.inputs)
    original = {i for n in graph.nodes for i in n.inputs}
    g.initializers = {k: v for k, v in g.initializers.items() if k in read or k not in original}
    return finish(g)
