"""Derivatives of the matrix products.

For ``C = A @ B``: ``dA = dC @ B^T`` and ``dB = A^T @ dC``. NumPy's rules are handled by first
giving 1-D operands their matrix shape (a row for the first, a column for the second), then
summing the batch dimensions that broadcasting added and reshaping back.
"""

from __future__ import annotations

from typing import Any

from t_tensor import linalg as L
from t_tensor import strides as S
from t_tensor.autograd.engine import sum_to
from t_tensor.autograd.function import Function

__all__ = ["Matmul"]


class Matmul(Function):
    """matmul, mm, bmm, mv, dot, vdot and ``@`` (all go through ``linalg._matmul``)."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, fn: str) -> Any:
        ctx.save_for_backward(a, b)
        return L._matmul(a, b, fn)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        a, b = ctx.saved_tensors
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        batch = S.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        g = grad.reshape(batch + (a2.shape[-2], b2.shape[-1]))  # the dims 1-D operands lost, back
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(g @ b2.mT, a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(a2.mT @ g, b2.shape).reshape(b.shape)
        return grad_a, grad_b, None
