"""Grad mode: whether operations record the autograd graph, per thread (as PyTorch).

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` work as context managers and as
decorators. Every differentiable operation asks :func:`wants_grad` first: it is False at once
when grad mode is off, so code under ``no_grad`` pays one attribute read per op.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled", "wants_grad"]

F = TypeVar("F", bound=Callable[..., Any])


class _GradState(threading.local):
    enabled = True


STATE = _GradState()


def is_grad_enabled() -> bool:
    """True when operations record the graph (the default).

    >>> import t_tensor as tt
    >>> with tt.no_grad():
    ...     print(tt.is_grad_enabled())
    False
    """
    return STATE.enabled


def wants_grad(*values: Any) -> bool:
    """True when grad mode is on and some tensor among ``values`` (or inside a list or tuple
    among them) requires grad: the test every differentiable op makes before recording."""
    if not STATE.enabled:
        return False
    for value in values:
        meta = getattr(value, "_ag", None)
        if meta is not None and meta.requires_grad:
            return True
        if type(value) in (list, tuple) and wants_grad(*value):
            return True
    return False


class _GradModeContext:
    """Sets grad mode to ``self.mode`` inside a ``with`` block or a decorated function."""

    mode = True

    def __enter__(self) -> None:
        self._previous = STATE.enabled
        STATE.enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled = self._previous

    def __call__(self, function: F) -> F:
        mode = self.mode

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            previous = STATE.enabled
            STATE.enabled = mode
            try:
                return function(*args, **kwargs)
            finally:
                STATE.enabled = previous

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Operations inside do not record the graph; results do not require grad.

    >>> import t_tensor as tt
    >>> w = tt.ones(2, requires_grad=True)
    >>> with tt.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """

    mode = False


class enable_grad(_GradModeContext):
    """Turns recording back on inside a ``no_grad`` block.

    >>> import t_tensor as tt
    >>> w = tt.ones(2, requires_grad=True)
    >>> with tt.no_grad():
    ...     with tt.enable_grad():
    ...         y = w * 2
    >>> y.requires_grad
    True
    """

    mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode to ``mode``: at once when called, and back to the previous mode at the end
    of a ``with`` block.

    >>> import t_tensor as tt
    >>> with tt.set_grad_enabled(False):
    ...     print(tt.is_grad_enabled())
    False
    >>> tt.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: mode must be a bool, got {type(mode).__name__}")
        self.mode = mode
        self._previous = STATE.enabled
        STATE.enabled = mode

    def __enter__(self) -> None:
        pass  # already set by __init__

    def __call__(self, function: F) -> F:
        STATE.enabled = self._previous  # as a decorator it changes nothing until the function runs
        return super().__call__(function)

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled = self._previous
