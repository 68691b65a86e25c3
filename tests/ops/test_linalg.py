"""Matrix products: matmul (``@``), mm, bmm, mv, dot, vdot, inner, outer, vecdot, tensordot, einsum,
trace and matrix_transpose, against PyTorch.

Shapes are hypothesis-drawn (every 1-D/2-D/N-D combination of matmul, sizes 0-4 including empty
and size-1 dims, broadcast batch dims), each operand in one of the shared layouts (contiguous,
transposed, step-sliced with an offset, expanded with stride 0), for every dtype the product takes.
Odd sizes around the kernel's blocks (1, 7, 63, 65, 255, 257) and one 200x300x150 product check the
blocking. Integers use their full range, so overflow must wrap exactly as in torch; floats are
compared within a tolerance that grows with the length of the sums. Where torch rejects an input
(mixed dtypes, bool, mismatched shapes), t_tensor must raise too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import (
    LAYOUTS,
    TORCH_DTYPES,
    apply_layout,
    base_shape,
    broadcast_shapes,
    helper_test_exception,
    helper_test_op,
    tolerance,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt

FLOAT_DTYPES = [tt.float16, tt.float32, tt.float64]
INT_DTYPES = [tt.int8, tt.int16, tt.int32, tt.int64, tt.uint8]
PRODUCT_DTYPES = FLOAT_DTYPES + INT_DTYPES  # every dtype but bool
EXAMPLES = 25


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: tt.DType) -> np.ndarray:
    """Floats in [-2, 2]; integers over their whole range (products overflow and must wrap)."""
    if dtype is tt.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        return np.asarray(rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype.numpy))
    return np.asarray(rng.uniform(-2, 2, size=shape), dtype=dtype.numpy)


def compare(inputs, fn, k: int = 1):
    """``fn(lib, *tensors)`` in t_tensor and torch: same shape and dtype, integers exactly, floats
    within a tolerance for sums of ``k`` products of numbers up to 2."""
    want = fn(torch, *[torch.from_numpy(a.copy()) for a in inputs])
    atol, rtol = tolerance(want.dtype)
    got = helper_test_op(
        inputs, lambda *xs: fn(tt, *xs), lambda *xs: fn(torch, *xs), ref="torch", atol=atol * 4 * (k + 1), rtol=rtol
    )
    if not want.dtype.is_floating_point:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    return got


def same_outcome(inputs, fn, k: int = 1):
    """As :func:`compare` when torch accepts the input; when torch raises, t_tensor must raise too."""
    try:
        fn(torch, *[torch.from_numpy(a.copy()) for a in inputs])
    except Exception:  # noqa: BLE001 - torch's exception types vary (RuntimeError, NotImplementedError)
        with pytest.raises((RuntimeError, TypeError, IndexError, ValueError)):
            fn(tt, *[tt.tensor(a.copy()) for a in inputs])
        return None
    return compare(inputs, fn, k)


def operand(rng, shape, dtype, layout):
    """Data for an operand of ``shape`` in ``layout`` (apply the layout inside the compared function)."""
    return values(rng, base_shape(shape, layout), dtype)


# ---------------------------------------------------------------------- matmul, all rank combinations


@st.composite
def matmul_cases(draw):
    nd_a, nd_b = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    _, (batch_a, batch_b) = draw(broadcast_shapes(2))
    batch_a, batch_b = batch_a[len(batch_a) - max(nd_a - 2, 0) :], batch_b[len(batch_b) - max(nd_b - 2, 0) :]
    if nd_a > 2:  # keep the drawn rank even when the strategy gave fewer batch dims
        batch_a = (1,) * (nd_a - 2 - len(batch_a)) + batch_a
    if nd_b > 2:
        batch_b = (1,) * (nd_b - 2 - len(batch_b)) + batch_b
    shape_a = (k,) if nd_a == 1 else batch_a + (m, k)
    shape_b = (k,) if nd_b == 1 else batch_b + (k, n)
    return {
        "shapes": (shape_a, shape_b),
        "k": k,
        "layouts": (draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS))),
        "form": draw(st.sampled_from(["function", "operator", "method", "linalg"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def call_matmul(lib, form, x, y):
    if form == "operator":
        return x @ y
    if form == "method":
        return x.matmul(y)
    return (lib.linalg.matmul if form == "linalg" else lib.matmul)(x, y)


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=matmul_cases())
def test_matmul_matches_torch(dtype, case):
    rng = np.random.default_rng(case["seed"])
    (shape_a, shape_b), (layout_a, layout_b) = case["shapes"], case["layouts"]
    a, b = operand(rng, shape_a, dtype, layout_a), operand(rng, shape_b, dtype, layout_b)
    compare(
        [a, b],
        lambda lib, x, y: call_matmul(
            lib, case["form"], apply_layout(x, layout_a, shape_a), apply_layout(y, layout_b, shape_b)
        ),
        case["k"],
    )


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=matmul_cases())
def test_matmul_shape_mismatch_and_bool_fail_as_in_torch(case):
    """Same draws with bool operands: refused by both, except that torch (and so t_tensor) gives an
    all-False result when there is nothing to sum or no element to compute (not for 1-D @ 1-D).
    Then one operand's last dim off by one: both refuse."""
    rng = np.random.default_rng(case["seed"])
    shape_a, shape_b = case["shapes"]
    a, b = values(rng, shape_a, tt.bool), values(rng, shape_b, tt.bool)
    same_outcome([a, b], lambda lib, x, y: lib.matmul(x, y))
    a = values(rng, shape_a[:-1] + (shape_a[-1] + 1,), tt.float32)
    helper_test_exception([a, b.astype(np.float32)], tt.matmul, torch.matmul, exception=RuntimeError, match="matmul")


ODD = [1, 7, 63, 65]


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.int32, tt.float16], ids=lambda d: d.name)
@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("transposed", "sliced")], ids="-".join)
def test_matmul_odd_sizes(dtype, layouts):
    rng = np.random.default_rng(7)
    for m, k, n in [(m, k, n) for m in ODD for k in ODD for n in ODD if (m + k + n) % 2 == 0 or m == k == n]:
        shape_a, shape_b = (m, k), (k, n)
        a, b = operand(rng, shape_a, dtype, layouts[0]), operand(rng, shape_b, dtype, layouts[1])
        compare(
            [a, b],
            lambda lib, x, y, sa=shape_a, sb=shape_b: apply_layout(x, layouts[0], sa) @ apply_layout(y, layouts[1], sb),
            k,
        )


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.int64], ids=lambda d: d.name)
def test_matmul_large_and_across_blocks(dtype):
    rng = np.random.default_rng(3)
    for m, k, n in [(200, 300, 150), (1, 257, 513), (257, 255, 3), (130, 1, 300)]:
        a, b = values(rng, (m, k), dtype), values(rng, (k, n), dtype)
        compare([a, b], lambda lib, x, y: lib.matmul(x, y), k)
        compare([a.T.copy(), b.T.copy()], lambda lib, x, y: lib.matmul(x.T, y.T), k)  # transposed operands


