"""t_tensor.graph.passes: every pass on small graphs built with the IR and on ONNX models (written
with onnx.helper or exported from PyTorch): same results before and after, fewer nodes where
expected, shape inference still consistent, the input graph left untouched."""

from __future__ import annotations

import numpy as np
import pytest

import t_tensor as tt
from t_tensor.graph import KERNELS, Graph, infer_shapes
from t_tensor.graph.passes import (
    DEFAULT_PASSES,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_batchnorm,
    fold_constants,
    fold_reshapes,
    fuse_conv,
    fuse_elementwise,
    fuse_gemm_activation,
    optimize,
    optimize_transposes,
)
from t_tensor.graph.passes.elementwise_fusion import fused_kernel
from tests.graph.onnx_export import export_to_onnx

ALL_PASSES = [eliminate_dead_code, fold_constants, eliminate_common_subexpressions, optimize_transposes,
              fold_batchnorm, fuse_conv, fuse_elementwise, fold_reshapes, fuse_gemm_activation]


def ops(g):
    return [n.op_type for n in g.nodes]


def outputs(g, *inputs):
    out = g.run(*inputs)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def check_same(before, after, inputs, rtol=1e-5, atol=1e-6):
    """after computes what before computes, after is valid and its shapes are what it produces."""
    text = str(before)
    after.validate()
    expected, got = outputs(before, *inputs), outputs(after, *inputs)
    for e, r in zip(expected, got, strict=True):
        assert e.shape == r.shape and e.dtype == r.dtype
        np.testing.assert_allclose(r, e, rtol=rtol, atol=atol)
    assert str(before) == text  # the pass did not modify its argument
    infer_shapes(after)  # strict: every shape is known and consistent
    for o, r in zip(after.outputs, got, strict=True):
        assert after.values[o].shape == r.shape
    return after


def rand(*shape, dtype=tt.float32):
    return tt.tensor(np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape)).to(dtype)


# -- dead code elimination ----------------------------------------------------------------------
def test_dce_removes_unneeded_nodes_and_initializers():
    g = Graph()
    g.add_input("x", (3,), tt.float32)
    g.add_initializer("w", tt.ones(3))
    g.add_initializer("unused_w", tt.ones(3))
    g.add_node("Mul", ["x", "w"], ["a"])
    g.add_node("Exp", ["a"], ["dead1"])
    g.add_node("Add", ["dead1", "unused_w"], ["dead2"])
    g.add_node("Relu", ["a"], ["y"])
    g.outputs = ["y"]
    d = check_same(g, eliminate_dead_code(g), [rand(3)])
    assert ops(d) == ["Mul", "Relu"]
    assert set(d.initializers) == {"w"} and "dead1" not in d.values and "dead2" not in d.values


def test_dce_keeps_multi_output_node_when_one_output_is_needed():
    g = Graph()
    g.add_input("x", (4,), tt.float32)
    g.add_node("Split", ["x"], ["p", "q"], {"axis": 0, "num_outputs": 2})
    g.add_node("Neg", ["q"], ["y"])
    g.outputs = ["y"]
    d = check_same(g, eliminate_dead_code(g), [rand(4)])
    assert ops(d) == ["Split", "Neg"]


# -- constant folding ---------------------------------------------------------------------------
def test_constant_folding_collapses_constant_subgraphs():
    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_initializer("w", rand(3, 2))
    g.add_initializer("s", tt.tensor([2.0, 3.0]))
    g.add_node("Transpose", ["w"], ["wt"], {"perm": (1, 0)})  # constant
    g.add_node("Mul", ["s", "s"], ["s2"])                       # constant
    g.add_node("Unsqueeze", ["s2"], ["s3"], {"axes": (1,)})     # constant of a constant
    g.add_node("Mul", ["wt", "s3"], ["ws"])                     # constant
    g.add_node("Gemm", ["ws", "x"], ["y"], {"transB": 1})      # (2, 3) @ (3, 2)
    g.outputs = ["y"]
    f = check_same(g, fold_constants(g), [rand(2, 3)])
    assert ops(f) == ["Gemm"]
    assert "ws" in f.initializers and "wt" not in f.initializers and "s2" not in f.initializers


def test_constant_folding_respects_size_limit_and_graph_inputs_with_defaults():
    g = Graph()
    g.add_input("x", (1000,), tt.float32)
    g.add_input("d", (1,), tt.float32)
    g.add_initializer("d", tt.tensor([5.0]))          # an input with a default value: not a constant
    g.add_initializer("one", tt.tensor([1.0]))
    g.add_initializer("shape", tt.tensor([1000], dtype=tt.int64))
    g.add_node("Expand", ["one", "shape"], ["big"])     # 1 -> 1000 elements: over the limit of 100
    g.add_node("Add", ["d", "one"], ["d1"])              # reads an input: stays
    g.add_node("Add", ["x", "big"], ["a"])
    g.add_node("Mul", ["a", "d1"], ["y"])
    g.outputs = ["y"]
    f = check_same(g, fold_constants(g, limit=100), [rand(1000), tt.tensor([2.0])])
    assert ops(f) == ops(g)
    f2 = check_same(g, fold_constants(g), [rand(1000), tt.tensor([2.0])])
    assert ops(f2) == ["Add", "Add", "Mul"] and "big" in f2.initializers


def test_constant_folding_of_constant_nodes_and_a_constant_output():
    g = Graph()
    g.add_input("x", (2,), tt.float32)
    g.add_node("Constant", [], ["c"], {"value": tt.tensor([1.0, 2.0])})
    g.add_node("Neg", ["c"], ["nc"])
    g.add_node("Add", ["x", "nc"], ["y"])
    g.outputs = ["y", "nc"]
    f = check_same(g, fold_constants(g), [rand(2)])
    assert ops(f) == ["Add"]


