"""Automatic differentiation: tensors that record the operations made on them, and the engine
that runs those records backwards.

* :mod:`.grad_mode`: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` (per thread);
* :mod:`.graph`: what a tensor records (:class:`~.graph.AutogradMeta`) and the graph's nodes;
* :mod:`.function`: :class:`~.function.Function`, one primitive's forward and backward;
* :mod:`.engine`: ``backward`` and ``grad``, iterative, with accumulation and pruning;
* :mod:`.functions`: the primitives of each op family (``functions/elementwise.py``, ...);
* :mod:`.gradcheck`: finite-difference checks.

>>> import t_tensor as tt
>>> x = tt.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x.exp() * x).sum()
>>> y.backward()
>>> [round(v, 4) for v in x.grad.tolist()]   # d/dx x e^x = (x + 1) e^x
[5.4366, 22.1672]
"""

from t_tensor.autograd import inspect
from t_tensor.autograd.engine import backward, grad
from t_tensor.autograd.function import Function, FunctionCtx
from t_tensor.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from t_tensor.autograd.gradcheck import gradcheck, gradgradcheck

__all__ = [
    "Function",
    "FunctionCtx",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inspect",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]
