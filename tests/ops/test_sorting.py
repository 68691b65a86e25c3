"""Sorting and searching: sort, argsort, topk, kthvalue, searchsorted, unique and its array-API forms.

PyTorch is the oracle (NumPy for the array-API ``unique_*`` functions and for a second opinion on
stability). Inputs are hypothesis-drawn shapes (0-4 dims, sizes 0-4) in every shared layout
(contiguous, transposed, sliced, expanded) and every dtype; values come from small pools so that
rows are full of ties, with NaN, infinities, -0.0 and 0.0 among the floats and the extremes of
each integer dtype among the integers.

Every sort in t_tensor is stable, so indices are compared exactly with torch's ``stable=True``
sort; torch's unstable sort (``stable=False``) may order ties differently, so for it only the
values are compared exactly and the indices must pick out those values. Values are compared bit
for bit where it matters: NaN where torch has NaN, and the sign of zero.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers import (
    LAYOUTS,
    TORCH_DTYPES,
    apply_layout,
    base_shape,
    helper_test_exception,
    helper_test_op,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt

ALL_DTYPES = list(TORCH_DTYPES)
NOT_BOOL = [d for d in ALL_DTYPES if d is not tt.bool]
EXAMPLES = 12


def _id(d) -> str:
    return d.name


# ---------------------------------------------------------------------- values full of ties

FLOAT_POOL = [math.nan, -math.inf, math.inf, -0.0, 0.0, 1.5, -2.0, 3.25, 1e-3, -1e-3]


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: tt.DType) -> np.ndarray:
    """Values of ``dtype`` drawn from a small pool (many ties) plus a few arbitrary ones."""
    if dtype is tt.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        pool = np.array([info.min, info.max, 0, 1, 2, 3, info.min + 1, info.max - 1], dtype=dtype.numpy)
        if dtype.kind == "i":
            pool = np.concatenate([pool, np.array([-1, -2], dtype=dtype.numpy)])
        arbitrary = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype.numpy)
        picked = pool[rng.integers(0, len(pool), size=shape)]
        return np.asarray(np.where(rng.random(shape) < 0.8, picked, arbitrary), dtype=dtype.numpy)
    picked = np.array(FLOAT_POOL)[rng.integers(0, len(FLOAT_POOL), size=shape)]
    arbitrary = rng.uniform(-4, 4, size=shape)
    return np.asarray(np.where(rng.random(shape) < 0.8, picked, arbitrary), dtype=dtype.numpy)


def assert_same(got: tt.Tensor, want: torch.Tensor, signs: bool = True) -> None:
    """Same shape, dtype and values; NaN where torch has NaN, and (``signs``) the same sign of zero."""
    assert isinstance(got, tt.Tensor), type(got)
    assert got.shape == tuple(want.shape), (got.shape, want.shape)
    assert TORCH_DTYPES[got.dtype] == want.dtype, (got.dtype, want.dtype)
    g, w = got.numpy(), want.numpy()
    np.testing.assert_array_equal(g, w)
    if signs and w.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def check(inputs: list[np.ndarray], tt_fn, torch_fn) -> object:
    """``helper_test_op`` against torch, then every output compared exactly (``assert_same``)."""
    got = helper_test_op(inputs, tt_fn, torch_fn, ref="torch")
    want = torch_fn(*[torch.from_numpy(a.copy()) for a in inputs])
    if isinstance(want, torch.Tensor):
        assert_same(got, want)
    else:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)
    return got


@st.composite
def cases(draw, min_ndim: int = 0):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=min_ndim, max_size=4)))
    n = max(len(shape), 1)
    return {
        "shape": shape,
        "layout": draw(st.sampled_from(LAYOUTS)),
        "dim": draw(st.integers(-n, n - 1)),
        "form": draw(st.sampled_from(["function", "method"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def make_input(case, dtype) -> np.ndarray:
    return values(np.random.default_rng(case["seed"]), base_shape(case["shape"], case["layout"]), dtype)


def laid_out(x, case):
    return apply_layout(x, case["layout"], case["shape"])


def T(x):
    """The library ``x`` belongs to."""
    return tt if isinstance(x, tt.Tensor) else torch


def call(lib, name: str, form: str, x, *args, **kwargs):
    return getattr(x, name)(*args, **kwargs) if form == "method" else getattr(lib, name)(x, *args, **kwargs)


# ---------------------------------------------------------------------- sort and argsort


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), descending=st.booleans())
def test_sort_matches_torch_stable(dtype, case, descending):
    def fn(x):
        lib = tt if isinstance(x, tt.Tensor) else torch
        return call(lib, "sort", case["form"], laid_out(x, case), dim=case["dim"], descending=descending, stable=True)

    got = check([make_input(case, dtype)], fn, fn)
    assert isinstance(got, tt.SortResult) and got.values is got[0] and got.indices is got[1]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), descending=st.booleans())
def test_sort_unstable_values_match_torch_and_indices_pick_them(dtype, case, descending):
    a = make_input(case, dtype)
    got = tt.sort(laid_out(tt.tensor(a), case), dim=case["dim"], descending=descending)
    want = torch.sort(laid_out(torch.from_numpy(a), case), dim=case["dim"], descending=descending)
    assert_same(got.values, want.values)
    # the indices point at the values (torch may order ties differently when unstable)
    taken = torch.gather(laid_out(torch.from_numpy(a), case), case["dim"], torch.from_numpy(got.indices.numpy()))
    assert_same(got.values, taken)
    stable = torch.sort(laid_out(torch.from_numpy(a), case), dim=case["dim"], descending=descending, stable=True)
    assert_same(got.indices, stable.indices)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), descending=st.booleans())
def test_argsort_matches_torch(dtype, case, descending):
    def fn(x):
        lib = tt if isinstance(x, tt.Tensor) else torch
        return call(lib, "argsort", case["form"], laid_out(x, case), dim=case["dim"], descending=descending,
                    stable=True)

    check([make_input(case, dtype)], fn, fn)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@pytest.mark.parametrize("descending", [False, True])
def test_long_rows_are_stable(dtype, descending):
    """Rows of 1000 go through the radix sort (rows of 512 and more), columns of 3 through the
    merge sort's insertion runs; ties must keep order. Checked against torch's stable sort and,
    ascending, NumPy's stable argsort."""
    rng = np.random.default_rng(7)
    a = values(rng, (3, 1000), dtype)
    for dim, data in [(1, a), (0, np.ascontiguousarray(a.T))]:
        got = tt.sort(tt.tensor(data), dim=dim, descending=descending)
        want = torch.sort(torch.from_numpy(data), dim=dim, descending=descending, stable=True)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
        if not descending:
            np.testing.assert_array_equal(got.indices.numpy(), np.argsort(data, axis=dim, kind="stable"))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@pytest.mark.parametrize("length", [511, 512, 4099])
