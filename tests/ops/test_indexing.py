"""Indexing: advanced indexing in ``x[key]`` / ``x[key] = v``, gather/scatter, index_*, take, nonzero, masks.

PyTorch is the oracle for values, shapes, dtypes and for which inputs are refused; NumPy is a second
oracle for where advanced-index dimensions go (on keys where the two libraries agree: no plain int
next to an index array, no bool scalar). Shapes come from hypothesis (1-4 dims, sizes 0-4 incl.
empty), operands in the shared layouts (contiguous, transposed, step-sliced, expanded), every dtype.
Index tensors are drawn inside their dimension (negative where the op wraps); a scatter that writes
(rather than combines) gets indices without duplicates, where PyTorch leaves the result undefined.
"""

from __future__ import annotations

from functools import partial

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
    tolerance,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
from t_tensor.strides import has_internal_overlap

# torch's own deprecation notices for inputs it still accepts (the legacy reduce= of scatter_, index_put_
# through expanded views, a list of lists as a key)
pytestmark = [
    pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning"),
    pytest.mark.filterwarnings("ignore:Use of index_put_ on expanded tensors:UserWarning"),
    pytest.mark.filterwarnings("ignore:Use of masked_fill_ on expanded tensors:UserWarning"),
    pytest.mark.filterwarnings("ignore:Using a non-tuple sequence:UserWarning"),
]

ALL_DTYPES = list(TORCH_DTYPES)
NUMERIC_DTYPES = [d for d in ALL_DTYPES if d is not tt.bool]
EXAMPLES = 25
WRITABLE_LAYOUTS = [layout for layout in LAYOUTS if layout != "expanded"]


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: tt.DType, special: bool = False) -> np.ndarray:
    """Small values of ``dtype`` (integer-valued floats, so that sums are exact in every order);
    with ``special``, floats also get NaN, inf and -0.0."""
    if dtype is tt.bool:
        return np.asarray(rng.random(shape) < 0.5)
    low = 0 if dtype.kind == "u" else -4
    data = rng.integers(low, 5, size=shape).astype(dtype.numpy)
    if special and dtype.is_floating_point:
        specials = np.array([np.nan, np.inf, -0.0, 0.0], dtype=dtype.numpy)
        data = np.where(rng.random(shape) < 0.3, specials[rng.integers(0, 4, size=shape)], data)
    return np.asarray(data)


def check(inputs: list[np.ndarray], fn, ref: str = "torch") -> tt.Tensor:
    """``fn(lib, *tensors)`` through t_tensor and the reference (torch or numpy), via helper_test_op;
    integer and bool results compared exactly."""
    if ref == "torch":
        want = fn(torch, *[torch.from_numpy(a.copy()) for a in inputs])
        atol, rtol = tolerance(want.dtype) if isinstance(want, torch.Tensor) else (0.0, 0.0)
    else:
        atol = rtol = 0.0
    got = helper_test_op(inputs, partial(fn, tt), partial(fn, torch if ref == "torch" else np), ref=ref,
                         atol=atol, rtol=rtol)
    if ref == "torch" and isinstance(want, torch.Tensor) and not want.dtype.is_floating_point:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    return got


def laid_out(lib, x, layout: str, shape: tuple[int, ...]):
    return apply_layout(x, layout, shape)


def raises(fn) -> bool:
    try:
        fn()
    except Exception:  # noqa: BLE001 - any rejection counts
        return True
    return False


# ---------------------------------------------------------------------- advanced indexing: keys


@st.composite
def index_keys(draw):
    """A shape and a key for it, as descriptors turned into real keys by ``make_key``."""
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
    style = draw(st.sampled_from(["arrays", "arrays", "mask", "bool"]))
    broadcast = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    items: list[tuple] = []
    d = 0
    used_mask = False
    while d < len(shape):
        if draw(st.integers(0, 9)) == 0:
            items.append(("none",))
        n = shape[d]
        kinds = ["full", "slice"] + (["int"] if n else [])
        if style == "arrays" and n:
            kinds += ["array", "array"]
        if style == "mask" and not used_mask:
            kinds += ["mask", "mask"]
        kind = draw(st.sampled_from(kinds))
        if kind == "mask":
            span = draw(st.integers(1, min(2, len(shape) - d)))
            items.append(("mask", span))
            used_mask = True
            d += span
            continue
        if kind == "array":
            ones = draw(st.lists(st.booleans(), min_size=len(broadcast), max_size=len(broadcast)))
            keep = draw(st.integers(0, len(broadcast)))
            array_shape = tuple(1 if one else s for one, s in zip(ones, broadcast, strict=True))
            array_shape = array_shape[len(broadcast) - keep :]
            items.append(("array", array_shape, draw(st.sampled_from(["tensor", "int32", "list", "ndarray"]))))
        elif kind == "slice":
            items.append(("slice", draw(st.integers(-5, 5)), draw(st.integers(-5, 5)), draw(st.integers(1, 3))))
        elif kind == "int":
            items.append(("int", draw(st.integers(-n, n - 1))))
        else:
            items.append(("full",))
        d += 1
    if style == "bool":
        items.insert(draw(st.integers(0, len(items))), ("bool", draw(st.booleans())))
    full = [i for i, item in enumerate(items) if item == ("full",)]
    if draw(st.booleans()):   # trailing full slices may be left out, or a run of them become "..."
        while items and items[-1] == ("full",):
            items.pop()
    elif full:
        items[full[0]] = ("ellipsis",)
        for i in reversed(full[1:]):
            if all(items[j] == ("full",) for j in range(full[0] + 1, i + 1)):
                del items[i]
    layout, dtype = draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(ALL_DTYPES))
    return shape, items, layout, dtype, draw(st.integers(0, 2**32 - 1))