def test_constant_folding_of_static_shape_arithmetic_and_failing_kernels():
    g = Graph()
    g.add_input("x", (2, 3, 4), tt.float32)
    g.add_node("Shape", ["x"], ["s"], {"start": 1})
    g.add_node("Size", ["x"], ["n"])
    g.add_initializer("i", tt.tensor([0], dtype=tt.int64))
    g.add_node("Gather", ["s", "i"], ["s0"], {"axis": 0})
    g.add_initializer("m1", tt.tensor([-1], dtype=tt.int64))
    g.add_node("Concat", ["m1", "s0"], ["shp"], {"axis": 0})
    g.add_node("Reshape", ["x", "shp"], ["y"])
    g.add_node("Cast", ["n"], ["nf"], {"to": 1})
    g.add_node("Mul", ["y", "nf"], ["z"])
    g.outputs = ["z"]
    f = check_same(g, fold_constants(g), [rand(2, 3, 4)])
    assert ops(f) == ["Reshape", "Mul"] and f.initializers["shp"].tolist() == [-1, 3]
    h = Graph()
    h.add_input("x")                    # no declared shape: no shape inference, which would raise first
    h.add_initializer("a", tt.ones(2))
    h.add_initializer("k", tt.tensor([0, 5], dtype=tt.int64))
    h.add_node("Gather", ["a", "k"], ["c"], {"axis": 0})     # index 5 out of range: left for run time
    h.add_node("Add", ["x", "c"], ["y"])
    h.outputs = ["y"]
    assert ops(fold_constants(h)) == ["Gather", "Add"]
    with pytest.raises(IndexError, match="out of bounds"):
        fold_constants(h).run(tt.ones(2))


# -- common subexpression elimination -----------------------------------------------------------
def test_cse_merges_equal_nodes_transitively():
    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_initializer("w", rand(3, 3))
    g.add_node("MatMul", ["x", "w"], ["a1"])
    g.add_node("MatMul", ["x", "w"], ["a2"])
    g.add_node("Relu", ["a1"], ["r1"])
    g.add_node("Relu", ["a2"], ["r2"])          # equal once a2 == a1
    g.add_node("Transpose", ["r1"], ["t1"], {"perm": (1, 0)})
    g.add_node("Transpose", ["r1"], ["t2"], {"perm": (1, 0)})
    g.add_node("Softmax", ["r2"], ["s1"], {"axis": 0})
    g.add_node("Softmax", ["r2"], ["s2"], {"axis": 1})   # different attrs: stays
    g.add_node("Add", ["s1", "s2"], ["u"])
    g.add_node("MatMul", ["t1", "u"], ["v1"])
    g.add_node("MatMul", ["t2", "u"], ["v2"])
    g.outputs = ["v1", "v2"]                    # v2 is an output: kept
    c = check_same(g, eliminate_common_subexpressions(g), [rand(2, 3)])
    assert ops(c) == ["MatMul", "Relu", "Transpose", "Softmax", "Softmax", "Add", "MatMul", "MatMul"]


def test_cse_compares_tensor_attributes_by_value():
    g = Graph()
    g.add_input("x", (2,), tt.float32)
    for k, v in enumerate([[1.0, 2.0], [1.0, 2.0], [1.0, 3.0]]):
        g.add_node("Constant", [], [f"c{k}"], {"value": tt.tensor(v)})
        g.add_node("Add", ["x", f"c{k}"], [f"a{k}"])
    g.add_node("Sum", ["a0", "a1", "a2"], ["y"])
    g.outputs = ["y"]
    c = check_same(g, eliminate_common_subexpressions(g), [rand(2)])
    assert ops(c).count("Constant") == 2 and ops(c).count("Add") == 2


# -- transposes ---------------------------------------------------------------------------------
def test_transpose_pairs_cancel_or_compose():
    g = Graph()
    g.add_input("x", (2, 3, 4), tt.float32)
    g.add_node("Transpose", ["x"], ["t1"], {"perm": (2, 0, 1)})
    g.add_node("Transpose", ["t1"], ["t2"], {"perm": (1, 2, 0)})   # cancels t1
    g.add_node("Transpose", ["t2"], ["t3"], {"perm": (1, 0, 2)})
    g.add_node("Transpose", ["t3"], ["t4"], {"perm": (0, 2, 1)})   # composes with t3
    g.add_node("Relu", ["t4"], ["y"])
    g.outputs = ["y"]
    t = check_same(g, optimize_transposes(g), [rand(2, 3, 4)])
    assert ops(t) == ["Transpose", "Relu"]
    assert t.nodes[0].inputs == ["x"] and t.nodes[0].attrs["perm"] == (1, 2, 0)


def test_cancelling_transposes_ending_in_a_graph_output_and_default_perm():
    g = Graph()
    g.add_input("x", (2, 3, 4), tt.float32)
    g.add_node("Transpose", ["x"], ["t1"])          # default: reverse
    g.add_node("Transpose", ["t1"], ["y"])
    g.outputs = ["y"]
    t = check_same(g, optimize_transposes(g), [rand(2, 3, 4)])
    assert ops(t) == ["Identity"]


