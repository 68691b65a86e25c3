"""The backward engine: runs the graph's nodes from the outputs back to the leaves.

It never recurses, so a chain of 100,000 ops backpropagates like a chain of three:

1. **discover**: an explicit-stack walk from the roots collects every node and counts, for each,
   how many edges point at it (its dependencies);
2. **prune** (``autograd.grad`` only): nodes from which no requested input can be reached are
   not run;
3. **execute**: a node runs once all its dependencies have delivered their gradients (Kahn's
   topological order; among ready nodes the most recent one first, as PyTorch). Gradients that
   arrive at one node output from several consumers are summed in a buffer first.

After a node runs its saved tensors are released, unless ``retain_graph``. With
``create_graph`` the engine runs with grad mode on, so the backward ops record a graph of their
own (higher-order gradients); otherwise it runs with grad mode off.
"""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from t_tensor.autograd import grad_mode
from t_tensor.autograd.graph import AccumulateGrad, Node, gradient_edge

__all__ = ["backward", "grad", "run_backward", "sum_to"]


def sum_to(grad: Any, shape: tuple[int, ...]) -> Any:
    """``grad`` summed down to ``shape`` (the reverse of broadcasting ``shape`` up to ``grad``'s)."""
    if grad._shape == shape:
        return grad
    lead = len(grad._shape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad._shape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape) if grad._shape != shape else grad


def _expandable(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """True when ``shape`` broadcasts to ``target``."""
    if len(shape) > len(target):
        return False
    return all(n == m or n == 1 for n, m in zip(reversed(shape), reversed(target), strict=False))


def _validate(node: Node, grads: tuple) -> list:
    """Check the gradients a node returned: one per input, each of its input's shape (a gradient
    of a broadcast shape is summed down to it) and dtype (converted)."""
    if len(grads) != len(node.next_functions):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{len(node.next_functions)}, got {len(grads)})"
        )
    checked = []
    for i, (g, meta) in enumerate(zip(grads, node.input_meta, strict=False)):
        if g is None or meta is None:
            checked.append(None)
            continue
        shape, dtype = meta
        if not hasattr(g, "_shape"):
            raise TypeError(f"function {node.name()} returned a gradient of type {type(g).__name__} at index {i}")
        if g._shape != shape:
            if not _expandable(shape, g._shape):
                raise RuntimeError(
                    f"function {node.name()} returned an invalid gradient at index {i} - got {list(g._shape)} "
                    f"but expected shape compatible with {list(shape)}"
                )
            g = sum_to(g, shape)
        if g._dtype is not dtype:
            g = g.to(dtype)
        checked.append(g)
    return checked


def _call_hooks(hooks: list | None, grad: Any) -> Any:
    for hook in hooks or ():
        result = hook(grad)
        if result is not None:
            grad = result
    return grad


