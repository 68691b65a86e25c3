"""Manipulation ops: joining, repeating, flipping, rolling, padding, triangles, diagonals, dim shuffles.

PyTorch is the oracle: every case runs the same function on torch tensors made from the same NumPy
data, and shape, dtype and values must agree exactly (these ops move data, they do not compute).
Where t_tensor goes beyond torch (the array API's ``repeat``/``concat(axis=None)``/``expand_dims``,
non-constant ``pad`` on any number of dims and on bool), NumPy is the oracle. Inputs are
hypothesis-drawn shapes (0-4 dims, sizes 0-4) in the shared layouts (contiguous, transposed,
step-sliced with an offset, expanded with stride 0) and every dtype.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import LAYOUTS, TORCH_DTYPES, apply_layout, base_shape, helper_test_exception, helper_test_op
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import t_tensor as tt

ALL_DTYPES = list(TORCH_DTYPES)
EXAMPLES = 60


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: tt.DType) -> np.ndarray:
    """Random values of ``dtype`` (small integers, floats with a few specials), always an ndarray."""
    if dtype is tt.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -100
        return np.asarray(rng.integers(low, 100, size=shape, endpoint=True), dtype=dtype.numpy)
    data = rng.uniform(-10, 10, size=shape)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0])
    data = np.where(rng.random(shape) < 0.1, specials[rng.integers(0, 4, size=shape)], data)
    return np.asarray(data, dtype=dtype.numpy)


def lib_of(x):
    return torch if isinstance(x, torch.Tensor) else tt


def pad_fn(x):
    return F.pad if isinstance(x, torch.Tensor) else tt.pad


def check(inputs: list[np.ndarray], fn) -> object:
    """``fn(lib, *tensors)`` through t_tensor and torch; exact values (NaN equal), dtype and shape.
    Tuples of results are compared element by element."""
    got = helper_test_op(inputs, partial(fn, tt), partial(fn, torch), ref="torch")
    want = fn(torch, *[torch.from_numpy(a.copy()) for a in inputs])
    for g, w in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,))), strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())  # bitwise-level exactness for int64
    return got


def check_numpy(inputs: list[np.ndarray], tt_fn, np_fn) -> None:
    """t_tensor against NumPy (where torch has no such function); exact values and shape."""
    got = tt_fn(*[tt.tensor(a.copy()) for a in inputs])
    want = np.asarray(np_fn(*[a.copy() for a in inputs]))
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


def as_numpy(a: np.ndarray, layout: str, shape: tuple[int, ...]) -> np.ndarray:
    """The NumPy array a layout shows (for NumPy oracles)."""
    return apply_layout(torch.from_numpy(a.copy()), layout, shape).numpy()


def torch_base(a: np.ndarray) -> torch.Tensor:
    """``a`` as a torch tensor with t_tensor's strides for a new tensor (torch.from_numpy keeps
    NumPy's strides, which differ for empty arrays)."""
    src = torch.from_numpy(a.copy())
    return torch.zeros(a.shape, dtype=src.dtype).copy_(src)


def check_view(cases, fn) -> tuple:
    """``fn(lib, *views)`` must give views of the inputs: the same values, strides and storage
    offsets as torch's, over the storage of an input (no copy). Returns t_tensor's results."""
    tt_bases = [tt.tensor(c[3].copy()) for c in cases]
    torch_bases = [torch_base(c[3]) for c in cases]
    got = fn(tt, *all_viewed(tt_bases, cases))
    want = fn(torch, *all_viewed(torch_bases, cases))
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        assert g.shape == tuple(w.shape) and TORCH_DTYPES[g.dtype] == w.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy())
        assert any(g.is_shared_with(b) for b in tt_bases), "not a view of an input"
        if g.numel() > 1:  # strides of size-1 dims are arbitrary, in torch as here
            assert [s for s, n in zip(g.stride(), g.shape, strict=True) if n > 1] == [
                s for s, n in zip(w.stride(), w.shape, strict=True) if n > 1
            ], (g.stride(), w.stride())
            assert g.storage_offset() == w.storage_offset(), (g.storage_offset(), w.storage_offset())
    return got


