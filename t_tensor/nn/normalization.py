"""Batch and group normalization: ``batch_norm`` and ``group_norm`` of ``torch.nn.functional``.

Both normalize ``x`` to ``x_hat = (x - mean) / sqrt(var + eps)`` (the biased variance) and return
``x_hat * weight + bias``, per channel (dimension 1 of an (N, C, *) input); they differ in which
elements share a mean and variance:

* ``batch_norm``: each channel, over the batch and the spatial dimensions. In training it also
  updates ``running_mean`` and ``running_var`` in place, as PyTorch: ``running = (1 - momentum) *
  running + momentum * statistic``, with the *unbiased* variance for ``running_var``. In
  evaluation (``training=False``) it normalizes with the running statistics instead.
* ``group_norm``: each image and group of ``C / num_groups`` consecutive channels, over those
  channels and the spatial dimensions.

``batch_norm`` of a float32 or float64 input runs in one C call forward and one backward
(``csrc/src/kernels/norm.c``: per-channel sums in double, the rest in the input's dtype);
``group_norm``, and ``batch_norm`` of other dtypes, are computed with tensor ops in the input's
dtype. Their gradients are explicit formulas (``t_tensor/autograd/functions/nn.py``),
differentiable again (``create_graph=True``, through the tensor-op formulas).

>>> import t_tensor as tt
>>> import t_tensor.nn.functional as F
>>> x = tt.tensor([[1.0, 10.0], [3.0, 30.0]])
>>> F.batch_norm(x, None, None, training=True).tolist()
[[-0.9999949932098389, -0.9999999403953552], [0.9999949932098389, 0.9999999403953552]]
>>> F.group_norm(tt.tensor([[[1.0, 3.0]]]), 1, eps=0.0).tolist()
[[[-1.0, 1.0]]]
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor import dtypes
from t_tensor._capi import check, lib
from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import no_grad, wants_grad
from t_tensor.nn import functional as F
from t_tensor.nn.functional_core import _address

__all__ = ["batch_norm", "group_norm"]


def _check_input(input: Any, fn: str) -> None:
    F._check_tensor(input, "input", fn)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: Expected at least 2 dimensions for input tensor but received {input.ndim}")
    F._check_float(input, fn)


def _check_channels(value: Any, name: str, input: Any, fn: str) -> None:
    """``value`` (if not None) must be a (C,) tensor of the input's dtype."""
    if value is None:
        return
    F._check_tensor(value, name, fn)
    if value.shape != (input.shape[1],):
        raise RuntimeError(f"{fn}: expected {name} of size [{input.shape[1]}] (the input's channels), got "
                           f"{list(value.shape)}")
    if value._dtype is not input._dtype:
        raise RuntimeError(f"{fn}: expected {name} of dtype {input._dtype.name} (the input's), got "
                           f"{value._dtype.name}")


def _per_channel(t: Any, ndim: int) -> Any:
    """A (C,) tensor shaped to broadcast against an (N, C, *) input of ``ndim`` dimensions."""
    return t.reshape((1, t.shape[0]) + (1,) * (ndim - 2))


def _affine(x_hat: Any, weight: Any, bias: Any) -> Any:
    y = x_hat if weight is None else x_hat * _per_channel(weight, x_hat.ndim)
    return y if bias is None else y + _per_channel(bias, x_hat.ndim)


def _check_batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any, training: bool,
                      momentum: Any, eps: Any) -> None:
    fn = "batch_norm"
    _check_input(input, fn)
    for value, name in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                        (bias, "bias")):
        _check_channels(value, name, input, fn)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"{fn}: running_mean and running_var must be defined in evaluation mode")
    for value, name in ((momentum, "momentum"), (eps, "eps")):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{fn}: {name} must be a float, got {type(value).__name__}")
    if training and math.prod(input.shape) // max(input.shape[1], 1) <= 1:
        raise ValueError(f"{fn}: Expected more than 1 value per channel when training, got input size "
                         f"{list(input.shape)}")
    if training and eps <= 0:
        raise ValueError(f"{fn}: eps must be positive during training, but got {eps}")
    if eps < 0:
        raise ValueError(f"{fn}: eps must be non-negative, but got {eps}")


