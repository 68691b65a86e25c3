"""``t_tensor.nn.functional``, as ``torch.nn.functional``: the layers and losses (``linear``,
``dropout``, ``embedding``, ``layer_norm``, ``softmax``, ``cross_entropy`` ..., differentiable;
they live in :mod:`t_tensor.nn.functional_core` and are re-exported here), and convolution,
pooling and resampling (forward only), below.

Every function checks its arguments and computes the output shape in Python, with PyTorch's
rules and error cases, then makes one C call that loops over the (N, C) planes of the input,
read through its strides as they are (no copy), into a new contiguous output:

* ``conv1d`` / ``conv2d``: im2col and a matrix product per image and group
  (``csrc/src/kernels/conv.c``); 1-D is the 2-D kernel with a height of 1.
* pooling and ``interpolate``: direct loops (``csrc/src/kernels/pool.c``).

Inputs are float16, float32 or float64 (float16 is computed in float32 and rounded once).
Inputs without a batch dimension, ``(C, H, W)`` for 2-D and ``(C, L)`` for 1-D, are accepted as
in PyTorch, and give results without one.

>>> import t_tensor as tt
>>> import t_tensor.nn.functional as F
>>> x = tt.arange(16.0).view(1, 1, 4, 4)
>>> F.conv2d(x, tt.ones(2, 1, 3, 3), padding=1).shape
(1, 2, 4, 4)
>>> F.max_pool2d(x, 2).tolist()
[[[[5.0, 7.0], [13.0, 15.0]]]]
>>> F.interpolate(tt.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

from t_tensor import dtypes
from t_tensor._capi import check, lib
from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import wants_grad
from t_tensor.manipulation import pad
from t_tensor.nn.functional_attention import multi_head_attention, scaled_dot_product_attention
from t_tensor.nn.functional_core import (  # the layers and losses, re-exported as torch.nn.functional has them
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    dropout,
    embedding,
    gelu,
    l1_loss,
    layer_norm,
    linear,
    log_softmax,
    mse_loss,
    nll_loss,
    relu,
    sigmoid,
    silu,
    smooth_l1_loss,
    softmax,
    tanh,
)
from t_tensor.nn.normalization import batch_norm, group_norm  # noqa: F401  (normalization, nn-conv)
from t_tensor.tensor_impl import TensorImpl

__all__ = [
    "pad", "scaled_dot_product_attention", "multi_head_attention",
    "conv1d", "conv2d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "interpolate",
    # layers and losses (t_tensor/nn/functional_core.py)
    "linear", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax", "dropout", "embedding",
    "layer_norm",
    "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "nll_loss", "cross_entropy",
]  # fmt: skip
__all__ += ["batch_norm", "group_norm"]  # normalization.py (nn-conv)

_FLOAT_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


# ---------------------------------------------------------------------- argument helpers


def _check_tensor(value: Any, name: str, fn: str) -> None:
    if not isinstance(value, TensorImpl):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")


def _check_float(x: TensorImpl, fn: str) -> None:
    if x._dtype not in _FLOAT_DTYPES:
        raise NotImplementedError(f"{fn}: not implemented for {x._dtype.name} (float16, float32 and float64 only)")


def _int(value: Any, name: str, fn: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{fn}: {name} must be an int or a tuple of ints, got {type(value).__name__}")
    value = operator.index(value)
    if not -(2**63) <= value < 2**63:
        raise OverflowError(f"{fn}: {name} {value} does not fit in int64")
    return value


def _ints(value: Any, n: int, name: str, fn: str, *, allow_one: bool = True) -> tuple[int, ...]:
    """``value`` as ``n`` ints: one int repeated, or a sequence of ``n`` (or, if ``allow_one``, 1)."""
    if isinstance(value, (list, tuple)):
        items = tuple(_int(v, name, fn) for v in value)
        if len(items) == n:
            return items
        if allow_one and len(items) == 1:
            return items * n
        raise RuntimeError(f"{fn}: expected {name} to be a single int or a tuple of {n} ints, got {list(items)}")
    return (_int(value, name, fn),) * n


def _shape_str(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def _lift(x: TensorImpl, nd: int) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """The (n, c, h, w) shape and strides the C kernels take, for an input with ``nd`` spatial
    dimensions and an optional batch dimension (``x.ndim`` is ``nd + 1`` or ``nd + 2``, checked by
    the caller). Also whether the input was unbatched."""
    shape, strides = x._shape, x._strides
    unbatched = len(shape) == nd + 1
    if unbatched:
        shape, strides = (1,) + shape, (0,) + strides
    if nd == 1:
        shape, strides = shape[:2] + (1,) + shape[2:], strides[:2] + (0,) + strides[2:]
    return shape, strides, unbatched


def _result_shape(n: int, c: int, spatial: tuple[int, ...], unbatched: bool) -> tuple[int, ...]:
    return ((c,) if unbatched else (n, c)) + spatial


# ---------------------------------------------------------------------- convolution


def _conv_padding(padding: Any, nd: int, kernel: tuple[int, ...], stride: tuple[int, ...],
                  dilation: tuple[int, ...], fn: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Padding before and after each spatial dimension."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nd, (0,) * nd
        if padding != "same":
            raise RuntimeError(f"{fn}: Invalid padding string: {padding!r} (expected 'valid' or 'same')")
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{fn}: padding='same' is not supported for strided convolutions")
        total = tuple(d * (k - 1) for d, k in zip(dilation, kernel, strict=True))
        before = tuple(t // 2 for t in total)  # an odd total puts the extra element after, as PyTorch
        return before, tuple(t - b for t, b in zip(total, before, strict=True))
    pad = _ints(padding, nd, "padding", fn)
    if any(p < 0 for p in pad):
        raise RuntimeError(f"{fn}: negative padding is not supported, got padding={list(pad)}")
    return pad, pad


class _ConvGeometry(NamedTuple):
    """A checked convolution, in the 2-D form the C kernels take (1-D: a leading height of 1)."""

    x_shape: tuple[int, ...]  # (n, c_in, h, w)
    x_strides: tuple[int, ...]
    w_shape: tuple[int, ...]  # (c_out, c_in / groups, kh, kw)
    w_strides: tuple[int, ...]
    stride: tuple[int, ...]
    before: tuple[int, ...]  # padding before each spatial dimension
    dilation: tuple[int, ...]
    groups: int
    out_spatial: tuple[int, ...]  # (oh, ow)
    result_shape: tuple[int, ...]  # the output's shape as the user sees it


def _conv(fn: str, nd: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: Any) -> Any:
    if wants_grad(input, weight, bias):
        return FUNCTIONS["Convolution"].apply(input, weight, bias, fn, nd, stride, padding, dilation, groups)
    geometry = _conv_geometry(fn, nd, input, weight, bias, stride, padding, dilation, groups)
    return _conv_forward(fn, input, weight, bias, geometry)


def _conv_geometry(fn: str, nd: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
                   groups: Any) -> _ConvGeometry:
    """PyTorch's checks on a convolution's arguments, and its geometry."""
    _check_tensor(input, "input", fn)
    _check_tensor(weight, "weight", fn)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{fn}: Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, "
            f"but got input of size: {list(input.shape)}"
        )
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{fn}: expected a {nd + 2}-D weight, but got weight of size {list(weight.shape)}")
    if weight._dtype is not input._dtype:
        raise RuntimeError(f"{fn}: expected input and weight of the same dtype, got {input._dtype.name} and "
                           f"{weight._dtype.name}")
    _check_float(input, fn)
    groups = _int(groups, "groups", fn)
    if groups < 1:
        raise RuntimeError(f"{fn}: non-positive groups is not supported, got groups={groups}")
    stride = _ints(stride, nd, "stride", fn)
    if any(s < 1 for s in stride):
        raise RuntimeError(f"{fn}: non-positive stride is not supported, got stride={list(stride)}")
    dilation = _ints(dilation, nd, "dilation", fn)
    if any(d < 1 for d in dilation):
        raise RuntimeError(f"{fn}: dilation should be greater than zero, but got {list(dilation)}")
    c_out, cin_g, kernel = weight.shape[0], weight.shape[1], weight.shape[2:]
    if any(k < 1 for k in kernel):
        raise RuntimeError(f"{fn}: kernel size should be greater than zero, but got weight of size "
                           f"{list(weight.shape)}")
    before, after = _conv_padding(padding, nd, kernel, stride, dilation, fn)
    if c_out == 0 or c_out % groups != 0:
        raise RuntimeError(f"{fn}: Given groups={groups}, expected weight to be divisible by {groups} (and at least "
                           f"1) at dimension 0, but got weight of size {list(weight.shape)} instead")
    x_shape, x_strides, unbatched = _lift(input, nd)
    if cin_g * groups != x_shape[1]:
        raise RuntimeError(
            f"{fn}: Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {cin_g * groups} channels, but got {x_shape[1]} channels instead"
        )
    if bias is not None:
        _check_tensor(bias, "bias", fn)
        if bias.shape != (c_out,):
            raise RuntimeError(f"{fn}: Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
                               f"with {c_out} elements, but got bias of size {list(bias.shape)} instead")
        if bias._dtype is not input._dtype:
            raise RuntimeError(f"{fn}: expected input and bias of the same dtype, got {input._dtype.name} and "
                               f"{bias._dtype.name}")
    spatial = input.shape[-nd:]
    if 0 in spatial and x_shape[0] > 0 and x_shape[1] > 0:
        raise RuntimeError(f"{fn}: Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(input.shape)}")
    padded = tuple(s + b + a for s, b, a in zip(spatial, before, after, strict=True))
    dilated = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel, strict=True))
    if any(p < k for p, k in zip(padded, dilated, strict=True)):
        raise RuntimeError(f"{fn}: Calculated padded input size per channel: ({_shape_str(padded)}). Kernel size: "
                           f"({_shape_str(dilated)}). Kernel size can't be greater than actual input size")
    out_spatial = tuple((p - k) // s + 1 for p, k, s in zip(padded, dilated, stride, strict=True))
    result_shape = _result_shape(x_shape[0], c_out, out_spatial, unbatched)
    w_shape, w_strides = weight.shape, weight._strides
    if nd == 1:  # a 1-D convolution is a 2-D one over rows of height 1
        w_shape, w_strides = w_shape[:2] + (1,) + w_shape[2:], w_strides[:2] + (0,) + w_strides[2:]
        stride, before, dilation, out_spatial = (1,) + stride, (0,) + before, (1,) + dilation, (1,) + out_spatial
    return _ConvGeometry(x_shape, x_strides, w_shape, w_strides, stride, before, dilation, groups, out_spatial,
                         result_shape)


def _conv_forward(fn: str, input: Any, weight: Any, bias: Any, g: _ConvGeometry) -> Any:
    result = type(input)._empty(g.result_shape, input._dtype, fn)
    status = lib.tt_conv2d(
        input._dtype.code, g.x_shape, input.data_ptr(), g.x_strides, g.w_shape, weight.data_ptr(), g.w_strides,
        0 if bias is None else bias.data_ptr(), 0 if bias is None else bias._strides[0],
        g.stride, g.before, g.dilation, g.groups, g.out_spatial, result.data_ptr(),
    )
    check(status, fn)
    return result


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """1-D convolution (cross-correlation, as PyTorch) of ``input`` (N, C_in, L) or (C_in, L) with
    ``weight`` (C_out, C_in / groups, K), plus ``bias`` (C_out) if given.

    ``padding`` is an int, a 1-tuple, ``'valid'`` (none) or ``'same'`` (output length = input
    length; needs stride 1; an odd total padding puts the extra zero at the end).

    >>> import t_tensor as tt
    >>> tt.conv1d(tt.tensor([[[1.0, 2.0, 3.0, 4.0]]]), tt.tensor([[[1.0, -1.0]]])).tolist()
    [[[-1.0, -1.0, -1.0]]]
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """2-D convolution (cross-correlation, as PyTorch) of ``input`` (N, C_in, H, W) or (C_in, H, W)
    with ``weight`` (C_out, C_in / groups, kH, kW), plus ``bias`` (C_out) if given.

    ``stride``, ``padding`` and ``dilation`` are ints or pairs; ``padding`` may also be ``'valid'``
    or ``'same'`` (needs stride 1). ``groups`` splits the channels: each group of
    C_in / groups input channels makes C_out / groups output channels (``groups == C_in`` is a
    depthwise convolution). The output size is
    ``(H + 2 * padding - dilation * (kH - 1) - 1) // stride + 1``.

    >>> import t_tensor as tt
    >>> x = tt.ones(2, 3, 8, 8)
    >>> tt.conv2d(x, tt.ones(4, 3, 3, 3), stride=2, padding=1).shape
    (2, 4, 4, 4)
    >>> tt.conv2d(x, tt.ones(3, 1, 3, 3), groups=3)[0, :, 0, 0].tolist()   # depthwise
    [9.0, 9.0, 9.0]
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------- pooling


def _pool_input(fn: str, input: Any, nd: int) -> None:
    """PyTorch's checks on a pooling input: nd + 1 or nd + 2 dims, only the batch may be empty."""
    _check_tensor(input, "input", fn)
    if input.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[-(nd + 1):]):
        raise RuntimeError(
            f"{fn}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch size for "
            f"input, but got: {list(input.shape)}"
        )
    _check_float(input, fn)