@pytest.mark.parametrize("side", ["A", "B", "both"])
def test_transpose_folded_into_gemm(side):
    g = Graph()
    g.add_input("a", (3, 2) if side in ("A", "both") else (2, 3), tt.float32)
    g.add_input("b", (4, 3) if side in ("B", "both") else (3, 4), tt.float32)
    lhs, rhs = "a", "b"
    if side in ("A", "both"):
        lhs = g.add_node("Transpose", ["a"], ["at"], {"perm": (1, 0)})
    if side in ("B", "both"):
        rhs = g.add_node("Transpose", ["b"], ["bt"], {"perm": (1, 0)})
    g.add_node("MatMul", [lhs, rhs], ["y"])
    g.outputs = ["y"]
    a = rand(3, 2) if side in ("A", "both") else rand(2, 3)
    b = rand(4, 3) if side in ("B", "both") else rand(3, 4)
    t = check_same(g, optimize_transposes(g), [a, b])
    assert ops(t) == ["Gemm"]
    assert t.nodes[0].attrs.get("transA", 0) == (side in ("A", "both"))
    assert t.nodes[0].attrs.get("transB", 0) == (side in ("B", "both"))


def test_transpose_into_existing_gemm_flips_flag_and_nd_matmul_is_left_alone():
    g = Graph()
    g.add_input("a", (2, 3), tt.float32)
    g.add_input("w", (3, 4), tt.float32)
    g.add_input("c", (5, 2, 3), tt.float32)
    g.add_node("Transpose", ["w"], ["wt"], {"perm": (1, 0)})
    g.add_node("Gemm", ["a", "wt", ""], ["y"], {"transB": 1, "alpha": 2.0})   # wt^T = w
    g.add_node("Transpose", ["c"], ["ct"], {"perm": (0, 2, 1)})
    g.add_node("MatMul", ["ct", "y"], ["z"])                     # (5, 3, 2) @ (2, 4): N-d, kept
    g.outputs = ["z"]
    t = check_same(g, optimize_transposes(g), [rand(2, 3), rand(3, 4), rand(5, 2, 3)])
    assert ops(t) == ["Gemm", "Transpose", "MatMul"]
    assert t.nodes[0].inputs[1] == "w" and t.nodes[0].attrs["transB"] == 0


def test_transpose_with_another_reader_is_kept():
    g = Graph()
    g.add_input("a", (3, 2), tt.float32)
    g.add_input("b", (3, 4), tt.float32)
    g.add_node("Transpose", ["a"], ["at"], {"perm": (1, 0)})
    g.add_node("MatMul", ["at", "b"], ["y"])
    g.add_node("Relu", ["at"], ["r"])
    g.outputs = ["y", "r"]
    t = check_same(g, optimize_transposes(g), [rand(3, 2), rand(3, 4)])
    assert sorted(ops(t)) == ["Gemm", "Relu", "Transpose"]


# -- BatchNorm folding and Conv fusion ----------------------------------------------------------
def conv_bn_graph(bias=True, extra_reader=False, relu=True):
    rng = np.random.default_rng(0)
    g = Graph()
    g.add_input("x", (2, 3, 6, 6), tt.float32)
    g.add_initializer("w", tt.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32)))
    ins = ["x", "w"]
    if bias:
        ins.append(g.add_initializer("b", tt.tensor(rng.standard_normal(4).astype(np.float32))))
    for name, v in [("scale", rng.uniform(0.5, 1.5, 4)), ("beta", rng.uniform(-1, 1, 4)),
                    ("mean", rng.uniform(-1, 1, 4)), ("var", rng.uniform(0.5, 2, 4))]:
        g.add_initializer(name, tt.tensor(v.astype(np.float32)))
    g.add_node("Conv", ins, ["c"], {"pads": (1, 1, 1, 1), "strides": (2, 2)})
    g.add_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["bn"], {"epsilon": 1e-3})
    last = "bn"
    if relu:
        last = g.add_node("Relu", ["bn"], ["y"])
    g.outputs = [last]
    if extra_reader:
        g.add_node("Neg", ["c"], ["n"])
        g.outputs.append("n")
    return g


@pytest.mark.parametrize("bias", [True, False])
def test_batchnorm_folded_into_conv(bias):
    g = conv_bn_graph(bias=bias)
    f = check_same(g, fold_batchnorm(g), [rand(2, 3, 6, 6)], atol=1e-5)
    assert ops(f) == ["Conv", "Relu"] and len(f.nodes[0].inputs) == 3
    assert not {"scale", "beta", "mean", "var", "w"} & set(f.initializers)


def test_batchnorm_not_folded_when_conv_output_has_another_reader_or_params_are_inputs():
    g = conv_bn_graph(extra_reader=True)
    assert ops(check_same(g, fold_batchnorm(g), [rand(2, 3, 6, 6)])) == ops(g)
    h = conv_bn_graph()
    h.inputs.append("var")   # an input with a default: may change at run time
    assert ops(fold_batchnorm(h)) == ops(h)


def test_conv_bias_relu_fused():
    g = Graph()
    g.add_input("x", (1, 2, 5, 5), tt.float32)
    g.add_initializer("w", rand(3, 2, 3, 3))
    g.add_initializer("b", rand(3))
    g.add_initializer("c", rand(1, 3, 1, 1))
    g.add_node("Conv", ["x", "w", "b"], ["conv"])
    g.add_node("Add", ["c", "conv"], ["a"])
    g.add_node("Relu", ["a"], ["y"])
    g.outputs = ["y"]
    f = check_same(g, fuse_conv(g), [rand(1, 2, 5, 5)])
    assert ops(f) == ["FusedConv"] and f.nodes[0].attrs["activation"] == "Relu"
    assert "c" not in f.initializers and "b" not in f.initializers
    assert bool((f.run(rand(1, 2, 5, 5)) >= 0).all())


