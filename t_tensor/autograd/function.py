"""``Function``: one differentiable primitive, its forward and its backward side by side.

Write a primitive as PyTorch's ``torch.autograd.Function``::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = tt.exp(x)                 # runs with grad mode off: nothing inside records
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y               # d exp(x)/dx = exp(x)

``Exp.apply(x)`` runs ``forward`` and, when grad mode is on and an input requires grad, makes a
node (``ctx``, an instance of the generated class ``ExpBackward``) that the engine later calls
``backward`` on. ``backward`` is written with ordinary tensor ops, so with ``create_graph=True``
it records too and gives higher-order gradients for free.

Every subclass defined in t_tensor is also registered by name in :data:`FUNCTIONS`, where the op
modules look their primitives up (they cannot import this package's function modules without an
import cycle); a user's subclass is not, so it can never replace one of them.
"""

from __future__ import annotations

from typing import Any

from t_tensor.autograd import grad_mode
from t_tensor.autograd.graph import AutogradMeta, Node, SavedTensor, freed_error, gradient_edge
from t_tensor.tensor_impl import TensorImpl

__all__ = ["FUNCTIONS", "BackwardFunction", "Function", "FunctionCtx"]

FUNCTIONS: dict[str, Any] = {}

# Set by t_tensor.graph.trace while it records: called as hook(function_class, args, kwargs,
# output) after every recorded primitive. None otherwise (one global test per recorded op).
TRACE_HOOKS: list[Any] = []


class FunctionCtx:
    """What ``forward`` and ``backward`` receive as ``ctx`` (the node itself)."""

    needs_input_grad: tuple[bool, ...]

    # What few ops change, as class-level defaults: recording an op then makes no sets or lists
    # that it would not use. The mark_* methods and _connect set instance values.
    _to_save: tuple = ()
    _non_differentiable: frozenset | set = frozenset()
    _dirty: frozenset | set = frozenset()
    _materialize = True
    _saved: list | tuple | None = ()
    _saved_count = 0

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors (inputs or outputs of this op, or None) for backward; version-checked."""
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Outputs that never get a gradient (indices, masks)."""
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors: Any) -> None:
        """Inputs that forward modified in place."""
        self._dirty = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward may receive None for an output that got no gradient."""
        self._materialize = value

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            raise freed_error()
        return tuple(None if s is None else s.unpack(self) for s in saved)


class BackwardFunction(FunctionCtx, Node):
    """A node that calls its Function's ``backward``; ``ExpBackward`` etc. derive from it."""

    _function: type[Function]

    def __init__(self) -> None:
        # The FunctionCtx state starts at its class defaults (nothing to make per op).
        Node.__init__(self)

    def apply(self, grads: list) -> tuple:
        if self._saved is None:
            raise freed_error()
        if self._materialize:
            grads = [_zeros(meta[0], meta[1]) if g is None and meta is not None else g
                     for g, meta in zip(grads, self.output_meta, strict=True)]
        result = self._function.backward(self, *grads)
        return result if isinstance(result, tuple) else (result,)

    def release(self) -> None:
        if self._saved_count:
            self._saved = None  # a node that saved nothing can run again, as in PyTorch


def _zeros(shape: tuple[int, ...], dtype: Any) -> Any:
    from t_tensor.creation import zeros

    return zeros(shape, dtype=dtype)


class Function:
    """Base class of differentiable primitives: subclass and write ``forward`` and ``backward``
    as static methods, then call ``YourFunction.apply(*args)``.

    >>> import t_tensor as tt
    >>> class Cube(tt.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return grad * 3 * x * x
    >>> x = tt.tensor([1.0, 2.0], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    """

    _backward_cls: type[BackwardFunction]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__module__.startswith("t_tensor.")
        # _trusted: a function of t_tensor's own, whose backward returns gradients nothing else
        # keeps (see engine._defined_here), decided once here
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardFunction,), {"_function": cls, "_trusted": own})
        if own:
            # only the library's own primitives: the ops look them up by name, and a user's
            # Function that happens to share a name (Linear, Matmul) must not replace one
            FUNCTIONS[cls.__name__] = cls

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Function.forward: subclasses must implement forward")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("Function.backward: subclasses must implement backward")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        state = grad_mode.STATE
        record = state.enabled
        ctx = cls._backward_cls()
        if record:
            needs = tuple([isinstance(a, TensorImpl) and a._ag is not None and a._ag.requires_grad for a in args])
            record = True in needs
            ctx.needs_input_grad = needs
            state.enabled = False
            try:
                output = cls.forward(ctx, *args, **kwargs)
            finally:
                state.enabled = True
        else:
            ctx.needs_input_grad = (False,) * len(args)
            output = cls.forward(ctx, *args, **kwargs)
        if not record:
            return output
        output = _connect(ctx, args, needs, output)
        if TRACE_HOOKS:
            TRACE_HOOKS[-1](cls, args, kwargs, output)
        return output


_NO_EDGE = (None, 0)


def _connect(ctx: BackwardFunction, args: tuple, needs: tuple, output: Any) -> Any:
    """Make ``ctx`` the grad_fn of ``output``'s tensors and link it to its inputs' edges."""
    edges = []
    input_meta = []
    for a, need in zip(args, needs, strict=True):
        if need:
            edges.append(gradient_edge(a))
            input_meta.append((a._shape, a._dtype))
        else:
            edges.append(_NO_EDGE)
            input_meta.append(None)
    ctx.next_functions = tuple(edges)
    ctx.input_meta = tuple(input_meta)
    if type(output) is not tuple:
        # One output, the common case: the loop below without its lists.
        if isinstance(output, TensorImpl):
            ctx.output_meta = ((output._shape, output._dtype),)
            output = _attach(ctx, args, output, 0)
        else:
            ctx.output_meta = (None,)
        if ctx._to_save:
            _save(ctx, (output,))
        return output
    outputs = list(output)
    output_meta = []
    for i, out in enumerate(outputs):
        if isinstance(out, TensorImpl):
            output_meta.append((out._shape, out._dtype))
            outputs[i] = _attach(ctx, args, out, i)
        else:
            output_meta.append(None)
    ctx.output_meta = tuple(output_meta)
    if ctx._to_save:
        _save(ctx, outputs)
    return tuple(outputs)


def _attach(ctx: BackwardFunction, args: tuple, out: TensorImpl, index: int) -> TensorImpl:
    """Give output ``index`` of ``ctx`` its history (a float output that is not marked
    non-differentiable); returns the tensor that carries it."""
    if not out._dtype.is_floating_point or id(out) in ctx._non_differentiable:
        return out
    if id(out) in ctx._dirty:
        meta = out._ag
        if meta is not None and meta.grad_fn is None and meta.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    elif _index_of(out, args) is not None:
        out = out._alias()  # an input returned as is: give the output its own history
    out._ag = AutogradMeta(True, ctx, index)
    return out


def _save(ctx: BackwardFunction, outputs: tuple | list) -> None:
    """Turn what ``forward`` passed to ``save_for_backward`` into version-checked saved tensors
    (an output among them is saved as one, see SavedTensor)."""
    saved = []
    for tensor in ctx._to_save:
        if tensor is None:
            saved.append(None)
        else:
            saved.append(SavedTensor(tensor, _index_of(tensor, outputs)))
    ctx._saved = saved
    ctx._saved_count = len(saved)
    ctx._to_save = ()


def _index_of(value: Any, items: tuple | list) -> int | None:
    """The position of ``value`` in ``items`` by identity (``in`` would compare tensors
    elementwise), or None."""
    for i, item in enumerate(items):
        if item is value:
            return i
    return None
