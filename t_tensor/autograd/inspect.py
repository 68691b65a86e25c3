"""Looking at the autograd graph: list its nodes, print it, draw it, and watch backward run.

>>> import t_tensor as tt
>>> x = tt.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * x).sum()
>>> [node.name() for node in tt.autograd.inspect.graph_nodes(y)]
['SumBackward', 'MulBackward', 'AccumulateGrad']
"""

from __future__ import annotations

from typing import Any

from t_tensor.autograd import engine
from t_tensor.autograd.graph import AccumulateGrad, Node, gradient_edge

__all__ = ["backward_steps", "describe", "draw", "graph_nodes", "to_dot"]


def _root(tensor: Any, fn: str) -> Node:
    if tensor._ag is None or not tensor._ag.requires_grad:
        raise RuntimeError(f"{fn}: the tensor does not require grad, so it has no graph")
    return gradient_edge(tensor)[0]


def graph_nodes(tensor: Any) -> list[Node]:
    """The nodes behind ``tensor`` in the order backward runs them (each after all its users)."""
    root = _root(tensor, "graph_nodes")
    dependencies = engine._discover([root])
    order = []
    ready = [root]
    while ready:
        ready.sort(key=lambda n: n.sequence_nr)
        node = ready.pop()  # the most recent first, as the engine
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            dependencies[child] -= 1
            if dependencies[child] == 0:
                ready.append(child)
    return order


def _label(node: Node) -> str:
    if isinstance(node, AccumulateGrad):
        shape = "x".join(map(str, node.variable.shape)) or "scalar"
        return f"AccumulateGrad\\n[{shape}]"
    return node.name()


def describe(tensor: Any) -> str:
    """The graph as text, one node per line with the nodes its gradient goes to.

    >>> import t_tensor as tt
    >>> x = tt.tensor([1.0, 2.0], requires_grad=True)
    >>> print(tt.autograd.inspect.describe((x.exp() * 3).sum()))
    0 SumBackward -> 1
    1 MulBackward -> 2
    2 ExpBackward -> 3
    3 AccumulateGrad (leaf of shape (2,))
    """
    nodes = graph_nodes(tensor)
    index = {node: i for i, node in enumerate(nodes)}
    lines = []
    for i, node in enumerate(nodes):
        if isinstance(node, AccumulateGrad):
            lines.append(f"{i} AccumulateGrad (leaf of shape {node.variable.shape})")
            continue
        targets = [str(index[child]) for child, _ in node.next_functions if child is not None]
        lines.append(f"{i} {node.name()} -> {', '.join(targets) if targets else '(nothing)'}")
    return "\n".join(lines)


def to_dot(tensor: Any) -> str:
    """The graph in Graphviz's DOT language (render it with ``dot -Tpng`` or the graphviz package).

    >>> import t_tensor as tt
    >>> x = tt.tensor([1.0], requires_grad=True)
    >>> print(tt.autograd.inspect.to_dot(x * 2))
    digraph autograd {
      node [shape=box, fontname="monospace"];
      n0 [label="MulBackward"];
      n1 [label="AccumulateGrad\\n[1]", style=filled, fillcolor=lightblue];
      n0 -> n1;
    }
    """
    nodes = graph_nodes(tensor)
    index = {node: i for i, node in enumerate(nodes)}
    lines = ["digraph autograd {", '  node [shape=box, fontname="monospace"];']
    for i, node in enumerate(nodes):
        style = ", style=filled, fillcolor=lightblue" if isinstance(node, AccumulateGrad) else ""
        lines.append(f'  n{i} [label="{_label(node)}"{style}];')
    for i, node in enumerate(nodes):
        for child, _ in node.next_functions:
            if child is not None:
                lines.append(f"  n{i} -> n{index[child]};")
    lines.append("}")
    return "\n".join(lines)


def draw(tensor: Any, ax: Any = None) -> Any:
    """Draw the graph with matplotlib: the output's node on top, the leaves at the bottom, an
    arrow for each edge along which gradient flows. Returns the matplotlib Axes."""
    import matplotlib.pyplot as plt

    nodes = graph_nodes(tensor)
    depth: dict[Node, int] = {}
    for node in nodes:  # users come first, so a node's depth is final when it is reached
        depth.setdefault(node, 0)
        for child, _ in node.next_functions:
            if child is not None:
                depth[child] = max(depth.get(child, 0), depth[node] + 1)
    rows: dict[int, list[Node]] = {}
    for node in nodes:
        rows.setdefault(depth[node], []).append(node)
    position = {}
    for level, members in rows.items():
        for i, node in enumerate(members):
            position[node] = (i - (len(members) - 1) / 2, -level)
    if ax is None:
        _, ax = plt.subplots(figsize=(2.5 + 2 * max(len(m) for m in rows.values()), 1.2 * (len(rows) + 1)))
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                ax.annotate("", xy=position[child], xytext=position[node],
                            arrowprops={"arrowstyle": "->", "color": "gray", "shrinkA": 14, "shrinkB": 14})
    for node, (x, y) in position.items():
        color = "lightblue" if isinstance(node, AccumulateGrad) else "lightyellow"
        ax.text(x, y, _label(node).replace("\\n", "\n"), ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round", "facecolor": color, "edgecolor": "gray"})
    xs = [p[0] for p in position.values()]
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.set_ylim(-len(rows), 1)
    ax.axis("off")
    return ax


def backward_steps(tensor: Any, gradient: Any = None) -> list[tuple[str, list, list]]:
    """Run backward from ``tensor`` (accumulating into the leaves, as ``tensor.backward``) and
    return what each node did: ``(name, gradients in, gradients out)`` in the order they ran.

    >>> import t_tensor as tt
    >>> x = tt.tensor([3.0], requires_grad=True)
    >>> def values(grads):
    ...     return [g.tolist() for g in grads if g is not None]
    >>> for name, grads_in, grads_out in tt.autograd.inspect.backward_steps((x * x).sum()):
    ...     print(name, values(grads_in), values(grads_out))
    SumBackward [1.0] [[1.0]]
    MulBackward [[1.0]] [[3.0], [3.0]]
    AccumulateGrad [[6.0]] []
    """
    steps: list[tuple[str, list, list]] = []

    def record(node: Node, grads_in: list, grads_out: list) -> None:
        steps.append((node.name(), list(grads_in), list(grads_out)))

    outputs = (tensor,)
    engine._check_outputs(outputs, "backward_steps")
    grads = engine._root_grads(outputs, (gradient,), "backward_steps")
    engine.run_backward([gradient_edge(tensor)], grads, False, False, on_step=record)
    return steps
