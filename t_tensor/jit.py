"""``tt.jit.trace``, as ``torch.jit.trace``: record a function (or a Module) on example inputs
and return a callable that runs the recorded graph. The same as :func:`t_tensor.compile`; see
:mod:`t_tensor.graph.trace`.

>>> import t_tensor as tt
>>> f = tt.jit.trace(lambda x: x * 2 + 1, (tt.ones(3),))
>>> f(tt.tensor([1.0, 2.0, 3.0])).tolist()
[3.0, 5.0, 7.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from t_tensor.graph.trace import CompiledFunction
from t_tensor.graph.trace import compile as _compile

__all__ = ["trace"]


def trace(fn: Callable[..., Any], example_inputs: Any) -> CompiledFunction:
    """Trace ``fn`` (a function or a Module) on ``example_inputs`` (a tensor or a tuple of them)."""
    inputs: Sequence[Any] = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    return _compile(fn, inputs)