def test_matmul_broadcast_batch_is_not_copied_and_empty_k_gives_zeros():
    a = tt.ones(1, 3, 4).expand(1000, 3, 4)  # stride 0 batch: read where it lies
    b = tt.ones(1000, 4, 2)
    assert (a @ b).tolist() == [[[4.0] * 2] * 3] * 1000
    assert (tt.ones(2, 0) @ tt.ones(0, 3)).tolist() == [[0.0] * 3] * 2
    assert (tt.ones(0, dtype=tt.int8) @ tt.ones(0, dtype=tt.int8)).item() == 0


def test_matmul_operator_forms():
    a, b = tt.tensor([[1, 2], [3, 4]]), tt.tensor([[1, 0], [0, 1]])
    assert (a @ b).tolist() == a.tolist()
    for product in (np.eye(2, dtype=np.int64) @ a, a @ np.eye(2, dtype=np.int64)):  # ndarray @ Tensor: __rmatmul__
        assert isinstance(product, tt.Tensor) and product.tolist() == a.tolist()
    c = a
    c @= b  # no __imatmul__ (as torch): rebinding
    assert c.tolist() == a.tolist() and not hasattr(tt.Tensor, "__imatmul__")
    with pytest.raises(TypeError):
        a @ 2  # noqa: B018
    with pytest.raises(TypeError):
        2 @ a  # noqa: B018
    with pytest.raises(RuntimeError, match="matmul: both arguments to matmul need to be at least 1D"):
        tt.tensor(2) @ a  # noqa: B018


# ---------------------------------------------------------------------- mm, bmm, mv, dot, vdot


@st.composite
def sizes(draw, count: int):
    return tuple(draw(st.integers(0, 4)) for _ in range(count))


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    mkn=sizes(4),
    layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
    seed=st.integers(0, 2**32 - 1),
    method=st.booleans(),
)
def test_mm_bmm_mv_dot_vdot_match_torch(dtype, mkn, layouts, seed, method):
    rng = np.random.default_rng(seed)
    m, k, n, batch = mkn
    la, lb = layouts
    cases = [
        ("mm", (m, k), (k, n)),
        ("bmm", (batch, m, k), (batch, k, n)),
        ("mv", (m, k), (k,)),
        ("dot", (k,), (k,)),
        ("vdot", (k,), (k,)),
    ]
    for name, shape_a, shape_b in cases:
        a, b = operand(rng, shape_a, dtype, la), operand(rng, shape_b, dtype, lb)

        def fn(lib, x, y, name=name, shape_a=shape_a, shape_b=shape_b):
            x, y = apply_layout(x, la, shape_a), apply_layout(y, lb, shape_b)
            return getattr(x, name)(y) if method else getattr(lib, name)(x, y)

        compare([a, b], fn, k)


ERRORS = [
    # (name, shape_a, dtype_a, shape_b, dtype_b, message)
    ("matmul", (2, 3), tt.float32, (3, 4), tt.float64, "matmul: expected m1 and m2 to have the same dtype"),
    (
        "matmul",
        (2, 3),
        tt.float32,
        (4, 4),
        tt.float32,
        r"matmul: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x4\)",
    ),
    (
        "matmul",
        (3,),
        tt.float32,
        (4,),
        tt.float32,
        r"matmul: inconsistent tensor size, expected tensor \[3\] and src \[4\]",
    ),
    ("matmul", (2, 2, 3), tt.float32, (3, 3, 4), tt.float32, "matmul: The size of tensor a"),
    ("matmul", (2, 3), tt.float32, (), tt.float32, "matmul: both arguments to matmul need to be at least 1D"),
    ("matmul", (2, 3), tt.bool, (3, 2), tt.bool, "matmul: not implemented for bool"),
    ("mm", (2, 3), tt.float32, (3,), tt.float32, "mm: mat2 must be a matrix"),
    ("mm", (3,), tt.float32, (3, 3), tt.float32, "mm: self must be a matrix"),
    ("mm", (2, 3), tt.int32, (3, 4), tt.float32, "mm: expected m1 and m2 to have the same dtype"),
    ("mm", (2, 3), tt.float32, (4, 3), tt.float32, r"mm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x3\)"),
    ("bmm", (2, 3), tt.float32, (3, 4), tt.float32, "bmm: batch1 must be a 3D tensor"),
    ("bmm", (2, 2, 3), tt.float32, (3, 3, 4), tt.float32, r"bmm: Expected size .* to be: \[2, 3\] but got: \[3, 3\]"),
    ("bmm", (2, 2, 3), tt.float32, (2, 3, 4), tt.float64, "bmm: expected scalar type float32 but found float64"),
    ("bmm", (1, 2, 3), tt.float32, (2, 3, 4), tt.float32, "bmm: Expected size"),
    ("bmm", (2, 2, 3), tt.bool, (2, 3, 4), tt.bool, "bmm: not implemented for bool"),
    ("mv", (2, 3), tt.float32, (4,), tt.float32, r"mv: size mismatch, got mat \(2x3\), vec \(4\)"),
    ("mv", (2, 3), tt.float32, (3, 1), tt.float32, "mv: expected a matrix and a vector"),
    ("mv", (2, 3), tt.float32, (3,), tt.float64, "mv: expected m1 and m2 to have the same dtype"),
    ("mv", (2, 3), tt.bool, (3,), tt.bool, "mv: not implemented for bool"),
    ("dot", (3,), tt.float32, (4,), tt.float32, "dot: inconsistent tensor size"),
    ("dot", (3, 1), tt.float32, (3,), tt.float32, "dot: 1D tensors expected, but got 2D and 1D tensors"),
    ("dot", (3,), tt.float32, (3,), tt.float64, "dot: expected both vectors to have same dtype"),
    ("dot", (3,), tt.bool, (3,), tt.bool, "dot: not implemented for bool"),
    ("vdot", (), tt.float32, (3,), tt.float32, "vdot: 1D tensors expected"),
    ("inner", (2, 3), tt.float32, (4, 2), tt.float32, r"inner: the last dimension must match .* \[2, 3\] and \[4, 2\]"),
    ("inner", (2, 3), tt.int32, (4, 3), tt.int8, "inner: both inputs should have same dtype"),
    ("inner", (3,), tt.bool, (3,), tt.bool, "inner: not implemented for bool"),
    ("outer", (3, 2), tt.float32, (4,), tt.float32, "outer: Expected 1-D argument self, but got 2-D"),
    ("outer", (3,), tt.float32, (), tt.float32, "outer: Expected 1-D argument vec2, but got 0-D"),
    ("tensordot", (2, 3, 4), tt.float32, (3, 4, 5), tt.float64, "tensordot: both inputs should have same dtype"),
    ("tensordot", (2, 3, 4), tt.float32, (4, 4, 5), tt.float32, "tensordot: contracted dimensions need to match"),
    ("tensordot", (2, 3, 4), tt.bool, (3, 4, 5), tt.bool, "tensordot: not implemented for bool"),
]


@pytest.mark.parametrize("name, shape_a, dtype_a, shape_b, dtype_b, match", ERRORS, ids=lambda v: str(v))
def test_errors_as_torch(name, shape_a, dtype_a, shape_b, dtype_b, match):
    a, b = np.ones(shape_a, dtype_a.numpy), np.ones(shape_b, dtype_b.numpy)
    helper_test_exception(
        [a, b], getattr(tt, name), getattr(torch, name), exception=(RuntimeError, TypeError), match=match
    )


