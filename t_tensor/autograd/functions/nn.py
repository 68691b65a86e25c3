"""Derivatives of the convolution, pooling and normalization functions of :mod:`t_tensor.nn`.

* Convolution: ``dx`` is a transposed convolution and ``dw`` a sum over the images of
  ``grad @ im2col(x)^T`` (both C kernels, ``csrc/src/kernels/conv_backward.c``); ``db`` sums the
  gradient over every dimension but the channels.
* Max pooling (also adaptive): the forward keeps the index of each window's maximum, and the
  backward adds every output gradient to that input element (``scatter_add``), so a maximum shared
  by overlapping windows receives each window's gradient and ties go to the element the forward
  chose (the first maximum, as PyTorch).
* Average pooling (also adaptive): each output gradient divided by its window's divisor is added
  onto the window (C kernel, same window and divisor rules as the forward).
* Batch and group normalization: explicit formulas (below), written with public ops.

The C-kernel backwards are first-order only: with ``create_graph=True`` they raise
NotImplementedError rather than return gradients without history.
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import creation
from t_tensor._capi import check, lib
from t_tensor.autograd import grad_mode
from t_tensor.autograd.function import Function
from t_tensor.nn import functional as F
from t_tensor.nn import normalization as N

__all__ = ["AdaptivePool", "AvgPool", "BatchNorm", "Convolution", "GroupNorm", "MaxPool"]


def _first_order(fn: str) -> None:
    if grad_mode.STATE.enabled:
        raise NotImplementedError(f"{fn}: double backward (create_graph=True) is not implemented for {fn}")


def _lifted(grad: Any, nd: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (n, c, h, w) shape and strides of an output gradient, as the C kernels take them."""
    shape, strides, _ = F._lift(grad, nd)
    return shape, strides


class Convolution(Function):
    """conv1d and conv2d (``fn``), any stride, padding, dilation and groups."""

    @staticmethod
    def forward(ctx: Any, input: Any, weight: Any, bias: Any, fn: str, nd: int, stride: Any, padding: Any,
                dilation: Any, groups: Any) -> Any:
        geometry = F._conv_geometry(fn, nd, input, weight, bias, stride, padding, dilation, groups)
        ctx.geometry, ctx.fn, ctx.nd = geometry, fn, nd
        ctx.save_for_backward(input, weight)
        return F._conv_forward(fn, input, weight, bias, geometry)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        _first_order(ctx.fn)
        input, weight = ctx.saved_tensors
        g, fn = ctx.geometry, ctx.fn
        gy_shape, gy_strides = _lifted(grad, ctx.nd)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = type(input)._empty(input._shape, input._dtype, fn)
            check(lib.tt_conv2d_backward_input(
                input._dtype.code, gy_shape, grad.data_ptr(), gy_strides, g.w_shape, weight.data_ptr(), g.w_strides,
                g.stride, g.before, g.dilation, g.groups, g.x_shape, grad_input.data_ptr()), fn)
        if ctx.needs_input_grad[1]:
            grad_weight = type(weight)._empty(weight._shape, weight._dtype, fn)
            check(lib.tt_conv2d_backward_weight(
                input._dtype.code, g.x_shape, input.data_ptr(), g.x_strides, gy_shape, grad.data_ptr(), gy_strides,
                g.stride, g.before, g.dilation, g.groups, g.w_shape, grad_weight.data_ptr()), fn)
        if ctx.needs_input_grad[2]:
            channel = grad.ndim - ctx.nd - 1
            grad_bias = grad.sum(tuple(d for d in range(grad.ndim) if d != channel))
        return (grad_input, grad_weight, grad_bias) + (None,) * 6


def _scatter_to_indices(grad: Any, indices: Any, input_shape: tuple[int, ...], nd: int) -> Any:
    """The gradient of a max pooling: each output gradient added at its flat plane index."""
    planes = math.prod(input_shape[:-nd])
    dst = creation.zeros((planes, math.prod(input_shape[-nd:])), dtype=grad._dtype)
    src_shape = (planes, math.prod(indices._shape[-nd:]))
    return dst.scatter_add(1, indices.reshape(src_shape), grad.reshape(src_shape)).reshape(input_shape)


class MaxPool(Function):
    """max_pool1d and max_pool2d (``fn``); the indices output has no gradient."""

    @staticmethod
    def forward(ctx: Any, input: Any, fn: str, nd: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool, return_indices: bool) -> Any:
        values, indices = F._max_pool(fn, nd, input, kernel_size, stride, padding, dilation, ceil_mode, True)
        ctx.mark_non_differentiable(indices)
        ctx.fn, ctx.nd, ctx.shape, ctx.indices = fn, nd, input._shape, indices
        return (values, indices) if return_indices else values

    @staticmethod
    def backward(ctx: Any, grad: Any, *_: Any) -> tuple:
        _first_order(ctx.fn)
        return (_scatter_to_indices(grad, ctx.indices, ctx.shape, ctx.nd),) + (None,) * 8


