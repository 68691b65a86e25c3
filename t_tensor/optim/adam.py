"""Adam and AdamW, step for step as ``torch.optim.Adam`` / ``torch.optim.AdamW``.

>>> import t_tensor as tt
>>> p = tt.tensor([1.0, -1.0], requires_grad=True)
>>> opt = tt.optim.Adam([p], lr=0.1)
>>> p.grad = tt.tensor([0.5, -3.0])
>>> opt.step()
>>> [round(v, 6) for v in p.tolist()]    # the first step moves each element by about lr
[0.9, -0.9]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from t_tensor import dtypes
from t_tensor.autograd.grad_mode import no_grad
from t_tensor.creation import tensor, zeros_like
from t_tensor.elementwise import maximum
from t_tensor.optim.optimizer import Optimizer, check_number, params_with_grads

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma and Ba): running averages of the gradient and of its square, with bias
    correction::

        m = beta1 m + (1 - beta1) g            v = beta2 v + (1 - beta2) g^2
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    ``g`` is the gradient (negated with ``maximize``) plus ``weight_decay * p``; with
    ``decoupled_weight_decay`` (AdamW) the decay is applied to ``p`` instead: ``p *= 1 - lr * wd``.
    ``amsgrad`` divides by the running maximum of ``v``.

    State per parameter: ``'step'`` (a float32 0-d tensor, as PyTorch), ``'exp_avg'``,
    ``'exp_avg_sq'``, and ``'max_exp_avg_sq'`` with amsgrad.

    >>> import t_tensor as tt
    >>> p = tt.zeros(2, requires_grad=True)
    >>> opt = tt.optim.Adam([p], betas=(0.8, 0.99), amsgrad=True)
    >>> p.grad = tt.ones(2); opt.step()
    >>> sorted(opt.state[p]), opt.state[p]["step"]
    (['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq', 'step'], tensor(1.))
    """

    _NAME = "Adam"

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        name = self._NAME
        check_number(name, "learning rate", lr)
        check_number(name, "epsilon", eps)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair of numbers, got {betas!r}")
        check_number(name, "beta parameter at index 0", betas[0], high=1.0, high_open=True)
        check_number(name, "beta parameter at index 1", betas[1], high=1.0, high_open=True)
        check_number(name, "weight_decay", weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
                weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
                for p, grad in params_with_grads(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = tensor(0.0, dtype=dtypes.float32)
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = zeros_like(p)
                    if group["maximize"]:
                        grad = -grad
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    state["step"].add_(1)
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            p.mul_(1 - lr * weight_decay)
                        else:
                            grad = grad.add(p, alpha=weight_decay)
                    exp_avg.lerp_(grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).add_(grad.mul(1 - beta2).mul_(grad))  # addcmul
                    step = state["step"].item()
                    bias_correction1 = 1 - beta1**step
                    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                    if amsgrad:
                        maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
                        denom = state["max_exp_avg_sq"].sqrt().div_(bias_correction2_sqrt).add_(eps)
                    else:
                        denom = exp_avg_sq.sqrt().div_(bias_correction2_sqrt).add_(eps)
                    p.add_(exp_avg.mul(-lr / bias_correction1).div_(denom))  # addcdiv
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam update, instead of adding ``weight_decay * p`` to the gradient. Default
    ``weight_decay`` is 0.01.

    >>> import t_tensor as tt
    >>> p = tt.ones(1, requires_grad=True)
    >>> opt = tt.optim.AdamW([p], lr=0.1, weight_decay=2.5)
    >>> p.grad = tt.zeros(1); opt.step(); p.tolist()    # a zero gradient: only the decay acts
    [0.75]
    """

    _NAME = "AdamW"

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As :meth:`Optimizer.load_state_dict`; the groups keep ``decoupled_weight_decay=True``."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