def _discover(roots: list[Node]) -> dict[Node, int]:
    """Every node reachable from ``roots``, with its number of incoming edges."""
    dependencies: dict[Node, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            dependencies[child] = dependencies.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    for node in seen:
        dependencies.setdefault(node, 0)
    return dependencies


def _needed(dependencies: dict[Node, int], targets: set[Node]) -> set[Node]:
    """The nodes from which some target node can be reached (the targets included): a walk
    from the targets along the edges reversed."""
    parents: dict[Node, list[Node]] = {}
    for node in dependencies:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed = {t for t in targets if t in dependencies}
    stack = list(needed)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in needed:
                needed.add(parent)
                stack.append(parent)
    return needed


def run_backward(
    root_edges: Sequence[tuple[Node, int]],
    root_grads: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    capture: dict[tuple[Node, int], int] | None = None,
    on_step: Callable[[Node, list, list], None] | None = None,
) -> list:
    """Backpropagate ``root_grads`` into the graph behind ``root_edges``.

    Without ``capture`` gradients accumulate into the leaves' ``.grad``. With ``capture`` (edge ->
    position) nothing accumulates: the gradient arriving at each captured edge is returned at its
    position, and only the nodes needed to reach the captured edges run. ``on_step(node,
    grads_in, grads_out)``, if given, is called after each node runs (for teaching and debugging).
    """
    buffers: dict[Node, list] = {}
    # Gradient objects a leaf may not keep as its .grad without a copy (see _accumulate): the root
    # gradients (the caller's), any a hook saw, any delivered to two places, and any a node not
    # defined by t_tensor returned. Keyed by id and holding the object weakly, so that an id
    # reused by a later gradient (CPython reuses freed memory at once) is not mistaken for it.
    shared: dict[int, weakref.ref] = {}
    delivered: dict[int, weakref.ref] = {}
    steal = not create_graph and capture is None and on_step is None
    if steal:
        for g in root_grads:
            _mark(shared, g)
    for (node, nr), g in zip(root_edges, root_grads, strict=False):
        slot = buffers.setdefault(node, [None] * len(node.output_meta))
        slot[nr] = g if slot[nr] is None else slot[nr] + g
    roots = list(buffers)
    dependencies = _discover(roots)
    captured: list = [None] * (len(capture) if capture else 0)
    if capture is not None:
        needed = _needed(dependencies, {node for node, _ in capture})
        dependencies = {node: 0 for node in needed}  # count only edges from nodes that will run
        for node in needed:
            for child, _ in node.next_functions:
                if child in dependencies:
                    dependencies[child] += 1

    ready = [(-node.sequence_nr, node.sequence_nr, node) for node in roots if dependencies.get(node) == 0]
    heapq.heapify(ready)
    state = grad_mode.STATE
    previous = state.enabled
    state.enabled = create_graph
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node, None) or [None] * len(node.output_meta)
            if node.pre_hooks:
                for nr, hooks in node.pre_hooks.items():
                    if grads[nr] is not None:
                        _mark(shared, grads[nr])
                        grads[nr] = _call_hooks(hooks, grads[nr])
                        _mark(shared, grads[nr])
            if node.retained:
                _retain(node, grads)
            if capture is not None:
                for nr, g in enumerate(grads):
                    position = capture.get((node, nr))
                    if position is not None:
                        captured[position] = g if captured[position] is None else captured[position] + g
            if isinstance(node, AccumulateGrad):
                if capture is None and grads[0] is not None:
                    owned = steal and not _marked(shared, grads[0])
                    _accumulate(node.variable, grads[0], create_graph, owned)
                if on_step is not None:
                    on_step(node, grads, [])
                continue
            if capture is not None and not any(c in dependencies for c, _ in node.next_functions if c is not None):
                continue  # only a captured edge needed this node: its inputs' gradients are not wanted
            if all(g is None for g in grads):
                outputs: list = [None] * len(node.next_functions)
            else:
                outputs = _validate(node, node.apply(grads))
            if on_step is not None:
                on_step(node, grads, outputs)
            if not retain_graph:
                node.release()
            trusted = steal and _defined_here(node)
            for (child, nr), g in zip(node.next_functions, outputs, strict=False):
                if child is None or child not in dependencies:
                    continue
                if g is not None:
                    if steal:
                        if not trusted or _marked(delivered, g):
                            _mark(shared, g)
                        _mark(delivered, g)
                    slot = buffers.setdefault(child, [None] * len(child.output_meta))
                    slot[nr] = g if slot[nr] is None else slot[nr] + g
                dependencies[child] -= 1
                if dependencies[child] == 0:
                    heapq.heappush(ready, (-child.sequence_nr, child.sequence_nr, child))
    finally:
        state.enabled = previous
    return captured


def _retain(node: Node, grads: list) -> None:
    """Store the gradient of a non-leaf that asked for ``retain_grad()``."""
    for nr, ref in node.retained.items():
        tensor = ref()
        if tensor is None or grads[nr] is None or tensor._ag is None:
            continue
        g = grads[nr].detach()
        meta = tensor._ag
        meta.grad = g.clone() if meta.grad is None else meta.grad + g


def _mark(marks: dict[int, weakref.ref], tensor: Any) -> None:
    # A plain weak reference per id (no callback): a mark whose tensor died just stays behind,
    # dead, until backward ends, and cannot match a new tensor that reuses the id. A
    # WeakValueDictionary does the same with a callback per entry, several times the cost.
    marks[id(tensor)] = weakref.ref(tensor)


def _marked(marks: dict[int, weakref.ref], tensor: Any) -> bool:
    ref = marks.get(id(tensor))
    return ref is not None and ref() is tensor


def _defined_here(node: Node) -> bool:
    """True for the nodes of t_tensor's own functions, whose backward returns gradients nothing
    else keeps (a user's Function may stash its grad_output). A Function's node class carries the
    answer (``_trusted``, set when the class is made); other node classes are asked their module."""
    cls = type(node)
    trusted = getattr(cls, "_trusted", None)
    return cls.__module__.startswith("t_tensor.") if trusted is None else trusted