def test_conv_fusion_variants():
    # Conv + Relu only; Conv + Add only (bias merged, no activation); an Add that is not per channel
    x = rand(1, 2, 4, 4)
    for add_shape, relu, expected in [(None, True, ["FusedConv"]), ((3, 1, 1), False, ["Conv"]),
                                      ((4,), True, ["Conv", "Add", "Relu"]),
                                      ((1, 3, 4, 4), True, ["Conv", "Add", "Relu"])]:
        g = Graph()
        g.add_input("x", (1, 2, 4, 4), tt.float32)
        g.add_initializer("w", rand(3, 2, 1, 1))
        last = g.add_node("Conv", ["x", "w"], ["conv"])
        if add_shape is not None:
            g.add_initializer("c", rand(*add_shape))
            last = g.add_node("Add", [last, "c"], ["a"])
        if relu:
            last = g.add_node("Relu", [last], ["y"])
        g.outputs = [last]
        assert ops(check_same(g, fuse_conv(g), [x])) == expected, (add_shape, relu)


def test_conv_clip_fused_as_relu6_and_non_constant_bounds_left_alone():
    x = rand(1, 2, 4, 4) * 5.0
    for bounds_constant in (True, False):
        g = Graph()
        g.add_input("x", (1, 2, 4, 4), tt.float32)
        g.add_input("hi", (), tt.float32)
        g.add_initializer("w", rand(3, 2, 1, 1))
        g.add_initializer("lo", tt.tensor(0.0))
        if bounds_constant:
            g.add_initializer("six", tt.tensor(6.0))
        g.add_node("Conv", ["x", "w"], ["conv"])
        g.add_node("Clip", ["conv", "lo", "six" if bounds_constant else "hi"], ["y"])
        g.outputs = ["y"]
        f = check_same(g, fuse_conv(g), [x, tt.tensor(6.0)])
        if bounds_constant:
            assert ops(f) == ["FusedConv"]
            assert f.nodes[0].attrs == {"activation": "Clip", "activation_min": 0.0, "activation_max": 6.0}
        else:
            assert ops(f) == ["Conv", "Clip"]
    g = Graph()   # opset < 11: bounds as attributes, min only
    g.add_input("x", (1, 2, 4, 4), tt.float32)
    g.add_initializer("w", rand(3, 2, 1, 1))
    g.add_node("Conv", ["x", "w"], ["conv"])
    g.add_node("Clip", ["conv"], ["y"], {"min": -0.5})
    g.outputs = ["y"]
    f = check_same(g, fuse_conv(g), [x])
    assert f.nodes[0].attrs == {"activation": "Clip", "activation_min": -0.5}


def test_fused_conv_kernel_directly():
    x, w, b = rand(1, 2, 5, 5), rand(3, 2, 3, 3), rand(3)
    y = KERNELS["FusedConv"]([x, w, b], {"activation": "Relu", "pads": (1, 1, 1, 1)})
    ref = tt.relu(KERNELS["Conv"]([x, w, b], {"pads": (1, 1, 1, 1)}))
    np.testing.assert_array_equal(y.numpy(), ref.numpy())
    with pytest.raises(NotImplementedError, match="FusedConv: unknown activation"):
        KERNELS["FusedConv"]([x, w, b], {"activation": "Swish"})


# -- elementwise fusion -------------------------------------------------------------------------
def test_elementwise_tree_fused_with_shared_and_broadcast_leaves():
    g = Graph()
    g.add_input("a", (3, 4), tt.float32)
    g.add_input("b", (4,), tt.float32)
    g.add_node("Mul", ["a", "b"], ["ab"])
    g.add_node("Sigmoid", ["a"], ["sa"])
    g.add_node("Sub", ["ab", "sa"], ["d"])
    g.add_node("Exp", ["b"], ["eb"])
    g.add_node("Div", ["d", "eb"], ["q"])
    g.add_node("Tanh", ["q"], ["y"])
    g.outputs = ["y"]
    f = check_same(g, fuse_elementwise(g), [rand(3, 4), rand(4)])
    assert ops(f) == ["FusedElementwise"]
    assert f.nodes[0].attrs["expr"] == "tanh(div(sub(mul(@0,@1),sigmoid(@0)),exp(@1)))"


def test_elementwise_fusion_stops_at_shared_intermediates_outputs_and_other_ops():
    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_input("i", (2, 3), tt.int32)
    g.add_node("Exp", ["x"], ["e"])
    g.add_node("Neg", ["e"], ["n"])            # n has two readers: a tree boundary
    g.add_node("Abs", ["n"], ["p"])
    g.add_node("Sqrt", ["p"], ["s"])
    g.add_node("Softmax", ["n"], ["sm"])        # not elementwise
    g.add_node("Add", ["s", "sm"], ["z"])
    g.add_node("Relu", ["z"], ["out1"])         # graph output read by another node: a boundary
    g.add_node("Log", ["out1"], ["l"])
    g.add_node("Mul", ["l", "l"], ["out2"])
    g.add_node("Neg", ["i"], ["ni"])            # int32: not fused
    g.add_node("Abs", ["ni"], ["out3"])
    g.outputs = ["out1", "out2", "out3"]
    f = check_same(g, fuse_elementwise(g), [rand(2, 3), tt.tensor([[1, -2, 3], [4, 5, -6]], dtype=tt.int32)])
    exprs = sorted(n.attrs["expr"] for n in f.nodes if n.op_type == "FusedElementwise")
    assert exprs == ["neg(exp(@0))", "relu(add(sqrt(abs(@0)),@1))"]
    assert ops(f).count("Log") == 1 and ops(f).count("Mul") == 1 and ops(f).count("Neg") == 1


