"""Symbolic dims: graph inputs whose dims are strings (ONNX dim_param, a dynamic batch): shape
inference carries them through as symbols or products of symbols, the plain executor accepts any
size for them, and the arena executor plans and prepares one program per concrete input shape.
Checked on hand-made graphs and on PyTorch models exported with dynamic_axes, at two batch sizes,
against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort  # dev dependency: a missing one must fail, not skip
import pytest

import t_tensor as tt
import t_tensor.onnx as tt_onnx
from t_tensor.graph import ArenaExecutor, Graph
from t_tensor.graph.shape_inference import bind_symbols, symbols_of

from .onnx_export import export_to_onnx
from .test_onnx_import import MODELS


def _cnn_graph() -> Graph:
    g = Graph()
    g.add_input("x", ("batch", 3, 8, 8), tt.float32)
    tt.manual_seed(0)
    g.add_initializer("w", tt.randn(4, 3, 3, 3) * 0.3)
    g.add_initializer("fc", tt.randn(64, 5) * 0.1)
    g.add_initializer("shape", tt.tensor([0, -1]))
    g.add_node("Conv", ["x", "w"], ["c"], {"pads": (1, 1, 1, 1)})           # (batch, 4, 8, 8)
    g.add_node("Relu", ["c"], ["r"])
    g.add_node("MaxPool", ["r"], ["p"], {"kernel_shape": (2, 2), "strides": (2, 2)})  # (batch, 4, 4, 4)
    g.add_node("Reshape", ["p", "shape"], ["f"])                             # (batch, 64)
    g.add_node("MatMul", ["f", "fc"], ["m"])                                 # (batch, 5)
    g.add_node("Softmax", ["m"], ["y"], {"axis": 1})
    g.add_node("Flatten", ["p"], ["all"], {"axis": 0})                       # (1, 64*batch)
    g.outputs = ["y", "all"]
    return g


def test_shape_inference_carries_symbols_through():
    g = _cnn_graph().infer_shapes()
    assert symbols_of(g) == ["batch"]
    shapes = {k: g.values[k].shape for k in ("c", "p", "f", "m", "y", "all")}
    assert shapes == {"c": ("batch", 4, 8, 8), "p": ("batch", 4, 4, 4), "f": ("batch", 64), "m": ("batch", 5),
                      "y": ("batch", 5), "all": (1, "64*batch")}
    assert "('batch', 5) float32" in str(g)


def test_several_symbols_products_and_what_stays_unknown():
    g = Graph()
    g.add_input("x", ("b", "t", 16), tt.float32)
    g.add_input("img", (1, 2, "h", "w"), tt.float32)
    g.add_initializer("k", tt.ones(2, 2, 3, 3))
    g.add_node("Flatten", ["x"], ["f"], {"axis": 2})                      # (b*t, 16)
    g.add_node("Transpose", ["x"], ["xt"], {"perm": (2, 1, 0)})           # (16, t, b)
    g.add_node("Conv", ["img", "k"], ["same"], {"pads": (1, 1, 1, 1)})   # (1, 2, h, w): same size
    g.add_node("Conv", ["img", "k"], ["half"], {"strides": (2, 2)})       # (h - 3) // 2 + 1: no product
    g.add_node("Relu", ["half"], ["r"])
    g.outputs = ["f", "xt", "same", "r"]
    g.infer_shapes(strict=False)
    assert g.values["f"].shape == ("b*t", 16) and g.values["xt"].shape == (16, "t", "b")
    assert g.values["same"].shape == (1, 2, "h", "w")
    assert g.values["half"].shape is None and g.values["r"].shape is None
    outs = g.run(tt.ones(2, 3, 16), tt.ones(1, 2, 7, 9))
    assert [tuple(o.shape) for o in outs] == [(6, 16), (16, 3, 2), (1, 2, 7, 9), (1, 2, 3, 4)]


def test_a_mismatch_under_symbols_names_the_node_and_the_symbols():
    g = Graph()
    g.add_input("a", ("n", 3), tt.float32)
    g.add_input("b", ("n", 4), tt.float32)
    g.add_node("Add", ["a", "b"], ["c"], name="add0")
    g.outputs = ["c"]
    with pytest.raises(ValueError, match=r"node 'add0' \(Add\): cannot broadcast .*symbolic dims \['n'\]"):
        g.infer_shapes()


def test_inputs_bind_each_symbol_to_one_size():
    bindings: dict[str, int] = {}
    assert bind_symbols(("n", 3), (5, 3), bindings) and bindings == {"n": 5}
    assert not bind_symbols(("n", 4), (6, 4), bindings)  # n is 5 already
    assert not bind_symbols(("n", 3), (5, 4), {}) and not bind_symbols(("n",), (5, 1), {})
    g = Graph()
    g.add_input("a", ("n", 3), tt.float32)
    g.add_input("b", ("n", 1), tt.float32)
    g.add_node("Add", ["a", "b"], ["c"])
    g.outputs = ["c"]
    g.infer_shapes()
    assert g.values["c"].shape == ("n", 3)
    assert tuple(g.run(tt.ones(4, 3), tt.ones(4, 1)).shape) == (4, 3)
    ex = ArenaExecutor(g)
    assert tuple(ex(tt.ones(2, 3), tt.ones(2, 1)).shape) == (2, 3)
    for run in (g.run, ex):
        with pytest.raises(ValueError, match="declares"):
            run(tt.ones(4, 3), tt.ones(5, 1))
        with pytest.raises(ValueError, match="declares"):
            run(tt.ones(4, 2), tt.ones(4, 1))


def test_arena_plans_one_program_per_input_shape():
    g = _cnn_graph().infer_shapes()
    ex = ArenaExecutor(g)
    assert ex.program is None and ex.plan is None  # nothing planned before a concrete shape is seen
    for batch in (2, 5, 2):
        tt.manual_seed(batch)
        x = tt.randn(batch, 3, 8, 8)
        got, want = ex(x), g.run(x)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
        assert ex.stats["copied"] == 0 and ex.stats["unplanned"] == 0
        assert ex.plan.order[0].op_type == "Conv"
    assert sorted(k[0][0] for k in ex.programs) == [2, 5]
    sizes = {k[0][0]: p.plan.arena_bytes for k, p in ex.programs.items()}
    assert sizes[5] > sizes[2]  # each shape its own plan
    first = ex.programs[((2, 3, 8, 8),)]
    ex(tt.randn(2, 3, 8, 8))
    assert ex.program is first  # cached
    small = ArenaExecutor(g, max_programs=2)
    for batch in (1, 2, 3, 1):
        x = tt.randn(batch, 3, 8, 8)
        np.testing.assert_allclose(small(x)[0].numpy(), g.run(x)[0].numpy(), rtol=1e-5, atol=1e-6)
    assert sorted(k[0][0] for k in small.programs) == [1, 3]  # batch 1 dropped at 3, prepared again


@pytest.mark.parametrize("name", ["mlp", "lenet", "resnet_block", "encoder_block"])
def test_dynamic_batch_models_match_onnxruntime_at_two_batch_sizes(name):
    net, shape = MODELS[name]()
    data, _, _ = export_to_onnx(net, shape, dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    g = tt_onnx.load(data)
    assert g.values["x"].shape[0] == "batch" and g.values["y"].shape is not None
    assert g.values["y"].shape[0] == "batch"
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    ex = ArenaExecutor(g)
    rng = np.random.default_rng(0)
    for batch in (1, 3):
        x = rng.standard_normal((batch,) + tuple(shape[1:])).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        for got in (g.run(tt.tensor(x)), ex(tt.tensor(x)), tt_onnx.run(data, [x])[0]):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
        assert ex.stats["copied"] == 0, ex.stats
    assert len(ex.programs) == 2


@pytest.mark.parametrize("name", ["resnet_block", "encoder_block"])
def test_optimized_dynamic_models_keep_their_symbols(name):
    """The passes work on symbolic shapes (they rewrite only what they can prove); the optimized
    graph runs at two batch sizes on the arena and matches onnxruntime."""
    net, shape = MODELS[name]()
    data, _, _ = export_to_onnx(net, shape, dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    g = tt_onnx.load(data)
    o = g.optimize()
    assert len(o.nodes) < len(g.nodes) and o.values[o.outputs[0]].shape[0] == "batch"
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    ex = ArenaExecutor(o)
    for batch in (2, 4):
        x = np.random.default_rng(batch).standard_normal((batch,) + tuple(shape[1:])).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        np.testing.assert_allclose(ex(tt.tensor(x)).numpy(), want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(o.run(tt.tensor(x)).numpy(), want, rtol=1e-4, atol=1e-5)
        assert ex.stats["copied"] == 0


def test_constant_folding_folds_the_static_part_of_a_symbolic_shape():
    from t_tensor.graph.passes import fold_constants

    g = Graph()
    g.add_input("x", ("batch", 3, 4), tt.float32)
    g.add_node("Shape", ["x"], ["tail"], {"start": 1})   # (3, 4): static, folded
    g.add_node("Shape", ["x"], ["all"])                  # ('batch', 3, 4): run time
    g.add_node("Size", ["x"], ["n"])                     # run time
    g.outputs = ["tail", "all", "n"]
    f = fold_constants(g.infer_shapes())
    assert [n.op_type for n in f.nodes] == ["Shape", "Size"] and f.initializers["tail"].tolist() == [3, 4]
    tail, full, n = f.run(tt.ones(5, 3, 4))
    assert tail.tolist() == [3, 4] and full.tolist() == [5, 3, 4] and n.item() == 60


def test_onnx_backend_node_cases_with_symbolic_first_dims():
    """Every ONNX backend node case the plain executor passes, with the first dim of each input
    renamed to a symbol of its own (s0, s1, ...): it loads, the shapes inferred are consistent with
    the outputs computed, and the arena executor (planning per input shape) gives the reference
    outputs. Symbols are independent in the probes, so where the graph needs two of them equal
    the shapes from there on stay unknown -- never an error."""
    import copy

    from onnx import TensorProto

    from .test_onnx_import import _case_passes, passing_backend_cases

    checked, known, wrong = 0, 0, []
    for case in passing_backend_cases():
        model = copy.deepcopy(case.model)
        renamed = 0
        for k, vi in enumerate(model.graph.input):
            dims = vi.type.tensor_type.shape.dim
            if len(dims) and dims[0].HasField("dim_value"):
                dims[0].dim_param = f"s{k}"
                renamed += 1
        if not renamed:
            continue

        def on_arena(_, ins, model=model):
            nonlocal known
            g = tt_onnx.load(model)
            outs = ArenaExecutor(g).run([tt_onnx.to_tensor(i) if isinstance(i, TensorProto) else i for i in ins])
            for out, name in zip(outs, g.outputs, strict=True):
                shape = g.values[name].shape
                if shape is not None:
                    known += 1
                    assert len(shape) == out.ndim and all(
                        d == n for d, n in zip(shape, out.shape, strict=True) if isinstance(d, int)), (shape, out.shape)
            return outs

        try:
            ok = _case_passes(case, on_arena)
        except Exception as exc:  # noqa: BLE001 - collected, reported below
            ok = f"{type(exc).__name__}: {exc}"
        if ok is not True:
            wrong.append((case.name, ok))
        checked += 1
    assert checked >= 900 and known >= 400 and not wrong, wrong
