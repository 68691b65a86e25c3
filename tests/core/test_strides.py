"""Property tests for t_tensor.strides against NumPy (always) and PyTorch (when installed).

A layout ``(shape, strides, offset)`` is materialised with ``as_strided`` over
``np.arange(...)``, so every element's value *is* its storage position and two
views agree exactly when they read the same storage elements in the same order.
"""

from __future__ import annotations

import doctest
import itertools
import math
import re

import numpy as np
import pytest
import torch  # the test oracle, installed by the dev extra (never a runtime dependency)
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from t_tensor import strides as S

FEW = settings(max_examples=60, deadline=None)
SOME = settings(max_examples=150, deadline=None)


# --------------------------------------------------------------------------- helpers


def extent(shape, strides, offset):
    if 0 in shape:
        return 0
    return offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1


def buffer_for(shape, strides, offset):
    return np.arange(max(extent(shape, strides, offset), offset + 1, 1))


def materialize(buf, shape, strides, offset):
    """The NumPy array that (shape, strides, offset) describes over ``buf``."""
    item = buf.itemsize
    return as_strided(buf[offset:], shape=shape, strides=[s * item for s in strides], writeable=False)


def layout_of(view, base):
    """(shape, strides, offset) in elements of a NumPy view of the 1-D array ``base``."""
    item = base.itemsize
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    # An empty array's data pointer means nothing, so give empty views offset 0.
    return view.shape, tuple(s // item for s in view.strides), start // item if view.size else 0


def all_offsets(shape, strides, offset):
    return [
        offset + sum(i * s for i, s in zip(idx, strides, strict=True)) for idx in itertools.product(*map(range, shape))
    ]


def torch_view(shape, strides, offset):
    n = max(extent(shape, strides, offset), offset + 1, 1)
    return torch.arange(n).as_strided(shape, strides, offset)


def torch_layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


# --------------------------------------------------------------------------- strategies

sizes = st.integers(0, 5)
shapes = st.lists(sizes, max_size=5).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 5), max_size=5).map(tuple)


@st.composite
def layouts(draw, shape_strategy=shapes, min_stride=0):
    """Arbitrary layouts: any non-negative strides, so views may overlap or interleave."""
    shape = draw(shape_strategy)
    strides = tuple(draw(st.integers(min_stride, 30)) for _ in shape)
    return shape, strides, draw(st.integers(0, 7))


@st.composite
def numpy_views(draw):
    """Non-overlapping layouts produced by NumPy itself: slicing and transposing a C array."""
    base_shape = draw(st.lists(st.integers(0, 6), max_size=4).map(tuple))
    base = np.arange(math.prod(base_shape))
    view = base.reshape(base_shape)
    key = tuple(
        slice(draw(st.integers(0, 3)), draw(st.one_of(st.none(), st.integers(0, 6))), draw(st.integers(1, 3)))
        for _ in base_shape
    )
    view = view[(*key, ...)].transpose(draw(st.permutations(range(len(base_shape)))))
    return layout_of(view, base)


@st.composite
def any_layout(draw):
    return draw(st.one_of(layouts(), numpy_views()))


def prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshape_targets(draw, shape):
    """A shape with the same number of elements, often a regrouping of the same factors."""
    if 0 in shape:
        new = draw(st.lists(sizes, min_size=1, max_size=5))
        new[draw(st.integers(0, len(new) - 1))] = 0
        return tuple(new)
    factors = [p for n in shape for p in prime_factors(n)]
    if draw(st.booleans()):
        factors = draw(st.permutations(factors))
    cuts = sorted(draw(st.sets(st.integers(1, max(len(factors) - 1, 1)), max_size=4)))
    cuts = [c for c in cuts if c < len(factors)]
    groups = [factors[a:b] for a, b in zip([0, *cuts], [*cuts, len(factors)], strict=True)]
    new = [math.prod(g) for g in groups if g]
    for _ in range(draw(st.integers(0, 2))):
        new.insert(draw(st.integers(0, len(new))), 1)
    return tuple(new)