def test_elementwise_fusion_float64_max_pow_and_kernel_cache():
    g = Graph()
    for n in "abc":
        g.add_input(n, (5,), tt.float64)
    g.add_node("Max", ["a", "b"], ["m"])
    g.add_node("Pow", ["m", "c"], ["p"])
    g.add_node("Min", ["p", "a"], ["y"])
    g.outputs = ["y"]
    inputs = [rand(5, dtype=tt.float64).abs(), rand(5, dtype=tt.float64), tt.tensor([2.0, 0.5, 1.0, 3.0, -1.0],
                                                                                     dtype=tt.float64)]
    f = check_same(g, fuse_elementwise(g), inputs, rtol=1e-12, atol=1e-12)
    assert ops(f) == ["FusedElementwise"]
    assert fused_kernel(f.nodes[0].attrs["expr"]) is fused_kernel(f.nodes[0].attrs["expr"])


def test_elementwise_fusion_writes_one_element_constants_as_literals():
    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_initializer("half", tt.tensor(0.5))
    g.add_initializer("third", tt.tensor([[1.0 / 3.0]]))       # (1, 1): rank <= 2, a literal
    g.add_initializer("row", tt.tensor([1.0, 2.0, 3.0]))        # not one element: an input
    g.add_initializer("big", tt.tensor([[[2.0]]]))              # (1, 1, 1) would make the result 3-d
    g.add_node("Mul", ["x", "half"], ["a"])
    g.add_node("Sub", ["third", "a"], ["b"])
    g.add_node("Add", ["b", "row"], ["y"])
    g.add_node("Mul", ["x", "big"], ["c"])
    g.add_node("Neg", ["c"], ["z"])
    g.outputs = ["y", "z"]
    f = check_same(g, fuse_elementwise(g), [rand(2, 3)])
    assert [n.attrs["expr"] for n in f.nodes] == [f"add(sub({float(tt.tensor(1.0 / 3.0))!r},mul(@0,0.5)),@1)",
                                                  "neg(mul(@0,@1))"]
    assert f.nodes[0].inputs == ["x", "row"] and f.nodes[1].inputs == ["x", "big"]


def test_long_chains_are_cut_into_several_fused_nodes():
    from t_tensor.graph.passes.elementwise_fusion import MAX_TREE_DEPTH

    g = Graph()
    g.add_input("x", (4,), tt.float64)
    g.add_input("y", (4,), tt.float64)
    last = "x"
    n = 3 * MAX_TREE_DEPTH + 5
    for k in range(n):   # alternate a binary op with the other input and a unary op
        last = g.add_node(["Add", "Tanh", "Mul", "Abs"][k % 4], [last, "y"] if k % 2 == 0 else [last], [f"v{k}"])
    g.outputs = [last]
    f = check_same(g, fuse_elementwise(g), [rand(4, dtype=tt.float64), rand(4, dtype=tt.float64)],
                   rtol=1e-12, atol=1e-12)
    assert ops(f) == ["FusedElementwise"] * 4
    assert [n.attrs["expr"].count("(") for n in f.nodes] == [5, MAX_TREE_DEPTH, MAX_TREE_DEPTH, MAX_TREE_DEPTH]


def test_elementwise_fusion_leaves_mixed_dtypes_and_single_nodes():
    g = Graph()
    g.add_input("x", (3,), tt.float32)
    g.add_input("h", (3,), tt.float16)
    g.add_node("Relu", ["x"], ["y"])           # a tree of one node: unchanged
    g.add_node("Exp", ["h"], ["eh"])            # float16: not fused
    g.add_node("Neg", ["eh"], ["z"])
    g.outputs = ["y", "z"]
    f = check_same(g, fuse_elementwise(g), [rand(3), rand(3, dtype=tt.float16)], rtol=1e-3, atol=1e-3)
    assert ops(f) == ops(g)


# -- optimize() and whole models ----------------------------------------------------------------
def test_optimize_runs_every_pass_and_graph_method():
    g = conv_bn_graph()
    g.add_initializer("k", tt.ones(4, 1, 1))
    g.add_node("Add", ["k", "k"], ["k2"])
    g.add_node("Mul", ["y", "k2"], ["m1"])
    g.add_node("Mul", ["y", "k2"], ["m2"])
    g.add_node("Sub", ["m1", "m2"], ["d"])
    g.add_node("Tanh", ["d"], ["z"])
    g.add_node("Exp", ["x"], ["dead"])
    g.outputs = ["z"]
    o = check_same(g, g.optimize(), [rand(2, 3, 6, 6)], atol=1e-5)
    assert ops(o) == ["FusedConv", "Mul", "FusedElementwise"]
    assert ops(optimize(g, DEFAULT_PASSES)) == ops(o)
    assert ops(g.optimize([eliminate_dead_code])) == ops(g)[:-1]


import onnx  # noqa: E402 - dev dependencies: missing ones must fail, not skip
import torch  # noqa: E402


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8)
        self.c2, self.b2 = torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(y + self.b2(self.c2(y)))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.sigmoid(self.fc(y)) * 2.0 - 1.0


def mobilenet():
    return torch.nn.Sequential(
        torch.nn.Conv2d(4, 8, 1), torch.nn.BatchNorm2d(8), torch.nn.ReLU6(),
        torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8), torch.nn.BatchNorm2d(8), torch.nn.ReLU6(),
        torch.nn.Conv2d(8, 6, 1), torch.nn.BatchNorm2d(6), torch.nn.Flatten(), torch.nn.Linear(6 * 16, 4))


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.GELU(),
                               torch.nn.Linear(16, 3), torch.nn.Tanh())


