"""Capture: ``trace(fn, example_inputs)`` records the primitives ``fn`` runs into a
:class:`~t_tensor.graph.ir.Graph`; ``compile`` wraps the graph in a callable.

How it records: the example inputs are given ``requires_grad``, so every differentiable
primitive on them goes through ``Function.apply`` (the autograd layer), which reports each call
to the tracer: the primitive's class, its arguments and its outputs. Each call becomes a node of
op type ``tt.<Primitive>`` (``tt.Mul``, ``tt.Matmul``, ``tt.Conv``, ``tt.View`` ...), whose
kernel runs that primitive's ``forward`` again; tensors that no recorded op produced (module
parameters, constants made inside ``fn``) become initializers. Values and shapes come from the
example run.

What it cannot see: Python control flow on values, and operations on integer or boolean values
computed from the inputs (they do not take part in autograd, so they are frozen as constants).
To catch that, ``trace`` runs the graph on a second, perturbed set of inputs and raises
:class:`TraceError` when the graph and ``fn`` disagree.

>>> import t_tensor as tt
>>> from t_tensor.graph import trace
>>> w = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> compiled = trace.compile(lambda x: (x @ w).relu().sum(-1), (tt.ones(3, 2),))
>>> print(compiled.graph)
graph traced(%x0: (3, 2) float32) -> (%v2)
  %c0 = initializer  # (2, 2) float32
  %v0 = tt.Matmul[args=(@0, @1, 'matmul')](%x0, %c0)  # (3, 2) float32
  %v1 = tt.Relu[args=(@0, (0.0, 0.0), '')](%v0)  # (3, 2) float32
  %v2 = tt.Sum[args=(@0, 'sum', -1, None, None, None, None, None)](%v1)  # (3,) float32
>>> compiled(tt.tensor([[1.0, 0.0], [0.0, -1.0], [1.0, 1.0]])).tolist()
[3.0, 0.0, 10.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from t_tensor.autograd import function as F
from t_tensor.autograd.grad_mode import enable_grad, no_grad
from t_tensor.graph.ir import Graph
from t_tensor.graph.kernels import KERNELS, PREPARERS
from t_tensor.graph.shape_inference import SHAPE_RULES, Ctx
from t_tensor.tensor_impl import TensorImpl

__all__ = ["CompiledFunction", "TraceError", "compile", "trace"]


class TraceError(RuntimeError):
    """The traced graph does not compute what the function computes."""


class _Slot:
    """Where the i-th tensor input of a node goes among a primitive's arguments."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"@{self.index}"


def _fill(template: Any, tensors: list[Any]) -> Any:
    if isinstance(template, _Slot):
        return tensors[template.index]
    if type(template) in (list, tuple):
        return type(template)(_fill(t, tensors) for t in template)
    return template


def _primitive_kernel(name: str) -> Callable:
    """The graph kernel of ``tt.<name>``: the primitive's forward on the node's inputs."""

    def run(inputs: list[Any], attrs: dict[str, Any]) -> Any:
        function = F.FUNCTIONS[name]
        args = _fill(attrs["args"], inputs)
        kwargs = {k: _fill(v, inputs) for k, v in attrs.get("kwargs", {}).items()}
        with no_grad():
            if name == "View":
                return _replay_view(args, attrs["base"])
            return function.forward(function._backward_cls(), *args, **kwargs)

    return run


def _prepare_primitive(node: Any) -> Callable | None:
    """The plain executor's kernel of a ``tt.<name>`` node: the primitive's forward bound once,
    the argument template filled by position (the inputs' slots found once)."""
    from t_tensor.autograd.grad_mode import STATE as _GRAD

    name = node.op_type[3:]
    template = node.attrs.get("args")
    if name == "View" or node.attrs.get("kwargs") or type(template) is not tuple or name not in F.FUNCTIONS:
        return None
    if any(type(t) in (list, tuple) and any(isinstance(u, _Slot) for u in t) for t in template):
        return None  # tensors nested in a list argument: the general _fill
    function = F.FUNCTIONS[name]
    forward, make_ctx = function.forward, function._backward_cls
    base = list(template)
    slots = [(k, t.index) for k, t in enumerate(template) if isinstance(t, _Slot)]

    def run(inputs: list[Any]) -> Any:
        args = base.copy()
        for k, i in slots:
            args[k] = inputs[i]
        if _GRAD.enabled:
            with no_grad():
                return forward(make_ctx(), *args)
        return forward(make_ctx(), *args)

    return run


def _replay_view(args: tuple, base: tuple) -> Any:
    """A recorded view applied to a new input. The recorded offset counts from the start of the
    traced input's storage, and the strides assume its layout: the view is re-anchored on the new
    input's offset, after laying the input out like the traced one if its strides differ."""
    from t_tensor.autograd.functions.views import Restride

    x, shape, strides, offset = args
    _, b_strides, b_offset, _ = base
    if tuple(x._strides) != tuple(b_strides):
        x = Restride.forward(None, x, tuple(b_strides))
    return x._view(tuple(shape), tuple(strides), x._offset + offset - b_offset)


