"""Derivatives of the manipulation ops (joining, repeating, reversing, padding, triangles).

* ``cat`` (and everything built on it: ``stack``, ``hstack``, ...): each input gets the slice of
  the gradient it filled (``narrow``, a view);
* every per-axis gather (``flip``, ``roll``, ``tile``/``repeat``, ``repeat_interleave``, the
  reflect/replicate/circular ``pad`` modes) goes through :class:`GatherAxes`, whose adjoint adds
  the gradient back along each axis with ``index_add`` (repeated sources sum up);
* constant ``pad``: the adjoint of padding by ``(l, r)`` is padding by ``(-l, -r)`` (a crop;
  cropped input elements get 0);
* ``tril``/``triu``: the same triangle of the gradient; ``diag_embed`` (and ``diag`` of a vector):
  the diagonal of the gradient.

Every backward is made of differentiable ops, so second-order gradients work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from t_tensor import manipulation as M
from t_tensor import strides as S
from t_tensor.autograd.function import Function

__all__ = ["Cat", "DiagEmbed", "GatherAxes", "PadConstant", "Triangle"]


class Cat(Function):
    """cat along ``dim`` of ``tensors`` (1-D empty tensors, which cat skips, get an empty gradient)."""

    @staticmethod
    def forward(ctx: Any, dim: int, *tensors: Any) -> Any:
        result = M.cat(list(tensors), dim)
        # every input a skipped 1-D empty tensor: the (0,) result ignores dim, as in PyTorch
        skipped_all = all(t._shape == (0,) for t in tensors)
        ctx.dim = 0 if skipped_all or not result.ndim else S.normalize_dim(dim, result.ndim, fn="cat")
        ctx.sizes = [None if t._shape == (0,) and result._shape != (0,) else t._shape for t in tensors]
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        from t_tensor.creation import zeros

        d, offset, grads = ctx.dim, 0, []
        for shape, need in zip(ctx.sizes, ctx.needs_input_grad[1:], strict=True):
            if shape is None:
                grads.append(zeros((0,), dtype=grad.dtype) if need else None)
                continue
            grads.append(grad.narrow(d, offset, shape[d]) if need else None)
            offset += shape[d]
        return (None, *grads)


class GatherAxes(Function):
    """``out[i_0, ..., i_n] = x[tables[0][i_0], ..., tables[n][i_n]]``: the adjoint sends each
    output element's gradient back to its source, one axis at a time (``index_add``)."""

    @staticmethod
    def forward(ctx: Any, x: Any, out_shape: tuple[int, ...], tables: Any, fn: str) -> Any:
        ctx.shape = x._shape
        ctx.tables = [np.asarray(t, dtype=np.int64) for t in tables]
        return M._gather(x, out_shape, tables, fn)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        from t_tensor.creation import tensor, zeros
        from t_tensor.indexing import index_add

        if 0 in grad.shape:
            return zeros(ctx.shape, dtype=grad.dtype), None, None, None
        for d, (table, n) in enumerate(zip(ctx.tables, ctx.shape, strict=True)):
            if table.size == n and np.array_equal(table, np.arange(n)):
                continue
            shape = grad.shape[:d] + (n,) + grad.shape[d + 1 :]
            grad = index_add(zeros(shape, dtype=grad.dtype), d, tensor(table), grad)
        return grad, None, None, None


class PadConstant(Function):
    """Constant padding by ``amounts`` (negative ones crop): the gradient is cropped back by
    padding it with the opposite amounts."""

    @staticmethod
    def forward(ctx: Any, x: Any, amounts: tuple[int, ...], value: Any) -> Any:
        ctx.amounts = amounts
        return M.pad(x, amounts, "constant", value)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return M.pad(grad, tuple(-a for a in ctx.amounts)), None, None


class Triangle(Function):
    """tril / triu: the gradient keeps the same triangle."""

    @staticmethod
    def forward(ctx: Any, x: Any, k: Any, upper: bool) -> Any:
        ctx.k, ctx.upper = k, upper
        return M.triu(x, k) if upper else M.tril(x, k)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return (M.triu(grad, ctx.k) if ctx.upper else M.tril(grad, ctx.k)), None, None


class DiagEmbed(Function):
    """diag_embed (and diag of a vector): the gradient is the diagonal it was written on."""

    @staticmethod
    def forward(ctx: Any, x: Any, offset: int, dim1: int, dim2: int) -> Any:
        ctx.args = (offset, dim1, dim2)
        return M.diag_embed(x, offset, dim1, dim2)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        offset, dim1, dim2 = ctx.args
        return M.diagonal(grad, offset, dim1, dim2), None, None, None