def _batch_stats(input: Any) -> tuple[Any, Any]:
    """The mean and biased variance of each channel, (C,) each."""
    dims = (0,) + tuple(range(2, input.ndim))
    mean = input.mean(dims)
    centered = input - _per_channel(mean, input.ndim)
    return mean, (centered * centered).mean(dims)


def _batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any, training: bool,
                momentum: float, eps: float, keep_x_hat: bool = True) -> tuple[Any, Any, Any, Any]:
    """(output, x_hat, mean, invstd): the forward, and what its backward needs (x_hat is None
    unless ``keep_x_hat``)."""
    if _kernel_takes(input, running_mean, running_var, weight, bias):
        return _batch_norm_kernel(input, running_mean, running_var, weight, bias, training, momentum, eps,
                                  keep_x_hat)
    if training:
        mean, var = _batch_stats(input)
        count = math.prod(input.shape) // input.shape[1]
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var * (momentum * count / (count - 1)))
    else:
        mean, var = running_mean.clone(), running_var
    invstd = (var + eps).rsqrt()
    x_hat = (input - _per_channel(mean, input.ndim)) * _per_channel(invstd, input.ndim)
    return _affine(x_hat, weight, bias), x_hat, mean, invstd


_KERNEL_DTYPES = (dtypes.float32, dtypes.float64)


def _kernel_takes(input: Any, *channel_tensors: Any) -> bool:
    """Whether tt_batch_norm_forward / _backward take this call: a float32 or float64 input and
    contiguous per-channel tensors (checked to be of the input's dtype already)."""
    return input._dtype in _KERNEL_DTYPES and all(t is None or t.is_contiguous() for t in channel_tensors)


