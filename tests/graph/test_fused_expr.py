"""Fused elementwise kernels (t_tensor/graph/fused_expr.py, csrc/src/kernels/fused.c).

The pipeline's steps are tested one by one (tokens, tree, postfix program, errors with their
positions), then the kernel: random expression trees (hypothesis) over broadcastable inputs in the
shared layouts are evaluated fused and as the same chain of eager t_tensor ops, which must agree
within the unfused ops' tolerances (they share the same C expressions and vectorized functions);
a few fixed expressions are checked against PyTorch. The C entry points are called directly with
invalid programs, which must be refused with a status, never run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import LAYOUTS, apply_layout, base_shape, broadcast_shapes, tolerance
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
from t_tensor._capi import ffi, lib
from t_tensor.graph import FUSED_OPS, ExprNode, FusedExprError, FusedKernel, Instr, parse, to_postfix, tokenize

DTYPES = {"float32": (tt.float32, torch.float32), "float64": (tt.float64, torch.float64)}

# The eager t_tensor function of every fused op.
EAGER = {name: getattr(tt, name) for name in FUSED_OPS}

# ---------------------------------------------------------------------- tokens


def test_tokenize_kinds_values_positions():
    tokens = tokenize(" mul( @12 ,2.5e-1)")
    assert [(t.kind, t.value, t.pos) for t in tokens] == [
        ("name", "mul", 1), ("(", "(", 4), ("input", 12, 6), (",", ",", 10), ("number", 0.25, 11),
        (")", ")", 17), ("end", None, 18),
    ]


@pytest.mark.parametrize("text, value", [("3", 3.0), ("-1.5", -1.5), (".5", 0.5), ("+2.", 2.0), ("1e3", 1000.0)])
def test_tokenize_numbers(text, value):
    assert tokenize(text)[0] == ("number", value, 0)


@pytest.mark.parametrize("text, pos", [("add(@0;@1)", 6), ("@x", 0), ("exp(#)", 4)])
def test_tokenize_rejects_unknown_characters(text, pos):
    with pytest.raises(FusedExprError, match=f"unexpected character .* at position {pos}") as info:
        tokenize(text)
    assert info.value.pos == pos
    assert isinstance(info.value, ValueError)


# ---------------------------------------------------------------------- tree


def test_parse_builds_the_tree():
    tree = parse(tokenize("add(mul(@0,@1),@2)"))
    assert tree.op == "add" and len(tree.children) == 2
    mul, in2 = tree.children
    assert (mul.op, [c.value for c in mul.children], mul.pos) == ("mul", [0, 1], 4)
    assert in2 == ExprNode("input", value=2, pos=15)
    assert str(tree) == "add(mul(@0,@1),@2)"


def test_parse_aliases_and_round_trip():
    tree = parse(tokenize("max(min(@0, 1), negative(@1))"))
    assert str(tree) == "maximum(minimum(@0,1.0),neg(@1))"
    assert parse(tokenize(str(tree))) == parse(tokenize("maximum(minimum(@0,1.0),neg(@1))"))


@pytest.mark.parametrize(
    "text, message, pos",
    [
        ("foo(@0)", "unknown op 'foo'", 0),
        ("add(@0)", "add takes 2 arguments, got 1", 0),
        ("relu(@0,@1)", "relu takes 1 arguments, got 2", 0),
        ("exp()", "exp takes 1 arguments, got 0", 0),
        ("add(@0,)", "expected an operand .*got '\\)'", 7),
        ("add(@0", "expected ',' or '\\)', got the end of the expression", 6),
        ("add @0", "expected '\\(' after add, got '@0'", 4),
        ("", "expected an operand .*the end of the expression", 0),
        ("@0 @1", "unexpected '@1' after the expression", 3),
        ("relu(@0))", "unexpected '\\)' after the expression", 8),
        ("sqrt(exp(@0), @1)", "sqrt takes 1 arguments, got 2", 0),
        ("add(@0, foo(@1))", "unknown op 'foo'", 8),
    ],
)
def test_parse_errors_name_the_position(text, message, pos):
    with pytest.raises(FusedExprError, match=message) as info:
        FusedKernel(text)
    assert info.value.pos == pos
    assert f"at position {pos}" in str(info.value)
    assert str(info.value).startswith("fused_expr: ")


# ---------------------------------------------------------------------- postfix


@pytest.mark.parametrize(
    "text, program",
    [
        ("add(mul(@0,@1),@2)", ["load @0", "load @1", "mul", "load @2", "add"]),
        ("relu(add(@0,@1))", ["load @0", "load @1", "add", "relu"]),
        ("div(sub(@0,1.5),sqrt(@1))", ["load @0", "const 1.5", "sub", "load @1", "sqrt", "div"]),
        ("@3", ["load @3"]),
    ],
)
def test_to_postfix(text, program):
    assert [repr(i) for i in to_postfix(parse(tokenize(text)))] == program


def test_kernel_fields():
    k = FusedKernel("add(mul(@0,@1),mul(@2,@3))")
    assert k.n_inputs == 4 and k.depth == 3
    assert k.program[0] == Instr("load", 0) and k.program[-1] == Instr("add")
    assert repr(k) == "FusedKernel('add(mul(@0,@1),mul(@2,@3))')"


# ---------------------------------------------------------------------- random trees vs eager


@st.composite
def trees(draw, n_inputs: int, depth: int = 4) -> ExprNode:
    """A random expression over @0..@{n_inputs-1}: never a subtree of constants only (the eager
    chain needs a tensor in every op)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return ExprNode("input", value=draw(st.integers(0, n_inputs - 1)))
    name = draw(st.sampled_from(sorted(FUSED_OPS)))
    if FUSED_OPS[name].arity == 1:
        return ExprNode(name, (draw(trees(n_inputs, depth - 1)),))
    first = draw(trees(n_inputs, depth - 1))
    if draw(st.booleans()):
        return ExprNode(name, (first, draw(trees(n_inputs, depth - 1))))
    const = ExprNode("const", value=draw(st.sampled_from([0.5, -1.5, 2.0, 3.0, 1e-3])))
    return ExprNode(name, (first, const) if draw(st.booleans()) else (const, first))