@st.composite
def tensor_case(draw, min_dims=0, max_dims=4, dtypes=None, layouts=LAYOUTS, max_size=4):
    """(shape, layout, dtype, base array) for one input."""
    shape = tuple(draw(st.lists(st.integers(0, max_size), min_size=min_dims, max_size=max_dims)))
    layout = draw(st.sampled_from(layouts))
    dtype = draw(st.sampled_from(dtypes or ALL_DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return shape, layout, dtype, values(rng, base_shape(shape, layout), dtype)


def all_viewed(xs, cases) -> list:
    return [viewed(x, c) for x, c in zip(xs, cases, strict=True)]


def input_of_shape(data, shape: tuple[int, ...], dtype: tt.DType | None = None):
    """A tensor_case with the given shape (and dtype, if given)."""
    _, layout, drawn, _ = data.draw(tensor_case(min_dims=0, max_dims=0, dtypes=[dtype] if dtype else None))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    return shape, layout, drawn, values(rng, base_shape(shape, layout), drawn)


def viewed(x, case):
    shape, layout = case[0], case[1]
    return apply_layout(x, layout, shape)


# ---------------------------------------------------------------------- joining


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_cat_matches_torch(data):
    ndim = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    dim = data.draw(st.integers(-ndim, ndim - 1))
    n = data.draw(st.integers(1, 4))
    same_dtype = data.draw(st.booleans())
    dtype0 = data.draw(st.sampled_from(ALL_DTYPES))
    cases = []
    for _ in range(n):
        if data.draw(st.integers(0, 5)) == 0:
            part = (0,)  # skipped by cat whatever the other shapes
        else:
            part = shape[: dim % ndim] + (data.draw(st.integers(0, 3)),) + shape[dim % ndim + 1 :]
        cases.append(input_of_shape(data, part, dtype0 if same_dtype else None))
    name = data.draw(st.sampled_from(["cat", "concat", "concatenate", "axis"]))

    def fn(lib, *xs):
        views = all_viewed(xs, cases)
        if lib is torch:
            return torch.cat(views, dim)
        if name == "axis":
            return tt.concat(views, axis=dim)
        return getattr(tt, name)(views, dim=dim)

    check([c[3] for c in cases], fn)


@settings(max_examples=30, deadline=None)
@given(cases=st.lists(tensor_case(), min_size=1, max_size=3))
def test_concat_axis_none_flattens(cases):
    def fn(lib, *xs):
        views = all_viewed(xs, cases)
        if lib is torch:
            return torch.cat([v.reshape(-1) for v in views])
        return tt.concat(views, axis=None)

    check([c[3] for c in cases], fn)


def test_cat_skips_empty_1d_and_promotes():
    got = tt.cat([tt.zeros(0, dtype=tt.float64), tt.ones(2, 3, dtype=tt.int8)], dim=1)
    want = torch.cat([torch.zeros(0, dtype=torch.float64), torch.ones(2, 3, dtype=torch.int8)], dim=1)
    assert got.shape == tuple(want.shape) and got.dtype is tt.float64 and want.dtype == torch.float64
    assert tt.cat([tt.zeros(0, dtype=tt.int8), tt.zeros(0, dtype=tt.uint8)], dim=5).dtype is tt.int16


@pytest.mark.parametrize("join, dim, shapes", [
    ("stack", 0, [(3, 64, 64)] * 64),           # 3 MiB: the join is split over the threads
    ("stack", 2, [(5, 7)] * 9),                  # many rows, a one-element block each
    ("cat", 1, [(4, 3), (4, 1), (4, 5)]),        # blocks of different widths in every row
    ("cat", 0, [(10,)] * 64),
    ("cat", -1, [(2, 300, 1000), (2, 300, 24)]),  # large and split, uneven blocks
])
def test_contiguous_join_matches_numpy(join, dim, shapes):
    # cat and stack of contiguous tensors of one dtype: one C call for all inputs
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = getattr(tt, join)([tt.tensor(a) for a in arrays], dim=dim).numpy()
    want = (np.stack if join == "stack" else np.concatenate)(arrays, axis=dim)
    np.testing.assert_array_equal(got, want)


def test_join_contiguous_refuses_bad_arguments():
    from t_tensor._capi import ffi, lib

    out = tt.empty(8)
    src = tt.ones(4)
    addr, dst = src.data_ptr(), out.data_ptr()
    code = tt.float32.code
    assert lib.tt_join_contiguous(2, [addr, addr], [4, 4], 1, code, dst) == lib.TT_OK
    assert out.tolist() == [1.0] * 8
    assert lib.tt_join_contiguous(-1, [addr], [4], 1, code, dst) == lib.TT_ERR_INVALID_ARG
    assert lib.tt_join_contiguous(1, [addr], [-4], 1, code, dst) == lib.TT_ERR_INVALID_ARG
    assert lib.tt_join_contiguous(1, [0], [4], 1, code, dst) == lib.TT_ERR_INVALID_ARG   # NULL input
    assert lib.tt_join_contiguous(1, [addr], [4], 1, code, 0) == lib.TT_ERR_INVALID_ARG  # NULL output
    assert lib.tt_join_contiguous(1, ffi.NULL, ffi.NULL, 1, code, dst) == lib.TT_ERR_INVALID_ARG
    assert lib.tt_join_contiguous(1, [addr], [4], 1, 99, dst) == lib.TT_ERR_UNSUPPORTED_DTYPE
    assert lib.tt_join_contiguous(2, [addr, addr], [1 << 62, 1 << 62], 1, code, dst) == lib.TT_ERR_OVERFLOW
    assert lib.tt_join_contiguous(2, [addr, addr], [1 << 40, 1 << 40], 1 << 30, code, dst) == lib.TT_ERR_OVERFLOW
    assert lib.tt_join_contiguous(1, [0], [0], 5, code, dst) == lib.TT_OK                # empty blocks


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_stack_matches_torch(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=3)))
    n = data.draw(st.integers(1, 3))
    cases = [input_of_shape(data, shape) for _ in range(n)]
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    use_axis = data.draw(st.booleans())

    def fn(lib, *xs):
        views = all_viewed(xs, cases)
        return lib.stack(views, axis=dim) if lib is tt and use_axis else lib.stack(views, dim=dim)

    check([c[3] for c in cases], fn)


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_hstack_vstack_dstack_match_torch(name, data):
    shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=3)))
    n = data.draw(st.integers(1, 3))
    cases = [input_of_shape(data, shape) for _ in range(n)]
    check([c[3] for c in cases], lambda lib, *xs: getattr(lib, name)(all_viewed(xs, cases)))