class Attention(torch.nn.Module):
    """Single-head self-attention with a GELU MLP: transposes, Shape arithmetic, elementwise tails."""

    def __init__(self, d=8):
        super().__init__()
        self.q, self.k, self.v = torch.nn.Linear(d, d), torch.nn.Linear(d, d), torch.nn.Linear(d, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        att = torch.softmax(self.q(x) @ self.k(x).transpose(-2, -1) / d ** 0.5, dim=-1) @ self.v(x)
        y = x + att.reshape(b * t, d).reshape(b, t, d)
        return y + self.mlp(y)


def export(net, shape):

    import t_tensor.onnx as tt_onnx

    data, x, expected = export_to_onnx(net, shape)
    return tt_onnx.load(onnx.load_from_string(data)), tt.tensor(x), expected


@pytest.mark.parametrize("which", ["cnn", "mobilenet", "mlp", "attention"])
def test_exported_models_each_pass_and_optimize(which):
    torch.manual_seed(0)
    net, shape = {"cnn": (SmallCNN, (2, 3, 8, 8)), "mlp": (mlp, (5, 6)), "attention": (Attention, (2, 3, 8)),
                  "mobilenet": (mobilenet, (2, 4, 8, 8))}[which]
    g, x, expected = export(net(), shape)
    np.testing.assert_allclose(g.run(x).numpy(), expected, rtol=1e-4, atol=1e-5)
    for p in ALL_PASSES:
        check_same(g, p(g), [x], rtol=1e-4, atol=1e-5)
    o = check_same(g, g.optimize(), [x], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(o.run(x).numpy(), expected, rtol=1e-4, atol=1e-5)
    assert len(o.nodes) < len(g.nodes)
    if which == "mobilenet":
        assert ops(o).count("FusedConv") == 2 and not {"Clip", "BatchNormalization"} & set(ops(o))
    elif which == "cnn":
        assert "BatchNormalization" not in ops(o) and ops(o).count("FusedConv") == 1
        assert ops(o).count("FusedElementwise") >= 1
    elif which == "attention":
        assert not {"Shape", "Gather", "Concat", "Constant", "Unsqueeze"} & set(ops(o))   # shape arithmetic folded
        assert ops(o).count("FusedElementwise") >= 1 and ops(o).count("MatMul") >= 5
    else:
        # Linear + ReLU: one node; GELU: one node
        assert ops(o) == ["FusedGemm", "Gemm", "FusedElementwise", "Gemm", "Tanh"]
        assert o.nodes[2].attrs["expr"] == "mul(mul(@0,add(erf(div(@0,1.4142135381698608)),1.0)),0.5)"


def test_onnx_helper_model_with_transposes_and_constants():
    from onnx import TensorProto, helper, numpy_helper

    import t_tensor.onnx as tt_onnx

    w = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),            # constant: folded
        helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
        helper.make_node("Transpose", ["xt"], ["xtt"], perm=[1, 0]),          # cancels
        helper.make_node("MatMul", ["xtt", "wt"], ["h"]),
        helper.make_node("MatMul", ["xtt", "wt"], ["h2"]),                    # CSE
        helper.make_node("Add", ["h", "h2"], ["s"]),
        helper.make_node("Sigmoid", ["s"], ["y"]),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
                          [numpy_helper.from_array(w, "w")]),
        opset_imports=[helper.make_opsetid("", 17)])
    g = tt_onnx.load(model)
    x = rand(2, 3)
    o = check_same(g, g.optimize(), [x])
    assert ops(o) == ["MatMul", "FusedElementwise"]


def test_traced_graphs_are_left_alone_except_dead_code():
    compiled = tt.compile(lambda x: tt.relu(x * 2.0 + 1.0).sum(), [rand(3, 4)])
    g = compiled.graph
    o = check_same(g, g.optimize(), [rand(3, 4)])
    assert ops(o) == ops(g) and all(op.startswith("tt.") for op in ops(o))


def test_passes_tolerate_ops_without_shape_rules():
    KERNELS["TestOnlyDouble"] = lambda xs, attrs: xs[0] * 2.0
    try:
        g = Graph()
        g.add_input("x", (3,), tt.float32)
        g.add_node("Exp", ["x"], ["e"])
        g.add_node("Neg", ["e"], ["n"])
        g.add_node("TestOnlyDouble", ["n"], ["d"])     # no shape rule: shapes after it are unknown
        g.add_node("Exp", ["d"], ["y"])
        g.add_node("Neg", ["y"], ["z"])
        g.outputs = ["z"]
        x = rand(3)
        o = g.optimize()
        assert ops(o) == ["FusedElementwise", "TestOnlyDouble", "Exp", "Neg"]
        np.testing.assert_allclose(o.run(x).numpy(), g.run(x).numpy(), rtol=1e-6)
    finally:
        del KERNELS["TestOnlyDouble"]