@st.composite
def index_keys(draw, ndim):
    """Basic-index keys: ints (some out of range), slices, None and at most one Ellipsis."""
    item = st.one_of(
        st.integers(-7, 7),
        st.builds(
            slice,
            st.one_of(st.none(), st.integers(-8, 8)),
            st.one_of(st.none(), st.integers(-8, 8)),
            st.one_of(st.none(), st.integers(1, 4)),
        ),
        st.none(),
    )
    parts = draw(st.lists(item, max_size=ndim + 2))
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0]
    return tuple(parts)


# --------------------------------------------------------------------------- basics


@SOME
@given(shapes)
def test_numel_and_contiguous_strides(shape):
    assert S.numel(shape) == int(np.prod(shape, dtype=np.int64))
    strides = S.contiguous_strides(shape)
    assert strides == tuple(math.prod(max(n, 1) for n in shape[i + 1 :]) for i in range(len(shape)))
    arr = np.arange(math.prod(shape)).reshape(shape)
    np.testing.assert_array_equal(materialize(buffer_for(shape, strides, 0), shape, strides, 0), arr)
    assert S.is_contiguous(shape, strides)


def test_contiguous_strides_matches_torch():
    for shape in [(), (2, 0, 3), (0,), (1, 0), (3, 1, 4), (0, 0)]:
        assert S.contiguous_strides(shape) == torch.empty(shape).stride()


@SOME
@given(st.one_of(layouts(), numpy_views()))
def test_is_contiguous_matches_row_major_enumeration(layout):
    shape, strides, offset = layout
    offsets = all_offsets(shape, strides, offset)
    expected = offsets == list(range(offset, offset + len(offsets)))
    assert S.is_contiguous(shape, strides) == expected
    view = materialize(buffer_for(*layout), shape, strides, offset)
    assert view.flags["C_CONTIGUOUS"] == expected
    if torch is not None:
        assert torch_view(*layout).is_contiguous() == expected


@given(st.integers(0, 6), st.integers(-8, 8))
@FEW
def test_normalize_dim(ndim, dim):
    n = max(ndim, 1)
    if -n <= dim < n:
        assert S.normalize_dim(dim, ndim) == dim % n
    else:
        with pytest.raises(IndexError, match=rf"^myop: dimension out of range .*\[{-n}, {n - 1}\].*got {dim}\)"):
            S.normalize_dim(dim, ndim, fn="myop")


def test_normalize_dims():
    assert S.normalize_dims((0, -1, 1), 3, fn="f") == (0, 2, 1)
    assert S.normalize_dims(-1, 2, fn="f") == (1,)
    assert S.normalize_dims([], 2, fn="f") == ()
    with pytest.raises(RuntimeError, match=r"^sq: dim 0 appears multiple times in the list of dims$"):
        S.normalize_dims((0, -2), 2, fn="sq")
    with pytest.raises(IndexError, match=r"^sq: dimension out of range"):
        S.normalize_dims((0, 2), 2, fn="sq")
    with pytest.raises(TypeError, match=r"^sq: "):
        S.normalize_dims((0, 1.0), 2, fn="sq")


# --------------------------------------------------------------------------- infer_size / view


@SOME
@given(st.integers(0, 24), st.lists(st.integers(-2, 6), max_size=4))
def test_infer_size_matches_numpy(n, shape):
    if any(s < -1 for s in shape):
        # NumPy treats every negative size as "infer"; PyTorch (and we) accept only -1.
        with pytest.raises(RuntimeError, match=r"^view: (invalid shape dimension|only one dimension)"):
            S.infer_size(shape, n)
        return
    try:
        expected = np.empty(n).reshape(shape).shape
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(RuntimeError, match=r"^view: "):
            S.infer_size(shape, n)
    else:
        assert S.infer_size(shape, n) == expected