def test_non_tensor_arguments_are_refused():
    for fn in (tt.matmul, tt.mm, tt.bmm, tt.mv, tt.dot, tt.inner, tt.outer, tt.tensordot, tt.vecdot):
        with pytest.raises(TypeError, match=f"{fn.__name__}: expected a Tensor"):
            fn([1.0, 2.0], tt.ones(2))


# ---------------------------------------------------------------------- inner, outer, tensordot


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    shapes=broadcast_shapes(2),
    k=st.integers(0, 4),
    layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
    seed=st.integers(0, 2**32 - 1),
)
def test_inner_matches_torch(dtype, shapes, k, layouts, seed):
    rng = np.random.default_rng(seed)
    _, (shape_a, shape_b) = shapes
    shape_a, shape_b = shape_a[:2] + (k,), shape_b[:2] + (k,)
    a, b = operand(rng, shape_a, dtype, layouts[0]), operand(rng, shape_b, dtype, layouts[1])
    compare(
        [a, b],
        lambda lib, x, y: lib.inner(apply_layout(x, layouts[0], shape_a), apply_layout(y, layouts[1], shape_b)),
        k,
    )


def test_inner_with_a_0d_operand_multiplies():
    rng = np.random.default_rng(0)
    compare([np.array(3, np.int8), values(rng, (2, 3), tt.int16)], lambda lib, x, y: lib.inner(x, y))
    compare([values(rng, (3,), tt.float32), np.array(2.0)], lambda lib, x, y: x.inner(y))


@pytest.mark.parametrize("dtype_a", [tt.bool, tt.int8, tt.uint8, tt.float16, tt.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("dtype_b", [tt.bool, tt.int8, tt.float32], ids=lambda d: d.name)
def test_outer_promotes_as_mul(dtype_a, dtype_b):
    rng = np.random.default_rng(1)
    for n, m in [(0, 3), (3, 4), (1, 1)]:
        a, b = values(rng, (2 * n,), dtype_a), values(rng, (m,), dtype_b)
        compare([a, b], lambda lib, x, y: lib.outer(x[::2], y))
        compare([a, b], lambda lib, x, y: x[::2].outer(y))
        compare([a, b], lambda lib, x, y: (lib.linalg.outer if lib is tt else lib.outer)(x[::2], y))


@st.composite
def tensordot_cases(draw):
    nd_a, nd_b = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    shape_a = tuple(draw(st.integers(0, 4)) for _ in range(nd_a))
    shape_b = list(draw(st.integers(0, 4)) for _ in range(nd_b))
    ncon = draw(st.integers(0, min(nd_a, nd_b)))
    if draw(st.booleans()):  # dims as an int: the last ncon of a with the first ncon of b
        dims_a, dims_b = list(range(nd_a - ncon, nd_a)), list(range(ncon))
        dims = ncon
    else:
        dims_a = draw(st.permutations(range(nd_a)))[:ncon]
        dims_b = draw(st.permutations(range(nd_b)))[:ncon]
        dims = ([d - nd_a if draw(st.booleans()) else d for d in dims_a], list(dims_b))
    for da, db in zip(dims_a, dims_b, strict=True):
        shape_b[db] = shape_a[da] if draw(st.integers(0, 4)) else 1  # sometimes a size-1 that broadcasts
    return {
        "shapes": (shape_a, tuple(shape_b)),
        "dims": dims,
        "k": 4**ncon,
        "layouts": (draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS))),
        "axes": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


@pytest.mark.parametrize("dtype", [tt.float16, tt.float32, tt.float64, tt.int8, tt.int64], ids=lambda d: d.name)
@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(case=tensordot_cases())
def test_tensordot_matches_torch(dtype, case):
    rng = np.random.default_rng(case["seed"])
    (shape_a, shape_b), (la, lb), dims = case["shapes"], case["layouts"], case["dims"]
    a, b = operand(rng, shape_a, dtype, la), operand(rng, shape_b, dtype, lb)

    def fn(lib, x, y):
        x, y = apply_layout(x, la, shape_a), apply_layout(y, lb, shape_b)
        if lib is tt and case["axes"]:
            return tt.linalg.tensordot(x, y, axes=dims)
        return lib.tensordot(x, y, dims=dims)

    compare([a, b], fn, case["k"])


def test_tensordot_dims_forms_and_errors():
    a, b = np.ones((2, 3, 4), np.float32), np.ones((3, 4, 5), np.float32)
    compare([a, b], lambda lib, x, y: lib.tensordot(x, y, dims=lib.tensor(2)))
    compare([a, b], lambda lib, x, y: lib.tensordot(x, y, dims=lib.tensor([[1, 2], [0, 1]])))
    compare([a, b], lambda lib, x, y: lib.tensordot(x, y, [[1, 2], [0, 1]]))
    for dims, exc, match in [
        (-1, RuntimeError, "tensordot: tensordot expects dims >= 0"),
        (4, RuntimeError, "tensordot: tensordot expects dims < ndim_a or ndim_b"),
        (2.0, RuntimeError, "tensordot: tensordot expects dims to be int"),
        (([1], [0, 1]), RuntimeError, "tensordot: both dimension lists should have same length"),
        (([1, 1], [0, 0]), RuntimeError, "tensordot: dim 1 appears multiple times"),
        (([0], [5]), IndexError, "tensordot: dimension out of range"),
        ((1, 0), TypeError, "tensordot: dims must be"),
    ]:
        helper_test_exception(
            [a, b],
            lambda x, y, d=dims: tt.tensordot(x, y, dims=d),
            lambda x, y, d=dims: torch.tensordot(x, y, dims=d),
            exception=exc,
            match=match,
        )


# ---------------------------------------------------------------------- vecdot, trace, matrix_transpose


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    shapes=broadcast_shapes(2),
    layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
    dim=st.integers(-4, 3),
    axis=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_vecdot_matches_torch(dtype, shapes, layouts, dim, axis, seed):
    rng = np.random.default_rng(seed)
    result, (shape_a, shape_b) = shapes
    a, b = operand(rng, shape_a, dtype, layouts[0]), operand(rng, shape_b, dtype, layouts[1])
    if not -max(len(result), 1) <= dim < max(len(result), 1):
        dim = -1

    def fn(lib, x, y):
        x, y = apply_layout(x, layouts[0], shape_a), apply_layout(y, layouts[1], shape_b)
        if lib is tt and axis:
            return tt.vecdot(x, y, axis=dim)
        return lib.linalg.vecdot(x, y, dim=dim)

    same_outcome([a, b], fn, 4)  # torch refuses two 1-D operands of different lengths


def test_vecdot_errors_as_torch():
    f32, f64, i8 = np.ones((2, 3), np.float32), np.ones(3, np.float64), np.ones(3, np.int8)
    vecdot = torch.linalg.vecdot
    helper_test_exception(
        [f32, f64], tt.vecdot, vecdot, exception=RuntimeError, match="vecdot: Expected x and y to have the same dtype"
    )
    helper_test_exception([i8, i8], tt.vecdot, vecdot, exception=TypeError, match="vecdot: Expected a floating point")
    helper_test_exception(
        [np.ones(3, np.float32), np.ones(1, np.float32)],
        tt.vecdot,
        vecdot,
        exception=RuntimeError,
        match="vecdot: inconsistent tensor size",
    )
    helper_test_exception(
        [f32, np.ones(4, np.float32)], tt.vecdot, vecdot, exception=RuntimeError, match="vecdot: The size of tensor a"
    )
    helper_test_exception(
        [f32, f32],
        lambda x, y: tt.vecdot(x, y, dim=2),
        lambda x, y: vecdot(x, y, dim=2),
        exception=IndexError,
        match="vecdot: dimension out of range",
    )


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(shape=sizes(2), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1), method=st.booleans())
def test_trace_matches_torch(dtype, shape, layout, seed, method):
    rng = np.random.default_rng(seed)
    a = operand(rng, shape, dtype, layout)
    compare(
        [a],
        lambda lib, x: apply_layout(x, layout, shape).trace() if method else lib.trace(apply_layout(x, layout, shape)),
        4,
    )