def make_key(lib, items: list[tuple], shape: tuple[int, ...], seed: int, for_numpy: bool = False):
    """The key for ``lib`` (tt, torch or numpy); random arrays come from ``seed`` so that every library
    gets the same ones."""
    rng = np.random.default_rng(seed)
    key = []
    d = 0
    for item in items:
        kind = item[0]
        if kind == "none":
            key.append(None)
            continue
        if kind == "ellipsis":
            skipped = len(shape) - sum(
                it[1] if it[0] == "mask" else 1 for it in items if it[0] not in ("none", "ellipsis", "bool")
            )
            key.append(Ellipsis)
            d += skipped
            continue
        if kind == "bool":
            key.append(item[1])
            continue
        if kind == "full":
            key.append(slice(None))
        elif kind == "slice":
            key.append(slice(item[1], item[2], item[3]))
        elif kind == "int":
            key.append(item[1])
        elif kind == "array":
            array = rng.integers(-shape[d], shape[d], size=item[1])
            key.append(_index_form(lib, array, item[2], for_numpy))
        elif kind == "mask":
            mask = rng.random(shape[d : d + item[1]]) < 0.5
            key.append(mask if for_numpy else lib.tensor(mask))
            d += item[1] - 1
        d += 1
    return tuple(key)


def _index_form(lib, array: np.ndarray, form: str, for_numpy: bool):
    if for_numpy:
        return array
    if lib is torch:
        return torch.tensor(array, dtype=torch.int32 if form == "int32" else torch.int64)
    if form == "list" and array.size:   # (an empty nested list loses its shape)
        return array.tolist()
    if form == "ndarray":
        return array
    return tt.tensor(array, dtype=tt.int32 if form == "int32" else tt.int64)


def numpy_agrees(items: list[tuple]) -> bool:
    """NumPy counts a plain int among index arrays as one more index array (PyTorch applies it first,
    as a view), and places a bool scalar the same way; keys without these mean the same in both."""
    kinds = {"int" if item[0] == "array" and not item[1] else item[0] for item in items}   # 0-d: an int
    return not ({"int", "bool"} & kinds and {"array", "mask", "bool"} & kinds)


def indexed_input(shape, layout, dtype, seed):
    data = values(np.random.default_rng(seed + 1), base_shape(shape, layout), dtype)
    return data, (lambda lib, x: apply_layout(x, layout, shape))


@settings(max_examples=250, deadline=None)
@given(case=index_keys())
def test_getitem_matches_torch_and_numpy(case):
    shape, items, layout, dtype, seed = case
    data, view = indexed_input(shape, layout, dtype, seed)
    want = view(torch, torch.from_numpy(data.copy()))[make_key(torch, items, shape, seed)]
    got = view(tt, tt.tensor(data))[make_key(tt, items, shape, seed)]
    assert got.shape == tuple(want.shape) and got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if numpy_agrees(items):
        array = np.asarray(view(tt, tt.tensor(data)))
        np.testing.assert_array_equal(got.numpy(), array[make_key(np, items, shape, seed, for_numpy=True)])


@settings(max_examples=250, deadline=None)
@given(case=index_keys(), value_kind=st.sampled_from(["scalar", "tensor", "broadcast"]))
def test_setitem_matches_torch(case, value_kind):
    shape, items, layout, dtype, seed = case
    data, view = indexed_input(shape, layout, dtype, seed)
    want_base, got_base = torch.from_numpy(data.copy()), tt.tensor(data)
    want_view, got_view = view(torch, want_base), view(tt, got_base)
    torch_key, tt_key = make_key(torch, items, shape, seed), make_key(tt, items, shape, seed)
    result_shape = tuple(want_view[torch_key].shape)
    rng = np.random.default_rng(seed + 2)
    if value_kind == "scalar":
        value = values(rng, (), dtype).item()
        torch_value, tt_value = value, value
    else:
        # PyTorch leaves repeated writes to one element undefined: tensor values only without repeats.
        positions = torch.arange(want_view.numel()).reshape(want_view.shape)[torch_key]
        if positions.numel() != positions.unique().numel():
            return
        value_shape = result_shape[1:] if value_kind == "broadcast" and result_shape else result_shape
        array = values(rng, value_shape, dtype)
        torch_value, tt_value = torch.from_numpy(array.copy()), tt.tensor(array)
    advanced = any(item[0] in ("mask", "bool") or (item[0] == "array" and item[1]) for item in items)  # 0-d: an int
    torch_refuses = raises(lambda: view(torch, want_base.clone()).__setitem__(torch_key, torch_value))
    if torch_refuses or (advanced and has_internal_overlap(got_view.shape, got_view.stride())):
        # PyTorch only warns (deprecated) about advanced writes through an expanded view; t_tensor refuses.
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            got_view[tt_key] = tt_value
        return
    want_view[torch_key] = torch_value
    got_view[tt_key] = tt_value
    np.testing.assert_array_equal(got_base.numpy(), want_base.numpy())


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple),
    nindex=st.integers(1, 2),
    broadcast=st.lists(st.integers(0, 4), max_size=2).map(tuple),
    dtype=st.sampled_from(ALL_DTYPES),
    method=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_index_put_accumulate_sums_duplicates(shape, nindex, broadcast, dtype, method, seed):
    nindex = min(nindex, len(shape))
    if any(n == 0 for n in shape[:nindex]) and 0 not in broadcast:
        return
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-n, n, size=broadcast) if n else np.zeros(broadcast, np.int64) for n in shape[:nindex]]
    result_shape = broadcast + shape[nindex:]
    data, update = values(rng, shape, dtype), values(rng, result_shape, dtype)

    def fn(lib, x, v, *indices):
        if method:
            return x.index_put_(indices, v, accumulate=True)
        return lib.index_put(x, indices, v, accumulate=True)

    check([data, update, *arrays], fn)


def test_advanced_placement_examples():
    x = tt.zeros(2, 3, 4, 5)
    assert x[:, [0, 1], [0, 1]].shape == (2, 2, 5)            # adjacent: in place
    assert x[[0, 1], :, [0, 1]].shape == (2, 3, 5)            # separated by a slice: first
    assert x[:, 0, :, [1]].shape == (2, 4, 1)                 # ints are views first (PyTorch's rule)
    assert x[[[0]], True].shape == (1, 1, 3, 4, 5)            # a bool scalar is a 0-d mask
    assert x[False].shape == (0, 2, 3, 4, 5)
    assert x[tt.tensor(1)].shape == (3, 4, 5) and x[tt.tensor(1)].is_shared_with(x)   # 0-d int: a view


def test_getitem_copies_and_setitem_clones_overlapping_values():
    x = tt.arange(6)
    y = x[[0, 1]]
    y[0] = 100
    assert x[0].item() == 0 and not y.is_shared_with(x)
    a = np.arange(6)
    x[[5, 4, 3, 2, 1, 0]] = x          # the value shares x's memory: read before written
    a[[5, 4, 3, 2, 1, 0]] = a
    assert x.tolist() == a.tolist()
    t = tt.tensor([1, 0, 2])
    t.scatter_(0, t, tt.tensor([5, 6, 7]))     # the index is the target itself
    assert t.tolist() == [6, 5, 7]


