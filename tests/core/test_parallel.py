"""The thread count: set and read back, bad values refused with the function's name."""

from __future__ import annotations

import os

import numpy as np
import pytest

import t_tensor as tt


@pytest.fixture(autouse=True)
def _restore_thread_count():
    before = tt.get_num_threads()
    yield
    tt.set_num_threads(before)


def test_default_is_the_cpu_count():
    assert tt.get_num_threads() == min(os.cpu_count() or 1, 64)


@pytest.mark.parametrize("n", [1, 2, 3, 64])
def test_set_then_get(n):
    tt.set_num_threads(n)
    assert tt.get_num_threads() == n


@pytest.mark.parametrize("n", [0, -1, 65])
def test_out_of_range_is_refused(n):
    with pytest.raises(ValueError, match="set_num_threads: the number of threads must be between 1 and 64"):
        tt.set_num_threads(n)


def test_non_int_is_refused():
    with pytest.raises(TypeError, match="set_num_threads: expected an int"):
        tt.set_num_threads(2.0)


# ---------------------------------------------------------------- threaded kernels
# Every tensor below is larger than the kernels' grain (32K elements per chunk), so with two
# threads the work really splits. Each result is computed at one and at two threads: elementwise
# ops, copies, reductions that split by output, softmax and scans give the same bits (each output
# is computed by exactly one thread, in the same order); full reductions are cut into parts that
# depend only on the element count, so they agree exactly too. Everything is also checked
# against NumPy (exactly for integers, with a tolerance for float sums).

RNG = np.random.default_rng(1234)
BIG = (384, 520)   # 199680 elements: several chunks at the grain


def _at_threads(fn, *args):
    """fn(*args) at one thread and at two, as NumPy arrays."""
    results = []
    for n in (1, 2):
        tt.set_num_threads(n)
        out = fn(*args)
        results.append(out.numpy() if isinstance(out, tt.Tensor) else np.asarray(out))
    return results


def _floats(dtype=np.float32, shape=BIG):
    return RNG.standard_normal(shape).astype(dtype)


def _ints(dtype=np.int64, shape=BIG, low=-1000, high=1000):
    return RNG.integers(low, high, size=shape).astype(dtype)


LAYOUT_VIEWS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.T,
    "sliced": lambda t: t[1:, ::2],
}


@pytest.mark.parametrize("layout", list(LAYOUT_VIEWS))
@pytest.mark.parametrize(
    "name, fn, ref",
    [
        ("add", lambda a, b: a + b, np.add),
        ("mul", lambda a, b: a * b, np.multiply),
        ("maximum", tt.maximum, np.maximum),
        ("lt", lambda a, b: a < b, np.less),
    ],
)
def test_binary_float_same_at_one_and_two_threads(layout, name, fn, ref):
    a, b = _floats(), _floats()
    view = LAYOUT_VIEWS[layout]
    ta, tb = view(tt.asarray(a)), view(tt.asarray(b))
    one, two = _at_threads(fn, ta, tb)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, ref(view(a), view(b)))


@pytest.mark.parametrize("layout", list(LAYOUT_VIEWS))
def test_integer_ops_same_at_one_and_two_threads(layout):
    a, b = _ints(), _ints(low=1, high=50)
    view = LAYOUT_VIEWS[layout]
    ta, tb = view(tt.asarray(a)), view(tt.asarray(b))
    for fn, ref in [(lambda x, y: x // y, np.floor_divide), (lambda x, y: x % y, np.remainder),
                    (lambda x, y: x - y, np.subtract)]:
        one, two = _at_threads(fn, ta, tb)
        np.testing.assert_array_equal(one, two)
        np.testing.assert_array_equal(one, ref(view(a), view(b)))


def test_broadcast_binary_and_unary_same_at_one_and_two_threads():
    a, row = _floats(np.float64), _floats(np.float64, shape=(BIG[1],))
    ta, trow = tt.asarray(a), tt.asarray(row)
    one, two = _at_threads(lambda x, y: x * y, ta, trow)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, a * row)
    one, two = _at_threads(tt.exp, ta.T)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, np.exp(a.T), rtol=1e-15)
    one, two = _at_threads(lambda x: tt.where(x > 0, x, trow), ta)
    np.testing.assert_array_equal(one, np.where(a > 0, a, row))