def test_infer_size_errors_match_torch_text():
    with pytest.raises(RuntimeError, match=r"^reshape: only one dimension can be inferred$"):
        S.infer_size((-1, -1), 6, fn="reshape")
    with pytest.raises(RuntimeError, match=r"^view: invalid shape dimension -2"):
        S.infer_size((-2, 3), 6)
    with pytest.raises(RuntimeError, match=re.escape("view: shape '[4, 3]' is invalid for input of size 6")):
        S.infer_size((4, 3), 6)
    with pytest.raises(RuntimeError, match=re.escape("view: shape '[4, -1]' is invalid for input of size 6")):
        S.infer_size((4, -1), 6)
    with pytest.raises(RuntimeError, match=r"^view: cannot reshape tensor of 0 elements .* ambiguous"):
        S.infer_size((0, -1), 0)
    with pytest.raises(TypeError, match=r"^view: size must be an integer, got float"):
        S.infer_size((2.0, 3), 6)
    with pytest.raises(TypeError, match=r"^view: size must be an integer, got bool"):
        S.infer_size((True, 6), 6)
    with pytest.raises(RuntimeError, match="ambiguous"):
        S.infer_size((2, -1, 0), 0)
    assert S.infer_size((2, -1), 0) == (2, 0)
    assert S.infer_size((np.int64(2), -1), 6) == (2, 3)


def numpy_nocopy_reshape(view, new_shape):
    try:
        return np.reshape(view, new_shape, copy=False)
    except ValueError:
        return None


@SOME
@given(st.data())
def test_view_strides_matches_numpy(data):
    shape, strides, offset = data.draw(any_layout())
    new_shape = data.draw(reshape_targets(shape))
    buf = buffer_for(shape, strides, offset)
    src = materialize(buf, shape, strides, offset)
    got = S.view_strides(shape, strides, new_shape)
    if math.prod(shape) == 0:
        assert got is not None
        return
    expected = numpy_nocopy_reshape(src, new_shape)
    assert (got is None) == (expected is None)
    if got is not None:
        assert len(got) == len(new_shape)
        np.testing.assert_array_equal(materialize(buf, new_shape, got, offset), src.reshape(new_shape))
    if S.is_contiguous(shape, strides):
        assert got is not None


@SOME
@given(st.data())
def test_view_strides_matches_torch_exactly(data):
    shape, strides, offset = data.draw(any_layout())
    new_shape = data.draw(reshape_targets(shape))
    got = S.view_strides(shape, strides, new_shape)
    try:
        expected = torch_view(shape, strides, offset).view(new_shape).stride()
    except RuntimeError:
        expected = None
    assert got == expected


def test_view_strides_examples():
    assert S.view_strides((2, 3), (3, 1), (6,)) == (1,)
    assert S.view_strides((3, 2), (1, 3), (6,)) is None  # a transpose needs a copy
    assert S.view_strides((2, 3), (0, 1), (2, 3, 1)) == (0, 1, 1)  # expanded rows split fine
    assert S.view_strides((2, 3), (0, 1), (6,)) is None
    assert S.view_strides((), (), (1, 1)) == (1, 1)
    assert S.view_strides((1, 1), (5, 7), ()) == ()
    assert S.view_strides((2, 0), (9, 9), (0, 5)) == (5, 1)
    assert S.view_strides((2, 0), (9, 9), (2, 0)) == (9, 9)
    with pytest.raises(RuntimeError, match=re.escape("reshape: shape '[4]' is invalid for input of size 6")):
        S.view_strides((2, 3), (3, 1), (4,), fn="reshape")
    with pytest.raises(RuntimeError, match=r"^view: negative dimension -1"):
        S.view_strides((2, 3), (3, 1), (-1, 6))


# --------------------------------------------------------------------------- broadcasting


@st.composite
def broadcastable_shapes(draw):
    target = draw(shapes)
    out = []
    for _ in range(draw(st.integers(1, 4))):
        shape = list(target[draw(st.integers(0, len(target))) :])
        for i in range(len(shape)):
            if draw(st.booleans()):
                shape[i] = 1
        out.append(tuple(shape))
    return out


