"""Views, copies and in-place writes under autograd.

Every view goes through ``TensorImpl._view``, which records :class:`View` when the input
requires grad. A view's backward is the view's adjoint: for a reshape of a contiguous tensor it
is a reshape, for a permutation the inverse permutation, for an expand a sum over the expanded
dimensions, and for anything else (slices, diagonals, as_strided) :class:`ViewScatter`, which
writes the gradient into a zero tensor laid out like the base at the view's place. Each of these
is itself made of recorded ops, so views stay differentiable to any order.

In-place ops on tensors that require grad go through :func:`apply_inplace`: the op is computed
out of place (recorded), written into the tensor's memory, and the tensor takes over the
result's history. When the tensor is a view of a tensor that requires grad, the base's history
becomes :class:`WriteView` (the old base with the view's region replaced).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from t_tensor import strides as S
from t_tensor.autograd.engine import sum_to
from t_tensor.autograd.function import FUNCTIONS, Function
from t_tensor.autograd.grad_mode import STATE, no_grad
from t_tensor.autograd.graph import AutogradMeta

__all__ = ["Copy", "Restride", "View", "ViewScatter", "WriteView", "apply_inplace"]

Geometry = tuple  # (shape, strides, offset)


def _inverse(permutation: list[int]) -> tuple[int, ...]:
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return tuple(inverse)


def _permutation(base: Geometry, view: Geometry) -> list[int] | None:
    """``p`` with view dim i = base dim p[i] (same size and stride), if the view is a permutation."""
    (b_shape, b_strides, b_off), (v_shape, v_strides, v_off) = base, view
    if b_off != v_off or len(b_shape) != len(v_shape):
        return None
    unused = list(range(len(b_shape)))
    permutation = []
    for n, s in zip(v_shape, v_strides, strict=False):
        match = next((d for d in unused if b_shape[d] == n and b_strides[d] == s), None)
        if match is None:
            return None
        unused.remove(match)
        permutation.append(match)
    return permutation


def _is_expand(base: Geometry, view: Geometry) -> bool:
    (b_shape, b_strides, b_off), (v_shape, v_strides, v_off) = base, view
    lead = len(v_shape) - len(b_shape)
    if b_off != v_off or lead < 0 or any(v_strides[i] != 0 and v_shape[i] != 1 for i in range(lead)):
        return False
    for i, (n, s) in enumerate(zip(b_shape, b_strides, strict=False)):
        vn, vs = v_shape[lead + i], v_strides[lead + i]
        if not ((vn == n and (vs == s or n == 1)) or (n == 1 and vs == 0)):
            return False
    return True


def view_backward(grad: Any, base: Geometry, base_dense: bool, view: Geometry) -> Any:
    """The gradient of a view's base from the gradient of the view (recorded ops only)."""
    b_shape, b_strides, b_off = base
    v_shape, v_strides, v_off = view
    if base_dense and v_off == b_off and math.prod(v_shape) == math.prod(b_shape) and (
        v_strides == S.contiguous_strides(v_shape)
    ):
        return grad.reshape(b_shape)
    permutation = _permutation(base, view)
    if permutation is not None:
        return grad.permute(_inverse(permutation))
    if _is_expand(base, view):
        return sum_to(grad, b_shape)
    return ViewScatter.apply(grad, base, view)


class View(Function):
    """A view (any shape, strides and offset over the input's storage)."""

    @staticmethod
    def forward(ctx: Any, x: Any, shape: tuple, strides: tuple, offset: int) -> Any:
        ctx.base = (x._shape, x._strides, x._offset)
        ctx.base_dense = x._is_dense()
        ctx.view = (shape, strides, offset)
        return x._view(shape, strides, offset)  # grad mode is off in forward: a plain view

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return view_backward(grad, ctx.base, ctx.base_dense, ctx.view), None, None, None

    @classmethod
    def make(cls, x: Any, shape: tuple, strides: tuple, offset: int) -> Any:
        """The recorded view; it remembers the tensor it views (for in-place writes through it)."""
        result = cls.apply(x, shape, strides, offset)
        if result._ag is not None:
            result._ag.base = x._ag.base if x._ag.base is not None else x
        return result


def _span(shape: tuple, strides: tuple) -> int:
    """How many elements from the first one a tensor of this shape and strides reaches."""
    if math.prod(shape) == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=False))


def _relative_view(base: Geometry, view: Geometry, fn: str) -> int:
    """The view's offset relative to the base's first element; checks the view stays inside."""
    b_shape, b_strides, b_off = base
    v_shape, v_strides, v_off = view
    relative = v_off - b_off
    if math.prod(v_shape) and (relative < 0 or relative + _span(v_shape, v_strides) > _span(b_shape, b_strides)):
        raise RuntimeError(f"{fn}: the gradient of a view that reaches outside its base is not supported")
    return relative