@pytest.mark.parametrize("seed", range(25))
def test_random_elementwise_graphs_keep_their_results(seed):
    """Random DAGs of elementwise ops over broadcasting inputs, with duplicated nodes, constants,
    transpose pairs and dead branches: every pass and optimize() give the same outputs."""
    rng = np.random.default_rng(seed)
    dtype = [tt.float32, tt.float64][seed % 2]
    g = Graph()
    shapes = [(3, 4), (4,), (1, 4), (3, 1)]
    values = [g.add_input(f"x{k}", s, dtype) for k, s in enumerate(shapes)]
    values.append(g.add_initializer("c0", tt.tensor(0.75, dtype=dtype)))
    values.append(g.add_initializer("c1", tt.tensor([1.5, -0.5, 2.0, 0.25], dtype=dtype)))
    unary, binary = ["Neg", "Abs", "Relu", "Exp", "Tanh", "Sigmoid", "Sqrt", "Log", "Erf"], ["Add", "Sub", "Mul",
                                                                                               "Div", "Max", "Min"]
    for k in range(int(rng.integers(4, 14))):
        r = rng.random()
        if r < 0.4:
            op, ins = str(rng.choice(unary)), [values[int(rng.integers(len(values)))]]
        elif r < 0.85:
            op, ins = str(rng.choice(binary)), [values[int(rng.integers(len(values)))] for _ in range(2)]
        elif r < 0.93 and len(g.nodes):
            prev = g.nodes[int(rng.integers(len(g.nodes)))]      # a duplicate for CSE
            op, ins = prev.op_type, list(prev.inputs)
            if op == "Transpose":
                continue
        else:
            src = values[int(rng.integers(len(values)))]
            t = g.add_node("Transpose", [src], [f"t{k}"])
            op, ins = "Transpose", [t]
        values.append(g.add_node(op, ins, [f"v{k}"]))
    g.outputs = sorted({values[-1], values[int(rng.integers(6, len(values)))]}) if len(values) > 6 else [values[-1]]
    inputs = [rand(*s, dtype=dtype) * 2.0 for s in shapes]
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == tt.float32 else {"rtol": 1e-12, "atol": 1e-12}
    for p in ALL_PASSES:
        check_same(g, p(g), inputs, **tol)
    o = check_same(g, g.optimize(), inputs, **tol)
    assert len(o.nodes) <= len(g.nodes)


def test_traced_graph_under_onnx_names_is_optimized():
    from t_tensor.graph.onnx_names import to_onnx_ops

    w1, b1, w2 = rand(16, 6), rand(16), rand(3, 16)

    def f(x):
        return tt.tanh((tt.relu(x @ w1.T + b1) * 0.5 + 1.0) @ w2.T)

    x = rand(5, 6)
    g = to_onnx_ops(tt.compile(f, (x,)).graph)
    o = check_same(g, g.optimize(), [x])
    assert ops(o) == ["FusedGemm", "FusedElementwise", "MatMul", "Tanh"]  # x @ w1.T + b1, relu: one Gemm
    assert o.nodes[0].attrs["activation"] == "Relu"
    assert o.nodes[1].attrs["expr"] == "add(mul(@0,0.5),1.0)"
    np.testing.assert_allclose(o.run(x).numpy(), f(x).numpy(), rtol=1e-5, atol=1e-6)


# -- fuse_gemm_activation --------------------------------------------------------------------------
def _linear_graph(a_shape, w_shape, bias_shape, act=None, bias_first=False, extra_reader=False):
    g = Graph()
    g.add_input("x", a_shape, tt.float32)
    g.add_initializer("w", rand(*w_shape))
    g.add_initializer("b", rand(*bias_shape))
    g.add_node("MatMul", ["x", "w"], ["mm"])
    g.add_node("Add", ["b", "mm"] if bias_first else ["mm", "b"], ["a"])
    last = "a"
    if act == "Relu":
        last = g.add_node("Relu", ["a"], ["r"])
    elif act == "Clip":
        g.add_initializer("lo", tt.tensor(0.0))
        g.add_initializer("hi", tt.tensor(0.5))
        last = g.add_node("Clip", ["a", "lo", "hi"], ["r"])
    g.outputs = [last] + (["mm"] if extra_reader else [])
    return g.infer_shapes()


@pytest.mark.parametrize("bias_shape", [(4,), (1, 4), (3, 4), ()])
@pytest.mark.parametrize("act", [None, "Relu", "Clip"])
@pytest.mark.parametrize("bias_first", [False, True])
def test_gemm_activation_2d(bias_shape, act, bias_first):
    g = _linear_graph((3, 5), (5, 4), bias_shape, act, bias_first)
    o = check_same(g, fuse_gemm_activation(g), [rand(3, 5)])
    assert ops(o) == (["Gemm"] if act is None else ["FusedGemm"])
    if act:
        assert o.nodes[0].attrs["activation"] == act
    assert o.nodes[0].inputs[2] == "b"


def test_gemm_activation_keeps_what_it_cannot_fuse():
    # an N-d product stays MatMul (ONNX Gemm is 2-d); its Relu still fuses when it follows directly
    g = _linear_graph((2, 3, 5), (5, 4), (4,), "Relu")
    assert ops(check_same(g, fuse_gemm_activation(g), [rand(2, 3, 5)])) == ["MatMul", "Add", "Relu"]
    g = Graph()
    g.add_input("x", (2, 3, 5), tt.float32)
    g.add_initializer("w", rand(5, 4))
    g.add_node("MatMul", ["x", "w"], ["mm"])
    g.add_node("Relu", ["mm"], ["y"])
    g.outputs = ["y"]
    o = check_same(g, fuse_gemm_activation(g.infer_shapes()), [rand(2, 3, 5)])
    assert ops(o) == ["FusedMatMul"] and o.nodes[0].attrs == {"activation": "Relu"}
    # the product read twice (here: also a graph output): nothing fuses
    g = _linear_graph((3, 5), (5, 4), (4,), "Relu", extra_reader=True)
    assert ops(check_same(g, fuse_gemm_activation(g), [rand(3, 5)])) == ["MatMul", "Add", "Relu"]
    # a bias that broadcasts the product to more rows
    g = _linear_graph((1, 5), (5, 4), (3, 4), None)
    assert ops(check_same(g, fuse_gemm_activation(g), [rand(1, 5)])) == ["MatMul", "Add"]
    # a Gemm that already has a bias keeps the Add
    g = Graph()
    g.add_input("x", (3, 5), tt.float32)
    g.add_initializer("w", rand(4, 5))
    g.add_initializer("b", rand(4))
    g.add_node("Gemm", ["x", "w", "b"], ["gm"], {"transB": 1})
    g.add_node("Add", ["gm", "b"], ["a"])
    g.add_node("Relu", ["a"], ["y"])
    g.outputs = ["y"]
    assert ops(check_same(g, fuse_gemm_activation(g.infer_shapes()), [rand(3, 5)])) == ["Gemm", "Add", "Relu"]


