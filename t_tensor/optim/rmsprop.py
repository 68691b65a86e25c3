"""RMSprop, step for step as ``torch.optim.RMSprop``.

>>> import t_tensor as tt
>>> p = tt.tensor([1.0], requires_grad=True)
>>> opt = tt.optim.RMSprop([p], lr=0.01, alpha=0.75)
>>> p.grad = tt.tensor([2.0]); opt.step()
>>> round(p.item(), 6)      # 1 - 0.01 * 2 / sqrt(0.25 * 4)
0.98
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from t_tensor import dtypes
from t_tensor.autograd.grad_mode import no_grad
from t_tensor.creation import tensor, zeros_like
from t_tensor.optim.optimizer import Optimizer, check_number, params_with_grads

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Divide the gradient by a running root mean square::

        v = alpha v + (1 - alpha) g^2          avg = sqrt(v) + eps
        p -= lr * g / avg                      (or, with momentum: buf = momentum buf + g / avg; p -= lr buf)

    ``g`` is the gradient (negated with ``maximize``) plus ``weight_decay * p``. ``centered`` also
    tracks the mean gradient ``m = alpha m + (1 - alpha) g`` and uses ``avg = sqrt(v - m^2) + eps``.

    State per parameter: ``'step'`` (float32 0-d tensor), ``'square_avg'``, ``'momentum_buffer'``
    (momentum > 0), ``'grad_avg'`` (centered).

    >>> import t_tensor as tt
    >>> p = tt.zeros(2, requires_grad=True)
    >>> opt = tt.optim.RMSprop([p], momentum=0.9, centered=True)
    >>> p.grad = tt.ones(2); opt.step()
    >>> sorted(opt.state[p])
    ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
    """

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_number("RMSprop", "learning rate", lr)
        check_number("RMSprop", "epsilon", eps)
        check_number("RMSprop", "momentum", momentum)
        check_number("RMSprop", "weight_decay", weight_decay)
        check_number("RMSprop", "alpha", alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
                weight_decay, centered = group["weight_decay"], group["centered"]
                for p, grad in params_with_grads(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = tensor(0.0, dtype=dtypes.float32)
                        state["square_avg"] = zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = zeros_like(p)
                        if centered:
                            state["grad_avg"] = zeros_like(p)
                    if group["maximize"]:
                        grad = -grad
                    state["step"].add_(1)
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    square_avg = state["square_avg"]
                    square_avg.mul_(alpha).add_(grad.mul(1 - alpha).mul_(grad))  # addcmul
                    if centered:
                        grad_avg = state["grad_avg"]
                        grad_avg.lerp_(grad, 1 - alpha)
                        avg = square_avg.sub(grad_avg.mul(grad_avg)).sqrt_()
                    else:
                        avg = square_avg.sqrt()
                    avg.add_(eps)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(grad.div(avg))  # addcdiv
                        p.add_(buf, alpha=-lr)
                    else:
                        p.add_(grad.mul(-lr).div_(avg))  # addcdiv
        return loss