@settings(max_examples=30, deadline=None)
@given(case=tensor_case(min_dims=1), axis=st.integers(-4, 3))
def test_unstack_is_unbind(case, axis):
    ndim = len(case[0])
    axis = axis % ndim
    got = check_view([case], lambda lib, x: tuple(torch.unbind(x, axis)) if lib is torch else tt.unstack(x, axis=axis))
    assert len(got) == case[0][axis]


# ---------------------------------------------------------------------- repeating


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(max_dims=3), data=st.data())
def test_tensor_repeat_matches_torch(case, data):
    ndim = len(case[0])
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim + 2)))
    check([case[3]], lambda lib, x: viewed(x, case).repeat(*reps) if reps else viewed(x, case).repeat(()))


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(max_dims=3), data=st.data())
def test_tile_matches_torch(case, data):
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    method = data.draw(st.booleans())
    check([case[3]], lambda lib, x: viewed(x, case).tile(reps) if method else lib.tile(viewed(x, case), reps))


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(), data=st.data())
def test_repeat_interleave_matches_torch(case, data):
    shape = case[0]
    dim = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1)) if shape else None
    size = int(np.prod(shape)) if dim is None else shape[dim]
    kind = data.draw(st.sampled_from(["int", "tensor", "one"]))
    counts = data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    method = data.draw(st.booleans())

    def fn(lib, x):
        repeats = {"int": 2, "one": lib.tensor([3]), "tensor": lib.tensor(counts, dtype=lib.int64)}[kind]
        v = viewed(x, case)
        return v.repeat_interleave(repeats, dim) if method else lib.repeat_interleave(v, repeats, dim=dim)

    check([case[3]], fn)


@settings(max_examples=30, deadline=None)
@given(case=tensor_case(), data=st.data())
def test_array_api_repeat_matches_numpy(case, data):
    shape, layout = case[0], case[1]
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1)) if shape else None
    size = int(np.prod(shape)) if axis is None else shape[axis]
    repeats = data.draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=size, max_size=size))
    check_numpy(
        [case[3]],
        lambda x: tt.repeat(apply_layout(x, layout, shape), repeats, axis=axis),
        lambda a: np.repeat(as_numpy(a, layout, shape), repeats, axis=axis),
    )


def test_repeat_interleave_of_counts_alone():
    check([np.array([2, 0, 3, 1])], lambda lib, c: lib.repeat_interleave(c))


