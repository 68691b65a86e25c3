"""Derivatives of the indexing ops. They come in adjoint pairs, each the other's backward, so
that gradients of any order stay inside the family:

* read ``x[key]`` (:class:`IndexGet`)  <->  add into zeros at ``key`` (:class:`IndexPut`, accumulate);
* ``gather`` / ``take_along_dim`` (:class:`Gather`)  <->  ``scatter_add`` (:class:`ScatterAdd`);
* ``index_select`` (:class:`IndexSelect`)  <->  ``index_add`` (:class:`IndexAdd`).

Writes (``index_put``, ``scatter``, ``masked_fill``, ``index_fill``): the overwritten elements of
the input get no gradient, the written values get the gradient of the places they went to.
Their in-place forms (``x[mask] = v``, ``scatter_``, ``masked_fill_``, ...) go through
``apply_inplace`` (the tensor takes over the out-of-place result's history).
"""

from __future__ import annotations

from typing import Any

from t_tensor import indexing as I
from t_tensor import strides as S
from t_tensor.autograd.function import Function

__all__ = ["Gather", "IndexAdd", "IndexFill", "IndexGet", "IndexPut", "IndexSelect", "MaskedFill", "Scatter",
           "ScatterAdd"]


def _zeros(shape: tuple[int, ...], like: Any) -> Any:
    from t_tensor.creation import zeros

    return zeros(shape, dtype=like.dtype)


def _fit(grad: Any, shape: tuple[int, ...]) -> Any:
    """A gradient read at an index's shape, zero-padded to the (larger or equal) ``shape`` of the
    tensor it belongs to (scatter's src may be larger than its index)."""
    if grad.shape == shape:
        return grad
    from t_tensor.manipulation import pad

    amounts: list[int] = []
    for n, m in zip(reversed(shape), reversed(grad.shape), strict=True):
        amounts += [0, n - m]
    return pad(grad, tuple(amounts))


class IndexGet(Function):
    """``x[key]`` with an advanced key: the gradient is added into zeros at ``key``."""

    @staticmethod
    def forward(ctx: Any, x: Any, key: Any, fn: str) -> Any:
        ctx.shape, ctx.key = x._shape, key
        return I._getitem(x, key, fn)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return IndexPut.apply(_zeros(ctx.shape, grad), grad, ctx.key, True, "index_put"), None, None


class IndexPut(Function):
    """A copy of ``x`` with ``x[key] = values`` (``+=`` with ``accumulate``); ``values`` is a tensor
    or a number; ``fn`` names the op in error messages."""

    @staticmethod
    def forward(ctx: Any, x: Any, values: Any, key: Any, accumulate: bool, fn: str) -> Any:
        ctx.key, ctx.accumulate = key, accumulate
        ctx.values_shape = values._shape if isinstance(values, I.TensorImpl) else None
        result = x.clone()
        I.setitem(result, key, values, accumulate, fn)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        grad_x = grad_values = None
        if ctx.needs_input_grad[0]:
            grad_x = grad if ctx.accumulate else IndexPut.apply(grad, 0.0, ctx.key, False, "index_put")
        if ctx.needs_input_grad[1]:
            grad_values = IndexGet.apply(grad, ctx.key, "index_put")
            shape = ctx.values_shape
            if len(shape) > grad_values.ndim and S.numel(shape) == grad_values.numel():
                grad_values = grad_values.reshape(shape)   # the leading 1s setitem dropped
        return grad_x, grad_values, None, None, None


def _wrapped(index: Any, size: int) -> Any:
    """``index`` with negative entries counted from the end."""
    return index.where(index >= 0, index + size)