def eager(node: ExprNode, inputs, dtype):
    """The same expression as a chain of eager t_tensor ops."""
    if node.op == "input":
        return inputs[node.value]
    if node.op == "const":
        return tt.tensor(node.value, dtype=dtype)
    return EAGER[node.op](*(eager(c, inputs, dtype) for c in node.children))


@st.composite
def cases(draw):
    n = draw(st.integers(1, 3))
    shape, shapes = draw(broadcast_shapes(n))
    layouts = [draw(st.sampled_from(LAYOUTS)) for _ in range(n)]
    tree = draw(trees(n))
    return tree, shape, shapes, layouts, draw(st.sampled_from(sorted(DTYPES))), draw(st.integers(0, 2**31))


def make_inputs(shapes, layouts, dtype, seed, low=-3.0, high=3.0):
    rng = np.random.default_rng(seed)
    inputs = []
    for shape, layout in zip(shapes, layouts, strict=True):
        data = rng.uniform(low, high, base_shape(shape, layout)).astype(dtype.name)
        inputs.append(apply_layout(tt.tensor(data), layout, shape))
        assert inputs[-1].shape == shape
    return inputs


@settings(max_examples=200, deadline=None)
@given(cases())
def test_random_trees_match_the_eager_chain(case):
    tree, shape, shapes, layouts, dtype_name, seed = case
    dtype, torch_dtype = DTYPES[dtype_name]
    inputs = make_inputs(shapes, layouts, dtype, seed)
    kernel = FusedKernel(str(tree))
    n = kernel.n_inputs  # inputs up to the largest used: all passed, used or not, all broadcast
    shape = np.broadcast_shapes(*shapes[:n])
    got = kernel(*inputs[:n])
    expected = eager(tree, inputs, dtype)
    expected = expected.expand(shape) if tuple(expected.shape) != tuple(shape) else expected
    assert got.dtype is dtype and tuple(got.shape) == tuple(shape) and got.is_contiguous()
    atol, rtol = tolerance(torch_dtype)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=atol, rtol=rtol, equal_nan=True)
    out = tt.empty(shape, dtype=dtype)
    assert kernel(*inputs[:n], out=out) is out
    np.testing.assert_array_equal(out.numpy(), got.numpy())


# ---------------------------------------------------------------------- fixed expressions vs PyTorch


