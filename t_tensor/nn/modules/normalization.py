"""``LayerNorm``: normalization over the trailing ``normalized_shape`` dims, with a learned
elementwise scale (ones) and shift (zeros).

>>> import t_tensor as tt
>>> ln = tt.nn.LayerNorm(4)
>>> ln
LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
>>> y = ln(tt.arange(8.0).reshape(2, 4))
>>> [round(v, 4) for v in y[0].tolist()]
[-1.3416, -0.4472, 0.4472, 1.3416]
"""

from __future__ import annotations

from typing import Any

from t_tensor.creation import empty
from t_tensor.nn import functional_core as F
from t_tensor.nn import init
from t_tensor.nn.module import Module
from t_tensor.nn.modules.linear import factory_dtype
from t_tensor.nn.parameter import Parameter

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)``
    dims (biased variance); ``elementwise_affine=False`` drops weight and bias, ``bias=False``
    only the bias."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        dtype = factory_dtype(dtype, device, "LayerNorm")
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*shape, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(*shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