# ---------------------------------------------------------------------- flip and roll


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(), data=st.data())
def test_flip_matches_torch(case, data):
    ndim = len(case[0])
    dims = tuple(data.draw(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim)))
    dims = tuple(d - ndim if data.draw(st.booleans()) and ndim else d for d in dims)
    form = data.draw(st.sampled_from(["function", "method", "axis"]))

    def fn(lib, x):
        v = viewed(x, case)
        if form == "method":
            return v.flip(dims) if dims else lib.flip(v, ())
        if form == "axis" and lib is tt:
            return tt.flip(v, axis=dims)
        return lib.flip(v, dims)

    check([case[3]], fn)


@settings(max_examples=30, deadline=None)
@given(case=tensor_case(min_dims=1))
def test_fliplr_flipud_and_flip_all(case):
    check([case[3]], lambda lib, x: lib.flipud(viewed(x, case)))
    if len(case[0]) >= 2:
        check([case[3]], lambda lib, x: lib.fliplr(viewed(x, case)))
    check([case[3]], lambda lib, x: lib.flip(viewed(x, case), tuple(range(len(case[0])))) if lib is torch
          else tt.flip(viewed(x, case)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(), data=st.data())
def test_roll_matches_torch(case, data):
    ndim = len(case[0])
    if ndim and data.draw(st.booleans()):
        dims = tuple(data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=3)))
        shifts = tuple(data.draw(st.lists(st.integers(-9, 9), min_size=len(dims), max_size=len(dims))))
    else:
        dims, shifts = None, data.draw(st.integers(-9, 9))
    array_api = data.draw(st.booleans())

    def fn(lib, x):
        v = viewed(x, case)
        if lib is tt and array_api:
            return tt.roll(v, shift=shifts, axis=dims)
        return lib.roll(v, shifts, dims) if dims is not None else v.roll(shifts)

    check([case[3]], fn)


# ---------------------------------------------------------------------- pad


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(), data=st.data())
def test_pad_constant_matches_torch(case, data):
    shape = case[0]
    npad = data.draw(st.integers(0, len(shape)))
    amounts = []
    for k in range(npad):
        n = shape[len(shape) - 1 - k]
        left = data.draw(st.integers(-n, 3))
        right = data.draw(st.integers(-(n - max(0, -left)), 3))
        amounts += [left, right]
    dtype = case[2]
    value = data.draw(
        st.none()
        | (st.booleans() if dtype is tt.bool else st.integers(0, 9) if dtype.kind in "iu" else st.floats(-5, 5))
    )
    check([case[3]], lambda lib, x: pad_fn(x)(viewed(x, case), tuple(amounts), value=value))


# torch's non-constant modes: pad size 2 for 2-3 dims, 4 for 3-4 dims, 6 for 4-5 dims; no bool for reflect/replicate
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_pad_modes_match_torch(mode, data):
    npad = data.draw(st.integers(1, 3))
    ndim = data.draw(st.integers(npad + 1, npad + 2))
    sizes = st.integers(1, 4)
    dtypes = [d for d in ALL_DTYPES if d is not tt.bool or mode == "circular"]
    case = data.draw(tensor_case(min_dims=ndim, max_dims=ndim, dtypes=dtypes))
    shape = tuple(s if i < ndim - npad else data.draw(sizes) for i, s in enumerate(case[0]))
    shape = tuple(max(s, 1) for s in shape)
    case = (shape, case[1], case[2], values(np.random.default_rng(0), base_shape(shape, case[1]), case[2]))
    amounts = []
    for k in range(npad):
        n = shape[ndim - 1 - k]
        left, right = data.draw(st.integers(-(n - 1), n)), data.draw(st.integers(-(n - 1), n))
        kept = n - max(0, -left) - max(0, -right)
        assume(n + left + right >= 1)
        if mode == "reflect":
            assume(left < n and right < n)
        if mode == "circular":  # torch reads out of bounds or refuses beyond this
            assume(kept >= 1 and left <= kept and right <= kept)
        amounts += [left, right]
    # torch's circular pad refuses an expanded (stride-0) input; it gets the same values contiguous
    check([case[3]], lambda lib, x: pad_fn(x)(
        viewed(x, case).contiguous() if lib is torch else viewed(x, case), tuple(amounts), mode=mode))


