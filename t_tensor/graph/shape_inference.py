"""Shape and dtype inference: one rule per op type, run over the nodes in topological order.

Elementwise ops broadcast as NumPy/ONNX do (bidirectionally); MatMul broadcasts its batch dims;
Gemm applies transA/transB; Reshape resolves -1 and 0; Conv and pooling follow the usual
arithmetic ``floor((in + pad_begin + pad_end - dilation*(k-1) - 1) / stride) + 1``. Small
constant computations (``Shape -> Gather -> Concat -> Reshape``) are evaluated on the way so a
Reshape whose target shape is computed in the graph still gets a static shape.

A mismatch raises ValueError naming the node, the op and the shapes involved:

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> g = Graph()
>>> _ = g.add_input("a", (2, 3), tt.float32)
>>> _ = g.add_input("b", (4,), tt.float32)
>>> _ = g.add_node("Add", ["a", "b"], ["c"], name="add0")
>>> infer_shapes(g)
Traceback (most recent call last):
  ...
ValueError: infer_shapes: node 'add0' (Add): cannot broadcast shapes (2, 3) and (4,)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as D
from .ir import Graph, Node, ValueInfo, dtype_attr

__all__ = ["infer_shapes", "SHAPE_RULES", "broadcast", "UnknownShape", "symbols_of", "is_static", "bind_symbols"]

Shape = tuple[int, ...]
Out = tuple[Shape, D.DType]


class UnknownShape(ValueError):
    """An input's shape or a needed constant is not known statically (not a mismatch)."""


class Ctx:
    """What a shape rule sees: the node, its input shapes/dtypes, constant input values."""

    def __init__(self, node: Node, shapes: list[Shape | None], dtypes: list[D.DType | None],
                 consts: list[Any], opset: int) -> None:
        self.node = node
        self.shapes = shapes
        self.dtypes = dtypes
        self.consts = consts
        self.opset = opset
        self.attrs = node.attrs

    def error(self, msg: str) -> ValueError:
        return ValueError(f"infer_shapes: node {self.node.name!r} ({self.node.op_type}): {msg}")

    def has(self, k: int) -> bool:
        return k < len(self.node.inputs) and bool(self.node.inputs[k])

    def shape(self, k: int) -> Shape:
        if not self.has(k):
            raise self.error(f"input {k} is missing")
        s = self.shapes[k]
        if s is None:
            raise UnknownShape(self.error(f"input {k} ({self.node.inputs[k]!r}) has an unknown shape"))
        return s

    def const_ints(self, k: int, what: str) -> list[int] | None:
        """Input k's value as a list of ints (None if the input is absent); it must be constant."""
        if not self.has(k):
            return None
        v = self.consts[k]
        if v is None:
            raise UnknownShape(self.error(f"{what} (input {self.node.inputs[k]!r}) must be a constant to "
                                          "infer the shape"))
        return [int(x) for x in v.reshape(-1).tolist()]

    def axes(self, k: int, attr: str = "axes") -> list[int] | None:
        """Axes given as an attribute (older opsets) or as input k (newer opsets)."""
        if attr in self.attrs:
            return [int(a) for a in self.attrs[attr]]
        return self.const_ints(k, attr)


SHAPE_RULES: dict[str, Callable[[Ctx], list[Out]]] = {}


def rule(*ops: str) -> Callable:
    def deco(fn: Callable[[Ctx], list[Out]]) -> Callable[[Ctx], list[Out]]:
        for op in ops:
            SHAPE_RULES[op] = fn
        return fn
    return deco


def broadcast(*shapes: Sequence[int]) -> Shape | None:
    """The NumPy/ONNX broadcast of ``shapes``, or None if they do not broadcast.

    >>> broadcast((2, 1, 3), (4, 1))
    (2, 4, 3)
    >>> broadcast((2, 3), (4,)) is None
    True
    """
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else (0 if any(len(s) - rank + k >= 0 and s[len(s) - rank + k] == 0
                                                      for s in shapes) else 1))
    return tuple(out)


def _bcast(ctx: Ctx, shapes: list[Shape]) -> Shape:
    out = broadcast(*shapes)
    if out is None:
        raise ctx.error("cannot broadcast shapes " + " and ".join(str(tuple(s)) for s in shapes))
    return out


