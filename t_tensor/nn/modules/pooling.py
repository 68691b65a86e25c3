"""Pooling layers over ``nn.functional``: max, average and adaptive pooling in 1-d and 2-d.

>>> import t_tensor as tt
>>> pool = tt.nn.MaxPool2d(2)
>>> pool
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
>>> pool(tt.arange(16.0).reshape(1, 1, 4, 4)).tolist()
[[[[5.0, 7.0], [13.0, 15.0]]]]
"""

from __future__ import annotations

from typing import Any

from t_tensor.nn import functional as F
from t_tensor.nn.module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d",
           "AvgPool2d", "MaxPool1d", "MaxPool2d"]


class _MaxPoolNd(Module):
    _function: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Any) -> Any:
        return type(self)._function(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                    ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Maximum over windows of (N, C, L) input (``nn.functional.max_pool1d``)."""

    _function = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Maximum over windows of (N, C, H, W) input (``nn.functional.max_pool2d``)."""

    _function = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    _function: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Any) -> Any:
        return type(self)._function(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                    self.count_include_pad, *self._extra())

    def _extra(self) -> tuple:
        return (self.divisor_override,)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over windows of (N, C, L) input (``nn.functional.avg_pool1d``)."""

    _function = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        def single(v: Any) -> Any:  # torch keeps AvgPool1d's sizes as 1-tuples
            return v if v is None or isinstance(v, tuple) else tuple(v) if isinstance(v, list) else (v,)

        super().__init__(single(kernel_size), single(stride), single(padding), ceil_mode, count_include_pad)

    def _extra(self) -> tuple:
        return ()


class AvgPool2d(_AvgPoolNd):
    """Mean over windows of (N, C, H, W) input (``nn.functional.avg_pool2d``)."""

    _function = staticmethod(F.avg_pool2d)


class _AdaptiveNd(Module):
    _function: Any = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Any:
        return type(self)._function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxNd(_AdaptiveNd):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Any) -> Any:
        return type(self)._function(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptiveNd):
    """Mean pooling to a fixed output length."""

    _function = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveNd):
    """Mean pooling to a fixed output size (``AdaptiveAvgPool2d(1)``: global average pooling)."""

    _function = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveMaxPool1d(_AdaptiveMaxNd):
    """Max pooling to a fixed output length."""

    _function = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxNd):
    """Max pooling to a fixed output size."""

    _function = staticmethod(F.adaptive_max_pool2d)