NUMPY_PAD = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@settings(max_examples=30, deadline=None)
@given(case=tensor_case(max_dims=4), data=st.data())
def test_pad_modes_any_dims_and_dtype_match_numpy(mode, case, data):
    """Beyond torch: any number of padded dims (here up to all) and bool, against np.pad."""
    shape, layout = case[0], case[1]
    npad = data.draw(st.integers(0, len(shape)))
    widths = [(0, 0)] * len(shape)
    amounts = []
    for k in range(npad):
        d = len(shape) - 1 - k
        n = shape[d]
        limit = 0 if n == 0 else n - 1 if mode == "reflect" else n if mode == "circular" else 5
        left, right = data.draw(st.integers(0, limit)), data.draw(st.integers(0, limit))
        widths[d] = (left, right)
        amounts += [left, right]
    check_numpy(
        [case[3]],
        lambda x: tt.pad(apply_layout(x, layout, shape), tuple(amounts), mode=mode),
        lambda a: np.pad(as_numpy(a, layout, shape), widths or 0, mode=NUMPY_PAD[mode]),
    )


# ---------------------------------------------------------------------- triangles


@pytest.mark.parametrize("name", ["tril", "triu"])
@settings(max_examples=40, deadline=None)
@given(case=tensor_case(min_dims=2), k=st.integers(-5, 5), form=st.sampled_from(["function", "method", "k"]))
def test_tril_triu_match_torch(name, case, k, form):
    def fn(lib, x):
        v = viewed(x, case)
        if form == "method":
            return getattr(v, name)(k)
        if form == "k" and lib is tt:
            return getattr(tt, name)(v, k=k)
        return getattr(lib, name)(v, k)

    check([case[3]], fn)


@pytest.mark.parametrize("name", ["tril_", "triu_"])
@settings(max_examples=30, deadline=None)
@given(case=tensor_case(min_dims=2, layouts=("contiguous", "transposed", "sliced")), k=st.integers(-4, 4))
def test_tril_triu_in_place_match_torch(name, case, k):
    def fn(lib, x):
        v = viewed(x, case)
        result = getattr(v, name)(k)
        assert result is v
        return result, x  # the base sees the writes

    check([case[3]], fn)


# ---------------------------------------------------------------------- diagonals


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=tensor_case(min_dims=2), data=st.data())
def test_diagonal_is_the_same_view_as_torch(case, data):
    ndim = len(case[0])
    dim1, dim2 = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=2, max_size=2).filter(
        lambda ds: ds[0] % ndim != ds[1] % ndim))
    offset = data.draw(st.integers(-5, 5))
    method = data.draw(st.booleans())
    check_view([case], lambda lib, x: x.diagonal(offset, dim1, dim2) if method else lib.diagonal(x, offset, dim1, dim2))


@settings(max_examples=40, deadline=None)
@given(case=tensor_case(min_dims=1, max_dims=2), k=st.integers(-4, 4))
def test_diag_matches_torch(case, k):
    check([case[3]], lambda lib, x: lib.diag(viewed(x, case), k))


@settings(max_examples=40, deadline=None)
@given(case=tensor_case(min_dims=1, max_dims=3), data=st.data())
def test_diag_embed_matches_torch(case, data):
    ndim = len(case[0]) + 1
    dim1, dim2 = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=2, max_size=2).filter(
        lambda ds: ds[0] % ndim != ds[1] % ndim))
    offset = data.draw(st.integers(-3, 3))
    check([case[3]], lambda lib, x: lib.diag_embed(viewed(x, case), offset, dim1, dim2))


# ---------------------------------------------------------------------- dimension shuffles (views)


@settings(max_examples=40, deadline=None)
@given(case=tensor_case(min_dims=1), data=st.data())
def test_movedim_is_the_same_view_as_torch(case, data):
    ndim = len(case[0])
    src = data.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    dst = data.draw(st.permutations(range(ndim)))[: len(src)]
    src = [s - ndim if data.draw(st.booleans()) else s for s in src]
    name = data.draw(st.sampled_from(["movedim", "moveaxis"]))
    check_view([case], lambda lib, x: getattr(lib, name)(x, src, dst))


@settings(max_examples=30, deadline=None)
@given(case=tensor_case(max_dims=3), data=st.data())
def test_expand_dims_permute_dims_matrix_transpose(case, data):
    shape, layout = case[0], case[1]
    n = data.draw(st.integers(1, 2))
    axes = tuple(data.draw(st.lists(st.integers(0, len(shape) + n - 1), unique=True, min_size=n, max_size=n)))
    check_numpy([case[3]], lambda x: tt.expand_dims(apply_layout(x, layout, shape), axis=axes),
                lambda a: np.expand_dims(as_numpy(a, layout, shape), axes))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    check([case[3]], lambda lib, x: tt.permute_dims(viewed(x, case), perm) if lib is tt
          else viewed(x, case).permute(perm))
    if len(shape) >= 2:
        check([case[3]], lambda lib, x: tt.matrix_transpose(viewed(x, case)) if lib is tt else viewed(x, case).mT)


