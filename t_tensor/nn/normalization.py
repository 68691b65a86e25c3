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

Both are computed with tensor ops in the input's dtype. Their gradients are explicit formulas
(``t_tensor/autograd/functions/nn.py``), differentiable again (``create_graph=True``).

>>> import t_tensor as tt
>>> import t_tensor.nn.functional as F
>>> x = tt.tensor([[1.0, 10.0], [3.0, 30.0]])
>>> F.batch_norm(x, None, None, training=True).tolist()
[[-0.9999949932098389, -1.0], [0.9999949932098389, 1.0]]
>>> F.group_norm(tt.tensor([[[1.0, 3.0]]]), 1, eps=0.0).tolist()
[[[-1.0, 1.0]]]
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor.autograd.function import FUNCTIONS
from t_tensor.autograd.grad_mode import no_grad, wants_grad
from t_tensor.nn import functional as F

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
                momentum: float, eps: float) -> tuple[Any, Any, Any, Any]:
    """(output, x_hat, mean, invstd): the forward, and what its backward needs."""
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
                       float(eps))[0]


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
