"""BatchNorm folding: an inference BatchNormalization right after a Conv is an affine map per
output channel, so it can be baked into the convolution's weight and bias.

For each output channel ``c``, with ``s = scale[c] / sqrt(var[c] + epsilon)``:
``W'[c] = W[c] * s`` and ``b'[c] = (b[c] - mean[c]) * s + B[c]`` (``b = 0`` without a bias).

>>> import t_tensor as tt
>>> from t_tensor.graph import Graph
>>> from t_tensor.graph.passes import fold_batchnorm
>>> g = Graph()
>>> _ = g.add_input("x", (1, 1, 3, 3), tt.float32)
>>> _ = g.add_initializer("w", tt.ones(2, 1, 1, 1))
>>> for name, v in [("scale", [2.0, 1.0]), ("bias", [0.0, 1.0]), ("mean", [0.0, 0.5]), ("var", [3.0, 0.0])]:
...     _ = g.add_initializer(name, tt.tensor(v))
>>> _ = g.add_node("Conv", ["x", "w"], ["c"])
>>> _ = g.add_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"], {"epsilon": 1.0})
>>> g.outputs = ["y"]
>>> f = fold_batchnorm(g)
>>> [n.op_type for n in f.nodes], f.initializers[f.nodes[0].inputs[2]].tolist()
(['Conv'], [0.0, 0.5])
"""

from __future__ import annotations

from ... import dtypes as D
from ... import elementwise as E
from ..ir import Graph
from ._common import finish, fresh_name, is_constant, use_counts

__all__ = ["fold_batchnorm"]


def fold_batchnorm(graph: Graph) -> Graph:
    """A new graph where each ``BatchNormalization`` (inference mode, one output) that reads a
    ``Conv`` output nobody else reads is removed and the Conv gets new weight and bias
    initializers (computed in float64, stored in the weight's dtype; the old parameters are dropped when
    nothing else reads them). The Conv then writes the
    BatchNorm's output name. The weight, the Conv's bias and the four BatchNorm parameters must be
    constants (initializers that are not graph inputs). ``graph`` itself is not modified.
    """
    g = graph.copy()
    producer = g.producers()
    uses = use_counts(g)
    removed = []
    replaced: set[str] = set()
    for bn in g.nodes:
        if (bn.op_type != "BatchNormalization" or bn.attrs.get("training_mode", 0)
                or len([o for o in bn.outputs if o]) != 1 or not bn.outputs[0] or len(bn.inputs) != 5):
            continue
        conv = producer.get(bn.inputs[0])
        if conv is None or conv.op_type != "Conv" or uses.get(conv.outputs[0], 0) != 1:
            continue
        params = list(bn.inputs[1:]) + [conv.inputs[1]] + ([conv.inputs[2]] if len(conv.inputs) > 2
                                                            and conv.inputs[2] else [])
        if not all(is_constant(g, p) for p in params):
            continue
        w = g.initializers[conv.inputs[1]]
        if not w.dtype.is_floating_point:
            continue
        scale, bias, mean, var = (g.initializers[p].to(D.float64) for p in bn.inputs[1:])
        w64 = w.to(D.float64)
        b64 = (g.initializers[conv.inputs[2]].to(D.float64) if len(conv.inputs) > 2 and conv.inputs[2]
               else E.mul(mean, 0.0))
        s = E.div(scale, E.sqrt(E.add(var, float(bn.attrs.get("epsilon", 1e-5)))))
        new_w = E.mul(w64, s.reshape(-1, *([1] * (w.ndim - 1)))).to(w.dtype)
        new_b = E.add(E.mul(E.sub(b64, mean), s), bias).to(w.dtype)
        w_name = g.add_initializer(fresh_name(g, conv.inputs[1] + "_bnfold"), new_w)
        b_name = g.add_initializer(fresh_name(g, (conv.outputs[0] or "conv") + "_bias_bnfold"), new_b)
        conv.inputs = [conv.inputs[0], w_name, b_name]
        conv.outputs = [bn.outputs[0]]
        removed.append(bn)
        replaced.update(params)
    g.nodes = [n for n in g.nodes if all(n is not r for r in removed)]
    read = {i for n in g.nodes for i in n.inputs} | set(g.outputs) | set(g.inputs)
    g.initializers = {k: v for k, v in g.initializers.items() if k in read or k not in replaced}
    return finish(g)
