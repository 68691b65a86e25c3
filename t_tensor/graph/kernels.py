"""The kernel registry: op type -> a function of t_tensor tensors and attributes.

Each kernel takes ``(inputs, attrs)`` -- a list of tensors (None for an omitted optional input)
and the node's attribute dict -- and returns one tensor or a tuple of them. Kernels call the
existing t_tensor ops (``tt.add``, ``tt.matmul``, ``nn.functional.conv2d``, ...); ONNX semantics
that t_tensor spells differently (asymmetric pads, ``Gather`` with N-d indices, integer ``Div``
truncating toward zero, ...) are adapted here.

>>> import t_tensor as tt
>>> KERNELS["Gemm"]([tt.ones(2, 3), tt.ones(4, 3), tt.ones(4)], {"transB": 1, "alpha": 2.0}).tolist()
[[7.0, 7.0, 7.0, 7.0], [7.0, 7.0, 7.0, 7.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import reduce
from typing import Any

from .. import dtypes as D
from .. import elementwise as E
from .. import linalg as L
from .. import manipulation as M
from .. import reductions as R
from .. import sorting as S
from .. import views as V
from ..creation import arange, full, ones, tensor
from ..indexing import gather, index_select, scatter, scatter_reduce
from ..nn import functional as F
from .ir import Node, dtype_attr

__all__ = ["KERNELS", "PREPARERS", "kernel", "prepare", "run_node"]

Kernel = Callable[[list[Any], dict[str, Any]], Any]
KERNELS: dict[str, Kernel] = {}


def kernel(*ops: str) -> Callable[[Kernel], Kernel]:
    """Register the decorated function as the kernel of ``ops``."""
    def deco(fn: Kernel) -> Kernel:
        for op in ops:
            KERNELS[op] = fn
        return fn
    return deco


def run_node(node: Node, inputs: list[Any]) -> list[Any]:
    """Run ``node``'s kernel on ``inputs``; returns the list of its outputs."""
    fn = KERNELS.get(node.op_type)
    if fn is None:
        raise NotImplementedError(f"run: node {node.name!r}: no kernel for op {node.op_type!r}")
    out = fn(inputs, node.attrs)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    wanted = sum(1 for o in node.outputs if o)
    if len(out) < len(node.outputs) and wanted > len(out):
        raise NotImplementedError(f"run: node {node.name!r} ({node.op_type}) asks for {len(node.outputs)} outputs; "
                                  f"the kernel gives {len(out)}")
    return out


Prepared = Callable[[list[Any]], Any]
PREPARERS: dict[str, Callable[[Node], Prepared | None]] = {}
"""op type -> a function of a node giving its kernel bound to the node's parsed attributes (a
function of the input list only), or None to use the registry kernel as it is."""


def prepare(node: Node) -> Prepared:
    """``node``'s kernel as a function of its inputs alone: from :data:`PREPARERS` when the op
    type has one (attributes parsed once, here), else the registry kernel with the node's
    attributes bound. What the plain executor runs."""
    make = PREPARERS.get(node.op_type)
    if make is not None:
        fn = make(node)
        if fn is not None:
            return fn
    kernel = KERNELS.get(node.op_type)
    if kernel is None:
        def missing(xs: list[Any]) -> Any:
            raise NotImplementedError(f"run: node {node.name!r}: no kernel for op {node.op_type!r}")
        return missing
    attrs = node.attrs
    return lambda xs: kernel(xs, attrs)


def _prepare_unary(fn: Callable[[Any], Any]) -> Callable[[Node], Prepared]:
    return lambda node: (lambda xs: fn(xs[0]))


def _prepare_binary(fn: Callable[[Any, Any], Any]) -> Callable[[Node], Prepared]:
    return lambda node: (lambda xs: fn(xs[0], xs[1]))


def _ints(t: Any) -> list[int]:
    """A (constant) tensor input as a list of Python ints."""
    return [int(v) for v in t.reshape(-1).tolist()]


# -- elementwise --------------------------------------------------------------------------------
def _binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    return lambda xs, attrs: fn(xs[0], xs[1])


for _op, _fn in (("Add", E.add), ("Sub", E.sub), ("Mul", E.mul), ("Equal", E.eq), ("Less", E.lt),
                 ("Greater", E.gt), ("LessOrEqual", E.le), ("GreaterOrEqual", E.ge), ("And", E.logical_and),
                 ("Or", E.logical_or), ("Xor", E.logical_xor)):
    KERNELS[_op] = _binary(_fn)


