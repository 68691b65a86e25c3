"""The differentiable layer and loss functions of ``torch.nn.functional`` (re-exported from
:mod:`t_tensor.nn.functional`, where they are used as ``F.linear``, ``F.cross_entropy`` ...).

Most are composites of ops that already have gradients (so they need no backward of their own,
and second derivatives come for free):

* ``linear``: ``input @ weight.T + bias``;
* ``dropout``: ``input * mask / (1 - p)`` with ``mask`` drawn from t_tensor's generator (the
  gradient is therefore ``mask / (1 - p)``); the identity when not ``training``;
* ``layer_norm``: centre, divide by ``sqrt(mean(centred^2) + eps)``, scale and shift;
* the losses: ``mse_loss``, ``l1_loss``, ``smooth_l1_loss``, ``binary_cross_entropy`` (logs
  clamped at -100 as PyTorch), ``binary_cross_entropy_with_logits`` (through ``softplus``),
  ``nll_loss`` (the target's log-probability picked with ``where`` over a one-hot mask; weights,
  ``ignore_index`` and reductions as PyTorch, the mean being weighted), ``cross_entropy``
  (``log_softmax`` then ``nll_loss``, with ``label_smoothing``, or probabilities as targets).

``softmax`` and ``log_softmax`` are ``tt.softmax``/``tt.log_softmax`` (differentiable primitives
of the reductions family) with PyTorch's implicit choice of dim. One is a primitive with its own
forward and backward here: ``embedding``, whose
backward adds the output's gradient rows into a zeros table (``index_add_``); that backward is
itself a Function whose backward is ``embedding`` again, so every order works.

>>> import t_tensor as tt
>>> import t_tensor.nn.functional as F
>>> logits = tt.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]], requires_grad=True)
>>> loss = F.cross_entropy(logits, tt.tensor([0, 2]))
>>> round(loss.item(), 4)
0.1755
>>> loss.backward()
>>> [round(v, 4) for v in logits.grad[0].tolist()]
[-0.1072, 0.0876, 0.0196]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from t_tensor import dtypes
from t_tensor import elementwise as E
from t_tensor import linalg as L
from t_tensor import reductions as R
from t_tensor._capi import check, lib
from t_tensor.autograd.function import FUNCTIONS, TRACE_HOOKS, Function
from t_tensor.autograd.grad_mode import no_grad, wants_grad
from t_tensor.creation import arange, rand, zeros
from t_tensor.tensor import Tensor

__all__ = [
    "linear", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax", "dropout", "embedding",
    "layer_norm",
    "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "nll_loss", "cross_entropy",
]  # fmt: skip


def _tensor_arg(value: Any, name: str, fn: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _float_arg(value: Any, name: str, fn: str) -> Tensor:
    _tensor_arg(value, name, fn)
    if not value.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: {name} must have a floating-point dtype, got {value.dtype.name}")
    return value


# ---------------------------------------------------------------------- layers


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """``input @ weight.T + bias``: ``weight`` is ``(out_features, in_features)`` (or 1-D),
    ``input`` is ``(*, in_features)``.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> F.linear(tt.ones(2, 3), tt.ones(4, 3), tt.tensor([0.0, 1.0, 2.0, 3.0])).tolist()
    [[3.0, 4.0, 5.0, 6.0], [3.0, 4.0, 5.0, 6.0]]
    """
    _tensor_arg(input, "input", "linear")
    _tensor_arg(weight, "weight", "linear")
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear: weight must be 1-D or 2-D, got {weight.ndim}-D")
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(f"linear: input of shape {input.shape} cannot be multiplied by a weight of shape "
                           f"{weight.shape} (in_features {weight.shape[-1]})")
    if bias is not None:
        _tensor_arg(bias, "bias", "linear")
    if _one_gemm_linear(input, weight, bias):
        if wants_grad(input, weight, bias):
            return FUNCTIONS["Linear"].apply(input, weight, bias)
        return L._linear(input, weight, bias)
    result = input @ (weight.mT if weight.ndim == 2 else weight)
    if bias is not None:
        result = result + bias
    return result


def _one_gemm_linear(input: Any, weight: Any, bias: Any) -> bool:
    """Whether ``linear`` is one GEMM with the bias in it (``L._linear``): a 2-D input and weight, a
    1-D bias of out_features or none, one float32/float64 dtype, no size 0, and no graph trace
    running (a trace records the product and the add, which the graph passes fuse into a Gemm)."""
    dtype = input._dtype
    return (
        input.ndim == 2 and weight.ndim == 2 and dtype in (dtypes.float32, dtypes.float64)
        and weight._dtype is dtype and 0 not in input._shape and weight._shape[0] > 0
        and (bias is None or (bias._dtype is dtype and bias._shape == weight._shape[:1]))
        and not TRACE_HOOKS
    )


def relu(input: Any, inplace: bool = False) -> Any:
    """``max(input, 0)`` (in place with ``inplace``)."""
    return input.relu_() if inplace else E.relu(input)


def gelu(input: Any, approximate: str = "none") -> Any:
    """Gaussian error linear unit (``approximate="tanh"``: the tanh approximation)."""
    return E.gelu(input, approximate=approximate)


def silu(input: Any, inplace: bool = False) -> Any:
    """``input * sigmoid(input)``."""
    result = E.silu(input)
    if inplace:
        input.copy_(result)
        return input
    return result


def tanh(input: Any) -> Any:
    """Hyperbolic tangent."""
    return E.tanh(input)


def sigmoid(input: Any) -> Any:
    """Logistic sigmoid."""
    return E.sigmoid(input)


def _softmax_dim(ndim: int, dim: Any, fn: str) -> int:
    """PyTorch's implicit dim when ``dim`` is None: 0 for 0-, 1- and 3-D inputs, else 1."""
    from t_tensor import strides as S

    if dim is None:
        dim = 0 if ndim in (0, 1, 3) else 1
    return S.normalize_dim(dim, ndim, fn=fn)