FIXED = [
    ("add(mul(@0,@1),@2)", lambda a, b, c: a * b + c, (-3, 3)),
    ("relu(add(@0,@1))", lambda a, b: torch.relu(a + b), (-3, 3)),
    ("div(sub(@0,1.5),sqrt(@1))", lambda a, b: (a - 1.5) / torch.sqrt(b), (0.1, 4)),
    ("mul(gelu(@0),sigmoid(@1))", lambda a, b: torch.nn.functional.gelu(a) * torch.sigmoid(b), (-4, 4)),
    ("sub(log(@0),tanh(erf(@1)))", lambda a, b: torch.log(a) - torch.tanh(torch.erf(b)), (0.1, 4)),
    ("pow(abs(@0),1.5)", lambda a: torch.abs(a).pow(1.5), (-3, 3)),
    ("max(neg(@0),min(rsqrt(@1),square(@0)))", lambda a, b: torch.maximum(-a, torch.minimum(torch.rsqrt(b), a * a)),
     (0.1, 3)),
    ("add(silu(@0),reciprocal(exp(@1)))", lambda a, b: torch.nn.functional.silu(a) + 1 / torch.exp(b), (-3, 3)),
]


@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
@pytest.mark.parametrize("text, reference, domain", FIXED)
def test_fixed_expressions_match_torch(text, reference, domain, dtype_name):
    dtype, torch_dtype = DTYPES[dtype_name]
    kernel = FusedKernel(text)
    shapes = [(5, 1, 7), (3, 7), (1,)][: kernel.n_inputs]
    inputs = make_inputs(shapes, ["contiguous"] * len(shapes), dtype, 7, *domain)
    got = kernel(*inputs)
    expected = reference(*(torch.from_numpy(x.numpy()) for x in inputs))
    assert expected.dtype == torch_dtype
    atol, rtol = tolerance(torch_dtype)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=atol, rtol=rtol)


def test_nan_and_inf_propagate_like_eager():
    x = tt.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0])
    for text in ["relu(@0)", "max(@0,0)", "min(0,@0)", "div(1,@0)", "log(@0)", "sqrt(@0)", "exp(@0)"]:
        tree = parse(tokenize(text))
        np.testing.assert_array_equal(FusedKernel(text)(x).numpy(), eager(tree, [x], tt.float32).numpy())


# ---------------------------------------------------------------------- shapes, layouts, threads


@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
def test_large_strided_broadcast_inputs_cross_blocks_and_threads(dtype_name):
    """Shapes whose rows do not divide the block size, over the threading grain, with a transposed,
    a sliced, a broadcast row and a broadcast column input."""
    dtype = DTYPES[dtype_name][0]
    rng = np.random.default_rng(3)
    a = tt.tensor(rng.standard_normal((517, 301)).astype(dtype.name)).T          # (301, 517) transposed
    b = tt.tensor(rng.standard_normal((602, 1034)).astype(dtype.name))[::2, ::2]   # (301, 517) sliced
    c = tt.tensor(rng.standard_normal(517).astype(dtype.name))                     # broadcast row
    d = tt.tensor(rng.standard_normal((301, 1)).astype(dtype.name))                # broadcast column
    got = FusedKernel("add(mul(tanh(@0),@1),sub(@2,exp(@3)))")(a, b, c, d)
    expected = tt.add(tt.mul(tt.tanh(a), b), tt.sub(c, tt.exp(d)))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_many_inputs_and_high_rank():
    rng = np.random.default_rng(5)
    shapes = [(2, 1, 3, 1, 2, 5), (3, 1, 1, 5), (1,), (2, 4, 3, 1, 2, 1), (5,), (1, 1, 1, 2, 1)] * 2
    inputs = [tt.tensor(rng.standard_normal(s)) for s in shapes]
    text = "add(@0,@1)"
    for j in range(2, len(shapes)):
        text = f"{'mul' if j % 2 else 'add'}({text},@{j})"
    got = FusedKernel(text)(*inputs)
    expected = inputs[0] + inputs[1]
    for j in range(2, len(shapes)):
        expected = expected * inputs[j] if j % 2 else expected + inputs[j]
    assert got.shape == (2, 4, 3, 1, 2, 5)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_deep_expression_and_unused_input():
    x = tt.tensor([0.25, 0.5])
    text = "@0"
    for _ in range(40):
        text = f"add({text},mul(@0,0.5))"
    assert FusedKernel(text).depth == 3
    deep = "@0"
    for _ in range(30):
        deep = f"add(@0,{deep})"
    assert FusedKernel(deep).depth == 31
    np.testing.assert_allclose(FusedKernel(deep)(x).numpy(), 31 * x.numpy())
    # @0 unused: it still has to be passed and still broadcasts
    got = FusedKernel("exp(@1)")(tt.zeros(3, 1), tt.tensor([0.0, 1.0]))
    np.testing.assert_allclose(got.numpy(), np.exp(np.broadcast_to([0.0, 1.0], (3, 2))), rtol=1e-6)


