"""Derivatives of the reductions.

A sum sends every output gradient back to each element it summed: the gradient is reshaped to
the keepdim shape and expanded over the reduced dimensions (a view, no copy). A mean does the
same divided by the count.
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import elementwise as E
from t_tensor import reductions as R
from t_tensor import strides as S
from t_tensor.autograd.function import Function

__all__ = ["Cumulative", "Extremum", "Logsumexp", "MaxMinDim", "Mean", "Prod", "Softmax", "Std", "Sum", "VectorNorm"]


def _no_out(out: Any, fn: str) -> None:
    if out is not None:
        raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")


def _keep_shape(x: Any, dim: Any, axis: Any, fn: str) -> tuple[tuple[int, ...], int]:
    """The input shape with the reduced dims set to 1, and how many elements each output summed."""
    dims = R._reduced_dims(x, R._alias(dim, axis, "dim", "axis", fn, None), fn)
    keep = tuple(1 if d in dims else n for d, n in enumerate(x._shape))
    return keep, math.prod(x._shape[d] for d in dims)


class Sum(Function):
    """sum and nansum (``fn``): nansum sends no gradient to its NaNs."""

    @staticmethod
    def forward(ctx: Any, x: Any, fn: str, dim: Any, keepdim: Any, dtype: Any, axis: Any, keepdims: Any,
                out: Any) -> Any:
        _no_out(out, fn)
        ctx.keep_shape, _ = _keep_shape(x, dim, axis, fn)
        ctx.shape = x._shape
        if fn == "nansum":
            ctx.save_for_backward(x)
        ctx.fn = fn
        return getattr(R, fn)(x, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        g = grad.reshape(ctx.keep_shape).expand(ctx.shape)
        if ctx.fn == "nansum":
            (x,) = ctx.saved_tensors
            g = g.where(x.isnan().logical_not(), 0.0)
        return (g,) + (None,) * 7


class Mean(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, dim: Any, keepdim: Any, dtype: Any, axis: Any, keepdims: Any, out: Any) -> Any:
        _no_out(out, "mean")
        ctx.keep_shape, ctx.count = _keep_shape(x, dim, axis, "mean")
        ctx.shape = x._shape
        return R.mean(x, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        g = grad.reshape(ctx.keep_shape).expand(ctx.shape) / max(ctx.count, 1)
        return (g,) + (None,) * 6


def _kept(t: Any, keep_shape: tuple[int, ...]) -> Any:
    """``t`` (a reduction's output or its gradient) with the reduced dims back as size 1."""
    return t.reshape(keep_shape)


def _reduced(keep_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dims of size 1 in a keepdim shape: the reduced dims (and maybe dims that had size 1,
    over which a sum changes nothing)."""
    return tuple(d for d, k in enumerate(keep_shape) if k == 1)


class Softmax(Function):
    """softmax and log_softmax along one dim: ``dx = y (g - sum(g y))`` and ``dx = g - softmax(x) sum(g)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, fn: str, log: bool, dim: Any, dtype: Any, out: Any) -> Any:
        _no_out(out, fn)
        y = R._softmax(fn, log, x, dim, dtype)
        ctx.log = log
        ctx.dim = S.normalize_dim(dim, x.ndim, fn=fn) if x.ndim else None
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        (y,) = ctx.saved_tensors
        d = ctx.dim
        if ctx.log:
            g = grad - y.exp() * grad.sum(d, keepdim=True)
        else:
            g = y * (grad - (grad * y).sum(d, keepdim=True))
        return (g,) + (None,) * 5


class MaxMinDim(Function):
    """max(x, dim) and min(x, dim): the values' gradient goes to the element each index names."""

    @staticmethod
    def forward(ctx: Any, x: Any, fn: str, dim: Any, keepdim: bool, out: Any) -> Any:
        _no_out(out, fn)
        values, indices = R._max_min(fn, x, dim, keepdim, None, None)
        ctx.mark_non_differentiable(indices)
        ctx.shape = x._shape
        ctx.dim = S.normalize_dim(dim, x.ndim, fn=fn)
        ctx.keepdim = keepdim
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Any, grad: Any, _grad_indices: Any) -> tuple:
        from t_tensor.creation import arange

        (indices,) = ctx.saved_tensors
        if not ctx.shape:
            return grad, None, None, None, None
        d = ctx.dim
        if not ctx.keepdim:
            grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
        positions = arange(ctx.shape[d]).reshape(tuple(-1 if k == d else 1 for k in range(len(ctx.shape))))
        return E.where(positions == indices, grad, 0.0), None, None, None, None


