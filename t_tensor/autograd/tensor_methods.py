"""The autograd side of :class:`~t_tensor.tensor.Tensor`: ``requires_grad``, ``grad``,
``grad_fn``, ``is_leaf``, ``backward``, ``detach``, hooks, the version counter."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from t_tensor.autograd import engine
from t_tensor.autograd.graph import AutogradMeta, RemovableHandle, version_of

__all__ = ["AutogradOps"]


class AutogradOps:
    """Autograd methods mixed into :class:`~t_tensor.tensor.Tensor`."""

    __slots__ = ()

    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor.

        >>> import t_tensor as tt
        >>> x = tt.ones(2, requires_grad=True)
        >>> x.requires_grad, (x * 2).requires_grad, x.detach().requires_grad
        (True, True, False)
        """
        meta = self._ag
        return meta is not None and meta.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Any:
        """Start (or stop) recording operations on this leaf; returns the tensor.

        >>> import t_tensor as tt
        >>> tt.zeros(3).requires_grad_().requires_grad
        True
        """
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_: expected a bool, got {type(requires_grad).__name__}")
        meta = self._ag
        if meta is not None and meta.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "requires_grad_: you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not self._dtype.is_floating_point:
            raise RuntimeError(
                f"requires_grad_: only Tensors of floating point dtype can require gradients, got {self._dtype.name}"
            )
        if meta is None:
            if requires_grad:
                self._ag = AutogradMeta(True)
        else:
            meta.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Any:
        """The gradient accumulated by backward (None until then; only leaves get one unless
        :meth:`retain_grad` was called)."""
        meta = self._ag
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            if not hasattr(value, "_ag"):
                raise TypeError(f"grad: assigned grad expected to be a Tensor or None, got {type(value).__name__}")
            if value._shape != self._shape:
                raise RuntimeError(
                    f"grad: assigned grad has data of a different size ({list(value._shape)} vs {list(self._shape)})"
                )
            if value._dtype is not self._dtype:
                raise RuntimeError(
                    f"grad: assigned grad has data of a different type ({value._dtype.name} vs {self._dtype.name})"
                )
        meta = self._ag
        if meta is None:
            if value is None:
                return
            meta = self._ag = AutogradMeta(False)
        meta.grad = value

    @grad.deleter
    def grad(self) -> None:
        self.grad = None

    @property
    def grad_fn(self) -> Any:
        """The node that made this tensor (None for a leaf or a tensor without grad).

        >>> import t_tensor as tt
        >>> x = tt.ones(2, requires_grad=True)
        >>> (x.exp() * 2).grad_fn
        <MulBackward object at ...>
        """
        meta = self._ag
        return None if meta is None else meta.grad_fn

    @property
    def is_leaf(self) -> bool:
        """True for tensors not made by a recorded op (all tensors that do not require grad)."""
        meta = self._ag
        return meta is None or meta.grad_fn is None

    @property
    def output_nr(self) -> int:
        meta = self._ag
        return 0 if meta is None else meta.output_nr

    @property
    def _version(self) -> int:
        """The storage's version counter: how many in-place writes it has seen."""
        return version_of(self)

    @property
    def retains_grad(self) -> bool:
        meta = self._ag
        return meta is not None and meta.retains_grad

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf in ``.grad`` after backward."""
        meta = self._ag
        if meta is None or not meta.requires_grad:
            raise RuntimeError("retain_grad: can't retain_grad on Tensor that has requires_grad=False")
        if meta.grad_fn is None or meta.retains_grad:
            return
        node = meta.grad_fn
        if node.retained is None:
            node.retained = {}
        node.retained[meta.output_nr] = weakref.ref(self)
        meta.retains_grad = True

    def register_hook(self, hook: Callable[[Any], Any]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a tensor it returns
        replaces the gradient.

        >>> import t_tensor as tt
        >>> x = tt.ones(2, requires_grad=True)
        >>> handle = x.register_hook(lambda g: g * 10)
        >>> (x * 3).sum().backward()
        >>> x.grad.tolist()
        [30.0, 30.0]
        """
        meta = self._ag
        if meta is None or not meta.requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that doesn't require gradient")
        if meta.grad_fn is not None:
            return meta.grad_fn.register_hook(meta.output_nr, hook)
        if meta.hooks is None:
            meta.hooks = []
        meta.hooks.append(hook)
        return RemovableHandle(meta.hooks, hook)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:
        """Compute the gradient of this tensor with respect to the leaves and add it to their ``.grad``.

        >>> import t_tensor as tt
        >>> w = tt.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> w.grad.tolist()
        [2.0, 4.0, 6.0]
        """
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Any:
        """A tensor over the same memory that does not require grad (writes show in both).

        >>> import t_tensor as tt
        >>> x = tt.ones(2, requires_grad=True)
        >>> d = x.detach()
        >>> d.requires_grad, d.data_ptr() == x.data_ptr()
        (False, True)
        """
        return self._alias()

    def detach_(self) -> Any:
        """Cut this tensor from its history: it becomes a leaf that does not require grad."""
        self._ag = None
        return self

    @property
    def data(self) -> Any:
        """This tensor's values without history (as :meth:`detach`)."""
        return self._alias()

    @data.setter
    def data(self, value: Any) -> None:
        if not hasattr(value, "_ag"):
            raise TypeError(f"data: expected a Tensor, got {type(value).__name__}")
        self._storage = value._storage.share()
        self._shape, self._strides, self._offset = value._shape, value._strides, value._offset
        self._dtype, self._dense = value._dtype, value._dense