def _primitive_shapes(ctx: Ctx) -> list:
    """Shape rule of ``tt.*`` nodes: run the kernel on zeros of the input shapes (the values never
    matter for a primitive's output shape)."""
    from t_tensor.creation import zeros

    inputs = [zeros(ctx.shape(i), dtype=ctx.dtypes[i]) for i in range(len(ctx.node.inputs))]
    out = KERNELS[ctx.node.op_type](inputs, ctx.attrs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [(tuple(o.shape), o.dtype) for o in outs]


def _register(name: str) -> str:
    op_type = f"tt.{name}"
    if op_type not in KERNELS:
        KERNELS[op_type] = _primitive_kernel(name)
        SHAPE_RULES[op_type] = _primitive_shapes
        PREPARERS[op_type] = _prepare_primitive
    return op_type


class _Recorder:
    """Builds the graph while ``fn`` runs (installed in ``F.TRACE_HOOKS``)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.names: dict[int, str] = {}   # id(tensor) -> value name
        self.keep: list[Any] = []         # every tensor seen, so that ids stay unique while tracing
        self.counts = {"v": 0, "c": 0}

    def _fresh(self, prefix: str) -> str:
        name = f"{prefix}{self.counts[prefix]}"
        self.counts[prefix] += 1
        return name

    def name_of(self, tensor: Any) -> str:
        """The value name of ``tensor``; a tensor no recorded op made becomes an initializer."""
        name = self.names.get(id(tensor))
        if name is None:
            name = self._fresh("c")
            self.graph.add_initializer(name, tensor.detach())
            self.names[id(tensor)] = name
            self.keep.append(tensor)
        return name

    def template(self, value: Any, inputs: list[str]) -> Any:
        if isinstance(value, TensorImpl):
            inputs.append(self.name_of(value))
            return _Slot(len(inputs) - 1)
        if type(value) in (list, tuple):
            return type(value)(self.template(v, inputs) for v in value)
        return value

    def __call__(self, function: type, args: tuple, kwargs: dict, output: Any) -> None:
        inputs: list[str] = []
        attrs = {"args": self.template(args, inputs)}
        if kwargs:
            attrs["kwargs"] = {k: self.template(v, inputs) for k, v in kwargs.items()}
        outputs = list(output) if isinstance(output, tuple) else [output]
        names = []
        for out in outputs:
            if isinstance(out, TensorImpl):
                name = self._fresh("v")
                self.names[id(out)] = name
                self.keep.append(out)
                names.append(name)
            else:
                names.append("")
        if function.__name__ == "View":  # the input's layout, to tell reshapes and permutations apart later
            base = args[0]
            attrs["base"] = (tuple(base.shape), tuple(base._strides), base._offset, base._is_dense())
        self.graph.add_node(_register(function.__name__), inputs, names, attrs)
        for out, name in zip(outputs, names, strict=True):
            if name:
                info = self.graph.values[name]
                info.shape, info.dtype = tuple(out.shape), out.dtype


def _outputs_list(result: Any) -> list[Any]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def trace(fn: Callable[..., Any], example_inputs: Sequence[Any], *, check: bool = True,
          name: str = "traced") -> Graph:
    """Record the primitives ``fn(*example_inputs)`` runs into a Graph (see the module docstring).

    ``check`` (default) re-runs the graph on the example inputs and on perturbed ones and raises
    :class:`TraceError` when it disagrees with ``fn``.
    """
    from t_tensor.creation import tensor

    examples = [x if isinstance(x, TensorImpl) else tensor(x) for x in example_inputs]
    graph = Graph(name=name)
    recorder = _Recorder(graph)
    traced_inputs = []
    for i, x in enumerate(examples):
        traced = x.detach().clone()
        if traced.dtype.is_floating_point:
            traced.requires_grad_(True)
        input_name = f"x{i}"
        graph.add_input(input_name, tuple(x.shape), x.dtype)
        recorder.names[id(traced)] = input_name
        recorder.keep.append(traced)
        traced_inputs.append(traced)
    F.TRACE_HOOKS.append(recorder)
    try:
        with enable_grad():
            result = fn(*traced_inputs)
    finally:
        F.TRACE_HOOKS.remove(recorder)
    outputs = _outputs_list(result)
    for k, out in enumerate(outputs):
        if not isinstance(out, TensorImpl):
            raise TraceError(f"trace: output {k} of the function is a {type(out).__name__}, not a tensor")
        known = recorder.names.get(id(out))
        if known is None or known in graph.initializers or known in graph.inputs:
            # an output no recorded op made (a constant, or an input returned as is)
            known = graph.add_node("Identity", [recorder.name_of(out)], [f"out{k}"])
            graph.values[known].shape, graph.values[known].dtype = tuple(out.shape), out.dtype
        graph.outputs.append(known)
    graph._tuple_output = isinstance(result, (tuple, list))  # type: ignore[attr-defined]
    if check:
        _check(fn, graph, examples, outputs)
    return graph


def _check(fn: Callable, graph: Graph, examples: list[Any], expected: list[Any]) -> None:
    from t_tensor.creation import tensor

    def compare(got: list[Any], want: list[Any], what: str) -> None:
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            a, b = np.asarray(g.detach()), np.asarray(w.detach())
            if a.shape != b.shape or not np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-4,
                                                      atol=1e-5, equal_nan=True):
                raise TraceError(
                    f"trace: output {k} of the graph differs from the function's on {what}. The function likely "
                    "uses Python control flow on values, or operations on integer/boolean values computed from "
                    "its inputs, which the tracer cannot record."
                )

    compare(graph.run(*examples) if len(graph.outputs) > 1 else [graph.run(*examples)], expected,
            "the example inputs")
    rng = np.random.default_rng(0)
    perturbed = []
    for x in examples:
        if x.dtype.is_floating_point:
            # the same values in other places, slightly moved: magnitudes and signs stay realistic,
            # while anything frozen from the example's values (an argmax, a mask) is likely to change
            values = np.asarray(x.detach()).astype(np.float64).reshape(-1)
            values = rng.permutation(values) * (1 + 0.1 * rng.standard_normal(values.shape))
            perturbed.append(tensor(values.reshape(tuple(x.shape)), dtype=x.dtype))
        else:
            perturbed.append(x)
    with no_grad():
        want = _outputs_list(fn(*perturbed))
    got = graph.run(*perturbed)
    compare(got if len(graph.outputs) > 1 else [got], want, "perturbed inputs")


class CompiledFunction:
    """A traced function: call it like the function; ``graph`` is what runs.

    ``memory_plan()`` plans the intermediates of the graph in one arena (greedy by size) and
    reports arena, naive and lower-bound bytes (see :mod:`t_tensor.graph.arena`);
    ``profile(*inputs)`` runs once and returns the per-op-type time table. With ``arena=True`` calls run on an
    :class:`~t_tensor.graph.arena.ArenaExecutor` (one arena allocated once, reused by every call;
    ``executor.stats`` tells how many results were written in place and how many copied).
    """

    def __init__(self, graph: Graph, arena: bool = False) -> None:
        self.graph = graph
        self.executor: Any = None
        if arena:
            from t_tensor.graph.arena import ArenaExecutor

            self.executor = ArenaExecutor(graph)

    def __call__(self, *inputs: Any) -> Any:
        with no_grad():
            result = self.graph.run(*inputs) if self.executor is None else self.executor(*inputs)
        if getattr(self.graph, "_tuple_output", False) and not isinstance(result, (tuple, list)):
            return (result,)
        return tuple(result) if isinstance(result, list) else result

    def memory_plan(self, planner: str = "greedy_by_size", inplace: bool = False) -> Any:
        """The graph's memory plan (``Graph.plan_memory``: views alias their input, graph outputs
        live to the end; ``inplace`` lets elementwise nodes reuse a dying input)."""
        return self.graph.plan_memory(planner, inplace)

    def profile(self, *inputs: Any) -> Any:
        from t_tensor.graph.executor import Profiler

        profiler = Profiler()
        with no_grad():
            self.graph.run(*inputs, profiler=profiler)
        return profiler


def compile(fn: Callable[..., Any], example_inputs: Sequence[Any], *, arena: bool = False,
            optimize: bool = False) -> CompiledFunction:
    """Trace ``fn`` on ``example_inputs`` and return a callable that runs the graph (same values
    as ``fn`` on inputs of the same shapes and dtypes). See :func:`trace`. ``arena=True`` runs it
    with all intermediates planned in one arena (:class:`~t_tensor.graph.arena.ArenaExecutor`);
    ``optimize=True`` first gives the traced nodes their ONNX names
    (:func:`~t_tensor.graph.onnx_names.to_onnx_ops`) and runs the optimization passes
    (``graph.optimize()``: transposes folded into Gemm, BatchNorm into Conv, elementwise chains fused, ...)."""
    graph = trace(fn, example_inputs)
    if optimize:
        from t_tensor.graph.onnx_names import to_onnx_ops

        tuple_output = getattr(graph, "_tuple_output", False)
        graph = to_onnx_ops(graph).optimize()
        graph._tuple_output = tuple_output  # type: ignore[attr-defined]
    return CompiledFunction(graph, arena=arena)
