"""Activation modules: ``ReLU``, ``GELU``, ``SiLU``, ``Tanh``, ``Sigmoid``, ``Softmax``,
``LogSoftmax`` (each calls the function of the same name in :mod:`t_tensor.nn.functional`).

>>> import t_tensor as tt
>>> tt.nn.ReLU()(tt.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
>>> tt.nn.Softmax(dim=-1)
Softmax(dim=-1)
"""

from __future__ import annotations

from typing import Any

from t_tensor.nn import functional_core as F
from t_tensor.nn.module import Module

__all__ = ["GELU", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh"]


class ReLU(Module):
    """``max(x, 0)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit (``approximate="tanh"`` for the tanh approximation).

    >>> import t_tensor as tt
    >>> tt.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Any) -> Any:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input: Any) -> Any:
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid."""

    def forward(self, input: Any) -> Any:
        return F.sigmoid(input)


class Softmax(Module):
    """Softmax along ``dim`` (None: PyTorch's implicit choice)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along ``dim`` (None: PyTorch's implicit choice)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