def test_merge_and_radix_paths_agree_with_torch(dtype, length):
    """511 elements take the merge sort, 512 and more the radix sort: both must give torch's
    stable order, both directions, with NaN of either sign, -0.0 / +0.0 ties, infinities,
    denormals and the integer extremes among the values."""
    rng = np.random.default_rng(length)
    a = values(rng, (length,), dtype)
    if dtype.kind == "f":
        specials = np.array([-math.nan, math.nan, -0.0, 0.0, math.inf, -math.inf], dtype=dtype.numpy)
        tiny = np.array([np.finfo(dtype.numpy).smallest_subnormal, -np.finfo(dtype.numpy).smallest_subnormal,
                         np.finfo(dtype.numpy).max, np.finfo(dtype.numpy).min], dtype=dtype.numpy)
        a[: len(specials) + len(tiny)] = np.concatenate([specials, tiny])
        rng.shuffle(a)
    for descending in (False, True):
        got = tt.sort(tt.tensor(a), descending=descending)
        want = torch.sort(torch.from_numpy(a), descending=descending, stable=True)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
        np.testing.assert_array_equal(tt.argsort(tt.tensor(a), descending=descending).numpy(), want.indices.numpy())


def test_sort_order_of_nan_zero_and_infinities():
    a = np.array([3.0, math.nan, -0.0, math.inf, 0.0, -math.inf, math.nan, -0.0], dtype=np.float32)
    for descending in (False, True):
        got = tt.sort(tt.tensor(a), descending=descending)
        want = torch.sort(torch.from_numpy(a), descending=descending, stable=True)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
    assert tt.sort(tt.tensor(a)).indices.tolist() == [5, 2, 4, 7, 0, 3, 1, 6]
    assert tt.sort(tt.tensor(a), descending=True).indices.tolist() == [1, 6, 3, 0, 2, 4, 7, 5]