def _ncs(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """An (N, C, *) shape as the kernels' (n, c, s): s is the product of the spatial sizes."""
    return shape[0], shape[1], math.prod(shape[2:])


def _batch_norm_kernel(input: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any, training: bool,
                       momentum: float, eps: float, keep_x_hat: bool) -> tuple[Any, Any, Any, Any]:
    """_batch_norm in one C call (tt_batch_norm_forward)."""
    x = input.contiguous()
    shape, dtype, new = x._shape, x._dtype, type(x)._empty
    y = new(shape, dtype, "batch_norm")
    x_hat = new(shape, dtype, "batch_norm") if keep_x_hat else None
    mean, invstd = new((shape[1],), dtype, "batch_norm"), new((shape[1],), dtype, "batch_norm")
    check(lib.tt_batch_norm_forward(dtype.code, *_ncs(shape), x.data_ptr(), int(training), momentum, eps,
                                    _address(running_mean), _address(running_var), _address(weight),
                                    _address(bias), y.data_ptr(), _address(x_hat), mean.data_ptr(),
                                    invstd.data_ptr()), "batch_norm")
    return y, x_hat, mean, invstd


def _batch_norm_grads(grad: Any, x_hat: Any, invstd: Any, weight: Any, training: bool,
                      needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """(grad_input, grad_weight, grad_bias) of _batch_norm_kernel in one C call
    (tt_batch_norm_backward); ``needs`` says which of the three to compute."""
    dy = grad.contiguous()
    shape, dtype, new = dy._shape, dy._dtype, type(dy)._empty
    grad_input = new(shape, dtype, "batch_norm_backward") if needs[0] else None
    grad_weight = new((shape[1],), dtype, "batch_norm_backward") if needs[1] else None
    grad_bias = new((shape[1],), dtype, "batch_norm_backward") if needs[2] else None
    # x_hat and invstd are the forward's own (contiguous: .contiguous() is then free), except
    # after the tensor-op forward, whose layouts the kernel must not assume
    check(lib.tt_batch_norm_backward(dtype.code, *_ncs(shape), dy.data_ptr(), x_hat.contiguous().data_ptr(),
                                     invstd.contiguous().data_ptr(), _address(weight), int(training),
                                     _address(grad_input), _address(grad_weight), _address(grad_bias)),
          "batch_norm_backward")
    return grad_input, grad_weight, grad_bias


def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None, bias: Any = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Batch normalization of (N, C, *) ``input``: per channel, ``(x - mean) / sqrt(var + eps) *
    weight + bias``, with the batch's statistics (``training=True``, which also updates
    ``running_mean`` / ``running_var`` in place when given) or the running ones.

    >>> import t_tensor as tt
    >>> mean, var = tt.zeros(2), tt.ones(2)
    >>> x = tt.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> tt.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.5).shape
    (2, 2)
    >>> mean.tolist(), var.tolist()   # the means 2 and 4, the unbiased variances 2 and 8, half-way
    ([1.0, 2.0], [1.5, 4.5])
    >>> tt.nn.functional.batch_norm(tt.tensor([[3.0, 2.0]]), mean, var, eps=0.0).tolist()
    [[1.6329931020736694, 0.0]]
    """
    _check_batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if wants_grad(input, weight, bias):
        return FUNCTIONS["BatchNorm"].apply(input, running_mean, running_var, weight, bias, bool(training),
                                            float(momentum), float(eps))
    return _batch_norm(input, running_mean, running_var, weight, bias, bool(training), float(momentum),
                       float(eps), keep_x_hat=False)[0]


def _group_stats(input: Any, num_groups: int, eps: float) -> tuple[Any, Any]:
    """(x_hat, invstd (N, G, 1)) of a group normalization."""
    shape = input.shape
    grouped = input.reshape(shape[0], num_groups, math.prod(shape[1:]) // num_groups)
    centered = grouped - grouped.mean(2, keepdim=True)
    invstd = ((centered * centered).mean(2, keepdim=True) + eps).rsqrt()
    return (centered * invstd).reshape(shape), invstd


def _group_norm(input: Any, num_groups: int, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
    """(output, x_hat, invstd (N, G, 1)): the forward, and what its backward needs."""
    x_hat, invstd = _group_stats(input, num_groups, eps)
    return _affine(x_hat, weight, bias), x_hat, invstd


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Group normalization of (N, C, *) ``input``: the C channels form ``num_groups`` groups of
    consecutive channels, and each image's group is normalized with its own mean and (biased)
    variance, then scaled by ``weight`` and shifted by ``bias`` per channel.

    >>> import t_tensor as tt
    >>> x = tt.tensor([[[1.0, 3.0], [10.0, 30.0]]])
    >>> tt.nn.functional.group_norm(x, 2, eps=0.0).tolist()
    [[[-1.0, 1.0], [-1.0, 1.0]]]
    """
    fn = "group_norm"
    _check_input(input, fn)
    if isinstance(num_groups, bool) or not isinstance(num_groups, int):
        raise TypeError(f"{fn}: num_groups must be an int, got {type(num_groups).__name__}")
    if num_groups < 1 or input.shape[1] % num_groups != 0:
        raise RuntimeError(f"{fn}: Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {list(input.shape)} and num_groups={num_groups}")
    if input.shape[0] * input.shape[1] // num_groups * math.prod(input.shape[2:]) == 1:  # PyTorch's check
        raise ValueError(f"{fn}: Expected more than 1 value per channel when training, got input size "
                         f"{[input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]]}")
    _check_channels(weight, "weight", input, fn)
    _check_channels(bias, "bias", input, fn)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise TypeError(f"{fn}: eps must be a float, got {type(eps).__name__}")
    if wants_grad(input, weight, bias):
        return FUNCTIONS["GroupNorm"].apply(input, num_groups, weight, bias, float(eps))
    return _group_norm(input, num_groups, weight, bias, float(eps))[0]
