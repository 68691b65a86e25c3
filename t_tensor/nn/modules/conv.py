"""``Conv1d`` and ``Conv2d``: learned filters over ``nn.functional.conv1d``/``conv2d``.

>>> import t_tensor as tt
>>> conv = tt.nn.Conv2d(1, 4, 3, padding=1)
>>> conv
Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
>>> conv(tt.ones(2, 1, 8, 8)).shape
(2, 4, 8, 8)
"""

from __future__ import annotations

import math
from typing import Any

from t_tensor.creation import empty
from t_tensor.nn import functional as F
from t_tensor.nn import init
from t_tensor.nn.module import Module
from t_tensor.nn.modules.linear import factory_dtype
from t_tensor.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = {"zeros": None, "reflect": "reflect", "replicate": "replicate", "circular": "circular"}


def _tuple(value: Any, n: int, name: str, fn: str) -> tuple[int, ...]:
    values = (value,) * n if isinstance(value, int) else tuple(value)
    if len(values) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{fn}: {name} must be an int or {n} ints, got {value!r}")
    return values


class _ConvNd(Module):
    """What Conv1d and Conv2d share: the parameters, PyTorch's initialization and the repr."""

    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        fn = type(self).__name__
        nd = self._nd
        dtype = factory_dtype(dtype, device, fn)
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{fn}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups}), which must be positive")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{fn}: padding_mode must be one of {sorted(_PADDING_MODES)}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", fn)
        self.stride = _tuple(stride, nd, "stride", fn)
        self.dilation = _tuple(dilation, nd, "dilation", fn)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{fn}: padding must be 'same', 'valid' or ints, got {padding!r}")
            if padding == "same" and padding_mode != "zeros":
                raise ValueError(f"{fn}: padding='same' is only implemented with padding_mode='zeros'")
            self.padding: Any = padding
        else:
            self.padding = _tuple(padding, nd, "padding", fn)
        self.padding_mode = padding_mode
        self.weight = Parameter(empty((out_channels, in_channels // groups) + self.kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialization: weight kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), +)."""
        init.default_layer_init_(self.weight, self.bias, self.weight.shape[1] * math.prod(self.kernel_size))

    def _convolve(self, input: Any, conv: Any) -> Any:
        if self.padding_mode != "zeros":
            pads = [p for amount in reversed(self.padding) for p in (amount, amount)]
            input = F.pad(input, pads, mode=_PADDING_MODES[self.padding_mode])
            return conv(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            text += f", padding={self.padding}"  # a string unquoted, as torch 2.13 prints it
        if self.dilation != (1,) * self._nd:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-d convolution of (N, C_in, L) or (C_in, L) input: weight (C_out, C_in / groups, k)."""

    _nd = 1

    def forward(self, input: Any) -> Any:
        return self._convolve(input, F.conv1d)


class Conv2d(_ConvNd):
    """2-d convolution of (N, C_in, H, W) or (C_in, H, W) input: weight (C_out, C_in / groups, kh, kw)."""

    _nd = 2

    def forward(self, input: Any) -> Any:
        return self._convolve(input, F.conv2d)