def test_axis_is_an_alias_of_dim():
    x = tt.tensor([[3, 1], [0, 2]])
    assert tt.sort(x, axis=0).values.tolist() == tt.sort(x, dim=0).values.tolist() == [[0, 1], [3, 2]]
    assert tt.argsort(x, axis=0).tolist() == [[1, 0], [0, 1]]
    assert tt.topk(x, 1, axis=0).indices.tolist() == [[0, 1]]
    assert tt.kthvalue(x, 1, axis=0, keepdims=True).values.tolist() == [[0, 1]]
    with pytest.raises(TypeError, match="sort: got both dim and axis"):
        tt.sort(x, dim=0, axis=0)
    with pytest.raises(TypeError, match="kthvalue: got both keepdim and keepdims"):
        tt.kthvalue(x, 1, keepdim=True, keepdims=True)


def test_sort_leaves_its_input_alone():
    a = np.array([[3, 1, 2]], dtype=np.int64)
    x = tt.tensor(a)
    tt.sort(x)
    assert x.tolist() == [[3, 1, 2]]


# ---------------------------------------------------------------------- topk and kthvalue


@pytest.mark.parametrize("dtype", NOT_BOOL, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), largest=st.booleans(), sorted_=st.booleans(), data=st.data())
def test_topk_matches_torch(dtype, case, largest, sorted_, data):
    a = make_input(case, dtype)
    shape = case["shape"]
    n = shape[case["dim"]] if shape else 1
    k = data.draw(st.integers(0, n))
    x, t = laid_out(tt.tensor(a), case), laid_out(torch.from_numpy(a), case)
    got = call(tt, "topk", case["form"], x, k, case["dim"], largest, sorted_)
    want = torch.topk(t, k, case["dim"], largest, sorted=True)
    assert isinstance(got, tt.TopkResult)
    assert_same(got.values, want.values, signs=False)  # torch's topk may pick either of -0.0 and 0.0
    # ties: the lower index first, i.e. the first k of a stable sort
    stable = torch.sort(t, dim=case["dim"], descending=largest, stable=True)
    first_k = [r.narrow(case["dim"], 0, k) if t.ndim else r for r in stable]
    assert_same(got.values, first_k[0])
    assert_same(got.indices, first_k[1])


@pytest.mark.parametrize("dtype", NOT_BOOL, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), keepdim=st.booleans(), data=st.data())
def test_kthvalue_matches_torch(dtype, case, keepdim, data):
    shape = case["shape"]
    n = shape[case["dim"]] if shape else 1
    if n == 0:
        return  # no k is valid: test_errors_match_torch covers it
    a = make_input(case, dtype)
    k = data.draw(st.integers(1, n))
    x, t = laid_out(tt.tensor(a), case), laid_out(torch.from_numpy(a), case)
    got = call(tt, "kthvalue", case["form"], x, k, case["dim"], keepdim)
    want = torch.kthvalue(t, k, case["dim"], keepdim)
    assert isinstance(got, tt.KthvalueResult)
    assert_same(got.values, want.values, signs=False)  # torch may pick either of -0.0 and 0.0
    # ties: the lowest index, i.e. position k - 1 of a stable sort
    for g, r in zip(got, torch.sort(t, dim=case["dim"], stable=True), strict=True):
        expected = r.narrow(case["dim"], k - 1, 1) if t.ndim else r
        assert_same(g, expected if keepdim or not t.ndim else expected.squeeze(case["dim"]))


