"""Optimizers (``tt.optim.SGD``, ``Adam``, ``AdamW``, ``RMSprop``) and learning-rate schedulers
(``tt.optim.lr_scheduler``), with PyTorch's semantics and state-dict layout. See docs/optim.md.

>>> import t_tensor as tt
>>> w = tt.tensor([3.0], requires_grad=True)
>>> opt = tt.optim.SGD([w], lr=0.25)
>>> for _ in range(3):          # minimise w^2: the gradient is 2 w
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> w.tolist()
[0.375]
"""

from t_tensor.optim import lr_scheduler
from t_tensor.optim.adam import Adam, AdamW
from t_tensor.optim.optimizer import Optimizer
from t_tensor.optim.rmsprop import RMSprop
from t_tensor.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
