"""Tensors: creation, views, indexing, copies and casts, Python conversions and repr.

Values are checked against NumPy; semantics PyTorch defines (dtype inference, strides of views,
when reshape copies, error cases) against PyTorch.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import TORCH_DTYPES, helper_test_exception, helper_test_op
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt

ALL_DTYPES = list(TORCH_DTYPES)


def as_torch(x: tt.Tensor) -> torch.Tensor:
    """A torch tensor with the same shape, strides and values (a copy of the storage layout)."""
    return torch.from_numpy(x.numpy().copy())


# ---------------------------------------------------------------------- creation


@pytest.mark.parametrize(
    "data",
    [
        [1, 2, 3],
        [1.0, 2, 3],
        [True, False],
        [[1, 2], [3, 4]],
        3,
        3.5,
        True,
        [],
        [[]],
        [[1.5], [2.5]],
        np.array([1, 2], dtype=np.int32),
        np.array([1.5], dtype=np.float16),
        np.float64(2.5),
        np.arange(6.0).reshape(2, 3).T,
    ],
)
def test_tensor_infers_dtype_and_values_like_torch(data):
    got = tt.tensor(data)
    want = torch.tensor(data)
    assert TORCH_DTYPES[got.dtype] == want.dtype
    assert got.shape == tuple(want.shape)
    assert got.tolist() == want.tolist()
    assert got.is_contiguous()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tensor_with_dtype_matches_torch(dtype):
    data = [[0, 1, 2], [3, 100, 127]]
    assert tt.tensor(data, dtype=dtype).tolist() == torch.tensor(data, dtype=TORCH_DTYPES[dtype]).tolist()


def test_tensor_copies_its_input():
    a = np.zeros(3)
    t = tt.tensor(a)
    a[0] = 5
    assert t[0].item() == 0.0
    u = tt.tensor(t)
    assert u.data_ptr() != t.data_ptr()


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        ([[1, 2], [3]], ValueError, "tensor"),
        (["a"], TypeError, "tensor"),
        ([2**64], TypeError, "tensor"),
        ([2**63], RuntimeError, "tensor"),
    ],
)
def test_tensor_rejects_bad_data(bad, exc, match):
    with pytest.raises(Exception):  # noqa: B017 - torch rejects each too
        torch.tensor(bad)
    with pytest.raises(exc, match=match):
        tt.tensor(bad)


def test_tensor_rejects_complex_which_has_no_dtype_here():
    with pytest.raises(TypeError, match="tensor"):
        tt.tensor([1 + 2j])


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
def test_filled_creation_matches_torch(fn, shape):
    got = getattr(tt, fn)(shape)
    want = getattr(torch, fn)(shape)
    assert got.shape == tuple(want.shape) and got.stride() == want.stride()
    assert TORCH_DTYPES[got.dtype] == want.dtype
    if fn != "empty":
        assert got.tolist() == want.tolist()
    assert getattr(tt, fn)(*shape).shape == shape


@pytest.mark.parametrize("value", [7, -2.5, True, 1e10])
def test_full_matches_torch(value):
    got, want = tt.full((2, 3), value), torch.full((2, 3), value)
    assert TORCH_DTYPES[got.dtype] == want.dtype and got.tolist() == want.tolist()


def test_like_functions_follow_their_argument():
    x = tt.zeros(2, 3, dtype=tt.int32)
    for made in (tt.empty_like(x), tt.zeros_like(x), tt.ones_like(x), tt.full_like(x, 4)):
        assert made.shape == (2, 3) and made.dtype is tt.int32
    assert tt.ones_like(x).tolist() == [[1] * 3] * 2 and tt.full_like(x, 4).tolist() == [[4] * 3] * 2
    assert tt.zeros_like(x, dtype=tt.float64).dtype is tt.float64
    f = tt.zeros(4, dtype=tt.float64)
    assert tt.rand_like(f).dtype is tt.float64 and tt.randn_like(f).shape == (4,)
    assert tt.randint_like(x, 5).dtype is tt.int32 and int(tt.randint_like(x, 2, 5).numpy().min()) >= 2


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}),
        ((2, 9), {}),
        ((1, 10, 3), {}),
        ((10, 1, -3), {}),
        ((0.0, 1.0, 0.1), {}),
        ((1, 2.5, 0.5), {}),
        ((-3, 3), {"dtype": tt.float32}),
        ((0, 0), {}),
        ((0.5, 5), {}),
        ((5, 0.5, -1.5), {"dtype": tt.float64}),
    ],
)
def test_arange_matches_torch(args, kwargs):
    got = tt.arange(*args, **kwargs)
    torch_kwargs = {"dtype": TORCH_DTYPES[kwargs["dtype"]]} if "dtype" in kwargs else {}
    want = torch.arange(*args, **torch_kwargs)
    assert TORCH_DTYPES[got.dtype] == want.dtype and got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("args", [(0, 1, 5), (-2.5, 7, 11), (3, 3, 1), (0, 1, 0), (1, 0, 4), (0, 10, 1000)])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
def test_linspace_matches_torch(args, dtype):
    got = tt.linspace(*args, dtype=dtype)
    want = torch.linspace(*args, dtype=TORCH_DTYPES[dtype])
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    if args[2] > 1:
        assert got[0].item() == want[0].item() and got[-1].item() == want[-1].item()


@pytest.mark.parametrize("n, m", [(3, None), (2, 4), (4, 2), (0, 3)])
def test_eye_matches_numpy(n, m):
    np.testing.assert_array_equal(tt.eye(n, m).numpy(), np.eye(n, m, dtype=np.float32))


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda lib: lib.arange(0, 10, 0), RuntimeError),
        (lambda lib: lib.arange(10, 0, 1), RuntimeError),
        (lambda lib: lib.linspace(0, 1, -1), RuntimeError),
        (lambda lib: lib.zeros(-1, 2), RuntimeError),
        (lambda lib: lib.zeros(2.5), TypeError),
        (lambda lib: lib.full((2,), 300, dtype=lib.uint8), RuntimeError),
        (lambda lib: lib.randint(5, 3, (2,)), RuntimeError),
        (lambda lib: lib.rand(2, dtype=lib.int64), TypeError),
        (lambda lib: lib.arange(0, float("inf")), RuntimeError),
    ],
)
def test_creation_errors_match_torch(call, exc):
    with pytest.raises(Exception):  # noqa: B017
        call(torch)
    with pytest.raises(exc):
        call(tt)


def test_random_functions_shapes_dtypes_and_seeding():
    tt.manual_seed(123)
    a = (tt.rand(3, 4), tt.randn(5, dtype=tt.float64), tt.randint(10, (6,)), tt.randint(-3, 3, (2, 2), dtype=tt.int8))
    tt.manual_seed(123)
    b = (tt.rand(3, 4), tt.randn(5, dtype=tt.float64), tt.randint(10, (6,)), tt.randint(-3, 3, (2, 2), dtype=tt.int8))
    for x, y in zip(a, b, strict=True):
        assert x.dtype is y.dtype and x.tolist() == y.tolist()
    assert a[0].shape == (3, 4) and a[0].dtype is tt.float32
    assert a[3].dtype is tt.int8 and set(np.unique(a[3].numpy())) <= set(range(-3, 3))
    assert set(tt.randint(0, 2, (200,), dtype=tt.bool).tolist()) == {False, True}


def test_randn_is_box_muller_of_the_uniforms():
    """randn's pair p transforms uniforms 2p and 2p + 1 of the generator, the same numbers a
    float64 rand of the same seed returns: against Box-Muller of those in long double, the error
    is a few ULP of the radius (vectorized log, sqrt and sincos)."""
    tt.manual_seed(7)
    u = tt.rand(2 * 100_001, dtype=tt.float64).numpy().astype(np.longdouble)
    tt.manual_seed(7)
    z = tt.randn(2 * 100_001 - 1, dtype=tt.float64).numpy()     # odd: the last sine is dropped
    radius = np.sqrt(-2 * np.log1p(-u[0::2]))
    angle = (2 * np.pi * u[1::2].astype(np.float64)).astype(np.longdouble)   # 2 pi u rounded, as in C
    want = np.empty(2 * radius.size, dtype=np.longdouble)
    want[0::2], want[1::2] = radius * np.cos(angle), radius * np.sin(angle)
    err = np.abs(z - want[:z.size]) / np.repeat(radius, 2)[:z.size]
    assert float(err.max()) < 4e-16


@pytest.mark.parametrize("dtype, low, high", [(tt.float32, 0.0, 1.0), (tt.float32, 1.0, 1.0000001),
                                              (tt.float16, 65000.0, 65504.0), (tt.float64, -3.0, 5.0)])
def test_uniform_fill_is_the_generator_doubles_rounded_below_high(dtype, low, high):
    """The C uniform fill (``rand``'s, which passes [0, 1)) turns uniform k of the generator, the
    double a float64 rand of the same seed returns, into low + (high - low) u rounded to the
    dtype (float16 through float), and a value that rounds up to ``high`` into the one below it:
    [1, 1.0000001) holds one float32, 1, and the elements that round to the next one take that
    step."""
    from t_tensor._capi import lib
    from t_tensor.random import default_generator

    n = 20_001
    tt.manual_seed(3)
    u = tt.rand(n, dtype=tt.float64).numpy()
    tt.manual_seed(3)
    out = tt.empty(n, dtype=dtype)
    assert lib.tt_random_uniform(default_generator._state, out.data_ptr(), n, dtype.code, low, high) == lib.TT_OK
    kind = {tt.float16: np.float16, tt.float32: np.float32, tt.float64: np.float64}[dtype]
    want = (low + (high - low) * u).astype(np.float32 if dtype is tt.float16 else kind).astype(kind)  # via float
    high_there = want >= high
    want[high_there] = np.nextafter(kind(high), kind(-np.inf))   # the dtype's largest value below high
    np.testing.assert_array_equal(out.numpy(), want)
    assert (out.numpy() >= low).all() and (out.numpy() < high).all()
    if high == 1.0000001:
        assert high_there.any()


def test_randn_same_values_on_every_build():
    """The transform is compiled for the baseline, AVX2 and AVX-512 (csrc/src/kernels/random.c)
    and the widest this CPU has runs, capped by TT_GENERIC_KERNELS: each gives the same values."""
    code = ("import hashlib, t_tensor as tt; tt.manual_seed(5); "
            "print(hashlib.sha256(tt.randn(100_001, dtype=tt.float64).numpy().tobytes()"
            " + tt.randn(4099, dtype=tt.float32).numpy().tobytes()).hexdigest())")
    digests = set()
    for setting in ("1", "avx2", "0"):
        env = dict(os.environ, TT_GENERIC_KERNELS=setting, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1


@pytest.mark.parametrize("n", [1, 3, 4097, 131073, 300001])
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16], ids=lambda d: d.name)
def test_randn_same_values_on_any_thread_count(n, dtype):
    """randn draws each block's uniforms in order and transforms its pairs on the threads: pair p
    still takes uniforms 2p and 2p + 1, so a seed gives the same values on 1, 2 or 3 threads
    (sizes past a block of 65536 pairs, odd ones included), and they are N(0, 1)."""
    before, results = tt.get_num_threads(), []
    try:
        for threads in (1, 2, 3):
            tt.set_num_threads(threads)
            tt.manual_seed(11)
            results.append(tt.randn(n, dtype=dtype).numpy())
    finally:
        tt.set_num_threads(before)
    for other in results[1:]:
        np.testing.assert_array_equal(results[0].view(np.uint8), other.view(np.uint8))
    if n > 100000:
        values = results[0].astype(np.float64)
        assert abs(values.mean()) < 0.02 and abs(values.std() - 1) < 0.02


# ---------------------------------------------------------------------- views against NumPy and torch


@st.composite
def shapes(draw, min_dims=0, max_dims=4, max_side=4):
    return tuple(draw(st.lists(st.integers(0, max_side), min_size=min_dims, max_size=max_dims)))


@st.composite
def view_chains(draw):
    """A shape and a short chain of view operations valid for it, as (name, args) steps."""
    shape = draw(shapes(min_dims=1))
    steps, current = [], list(shape)
    for _ in range(draw(st.integers(1, 4))):
        ndim = len(current)
        choices = ["unsqueeze", "expand"] + (
            ["permute", "transpose", "slice", "squeeze", "narrow", "flatten"] if ndim else []
        )
        kind = draw(st.sampled_from(choices))
        if kind == "permute":
            args = tuple(draw(st.permutations(range(ndim))))
            current = [current[i] for i in args]
        elif kind == "transpose":
            d0, d1 = draw(st.integers(-ndim, ndim - 1)), draw(st.integers(-ndim, ndim - 1))
            args = (d0, d1)
            current[d0], current[d1] = current[d1], current[d0]
        elif kind == "slice":
            dim = draw(st.integers(0, ndim - 1))
            start, stop = draw(st.integers(-5, 5)), draw(st.integers(-5, 5))
            step = draw(st.integers(1, 3))
            args = (dim, start, stop, step)
            current[dim] = len(range(*slice(start, stop, step).indices(current[dim])))
        elif kind == "squeeze":
            args = (draw(st.integers(0, ndim - 1)),)
            if current[args[0]] == 1:
                current.pop(args[0])
        elif kind == "unsqueeze":
            args = (draw(st.integers(-ndim - 1, ndim)),)
            position = args[0] if args[0] >= 0 else args[0] + ndim + 1
            current.insert(position, 1)
        elif kind == "narrow":
            dim = draw(st.integers(0, ndim - 1))
            start = draw(st.integers(0, current[dim]))
            length = draw(st.integers(0, current[dim] - start))
            args = (dim, start, length)
            current[dim] = length
        elif kind == "flatten":
            start = draw(st.integers(0, ndim - 1))
            end = draw(st.integers(start, ndim - 1))
            args = (start, end)
            current[start : end + 1] = [math.prod(current[start : end + 1])]
        else:  # expand: size-1 dims grow, plus maybe a new leading dim
            new = [draw(st.integers(1, 3)) if size == 1 else size for size in current]
            if draw(st.booleans()):
                new = [draw(st.integers(0, 3))] + new
            args = tuple(new)
            current = new
        steps.append((kind, args))
    return shape, steps


def apply_step(x, kind, args, lib):
    """One view step in t_tensor or torch (both spell these the same, except slicing)."""
    if kind == "slice":
        dim, start, stop, step = args
        return x[(slice(None),) * dim + (slice(start, stop, step),)]
    if kind == "expand":
        return x.expand(args)  # a tuple, so that expanding a 0-d tensor to () is a call torch accepts
    return getattr(x, kind)(*args)


@settings(max_examples=300, deadline=None)
@given(view_chains())
def test_view_chains_match_torch_values_strides_and_share_storage(case):
    shape, steps = case
    base = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    # torch's own arange: torch.tensor(ndarray) gives empty arrays stride 0, unlike torch.empty
    x, y = tt.tensor(base), torch.arange(base.size).reshape(shape)
    for kind, args in steps:
        x, y = apply_step(x, kind, args, tt), apply_step(y, kind, args, torch)
        assert x.shape == tuple(y.shape), (kind, args)
        # flatten copies when a view is impossible; both libraries decide alike, so strides agree
        assert x.stride() == y.stride(), (kind, args)
        assert x.storage_offset() == y.storage_offset(), (kind, args)
        assert x.is_contiguous() == y.is_contiguous()
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    np.testing.assert_array_equal(x.contiguous().numpy(), y.contiguous().numpy())


@settings(max_examples=200, deadline=None)
@given(shapes(min_dims=1), st.data())
def test_reshape_views_when_torch_views_and_copies_otherwise(shape, data):
    base = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    x = tt.tensor(base).permute(*perm)
    y = torch.arange(base.size, dtype=torch.int32).reshape(shape).permute(*perm)
    sizes = list(y.shape)
    target = data.draw(st.sampled_from([(-1,), tuple(reversed(sizes)), (1, *sizes), tuple(sizes[:1]) + (-1,)]))
    if base.size == 0 and -1 in target and math.prod(s for s in target if s != -1) == 0:
        for t in (x, y):  # -1 is ambiguous with 0 elements: both libraries refuse
            with pytest.raises(RuntimeError, match="ambiguous"):
                t.reshape(target)
        return
    got, want = x.reshape(target), y.reshape(target)
    assert got.shape == tuple(want.shape) and got.stride() == want.stride()
    shares = got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert shares == (want.untyped_storage().data_ptr() == y.untyped_storage().data_ptr())
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if shares:
        assert got.view(target).shape == got.shape
    else:
        with pytest.raises(RuntimeError, match="view"):
            x.view(target)


def test_views_share_storage_and_count_references():
    x = tt.arange(12).view(3, 4)
    storage = x.untyped_storage()
    assert storage.use_count() == 1
    views = [x.T, x[1:], x.unsqueeze(0), x.expand(2, 3, 4), x.narrow(1, 1, 2), x.as_strided((2,), (5,), 1)]
    assert storage.use_count() == 1 + len(views)
    for v in views:
        assert v.untyped_storage().data_ptr() == storage.data_ptr()
        assert v.data_ptr() == storage.data_ptr() + v.storage_offset() * v.element_size()
    del views, v
    assert storage.use_count() == 1


@pytest.mark.parametrize("ndim", [2, 3])
def test_transpose_properties_match_torch(ndim):
    base = np.arange(24).reshape((2, 3, 4)[:ndim] if ndim == 3 else (4, 6))
    helper_test_op([base], lambda x: x.mT, ref="torch")
    helper_test_op([base], lambda x: x.T, lambda a: a.T)
    helper_test_op([base], lambda x: x.transpose(0, -1), ref="torch")
    if ndim == 2:
        helper_test_op([base], lambda x: x.t(), ref="torch")


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.split(2),
        lambda x: x.split([1, 3], dim=1),
        lambda x: x.chunk(3),
        lambda x: x.chunk(2, dim=-1),
        lambda x: x.unbind(),
        lambda x: x.unbind(1),
        lambda x: x.squeeze(),
        lambda x: x.flatten(),
        lambda x: x.reshape(-1, 2),
        lambda x: x.select(1, -1),
        lambda x: x.broadcast_to((2, 5, 4)),
    ],
)
def test_movement_matches_torch(fn):
    helper_test_op([np.arange(20.0).reshape(5, 4)], fn, ref="torch")


def test_functional_forms_match_methods():
    x = tt.arange(24).view(2, 3, 4)
    assert tt.permute(x, (2, 0, 1)).shape == (4, 2, 3)
    assert tt.transpose(x, 0, 2).stride() == x.transpose(0, 2).stride() == tt.swapaxes(x, 0, 2).stride()
    assert tt.reshape(x, (6, 4)).shape == (6, 4) and tt.flatten(x, 1).shape == (2, 12)
    assert tt.squeeze(tt.unsqueeze(x, 1)).shape == x.shape
    assert [p.shape for p in tt.split(x, 1, 1)] == [(2, 1, 4)] * 3 and len(tt.chunk(x, 2, 2)) == 2
    assert len(tt.unbind(x, 2)) == 4 and tt.narrow(x, 2, 1, 2).shape == (2, 3, 2) and tt.select(x, 0, 1).shape == (3, 4)
    a, b = tt.broadcast_tensors(tt.zeros(3, 1), tt.zeros(1, 4))
    assert (
        a.shape == b.shape == (3, 4)
        and a.stride() == (1, 0)
        and tt.broadcast_to(tt.zeros(4), (2, 4)).stride() == (0, 1)
    )
    assert tt.as_strided(x, (2, 2), (1, 1)).tolist() == [[0, 1], [1, 2]] and tt.t(tt.zeros(2, 3)).shape == (3, 2)


@pytest.mark.parametrize(
    "fn, exc",
    [
        (lambda x: x.view(5, 5), RuntimeError),
        (lambda x: x.permute(0, 0), RuntimeError),
        (lambda x: x.permute(0), RuntimeError),
        (lambda x: x.transpose(0, 2), IndexError),
        (lambda x: x.expand(3, 5), RuntimeError),
        (lambda x: x.unsqueeze(4), IndexError),
        (lambda x: x.narrow(0, 3, 5), (IndexError, RuntimeError)),
        (lambda x: x.split([1, 1]), RuntimeError),
        (lambda x: x.chunk(0), RuntimeError),
        (lambda x: x.view(-1, -1), RuntimeError),
        (lambda x: x.flatten(1, 0), RuntimeError),
        (lambda x: x.T.view(20), RuntimeError),
        (lambda x: x[5], IndexError),
        (lambda x: x[:, :, 0], IndexError),
        (lambda x: x[::-1], ValueError),
        (lambda x: x.as_strided((5, 5), (5, 1)), RuntimeError),
        (lambda x: x.as_strided((2,), (-1,)), RuntimeError),
        (lambda x: x.mT.mT.squeeze(7), IndexError),
    ],
)
def test_view_errors_match_torch(fn, exc):
    helper_test_exception([np.arange(20.0).reshape(5, 4)], fn, exception=exc, match=".")


def test_zero_dim_tensors():
    x = tt.tensor(5)
    assert x.shape == () and x.stride() == () and x.ndim == 0 and x.numel() == 1
    assert x[()].item() == 5 and x[...].shape == () and x[None].shape == (1,)
    assert x.reshape(1).shape == (1,) and x.unsqueeze(0).shape == (1,) and x.flatten().shape == (1,)
    assert x.expand(2, 3).tolist() == [[5] * 3] * 2 and x.T.shape == ()
    for bad in (lambda: len(x), lambda: iter(x), lambda: x.mT, lambda: x.unbind()):
        with pytest.raises((TypeError, RuntimeError, IndexError)):
            bad()


# ---------------------------------------------------------------------- indexing and writing


@st.composite
def basic_keys(draw, ndim):
    parts = []
    for _ in range(draw(st.integers(0, ndim))):
        parts.append(
            draw(
                st.one_of(
                    st.integers(-3, 2),
                    st.builds(
                        slice,
                        st.none() | st.integers(-5, 5),
                        st.none() | st.integers(-5, 5),
                        st.none() | st.integers(1, 3),
                    ),
                )
            )
        )
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), None)
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
    return tuple(parts)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_basic_indexing_matches_numpy(data):
    shape = data.draw(shapes(min_dims=1, max_side=5).filter(lambda s: all(n >= 3 for n in s)))
    key = data.draw(basic_keys(len(shape)))
    base = np.arange(math.prod(shape)).reshape(shape)
    x = tt.tensor(base)
    got = x[key]
    want = base[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    if got.numel():
        assert got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_setitem_matches_numpy(data):
    shape = data.draw(shapes(min_dims=1, max_side=5).filter(lambda s: all(n >= 3 for n in s)))
    key = data.draw(basic_keys(len(shape)))
    base = np.zeros(shape, dtype=np.float64)
    x = tt.tensor(base)
    target_shape = base[key].shape
    value_shape = data.draw(st.sampled_from([(), target_shape[-1:], target_shape]))
    value = np.arange(1, math.prod(value_shape) + 1, dtype=np.float64).reshape(value_shape)
    base[key] = value
    x[key] = value if value_shape else float(value)
    np.testing.assert_array_equal(x.numpy(), base)


def test_setitem_accepts_tensors_lists_and_casts():
    x = tt.zeros(2, 3, dtype=tt.int32)
    x[0] = [1.9, 2.1, -3.7]  # float -> int truncates, like torch
    x[1, 1:] = tt.tensor([7, 8], dtype=tt.int64)
    want = torch.zeros(2, 3, dtype=torch.int32)
    want[0] = torch.tensor([1.9, 2.1, -3.7])
    want[1, 1:] = torch.tensor([7, 8])
    assert x.tolist() == want.tolist()


def test_overlapping_copy_reads_before_writing():
    base = np.arange(10.0)
    x = tt.tensor(base)
    x[1:] = x[:-1].clone()
    y = tt.tensor(base)
    y[1:] = y[:-1]  # overlapping source and destination
    base[1:] = base[:-1].copy()
    np.testing.assert_array_equal(x.numpy(), base)
    np.testing.assert_array_equal(y.numpy(), base)


def test_writing_into_an_overlapping_view_is_refused_like_torch():
    for lib in (torch, tt):
        expanded = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError, match="single memory location"):
            expanded.fill_(1) if lib is tt else expanded.copy_(torch.ones(3, 4))
    with pytest.raises(RuntimeError, match="copy_"):
        tt.zeros(3, 1).expand(3, 4).copy_(tt.ones(3, 4))


def test_copy_broadcast_and_errors():
    x = tt.zeros(2, 3)
    x.copy_(tt.tensor([1, 2, 3]))
    assert x.tolist() == [[1, 2, 3]] * 2
    with pytest.raises(RuntimeError, match="copy_"):
        x.copy_(tt.zeros(4))
    with pytest.raises(TypeError, match="fill_"):
        x.fill_("a")
    with pytest.raises(RuntimeError, match="fill_"):
        x.fill_(tt.zeros(2))
    with pytest.raises(RuntimeError, match="fill_"):
        tt.zeros(2, dtype=tt.int64).fill_(float("nan"))


# ---------------------------------------------------------------------- casts


CAST_VALUES = np.array([0.0, 1.0, -1.0, 2.5, -2.5, 100.0, 127.0, 0.5, 3.0e3, -7.75])


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_casts_match_torch(src, dst):
    values = CAST_VALUES
    if src.kind == "u" or (src.kind in "iu" and dst.kind == "u"):
        values = np.abs(values)  # negative -> unsigned wraps differently by path; not a semantic to pin
    if src.itemsize == 1 or dst.itemsize == 1:
        values = np.clip(values, -100, 100)
    source = torch.tensor(values).to(TORCH_DTYPES[src])
    x = tt.tensor(source.numpy(), dtype=src).T
    got = x.to(dst)
    want = source.to(TORCH_DTYPES[dst])
    assert got.dtype is dst and got.tolist() == want.tolist()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=50))
def test_float16_conversion_is_bitwise_numpy(values):
    array = np.array(values, dtype=np.float32)
    got = tt.tensor(array).to(tt.float16).numpy()
    with np.errstate(over="ignore"):  # values beyond float16's range become inf in both libraries
        want = array.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    back = tt.tensor(got).to(tt.float32).numpy()
    np.testing.assert_array_equal(back, got.astype(np.float32))


def test_to_returns_self_when_nothing_changes_and_conversion_methods():
    x = tt.zeros(3)
    assert x.to(tt.float32) is x and x.to("cpu") is x and x.to(tt.float32, copy=True) is not x
    assert x.double().dtype is tt.float64 and x.half().dtype is tt.float16 and x.int().dtype is tt.int32
    assert x.long().dtype is tt.int64 and x.short().dtype is tt.int16 and x.char().dtype is tt.int8
    assert x.byte().dtype is tt.uint8 and x.bool().dtype is tt.bool and x.float() is x
    assert x.type() == "t_tensor.float32" and x.type(tt.int64).dtype is tt.int64
    with pytest.raises(RuntimeError, match="to"):
        x.to(device="cuda")
    with pytest.raises(TypeError, match="to"):
        x.to("complex64")


# ---------------------------------------------------------------------- Python conversions and repr


def test_python_conversions():
    x = tt.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]] and len(x) == 2
    assert [row.tolist() for row in x] == [[1.5, 2.0], [3.0, 4.0]]
    assert x[0, 0].item() == 1.5 and float(x[0, 0]) == 1.5 and int(x[1, 1]) == 4 and bool(x[0, 0])
    assert [10, 20, 30][tt.tensor(2)] == 30 and isinstance(tt.tensor(True).item(), bool)
    assert isinstance(tt.tensor([3], dtype=tt.int8).item(), int)
    with pytest.raises(RuntimeError, match="item"):
        x.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    with pytest.raises(TypeError):
        [1, 2][tt.tensor(1.0)]
    with pytest.raises(TypeError, match="Tensor"):
        tt.Tensor([1, 2])


@pytest.mark.parametrize(
    "data, dtype",
    [
        ([1.0, 2.0, 3.0], None),
        ([[1.5, 2.0], [3.0, 4.25]], None),
        ([1, 2, 3], None),
        ([True, False], None),
        (3.0, None),
        (7, None),
        ([1, 2], "int32"),
        ([0.5, 1.0], "float64"),
        ([1e-5, 1.0], None),
        ([1e10, 1.0], None),
        ([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], None),
        ([-1.5, float("nan"), float("inf")], None),
        (list(range(2000)), None),
        ([], None),
        ([0.1 * i for i in range(12)], None),
        ([1.0, 2.0], "float16"),
    ],
)
def test_repr_matches_torch(data, dtype):
    got = repr(tt.tensor(data, dtype=getattr(tt, dtype) if dtype else None))
    want = repr(torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None))
    assert got == want.replace("torch.", "t_tensor.")
    assert repr(tt.zeros(0, 3)) == "tensor([], size=(0, 3))"


def test_a_parent_reference_is_released_when_the_parent_dies_not_when_its_views_do():
    base = tt.zeros(12)
    view = base.view(3, 4)
    weak = view.untyped_storage().weak()
    assert view.untyped_storage().use_count() == 2
    del base
    assert view.untyped_storage().use_count() == 1
    del view
    assert weak.expired() and weak.lock() is None and weak.weak_count() == 1


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: tt.empty(2**40, 2**40), MemoryError, "empty"),
        (lambda: tt.empty(2**48), MemoryError, "empty: out of memory"),  # fits size_t; the system says no
        (lambda: tt.zeros(2**62), MemoryError, "zeros"),
        (lambda: tt.ones(2**61, dtype=tt.int64), MemoryError, "ones"),
        (lambda: tt.full((2**62,), 1.0), MemoryError, "full"),
        (lambda: tt.rand(2**62), MemoryError, "rand"),
        (lambda: tt.Storage.allocate(2**70), MemoryError, "Storage.allocate"),
        (lambda: tt.arange(0, 1e18, 1e-3), MemoryError, "arange"),
        (lambda: tt.linspace(0, 1, 2**62), MemoryError, "linspace"),
        (lambda: tt.zeros(1).reshape((1,) * 70).clone(), RuntimeError, "copy_"),
        (lambda: tt.zeros(1).reshape((1,) * 70).fill_(2), RuntimeError, "fill_"),
    ],
)
def test_impossible_sizes_raise_clear_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_empty_tensors_with_huge_sizes_copy_without_overflow():
    # sizes whose product (but for the 0) overflows int64: the kernel must stop before multiplying
    x = tt.empty((2**62, 4, 0))
    assert x.numel() == 0 and x.clone().shape == (2**62, 4, 0)
    assert x.to(tt.float64).shape == x.shape and x.permute(2, 0, 1).contiguous().shape == (0, 2**62, 4)
    assert x.fill_(1).shape == x.shape


@pytest.mark.parametrize("source", ["float16", "float32", "float64"])
def test_float_to_integer_conversions_match_torch_out_of_range(source):
    """int8/int16/int32 go through int32, uint8/int64 through int64; what does not fit (or NaN)
    is the type's minimum, then wraps: PyTorch's results, value for value."""
    values = [4294967551.0, 3e9, -3e9, float("nan"), float("inf"), -float("inf"), 70000.0, -40000.5, 2147483647.0,
              2147483648.0, -2147483648.0, -2147483649.0, 1e19, 65535.9, -0.9, 255.5, -128.7]
    for target in ("uint8", "int8", "int16", "int32", "int64"):
        got = tt.tensor(values, dtype=tt.float64).to(getattr(tt, source)).to(getattr(tt, target)).tolist()
        want = torch.tensor(values, dtype=torch.float64).to(getattr(torch, source)).to(getattr(torch, target)).tolist()
        assert got == want, (source, target)
