"""The graph IR: building, printing, Graphviz, topological sort, validation, running, profiling."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import t_tensor as tt
from t_tensor.graph import Graph, Node, Profiler, ValueInfo, execute


def small_mlp():
    rng = np.random.default_rng(0)
    g = Graph(name="mlp")
    g.add_input("x", (4, 3), tt.float32)
    g.add_initializer("w1", tt.from_numpy(rng.standard_normal((3, 5)).astype(np.float32)))
    g.add_initializer("b1", tt.from_numpy(rng.standard_normal(5).astype(np.float32)))
    g.add_initializer("w2", tt.from_numpy(rng.standard_normal((2, 5)).astype(np.float32)))
    h = g.add_node("MatMul", ["x", "w1"], ["h"], name="mm")
    a = g.add_node("Add", [h, "b1"], ["a"], name="add")
    r = g.add_node("Relu", [a], ["r"], name="relu")
    g.add_node("Gemm", [r, "w2"], ["y"], {"transB": 1}, name="gemm")
    g.outputs = ["y"]
    return g


def test_print_and_dot():
    g = small_mlp().infer_shapes()
    text = str(g)
    assert text.splitlines()[0] == "graph mlp(%x: (4, 3) float32) -> (%y)"
    assert "  %w1 = initializer  # (3, 5) float32" in text
    assert "  %a = Add(%h, %b1)  # (4, 5) float32" in text
    assert "  %y = Gemm[transB=1](%r, %w2)  # (4, 2) float32" in text
    dot = g.to_dot()
    assert dot.startswith('digraph "mlp" {') and dot.endswith("}")
    assert '"op:0" -> "op:1" [label="(4, 5) float32"];' in dot
    assert '"init:w2" -> "op:3"' in dot and '"op:3" -> "out:y"' in dot
    assert repr(g) == "Graph(name='mlp', nodes=4, inputs=['x'], outputs=['y'], initializers=3)"
    assert str(Node("Add", ["a", ""], ["b"])) == "%b = Add(%a, _)"
    assert ValueInfo("v").describe() == "? ?"


def test_run_matches_torch():
    g = small_mlp()
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    w1, b1, w2 = (torch.from_numpy(g.initializers[k].numpy()) for k in ("w1", "b1", "w2"))
    expected = (torch.relu(torch.from_numpy(x) @ w1 + b1) @ w2.T).numpy()
    np.testing.assert_allclose(g.run(x).numpy(), expected, atol=1e-5)
    np.testing.assert_allclose(execute(g, {"x": tt.from_numpy(x)})[0].numpy(), expected, atol=1e-5)
    with pytest.raises(ValueError, match="run: expected 1 inputs"):
        g.run()
    with pytest.raises(ValueError, match="run: unknown inputs"):
        execute(g, {"z": x})


def test_topo_sort_is_stable_and_detects_cycles():
    g = Graph()
    g.add_input("x", (2,), tt.float32)
    g.add_node("Relu", ["b"], ["c"], name="third")  # listed first, needs b
    g.add_node("Neg", ["x"], ["a"], name="first")
    g.add_node("Exp", ["x"], ["d"], name="independent")
    g.add_node("Abs", ["a"], ["b"], name="second")
    g.outputs = ["c", "d"]
    assert [n.name for n in g.topo_sort()] == ["first", "independent", "second", "third"]
    assert [n.name for n in g.nodes][0] == "third"  # the graph itself is not reordered
    out_c, out_d = g.run(tt.tensor([-1.0, 2.0]))
    assert out_c.tolist() == [1.0, 2.0]
    np.testing.assert_allclose(out_d.numpy(), np.exp([-1.0, 2.0]).astype(np.float32), rtol=1e-6)
    g.nodes[1].inputs = ["c"]  # first now reads third's output: a cycle first -> second -> third -> first
    with pytest.raises(ValueError, match="topo_sort: the graph has a cycle through node 'third'"):
        g.topo_sort()


def test_validate():
    g = small_mlp()
    g.validate()
    g.nodes[1].inputs[1] = "nope"
    with pytest.raises(ValueError, match="validate: node 'add' \\(Add\\) reads 'nope', which nothing defines"):
        g.validate()
    g = small_mlp()
    g.add_node("Neg", ["x"], ["h"], name="dup")
    with pytest.raises(ValueError, match="validate: value 'h' is defined twice"):
        g.validate()
    g = small_mlp()
    g.outputs.append("zz")
    with pytest.raises(ValueError, match="validate: graph output 'zz' is not defined"):
        g.validate()
    g = small_mlp()
    g.add_node("Neg", ["w1"], ["x"], name="redef")
    with pytest.raises(ValueError, match="defined twice \\(graph input and node 'redef'\\)"):
        g.validate()


def test_fresh_names_and_multiple_outputs():
    g = Graph()
    g.add_input("x", (2, 6), tt.float32)
    a = g.add_node("Relu", ["x"])
    parts = g.add_node("Split", [a], 3, {"axis": 1, "num_outputs": 3})
    assert a == "relu_0" and len(set(parts)) == 3
    g.outputs = parts
    g.validate()
    g.infer_shapes()
    assert [g.values[p].shape for p in parts] == [(2, 2)] * 3
    outs = g.run(tt.arange(12.0).reshape(2, 6))
    assert [o.tolist() for o in outs] == [[[0.0, 1.0], [6.0, 7.0]], [[2.0, 3.0], [8.0, 9.0]],
                                          [[4.0, 5.0], [10.0, 11.0]]]


def test_profiler_table():
    g = small_mlp()
    prof = Profiler()
    x = np.ones((4, 3), np.float32)
    g.run(x, profiler=prof)
    g.run(x, profiler=prof)
    assert {k: v[0] for k, v in prof.records.items()} == {"MatMul": 2, "Add": 2, "Relu": 2, "Gemm": 2}
    lines = prof.table().splitlines()
    assert lines[0].split() == ["op", "type", "count", "total", "ms", "share"]
    assert lines[-1].split()[:2] == ["total", "8"] and lines[-1].endswith("100.0%")
    shares = [float(line.split()[-1].rstrip("%")) for line in lines[1:-1]]
    assert abs(sum(shares) - 100.0) < 0.5 and shares == sorted(shares, reverse=True)
    assert str(prof) == prof.table()


def test_inputs_must_match_the_declared_shape_and_dtype():
    g = small_mlp()
    with pytest.raises(ValueError, match=r"run: input 'x' is \(2, 3\) float32; the graph declares \(4, 3\) float32"):
        g.run(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"run: input 'x' is \(4, 3\) float64; the graph declares \(4, 3\) float32"):
        g.run(np.ones((4, 3)))


def test_copy_is_independent():
    g = small_mlp().infer_shapes()
    h = g.copy()
    assert str(h) == str(g)
    h.nodes[2].op_type = "Sigmoid"
    h.nodes[0].inputs[0] = "w1"
    h.outputs.append("a")
    h.values["y"].shape = None
    h.initializers["extra"] = tt.ones(1)
    assert g.nodes[2].op_type == "Relu" and g.nodes[0].inputs[0] == "x" and g.outputs == ["y"]
    assert g.values["y"].shape == (4, 2) and "extra" not in g.initializers
    assert h.initializers["w1"] is g.initializers["w1"]


def test_a_constant_output_is_returned_as_a_copy() -> None:
    import t_tensor as tt
    from t_tensor.graph import Graph

    g = Graph()
    g.add_input("x", (2,), tt.float32)
    g.add_initializer("c", tt.ones(2))
    g.outputs = ["c"]
    first = g.run(tt.zeros(2))
    first.fill_(7.0)
    assert g.run(tt.zeros(2)).tolist() == [1.0, 1.0]