def test_trace_errors_as_torch():
    helper_test_exception(
        [np.ones((2, 3, 4))],
        tt.trace,
        torch.trace,
        exception=RuntimeError,
        match="trace: expected a matrix, but got tensor with dim 3",
    )
    helper_test_exception([np.ones(3)], tt.trace, torch.trace, exception=RuntimeError, match="trace: expected a matrix")
    helper_test_exception(
        [np.eye(3, dtype=bool)], tt.trace, torch.trace, exception=TypeError, match="trace: not implemented for bool"
    )


def test_matrix_transpose_is_mT_view():
    x = tt.arange(24).view(2, 3, 4)
    y = tt.linalg.matrix_transpose(x)
    assert y.shape == (2, 4, 3) and y.is_shared_with(x)
    assert y.tolist() == torch.arange(24).view(2, 3, 4).mT.tolist()
    assert tt.matrix_transpose(x).stride() == (12, 1, 4)
    with pytest.raises(RuntimeError, match="matrix_transpose: expected a tensor with at least 2 dimensions"):
        tt.linalg.matrix_transpose(tt.ones(3))


# ---------------------------------------------------------------------- out=


@pytest.mark.parametrize(
    "name, shapes",
    [
        ("matmul", [(2, 3), (3, 4)]),
        ("mm", [(2, 3), (3, 4)]),
        ("bmm", [(2, 2, 3), (2, 3, 1)]),
        ("mv", [(2, 3), (3,)]),
        ("dot", [(3,), (3,)]),
        ("vdot", [(3,), (3,)]),
        ("inner", [(2, 3), (3,)]),
        ("outer", [(2,), (3,)]),
        ("tensordot", [(4, 2, 3), (2, 3, 5)]),
    ],
)
def test_out(name, shapes):
    rng = np.random.default_rng(2)
    arrays = [values(rng, s, tt.float64) for s in shapes]
    want = getattr(torch, name)(*[torch.from_numpy(a) for a in arrays])
    out = tt.empty(*want.shape, dtype=tt.float64)
    got = getattr(tt, name)(*[tt.tensor(a) for a in arrays], out=out)
    assert got is out
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match=f"{name}: Expected out tensor to have dtype float64"):
        getattr(tt, name)(*[tt.tensor(a) for a in arrays], out=tt.empty(*want.shape))
    with pytest.raises(RuntimeError, match=f"{name}: out has shape"):
        getattr(tt, name)(*[tt.tensor(a) for a in arrays], out=tt.empty(7, dtype=tt.float64))


def _out_in_layout(shape: tuple[int, ...], layout: str) -> tt.Tensor:
    """A float64 tensor of ``shape`` laid out as named, filled with a sentinel."""
    if layout == "contiguous":
        out = tt.empty(*shape, dtype=tt.float64)
    elif layout == "transposed":  # the last two dims swapped in memory
        out = tt.empty(*shape[:-2], shape[-1], shape[-2], dtype=tt.float64).transpose(-1, -2)
    else:  # every other element of a wider tensor, at an offset
        out = tt.empty(*shape[:-1], 2 * shape[-1] + 1, dtype=tt.float64)[..., 1::2]
    return out.fill_(-7.0)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize(
    "name, shapes",
    [
        ("matmul", [(5, 3), (3, 4)]),
        ("mm", [(5, 3), (3, 4)]),
        ("matmul", [(2, 5, 3), (3, 4)]),
        ("bmm", [(2, 5, 3), (2, 3, 4)]),
        ("matmul", [(40, 70), (70, 33)]),
    ],
)
def test_out_written_in_place(name, shapes, layout):
    # A product is written straight into `out`, whatever its strides (the kernel takes C's), and
    # out's version moves, so a tensor saved for backward before the write is caught.
    rng = np.random.default_rng(3)
    arrays = [values(rng, s, tt.float64) for s in shapes]
    want = getattr(torch, name)(*[torch.from_numpy(a) for a in arrays])
    out = _out_in_layout(tuple(want.shape), layout)
    leaf = tt.ones(1, requires_grad=True)
    product = leaf * out  # saves `out` for backward
    operands = [tt.tensor(a) for a in arrays]
    allocations = tt.memory_stats()["num_allocs"]
    got = getattr(tt, name)(*operands, out=out)
    assert tt.memory_stats()["num_allocs"] == allocations  # no result tensor was made and copied
    assert got is out
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        product.sum().backward()


@pytest.mark.parametrize("shapes", [[(3,), (3, 4)], [(5, 3), (3,)], [(2, 5, 3), (3,)], [(3,), (2, 3, 4)]])
def test_out_with_one_dimensional_operand(shapes):
    # The dim a 1-D operand adds is not in the result: C's stride for it is never used.
    rng = np.random.default_rng(4)
    arrays = [values(rng, s, tt.float64) for s in shapes]
    want = torch.matmul(*[torch.from_numpy(a) for a in arrays])
    wide = tt.empty(*want.shape[:-1], 2 * want.shape[-1], dtype=tt.float64).fill_(-7.0)
    out = wide[..., ::2]
    got = tt.matmul(*[tt.tensor(a) for a in arrays], out=out)
    assert got is out
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(wide[..., 1::2].numpy(), -7.0)  # the gaps are untouched


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.int64])
def test_out_aliasing_an_operand(dtype):
    # out= one of the operands: the kernel would read what it had just written, so the product
    # goes through a new tensor first, as before.
    rng = np.random.default_rng(5)
    a_np, b_np = values(rng, (6, 6), dtype), values(rng, (6, 6), dtype)
    want = torch.from_numpy(a_np) @ torch.from_numpy(b_np)
    for target in ("a", "b", "a.T", "row of b"):
        a, b = tt.tensor(a_np), tt.tensor(b_np)
        if target == "row of b":
            big = tt.tensor(np.concatenate([b_np, b_np]))
            b, out = big[:6], big[3:9]
        else:
            out = {"a": a, "b": b, "a.T": a.T}[target]
        got = tt.matmul(a, b, out=out)
        assert got is out
        np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5 if dtype is tt.float32 else 1e-12,
                                   err_msg=target)


def test_out_with_repeated_elements_is_refused():
    # An expanded out holds one element many times: refused, as PyTorch does, not half written.
    a, b = tt.ones(3, 2), tt.ones(2, 4)
    out = tt.zeros(1, 4).expand(3, 4)
    with pytest.raises(RuntimeError, match="more than one element"):
        tt.matmul(a, b, out=out)


