"""Loss modules, each calling the function of the same name in :mod:`t_tensor.nn.functional`:
``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``NLLLoss``,
``CrossEntropyLoss``. Class weights are registered as buffers (so they follow ``to`` and appear
in ``state_dict``), as in PyTorch.

>>> import t_tensor as tt
>>> criterion = tt.nn.CrossEntropyLoss(label_smoothing=0.1)
>>> round(criterion(tt.tensor([[2.0, 0.0]]), tt.tensor([0])).item(), 4)
0.2269
"""

from __future__ import annotations

from typing import Any

from t_tensor.nn import functional_core as F
from t_tensor.nn.module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss"]


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._check_reduction(reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input: Any, target: Any) -> Any:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input: Any, target: Any) -> Any:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Any:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities."""

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits (sigmoid included, computed stably)."""

    def __init__(self, weight: Any = None, reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities and class indices."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits against class indices or class probabilities."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Any:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)
