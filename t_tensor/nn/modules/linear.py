"""``Identity``, ``Linear`` and ``Flatten``.

>>> import t_tensor as tt
>>> layer = tt.nn.Linear(3, 2)
>>> layer
Linear(in_features=3, out_features=2, bias=True)
>>> layer(tt.ones(5, 3)).shape, layer.weight.shape, layer.bias.shape
((5, 2), (2, 3), (2,))
"""

from __future__ import annotations

from typing import Any

from t_tensor import dtypes
from t_tensor.creation import empty
from t_tensor.nn import functional_core as F
from t_tensor.nn import init
from t_tensor.nn.module import Module
from t_tensor.nn.parameter import Parameter

__all__ = ["Flatten", "Identity", "Linear"]


def factory_dtype(dtype: Any, device: Any, fn: str) -> Any:
    """The dtype a layer creates its parameters with (float32 by default); ``device`` must be cpu."""
    if device is not None and device != "cpu":
        raise RuntimeError(f"{fn}: only the 'cpu' device exists, got {device!r}")
    return dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype, fn=fn)


class Identity(Module):
    """Returns its input (a placeholder); ignores any constructor arguments.

    >>> import t_tensor as tt
    >>> x = tt.ones(2)
    >>> tt.nn.Identity()(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` ``(out_features, in_features)``, initialized as
    PyTorch: weight ``kaiming_uniform_(a=sqrt(5))`` (that is U(-k, k) with ``k = 1/sqrt(in_features)``)
    and bias U(-k, k)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        dtype = factory_dtype(dtype, device, "Linear")
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Linear: {name} must be a non-negative int, got {value!r}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again (PyTorch's default initialization)."""
        init.default_layer_init_(self.weight, self.bias, self.in_features)

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one (by default all but the batch dim).

    >>> import t_tensor as tt
    >>> tt.nn.Flatten()(tt.zeros(2, 3, 4)).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Any) -> Any:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
