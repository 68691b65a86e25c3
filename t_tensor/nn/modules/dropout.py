"""``Dropout``: zeroes elements with probability ``p`` while training, the identity in eval mode.

>>> import t_tensor as tt
>>> drop = tt.nn.Dropout(0.5)
>>> drop
Dropout(p=0.5, inplace=False)
>>> drop.eval()(tt.ones(3)).tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

from t_tensor.nn import functional_core as F
from t_tensor.nn.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """During training, zero each element with probability ``p`` (drawn from t_tensor's default
    generator) and scale the rest by ``1 / (1 - p)``; in eval mode, return the input."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