@settings(max_examples=30, deadline=None)
@given(case=tensor_case(min_dims=1), data=st.data())
def test_unflatten_and_ravel_match_torch(case, data):
    shape = case[0]
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    even = [(-1, 2), (2, -1)] if n % 2 == 0 and n else []
    sizes = data.draw(st.sampled_from([(n,), (1, n), (n, 1), (-1,), (1, -1, 1)] + even))
    check_view([case], lambda lib, x: x.unflatten(dim, sizes))
    flat = check([case[3]], lambda lib, x: lib.ravel(viewed(x, case)))
    assert flat.is_contiguous()


@settings(max_examples=30, deadline=None)
@given(cases=st.lists(tensor_case(max_dims=3), min_size=1, max_size=3))
def test_atleast_nd_match_torch(cases):
    for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        check([cases[0][3]], lambda lib, x, name=name: getattr(lib, name)(viewed(x, cases[0])))
        check([c[3] for c in cases], lambda lib, *xs, name=name: tuple(
            getattr(lib, name)(all_viewed(xs, cases))))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_meshgrid_is_the_same_views_as_torch(data):
    n = data.draw(st.integers(1, 3))
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    cases = [data.draw(tensor_case(max_dims=1, dtypes=[dtype], layouts=("contiguous", "sliced"))) for _ in range(n)]
    indexing = data.draw(st.sampled_from(["ij", "xy"]))
    as_list = data.draw(st.booleans())

    def fn(lib, *xs):
        return tuple(lib.meshgrid(list(xs), indexing=indexing) if as_list else lib.meshgrid(*xs, indexing=indexing))

    check_view(cases, fn)


def test_broadcast_arrays_and_astype():
    a, b = tt.broadcast_arrays(tt.zeros(3, 1), tt.zeros(4))
    assert a.shape == b.shape == (3, 4) and a.stride() == (1, 0)
    x = tt.tensor([1.5, -2.5, 300.0])
    for dtype in ALL_DTYPES:
        got = tt.astype(x, dtype)
        want = torch.tensor([1.5, -2.5, 300.0]).to(TORCH_DTYPES[dtype])
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.dtype is dtype and not got.is_shared_with(x)
    assert tt.astype(x, tt.float32, copy=False) is x and tt.astype(x, tt.float32) is not x
    assert x.astype(tt.int8).tolist() == [1, -2, 44]


# ---------------------------------------------------------------------- errors, against torch


def A(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape).astype(dtype)


