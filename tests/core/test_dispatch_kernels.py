"""The C twins of the one-call paths of sum, mean, amax, amin, softmax, log_softmax and ``@``
and of cat and stack (``csrc/python/fast_ops.c``, docs/performance_dispatch.md "Ninth round").

Each must be invisible: the same bits, shape, strides and dtype as the Python function (or method)
it replaces, which runs the same kernel; every case it does not take goes to that Python function,
with the same result or error; nothing leaks, and what it reads stays alive while other Python
code runs (a collection inside an allocation, another thread while the GIL is released).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import collecting_at_every_allocation, results_of_threads

import t_tensor as tt
from t_tensor import _cfast, manipulation, reductions
from t_tensor._capi import lib
from t_tensor.linalg import LinalgOps

FLOATS = [tt.float16, tt.float32, tt.float64]
SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (1, 1, 6), (2, 3, 4), (7, 1)]
REDUCE_OPS = {"sum": lib.TT_RED_SUM, "mean": lib.TT_RED_MEAN, "amax": lib.TT_RED_MAX, "amin": lib.TT_RED_MIN}
python_reduce = _cfast.python_function("_fast_reduce")
python_softmax = _cfast.python_function("_fast_softmax")
python_join = _cfast.python_function("_fast_join")
python_matmul = LinalgOps.__dict__["__matmul__"]
ALL = [tt.bool, tt.int8, tt.int16, tt.int32, tt.int64, tt.uint8, tt.float16, tt.float32, tt.float64]


def outcome(fn):
    """(type, dtype, shape, strides, density, bytes) of the result; (None,) for None, and
    (NotImplemented,) for an operator's refusal; (exception type, message) when it raises."""
    try:
        result = fn()
        if result is None or result is NotImplemented:
            return (result,)
        return type(result), result.dtype, result.shape, result.stride(), result._dense, result.numpy().tobytes()
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return type(error), str(error)


def values(shape, dtype, seed=0) -> tt.Tensor:
    rng = np.random.default_rng(seed)
    return tt.tensor(rng.standard_normal(shape).astype(dtype.numpy))


def test_the_c_functions_are_installed() -> None:
    assert type(reductions._fast_reduce).__name__ == "builtin_function_or_method"
    assert type(reductions._fast_softmax).__name__ == "builtin_function_or_method"
    assert type(manipulation._fast_join).__name__ == "builtin_function_or_method"
    assert type(tt.Tensor.__dict__["__matmul__"]).__name__ == "method_descriptor"
    assert python_reduce.__module__ == python_softmax.__module__ == "t_tensor.reductions"
    assert python_join.__module__ == "t_tensor.manipulation"
    import inspect

    assert str(inspect.signature(tt.Tensor.__matmul__)) == "(self, /, other)"
    assert str(inspect.signature(reductions._fast_reduce)) == "(op, x, dim, keepdim, needs_elements=False)"
    assert str(inspect.signature(manipulation._fast_join)) == "(tensors, dim, new_axis)"
    assert "csrc/python/fast_ops.c" in tt.Tensor.__matmul__.__doc__


def python_frames(fn, names=("_fast_reduce", "_fast_softmax", "_fast_join", "__matmul__")) -> list[str]:
    """The Python functions among `names` that fn() runs (none when the C twins take the call)."""
    import sys

    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name in names:
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def test_the_public_calls_take_the_c_twins() -> None:
    # (found by review) amax and amin passed needs_elements by keyword, which sent every call to
    # the Python function
    x, y = values((3, 4), tt.float32), values((4, 2), tt.float32)
    for call in [lambda: x.sum(), lambda: x.sum(1), lambda: x.mean(), lambda: tt.mean(x, 0, True), lambda: x.amax(),
                 lambda: tt.amin(x, 0), lambda: tt.softmax(x, -1), lambda: x.log_softmax(0), lambda: x @ y,
                 lambda: tt.cat([x, x], 1), lambda: tt.stack((x, x))]:
        assert python_frames(call) == []
    assert python_frames(lambda: x.T.sum()) == ["_fast_reduce"]   # not known dense: the Python function