@pytest.mark.parametrize("dtype", NOT_BOOL, ids=_id)
@pytest.mark.parametrize("k", [1, 7, 62, 63, 500, 1000])
def test_topk_and_kthvalue_on_long_rows(dtype, k):
    """Small k on long rows takes the heap selection, large k the full sort: both must give the
    first k of a stable sort (ties: lower index first), in either direction."""
    rng = np.random.default_rng(k)
    a = values(rng, (1000, 3), dtype)
    t = torch.from_numpy(a)
    for largest in (True, False):
        got = tt.topk(tt.tensor(a), k, dim=0, largest=largest)
        stable = torch.sort(t, dim=0, descending=largest, stable=True)
        assert_same(got.values, stable.values[:k])
        assert_same(got.indices, stable.indices[:k])
        assert_same(got.values, torch.topk(t, k, dim=0, largest=largest).values, signs=False)
    got = tt.kthvalue(tt.tensor(a).T, k)
    stable = torch.sort(t.T, stable=True)
    assert_same(got.values, stable.values[:, k - 1])
    assert_same(got.indices, stable.indices[:, k - 1])
    assert_same(got.values, torch.kthvalue(t.T, k).values, signs=False)


# ---------------------------------------------------------------------- searchsorted


def sorted_rows(rng, shape, dtype) -> np.ndarray:
    """Rows sorted as torch sorts them (NaN last), full of ties."""
    return torch.sort(torch.from_numpy(values(rng, shape, dtype)), dim=-1, stable=True).values.numpy()