ERRORS = [
    # (id, inputs, function over (lib, *tensors), t_tensor exception, message start)
    ("cat-sizes", [A(2, 3), A(2, 4)], lambda lib, a, b: lib.cat([a, b]), RuntimeError, "cat: Sizes of tensors"),
    ("cat-ndim", [A(2, 3), A(2, 3, 1)], lambda lib, a, b: lib.cat([a, b]), RuntimeError, "cat: Tensors must have same"),
    ("cat-dim", [A(2, 3)], lambda lib, a: lib.cat([a], 2), IndexError, "cat: dimension out of range"),
    ("cat-0d", [A()], lambda lib, a: lib.cat([a, a]), RuntimeError, "cat: zero-dimensional"),
    ("cat-empty-list", [A(1)], lambda lib, a: lib.cat([]), ValueError, "cat: expected a non-empty"),
    ("cat-tensor", [A(2)], lambda lib, a: lib.cat(a), TypeError, "cat: expected a sequence"),
    ("stack-sizes", [A(2), A(3)], lambda lib, a, b: lib.stack([a, b]), RuntimeError, "stack: stack expects each"),
    ("stack-dim", [A(2)], lambda lib, a: lib.stack([a, a], 2), IndexError, "stack: dimension out of range"),
    ("vstack-sizes", [A(2, 3), A(2)], lambda lib, a, b: lib.vstack([a, b]), RuntimeError, "cat: Sizes"),
    ("repeat-fewer", [A(2, 3)], lambda lib, a: a.repeat(2), RuntimeError, "repeat: Number of dimensions"),
    ("repeat-negative", [A(2, 3)], lambda lib, a: a.repeat(-1, 1), RuntimeError, "repeat: Trying to create"),
    ("tile-negative", [A(2, 3)], lambda lib, a: lib.tile(a, (-1,)), RuntimeError, "tile: Trying to create"),
    ("ri-negative", [A(2, 3)], lambda lib, a: a.repeat_interleave(-1, dim=0), RuntimeError,
     "repeat_interleave: Repeats"),
    ("ri-negative-tensor", [A(2, 3)], lambda lib, a: a.repeat_interleave(lib.tensor([1, -2]), dim=0), RuntimeError,
     "repeat_interleave: repeats can not be negative"),
    ("ri-length", [A(2, 3)], lambda lib, a: a.repeat_interleave(lib.tensor([1, 2, 3]), dim=0), RuntimeError,
     "repeat_interleave: repeats must have the same size"),
    ("ri-2d-repeats", [A(2, 3)], lambda lib, a: a.repeat_interleave(lib.tensor([[1, 2]]), dim=0), RuntimeError,
     "repeat_interleave: repeats must be 0-dim"),
    ("ri-float-repeats", [A(2, 3)], lambda lib, a: a.repeat_interleave(lib.tensor([1.0, 2.0]), dim=0), TypeError,
     "repeat_interleave: repeats must be an integer"),
    ("ri-dim", [A(2, 3)], lambda lib, a: a.repeat_interleave(2, dim=2), IndexError, "repeat_interleave: dimension"),
    ("ri-0d-dim", [A()], lambda lib, a: a.repeat_interleave(2, dim=0), IndexError, "repeat_interleave: dimension"),
    ("flip-repeated", [A(2, 3)], lambda lib, a: lib.flip(a, (0, 0)), RuntimeError, "flip: dim 0 appears multiple"),
    ("flip-dim", [A(2, 3)], lambda lib, a: lib.flip(a, (2,)), IndexError, "flip: dimension out of range"),
    ("fliplr-1d", [A(3)], lambda lib, a: lib.fliplr(a), RuntimeError, "fliplr: Input must be >= 2-d"),
    ("flipud-0d", [A()], lambda lib, a: lib.flipud(a), RuntimeError, "flipud: Input must be >= 1-d"),
    ("roll-align", [A(2, 3)], lambda lib, a: lib.roll(a, (1, 2), (0,)), RuntimeError, "roll: shifts and dimensions"),
    ("roll-no-dims", [A(2, 3)], lambda lib, a: lib.roll(a, (1, 2)), RuntimeError, "roll: shifts and dimensions"),
    ("roll-empty", [A(2, 3)], lambda lib, a: lib.roll(a, ()), RuntimeError, "roll: `shifts` required"),
    ("roll-dim", [A(2, 3)], lambda lib, a: lib.roll(a, 1, 2), IndexError, "roll: dimension out of range"),
    ("roll-0d", [A()], lambda lib, a: lib.roll(a, 1, 0), IndexError, "roll: Dimension specified"),
    ("pad-odd", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (1,)), RuntimeError, "pad: Padding length must be"),
    ("pad-long", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (1,) * 6), RuntimeError, "pad: Padding length should"),
    ("pad-crop", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (-2, -2)), RuntimeError, "pad: "),
    ("pad-crop-2", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (-4, 0)), RuntimeError, "pad: "),
    ("pad-reflect-big", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (3, 3), mode="reflect"), RuntimeError,
     "pad: Padding size should be less"),
    ("pad-circular-big", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (4, 0), mode="circular"), RuntimeError,
     "pad: Padding value causes wrapping"),
    ("pad-replicate-empty", [A(2, 0)], lambda lib, a: pad_fn(a)(a, (1, 1), mode="replicate"), RuntimeError,
     "pad: cannot pad dimension 1 of size 0"),
    ("pad-mode", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (1, 1), mode="foo"), NotImplementedError,
     "pad: Unrecognised padding mode foo"),
    ("pad-value", [A(2, 3)], lambda lib, a: pad_fn(a)(a, (1, 1), mode="reflect", value=1.0), RuntimeError,
     'pad: Padding mode "reflect"'),
    ("pad-overflow", [A(2, 3, dtype=np.uint8)], lambda lib, a: pad_fn(a)(a, (1, 1), value=300), RuntimeError,
     "pad: value 300 cannot be converted"),
    ("pad-float-amount", [A(3)], lambda lib, a: pad_fn(a)(a, (1.5, 1)), TypeError, "pad: pad must be an int"),
    ("tril-1d", [A(3)], lambda lib, a: lib.tril(a), RuntimeError, "tril: input tensor must have at least 2"),
    ("triu-float-k", [A(2, 3)], lambda lib, a: lib.triu(a, 1.5), TypeError, "triu: diagonal must be an int"),
    ("diagonal-same", [A(2, 3, 4)], lambda lib, a: lib.diagonal(a, 0, 1, 1), RuntimeError,
     "diagonal: diagonal dimensions cannot be identical"),
    ("diagonal-1d", [A(3)], lambda lib, a: lib.diagonal(a), IndexError, "diagonal: dimension out of range"),
    ("diag-3d", [A(2, 2, 2)], lambda lib, a: lib.diag(a), RuntimeError, "diag: Supports 1D or 2D tensors. Got 3D"),
    ("diag-0d", [A()], lambda lib, a: lib.diag(a), RuntimeError, "diag: Supports 1D or 2D tensors. Got 0D"),
    ("diag_embed-same", [A(2, 3)], lambda lib, a: lib.diag_embed(a, 0, 1, 1), RuntimeError, "diag_embed: diagonal"),
    ("movedim-lengths", [A(2, 3, 4)], lambda lib, a: lib.movedim(a, (0, 1), (2,)), RuntimeError,
     "movedim: Invalid source or destination"),
    ("movedim-repeated", [A(2, 3, 4)], lambda lib, a: lib.movedim(a, (0, 1), (2, 2)), RuntimeError, "movedim: dim 2"),
    ("movedim-range", [A(2, 3, 4)], lambda lib, a: lib.movedim(a, 3, 0), IndexError, "movedim: dimension out of"),
    ("unflatten-sizes", [A(2, 6)], lambda lib, a: a.unflatten(1, (4, -1)), RuntimeError, "unflatten: shape"),
    ("unflatten-empty", [A(2, 6)], lambda lib, a: a.unflatten(1, ()), RuntimeError, "unflatten: sizes must be"),
    ("meshgrid-2d", [A(2, 2)], lambda lib, a: lib.meshgrid(a, indexing="ij"), RuntimeError, "meshgrid: Expected 0D"),
    ("meshgrid-dtypes", [A(2), A(2, dtype=np.int64)], lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"),
     RuntimeError, "meshgrid: expects all tensors to have the same dtype"),
    ("meshgrid-indexing", [A(2)], lambda lib, a: lib.meshgrid(a, indexing="foo"), RuntimeError,
     "meshgrid: indexing must be"),
    ("meshgrid-none", [A(2)], lambda lib, a: lib.meshgrid(indexing="ij"), RuntimeError, "meshgrid: expects a"),
]