def test_functional_forms_leave_the_input_alone():
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
    i = tt.tensor([[1, 0]])
    results = [
        tt.scatter(x, 0, i, 9.0), tt.scatter_add(x, 0, i, tt.ones(1, 2)), tt.scatter_reduce(x, 0, i, x, "prod"),
        tt.index_add(x, 1, tt.tensor([0]), tt.ones(2, 1)), tt.index_fill(x, 0, tt.tensor([1]), 0.0),
        tt.index_put(x, (tt.tensor([0]),), tt.tensor(5.0)), tt.masked_fill(x, x > 2, 0.0),
    ]
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert all(not r.is_shared_with(x) for r in results)


def test_advanced_writes_through_expanded_views_are_refused():
    # PyTorch only warns (deprecated) here; t_tensor refuses, as it does for every write.
    x = tt.zeros(1).expand(3)
    for write in (lambda: x.__setitem__([0], 1.0), lambda: x.index_put_((tt.tensor([0]),), tt.tensor(1.0)),
                  lambda: x.masked_fill_(tt.tensor([True, False, False]), 1.0)):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write()


def test_setitem_casts_value_and_drops_leading_ones():
    x = tt.zeros(3, 4)
    x[[0, 2]] = tt.tensor([[[1, 2, 3, 4]]])    # int64 value, one leading size-1 dim too many
    assert x.tolist() == [[1, 2, 3, 4], [0, 0, 0, 0], [1, 2, 3, 4]]
    m = tt.zeros(2, 2, dtype=tt.int32)
    m[m == 0] = 2.7
    assert m.tolist() == [[2, 2], [2, 2]] and m.dtype == tt.int32


# ---------------------------------------------------------------------- gather / scatter


