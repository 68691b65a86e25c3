"""The autograd graph: what a tensor records about its history, and the nodes backward runs.

Every tensor has one slot, ``_ag``, which is ``None`` for a tensor that does not require grad
(the common case, so plain eager code pays one ``is None`` test per op). A tensor that requires
grad holds an :class:`AutogradMeta`:

* a **leaf** (made by the user with ``requires_grad=True``) has no ``grad_fn``; backward
  accumulates into its ``grad`` through its :class:`AccumulateGrad` node;
* a **non-leaf** (the output of a recorded op) has ``grad_fn``, the :class:`Node` that computes
  the gradients of that op's inputs, and ``output_nr``, which output of that node it is.

A node's ``next_functions`` are its edges towards the inputs: for each input a pair
``(node, output_nr)`` (the input's own ``grad_fn``, or its AccumulateGrad for a leaf), or
``(None, 0)`` for an input that needs no gradient. The engine (:mod:`.engine`) walks these
edges from the output back to the leaves.

Saved tensors remember the storage's version counter (bumped by every in-place write; it lives
in the C ``tt_storage``, so all views of one storage share it). Using a saved tensor whose
version moved raises the error PyTorch raises.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any

from t_tensor._capi import lib

__all__ = ["AccumulateGrad", "AutogradMeta", "Node", "RemovableHandle", "SavedTensor", "bump_version",
           "gradient_edge", "version_of"]

_version = lib.tt_storage_version
_bump = lib.tt_storage_bump_version
_sequence = itertools.count()


def version_of(tensor: Any) -> int:
    """The version counter of ``tensor``'s storage (shared by all its views)."""
    return _version(tensor._storage._ptr)


def bump_version(tensor: Any) -> None:
    """Record an in-place write to ``tensor``'s storage."""
    _bump(tensor._storage._ptr)


class AutogradMeta:
    """What a tensor that requires grad records: see the module docstring."""

    __slots__ = ("requires_grad", "grad", "grad_fn", "output_nr", "hooks", "accumulator", "retains_grad",
                 "base")

    def __init__(self, requires_grad: bool = True, grad_fn: Node | None = None, output_nr: int = 0) -> None:
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.hooks: list[Callable] | None = None       # leaf hooks (non-leaf hooks live on grad_fn)
        self.accumulator = None  # weak reference to a leaf's AccumulateGrad node (see gradient_edge)
        self.retains_grad = False
        self.base = None                                # for a view: the tensor it views


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Node:
    """One recorded operation, as seen by backward (PyTorch's ``grad_fn`` objects).

    Subclasses implement :meth:`apply`: from the gradients of the node's outputs, the gradients
    of its inputs (one per edge of ``next_functions``). ``input_meta`` holds each input's shape
    and dtype, so the engine can check and reduce what ``apply`` returns; ``output_meta`` holds
    each output's, so a missing output gradient can be materialized as zeros.
    """

    __slots__ = ("next_functions", "input_meta", "output_meta", "sequence_nr", "pre_hooks", "retained",
                 "__weakref__")

    def __init__(self) -> None:
        self.next_functions: tuple = ()
        self.input_meta: tuple = ()
        self.output_meta: tuple = ()
        self.sequence_nr = next(_sequence)
        self.pre_hooks: dict[int, list[Callable]] | None = None  # output_nr -> tensor hooks
        self.retained: dict[int, Any] | None = None              # output_nr -> weakref to a retain_grad tensor

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grads: list) -> tuple:
        raise NotImplementedError

    def release(self) -> None:
        """Drop what was saved for backward (called after the node ran, unless retain_graph)."""

    def register_hook(self, output_nr: int, hook: Callable) -> RemovableHandle:
        if self.pre_hooks is None:
            self.pre_hooks = {}
        hooks = self.pre_hooks.setdefault(output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)


class AccumulateGrad(Node):
    """The node at a leaf: adds the incoming gradient into ``leaf.grad`` (the engine does the
    adding, so that autograd.grad can capture instead). Holds the leaf strongly: a leaf that is
    part of a graph lives as long as the graph, as in PyTorch."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__()
        self.variable = variable
        self.input_meta = ((variable._shape, variable._dtype),)
        self.output_meta = ((variable._shape, variable._dtype),)


def gradient_edge(tensor: Any) -> tuple[Node, int]:
    """The edge through which gradient reaches ``tensor`` (which requires grad)."""
    meta = tensor._ag
    if meta.grad_fn is not None:
        return (meta.grad_fn, meta.output_nr)
    # A leaf holds its AccumulateGrad weakly (the node holds the leaf strongly): the graphs that
    # use the leaf keep the node alive, so all uses within one graph share it, and no cycle
    # leaf -> node -> leaf is left for the garbage collector.
    node = meta.accumulator() if meta.accumulator is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        meta.accumulator = weakref.ref(node)
    return (node, 0)


_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward."
)


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    An output of the node that saves it is kept as a detached alias (keeping the tensor itself
    would make a cycle node -> tensor -> node, freed only by the garbage collector); unpacking
    gives it its history back, so that double backward sees it as that node's output.
    """

    __slots__ = ("tensor", "version", "output_nr")

    def __init__(self, tensor: Any, output_nr: int | None) -> None:
        self.version = version_of(tensor)
        self.output_nr = output_nr
        self.tensor = tensor if output_nr is None else tensor._alias()

    def unpack(self, owner: Node) -> Any:
        tensor = self.tensor
        if version_of(tensor) != self.version:
            kind = "output" if self.output_nr is not None else "input"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{tensor.dtype.name} tensor {list(tensor.shape)}], which is an {kind} of "
                f"{owner.name()}, is at version {version_of(tensor)}; expected version {self.version} instead. "
                "Hint: clone() the tensor before modifying it in place, or do the in-place operation out of place."
            )
        if self.output_nr is not None:
            tensor = tensor._alias()
            tensor._ag = AutogradMeta(True, owner, self.output_nr)
        return tensor


def freed_error() -> RuntimeError:
    return RuntimeError(_FREED)
