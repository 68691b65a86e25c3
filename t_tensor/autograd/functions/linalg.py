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

__all__ = ["Linear", "Matmul"]


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
            if not batch and _is_transposed_matrix(a2):
                grad_a = (b2 @ g.mT).mT.reshape(a.shape)
            else:
                grad_a = sum_to(g @ b2.mT, a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if not batch and _is_transposed_matrix(b2):
                grad_b = (g.mT @ a2).mT.reshape(b.shape)
            else:
                grad_b = sum_to(a2.mT @ g, b2.shape).reshape(b.shape)
        return grad_a, grad_b, None


class Linear(Function):
    """``nn.functional.linear`` of a 2-D input: ``y = x @ W^T + b`` as one node (PyTorch's addmm),
    instead of a transpose, a product and an add. ``dx = dy @ W``, ``dW = dy^T @ x`` (already in
    the weight's layout, so the leaf keeps it as is), ``db = dy`` summed over the rows."""

    @staticmethod
    def forward(ctx: Any, input: Any, weight: Any, bias: Any) -> Any:
        ctx.save_for_backward(input, weight)
        return L._linear(input, weight, bias)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        input, weight = ctx.saved_tensors
        grad_input = grad @ weight if ctx.needs_input_grad[0] else None
        grad_weight = grad.mT @ input if ctx.needs_input_grad[1] else None
        grad_bias = grad.sum(0) if ctx.needs_input_grad[2] else None
        return grad_input, grad_weight, grad_bias


def _is_transposed_matrix(x: Any) -> bool:
    """Whether x is a 2-D column-major view, as ``weight.T`` in ``linear``. Its gradient is then
    computed as the transpose of the transposed product, so that it has x's layout and the
    transpose's backward hands the weight a contiguous gradient: the leaf keeps it as is instead
    of copying it (784 x 512 floats per step for an MLP's first layer), as PyTorch's does."""
    return x.ndim == 2 and x.shape[0] > 1 and x.shape[1] > 1 and x.stride() == (1, x.shape[0])