@kernel("Div")
def _div(xs: list[Any], attrs: dict[str, Any]) -> Any:
    a, b = xs
    if a.dtype.is_floating_point:
        return E.div(a, b)
    # integer division truncates toward zero in ONNX: exact via fmod
    return E.floor_divide(E.sub(a, E.fmod(a, b)), b)


@kernel("Mod")
def _mod(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return (E.fmod if attrs.get("fmod", 0) else E.remainder)(xs[0], xs[1])


@kernel("Pow")
def _pow(xs: list[Any], attrs: dict[str, Any]) -> Any:
    out = E.pow(xs[0], xs[1])
    return out if out.dtype == xs[0].dtype else M.astype(out, xs[0].dtype)


def _fold(fn: Callable[[Any, Any], Any], mean: bool = False) -> Kernel:
    def k(xs: list[Any], attrs: dict[str, Any]) -> Any:
        out = reduce(fn, xs)
        if len(xs) == 1:
            out = E.add(out, 0) if out.dtype != D.bool else out
        return E.div(out, len(xs)) if mean else out
    return k


KERNELS.update(Max=_fold(E.maximum), Min=_fold(E.minimum), Sum=_fold(E.add), Mean=_fold(E.add, mean=True))


@kernel("Where")
def _where(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.where(xs[0], xs[1], xs[2])


def _unary(fn: Callable[[Any], Any]) -> Kernel:
    return lambda xs, attrs: fn(xs[0])


for _op, _fn in (("Relu", E.relu), ("Sigmoid", E.sigmoid), ("Tanh", E.tanh), ("Exp", E.exp), ("Log", E.log),
                 ("Sqrt", E.sqrt), ("Neg", E.neg), ("Erf", E.erf), ("Abs", E.abs), ("Reciprocal", E.reciprocal),
                 ("Floor", E.floor), ("Ceil", E.ceil), ("Sin", E.sin), ("Cos", E.cos), ("Tan", E.tan),
                 ("Asin", E.asin), ("Acos", E.acos), ("Atan", E.atan), ("Sinh", E.sinh), ("Cosh", E.cosh),
                 ("Asinh", E.asinh), ("Acosh", E.acosh), ("Atanh", E.atanh), ("Sign", E.sign),
                 ("Not", E.logical_not), ("Round", E.round)):
    KERNELS[_op] = _unary(_fn)


@kernel("Identity")
def _identity(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return xs[0]


@kernel("Dropout")
def _dropout(xs: list[Any], attrs: dict[str, Any]) -> Any:
    """Inference: the input unchanged (and an all-true mask)."""
    if len(xs) > 2 and xs[2] is not None and bool(xs[2].item()):
        raise NotImplementedError("Dropout: training_mode=True is not supported (inference only)")
    return xs[0], ones(*xs[0].shape, dtype=D.bool)


@kernel("Gelu")
def _gelu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    approx = attrs.get("approximate", "none")
    return F.gelu(xs[0], approximate=approx.decode() if isinstance(approx, bytes) else approx)


@kernel("LeakyRelu")
def _leaky_relu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.leaky_relu(xs[0], float(attrs.get("alpha", 0.01)))


@kernel("Elu")
def _elu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.elu(xs[0], float(attrs.get("alpha", 1.0)))


@kernel("Softplus")
def _softplus(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.log1p(E.exp(xs[0])) if xs[0].dtype != D.float32 else E.softplus(xs[0], 1.0, math.inf)


@kernel("HardSigmoid")
def _hard_sigmoid(xs: list[Any], attrs: dict[str, Any]) -> Any:
    y = E.add(E.mul(xs[0], float(attrs.get("alpha", 0.2))), float(attrs.get("beta", 0.5)))
    return E.clamp(y, 0.0, 1.0)


@kernel("HardSwish")
def _hard_swish(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.mul(xs[0], _hard_sigmoid(xs, {"alpha": 1 / 6, "beta": 0.5}))


@kernel("Clip")
def _clip(xs: list[Any], attrs: dict[str, Any]) -> Any:
    lo = xs[1].item() if len(xs) > 1 and xs[1] is not None else attrs.get("min")
    hi = xs[2].item() if len(xs) > 2 and xs[2] is not None else attrs.get("max")
    if lo is None and hi is None:
        return xs[0]
    return E.clamp(xs[0], lo, hi)


@kernel("PRelu")
def _prelu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, slope = xs
    return E.where(E.lt(x, 0), E.mul(x, slope), x)


KERNELS["Softmax"] = lambda xs, attrs: F.softmax(xs[0], dim=int(attrs.get("axis", -1)))
KERNELS["LogSoftmax"] = lambda xs, attrs: F.log_softmax(xs[0], dim=int(attrs.get("axis", -1)))


@kernel("Cast")
def _cast(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return M.astype(xs[0], dtype_attr(attrs["to"]))


# -- linear algebra -----------------------------------------------------------------------------
@kernel("MatMul")
def _matmul(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return L.matmul(xs[0], xs[1])


@kernel("Gemm")
def _gemm(xs: list[Any], attrs: dict[str, Any]) -> Any:
    a, b = xs[0], xs[1]
    if attrs.get("transA", 0):
        a = V.transpose(a, 0, 1)
    if attrs.get("transB", 0):
        b = V.transpose(b, 0, 1)
    y = L.matmul(a, b)
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    if alpha != 1.0:
        y = E.mul(y, alpha)
    if len(xs) > 2 and xs[2] is not None and beta != 0.0:
        y = E.add(y, xs[2] if beta == 1.0 else E.mul(xs[2], beta))
    return y


# -- data movement ------------------------------------------------------------------------------
@kernel("Concat")
def _concat(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return M.cat([x for x in xs if x is not None], dim=int(attrs["axis"]))


@kernel("Transpose")
def _transpose(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    perm = attrs.get("perm", tuple(range(x.ndim - 1, -1, -1)))
    return V.permute(x, [int(p) for p in perm])


@kernel("Reshape")
def _reshape(xs: list[Any], attrs: dict[str, Any]) -> Any:
    from .shape_inference import reshape_target

    target = _ints(xs[1]) if len(xs) > 1 else list(attrs["shape"])
    return V.reshape(xs[0], reshape_target("Reshape", tuple(xs[0].shape), target, bool(attrs.get("allowzero", 0))))


@kernel("Flatten")
def _flatten(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axis = int(attrs.get("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    return V.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))


def _axes_of(xs: list[Any], attrs: dict[str, Any], k: int = 1) -> list[int] | None:
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    if len(xs) > k and xs[k] is not None:
        return _ints(xs[k])
    return None


@kernel("Squeeze")
def _squeeze(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axes = _axes_of(xs, attrs)
    if axes is None:
        return V.reshape(x, tuple(d for d in x.shape if d != 1))
    ax = {a % x.ndim for a in axes}
    if any(x.shape[a] != 1 for a in ax):
        raise ValueError(f"Squeeze: cannot squeeze axes {tuple(axes)} of shape {tuple(x.shape)}")
    return V.reshape(x, tuple(d for k, d in enumerate(x.shape) if k not in ax))


@kernel("Unsqueeze")
def _unsqueeze(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axes = _axes_of(xs, attrs)
    rank = x.ndim + len(axes)
    ax = {a % rank for a in axes}
    it = iter(x.shape)
    return V.reshape(x, tuple(1 if k in ax else next(it) for k in range(rank)))


@kernel("Gather")
def _gather(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, idx = xs
    axis = int(attrs.get("axis", 0)) % x.ndim
    flat = V.reshape(idx, (-1,))
    flat = E.where(E.lt(flat, 0), E.add(flat, x.shape[axis]), flat)
    out = index_select(x, axis, M.astype(flat, D.int64))
    return V.reshape(out, tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:]))


@kernel("Shape")
def _shape(xs: list[Any], attrs: dict[str, Any]) -> Any:
    dims = list(xs[0].shape)[int(attrs.get("start", 0)):attrs.get("end")]
    return tensor(dims, dtype=D.int64)


@kernel("Size")
def _size(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return tensor(xs[0].numel(), dtype=D.int64)


@kernel("Constant")
def _constant(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return attrs["value"]


@kernel("ConstantOfShape")
def _constant_of_shape(xs: list[Any], attrs: dict[str, Any]) -> Any:
    v = attrs.get("value")
    shape = _ints(xs[0])
    if v is None:
        return full(shape, 0.0, dtype=D.float32)
    return full(shape, v.reshape(-1)[0].item(), dtype=v.dtype)


@kernel("Expand")
def _expand(xs: list[Any], attrs: dict[str, Any]) -> Any:
    from .shape_inference import broadcast

    shape = broadcast(tuple(xs[0].shape), tuple(_ints(xs[1])))
    if shape is None:
        raise ValueError(f"Expand: cannot broadcast {tuple(xs[0].shape)} to {tuple(_ints(xs[1]))}")
    return V.broadcast_to(xs[0], shape)


@kernel("Slice")
def _slice(xs: list[Any], attrs: dict[str, Any]) -> Any:
    from .shape_inference import slice_params

    x = xs[0]
    if "starts" in attrs:
        args = (list(attrs["starts"]), list(attrs["ends"]), attrs.get("axes"), None)
    else:
        opt = [_ints(xs[k]) if len(xs) > k and xs[k] is not None else None for k in (3, 4)]
        args = (_ints(xs[1]), _ints(xs[2]), opt[0], opt[1])
    index: list[Any] = [slice(None)] * x.ndim
    for a, start, stop, step in slice_params("Slice", tuple(x.shape), *args):
        if step > 0:
            index[a] = slice(start, stop, step)
        else:  # negative steps: pick the positions (this library's strides are never negative)
            x = index_select(x, a, tensor(list(range(start, stop, step)), dtype=D.int64))
    return x[tuple(index)]


@kernel("Split")
def _split(xs: list[Any], attrs: dict[str, Any]) -> Any:
    """Sizes from the ``split`` input or attribute, else ``num_outputs`` equal parts (the last smaller)."""
    x = xs[0]
    axis = int(attrs.get("axis", 0)) % x.ndim
    if len(xs) > 1 and xs[1] is not None:
        sizes = _ints(xs[1])
    elif "split" in attrs:
        sizes = [int(s) for s in attrs["split"]]
    else:
        if "num_outputs" not in attrs:
            raise ValueError("Split: give the split sizes or num_outputs")
        n = int(attrs["num_outputs"])
        chunk = -(-x.shape[axis] // n)
        sizes = [min(chunk, max(x.shape[axis] - k * chunk, 0)) for k in range(n)]
    return tuple(V.split(x, sizes, dim=axis))


# -- reductions ---------------------------------------------------------------------------------
def _extreme(dtype: D.DType, lowest: bool) -> Any:
    if dtype == D.bool:
        return not lowest
    if dtype.is_floating_point:
        return -math.inf if lowest else math.inf
    info = D.iinfo(dtype)
    return info.min if lowest else info.max


def _reducer(fn: Callable[..., Any], pre: Callable[[Any], Any] | None = None,
             post: Callable[[Any], Any] | None = None) -> Kernel:
    def k(xs: list[Any], attrs: dict[str, Any]) -> Any:
        x = xs[0]
        axes = _axes_of(xs, attrs)
        keep = bool(attrs.get("keepdims", 1))
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return x
            axes = list(range(x.ndim))
        dims = tuple(a % max(x.ndim, 1) for a in axes)
        if fn in (R.amax, R.amin) and any(x.shape[d] == 0 for d in dims):
            # ONNX: the max of an empty set is the lowest value of the dtype (and min the highest)
            shape = tuple(1 if k in dims else n for k, n in enumerate(x.shape) if keep or k not in dims)
            return full(shape, _extreme(x.dtype, lowest=fn is R.amax), dtype=x.dtype)
        y = x if pre is None else pre(x)
        out = fn(y, dim=dims, keepdim=keep) if x.ndim else y
        if post is not None:
            out = post(out)
        return out if out.dtype == x.dtype else M.astype(out, x.dtype)
    return k


KERNELS.update(
    ReduceMean=_reducer(R.mean), ReduceSum=_reducer(R.sum), ReduceMax=_reducer(R.amax),
    ReduceMin=_reducer(R.amin), ReduceProd=_reducer(R.prod), ReduceLogSumExp=_reducer(R.logsumexp),
    ReduceSumSquare=_reducer(R.sum, pre=E.square), ReduceL1=_reducer(R.sum, pre=E.abs),
    ReduceL2=_reducer(R.sum, pre=E.square, post=E.sqrt),
)


def _argreducer(fn: Callable[..., Any]) -> Kernel:
    def k(xs: list[Any], attrs: dict[str, Any]) -> Any:
        x = xs[0]
        axis = int(attrs.get("axis", 0)) % x.ndim
        keep = bool(attrs.get("keepdims", 1))
        if attrs.get("select_last_index", 0):  # the first index in the flipped tensor is the last one
            return E.sub(x.shape[axis] - 1, fn(M.flip(x, (axis,)), dim=axis, keepdim=keep))
        return fn(x, dim=axis, keepdim=keep)
    return k


KERNELS.update(ArgMax=_argreducer(R.argmax), ArgMin=_argreducer(R.argmin))


# -- convolution, pooling, normalization --------------------------------------------------------
def _geometry(op: str, attrs: dict[str, Any], spatial: tuple[int, ...], kernel_shape: list[int]) -> Any:
    from .shape_inference import Ctx, _window_out, window_geometry

    ctx = Ctx(Node(op, [], [], attrs, op), [], [], [], 0)
    strides, dilations, pads = window_geometry(ctx, spatial, kernel_shape)
    out = _window_out(ctx, spatial, kernel_shape, bool(attrs.get("ceil_mode", 0)))
    return strides, dilations, pads, out


def _as_2d(x: Any) -> Any:
    """(N, C, L) -> (N, C, 1, L); 2-d spatial unchanged; 3-d and more: not supported."""
    if x.ndim == 3:
        return V.unsqueeze(x, 2)
    if x.ndim != 4:
        raise NotImplementedError(f"only 1-d and 2-d convolution and pooling are supported, got rank {x.ndim}")
    return x


def _pad2(pads: list[int], n: int) -> tuple[list[int], list[int]]:
    """ONNX pads [b.., e..] of n spatial dims as 2-d begin/end lists (H, W)."""
    b, e = pads[:n], pads[n:]
    return ([0] + b, [0] + e) if n == 1 else (b, e)


def _explicit_pad(x: Any, begin: list[int], end: list[int], value: float) -> Any:
    return F.pad(x, [begin[1], end[1], begin[0], end[0]], value=value)


@kernel("Conv")
def _conv(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, w = xs[0], xs[1]
    b = xs[2] if len(xs) > 2 else None
    n = x.ndim - 2
    kshape = [int(k) for k in attrs.get("kernel_shape", w.shape[2:])]
    strides, dilations, pads, _ = _geometry("Conv", attrs, tuple(x.shape[2:]), kshape)
    x2, w2 = _as_2d(x), _as_2d(w)
    if n == 1:
        strides, dilations = [1] + strides, [1] + dilations
    begin, end = _pad2(pads, n)
    if begin != end:
        x2 = _explicit_pad(x2, begin, end, 0.0)
        begin = [0, 0]
    y = F.conv2d(x2, w2, b, stride=tuple(strides), padding=tuple(begin), dilation=tuple(dilations),
                 groups=int(attrs.get("group", 1)))
    return V.squeeze(y, 2) if n == 1 else y


def _pool(xs: list[Any], attrs: dict[str, Any], op: str) -> Any:
    x = xs[0]
    n = x.ndim - 2
    kshape = [int(k) for k in attrs["kernel_shape"]]
    strides, dilations, pads, out = _geometry(op, attrs, tuple(x.shape[2:]), kshape)
    x2 = _as_2d(x)
    if n == 1:
        kshape, strides, dilations = [1] + kshape, [1] + strides, [1] + dilations
    begin, end = _pad2(pads, n)
    ceil = bool(attrs.get("ceil_mode", 0))
    if op == "MaxPool":
        if attrs.get("storage_order", 0) not in (0,):
            raise NotImplementedError("MaxPool: storage_order=1 is not supported")
        if any(begin + end):
            low = -math.inf if x2.dtype.is_floating_point else D.iinfo(x2.dtype).min
            x2 = _explicit_pad(x2, begin, end, low)
        y = F.max_pool2d(x2, tuple(kshape), tuple(strides), 0, tuple(dilations), ceil_mode=ceil)
    else:
        if any(d != 1 for d in dilations):
            raise NotImplementedError("AveragePool: dilations are not supported")
        y = F.avg_pool2d(_explicit_pad(x2, begin, end, 0.0) if any(begin + end) else x2, tuple(kshape),
                         tuple(strides), 0, ceil_mode=ceil)
        if any(begin + end) and not attrs.get("count_include_pad", 0):
            # divide by the number of real (unpadded) elements of each window
            mask = _explicit_pad(ones(1, 1, *x2.shape[2:], dtype=x2.dtype), begin, end, 0.0)
            y = E.div(y, F.avg_pool2d(mask, tuple(kshape), tuple(strides), 0, ceil_mode=ceil))
    y = y[(slice(None), slice(None)) + tuple(slice(0, o) for o in ([1] * (n == 1) + list(out)))]
    return V.squeeze(y, 2) if n == 1 else y


KERNELS["MaxPool"] = lambda xs, attrs: _pool(xs, attrs, "MaxPool")
KERNELS["AveragePool"] = lambda xs, attrs: _pool(xs, attrs, "AveragePool")


@kernel("GlobalAveragePool")
def _global_avg(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    return R.mean(x, dim=tuple(range(2, x.ndim)), keepdim=True)


@kernel("GlobalMaxPool")
def _global_max(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    return R.amax(x, dim=tuple(range(2, x.ndim)), keepdim=True)


@kernel("BatchNormalization")
def _batch_norm(xs: list[Any], attrs: dict[str, Any]) -> Any:
    if attrs.get("training_mode", 0):
        raise NotImplementedError("BatchNormalization: training_mode=1 is not supported (inference only)")
    x, scale, bias, mean, var = xs[:5]
    return F.batch_norm(x, mean, var, scale, bias, training=False, eps=float(attrs.get("epsilon", 1e-5)))


@kernel("LayerNormalization")
def _layer_norm(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axis = int(attrs.get("axis", -1)) % x.ndim
    eps = float(attrs.get("epsilon", 1e-5))
    dims = tuple(range(axis, x.ndim))
    mean = R.mean(x, dim=dims, keepdim=True)
    centered = E.sub(x, mean)
    inv_std = E.rsqrt(E.add(R.mean(E.square(centered), dim=dims, keepdim=True), eps))
    y = E.mul(centered, inv_std)
    if len(xs) > 1 and xs[1] is not None:
        y = E.mul(y, xs[1])
    if len(xs) > 2 and xs[2] is not None:
        y = E.add(y, xs[2])
    return y, mean, inv_std


# -- more ops (ONNX backend coverage) -------------------------------------------------------------
@kernel("CastLike")
def _cast_like(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return M.astype(xs[0], xs[1].dtype)


@kernel("IsNaN")
def _isnan(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.isnan(xs[0])


@kernel("IsInf")
def _isinf(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    inf = E.isinf(x)
    if pos and neg:
        return inf
    if not pos and not neg:
        return E.logical_and(inf, False)
    return E.logical_and(inf, E.gt(x, 0) if pos else E.lt(x, 0))


for _op, _fn in (("BitwiseAnd", E.bitwise_and), ("BitwiseOr", E.bitwise_or), ("BitwiseXor", E.bitwise_xor)):
    KERNELS[_op] = _binary(_fn)
KERNELS["BitwiseNot"] = _unary(E.bitwise_not)


@kernel("Selu")
def _selu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    alpha = float(attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(attrs.get("gamma", 1.05070102214813232421875))
    return E.mul(E.where(E.gt(x, 0), x, E.mul(E.expm1(x), alpha)), gamma)


@kernel("Celu")
def _celu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    alpha = float(attrs.get("alpha", 1.0))
    return E.add(E.clamp(x, 0.0, None), E.clamp(E.mul(E.expm1(E.div(x, alpha)), alpha), None, 0.0))


@kernel("Softsign")
def _softsign(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.div(xs[0], E.add(E.abs(xs[0]), 1.0))


@kernel("ThresholdedRelu")
def _thresholded_relu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    return E.where(E.gt(x, float(attrs.get("alpha", 1.0))), x, E.mul(x, 0))


@kernel("Shrink")
def _shrink(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    lambd, bias = float(attrs.get("lambd", 0.5)), float(attrs.get("bias", 0.0))
    zero = E.mul(x, 0)
    out = E.where(E.lt(x, -lambd), E.add(x, bias), E.where(E.gt(x, lambd), E.sub(x, bias), zero))
    return out if out.dtype == x.dtype else M.astype(out, x.dtype)


@kernel("Mish")
def _mish(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.mul(xs[0], E.tanh(E.log1p(E.exp(xs[0]))))


@kernel("Swish")
def _swish(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return E.mul(xs[0], E.sigmoid(E.mul(xs[0], float(attrs.get("alpha", 1.0)))))


@kernel("GatherElements")
def _gather_elements(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, idx = xs
    axis = int(attrs.get("axis", 0)) % x.ndim
    idx = M.astype(E.where(E.lt(idx, 0), E.add(idx, x.shape[axis]), idx), D.int64)
    return gather(x, axis, idx)


@kernel("ScatterElements")
def _scatter_elements(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x, idx, upd = xs
    axis = int(attrs.get("axis", 0)) % x.ndim
    idx = M.astype(E.where(E.lt(idx, 0), E.add(idx, x.shape[axis]), idx), D.int64)
    red = attrs.get("reduction", "none")
    if red == "none":
        return scatter(x, axis, idx, upd)
    return scatter_reduce(x, axis, idx, upd, {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}[red])


@kernel("Trilu")
def _trilu(xs: list[Any], attrs: dict[str, Any]) -> Any:
    k = int(xs[1].item()) if len(xs) > 1 and xs[1] is not None else 0
    return (M.triu if attrs.get("upper", 1) else M.tril)(xs[0], k)


@kernel("CumSum")
def _cumsum(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axis = int(xs[1].item()) % max(x.ndim, 1)
    y = M.flip(x, (axis,)) if attrs.get("reverse", 0) else x
    out = R.cumsum(y, axis)
    if out.dtype != x.dtype:
        out = M.astype(out, x.dtype)
    if attrs.get("exclusive", 0):  # shift by one along the axis, a zero first
        n = y.shape[axis]
        pads = [0, 0] * (x.ndim - 1 - axis) + [1, 0]
        out = V.narrow(F.pad(out, pads, value=0), axis, 0, n)
    return M.flip(out, (axis,)) if attrs.get("reverse", 0) else out


@kernel("Range")
def _range(xs: list[Any], attrs: dict[str, Any]) -> Any:
    start, limit, delta = (x.item() for x in xs)
    n = max(math.ceil((limit - start) / delta), 0)
    return tensor([start + k * delta for k in range(n)], dtype=xs[0].dtype)


@kernel("Pad")
def _pad(xs: list[Any], attrs: dict[str, Any]) -> Any:
    from .shape_inference import pad_amounts

    x = xs[0]
    pads = list(attrs["pads"]) if "pads" in attrs else _ints(xs[1])
    axes = _ints(xs[3]) if len(xs) > 3 and xs[3] is not None else None
    amounts = pad_amounts("Pad", x.ndim, pads, axes)
    value = attrs.get("value", 0.0)
    if len(xs) > 2 and xs[2] is not None:
        value = xs[2].item()
    mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}[
        attrs.get("mode", "constant")]
    flat = [p for b, e in reversed(amounts) for p in (b, e)]
    return F.pad(x, flat, mode=mode, value=value if mode == "constant" else None)


@kernel("Tile")
def _tile(xs: list[Any], attrs: dict[str, Any]) -> Any:
    return M.tile(xs[0], _ints(xs[1]))


@kernel("TopK")
def _topk(xs: list[Any], attrs: dict[str, Any]) -> Any:
    res = S.topk(xs[0], _ints(xs[1])[0], dim=int(attrs.get("axis", -1)), largest=bool(attrs.get("largest", 1)),
                 sorted=bool(attrs.get("sorted", 1)))
    return res[0], res[1]


@kernel("OneHot")
def _one_hot(xs: list[Any], attrs: dict[str, Any]) -> Any:
    idx, depth, values = xs
    depth = int(depth.item())
    idx = M.astype(idx, D.int64)
    idx = E.where(E.lt(idx, 0), E.add(idx, depth), idx)
    axis = int(attrs.get("axis", -1)) % (idx.ndim + 1)
    classes = V.reshape(arange(depth), (depth,) + (1,) * (idx.ndim - axis))
    mask = E.eq(V.unsqueeze(idx, axis), classes)
    flat = V.reshape(values, (-1,))
    return E.where(mask, flat[1], flat[0])


@kernel("Hardmax")
def _hardmax(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axis = int(attrs.get("axis", -1)) % x.ndim
    best = R.argmax(x, dim=axis, keepdim=True)
    classes = V.reshape(arange(x.shape[axis]), (x.shape[axis],) + (1,) * (x.ndim - 1 - axis))
    return M.astype(E.eq(best, classes), x.dtype)


@kernel("LpNormalization")
def _lp_normalization(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    axis, p = int(attrs.get("axis", -1)), int(attrs.get("p", 2))
    norm = L.vector_norm(x, p, dim=axis, keepdim=True)
    return E.where(E.eq(norm, 0), E.mul(x, 0), E.div(x, norm))  # 0 / 0 is 0 here


@kernel("DepthToSpace")
def _depth_to_space(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    bs = int(attrs["blocksize"])
    n, c, h, w = x.shape
    if attrs.get("mode", "DCR") == "DCR":
        y = V.permute(V.reshape(x, (n, bs, bs, c // (bs * bs), h, w)), (0, 3, 4, 1, 5, 2))
    else:
        y = V.permute(V.reshape(x, (n, c // (bs * bs), bs, bs, h, w)), (0, 1, 4, 2, 5, 3))
    return V.reshape(y, (n, c // (bs * bs), h * bs, w * bs))


@kernel("SpaceToDepth")
def _space_to_depth(xs: list[Any], attrs: dict[str, Any]) -> Any:
    x = xs[0]
    bs = int(attrs["blocksize"])
    n, c, h, w = x.shape
    perm = (0, 3, 5, 1, 2, 4) if attrs.get("mode", "DCR") == "DCR" else (0, 1, 3, 5, 2, 4)
    y = V.permute(V.reshape(x, (n, c, h // bs, bs, w // bs, bs)), perm)
    return V.reshape(y, (n, c * bs * bs, h // bs, w // bs))


@kernel("Einsum")
def _einsum(xs: list[Any], attrs: dict[str, Any]) -> Any:
    out = L.einsum(str(attrs["equation"]).replace(" ", ""), *xs)
    return out if out.dtype == xs[0].dtype else M.astype(out, xs[0].dtype)


KERNELS["ReduceLogSum"] = _reducer(R.sum, post=E.log)


# -- prepared kernels (attributes parsed once; see prepare) ----------------------------------------
for _op, _fn in (("Add", E.add), ("Sub", E.sub), ("Mul", E.mul)):
    PREPARERS[_op] = _prepare_binary(_fn)
for _op, _fn in (("Relu", E.relu), ("Sigmoid", E.sigmoid), ("Tanh", E.tanh), ("Exp", E.exp), ("Neg", E.neg),
                 ("Erf", E.erf), ("Sqrt", E.sqrt)):
    PREPARERS[_op] = _prepare_unary(_fn)
PREPARERS["MatMul"] = _prepare_binary(L.matmul)


def _prepare_reshape(node: Node) -> Prepared | None:
    """Reshape: the target shape worked out once per (input shape, shape values)."""
    from .shape_inference import reshape_target

    allowzero = bool(node.attrs.get("allowzero", 0))
    cache: dict[tuple, tuple[int, ...]] = {}

    def run(xs: list[Any]) -> Any:
        x = xs[0]
        raw = tuple(_ints(xs[1])) if len(xs) > 1 else tuple(node.attrs["shape"])
        key = (x.shape, raw)
        target = cache.get(key)
        if target is None:
            target = cache[key] = tuple(reshape_target("Reshape", tuple(x.shape), list(raw), allowzero))
        return V.reshape(x, target)
    return run


def _prepare_transpose(node: Node) -> Prepared | None:
    perm = node.attrs.get("perm")
    if perm is None:
        return None
    perm = [int(p) for p in perm]
    return lambda xs: V.permute(xs[0], perm)


def _prepare_gemm(node: Node) -> Prepared | None:
    attrs = node.attrs
    trans_a, trans_b = bool(attrs.get("transA", 0)), bool(attrs.get("transB", 0))
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    if alpha != 1.0 or beta != 1.0:
        return None

    def run(xs: list[Any]) -> Any:
        a = V.transpose(xs[0], 0, 1) if trans_a else xs[0]
        b = V.transpose(xs[1], 0, 1) if trans_b else xs[1]
        y = L.matmul(a, b)
        return E.add(y, xs[2]) if len(xs) > 2 and xs[2] is not None else y
    return run


def _prepare_softmax(log: bool) -> Callable[[Node], Prepared]:
    def make(node: Node) -> Prepared:
        axis = int(node.attrs.get("axis", -1))
        fn = F.log_softmax if log else F.softmax
        return lambda xs: fn(xs[0], dim=axis)
    return make


PREPARERS.update(Reshape=_prepare_reshape, Transpose=_prepare_transpose, Gemm=_prepare_gemm,
                 Softmax=_prepare_softmax(False), LogSoftmax=_prepare_softmax(True))
