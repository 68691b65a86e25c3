"""Derivatives of the reductions.

A sum sends every output gradient back to each element it summed: the gradient is reshaped to
the keepdim shape and expanded over the reduced dimensions (a view, no copy). A mean does the
same divided by the count.
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import reductions as R
from t_tensor.autograd.function import Function

__all__ = ["Mean", "Sum"]


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
