"""Finite-difference checks of gradients: ``gradcheck`` and ``gradgradcheck``.

For each input that requires grad and each of its elements, the central difference
``(f(x + eps) - f(x - eps)) / (2 eps)`` of every output is compared with what backward computes
for that element (the Jacobian, column by column against row by row). Inputs should be float64:
in float32 the differences are too coarse for the default tolerances.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from t_tensor.autograd import engine

__all__ = ["gradcheck", "gradgradcheck"]


def _tuple(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _outputs(fn: Callable, inputs: tuple) -> list:
    return [o for o in _tuple(fn(*inputs)) if hasattr(o, "_ag") and o._dtype.is_floating_point]


def _numerical_jacobian(fn: Callable, inputs: tuple, position: int, eps: float) -> list[np.ndarray]:
    """One matrix per output: d output (flattened) / d inputs[position] (flattened). Grad mode
    stays on: ``fn`` may differentiate inside (gradgradcheck's does)."""
    x = inputs[position]
    values = x.detach().numpy()  # shares x's memory: perturb in place, then restore

    def evaluate() -> list[np.ndarray]:
        return [np.array(o.detach().numpy(), dtype=np.float64).ravel() for o in _outputs(fn, inputs)]

    outputs = _outputs(fn, inputs)
    columns: list[list[np.ndarray]] = [[] for _ in outputs]
    for index in np.ndindex(values.shape):
        original = values[index]
        values[index] = original + eps
        plus = evaluate()
        values[index] = original - eps
        minus = evaluate()
        values[index] = original
        for k in range(len(outputs)):
            columns[k].append((plus[k] - minus[k]) / (2 * eps))
    return [
        np.stack(cols, axis=1) if cols else np.zeros((out.numel(), 0))
        for cols, out in zip(columns, outputs, strict=True)
    ]


def _analytical_jacobian(fn: Callable, inputs: tuple, position: int) -> list[np.ndarray]:
    from t_tensor.creation import zeros

    x = inputs[position]
    outputs = _outputs(fn, inputs)
    jacobians = []
    for out in outputs:
        rows = []
        for flat in range(out.numel()):
            seed = zeros(out.shape, dtype=out.dtype)
            seed.view(-1)[flat] = 1.0
            if out._ag is None:
                rows.append(np.zeros(x.numel()))
                continue
            (g,) = engine.grad(out, x, seed, retain_graph=True, allow_unused=True)
            rows.append(np.zeros(x.numel()) if g is None else np.array(g.numpy(), dtype=np.float64).ravel())
        jacobians.append(np.stack(rows, axis=0) if rows else np.zeros((0, x.numel())))
    return jacobians


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """True when backward's gradients of ``func`` agree with central differences at ``inputs``.

    >>> import t_tensor as tt
    >>> x = tt.tensor([0.5, 1.5], dtype=tt.float64, requires_grad=True)
    >>> tt.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    inputs = _tuple(inputs)
    for position, x in enumerate(inputs):
        if not (hasattr(x, "_ag") and x.requires_grad):
            continue
        numerical = _numerical_jacobian(func, inputs, position, eps)
        analytical = _analytical_jacobian(func, inputs, position)
        for k, (num, ana) in enumerate(zip(numerical, analytical, strict=False)):
            if not np.allclose(ana, num, atol=atol, rtol=rtol):
                if raise_exception:
                    raise RuntimeError(
                        f"gradcheck: Jacobian mismatch for output {k} with respect to input {position},\n"
                        f"numerical:{num}\nanalytical:{ana}"
                    )
                return False
    return True


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """gradcheck of the gradient itself: checks second derivatives (backward of backward).

    >>> import t_tensor as tt
    >>> x = tt.tensor([0.5, 1.5], dtype=tt.float64, requires_grad=True)
    >>> tt.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))
    True
    """
    from t_tensor.creation import ones

    inputs = _tuple(inputs)
    differentiable = [x for x in inputs if hasattr(x, "_ag") and x.requires_grad]

    def first_derivative(*args: Any) -> tuple:
        outputs = _outputs(func, args)
        seeds = _tuple(grad_outputs) if grad_outputs is not None else tuple(
            ones(o.shape, dtype=o.dtype) for o in outputs)
        chosen = [a for a in args if hasattr(a, "_ag") and a.requires_grad]
        grads = engine.grad(outputs, chosen, seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if not differentiable:
        return True
    return gradcheck(first_derivative, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
