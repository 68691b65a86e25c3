"""Stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and
maximization, step for step as ``torch.optim.SGD``.

>>> import t_tensor as tt
>>> p = tt.tensor([1.0, -1.0], requires_grad=True)
>>> opt = tt.optim.SGD([p], lr=0.1, momentum=0.5)
>>> for _ in range(2):
...     p.grad = tt.tensor([1.0, 2.0])
...     opt.step()
>>> p.tolist()     # buffer: g, then 0.5 g + g
[0.75, -1.5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from t_tensor import dtypes
from t_tensor._capi import check, lib
from t_tensor.autograd.grad_mode import no_grad
from t_tensor.autograd.graph import bump_version
from t_tensor.creation import empty_like
from t_tensor.optim.optimizer import Optimizer, check_number, params_with_grads

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * d`` where ``d`` is the gradient (negated when ``maximize``), plus
    ``weight_decay * p``, then smoothed by momentum: ``buf = momentum * buf + (1 - dampening) * d``
    (``buf = d`` on the first step) and ``d = buf``, or ``d + momentum * buf`` with ``nesterov``.

    State per parameter: ``'momentum_buffer'`` (when momentum is not 0).

    >>> import t_tensor as tt
    >>> p = tt.tensor([1.0], requires_grad=True)
    >>> opt = tt.optim.SGD([p], lr=0.5, weight_decay=1.0)
    >>> p.grad = tt.tensor([1.0])
    >>> opt.step(); p.tolist()      # 1 - 0.5 * (1 + 1 * 1)
    [0.0]
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        check_number("SGD", "learning rate", lr)
        check_number("SGD", "momentum", momentum)
        check_number("SGD", "weight_decay", weight_decay)
        check_number("SGD", "dampening", dampening, low=float("-inf"))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                weight_decay, nesterov = group["weight_decay"], group["nesterov"]
                for p, grad in params_with_grads(group):
                    if _fused_update(self.state[p] if momentum != 0 else None, p, grad, group):
                        continue
                    if group["maximize"]:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = grad.clone()
                        else:
                            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                        grad = grad.add(buf, alpha=momentum) if nesterov else buf
                    p.add_(grad, alpha=-lr)
        return loss


def _fused_update(state: dict | None, p: Any, grad: Any, group: dict) -> bool:
    """The whole update of ``p`` in one C pass (``tt_sgd_update``, the same arithmetic as the
    tensor ops in ``step``, bit for bit) when ``p``, its gradient and its momentum buffer are dense
    float32/float64 tensors of one shape and dtype in separate storages; False to take the ops.
    ``state`` is p's state (None without momentum); a first step creates the buffer."""
    dtype = p._dtype
    if (dtype is not dtypes.float32 and dtype is not dtypes.float64) or grad._dtype is not dtype or (
            grad._shape != p._shape or not p._is_dense() or not grad._is_dense() or p._overlaps(grad)):
        return False
    buf = None if state is None else state.get("momentum_buffer")
    first = state is not None and buf is None
    if first:
        buf = state["momentum_buffer"] = empty_like(p)
    elif buf is not None and (buf._dtype is not dtype or buf._shape != p._shape or not buf._is_dense()
                              or buf._overlaps(p) or buf._overlaps(grad)):
        return False
    status = lib.tt_sgd_update(
        dtype.code, p.numel(), p.data_ptr(), grad.data_ptr(), 0 if buf is None else buf.data_ptr(), group["lr"],
        group["momentum"], group["dampening"], group["weight_decay"], int(group["nesterov"]),
        int(group["maximize"]), int(first),
    )
    check(status, "SGD.step")
    bump_version(p)  # in-place writes: autograd's saved copies are stale
    if buf is not None:
        bump_version(buf)
    return True