@pytest.mark.parametrize("name, inputs, fn, exc, match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, inputs, fn, exc, match):
    def call(*xs):
        return fn(torch if isinstance(xs[0], torch.Tensor) else tt, *xs)

    helper_test_exception(inputs, call, exception=exc, match=f"^{match}")


def test_in_place_triangle_refuses_overlapping_writes():
    """torch writes through an expanded view (one element written for several); t_tensor refuses
    such writes everywhere, as its copy_ does."""
    x = tt.ones(1, 3)
    with pytest.raises(RuntimeError, match="^tril_: unsupported operation"):
        x.expand(2, 3).tril_()
    with pytest.raises(RuntimeError, match="^triu_: unsupported operation"):
        x.expand(2, 3).triu_()
    assert x.tolist() == [[1.0, 1.0, 1.0]]


def test_gather_kernel_refuses_bad_indices():
    """The C kernel validates what Python could get wrong: an index outside the source is an
    IndexError, not a read out of bounds."""
    from t_tensor.manipulation import _gather

    x = tt.arange(6).view(2, 3)
    with pytest.raises(IndexError, match="^flip: "):
        _gather(x, (2, 3), [np.array([0, 2]), np.arange(3)], "flip")
    with pytest.raises(IndexError, match="^flip: "):
        _gather(x, (2, 3), [np.array([0, -1]), np.arange(3)], "flip")
    assert _gather(x, (2, 3), [np.array([1, 0]), np.array([2, 2, 0])], "flip").tolist() == [[5, 5, 3], [2, 2, 0]]
