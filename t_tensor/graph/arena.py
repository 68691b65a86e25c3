"""The arena executor: plan every intermediate tensor of a graph into one block of memory, allocate
that block once, and run the nodes writing their results straight into their planned slots.

Planning (:func:`plan_graph`, called by ``Graph.plan_memory``):

* **Planned** values: every node output with a known shape and dtype (from ``infer_shapes``),
  including the graph outputs, which live until the end of the run (the executor returns copies
  of them, since the next call reuses the arena).
* **Bound** values: graph inputs and initializers have memory of their own and are not planned.
* **Aliases**: the outputs of view ops (``Reshape``, ``Flatten``, ``Squeeze``, ``Unsqueeze``,
  ``Identity``, ``Transpose``, ``Expand``, ``Slice``, ``Split``, ``Dropout``'s output) are not
  planned either: they are views of their first input, so that input's slot is kept alive until
  the last reader of any of its views.
* **In place**: the output of an elementwise node may take over the slot of an input that dies at
  that node, when that input is read directly (not through a view), has the output's shape and
  dtype (so it is not broadcast) and is planned.

Running (:class:`ArenaExecutor`): the graph is first **prepared** into a flat list of steps.
A node whose inputs have fixed addresses (initializers, arena slots, views of them) and whose op
has a builder in :data:`~t_tensor.graph.steps.STEP_BUILDERS` (elementwise ops, fused
elementwise, MatMul, Gemm, Conv, FusedConv, BatchNormalization, LayerNormalization, pooling,
softmax, reductions, casts, and the traced primitives of those) becomes the C calls that compute
it into its slot, every argument computed once. Nodes of constants only run once while
preparing; views of fixed values are made once. Other nodes (those reading a graph input, whose
address changes per call) run their builder, else their :data:`OUT_KERNELS` kernel, at each
call; a kernel with neither computes a new tensor that is copied into the slot. ``stats`` counts
each kind, so the gap is visible.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph, ArenaExecutor
>>> g = Graph()
>>> _ = g.add_input("x", (2, 3), tt.float32)
>>> _ = g.add_initializer("w", tt.ones(3, 4))
>>> _ = g.add_node("MatMul", ["x", "w"], ["a"])
>>> _ = g.add_node("Relu", ["a"], ["b"])
>>> _ = g.add_node("Reshape", ["b", "shape"], ["c"])
>>> _ = g.add_initializer("shape", tt.tensor([8]))
>>> _ = g.add_node("Exp", ["c"], ["y"])
>>> g.outputs = ["y"]
>>> ex = ArenaExecutor(g.infer_shapes())
>>> print(g.memory_plan.summary())
MemoryPlan(greedy_by_size): 3 tensors, 5 steps, arena 128 B, naive 192 B, lower bound 128 B, in place saved 64 B
>>> g.memory_plan.aliases
{'c': 'b'}
>>> ex(tt.ones(2, 3)).tolist() == g.run(tt.ones(2, 3)).tolist()
True
>>> ex.stats
{'direct': 3, 'copied': 0, 'copied_bytes': 0, 'aliases': 1, 'unplanned': 0, 'constants': 0}
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import dtypes as D
from .. import elementwise as E
from .. import strides as S
from .. import views as V
from .._capi import check, lib
from ..autograd.graph import _version as _storage_version
from ..creation import empty
from ..nn.functional import _conv_geometry
from .executor import Profiler, given_inputs
from .ir import Graph, Node
from .kernels import run_node
from .memory_plan import PLANNERS, MemoryPlan, liveness
from .shape_inference import is_static, symbols_of
from .steps import STEP_BUILDERS, Builder, build_calls, run_calls

__all__ = ["ALIAS_OPS", "INPLACE_OPS", "OUT_KERNELS", "ArenaExecutor", "GraphMemoryPlan", "graph_signature",
           "plan_graph"]

# op type -> the output indices that are views of input 0 (None: all outputs)
ALIAS_OPS: dict[str, tuple[int, ...] | None] = {
    op: None for op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Transpose", "Expand", "Slice",
                        "Split")
}
ALIAS_OPS["Dropout"] = (0,)
ALIAS_OPS["tt.View"] = None  # a traced view: shape, strides and offset over its input's storage

# traced primitives whose result has a layout later views depend on: never copied into a slot
_UNPLANNED_OPS = frozenset({"tt.Restride"})

_ELEMENTWISE = (
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Relu", "Sigmoid", "Tanh", "Exp", "Log",
    "Sqrt", "Neg", "Erf", "Abs", "Reciprocal", "Floor", "Ceil", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
    "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Round", "Not", "Gelu", "LeakyRelu", "Elu", "Softplus",
    "HardSigmoid", "HardSwish", "Clip", "PRelu", "Cast", "Selu", "Celu", "Softsign", "Mish", "Swish",
)
_ELEMENTWISE_PRIMITIVES = (
    "Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Where", "Relu", "Sigmoid", "Tanh", "Exp", "Log",
    "Sqrt", "Rsqrt", "Neg", "Erf", "Abs", "Reciprocal", "Square", "Gelu", "GeluTanh", "Silu", "LeakyRelu", "Elu",
    "Softplus", "Clamp", "ClampMin", "ClampMax", "Sin", "Cos", "Exp2", "Expm1", "Log1p",
)
INPLACE_OPS: frozenset[str] = frozenset(_ELEMENTWISE) | frozenset(f"tt.{p}" for p in _ELEMENTWISE_PRIMITIVES)
"""Op types whose output element k depends only on element k of each input: their output may be
computed in place over an input of the same shape and dtype that dies at the node."""


@dataclass
class GraphMemoryPlan(MemoryPlan):
    """A :class:`~t_tensor.graph.memory_plan.MemoryPlan` of a graph, plus what the executor needs:
    ``order`` (the nodes in execution order), ``aliases`` {view value: the planned or bound value
    it is a view of} and ``unplanned`` (node outputs of unknown shape: allocated at run time)."""

    order: list[Node] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    unplanned: list[str] = field(default_factory=list)


def _nbytes(shape: tuple[int, ...], dtype: D.DType) -> int:
    return math.prod(shape) * dtype.itemsize


def plan_graph(graph: Graph, planner: str = "greedy_by_size", inplace: bool = True,
               alignment: int = 64) -> GraphMemoryPlan:
    """Plan the memory of ``graph`` (see the module docstring); runs ``infer_shapes`` first when a
    node output has no shape yet. ``planner`` is a name from ``memory_plan.PLANNERS``."""
    if planner not in PLANNERS:
        raise ValueError(f"plan_memory: unknown planner {planner!r}; choose one of {sorted(PLANNERS)}")
    if any(o and (graph.values.get(o) is None or graph.values[o].shape is None or graph.values[o].dtype is None)
           for node in graph.nodes for o in node.outputs):
        graph.infer_shapes(strict=False)
    order = graph.topo_sort()
    aliases: dict[str, str] = {}
    unplanned: list[str] = []
    sizes: dict[str, int] = {}
    steps = []
    for node in order:
        root = aliases.get(node.inputs[0], node.inputs[0]) if node.inputs else ""
        which = ALIAS_OPS.get(node.op_type, ())
        outs = []
        for k, o in enumerate(node.outputs):
            if not o:
                continue
            info = graph.values.get(o)
            if root and (which is None or k in which):
                aliases[o] = root
            elif not is_static(None if info is None else info.shape) or info.dtype is None \
                    or node.op_type in _UNPLANNED_OPS:  # unknown or symbolic: allocated when it runs
                unplanned.append(o)
            else:
                sizes[o] = _nbytes(tuple(info.shape), info.dtype)
                outs.append(o)
        # a reader of a view reads its root: that keeps the root's slot alive
        ins = [aliases.get(i, i) for i in node.inputs if i]
        ins = [i for i in ins if i in sizes]
        steps.append((node.name, ins, outs))
    outputs = [aliases.get(o, o) for o in graph.outputs]
    tensors = liveness(steps, sizes, outputs=[o for o in outputs if o in sizes], bound=())
    if inplace:
        tensors = _inplace_hints(graph, order, tensors, aliases)
    plan = PLANNERS[planner](tensors, alignment, inplace)
    return GraphMemoryPlan(**{f: getattr(plan, f) for f in MemoryPlan.__dataclass_fields__},
                           order=order, aliases=aliases, unplanned=unplanned)


def _inplace_hints(graph: Graph, order: list[Node], tensors: list[Any], aliases: dict[str, str]) -> list[Any]:
    """Set ``inplace_of`` on the outputs of elementwise nodes (see the module docstring)."""
    by_name = {t.name: t for t in tensors}
    outputs = set(graph.outputs)
    result = []
    taken: set[str] = set()
    for t in tensors:
        node = order[t.first]
        if node.op_type in INPLACE_OPS:
            out_info = graph.values[t.name]
            for i in node.inputs:
                src = by_name.get(i)  # read directly: an alias name is not in by_name
                info = graph.values.get(i)
                if (src is not None and i not in taken and i not in outputs and src.last == t.first
                        and info.shape == out_info.shape and info.dtype == out_info.dtype):
                    t = replace(t, inplace_of=i)
                    taken.add(i)
                    break
        result.append(t)
    return result


# -- kernels that write into a given output -----------------------------------------------------
# Each takes (inputs, attrs, out) and returns True when it wrote ``out``, False when it cannot
# handle these inputs (the executor then runs the registry kernel and copies).
def _binary_out(fn: Any, float_only: bool = False) -> Any:
    def k(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
        if float_only and not xs[0].dtype.is_floating_point:
            return False
        fn(xs[0], xs[1], out=out)
        return True
    return k


def _unary_out(fn: Any) -> Any:
    def k(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
        fn(xs[0], out=out)
        return True
    return k


def _matmul_into(a: Any, b: Any, out: Any) -> bool:
    """``out = a @ b`` by one C call writing into ``out``: both operands at least 2-D, of one float
    dtype, ``out`` contiguous of the broadcast shape; anything else returns False."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype or not a.dtype.is_floating_point or out.dtype != a.dtype:
        return False
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if b.shape[-2] != k:
        return False
    batch = S.broadcast_shapes(a.shape[:-2], b.shape[:-2], fn="MatMul")
    if tuple(out.shape) != batch + (m, n) or not out.is_contiguous():
        return False
    a_strides = S.expand_strides(a.shape[:-2], a.stride()[:-2], batch, fn="MatMul") + a.stride()[-2:]
    b_strides = S.expand_strides(b.shape[:-2], b.stride()[:-2], batch, fn="MatMul") + b.stride()[-2:]
    status = lib.tt_matmul(a.dtype.code, len(batch), batch, m, n, k, a.data_ptr(), a_strides, b.data_ptr(),
                           b_strides, out.data_ptr(), S.contiguous_strides_of_valid_shape(batch + (m, n)), 0)
    check(status, "MatMul")
    return True