def test_constants_only_and_scalar_inputs():
    got = FusedKernel("add(1,mul(2,3))")()
    assert got.shape == () and got.dtype is tt.get_default_dtype() and got.item() == 7.0
    got = FusedKernel("mul(@0,@0)")(tt.tensor(3.0, dtype=tt.float64))
    assert got.shape == () and got.dtype is tt.float64 and got.item() == 9.0
    assert FusedKernel("@0")(tt.ones(0, 3)).shape == (0, 3)


# ---------------------------------------------------------------------- call errors


def test_call_errors():
    k = FusedKernel("add(@0,@1)")
    with pytest.raises(TypeError, match="FusedKernel: 'add\\(@0,@1\\)' takes 2 tensors, got 1"):
        k(tt.ones(2))
    with pytest.raises(TypeError, match="FusedKernel: input @1 must be a Tensor, got float"):
        k(tt.ones(2), 1.0)
    with pytest.raises(TypeError, match="FusedKernel: inputs must all be float32 or all float64"):
        k(tt.ones(2), tt.ones(2, dtype=tt.float64))
    with pytest.raises(TypeError, match="no promotion"):
        k(tt.ones(2, dtype=tt.int32), tt.ones(2, dtype=tt.int32))
    with pytest.raises(TypeError, match="float16"):
        k(tt.ones(2, dtype=tt.float16), tt.ones(2, dtype=tt.float16))
    with pytest.raises(RuntimeError, match="FusedKernel: The size of tensor a \\(2\\) must match"):
        k(tt.ones(2), tt.ones(3))
    with pytest.raises(RuntimeError, match="require grad"):
        k(tt.ones(2, requires_grad=True), tt.ones(2))
    with tt.no_grad():
        assert k(tt.ones(2, requires_grad=True), tt.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="expected a string"):
        FusedKernel(3)
    with pytest.raises(ValueError, match="at most 64 inputs"):
        FusedKernel("add(@0,@64)")


# ---------------------------------------------------------------------- the C entry points


def _check(opcodes, args, ninputs=1, nconstants=0):
    depth = ffi.new("int *", -1)
    status = lib.tt_fused_check(len(opcodes), opcodes or [0], args or [0], ninputs, nconstants, depth)
    return status, depth[0]


L, C = lib.TT_FUSED_LOAD, lib.TT_FUSED_CONST


def test_c_check_accepts_valid_programs():
    assert _check([L, L, lib.TT_FUSED_ADD, lib.TT_FUSED_RELU], [0, 1, 0, 0], ninputs=2) == (lib.TT_OK, 2)
    assert _check([C], [0], ninputs=0, nconstants=1) == (lib.TT_OK, 1)


@pytest.mark.parametrize(
    "opcodes, args, ninputs, nconstants",
    [
        ([], [], 1, 0),                                              # empty program
        ([lib.TT_FUSED_ADD], [0], 1, 0),                             # pops an empty stack
        ([L, lib.TT_FUSED_ADD], [0, 0], 1, 0),                       # binary with one value
        ([L, L], [0, 0], 1, 0),                                      # two results
        ([L], [1], 1, 0),                                            # input out of range
        ([L], [-1], 1, 0),                                           # negative input
        ([C], [0], 0, 0),                                            # constant out of range
        ([L, 99], [0, 0], 1, 0),                                     # opcode out of range
        ([L, -1], [0, 0], 1, 0),                                     # negative opcode
        ([L] * 65 + [lib.TT_FUSED_ADD] * 64, [0] * 129, 1, 0),       # deeper than 64
        ([L], [0], 65, 0),                                           # too many inputs
    ],
)
def test_c_check_refuses_bad_programs(opcodes, args, ninputs, nconstants):
    assert _check(opcodes, args, ninputs, nconstants)[0] == lib.TT_ERR_INVALID_ARG


