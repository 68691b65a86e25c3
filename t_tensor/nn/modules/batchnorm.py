"""``BatchNorm1d``, ``BatchNorm2d`` and ``GroupNorm`` over ``nn.functional.batch_norm`` /
``group_norm``.

Batch norm normalizes each channel with the batch's statistics while training and keeps running
estimates (``running_mean``, ``running_var``, ``num_batches_tracked`` buffers) that it uses in
eval mode, as PyTorch.

>>> import t_tensor as tt
>>> bn = tt.nn.BatchNorm2d(3)
>>> bn
BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
>>> sorted(bn.state_dict())
['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
"""

from __future__ import annotations

from typing import Any

from t_tensor import dtypes
from t_tensor.autograd.grad_mode import no_grad
from t_tensor.creation import empty, ones, tensor, zeros
from t_tensor.nn import functional as F
from t_tensor.nn import init
from t_tensor.nn.module import Module
from t_tensor.nn.modules.linear import factory_dtype
from t_tensor.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm"]


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        dtype = factory_dtype(dtype, device, type(self).__name__)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype))
            self.bias = Parameter(empty(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:
        if input.ndim not in self._dims:
            raise ValueError(f"{type(self).__name__}: expected {' or '.join(f'{d}D' for d in self._dims)} input "
                             f"(got {input.ndim}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or not self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight, self.bias, use_batch_stats, momentum, self.eps,
        )

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) input, per channel C."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) input, per channel C."""

    _dims = (4,)


class GroupNorm(Module):
    """Normalizes each sample over groups of ``num_channels / num_groups`` channels, then scales
    and shifts per channel (learned, ones and zeros at first)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        dtype = factory_dtype(dtype, device, "GroupNorm")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype))
            self.bias = Parameter(zeros(num_channels, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Any) -> Any:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")
