"""Graph.plan_memory and the arena executor: plans are valid, views alias their input, in-place
reuse follows the rules, and running with every intermediate in one arena gives graph.run's values
(hand-made graphs, ONNX models exported from PyTorch, traced tt.compile graphs)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort  # dev dependency: a missing one must fail, not skip
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
import t_tensor.onnx as tt_onnx
from t_tensor.graph import ArenaExecutor, Graph

from .test_onnx_import import MODELS, export  # torch models exported with torch.onnx.export(dynamo=False)
from .test_trace import _models as traced_models


def _chain() -> Graph:
    g = Graph()
    g.add_input("x", (3, 4), tt.float32)
    g.add_initializer("w", tt.arange(20, dtype=tt.float32).reshape(4, 5) / 10)
    g.add_initializer("b", tt.ones(5))
    g.add_node("Gemm", ["x", "w", "b"], ["a"])
    g.add_node("Tanh", ["a"], ["t"])           # in place over a
    g.add_node("Transpose", ["t"], ["tt_"])   # a view: t stays alive while tt_ is read
    g.add_node("MatMul", ["tt_", "t"], ["m"])  # (5, 5)
    g.add_node("Add", ["m", "b"], ["s"])       # b broadcast: s may take m's slot (m is not broadcast)
    g.add_node("Sigmoid", ["t"], ["u"])        # t read again: dies here, u takes its slot
    g.add_node("ReduceSum", ["u"], ["r"], {"keepdims": 0})
    g.outputs = ["s", "r"]
    return g.infer_shapes()


def _assert_same(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_plan_memory_sets_the_plan_aliases_and_inplace():
    g = _chain()
    plan = g.plan_memory()
    assert g.memory_plan is plan
    plan.check()
    assert plan.aliases == {"tt_": "t"}
    assert set(plan.offsets) == {"a", "t", "m", "s", "u", "r"}  # inputs, weights and views are not planned
    assert plan.inplace == {"t": "a", "s": "m", "u": "t"}  # t dies at Sigmoid, read directly
    by_name = {t.name: t for t in plan.tensors}
    assert by_name["t"].last == 5  # kept alive by its reader (Sigmoid), not shortened by the view
    assert by_name["s"].last == by_name["r"].last == 7  # graph outputs live to the end
    assert plan.arena_bytes < plan.lower_bound < plan.naive_bytes
    no_inplace = g.plan_memory(inplace=False)
    assert no_inplace.inplace == {} and no_inplace.arena_bytes == no_inplace.lower_bound
    with pytest.raises(ValueError, match="unknown planner"):
        g.plan_memory("nope")


def test_inplace_refuses_broadcast_dtype_change_and_reads_through_a_view():
    g = Graph()
    g.add_input("x", (4, 4), tt.float32)
    g.add_node("Exp", ["x"], ["row"])                          # (4, 4)
    g.add_node("ReduceSum", ["row"], ["col"], {"axes": (1,)})  # (4, 1)
    g.add_node("Add", ["col", "row"], ["y1"])                   # col is broadcast: no; row dies here: yes
    g.add_node("Cast", ["y1"], ["y2"], {"to": tt.float64})     # dtype changes: no
    g.add_node("Transpose", ["y2"], ["v"])
    g.add_node("Neg", ["v"], ["y"])                             # reads y2 through a view: no
    g.outputs = ["y"]
    plan = g.infer_shapes().plan_memory()
    assert plan.inplace == {"y1": "row"}
    x = tt.randn(4, 4)
    _assert_same(ArenaExecutor(g)(x), g.run(x))


@pytest.mark.parametrize("planner", ["greedy_by_size", "offset_best_fit", "offset_first_fit"])
@pytest.mark.parametrize("inplace", [True, False])
def test_hand_made_graph_matches_run_and_reuses_the_arena(planner, inplace):
    g = _chain()
    ex = ArenaExecutor(g, planner=planner, inplace=inplace)
    assert ex.arena.nbytes == max(g.memory_plan.arena_bytes, 1)
    for seed in (0, 1):
        tt.manual_seed(seed)
        x = tt.randn(3, 4)
        got, want = ex(x), g.run(x)
        for a, b in zip(got, want, strict=True):
            _assert_same(a, b)
    first = ex(x)[0]
    ex(x + 1)  # the next call reuses the arena: the outputs returned before must not change
    _assert_same(first, want[0])
    assert ex.stats["direct"] == 6 and ex.stats["aliases"] == 1 and ex.stats["copied"] == 0  # ReduceSum too


def test_input_checks_are_the_plain_executors():
    ex = ArenaExecutor(_chain())
    with pytest.raises(ValueError, match="declares"):
        ex(tt.ones(2, 2))
    with pytest.raises(ValueError, match="expected 1 inputs"):
        ex()


@pytest.fixture(scope="module")
def exported():
    return {name: export(name) for name in MODELS}


@pytest.mark.parametrize("name", list(MODELS))
def test_exported_models_match_run_torch_and_onnxruntime(exported, name):
    model, x, expected = exported[name]
    g = tt_onnx.load(model)
    ex = ArenaExecutor(g)
    g.memory_plan.check()
    got = ex(x).numpy()
    _assert_same(got, g.run(x).numpy(), 1e-6)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-4)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, sess.run(None, {"x": x})[0], atol=1e-5, rtol=1e-4)
    assert ex.stats["direct"] > 0
    plan = g.memory_plan
    assert plan.arena_bytes <= plan.naive_bytes
    assert g.plan_memory(inplace=False).arena_bytes >= plan.arena_bytes


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder"])
def test_traced_graphs_run_on_the_arena(name):
    tt.manual_seed(0)
    model, shape = traced_models()[name]
    model.eval()
    compiled = tt.compile(model, (tt.randn(*shape),), arena=True)
    assert compiled.executor is not None
    for seed in (1, 2):
        tt.manual_seed(seed)
        x = tt.randn(*shape)
        with tt.no_grad():
            want = model(x)
        _assert_same(compiled(x).numpy(), want.numpy())
        _assert_same(compiled(x).numpy(), compiled.graph.run(x).numpy(), 1e-6)
    stats = compiled.executor.stats
    assert stats["direct"] > 0  # traced Matmul, Convolution, Add, unary primitives... write into the arena
    assert sum(stats[k] for k in ("direct", "copied", "aliases", "unplanned", "constants")) == len(compiled.graph.nodes)


def test_tuning_remembers_a_variant_per_node_and_the_profiler_counts_op_types():
    from t_tensor.graph import Profiler

    g = _chain()
    ex = ArenaExecutor(g, tune=True)
    x = tt.randn(3, 4)
    for _ in range(2):
        got, want = ex(x), g.run(x)
        for a, b in zip(got, want, strict=True):
            _assert_same(a, b)
    # Gemm, MatMul and ReduceSum are timed both ways; Tanh, Add and Sigmoid run in place (never run twice)
    assert set(ex.timings) == {"Gemm_0", "MatMul_3", "ReduceSum_6"}
    assert all(set(t) == {"direct", "copy"} and min(t.values()) > 0 for t in ex.timings.values())
    assert ex.choices["Tanh_1"] == ex.choices["Add_4"] == "direct"
    assert "Transpose_2" not in ex.choices  # a view made once: nothing to choose
    for name, t in ex.timings.items():
        assert ex.choices[name] == min(t, key=t.get)
    assert ex.stats["direct"] + ex.stats["copied"] + ex.stats["aliases"] == len(g.nodes)
    copies = sum(1 for c in ex.choices.values() if c == "copy")
    assert ex.stats["copied"] == copies  # the nodes whose registry kernel + copy was faster
    prof = Profiler()
    ex.run([x], profiler=prof)
    assert prof.records["Gemm"][0] == 1 and sum(r[0] for r in prof.records.values()) == len(g.nodes)
    assert "Transpose" in prof.table()


_RANDOM_OPS = [("Add", 2), ("Mul", 2), ("Sub", 2), ("MatMul", 2), ("Relu", 1), ("Tanh", 1), ("Neg", 1),
               ("Transpose", 1), ("Reshape", 1), ("Sigmoid", 1), ("ReduceMax", 1), ("Softmax", 1)]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_graphs_match_run(data):
    """Random DAGs of (4, 4) values mixing in-place candidates, views and copy-path kernels."""
    g = Graph()
    g.add_input("x", (4, 4), tt.float32)
    g.add_initializer("w", tt.arange(16, dtype=tt.float32).reshape(4, 4) / 16 - 0.5)
    g.add_initializer("shape", tt.tensor([4, 4]))
    names = ["x", "w"]
    for k in range(data.draw(st.integers(1, 12), label="nodes")):
        op, arity = data.draw(st.sampled_from(_RANDOM_OPS), label=f"op{k}")
        recent = names[-3:]  # mostly recent values: long chains, views read after their root
        ins = [data.draw(st.sampled_from(recent), label=f"in{k}_{j}") for j in range(arity)]
        if op == "ReduceMax":  # (4, 1), read at once by a broadcasting Sub: every named value stays (4, 4)
            r = g.add_node(op, ins, [f"r{k}"], {"axes": (1,), "keepdims": 1})
            names.append(g.add_node("Sub", [ins[0], r], [f"v{k}"]))
            continue
        if op == "Reshape":
            ins.append("shape")
        names.append(g.add_node(op, ins, [f"v{k}"]))
    outs = data.draw(st.lists(st.sampled_from(names[2:]), min_size=1, max_size=2, unique=True), label="outputs")
    g.outputs = outs
    g.infer_shapes()
    planner = data.draw(st.sampled_from(["greedy_by_size", "offset_best_fit"]), label="planner")
    ex = ArenaExecutor(g, planner=planner, inplace=data.draw(st.booleans(), label="inplace"))
    x = tt.randn(4, 4)
    got, want = ex.run([x]), g.run(x)
    want = list(want) if isinstance(want, tuple) else [want]
    for a, b in zip(got, want, strict=True):
        _assert_same(a, b)


def test_traced_views_of_an_offset_or_strided_input():
    """A traced tt.View's offset counts from its root's storage: rebased onto the given input."""
    f = tt.compile(lambda x: x.reshape(2, 3).T.exp() + x.reshape(3, 2), (tt.ones(6),), arena=True)
    big = tt.arange(12, dtype=tt.float32) / 10
    for x in (big[6:], big[::2], big[:6]):
        _assert_same(f(x).numpy(), (x.reshape(2, 3).T.exp() + x.reshape(3, 2)).numpy())