def _axis(ctx: Ctx, axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise ctx.error(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


# -- elementwise --------------------------------------------------------------------------------
@rule("Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", "Sum", "Mean")
def _binary(ctx: Ctx) -> list[Out]:
    shapes = [ctx.shape(k) for k in range(len(ctx.node.inputs))]
    dts = {d for d in ctx.dtypes}
    if len(dts) > 1:
        raise ctx.error("inputs have different dtypes " + " and ".join(d.name for d in ctx.dtypes if d))
    return [(_bcast(ctx, shapes), ctx.dtypes[0])]


@rule("Pow", "PRelu")
def _pow(ctx: Ctx) -> list[Out]:
    return [(_bcast(ctx, [ctx.shape(0), ctx.shape(1)]), ctx.dtypes[0])]


@rule("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor")
def _compare(ctx: Ctx) -> list[Out]:
    return [(_bcast(ctx, [ctx.shape(0), ctx.shape(1)]), D.bool)]


@rule("Where")
def _where(ctx: Ctx) -> list[Out]:
    if ctx.dtypes[1] != ctx.dtypes[2]:
        raise ctx.error(f"X and Y have different dtypes {ctx.dtypes[1].name} and {ctx.dtypes[2].name}")
    return [(_bcast(ctx, [ctx.shape(0), ctx.shape(1), ctx.shape(2)]), ctx.dtypes[1])]


@rule("Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Erf", "Abs", "Reciprocal", "Floor", "Ceil",
      "Identity", "Gelu", "LeakyRelu", "Elu", "Softplus", "Sin", "Cos", "HardSigmoid", "HardSwish", "Sign",
      "Not", "Round", "Selu", "Celu", "Softsign", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
      "Acosh", "Atanh", "Mish", "ThresholdedRelu", "Shrink", "Clip")
def _unary(ctx: Ctx) -> list[Out]:
    return [(ctx.shape(0), ctx.dtypes[0])]


@rule("Softmax", "LogSoftmax")
def _softmax(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    _axis(ctx, int(ctx.attrs.get("axis", -1)), len(s))
    return [(s, ctx.dtypes[0])]


@rule("Dropout")
def _dropout(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    return [(s, ctx.dtypes[0]), (s, D.bool)][: len(ctx.node.outputs)]


@rule("Cast")
def _cast(ctx: Ctx) -> list[Out]:
    return [(ctx.shape(0), dtype_attr(ctx.attrs["to"]))]


# -- linear algebra -----------------------------------------------------------------------------
@rule("MatMul")
def _matmul(ctx: Ctx) -> list[Out]:
    a, b = ctx.shape(0), ctx.shape(1)
    if not a or not b:
        raise ctx.error(f"cannot multiply shapes {a} and {b} (a 0-d operand)")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ctx.error(f"cannot multiply shapes {a} and {b} ({a2[-1]} != {b2[-2]})")
    batch = broadcast(a2[:-2], b2[:-2])
    if batch is None:
        raise ctx.error(f"cannot broadcast the batch dims of shapes {a} and {b}")
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return [(out, ctx.dtypes[0])]


@rule("Gemm")
def _gemm(ctx: Ctx) -> list[Out]:
    a, b = ctx.shape(0), ctx.shape(1)
    if len(a) != 2 or len(b) != 2:
        raise ctx.error(f"A and B must be 2-d, got shapes {a} and {b}")
    if ctx.attrs.get("transA", 0):
        a = a[::-1]
    if ctx.attrs.get("transB", 0):
        b = b[::-1]
    if a[1] != b[0]:
        raise ctx.error(f"cannot multiply shapes {a} and {b} (after transA/transB; {a[1]} != {b[0]})")
    out = (a[0], b[1])
    if ctx.has(2) and broadcast(ctx.shape(2), out) != out:
        raise ctx.error(f"C of shape {ctx.shape(2)} does not broadcast to {out}")
    return [(out, ctx.dtypes[0])]


# -- data movement ------------------------------------------------------------------------------
@rule("Concat")
def _concat(ctx: Ctx) -> list[Out]:
    shapes = [ctx.shape(k) for k in range(len(ctx.node.inputs)) if ctx.has(k)]
    rank = len(shapes[0])
    axis = _axis(ctx, int(ctx.attrs["axis"]), rank)
    for s in shapes[1:]:
        if len(s) != rank or any(x != y for k, (x, y) in enumerate(zip(s, shapes[0], strict=False)) if k != axis):
            raise ctx.error(f"cannot concatenate shapes {shapes[0]} and {s} along axis {axis}")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return [(tuple(out), ctx.dtypes[0])]


@rule("Transpose")
def _transpose(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    perm = [int(p) for p in ctx.attrs.get("perm", range(len(s) - 1, -1, -1))]
    if sorted(perm) != list(range(len(s))):
        raise ctx.error(f"perm {tuple(perm)} is not a permutation of the axes of shape {s}")
    return [(tuple(s[p] for p in perm), ctx.dtypes[0])]


def reshape_target(ctx_or_name: Any, shape: Shape, target: Sequence[int], allowzero: bool = False) -> Shape:
    """Resolve an ONNX Reshape target (0 copies the input dim unless allowzero, -1 is inferred)."""
    err = ctx_or_name.error if isinstance(ctx_or_name, Ctx) else (lambda m: ValueError(f"{ctx_or_name}: {m}"))
    out = [shape[k] if (t == 0 and not allowzero) else t for k, t in enumerate(target)]
    if any(t == 0 and not allowzero and k >= len(shape) for k, t in enumerate(target)):
        raise err(f"cannot reshape {shape} to {tuple(target)} (0 beyond the input's rank)")
    n = math.prod(shape)
    if out.count(-1) > 1 or any(t < -1 for t in out):
        raise err(f"cannot reshape {shape} to {tuple(target)}")
    if -1 in out:
        rest = math.prod(t for t in out if t != -1)
        if rest == 0 or n % rest:
            raise err(f"cannot reshape {shape} to {tuple(target)}")
        out[out.index(-1)] = n // rest
    if math.prod(out) != n:
        raise err(f"cannot reshape {shape} ({n} elements) to {tuple(target)}")
    return tuple(out)


@rule("Reshape")
def _reshape(ctx: Ctx) -> list[Out]:
    target = ctx.const_ints(1, "shape") if ctx.has(1) else list(ctx.attrs["shape"])
    return [(reshape_target(ctx, ctx.shape(0), target, bool(ctx.attrs.get("allowzero", 0))), ctx.dtypes[0])]


@rule("Flatten")
def _flatten(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axis = int(ctx.attrs.get("axis", 1))
    if not -len(s) <= axis <= len(s):
        raise ctx.error(f"axis {axis} is out of range for rank {len(s)}")
    axis = axis + len(s) if axis < 0 else axis
    return [((math.prod(s[:axis]), math.prod(s[axis:])), ctx.dtypes[0])]


@rule("Squeeze")
def _squeeze(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axes = ctx.axes(1)
    if axes is None:
        keep = [d for d in s if d != 1]
    else:
        ax = {_axis(ctx, a, len(s)) for a in axes}
        for a in ax:
            if s[a] != 1:
                raise ctx.error(f"cannot squeeze axis {a} of shape {s} (size {s[a]} != 1)")
        keep = [d for k, d in enumerate(s) if k not in ax]
    return [(tuple(keep), ctx.dtypes[0])]


@rule("Unsqueeze")
def _unsqueeze(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axes = ctx.axes(1)
    if axes is None:
        raise ctx.error("axes are required")
    rank = len(s) + len(axes)
    ax = sorted(_axis(ctx, a, rank) for a in axes)
    if len(set(ax)) != len(ax):
        raise ctx.error(f"repeated axes {tuple(axes)}")
    out, it = [], iter(s)
    for k in range(rank):
        out.append(1 if k in ax else next(it))
    return [(tuple(out), ctx.dtypes[0])]


@rule("Gather")
def _gather(ctx: Ctx) -> list[Out]:
    s, i = ctx.shape(0), ctx.shape(1)
    if ctx.dtypes[1] not in (D.int32, D.int64):
        raise ctx.error(f"indices must be int32 or int64, got {ctx.dtypes[1].name}")
    axis = _axis(ctx, int(ctx.attrs.get("axis", 0)), len(s))
    return [(s[:axis] + i + s[axis + 1:], ctx.dtypes[0])]


@rule("Shape")
def _shape(ctx: Ctx) -> list[Out]:
    r = len(ctx.shape(0))
    start = int(ctx.attrs.get("start", 0))
    end = int(ctx.attrs.get("end", r))
    return [((len(range(r)[start:end]),), D.int64)]


@rule("Size")
def _size(ctx: Ctx) -> list[Out]:
    ctx.shape(0)
    return [((), D.int64)]


@rule("Constant")
def _constant(ctx: Ctx) -> list[Out]:
    v = ctx.attrs["value"]
    return [(tuple(v.shape), v.dtype)]


@rule("ConstantOfShape")
def _constant_of_shape(ctx: Ctx) -> list[Out]:
    shape = ctx.const_ints(0, "shape")
    v = ctx.attrs.get("value")
    return [(tuple(shape), D.float32 if v is None else v.dtype)]


@rule("Expand")
def _expand(ctx: Ctx) -> list[Out]:
    shape = ctx.const_ints(1, "shape")
    return [(_bcast(ctx, [ctx.shape(0), tuple(shape)]), ctx.dtypes[0])]


def slice_params(ctx_or_name: Any, shape: Shape, starts: list[int], ends: list[int], axes: list[int] | None,
                 steps: list[int] | None) -> list[tuple[int, int, int, int]]:
    """Normalize ONNX Slice parameters to (axis, start, stop, step) as Python's slice.indices gives."""
    err = ctx_or_name.error if isinstance(ctx_or_name, Ctx) else (lambda m: ValueError(f"{ctx_or_name}: {m}"))
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise err("starts, ends, axes and steps must have the same length")
    out = []
    for a, b, e, st in zip(axes, starts, ends, steps, strict=False):
        if not -len(shape) <= a < len(shape):
            raise err(f"axis {a} is out of range for rank {len(shape)}")
        if st == 0:
            raise err("a step of 0")
        a %= len(shape)
        start, stop, step = slice(b, e, st).indices(shape[a])
        out.append((a, start, stop, step))
    return out


def _slice_args(ctx: Ctx) -> tuple[list[int], list[int], list[int] | None, list[int] | None]:
    if "starts" in ctx.attrs:  # opset < 10
        return list(ctx.attrs["starts"]), list(ctx.attrs["ends"]), ctx.attrs.get("axes"), None
    return (ctx.const_ints(1, "starts"), ctx.const_ints(2, "ends"), ctx.const_ints(3, "axes"),
            ctx.const_ints(4, "steps"))


@rule("Slice")
def _slice(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    out = list(s)
    for a, start, stop, step in slice_params(ctx, s, *_slice_args(ctx)):
        out[a] = len(range(start, stop, step))
    return [(tuple(out), ctx.dtypes[0])]


def split_sizes(ctx: Ctx, dim: int) -> list[int]:
    """The output sizes of a Split (split as input or attribute, else equal parts)."""
    n = len(ctx.node.outputs)
    sizes = ctx.const_ints(1, "split") if ctx.has(1) else ctx.attrs.get("split")
    if sizes is None:
        n = int(ctx.attrs.get("num_outputs", n))
        chunk = -(-dim // n)
        sizes = [min(chunk, max(dim - k * chunk, 0)) for k in range(n)]
    if sum(sizes) != dim or len(sizes) != len(ctx.node.outputs):
        raise ctx.error(f"split sizes {tuple(sizes)} do not cover the axis of size {dim} in "
                        f"{len(ctx.node.outputs)} outputs")
    return [int(x) for x in sizes]


@rule("Split")
def _split(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axis = _axis(ctx, int(ctx.attrs.get("axis", 0)), len(s))
    outs = []
    for size in split_sizes(ctx, s[axis]):
        t = list(s)
        t[axis] = size
        outs.append((tuple(t), ctx.dtypes[0]))
    return outs


# -- reductions ---------------------------------------------------------------------------------
@rule("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL2",
      "ReduceL1", "ReduceLogSumExp", "ReduceLogSum")
def _reduce(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axes = ctx.axes(1)
    keep = bool(ctx.attrs.get("keepdims", 1))
    if not axes:
        if ctx.attrs.get("noop_with_empty_axes", 0):
            return [(s, ctx.dtypes[0])]
        ax = set(range(len(s)))
    else:
        ax = {_axis(ctx, a, len(s)) for a in axes}
    out = tuple(1 if k in ax else d for k, d in enumerate(s) if keep or k not in ax)
    return [(out, ctx.dtypes[0])]


@rule("ArgMax", "ArgMin")
def _argreduce(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axis = _axis(ctx, int(ctx.attrs.get("axis", 0)), len(s))
    keep = bool(ctx.attrs.get("keepdims", 1))
    return [(tuple(1 if k == axis else d for k, d in enumerate(s) if keep or k != axis), D.int64)]


# -- convolution, pooling, normalization --------------------------------------------------------
def conv_pads(ctx: Ctx, spatial: Shape, kernel: Sequence[int], strides: Sequence[int],
              dilations: Sequence[int]) -> list[int]:
    """The ONNX pads [b1.., e1..] of a Conv/Pool after resolving auto_pad."""
    n = len(spatial)
    auto = ctx.attrs.get("auto_pad", "NOTSET")
    if isinstance(auto, bytes):
        auto = auto.decode()
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * n)
        for k in range(n):
            out = -(-spatial[k] // strides[k])
            total = max(0, (out - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - spatial[k])
            small, big = total // 2, total - total // 2
            pads[k], pads[k + n] = (small, big) if auto == "SAME_UPPER" else (big, small)
        return pads
    if auto == "VALID":
        return [0] * (2 * n)
    if auto != "NOTSET":
        raise ctx.error(f"unknown auto_pad {auto!r}")
    pads = [int(p) for p in ctx.attrs.get("pads", [0] * (2 * n))]
    if len(pads) != 2 * n:
        raise ctx.error(f"pads {tuple(pads)} must have {2 * n} values")
    return pads


def window_geometry(ctx: Ctx, spatial: Shape, kernel: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """strides, dilations and pads of a Conv or pooling node over ``spatial`` dims."""
    n = len(spatial)
    strides = [int(x) for x in ctx.attrs.get("strides", [1] * n)]
    dilations = [int(x) for x in ctx.attrs.get("dilations", [1] * n)]
    if len(strides) != n or len(dilations) != n or len(kernel) != n:
        raise ctx.error(f"kernel_shape/strides/dilations must have {n} values for spatial shape {spatial}")
    return strides, dilations, conv_pads(ctx, spatial, kernel, strides, dilations)


def _window_out(ctx: Ctx, spatial: Shape, kernel: Sequence[int], ceil_mode: bool = False) -> Shape:
    strides, dilations, pads = window_geometry(ctx, spatial, kernel)
    n = len(spatial)
    out = []
    for k in range(n):
        span = spatial[k] + pads[k] + pads[k + n] - dilations[k] * (kernel[k] - 1) - 1
        if span < 0:
            raise ctx.error(f"kernel {tuple(kernel)} (dilation {tuple(dilations)}) is larger than the "
                            f"padded input {spatial}")
        o = (-(-span // strides[k]) if ceil_mode else span // strides[k]) + 1
        if ceil_mode and (o - 1) * strides[k] >= spatial[k] + pads[k]:
            o -= 1
        out.append(o)
    return tuple(out)


@rule("Conv")
def _conv(ctx: Ctx) -> list[Out]:
    x, w = ctx.shape(0), ctx.shape(1)
    group = int(ctx.attrs.get("group", 1))
    if len(x) < 3 or len(w) != len(x):
        raise ctx.error(f"input {x} and weight {w} must both be (N, C, spatial...) of the same rank")
    if w[0] % group:
        raise ctx.error(f"weight {w} has {w[0]} output channels, not a multiple of group={group}")
    if x[1] != w[1] * group:
        raise ctx.error(f"input {x} and weight {w} do not match with group={group} "
                        f"(channels {x[1]} != {w[1]} * {group})")
    kernel = [int(k) for k in ctx.attrs.get("kernel_shape", w[2:])]
    if tuple(kernel) != tuple(w[2:]):
        raise ctx.error(f"kernel_shape {tuple(kernel)} does not match weight {w}")
    if ctx.has(2) and ctx.shape(2) != (w[0],):
        raise ctx.error(f"bias of shape {ctx.shape(2)} does not match weight {w}")
    return [((x[0], w[0]) + _window_out(ctx, x[2:], kernel), ctx.dtypes[0])]


@rule("MaxPool", "AveragePool")
def _pool(ctx: Ctx) -> list[Out]:
    x = ctx.shape(0)
    if len(x) < 3:
        raise ctx.error(f"input {x} must be (N, C, spatial...)")
    kernel = [int(k) for k in ctx.attrs["kernel_shape"]]
    out = (x[0], x[1]) + _window_out(ctx, x[2:], kernel, bool(ctx.attrs.get("ceil_mode", 0)))
    return [(out, ctx.dtypes[0]), (out, D.int64)][: len(ctx.node.outputs)]


@rule("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx: Ctx) -> list[Out]:
    x = ctx.shape(0)
    if len(x) < 3:
        raise ctx.error(f"input {x} must be (N, C, spatial...)")
    return [(x[:2] + (1,) * (len(x) - 2), ctx.dtypes[0])]


@rule("BatchNormalization")
def _batch_norm(ctx: Ctx) -> list[Out]:
    x = ctx.shape(0)
    if len(x) < 2:
        raise ctx.error(f"input {x} must be (N, C, ...)")
    for k, what in ((1, "scale"), (2, "B"), (3, "mean"), (4, "var")):
        if ctx.shape(k) != (x[1],):
            raise ctx.error(f"{what} of shape {ctx.shape(k)} does not match input {x} (channels {x[1]})")
    return [(x, ctx.dtypes[0])]


@rule("LayerNormalization")
def _layer_norm(ctx: Ctx) -> list[Out]:
    x = ctx.shape(0)
    axis = _axis(ctx, int(ctx.attrs.get("axis", -1)), len(x))
    for k in (1, 2):
        if ctx.has(k) and broadcast(ctx.shape(k), x[axis:]) != x[axis:]:
            raise ctx.error(f"input {k} of shape {ctx.shape(k)} does not broadcast to {x[axis:]}")
    stat = x[:axis] + (1,) * (len(x) - axis)
    return [(x, ctx.dtypes[0]), (stat, D.float32), (stat, D.float32)][: len(ctx.node.outputs)]


# -- more ops (ONNX backend coverage) -------------------------------------------------------------
@rule("CastLike")
def _cast_like(ctx: Ctx) -> list[Out]:
    return [(ctx.shape(0), ctx.dtypes[1])]


@rule("IsInf", "IsNaN")
def _is(ctx: Ctx) -> list[Out]:
    return [(ctx.shape(0), D.bool)]


@rule("BitwiseAnd", "BitwiseOr", "BitwiseXor")
def _bitwise(ctx: Ctx) -> list[Out]:
    return _binary(ctx)


@rule("BitwiseNot", "Trilu", "CumSum", "Hardmax", "LpNormalization", "Swish", "ScatterElements")
def _same(ctx: Ctx) -> list[Out]:
    return [(ctx.shape(0), ctx.dtypes[0])]


@rule("GatherElements")
def _gather_elements(ctx: Ctx) -> list[Out]:
    s, i = ctx.shape(0), ctx.shape(1)
    if len(s) != len(i):
        raise ctx.error(f"data {s} and indices {i} must have the same rank")
    return [(i, ctx.dtypes[0])]


@rule("Range")
def _range(ctx: Ctx) -> list[Out]:
    vals = []
    for k, what in ((0, "start"), (1, "limit"), (2, "delta")):
        if ctx.consts[k] is None:
            raise UnknownShape(ctx.error(f"{what} must be a constant to infer the shape"))
        vals.append(ctx.consts[k].item())
    start, limit, delta = vals
    if delta == 0:
        raise ctx.error("delta is 0")
    return [((max(math.ceil((limit - start) / delta), 0),), ctx.dtypes[0])]


def pad_amounts(ctx_or_name: Any, rank: int, pads: list[int], axes: list[int] | None) -> list[tuple[int, int]]:
    """ONNX Pad's pads [b.., e..] over ``axes`` (default all) as (begin, end) per dim."""
    err = ctx_or_name.error if isinstance(ctx_or_name, Ctx) else (lambda m: ValueError(f"{ctx_or_name}: {m}"))
    axes = list(range(rank)) if axes is None else [a % rank if -rank <= a < rank else a for a in axes]
    if len(pads) != 2 * len(axes) or any(not 0 <= a < rank for a in axes):
        raise err(f"pads {tuple(pads)} do not match axes {tuple(axes)} of rank {rank}")
    out = [(0, 0)] * rank
    for k, a in enumerate(axes):
        out[a] = (pads[k], pads[k + len(axes)])
    return out


@rule("Pad")
def _pad(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    pads = list(ctx.attrs["pads"]) if "pads" in ctx.attrs else ctx.const_ints(1, "pads")
    amounts = pad_amounts(ctx, len(s), pads, ctx.const_ints(3, "axes"))
    out = tuple(d + b + e for d, (b, e) in zip(s, amounts, strict=True))
    if any(d < 0 for d in out):
        raise ctx.error(f"pads {tuple(pads)} crop shape {s} below zero")
    return [(out, ctx.dtypes[0])]


@rule("Tile")
def _tile(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    reps = ctx.const_ints(1, "repeats")
    if len(reps) != len(s):
        raise ctx.error(f"repeats {tuple(reps)} must have one value per dim of {s}")
    return [(tuple(d * r for d, r in zip(s, reps, strict=True)), ctx.dtypes[0])]


@rule("TopK")
def _topk(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    axis = _axis(ctx, int(ctx.attrs.get("axis", -1)), len(s))
    k = ctx.const_ints(1, "K")[0]
    if not 0 <= k <= s[axis]:
        raise ctx.error(f"K={k} is out of range for axis {axis} of shape {s}")
    out = s[:axis] + (k,) + s[axis + 1:]
    return [(out, ctx.dtypes[0]), (out, D.int64)]


@rule("OneHot")
def _one_hot(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    depth = int(ctx.consts[1].item()) if ctx.consts[1] is not None else None
    if depth is None:
        raise UnknownShape(ctx.error("depth must be a constant to infer the shape"))
    axis = int(ctx.attrs.get("axis", -1))
    axis = _axis(ctx, axis, len(s) + 1)
    return [(s[:axis] + (depth,) + s[axis:], ctx.dtypes[2])]


@rule("DepthToSpace", "SpaceToDepth")
def _depth_space(ctx: Ctx) -> list[Out]:
    s = ctx.shape(0)
    bs = int(ctx.attrs["blocksize"])
    if len(s) != 4:
        raise ctx.error(f"input {s} must be (N, C, H, W)")
    n, c, h, w = s
    if ctx.node.op_type == "DepthToSpace":
        if c % (bs * bs):
            raise ctx.error(f"channels {c} are not a multiple of blocksize^2 = {bs * bs}")
        return [((n, c // (bs * bs), h * bs, w * bs), ctx.dtypes[0])]
    if h % bs or w % bs:
        raise ctx.error(f"height {h} and width {w} must be multiples of blocksize {bs}")
    return [((n, c * bs * bs, h // bs, w // bs), ctx.dtypes[0])]


def einsum_output(ctx_or_name: Any, equation: str, shapes: list[Shape]) -> Shape:
    """The output shape of an einsum (explicit ``->`` or implicit: sorted letters used once)."""
    err = ctx_or_name.error if isinstance(ctx_or_name, Ctx) else (lambda m: ValueError(f"{ctx_or_name}: {m}"))
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise err(f"equation {equation!r} has {len(terms)} operands, got {len(shapes)}")
    dims: dict[str, int] = {}
    ell: list[Shape] = []
    for term, s in zip(terms, shapes, strict=True):
        letters = term.replace("...", "")
        n_ell = len(s) - len(letters)
        if ("..." in term and n_ell < 0) or ("..." not in term and n_ell != 0):
            raise err(f"operand {term!r} does not match shape {s}")
        pre = term.split("...")[0] if "..." in term else term
        ell_shape = s[len(pre):len(pre) + n_ell] if "..." in term else ()
        ell.append(ell_shape)
        rest = s[:len(pre)] + s[len(pre) + n_ell:] if "..." in term else s
        for ch, d in zip(letters, rest, strict=True):
            if dims.get(ch, d) != d and 1 not in (d, dims[ch]):
                raise err(f"letter {ch!r} has sizes {dims[ch]} and {d}")
            dims[ch] = max(dims.get(ch, d), d) if 1 in (d, dims.get(ch, d)) else d
    ell_out = broadcast(*ell) if ell else ()
    if ell_out is None:
        raise err("the ... dims do not broadcast")
    if not _:
        counts = {ch: lhs.count(ch) for ch in dims}
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(ch for ch, c in counts.items() if c == 1))
    pre, has_ell, post = rhs.partition("...")
    return tuple([dims[ch] for ch in pre] + (list(ell_out) if has_ell else []) + [dims[ch] for ch in post])


@rule("Einsum")
def _einsum(ctx: Ctx) -> list[Out]:
    shapes = [ctx.shape(k) for k in range(len(ctx.node.inputs))]
    return [(einsum_output(ctx, str(ctx.attrs["equation"]), shapes), ctx.dtypes[0])]


# -- driver -------------------------------------------------------------------------------------
CONST_LIMIT = 4096  # constant propagation only through values this small (shape arithmetic)


def infer_shapes(graph: Graph, strict: bool = True, _probing: bool = False) -> dict[str, ValueInfo]:
    """Infer the shape and dtype of every value of ``graph`` (written into ``graph.values``).

    Graph inputs must have their shape and dtype declared. Returns ``graph.values``. With
    ``strict=False``, a shape that depends on data (a Reshape whose target is a graph input, ...)
    is left unknown (None) instead of raising; mismatches still raise.

    >>> import t_tensor as tt
    >>> from t_tensor.graph import Graph
    >>> g = Graph()
    >>> _ = g.add_input("x", (8, 3, 32, 32), tt.float32)
    >>> _ = g.add_initializer("w", tt.zeros(16, 3, 5, 5))
    >>> y = g.add_node("Conv", ["x", "w"], ["y"], {"strides": (2, 2), "pads": (2, 2, 2, 2)})
    >>> infer_shapes(g)["y"].shape
    (8, 16, 16, 16)
    """
    from .kernels import KERNELS, run_node

    consts: dict[str, Any] = dict(graph.initializers)
    values = graph.values
    for name in graph.inputs:
        v = values.get(name)
        if (v is None or v.shape is None or v.dtype is None) and name not in graph.initializers:
            raise ValueError(f"infer_shapes: graph input {name!r} needs a declared shape and dtype")
    if symbols_of(graph):
        return _infer_symbolic(graph, strict)
    for name, t in graph.initializers.items():
        values[name] = ValueInfo(name, tuple(t.shape), t.dtype)
    for node in graph.topo_sort():
        shapes: list[Shape | None] = []
        dts: list[D.DType | None] = []
        for i in node.inputs:
            v = values.get(i) if i else None
            shapes.append(None if v is None or v.shape is None else tuple(v.shape))
            dts.append(None if v is None else v.dtype)
        fn = SHAPE_RULES.get(node.op_type)
        if fn is None:
            raise NotImplementedError(f"infer_shapes: node {node.name!r}: no shape rule for op {node.op_type!r}")
        if not strict and any(i and d is None for i, d in zip(node.inputs, dts, strict=True)):
            # an input left unknown before (non-strict): so is everything computed from it
            for o in node.outputs:
                if o:
                    values[o] = ValueInfo(o)
            continue
        ctx = Ctx(node, shapes, dts, [consts.get(i) if i else None for i in node.inputs], graph.opset)
        try:
            outs = fn(ctx)
        except ValueError as e:
            # unknown (data-dependent) in non-strict mode; a mismatch under symbolic probes that
            # may be an artifact of the probes (two symbols that must be equal): unknown too
            if strict or not (isinstance(e, UnknownShape) or _probing):
                raise
            for o in node.outputs:
                if o:
                    values[o] = ValueInfo(o)
            continue
        for o, (shape, dt) in zip(node.outputs, outs, strict=False):
            if o:
                values[o] = ValueInfo(o, tuple(int(d) for d in shape), dt)
        # constant propagation (shape arithmetic): Shape of a known shape, or any op on small constants
        if node.op_type == "Shape":
            from ..creation import tensor

            r = shapes[0]
            consts[node.outputs[0]] = tensor(list(r[int(node.attrs.get("start", 0)):node.attrs.get("end")]),
                                             dtype=D.int64)
        elif node.op_type == "Constant":
            consts[node.outputs[0]] = node.attrs["value"]
        elif (node.op_type in KERNELS and node.inputs
              and all(not i or (i in consts and consts[i].numel() <= CONST_LIMIT) for i in node.inputs)
              and all(math.prod(s) <= CONST_LIMIT for s, _ in outs)):
            results = run_node(node, [consts[i] if i else None for i in node.inputs])
            for o, r in zip(node.outputs, results, strict=False):
                if o:
                    consts[o] = r
    return values


# -- symbolic dims ----------------------------------------------------------------------------------
# A graph input may declare a dim as a string (ONNX's dim_param: "batch"). Shapes are then inferred
# by probing: the concrete inference runs with each symbol set to a few different primes, and each
# dim of each value is fitted, across the probes, as c * s1**e1 * s2**e2 ... (e in 0..3): an int
# when it never changes, else an expression such as "batch" or "64*batch*seq". A dim that fits no
# such product (a convolution's output over a symbolic size, ...) leaves the value's shape unknown.
# Symbols are probed as independent sizes: when the graph needs two of them equal (two inputs
# added, with differently named batch dims), the probes mismatch there; with strict=False the
# values from that node on are left unknown (they get their sizes when the graph runs).
_PROBE_BASE = (101, 103, 107, 109, 113, 127, 131, 137, 139)
_PROBE_MOVED = (149, 151, 157, 163, 167, 173, 179, 181, 191)


def symbols_of(graph: Graph) -> list[str]:
    """The symbolic dim names of ``graph``'s inputs, in order of appearance."""
    found: list[str] = []
    for name in graph.inputs:
        info = graph.values.get(name)
        if info is not None and info.shape is not None:
            found.extend(d for d in info.shape if isinstance(d, str) and d not in found)
    return found


def is_static(shape: Any) -> bool:
    """Whether ``shape`` is known and all its dims are ints."""
    return shape is not None and all(isinstance(d, int) for d in shape)


def bind_symbols(declared: Sequence[Any], shape: Sequence[int], bindings: dict[str, int]) -> bool:
    """Match a concrete ``shape`` against a ``declared`` one whose dims may be symbols (strings),
    recording each symbol's value in ``bindings``; False on a mismatch (rank, an int dim, or a
    symbol bound to another value)."""
    if len(declared) != len(shape):
        return False
    for d, n in zip(declared, shape, strict=True):
        if isinstance(d, str):
            if bindings.setdefault(d, n) != n:
                return False
        elif d != n:
            return False
    return True


def _fit_dim(dims: list[int], symbols: list[str]) -> int | str | None:
    """The dim seen in each probe (base first, then one per symbol moved) as an int or a product
    expression of the symbols; None when it is no such product."""
    base = dims[0]
    if all(d == base for d in dims):
        return base
    exps = []
    for j, moved in enumerate(dims[1:]):
        p, q = _PROBE_BASE[j], _PROBE_MOVED[j]
        e = next((e for e in range(4) if base * q ** e == moved * p ** e), None)
        if e is None:
            return None
        exps.append(e)
    denominator = math.prod(_PROBE_BASE[j] ** e for j, e in enumerate(exps))
    if base % denominator:
        return None
    c = base // denominator
    factors = ([str(c)] if c != 1 else []) + [
        "*".join([sym] * e) for sym, e in zip(symbols, exps, strict=True) if e]
    return "*".join(factors) if factors else c


def _infer_symbolic(graph: Graph, strict: bool) -> dict[str, ValueInfo]:
    symbols = symbols_of(graph)
    if len(symbols) > len(_PROBE_BASE):
        raise ValueError(f"infer_shapes: at most {len(_PROBE_BASE)} symbolic dims, got {symbols}")
    probes = [dict(zip(symbols, _PROBE_BASE, strict=False))]
    for j, sym in enumerate(symbols):
        moved = dict(probes[0])
        moved[sym] = _PROBE_MOVED[j]
        probes.append(moved)
    results = []
    for values in probes:
        g = graph.copy()
        for name in graph.inputs:
            info = g.values.get(name)
            if info is not None and info.shape is not None:
                info.shape = tuple(values[d] if isinstance(d, str) else d for d in info.shape)
        try:
            results.append(infer_shapes(g, strict, _probing=True))
        except ValueError as e:
            raise ValueError(f"{e} (with the symbolic dims {symbols} set to {list(values.values())})") from e
    out = graph.values
    for name, info in results[0].items():
        if name in graph.inputs:
            continue
        shapes = [r[name].shape if name in r else None for r in results]
        shape = None
        if all(sh is not None for sh in shapes) and len({len(sh) for sh in shapes}) == 1:
            dims = [_fit_dim([sh[k] for sh in shapes], symbols) for k in range(len(shapes[0]))]
            shape = None if any(d is None for d in dims) else tuple(dims)
        out[name] = ValueInfo(name, shape, info.dtype)
    return out