def _accumulate(leaf: Any, g: Any, create_graph: bool, owned: bool = False) -> None:
    """leaf.grad += g, after the leaf's hooks. The first gradient becomes .grad without a copy
    when the engine knows nothing else holds it (``owned``: not a root gradient, not seen by a
    hook, delivered once, returned by t_tensor's own backward), it has no views (its storage has
    one owner) and it is contiguous; otherwise .grad is a copy (with create_graph a recorded one,
    as PyTorch). Later gradients are added in place (out of place with create_graph, so the sum
    stays differentiable)."""
    meta = leaf._ag
    if meta.hooks:
        owned = False   # a hook may keep the tensor it is given
        g = _call_hooks(meta.hooks, g)
    if meta.grad is None:
        if owned and g._ag is None and g._storage.use_count() == 1 and g.is_contiguous():
            meta.grad = g   # PyTorch steals such a gradient too (AccumulateGrad)
            return
        meta.grad = g.clone()   # grad mode is on only with create_graph: then the copy records
    elif create_graph or meta.grad._ag is not None:
        meta.grad = meta.grad + g
    else:
        meta.grad += g


def _as_tuple(value: Any) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,)


def _root_grads(outputs: tuple, grad_outputs: tuple, fn: str) -> list:
    from t_tensor.creation import ones

    grads = []
    for out, g in zip(outputs, grad_outputs, strict=False):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(f"{fn}: grad can be implicitly created only for scalar outputs")
            g = ones(out._shape, dtype=out._dtype)
        elif g._shape != out._shape:
            raise RuntimeError(
                f"{fn}: Mismatch in shape: grad_output has a shape of {list(g._shape)} and output has a shape "
                f"of {list(out._shape)}"
            )
        grads.append(g)
    return grads


def _check_outputs(outputs: tuple, fn: str) -> None:
    for out in outputs:
        if not hasattr(out, "_ag"):
            raise TypeError(f"{fn}: expected tensors, got {type(out).__name__}")
        if out._ag is None or not out._ag.requires_grad:
            raise RuntimeError(f"{fn}: element 0 of tensors does not require grad and does not have a grad_fn")


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves behind them.

    >>> import t_tensor as tt
    >>> x = tt.tensor([1.0, 2.0], requires_grad=True)
    >>> tt.autograd.backward((x * x).sum())
    >>> x.grad.tolist()
    [2.0, 4.0]
    """
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"backward: got {len(grads)} gradients for {len(outputs)} tensors")
    _check_outputs(outputs, "backward")
    root_grads = _root_grads(outputs, grads, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    edges = [gradient_edge(out) for out in outputs]
    if inputs is not None:
        chosen = _as_tuple(inputs)
        results = grad(outputs, chosen, root_grads, retain_graph=retain_graph, create_graph=create_graph,
                       allow_unused=True)
        for tensor, g in zip(chosen, results, strict=False):
            if g is not None:
                _accumulate(tensor, g, create_graph) if tensor._ag.grad_fn is None else _store(tensor, g)
        return
    run_backward(edges, root_grads, retain_graph, create_graph)


def _store(tensor: Any, g: Any) -> None:
    """A non-leaf's .grad from ``backward(inputs=...)``: a copy, since the caller or a hook may hold
    ``g``."""
    meta = tensor._ag
    meta.grad = g.clone() if meta.grad is None else meta.grad + g


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated.

    >>> import t_tensor as tt
    >>> x = tt.tensor([3.0], requires_grad=True)
    >>> (g,) = tt.autograd.grad(x ** 3, x, create_graph=True)
    >>> (gg,) = tt.autograd.grad(g, x)
    >>> g.item(), gg.item()
    (27.0, 18.0)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad: inputs cannot be empty")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"grad: got {len(grads)} grad_outputs for {len(outs)} outputs")
    _check_outputs(outs, "grad")
    for i, tensor in enumerate(ins):
        if not hasattr(tensor, "_ag"):
            raise TypeError(f"grad: inputs must be tensors, got {type(tensor).__name__} at index {i}")
        if tensor._ag is None or not tensor._ag.requires_grad:
            raise RuntimeError(f"grad: input {i} of the differentiated tensors does not require grad")
    root_grads = _root_grads(outs, grads, "grad")
    if retain_graph is None:
        retain_graph = create_graph
    capture: dict[tuple[Node, int], int] = {}
    positions = []
    for tensor in ins:
        edge = gradient_edge(tensor)
        positions.append(capture.setdefault(edge, len(capture)))
    captured = run_backward([gradient_edge(o) for o in outs], root_grads, retain_graph, create_graph, capture)
    results = []
    for i, (tensor, position) in enumerate(zip(ins, positions, strict=False)):
        g = captured[position]
        if g is None:
            if materialize_grads:
                from t_tensor.creation import zeros

                g = zeros(tensor._shape, dtype=tensor._dtype)
            elif not allow_unused:
                raise RuntimeError(
                    f"grad: one of the differentiated tensors (input {i}) appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif tensor._ag.grad_fn is None and tensor._ag.hooks:
            g = _call_hooks(tensor._ag.hooks, g)
        results.append(g)
    return tuple(results)