@st.composite
def search_cases(draw):
    nd = draw(st.booleans())  # an N-d sequence with one row per leading index
    value_shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1 if nd else 0, max_size=4)))
    seq_len = draw(st.integers(0, 6))
    seq_shape = value_shape[:-1] + (seq_len,) if nd else (seq_len,)
    return {
        "seq_shape": seq_shape,
        "value_shape": value_shape,
        "seq_layout": draw(st.sampled_from(["contiguous", "transposed", "sliced"])),
        "value_layout": draw(st.sampled_from(LAYOUTS)),
        "side": draw(st.sampled_from([None, "left", "right", "right=True"])),
        "out_int32": draw(st.booleans()),
        "sorter": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def _layout_of_sorted(array: np.ndarray, layout: str) -> tuple[np.ndarray, str]:
    """A base array whose ``layout`` view is ``array`` (so the view's rows stay sorted)."""
    if layout == "transposed" and array.ndim >= 2:
        return np.ascontiguousarray(array.transpose(*reversed(range(array.ndim)))), layout
    if layout == "sliced":
        base = np.zeros(tuple(2 * n + 1 for n in array.shape), dtype=array.dtype)
        base[(slice(1, None, 2),) * array.ndim] = array
        return base, layout
    return array, "contiguous"


@pytest.mark.filterwarnings("ignore:torch.searchsorted.*non-contiguous")
@pytest.mark.parametrize("dtype", NOT_BOOL, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=search_cases())
def test_searchsorted_matches_torch(dtype, case):
    rng = np.random.default_rng(case["seed"])
    seq = sorted_rows(rng, case["seq_shape"], dtype)
    kwargs = {"out_int32": case["out_int32"]}
    if case["side"] == "right=True":
        kwargs["right"] = True
    elif case["side"] is not None:
        kwargs["side"] = case["side"]
    sorter = None
    if case["sorter"]:  # shuffle each row and pass the permutation that sorts it back
        order = np.argsort(rng.random(seq.shape), axis=-1)
        shuffled = np.empty_like(seq)
        np.put_along_axis(shuffled, order, seq, axis=-1)
        seq, sorter = shuffled, order.astype(np.int64)
    seq_base, seq_layout = _layout_of_sorted(seq, case["seq_layout"])
    v_shape, v_layout = case["value_shape"], case["value_layout"]
    vals = values(rng, base_shape(v_shape, v_layout), dtype)
    inputs = [seq_base, vals] + ([sorter] if sorter is not None else [])

    def fn(s, v, *srt):
        lib = tt if isinstance(s, tt.Tensor) else torch
        s = apply_layout(s, seq_layout, seq.shape)
        return lib.searchsorted(s, apply_layout(v, v_layout, v_shape), sorter=srt[0] if srt else None, **kwargs)

    check(inputs, fn, fn)


@pytest.mark.parametrize("seq_dtype, value", [
    (tt.int64, 2), (tt.int64, 2.5), (tt.float32, 2), (tt.uint8, 3), (tt.float64, math.nan), (tt.int32, True),
])  # fmt: skip
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_scalar_values_match_torch(seq_dtype, value, right):
    seq = np.array([1, 2, 2, 3], dtype=seq_dtype.numpy)

    def fn(s):
        return T(s).searchsorted(s, value, right=right)

    got = check([seq], fn, fn)
    assert got.shape == ()


@pytest.mark.parametrize("seq_dtype", [tt.int8, tt.int64, tt.float16, tt.float64], ids=_id)
@pytest.mark.parametrize("value_dtype", [tt.bool, tt.uint8, tt.int32, tt.float32], ids=_id)
def test_searchsorted_promotes_mixed_dtypes_as_torch(seq_dtype, value_dtype):
    seq = np.array([0, 1, 1, 2, 5], dtype=seq_dtype.numpy)
    vals = np.array([0, 1, 3, 7, 1], dtype=value_dtype.numpy)
    if value_dtype.is_floating_point:
        vals = vals + np.asarray(0.5, dtype=vals.dtype)

    def fn(s, v):
        return (tt if isinstance(s, tt.Tensor) else torch).searchsorted(s, v)

    check([seq, vals], fn, fn)


@pytest.mark.parametrize("side, expected", [("left", [3, 3, 0, 1]), ("right", [3, 3, 0, 3])])
def test_searchsorted_nan_goes_to_the_end_as_torch(side, expected):
    seq = np.array([1.0, 2.0, math.nan], dtype=np.float32)
    vals = np.array([math.nan, 3.0, 0.0, 2.0], dtype=np.float32)

    def fn(s, v):
        return T(s).searchsorted(s, v, side=side)

    assert check([seq, vals], fn, fn).tolist() == expected


# ---------------------------------------------------------------------- unique


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), sorted_=st.booleans(), inverse=st.booleans(), counts=st.booleans())
def test_unique_matches_torch(dtype, case, sorted_, inverse, counts):
    a = make_input(case, dtype)
    got = call(tt, "unique", case["form"], laid_out(tt.tensor(a), case), sorted_, inverse, counts)
    # t_tensor always sorts; torch's sorted=True result is the reference for both. Of a group of
    # -0.0 and 0.0, torch keeps an arbitrary one, and it hands out the NaN slots (one per NaN) in an
    # arbitrary order; t_tensor keeps the first zero and gives NaNs their slots in input order
    # (checked against NumPy in test_array_api_unique_matches_numpy).
    x = laid_out(torch.from_numpy(a), case)
    want = torch.unique(x, True, inverse, counts)
    if isinstance(want, torch.Tensor):
        assert_same(got, want, signs=False)
        return
    assert isinstance(got, tuple) and len(got) == len(want)
    if inverse:
        nan = torch.isnan(x).numpy() if x.dtype.is_floating_point else np.zeros(x.shape, bool)
        g, w = got[1].numpy(), want[1].numpy()
        assert sorted(g[nan].tolist()) == sorted(w[nan].tolist())
        got = got[:1] + (tt.tensor(np.where(nan, w, g)),) + got[2:]
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, signs=False)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(), inverse=st.booleans(), counts=st.booleans())
def test_unique_consecutive_matches_torch(dtype, case, inverse, counts):
    def fn(x):
        lib = tt if isinstance(x, tt.Tensor) else torch
        return call(lib, "unique_consecutive", case["form"], laid_out(x, case), return_inverse=inverse,
                    return_counts=counts)

    a = make_input(case, dtype)
    got = fn(tt.tensor(a))
    want = fn(torch.from_numpy(a))
    if isinstance(want, torch.Tensor):
        assert_same(got, want)
    else:
        for g, w in zip(got, want, strict=True):
            assert_same(g, w)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases(min_ndim=1), inverse=st.booleans(), counts=st.booleans())
def test_unique_along_dim_matches_torch(dtype, name, case, inverse, counts):
    """Distinct slices along ``dim``. Without NaN: torch orders rows holding NaN arbitrarily (its
    comparisons are plain ``<``); test_unique_along_dim_with_nan covers t_tensor's order. Signs of
    zero are not compared (torch keeps an arbitrary zero of a group)."""
    a = make_input(case, dtype)
    if dtype.is_floating_point:
        a = np.where(np.isnan(a), np.asarray(7.0, a.dtype), a)
    x, t = laid_out(tt.tensor(a), case), laid_out(torch.from_numpy(a), case)
    kwargs = {"dim": case["dim"], "return_inverse": inverse, "return_counts": counts}
    try:
        want = getattr(torch, name)(t, **kwargs)
    except RuntimeError:  # a zero-size dimension that is not the selected one
        with pytest.raises(RuntimeError, match=f"{name}: There are 0 sized dimensions"):
            call(tt, name, case["form"], x, **kwargs)
        return
    got = call(tt, name, case["form"], x, **kwargs)
    if isinstance(want, torch.Tensor):
        assert_same(got, want, signs=False)
    else:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w, signs=False)