def test_c_eval_refuses_without_writing():
    x = tt.ones(4)
    out = tt.zeros(4)
    shape, strides = [4], [1]

    def run(opcodes, args, dtype=lib.TT_FLOAT32, shape=shape, strides=strides, inputs=None):
        return lib.tt_fused_eval(len(opcodes), opcodes, args, [0.0], 1, 1, inputs or [x.data_ptr()], strides, 1,
                                 shape, out.data_ptr(), dtype)

    assert run([L, L], [0, 0]) == lib.TT_ERR_INVALID_ARG
    assert run([L], [3]) == lib.TT_ERR_INVALID_ARG
    assert run([L], [0], dtype=lib.TT_FLOAT16) == lib.TT_ERR_UNSUPPORTED_DTYPE
    assert run([L], [0], dtype=42) == lib.TT_ERR_UNSUPPORTED_DTYPE
    assert run([L], [0], shape=[-1]) == lib.TT_ERR_INVALID_ARG
    assert run([L], [0], strides=[-1]) == lib.TT_ERR_INVALID_ARG
    assert run([L], [0], inputs=[0]) == lib.TT_ERR_INVALID_ARG
    assert out.tolist() == [0.0] * 4
    assert run([L, lib.TT_FUSED_NEG], [0, 0]) == lib.TT_OK
    assert out.tolist() == [-1.0] * 4


# ---------------------------------------------------------------------- out= (an executor's arena)


def test_out_writes_into_the_given_tensor():
    rng = np.random.default_rng(11)
    a = tt.tensor(rng.standard_normal((70, 90)).astype(np.float32))
    b = tt.tensor(rng.standard_normal(90).astype(np.float32))
    expected = tt.relu(tt.add(tt.mul(a, b), 1.0))
    k = FusedKernel("relu(add(mul(@0,@1),1))")
    arena = tt.zeros(70 * 90 + 100)
    out = arena[50:50 + 70 * 90].view(70, 90)
    assert k(a, b, out=out) is out
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert arena[:50].tolist() == [0.0] * 50 and arena[-50:].tolist() == [0.0] * 50
    # in place: out is input @0 itself (its last reader)
    before = a.clone()
    assert k(a, b, out=a) is a
    np.testing.assert_array_equal(a.numpy(), tt.relu(tt.add(tt.mul(before, b), 1.0)).numpy())
    x = tt.tensor(rng.standard_normal(5000))
    expected = tt.exp(tt.neg(x))
    FusedKernel("exp(neg(@0))")(x, out=x)
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    y = tt.tensor([1.0, 2.0])
    FusedKernel("@0")(y, out=y)
    assert y.tolist() == [1.0, 2.0]


def test_out_errors():
    k = FusedKernel("add(@0,@1)")
    a, b = tt.ones(4, 3), tt.ones(3)
    with pytest.raises(TypeError, match="FusedKernel: out must be a Tensor"):
        k(a, b, out=[0.0])
    with pytest.raises(RuntimeError, match="expected shape \\[4, 3\\] and dtype float32"):
        k(a, b, out=tt.zeros(3, 4))
    with pytest.raises(RuntimeError, match="expected shape"):
        k(a, b, out=tt.zeros(4, 3, dtype=tt.float64))
    with pytest.raises(RuntimeError, match="out must be contiguous"):
        k(a, b, out=tt.zeros(3, 4).T)
    big = tt.zeros(5, 3)
    with pytest.raises(RuntimeError, match="out overlaps input @0"):
        k(big[1:], b, out=big[:4])  # shifted by one row: would read rows already written
    with pytest.raises(RuntimeError, match="out overlaps input @1"):
        k(a, big[3], out=big[:4])   # a broadcast row inside out
    square = tt.zeros(3, 3)
    with pytest.raises(RuntimeError, match="out overlaps input @0"):
        k(square.T, b, out=square)  # the same memory in another order


def test_too_deep_nesting_is_refused():
    text = "@0"
    for _ in range(250):
        text = f"neg({text})"
    with pytest.raises(FusedExprError, match="nested deeper than 200 levels"):
        FusedKernel(text)