def _pool_output_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: in ceil mode the last window must start inside the input
    or its left padding."""
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_geometry(fn: str, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                   ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    """Checked (kernel, stride, padding, dilation, output size) tuples of ``nd`` ints each."""
    kernel = _ints(kernel_size, nd, "kernel_size", fn)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else (
        _ints(stride, nd, "stride", fn))
    pad = _ints(padding, nd, "padding", fn)
    dil = _ints(dilation, nd, "dilation", fn)
    if any(k < 1 for k in kernel):
        raise RuntimeError(f"{fn}: kernel size should be greater than zero, but got {list(kernel)}")
    if any(s < 1 for s in stride):
        raise RuntimeError(f"{fn}: stride should be greater than zero, but got {list(stride)}")
    if any(d < 1 for d in dil):
        raise RuntimeError(f"{fn}: dilation should be greater than zero, but got {list(dil)}")
    if any(p < 0 for p in pad):
        raise RuntimeError(f"{fn}: pad must be non-negative, but got pad: {list(pad)}")
    for k, p, d in zip(kernel, pad, dil, strict=True):
        if fn == "max_pool1d" and p > k // 2:  # PyTorch's 1-D check comes first and ignores the dilation
            raise RuntimeError(f"{fn}: padding should be at most half of kernel size, but got padding={p} and "
                               f"kernel_size={k}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"{fn}: pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    if fn == "max_pool2d" and any(p > k // 2 for k, p in zip(kernel, pad, strict=True)):  # its kernel's own check
        raise RuntimeError(f"{fn}: pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pad[1]}, padH = {pad[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    spatial = input.shape[-nd:]
    out = tuple(_pool_output_size(*args, ceil_mode) for args in zip(spatial, kernel, pad, stride, dil, strict=True))
    if any(o < 1 for o in out):
        c = input.shape[-nd - 1]
        raise RuntimeError(f"{fn}: Given input size: ({_shape_str((c,) + spatial)}). Calculated output size: "
                           f"({_shape_str((c,) + out)}). Output size is too small")
    return kernel, stride, pad, dil, out


def _two_d(nd: int, *tuples: tuple[int, ...], fill: int) -> list[tuple[int, ...]]:
    """1-D geometry as 2-D: a leading dimension of size 1 (kernel 1, stride 1, no padding)."""
    return [t if nd == 2 else (fill,) + t for t in tuples]


def _max_pool(fn: str, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, return_indices: bool) -> Any:
    if wants_grad(input):
        return FUNCTIONS["MaxPool"].apply(input, fn, nd, kernel_size, stride, padding, dilation, ceil_mode,
                                          return_indices)
    _pool_input(fn, input, nd)
    kernel, stride, pad, dil, out = _pool_geometry(fn, nd, input, kernel_size, stride, padding, dilation, ceil_mode)
    x_shape, x_strides, unbatched = _lift(input, nd)
    shape = _result_shape(x_shape[0], x_shape[1], out, unbatched)
    result = type(input)._empty(shape, input._dtype, fn)
    indices = type(input)._empty(shape, dtypes.int64, fn) if return_indices else None
    (kernel, stride, dil, out), (pad,) = _two_d(nd, kernel, stride, dil, out, fill=1), _two_d(nd, pad, fill=0)
    status = lib.tt_max_pool2d(input._dtype.code, x_shape, input.data_ptr(), x_strides, kernel, stride, pad, dil,
                               out, result.data_ptr(), 0 if indices is None else indices.data_ptr())
    check(status, fn)
    return (result, indices) if return_indices else result


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Maximum over each ``kernel_size`` window of (N, C, H, W) or (C, H, W) ``input``.

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with
    -inf; ``ceil_mode`` rounds the output size up (a last window must still start inside the
    input or its left padding). NaN wins over every number. With ``return_indices``, also the
    position of each maximum as a flat index into its input plane (``row * W + column``), int64.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[[1.0, 5.0, 2.0], [0.0, 3.0, 9.0]]])
    >>> values, indices = tt.max_pool2d(x, 2, stride=1, return_indices=True)
    >>> values.tolist(), indices.tolist()
    ([[[5.0, 9.0]]], [[[1, 5]]])
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Maximum over each window of (N, C, L) or (C, L) ``input``; see :func:`max_pool2d`.

    >>> import t_tensor as tt
    >>> tt.max_pool1d(tt.tensor([[3.0, 1.0, 4.0, 1.0, 5.0]]), 2, ceil_mode=True).tolist()
    [[3.0, 4.0, 5.0]]
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(fn: str, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: Any) -> Any:
    if wants_grad(input):
        return FUNCTIONS["AvgPool"].apply(input, fn, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                          divisor_override)
    _pool_input(fn, input, nd)
    if divisor_override is not None:
        divisor_override = _int(divisor_override, "divisor_override", fn)
        if divisor_override == 0:
            raise RuntimeError(f"{fn}: divisor must be not zero")
        if divisor_override < 0:
            raise RuntimeError(f"{fn}: divisor_override must be positive, got {divisor_override}")
    kernel, stride, pad, _, out = _pool_geometry(fn, nd, input, kernel_size, stride, padding, 1, ceil_mode)
    x_shape, x_strides, unbatched = _lift(input, nd)
    result = type(input)._empty(_result_shape(x_shape[0], x_shape[1], out, unbatched), input._dtype, fn)
    (kernel, stride, out), (pad,) = _two_d(nd, kernel, stride, out, fill=1), _two_d(nd, pad, fill=0)
    status = lib.tt_avg_pool2d(input._dtype.code, x_shape, input.data_ptr(), x_strides, kernel, stride, pad,
                               bool(count_include_pad), divisor_override or 0, out, result.data_ptr())
    check(status, fn)
    return result


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """Mean over each ``kernel_size`` window of (N, C, H, W) or (C, H, W) ``input``.

    The divisor is the window's size cut at the padded edge (``count_include_pad=True``: zeros of
    the padding count, a window sticking out past the padding in ceil mode does not), or the
    number of input elements in the window (``count_include_pad=False``), or ``divisor_override``.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    >>> tt.nn.functional.avg_pool2d(x, 2, padding=1).tolist()
    [[[0.25, 0.5], [0.75, 1.0]]]
    >>> tt.nn.functional.avg_pool2d(x, 2, padding=1, count_include_pad=False).tolist()
    [[[1.0, 2.0], [3.0, 4.0]]]
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Any:
    """Mean over each window of (N, C, L) or (C, L) ``input``; see :func:`avg_pool2d`.

    >>> import t_tensor as tt
    >>> tt.avg_pool1d(tt.tensor([[1.0, 2.0, 3.0, 4.0]]), 2).tolist()
    [[1.5, 3.5]]
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def _adaptive(fn: str, nd: int, max: bool, input: Any, output_size: Any, return_indices: bool) -> Any:
    if wants_grad(input):
        return FUNCTIONS["AdaptivePool"].apply(input, fn, nd, max, output_size, return_indices)
    _check_tensor(input, "input", fn)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    for dim in range(1 if input.ndim == nd + 2 else 0, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")
    _check_float(input, fn)
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise RuntimeError(f"{fn}: output_size must be {nd}, got {list(output_size)}")
        sizes = tuple(s if s is None else _int(s, "output_size", fn) for s in output_size)
    else:
        sizes = (_int(output_size, "output_size", fn),) * nd
    out = tuple(input.shape[-nd + i] if s is None else s for i, s in enumerate(sizes))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0, got {list(out)}")
    x_shape, x_strides, unbatched = _lift(input, nd)
    shape = _result_shape(x_shape[0], x_shape[1], out, unbatched)
    result = type(input)._empty(shape, input._dtype, fn)
    indices = type(input)._empty(shape, dtypes.int64, fn) if max and return_indices else None
    (out,) = _two_d(nd, out, fill=1)
    status = lib.tt_adaptive_pool2d(int(max), input._dtype.code, x_shape, input.data_ptr(), x_strides, out,
                                    result.data_ptr(), 0 if indices is None else indices.data_ptr())
    check(status, fn)
    return (result, indices) if indices is not None else result


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:
    """Mean pooling to a fixed ``output_size`` (an int, or a pair whose ``None`` entries keep the
    input's size). Output row ``i`` averages input rows ``floor(i * H / oH)`` up to
    ``ceil((i + 1) * H / oH)``, and likewise for columns.

    >>> import t_tensor as tt
    >>> x = tt.arange(6.0).view(1, 2, 3)
    >>> tt.nn.functional.adaptive_avg_pool2d(x, (1, None)).tolist()
    [[[1.5, 2.5, 3.5]]]
    """
    return _adaptive("adaptive_avg_pool2d", 2, False, input, output_size, False)


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:
    """Mean pooling of (N, C, L) or (C, L) ``input`` to length ``output_size``.

    >>> import t_tensor as tt
    >>> tt.adaptive_avg_pool1d(tt.tensor([[1.0, 2.0, 3.0]]), 2).tolist()
    [[1.5, 2.5]]
    """
    return _adaptive("adaptive_avg_pool1d", 1, False, input, output_size, False)


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed ``output_size``, windows as :func:`adaptive_avg_pool2d`; indices as
    :func:`max_pool2d`.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]])
    >>> tt.nn.functional.adaptive_max_pool2d(x, 1, return_indices=True)[1].tolist()
    [[[1]]]
    """
    return _adaptive("adaptive_max_pool2d", 2, True, input, output_size, return_indices)


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, L) or (C, L) ``input`` to length ``output_size``.

    >>> import t_tensor as tt
    >>> tt.nn.functional.adaptive_max_pool1d(tt.tensor([[1.0, 3.0, 2.0]]), 2).tolist()
    [[3.0, 3.0]]
    """
    return _adaptive("adaptive_max_pool1d", 1, True, input, output_size, return_indices)


# ---------------------------------------------------------------------- resampling

_MODES = {"nearest": None, "linear": 1, "bilinear": 2}
_OTHER_TORCH_MODES = ("bicubic", "trilinear", "area", "nearest-exact", "lanczos")


def _spatial_args(value: Any, nd: int, what: str, fn: str, input: Any) -> list | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != nd:
            raise ValueError(f"{fn}: Input and {what} must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {list(input.shape[2:])} and {what} {list(value)}")
        return list(value)
    return [value] * nd


def _interpolation_matrix(spatial: tuple, out: tuple, dim: int, size: Any, scale_factor: Any, mode: str,
                          align_corners: Any, recompute_scale_factor: Any, dtype: Any) -> Any:
    """The (out[dim], in[dim]) matrix A with interpolate(x) = A applied along spatial dim ``dim``:
    every mode here is linear in x and separable, so A is read off the forward kernel itself by
    interpolating an identity (one channel per input position)."""
    from t_tensor.autograd.grad_mode import no_grad
    from t_tensor.creation import eye

    n_in = spatial[dim]
    # channel c holds the unit vector e_c along `dim`, constant along the other spatial dims (kept
    # at their sizes, so that output sizes and scales come out exactly as for the real input)
    unit_shape = [1] * len(spatial)
    unit_shape[dim] = n_in
    probe = eye(n_in, dtype=dtype).reshape((1, n_in) + tuple(unit_shape)).expand((1, n_in) + spatial).contiguous()
    kwargs = {"size": out} if size is not None else {"scale_factor": scale_factor}
    with no_grad():
        result = interpolate(probe, mode=mode, align_corners=align_corners,
                             recompute_scale_factor=recompute_scale_factor, **kwargs)
    index = [0] * len(spatial)
    index[dim] = slice(None)
    return result[(0, slice(None)) + tuple(index)].T.contiguous()  # (out[dim], in[dim])


def _interpolate_differentiable(input: Any, size: Any, scale_factor: Any, mode: str, align_corners: Any,
                                recompute_scale_factor: Any, out: tuple) -> Any:
    """interpolate as products with the per-dimension interpolation matrices (differentiable
    through matmul; the same values as the kernel up to the order of the additions)."""
    spatial = tuple(input.shape[2:])
    result = input
    for dim in reversed(range(len(spatial))):
        matrix = _interpolation_matrix(spatial, out, dim, size, scale_factor, mode, align_corners,
                                       recompute_scale_factor, input.dtype)
        moved = result.movedim(2 + dim, -1)            # the interpolated dim last
        result = (moved @ matrix.T).movedim(-1, 2 + dim)
    return result


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Any:
    """Resample (N, C, L) or (N, C, H, W) ``input`` to ``size``, or by ``scale_factor``.

    Modes: ``'nearest'`` (3-D and 4-D input; PyTorch's rule: output index ``i`` reads input index
    ``floor(i * in / out)``), ``'linear'`` (3-D) and ``'bilinear'`` (4-D). ``align_corners``
    (linear modes only, default False) maps the corner pixels' centres onto each other; when
    False, pixel centres are at ``i + 0.5`` and sources left of the first centre clamp to it.

    With ``scale_factor``, the output size is ``floor(in * scale_factor)`` and the coordinates
    use ``1 / scale_factor`` itself (PyTorch's ``recompute_scale_factor=None``); with
    ``recompute_scale_factor=True`` they use ``in / out`` instead.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> tt.nn.functional.interpolate(x, size=3, mode="bilinear", align_corners=True).tolist()
    [[[[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]]]
    """
    fn = "interpolate"
    _check_tensor(input, "input", fn)
    if mode not in _MODES:
        if mode in _OTHER_TORCH_MODES:
            raise NotImplementedError(f"{fn}: mode {mode!r} is not implemented (nearest, linear and bilinear are)")
        raise NotImplementedError(f"{fn}: unknown mode {mode!r} (expected nearest, linear or bilinear)")
    if align_corners is not None and mode == "nearest":
        raise ValueError(f"{fn}: align_corners option can only be set with the interpolating modes: linear | "
                         "bilinear | bicubic | trilinear")
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"{fn}: Only 3D and 4D input tensors are supported, got {input.ndim}D")
    nd = input.ndim - 2
    if _MODES[mode] is not None and _MODES[mode] != nd:
        raise NotImplementedError(f"{fn}: Got {input.ndim}D input, but {mode} mode needs {_MODES[mode] + 2}D input")
    if antialias:
        raise NotImplementedError(f"{fn}: antialias=True is not implemented")
    if size is not None and scale_factor is not None:
        raise ValueError(f"{fn}: only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError(f"{fn}: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError(f"{fn}: recompute_scale_factor is not meaningful with an explicit size.")
    spatial = input.shape[2:]
    scales = [0.0] * nd
    if size is not None:
        sizes = _spatial_args(size, nd, "output size", fn, input)
        out = tuple(_int(s, "size", fn) for s in sizes)
    else:
        factors = _spatial_args(scale_factor, nd, "scale_factor", fn, input)
        if not all(isinstance(f, (int, float)) and not isinstance(f, bool) for f in factors):
            raise TypeError(f"{fn}: scale_factor must be a float or a tuple of floats, got {scale_factor!r}")
        out = tuple(math.trunc(s * float(f)) if math.isfinite(s * float(f)) else -1
                    for s, f in zip(spatial, factors, strict=True))
        if not recompute_scale_factor:
            scales = [float(f) for f in factors]
    names = ("H", "W")[-nd:]
    if any(s < 1 for s in spatial + out):
        described = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial, strict=True))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, out, strict=True))
        raise RuntimeError(f"{fn}: Input and output sizes should be greater than 0, but got input ({described}) "
                           f"and output ({wanted})")
    if input.shape[1] == 0:
        raise RuntimeError(f"{fn}: Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    _check_float(input, fn)
    if wants_grad(input):
        return _interpolate_differentiable(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                           out)
    x_shape, x_strides, _ = _lift(input, nd)
    result = type(input)._empty(input.shape[:2] + out, input._dtype, fn)
    (out,) = _two_d(nd, out, fill=1)
    scales = scales if nd == 2 else [0.0] + scales
    kernel_mode = 1 if mode != "nearest" else 0 if nd == 2 else 2  # PyTorch's 1-D and 2-D nearest rules differ
    status = lib.tt_interpolate2d(kernel_mode, input._dtype.code, x_shape, input.data_ptr(), x_strides,
                                  out, scales, bool(align_corners), result.data_ptr())
    check(status, fn)
    return result
