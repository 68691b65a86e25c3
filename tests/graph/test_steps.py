"""Prepared C steps (t_tensor/graph/steps.py) and the prepared executors: every builder's result
equals the registry kernel's, the bench-style models run with no copy into the arena, a changed
graph is prepared again, and the plain executor's prepared plan gives graph.run's old values."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort  # dev dependency: a missing one must fail, not skip
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
import t_tensor.onnx as tt_onnx
from t_tensor.graph import ArenaExecutor, Graph, Profiler
from t_tensor.graph.kernels import KERNELS
from t_tensor.graph.steps import STEP_BUILDERS, Builder, run_calls

from .test_onnx_import import MODELS, export


def _same(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# (op type, attributes, input shapes, output shape) -- each checked against the registry kernel
_CASES = [
    ("Add", {}, [(2, 3, 4), (4,)], (2, 3, 4)),
    ("Sub", {}, [(3, 1), (1, 5)], (3, 5)),
    ("Mul", {}, [(2, 3), (2, 3)], (2, 3)),
    ("Div", {}, [(2, 3), (1, 3)], (2, 3)),
    ("Pow", {}, [(2, 3), ()], (2, 3)),
    ("Max", {}, [(2, 3), (2, 3)], (2, 3)),
    ("Relu", {}, [(2, 3)], (2, 3)),
    ("Tanh", {}, [(4,)], (4,)),
    ("Erf", {}, [(2, 2)], (2, 2)),
    ("Gelu", {"approximate": "tanh"}, [(3, 3)], (3, 3)),
    ("LeakyRelu", {"alpha": 0.2}, [(3, 3)], (3, 3)),
    ("Elu", {"alpha": 0.5}, [(3, 3)], (3, 3)),
    ("Clip", {"min": -0.5, "max": 0.5}, [(3, 3)], (3, 3)),
    ("MatMul", {}, [(2, 3, 4), (4, 5)], (2, 3, 5)),
    ("MatMul", {}, [(1, 3, 4), (2, 4, 5)], (2, 3, 5)),
    ("Gemm", {"transA": 1, "transB": 1, "beta": 0.5}, [(4, 3), (5, 4), (5,)], (3, 5)),
    ("Gemm", {}, [(3, 4), (4, 5), (3, 5)], (3, 5)),
    ("Gemm", {"alpha": 2.0}, [(3, 4), (4, 5), (1, 5)], (3, 5)),
    ("Conv", {"pads": (1, 2, 0, 1), "strides": (2, 1)}, [(2, 3, 7, 6), (4, 3, 3, 3), (4,)], (2, 4, 3, 7)),
    ("Conv", {"group": 2, "dilations": (2, 1)}, [(1, 4, 6, 6), (4, 2, 2, 2)], (1, 4, 4, 5)),
    ("MaxPool", {"kernel_shape": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1)}, [(2, 3, 7, 7)], (2, 3, 4, 4)),
    ("MaxPool", {"kernel_shape": (2, 2), "ceil_mode": 1, "strides": (2, 2)}, [(1, 2, 5, 5)], (1, 2, 3, 3)),
    ("AveragePool", {"kernel_shape": (3, 3), "pads": (1, 1, 1, 1)}, [(2, 3, 5, 5)], (2, 3, 5, 5)),
    ("AveragePool", {"kernel_shape": (3, 3), "pads": (1, 1, 1, 1), "count_include_pad": 1}, [(2, 3, 5, 5)],
     (2, 3, 5, 5)),
    ("AveragePool", {"kernel_shape": (2, 2), "pads": (0, 0, 1, 1), "strides": (2, 2)}, [(1, 2, 5, 5)], (1, 2, 3, 3)),
    ("GlobalAveragePool", {}, [(2, 3, 4, 5)], (2, 3, 1, 1)),
    ("GlobalMaxPool", {}, [(2, 3, 4, 5)], (2, 3, 1, 1)),
    ("Softmax", {"axis": 1}, [(2, 5, 3)], (2, 5, 3)),
    ("LogSoftmax", {"axis": -1}, [(2, 5)], (2, 5)),
    ("ReduceMean", {"axes": (1,), "keepdims": 1}, [(2, 3, 4)], (2, 1, 4)),
    ("ReduceSum", {"axes": (0, 2), "keepdims": 0}, [(2, 3, 4)], (3,)),
    ("ReduceMax", {"keepdims": 0}, [(2, 3, 4)], ()),
    ("ReduceMin", {"axes": (-1,), "keepdims": 1}, [(2, 3)], (2, 1)),
    ("BatchNormalization", {"epsilon": 1e-3}, [(2, 3, 4, 4), (3,), (3,), (3,), (3,)], (2, 3, 4, 4)),
    ("LayerNormalization", {"axis": -1}, [(2, 3, 8), (8,), (8,)], (2, 3, 8)),
    ("LayerNormalization", {"axis": 1}, [(2, 3, 4), (3, 4)], (2, 3, 4)),
    ("Cast", {"to": 7}, [(2, 3)], (2, 3)),
]


@pytest.mark.parametrize("op,attrs,shapes,out_shape", _CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(_CASES)])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
def test_builder_matches_the_registry_kernel(op, attrs, shapes, out_shape, dtype):
    from t_tensor.graph.ir import Node, dtype_attr

    tt.manual_seed(0)
    xs = [tt.randn(*s, dtype=dtype) * 3 for s in shapes]
    if op == "BatchNormalization":
        xs[4] = xs[4].abs() + 0.1  # a variance
    if op == "Pow":
        xs[0] = xs[0].abs()
    node = Node(op, [f"i{k}" for k in range(len(xs))], ["y"], dict(attrs), "n")
    want = KERNELS[op](xs, attrs)
    want = want[0] if isinstance(want, tuple) else want
    out_dtype = dtype_attr(attrs["to"]) if op == "Cast" else dtype
    out = tt.full(out_shape, float("nan") if out_dtype.is_floating_point else -1, dtype=out_dtype)
    calls = STEP_BUILDERS[op](Builder(), node, xs, [out])
    assert calls is not None, f"{op} declined"
    run_calls(calls, op)
    assert tuple(want.shape) == out_shape and want.dtype == out.dtype
    _same(out.numpy(), want.numpy(), 1e-5 if dtype == tt.float32 else 1e-12)


def test_builders_decline_what_they_cannot_write():
    from t_tensor.graph.ir import Node

    b = Builder()
    x = tt.randn(4, 4)
    # an output overlapping its input other than exactly (a transposed view of the same memory)
    assert STEP_BUILDERS["Add"](b, Node("Add", ["a", "b"], ["y"]), [x.T, x], [x]) is None
    # in place over an input read exactly: fine
    assert STEP_BUILDERS["Add"](b, Node("Add", ["a", "b"], ["y"]), [x, x.T.contiguous()], [x]) is not None
    # integer division (ONNX truncates: the registry kernel), a non-contiguous output, mixed dtypes
    i = tt.ones(2, 2, dtype=tt.int32)
    assert STEP_BUILDERS["Div"](b, Node("Div", ["a", "b"], ["y"]), [i, i], [tt.empty(2, 2, dtype=tt.int32)]) is None
    assert STEP_BUILDERS["Relu"](b, Node("Relu", ["a"], ["y"]), [x], [tt.empty(4, 4).T]) is None
    assert STEP_BUILDERS["Add"](b, Node("Add", ["a", "b"], ["y"]), [x, x.double()], [tt.empty(4, 4)]) is None
    assert STEP_BUILDERS["Softmax"](b, Node("Softmax", ["a"], ["y"]), [x], [x]) is None  # in place: no


def _bn_pool_softmax_graph() -> Graph:
    g = Graph()
    g.add_input("x", (2, 3, 8, 8), tt.float32)
    tt.manual_seed(1)
    g.add_initializer("w", tt.randn(4, 3, 3, 3) * 0.3)
    for name, value in (("s", tt.rand(4) + 0.5), ("b", tt.randn(4)), ("m", tt.randn(4)), ("v", tt.rand(4) + 0.5)):
        g.add_initializer(name, value)
    g.add_initializer("fc", tt.randn(4, 5))
    g.add_node("Conv", ["x", "w"], ["c"], {"pads": (1, 1, 1, 1)})
    g.add_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"])
    g.add_node("Relu", ["bn"], ["r"])
    g.add_node("MaxPool", ["r"], ["p"], {"kernel_shape": (2, 2), "strides": (2, 2)})
    g.add_node("AveragePool", ["p"], ["a"], {"kernel_shape": (3, 3), "pads": (1, 1, 1, 1)})
    g.add_node("GlobalAveragePool", ["a"], ["gp"])
    g.add_node("Flatten", ["gp"], ["f"])
    g.add_node("MatMul", ["f", "fc"], ["logits"])
    g.add_node("ReduceMax", ["logits"], ["mx"], {"axes": (1,), "keepdims": 1})
    g.add_node("Sub", ["logits", "mx"], ["z"])
    g.add_node("Softmax", ["z"], ["y"], {"axis": 1})
    g.outputs = ["y"]
    return g.infer_shapes()


def test_batchnorm_pool_softmax_reductions_write_into_the_arena():
    g = _bn_pool_softmax_graph()
    ex = ArenaExecutor(g)
    for seed in (0, 1):
        tt.manual_seed(seed)
        x = tt.randn(2, 3, 8, 8)
        _same(ex(x).numpy(), g.run(x).numpy())
    assert ex.stats["copied"] == 0 and ex.stats["copied_bytes"] == 0
    assert ex.stats["direct"] == len(g.nodes) - 1 and ex.stats["aliases"] == 1  # Flatten


@pytest.fixture(scope="module")
def exported():
    return {name: export(name) for name in MODELS}


@pytest.mark.parametrize("name", list(MODELS))
def test_exported_models_copy_nothing_and_match_onnxruntime(exported, name):
    """The models of the importer tests (MLP, LeNet, ResNet and MobileNet-style blocks with
    BatchNorm, a transformer encoder block with LayerNorm and Softmax), not optimized: nothing
    goes through the copy path."""
    model, x, expected = exported[name]
    g = tt_onnx.load(model)
    ex = ArenaExecutor(g)
    got = ex(tt.tensor(x)).numpy()
    assert ex.stats["copied"] == 0, ex.stats
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, sess.run(None, {"x": x})[0], atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-4)
    _same(got, g.run(tt.tensor(x)).numpy())


def test_a_changed_graph_is_prepared_again():
    g = Graph()
    g.add_input("x", (2, 2), tt.float32)
    g.add_node("Relu", ["x"], ["a"])
    g.add_node("Exp", ["a"], ["y"])
    g.outputs = ["y"]
    g.infer_shapes()
    ex = ArenaExecutor(g)
    x = tt.tensor([[-1.0, 0.0], [1.0, 2.0]])
    _same(ex(x).numpy(), np.exp(np.maximum(x.numpy(), 0)))
    _same(g.run(x).numpy(), np.exp(np.maximum(x.numpy(), 0)))
    first = ex.program
    ex(x)
    assert ex.program is first  # unchanged: not prepared again
    g.nodes[1].op_type = "Neg"
    _same(ex(x).numpy(), -np.maximum(x.numpy(), 0))
    _same(g.run(x).numpy(), -np.maximum(x.numpy(), 0))
    assert ex.program is not first
    g.nodes[0].op_type = "LeakyRelu"                      # y = -leaky_relu(x)
    g.nodes[0].attrs["alpha"] = 0.5
    v = x.numpy()
    _same(ex(x).numpy(), -(np.maximum(v, 0) + 0.5 * np.minimum(v, 0)))
    g.nodes[0].attrs["alpha"] = 0.25                      # an attribute changed in place
    _same(ex(x).numpy(), -(np.maximum(v, 0) + 0.25 * np.minimum(v, 0)))
    _same(g.run(x).numpy(), -(np.maximum(v, 0) + 0.25 * np.minimum(v, 0)))


def test_constant_nodes_run_once_and_the_profiler_is_off_unless_asked():
    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_node("Constant", [], ["k"], {"value": tt.tensor([1.0, 2.0, 3.0])})
    g.add_node("Mul", ["k", "k"], ["k2"])      # constants only: computed while preparing
    g.add_node("Add", ["x", "k2"], ["a"])
    g.add_node("Tanh", ["a"], ["y"])
    g.outputs = ["y"]
    g.infer_shapes()
    ex = ArenaExecutor(g)
    x = tt.randn(2, 3)
    _same(ex(x).numpy(), np.tanh(x.numpy() + np.array([1.0, 4.0, 9.0])))
    assert ex.stats["constants"] == 2 and ex.stats["direct"] == 2
    prof = Profiler()
    ex.run([x], profiler=prof)
    assert sum(int(r[0]) for r in prof.records.values()) == len(g.nodes)


def test_traced_models_compiled_with_the_arena_copy_nothing():
    from .test_trace import _models as traced_models

    for name in ("mlp", "cnn", "encoder"):
        tt.manual_seed(0)
        model, shape = traced_models()[name]
        model.eval()
        for optimize in (False, True):
            f = tt.compile(model, (tt.randn(*shape),), arena=True, optimize=optimize)
            x = tt.randn(*shape)
            with tt.no_grad():
                _same(f(x).numpy(), model(x).numpy(), 1e-4)
            assert f.executor.stats["copied"] == 0, (name, optimize, f.executor.stats)


def test_initializers_written_in_place_are_noticed():
    """A traced model's parameters are the graph's initializers: an optimizer step writes them in
    place, and what was computed from them when preparing (BatchNorm's scale and shift, constant
    nodes) must follow. (With optimize=True the passes fold the weights into new constants when
    compiling: such a graph is frozen by design.)"""
    tt.manual_seed(0)
    net = tt.nn.Sequential(tt.nn.Conv2d(2, 3, 3, padding=1), tt.nn.BatchNorm2d(3), tt.nn.ReLU(),
                           tt.nn.Flatten(), tt.nn.Linear(48, 4))
    net.eval()
    x = tt.randn(2, 2, 4, 4)
    for arena in (False, True):
        f = tt.compile(net, (x,), arena=arena)
        with tt.no_grad():
            _same(f(x).numpy(), net(x).numpy())
            for p in net.parameters():
                p.mul_(1.5)
            net[1].running_var.add_(0.5)
            net[1].running_mean.sub_(0.25)
            _same(f(x).numpy(), net(x).numpy(), 1e-4)


def test_nodes_reading_inputs_reuse_their_calls_only_when_that_is_safe():
    from t_tensor.graph.arena import _DynamicStep

    g = Graph()
    g.add_input("x", (2, 3), tt.float32)
    g.add_input("lo", (), tt.float32)
    g.add_initializer("hi", tt.tensor(0.5))
    g.add_node("Relu", ["x"], ["r"])               # reads x by address: its calls are reused
    g.add_node("Clip", ["r", "lo", "hi"], ["y"])   # reads lo's value: rebuilt every call
    g.outputs = ["y"]
    ex = ArenaExecutor(g.infer_shapes())
    x, lo = tt.randn(2, 3), tt.tensor(0.0)
    for low in (0.0, 0.25, -1.0):
        lo.copy_(tt.tensor(low))                   # the same tensor, written in place
        x.mul_(-1.0)
        _same(ex(x, lo).numpy(), np.clip(np.maximum(x.numpy(), 0), low, 0.5))
        _same(ex(x + 0, lo).numpy(), np.clip(np.maximum(x.numpy(), 0), low, 0.5))  # another address
    steps = {s.node.op_type: s for s, _, _ in ex.program.steps if isinstance(s, _DynamicStep)}
    assert steps["Relu"].cached is not None and steps["Clip"].cached is None
    assert ex.stats["direct"] == 2


def test_values_computed_in_the_graph_are_not_baked_into_prepared_calls():
    """BatchNorm statistics, Clip bounds and a Gemm bias scaled by beta that are computed by
    earlier nodes (arena slots: fixed addresses, new values every run) are read at each run."""
    g = Graph()
    g.add_input("x", (4, 3, 2, 2), tt.float32)
    g.add_input("v", (3,), tt.float32)
    g.add_initializer("s", tt.tensor([1.0, 2.0, 0.5]))
    g.add_initializer("b", tt.tensor([0.1, -0.2, 0.3]))
    g.add_initializer("w", tt.ones(3, 3) / 3)
    g.add_node("ReduceMean", ["x"], ["m"], {"axes": (0, 2, 3), "keepdims": 0})   # computed statistics
    g.add_node("Abs", ["v"], ["va"])
    g.add_node("BatchNormalization", ["x", "s", "b", "m", "va"], ["bn"])
    g.add_node("ReduceMin", ["bn"], ["lo"], {"keepdims": 0})                      # a computed bound
    g.add_node("Clip", ["bn", "lo"], ["c"])
    g.add_node("ReduceMean", ["c"], ["pooled"], {"axes": (2, 3), "keepdims": 0})  # (4, 3)
    g.add_node("Gemm", ["pooled", "w", "m"], ["y"], {"beta": 2.0})                # bias from a slot
    g.outputs = ["y"]
    ex = ArenaExecutor(g.infer_shapes())
    for seed in (0, 1, 2):
        tt.manual_seed(seed)
        x, v = tt.randn(4, 3, 2, 2) + seed, tt.rand(3) + 0.5
        _same(ex(x, v).numpy(), g.run(x, v).numpy())
    assert ex.stats["copied"] == 0


def test_onnx_backend_node_cases_on_the_arena():
    """Every ONNX backend node case the plain executor passes also passes on the arena executor,
    as imported and after graph.optimize(): the prepared C steps against ONNX's reference outputs
    (asymmetric pads, ceil_mode pooling, every reduction flavour, broadcasting...)."""
    from onnx import TensorProto

    from .test_onnx_import import _case_passes, passing_backend_cases

    checked, wrong = 0, []
    for case in passing_backend_cases():
        for optimize in (False, True):
            def on_arena(model, ins, optimize=optimize):
                g = tt_onnx.load(model)
                ex = ArenaExecutor(g.optimize() if optimize else g)
                return ex.run([tt_onnx.to_tensor(i) if isinstance(i, TensorProto) else i for i in ins])
            try:
                ok = _case_passes(case, on_arena)
            except Exception as exc:  # noqa: BLE001 - collected, reported below
                ok = f"{type(exc).__name__}: {exc}"
            if ok is not True:
                wrong.append((case.name, optimize, ok))
        checked += 1
    assert checked >= 990 and not wrong, wrong


def test_plain_executor_prepares_once_and_profiles_every_node():
    lin = tt.nn.Linear(4, 3)
    f = tt.compile(lambda x: lin(x).relu().sum(-1), (tt.ones(2, 4),))
    g = f.graph
    x = tt.randn(2, 4)
    with tt.no_grad():
        want = lin(x).relu().sum(-1)
    _same(g.run(x).numpy(), want.numpy())
    plan = g._plain_plan
    _same(g.run(x).numpy(), want.numpy())
    assert g._plain_plan is plan  # cached on the graph
    assert [n.op_type for n in plan.made_once] == ["tt.View"]  # the weight's transpose: made once
    prof = Profiler()
    g.run(x, profiler=prof)
    assert sum(int(r[0]) for r in prof.records.values()) == len(g.nodes)
    with tt.no_grad():
        lin.weight.mul_(2.0)  # a view of a constant follows the constant
        _same(g.run(x).numpy(), lin(x).relu().sum(-1).numpy())


def test_views_of_inputs_remember_their_layout_recipe():
    from t_tensor.graph.arena import _DynamicStep

    g = Graph()
    g.add_input("x", (2, 6), tt.float32)
    g.add_initializer("shape", tt.tensor([3, 4]))
    g.add_node("Reshape", ["x", "shape"], ["r"])
    g.add_node("Transpose", ["r"], ["t"], {"perm": (1, 0)})
    g.add_node("Exp", ["t"], ["y"])
    g.outputs = ["y"]
    ex = ArenaExecutor(g.infer_shapes())
    base = tt.arange(36, dtype=tt.float32).reshape(3, 12) / 36
    for x in (base[0].reshape(2, 6), base[1].reshape(2, 6), base[:2, :6], base[1:, 6:], base[0].reshape(2, 6)):
        _same(ex(x).numpy(), np.exp(x.numpy().reshape(3, 4).T))
        assert ex.stats["aliases"] == 2 and ex.stats["copied"] == 0
    # a strided (2, 6) cannot be viewed as (3, 4) (Reshape copies it): only the contiguous layout
    # has a recipe, and the strided inputs went through the kernel each time
    steps = [s for s, _, _ in ex.program.steps if isinstance(s, _DynamicStep) and s.node.op_type == "Reshape"]
    assert steps[0].view_key == ((2, 6), (6, 1), tt.float32)


_OPS = [("Add", 2), ("Mul", 2), ("Sub", 2), ("Div", 2), ("Max", 2), ("MatMul", 2), ("Relu", 1), ("Tanh", 1),
        ("Exp", 1), ("Transpose", 1), ("Reshape", 1), ("Flatten", 1), ("Unsqueeze", 1), ("Clip", 1),
        ("LeakyRelu", 1), ("Softmax", 1), ("ReduceMean", 1), ("Bias", 1), ("Linear", 1), ("LinearRelu", 1),
        ("LinearClip", 1)]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_random_graphs_optimized_and_on_the_arena_match_the_plain_executor(data):
    """Random DAGs over (4, 4) values mixing the ops the new passes rewrite (MatMul + bias + Relu,
    view chains) with the ones the arena prepares: graph.run, the arena executor, and both after
    graph.optimize() agree."""
    g = Graph()
    g.add_input("x", (4, 4), tt.float32)
    g.add_initializer("w", tt.arange(16, dtype=tt.float32).reshape(4, 4) / 16 - 0.5)
    g.add_initializer("b", tt.tensor([0.5, -0.25, 0.0, 1.0]))
    g.add_initializer("shape", tt.tensor([2, 8]))
    g.add_initializer("back", tt.tensor([4, 4]))
    g.add_initializer("lo", tt.tensor(-0.5))
    g.add_initializer("hi", tt.tensor(0.75))
    names = ["x"]
    for k in range(data.draw(st.integers(1, 10), label="nodes")):
        op, arity = data.draw(st.sampled_from(_OPS), label=f"op{k}")
        ins = [data.draw(st.sampled_from(names[-3:]), label=f"in{k}_{j}") for j in range(arity)]
        v = f"v{k}"
        if op == "Bias":
            g.add_node("Add", [ins[0], "b"] if k % 2 else ["b", ins[0]], [v])
        elif op.startswith("Linear"):  # x @ w + b, then maybe an activation: what fuse_gemm_activation fuses
            g.add_node("MatMul", [ins[0], "w"], [v + "m"])
            g.add_node("Add", [v + "m", "b"] if k % 2 else ["b", v + "m"], [v + "a" if op != "Linear" else v])
            if op == "LinearRelu":
                g.add_node("Relu", [v + "a"], [v])
            elif op == "LinearClip":
                g.add_node("Clip", [v + "a", "lo", "hi"], [v])
        elif op == "Reshape":  # (2, 8) and back: a chain fold_reshapes collapses
            g.add_node("Reshape", [ins[0], "shape"], [v + "r"])
            g.add_node("Reshape", [v + "r", "back"], [v])
        elif op == "Flatten":
            g.add_node("Unsqueeze", ins, [v + "u"], {"axes": (0,)})
            g.add_node("Flatten", [v + "u"], [v], {"axis": 2})
        elif op == "Unsqueeze":
            g.add_node("Unsqueeze", ins, [v + "u"], {"axes": (1,)})
            g.add_node("Squeeze", [v + "u"], [v], {"axes": (1,)})
        elif op == "Clip":
            g.add_node("Clip", [ins[0], "lo", "hi"], [v])
        elif op == "ReduceMean":
            g.add_node("ReduceMean", ins, [v + "m"], {"axes": (1,), "keepdims": 1})
            g.add_node("Sub", [ins[0], v + "m"], [v])
        elif op == "Div":
            g.add_node("Abs", [ins[1]], [v + "a"])
            g.add_node("Add", [v + "a", "hi"], [v + "d"])
            g.add_node("Div", [ins[0], v + "d"], [v])
        else:
            g.add_node(op, ins, [v], {"alpha": 0.1} if op == "LeakyRelu" else {})
        names.append(v)
    g.outputs = data.draw(st.lists(st.sampled_from(names[1:]), min_size=1, max_size=2, unique=True), label="outs")
    g.infer_shapes()
    o = g.optimize()
    x = tt.randn(4, 4)
    want = g.run(x)
    want = list(want) if isinstance(want, tuple) else [want]
    for graph in (g, o):
        got = graph.run(x)
        got = list(got) if isinstance(got, tuple) else [got]
        arena = ArenaExecutor(graph).run([x])
        for a, b, c in zip(got, arena, want, strict=True):
            _same(a.numpy(), c.numpy(), 1e-4)
            _same(b.numpy(), c.numpy(), 1e-4)


def test_the_arena_does_not_keep_inputs_or_their_views_alive():
    import gc
    import weakref

    g = Graph()
    g.add_input("x", (2, 6), tt.float32)
    g.add_initializer("shape", tt.tensor([3, 4]))
    g.add_node("Reshape", ["x", "shape"], ["r"])
    g.add_node("Exp", ["r"], ["y"])
    g.outputs = ["y"]
    ex = ArenaExecutor(g.infer_shapes())
    x = tt.randn(2, 6)
    ex(x)
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None
    assert all(ex.program.vals[k] is None for k in ex.program.transient)
