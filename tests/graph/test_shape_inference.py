"""Shape inference: every rule is checked against the shape the kernel actually produces (and,
for the arithmetic-heavy ops, against torch), and mismatches name the node, the op and the shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
from t_tensor.graph import Graph, infer_shapes
from t_tensor.graph.shape_inference import broadcast

RNG = np.random.default_rng(0)


def one_node(op, in_shapes, attrs=None, consts=None, n_out=1, dtypes=None):
    """A graph with one node; inputs are graph inputs, or initializers when given in consts."""
    g = Graph()
    names = []
    consts = consts or {}
    for k, shape in enumerate(in_shapes):
        name = f"i{k}"
        if k in consts:
            g.add_initializer(name, consts[k])
        elif shape is None:
            name = ""
        else:
            g.add_input(name, shape, (dtypes or {}).get(k, tt.float32))
        names.append(name)
    outs = g.add_node(op, names, [f"o{k}" for k in range(n_out)], attrs or {}, name="n0")
    g.outputs = [outs] if isinstance(outs, str) else outs
    return g


def check(g, **expect_dtypes):
    """Infer, run on random data and compare each inferred shape/dtype with the real output."""
    infer_shapes(g)
    feeds = []
    for name in g.inputs:
        v = g.values[name]
        if v.dtype == tt.int64:
            feeds.append(tt.from_numpy(RNG.integers(0, 2, v.shape).astype(np.int64)))
        else:
            feeds.append(tt.from_numpy(RNG.uniform(0.5, 1.5, v.shape).astype(v.dtype.numpy)))
    outs = g.run(*feeds)
    outs = outs if isinstance(outs, tuple) else (outs,)
    for name, out in zip(g.outputs, outs, strict=True):
        assert g.values[name].shape == tuple(out.shape), (name, g.values[name].shape, out.shape)
        assert g.values[name].dtype == out.dtype
    return [g.values[o].shape for o in g.outputs]


shape_st = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(a=shape_st, b=shape_st, op=st.sampled_from(["Add", "Sub", "Mul", "Div", "Pow", "Max", "Equal", "Less"]))
def test_broadcasting_matches_numpy(a, b, op):
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(ValueError, match=rf"node 'n0' \({op}\): cannot broadcast shapes"):
            infer_shapes(one_node(op, [a, b]))
        return
    assert broadcast(a, b) == expected
    assert check(one_node(op, [a, b])) == [expected]


@pytest.mark.parametrize("a,b", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 1, 2, 3), (4, 3, 2)),
                                 ((2, 3, 4), (4, 5)), ((0, 3), (3, 2))])
def test_matmul(a, b):
    expected = torch.matmul(torch.ones(a), torch.ones(b)).shape
    assert check(one_node("MatMul", [a, b])) == [tuple(expected)]


@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm(ta, tb):
    a = (4, 3) if ta else (3, 4)
    b = (5, 4) if tb else (4, 5)
    assert check(one_node("Gemm", [a, b, (5,)], {"transA": ta, "transB": tb})) == [(3, 5)]
    with pytest.raises(ValueError, match=r"node 'n0' \(Gemm\): cannot multiply shapes"):
        infer_shapes(one_node("Gemm", [a, b], {"transA": 1 - ta, "transB": tb}))


@pytest.mark.parametrize("x,attrs,expected", [
    ((2, 3, 9, 9), {}, (2, 4, 7, 7)),
    ((2, 3, 9, 9), {"pads": (1, 1, 1, 1), "strides": (2, 2)}, (2, 4, 5, 5)),
    ((2, 3, 9, 10), {"pads": (0, 1, 2, 0), "dilations": (2, 1)}, (2, 4, 7, 9)),
    ((1, 3, 9, 10), {"auto_pad": "SAME_UPPER", "strides": (2, 3)}, (1, 4, 5, 4)),
    ((1, 3, 9, 10), {"auto_pad": "SAME_LOWER", "strides": (2, 2)}, (1, 4, 5, 5)),
    ((1, 3, 9, 10), {"auto_pad": "VALID", "strides": (2, 2)}, (1, 4, 4, 4)),
])
def test_conv(x, attrs, expected):
    assert check(one_node("Conv", [x, (4, 3, 3, 3), (4,)], attrs)) == [expected]


def test_conv_matches_torch_with_groups_and_1d():
    x = RNG.standard_normal((2, 6, 8, 7)).astype(np.float32)
    w = RNG.standard_normal((6, 1, 3, 3)).astype(np.float32)
    g = one_node("Conv", [x.shape, w.shape], {"group": 6, "pads": (1, 0, 1, 2), "strides": (2, 1)},
                 consts={1: tt.from_numpy(w)})
    infer_shapes(g)
    ref = torch.nn.functional.conv2d(torch.nn.functional.pad(torch.from_numpy(x), (0, 2, 1, 1)),
                                     torch.from_numpy(w), stride=(2, 1), groups=6)
    assert g.values["o0"].shape == tuple(ref.shape)
    np.testing.assert_allclose(g.run(x).numpy(), ref.numpy(), atol=1e-5)
    with pytest.raises(ValueError, match=r"node 'n0' \(Conv\): weight \(3, 2, 3\) has 3 output channels, not a mult"):
        infer_shapes(one_node("Conv", [(2, 4, 11), (3, 2, 3)], {"group": 2}))
    with pytest.raises(ValueError, match=r"node 'n0' \(Conv\): input \(2, 5, 11\) and weight \(4, 2, 3\) do not"):
        infer_shapes(one_node("Conv", [(2, 5, 11), (4, 2, 3)], {"group": 2}))
    assert check(one_node("Conv", [(2, 4, 11), (4, 2, 3)], {"group": 2, "strides": (2,)})) == [(2, 4, 5)]


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": (2, 2)},
    {"kernel_shape": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1)},
    {"kernel_shape": (3, 2), "strides": (2, 2), "ceil_mode": 1},
    {"kernel_shape": (3, 3), "strides": (2, 2), "pads": (1, 0, 0, 1), "ceil_mode": 1},
    {"kernel_shape": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1), "count_include_pad": 1},
    {"kernel_shape": (2, 2), "auto_pad": "SAME_UPPER", "strides": (2, 2)},
])
def test_pooling_matches_torch(op, attrs):
    x = RNG.standard_normal((2, 3, 7, 8)).astype(np.float32)
    g = one_node(op, [x.shape], attrs)
    infer_shapes(g)
    got = g.run(x).numpy()
    assert got.shape == g.values["o0"].shape
    pads = attrs.get("pads", (0, 0, 0, 0))
    if "auto_pad" in attrs or pads[0] != pads[2] or pads[1] != pads[3]:
        return  # torch has no asymmetric padding: the shape check above is the test
    k, s = attrs["kernel_shape"], attrs.get("strides", (1, 1))
    xt, ceil = torch.from_numpy(x), bool(attrs.get("ceil_mode", 0))
    if op == "MaxPool":
        ref = torch.nn.functional.max_pool2d(xt, k, s, pads[:2], ceil_mode=ceil)
    else:
        ref = torch.nn.functional.avg_pool2d(xt, k, s, pads[:2], ceil_mode=ceil,
                                             count_include_pad=bool(attrs.get("count_include_pad", 0)))
    np.testing.assert_allclose(got, ref.numpy(), atol=1e-5)


def test_data_movement():
    assert check(one_node("Concat", [(2, 3), (2, 5), (2, 1)], {"axis": -1})) == [(2, 9)]
    with pytest.raises(ValueError, match=r"node 'n0' \(Concat\): cannot concatenate shapes \(2, 3\) and \(3, 5\)"):
        infer_shapes(one_node("Concat", [(2, 3), (3, 5)], {"axis": 1}))
    assert check(one_node("Transpose", [(2, 3, 4)], {"perm": (1, 2, 0)})) == [(3, 4, 2)]
    assert check(one_node("Transpose", [(2, 3, 4)])) == [(4, 3, 2)]
    with pytest.raises(ValueError, match="perm"):
        infer_shapes(one_node("Transpose", [(2, 3)], {"perm": (0, 0)}))
    shape = tt.tensor([0, -1, 2], dtype=tt.int64)
    assert check(one_node("Reshape", [(3, 4, 2), (3,)], consts={1: shape})) == [(3, 4, 2)]
    assert check(one_node("Reshape", [(3, 4, 2), (2,)], consts={1: tt.tensor([-1, 6])})) == [(4, 6)]
    with pytest.raises(ValueError, match=r"node 'n0' \(Reshape\): cannot reshape \(3, 4\) \(12 elements\) to \(5, 2\)"):
        infer_shapes(one_node("Reshape", [(3, 4), (2,)], consts={1: tt.tensor([5, 2])}))
    assert check(one_node("Flatten", [(2, 3, 4, 5)], {"axis": 2})) == [(6, 20)]
    assert check(one_node("Flatten", [(2, 3, 4, 5)], {"axis": -1})) == [(24, 5)]
    assert check(one_node("Flatten", [(2, 3)], {"axis": 0})) == [(1, 6)]
    assert check(one_node("Squeeze", [(1, 3, 1)])) == [(3,)]
    assert check(one_node("Squeeze", [(1, 3, 1)], {"axes": (-1,)})) == [(1, 3)]
    assert check(one_node("Squeeze", [(1, 3, 1), (1,)], consts={1: tt.tensor([0])})) == [(3, 1)]
    with pytest.raises(ValueError, match=r"cannot squeeze axis 1 of shape \(1, 3, 1\)"):
        infer_shapes(one_node("Squeeze", [(1, 3, 1)], {"axes": (1,)}))
    assert check(one_node("Unsqueeze", [(3, 4)], {"axes": (0, -1)})) == [(1, 3, 4, 1)]
    assert check(one_node("Unsqueeze", [(3,), (2,)], consts={1: tt.tensor([1, 0])})) == [(1, 1, 3)]
    assert check(one_node("Cast", [(2, 3)], {"to": 7})) == [(2, 3)]
    g = one_node("Cast", [(2, 3)], {"to": tt.float16})
    infer_shapes(g)
    assert g.values["o0"].dtype == tt.float16
    idx = tt.tensor([[0, 2], [1, -1]])
    assert check(one_node("Gather", [(4, 5), (2, 2)], {"axis": 1}, consts={1: idx})) == [(4, 2, 2)]
    g = one_node("Gather", [(4, 5), ()], {"axis": 0}, consts={1: tt.tensor(-1)})
    infer_shapes(g)
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    assert g.values["o0"].shape == (5,)
    np.testing.assert_array_equal(g.run(x).numpy(), x[-1])
    assert check(one_node("Slice", [(5, 6), (1,), (1,), (1,), (1,)],
                          consts={1: tt.tensor([-1]), 2: tt.tensor([-10**9]), 3: tt.tensor([1]),
                                  4: tt.tensor([-2])})) == [(5, 3)]
    assert check(one_node("Expand", [(3, 1), (3,)], consts={1: tt.tensor([2, 1, 4])})) == [(2, 3, 4)]
    assert check(one_node("Shape", [(2, 3, 4)], {"start": 1})) == [(2,)]
    assert check(one_node("Split", [(2, 7)], {"axis": 1, "num_outputs": 3}, n_out=3)) == [(2, 3), (2, 3), (2, 1)]


def test_activations_norms_reductions():
    for op in ("Relu", "Sigmoid", "Tanh", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Neg", "Identity"):
        assert check(one_node(op, [(2, 3)])) == [(2, 3)]
    assert check(one_node("Softmax", [(2, 3)], {"axis": 0})) == [(2, 3)]
    assert check(one_node("LogSoftmax", [(2, 3)])) == [(2, 3)]
    with pytest.raises(ValueError, match=r"node 'n0' \(Softmax\): axis 2 is out of range for rank 2"):
        infer_shapes(one_node("Softmax", [(2, 3)], {"axis": 2}))
    assert check(one_node("Dropout", [(2, 3)], n_out=2)) == [(2, 3), (2, 3)]
    assert check(one_node("BatchNormalization", [(2, 3, 4, 4), (3,), (3,), (3,), (3,)])) == [(2, 3, 4, 4)]
    with pytest.raises(ValueError, match=r"\(BatchNormalization\): scale of shape \(4,\) does not match"):
        infer_shapes(one_node("BatchNormalization", [(2, 3, 4), (4,), (3,), (3,), (3,)]))
    assert check(one_node("GlobalAveragePool", [(2, 3, 4, 5)])) == [(2, 3, 1, 1)]
    assert check(one_node("ReduceMean", [(2, 3, 4)], {"axes": (1,)})) == [(2, 1, 4)]
    assert check(one_node("ReduceMean", [(2, 3, 4)], {"axes": (0, -1), "keepdims": 0})) == [(3,)]
    assert check(one_node("ReduceSum", [(2, 3, 4), (1,)], {"keepdims": 0}, consts={1: tt.tensor([1])})) == [(2, 4)]
    assert check(one_node("ReduceSum", [(2, 3, 4)])) == [(1, 1, 1)]
    assert check(one_node("Pow", [(2, 3), ()])) == [(2, 3)]
    assert check(one_node("Where", [(2, 1), (3,), (2, 3)], dtypes={0: tt.int64},
                          consts={0: tt.tensor([[True], [False]])})) == [(2, 3)]


def test_shape_of_a_computed_shape_is_static():
    g = Graph()
    g.add_input("x", (2, 3, 4), tt.float32)
    s = g.add_node("Shape", ["x"])
    n = g.add_node("Gather", [s, g.add_initializer("k", tt.tensor([0]))])
    tgt = g.add_node("Concat", [n, g.add_initializer("m", tt.tensor([-1]))], attrs={"axis": 0})
    g.add_node("Reshape", ["x", tgt], ["y"])
    g.outputs = ["y"]
    assert infer_shapes(g)["y"].shape == (2, 12)


def test_errors():
    g = Graph()
    g.add_input("x", None, tt.float32)
    g.add_node("Relu", ["x"], ["y"])
    with pytest.raises(ValueError, match="infer_shapes: graph input 'x' needs a declared shape"):
        infer_shapes(g)
    with pytest.raises(NotImplementedError, match="no shape rule for op 'Frobnicate'"):
        infer_shapes(one_node("Frobnicate", [(2,)]))
    with pytest.raises(ValueError, match=r"node 'n0' \(MatMul\): cannot multiply shapes \(2, 3\) and \(2, 3\)"):
        infer_shapes(one_node("MatMul", [(2, 3), (2, 3)]))
    with pytest.raises(ValueError, match=r"node 'n0' \(Add\): inputs have different dtypes float32 and int64"):
        infer_shapes(one_node("Add", [(2,), (2,)], dtypes={1: tt.int64}))
    g = one_node("Reshape", [(3, 4), (2,)])
    with pytest.raises(ValueError, match="shape .* must be a constant"):
        infer_shapes(g)
    infer_shapes(g, strict=False)
    assert g.values["o0"].shape is None


def test_more_ops_shapes_match_kernels():
    assert check(one_node("Einsum", [(2, 3, 4), (2, 4, 5)], {"equation": "bij,bjk->bik"})) == [(2, 3, 5)]
    assert check(one_node("Einsum", [(3, 4), (4, 5)], {"equation": "ij,jk"})) == [(3, 5)]
    assert check(one_node("Einsum", [(2, 3, 4)], {"equation": "...ij->...ji"})) == [(2, 4, 3)]
    with pytest.raises(ValueError, match=r"\(Einsum\): letter 'j' has sizes 4 and 3"):
        infer_shapes(one_node("Einsum", [(3, 4), (3, 5)], {"equation": "ij,jk->ik"}))
    pads = tt.tensor([1, 0, 1, 2])
    assert check(one_node("Pad", [(2, 3), (4,)], {"mode": "reflect"}, consts={1: pads})) == [(4, 5)]
    assert check(one_node("Pad", [(2, 3), (4,)], consts={1: tt.tensor([0, -1, 0, 0])})) == [(2, 2)]
    assert check(one_node("Tile", [(2, 3), (2,)], consts={1: tt.tensor([3, 1])})) == [(6, 3)]
    assert check(one_node("TopK", [(3, 5), (1,)], {"axis": 1}, consts={1: tt.tensor([2])}, n_out=2)) == [
        (3, 2), (3, 2)]
    assert check(one_node("OneHot", [(2, 3), (), (2,)], {"axis": 1},
                          consts={0: tt.tensor([[0, 1, 2], [2, 1, -1]]), 1: tt.tensor(4),
                                  2: tt.tensor([0.0, 1.0])})) == [(2, 4, 3)]
    assert check(one_node("DepthToSpace", [(1, 8, 2, 3)], {"blocksize": 2})) == [(1, 2, 4, 6)]
    assert check(one_node("SpaceToDepth", [(1, 2, 4, 6)], {"blocksize": 2})) == [(1, 8, 2, 3)]
    assert check(one_node("Range", [(), (), ()], consts={0: tt.tensor(1.0), 1: tt.tensor(2.0),
                                                         2: tt.tensor(0.25)})) == [(4,)]
    assert check(one_node("CastLike", [(2,), (1,)], dtypes={1: tt.int64})) == [(2,)]
    assert check(one_node("ArgMax", [(3, 4)], {"axis": 1, "keepdims": 0, "select_last_index": 1})) == [(3,)]
    g = one_node("ArgMax", [(2, 3)], {"axis": 1, "select_last_index": 1},
                 consts={0: tt.tensor([[1.0, 5.0, 5.0], [7.0, 7.0, 0.0]])})
    assert g.run().tolist() == [[2], [1]]