def test_gemm_without_bias_takes_the_add_and_the_arena_runs_fused_nodes():
    from t_tensor.graph import ArenaExecutor

    g = Graph()
    g.add_input("x", (5, 3), tt.float32)
    g.add_initializer("w", rand(4, 5))
    g.add_initializer("b", rand(4))
    g.add_initializer("w2", rand(4, 4))
    g.add_node("Gemm", ["x", "w"], ["gm"], {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 3.0})
    g.add_node("Add", ["gm", "b"], ["a"])
    g.add_node("Relu", ["a"], ["r"])
    g.add_node("MatMul", ["r", "w2"], ["m2"])
    g.add_node("Relu", ["m2"], ["y"])
    g.outputs = ["y"]
    x = rand(5, 3)
    o = check_same(g, fuse_gemm_activation(g.infer_shapes()), [x])
    assert ops(o) == ["FusedGemm", "FusedMatMul"]
    assert o.nodes[0].attrs["beta"] == 1.0 and o.nodes[0].attrs["alpha"] == 0.5
    ex = ArenaExecutor(o)
    np.testing.assert_allclose(ex(x).numpy(), g.run(x).numpy(), rtol=1e-5, atol=1e-6)
    assert ex.stats["copied"] == 0


# -- fold_reshapes -----------------------------------------------------------------------------------
def test_reshape_chain_becomes_one_reshape():
    g = Graph()
    g.add_input("x", (2, 3, 4), tt.float32)
    g.add_initializer("s1", tt.tensor([6, -1]))
    g.add_node("Reshape", ["x", "s1"], ["r1"])                 # (6, 4)
    g.add_node("Unsqueeze", ["r1"], ["u"], {"axes": (1,)})     # (6, 1, 4)
    g.add_node("Flatten", ["u"], ["f"], {"axis": 2})           # (6, 4)
    g.add_node("Squeeze", ["f"], ["s"], {})                    # (6, 4): nothing to squeeze
    g.add_node("Exp", ["s"], ["y"])
    g.outputs = ["y"]
    o = check_same(g, fold_reshapes(g.infer_shapes()), [rand(2, 3, 4)])
    assert ops(o) == ["Reshape", "Exp"]
    reshape = o.nodes[0]
    assert reshape.inputs[0] == "x" and o.initializers[reshape.inputs[1]].tolist() == [6, 4]
    assert "s1" not in o.initializers  # read by nothing any more


def test_reshape_to_the_same_shape_is_removed_and_outputs_keep_their_names():
    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_initializer("s", tt.tensor([2, 3]))
    g.add_initializer("t", tt.tensor([3, 2]))
    g.add_node("Reshape", ["x", "s"], ["same"])
    g.add_node("Relu", ["same"], ["r"])
    g.add_node("Reshape", ["r", "t"], ["a"])
    g.add_node("Reshape", ["a", "s"], ["back"])                # (2, 3) again: r itself
    g.outputs = ["back"]
    o = check_same(g, fold_reshapes(g.infer_shapes()), [rand(2, 3)])
    assert ops(o) == ["Relu", "Identity"] and o.outputs == ["back"]
    assert o.nodes[0].inputs == ["x"]


def test_reshape_fold_gives_a_computed_shape_a_constant_and_drops_the_arithmetic():
    g = Graph()
    g.add_input("x", (2, 3, 4), tt.float32)
    g.add_initializer("idx", tt.tensor([0]))
    g.add_initializer("rest", tt.tensor([-1]))
    g.add_node("Shape", ["x"], ["shp"])
    g.add_node("Gather", ["shp", "idx"], ["n"])
    g.add_node("Concat", ["n", "rest"], ["target"], {"axis": 0})
    g.add_node("Reshape", ["x", "target"], ["flat"])           # (2, 12)
    g.add_node("Relu", ["flat"], ["y"])
    g.outputs = ["y"]
    o = check_same(g, fold_reshapes(g.infer_shapes()), [rand(2, 3, 4)])
    assert ops(o) == ["Reshape", "Relu"]


def test_reshape_fold_leaves_unknown_shapes_and_empty_dims_work():
    g = Graph()
    g.add_input("x", None, tt.float32)
    g.add_node("Flatten", ["x"], ["f"])
    g.add_node("Flatten", ["f"], ["y"])
    g.outputs = ["y"]
    assert ops(fold_reshapes(g)) == ["Flatten", "Flatten"]
    g = Graph()
    g.add_input("x", (0, 3), tt.float32)
    g.add_node("Unsqueeze", ["x"], ["u"], {"axes": (0,)})
    g.add_node("Flatten", ["u"], ["y"], {"axis": 2})            # (0, 3)
    g.add_node("Unsqueeze", ["y"], ["z"], {"axes": (2,)})       # (0, 3, 1)
    g.outputs = ["z"]
    o = check_same(g, fold_reshapes(g.infer_shapes()), [tt.ones(0, 3)])
    assert ops(o) == ["Reshape"] and o.nodes[0].attrs == {"allowzero": 1}


def test_new_passes_in_optimize_on_an_exported_mlp_run_on_the_arena():
    from t_tensor.graph import ArenaExecutor

    torch.manual_seed(0)
    g, x, expected = export(mlp(), (5, 6))
    o = g.optimize()
    assert ops(o).count("FusedGemm") == 1
    ex = ArenaExecutor(o)
    np.testing.assert_allclose(ex(x).numpy(), expected, rtol=1e-4, atol=1e-5)
    assert ex.stats["copied"] == 0