@st.composite
def along_dim_cases(draw, unique: bool = False, src_bigger: bool = False):
    """(input shape, dim, index shape) with the index no larger than the input off ``dim``."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    dim = draw(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    d = dim % max(len(shape), 1)
    size = shape[d] if shape else 1
    if shape:
        index_shape = [draw(st.integers(0, n)) for n in shape]
        index_shape[d] = draw(st.integers(0, size if unique else (4 if size else 0)))
    else:
        index_shape = draw(st.sampled_from([[], [1]] if unique else [[], [0], [2]]))
    extra = [draw(st.integers(0, 1)) if src_bigger else 0 for _ in index_shape]
    return {
        "shape": shape, "dim": dim, "index_shape": tuple(index_shape),
        "src_shape": tuple(n + e for n, e in zip(index_shape, extra, strict=True)),
        "layout": draw(st.sampled_from(LAYOUTS)), "index_layout": draw(st.sampled_from(["contiguous", "transposed"])),
        "dtype": draw(st.sampled_from(ALL_DTYPES)), "seed": draw(st.integers(0, 2**32 - 1)),
    }


def along_dim_index(rng, case, unique: bool) -> np.ndarray:
    shape, index_shape = case["shape"], case["index_shape"]
    d = case["dim"] % max(len(shape), 1)
    size = shape[d] if shape else 1
    if not index_shape:
        return np.asarray(rng.integers(0, size))
    if not unique:
        return rng.integers(0, max(size, 1), size=index_shape)
    # a different position for every element along dim: a permutation per line, cut to length
    order = np.argsort(rng.random(index_shape[:d] + (size,) + index_shape[d + 1 :]), axis=d)
    return np.take(order, np.arange(index_shape[d]), axis=d)


def layout_index(array: np.ndarray, layout: str) -> tuple[np.ndarray, callable]:
    """(data, view) giving ``array`` back through the index layout (a transposed copy viewed back)."""
    if layout == "transposed" and array.ndim >= 2:
        return np.ascontiguousarray(array.T), (lambda x: x.permute(*reversed(range(x.ndim))))
    return array, (lambda x: x)


def _inputs(case, index: np.ndarray):
    rng = np.random.default_rng(case["seed"] + 1)
    data = values(rng, base_shape(case["shape"], case["layout"]), case["dtype"])
    index_data, index_view = layout_index(index, case["index_layout"])
    return data, index_data, index_view


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(case=along_dim_cases(), method=st.booleans(), int32=st.booleans())
def test_gather(case, method, int32):
    index = along_dim_index(np.random.default_rng(case["seed"]), case, unique=False)
    index = index.astype(np.int32 if int32 else np.int64)
    data, index_data, index_view = _inputs(case, index)

    def fn(lib, x, i):
        x, i = apply_layout(x, case["layout"], case["shape"]), index_view(i)
        return x.gather(case["dim"], i) if method else lib.gather(x, case["dim"], i)

    check([data, index_data], fn)


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(case=along_dim_cases(unique=True, src_bigger=True), form=st.sampled_from(["src", "value", "inplace"]))
def test_scatter(case, form):
    if case["layout"] == "expanded":
        case["layout"] = "sliced"
    rng = np.random.default_rng(case["seed"])
    index = along_dim_index(rng, case, unique=True)
    data, index_data, index_view = _inputs(case, index)
    src = values(rng, case["src_shape"], case["dtype"])
    scalar = values(rng, (), case["dtype"]).item()

    def fn(lib, x, i, s):
        x, i = apply_layout(x, case["layout"], case["shape"]), index_view(i)
        if form == "value":
            return lib.scatter(x, case["dim"], i, scalar)
        if form == "inplace":
            x.scatter_(case["dim"], i, s)
            return x
        return lib.scatter(x, case["dim"], i, s)

    check([data, index_data, src], fn)


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(
    case=along_dim_cases(src_bigger=True),
    how=st.sampled_from(["scatter_add", "scatter_add_", "add", "multiply", "sum", "prod", "mean", "amax", "amin"]),
    include_self=st.booleans(),
)
def test_scatter_reductions(case, how, include_self):
    if case["layout"] == "expanded":
        case["layout"] = "transposed"
    if how == "mean" and case["dtype"] is tt.bool:
        case["dtype"] = tt.int16
    rng = np.random.default_rng(case["seed"])
    index = along_dim_index(rng, case, unique=False)
    data, index_data, index_view = _inputs(case, index)
    src = values(rng, case["src_shape"], case["dtype"])
    dim = case["dim"]

    def fn(lib, x, i, s):
        x, i = apply_layout(x, case["layout"], case["shape"]), index_view(i)
        if how == "scatter_add":
            return lib.scatter_add(x, dim, i, s)
        if how == "scatter_add_":
            return x.scatter_add_(dim, i, s)
        if how in ("add", "multiply"):
            return x.clone().scatter_(dim, i, s, reduce=how)
        return lib.scatter_reduce(x, dim, i, s, how, include_self=include_self)

    if how in ("add", "multiply") and case["dtype"] is tt.bool:
        return   # torch's legacy reduce has no bool kernel
    check([data, index_data, src], fn)


def test_scatter_reduce_nan_and_inplace():
    x = tt.tensor([float("nan"), 1.0, 5.0])
    got = x.scatter_reduce_(0, tt.tensor([0, 1, 1]), tt.tensor([2.0, float("nan"), 3.0]), "amax")
    assert got is x and np.isnan(x.numpy()[:2]).all() and x[2].item() == 5.0


# ---------------------------------------------------------------------- along one dim: index_*, take


@st.composite
def vector_index_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[dim]
    length = draw(st.integers(0, 5)) if size else 0
    return {
        "shape": shape, "dim": dim, "length": length, "layout": draw(st.sampled_from(LAYOUTS)),
        "dtype": draw(st.sampled_from(ALL_DTYPES)), "seed": draw(st.integers(0, 2**32 - 1)),
        "index_dtype": draw(st.sampled_from([np.int64, np.int32])),
    }


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(case=vector_index_cases(), method=st.booleans())
def test_index_select(case, method):
    rng = np.random.default_rng(case["seed"])
    size = case["shape"][case["dim"]]
    index = rng.integers(0, max(size, 1), size=case["length"]).astype(case["index_dtype"])
    data = values(rng, base_shape(case["shape"], case["layout"]), case["dtype"])

    def fn(lib, x, i):
        x = apply_layout(x, case["layout"], case["shape"])
        return x.index_select(case["dim"], i) if method else lib.index_select(x, case["dim"], i)

    check([data, index], fn)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(case=vector_index_cases(), form=st.sampled_from(["function", "method_", "alpha"]))
def test_index_add(case, form):
    if case["layout"] == "expanded":
        case["layout"] = "sliced"
    if form == "alpha" and case["dtype"] is tt.bool:
        form = "function"
    rng = np.random.default_rng(case["seed"])
    shape, dim = case["shape"], case["dim"]
    index = rng.integers(0, max(shape[dim], 1), size=case["length"]).astype(case["index_dtype"])
    source_shape = shape[: dim % len(shape)] + (case["length"],) + shape[dim % len(shape) + 1 :]
    data = values(rng, base_shape(shape, case["layout"]), case["dtype"])
    source = values(rng, source_shape, case["dtype"])

    def fn(lib, x, i, s):
        x = apply_layout(x, case["layout"], shape)
        if form == "method_":
            return x.index_add_(dim, i, s)
        return lib.index_add(x, dim, i, s, alpha=2 if form == "alpha" else 1)

    check([data, index, source], fn)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(case=vector_index_cases(), method=st.booleans(), tensor_value=st.booleans())
def test_index_fill(case, method, tensor_value):
    if case["layout"] == "expanded":
        case["layout"] = "transposed"
    rng = np.random.default_rng(case["seed"])
    shape, dim = case["shape"], case["dim"]
    index = rng.integers(-shape[dim], max(shape[dim], 1), size=case["length"])
    data = values(rng, base_shape(shape, case["layout"]), case["dtype"])
    scalar = values(rng, (), case["dtype"]).item()

    def fn(lib, x, i):
        x = apply_layout(x, case["layout"], shape)
        value = lib.tensor(scalar) if tensor_value else scalar
        return x.clone().index_fill_(dim, i, value) if method else lib.index_fill(x, dim, i, value)

    check([data, index], fn)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), max_size=4).map(tuple),
    index_shape=st.lists(st.integers(0, 3), max_size=3).map(tuple),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from(ALL_DTYPES),
    seed=st.integers(0, 2**32 - 1),
)
def test_take_flat(shape, index_shape, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    index = rng.integers(-n, n, size=index_shape) if n else np.zeros((0,), np.int64)
    data = values(rng, base_shape(shape, layout), dtype)
    check([data, index], lambda lib, x, i: lib.take(apply_layout(x, layout, shape), i))


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(case=vector_index_cases(), index_ndim=st.integers(0, 2))
def test_take_axis_matches_numpy(case, index_ndim):
    rng = np.random.default_rng(case["seed"])
    shape, dim = case["shape"], case["dim"]
    if shape[dim] == 0 and index_ndim == 0:
        return   # nothing to take from
    index = rng.integers(-shape[dim], max(shape[dim], 1), size=(case["length"],) * index_ndim)
    data = values(rng, shape, case["dtype"])
    got = tt.take(tt.tensor(data), tt.tensor(index), axis=dim)
    np.testing.assert_array_equal(got.numpy(), np.take(data, index, axis=dim))
    assert got.dtype == case["dtype"]


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(case=along_dim_cases(), no_dim=st.booleans(), bcast=st.booleans())
def test_take_along_dim_and_axis(case, no_dim, bcast):
    shape, dim = case["shape"], case["dim"]
    if not shape:
        return
    rng = np.random.default_rng(case["seed"])
    d = dim % len(shape)
    # off dim, the index matches the input or (broadcast) has size 1
    index_shape = [case["index_shape"][i] if i == d else (1 if bcast and rng.random() < 0.5 else n)
                   for i, n in enumerate(shape)]
    data = values(rng, base_shape(shape, case["layout"]), case["dtype"])
    if no_dim:   # flattened; PyTorch refuses negative indices here (t_tensor takes them, as with a dim)
        flat = int(np.prod(shape))
        index = rng.integers(0, flat, size=index_shape) if flat else np.zeros((0,), np.int64)
        # (torch views the input as 1-d here, which fails for some layouts: it gets a contiguous copy)
        def flat(lib, x, i):
            x = apply_layout(x, case["layout"], shape)
            return lib.take_along_dim(x if lib is tt else x.contiguous(), i)

        check([data, index], flat)
        return
    size = shape[d]
    empty = index_shape[:d] + [0] + index_shape[d + 1 :]
    index = rng.integers(-size, size, size=index_shape) if size else np.zeros(empty, np.int64)
    check([data, index], lambda lib, x, i: lib.take_along_dim(apply_layout(x, case["layout"], shape), i, dim))
    plain = np.asarray(apply_layout(tt.tensor(data), case["layout"], shape))
    got = tt.take_along_axis(tt.tensor(plain), tt.tensor(index.astype(np.int32)), axis=dim)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(plain, index, axis=dim))


# ---------------------------------------------------------------------- nonzero and masks


def test_nonzero_kernel_of_0d_needs_no_output_address():
    """A 0-d input has rows of no coordinates: the (n, 0) result holds no bytes and may have no
    address (the host allocator gives NULL for 0 bytes), so the kernel must not require one."""
    from t_tensor._capi import lib as C

    x = tt.tensor(3.0)
    assert C.tt_nonzero(0, [], x.data_ptr(), [], x.dtype.code, 0, 1) == C.TT_OK
    assert C.tt_nonzero(1, [1], x.data_ptr(), [1], x.dtype.code, 0, 1) == C.TT_ERR_INVALID_ARG  # 1-d needs one


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), max_size=4).map(tuple),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from(ALL_DTYPES),
    form=st.sampled_from(["nonzero", "tuple", "argwhere", "method", "where"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_nonzero(shape, layout, dtype, form, seed):
    data = values(np.random.default_rng(seed), base_shape(shape, layout), dtype, special=True)

    def fn(lib, x):
        x = apply_layout(x, layout, shape)
        if form == "tuple":
            return lib.nonzero(x, as_tuple=True)
        if form == "argwhere":
            return lib.argwhere(x)
        if form == "where":  # the one-argument where is nonzero(as_tuple=True)
            return lib.where(x)
        return x.nonzero() if form == "method" else lib.nonzero(x)

    check([data], fn)


@st.composite
def mask_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    keep = draw(st.integers(0, len(shape)))
    ones = draw(st.lists(st.booleans(), min_size=keep, max_size=keep))
    mask_shape = tuple(1 if one else n for one, n in zip(ones, shape[len(shape) - keep :], strict=True))
    return {
        "shape": shape, "mask_shape": mask_shape, "layout": draw(st.sampled_from(LAYOUTS)),
        "dtype": draw(st.sampled_from(ALL_DTYPES)), "seed": draw(st.integers(0, 2**32 - 1)),
    }


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(case=mask_cases(), form=st.sampled_from(["function", "method", "inplace", "tensor_value", "swapped"]))
def test_masked_fill(case, form):
    rng = np.random.default_rng(case["seed"])
    shape, mask_shape, layout = case["shape"], case["mask_shape"], case["layout"]
    data = values(rng, base_shape(shape, layout), case["dtype"])
    mask = np.asarray(rng.random(mask_shape) < 0.5)
    scalar = values(rng, (), case["dtype"]).item()
    if form == "inplace" and layout == "expanded":
        layout = "contiguous"
        data = values(rng, shape, case["dtype"])

    def fn(lib, x, m):
        x = apply_layout(x, layout, shape)
        if form == "inplace":
            return x.masked_fill_(m, scalar)
        if form == "tensor_value":
            return lib.masked_fill(x, m, lib.tensor(scalar))
        if form == "swapped":  # the mask may be the larger operand out of place
            return lib.masked_fill(x[(0,) * x.ndim] if x.numel() else x, m, scalar)
        return x.masked_fill(m, scalar) if form == "method" else lib.masked_fill(x, m, scalar)

    check([data, mask], fn)


@pytest.mark.parametrize("dtype", [tt.bool, tt.int8, tt.float16, tt.float32, tt.int64], ids=lambda d: d.name)
def test_masked_fill_of_a_large_tensor_on_threads(dtype):
    """Large enough to split over threads (each range rewrites its elements as a select on the
    bits); a random mask, a row mask broadcast, a transposed target and in place."""
    rng = np.random.default_rng(7)
    data = (rng.standard_normal((300, 500)) * 50).astype(dtype.numpy)
    mask = rng.random((300, 500)) < 0.5
    row = rng.random(500) < 0.5
    value = np.array(3, dtype.numpy)
    before = tt.get_num_threads()
    tt.set_num_threads(2)
    try:
        x = tt.tensor(data)
        assert x.masked_fill(tt.tensor(mask), 3).numpy().tobytes() == np.where(mask, value, data).tobytes()
        assert x.masked_fill(tt.tensor(row), 3).numpy().tobytes() == np.where(row, value, data).tobytes()
        got = tt.tensor(np.ascontiguousarray(data.T)).T.masked_fill(tt.tensor(mask), 3).numpy()
        assert np.array_equal(got, np.where(mask, value, data))
        x.masked_fill_(tt.tensor(mask), 3)
        assert x.numpy().tobytes() == np.where(mask, value, data).tobytes()
    finally:
        tt.set_num_threads(before)


def test_setitem_with_operands_that_share_the_targets_bytes():
    """A value or index tensor that views the target is copied before the write, keeping its
    strides (the plan was computed from them). NumPy's copy semantics are the reference (torch
    refuses the overlap)."""
    y, want = tt.arange(9.0).reshape(3, 3), np.arange(9.0).reshape(3, 3)
    y[tt.tensor([0, 1, 2])] = y.t()
    want[np.array([0, 1, 2])] = want.T.copy()
    assert y.tolist() == want.tolist()
    y, want = tt.arange(12).reshape(6, 2), np.arange(12).reshape(6, 2)
    y[y[:3, 0]] = 7                                     # a strided index tensor into y itself
    want[want[:3, 0].copy()] = 7
    assert y.tolist() == want.tolist()
    y, want = tt.arange(6.0), np.arange(6.0)
    y.index_put_((tt.tensor([0, 1]),), y[1:3], accumulate=True)
    np.add.at(want, [0, 1], want[1:3].copy())
    assert y.tolist() == want.tolist()
    y = tt.arange(8).reshape(4, 2)
    with pytest.raises(IndexError, match="index 4 is out of bounds"):   # the index as it was read
        y[y[:, 0]] = 9


def test_masked_fill_stores_only_where_the_mask_is_true():
    """Two Python threads fill the even and the odd elements of one tensor at once (the kernels
    run without the GIL): a fill that also rewrote the elements its mask leaves alone would put
    back bits the other thread had already changed (a review found 13 of 30 trials lost fills)."""
    import threading

    n = 1 << 20
    even = np.zeros(n, bool)
    even[0::2] = True
    masks = tt.tensor(even), tt.tensor(~even)
    for _ in range(8):
        x = tt.zeros(n)
        barrier = threading.Barrier(2)

        def fill(mask, value, x=x, barrier=barrier):
            barrier.wait()
            x.masked_fill_(mask, value)

        threads = [threading.Thread(target=fill, args=(m, v)) for m, v in zip(masks, (1.0, 2.0), strict=True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = x.numpy()
        assert (got[0::2] == 1.0).all() and (got[1::2] == 2.0).all()


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(case=mask_cases(), swap=st.booleans(), method=st.booleans())
def test_masked_select(case, swap, method):
    rng = np.random.default_rng(case["seed"])
    shape, mask_shape, layout = case["shape"], case["mask_shape"], case["layout"]
    data = values(rng, base_shape(shape, layout), case["dtype"])
    mask = np.asarray(rng.random(shape if swap else mask_shape) < 0.5)
    if swap:   # the input is the smaller one and broadcasts against the mask
        data, layout = values(rng, mask_shape, case["dtype"]), "contiguous"
        shape = mask_shape

    def fn(lib, x, m):
        x = apply_layout(x, layout, shape)
        return x.masked_select(m) if method else lib.masked_select(x, m)

    check([data, mask], fn)


@settings(max_examples=EXAMPLES, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple), classes=st.integers(-1, 5), seed=st.integers(0, 99))
def test_one_hot(shape, classes, seed):
    rng = np.random.default_rng(seed)
    high = 5 if classes == -1 else classes
    if high == 0 or (classes == -1 and 0 in shape):
        return   # no valid class values, or nothing to infer the number of classes from
    data = rng.integers(0, high, size=shape)
    check([data], lambda lib, x: (lib.nn.functional.one_hot if lib is torch else lib.one_hot)(x, classes))


# ---------------------------------------------------------------------- errors


def _one_hot(lib, x, n=-1):
    return (torch.nn.functional.one_hot if lib is torch else tt.one_hot)(x, n)


def _set(lib, x, key, value):
    x[key] = value


I64 = np.array
ERRORS = [
    # (name, inputs, fn(lib, *tensors), exception, match)
    ("getitem out of range", [np.zeros((2, 3)), I64([0, 3])], lambda lib, x, i: x[:, i], IndexError,
     "__getitem__: index 3 is out of bounds for dimension 1 with size 3"),
    ("getitem negative out of range", [np.zeros((2, 3)), I64([-3])], lambda lib, x, i: x[i], IndexError,
     "index -3 is out of bounds for dimension 0 with size 2"),
    ("getitem float index", [np.zeros((2, 3)), I64([0.0])], lambda lib, x, i: x[i], IndexError,
     "tensors used as indices must be long, int, byte or bool"),
    ("getitem int16 index", [np.zeros((2, 3)), I64([0], np.int16)], lambda lib, x, i: x[i], IndexError,
     "tensors used as indices"),
    ("getitem no broadcast", [np.zeros((2, 3)), I64([0, 1]), I64([0, 1, 2])], lambda lib, x, i, j: x[i, j],
     IndexError, r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]"),
    ("getitem mask shape", [np.zeros((2, 3)), I64([True, False, True])], lambda lib, x, m: x[m], IndexError,
     r"The shape of the mask \[3\] at index 0 does not match"),
    ("getitem too many", [np.zeros((2, 3)), I64([0])], lambda lib, x, i: x[i, i, i], IndexError, "too many indices"),
    ("setitem out of range", [np.zeros((2, 3)), I64([2])], lambda lib, x, i: _set(lib, x, i, 1.0), IndexError,
     "__setitem__: index 2 is out of bounds"),
    ("setitem value shape", [np.zeros((3, 4)), I64([0, 1]), np.ones(3)], lambda lib, x, i, v: _set(lib, x, i, v),
     RuntimeError, r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of shape \[2"),
    ("scatter_ expanded", [np.zeros((1, 3)), I64([[0, 1, 2]]), np.ones((1, 3))],
     lambda lib, x, i, s: x.expand(2, 3).scatter_(1, i, s), RuntimeError,
     "scatter_: unsupported operation: more than one element of the written-to tensor"),
    ("index_put_ out of range", [np.zeros(3), I64([3]), np.ones(1)],
     lambda lib, x, i, v: x.index_put_((i,), v, accumulate=True), IndexError, "index_put_: index 3 is out of bounds"),
    ("gather out of range", [np.zeros((2, 3)), I64([[0, 3]])], lambda lib, x, i: lib.gather(x, 1, i), IndexError,
     "gather: index 3 is out of bounds for dimension 1 with size 3"),
    ("gather negative", [np.zeros((2, 3)), I64([[-1]])], lambda lib, x, i: lib.gather(x, 0, i), IndexError,
     "gather: index -1 is out of bounds for dimension 0 with size 2"),
    ("gather float index", [np.zeros((2, 3)), I64([[0.0]])], lambda lib, x, i: lib.gather(x, 0, i), RuntimeError,
     "gather: Expected dtype int32/int64 for index"),
    ("gather ndim", [np.zeros((2, 3)), I64([0])], lambda lib, x, i: lib.gather(x, 0, i), RuntimeError,
     "same number of dimensions"),
    ("gather too large", [np.zeros((2, 3)), I64([[0], [0], [0]])], lambda lib, x, i: lib.gather(x, 1, i),
     RuntimeError, "Size does not match at dimension 0"),
    ("gather bad dim", [np.zeros((2, 3)), I64([[0]])], lambda lib, x, i: lib.gather(x, 2, i), IndexError, "gather"),
    ("scatter out of range", [np.zeros((2, 3)), I64([[3]]), np.ones((1, 1))],
     lambda lib, x, i, s: lib.scatter(x, 1, i, s), IndexError, "scatter: index 3 is out of bounds"),
    ("scatter dtype", [np.zeros(3, np.float32), I64([0]), np.ones(1)], lambda lib, x, i, s: lib.scatter(x, 0, i, s),
     RuntimeError, "scatter: Expected self.dtype to be equal to src.dtype"),
    ("scatter src small", [np.zeros((2, 3)), I64([[0, 1]]), np.ones((1, 1))],
     lambda lib, x, i, s: lib.scatter(x, 1, i, s), RuntimeError, r"Expected index \[1, 2\] to be no larger"),
    ("scatter bad legacy reduce", [np.zeros(3), I64([0]), np.ones(1)],
     lambda lib, x, i, s: x.scatter_(0, i, s, reduce="max"), RuntimeError, "reduce argument must be either add or"),
    ("scatter_add_ out of range", [np.zeros(3), I64([-1]), np.ones(1)],
     lambda lib, x, i, s: x.scatter_add_(0, i, s), IndexError, "scatter_add_: index -1 is out of bounds"),
    ("scatter_reduce bad reduce", [np.zeros(3), I64([0]), np.ones(1)],
     lambda lib, x, i, s: lib.scatter_reduce(x, 0, i, s, "foo"), RuntimeError, "reduce argument must be either sum"),
    ("scatter_reduce mean bool", [np.zeros(3, bool), I64([0]), np.ones(1, bool)],
     lambda lib, x, i, s: lib.scatter_reduce(x, 0, i, s, "mean"), RuntimeError, "scatter_reduce: reduce='mean'"),
    ("index_select 2-d index", [np.zeros((2, 3)), I64([[0]])], lambda lib, x, i: lib.index_select(x, 1, i),
     IndexError, "index_select: Index is supposed to be a vector"),
    ("index_select out of range", [np.zeros((2, 3)), I64([3])], lambda lib, x, i: lib.index_select(x, 1, i),
     IndexError, "index_select: index 3 is out of bounds for dimension 1 with size 3"),
    ("index_select negative", [np.zeros((2, 3)), I64([-1])], lambda lib, x, i: lib.index_select(x, 1, i),
     IndexError, "index_select: index -1 is out of bounds"),
    ("index_select float", [np.zeros((2, 3)), I64([0.0])], lambda lib, x, i: lib.index_select(x, 1, i),
     RuntimeError, "index_select: Expected dtype int32 or int64 for index"),
    ("index_add dtype", [np.zeros(3, np.float32), I64([0]), np.ones(1)],
     lambda lib, x, i, s: x.index_add_(0, i, s), RuntimeError, "must have the same scalar type"),
    ("index_add shape", [np.zeros(3), I64([0]), np.ones((1, 1))],
     lambda lib, x, i, s: x.index_add_(0, i, s), RuntimeError, "source tensor shape must match"),
    ("index_add out of range", [np.zeros(3), I64([3]), np.ones(1)],
     lambda lib, x, i, s: x.index_add_(0, i, s), IndexError, "index_add_: index 3 is out of bounds"),
    ("index_fill int32", [np.zeros(3), I64([0], np.int32)], lambda lib, x, i: x.index_fill_(0, i, 1.0), Exception,
     "index_fill_: Expected dtype int64"),
    ("index_fill out of range", [np.zeros(3), I64([3])], lambda lib, x, i: x.index_fill_(0, i, 1.0), IndexError,
     "index_fill_: index 3 is out of bounds"),
    ("take out of range", [np.zeros((2, 3)), I64([6])], lambda lib, x, i: lib.take(x, i), IndexError,
     "take: index 6 is out of bounds for the flattened input with size 6"),
    ("take int32", [np.zeros((2, 3)), I64([0], np.int32)], lambda lib, x, i: lib.take(x, i), RuntimeError,
     "take: Expected dtype int64"),
    ("take_along_dim int32", [np.zeros((2, 3)), I64([[0]], np.int32)], lambda lib, x, i: lib.take_along_dim(x, i, 1),
     RuntimeError, "take_along_dim: dtype of indices should be Long"),
    ("take_along_dim ndim", [np.zeros((2, 3)), I64([0])], lambda lib, x, i: lib.take_along_dim(x, i, 1),
     RuntimeError, "should have the same number of dimensions"),
    ("masked_fill uint8 mask", [np.zeros(3), np.ones(3, np.uint8)], lambda lib, x, m: x.masked_fill(m, 1.0),
     RuntimeError, "masked_fill only supports boolean masks, but got mask with dtype uint8"),
    ("masked_fill 1-d value", [np.zeros(3), np.ones(3, bool), np.ones(1)], lambda lib, x, m, v: x.masked_fill_(m, v),
     RuntimeError, "masked_fill_: only supports a 0-dimensional value tensor"),
    ("masked_fill_ broadcast", [np.zeros(3), np.ones((2, 3), bool)], lambda lib, x, m: x.masked_fill_(m, 1.0),
     RuntimeError, "masked_fill_"),
    ("masked_fill overflow", [np.zeros(3, np.int8), np.ones(3, bool)], lambda lib, x, m: x.masked_fill(m, 300),
     RuntimeError, "cannot be converted to type int8"),
    ("masked_select int mask", [np.zeros(3), np.ones(3, np.int64)], lambda lib, x, m: lib.masked_select(x, m),
     RuntimeError, "masked_select: expected BoolTensor for mask"),
    ("one_hot too small", [I64([0, 2])], lambda lib, x: _one_hot(lib, x, 2), RuntimeError,
     "Class values must be smaller than num_classes"),
    ("one_hot negative", [I64([0, -1])], lambda lib, x: _one_hot(lib, x, 3), RuntimeError,
     "Class values must be non-negative"),
    ("one_hot empty", [np.zeros(0, np.int64)], lambda lib, x: _one_hot(lib, x), RuntimeError,
     "Can not infer total number of classes from empty tensor"),
    ("one_hot int32", [I64([0], np.int32)], lambda lib, x: _one_hot(lib, x, 2), RuntimeError,
     "one_hot is only applicable to index tensor of type LongTensor"),
]


@pytest.mark.parametrize("name, inputs, fn, exception, match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, inputs, fn, exception, match):
    helper_test_exception(inputs, partial(fn, tt), partial(fn, torch), exception=exception, match=match)


def test_index_error_leaves_no_crash_on_huge_and_min_indices():
    x = tt.arange(4)
    for bad in (2**63 - 1, -(2**63), 4, -5):
        with pytest.raises(IndexError, match="out of bounds"):
            x[tt.tensor([0, bad])]
        with pytest.raises(IndexError, match="out of bounds"):
            x.scatter_(0, tt.tensor([bad]), tt.tensor([1]))
        with pytest.raises(IndexError, match="out of bounds"):   # (PyTorch reads out of bounds here)
            tt.take_along_dim(x, tt.tensor([bad]), 0)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_whole_rows_gathered_and_scattered(layout):
    """x[rows], index_select(x, 0, rows) and x[rows] = v copy whole rows (one offset per row,
    one memmove when both sides are contiguous); negative rows wrap, a row out of range raises."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((300, 70)).astype(np.float32)
    if layout == "transposed":
        base = np.ascontiguousarray(base.T).T          # same values, column-major
    x_np = base[::2] if layout == "sliced" else base
    x = tt.tensor(base)[::2] if layout == "sliced" else (tt.tensor(np.ascontiguousarray(base.T)).T
                                                        if layout == "transposed" else tt.tensor(base))
    rows = rng.integers(-x_np.shape[0], x_np.shape[0], 97)
    np.testing.assert_array_equal(x[tt.tensor(rows)].numpy(), x_np[rows])
    np.testing.assert_array_equal(tt.index_select(x, 0, tt.tensor(rows % x_np.shape[0])).numpy(),
                                  x_np[rows % x_np.shape[0]])
    value = rng.standard_normal((97, 70)).astype(np.float32)
    unique_rows = np.unique(rows % x_np.shape[0])
    x[tt.tensor(unique_rows)] = tt.tensor(value[: len(unique_rows)])
    want = x_np.copy()
    want[unique_rows] = value[: len(unique_rows)]
    np.testing.assert_array_equal(x.numpy(), want)
    with pytest.raises(IndexError):
        x[tt.tensor([0, x_np.shape[0]])]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32, np.int32, np.float64, np.int64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (300_007,), (2, 3, 65_536), (0, 4)], ids=str)
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_mask_of_the_same_shape_selects_as_numpy(dtype, threads, shape, density):
    """x[mask] with a bool mask of x's shape, both contiguous, is one C call (count the chunks,
    allocate, copy branchlessly on the threads); it must give NumPy's elements in NumPy's order,
    and the same as the general path (a strided copy of the same data)."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    m = rng.random(shape) < density
    before = tt.get_num_threads()
    try:
        tt.set_num_threads(threads)
        tx, tm = tt.from_numpy(x), tt.from_numpy(m)
        got = tx[tm]
        assert got.shape == (int(m.sum()),) and got.dtype == tx.dtype and got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), x[m])
        np.testing.assert_array_equal(tx.masked_select(tm).numpy(), x[m])
        if x.ndim == 2:  # the general path: transposed (not contiguous) operands
            general = tt.from_numpy(np.ascontiguousarray(x.T)).T[tt.from_numpy(np.ascontiguousarray(m.T)).T]
            np.testing.assert_array_equal(general.numpy(), got.numpy())
    finally:
        tt.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32, np.int64, np.float64])
@pytest.mark.parametrize("shape", [(300_007,), (513, 1031), (3, 70, 2049), (5,), (0, 3)], ids=str)
def test_nonzero_of_contiguous_data_matches_numpy(dtype, shape):
    """nonzero of contiguous data counts and writes by chunks on the threads (branchless); NaN
    counts and -0.0 does not, as in NumPy; a strided view of the same values takes the general
    loop and must agree."""
    rng = np.random.default_rng(5)
    x = np.where(rng.random(shape) < 0.4, rng.standard_normal(shape) * 10, 0).astype(dtype)
    if x.dtype.kind == "f" and x.size > 4:
        x.flat[1], x.flat[2], x.flat[3] = np.nan, -0.0, np.inf
    tx = tt.from_numpy(x)
    want = np.argwhere(x)
    assert tt.count_nonzero(tx).item() == len(want)
    np.testing.assert_array_equal(tt.nonzero(tx).numpy(), want.reshape(-1, x.ndim))
    for got, axis in zip(tt.nonzero(tx, as_tuple=True), np.nonzero(x), strict=True):
        np.testing.assert_array_equal(got.numpy(), axis)
    if x.ndim >= 2:
        strided = tt.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 1))).transpose(0, 1)
        np.testing.assert_array_equal(tt.nonzero(strided).numpy(), want)


def test_mask_bytes_other_than_one_select_and_grad_takes_the_general_path():
    raw = np.array([0, 2, 1, 255, 0], dtype=np.uint8).view(np.bool_)  # nonzero bytes are True
    x = tt.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert x[tt.from_numpy(raw)].tolist() == [2.0, 3.0, 4.0]
    w = tt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    picked = w[w > 0]
    assert picked.grad_fn is not None
    picked.sum().backward()
    assert w.grad.tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(IndexError, match="mask"):
        x[tt.tensor([True, False])]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32, np.int32, np.float64, np.int64])
@pytest.mark.parametrize("threads", [1, 2])
def test_large_one_index_gathers_match_numpy(dtype, threads):
    """A gather through one index tensor runs a typed loop (one per item size), on the threads
    when the row is long, with the next reads prefetched: x[idx] with negative indices, a strided
    index tensor, index_select of rows of a transposed matrix and take_along_dim, against NumPy;
    and an index out of range near the end of a long index still raises IndexError."""
    rng = np.random.default_rng(7)
    x = (rng.random(50_003) * 100).astype(dtype)
    idx = rng.integers(-50_003, 50_003, 70_001)
    before = tt.get_num_threads()
    try:
        tt.set_num_threads(threads)
        tx, tidx = tt.from_numpy(x), tt.from_numpy(idx)
        np.testing.assert_array_equal(tx[tidx].numpy(), x[idx])
        np.testing.assert_array_equal(tx[tidx[::3]].numpy(), x[idx[::3]])
        m = (rng.random((300, 257)) * 100).astype(dtype)
        rows = rng.integers(0, 257, 40_000)
        tm = tt.from_numpy(np.ascontiguousarray(m.T)).T                    # strided rows of the source
        np.testing.assert_array_equal(tt.index_select(tm, 1, tt.from_numpy(rows)).numpy(), m[:, rows])
        along = rng.integers(0, 257, (300, 200))
        np.testing.assert_array_equal(tt.take_along_dim(tt.from_numpy(m), tt.from_numpy(along), 1).numpy(),
                                      np.take_along_axis(m, along, 1))
        bad = idx.copy()
        bad[-5] = 50_003
        with pytest.raises(IndexError):
            tx[tt.from_numpy(bad)]
    finally:
        tt.set_num_threads(before)
