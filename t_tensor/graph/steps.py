"""Prepared C steps: a node turned, once, into the C calls that compute it straight into its output.

The arena executor (:mod:`t_tensor.graph.arena`) knows, before the first run, where every planned
value lives (its slot in the arena) and where every initializer lives. For a node whose inputs
and output all have fixed addresses, everything the C kernel needs -- data addresses, shapes and
strides as ``int64_t`` arrays, dtype and op codes, parsed attributes -- can be computed once. The
node then runs as one (or a few) calls ``fn(*args)`` returning a ``tt_status``: no attribute
parsing, no dtype promotion, no allocation, no Python object per call.

``STEP_BUILDERS[op_type](b, node, xs, outs)`` makes that list of ``(c_function, args)`` for the
tensors ``xs`` (None for an omitted input) and the output tensors ``outs`` (None for an output
that has no slot), or returns None when it cannot handle them (another dtype, a layout it does
not cover, an output overlapping an input other than exactly...). ``b`` is a :class:`Builder`
that keeps alive the tensors made while building (precomputed per-channel scales, scalar
operands...) and records the inputs whose values went into the calls: the executor prepares
such calls once only when those inputs are constants. The same builders also run at run time on
nodes whose inputs move between runs (the graph inputs and their views).

>>> import t_tensor as tt
>>> from t_tensor.graph.ir import Node
>>> b = Builder()
>>> x, out = tt.tensor([[-1.0, 2.0]]), tt.empty(1, 2)
>>> calls = STEP_BUILDERS["Relu"](b, Node("Relu", ["x"], ["y"]), [x], [out])
>>> [fn(*args) for fn, args in calls], out.tolist()
([0], [[0.0, 2.0]])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import dtypes as D
from .. import elementwise as E
from .. import strides as S
from .._capi import ffi, lib
from .ir import Node

__all__ = ["Builder", "STEP_BUILDERS", "Calls", "build_calls", "run_calls"]

Calls = list[tuple[Any, tuple]]
StepBuilder = Callable[["Builder", Node, list[Any], list[Any]], "Calls | None"]
STEP_BUILDERS: dict[str, StepBuilder] = {}
_FLOATS = (D.float32, D.float64)


class Builder:
    """What building steps needs besides the tensors: a place to keep alive the tensors made for
    the calls (their addresses are baked into the arguments), and a record of the inputs whose
    *values* (not only addresses) went into the calls (Clip bounds, BatchNorm statistics...):
    calls built once stay valid for new values at the same addresses only for the other inputs."""

    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.values_read: list[Any] = []

    def keep(self, t: Any) -> Any:
        self.kept.append(t)
        return t

    def read(self, t: Any) -> Any:
        """Note that ``t``'s values are used by the calls being built; returns ``t``."""
        if t is not None:
            self.values_read.append(t)
        return t