class ViewScatter(Function):
    """The adjoint of a general view: the view's gradient placed (summed where the view repeats
    elements) into zeros laid out like the base."""

    @staticmethod
    def forward(ctx: Any, grad: Any, base: Geometry, view: Geometry) -> Any:
        from t_tensor.creation import arange, zeros

        ctx.base, ctx.view = base, view
        b_shape, b_strides, _ = base
        v_shape, v_strides, _ = view
        relative = _relative_view(base, view, "backward")
        buffer = zeros(_span(b_shape, b_strides), dtype=grad.dtype)
        repeated = tuple(d for d, (n, s) in enumerate(zip(v_shape, v_strides, strict=False)) if s == 0 and n > 1)
        if repeated:  # an element seen several times gets the sum of its gradients
            grad = grad.sum(repeated, keepdim=True)
            v_shape = tuple(1 if d in repeated else n for d, n in enumerate(v_shape))
        if math.prod(v_shape):
            if S.has_internal_overlap(v_shape, v_strides):
                positions = arange(buffer.numel()).as_strided(v_shape, v_strides, relative)
                buffer.index_add_(0, positions.reshape(-1), grad.reshape(-1))
            else:
                buffer.as_strided(v_shape, v_strides, relative).copy_(grad)
        aliases = _aliases(b_shape, b_strides)
        if aliases is not None:
            # The base repeats memory (it was expanded): each of the k base elements over one
            # memory element gets 1/k of its gradient, so that the expand's own backward, which
            # sums them, counts it once (PyTorch's as_strided backward does the same).
            buffer = buffer / aliases[1]
        return buffer.as_strided(b_shape, b_strides, 0)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        b_shape, b_strides, b_off = ctx.base
        aliases = _aliases(b_shape, b_strides)
        if aliases is None:
            return view_of(grad, ctx.base, ctx.view), None, None
        from t_tensor.creation import zeros

        # the adjoint of "divide by the alias count, read at the base's positions"
        positions, counts = aliases
        memory = zeros(counts.numel(), dtype=grad.dtype).index_add(0, positions, grad.reshape(-1)) / counts
        v_shape, v_strides, v_off = ctx.view
        return memory.as_strided(v_shape, v_strides, v_off - b_off), None, None


def _aliases(shape: tuple, strides: tuple) -> tuple[Any, Any] | None:
    """For a layout that repeats memory: the memory position of each element (flattened) and,
    per memory position, how many elements sit on it (at least 1). None when nothing repeats."""
    if not S.has_internal_overlap(shape, strides):
        return None
    from t_tensor.creation import arange, zeros

    span = _span(shape, strides)
    positions = arange(span).as_strided(shape, strides, 0).reshape(-1)
    counts = zeros(span).index_add_(0, positions, zeros(positions.numel()) + 1.0)
    return positions, counts.clamp_min(1.0)


def view_of(grad: Any, base: Geometry, view: Geometry) -> Any:
    """``grad`` (shaped like the base) viewed as the view views the base (recorded)."""
    b_shape, b_strides, b_off = base
    v_shape, v_strides, v_off = view
    if grad._strides != b_strides:
        grad = Restride.apply(grad, b_strides)
    return grad.as_strided(v_shape, v_strides, grad._offset + v_off - b_off)


class Restride(Function):
    """A copy of ``x`` laid out with ``strides`` (so that views described for another tensor of
    that layout apply to it); values, and so gradients, pass through unchanged."""

    @staticmethod
    def forward(ctx: Any, x: Any, strides: tuple) -> Any:
        from t_tensor.creation import zeros

        buffer = zeros(_span(x._shape, strides), dtype=x.dtype)
        result = buffer.as_strided(x._shape, strides, 0)
        result.copy_(x)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return grad, None


class Copy(Function):
    """A copy converted to ``dtype`` (clone, contiguous, to): the gradient converts back."""

    @staticmethod
    def forward(ctx: Any, x: Any, dtype: Any, fn: str) -> Any:
        return x._copy_as(dtype, fn)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return grad, None, None  # the engine converts the dtype back


class WriteView(Function):
    """The base after an in-place write into one of its views: the old base outside the view's
    region, ``value`` inside. Forward only re-labels (the write already happened)."""

    @staticmethod
    def forward(ctx: Any, base: Any, value: Any, view: Geometry) -> Any:
        ctx.base = (base._shape, base._strides, base._offset)
        ctx.view = view
        ctx.value_shape = value._shape
        return base._alias()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        from t_tensor.creation import ones

        grad_base = grad_value = None
        if ctx.needs_input_grad[0]:
            region = ViewScatter.apply(ones(ctx.view[0], dtype=grad.dtype), ctx.base, ctx.view)
            grad_base = grad * (region == 0)
        if ctx.needs_input_grad[1]:
            grad_value = view_of(grad, ctx.base, ctx.view)
        return grad_base, grad_value, None


def apply_inplace(target: Any, compute: Callable[[Any], Any], fn: str, needs_old: bool = True) -> Any:
    """Run an in-place op on ``target`` under autograd: ``compute(old)`` gives the new values out of
    place (recorded); they are written into ``target``, which takes over their history.
    ``needs_old``: the op's backward uses the old values, so they are snapshotted first."""
    meta = target._ag
    if meta is not None and meta.requires_grad:
        if meta.grad_fn is None:
            raise RuntimeError(f"{fn}: a leaf Variable that requires grad is being used in an in-place operation.")
        base = meta.base
        if base is not None and base._ag is not None and base._ag.grad_fn is None and base._ag.requires_grad:
            raise RuntimeError(
                f"{fn}: a view of a leaf Variable that requires grad is being used in an in-place operation."
            )
    old = target.clone() if needs_old and meta is not None and meta.requires_grad else target
    result = compute(old)
    with no_grad():
        target.copy_(result)
    if result._ag is None or not result._ag.requires_grad:
        if meta is None or not meta.requires_grad:
            return target
        result = Overwrite.apply(old, result)  # constant values: no gradient reaches the old ones
    base = meta.base if meta is not None else None
    if base is None:
        target._ag = AutogradMeta(True, result._ag.grad_fn, result._ag.output_nr)
        return target
    view = (target._shape, target._strides, target._offset)
    rebased = WriteView.apply(base, result, view)
    base._ag = rebased._ag
    if STATE.enabled:
        target._ag = View.make(base, *view)._ag
    return target


class Overwrite(Function):
    """New values that do not depend on the old ones (fill_, copy_ of a constant): the old
    history gets no gradient."""

    @staticmethod
    def forward(ctx: Any, old: Any, value: Any) -> Any:
        return value._alias()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return None, None


FUNCTIONS["apply_inplace"] = apply_inplace