# ---------------------------------------------------------------------- einsum

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(0, 3)]),
    ("ij", [(2, 3)]),
    ("iJ", [(2, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bik", [(2, 0, 3), (2, 3, 4)]),
    ("...ij,...jk", [(2, 3, 3), (3, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("i,i", [(4,), (4,)]),
    ("i,i", [(2,), (1,)]),
    ("i,i->i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,j", [(0,), (3,)]),
    ("i,j->", [(2,), (3,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ij,j", [(2, 3), (1,)]),
    ("ij,ij->", [(3, 3), (3, 3)]),
    ("ij,ij->i", [(3, 3), (3, 3)]),
    ("ij,ij->ij", [(3, 3), (3, 3)]),
    ("ij,jk->", [(2, 3), (3, 4)]),
    ("ij,jk->k", [(2, 3), (3, 4)]),
    ("ij,k->k", [(2, 3), (4,)]),
    ("iij->j", [(3, 3, 4)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ijk,ikj->k", [(2, 3, 4), (2, 4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,de->ae", [(2, 2), (2, 3), (3, 1), (1, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    (" i j -> j i ", [(2, 3)]),
    ("", [()]),
    ("->", [()]),
    (",->", [(), ()]),
    ("i,->i", [(3,), ()]),
]


@pytest.mark.parametrize(
    "dtype", [tt.float32, tt.float64, tt.float16, tt.int8, tt.int64, tt.uint8, tt.bool], ids=lambda d: d.name
)
@pytest.mark.parametrize("equation, shapes", EINSUM, ids=[f"{e}|{s}" for e, s in EINSUM])
def test_einsum_matches_torch(dtype, equation, shapes):
    rng = np.random.default_rng(abs(hash(equation)) % 2**32)
    arrays = [values(rng, s, dtype) for s in shapes]
    same_outcome(arrays, lambda lib, *xs: lib.einsum(equation, *xs), 16)
    if dtype is tt.float64:  # operands as one list; and transposed/sliced views of them
        same_outcome(arrays, lambda lib, *xs: lib.einsum(equation, list(xs)), 16)
        views = [values(rng, tuple(2 * n + 1 for n in s), dtype) for s in shapes]
        same_outcome(views, lambda lib, *xs: lib.einsum(equation, *[x[(slice(1, None, 2),) * x.ndim] for x in xs]), 16)


@pytest.mark.parametrize("dtype", [tt.float32, tt.int32], ids=lambda d: d.name)
def test_einsum_mixed_dtypes_as_torch(dtype):
    rng = np.random.default_rng(5)
    for equation, shapes in [
        ("i,j", [(3,), (4,)]),
        ("i,i", [(3,), (3,)]),
        ("i,i->i", [(3,), (3,)]),
        ("ij,jk", [(2, 3), (3, 2)]),
    ]:
        a, b = values(rng, shapes[0], dtype), values(rng, shapes[1], tt.float64)
        same_outcome([a, b], lambda lib, x, y, e=equation: lib.einsum(e, x, y))


EINSUM_ERRORS = [
    (
        "ij",
        [(2, 3, 3)],
        "the number of subscripts in the equation \\(2\\) does not match the number of dimensions \\(3\\)",
    ),
    ("...ijk", [(2, 3)], "the number of subscripts in the equation \\(3\\) is more than the number of dimensions"),
    (
        "ij,jk",
        [(2, 3), (4, 3)],
        "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3",
    ),
    ("ij->k", [(2, 3)], "output subscript k does not appear in the equation for any input operand"),
    ("ij->ii", [(2, 3)], "output subscript i appears more than once in the output"),
    ("i1", [(2, 3)], "invalid subscript given at index 1"),
    ("ij->j1", [(2, 3)], "invalid subscript given at index 5"),
    ("ij,jk", [(2, 3)], "fewer operands were provided than specified"),
    ("ij", [(2, 3), (3,)], "more operands were provided than specified"),
    ("i.j", [(2, 3)], "found '.' for operand 0 that is not part of any ellipsis"),
    ("......", [(2, 3)], "found '.' for operand 0 for which an ellipsis was already found"),
    ("...->......", [(2, 3)], "found '.' for output but an ellipsis"),
    ("...->..", [(2, 3)], "found '.' for output that is not part of any ellipsis"),
    ("ii", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    ("...,...", [(2, 3), (3, 2)], "dimension 0 covered by ellipsis in operand 1 has size 3"),
]


@pytest.mark.parametrize("equation, shapes, match", EINSUM_ERRORS, ids=[e for e, _, _ in EINSUM_ERRORS])
def test_einsum_errors_as_torch(equation, shapes, match):
    arrays = [np.ones(s, np.float32) for s in shapes]
    helper_test_exception(
        arrays,
        lambda *xs: tt.einsum(equation, *xs),
        lambda *xs: torch.einsum(equation, *xs),
        exception=RuntimeError,
        match="einsum\\(\\): " + match,
    )


def test_einsum_argument_errors():
    with pytest.raises(RuntimeError, match="einsum\\(\\): must provide at least one operand"):
        tt.einsum("i")
    with pytest.raises(TypeError, match="einsum"):
        tt.einsum("i", [1, 2])
    with pytest.raises(TypeError, match="einsum"):
        tt.einsum(3, tt.ones(2))


def test_einsum_single_operand_without_sum_is_a_view():
    x = tt.arange(9).view(3, 3)
    for equation in ("ij->ji", "ii->i"):
        y = tt.einsum(equation, x)
        assert y.is_shared_with(x) and y.tolist() == torch.einsum(equation, torch.arange(9).view(3, 3)).tolist()


def test_dtype_coverage_is_torchs():
    """The dtypes tested as products are exactly those torch multiplies (all but bool)."""
    ok = []
    for dtype in TORCH_DTYPES:
        try:
            torch.ones(2, 2, dtype=TORCH_DTYPES[dtype]) @ torch.ones(2, 2, dtype=TORCH_DTYPES[dtype])
            ok.append(dtype)
        except (RuntimeError, NotImplementedError):
            pass
    assert ok == [d for d in TORCH_DTYPES if d in PRODUCT_DTYPES]


# ---------------------------------------------------------------------- the tt.linalg namespace (torch.linalg)


@st.composite
def batched_matrix(draw, square: bool = False):
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    m = draw(st.integers(1, 4))
    n = m if square else draw(st.integers(1, 4))
    return batch + (m, n)


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(shape=batched_matrix(), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1))
def test_linalg_norms_and_svdvals_match_torch(dtype, shape, layout, seed):
    a = operand(np.random.default_rng(seed), shape, dtype, layout)
    view = lambda x: apply_layout(x, layout, shape)  # noqa: E731 - one layout for every call below
    compare([a], lambda lib, x: lib.linalg.norm(view(x)), 8)
    compare([a], lambda lib, x: lib.linalg.norm(view(x), dim=-1), 8)
    compare([a], lambda lib, x: lib.linalg.norm(view(x), 1, dim=(-2, -1), keepdim=True), 8)
    compare([a], lambda lib, x: lib.linalg.norm(view(x), "nuc", dim=(-1, -2)), 8)
    compare([a], lambda lib, x: lib.linalg.svdvals(view(x)), 8)


def test_linalg_norm_with_ord_and_no_dim_takes_the_input_rank():
    v, m = np.arange(1.0, 4.0), np.arange(6.0).reshape(2, 3)
    compare([v], lambda lib, x: lib.linalg.norm(x, 3), 4)
    compare([m], lambda lib, x: lib.linalg.norm(x, float("inf")), 4)
    compare([m], lambda lib, x: lib.linalg.norm(x, 2), 4)
    helper_test_exception(
        [np.ones((2, 2, 2))],
        lambda x: tt.linalg.norm(x, 2),
        lambda x: torch.linalg.norm(x, 2),
        exception=RuntimeError,
        match="linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D",
    )
    helper_test_exception(
        [np.ones((2, 2, 2))],
        lambda x: tt.linalg.norm(x, dim=(0, 1, 2)),
        lambda x: torch.linalg.norm(x, dim=(0, 1, 2)),
        exception=RuntimeError,
        match="linalg.norm: If dim is specified, it must be of length 1 or 2",
    )


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    shape=batched_matrix(), offset=st.integers(-4, 4), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1)
)
def test_linalg_diagonal_and_trace_match_torch(dtype, shape, offset, layout, seed):
    a = operand(np.random.default_rng(seed), shape, dtype, layout)
    got = compare([a], lambda lib, x: lib.linalg.diagonal(apply_layout(x, layout, shape), offset=offset))
    assert got.shape == shape[:-2] + (max(0, min(shape[-2] + min(offset, 0), shape[-1] - max(offset, 0))),)
    # torch has no linalg.trace: the array API's batched trace is the sum of torch.linalg.diagonal
    compare(
        [a],
        lambda lib, x: (
            tt.linalg.trace(apply_layout(x, layout, shape), offset=offset)
            if lib is tt
            else torch.linalg.diagonal(apply_layout(x, layout, shape), offset=offset).sum(-1)
        ),
        4,
    )


def test_linalg_diagonal_is_a_view_and_trace_takes_dtype():
    x = tt.arange(8).view(2, 2, 2)
    assert tt.linalg.diagonal(x).is_shared_with(x)
    assert tt.linalg.trace(x, dtype=tt.float64).dtype is tt.float64
    with pytest.raises(RuntimeError, match="linalg.trace: expected a tensor with at least 2 dimensions"):
        tt.linalg.trace(tt.ones(3))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.int32, tt.int64], ids=lambda d: d.name)
@settings(max_examples=EXAMPLES, deadline=None)
@given(shapes=broadcast_shapes(2), dim=st.integers(0, 3), seed=st.integers(0, 2**32 - 1))
def test_linalg_cross_matches_torch(dtype, shapes, dim, seed):
    shape, (shape_a, shape_b) = shapes
    shape_a, shape_b = (1,) * (len(shape) - len(shape_a)) + shape_a, (1,) * (len(shape) - len(shape_b)) + shape_b
    d = min(dim, len(shape))
    shape_a, shape_b = shape_a[:d] + (3,) + shape_a[d:], shape_b[:d] + (3,) + shape_b[d:]
    rng = np.random.default_rng(seed)
    a, b = values(rng, shape_a, dtype), values(rng, shape_b, dtype)
    compare([a, b], lambda lib, x, y: lib.linalg.cross(x, y, dim=d), 2)


def test_linalg_cross_errors_as_torch():
    helper_test_exception(
        [np.ones((2, 4)), np.ones((2, 4))],
        tt.linalg.cross,
        torch.linalg.cross,
        exception=RuntimeError,
        match="linalg.cross: inputs dimension -1 must have length 3",
    )


# ---------------------------------------------------------------------- the float GEMM engine
# The float32/float64 products run on a packed, cache-blocked GEMM with micro-kernels picked at run
# time: AVX-512F, AVX2+FMA, or generic C, each with its own blocking (csrc/src/kernels/matmul.c).
# Each case below runs on every micro-kernel this CPU can run, on 1 and 2 threads, against NumPy in
# float64.

from t_tensor._capi import ffi, lib  # noqa: E402


def _supported_kernels() -> list[str]:
    kernels = [name for name in ("generic", "avx2", "avx512") if lib.tt_gemm_set_kernel(name.encode()) == 0]
    lib.tt_gemm_set_kernel(ffi.NULL)
    return kernels


GEMM_KERNELS = _supported_kernels()


@pytest.fixture(params=[(k, t) for k in GEMM_KERNELS for t in (1, 2)], ids=lambda p: f"{p[0]}-{p[1]}t")
def gemm_config(request):
    kernel, threads = request.param
    before = tt.get_num_threads()
    assert lib.tt_gemm_set_kernel(kernel.encode()) == 0
    tt.set_num_threads(threads)
    try:
        assert ffi.string(lib.tt_gemm_kernel_name()).decode() == kernel
        yield kernel
    finally:
        lib.tt_gemm_set_kernel(ffi.NULL)
        tt.set_num_threads(before)


def test_gemm_kernel_selection():
    """tt_gemm_set_kernel names a kernel, rejects unknown names, and NULL/"" restore the default;
    tt_gemm_force_generic still forces the generic one."""
    import os

    default = ffi.string(lib.tt_gemm_kernel_name()).decode()
    assert default == expected_default_kernel(os.environ.get("TT_GENERIC_KERNELS"))
    assert lib.tt_gemm_set_kernel(b"sse9") == lib.TT_ERR_INVALID_ARG
    assert ffi.string(lib.tt_gemm_kernel_name()).decode() == default
    for kernel in ("avx2", "avx512"):
        if kernel not in GEMM_KERNELS:
            assert lib.tt_gemm_set_kernel(kernel.encode()) == lib.TT_ERR_UNSUPPORTED_DTYPE
    try:
        lib.tt_gemm_force_generic(1)
        assert ffi.string(lib.tt_gemm_kernel_name()).decode() == "generic"
        lib.tt_gemm_force_generic(0)
        assert ffi.string(lib.tt_gemm_kernel_name()).decode() == default
        assert lib.tt_gemm_set_kernel(b"generic") == 0
        assert lib.tt_gemm_set_kernel(b"") == 0
        assert ffi.string(lib.tt_gemm_kernel_name()).decode() == default
    finally:
        lib.tt_gemm_set_kernel(ffi.NULL)


def _gemm_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _gemm_check(got, a: np.ndarray, b: np.ndarray, dtype) -> None:
    k = a.shape[-1]
    want = _gemm_reference(a, b)
    got = got.numpy()
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    eps = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=10 * eps, atol=eps * 4 * (k + 1))


def _operand(rng: np.random.Generator, rows: int, cols: int, dtype, layout: str):
    """A (rows, cols) Tensor laid out contiguous, transposed (column-major) or as a strided slice."""
    if layout == "transposed":
        base = rng.uniform(-1, 1, (cols, rows)).astype(dtype)
        return tt.from_numpy(base).T, base.T
    if layout == "sliced":
        base = rng.uniform(-1, 1, (2 * rows + 1, cols + 3)).astype(dtype)
        return tt.from_numpy(base)[1::2, 2 : cols + 2], base[1::2, 2 : cols + 2]
    base = rng.uniform(-1, 1, (rows, cols)).astype(dtype)
    return tt.from_numpy(base), base


GEMM_SIZES = [(1, 1, 1), (7, 7, 7), (1, 65, 63), (63, 1, 65), (65, 63, 7), (63, 65, 257), (7, 1000, 3), (130, 40, 600)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mnk", GEMM_SIZES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_odd_sizes_and_layouts(gemm_config, dtype, mnk):
    m, n, k = mnk
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    for la, lb in [("contiguous", "contiguous"), ("transposed", "sliced"), ("sliced", "transposed")]:
        ta, a = _operand(rng, m, k, dtype, la)
        tb, b = _operand(rng, k, n, dtype, lb)
        _gemm_check(ta @ tb, a, b, dtype)


# Sizes around the block sizes of both vector families (MR 6/12, NR 16/32, MC 144/240, KC 256, NC 4096)
# and of the packed-B budget (k packed in several blocks when k x NC is large): several MC blocks per
# unit, k one past a KC multiple, a thin m split into column units, n one past NC; n of 16 or 20 columns,
# which the AVX-512 family computes transposed (fewer padded tiles).
GEMM_BLOCK_SIZES = [
    (481, 33, 257), (250, 70, 520), (13, 1000, 300), (12, 32, 256), (145, 17, 511), (13, 4100, 1100),
    (100, 16, 40), (300, 20, 33),
]


@pytest.mark.parametrize("mnk", GEMM_BLOCK_SIZES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_block_edges(gemm_config, mnk):
    m, n, k = mnk
    rng = np.random.default_rng(m + 3 * n + 7 * k)
    for la, lb in [("contiguous", "contiguous"), ("transposed", "transposed")]:
        ta, a = _operand(rng, m, k, np.float32, la)
        tb, b = _operand(rng, k, n, np.float32, lb)
        _gemm_check(ta @ tb, a, b, np.float32)
    ta, a = _operand(rng, m, k, np.float64, "sliced")
    tb, b = _operand(rng, k, n, np.float64, "contiguous")
    _gemm_check(ta @ tb, a, b, np.float64)


def test_gemm_accumulates_into_c(gemm_config):
    """tt_gemm with accumulate=1 (the convolution's bias path) adds to C, over several k blocks."""
    rng = np.random.default_rng(5)
    for m, n, k in [(37, 45, 600), (13, 4100, 1100), (37, 600, 1000)]:  # the last: column units, 2 k blocks
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
        want = c.astype(np.float64) + _gemm_reference(a, b)
        pa, pb, pc = (ffi.cast("uintptr_t", x.ctypes.data) for x in (a, b, c))
        assert lib.tt_gemm(lib.TT_FLOAT32, m, n, k, pa, k, 1, pb, n, 1, pc, n, 1, 1) == 0
        np.testing.assert_allclose(c.astype(np.float64), want, rtol=1e-5, atol=1e-6 * 4 * (k + 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_c_entry_adds_the_bias(gemm_config, dtype):
    """tt_linear: C = bias + A @ B, bit for bit what tt_gemm accumulating into C preset to the
    bias gives, on shapes that take each path: the small product, several k blocks, a product
    computed transposed (10 columns: the bias then runs along C's rows), column units and row
    units; B row-major and transposed (as linear's weight), a strided bias."""
    rng = np.random.default_rng(21)
    for m, n, k in [(5, 7, 3), (37, 45, 600), (256, 10, 512), (300, 200, 300), (100, 2048, 1500), (13, 4100, 1100)]:
        for b_transposed in (False, True):
            a = rng.uniform(-1, 1, (m, k)).astype(dtype)
            b = rng.uniform(-1, 1, (n, k)).astype(dtype).T if b_transposed else rng.uniform(-1, 1, (k, n)).astype(dtype)
            bias_store = rng.uniform(-1, 1, 2 * n).astype(dtype)  # the bias is every other element
            got = np.full((m, n), np.nan, dtype)
            preset = np.ascontiguousarray(np.broadcast_to(bias_store[::2], (m, n)))
            item = np.dtype(dtype).itemsize
            rsb, csb = (s // item for s in b.strides)
            ptr = lambda x: ffi.cast("uintptr_t", x.ctypes.data)  # noqa: E731
            code = lib.TT_FLOAT32 if dtype == np.float32 else lib.TT_FLOAT64
            assert lib.tt_linear(code, m, n, k, ptr(a), k, 1, ptr(b), rsb, csb, ptr(bias_store), 2, ptr(got), n, 1) == 0
            assert lib.tt_gemm(code, m, n, k, ptr(a), k, 1, ptr(b), rsb, csb, ptr(preset), n, 1, 1) == 0
            assert np.array_equal(got, preset), (m, n, k, b_transposed)
            want = bias_store[::2].astype(np.float64) + _gemm_reference(a, b)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 4 * (k + 1))


def test_linear_c_entry_edges():
    """k == 0 gives the broadcast bias; no bias is a plain product; bad arguments are refused."""
    ptr = lambda x: ffi.cast("uintptr_t", x.ctypes.data)  # noqa: E731
    bias = np.array([1.5, -2.0, 3.0], np.float32)
    out = np.full((2, 3), np.nan, np.float32)
    one = np.zeros(1, np.float32)
    assert lib.tt_linear(lib.TT_FLOAT32, 2, 3, 0, ptr(one), 1, 1, ptr(one), 1, 1, ptr(bias), 1, ptr(out), 3, 1) == 0
    assert np.array_equal(out, np.broadcast_to(bias, (2, 3)))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.full((2, 4), np.nan, np.float32)
    assert lib.tt_linear(lib.TT_FLOAT32, 2, 4, 3, ptr(a), 3, 1, ptr(b), 4, 1, 0, 0, ptr(out), 4, 1) == 0
    assert np.array_equal(out, a @ b)
    assert lib.tt_linear(lib.TT_FLOAT32, 2, 4, 3, ptr(a), 3, 1, ptr(b), 4, 1, ptr(bias), -1, ptr(out), 4, 1) == (
        lib.TT_ERR_INVALID_ARG
    )
    ints = np.zeros((2, 4), np.int32)
    assert lib.tt_linear(lib.TT_INT32, 2, 4, 3, ptr(ints), 3, 1, ptr(ints), 4, 1, ptr(ints), 1, ptr(ints), 4, 1) == (
        lib.TT_ERR_UNSUPPORTED_DTYPE
    )


# Shapes that two threads split by rows (n past NC), by column units over all of k, by column
# units over k's two KC slices one at a time, and (the last) by two column units per thread over
# k's three slices, where one thread packs k in blocks of two slices: each must give the one-thread
# result bit for bit.
THREAD_SPLIT_SIZES = [(13, 4100, 1100), (300, 200, 300), (37, 600, 1000), (256, 784, 512), (100, 2048, 1500)]


@pytest.mark.parametrize("kernel", GEMM_KERNELS)
def test_gemm_result_does_not_depend_on_thread_count(kernel):
    rng = np.random.default_rng(11)
    before = tt.get_num_threads()
    assert lib.tt_gemm_set_kernel(kernel.encode()) == 0
    try:
        for m, n, k in THREAD_SPLIT_SIZES:
            for dtype in (np.float32, np.float64):
                a = tt.from_numpy(rng.uniform(-1, 1, (m, k)).astype(dtype))
                b = tt.from_numpy(rng.uniform(-1, 1, (k, n)).astype(dtype))
                a_columns = tt.from_numpy(np.ascontiguousarray(a.numpy().T)).T  # A column-major (x.T @ g)
                for left in (a, a_columns):
                    results = []
                    for threads in (1, 2):
                        tt.set_num_threads(threads)
                        results.append((left @ b).numpy())
                    assert np.array_equal(results[0], results[1]), (m, n, k, dtype, left.stride())
    finally:
        lib.tt_gemm_set_kernel(ffi.NULL)
        tt.set_num_threads(before)


def test_gemm_1000(gemm_config):
    rng = np.random.default_rng(1000)
    a = rng.uniform(-1, 1, (1000, 1000)).astype(np.float32)
    b = rng.uniform(-1, 1, (1000, 1000)).astype(np.float32)
    _gemm_check(tt.from_numpy(a) @ tt.from_numpy(b).T, a, b.T, np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_batched_and_broadcast(gemm_config, dtype):
    rng = np.random.default_rng(7)
    # many small products: split over the batch when there are threads
    a = rng.uniform(-1, 1, (64, 17, 33)).astype(dtype)
    b = rng.uniform(-1, 1, (64, 33, 19)).astype(dtype)
    _gemm_check(tt.from_numpy(a) @ tt.from_numpy(b), a, b, dtype)
    # broadcast batch (stride 0) on both sides, transposed matrices inside
    a = rng.uniform(-1, 1, (5, 1, 40, 70)).astype(dtype)
    b = rng.uniform(-1, 1, (3, 30, 70)).astype(dtype)
    got = tt.from_numpy(a) @ tt.from_numpy(b).transpose(-1, -2)
    _gemm_check(got, np.broadcast_to(a, (5, 3, 40, 70)), np.broadcast_to(b.transpose(0, 2, 1), (5, 3, 70, 30)), dtype)
    # a few large products: the threads split each product
    a = rng.uniform(-1, 1, (2, 150, 300)).astype(dtype)
    b = rng.uniform(-1, 1, (300, 170)).astype(dtype)
    _gemm_check(tt.from_numpy(a) @ tt.from_numpy(b), a, b, dtype)


def test_gemm_empty_sum_and_nan(gemm_config):
    got = tt.zeros(3, 0) @ tt.zeros(0, 4)
    assert got.tolist() == [[0.0] * 4] * 3
    a = np.ones((7, 9), np.float32)
    a[2, 3] = np.nan
    got = (tt.from_numpy(a) @ tt.ones(9, 20)).numpy()
    assert np.isnan(got[2]).all() and not np.isnan(np.delete(got, 2, axis=0)).any()


def expected_default_kernel(setting: str | None) -> str:
    """The kernel products take by default under TT_GENERIC_KERNELS=setting: generic for "1",
    at most avx2 for "avx2", else the best one the CPU has."""
    if setting == "1":
        return "generic"
    if setting == "avx2":
        return "avx2" if "avx2" in GEMM_KERNELS else "generic"
    return GEMM_KERNELS[-1]


def test_generic_kernels_environment_variable():
    """TT_GENERIC_KERNELS, read once at the first product: "1" selects the generic micro-kernel,
    "avx2" the AVX2 one where the CPU has it, "0" the best one."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, t_tensor as tt\n"
        "from t_tensor._capi import ffi, lib\n"
        "a = np.arange(12, dtype=np.float32).reshape(3, 4); b = np.arange(20, dtype=np.float32).reshape(4, 5)\n"
        "assert ((tt.from_numpy(a) @ tt.from_numpy(b)).numpy() == a @ b).all()\n"
        "print(ffi.string(lib.tt_gemm_kernel_name()).decode())\n"
    )
    for setting in ("1", "avx2", "0"):
        env = dict(os.environ, TT_GENERIC_KERNELS=setting)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected_default_kernel(setting)


@pytest.mark.parametrize("layouts", [("contiguous", "contiguous"), ("transposed", "sliced"), ("sliced", "transposed")])
@pytest.mark.parametrize("mnk", [(65, 63, 200), (240, 96, 256), (12, 32, 1), (100, 130, 77), (64, 64, 64),
                                 (128, 100, 128), (16, 33, 7), (40, 40, 256), (200, 70, 100), (144, 64, 256),
                                 (143, 48, 200), (5, 16, 3), (1, 1, 1)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("kernel", ["avx2", "avx512"])
def test_gemm_small_path_bit_identical_to_packed_path(mnk, layouts, kernel):
    """On one thread, a product with A in one packed block (m <= 144 on the AVX2 float kernel,
    m <= 240 on the AVX-512 one) and k <= 256 reads full row panels of a row-major A in place
    instead of packing them (AVX-512: 8 rows a call when m is a multiple of 8 but not of 12, else
    12; AVX2: 6); on two threads the same product runs the packed path. Both sum the same products
    in the same order: the bits agree. Products under the threading threshold (2^17 multiply-adds:
    (12, 32, 1), (16, 33, 7), (5, 16, 3), (1, 1, 1)) take the small path on both thread counts, and
    those past the kernel's m limit (AVX2: 200 and 240 rows) the packed one: for them the check
    against NumPy is what counts."""
    if kernel not in GEMM_KERNELS:
        pytest.skip(f"this CPU has no {kernel}")
    m, n, k = mnk
    rng = np.random.default_rng(m + n + k)
    ta, a = _operand(rng, m, k, np.float32, layouts[0])
    tb, b = _operand(rng, k, n, np.float32, layouts[1])
    before = tt.get_num_threads()
    try:
        assert lib.tt_gemm_set_kernel(kernel.encode()) == 0
        tt.set_num_threads(1)
        small = (ta @ tb).numpy()
        tt.set_num_threads(2)
        packed = (ta @ tb).numpy()
    finally:
        tt.set_num_threads(before)
        lib.tt_gemm_set_kernel(ffi.NULL)
    _gemm_check(tt.from_numpy(small), a, b, np.float32)
    np.testing.assert_array_equal(small.view(np.uint32), packed.view(np.uint32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mkn", [(0, 3, 4), (3, 0, 4), (3, 4, 0), (1, 1, 1), (5, 7, 3), (64, 10, 64)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_two_matrices_straight_to_the_kernel(dtype, mkn, layout):
    """Two float matrices of one dtype with nothing to record skip matmul's general rules: the
    same values as NumPy for empty products and sums (zeros), and operands read through their
    strides."""
    m, k, n = mkn
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    if layout == "transposed":
        ta, tb = tt.tensor(np.ascontiguousarray(a.T)).T, tt.tensor(np.ascontiguousarray(b.T)).T
    elif layout == "sliced":
        ta, tb = tt.tensor(np.repeat(a, 2, axis=1))[:, ::2], tt.tensor(np.repeat(b, 2, axis=1))[:, ::2]
    else:
        ta, tb = tt.tensor(a), tt.tensor(b)
    got = (ta @ tb).numpy()
    assert got.shape == (m, n) and got.dtype == dtype
    np.testing.assert_allclose(got, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
