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

Every backward is itself differentiable (``create_graph=True`` gives higher-order gradients): the
gradient kernels are Functions too, and each one's derivative is another of them. dx of a
convolution is linear in (grad, weight), its derivative in grad is the convolution itself and in
weight the weight-gradient kernel; the pooling backwards are linear in grad, with the forward
pooling (average) or a gather at the indices (max) as their derivative; the normalization
backwards recompute their statistics from the input with differentiable ops when recording.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from t_tensor import creation
from t_tensor._capi import check, lib
from t_tensor.autograd import grad_mode
from t_tensor.autograd.function import Function
from t_tensor.nn import functional as F
from t_tensor.nn import normalization as N

__all__ = ["AdaptivePool", "AvgPool", "AvgPoolGrad", "BatchNorm", "ConvInputGrad", "ConvWeightGrad", "Convolution",
           "GroupNorm", "MaxPool", "PoolGather", "PoolScatter"]


def _lifted(t: Any, nd: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (n, c, h, w) shape and strides of an input-like or output-like tensor, as the C kernels
    take them."""
    shape, strides, _ = F._lift(t, nd)
    return shape, strides


class _ConvSpec(NamedTuple):
    """One convolution: its user-level arguments (to run it again) and its checked geometry."""

    fn: str
    nd: int
    args: tuple  # stride, padding, dilation, groups as the user gave them
    g: Any  # nn.functional._ConvGeometry
    input_shape: tuple[int, ...]

    def conv(self, input: Any, weight: Any) -> Any:
        return F._conv(self.fn, self.nd, input, weight, None, *self.args)


def _conv_input_grad(spec: _ConvSpec, grad: Any, weight: Any) -> Any:
    g = spec.g
    gy_shape, gy_strides = _lifted(grad, spec.nd)
    w_strides = weight._strides if spec.nd == 2 else weight._strides[:2] + (0,) + weight._strides[2:]
    result = type(grad)._empty(spec.input_shape, grad._dtype, spec.fn)
    check(lib.tt_conv2d_backward_input(grad._dtype.code, gy_shape, grad.data_ptr(), gy_strides, g.w_shape,
                                       weight.data_ptr(), w_strides, g.stride, g.before, g.dilation, g.groups,
                                       g.x_shape, result.data_ptr()), spec.fn)
    return result


def _conv_weight_grad(spec: _ConvSpec, input: Any, grad: Any) -> Any:
    g = spec.g
    gy_shape, gy_strides = _lifted(grad, spec.nd)
    x_shape, x_strides = _lifted(input, spec.nd)
    result = type(grad)._empty(g.w_shape if spec.nd == 2 else g.w_shape[:2] + g.w_shape[3:], grad._dtype, spec.fn)
    check(lib.tt_conv2d_backward_weight(grad._dtype.code, x_shape, input.data_ptr(), x_strides, gy_shape,
                                        grad.data_ptr(), gy_strides, g.stride, g.before, g.dilation, g.groups,
                                        g.w_shape, result.data_ptr()), spec.fn)
    return result


class Convolution(Function):
    """conv1d and conv2d (``fn``), any stride, padding, dilation and groups."""

    @staticmethod
    def forward(ctx: Any, input: Any, weight: Any, bias: Any, fn: str, nd: int, stride: Any, padding: Any,
                dilation: Any, groups: Any) -> Any:
        geometry = F._conv_geometry(fn, nd, input, weight, bias, stride, padding, dilation, groups)
        ctx.spec = _ConvSpec(fn, nd, (stride, padding, dilation, groups), geometry, input._shape)
        ctx.save_for_backward(input, weight)
        return F._conv_forward(fn, input, weight, bias, geometry)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        input, weight = ctx.saved_tensors
        spec = ctx.spec
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = ConvInputGrad.apply(grad, weight, spec)
        if ctx.needs_input_grad[1]:
            grad_weight = ConvWeightGrad.apply(input, grad, spec)
        if ctx.needs_input_grad[2]:
            channel = grad.ndim - spec.nd - 1
            grad_bias = grad.sum(tuple(d for d in range(grad.ndim) if d != channel))
        return (grad_input, grad_weight, grad_bias) + (None,) * 6


class ConvInputGrad(Function):
    """dx of a convolution, a function of (grad, weight), bilinear: its derivative along grad is the
    convolution of the incoming gradient with weight, along weight the weight gradient of a
    convolution of the incoming gradient (as input) that produced grad."""

    @staticmethod
    def forward(ctx: Any, grad: Any, weight: Any, spec: _ConvSpec) -> Any:
        ctx.spec = spec
        ctx.save_for_backward(grad, weight)
        return _conv_input_grad(spec, grad, weight)

    @staticmethod
    def backward(ctx: Any, gg: Any) -> tuple:
        grad, weight = ctx.saved_tensors
        d_grad = ctx.spec.conv(gg, weight) if ctx.needs_input_grad[0] else None
        d_weight = ConvWeightGrad.apply(gg, grad, ctx.spec) if ctx.needs_input_grad[1] else None
        return d_grad, d_weight, None


class ConvWeightGrad(Function):
    """dw of a convolution, a function of (input, grad), bilinear: its derivative along input is
    the input gradient for the incoming gradient as weights, along grad the convolution of input
    with the incoming gradient as weights."""

    @staticmethod
    def forward(ctx: Any, input: Any, grad: Any, spec: _ConvSpec) -> Any:
        ctx.spec = spec
        ctx.save_for_backward(input, grad)
        return _conv_weight_grad(spec, input, grad)

    @staticmethod
    def backward(ctx: Any, gg: Any) -> tuple:
        input, grad = ctx.saved_tensors
        d_input = ConvInputGrad.apply(grad, gg, ctx.spec) if ctx.needs_input_grad[0] else None
        d_grad = ctx.spec.conv(input, gg) if ctx.needs_input_grad[1] else None
        return d_input, d_grad, None


# ---------------------------------------------------------------------- pooling


class _Planes(NamedTuple):
    """An input of ``shape`` seen as (planes, plane size), with the output's flat indices into it.

    A max-pooling window that lies wholly in the padding (possible with dilation) has the index of
    its clamped start, which may be past the plane: as in PyTorch, its gradient is dropped
    (``valid`` masks it, and its index is replaced by 0)."""

    shape: tuple[int, ...]
    flat: tuple[int, int]  # (planes, plane size)
    out_shape: tuple[int, ...]
    indices: Any  # (planes, outputs per plane), int64, all inside the plane
    valid: Any  # None, or a bool tensor like indices: False where the original index was past the plane

    @staticmethod
    def make(shape: tuple[int, ...], indices: Any, nd: int, padded: bool = True) -> _Planes:
        """``padded=False`` (no padding): every window starts inside its plane, so no index can
        be past it and the check (two ops and a sync) is skipped."""
        planes, size = math.prod(shape[:-nd]), math.prod(shape[-nd:])
        flat_indices = indices.reshape(planes, math.prod(indices._shape[-nd:]))
        valid = None
        if not padded:
            return _Planes(shape, (planes, size), indices._shape, flat_indices, valid)
        outside = flat_indices >= size
        if outside.any().item():
            valid = outside.logical_not()
            flat_indices = flat_indices.where(valid, 0)
        return _Planes(shape, (planes, size), indices._shape, flat_indices, valid)


class PoolScatter(Function):
    """The gradient of a max pooling: each output gradient added at its input index. Linear in
    grad; its derivative is :class:`PoolGather`."""

    @staticmethod
    def forward(ctx: Any, grad: Any, planes: _Planes) -> Any:
        ctx.planes = planes
        src = grad.reshape(planes.indices._shape)
        if planes.valid is None and grad._dtype.is_floating_point:
            # the common case, every window inside its plane: one C pass per plane (zero it,
            # add the outputs' gradients at their indices), the same sums in the same order
            src, indices = src.contiguous(), planes.indices.contiguous()
            result = type(grad)._empty(planes.shape, grad._dtype, "max_pool")
            check(lib.tt_max_pool_backward(grad._dtype.code, planes.flat[0], planes.flat[1], src._shape[1],
                                           src.data_ptr(), indices.data_ptr(), result.data_ptr()), "max_pool")
            return result
        if planes.valid is not None:
            src = src.where(planes.valid, 0)
        dst = creation.zeros(planes.flat, dtype=grad._dtype)
        return dst.scatter_add(1, planes.indices, src).reshape(planes.shape)

    @staticmethod
    def backward(ctx: Any, gg: Any) -> tuple:
        return PoolGather.apply(gg, ctx.planes), None


class PoolGather(Function):
    """Each output's value read at its input index: the derivative of :class:`PoolScatter`."""

    @staticmethod
    def forward(ctx: Any, x: Any, planes: _Planes) -> Any:
        ctx.planes = planes
        out = x.reshape(planes.flat).gather(1, planes.indices)
        if planes.valid is not None:
            out = out.where(planes.valid, 0)
        return out.reshape(planes.out_shape)

    @staticmethod
    def backward(ctx: Any, gg: Any) -> tuple:
        return PoolScatter.apply(gg, ctx.planes), None


class MaxPool(Function):
    """max_pool1d and max_pool2d (``fn``); the indices output has no gradient."""

    @staticmethod
    def forward(ctx: Any, input: Any, fn: str, nd: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool, return_indices: bool) -> Any:
        values, indices = F._max_pool(fn, nd, input, kernel_size, stride, padding, dilation, ceil_mode, True)
        ctx.mark_non_differentiable(indices)
        padded = any(p != 0 for p in padding) if isinstance(padding, (tuple, list)) else padding != 0
        ctx.planes = _Planes.make(input._shape, indices, nd, padded)
        return (values, indices) if return_indices else values

    @staticmethod
    def backward(ctx: Any, grad: Any, *_: Any) -> tuple:
        return (PoolScatter.apply(grad, ctx.planes),) + (None,) * 8


class _AvgSpec(NamedTuple):
    """One average pooling: how to run it again, and the arguments of its C backward."""

    fn: str
    nd: int
    forward: Any  # the pooling itself, a function of the input
    shape: tuple[int, ...]  # the input's
    adaptive: bool
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    include_pad: bool
    divisor: int


class AvgPoolGrad(Function):
    """The gradient of an average pooling (also adaptive). Linear in grad; its derivative is the
    pooling itself."""

    @staticmethod
    def forward(ctx: Any, grad: Any, spec: _AvgSpec) -> Any:
        ctx.spec = spec
        gy_shape, gy_strides = _lifted(grad, spec.nd)
        result = grad._empty(spec.shape, grad._dtype, spec.fn)
        in_size = spec.shape[-2:] if spec.nd == 2 else (1, spec.shape[-1])
        check(lib.tt_avg_pool2d_backward(
            grad._dtype.code, int(spec.adaptive), gy_shape, grad.data_ptr(), gy_strides, spec.kernel, spec.stride,
            spec.pad, int(spec.include_pad), spec.divisor, in_size, result.data_ptr()), spec.fn)
        return result

    @staticmethod
    def backward(ctx: Any, gg: Any) -> tuple:
        return ctx.spec.forward(gg), None


class AvgPool(Function):
    """avg_pool1d and avg_pool2d (``fn``), with ceil_mode, count_include_pad and divisor_override."""

    @staticmethod
    def forward(ctx: Any, input: Any, fn: str, nd: int, kernel_size: Any, stride: Any, padding: Any,
                ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Any:
        result = F._avg_pool(fn, nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override)
        kernel, strides, pad, _, _ = F._pool_geometry(fn, nd, input, kernel_size, stride, padding, 1, ceil_mode)
        (kernel, strides), (pad,) = F._two_d(nd, kernel, strides, fill=1), F._two_d(nd, pad, fill=0)

        def again(x: Any) -> Any:
            return F._avg_pool(fn, nd, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override)

        ctx.spec = _AvgSpec(fn, nd, again, input._shape, False, kernel, strides, pad, bool(count_include_pad),
                            divisor_override or 0)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return (AvgPoolGrad.apply(grad, ctx.spec),) + (None,) * 8


class AdaptivePool(Function):
    """adaptive_{avg,max}_pool{1,2}d (``fn``); the indices output has no gradient."""

    @staticmethod
    def forward(ctx: Any, input: Any, fn: str, nd: int, max: bool, output_size: Any, return_indices: bool) -> Any:
        out = F._adaptive(fn, nd, max, input, output_size, max)
        if not max:
            ctx.spec = _AvgSpec(fn, nd, lambda x: F._adaptive(fn, nd, False, x, output_size, False), input._shape,
                                True, (1, 1), (1, 1), (0, 0), False, 0)
            return out
        values, indices = out
        ctx.mark_non_differentiable(indices)
        ctx.planes = _Planes.make(input._shape, indices, nd, padded=False)   # adaptive windows lie inside
        return (values, indices) if return_indices else values

    @staticmethod
    def backward(ctx: Any, grad: Any, *_: Any) -> tuple:
        if hasattr(ctx, "planes"):
            return (PoolScatter.apply(grad, ctx.planes),) + (None,) * 5
        return (AvgPoolGrad.apply(grad, ctx.spec),) + (None,) * 5


# ---------------------------------------------------------------------- normalization


def _channel_view(t: Any, ndim: int) -> Any:
    """A (C,) tensor shaped to broadcast against an (N, C, *) input of ``ndim`` dims."""
    return t.reshape((1, t._shape[0]) + (1,) * (ndim - 2))


class BatchNorm(Function):
    """batch_norm. With x_hat = (x - mean) * invstd over the (N, *) elements of each channel and
    y = x_hat * w + b: db = sum(dy), dw = sum(dy * x_hat), and in training (the statistics depend on
    x) dx = w * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat)), in evaluation (fixed running
    statistics) dx = w * invstd * dy; sums and means per channel, all in one C call
    (tt_batch_norm_backward) for float32 and float64. When recording (create_graph), x_hat and
    invstd are first recomputed from x with differentiable ops."""

    @staticmethod
    def forward(ctx: Any, input: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any,
                training: bool, momentum: float, eps: float) -> Any:
        y, x_hat, mean, invstd = N._batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                                               eps)
        ctx.training, ctx.eps = training, eps
        ctx.save_for_backward(input, x_hat, mean, invstd, weight)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        input, x_hat, mean, invstd, weight = ctx.saved_tensors
        nd = grad.ndim
        if not grad_mode.STATE.enabled and N._kernel_takes(grad, weight):  # one C call
            needs = ctx.needs_input_grad
            grad_input, grad_weight, grad_bias = N._batch_norm_grads(grad, x_hat, invstd, weight, ctx.training,
                                                                     (needs[0], needs[3], needs[4]))
            return grad_input, None, None, grad_weight, grad_bias, None, None, None
        if grad_mode.STATE.enabled:  # create_graph: the statistics as functions of the input
            if ctx.training:
                mean, var = N._batch_stats(input)
                invstd = (var + ctx.eps).rsqrt()
            x_hat = (input - _channel_view(mean, nd)) * _channel_view(invstd, nd)
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
    mean(dz * x_hat)), means per image and group; dw = sum(dy * x_hat), db = sum(dy) per channel.
    When recording (create_graph), x_hat and invstd are first recomputed from x."""

    @staticmethod
    def forward(ctx: Any, input: Any, num_groups: int, weight: Any, bias: Any, eps: float) -> Any:
        y, x_hat, invstd = N._group_norm(input, num_groups, weight, bias, eps)
        ctx.groups, ctx.eps = num_groups, eps
        ctx.save_for_backward(input, x_hat, invstd, weight)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        input, x_hat, invstd, weight = ctx.saved_tensors
        if grad_mode.STATE.enabled:  # create_graph: the statistics as functions of the input
            x_hat, invstd = N._group_stats(input, ctx.groups, ctx.eps)
        nd, shape = grad.ndim, grad._shape
        dims = (0,) + tuple(range(2, nd))
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            dz = grad if weight is None else grad * _channel_view(weight, nd)
            grouped = (shape[0], ctx.groups, math.prod(shape[1:]) // ctx.groups)
            dz, xh = dz.reshape(grouped), x_hat.reshape(grouped)
            mean_dz = dz.mean(2, keepdim=True)
            mean_dz_xhat = (dz * xh).mean(2, keepdim=True)
            grad_input = ((dz - mean_dz - xh * mean_dz_xhat) * invstd).reshape(shape)
        if ctx.needs_input_grad[2]:
            grad_weight = (grad * x_hat).sum(dims)
        if ctx.needs_input_grad[3]:
            grad_bias = grad.sum(dims)
        return grad_input, None, grad_weight, grad_bias, None