class Extremum(Function):
    """max/min over everything, amax and amin: the gradient is shared evenly between the elements
    equal to the result (as PyTorch; when the result is NaN, between the NaNs)."""

    @staticmethod
    def forward(ctx: Any, x: Any, fn: str, dim: Any, keepdim: Any, out: Any) -> Any:
        _no_out(out, fn)
        if fn in ("max", "min"):
            result = R._max_min(fn, x, None, keepdim, None, None)
            ctx.keep_shape = (1,) * x.ndim
        else:
            result = getattr(R, fn)(x, dim, keepdim)
            ctx.keep_shape, _ = _keep_shape(x, dim, None, fn)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x, result = ctx.saved_tensors
        r = _kept(result, ctx.keep_shape)
        mask = E.logical_or(x == r, E.logical_and(x.isnan(), r.isnan()))   # a NaN result: the NaNs share it
        count = mask.sum(_reduced(ctx.keep_shape), keepdim=True) if x.ndim else 1
        return E.where(mask, _kept(grad, ctx.keep_shape) / count, 0.0), None, None, None, None


class Prod(Function):
    """prod: ``dx_i = g * prod_{j != i} x_j``. Without zeros that is ``g * result / x_i``; with a
    zero in the input, the products of the others are computed without division, as exclusive
    cumulative products from both ends of each reduced slice (as PyTorch), so zeros are exact to
    the second order too."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: Any, keepdim: Any, dtype: Any, axis: Any, keepdims: Any, out: Any) -> Any:
        _no_out(out, "prod")
        ctx.keep_shape, _ = _keep_shape(x, dim, axis, "prod")
        result = R.prod(x, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x, result = ctx.saved_tensors
        g = _kept(grad, ctx.keep_shape)
        if not (x == 0).any().item():
            return (g * _kept(result, ctx.keep_shape) / x,) + (None,) * 6
        return (g * _products_of_others(x, _reduced(ctx.keep_shape) if x.ndim else ()),) + (None,) * 6


def _products_of_others(x: Any, dims: tuple[int, ...]) -> Any:
    """For each element, the product of the other elements of its slice over ``dims``: the
    reduced dims are moved last and flattened, then exclusive cumulative products from the
    left and from the right are multiplied."""
    from t_tensor.creation import ones
    from t_tensor.manipulation import cat

    if not x.ndim:
        return ones((), dtype=x.dtype)
    kept = [d for d in range(x.ndim) if d not in dims]
    order = kept + list(dims)
    moved = x.permute(order)
    lines = moved.reshape(tuple(x.shape[d] for d in kept) + (-1,))
    one = ones(lines.shape[:-1] + (1,), dtype=x.dtype)
    left = cat([one, lines[..., :-1]], -1).cumprod(-1)
    right = cat([one, lines.flip(-1)[..., :-1]], -1).cumprod(-1).flip(-1)
    inverse = [0] * x.ndim
    for position, d in enumerate(order):
        inverse[d] = position
    return (left * right).reshape(moved.shape).permute(inverse)


class Std(Function):
    """The square root of a variance with PyTorch's convention for std: where the std is 0 the
    gradient is 0 (not infinite)."""

    @staticmethod
    def forward(ctx: Any, variance: Any) -> Any:
        s = E.sqrt(variance)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (s,) = ctx.saved_tensors
        zero = s == 0
        return E.where(zero, 0.0, grad / (2.0 * E.where(zero, 1.0, s)))


class Logsumexp(Function):
    """logsumexp: ``dx = g * exp(x - result)`` (the softmax over the reduced dims)."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: Any, keepdim: Any, axis: Any, keepdims: Any, out: Any) -> Any:
        _no_out(out, "logsumexp")
        ctx.keep_shape, _ = _keep_shape(x, dim, axis, "logsumexp")
        result = R.logsumexp(x, dim, keepdim, axis=axis, keepdims=keepdims)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x, result = ctx.saved_tensors
        return (_kept(grad, ctx.keep_shape) * (x - _kept(result, ctx.keep_shape)).exp(),) + (None,) * 5