def test_unique_along_dim_with_nan():
    """Rows are ordered element by element with NaN last; a row holding NaN equals no other."""
    a = np.array([[1.0, math.nan], [0.0, 2.0], [1.0, math.nan], [1.0, 3.0], [-0.0, 2.0]])
    values, inverse, counts = tt.unique(tt.tensor(a), dim=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [[0, 2], [1, 3], [1, math.nan], [1, math.nan]])
    assert inverse.tolist() == [2, 0, 3, 1, 0] and counts.tolist() == [2, 1, 1, 1]
    assert not np.signbit(values.numpy()[0, 0])  # the first row of the group is kept
    values, counts = tt.unique(tt.tensor(a.T), dim=1, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [[0, 1, 1, 1], [2, 3, math.nan, math.nan]])
    assert values.is_contiguous()


def test_unique_dim_of_a_0d_tensor():
    helper_test_exception([np.float32(1.0)], lambda x: T(x).unique(x, dim=0), exception=IndexError,
                          match="unique: Dimension specified as 0 but tensor has no dimensions")


def _assert_numpy(got: tt.Tensor, want: np.ndarray) -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype.numpy == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_id)
@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases())
def test_array_api_unique_matches_numpy(dtype, case):
    a = make_input(case, dtype)
    x = laid_out(tt.tensor(a), case)
    ref = np.array(laid_out(torch.from_numpy(a), case).numpy(), order="C")
    want = np.unique_all(ref)
    got = tt.unique_all(x)
    assert isinstance(got, tt.UniqueAllResult) and got._fields == want._fields
    # NumPy may keep either zero of a -0.0/0.0 group; the values must be equal, not their signs
    np.testing.assert_array_equal(got.values.numpy(), want.values)
    assert got.values.dtype.numpy == want.values.dtype
    for name in ("indices", "inverse_indices", "counts"):
        _assert_numpy(getattr(got, name), getattr(want, name).astype(np.int64))
    values, counts = tt.unique_counts(x)
    np.testing.assert_array_equal(values.numpy(), want.values)
    _assert_numpy(counts, want.counts.astype(np.int64))
    values, inverse = tt.unique_inverse(x)
    np.testing.assert_array_equal(values.numpy(), want.values)
    _assert_numpy(inverse, want.inverse_indices.astype(np.int64))
    np.testing.assert_array_equal(tt.unique_values(x).numpy(), want.values)
    # the first-occurrence indices and the inverse rebuild the input
    flat = ref.reshape(-1)
    np.testing.assert_array_equal(flat[got.indices.numpy()], got.values.numpy())
    if dtype.is_floating_point:  # each value is its first occurrence, down to the sign of zero
        np.testing.assert_array_equal(np.signbit(flat[got.indices.numpy()]), np.signbit(got.values.numpy()))
    np.testing.assert_array_equal(got.values.numpy()[got.inverse_indices.numpy()], ref)


def test_unique_keeps_each_nan_and_merges_zeros():
    a = np.array([0.0, math.nan, -0.0, math.nan, 1.0, 0.0], dtype=np.float64)
    got = tt.unique(tt.tensor(a), return_inverse=True, return_counts=True)
    want = torch.unique(torch.from_numpy(a), return_inverse=True, return_counts=True)
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, signs=False)
    assert got[2].tolist() == [3, 1, 1, 1]
    assert got[1].tolist() == [0, 2, 0, 3, 1, 0]
    first_zero = tt.unique_values(tt.tensor(a[2:])).numpy()[0]
    assert first_zero == 0 and np.signbit(first_zero)  # the group's first element, -0.0


# ---------------------------------------------------------------------- errors


