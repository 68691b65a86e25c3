"""Zero-copy interop with NumPy and DLPack (NumPy, PyTorch): values, layouts and lifetimes.

Every exchange must share memory (pointer equality and writes visible on both sides), describe
the same layout (strides converted between bytes and elements), and keep the memory alive
exactly as long as some holder, in any library, still uses it. Lifetimes are checked through
``tt.live_storages()``, ``tt.memory_allocated()``, storage use counts and weak references to
the producer's objects.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import t_tensor as tt
from t_tensor._capi import ffi

# (t_tensor dtype, NumPy dtype, torch dtype): every dtype all three libraries share.
DTYPES = [
    (tt.bool, np.bool_, torch.bool),
    (tt.int8, np.int8, torch.int8),
    (tt.int16, np.int16, torch.int16),
    (tt.int32, np.int32, torch.int32),
    (tt.int64, np.int64, torch.int64),
    (tt.uint8, np.uint8, torch.uint8),
    (tt.float16, np.float16, torch.float16),
    (tt.float32, np.float32, torch.float32),
    (tt.float64, np.float64, torch.float64),
]
DTYPE_IDS = [d[0].name for d in DTYPES]
NP_TO_TT = {np.dtype(n): t for t, n, _ in DTYPES}


class A(np.ndarray):
    """An ndarray subclass: plain ndarrays do not support weak references, subclasses do."""


# A private handle to the C API (ctypes caches function objects per library object, so setting
# argtypes here does not touch the ones t_tensor.interop set on ctypes.pythonapi).
_py = ctypes.PyDLL(None)
_py.PyCapsule_IsValid.restype = ctypes.c_int
_py.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_GetName.restype = ctypes.c_char_p
_py.PyCapsule_GetName.argtypes = [ctypes.py_object]
_py.PyCapsule_GetPointer.restype = ctypes.c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def sample(np_dtype, shape, seed=0) -> np.ndarray:
    """Deterministic values that every dtype can hold exactly, mixed signs where possible."""
    rng = np.random.default_rng(seed)
    if np.dtype(np_dtype) == np.bool_:
        return rng.random(shape) < 0.5
    low = 0 if np.dtype(np_dtype).kind in "ub" else -50
    return rng.integers(low, 100, size=shape).astype(np_dtype)


def write_value(np_dtype, k=0):
    """A value different from everything sample() produces, as a Python scalar."""
    kind = np.dtype(np_dtype).kind
    if kind == "b":
        return k % 2 == 0
    if kind in "iu":
        return 101 + k
    return 0.5 + k


def settle():
    """Let the garbage collector finish what reference counting did not.

    Tensors, storages and capsules are freed by reference counting the moment the last name
    goes; this pass only catches cycles the test itself made. It collects the young generations:
    a full pass costs ~0.1 s with torch imported, so full passes are kept for the baselines
    and final checks (counts / assert_counts).
    """
    gc.collect(1)


def counts():
    gc.collect()
    return tt.live_storages(), tt.memory_allocated()


def assert_counts(before):
    gc.collect()
    assert (tt.live_storages(), tt.memory_allocated()) == before


def capsule_name(capsule) -> str:
    return _py.PyCapsule_GetName(capsule).decode()


# ====================================================================== from_numpy


@pytest.mark.parametrize("tt_dtype, np_dtype, _", DTYPES, ids=DTYPE_IDS)
def test_from_numpy_every_dtype_shares_memory_and_values(tt_dtype, np_dtype, _):
    a = sample(np_dtype, (3, 4))
    t = tt.from_numpy(a)
    assert t.dtype is tt_dtype
    assert t.shape == a.shape
    assert t.stride() == (4, 1)
    assert t.data_ptr() == a.ctypes.data
    assert t.untyped_storage().allocator == "external"
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().dtype == a.dtype
    # writes through the tensor show in the array, and the other way round
    v0, v1 = write_value(np_dtype, 0), write_value(np_dtype, 1)
    t[1, 2] = v0
    assert a[1, 2] == v0
    a[2, 3] = v1
    assert t[2, 3].item() == v1
    assert t.tolist() == a.tolist()


def _non_contiguous_cases():
    base = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
    return {
        "transposed": lambda: base.copy().T,
        "permuted": lambda: base.copy().transpose(1, 2, 0),
        "step_slices": lambda: base.copy()[::2, 1::3, ::4],
        "offset_slice": lambda: base.copy()[1:, 2:, 3:],
        "column": lambda: base.copy()[:, 3, :],
        "fortran": lambda: np.asfortranarray(base),
        "newaxis": lambda: base.copy()[:, None, ::2],
        "int32_transposed": lambda: base.astype(np.int32).T[::2],
        "uint8_steps": lambda: base.astype(np.uint8)[::3, ::2],
        "float16_steps": lambda: base.astype(np.float16)[1::2].swapaxes(0, 2),
    }


@pytest.mark.parametrize("case", list(_non_contiguous_cases()))
def test_from_numpy_non_contiguous_keeps_layout_and_shares(case):
    a = _non_contiguous_cases()[case]()
    itemsize = a.itemsize
    t = tt.from_numpy(a)
    assert t.shape == a.shape
    assert t.stride() == tuple(s // itemsize for s in a.strides)
    assert t.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(t.numpy(), a)
    back = t.numpy()
    assert back.ctypes.data == a.ctypes.data
    assert np.shares_memory(back, a)
    # the round trip gives back the same byte strides on every dimension that is stepped along
    for size, s_back, s_a in zip(a.shape, back.strides, a.strides, strict=True):
        if size > 1:
            assert s_back == s_a
    idx = tuple(s - 1 for s in a.shape)
    t[idx] = 77
    assert a[idx] == 77
    a[(0,) * a.ndim] = -3 if a.dtype.kind != "u" else 3
    assert t[(0,) * a.ndim].item() == a[(0,) * a.ndim]


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    data=st.data(),
)
def test_from_numpy_random_strided_views_match(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = tuple(
        slice(data.draw(st.integers(0, n - 1)), None, data.draw(st.integers(1, 3))) for n in shape
    )
    view = a[key]
    perm = data.draw(st.permutations(range(len(shape))))
    view = view.transpose(perm)
    t = tt.from_numpy(view)
    assert t.data_ptr() == view.ctypes.data
    assert t.stride() == tuple(s // 4 for s in view.strides)
    assert t.tolist() == view.tolist()


def test_from_numpy_broadcast_to_is_read_only_warning_stride_zero():
    base = np.arange(3.0)
    b = np.broadcast_to(base, (4, 3))
    with pytest.warns(UserWarning, match="from_numpy.*not writable"):
        t = tt.from_numpy(b)
    assert t.shape == (4, 3)
    assert t.stride() == (0, 1)
    assert t.data_ptr() == base.ctypes.data
    np.testing.assert_array_equal(t.numpy(), b)
    base[1] = 40.0  # the memory is shared: every row sees it
    assert t[:, 1].tolist() == [40.0] * 4


def test_from_numpy_writable_array_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tt.from_numpy(np.zeros(3))


@pytest.mark.parametrize("tt_dtype, np_dtype, _", DTYPES, ids=DTYPE_IDS)
def test_from_numpy_zero_dim(tt_dtype, np_dtype, _):
    a = np.array(sample(np_dtype, ())[()], dtype=np_dtype)
    t = tt.from_numpy(a)
    assert t.shape == () and t.stride() == ()
    assert t.dtype is tt_dtype
    assert t.data_ptr() == a.ctypes.data
    assert t.item() == a.item()
    t[()] = write_value(np_dtype)
    assert a[()] == write_value(np_dtype)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_from_numpy_empty_shapes(shape):
    a = np.zeros(shape, dtype=np.float32)
    t = tt.from_numpy(a)
    assert t.shape == shape
    assert t.numel() == 0
    assert t.stride() == tuple(s // 4 for s in a.strides)
    assert t.data_ptr() == a.ctypes.data
    assert t.numpy().shape == shape
    assert t.tolist() == a.tolist()


def test_from_numpy_rejects_non_arrays():
    for bad in ([1, 2, 3], (1.0,), 3.0, torch.zeros(2), tt.zeros(2)):
        with pytest.raises(TypeError, match="from_numpy"):
            tt.from_numpy(bad)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "uint16", "uint32", "uint64", "object", ">f4", ">i8",
                                   "U3", "datetime64[s]"])
def test_from_numpy_rejects_unsupported_dtypes(dtype):
    a = np.zeros(3, dtype=dtype)
    with pytest.raises(TypeError, match="from_numpy"):
        tt.from_numpy(a)


def test_from_numpy_rejects_byteswapped_float_with_hint():
    with pytest.raises(TypeError, match="from_numpy.*byte order"):
        tt.from_numpy(np.zeros(3, dtype=">f4"))


@pytest.mark.parametrize("make", [lambda a: a[::-1], lambda a: a[::-2], lambda a: a.reshape(3, 4)[:, ::-1],
                                  lambda a: a.reshape(3, 4)[::-1, 1:]])
def test_from_numpy_rejects_negative_strides(make):
    with pytest.raises(ValueError, match="from_numpy.*negative"):
        tt.from_numpy(make(np.arange(12.0)))
    # torch refuses these too
    with pytest.raises(ValueError):
        torch.from_numpy(make(np.arange(12.0)))


def test_from_numpy_rejects_unaligned():
    buf = bytearray(64)
    a = np.frombuffer(buf, dtype=np.float32, offset=1, count=8)
    assert not a.flags.aligned and a.flags.writeable
    before = counts()
    with pytest.raises(ValueError, match="from_numpy.*align"):
        tt.from_numpy(a)
    assert_counts(before)  # nothing left behind by the failed call


def test_from_numpy_rejects_strides_not_multiple_of_itemsize():
    raw = np.zeros(64, dtype=np.uint8)
    a = np.lib.stride_tricks.as_strided(raw[:8].view(np.int16), shape=(3,), strides=(3,))
    with pytest.raises(ValueError, match="from_numpy"):
        tt.from_numpy(a)


def test_as_tensor_shares_like_from_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).T
    t = tt.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data and t.stride() == (1, 3)
    u = tt.tensor(a)
    assert u.data_ptr() != a.ctypes.data and u.is_contiguous()
    np.testing.assert_array_equal(u.numpy(), a)


# ---------------------------------------------------------------------- from_numpy lifetimes


def test_from_numpy_tensor_outlives_the_name():
    a = np.arange(10, dtype=np.int64)
    expected = a.copy()
    t = tt.from_numpy(a)
    del a
    settle()
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t.tolist() == expected.tolist()


def test_from_numpy_array_lives_exactly_as_long_as_tensors_and_views():
    before = counts()
    a = np.arange(12, dtype=np.float32).reshape(3, 4).view(A)
    ref = weakref.ref(a)
    t = tt.from_numpy(a)
    assert tt.live_storages() == before[0] + 1
    assert tt.memory_allocated() == before[1]  # external memory: nothing from the cache
    views = [t.T, t[1:], t[:, ::2], t.view(12)]
    assert t.untyped_storage().use_count() == 5
    del a
    settle()
    assert ref() is not None
    del t
    settle()
    assert ref() is not None, "the array died while views of it were alive"
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(views[0].numpy(), expected.T)
    np.testing.assert_array_equal(views[2].numpy(), expected[:, ::2])
    while len(views) > 1:
        views.pop()
        settle()
        assert ref() is not None
    views.pop()
    settle()
    assert ref() is None, "the array is still alive after the last tensor over it went"
    assert_counts(before)


def test_from_numpy_refcount_of_the_array_returns():
    a = np.arange(5.0)
    base = sys.getrefcount(a)
    t = tt.from_numpy(a)
    assert sys.getrefcount(a) == base + 1  # the storage's handle
    v = t[1:]
    assert sys.getrefcount(a) == base + 1  # views share the storage, not the array
    del t
    settle()
    assert sys.getrefcount(a) == base + 1
    del v
    settle()
    assert sys.getrefcount(a) == base


def test_from_numpy_numpy_roundtrip_keeps_original_alive():
    before = counts()
    a = np.arange(6, dtype=np.int16).view(A)
    ref = weakref.ref(a)
    n = tt.from_numpy(a).numpy()[::2]
    del a
    settle()
    assert ref() is not None
    assert n.tolist() == [0, 2, 4]
    del n
    settle()
    assert ref() is None
    assert_counts(before)


# ====================================================================== Tensor -> NumPy


@pytest.mark.parametrize("tt_dtype, np_dtype, _", DTYPES, ids=DTYPE_IDS)
def test_numpy_every_dtype_zero_copy(tt_dtype, np_dtype, _):
    data = sample(np_dtype, (2, 5))
    t = tt.tensor(data)
    n = t.numpy()
    m = np.asarray(t)
    assert n.dtype == np_dtype and m.dtype == np_dtype
    assert n.ctypes.data == t.data_ptr() == m.ctypes.data
    np.testing.assert_array_equal(n, data)
    n[0, 0] = write_value(np_dtype)
    assert t[0, 0].item() == write_value(np_dtype)
    t[1, 4] = write_value(np_dtype, 1)
    assert m[1, 4] == write_value(np_dtype, 1)


@pytest.mark.parametrize(
    "make",
    [lambda x: x.T, lambda x: x[:, ::2], lambda x: x[1::2, 1:], lambda x: x[2], lambda x: x.permute(1, 0)[::3],
     lambda x: x[:, 1:2].expand(4, 5), lambda x: x[0].expand(3, 6), lambda x: x[None, :, 3], lambda x: x[1, 2]],
    ids=["T", "cols_step", "rows_step_offset", "row", "permute_step", "expand_col", "expand_row", "newaxis", "scalar"],
)
def test_numpy_of_non_contiguous_views(make):
    base = tt.arange(24, dtype=tt.float64).view(4, 6)
    ref = np.arange(24, dtype=np.float64).reshape(4, 6)
    v = make(base)
    n = v.numpy()
    assert n.shape == v.shape
    assert n.ctypes.data == v.data_ptr()
    assert np.shares_memory(n, base.numpy()) or v.numel() == 0
    for size, sb, se in zip(v.shape, n.strides, v.stride(), strict=True):
        if size > 1:
            assert sb == se * 8, f"byte stride {sb} for element stride {se}"
    np.testing.assert_array_equal(n, make_ref(make, ref))


def make_ref(make, ref: np.ndarray) -> np.ndarray:
    """Apply a t_tensor view function to a NumPy array through torch (same view semantics)."""
    return make(torch.from_numpy(ref)).numpy()


def test_numpy_of_expand_has_zero_byte_stride():
    x = tt.tensor([[1.0], [2.0]], dtype=tt.float32).expand(2, 3)
    n = x.numpy()
    assert n.strides == (4, 0)
    assert n.tolist() == [[1.0] * 3, [2.0] * 3]


def test_numpy_keeps_storage_alive_after_tensor_and_views_die():
    before = counts()
    t = tt.arange(10, dtype=tt.int32)
    w = t.untyped_storage().weak()
    v = t[2::3]
    n = v.numpy()
    m = np.asarray(t.T)
    del t, v
    settle()
    assert not w.expired()
    assert w.use_count() == 2  # the tensors behind n and m
    assert n.tolist() == [2, 5, 8]
    assert m.tolist() == list(range(10))
    del n
    settle()
    assert w.use_count() == 1
    del m
    settle()
    assert w.expired()
    del w
    assert_counts(before)


def test_numpy_force_copies():
    t = tt.arange(6, dtype=tt.float32).view(2, 3)
    c = t.numpy(force=True)
    assert not np.shares_memory(c, t.numpy())
    np.testing.assert_array_equal(c, t.numpy())
    c[0, 0] = 99
    assert t[0, 0].item() == 0.0
    ct = t.T.numpy(force=True)
    np.testing.assert_array_equal(ct, np.arange(6, dtype=np.float32).reshape(2, 3).T)


def test_array_conversions_with_dtype_and_copy():
    t = tt.arange(4, dtype=tt.int32)
    d = np.array(t, dtype=np.float64)
    assert d.dtype == np.float64 and d.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not np.shares_memory(d, t.numpy())
    c = np.array(t)  # np.array copies by default
    assert c.ctypes.data != t.data_ptr() and c.tolist() == [0, 1, 2, 3]
    same = t.__array__()
    assert same.ctypes.data == t.data_ptr()
    copied = t.__array__(copy=True)
    assert copied.ctypes.data != t.data_ptr() and copied.tolist() == [0, 1, 2, 3]
    converted = t.__array__(np.float32)
    assert converted.dtype == np.float32 and converted.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert t.__array__(np.int32, copy=False).ctypes.data == t.data_ptr()
    with pytest.raises(ValueError, match="__array__"):
        t.__array__(np.float64, copy=False)
    with pytest.raises(ValueError):
        np.asarray(t, dtype=np.float64, copy=False)


def test_array_interface_describes_layout():
    t = tt.arange(12, dtype=tt.int16).view(3, 4)
    ai = t.__array_interface__
    assert ai["version"] == 3 and ai["shape"] == (3, 4) and ai["typestr"] == np.dtype(np.int16).str
    assert ai["data"] == (t.data_ptr(), False)
    assert ai["strides"] is None
    v = t[1:, ::2]
    ai = v.__array_interface__
    assert ai["data"][0] == t.data_ptr() + 4 * 2
    assert ai["strides"] == (8, 4)


# ====================================================================== DLPack export


@pytest.mark.parametrize("tt_dtype, np_dtype, torch_dtype", DTYPES, ids=DTYPE_IDS)
def test_dlpack_to_numpy_and_torch_every_dtype(tt_dtype, np_dtype, torch_dtype):
    data = sample(np_dtype, (3, 4))
    t = tt.tensor(data)
    n = np.from_dlpack(t)
    p = torch.from_dlpack(t)
    assert n.dtype == np_dtype and p.dtype == torch_dtype
    assert n.ctypes.data == t.data_ptr() == p.data_ptr()
    np.testing.assert_array_equal(n, data)
    np.testing.assert_array_equal(p.numpy(), data)
    t[0, 1] = write_value(np_dtype)
    assert n[0, 1] == write_value(np_dtype) and p[0, 1].item() == write_value(np_dtype)
    p[2, 3] = write_value(np_dtype, 1)
    assert t[2, 3].item() == write_value(np_dtype, 1) and n[2, 3] == write_value(np_dtype, 1)


VIEW_CASES = {
    "T": lambda x: x.T,
    "step": lambda x: x[:, ::2],
    "offset": lambda x: x[1:, 2:],
    "offset_step": lambda x: x[1::2, 1::3],
    "row": lambda x: x[2],
    "expand": lambda x: x[:, :1].expand(4, 5),
    "expand_new_dim": lambda x: x[0].expand(3, 6),
    "scalar": lambda x: x[1, 1],
    "empty": lambda x: x[:, 6:],
}


@pytest.mark.parametrize("case", list(VIEW_CASES))
def test_dlpack_export_non_contiguous(case):
    base = tt.arange(24, dtype=tt.float32).view(4, 6)
    ref = torch.arange(24, dtype=torch.float32).view(4, 6)
    v = VIEW_CASES[case](base)
    want = VIEW_CASES[case](ref)
    p = torch.from_dlpack(v)
    n = np.from_dlpack(v)
    assert tuple(p.shape) == v.shape == n.shape
    assert torch.equal(p, want)
    np.testing.assert_array_equal(n, want.numpy())
    if v.numel() > 0:
        assert p.data_ptr() == v.data_ptr() == n.ctypes.data
        for size, sp, sn, st_ in zip(v.shape, p.stride(), n.strides, v.stride(), strict=True):
            if size > 1:
                assert sp == st_ and sn == st_ * 4
    if v.numel() > 0 and case not in ("expand", "expand_new_dim"):
        p.fill_(-1.0)
        assert (v.numpy() == -1.0).all()


def test_dlpack_capsule_names_and_struct():
    t = tt.arange(12, dtype=tt.int16).view(3, 4)[1:, ::2]
    legacy = t.__dlpack__()
    versioned = t.__dlpack__(max_version=(1, 0))
    assert repr(legacy).startswith('<capsule object "dltensor"')
    assert repr(versioned).startswith('<capsule object "dltensor_versioned"')
    assert capsule_name(legacy) == "dltensor" and capsule_name(versioned) == "dltensor_versioned"
    assert _py.PyCapsule_IsValid(legacy, b"dltensor") == 1
    assert _py.PyCapsule_IsValid(versioned, b"dltensor_versioned") == 1
    assert _py.PyCapsule_IsValid(versioned, b"dltensor") == 0

    m = ffi.cast("DLManagedTensorVersioned *", _py.PyCapsule_GetPointer(versioned, b"dltensor_versioned"))
    assert (m.version.major, m.version.minor) == (1, 0)
    assert m.flags == 0
    for dl in (m.dl_tensor, ffi.cast("DLManagedTensor *", _py.PyCapsule_GetPointer(legacy, b"dltensor")).dl_tensor):
        assert (dl.device.device_type, dl.device.device_id) == (1, 0)
        assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (0, 16, 1)
        assert dl.ndim == 2
        assert [dl.shape[i] for i in range(2)] == [2, 2]
        assert [dl.strides[i] for i in range(2)] == [4, 2]
        assert int(ffi.cast("uintptr_t", dl.data)) + dl.byte_offset == t.data_ptr()


def test_dlpack_copy_sets_the_is_copied_flag_and_owns_a_separate_buffer():
    t = tt.arange(6, dtype=tt.float32)
    copied = t.__dlpack__(max_version=(1, 0), copy=True)
    shared = t.__dlpack__(max_version=(1, 0), copy=False)
    m_copied = ffi.cast("DLManagedTensorVersioned *", _py.PyCapsule_GetPointer(copied, b"dltensor_versioned"))
    m_shared = ffi.cast("DLManagedTensorVersioned *", _py.PyCapsule_GetPointer(shared, b"dltensor_versioned"))
    assert m_copied.flags & 2 and not m_shared.flags & 2
    assert int(ffi.cast("uintptr_t", m_copied.dl_tensor.data)) != t.data_ptr()
    assert int(ffi.cast("uintptr_t", m_shared.dl_tensor.data)) == t.data_ptr()


@pytest.mark.parametrize("max_version", [None, (0, 8), (1, 0), (1, 3), (2, 0)])
def test_dlpack_max_version_picks_capsule_kind(max_version):
    t = tt.zeros(2)
    capsule = t.__dlpack__(max_version=max_version)
    versioned = max_version is not None and max_version[0] >= 1
    assert capsule_name(capsule) == ("dltensor_versioned" if versioned else "dltensor")
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_copy_true_gives_separate_buffer():
    t = tt.arange(6, dtype=tt.float64).view(2, 3).T
    storage = t.untyped_storage()
    before = storage.use_count()
    capsule = t.__dlpack__(copy=True, max_version=(1, 0))
    assert storage.use_count() == before  # the copy holds its own storage, not ours
    p = torch.from_dlpack(capsule)
    assert p.data_ptr() != t.data_ptr()
    assert p.tolist() == t.tolist()
    p.zero_()
    assert t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    n = np.from_dlpack(t, copy=True)
    assert not np.shares_memory(n, t.numpy()) and n.tolist() == t.tolist()
    n2 = np.from_dlpack(t, copy=False)
    assert n2.ctypes.data == t.data_ptr()


def test_dlpack_bad_arguments():
    t = tt.zeros(3)
    storage = t.untyped_storage()
    with pytest.raises(ValueError, match="__dlpack__"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="__dlpack__"):
        t.__dlpack__(dl_device=(2, 0))
    settle()
    assert storage.use_count() == 1  # failed exports hold nothing
    t.__dlpack__(stream=-1)
    t.__dlpack__(stream=None, dl_device=(1, 0))


def test_dlpack_capsule_consumed_twice():
    t = tt.arange(4, dtype=tt.float32)
    for max_version in (None, (1, 0)):
        capsule = t.__dlpack__(max_version=max_version)
        u = tt.from_dlpack(capsule)
        assert u.data_ptr() == t.data_ptr()
        assert capsule_name(capsule).startswith("used_")
        with pytest.raises(ValueError, match="from_dlpack"):
            tt.from_dlpack(capsule)
    capsule = t.__dlpack__()
    p = torch.from_dlpack(capsule)
    assert p.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="from_dlpack"):
        tt.from_dlpack(capsule)


def test_dlpack_unconsumed_capsule_is_freed_by_destructor():
    before = counts()
    t = tt.arange(100, dtype=tt.float32)
    storage = t.untyped_storage()
    for max_version in (None, (1, 0)):
        capsule = t.__dlpack__(max_version=max_version)
        assert storage.use_count() == 2
        del capsule
        settle()
        assert storage.use_count() == 1
    # the capsule alone keeps the memory alive, and its destructor frees it
    w = storage.weak()
    capsule = t[10:].__dlpack__()
    del t, storage
    settle()
    assert w.use_count() == 1
    del capsule
    settle()
    assert w.expired()
    del w
    assert_counts(before)


@pytest.mark.parametrize("consumer", ["numpy", "torch", "tt"])
def test_dlpack_consumed_capsule_released_when_consumer_dies(consumer):
    t = tt.arange(10, dtype=tt.float64)
    storage = t.untyped_storage()
    if consumer == "numpy":
        out = np.from_dlpack(t)
    elif consumer == "torch":
        out = torch.from_dlpack(t)
    else:
        out = tt.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert storage.use_count() == 2
    more = out[2:]  # a consumer-side view keeps the same import alive, no new reference
    assert storage.use_count() == 2
    del out
    settle()
    assert storage.use_count() == 2
    del more
    settle()
    assert storage.use_count() == 1


# ====================================================================== DLPack import


@pytest.mark.parametrize("tt_dtype, np_dtype, torch_dtype", DTYPES, ids=DTYPE_IDS)
def test_from_dlpack_numpy_and_torch_every_dtype(tt_dtype, np_dtype, torch_dtype):
    a = sample(np_dtype, (2, 3), seed=1)
    x = torch.from_numpy(a.copy())
    for source, ptr in ((a.copy(), None), (x, x.data_ptr())):
        ptr = source.ctypes.data if ptr is None else ptr
        t = tt.from_dlpack(source)
        assert t.dtype is tt_dtype
        assert t.data_ptr() == ptr
        assert t.untyped_storage().allocator == "external"
        np.testing.assert_array_equal(t.numpy(), a)
        t[1, 2] = write_value(np_dtype)
        assert np.asarray(source)[1, 2] == write_value(np_dtype)
        source[0, 0] = write_value(np_dtype, 1)
        assert t[0, 0].item() == write_value(np_dtype, 1)


TORCH_VIEWS = {
    "t": lambda x: x.t(),
    "step": lambda x: x[:, ::2],
    "offset": lambda x: x[2:],
    "offset_cols": lambda x: x[1:, 3:],
    "expand": lambda x: x[:, :1].expand(5, 4),
    "diagonal": lambda x: x.diagonal(),
    "scalar": lambda x: x[2, 3],
    "empty": lambda x: x[5:],
}


@pytest.mark.parametrize("case", list(TORCH_VIEWS))
def test_from_dlpack_torch_views(case):
    x = torch.arange(30, dtype=torch.int64).view(5, 6)
    v = TORCH_VIEWS[case](x)
    t = tt.from_dlpack(v)
    assert t.shape == tuple(v.shape)
    assert t.tolist() == v.tolist()
    if v.numel() == 0:
        return
    assert t.data_ptr() == v.data_ptr()
    for size, s_t, s_v in zip(t.shape, t.stride(), v.stride(), strict=True):
        if size > 1:
            assert s_t == s_v
    if case != "expand":
        v.fill_(-7)
        assert set(t.numpy().ravel().tolist()) == {-7}


def test_from_dlpack_torch_storage_offset():
    x = torch.arange(10, dtype=torch.float32)
    y = x[2:]
    assert y.storage_offset() == 2
    t = tt.from_dlpack(y)
    assert t.data_ptr() == x.data_ptr() + 8
    assert t.tolist() == list(range(2, 10))
    t[0] = 100.0
    assert x[2].item() == 100.0


def test_from_dlpack_numpy_views():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for v in (a.T, a[::2, 1::2], a[1:], np.broadcast_to(a[0], (3, 6))):
        if v.flags.writeable:
            t = tt.from_dlpack(v)
        else:
            with pytest.warns(UserWarning, match="read-only"):
                t = tt.from_dlpack(v)
        assert t.data_ptr() == v.ctypes.data
        assert t.stride() == tuple(s // 4 for s in v.strides)
        np.testing.assert_array_equal(t.numpy(), v)


def test_from_dlpack_legacy_torch_capsule():
    x = torch.arange(6, dtype=torch.float64).view(2, 3)
    capsule = torch.utils.dlpack.to_dlpack(x.t())
    assert capsule_name(capsule) == "dltensor"
    t = tt.from_dlpack(capsule)
    assert capsule_name(capsule) == "used_dltensor"
    assert t.data_ptr() == x.data_ptr() and t.stride() == (1, 3)
    assert t.tolist() == x.t().tolist()
    del x
    settle()
    assert t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_from_dlpack_of_a_tensor_returns_it():
    t = tt.zeros(2)
    assert tt.from_dlpack(t) is t


def test_from_dlpack_rejects():
    with pytest.raises(TypeError, match="from_dlpack"):
        tt.from_dlpack([1, 2, 3])
    for dtype in (torch.complex64, torch.bfloat16, torch.uint16):
        with pytest.raises(TypeError, match="from_dlpack"):
            tt.from_dlpack(torch.zeros(3, dtype=dtype))
    with pytest.raises(ValueError, match="from_dlpack.*negative"):
        tt.from_dlpack(np.arange(4.0)[::-1])


def test_from_dlpack_failed_import_leaves_producer_memory_to_producer():
    before = counts()
    a = np.arange(4.0).view(A)
    ref = weakref.ref(a)
    with pytest.raises(ValueError, match="from_dlpack"):
        tt.from_dlpack(a[::-1])
    x = torch.zeros(3, dtype=torch.complex64)
    xref = weakref.ref(x)
    with pytest.raises(TypeError, match="from_dlpack"):
        tt.from_dlpack(x)
    del a, x
    settle()
    assert ref() is None and xref() is None
    assert_counts(before)


# ====================================================================== lifetimes across libraries


def test_lifetime_tt_to_torch():
    before = counts()
    t = tt.arange(1000, dtype=tt.float32)
    assert tt.memory_allocated() == before[1] + 4096
    p = torch.from_dlpack(t[10:].view(33, 30).T)
    w = t.untyped_storage().weak()
    del t
    settle()
    assert not w.expired()
    expected = torch.arange(10, 1000, dtype=torch.float32).view(33, 30).T
    assert torch.equal(p, expected)
    assert tt.memory_allocated() == before[1] + 4096
    assert tt.live_storages() == before[0] + 1
    q = p[::2].clone()
    del p
    settle()
    assert w.expired()
    del w
    assert_counts(before)
    assert torch.equal(q, expected[::2])


def test_lifetime_torch_to_tt():
    before = counts()
    x = torch.arange(50, dtype=torch.int32)
    xref = weakref.ref(x)
    t = tt.from_dlpack(x[5:].view(5, 9)[:, ::2])
    assert tt.live_storages() == before[0] + 1
    assert tt.memory_allocated() == before[1]
    del x
    settle()
    expected = (np.arange(5, 50, dtype=np.int32).reshape(5, 9)[:, ::2]).tolist()
    assert t.tolist() == expected
    v = t[1:]
    del t
    settle()
    assert v.tolist() == expected[1:]
    assert xref() is not None, "torch's tensor died while t_tensor still used its memory"
    del v
    settle()
    assert xref() is None, "torch's tensor was not released when the last t_tensor view died"
    assert_counts(before)


def test_lifetime_torch_to_tt_legacy_capsule():
    before = counts()
    x = torch.arange(8, dtype=torch.float64)
    xref = weakref.ref(x)
    t = tt.from_dlpack(torch.utils.dlpack.to_dlpack(x))
    del x
    settle()
    assert t.tolist() == [float(i) for i in range(8)]
    del t
    settle()
    assert xref() is None
    assert_counts(before)


def test_lifetime_chain_numpy_tt_torch():
    before = counts()
    a = np.arange(20, dtype=np.int64).reshape(4, 5).view(A)
    ref = weakref.ref(a)
    t = tt.from_numpy(a)
    p = torch.from_dlpack(t[1:, ::2])
    assert p.data_ptr() == a.ctypes.data + 5 * 8
    del a, t
    settle()
    assert ref() is not None
    assert p.tolist() == np.arange(20).reshape(4, 5)[1:, ::2].tolist()
    n = np.from_dlpack(p)  # and on to NumPy again
    del p
    settle()
    assert ref() is not None
    assert n.tolist() == np.arange(20).reshape(4, 5)[1:, ::2].tolist()
    del n
    settle()
    assert ref() is None
    assert_counts(before)


def test_lifetime_chain_torch_tt_numpy_torch():
    before = counts()
    x = torch.arange(12, dtype=torch.float32)
    xref = weakref.ref(x)
    t = tt.from_dlpack(x)
    n = t.numpy()
    y = torch.from_dlpack(t.view(3, 4))
    del x, t
    settle()
    assert n.tolist() == list(map(float, range(12)))
    del n
    settle()
    assert xref() is not None
    assert y.sum().item() == 66.0
    del y
    settle()
    assert xref() is None
    assert_counts(before)


# ====================================================================== threads


def test_dlpack_consumed_and_deleted_in_other_threads():
    before = counts()
    t = tt.arange(4096, dtype=tt.float64)
    storage = t.untyped_storage()
    errors: list[BaseException] = []

    def consume(capsule):
        try:
            p = torch.from_dlpack(capsule)
            assert p[-1].item() == 4095.0
            del p
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    capsules = [t[i:].__dlpack__(max_version=(1, 0) if i % 2 else None) for i in range(8)]
    assert storage.use_count() == 9
    threads = [threading.Thread(target=consume, args=(c,)) for c in capsules]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    del capsules, threads
    settle()
    assert storage.use_count() == 1
    del t, storage
    assert_counts(before)


def test_torch_tensor_deleted_from_another_thread():
    before = counts()
    holder = {"p": torch.from_dlpack(tt.arange(1000, dtype=tt.int32))}
    assert tt.live_storages() == before[0] + 1

    def drop():
        assert holder["p"][999].item() == 999
        del holder["p"]

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    assert "p" not in holder
    assert_counts(before)


def test_numpy_backed_export_deleted_from_another_thread():
    before = counts()
    a = np.arange(100.0).view(A)
    ref = weakref.ref(a)
    holder = [torch.from_dlpack(tt.from_numpy(a))]
    del a
    th = threading.Thread(target=holder.clear)
    th.start()
    th.join()
    settle()
    assert ref() is None
    assert_counts(before)


def test_many_threads_export_import_stress():
    before = counts()
    t = tt.arange(256, dtype=tt.float32)
    storage = t.untyped_storage()
    errors: list[BaseException] = []

    def work(source, seed):
        try:
            for i in range(100):
                k = (seed * 31 + i) % 256
                if i % 3 == 0:
                    out = torch.from_dlpack(source[k:])
                    assert out[0].item() == float(k)
                elif i % 3 == 1:
                    out = np.from_dlpack(source[k:])
                    assert out[0] == float(k)
                else:
                    out = tt.from_dlpack(source[k:].__dlpack__(max_version=(1, 0)))
                    assert out[0].item() == float(k)
                del out
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t, s)) for s in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    settle()
    assert storage.use_count() == 1
    del t, storage
    assert_counts(before)
