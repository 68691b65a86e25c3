"""Learning-rate schedulers: they rewrite ``group['lr']`` of an optimizer's parameter groups each
time :meth:`LRScheduler.step` is called (once per epoch, after ``optimizer.step()``), with the same
values as ``torch.optim.lr_scheduler`` (including PyTorch's recursive formulas, so the floating
point results agree too).

>>> import t_tensor as tt
>>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
>>> sched = tt.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(5):
...     opt.step()
...     sched.step()
...     lrs.append(sched.get_last_lr()[0])
>>> lrs
[1.0, 0.5, 0.5, 0.25, 0.25]
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from t_tensor.optim.optimizer import Optimizer

__all__ = ["ConstantLR", "CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
           "StepLR"]


def _lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


class LRScheduler:
    """Base class: remembers each group's ``initial_lr`` (in the group, as PyTorch) in ``base_lrs``,
    counts epochs in ``last_epoch`` and, on each :meth:`step`, sets the groups' lr to
    :meth:`get_lr`. Construction performs the first step (epoch 0).

    ``last_epoch`` other than -1 resumes a schedule: the groups must then hold ``'initial_lr'``.

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = tt.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched.last_epoch, sched.base_lrs, opt.param_groups[0]["initial_lr"]
    (0, [0.1], 0.1)
    """

    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{name}: {type(optimizer).__name__} is not an Optimizer")
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int):
            raise TypeError(f"{name}: last_epoch must be an int, got {type(last_epoch).__name__}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"{name}: param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "an optimizer")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates of the current epoch ``last_epoch``, one per group (computed from the
        groups' current lr where PyTorch does so)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to `epoch`, with the closed form when the scheduler has one)
        and write the new learning rates into the optimizer's groups."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`: call `optimizer.step()` first, "
                "or the first value of the learning rate schedule is skipped.",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr: list[float] = _lrs(self.optimizer)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (PyTorch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by :meth:`state_dict`."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; `lr_lambda` is one function or a list, one per group.

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.5)
    >>> sched = tt.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"LambdaLR: Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"LambdaLR: lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """As the base class, with ``'lr_lambdas'``: None for a plain function, the attribute dict
        of a callable object (functions are not saved)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes; callable objects among the lambdas get their saved attributes."""
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas, strict=True):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiply the lr by `gamma` every `step_size` epochs.

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tt.optim.lr_scheduler.StepLR(opt, step_size=3)
    >>> for _ in range(3): opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.1]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by `gamma` at each epoch listed in `milestones` (a milestone listed twice
    multiplies twice).

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tt.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4): opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the lr by `factor` for the first `total_iters` epochs, then restore it (a warmup).

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tt.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(3): opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("ConstantLR: Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr by a factor going linearly from `start_factor` to `end_factor` over
    `total_iters` epochs, then keep it (a warmup).

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tt.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4): opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("LinearLR: Starting multiplicative factor expected to be greater than 0 and less or "
                             "equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("LinearLR: Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by `gamma` every epoch.

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tt.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> for _ in range(2): opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr down to `eta_min` over `T_max` epochs (then back up,
    periodically): ``eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``,
    computed recursively from the current lr as PyTorch does (so an lr changed by hand carries on).

    >>> import t_tensor as tt
    >>> opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> lrs = []
    >>> for _ in range(4): opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive int, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _lrs(self.optimizer)
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]