# ---------------------------------------------------------------------- reductions


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(REDUCE_OPS))
def test_c_reduce_equals_the_python_function(name, shape, dtype) -> None:
    x = values(shape, dtype)
    op, needs = REDUCE_OPS[name], name in ("amax", "amin")
    for dim in [None, *range(-len(shape), len(shape))]:
        for keepdim in (None, False, True):
            args = (op, x, dim, keepdim, needs)
            got, want = outcome(lambda a=args: reductions._fast_reduce(*a)), outcome(lambda a=args: python_reduce(*a))
            assert got == want, (dim, keepdim)
            if got[0] is None:   # the general path: only amax/amin of nothing
                assert needs and 0 in shape
                continue
            assert got[0] is tt.Tensor and got[4] is True
            # and the public function, against NumPy
            result = getattr(tt, name)(x, dim, bool(keepdim)) if dim is not None else getattr(tt, name)(x)
            reference = getattr(np, {"amax": "max", "amin": "min"}.get(name, name))(
                x.numpy().astype(np.float64), axis=dim, keepdims=bool(keepdim) and dim is not None)
            np.testing.assert_allclose(result.numpy().astype(np.float64), reference, rtol=2e-3, atol=2e-3)


def test_c_reduce_methods_match_numpy() -> None:
    x = values((4, 5, 6), tt.float32)
    a = x.numpy()
    np.testing.assert_allclose(x.sum().numpy(), a.sum(), rtol=1e-5)
    np.testing.assert_allclose(x.sum(1).numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(x.mean(-1, True).numpy(), a.mean(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(x.amax(0).numpy(), a.max(0))
    np.testing.assert_array_equal(x.amin().numpy(), a.min())
    assert x.sum(2).shape == (4, 5) and x.sum(2).stride() == (5, 1) and x.sum(0, keepdim=True).shape == (1, 5, 6)


def test_c_reduce_leaves_the_rest_to_the_python_function() -> None:
    x = values((3, 4), tt.float32)
    op = lib.TT_RED_SUM
    cases = [
        (op, tt.arange(6), None, None),                    # integers: the general path (int64 result)
        (op, x.T, None, None),                              # not contiguous: Python finds it is not dense
        (op, x[1:], 0, None),                               # a dense view: Python finds it dense
        (op, tt.nn.Parameter(x), None, None),               # a subclass
        (op, x, np.int64(0), None),                         # not exactly an int
        (op, x, 2, None), (op, x, -3, None),                # out of range
        (op, x, 0, 1),                                      # keepdim not a bool
        (op, x, 2**70, None),                               # past int64
        (2**40, x, None, None),                             # an op code past int
        (lib.TT_RED_MAX, tt.zeros(0, 3), 0, None, True),    # max of nothing
        (op, tt.zeros((1,) * 65), None, None),              # past TT_MAX_DIMS
        (op, [1.0, 2.0], None, None),                       # not a tensor
        (op, x, None, None, 1),                             # needs_elements not a bool
    ]
    for args in cases:
        assert outcome(lambda a=args: reductions._fast_reduce(*a)) == outcome(lambda a=args: python_reduce(*a)), args
    assert reductions._fast_reduce(op, x, dim=0, keepdim=None).shape == (4,)   # keywords: Python
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    assert w.sum().grad_fn is not None                       # recording: the autograd path
    with tt.no_grad():
        assert w.sum().grad_fn is None and w.sum().item() == 3.0


# ---------------------------------------------------------------------- softmax


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [s for s in SHAPES if s], ids=str)
def test_c_softmax_equals_the_python_function(shape, dtype) -> None:
    x = values(shape, dtype, seed=1)
    for log in (False, True):
        for dim in range(-len(shape), len(shape)):
            got = outcome(lambda d=dim, g=log: reductions._fast_softmax(x, d, g))
            assert got == outcome(lambda d=dim, g=log: python_softmax(x, d, g))
            assert got[0] is tt.Tensor and got[2:5] == (shape, x.stride(), True)
            a = x.numpy().astype(np.float64)
            shifted = a - a.max(axis=dim, keepdims=True) if a.size else a
            logs = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
            result = (tt.log_softmax if log else tt.softmax)(x, dim)
            np.testing.assert_allclose(result.numpy().astype(np.float64), logs if log else np.exp(logs),
                                       rtol=2e-3, atol=2e-3)


def test_c_softmax_leaves_the_rest_to_the_python_function() -> None:
    x = values((3, 4), tt.float32)
    cases = [
        (tt.ones(()), 0, False),              # 0-d: the general path
        (tt.arange(6), 0, False),             # integers: the general path raises
        (x.T, 0, False), (x[1:], 1, True),    # strided, and a dense view
        (tt.nn.Parameter(x), 1, False),
        (x, np.int64(1), False), (x, 2, False), (x, -3, False), (x, 2**70, False),
        (x, 1, 1),                            # log not a bool
        (tt.zeros((1,) * 65), 0, False),
    ]
    for args in cases:
        assert outcome(lambda a=args: reductions._fast_softmax(*a)) == outcome(lambda a=args: python_softmax(*a)), args
    assert reductions._fast_softmax(x, dim=1, log=False).shape == (3, 4)
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    assert tt.softmax(w, 0).grad_fn is not None
    with pytest.raises(NotImplementedError, match="softmax"):
        tt.softmax(tt.arange(3), 0)


# ---------------------------------------------------------------------- matmul


def matmul_pair(m, k, n, dtype, layout):
    a = values((m, k), dtype, seed=2)
    b = values((k, n), dtype, seed=3)
    if layout == "transposed":
        a, b = values((k, m), dtype, seed=2).T, values((n, k), dtype, seed=3).T
    elif layout == "sliced":
        a = values((m, 2 * k + 1), dtype, seed=2)[:, 1::2]
        b = values((k + 2, n), dtype, seed=3)[2:]
    return a, b


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("mkn", [(1, 1, 1), (3, 4, 3), (7, 63, 65), (0, 3, 2), (2, 0, 3), (65, 33, 17), (128, 96, 80)])
def test_c_matmul_equals_the_python_method_and_numpy(mkn, dtype, layout) -> None:
    a, b = matmul_pair(*mkn, dtype, layout)
    got = outcome(lambda: a @ b)
    assert got == outcome(lambda: python_matmul(a, b))
    assert got[0] is tt.Tensor and got[2] == (mkn[0], mkn[2]) and got[4] is True
    rtol = 1e-4 if dtype is tt.float32 else 1e-12
    np.testing.assert_allclose((a @ b).numpy(), a.numpy().astype(np.float64) @ b.numpy().astype(np.float64),
                               rtol=rtol, atol=rtol * mkn[1])


def test_c_matmul_leaves_the_rest_to_the_python_method() -> None:
    a, b = values((3, 4), tt.float32), values((4, 2), tt.float32)
    cases = [
        (tt.ones(3, 4, dtype=tt.int32), tt.ones(4, 2, dtype=tt.int32)),   # integers
        (a, b.double()),                                                  # mixed dtypes: the Python error
        (a, values((3, 2), tt.float32)),                                  # shapes that do not fit
        (values(4, tt.float32), b), (a, values(4, tt.float32)),          # 1-D operands
        (values((2, 3, 4), tt.float32), b),                               # batched
        (tt.nn.Parameter(a), b), (a, tt.nn.Parameter(b)),                 # subclasses
        (a, 2.0), (a, b.numpy()),                                         # not tensors
        (a.half(), b.half()),                                             # float16
    ]
    for x, y in cases:
        assert outcome(lambda p=x, q=y: p.__matmul__(q)) == outcome(lambda p=x, q=y: python_matmul(p, q)), (x, y)
    w = tt.tensor([[1.0, 2.0]], requires_grad=True)
    product = w @ tt.tensor([[3.0], [4.0]])
    assert product.grad_fn is not None and product.item() == 11.0
    product.backward()
    assert w.grad.tolist() == [[3.0, 4.0]]
    with tt.no_grad():
        assert (w @ tt.tensor([[3.0], [4.0]])).grad_fn is None


def test_c_matmul_with_the_gil_released_from_two_threads() -> None:
    a, b = values((160, 120), tt.float32), values((120, 140), tt.float32)
    want = (a.numpy().astype(np.float64) @ b.numpy().astype(np.float64))
    results = results_of_threads(lambda: (a @ b).numpy(), threads=2, calls=20)
    assert len(results) == 40
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-4, atol=1e-3)


# ---------------------------------------------------------------------- cat and stack


def join_inputs(shapes, dtype, seed=4):
    rng = np.random.default_rng(seed)
    return [tt.tensor((rng.standard_normal(shape) * 50).astype(dtype.numpy)) for shape in shapes]


CAT_CASES = [([(4,), (4,)], 0), ([(2, 3), (2, 1), (2, 5)], 1), ([(2, 3), (4, 3)], 0), ([(2, 3, 4)] * 3, -1),
             ([(1, 2), (3, 2)], -2), ([(3,)] * 20, 0), ([(2, 1, 3), (2, 4, 3)], 1), ([(5,)], 0)]


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CAT_CASES, ids=str)
def test_c_cat_equals_the_python_function_and_numpy(case, dtype) -> None:
    shapes, dim = case
    inputs = join_inputs(shapes, dtype)
    for container in (list, tuple):
        got = outcome(lambda c=container: manipulation._fast_join(c(inputs), dim, False))
        assert got == outcome(lambda c=container: python_join(c(inputs), dim, False))
        assert got[0] is tt.Tensor and got[4] is True
    want = np.concatenate([t.numpy() for t in inputs], axis=dim)
    np.testing.assert_array_equal(tt.cat(inputs, dim).numpy(), want)