def _matmul_out(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
    return _matmul_into(xs[0], xs[1], out)


def _gemm_out(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
    a, b = xs[0], xs[1]
    if float(attrs.get("alpha", 1.0)) != 1.0:
        return False
    if attrs.get("transA", 0):
        a = V.transpose(a, 0, 1)
    if attrs.get("transB", 0):
        b = V.transpose(b, 0, 1)
    if not _matmul_into(a, b, out):
        return False
    beta = float(attrs.get("beta", 1.0))
    if len(xs) > 2 and xs[2] is not None and beta != 0.0:
        E.add(out, xs[2] if beta == 1.0 else E.mul(xs[2], beta), out=out)
    return True


def _conv_into(x: Any, w: Any, b: Any, nd: int, stride: Any, padding: Any, dilation: Any, groups: Any,
               out: Any) -> bool:
    """A 1-d or 2-d convolution (symmetric padding, as ``nn.functional.conv2d``) written by one C
    call into ``out``; False when ``out`` is not the contiguous result of these arguments."""
    if not out.is_contiguous() or out.dtype != x.dtype or isinstance(padding, str):
        return False
    g = _conv_geometry("Conv", nd, x, w, b, stride, padding, dilation, groups)
    if tuple(g.result_shape) != tuple(out.shape):
        return False
    status = lib.tt_conv2d(
        x.dtype.code, g.x_shape, x.data_ptr(), g.x_strides, g.w_shape, w.data_ptr(), g.w_strides,
        0 if b is None else b.data_ptr(), 0 if b is None else b.stride()[0],
        g.stride, g.before, g.dilation, g.groups, g.out_spatial, out.data_ptr(),
    )
    check(status, "Conv")
    return True


def _conv_out(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
    """ONNX Conv, 2-d with symmetric padding, straight into ``out``."""
    x, w = xs[0], xs[1]
    b = xs[2] if len(xs) > 2 else None
    if x.ndim != 4 or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET"):
        return False
    pads = [int(p) for p in attrs.get("pads", (0, 0, 0, 0))]
    if pads[:2] != pads[2:]:
        return False
    return _conv_into(x, w, b, 2, tuple(int(s) for s in attrs.get("strides", (1, 1))), tuple(pads[:2]),
                      tuple(int(d) for d in attrs.get("dilations", (1, 1))), int(attrs.get("group", 1)), out)


def _traced_conv_out(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
    """A traced ``tt.Convolution`` (recorded as input, weight, bias, name, nd, stride, padding,
    dilation, groups) straight into ``out``."""
    from .trace import _fill

    args = _fill(attrs["args"], xs)
    if attrs.get("kwargs") or len(args) != 9:
        return False
    x, w, b, _, nd, stride, padding, dilation, groups = args
    return _conv_into(x, w, b, nd, stride, padding, dilation, groups, out)


def _clip_out(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
    lo = xs[1].item() if len(xs) > 1 and xs[1] is not None else attrs.get("min")
    hi = xs[2].item() if len(xs) > 2 and xs[2] is not None else attrs.get("max")
    if lo is None and hi is None:
        return False
    E.clamp(xs[0], lo, hi, out=out)
    return True


OUT_KERNELS: dict[str, Any] = {"Clip": _clip_out,
    "Add": _binary_out(E.add), "Sub": _binary_out(E.sub), "Mul": _binary_out(E.mul),
    "Div": _binary_out(E.div, float_only=True), "MatMul": _matmul_out, "Gemm": _gemm_out, "Conv": _conv_out,
}
OUT_KERNELS.update({op: _unary_out(fn) for op, fn in (
    ("Relu", E.relu), ("Sigmoid", E.sigmoid), ("Tanh", E.tanh), ("Exp", E.exp), ("Log", E.log), ("Sqrt", E.sqrt),
    ("Neg", E.neg), ("Erf", E.erf), ("Abs", E.abs), ("Reciprocal", E.reciprocal), ("Floor", E.floor),
    ("Ceil", E.ceil), ("Sin", E.sin), ("Cos", E.cos))})


def _traced_out(fn: Any, nargs: int) -> Any:
    """A traced ``tt.<Primitive>`` node whose recorded arguments are exactly ``nargs`` operands
    (tensors or numbers), run as ``fn(*operands, out=out)``."""
    def k(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
        from .trace import _fill

        args = _fill(attrs["args"], xs)
        if attrs.get("kwargs") or len(args) != nargs:
            return False
        if fn is _matmul_into:
            return _matmul_into(args[0], args[1], out)
        fn(*args, out=out)
        return True
    return k


OUT_KERNELS.update({"tt.Add": _traced_out(E.add, 2), "tt.Sub": _traced_out(E.sub, 2),
                    "tt.Mul": _traced_out(E.mul, 2), "tt.Div": _traced_out(E.div, 2),
                    "tt.Matmul": _traced_out(_matmul_into, 3), "tt.Convolution": _traced_conv_out})


def _traced_unary_out(op: str) -> Any:
    """A traced unary primitive (recorded as input, params, name): ``elementwise.unary`` into ``out``."""
    def k(xs: list[Any], attrs: dict[str, Any], out: Any) -> bool:
        from .trace import _fill

        args = _fill(attrs["args"], xs)
        if attrs.get("kwargs") or len(args) != 3:
            return False
        E.unary(op, args[0], out, args[1], args[2])
        return True
    return k


def _traced_unaries() -> dict[str, Any]:
    from ..autograd.functions.elementwise import UNARY

    return {f"tt.{cls.__name__}": _traced_unary_out(op) for op, cls in UNARY.items()}


OUT_KERNELS.update(_traced_unaries())
"""op type -> kernel writing into a given output: ``fn(inputs, attrs, out) -> bool``."""


_RANDOM_WORDS = ("Random", "Dropout", "Bernoulli", "Multinomial")


def _deterministic(op_type: str) -> bool:
    return not any(w in op_type for w in _RANDOM_WORDS)


class _Program:
    """A graph prepared for one set of input shapes: its plan, the arena and the slots over it,
    and the flat list of steps ``(fn, args, node_index)``. ``vals`` holds every value by integer
    index (0: an omitted input, always None); the fixed ones (initializers, slots, constants and
    views of fixed values) are filled once, the others at run time."""

    def __init__(self, executor: ArenaExecutor, graph: Graph) -> None:
        from ..autograd.grad_mode import no_grad

        self.graph = graph
        self.plan: GraphMemoryPlan = graph.plan_memory(executor.planner, executor.inplace)
        self.plan.check()
        self.arena = empty(max(self.plan.arena_bytes, 1), dtype=D.uint8)
        cls = type(self.arena)
        self.slots: dict[str, Any] = {}
        for t in self.plan.tensors:
            info = graph.values[t.name]
            shape, dtype = tuple(info.shape), info.dtype
            offset = self.plan.offsets[t.name]
            self.slots[t.name] = cls._make(self.arena._storage.share(), shape,
                                           S.contiguous_strides_of_valid_shape(shape), offset // dtype.itemsize, dtype)
        self.index: dict[str, int] = {"": 0}
        self.vals: list[Any] = [None]
        self.builder = Builder()
        fixed: set[int] = {0}
        constant: set[int] = {0}
        self.constant = constant
        for name, t in graph.initializers.items():
            self.vals[self._idx(name)] = t
            if name not in graph.inputs:  # an input's default value can be overridden: not fixed
                fixed.add(self.index[name])
                constant.add(self.index[name])
        for name, slot in self.slots.items():
            self.vals[self._idx(name)] = slot
            fixed.add(self.index[name])
        self.inputs = [(name, self._idx(name)) for name in graph.inputs]
        self.stats = {"direct": 0, "copied": 0, "copied_bytes": 0, "aliases": 0, "unplanned": 0, "constants": 0}
        self.per_node: list[list[tuple[Any, tuple, int]]] = []
        self.tunable: list[int] = []
        order = self.plan.order
        with no_grad():
            for k, node in enumerate(order):
                ins = [self._idx(i) if i else 0 for i in node.inputs]
                outs = [self._idx(o) if o else 0 for o in node.outputs]
                steps = self._prepare_node(executor, k, node, ins, outs, fixed, constant)
                self.per_node.append(steps)
        self.output_idx = [self.index[o] for o in graph.outputs]
        # the values set at run time (inputs, their views, unplanned results): dropped after a
        # run, so that the caller's tensors are not kept alive by the executor
        self.transient = [k for k in range(1, len(self.vals)) if k not in fixed]
        self.flatten(executor)
        # what was computed here from the initializers' values (constants, BatchNorm's scale and
        # shift...) is stale once one of them is written in place (an optimizer step on a traced
        # model's parameters): their storages' version counters tell
        self.storages = tuple(t._storage._ptr for name, t in graph.initializers.items() if name not in graph.inputs)
        self.versions = self.current_versions()

    def current_versions(self) -> tuple[int, ...]:
        return tuple(map(_storage_version, self.storages))

    def _idx(self, name: str) -> int:
        k = self.index.get(name)
        if k is None:
            k = self.index[name] = len(self.vals)
            self.vals.append(None)
        return k

    def _prepare_node(self, executor: ArenaExecutor, k: int, node: Node, ins: list[int], outs: list[int],
                      fixed: set[int], constant: set[int]) -> list[tuple[Any, tuple, int]]:
        vals = self.vals
        all_fixed = all(i in fixed for i in ins)
        named = [o for o in outs if o]
        aliases = self.plan.aliases
        # a view of fixed values with constant parameters (a Reshape's shape...): made once
        if all_fixed and ins and all(i in constant for i in ins[1:]) and named and all(
                o in aliases for o in node.outputs if o):
            results = run_node(node, [vals[i] for i in ins])
            if all(r.is_shared_with(vals[ins[0]]) for r, o in zip(results, node.outputs, strict=False) if o):
                for r, o in zip(results, outs, strict=False):
                    if o:
                        vals[o] = r
                        fixed.add(o)
                        if ins[0] in constant:
                            constant.add(o)
                self.stats["aliases"] += len(named)
                return []
        # the shape of a value of known shape (this program's shapes are static): a constant
        if node.op_type in ("Shape", "Size") and len(outs) == 1 and outs[0] and is_static(
                getattr(self.graph.values.get(node.inputs[0]), "shape", None)):
            shape = self.graph.values[node.inputs[0]].shape
            results = run_node(node, [_ShapeOnly(tuple(shape))])
            vals[outs[0]] = results[0]
            fixed.add(outs[0])
            constant.add(outs[0])
            self.stats["constants"] += 1
            return []
        # a node of constants only (an ONNX Constant, a shape computed from constants...): run once
        if all(i in constant for i in ins) and _deterministic(node.op_type):
            results = run_node(node, [vals[i] for i in ins])
            for r, o in zip(results, outs, strict=False):
                if o:
                    vals[o] = r
                    fixed.add(o)
                    constant.add(o)
            self.stats["constants"] += 1
            return []
        build = STEP_BUILDERS.get(node.op_type)
        slot_outs = [vals[o] if o and node.outputs[j] in self.slots else None for j, o in enumerate(outs)]
        if all_fixed and build is not None and all(
                (not name) or name in self.slots for name in node.outputs):
            b = Builder()
            calls = build_calls(b, node, [vals[i] for i in ins], slot_outs)
            if calls is not None and _values_from_constants(b, [vals[i] for i in ins if i in constant]):
                self.builder.kept.append(b)
                self.stats["direct"] += 1
                if executor.tune and not any(o in self.plan.inplace for o in node.outputs if o) \
                        and node.name not in executor.choices:
                    self.tunable.append(k)
                return [(fn, args, k) for fn, args in calls]
        dynamic = _DynamicStep(executor, self, node, ins, outs, slot_outs)
        if (executor.tune and (build is not None or node.op_type in OUT_KERNELS) and node.name not in executor.choices
                and all((not name) or name in self.slots for name in node.outputs)
                and not any(o in self.plan.inplace for o in node.outputs if o)):
            self.tunable.append(k)
        return [(dynamic, (), k)]

    def flatten(self, executor: ArenaExecutor) -> None:
        """The flat step list, with the tuned choices applied (a node whose faster variant is the
        registry kernel + copy runs as a dynamic step doing that)."""
        steps: list[tuple[Any, tuple, int]] = []
        self.direct_count_adjust = 0
        for k, node_steps in enumerate(self.per_node):
            node = self.plan.order[k]
            if k in self.tunable:
                steps.append((_TuneStep(executor, self, k), (), k))
            elif executor.choices.get(node.name) == "copy" and node_steps:
                steps.append((_DynamicStep.copying(executor, self, k), (), k))
                if not isinstance(node_steps[0][0], _DynamicStep):
                    self.direct_count_adjust += 1
            else:
                steps.extend(node_steps)
        self.steps = steps

    def node_inputs(self, k: int) -> list[Any]:
        node = self.plan.order[k]
        return [self.vals[self.index[i]] if i else None for i in node.inputs]


def _values_from_constants(b: Builder, constants: list[Any]) -> bool:
    """Whether every input whose values went into ``b``'s calls is one of ``constants`` (so the
    calls stay right for later runs)."""
    return all(any(r is c for c in constants) for r in b.values_read)


class _ShapeOnly:
    """Stands for a tensor of a known shape where only its shape is read (Shape, Size kernels)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.ndim = len(shape)

    def numel(self) -> int:
        return math.prod(self.shape)


class _TuneStep:
    """The first run of a tunable node: time its prepared C calls and its registry kernel + copy
    (best of 3 each, on this run's inputs), remember the faster in the executor's ``choices``."""

    def __init__(self, executor: ArenaExecutor, program: _Program, k: int) -> None:
        self.executor, self.program, self.k = executor, program, k

    def __call__(self) -> None:
        executor, prog = self.executor, self.program
        node = prog.plan.order[self.k]
        first = prog.per_node[self.k][0][0]
        copy_step = _DynamicStep.copying(executor, prog, self.k)
        stats = dict(executor.stats)
        if isinstance(first, _DynamicStep):  # the direct variant is the run-time builder / OUT_KERNELS
            def direct() -> bool:
                return first.direct(prog.node_inputs(self.k))
        else:
            calls = [(fn, args) for fn, args, _ in prog.per_node[self.k]]

            def direct() -> bool:
                run_calls(calls, node.op_type)
                return True
        times = {}
        for variant in ("copy", "direct"):  # direct last: its result stays in the slot
            best = math.inf
            for _ in range(3):
                t0 = time.perf_counter()
                if variant == "direct":
                    if not direct():  # the kernel declines these inputs: one variant only
                        copy_step()
                        executor.stats = stats
                        executor.stats["copied"] += 1
                        executor.stats["copied_bytes"] += sum(s.nbytes for s in copy_step.slot_outs if s is not None)
                        return None
                else:
                    copy_step()
                best = min(best, time.perf_counter() - t0)
            times[variant] = best
        executor.stats = stats  # the timing runs do not count
        if isinstance(first, _DynamicStep):
            executor.stats["direct"] += 1
        executor.timings[node.name] = {"direct": times["direct"], "copy": times["copy"]}
        executor.choices[node.name] = min(times, key=times.get)
        executor._retune = True


class _DynamicStep:
    """A node that cannot be prepared into fixed C calls (an input that moves between runs, no
    builder for its op type, a layout a builder declines): run each time by its builder on the
    tensors of this run, else its ``OUT_KERNELS`` kernel into its slot, else its registry kernel
    with the results copied into their slots."""

    __slots__ = ("executor", "program", "node", "ins", "outs", "slot_outs", "force_copy", "cached", "cached_key",
                 "cached_builder", "view_recipe", "view_key", "is_view")

    def __init__(self, executor: ArenaExecutor, program: _Program, node: Node, ins: list[int], outs: list[int],
                 slot_outs: list[Any], force_copy: bool = False) -> None:
        self.executor, self.program, self.node = executor, program, node
        self.ins, self.outs, self.slot_outs, self.force_copy = ins, outs, slot_outs, force_copy
        self.cached: Any = None
        self.cached_key: Any = None
        self.cached_builder: Any = None
        # a view node (its outputs all aliases) whose parameters are constants: its outputs'
        # layouts follow from its input's layout alone, so they are remembered per input layout
        named = [o for o in node.outputs if o]
        self.is_view = bool(named) and all(o in program.plan.aliases for o in named) and ins and all(
            i in program.constant for i in ins[1:])
        self.view_recipe: Any = None
        self.view_key: Any = None

    @classmethod
    def copying(cls, executor: ArenaExecutor, program: _Program, k: int) -> _DynamicStep:
        node = program.plan.order[k]
        ins = [program.index[i] if i else 0 for i in node.inputs]
        outs = [program.index[o] if o else 0 for o in node.outputs]
        slot_outs = [program.slots.get(o) if o else None for o in node.outputs]
        return cls(executor, program, node, ins, outs, slot_outs, force_copy=True)

    def __call__(self) -> None:
        vals = self.program.vals
        if self.is_view:
            x = vals[self.ins[0]]
            if self.view_recipe is not None and (x._shape, x._strides, x._dtype) == self.view_key:
                for k, (shape, strides, delta) in self.view_recipe:
                    vals[k] = x._view(shape, strides, x._offset + delta)
                self.executor.stats["aliases"] += len(self.view_recipe)
                return None
        args = [vals[i] for i in self.ins]
        stats = self.executor.stats
        node = self.node
        if not self.force_copy:
            if self.direct(args):
                stats["direct"] += 1
                return None
        results = run_node(node, args)
        if self.is_view:
            x = args[0]
            pairs = [(k, r) for k, r in zip(self.outs, results, strict=False) if k]
            if all(r.is_shared_with(x) and type(r) is type(x) for _, r in pairs) and not x.is_shared_with(
                    self.program.arena):
                self.view_key = (x._shape, x._strides, x._dtype)
                self.view_recipe = [(k, (r._shape, r._strides, r._offset - x._offset)) for k, r in pairs]
        slots = self.program.slots
        arena = self.program.arena
        for o, k, r in zip(node.outputs, self.outs, results, strict=False):
            if not o:
                continue
            slot = slots.get(o)
            if slot is None:
                if o in self.program.plan.aliases:
                    root = self.program.plan.aliases[o]
                    if r.is_shared_with(arena) and root not in slots:
                        stats["unplanned"] += 1  # a view of arena memory its root does not keep: materialize
                        r = r.clone()
                    else:
                        stats["aliases"] += 1
                else:
                    stats["unplanned"] += 1
                vals[k] = r
                continue
            if r.is_shared_with(arena):
                if r.data_ptr() == slot.data_ptr() and r.stride() == slot.stride():
                    continue  # already there
                if o in self.program.plan.inplace:
                    r = r.clone()  # a view over the slot being overwritten
            slot.copy_(r)
            stats["copied"] += 1
            stats["copied_bytes"] += slot.nbytes
        return None

    def direct(self, args: list[Any]) -> bool:
        node = self.node
        if all(s is not None or not o for s, o in zip(self.slot_outs, node.outputs, strict=False)):
            build = STEP_BUILDERS.get(node.op_type)
            if build is not None:
                # the calls built for the last run serve again when every input is at the same
                # address with the same layout (a caller passing the same tensor, or a new one
                # where the old one was), unless the values of a moving input went into them
                key = tuple(None if a is None else (a.data_ptr(), a._shape, a._strides, a._dtype) for a in args)
                if key == self.cached_key:
                    run_calls(self.cached, node.op_type)
                    return True
                b = Builder()
                calls = build_calls(b, node, args, self.slot_outs)
                if calls is not None:
                    constant = self.program.constant
                    if _values_from_constants(b, [a for a, i in zip(args, self.ins, strict=True) if i in constant]):
                        self.cached, self.cached_key, self.cached_builder = calls, key, b
                    run_calls(calls, node.op_type)
                    return True
            fast = OUT_KERNELS.get(node.op_type)
            if fast is not None and len(node.outputs) == 1 and fast(args, node.attrs, self.slot_outs[0]):
                return True
        return False


def graph_signature(graph: Graph) -> tuple:
    """What the prepared steps of ``graph`` depend on: its nodes (op types, value names, attribute
    dicts and the objects in them), inputs, outputs, initializer tensors and declared input
    shapes. Compared on every run: a graph changed since it was prepared is prepared again."""
    values = graph.values
    return (tuple(graph.inputs), tuple(graph.outputs),
            tuple([(n.op_type, tuple(n.inputs), tuple(n.outputs), id(n.attrs), tuple(map(id, n.attrs.values())))
                   for n in graph.nodes]),
            tuple([(k, id(v)) for k, v in graph.initializers.items()]),
            tuple([(values[i].shape, values[i].dtype) if i in values else None for i in graph.inputs]))


class ArenaExecutor:
    """Run ``graph`` with all its planned intermediates in one arena allocated here, once.

    ``graph.plan_memory(planner, inplace)`` is called (and ``graph.memory_plan`` set). Then the
    graph is **prepared** once: each node becomes the C calls that compute it straight into its
    slot (:mod:`t_tensor.graph.steps`), with every address, shape and stride fixed, when its
    inputs have fixed addresses (initializers, slots, views of them); nodes of constants only are
    run once here; views of fixed values are made once here. The rest (nodes reading a graph
    input, ops without a prepared kernel) run at each call. The prepared program is rebuilt when
    the graph changes (see :func:`graph_signature`).

    Calling the executor runs the graph (inputs as for ``Graph.run``) and returns copies of the
    outputs (a tensor, or a tuple for several outputs). ``stats`` describes the last run:
    ``direct`` (nodes whose kernel wrote into the arena), ``copied`` / ``copied_bytes`` (results
    computed apart and copied into their slot), ``aliases`` (views bound as they are),
    ``unplanned`` (outputs of unknown shape, or views that had to be materialized, allocated
    outside the arena) and ``constants`` (nodes of constants only, computed when preparing).

    With ``tune=True`` the first run times, for every prepared node that is not computed in
    place, its prepared C calls and its registry kernel followed by a copy (best of 3 each, in
    ``timings``), and remembers the faster variant per node in ``choices``; later runs use it.
    ``run(inputs, profiler=Profiler())`` records time per op type (no timing otherwise).

    A graph whose inputs have symbolic dims (``("batch", 3, 32, 32)``) is planned and prepared
    per concrete set of input shapes, on the first call with those shapes, and the programs are
    cached (``programs``; at most ``max_programs``, the oldest dropped first, each with its own
    arena); ``plan``, ``arena``, ``slots``, ``choices`` and ``timings`` are those of the last
    call's shapes.
    """

    def __init__(self, graph: Graph, planner: str = "greedy_by_size", inplace: bool = True,
                 tune: bool = False, max_programs: int = 16) -> None:
        self.graph = graph
        self.max_programs = max(1, int(max_programs))
        self.planner = planner
        self.inplace = inplace
        self.tune = tune
        self.choices: dict[str, str] = {}
        self.timings: dict[str, dict[str, float]] = {}
        self.stats: dict[str, int] = {}
        self._signature: tuple | None = None
        self._retune = False
        self._prepare()

    def _prepare(self) -> None:
        self._signature = graph_signature(self.graph)
        self._programs: dict[tuple, _Program] = {}
        self._tuned: dict[tuple, tuple[dict[str, str], dict[str, dict[str, float]]]] = {}
        self.symbolic = bool(symbols_of(self.graph))
        self.program: _Program | None = None if self.symbolic else _Program(self, self.graph)

    def _program_for(self, given: dict[str, Any]) -> _Program:
        prog = self._shaped_program(given)
        if prog.current_versions() != prog.versions:  # an initializer was written: prepare again
            prog = _Program(self, prog.graph)
            if self.symbolic:
                self._programs[next(k for k, p in self._programs.items() if p is self.program)] = prog
            self.program = prog
        return prog

    def _shaped_program(self, given: dict[str, Any]) -> _Program:
        """The prepared program for these inputs: the one program of a graph of static shapes;
        for a graph with symbolic dims, one per distinct set of input shapes (made on first use:
        a copy of the graph with those shapes, its shapes inferred and its memory planned, with
        its own tuning choices), cached."""
        if not self.symbolic:
            return self.program  # type: ignore[return-value]
        key = tuple(given[n]._shape if n in given else None for n in self.graph.inputs)
        choices, timings = self._tuned.setdefault(key, ({}, {}))
        self.choices, self.timings = choices, timings
        prog = self._programs.get(key)
        if prog is None:
            concrete = self.graph.copy()
            for name in self.graph.inputs:
                if name in given:
                    concrete.values[name].shape = tuple(given[name]._shape)
            concrete.infer_shapes(strict=False)
            if len(self._programs) >= self.max_programs:  # the least recently prepared goes
                oldest = next(iter(self._programs))
                del self._programs[oldest]
                self._tuned.pop(oldest, None)
            prog = self._programs[key] = _Program(self, concrete)
        self.program = prog
        return prog

    # the (last used) prepared program's plan, arena and slots; None before the first run of a
    # graph with symbolic dims
    @property
    def plan(self) -> GraphMemoryPlan | None:
        return None if self.program is None else self.program.plan

    @property
    def arena(self) -> Any:
        return None if self.program is None else self.program.arena

    @property
    def slots(self) -> dict[str, Any]:
        return {} if self.program is None else self.program.slots

    @property
    def programs(self) -> dict[tuple, Any]:
        """The programs prepared so far, by input shapes (graphs with symbolic dims)."""
        return dict(self._programs) if self.symbolic else {(): self.program}

    def run(self, inputs: Sequence[Any] | Mapping[str, Any], profiler: Profiler | None = None) -> list[Any]:
        """Run on ``inputs``; returns the list of outputs (copies, not arena memory). A
        :class:`~t_tensor.graph.executor.Profiler` records the time per op type."""
        from ..autograd.grad_mode import no_grad

        if graph_signature(self.graph) != self._signature:
            self._prepare()
        given = given_inputs(self.graph, inputs)
        prog = self._program_for(given)
        vals = prog.vals
        for name, k in prog.inputs:
            if name in given:
                vals[k] = given[name]
        stats = dict(prog.stats)
        stats["direct"] -= prog.direct_count_adjust
        self.stats = stats
        steps = prog.steps
        with no_grad():
            if profiler is None:
                for fn, args, k in steps:
                    if status := fn(*args):
                        check(status, prog.plan.order[k].op_type)
            else:
                spent = [0.0] * len(prog.plan.order)
                for fn, args, k in steps:
                    t0 = time.perf_counter()
                    if status := fn(*args):
                        check(status, prog.plan.order[k].op_type)
                    spent[k] += time.perf_counter() - t0
                for node, secs in zip(prog.plan.order, spent, strict=True):
                    profiler.add(node.op_type, secs)
        if self._retune:  # the first run timed the variants: the steps follow the choices from now on
            self._retune = False
            for k, node in enumerate(prog.plan.order):
                if prog.per_node[k] and not isinstance(prog.per_node[k][0][0], _DynamicStep):
                    self.choices.setdefault(node.name, "direct")
            prog.tunable = []
            prog.flatten(self)
        outs = [vals[k].clone() for k in prog.output_idx]
        for k in prog.transient:  # do not keep the caller's tensors alive
            vals[k] = None
        return outs

    def __call__(self, *inputs: Any) -> Any:
        outs = self.run(list(inputs))
        return outs[0] if len(outs) == 1 else tuple(outs)