class VectorNorm(Function):
    """vector_norm (and the norms built on it). ord 2: ``g x / |x|`` (0 where the norm is 0, as
    PyTorch); 1: ``g sign(x)``; +-inf: shared evenly between the elements of largest (smallest)
    magnitude; 0: no gradient (zeros); other p: ``g sign(x) |x|^(p-1) / |x|_p^(p-1)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, ord: Any, dim: Any, keepdim: Any, dtype: Any, axis: Any, keepdims: Any) -> Any:
        ctx.keep_shape, _ = _keep_shape(x, dim, axis, "vector_norm")
        ctx.ord = ord
        result = R.vector_norm(x, ord, dim, keepdim, dtype=dtype, axis=axis, keepdims=keepdims)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x, result = ctx.saved_tensors
        p = ctx.ord
        g, r = _kept(grad, ctx.keep_shape), _kept(result, ctx.keep_shape)
        if p == 0:
            dx = x * g * 0.0
        elif p == 1:
            dx = g * x.sign()
        elif p in (math.inf, -math.inf):
            mask = x.abs() == r
            count = mask.sum(_reduced(ctx.keep_shape), keepdim=True) if x.ndim else 1
            dx = E.where(mask, g * x.sign() / count, 0.0)
        else:
            zero = r == 0
            safe = E.where(zero, 1.0, r)
            scaled = x / safe if p == 2 else x.sign() * (x.abs() / safe) ** (p - 1)
            dx = E.where(zero, 0.0, g * scaled)
        return (dx,) + (None,) * 6


class Cumulative(Function):
    """cumsum: ``dx`` is the reversed cumulative sum of ``g``. cumprod: ``dx_i = sum_{k >= i} g_k
    prod_{j <= k, j != i} x_j``; before the first zero of a line that is the reversed cumulative
    sum of ``g * y`` divided by ``x_i``; at the first zero it is the same sum for the cumulative
    product with that zero replaced by 1; after it, 0 (every product holds the zero)."""

    @staticmethod
    def forward(ctx: Any, x: Any, fn: str, dim: Any, dtype: Any, out: Any) -> Any:
        _no_out(out, fn)
        y = getattr(R, fn)(x, dim, dtype=dtype)
        ctx.fn = fn
        ctx.dim = S.normalize_dim(dim, x.ndim, fn=fn)
        ctx.save_for_backward(x if fn == "cumprod" else None, y if fn == "cumprod" else None)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x, y = ctx.saved_tensors
        if grad.ndim == 0:
            return grad, None, None, None, None
        d = ctx.dim
        if ctx.fn == "cumsum":
            return _reverse_cumsum(grad, d), None, None, None, None
        zero = x == 0
        seen = zero.cumsum(d)                                   # zeros up to and including each position
        first = E.logical_and(zero, seen == 1)
        before = _reverse_cumsum(grad * y, d) / E.where(zero, 1.0, x)
        at_first = _reverse_cumsum(grad * E.where(first, 1.0, x).cumprod(d), d)
        return E.where(seen == 0, before, E.where(first, at_first, 0.0)), None, None, None, None


def _reverse_cumsum(t: Any, d: int) -> Any:
    """``out_i = sum_{k >= i} t_k`` along ``d``."""
    return t.flip(d).cumsum(d).flip(d)