@pytest.mark.parametrize("dtype", [tt.bool, tt.int16, tt.float32, tt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (3, 1, 2)], ids=str)
def test_c_stack_equals_the_python_function_and_numpy(shape, dtype) -> None:
    for count in (1, 3, 17):
        inputs = join_inputs([shape] * count, dtype)
        for dim in range(-len(shape) - 1, len(shape) + 1):
            got = outcome(lambda d=dim, x=inputs: manipulation._fast_join(x, d, True))
            assert got == outcome(lambda d=dim, x=inputs: python_join(x, d, True))
            np.testing.assert_array_equal(tt.stack(inputs, dim).numpy(), np.stack([t.numpy() for t in inputs], dim))


def test_c_join_leaves_the_rest_to_the_python_function() -> None:
    a, b = join_inputs([(2, 3), (2, 3)], tt.float32)
    cases = [
        ([], 0, False), ((), 0, True),                                   # nothing to join
        ([a, b.double()], 0, False),                                     # two dtypes: promotion is Python's
        ([a, tt.ones(3, 2)], 0, False), ([a, tt.ones(3)], 0, False),      # shapes that do not fit
        ([a, tt.ones(2, 4)], 0, True),                                   # stack of unequal shapes
        ([a, a.T.T[:, :]], 0, False),                                    # a dense view: Python finds it dense
        ([a, tt.ones(3, 2).T], 0, False),                                # not contiguous
        ([tt.nn.Parameter(a), b], 0, False),                             # a subclass
        ([a, 1.0], 0, False), ([a, b], np.int64(0), False), ([a, b], 2, False), ([a, b], -3, False),
        ([a, b], 2**70, False), ([a, b], 0, 1),
        ([tt.ones(()), tt.ones(())], 0, False),                          # cat of 0-d: the general path raises
        ([tt.zeros(0, 3), tt.zeros(2, 3)], 0, False),                    # zero-size dims: the general path
        ([tt.zeros(2, 0), tt.zeros(2, 0)], 1, True),
        ([tt.ones((1,) * 64), tt.ones((1,) * 64)], 0, True),             # the new dim would pass TT_MAX_DIMS
    ]
    for args in cases:
        assert outcome(lambda x=args: manipulation._fast_join(*x)) == outcome(lambda x=args: python_join(*x)), args
    assert manipulation._fast_join([a, b], dim=0, new_axis=False).shape == (4, 3)
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    assert tt.cat([w, w]).grad_fn is not None
    with tt.no_grad():
        assert tt.cat([w, w]).grad_fn is None and tt.stack([w, w]).shape == (2, 2)