def _softmax_input(input: Any, dtype: Any, fn: str) -> Any:
    """``input`` converted to ``dtype`` first when given (so integers may be given a float dtype)."""
    _tensor_arg(input, "input", fn)
    if dtype is not None:
        input = input.to(dtypes.as_dtype(dtype, fn=fn))
    return _float_arg(input, "input", fn)


def softmax(input: Any, dim: Any = None, dtype: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``dim`` (PyTorch's implicit choice when None).

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> [round(v, 4) for v in F.softmax(tt.tensor([1.0, 2.0, 3.0]), dim=0).tolist()]
    [0.09, 0.2447, 0.6652]
    """
    x = _softmax_input(input, dtype, "softmax")
    dim = _softmax_dim(x.ndim, dim, "softmax")
    return R.softmax(x, dim)  # differentiable (autograd/functions/reductions.py)


def log_softmax(input: Any, dim: Any = None, dtype: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``dim`` (PyTorch's implicit choice when None)."""
    x = _softmax_input(input, dtype, "log_softmax")
    dim = _softmax_dim(x.ndim, dim, "log_softmax")
    return R.log_softmax(x, dim)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    """Zero each element with probability ``p`` and scale the others by ``1 / (1 - p)`` (the
    mask comes from t_tensor's default generator); the input itself when not ``training``.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> y = F.dropout(tt.ones(10000), p=0.25)
    >>> sorted(set(round(v, 4) for v in y.tolist()))
    [0.0, 1.3333]
    >>> F.dropout(tt.ones(3), p=0.25, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    _float_arg(input, "input", "dropout")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        scale = zeros(input.shape, dtype=input.dtype)
    else:
        keep = rand(*input.shape, dtype=dtypes.float64 if input.dtype is dtypes.float64 else dtypes.float32) >= p
        scale = keep.to(input.dtype) * (1.0 / (1.0 - p))
    if inplace:
        return input.mul_(scale)
    return input * scale


class Embedding(Function):
    """Rows of ``weight`` picked by integer ``indices``: ``weight[indices]``."""

    @staticmethod
    def forward(ctx: Any, weight: Any, indices: Any, padding_idx: Any) -> Any:
        ctx.save_for_backward(indices)
        ctx.rows = weight.shape[0]
        ctx.padding_idx = padding_idx
        return weight.index_select(0, indices.reshape(-1)).reshape(indices.shape + weight.shape[1:])

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        (indices,) = ctx.saved_tensors
        return EmbeddingGrad.apply(grad, indices, ctx.rows, ctx.padding_idx), None, None


class EmbeddingGrad(Function):
    """The adjoint of :class:`Embedding`: each row of ``grad`` added into row ``indices[i]`` of a
    zeros table (the ``padding_idx`` row stays zero)."""

    @staticmethod
    def forward(ctx: Any, grad: Any, indices: Any, rows: int, padding_idx: Any) -> Any:
        ctx.save_for_backward(indices)
        ctx.padding_idx = padding_idx
        width = grad.shape[indices.ndim:]
        table = zeros((rows,) + width, dtype=grad.dtype)
        table.index_add_(0, indices.reshape(-1), grad.reshape((indices.numel(),) + width))
        if padding_idx is not None:
            table[padding_idx] = 0.0
        return table

    @staticmethod
    def backward(ctx: Any, g: Any) -> tuple:
        (indices,) = ctx.saved_tensors
        picked = Embedding.apply(g, indices, ctx.padding_idx)
        if ctx.padding_idx is not None:
            keep = (indices != ctx.padding_idx).reshape(indices.shape + (1,) * (picked.ndim - indices.ndim))
            picked = picked * keep
        return picked, None, None, None


def _padding_index(padding_idx: Any, rows: int, fn: str) -> int | None:
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise AssertionError(f"{fn}: padding_idx must be within num_embeddings")
    return padding_idx + rows if padding_idx < 0 else padding_idx


def embedding(input: Any, weight: Any, padding_idx: Any = None, max_norm: Any = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """The rows of ``weight`` (``(num_embeddings, dim)``) at the integer positions ``input``
    (any shape): the result is ``input.shape + (dim,)``. The row ``padding_idx`` gets no gradient.
    (``max_norm``, ``scale_grad_by_freq`` and ``sparse`` are not supported.)

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> table = tt.tensor([[0.0, 0.0], [1.0, 10.0], [2.0, 20.0]])
    >>> F.embedding(tt.tensor([[2, 1], [1, 1]]), table).tolist()
    [[[2.0, 20.0], [1.0, 10.0]], [[1.0, 10.0], [1.0, 10.0]]]
    """
    _tensor_arg(input, "input", "embedding")
    _float_arg(weight, "weight", "embedding")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D, got {weight.ndim}-D")
    if input.dtype.is_floating_point or input.dtype is dtypes.bool:
        raise RuntimeError(f"embedding: Expected tensor for argument #1 'indices' to have an integer dtype, "
                           f"got {input.dtype.name}")
    rows = weight.shape[0]
    padding_idx = _padding_index(padding_idx, rows, "embedding")
    if input.numel():
        low, high = input.min().item(), input.max().item()
        if low < 0 or high >= rows:
            bad = low if low < 0 else high
            raise IndexError(f"embedding: index {bad} is out of range for a weight with {rows} rows")
    return Embedding.apply(weight, input, padding_idx)  # records only when weight requires grad


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalize over the last ``len(normalized_shape)`` dims (to mean 0, variance 1, with the
    biased variance), then ``* weight + bias``.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> [round(v, 4) for v in F.layer_norm(tt.tensor([1.0, 2.0, 3.0]), (3,)).tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    _float_arg(input, "input", "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(shape)
    if n == 0 or input.shape[input.ndim - n:] != shape or input.ndim < n:
        raise RuntimeError(f"layer_norm: Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size {list(input.shape)}")
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and _tensor_arg(value, name, "layer_norm").shape != shape:
            raise RuntimeError(f"layer_norm: {name} of shape {value.shape} does not match normalized_shape {shape}")
    cols = math.prod(shape)
    if _layer_norm_kernel_takes(input, cols, weight, bias):
        if wants_grad(input, weight, bias):
            return FUNCTIONS["LayerNorm"].apply(input, shape, weight, bias, float(eps))
        return _layer_norm_kernel(input, cols, weight, bias, float(eps))[0]
    dims = tuple(range(input.ndim - n, input.ndim))
    return _scale_shift(_layer_norm_x_hat(input, dims, eps)[0], weight, bias)


def _layer_norm_x_hat(input: Any, dims: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """(x_hat, invstd): ``(x - mean) * invstd`` with ``invstd = 1 / sqrt(var + eps)`` over `dims`
    (kept as size 1), with differentiable tensor ops."""
    centred = input - input.mean(dims, keepdim=True)
    invstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    return centred * invstd, invstd


def _scale_shift(x_hat: Any, weight: Any, bias: Any) -> Any:
    """``x_hat * weight + bias`` (either may be None), broadcast over the trailing dims."""
    result = x_hat if weight is None else x_hat * weight
    return result if bias is None else result + bias


def _layer_norm_kernel_takes(input: Any, cols: int, weight: Any, bias: Any) -> bool:
    """Whether tt_layer_norm_forward / _backward take this call: a float32 or float64 input with
    rows to normalize, and weight and bias (when given) contiguous, of the input's dtype."""
    dtype = input._dtype
    return (dtype is dtypes.float32 or dtype is dtypes.float64) and cols > 0 and all(
        t is None or (t._dtype is dtype and t.is_contiguous()) for t in (weight, bias))


def _address(t: Any) -> int:
    """A tensor's data address for C, or 0 for None (an optional argument left out)."""
    return 0 if t is None else t.data_ptr()


def _layer_norm_kernel(input: Any, cols: int, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
    """(y, mean, invstd) of layer_norm in one C call (tt_layer_norm_forward); mean and invstd
    are one value per row of `cols` normalized elements."""
    x = input.contiguous()
    rows, new = x.numel() // cols, type(x)._empty
    y = new(x._shape, x._dtype, "layer_norm")
    mean, invstd = new((rows,), x._dtype, "layer_norm"), new((rows,), x._dtype, "layer_norm")
    check(lib.tt_layer_norm_forward(x._dtype.code, rows, cols, x.data_ptr(), eps, _address(weight), _address(bias),
                                    y.data_ptr(), mean.data_ptr(), invstd.data_ptr()), "layer_norm")
    return y, mean, invstd


class LayerNorm(Function):
    """layer_norm of a float32 or float64 input. Per row of the normalized elements, with
    x_hat = (x - mean) * invstd, y = x_hat * w + b and g = dy * w: dx = invstd * (g - mean(g) -
    x_hat * mean(g * x_hat)), dw = sum of dy * x_hat and db = sum of dy over the rows. Forward and
    backward are one C call each (tt_layer_norm_forward / _backward; the seven tensor ops they
    replace took 4.7x torch's time forward). When recording (create_graph), the backward
    recomputes x_hat from the input with differentiable ops, so it has derivatives of its own."""

    @staticmethod
    def forward(ctx: Any, input: Any, normalized_shape: tuple[int, ...], weight: Any, bias: Any, eps: float) -> Any:
        cols = math.prod(normalized_shape)
        y, mean, invstd = _layer_norm_kernel(input, cols, weight, bias, eps)
        ctx.cols, ctx.ndims, ctx.eps = cols, len(normalized_shape), eps
        ctx.save_for_backward(input, mean, invstd, weight)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        input, mean, invstd, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if grad._dtype is input._dtype and not wants_grad(grad, input, weight):
            dy, x, new = grad.contiguous(), input.contiguous(), type(grad)._empty
            dx = new(dy._shape, dy._dtype, "layer_norm_backward") if needs[0] else None
            dw = new(weight._shape, dy._dtype, "layer_norm_backward") if needs[2] else None
            db = new(weight._shape if weight is not None else x._shape[x.ndim - ctx.ndims:], dy._dtype,
                     "layer_norm_backward") if needs[3] else None
            check(lib.tt_layer_norm_backward(dy._dtype.code, x.numel() // ctx.cols, ctx.cols, dy.data_ptr(),
                                             x.data_ptr(), mean.data_ptr(), invstd.data_ptr(), _address(weight),
                                             _address(dx), _address(dw), _address(db)), "layer_norm_backward")
            return dx, None, dw, db, None
        nd = input.ndim
        dims, leading = tuple(range(nd - ctx.ndims, nd)), tuple(range(nd - ctx.ndims))
        x_hat, row_invstd = _layer_norm_x_hat(input, dims, ctx.eps)
        grad_input = grad_weight = grad_bias = None
        if needs[0]:
            g = grad if weight is None else grad * weight
            grad_input = row_invstd * (g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True))
        if needs[2]:
            grad_weight = (grad * x_hat).sum(leading) if leading else grad * x_hat
        if needs[3]:
            grad_bias = grad.sum(leading) if leading else grad
        return grad_input, None, grad_weight, grad_bias, None


# ---------------------------------------------------------------------- losses

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: Any) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _pointwise_args(input: Any, target: Any, fn: str, reduction: Any) -> str:
    _float_arg(input, "input", fn)
    _float_arg(target, "target", fn)
    return _check_reduction(reduction)


def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Any:
    """``(input - target)^2``, reduced (``"mean"``, ``"sum"`` or ``"none"``); shapes broadcast.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> F.mse_loss(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 4.0])).item()
    2.0
    """
    reduction = _pointwise_args(input, target, "mse_loss", reduction)
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input: Any, target: Any, reduction: str = "mean") -> Any:
    """``|input - target|``, reduced."""
    reduction = _pointwise_args(input, target, "l1_loss", reduction)
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input: Any, target: Any, reduction: str = "mean", beta: float = 1.0) -> Any:
    """``0.5 d^2 / beta`` where ``d = |input - target| < beta``, else ``d - 0.5 beta``; reduced.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> F.smooth_l1_loss(tt.tensor([0.5, 3.0]), tt.zeros(2), reduction="none").tolist()
    [0.125, 2.5]
    """
    reduction = _pointwise_args(input, target, "smooth_l1_loss", reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(E.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _same_size(input: Any, target: Any, fn: str) -> None:
    if target.shape != input.shape:
        raise ValueError(f"{fn}: Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")


def binary_cross_entropy(input: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Any:
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x`` in [0, 1] (each log is
    clamped at -100, as PyTorch), times ``weight``; reduced.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> round(F.binary_cross_entropy(tt.tensor([0.8, 0.3]), tt.tensor([1.0, 0.0])).item(), 4)
    0.2899
    """
    reduction = _pointwise_args(input, target, "binary_cross_entropy", reduction)
    _same_size(input, target, "binary_cross_entropy")
    if input.numel():
        with no_grad():
            low, high = input.min().item(), input.max().item()
        if not (0.0 <= low and high <= 1.0):
            raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 and 1")
    log_x = E.clamp_min(input.log(), -100.0)
    log_1mx = E.clamp_min((1.0 - input).log(), -100.0)
    loss = -(target * log_x + (1.0 - target) * log_1mx)
    if weight is not None:
        loss = loss * _tensor_arg(weight, "weight", "binary_cross_entropy")
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Any:
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits:
    ``pos_weight * t * softplus(-x) + (1 - t) * softplus(x)``, times ``weight``; reduced.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> round(F.binary_cross_entropy_with_logits(tt.tensor([2.0, -1.0]), tt.tensor([1.0, 0.0])).item(), 3)
    0.22
    """
    fn = "binary_cross_entropy_with_logits"
    reduction = _pointwise_args(input, target, fn, reduction)
    _same_size(input, target, fn)
    positive = E.softplus(-input)   # -log(sigmoid(x))
    negative = E.softplus(input)    # -log(1 - sigmoid(x))
    if pos_weight is not None:
        positive = positive * _tensor_arg(pos_weight, "pos_weight", fn)
    loss = target * positive + (1.0 - target) * negative
    if weight is not None:
        loss = loss * _tensor_arg(weight, "weight", fn)
    return _reduce(loss, reduction)


def _class_targets(input: Any, target: Any, ignore_index: int, fn: str) -> tuple[Any, Any, int]:
    """Check ``target`` against ``input`` ``(N, C, *)`` or ``(C,)``; returns the one-hot mask of
    the targets (shaped like ``input``), the mask of non-ignored targets, and C."""
    if target.dtype.is_floating_point or target.dtype is dtypes.bool:
        raise RuntimeError(f"{fn}: expected target of an integer dtype (class indices), got {target.dtype.name}")
    if input.ndim == 0:
        raise ValueError(f"{fn}: input tensor should be 1D or more, got a 0-D tensor")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(f"{fn}: 0D or 1D target tensor expected, multi-target not supported")
    else:
        if target.ndim == 0 or input.shape[0] != target.shape[0]:
            got = target.shape[0] if target.ndim else "a 0-D target"
            raise ValueError(f"{fn}: Expected input batch_size ({input.shape[0]}) to match target batch_size ({got}).")
        if target.shape != input.shape[:1] + input.shape[2:]:
            raise RuntimeError(f"{fn}: expected target of shape {input.shape[:1] + input.shape[2:]}, "
                               f"got {target.shape}")
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    valid = target != ignore_index
    safe = target.where(valid, 0)  # ignored targets point at class 0 (and are masked out by valid)
    if target.numel():
        low, high = safe.min().item(), safe.max().item()
        if low < 0 or high >= classes:
            raise IndexError(f"{fn}: Target {low if low < 0 else high} is out of bounds.")
    class_dim = 0 if input.ndim == 1 else 1
    class_shape = [1] * input.ndim
    class_shape[class_dim] = classes
    onehot = safe.unsqueeze(class_dim) == arange(classes).reshape(class_shape)
    return onehot, valid, classes


def _class_weight(weight: Any, classes: int, fn: str) -> Any:
    if weight is None:
        return None
    _float_arg(weight, "weight", fn)
    if weight.shape != (classes,):
        raise RuntimeError(f"{fn}: weight tensor should be defined either for all {classes} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")
    return weight.detach()  # PyTorch gives no gradient to the class weights


def _broadcast_classes(values: Any, ndim: int, class_dim: int) -> Any:
    """A (C,) vector shaped to broadcast along ``class_dim`` of an ``ndim``-D tensor."""
    shape = [1] * ndim
    shape[class_dim] = values.shape[0]
    return values.reshape(shape)


def nll_loss(input: Any, target: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> Any:
    """Negative log-likelihood: ``-input[n, target[n]] * weight[target[n]]`` for log-probabilities
    ``input`` ``(N, C, *)`` (or ``(C,)``) and class indices ``target`` ``(N, *)``; targets equal to
    ``ignore_index`` count for nothing. ``"mean"`` divides by the sum of the weights used.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> logp = tt.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> F.nll_loss(logp, tt.tensor([1, 0]), reduction="none").tolist()
    [1.0, 2.0]
    """
    _float_arg(input, "input", "nll_loss")
    _tensor_arg(target, "target", "nll_loss")
    return _nll(input, target, weight, ignore_index, _check_reduction(reduction), 0.0, "nll_loss")


def _plain_class_batch(input: Any, target: Any, ignore_index: int, fn: str) -> bool:
    """The common case of class indices: a batch ``(N, C)``, N > 0, and int64 indices ``(N,)`` of
    which none equals ``ignore_index``. A target outside [0, C) raises, as in the general path."""
    if input.ndim != 2 or target.ndim != 1 or target._dtype is not dtypes.int64 or target.shape[0] != input.shape[0]:
        return False
    if target.shape[0] == 0:
        return False
    indices = np.asarray(target)  # zero-copy; NumPy's min and max of a small int64 array cost
    low, high = int(indices.min()), int(indices.max())  # a quarter of two reductions and two syncs
    if low <= ignore_index <= high:
        return False  # some target may be ignored
    if low < 0 or high >= input.shape[1]:
        raise IndexError(f"{fn}: Target {low if low < 0 else high} is out of bounds.")
    return True


def _picked_log_probabilities(logp: Any, target: Any, ignore_index: int, fn: str) -> Any:
    """``logp[n, target[n]]`` in the plain case (``_plain_class_batch``), through one gather (a
    primitive with its own backward): a few ops instead of the one-hot mask's twenty. None in any
    other case (the general path then checks and computes it)."""
    if not _plain_class_batch(logp, target, ignore_index, fn):
        return None
    return logp.gather(1, target.unsqueeze(1)).squeeze(1)


def _reduce_loss(loss: Any, reduction: str) -> Any:
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


_REDUCTION_CODES = {"none": 0, "sum": 1, "mean": 2}


def _cross_entropy_plain(input: Any, target: Any, reduction: str) -> Any:
    """cross_entropy of logits ``(N, C)`` and class indices in the plain case: log_softmax, then
    the pick and the reduction (the forward of the ``CrossEntropy`` primitive)."""
    return _pick_and_reduce(R.log_softmax(input, 1), target, reduction)


def _pick_and_reduce(logp: Any, target: Any, reduction: str) -> Any:
    """``-logp[n, target[n]]`` reduced: one C call (``tt_nll_pick``) for float32 and float64, a
    gather, a negation and the reduction for other dtypes."""
    dtype = logp._dtype
    if dtype is not dtypes.float32 and dtype is not dtypes.float64:
        return _reduce_loss(-logp.gather(1, target.unsqueeze(1)).squeeze(1), reduction)
    n, c = logp._shape
    result = type(logp)._empty((n,) if reduction == "none" else (), dtype, "cross_entropy")
    status = lib.tt_nll_pick(dtype.code, n, c, logp.data_ptr(), logp._strides[0], logp._strides[1],
                             target.data_ptr(), target._strides[0], _REDUCTION_CODES[reduction], result.data_ptr())
    check(status, "cross_entropy")
    return result


class CrossEntropy(Function):
    """cross_entropy in the plain class-index case as one node: forward log_softmax and the pick,
    backward ``(softmax(x) - onehot(target)) * dloss`` (over N for the mean). With nothing
    recording, the backward of a float32/float64 input is one C pass over the saved
    log-probabilities (``tt_cross_entropy_backward``: ``exp(logp)`` is the softmax); a
    ``create_graph`` backward builds it from differentiable ops on the saved logits, so it has
    second derivatives."""

    @staticmethod
    def forward(ctx: Any, input: Any, target: Any, reduction: str) -> Any:
        logp = R.log_softmax(input, 1)
        ctx.save_for_backward(input, target, logp)  # saved: freed with the graph's other tensors
        ctx.reduction = reduction
        return _pick_and_reduce(logp, target, reduction)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        input, target, logp = ctx.saved_tensors
        dtype = logp._dtype
        if (dtype is dtypes.float32 or dtype is dtypes.float64) and grad._dtype is dtype and logp._is_dense() and (
                not wants_grad(grad, input)):
            n, c = logp._shape
            result = type(logp)._empty((n, c), dtype, "cross_entropy")
            status = lib.tt_cross_entropy_backward(
                dtype.code, n, c, logp.data_ptr(), target.data_ptr(), target._strides[0], grad.data_ptr(),
                grad._strides[0] if ctx.reduction == "none" else 0, float(n) if ctx.reduction == "mean" else 1.0,
                result.data_ptr(),
            )
            check(status, "cross_entropy")
            return result, None, None
        classes = arange(input.shape[1]).reshape(1, input.shape[1])
        probs = R.softmax(input, 1)
        diff = E.where(target.unsqueeze(1) == classes, probs - 1.0, probs)
        if ctx.reduction == "none":
            scale = grad.unsqueeze(1)
        else:
            scale = grad if ctx.reduction == "sum" else grad / input.shape[0]
        return diff * scale, None, None


def _nll(logp: Any, target: Any, weight: Any, ignore_index: int, reduction: str, label_smoothing: float,
         fn: str) -> Any:
    """nll_loss of log-probabilities and class indices, mixed with the uniform-target loss
    ``-sum(logp * weight) / C`` when ``label_smoothing`` (PyTorch's formula for cross_entropy)."""
    if weight is None and not label_smoothing:
        picked = _picked_log_probabilities(logp, target, ignore_index, fn)
        if picked is not None:
            return _reduce_loss(-picked, reduction)
    onehot, valid, classes = _class_targets(logp, target, ignore_index, fn)
    class_dim = 0 if logp.ndim == 1 else 1
    weight = _class_weight(weight, classes, fn)
    picked = E.where(onehot, logp, 0.0).sum(class_dim)
    if weight is None:
        used = valid.to(logp.dtype)
    else:
        weight = _broadcast_classes(weight, logp.ndim, class_dim)
        used = E.where(onehot, weight, 0.0).sum(class_dim) * valid
    loss = -picked * used
    if label_smoothing:
        smooth = -(logp if weight is None else logp * weight).sum(class_dim) * valid
        loss = (1.0 - label_smoothing) * loss + smooth * (label_smoothing / classes)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    total = used.sum()
    if total.item() == 0:  # every target ignored (or zero weights): NaN, as PyTorch, with zero gradients
        return loss.sum() * 0.0 + math.nan
    return loss.sum() / total


def cross_entropy(input: Any, target: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Any:
    """``nll_loss(log_softmax(input, 1), target)`` for logits ``input`` ``(N, C, *)`` or ``(C,)``.

    ``target`` holds class indices (integers, with ``weight``, ``ignore_index``), or class
    probabilities (floats, shaped like ``input``). ``label_smoothing`` mixes the target with the
    uniform distribution: ``(1 - s) * target + s / C``.

    >>> import t_tensor as tt
    >>> import t_tensor.nn.functional as F
    >>> logits = tt.tensor([[1.0, 2.0, 0.5]])
    >>> round(F.cross_entropy(logits, tt.tensor([1])).item(), 4)
    0.4644
    >>> round(F.cross_entropy(logits, tt.tensor([[0.0, 1.0, 0.0]])).item(), 4)
    0.4644
    """
    fn = "cross_entropy"
    _float_arg(input, "input", fn)
    _tensor_arg(target, "target", fn)
    reduction = _check_reduction(reduction)
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float)) or not (
            0.0 <= label_smoothing <= 1.0):
        raise RuntimeError(f"{fn}: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 0:
        raise ValueError(f"{fn}: input tensor should be 1D or more, got a 0-D tensor")
    if (weight is None and not label_smoothing and not target.dtype.is_floating_point
            and _plain_class_batch(input, target, ignore_index, fn)):
        if wants_grad(input):
            return CrossEntropy.apply(input, target, reduction)
        return _cross_entropy_plain(input, target, reduction)
    logp = log_softmax(input, 0 if input.ndim == 1 else 1)
    if target.dtype.is_floating_point:
        return _cross_entropy_probabilities(logp, target, weight, ignore_index, reduction, label_smoothing)
    return _nll(logp, target, weight, ignore_index, reduction, label_smoothing, fn)


def _cross_entropy_probabilities(logp: Any, target: Any, weight: Any, ignore_index: int, reduction: str,
                                 label_smoothing: float) -> Any:
    fn = "cross_entropy"
    if target.shape != logp.shape:
        raise RuntimeError(f"{fn}: expected a probability target of the input's shape {logp.shape}, "
                           f"got {target.shape}")
    if ignore_index >= 0:
        raise RuntimeError(f"{fn}: ignore_index is not supported for floating point target")
    class_dim = 0 if logp.ndim == 1 else 1
    classes = logp.shape[class_dim]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / classes
    product = logp * target
    weight = _class_weight(weight, classes, fn)
    if weight is not None:
        product = product * _broadcast_classes(weight, logp.ndim, class_dim)
    if reduction == "none":
        return -product.sum(class_dim)
    if reduction == "sum":
        return -product.sum()
    count = logp.numel() // classes if classes else 0
    return -product.sum() / count if count else -product.sum() * math.nan