class Gather(Function):
    """gather (``fn="gather"``) and take_along_dim/take_along_axis (their indices already
    broadcast, negatives allowed): the gradient is scatter-added back."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, index: Any, fn: str) -> Any:
        ctx.shape, ctx.fn = x._shape, fn
        ctx.dim = S.normalize_dim(dim, max(x.ndim, 1), fn=fn)
        ctx.index = index
        if fn == "gather":
            return I.gather(x, dim, index)
        return I._take_along_planned(fn, x, ctx.dim, index)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        index = ctx.index
        if ctx.fn != "gather" and ctx.shape:
            index = _wrapped(index, ctx.shape[ctx.dim])
        if not ctx.shape:
            return grad.reshape(()), None, None, None
        return ScatterAdd.apply(_zeros(ctx.shape, grad), ctx.dim, index, grad), None, None, None


class ScatterAdd(Function):
    """scatter_add: ``input`` passes its gradient through, ``src`` reads it back with gather."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, index: Any, src: Any) -> Any:
        ctx.dim, ctx.index = dim, index
        ctx.src_shape = src._shape
        return I.scatter_add(x, dim, index, src)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        grad_src = None
        if ctx.needs_input_grad[3]:
            grad_src = _fit(Gather.apply(grad, ctx.dim, ctx.index, "gather"), ctx.src_shape)
        return grad, None, None, grad_src


class Scatter(Function):
    """scatter of a tensor ``src`` or a number ``value``: the overwritten elements of ``input`` get
    no gradient; ``src`` gets the gradient of where it was written."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, index: Any, src: Any, value: Any) -> Any:
        ctx.dim, ctx.index = dim, index
        ctx.src_shape = src._shape if src is not None else None
        return I.scatter(x, dim, index, src, value=value)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        grad_x = grad_src = None
        if ctx.needs_input_grad[0]:
            grad_x = Scatter.apply(grad, ctx.dim, ctx.index, None, 0.0)
        if ctx.needs_input_grad[3]:
            grad_src = _fit(Gather.apply(grad, ctx.dim, ctx.index, "gather"), ctx.src_shape)
        return grad_x, None, None, grad_src, None


class IndexSelect(Function):
    """index_select: the gradient is index-added back (repeated indices sum)."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, index: Any) -> Any:
        ctx.shape, ctx.dim, ctx.index = x._shape, S.normalize_dim(dim, max(x.ndim, 1), fn="index_select"), index
        return I.index_select(x, dim, index)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        if not ctx.shape:
            return grad.reshape(()), None, None
        return IndexAdd.apply(_zeros(ctx.shape, grad), ctx.dim, ctx.index, grad, 1), None, None


class IndexAdd(Function):
    """index_add: ``input`` passes its gradient through, ``source`` reads it back (times alpha)."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, index: Any, source: Any, alpha: Any) -> Any:
        ctx.dim, ctx.index, ctx.alpha = dim, index, alpha
        ctx.source_shape = source._shape
        return I.index_add(x, dim, index, source, alpha=alpha)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        grad_source = None
        if ctx.needs_input_grad[3]:
            grad_source = IndexSelect.apply(grad, ctx.dim, ctx.index).reshape(ctx.source_shape)
            if not (type(ctx.alpha) is int and ctx.alpha == 1):
                grad_source = grad_source * ctx.alpha
        return grad, None, None, grad_source, None


def _filled_sum(grad: Any, rest: Any) -> Any:
    """The gradient of a fill value: the sum of the gradient where it was written."""
    return (grad - rest).sum()


class MaskedFill(Function):
    """masked_fill: no gradient where the mask holds; a 0-d tensor value gets the sum there."""

    @staticmethod
    def forward(ctx: Any, x: Any, mask: Any, value: Any) -> Any:
        ctx.mask = mask
        return I.masked_fill(x, mask, value)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        rest = MaskedFill.apply(grad, ctx.mask, 0.0)
        return rest, None, (_filled_sum(grad, rest) if ctx.needs_input_grad[2] else None)


class IndexFill(Function):
    """index_fill: no gradient at the filled entries; a 0-d tensor value gets the sum there."""

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, index: Any, value: Any) -> Any:
        ctx.dim, ctx.index = dim, index
        return I.index_fill(x, dim, index, value)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        rest = IndexFill.apply(grad, ctx.dim, ctx.index, 0.0)
        return rest, None, None, (_filled_sum(grad, rest) if ctx.needs_input_grad[3] else None)

