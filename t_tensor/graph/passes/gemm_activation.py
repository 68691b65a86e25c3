"""MatMul / Gemm + bias + activation fusion.

- ``Add(MatMul(A, W), bias)`` with ``A`` and ``W`` 2-d and ``bias`` one value per column
  (shape ``(N,)``, ``(1, N)``), a scalar, or of the product's shape, becomes ``Gemm(A, W, bias)``
  (ONNX Gemm is 2-d: N-d products stay MatMul, their bias joins an elementwise fusion). A Gemm
  without a bias input takes the Add's the same way (``beta`` 1).
- ``Relu(Gemm(...))`` becomes one ``FusedGemm`` node (the Gemm's attributes plus
  ``activation="Relu"``); ``Relu(MatMul(...))`` a ``FusedMatMul``. ``Clip`` with constant scalar
  bounds fuses as ``activation="Clip"`` with ``activation_min`` / ``activation_max``, as in
  :mod:`~t_tensor.graph.passes.conv_fuse`. Their kernels compute the product (and bias), then
  apply the activation in place on the output: no intermediate tensor.

Each fused intermediate must have exactly one reader and not be a graph output, and all the
values involved one dtype and known shapes.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import fuse_gemm_activation
>>> g = Graph()
>>> _ = g.add_input("x", (2, 3), tt.float32)
>>> _ = g.add_initializer("w", tt.ones(3, 4))
>>> _ = g.add_initializer("b", tt.tensor([-4.0, -3.0, 0.0, 1.0]))
>>> _ = g.add_node("MatMul", ["x", "w"], ["mm"])
>>> _ = g.add_node("Add", ["mm", "b"], ["a"])
>>> _ = g.add_node("Relu", ["a"], ["y"])
>>> g.outputs = ["y"]
>>> f = fuse_gemm_activation(g)
>>> print(f)
graph graph(%x: (2, 3) float32) -> (%y)
  %w = initializer  # (3, 4) float32
  %b = initializer  # (4,) float32
  %y = FusedGemm[activation='Relu'](%x, %w, %b)  # (2, 4) float32
>>> f.run(tt.ones(2, 3)).tolist()
[[0.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0, 4.0]]
"""

from __future__ import annotations

from typing import Any

from ... import dtypes as D
from ..ir import Graph, Node
from ..kernels import KERNELS
from ..shape_inference import SHAPE_RULES
from ._common import finish, use_counts, with_shapes
from .conv_fuse import FUSED_ACTIVATIONS, _activation, _only_reader

__all__ = ["fuse_gemm_activation"]


def _fused(base: str) -> Any:
    def run(xs: list[Any], attrs: dict[str, Any]) -> Any:
        """Kernel of FusedGemm / FusedMatMul: the product, then the activation in place."""
        y = KERNELS[base](xs, {k: v for k, v in attrs.items() if not k.startswith("activation")})
        act = attrs.get("activation")
        if act not in FUSED_ACTIVATIONS:
            raise NotImplementedError(f"Fused{base}: unknown activation {act!r} (known: {sorted(FUSED_ACTIVATIONS)})")
        if not y.is_contiguous():
            y = y.contiguous()
        return FUSED_ACTIVATIONS[act](y, attrs)
    return run


def _fused_shape(base: str) -> Any:
    def rule(ctx: Any) -> Any:
        return SHAPE_RULES[base](ctx)
    return rule


for _base in ("Gemm", "MatMul"):
    KERNELS[f"Fused{_base}"] = _fused(_base)
    SHAPE_RULES[f"Fused{_base}"] = _fused_shape(_base)


def _shape(g: Graph, name: str) -> tuple[int, ...] | None:
    info = g.values.get(name)
    if info is None or info.shape is None or not all(isinstance(d, int) for d in info.shape):
        return None
    return tuple(info.shape)


def _dtype(g: Graph, name: str) -> D.DType | None:
    info = g.values.get(name)
    return None if info is None else info.dtype


def _row_bias(shape: tuple[int, ...], n: int) -> bool:
    """A bias shape holding one value per column: (N,), (1, N), (1, 1, N)..."""
    return len(shape) >= 1 and shape[-1] == n and all(d == 1 for d in shape[:-1])


def _add_bias(g: Graph, mm: Node, add: Node) -> bool:
    """Rewrite ``mm`` and ``add`` (the only reader of mm's output) into a Gemm with the Add's other
    input as its bias; False when the shapes do not allow it."""
    out = mm.outputs[0]
    if len(add.inputs) != 2 or add.inputs[0] == add.inputs[1]:
        return False
    bias = add.inputs[1 - add.inputs.index(out)]
    a_shape, w_shape, b_shape, o_shape = (_shape(g, n) for n in (mm.inputs[0], mm.inputs[1], bias, add.outputs[0]))
    if None in (a_shape, w_shape, b_shape, o_shape) or len({_dtype(g, n) for n in (out, bias, add.outputs[0])}) != 1:
        return False
    if o_shape != _shape(g, out):  # the Add must not broadcast the product
        return False
    if mm.op_type == "Gemm":
        if len(mm.inputs) > 2 and mm.inputs[2]:
            return False
        rows, cols = o_shape
        if not (_row_bias(b_shape, cols) or b_shape == (rows, cols) or b_shape in ((), (1,))):
            return False
        mm.inputs = [mm.inputs[0], mm.inputs[1], bias]
        mm.attrs["beta"] = 1.0
        mm.outputs = [add.outputs[0]]
        return True
    if len(w_shape) != 2 or len(a_shape) < 2:
        return False
    n = w_shape[1]
    if len(a_shape) == 2:
        if not (_row_bias(b_shape, n) or b_shape == o_shape or b_shape in ((), (1,))):
            return False
        mm.op_type, mm.inputs, mm.outputs, mm.attrs = "Gemm", [mm.inputs[0], mm.inputs[1], bias], [add.outputs[0]], {}
        return True
    return False  # N-d products stay MatMul (ONNX Gemm is 2-d): the bias joins an elementwise fusion


def fuse_gemm_activation(graph: Graph) -> Graph:
    """A new graph with MatMul + bias turned into Gemm and Gemm / MatMul + Relu (or constant Clip)
    fused (see the module docstring). ``graph`` itself is not modified."""
    g = with_shapes(graph.copy())
    removed: list[Node] = []
    for mm in list(g.nodes):
        if mm.op_type not in ("MatMul", "Gemm") or any(mm is r for r in removed) or len(mm.outputs) != 1:
            continue
        nxt = _only_reader(mm.outputs[0], use_counts(g), g.consumers())
        if nxt is not None and nxt.op_type == "Add" and _add_bias(g, mm, nxt):
            removed.append(nxt)
            g.nodes = [n for n in g.nodes if n is not nxt]
            nxt = _only_reader(mm.outputs[0], use_counts(g), g.consumers())
        act = _activation(g, nxt) if nxt is not None else None
        if act is not None and _dtype(g, mm.outputs[0]) in (D.float32, D.float64):
            mm.op_type = "Fused" + mm.op_type
            mm.attrs.update(act)
            mm.outputs = [nxt.outputs[0]]
            removed.append(nxt)
            g.nodes = [n for n in g.nodes if n is not nxt]
    return finish(g)