F3 = [np.array([1.0, 2.0, 3.0], dtype=np.float32)]
M23 = [np.zeros((2, 3), dtype=np.float32)]
B3 = [np.array([True, False, True])]


@pytest.mark.parametrize("inputs, fn, exception, match", [
    (M23, lambda x: T(x).sort(x, 2), IndexError, "sort: dimension out of range"),
    (M23, lambda x: T(x).sort(x, -3), IndexError, "sort: dimension out of range"),
    (M23, lambda x: T(x).argsort(x, 5), IndexError, "argsort: dimension out of range"),
    (M23, lambda x: T(x).topk(x, 1, 2), IndexError, "topk: dimension out of range"),
    (M23, lambda x: T(x).kthvalue(x, 1, 2), IndexError, "kthvalue: dimension out of range"),
    (F3, lambda x: T(x).topk(x, 4), RuntimeError, "topk: selected index k out of range"),
    (F3, lambda x: T(x).topk(x, -1), RuntimeError, "topk: selected index k out of range"),
    (F3, lambda x: T(x).kthvalue(x, 0), RuntimeError, "kthvalue: selected number k out of range"),
    (F3, lambda x: T(x).kthvalue(x, 4), RuntimeError, "kthvalue: selected number k out of range"),
    ([np.zeros((2, 0), np.float32)], lambda x: T(x).kthvalue(x, 1), RuntimeError, "kthvalue: selected number"),
    (B3, lambda x: T(x).topk(x, 1), RuntimeError, "topk: topk does not support bool"),
    (B3, lambda x: T(x).kthvalue(x, 1), TypeError, "kthvalue: not implemented for bool"),
    (B3, lambda x: T(x).searchsorted(x, x), TypeError, "searchsorted: not implemented for bool"),
    (F3, lambda x: T(x).searchsorted(x, x, side="middle"), RuntimeError, "searchsorted: side can only be"),
    (F3, lambda x: T(x).searchsorted(x, x, side="left", right=True), RuntimeError, "searchsorted: side and right"),
    ([np.float32(1.0)], lambda x: T(x).searchsorted(x, x), RuntimeError, "searchsorted: boundaries tensor should have"),
    (M23, lambda x: T(x).searchsorted(x, 1.0), RuntimeError, "searchsorted: input value can be a scalar only"),
    (M23, lambda x: T(x).searchsorted(x, x[0]), RuntimeError, "searchsorted: boundaries tensor should be 1 dim"),
    (M23, lambda x: T(x).searchsorted(x, T(x).zeros(3, 3)), RuntimeError, "searchsorted: boundaries tensor should be"),
    (F3, lambda x: T(x).searchsorted(x, x, sorter=T(x).tensor([0, 1])), RuntimeError, "searchsorted: boundary and"),
    (F3, lambda x: T(x).searchsorted(x, x, sorter=T(x).tensor([0, 1, 3])), IndexError, "searchsorted: .*sorter index"),
    (F3, lambda x: T(x).searchsorted(x, x, sorter=T(x).tensor([0, -1, 2])), IndexError, "searchsorted: .*sorter index"),
    (F3, lambda x: T(x).searchsorted(x, x, sorter=T(x).tensor([0, 1, 2], dtype=T(x).int32)), RuntimeError,
     "searchsorted: sorter must be a tensor of long"),
    (M23, lambda x: T(x).unique(x, dim=2), IndexError, "unique: dimension out of range"),
])  # fmt: skip
def test_errors_match_torch(inputs, fn, exception, match):
    helper_test_exception(inputs, fn, exception=exception, match=match)


def test_errors_of_our_own():
    x = tt.tensor([[1, 2], [1, 2]])
    with pytest.raises(TypeError, match="sort: expected a Tensor"):
        tt.sort([3, 1])
    with pytest.raises(TypeError, match="topk: k must be an int"):
        tt.topk(x, 1.5)
    with pytest.raises(TypeError, match="unique_all: expected a Tensor"):
        tt.unique_all(np.array([1]))


def test_results_do_not_alias_the_input():
    x = tt.tensor([2, 1])
    for result in (tt.sort(x).values, tt.topk(x, 2).values, tt.unique(x), tt.kthvalue(x, 1).values):
        assert not result.is_shared_with(x)
