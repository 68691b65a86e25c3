"""``Parameter``: a tensor that a :class:`~t_tensor.nn.Module` registers as one of its weights.

Design. A Tensor has ``__slots__`` and every op builds its result with ``type(input)``, so a real
``Parameter`` subclass would leak: ``w * 2`` would be a Parameter too, and assigning it to a module
attribute would register it. Instead ``Parameter(data)`` returns an ordinary leaf
:class:`~t_tensor.tensor.Tensor` (over ``data``'s memory, requiring grad) and records it in a
registry of parameters, held by weak reference: a parameter stays one exactly as long as it lives,
and results computed from it, its ``detach()`` and its ``clone()`` are new tensors, so they are
not parameters (as in PyTorch). ``isinstance(x, Parameter)`` asks that registry (through the
metaclass), and ``issubclass(Parameter, Tensor)`` holds. The one visible difference from PyTorch:
``type(p)`` is ``Tensor`` and ``repr(p)`` does not say "Parameter containing".

>>> import t_tensor as tt
>>> p = tt.nn.Parameter(tt.zeros(2))
>>> p.requires_grad, p.is_leaf, isinstance(p, tt.nn.Parameter), isinstance(p, tt.Tensor)
(True, True, True, True)
>>> isinstance(p * 2, tt.nn.Parameter), isinstance(p.detach(), tt.nn.Parameter)
(False, False)
"""

from __future__ import annotations

import weakref
from typing import Any

from t_tensor.tensor import Tensor

__all__ = ["Parameter", "is_parameter"]

# id(tensor) -> weak reference to that tensor; an entry leaves when its tensor dies.
_REGISTRY: dict[int, weakref.ref] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    if _REGISTRY.get(key) is ref:
        del _REGISTRY[key]


def is_parameter(value: Any) -> bool:
    """True when ``value`` is a tensor made by :class:`Parameter` (the same as
    ``isinstance(value, Parameter)``)."""
    ref = _REGISTRY.get(id(value))
    return ref is not None and ref() is value


class _ParameterMeta(type):
    """Makes ``Parameter(...)`` build a registered Tensor and ``isinstance`` consult the registry."""

    def __call__(cls, data: Any = None, requires_grad: bool = True) -> Any:
        from t_tensor.creation import empty

        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: data must be a Tensor, got {type(data).__name__}")
        if not isinstance(requires_grad, bool):
            raise TypeError(f"Parameter: requires_grad must be a bool, got {type(requires_grad).__name__}")
        if requires_grad and not data.dtype.is_floating_point:
            raise RuntimeError(
                f"Parameter: only Tensors of floating point dtype can require gradients, got {data.dtype.name}"
            )
        param = data._alias()  # same memory, no history: a fresh leaf
        if requires_grad:
            param.requires_grad_(True)
        key = id(param)
        _REGISTRY[key] = weakref.ref(param, lambda ref, key=key: _forget(key, ref))
        return param

    def __instancecheck__(cls, instance: Any) -> bool:
        return is_parameter(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor registered as a module's parameter: ``Parameter(data, requires_grad=True)``
    returns a leaf over ``data``'s memory (see the module docstring for why it is a Tensor).

    >>> import t_tensor as tt
    >>> w = tt.nn.Parameter(tt.ones(2, 3))
    >>> w.shape, w.requires_grad
    ((2, 3), True)
    >>> tt.nn.Parameter(tt.ones(2), requires_grad=False).requires_grad
    False
    """

    __slots__ = ()
