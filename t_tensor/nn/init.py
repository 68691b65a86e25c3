"""Weight initialization, as ``torch.nn.init``: each function fills a tensor in place (under
``no_grad``, so it works on parameters) from t_tensor's random generator and returns it.

The fans follow PyTorch: for a weight of shape ``(out, in, *kernel)``, ``fan_in = in * prod(kernel)``
and ``fan_out = out * prod(kernel)``; a 1-D tensor has no fans (an error, as in PyTorch).

* ``uniform_(t, a, b)``, ``normal_(t, mean, std)``, ``constant_``, ``zeros_``, ``ones_``;
* ``xavier_uniform_`` / ``xavier_normal_``: variance ``gain^2 * 2 / (fan_in + fan_out)``;
* ``kaiming_uniform_`` / ``kaiming_normal_``: variance ``gain^2 / fan`` with the gain of the
  nonlinearity (``calculate_gain``; for leaky_relu ``sqrt(2 / (1 + a^2))``).

>>> import t_tensor as tt
>>> w = tt.empty(256, 128)
>>> _ = tt.nn.init.kaiming_uniform_(w, nonlinearity="relu")
>>> bound = (6 / 128) ** 0.5   # gain sqrt(2) * sqrt(3 / fan_in)
>>> bool(w.abs().max().item() <= bound)
True
>>> tt.nn.init.calculate_gain("tanh")
1.6666666666666667
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor.autograd.grad_mode import no_grad
from t_tensor.creation import rand, randn
from t_tensor.random import Generator
from t_tensor.tensor import Tensor

__all__ = [
    "calculate_gain", "constant_", "ones_", "zeros_", "uniform_", "normal_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
]  # fmt: skip

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for a nonlinearity (the factor that keeps activations' variance):
    1 for linear/conv/sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for
    leaky_relu (slope ``param``, default 0.01), 3/4 for selu.

    >>> import t_tensor as tt
    >>> round(tt.nn.init.calculate_gain("leaky_relu", 0.2), 6)
    1.38675
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity}")


def _check(tensor: Any, fn: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(tensor).__name__}")


def _calculate_fan_in_and_fan_out(tensor: Any, fn: str = "init") -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight shaped ``(out, in, *kernel)``."""
    if tensor.dim() < 2:
        raise ValueError(f"{fn}: Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Any, mode: str, fn: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{fn}: Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, fn)
    return fan_in if mode == "fan_in" else fan_out


def _fill_from(tensor: Any, values: Any) -> Any:
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(tensor: Any, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Any:
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``.

    >>> import t_tensor as tt
    >>> w = tt.nn.init.uniform_(tt.empty(1000), -2.0, 3.0)
    >>> bool(w.min().item() >= -2.0 and w.max().item() <= 3.0)
    True
    """
    _check(tensor, "uniform_")
    if not a <= b:
        raise ValueError(f"uniform_: expects a <= b, but got a={a} and b={b}")
    sample = rand(*tensor.shape, generator=generator, dtype=_draw_dtype(tensor))
    return _fill_from(tensor, sample * (b - a) + a)


def normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Any:
    """Fill ``tensor`` with values drawn from the normal distribution N(mean, std^2).

    >>> import t_tensor as tt
    >>> w = tt.nn.init.normal_(tt.empty(20000), 1.0, 0.5)
    >>> round(w.mean().item(), 1), round(w.std().item(), 1)
    (1.0, 0.5)
    """
    _check(tensor, "normal_")
    if std < 0:
        raise ValueError(f"normal_: expects std >= 0.0, but found std {std}")
    sample = randn(*tensor.shape, generator=generator, dtype=_draw_dtype(tensor))
    return _fill_from(tensor, sample * std + mean)


def _draw_dtype(tensor: Any) -> Any:
    from t_tensor import dtypes

    if tensor.dtype is dtypes.float64:
        return dtypes.float64
    return dtypes.float32  # float16 (and integer tensors) draw in float32 and round once on copy


def constant_(tensor: Any, val: float) -> Any:
    """Fill ``tensor`` with ``val``.

    >>> import t_tensor as tt
    >>> tt.nn.init.constant_(tt.empty(3), 0.5).tolist()
    [0.5, 0.5, 0.5]
    """
    return _fill(tensor, val, "constant_")


def zeros_(tensor: Any) -> Any:
    """Fill ``tensor`` with zeros."""
    return _fill(tensor, 0.0, "zeros_")


def ones_(tensor: Any) -> Any:
    """Fill ``tensor`` with ones."""
    return _fill(tensor, 1.0, "ones_")


def _fill(tensor: Any, val: float, fn: str) -> Any:
    _check(tensor, fn)
    with no_grad():
        tensor.fill_(val)
    return tensor


def xavier_uniform_(tensor: Any, gain: float = 1.0, generator: Generator | None = None) -> Any:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Any, gain: float = 1.0, generator: Generator | None = None) -> Any:
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Any, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Any:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)`` (``gain = calculate_gain(nonlinearity, a)``,
    ``fan`` the fan_in or fan_out as ``mode`` says). A tensor with a zero dimension is left as is."""
    _check(tensor, "kaiming_uniform_")
    if 0 in tensor.shape:
        return tensor
    fan = _fan(tensor, mode, "kaiming_uniform_")
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Any, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Any:
    """He normal: N(0, std^2) with ``std = gain / sqrt(fan)``. A tensor with a zero dimension is
    left as is."""
    _check(tensor, "kaiming_normal_")
    if 0 in tensor.shape:
        return tensor
    fan = _fan(tensor, mode, "kaiming_normal_")
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def default_layer_init_(weight: Any, bias: Any, fan_in: int) -> None:
    """PyTorch's default initialization of Linear and convolution layers: the weight
    ``kaiming_uniform_(a=sqrt(5))`` (that is U(-k, k) with ``k = 1/sqrt(fan_in)``), the bias (if
    any) U(-k, k) too."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound)