@SOME
@given(st.one_of(broadcastable_shapes(), st.lists(shapes, max_size=3)))
def test_broadcast_shapes_matches_numpy(shape_list):
    try:
        expected = np.broadcast_shapes(*shape_list)
    except ValueError:
        with pytest.raises(RuntimeError, match=r"^broadcast_shapes: The size of tensor a \(\d+\) must match"):
            S.broadcast_shapes(*shape_list)
    else:
        assert S.broadcast_shapes(*shape_list) == expected


def test_broadcast_shapes_message():
    msg = "add: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        S.broadcast_shapes((2, 3), (4,), fn="add")
    with pytest.raises(RuntimeError, match=r"^add: negative dimension"):
        S.broadcast_shapes((2, -3), fn="add")
    assert S.broadcast_shapes() == ()
    assert S.broadcast_shapes((0, 1), (1, 3)) == (0, 3)


@st.composite
def expand_cases(draw):
    shape, strides, offset = draw(any_layout())
    target = [draw(st.integers(0, 4)) if n == 1 and draw(st.booleans()) else n for n in shape]
    target = [-1 if draw(st.integers(0, 3)) == 0 else t for t in target]
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    return (shape, strides, offset), tuple(lead + target)


@SOME
@given(expand_cases())
def test_expand_strides_matches_numpy_broadcast_to(case):
    (shape, strides, offset), target = case
    resolved = tuple(shape[i - (len(target) - len(shape))] if t == -1 else t for i, t in enumerate(target))
    new_strides = S.expand_strides(shape, strides, target)
    buf = buffer_for(shape, strides, offset)
    expected = np.broadcast_to(materialize(buf, shape, strides, offset), resolved)
    np.testing.assert_array_equal(materialize(buf, resolved, new_strides, offset), expected)
    for i, (n, stride) in enumerate(zip(resolved, new_strides, strict=True)):
        old = shape[i - (len(target) - len(shape))] if i >= len(target) - len(shape) else 1
        if old == 1 and n != 1:
            assert stride == 0  # broadcast dims re-read one element
    if torch is not None:
        assert new_strides == torch_view(shape, strides, offset).expand(target).stride()