def build_calls(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    """``STEP_BUILDERS[node.op_type]`` on these tensors, or None when there is no builder or it
    declines -- or raises: inputs a builder did not expect are left to the registry kernel, which
    reports them in its own words."""
    build = STEP_BUILDERS.get(node.op_type)
    if build is None:
        return None
    try:
        return build(b, node, xs, outs)
    except (ValueError, TypeError, IndexError, RuntimeError, KeyError):
        return None


def run_calls(calls: Calls, what: str) -> None:
    """Run prepared calls now, raising the status of the first that fails."""
    from .._capi import check

    for fn, args in calls:
        status = fn(*args)
        if status:
            check(status, what)


def _i64(values: Any) -> Any:
    return ffi.new("int64_t[]", [int(v) for v in values] or [0])


def _writes_safely(x: Any, out: Any) -> bool:
    """``out`` may be written while ``x`` is read: no overlap, or exactly the same elements."""
    if x.data_ptr() == out.data_ptr() and x._shape == out._shape and x._strides == out._strides:
        return True
    return not out._overlaps(x)


def _operand(x: Any, shape: tuple[int, ...], out: Any) -> tuple[int, Any] | None:
    """(address, strides broadcast to ``shape``) of ``x`` as an input of a kernel writing ``out``,
    None when ``out`` would overwrite elements of ``x`` still to be read."""
    if not _writes_safely(x, out):
        return None
    strides = x._strides if x._shape == shape else S.expand_strides(x._shape, x._strides, shape)
    return x.data_ptr(), _i64(strides)


def _is_tensor(x: Any) -> bool:
    return x is not None and hasattr(x, "_strides")


def _single(node: Node, outs: list[Any]) -> Any:
    """The one output slot of a one-output node (None otherwise)."""
    return outs[0] if len(outs) == 1 and outs[0] is not None and outs[0].is_contiguous() else None


def _scalar(b: Builder, value: Any, dtype: D.DType) -> Any:
    """A Python number as a 0-d tensor of ``dtype`` (kept alive by ``b``)."""
    from ..creation import tensor

    return b.keep(tensor(value, dtype=dtype))


# -- elementwise ----------------------------------------------------------------------------------
def binary_calls(b: Builder, code: int, x: Any, y: Any, out: Any) -> Calls | None:
    """``out = op(x, y)`` (tt_binary, broadcasting) when x and y are tensors of out's dtype."""
    if not (_is_tensor(x) and _is_tensor(y)) or x._dtype is not out._dtype or y._dtype is not out._dtype:
        return None
    shape = out._shape
    a, c = _operand(x, shape, out), _operand(y, shape, out)
    if a is None or c is None:
        return None
    return [(lib.tt_binary, (code, len(shape), _i64(shape), a[0], a[1], c[0], c[1], out.data_ptr(),
                             _i64(out._strides), out._dtype.code))]


def unary_calls(code: int, x: Any, out: Any, params: tuple[float, float] | None = None) -> Calls | None:
    """``out = op(x)`` (tt_unary, or tt_unary_param with ``params``) for a float x of out's dtype."""
    if not _is_tensor(x) or x._dtype is not out._dtype or x._dtype not in _FLOATS or x._shape != out._shape:
        return None
    a = _operand(x, out._shape, out)
    if a is None:
        return None
    shape = _i64(out._shape)
    if params is None:
        return [(lib.tt_unary, (code, len(out._shape), shape, a[0], a[1], out.data_ptr(), _i64(out._strides),
                                out._dtype.code))]
    return [(lib.tt_unary_param, (code, len(out._shape), shape, a[0], a[1], out.data_ptr(), _i64(out._strides),
                                  out._dtype.code, float(params[0]), float(params[1])))]


def clamp_calls(b: Builder, x: Any, low: Any, high: Any, out: Any) -> Calls | None:
    """``out = min(max(x, low), high)`` (tt_ternary CLAMP) for float x; a bound None is infinite."""
    if not _is_tensor(x) or x._dtype is not out._dtype or x._dtype not in _FLOATS or x._shape != out._shape:
        return None
    lo = _scalar(b, -math.inf if low is None else float(low), out._dtype)
    hi = _scalar(b, math.inf if high is None else float(high), out._dtype)
    a = _operand(x, out._shape, out)
    if a is None:
        return None
    zeros = _i64([0] * len(out._shape))
    return [(lib.tt_ternary, (lib.TT_CLAMP, len(out._shape), _i64(out._shape), a[0], a[1], lo.data_ptr(), zeros,
                              hi.data_ptr(), zeros, out.data_ptr(), _i64(out._strides), out._dtype.code))]


def _onnx_binary(code: int, floats_only: bool = False) -> StepBuilder:
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        if out is None or len(xs) != 2 or out._dtype is D.bool or (floats_only and out._dtype not in _FLOATS):
            return None
        return binary_calls(b, code, xs[0], xs[1], out)
    return build


for _op, _code, _floats in (("Add", lib.TT_ADD, False), ("Sub", lib.TT_SUB, False), ("Mul", lib.TT_MUL, False),
                            ("Div", lib.TT_DIV, True), ("Pow", lib.TT_POW, True), ("Max", lib.TT_MAXIMUM, False),
                            ("Min", lib.TT_MINIMUM, False)):
    STEP_BUILDERS[_op] = _onnx_binary(_code, _floats)


def _onnx_unary(code: int) -> StepBuilder:
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        return None if out is None or len(xs) != 1 else unary_calls(code, xs[0], out)
    return build


for _op, _name in (("Relu", "relu"), ("Sigmoid", "sigmoid"), ("Tanh", "tanh"), ("Exp", "exp"), ("Log", "log"),
                   ("Sqrt", "sqrt"), ("Neg", "neg"), ("Erf", "erf"), ("Abs", "abs"), ("Reciprocal", "reciprocal"),
                   ("Floor", "floor"), ("Ceil", "ceil"), ("Sin", "sin"), ("Cos", "cos"), ("Tan", "tan"),
                   ("Sinh", "sinh"), ("Cosh", "cosh"), ("Asin", "asin"), ("Acos", "acos"), ("Atan", "atan")):
    STEP_BUILDERS[_op] = _onnx_unary(E._UNARY[_name].code)


def _gelu(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    approx = node.attrs.get("approximate", "none")
    approx = approx.decode() if isinstance(approx, bytes) else approx
    if out is None or approx not in ("none", "tanh"):
        return None
    return unary_calls(lib.TT_GELU if approx == "none" else lib.TT_GELU_TANH, xs[0], out)


def _leaky_relu(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    return None if out is None else unary_calls(lib.TT_LEAKY_RELU, xs[0], out, (node.attrs.get("alpha", 0.01), 0.0))


def _elu(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    return None if out is None else unary_calls(lib.TT_ELU, xs[0], out, (node.attrs.get("alpha", 1.0), 0.0))


def _clip(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    if out is None:
        return None
    bounds = []
    for k, what in ((1, "min"), (2, "max")):
        if len(xs) > k and xs[k] is not None:
            if xs[k].numel() != 1:
                return None
            bounds.append(b.read(xs[k]).reshape(-1).tolist()[0])  # a constant when the step is prepared once
        else:
            bounds.append(node.attrs.get(what))
    return clamp_calls(b, xs[0], bounds[0], bounds[1], out)


STEP_BUILDERS.update(Gelu=_gelu, LeakyRelu=_leaky_relu, Elu=_elu, Clip=_clip)


def fused_calls(kernel: Any, xs: list[Any], out: Any) -> Calls | None:
    """A :class:`~t_tensor.graph.fused_expr.FusedKernel` evaluated into ``out`` (tt_fused_eval)."""
    if len(xs) != kernel.n_inputs or not all(_is_tensor(x) and x._dtype is out._dtype for x in xs):
        return None
    if out._dtype not in _FLOATS:
        return None
    shape = out._shape
    addresses, strides = [], []
    for x in xs:
        same = x.data_ptr() == out.data_ptr() and x._shape == shape and x.is_contiguous()
        if not same and out._overlaps(x):
            return None
        addresses.append(x.data_ptr())
        strides.extend(x._strides if x._shape == shape else S.expand_strides(x._shape, x._strides, shape))
    return [(lib.tt_fused_eval, (len(kernel.program), kernel._opcodes, kernel._args, kernel._constants,
                                 kernel._nconstants, len(xs), ffi.new("uintptr_t[]", addresses or [0]),
                                 _i64(strides), len(shape), _i64(shape), out.data_ptr(), out._dtype.code))]


def _fused_elementwise(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    from .passes.elementwise_fusion import fused_kernel

    out = _single(node, outs)
    return None if out is None else fused_calls(fused_kernel(node.attrs["expr"]), xs, out)


STEP_BUILDERS["FusedElementwise"] = _fused_elementwise


# -- matrix products --------------------------------------------------------------------------------
def matmul_calls(a: Any, bm: Any, out: Any, accumulate: bool = False) -> Calls | None:
    """``out = a @ bm`` (tt_matmul): both at least 2-D, one float dtype, out of the broadcast shape."""
    if not (_is_tensor(a) and _is_tensor(bm)) or a.ndim < 2 or bm.ndim < 2:
        return None
    if a._dtype is not bm._dtype or a._dtype is not out._dtype or a._dtype not in _FLOATS:
        return None
    m, k = a._shape[-2:]
    n = bm._shape[-1]
    if bm._shape[-2] != k or out.ndim < 2:
        return None
    batch = out._shape[:-2]
    if out._shape[-2:] != (m, n) or S.broadcast_shapes(a._shape[:-2], bm._shape[:-2]) != batch:
        return None
    if out._overlaps(a) or out._overlaps(bm):
        return None
    sa = S.expand_strides(a._shape, a._strides, batch + (m, k))
    sb = S.expand_strides(bm._shape, bm._strides, batch + (k, n))
    return [(lib.tt_matmul, (out._dtype.code, len(batch), _i64(batch), m, n, k, a.data_ptr(), _i64(sa),
                             bm.data_ptr(), _i64(sb), out.data_ptr(), _i64(out._strides), int(accumulate)))]


def _matmul(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    return None if out is None or len(xs) != 2 else matmul_calls(xs[0], xs[1], out)


def activation_calls(b: Builder, attrs: dict[str, Any], out: Any) -> Calls | None:
    """The fused activation of a FusedConv / FusedGemm node, in place on ``out`` ([] for none)."""
    act = attrs.get("activation")
    if act is None:
        return []
    if act == "Relu":
        return unary_calls(lib.TT_RELU, out, out)
    if act == "Clip":
        return clamp_calls(b, out, attrs.get("activation_min"), attrs.get("activation_max"), out)
    return None


def gemm_calls(b: Builder, node: Node, xs: list[Any], out: Any) -> Calls | None:
    """ONNX Gemm (the product times alpha, plus the bias times beta) into ``out``, then the node's
    activation if any."""
    a, bm = xs[0], xs[1]
    if not (_is_tensor(a) and _is_tensor(bm)) or a.ndim != 2 or bm.ndim != 2:
        return None
    alpha = float(node.attrs.get("alpha", 1.0))
    if node.attrs.get("transA", 0):
        a = a.transpose(0, 1)
    if node.attrs.get("transB", 0):
        bm = bm.transpose(0, 1)
    calls = matmul_calls(a, bm, out)
    if calls is None:
        return None
    if alpha != 1.0:
        scale = binary_calls(b, lib.TT_MUL, out, _scalar(b, alpha, out._dtype), out)
        if scale is None:
            return None
        calls += scale
    c = xs[2] if len(xs) > 2 else None
    beta = float(node.attrs.get("beta", 1.0))
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = b.keep(E.mul(b.read(c), beta))
        bias = binary_calls(b, lib.TT_ADD, out, c, out)
        if bias is None:
            return None
        calls += bias
    act = activation_calls(b, node.attrs, out)
    return None if act is None else calls + act


def _gemm(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    return None if out is None else gemm_calls(b, node, xs, out)


def _fused_matmul(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    calls = None if out is None or len(xs) != 2 else matmul_calls(xs[0], xs[1], out)
    act = None if calls is None else activation_calls(b, node.attrs, out)
    return None if act is None else calls + act


STEP_BUILDERS.update(MatMul=_matmul, Gemm=_gemm, FusedGemm=_gemm, FusedMatMul=_fused_matmul)


# -- convolution, pooling, normalization --------------------------------------------------------------
def conv_calls(x: Any, w: Any, bias: Any, strides: Any, pads: Any, dilations: Any, groups: int,
               out: Any) -> Calls | None:
    """A 2-d convolution (tt_conv2d) of 4-d x into the contiguous ``out``, whose shape gives the
    output size (so padding after each spatial dim is implied, as ONNX's asymmetric pads)."""
    if not (_is_tensor(x) and _is_tensor(w)) or x.ndim != 4 or w.ndim != 4 or out.ndim != 4:
        return None
    if x._dtype is not out._dtype or w._dtype is not out._dtype or x._dtype not in _FLOATS:
        return None
    if bias is not None and (bias._dtype is not out._dtype or bias._shape != (w._shape[0],)):
        return None
    if w._shape[0] % groups or x._shape[1] != w._shape[1] * groups or out._shape[:2] != (x._shape[0], w._shape[0]):
        return None
    if any(p < 0 for p in pads) or out._overlaps(x):
        return None
    return [(lib.tt_conv2d, (out._dtype.code, _i64(x._shape), x.data_ptr(), _i64(x._strides), _i64(w._shape),
                             w.data_ptr(), _i64(w._strides), 0 if bias is None else bias.data_ptr(),
                             0 if bias is None else bias._strides[0], _i64(strides), _i64(pads), _i64(dilations),
                             groups, _i64(out._shape[2:]), out.data_ptr()))]


def _conv(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    if out is None or node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET") or not _is_tensor(xs[0]):
        return None
    if xs[0].ndim != 4:
        return None
    pads = [int(p) for p in node.attrs.get("pads", (0, 0, 0, 0))]
    calls = conv_calls(xs[0], xs[1], xs[2] if len(xs) > 2 else None,
                       [int(s) for s in node.attrs.get("strides", (1, 1))], pads[:2],
                       [int(d) for d in node.attrs.get("dilations", (1, 1))], int(node.attrs.get("group", 1)), out)
    if calls is None:
        return None
    act = activation_calls(b, node.attrs, out)
    return None if act is None else calls + act


STEP_BUILDERS.update(Conv=_conv, FusedConv=_conv)


def _pool_geometry(node: Node, x: Any, out: Any) -> tuple[list[int], list[int], list[int], list[int]] | None:
    """(kernel, strides, pads before, dilations) of a 2-d ONNX pooling node, None if not 2-d."""
    if not _is_tensor(x) or x.ndim != 4 or out.ndim != 4 or x._dtype is not out._dtype or x._dtype not in _FLOATS:
        return None
    if node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET") or out._shape[:2] != x._shape[:2]:
        return None
    kernel = [int(k) for k in node.attrs["kernel_shape"]]
    strides = [int(s) for s in node.attrs.get("strides", (1, 1))]
    pads = [int(p) for p in node.attrs.get("pads", (0, 0, 0, 0))]
    dilations = [int(d) for d in node.attrs.get("dilations", (1, 1))]
    if len(kernel) != 2 or any(p < 0 for p in pads) or out._overlaps(x):
        return None
    return kernel, strides, pads, dilations


def _max_pool(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    """MaxPool (one output, storage_order 0): windows read only inside the input, which is what
    ONNX's padding with the lowest value means; the output size (from shape inference, ceil_mode
    included) gives the padding after."""
    out = _single(node, outs)
    if out is None or len(node.outputs) != 1 or node.attrs.get("storage_order", 0):
        return None
    geo = _pool_geometry(node, xs[0], out)
    if geo is None:
        return None
    kernel, strides, pads, dilations = geo
    x = xs[0]
    return [(lib.tt_max_pool2d, (out._dtype.code, _i64(x._shape), x.data_ptr(), _i64(x._strides), _i64(kernel),
                                 _i64(strides), _i64(pads[:2]), _i64(dilations), _i64(out._shape[2:]),
                                 out.data_ptr(), 0))]


def _avg_pool(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    """AveragePool with the divisor rules the C kernel shares with ONNX: count_include_pad=0 (the
    real elements of each window), or count_include_pad=1 with symmetric pads and no ceil_mode."""
    out = _single(node, outs)
    if out is None:
        return None
    geo = _pool_geometry(node, xs[0], out)
    if geo is None:
        return None
    kernel, strides, pads, dilations = geo
    include = int(node.attrs.get("count_include_pad", 0))
    if any(d != 1 for d in dilations) or (include and (pads[:2] != pads[2:] or node.attrs.get("ceil_mode", 0))):
        return None
    x = xs[0]
    return [(lib.tt_avg_pool2d, (out._dtype.code, _i64(x._shape), x.data_ptr(), _i64(x._strides), _i64(kernel),
                                 _i64(strides), _i64(pads[:2]), include, 0, _i64(out._shape[2:]), out.data_ptr()))]


def reduce_calls(op: int, x: Any, dims: tuple[int, ...], out: Any, param: float = 0.0) -> Calls | None:
    """``out`` = the reduction of float x over ``dims`` (tt_reduce); out holds x's shape with the
    reduced dims removed or kept as 1 (the same elements either way)."""
    if not _is_tensor(x) or x._dtype is not out._dtype or x._dtype not in _FLOATS or not dims:
        return None
    if any(x._shape[d] == 0 for d in dims) or out._overlaps(x):
        return None
    kept = tuple(n for k, n in enumerate(x._shape) if k not in dims)
    if tuple(n for n in out._shape if n != 1) != tuple(n for n in kept if n != 1):
        return None
    # out's strides over x's shape: 0 on the reduced dims, the contiguous strides of `kept` elsewhere
    kept_strides = iter(S.contiguous_strides(kept) if kept else ())
    strides = [0 if k in dims else next(kept_strides) for k in range(x.ndim)]
    mask = sum(1 << d for d in dims)
    return [(lib.tt_reduce, (op, x.ndim, _i64(x._shape), x.data_ptr(), _i64(x._strides), x._dtype.code, mask,
                             float(param), out.data_ptr(), _i64(strides), 0, _i64([0] * x.ndim)))]


def _global_pool(op: int) -> StepBuilder:
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        if out is None or not _is_tensor(xs[0]) or xs[0].ndim < 3:
            return None
        return reduce_calls(op, xs[0], tuple(range(2, xs[0].ndim)), out)
    return build


STEP_BUILDERS.update(MaxPool=_max_pool, AveragePool=_avg_pool, GlobalAveragePool=_global_pool(lib.TT_RED_MEAN),
                     GlobalMaxPool=_global_pool(lib.TT_RED_MAX))


def _reducer(op: int) -> StepBuilder:
    """ReduceMean / ReduceSum / ReduceMax / ReduceMin over float tensors, axes as attribute or a
    (constant) input; no axes means all of them, unless noop_with_empty_axes."""
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        x = xs[0] if xs else None
        if out is None or not _is_tensor(x) or x.ndim == 0:
            return None
        if "axes" in node.attrs:
            axes = [int(a) for a in node.attrs["axes"]]
        elif len(xs) > 1 and xs[1] is not None:
            axes = [int(a) for a in b.read(xs[1]).reshape(-1).tolist()]
        else:
            axes = []
        if not axes:
            if node.attrs.get("noop_with_empty_axes", 0):
                return None
            axes = list(range(x.ndim))
        return reduce_calls(op, x, tuple(sorted({a % x.ndim for a in axes})), out)
    return build


STEP_BUILDERS.update(ReduceMean=_reducer(lib.TT_RED_MEAN), ReduceSum=_reducer(lib.TT_RED_SUM),
                     ReduceMax=_reducer(lib.TT_RED_MAX), ReduceMin=_reducer(lib.TT_RED_MIN))


def softmax_calls(x: Any, dim: int, log: bool, out: Any) -> Calls | None:
    if not _is_tensor(x) or x._dtype is not out._dtype or x._dtype not in _FLOATS or x.ndim == 0:
        return None
    if x._shape != out._shape or out._overlaps(x):
        return None
    return [(lib.tt_softmax, (int(log), x.ndim, _i64(x._shape), x.data_ptr(), _i64(x._strides), x._dtype.code,
                              dim % x.ndim, out.data_ptr(), _i64(out._strides)))]


def _softmax(log: bool) -> StepBuilder:
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        return None if out is None else softmax_calls(xs[0], int(node.attrs.get("axis", -1)), log, out)
    return build


STEP_BUILDERS.update(Softmax=_softmax(False), LogSoftmax=_softmax(True))


def _per_channel(t: Any, ndim: int) -> Any:
    return t.reshape((1, t.shape[0]) + (1,) * (ndim - 2))


def batch_norm_calls(b: Builder, x: Any, gamma: Any, beta: Any, mean: Any, var: Any, eps: float,
                     out: Any) -> Calls | None:
    """Inference batch normalization as one fused pass ``x * scale + shift`` per channel, with
    ``scale = gamma / sqrt(var + eps)`` and ``shift = beta - mean * scale`` computed (in float64)
    when the step is built: from the initializers, once. ``gamma`` / ``beta`` None: 1 / 0."""
    from ..creation import ones, zeros
    from ..manipulation import astype
    from .passes.elementwise_fusion import fused_kernel

    if not (_is_tensor(x) and _is_tensor(mean) and _is_tensor(var)) or x._dtype is not out._dtype:
        return None
    for t in (gamma, beta, mean, var):
        b.read(t)
    if x._dtype not in _FLOATS or x.ndim < 2 or x._shape != out._shape:
        return None
    channels = x._shape[1]
    gamma = ones(channels, dtype=D.float64) if gamma is None else gamma
    beta = zeros(channels, dtype=D.float64) if beta is None else beta
    if not all(_is_tensor(t) and t.ndim == 1 and t._shape[0] == channels for t in (gamma, beta, mean, var)):
        return None
    g64, b64, m64, v64 = (astype(t, D.float64) for t in (gamma, beta, mean, var))
    scale64 = E.mul(g64, E.rsqrt(E.add(v64, float(eps))))
    scale = b.keep(_per_channel(astype(scale64, x._dtype), x.ndim))
    shift = b.keep(_per_channel(astype(E.sub(b64, E.mul(m64, scale64)), x._dtype), x.ndim))
    return fused_calls(fused_kernel("add(mul(@0,@1),@2)"), [x, scale, shift], out)


def _batch_norm(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    """Inference BatchNormalization (see :func:`batch_norm_calls`)."""
    out = _single(node, outs)
    if out is None or node.attrs.get("training_mode", 0) or len(xs) < 5:
        return None
    x, gamma, beta, mean, var = xs[:5]
    return batch_norm_calls(b, x, gamma, beta, mean, var, float(node.attrs.get("epsilon", 1e-5)), out)


STEP_BUILDERS["BatchNormalization"] = _batch_norm


def _layer_norm(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    """LayerNormalization: the mean and the (biased) variance over the trailing axes by tt_reduce
    into small buffers (or the Mean / InvStdDev outputs' slots), then one fused pass
    ``(x - mean) * rsqrt(var + eps) * scale + bias`` into the output."""
    from ..creation import empty
    from .passes.elementwise_fusion import fused_kernel

    out = outs[0] if outs else None
    x = xs[0]
    if out is None or not out.is_contiguous() or not _is_tensor(x) or x._dtype is not out._dtype:
        return None
    if x._dtype not in _FLOATS or x._shape != out._shape or x.ndim == 0 or node.attrs.get("stash_type", 1) != 1:
        return None
    axis = int(node.attrs.get("axis", -1)) % x.ndim
    dims = tuple(range(axis, x.ndim))
    stat_shape = x._shape[:axis] + (1,) * (x.ndim - axis)
    mean = outs[1] if len(outs) > 1 and outs[1] is not None else b.keep(empty(stat_shape, dtype=x._dtype))
    inv = outs[2] if len(outs) > 2 and outs[2] is not None else b.keep(empty(stat_shape, dtype=x._dtype))
    if mean._shape != stat_shape or inv._shape != stat_shape or not (mean.is_contiguous() and inv.is_contiguous()):
        return None
    calls = reduce_calls(lib.TT_RED_MEAN, x, dims, mean)
    var = reduce_calls(lib.TT_RED_VAR, x, dims, inv, 0.0)  # the variance, then 1/sqrt(var + eps) in place
    if calls is None or var is None:
        return None
    eps = repr(float(node.attrs.get("epsilon", 1e-5)))
    rsqrt = fused_calls(fused_kernel(f"rsqrt(add(@0,{eps}))"), [inv], inv)
    scale = xs[1] if len(xs) > 1 else None
    bias = xs[2] if len(xs) > 2 else None
    ins, expr = [x, mean, inv], "mul(sub(@0,@1),@2)"
    if scale is not None:
        ins.append(scale)
        expr = f"mul({expr},@{len(ins) - 1})"
    if bias is not None:
        ins.append(bias)
        expr = f"add({expr},@{len(ins) - 1})"
    if any(t is not None and (out._overlaps(t) and t is not x) for t in (mean, inv)):
        return None
    norm = fused_calls(fused_kernel(expr), ins, out)
    if rsqrt is None or norm is None:
        return None
    return calls + var + rsqrt + norm


STEP_BUILDERS["LayerNormalization"] = _layer_norm


# -- traced primitives (tt.<Primitive> nodes) ---------------------------------------------------------
def _traced_args(node: Node, xs: list[Any]) -> tuple | None:
    from .trace import _fill

    if node.attrs.get("kwargs"):
        return None
    return _fill(node.attrs["args"], xs)


def _traced_binary(code: int) -> StepBuilder:
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        args = _traced_args(node, xs)
        if out is None or args is None or len(args) != 2 or out._dtype is D.bool:
            return None
        x, y = args
        # a Python number operand: as a 0-d tensor of the result's dtype (what promotion gives)
        if not _is_tensor(x) and isinstance(x, (int, float)) and not isinstance(x, bool):
            x = _scalar(b, x, out._dtype)
        if not _is_tensor(y) and isinstance(y, (int, float)) and not isinstance(y, bool):
            y = _scalar(b, y, out._dtype)
        return binary_calls(b, code, x, y, out)
    return build


STEP_BUILDERS.update({"tt.Add": _traced_binary(lib.TT_ADD), "tt.Sub": _traced_binary(lib.TT_SUB),
                      "tt.Mul": _traced_binary(lib.TT_MUL), "tt.Maximum": _traced_binary(lib.TT_MAXIMUM),
                      "tt.Minimum": _traced_binary(lib.TT_MINIMUM)})


def _traced_div(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    return None if out is None or out._dtype not in _FLOATS else _traced_binary(lib.TT_DIV)(b, node, xs, outs)


STEP_BUILDERS["tt.Div"] = _traced_div


def _traced_unary(op: str) -> StepBuilder:
    entry = E._UNARY[op]

    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        args = _traced_args(node, xs)
        if out is None or args is None or len(args) != 3 or entry.gives == "bool":
            return None
        return unary_calls(entry.code, args[0], out, tuple(args[1]) if entry.param else None)
    return build


def _traced_matmul(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    args = _traced_args(node, xs)
    return None if out is None or args is None or len(args) != 3 else matmul_calls(args[0], args[1], out)


def _traced_conv(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    args = _traced_args(node, xs)
    if out is None or args is None or len(args) != 9:
        return None
    x, w, bias, _, nd, stride, padding, dilation, groups = args
    if nd != 2 or isinstance(padding, str) or not _is_tensor(x) or x.ndim != 4:
        return None

    def pair(v: Any) -> list[int]:
        return [int(v), int(v)] if isinstance(v, int) else [int(u) for u in v]

    pads = pair(padding)
    strides, dilations = pair(stride), pair(dilation)
    if _is_tensor(w) and w.ndim == 4:  # the output size PyTorch gives: symmetric padding
        for k in range(2):
            size = (x._shape[2 + k] + 2 * pads[k] - dilations[k] * (w._shape[2 + k] - 1) - 1) // strides[k] + 1
            if size != out._shape[2 + k]:
                return None
    return conv_calls(x, w, bias, strides, pads, dilations, int(groups), out)


def _traced_softmax(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    args = _traced_args(node, xs)
    if out is None or args is None or len(args) != 6:
        return None
    x, _, log, dim, dtype_arg, _ = args
    return None if dtype_arg is not None or dim is None else softmax_calls(x, int(dim), bool(log), out)


def _traced_max_pool(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    args = _traced_args(node, xs)
    if out is None or args is None or len(args) != 9:
        return None
    x, _, nd, kernel, stride, padding, dilation, _, return_indices = args
    if nd != 2 or return_indices or not _is_tensor(x) or x.ndim != 4 or out.ndim != 4:
        return None
    if x._dtype is not out._dtype or x._dtype not in _FLOATS or out._shape[:2] != x._shape[:2] or out._overlaps(x):
        return None

    def pair(v: Any) -> list[int]:
        return [int(v), int(v)] if isinstance(v, int) else [int(u) for u in v]

    kernel = pair(kernel)
    stride = kernel if stride is None or stride == () or stride == [] else pair(stride)
    return [(lib.tt_max_pool2d, (out._dtype.code, _i64(x._shape), x.data_ptr(), _i64(x._strides), _i64(kernel),
                                 _i64(stride), _i64(pair(padding)), _i64(pair(dilation)), _i64(out._shape[2:]),
                                 out.data_ptr(), 0))]


def _traced_batch_norm(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    args = _traced_args(node, xs)
    if out is None or args is None or len(args) != 8:
        return None
    x, running_mean, running_var, weight, bias, training, _, eps = args
    if training:
        return None
    return batch_norm_calls(b, x, weight, bias, running_mean, running_var, float(eps), out)


def _traced_layer_norm(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    """A traced ``tt.LayerNorm`` (args: x, normalized_shape, weight, bias, eps): the eager kernel
    (tt_layer_norm_forward) into the output slot, for contiguous float32/float64 operands of one
    dtype; weight and bias are read where they lie when the step runs."""
    out = _single(node, outs)
    args = _traced_args(node, xs)
    if out is None or args is None or len(args) != 5:
        return None
    x, normalized_shape, weight, bias, eps = args
    cols = math.prod(normalized_shape)
    if not _is_tensor(x) or x._dtype not in _FLOATS or x._dtype is not out._dtype or x._shape != out._shape:
        return None
    if cols == 0 or not (x.is_contiguous() and out.is_contiguous()) or out._overlaps(x):
        return None
    for t in (weight, bias):  # the kernel reads `cols` contiguous values of each
        if t is not None and not (_is_tensor(t) and t._dtype is x._dtype and t.is_contiguous() and t.numel() == cols):
            return None
    return [(lib.tt_layer_norm_forward, (x._dtype.code, x.numel() // cols, cols, x.data_ptr(), float(eps),
                                         0 if weight is None else weight.data_ptr(),
                                         0 if bias is None else bias.data_ptr(), out.data_ptr(), 0, 0))]


def _traced_reduction(op: int, mean: bool) -> StepBuilder:
    """A traced ``tt.Sum`` (args: x, fn, dim, keepdim, dtype, axis, keepdims, out) or ``tt.Mean``
    (the same without fn) over float x, without a dtype argument."""
    def build(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
        out = _single(node, outs)
        args = _traced_args(node, xs)
        if out is None or args is None or len(args) != (7 if mean else 8):
            return None
        if mean:
            x, dim, _, dtype_arg, axis, _, _ = args
        else:
            x, fn, dim, _, dtype_arg, axis, _, _ = args
            if fn != "sum":
                return None
        dim = axis if dim is None else dim
        if dtype_arg is not None or not _is_tensor(x) or x.ndim == 0:
            return None
        dims = range(x.ndim) if dim is None or dim == () else ([dim] if isinstance(dim, int) else dim)
        return reduce_calls(op, x, tuple(sorted({int(d) % x.ndim for d in dims})), out)
    return build


def _register_traced() -> None:
    from ..autograd.functions.elementwise import UNARY

    for op, cls in UNARY.items():
        if E._UNARY[op].takes == "float" or op in ("neg", "abs", "relu", "square", "floor", "ceil"):
            STEP_BUILDERS[f"tt.{cls.__name__}"] = _traced_unary(op)
    STEP_BUILDERS.update({"tt.Matmul": _traced_matmul, "tt.Convolution": _traced_conv,
                          "tt.Softmax": _traced_softmax, "tt.MaxPool": _traced_max_pool,
                          "tt.BatchNorm": _traced_batch_norm, "tt.LayerNorm": _traced_layer_norm,
                          "tt.Sum": _traced_reduction(lib.TT_RED_SUM, False),
                          "tt.Mean": _traced_reduction(lib.TT_RED_MEAN, True)})


_register_traced()


# -- copies and casts ---------------------------------------------------------------------------------
def copy_calls(x: Any, out: Any) -> Calls | None:
    """``out = x`` converted to out's dtype (tt_copy_strided, what ``Tensor.to`` runs)."""
    if not _is_tensor(x) or x._shape != out._shape or out._overlaps(x):
        return None
    return [(lib.tt_copy_strided, (x.ndim, _i64(x._shape), x.data_ptr(), _i64(x._strides), x._dtype.code,
                                   out.data_ptr(), _i64(out._strides), out._dtype.code))]


def _cast(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    return None if out is None or len(xs) != 1 else copy_calls(xs[0], out)


def _traced_copy(b: Builder, node: Node, xs: list[Any], outs: list[Any]) -> Calls | None:
    out = _single(node, outs)
    args = _traced_args(node, xs)
    if out is None or args is None or len(args) != 3 or args[1] is not out._dtype:
        return None
    return copy_calls(args[0], out)


STEP_BUILDERS.update({"Cast": _cast, "tt.Copy": _traced_copy})
