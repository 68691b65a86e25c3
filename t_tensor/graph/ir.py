"""The graph IR: nodes (ONNX op types with plain-Python attributes), named values with shape and
dtype, constant initializers, a stable topological sort, validation, text and Graphviz views.

A value is a name (a string). Every value is defined exactly once: as a graph input, as an
initializer (a constant tensor: weights, shapes, ...) or as the output of one node. An empty
string in a node's inputs stands for an omitted optional input, as in ONNX.

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> g = Graph(name="tiny")
>>> g.add_input("x", (2, 3), tt.float32)
'x'
>>> g.add_initializer("w", tt.ones(2, 3))
'w'
>>> y = g.add_node("Add", ["x", "w"], ["y"])
>>> z = g.add_node("Relu", [y], ["z"])
>>> g.outputs = ["z"]
>>> _ = g.infer_shapes()
>>> print(g)
graph tiny(%x: (2, 3) float32) -> (%z)
  %w = initializer  # (2, 3) float32
  %y = Add(%x, %w)  # (2, 3) float32
  %z = Relu(%y)  # (2, 3) float32
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import dtypes as D

__all__ = ["Graph", "Node", "ValueInfo", "ONNX_DTYPE_CODES", "dtype_attr"]


@dataclass
class ValueInfo:
    """The static description of one value: its name, shape (a tuple of ints) and dtype.

    ``shape`` or ``dtype`` is None while unknown (before shape inference). A dim may be a string:
    a symbol (ONNX's ``dim_param``, e.g. ``"batch"``) or a product of symbols and an int
    (``"64*batch"``), known only when the graph runs.

    >>> import t_tensor as tt
    >>> ValueInfo("x", (2, 3), tt.float32)
    ValueInfo(name='x', shape=(2, 3), dtype=t_tensor.float32)
    """

    name: str
    shape: tuple[int | str, ...] | None = None
    dtype: D.DType | None = None

    def describe(self) -> str:
        """The shape and dtype as text, ``?`` for what is unknown.

        >>> import t_tensor as tt
        >>> ValueInfo("x", (2, 3), tt.float32).describe()
        '(2, 3) float32'
        """
        shape = "?" if self.shape is None else str(tuple(self.shape))
        dtype = "?" if self.dtype is None else self.dtype.name
        return f"{shape} {dtype}"


@dataclass
class Node:
    """One operation: an ONNX op type, the names it reads and writes, its attributes.

    >>> Node("Transpose", ["x"], ["y"], {"perm": (1, 0)}, "t0")
    Node(op_type='Transpose', inputs=['x'], outputs=['y'], attrs={'perm': (1, 0)}, name='t0')
    """

    op_type: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    def __str__(self) -> str:
        outs = ", ".join(f"%{o}" for o in self.outputs)
        ins = ", ".join(f"%{i}" if i else "_" for i in self.inputs)
        attrs = ""
        if self.attrs:
            attrs = "[" + ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.attrs.items())) + "]"
        return f"{outs} = {self.op_type}{attrs}({ins})"


def _short(value: Any) -> str:
    """An attribute value as short text (tensors as their shape and dtype)."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, D.DType):
        if value.numel() <= 8:
            return f"tensor({value.tolist()})"
        return f"tensor{tuple(value.shape)}:{value.dtype.name}"
    if isinstance(value, D.DType):
        return value.name
    return repr(value)


class Graph:
    """A computation graph: ``nodes``, ``inputs`` and ``outputs`` (names), ``initializers``
    (name -> constant tensor) and ``values`` (name -> ValueInfo).

    >>> import t_tensor as tt
    >>> g = Graph()
    >>> _ = g.add_input("a", (2, 2), tt.float32)
    >>> _ = g.add_node("MatMul", ["a", "a"], ["b"])
    >>> g.outputs = ["b"]
    >>> g.run(tt.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        inputs: Iterable[str] = (),
        outputs: Iterable[str] = (),
        initializers: dict[str, Any] | None = None,
        values: dict[str, ValueInfo] | None = None,
        name: str = "graph",
        opset: int = 17,
    ) -> None:
        self.nodes: list[Node] = list(nodes)
        self.inputs: list[str] = list(inputs)
        self.outputs: list[str] = list(outputs)
        self.initializers: dict[str, Any] = dict(initializers or {})
        self.values: dict[str, ValueInfo] = dict(values or {})
        self.name = name
        self.opset = opset
        for n, t in self.initializers.items():
            self.values.setdefault(n, ValueInfo(n, tuple(t.shape), t.dtype))

    # -- building -------------------------------------------------------------------------------
    def _fresh(self, stem: str) -> str:
        taken = self._defined_names() | set(self.values)
        i = 0
        while f"{stem}{i}" in taken:
            i += 1
        return f"{stem}{i}"

    def _defined_names(self) -> set[str]:
        names = set(self.inputs) | set(self.initializers)
        for node in self.nodes:
            names.update(o for o in node.outputs if o)
        return names

    def add_input(self, name: str, shape: Sequence[int | str] | None = None, dtype: Any = None) -> str:
        """Declare a graph input with its shape and dtype; returns its name. A dim given as a
        string is symbolic (``("batch", 3)``): any size, the same for every use of that name."""
        self.inputs.append(name)
        self.values[name] = ValueInfo(name, None if shape is None else tuple(shape),
                                      None if dtype is None else D.as_dtype(dtype))
        return name

    def add_initializer(self, name: str, tensor: Any) -> str:
        """Add a constant (weight, shape, ...) under ``name``; returns the name."""
        from ..creation import as_tensor

        t = as_tensor(tensor)
        self.initializers[name] = t
        self.values[name] = ValueInfo(name, tuple(t.shape), t.dtype)
        return name

    def add_node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | int | None = None,
                 attrs: dict[str, Any] | None = None, name: str | None = None) -> Any:
        """Append a node. ``outputs`` are names, or a count of fresh names to make (default 1).

        Returns the output name (one output) or the list of output names.
        """
        if outputs is None or isinstance(outputs, int):
            outputs = [self._fresh(op_type.lower() + "_") for _ in range(1 if outputs is None else outputs)]
            # fresh names must also differ from each other
            seen: set[str] = set()
            for k, o in enumerate(outputs):
                while o in seen:
                    o = o + "_"
                outputs[k] = o
                seen.add(o)
        node = Node(op_type, list(inputs), list(outputs), dict(attrs or {}),
                    name if name is not None else f"{op_type}_{len(self.nodes)}")
        self.nodes.append(node)
        for o in node.outputs:
            if o:
                self.values.setdefault(o, ValueInfo(o))
        return node.outputs[0] if len(node.outputs) == 1 else list(node.outputs)

    def copy(self) -> Graph:
        """A copy whose nodes, lists and value table can be changed without touching this graph
        (initializer tensors and attribute values are shared, not copied).

        >>> import t_tensor as tt
        >>> g = Graph()
        >>> _ = g.add_input("x", (2,), tt.float32)
        >>> _ = g.add_node("Relu", ["x"], ["y"])
        >>> h = g.copy()
        >>> h.nodes[0].op_type = "Neg"
        >>> g.nodes[0].op_type
        'Relu'
        """
        g = Graph(name=self.name, opset=self.opset)
        g.nodes = [Node(n.op_type, list(n.inputs), list(n.outputs), dict(n.attrs), n.name) for n in self.nodes]
        g.inputs, g.outputs = list(self.inputs), list(self.outputs)
        g.initializers = dict(self.initializers)
        g.values = {k: ValueInfo(v.name, v.shape, v.dtype) for k, v in self.values.items()}
        return g

    # -- structure ------------------------------------------------------------------------------
    def producers(self) -> dict[str, Node]:
        """Map each node output name to the node that writes it."""
        return {o: node for node in self.nodes for o in node.outputs if o}

    def consumers(self) -> dict[str, list[Node]]:
        """Map each value name to the nodes that read it (in node order)."""
        users: dict[str, list[Node]] = {}
        for node in self.nodes:
            for i in node.inputs:
                if i:
                    users.setdefault(i, []).append(node)
        return users

    def topo_sort(self) -> list[Node]:
        """The nodes in a topological order, stable: among ready nodes, the earliest listed first.

        Raises ValueError naming a node on a cycle (or reading a value that nothing defines).
        Does not modify the graph.
        """
        produced = self.producers()
        waiting: dict[int, int] = {}
        users: dict[str, list[int]] = {}
        for k, node in enumerate(self.nodes):
            deps = {i for i in node.inputs if i and i in produced}
            waiting[k] = len(deps)
            for d in deps:
                users.setdefault(d, []).append(k)
        ready = [k for k, c in waiting.items() if c == 0]
        heapq.heapify(ready)
        order: list[Node] = []
        while ready:
            k = heapq.heappop(ready)
            node = self.nodes[k]
            order.append(node)
            for o in node.outputs:
                for u in users.get(o, ()):
                    waiting[u] -= 1
                    if waiting[u] == 0:
                        heapq.heappush(ready, u)
        if len(order) != len(self.nodes):
            stuck = min((k for k, c in waiting.items() if c > 0), default=0)
            node = self.nodes[stuck]
            raise ValueError(f"topo_sort: the graph has a cycle through node {node.name!r} ({node.op_type})")
        return order

    def validate(self) -> None:
        """Check the graph is well formed; raises ValueError describing the first problem.

        Every value is defined once (input, initializer or node output), every node input and
        every graph output is defined, and the nodes can be ordered (no cycle).
        """
        defined: dict[str, str] = {}

        def define(name: str, what: str) -> None:
            if not name:
                return
            if name in defined:
                raise ValueError(f"validate: value {name!r} is defined twice ({defined[name]} and {what})")
            defined[name] = what

        for n in self.inputs:
            define(n, "graph input")
        for n in self.initializers:
            if n in self.inputs:
                continue  # an ONNX-style input with a default value (the initializer)
            define(n, "initializer")
        for node in self.nodes:
            if not node.outputs:
                raise ValueError(f"validate: node {node.name!r} ({node.op_type}) has no output")
            for o in node.outputs:
                define(o, f"node {node.name!r}")
        for node in self.nodes:
            for i in node.inputs:
                if i and i not in defined:
                    raise ValueError(f"validate: node {node.name!r} ({node.op_type}) reads {i!r}, "
                                     "which nothing defines")
        for o in self.outputs:
            if o not in defined:
                raise ValueError(f"validate: graph output {o!r} is not defined")
        self.topo_sort()

    # -- analysis and execution (thin wrappers) -------------------------------------------------
    def infer_shapes(self, strict: bool = True) -> Graph:
        """Fill ``values`` with every value's shape and dtype (see shape_inference); returns self."""
        from .shape_inference import infer_shapes

        infer_shapes(self, strict)
        return self

    # -- optimization passes (graph-passes) ----------------------------------------------------
    def optimize(self, passes: Any = None) -> Graph:
        """The graph after the optimization passes (``t_tensor.graph.passes.optimize``; default
        ``DEFAULT_PASSES``). Returns a new graph; this one is not modified."""
        from .passes import DEFAULT_PASSES, optimize

        return optimize(self, DEFAULT_PASSES if passes is None else passes)
    # -- end of optimization passes (graph-passes) ---------------------------------------------

    def run(self, *inputs: Any, profiler: Any = None) -> Any:
        """Run the graph on ``inputs`` (positional, in ``self.inputs`` order); returns the output
        tensor, or a tuple of them when the graph has several outputs."""
        from .executor import execute

        outs = execute(self, list(inputs), profiler=profiler)
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- memory planning (graph-arena) ------------------------------------------------------------
    memory_plan: Any = None
    """The plan the last ``plan_memory`` call made (None before)."""

    def plan_memory(self, planner: str = "greedy_by_size", inplace: bool = True, alignment: int = 64) -> Any:
        """Give every intermediate value an offset in one arena (see :mod:`t_tensor.graph.arena`):
        node outputs (graph outputs included, live to the end) are planned; inputs and initializers
        are bound; views (Reshape, Transpose, ...) alias their input; an elementwise node's output
        may reuse a dying input of the same shape and dtype when ``inplace``. Sets and returns
        ``self.memory_plan``.

        >>> import t_tensor as tt
        >>> g = Graph()
        >>> _ = g.add_input("x", (4, 4), tt.float32)
        >>> _ = g.add_node("Exp", ["x"], ["a"])
        >>> _ = g.add_node("Neg", ["a"], ["y"])
        >>> g.outputs = ["y"]
        >>> plan = g.plan_memory()
        >>> plan.arena_bytes, plan.naive_bytes, plan.lower_bound, plan.inplace
        (64, 128, 128, {'y': 'a'})
        """
        from .arena import plan_graph

        self.memory_plan = plan_graph(self, planner, inplace, alignment)
        return self.memory_plan
    # -- end of memory planning (graph-arena) -----------------------------------------------------

    # -- views ----------------------------------------------------------------------------------
    def _info(self, name: str) -> str:
        v = self.values.get(name)
        return v.describe() if v is not None else "? ?"

    def __str__(self) -> str:
        ins = ", ".join(f"%{i}: {self._info(i)}" for i in self.inputs)
        outs = ", ".join(f"%{o}" for o in self.outputs)
        lines = [f"graph {self.name}({ins}) -> ({outs})"]
        for n in self.initializers:
            if n not in self.inputs:
                lines.append(f"  %{n} = initializer  # {self._info(n)}")
        for node in self.nodes:
            infos = ", ".join(self._info(o) for o in node.outputs if o)
            lines.append(f"  {node}  # {infos}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"Graph(name={self.name!r}, nodes={len(self.nodes)}, inputs={self.inputs}, "
                f"outputs={self.outputs}, initializers={len(self.initializers)})")

    def to_dot(self) -> str:
        """The graph as Graphviz text: nodes as boxes, values as edges labelled shape and dtype.

        >>> import t_tensor as tt
        >>> g = Graph()
        >>> _ = g.add_input("x", (3,), tt.float32)
        >>> _ = g.add_node("Relu", ["x"], ["y"], name="r")
        >>> g.outputs = ["y"]
        >>> print(g.to_dot())  # doctest: +NORMALIZE_WHITESPACE
        digraph "graph" {
          rankdir=TB;
          node [fontname="Helvetica"];
          "in:x" [label="x", shape=ellipse];
          "op:0" [label="r\\nRelu", shape=box];
          "out:y" [label="y", shape=ellipse];
          "in:x" -> "op:0" [label="(3,) float32"];
          "op:0" -> "out:y" [label="? ?"];
        }
        """
        def q(s: str) -> str:
            return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

        lines = [f"digraph {q(self.name)} {{", "  rankdir=TB;", '  node [fontname="Helvetica"];']
        src: dict[str, str] = {}
        for n in self.inputs:
            lines.append(f"  {q('in:' + n)} [label={q(n)}, shape=ellipse];")
            src[n] = "in:" + n
        for n in self.initializers:
            if n not in src:
                lines.append(f"  {q('init:' + n)} [label={q(n)}, shape=note];")
                src[n] = "init:" + n
        for k, node in enumerate(self.nodes):
            label = f"{node.name}\\n{node.op_type}" if node.name else node.op_type
            lines.append(f'  {q(f"op:{k}")} [label="{label}", shape=box];')
            for o in node.outputs:
                src[o] = f"op:{k}"
        for n in self.outputs:
            lines.append(f"  {q('out:' + n)} [label={q(n)}, shape=ellipse];")
        edges = []
        for k, node in enumerate(self.nodes):
            for i in node.inputs:
                if i in src:
                    edges.append(f"  {q(src[i])} -> {q(f'op:{k}')} [label={q(self._info(i))}];")
        for n in self.outputs:
            if n in src:
                edges.append(f"  {q(src[n])} -> {q('out:' + n)} [label={q(self._info(n))}];")
        return "\n".join(lines + edges + ["}"])


# ONNX TensorProto.DataType codes of the dtypes t_tensor has (shared by the importer, shape
# inference and the kernels: a Cast's ``to`` may be one of these codes or a t_tensor dtype).
ONNX_DTYPE_CODES: dict[int, D.DType] = {
    1: D.float32, 2: D.uint8, 3: D.int8, 5: D.int16, 6: D.int32, 7: D.int64, 9: D.bool, 10: D.float16,
    11: D.float64,
}


def dtype_attr(value: Any, what: str = "Cast") -> D.DType:
    """A dtype attribute (an ONNX DataType code or anything ``dtypes.as_dtype`` takes) as a DType."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in ONNX_DTYPE_CODES:
            raise NotImplementedError(f"{what}: ONNX data type {value} has no t_tensor dtype")
        return ONNX_DTYPE_CODES[value]
    return D.as_dtype(value)