def test_expand_strides_errors():
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "expand: The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
        ),
    ):
        S.expand_strides((6,), (1,), (-1, 6))
    msg = (
        "expand: The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
        "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        S.expand_strides((3,), (1,), (2, 4))
    with pytest.raises(RuntimeError, match=r"^expand_as: the number of sizes provided \(1\) must be greater"):
        S.expand_strides((2, 3), (3, 1), (3,), fn="expand_as")
    with pytest.raises(RuntimeError, match=r"^expand: The expanded size of the tensor \(-2\)"):
        S.expand_strides((1,), (1,), (-2,))
    with pytest.raises(TypeError, match=r"^expand: size must be an integer"):
        S.expand_strides((1,), (1,), (2.0,))


# --------------------------------------------------------------------------- dim shuffles


@SOME
@given(st.data())
def test_permute_transpose_squeeze_unsqueeze_match_numpy(data):
    shape, strides, offset = data.draw(any_layout())
    buf = buffer_for(shape, strides, offset)
    src = materialize(buf, shape, strides, offset)
    ndim = len(shape)
    tv = torch_view(shape, strides, offset) if torch is not None else None

    def check(result, expected, torch_result=None):
        new_shape, new_strides = result
        np.testing.assert_array_equal(materialize(buf, new_shape, new_strides, offset), expected)
        assert new_shape == expected.shape
        if torch_result is not None:
            assert (new_shape, new_strides) == (tuple(torch_result.shape), torch_result.stride())

    perm = data.draw(st.permutations(range(ndim)))
    neg = [d - ndim if data.draw(st.booleans()) else d for d in perm]
    check(S.permute(shape, strides, neg), np.transpose(src, perm), tv.permute(neg) if tv is not None else None)

    lo = -max(ndim, 1)
    d0, d1 = data.draw(st.integers(lo, -lo - 1)), data.draw(st.integers(lo, -lo - 1))
    expected = np.swapaxes(src, d0, d1) if ndim else src
    check(S.transpose(shape, strides, d0, d1), expected, tv.transpose(d0, d1) if tv is not None else None)

    check(S.squeeze(shape, strides), np.squeeze(src), tv.squeeze() if tv is not None else None)
    dims = tuple(data.draw(st.sets(st.integers(0, ndim - 1))) if ndim else ())
    ones = tuple(d for d in dims if shape[d] == 1)
    check(S.squeeze(shape, strides, dims), np.squeeze(src, axis=ones), tv.squeeze(dims) if tv is not None else None)
    if ndim:
        d = data.draw(st.integers(-ndim, ndim - 1))
        expected = np.squeeze(src, axis=d) if shape[d] == 1 else src
        check(S.squeeze(shape, strides, d), expected, tv.squeeze(d) if tv is not None else None)

    u = data.draw(st.integers(-ndim - 1, ndim))
    check(S.unsqueeze(shape, strides, u), np.expand_dims(src, u), tv.unsqueeze(u) if tv is not None else None)


def test_dim_shuffle_errors():
    with pytest.raises(RuntimeError, match=r"^permute: number of dims don't match in permute"):
        S.permute((2, 3), (3, 1), (0,))
    with pytest.raises(RuntimeError, match=r"^permute: dim 0 appears multiple times"):
        S.permute((2, 3), (3, 1), (0, -2))
    with pytest.raises(IndexError, match=r"^permute: dimension out of range"):
        S.permute((2, 3), (3, 1), (0, 5))
    with pytest.raises(TypeError, match=r"^permute: dim must be an integer"):
        S.permute((2, 3), (3, 1), (0, 1.0))
    with pytest.raises(IndexError, match=r"^transpose: dimension out of range"):
        S.transpose((2, 3), (3, 1), 0, 2)
    with pytest.raises(IndexError, match=r"^squeeze: dimension out of range"):
        S.squeeze((2, 3), (3, 1), 2)
    with pytest.raises(RuntimeError, match=r"^squeeze: dim 1 appears multiple times"):
        S.squeeze((2, 1), (1, 1), (1, -1))
    with pytest.raises(IndexError, match=r"^unsqueeze: dimension out of range .*\[-3, 2\].*got 3\)"):
        S.unsqueeze((2, 3), (3, 1), 3)
    with pytest.raises(ValueError, match=r"^unsqueeze: shape \[2, 3\] and strides \[1\] have different lengths"):
        S.unsqueeze((2, 3), (1,), 0)
    with pytest.raises(ValueError, match=r"^transpose: negative dimension -2"):
        S.transpose((-2, 3), (3, 1), 0, 1)
    assert S.transpose((), (), 0, -1) == ((), ())
    assert S.squeeze((), (), 0) == ((), ())
    assert S.unsqueeze((), (), 0) == ((1,), (1,))


# --------------------------------------------------------------------------- addressing


@SOME
@given(st.data())
def test_offset_index_round_trip(data):
    shape = data.draw(nonempty_shapes)
    strides = S.contiguous_strides(shape)
    flat = data.draw(st.integers(0, math.prod(shape) - 1))
    index = S.offset_to_index(flat, shape)
    assert index == tuple(int(i) for i in np.unravel_index(flat, shape))
    assert S.index_to_offset(index, strides) == flat
    assert S.index_to_offset(index, strides, offset=7) == flat + 7


@SOME
@given(any_layout())
def test_index_to_offset_reads_same_element_as_numpy(layout):
    shape, strides, offset = layout
    assume(0 not in shape)
    view = materialize(buffer_for(*layout), shape, strides, offset)
    for flat in range(0, math.prod(shape), 7):
        index = S.offset_to_index(flat, shape)
        assert S.index_to_offset(index, strides, offset) == view[index]


@SOME
@given(any_layout())
def test_storage_extent_is_one_past_the_last_element(layout):
    offsets = all_offsets(*layout)
    assert S.storage_extent(*layout) == (max(offsets) + 1 if offsets else 0)


@SOME
@given(st.one_of(layouts(st.lists(st.integers(0, 4), max_size=4).map(tuple)), numpy_views()))
def test_has_internal_overlap_guarantee(layout):
    shape, strides, offset = layout
    offsets = all_offsets(shape, strides, offset)
    overlaps = len(set(offsets)) != len(offsets)
    said = S.has_internal_overlap(shape, strides)
    # The guarantee: False proves there is no overlap (so overlap implies True).
    if not said:
        assert not overlaps
    if overlaps:
        assert said


@SOME
@given(numpy_views())
def test_numpy_views_never_reported_overlapping(layout):
    # Slices and transposes of a C array are exact cases, not the conservative ones.
    shape, strides, _ = layout
    assert not S.has_internal_overlap(shape, strides)


def test_has_internal_overlap_examples():
    assert S.has_internal_overlap((2, 3), (0, 1))  # expand
    assert not S.has_internal_overlap((1, 3), (0, 1))  # stride of a size-1 dim is irrelevant
    assert not S.has_internal_overlap((0, 3), (0, 0))
    assert S.has_internal_overlap((3, 3), (1, 1))  # sliding window
    assert S.has_internal_overlap((3, 2), (2, 3))  # conservative: offsets 0,3,2,5,4,7 are distinct
    assert not S.has_internal_overlap((), ())


def test_addressing_errors():
    with pytest.raises(IndexError, match=r"^offset_to_index: flat index 6 is out of range for shape \[2, 3\]"):
        S.offset_to_index(6, (2, 3))
    with pytest.raises(IndexError, match=r"^unravel: flat index -1"):
        S.offset_to_index(-1, (2, 3), fn="unravel")
    with pytest.raises(IndexError, match=r"^offset_to_index: "):
        S.offset_to_index(0, (0,))
    with pytest.raises(ValueError, match=r"^index_to_offset: index \[1\] has 1 entries but there are 2"):
        S.index_to_offset((1,), (3, 1))
    with pytest.raises(TypeError, match=r"^index_to_offset: index must be an integer, got float"):
        S.index_to_offset((1.0,), (3,))
    with pytest.raises(ValueError, match=r"^storage_extent: shape \[2\] and strides \[\] have different"):
        S.storage_extent((2,), (), 0)
    with pytest.raises(ValueError, match=r"^is_contiguous: "):
        S.is_contiguous((2,), (1, 1))
    with pytest.raises(ValueError, match=r"^numel: negative dimension -1"):
        S.numel((2, -1))
    with pytest.raises(TypeError, match=r"^contiguous_strides: size must be an integer, got float"):
        S.contiguous_strides((2.0,))
    with pytest.raises(TypeError, match=r"^has_internal_overlap: "):
        S.has_internal_overlap((2,), (None,))


# --------------------------------------------------------------------------- basic indexing


def numpy_index(src, key):
    try:
        return np.asarray(src[key]), None
    except IndexError as exc:
        return None, exc


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_basic_index_matches_numpy(data):
    shape, strides, offset = data.draw(any_layout())
    key = data.draw(index_keys(len(shape)))
    buf = buffer_for(shape, strides, offset)
    src = materialize(buf, shape, strides, offset)
    expected, error = numpy_index(src, key)
    if error is not None:
        with pytest.raises(IndexError, match=r"^__getitem__: "):
            S.basic_index(shape, strides, offset, key)
        return
    new_shape, new_strides, new_offset = S.basic_index(shape, strides, offset, key)
    assert new_shape == expected.shape
    np.testing.assert_array_equal(materialize(buf, new_shape, new_strides, new_offset), expected)
    if torch is not None:
        got = torch_layout(torch_view(shape, strides, offset)[key])
        assert (new_shape, new_strides, new_offset) == got


def test_basic_index_examples():
    layout = ((4, 5), (5, 1), 3)
    assert S.basic_index(*layout, ()) == layout
    assert S.basic_index(*layout, ...) == layout
    assert S.basic_index((), (), 2, ()) == ((), (), 2)
    assert S.basic_index((), (), 2, ...) == ((), (), 2)
    assert S.basic_index((), (), 2, None) == ((1,), (1,), 2)
    assert S.basic_index(*layout, (-1, np.int64(2))) == ((), (), 3 + 15 + 2)
    assert S.basic_index(*layout, slice(10, None)) == ((0, 5), (5, 1), 3 + 20)  # empty keeps start offset
    assert S.basic_index(*layout, (slice(None), None, slice(None, None, 3))) == ((4, 1, 2), (5, 5, 3), 3)


@pytest.mark.parametrize(
    ("key", "exc", "pattern"),
    [
        (5, IndexError, r"^get: index 5 is out of bounds for dimension 0 with size 4$"),
        ((0, -6), IndexError, r"^get: index -6 is out of bounds for dimension 1 with size 5$"),
        ((0, 0, 0), IndexError, r"^get: too many indices for tensor of dimension 2$"),
        ((..., None, ...), IndexError, r"^get: an index can only have a single ellipsis \('\.\.\.'\)$"),
        (slice(None, None, 0), ValueError, r"^get: step must be greater than zero$"),
        (slice(None, None, -1), ValueError, r"^get: step must be greater than zero$"),
        (slice(1.5, None), TypeError, r"^get: slice indices must be integers or None, got float$"),
        (True, TypeError, r"^get: unsupported index type bool: advanced indexing"),
        (np.bool_(True), TypeError, r"^get: unsupported index type bool"),
        (1.0, TypeError, r"^get: unsupported index type float"),
        ("a", TypeError, r"^get: unsupported index type str"),
        ([0, 1], TypeError, r"^get: unsupported index type list"),
        ((0, [1]), TypeError, r"^get: unsupported index type list"),
        (np.array([0, 1]), TypeError, r"^get: unsupported index type ndarray"),
    ],
)
def test_basic_index_errors(key, exc, pattern):
    with pytest.raises(exc, match=pattern):
        S.basic_index((4, 5), (5, 1), 0, key, fn="get")


# --------------------------------------------------------------------------- split / chunk / narrow


@SOME
@given(st.integers(0, 20), st.integers(1, 8))
def test_split_and_chunk_properties(n, k):
    pieces = S.split_sizes(n, k)
    assert sum(pieces) == n
    assert all(p == k for p in pieces[:-1]) and 0 <= pieces[-1] <= k
    assert pieces[-1] > 0 or n == 0
    chunks = S.chunk_sizes(n, k)
    assert sum(chunks) == n
    assert len(chunks) == (k if n == 0 else -(-n // -(-n // k)))
    assert len(chunks) <= k


def test_split_and_chunk_match_torch():
    for n in range(0, 13):
        t = torch.empty(n)
        for k in range(1, 8):
            assert S.chunk_sizes(n, k) == [len(c) for c in t.chunk(k)]
            assert S.split_sizes(n, k) == [len(c) for c in t.split(k)]
    assert S.split_sizes(0, 0) == [len(c) for c in torch.empty(0).split(0)]


def test_split_and_chunk_errors():
    msg = (
        "split: split_with_sizes expects split_sizes to sum exactly to 6 (input tensor's size at dimension 0), "
        "but got split_sizes=[1, 2]"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        S.split_sizes(6, [1, 2])
    with pytest.raises(RuntimeError, match=r"^split: split_with_sizes expects split_sizes have only non-neg"):
        S.split_sizes(6, [7, -1])
    with pytest.raises(RuntimeError, match=r"^split: split_size can only be 0 if dimension size is 0"):
        S.split_sizes(6, 0)
    with pytest.raises(RuntimeError, match=r"^split: split expects split_size be non-negative"):
        S.split_sizes(6, -1)
    with pytest.raises(TypeError, match=r"^split: split_size must be an integer, got float"):
        S.split_sizes(6, 2.0)
    with pytest.raises(ValueError, match=r"^split: dim_size must be non-negative"):
        S.split_sizes(-1, 2)
    with pytest.raises(RuntimeError, match=r"^chunk: chunk expects `chunks` to be greater than 0, got: 0$"):
        S.chunk_sizes(6, 0)
    with pytest.raises(RuntimeError, match=r"^chunk: .*got: -1$"):
        S.chunk_sizes(6, -1)
    with pytest.raises(TypeError, match=r"^chunk: chunks must be an integer, got bool"):
        S.chunk_sizes(6, True)
    assert S.split_sizes(6, (3, 0, 3)) == [3, 0, 3]


@SOME
@given(st.integers(0, 8), st.integers(-10, 10), st.integers(-2, 10))
def test_narrow_check(n, start, length):
    if length < 0:
        with pytest.raises(RuntimeError, match=r"^narrow: length must be non-negative"):
            S.narrow_check(n, start, length)
    elif not -n <= start <= n:
        with pytest.raises(IndexError, match=rf"^narrow: start out of range .*\[{-n}, {n}\].*got {start}\)"):
            S.narrow_check(n, start, length)
    elif (start + n if start < 0 else start) + length > n:
        with pytest.raises(RuntimeError, match=r"^narrow: start \(\d+\) \+ length \(\d+\) exceeds dimension"):
            S.narrow_check(n, start, length)
    else:
        s = S.narrow_check(n, start, length)
        assert list(range(n))[s : s + length] == list(range(n))[start:][:length]
        assert len(range(n)[s : s + length]) == length
    if torch is not None:
        try:
            expected = torch.arange(n).narrow(0, start, length).storage_offset()
        except (RuntimeError, IndexError) as exc:
            with pytest.raises(type(exc)):
                S.narrow_check(n, start, length)
        else:
            assert S.narrow_check(n, start, length) == expected


# --------------------------------------------------------------------------- as_strided


@SOME
@given(layouts(), st.integers(0, 60))
def test_as_strided_check_accepts_exactly_views_inside_storage(layout, storage_numel):
    shape, strides, offset = layout
    offsets = all_offsets(shape, strides, offset)
    fits = not offsets or max(offsets) < storage_numel
    if fits:
        S.as_strided_check(shape, strides, offset, storage_numel)
    else:
        with pytest.raises(RuntimeError, match=r"^as_strided: setStorage: sizes .* out of bounds for storage"):
            S.as_strided_check(shape, strides, offset, storage_numel)
    if torch is not None:
        storage = torch.empty(storage_numel)
        try:
            storage.as_strided(shape, strides, offset)
        except RuntimeError:
            assert not fits
        else:
            assert fits


def test_as_strided_check_errors():
    with pytest.raises(
        RuntimeError, match=re.escape("as_strided: Negative strides are not supported at the moment, got strides: [-1]")
    ):
        S.as_strided_check((2,), (-1,), 0, 6)
    with pytest.raises(RuntimeError, match=r"^view_as: mismatch in length of strides and shape"):
        S.as_strided_check((2,), (1, 2), 0, 6, fn="view_as")
    with pytest.raises(RuntimeError, match=r"^as_strided: Negative sizes are not supported"):
        S.as_strided_check((-2,), (1,), 0, 6)
    with pytest.raises(RuntimeError, match=r"^as_strided: invalid storage offset -1"):
        S.as_strided_check((2,), (1,), -1, 6)
    msg = (
        "as_strided: setStorage: sizes [2], strides [6], storage offset 0 requiring a storage size of "
        "7 elements are out of bounds for storage of size 6 elements"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        S.as_strided_check((2,), (6,), 0, 6)
    with pytest.raises(TypeError, match=r"^as_strided: size must be an integer"):
        S.as_strided_check((2.0,), (1,), 0, 6)
    S.as_strided_check((0,), (50,), 7, 6)  # empty views need no storage


# --------------------------------------------------------------------------- docs


def test_docstring_examples_run():
    result = doctest.testmod(S, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_every_public_function_is_documented_with_an_example():
    for name in S.__all__:
        obj = getattr(S, name)
        if callable(obj) and not isinstance(obj, type) and name[0].islower():
            assert obj.__doc__ and ">>>" in obj.__doc__, name
            assert "return" in obj.__annotations__, name