class AvgPool(Function):
    """avg_pool1d and avg_pool2d (``fn``), with ceil_mode, count_include_pad and divisor_override."""

    @staticmethod
    def forward(ctx: Any, input: Any, fn: str, nd: int, kernel_size: Any, stride: Any, padding: Any,
                ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Any:
        result = F._avg_pool(fn, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override)
        kernel, stride, pad, _, _ = F._pool_geometry(fn, nd, input, kernel_size, stride, padding, 1, ceil_mode)
        (ctx.kernel, ctx.stride), (ctx.pad,) = F._two_d(nd, kernel, stride, fill=1), F._two_d(nd, pad, fill=0)
        ctx.fn, ctx.nd, ctx.shape, ctx.dtype = fn, nd, input._shape, input._dtype
        ctx.include_pad, ctx.divisor = bool(count_include_pad), divisor_override or 0
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        _first_order(ctx.fn)
        return (_avg_backward(ctx, grad, False, ctx.kernel, ctx.stride, ctx.pad),) + (None,) * 8


def _avg_backward(ctx: Any, grad: Any, adaptive: bool, kernel: Any, stride: Any, pad: Any) -> Any:
    gy_shape, gy_strides = _lifted(grad, ctx.nd)
    result = grad._empty(ctx.shape, ctx.dtype, ctx.fn)
    in_size = ctx.shape[-2:] if ctx.nd == 2 else (1, ctx.shape[-1])
    check(lib.tt_avg_pool2d_backward(
        ctx.dtype.code, int(adaptive), gy_shape, grad.data_ptr(), gy_strides, kernel, stride, pad,
        int(not adaptive and ctx.include_pad), 0 if adaptive else ctx.divisor, in_size, result.data_ptr()), ctx.fn)
    return result


class AdaptivePool(Function):
    """adaptive_{avg,max}_pool{1,2}d (``fn``); the indices output has no gradient."""

    @staticmethod
    def forward(ctx: Any, input: Any, fn: str, nd: int, max: bool, output_size: Any, return_indices: bool) -> Any:
        out = F._adaptive(fn, nd, max, input, output_size, max)
        ctx.fn, ctx.nd, ctx.max, ctx.shape, ctx.dtype = fn, nd, max, input._shape, input._dtype
        if not max:
            return out
        values, indices = out
        ctx.mark_non_differentiable(indices)
        ctx.indices = indices
        return (values, indices) if return_indices else values

    @staticmethod
    def backward(ctx: Any, grad: Any, *_: Any) -> tuple:
        _first_order(ctx.fn)
        if ctx.max:
            return (_scatter_to_indices(grad, ctx.indices, ctx.shape, ctx.nd),) + (None,) * 5
        return (_avg_backward(ctx, grad, True, (1, 1), (1, 1), (0, 0)),) + (None,) * 5


# ---------------------------------------------------------------------- normalization


def _channel_view(t: Any, ndim: int) -> Any:
    """A (C,) tensor shaped to broadcast against an (N, C, *) input of ``ndim`` dims."""
    return t.reshape((1, t._shape[0]) + (1,) * (ndim - 2))


class BatchNorm(Function):
    """batch_norm. With x_hat = (x - mean) * invstd over the (N, *) elements of each channel and
    y = x_hat * w + b: db = sum(dy), dw = sum(dy * x_hat), and in training (the statistics depend on
    x) dx = w * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat)), in evaluation (fixed running
    statistics) dx = w * invstd * dy; sums and means per channel."""

    @staticmethod
    def forward(ctx: Any, input: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any,
                training: bool, momentum: float, eps: float) -> Any:
        y, x_hat, invstd = N._batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
        ctx.training = training
        ctx.save_for_backward(x_hat, invstd, weight)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x_hat, invstd, weight = ctx.saved_tensors
        nd = grad.ndim
        dims = (0,) + tuple(range(2, nd))
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            scale = _channel_view(invstd if weight is None else invstd * weight, nd)
            if ctx.training:
                mean_dy = grad.mean(dims, keepdim=True)
                mean_dy_xhat = (grad * x_hat).mean(dims, keepdim=True)
                grad_input = (grad - mean_dy - x_hat * mean_dy_xhat) * scale
            else:
                grad_input = grad * scale
        if ctx.needs_input_grad[3]:
            grad_weight = (grad * x_hat).sum(dims)
        if ctx.needs_input_grad[4]:
            grad_bias = grad.sum(dims)
        return grad_input, None, None, grad_weight, grad_bias, None, None, None


class GroupNorm(Function):
    """group_norm. Per image and group, x_hat = (x - mean) * invstd over its C/G * spatial elements;
    y = x_hat * w + b (per channel). With dz = dy * w: dx = invstd * (dz - mean(dz) - x_hat *
    mean(dz * x_hat)), means per image and group; dw = sum(dy * x_hat), db = sum(dy) per channel."""

    @staticmethod
    def forward(ctx: Any, input: Any, num_groups: int, weight: Any, bias: Any, eps: float) -> Any:
        y, x_hat, invstd = N._group_norm(input, num_groups, weight, bias, eps)
        ctx.groups = num_groups
        ctx.save_for_backward(x_hat, invstd, weight)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        x_hat, invstd, weight = ctx.saved_tensors
        nd, shape = grad.ndim, grad._shape
        dims = (0,) + tuple(range(2, nd))
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            dz = grad if weight is None else grad * _channel_view(weight, nd)
            grouped = (shape[0], ctx.groups, -1)
            dz, xh = dz.reshape(grouped), x_hat.reshape(grouped)
            mean_dz = dz.mean(2, keepdim=True)
            mean_dz_xhat = (dz * xh).mean(2, keepdim=True)
            grad_input = ((dz - mean_dz - xh * mean_dz_xhat) * invstd.reshape(shape[0], ctx.groups, 1)).reshape(shape)
        if ctx.needs_input_grad[2]:
            grad_weight = (grad * x_hat).sum(dims)
        if ctx.needs_input_grad[3]:
            grad_bias = grad.sum(dims)
        return grad_input, None, grad_weight, grad_bias, None