@pytest.mark.parametrize("where", [0, BIG[0] * BIG[1] // 2, BIG[0] * BIG[1] - 1])
def test_integer_division_by_zero_found_by_any_thread(where):
    a, b = _ints(), _ints(low=1, high=50)
    b.reshape(-1)[where] = 0
    for n in (1, 2):
        tt.set_num_threads(n)
        with pytest.raises(RuntimeError, match="floor_divide: ZeroDivisionError"):
            tt.asarray(a) // tt.asarray(b)


@pytest.mark.parametrize("layout", list(LAYOUT_VIEWS))
@pytest.mark.parametrize("dtype", [tt.float16, tt.int32, tt.float64, tt.bool])
def test_copies_same_at_one_and_two_threads(layout, dtype):
    a = _floats(np.float32) * 100
    view = LAYOUT_VIEWS[layout]
    ta = view(tt.asarray(a))
    one, two = _at_threads(lambda x: x.to(dtype), ta)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, view(a).astype(one.dtype))
    one, two = _at_threads(lambda x: x.contiguous(), ta)
    np.testing.assert_array_equal(one, view(a))


REDUCTIONS = [
    ("sum", lambda t, d: t.sum(dim=d), lambda a, d: a.sum(axis=d)),
    ("mean", lambda t, d: t.mean(dim=d), lambda a, d: a.mean(axis=d)),
    ("max", lambda t, d: t.amax(dim=d), lambda a, d: a.max(axis=d)),
    ("argmin", lambda t, d: t.argmin(dim=d), lambda a, d: a.argmin(axis=d)),
    ("var", lambda t, d: t.var(dim=d), lambda a, d: a.var(axis=d, ddof=1)),
    ("logsumexp", lambda t, d: tt.logsumexp(t, dim=d),
     lambda a, d: np.log(np.exp(a.astype(np.float64)).sum(axis=d))),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("name, fn, ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_float_reductions_same_at_one_and_two_threads(layout, dim, name, fn, ref):
    a = _floats(np.float32)
    view = LAYOUT_VIEWS[layout]
    t = view(tt.asarray(a))
    if name == "argmin" and dim is None:
        one, two = _at_threads(lambda x: x.argmin(), t)
        want = view(a).argmin()
    elif dim is None:
        dims = (0, 1)
        one, two = _at_threads(fn, t, dims)
        want = ref(view(a).astype(np.float64), dims)
    else:
        one, two = _at_threads(fn, t, dim)
        want = ref(view(a).astype(np.float64), dim)
    np.testing.assert_array_equal(one, two)
    if name == "argmin":
        np.testing.assert_array_equal(one, want)
    else:
        np.testing.assert_allclose(one.astype(np.float64), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_integer_reductions_exact_at_one_and_two_threads(dim):
    a = _ints(np.int32)
    t = tt.asarray(a)
    dims = (0, 1) if dim is None else dim
    for fn, ref in [(lambda x: x.sum(dim=dims), lambda y: y.sum(axis=dims, dtype=np.int64)),
                    (lambda x: x.amin(dim=dims), lambda y: y.min(axis=dims)),
                    (lambda x: (x > 0).any(dim=dims), lambda y: (y > 0).any(axis=dims))]:
        one, two = _at_threads(fn, t)
        np.testing.assert_array_equal(one, two)
        np.testing.assert_array_equal(one, ref(a))


def test_full_float_sum_is_deterministic_across_thread_counts():
    a = _floats(np.float32, shape=(3_000_001,))
    t = tt.asarray(a)
    results = set()
    for n in (1, 2, 3, 4):
        tt.set_num_threads(n)
        results.add(t.sum().item())
    assert len(results) == 1
    assert abs(results.pop() - a.astype(np.float64).sum()) < 1e-3


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_same_at_one_and_two_threads(dim, log):
    a = _floats(np.float32)
    t = tt.asarray(a)
    fn = tt.log_softmax if log else tt.softmax
    one, two = _at_threads(lambda x: fn(x, dim=dim), t)
    np.testing.assert_array_equal(one, two)
    x = a.astype(np.float64) - a.max(axis=dim, keepdims=True)
    want = x - np.log(np.exp(x).sum(axis=dim, keepdims=True)) if log else np.exp(x) / np.exp(x).sum(
        axis=dim, keepdims=True)
    np.testing.assert_allclose(one, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])
def test_scan_same_at_one_and_two_threads(dim):
    a = _ints(np.int64)
    one, two = _at_threads(lambda x: tt.cumsum(x, dim=dim), tt.asarray(a))
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, np.cumsum(a, axis=dim))
    f = _floats(np.float64)
    one, two = _at_threads(lambda x: tt.cumsum(x, dim=dim), tt.asarray(f).T)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, np.cumsum(f.T, axis=dim), rtol=1e-10, atol=1e-10)


def test_concurrent_python_threads_give_right_results():
    import threading

    tt.set_num_threads(2)
    a, b = _floats(), _floats()
    ta, tb = tt.asarray(a), tt.asarray(b)
    want_sum, want_add = (ta.sum(dim=1)).numpy(), a + b
    errors = []

    def work():
        for _ in range(20):
            if not np.array_equal((ta + tb).numpy(), want_add) or not np.array_equal(ta.sum(dim=1).numpy(),
                                                                                     want_sum):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