def test_c_join_of_many_large_inputs_from_two_threads() -> None:
    # more inputs than fit on the C stack, and enough bytes to release the GIL
    inputs = join_inputs([(64, 128)] * 40, tt.float32)
    want = np.concatenate([t.numpy() for t in inputs], axis=1)
    results = results_of_threads(lambda: tt.cat(inputs, 1).numpy(), threads=2, calls=10)
    assert len(results) == 20
    for r in results:
        np.testing.assert_array_equal(r, want)


# ---------------------------------------------------------------------- ownership


def test_c_kernel_paths_leak_nothing() -> None:
    x = values((3, 4), tt.float32)
    before = tt.live_storages()
    for _ in range(100):
        made = [x.sum(), x.mean(1), x.amax(0, True), tt.softmax(x, -1), tt.log_softmax(x, 0), x @ x.T,
                reductions._fast_reduce(lib.TT_RED_MAX, tt.zeros(0), None, None, True), tt.cat([x, x]),
                tt.stack([x] * 20, 1), manipulation._fast_join([x, x.T], 0, False)]
    del made
    assert tt.live_storages() == before


def test_c_kernel_paths_give_the_same_results_under_collections() -> None:
    # a gc callback at every allocation gives the operand new memory; the results are those of the
    # operand's values when the call started
    other = tt.ones(64, 64)
    for name in ("sum", "softmax", "matmul", "cat"):
        a = tt.ones(64, 64)
        operands = [a, other]   # made beforehand: the first allocation is then the C function's own
        run = {"sum": lambda a=a: a.sum(0), "softmax": lambda a=a: tt.softmax(a, 1), "matmul": lambda a=a: a @ other,
               "cat": lambda x=operands: tt.cat(x)}[name]
        want = run().numpy()
        replaced = []

        def replace_storage(phase, info, a=a, replaced=replaced):
            if phase == "start" and not replaced:
                a.data = tt.full((64, 64), 5.0)
                replaced.append(tt.full((64, 64), 7.0))

        result = collecting_at_every_allocation(replace_storage, run)
        assert replaced, name
        np.testing.assert_array_equal(result.numpy(), want, err_msg=name)


def test_c_kernel_paths_hold_their_operand_while_another_thread_replaces_it() -> None:
    # the GIL is released for inputs this large: another thread gives the operand new memory and
    # allocates more of the same size (which would reuse the old block, had it been released)
    n = 1 << 18
    a = tt.ones(n)
    stop, sums, errors = threading.Event(), [], []

    def replace():
        value = 2.0
        while not stop.is_set():
            a.data = tt.full((n,), value)
            filler = tt.full((n,), 7.0)
            value = 3.0 if value == 2.0 else 2.0
            del filler

    def reduce():
        try:
            for _ in range(400):
                sums.append((a.sum().item(), tt.softmax(a.view(512, 512), 1)[0, 0].item()))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=replace), threading.Thread(target=reduce)]
    for t in threads:
        t.start()
    threads[1].join()
    stop.set()
    threads[0].join()
    assert not errors and len(sums) == 400
    assert {total for total, _ in sums} <= {float(n), 2.0 * n, 3.0 * n}
    assert {first for _, first in sums} == {1.0 / 512}
