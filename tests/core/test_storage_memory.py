"""Storage, WeakStorage, the caching allocator and the random generators, seen from Python.

Counts are exact (storage.c, Note [Refcount invariants]): ``use_count`` is the number of strong
references, ``weak_count`` the number of weak references plus one while any strong reference
exists. Memory statistics are compared as differences from a baseline taken at the start of
each test, because other tests share the process-wide cache.
"""

from __future__ import annotations

import gc
import os
import random
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

import t_tensor as tt
from t_tensor._capi import check, ffi, lib

STAT_KEYS = [
    "allocated_bytes.current", "allocated_bytes.peak", "requested_bytes.current", "reserved_bytes.current",
    "reserved_bytes.peak", "active_blocks.current", "cached_blocks.current", "cached_bytes.current", "num_allocs",
    "num_frees", "cache_hits", "cache_misses", "num_system_allocs", "num_system_frees", "num_invalid_frees",
    "pinned_blocks.current",
]
GLOBAL_CACHE = lib.tt_global_caching_allocator()


def stats() -> dict[str, int]:
    gc.collect(1)  # tensors die by reference counting; this only catches cycles a test made
    return tt.memory_stats()


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in before}


@pytest.fixture
def no_gc():
    """Keep the collector from freeing unrelated tensors (other tests' cycles) in the middle of
    an exact bookkeeping check."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.fixture
def leak_check():
    """Every test using this must leave the storage count and allocated bytes where it found them.

    A full collection first clears earlier tests' garbage; at the end a young-generation pass is
    enough (a full one costs ~0.1 s with torch imported) since only this test's objects are new.
    """
    gc.collect()
    before = (tt.live_storages(), tt.memory_allocated())
    yield before
    gc.collect(1)
    assert (tt.live_storages(), tt.memory_allocated()) == before


# ====================================================================== Storage


@pytest.mark.parametrize("nbytes", [0, 1, 63, 64, 65, 100, 4000, 4096, 1 << 20, (1 << 20) + 1, 3_000_000])
def test_allocate_counts_size_alignment(nbytes, leak_check):
    s = tt.Storage.allocate(nbytes)
    assert s.use_count() == 1
    assert s.weak_count() == 1
    assert s.nbytes == nbytes == len(s)
    assert s.data_ptr() != 0  # even 0 bytes get a unique block from the cache
    assert s.data_ptr() % 64 == 0
    assert s.allocator == "caching"
    assert tt.live_storages() == leak_check[0] + 1
    r = repr(s)
    assert f"nbytes={nbytes}" in r and "use_count=1" in r and "caching" in r


def test_allocate_data_is_usable_memory():
    s = tt.Storage.allocate(4096)
    buf = ffi.buffer(ffi.cast("char *", s.data_ptr()), 4096)
    buf[:] = bytes(range(256)) * 16
    assert bytes(buf[250:260]) == bytes([250, 251, 252, 253, 254, 255, 0, 1, 2, 3])


def test_allocate_from_host_allocator():
    s = tt.Storage.allocate(100, allocator=lib.tt_host_allocator())
    assert s.allocator == "host" and s.data_ptr() % 64 == 0 and s.nbytes == 100
    empty = tt.Storage.allocate(0, allocator=lib.tt_host_allocator())
    assert empty.data_ptr() == 0 and empty.nbytes == 0


ALLOCATOR_SCRIPT = """
import t_tensor as tt
before = tt.memory_stats()["num_allocs"]
owners = [tt.empty(3), tt.ones(2) + 1, tt.arange(6).reshape(2, 3).t().contiguous(), tt.Storage.allocate(8)]
names = [o.allocator if isinstance(o, tt.Storage) else o.untyped_storage().allocator for o in owners]
print(",".join(names), tt.memory_stats()["num_allocs"] - before)
"""


@pytest.mark.parametrize(("setting", "expected"), [(None, "caching"), ("caching", "caching"), ("host", "host"),
                                                   ("bogus", "caching")])
def test_tt_allocator_environment_switch(setting, expected):
    # TT_ALLOCATOR=host (read once per process) sends every storage, from Python or from a C fast
    # path, to the uncached host allocator, so that memory checkers see each block on its own.
    env = {k: v for k, v in os.environ.items() if k != "TT_ALLOCATOR"}
    if setting is not None:
        env["TT_ALLOCATOR"] = setting
    done = subprocess.run([sys.executable, "-c", ALLOCATOR_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    names, cache_allocs = done.stdout.split()
    assert names == ",".join([expected] * 4)
    assert (int(cache_allocs) == 0) == (expected == "host")


def test_allocate_rejects_negative():
    before = tt.live_storages()
    with pytest.raises(ValueError, match="Storage.allocate"):
        tt.Storage.allocate(-1)
    assert tt.live_storages() == before


def test_allocate_huge_is_memory_error(leak_check):
    stats_before = tt.memory_stats()
    with pytest.raises(MemoryError, match="Storage.allocate"):
        tt.Storage.allocate(2**62)
    after = tt.memory_stats()
    assert after["allocated_bytes.current"] == stats_before["allocated_bytes.current"]
    assert after["active_blocks.current"] == stats_before["active_blocks.current"]
    assert after["num_allocs"] == stats_before["num_allocs"]
    with pytest.raises((MemoryError, OverflowError)):
        tt.Storage.allocate(2**64 - 1)


def test_share_weak_lock_counts_exactly(leak_check):
    s = tt.Storage.allocate(16)
    assert (s.use_count(), s.weak_count()) == (1, 1)
    s2 = s.share()
    assert s2.data_ptr() == s.data_ptr() and s2.nbytes == 16
    assert (s.use_count(), s.weak_count()) == (2, 1)
    w = s.weak()
    assert (s.use_count(), s.weak_count()) == (2, 2)
    w2 = s2.weak()
    assert (w.use_count(), w.weak_count()) == (2, 3)
    locked = w.lock()
    assert locked is not None and locked.data_ptr() == s.data_ptr()
    assert (s.use_count(), s.weak_count()) == (3, 3)
    assert not w.expired() and "alive" in repr(w)
    del w2
    assert s.weak_count() == 2
    del locked, s2
    assert (s.use_count(), s.weak_count()) == (1, 2)
    assert tt.live_storages() == leak_check[0] + 1


def test_last_strong_ref_releases_data_but_not_object(leak_check):
    base_alloc = tt.memory_allocated()
    s = tt.Storage.allocate(1000)  # the 1024-byte class
    assert tt.memory_allocated() == base_alloc + 1024
    w = s.weak()
    del s
    # data released at that moment, the C object kept by the weak handle
    assert tt.memory_allocated() == base_alloc
    assert w.expired()
    assert w.use_count() == 0
    assert w.weak_count() == 1  # just the handle
    assert "expired" in repr(w)
    assert tt.live_storages() == leak_check[0] + 1
    for _ in range(3):  # zero is final: lock fails forever
        assert w.lock() is None
        assert w.use_count() == 0 and w.weak_count() == 1
    del w
    assert tt.live_storages() == leak_check[0]


def test_weak_handles_outlive_in_any_order(leak_check):
    s = tt.Storage.allocate(8)
    weaks = [s.weak() for _ in range(5)]
    assert s.weak_count() == 6
    strong = [w.lock() for w in weaks]
    assert s.use_count() == 6
    del s
    strong.clear()
    assert all(w.expired() for w in weaks)
    assert weaks[0].weak_count() == 5
    random.Random(1).shuffle(weaks)
    while weaks:
        weaks.pop()
        if weaks:
            assert weaks[0].weak_count() == len(weaks)
            assert tt.live_storages() == leak_check[0] + 1


# ---------------------------------------------------------------------- tensors over storages


def test_each_view_holds_one_strong_reference(leak_check):
    x = tt.zeros(4, 6)
    storage = x.untyped_storage()
    assert storage.use_count() == 1
    views = []
    for make in (lambda t: t.T, lambda t: t[1:], lambda t: t[:, ::2], lambda t: t.view(24), lambda t: t[0, 0],
                 lambda t: t.unsqueeze(0), lambda t: t[:, :1].expand(4, 5)):
        views.append(make(x))
        assert storage.use_count() == 1 + len(views)
        assert views[-1].untyped_storage() is not storage
        assert views[-1].is_shared_with(x)
    nested = views[1][::2].T
    assert storage.use_count() == 2 + len(views)
    del nested
    while views:
        views.pop()
        assert storage.use_count() == 1 + len(views)
    assert storage.weak_count() == 1


def test_clone_and_contiguous_of_non_contiguous_get_new_storage(leak_check):
    x = tt.arange(12, dtype=tt.float32).view(3, 4)
    storage = x.untyped_storage()
    t = x.T
    for copy in (t.clone(), t.contiguous(), x[:, ::2].contiguous(), x.clone()):
        assert not copy.is_shared_with(x)
        assert copy.untyped_storage().use_count() == 1
        assert copy.is_contiguous()
        assert copy.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(t.contiguous().numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    assert storage.use_count() == 2  # x and t only: the copies hold their own storage
    assert x.contiguous() is x
    rows = x[1:]
    assert rows.contiguous() is rows
    row = x[1]
    assert row.contiguous() is row


def test_tensor_storage_freed_with_last_view(leak_check):
    base_alloc = tt.memory_allocated()
    x = tt.empty(1000)  # 4000 bytes -> the 4096-byte class
    assert tt.memory_allocated() == base_alloc + 4096
    w = x.untyped_storage().weak()
    v = x[::3]
    del x
    assert tt.memory_allocated() == base_alloc + 4096 and not w.expired()
    del v
    assert w.expired()
    assert tt.memory_allocated() == base_alloc


# ====================================================================== memory statistics


def test_stats_keys_are_ints_and_consistent():
    s = tt.memory_stats()
    assert sorted(s) == sorted(STAT_KEYS)
    assert all(type(v) is int for v in s.values())
    assert all(v >= 0 for v in s.values())
    assert s["reserved_bytes.current"] == s["allocated_bytes.current"] + s["cached_bytes.current"]
    assert s["allocated_bytes.peak"] >= s["allocated_bytes.current"]
    assert s["reserved_bytes.peak"] >= s["reserved_bytes.current"]
    assert s["allocated_bytes.current"] >= s["requested_bytes.current"]
    assert s["num_allocs"] - s["num_frees"] == s["active_blocks.current"]
    assert s["cache_hits"] + s["cache_misses"] == s["num_allocs"]
    assert tt.memory_allocated() == s["allocated_bytes.current"]
    assert tt.memory_reserved() == s["reserved_bytes.current"]
    assert tt.max_memory_allocated() == s["allocated_bytes.peak"]
    assert tt.max_memory_reserved() == s["reserved_bytes.peak"]


@pytest.mark.parametrize(
    "numel, dtype, block, requested",
    [(1000, tt.float32, 4096, 4000), (0, tt.float32, 64, 0), (1, tt.int8, 64, 1), (16, tt.float32, 64, 64),
     (17, tt.float32, 80, 68), (100, tt.float64, 896, 800), (1000, tt.int8, 1024, 1000),
     (262144, tt.float32, 1 << 20, 1 << 20), (262145, tt.float32, (1 << 20) + (64 << 10), (1 << 20) + 4)],
)
def test_size_classes(numel, dtype, block, requested, no_gc):
    before = stats()
    x = tt.empty(numel, dtype=dtype)
    d = delta(tt.memory_stats(), before)
    assert d["allocated_bytes.current"] == block
    assert d["requested_bytes.current"] == requested
    assert d["active_blocks.current"] == 1
    assert d["num_allocs"] == 1
    del x
    d = delta(tt.memory_stats(), before)
    assert d["allocated_bytes.current"] == 0 and d["requested_bytes.current"] == 0
    assert d["active_blocks.current"] == 0 and d["num_frees"] == 1


def test_allocated_peak_reserved_bookkeeping(no_gc):
    tt.reset_peak_memory_stats()
    before = stats()
    assert before["allocated_bytes.peak"] == before["allocated_bytes.current"]
    assert before["reserved_bytes.peak"] == before["reserved_bytes.current"]
    a = tt.empty(1000)
    b = tt.empty(2000)  # 8000 bytes -> the 8192 class
    assert tt.memory_allocated() - before["allocated_bytes.current"] == 4096 + 8192
    assert tt.max_memory_allocated() - before["allocated_bytes.current"] == 4096 + 8192
    assert tt.memory_reserved() >= tt.memory_allocated()
    del a, b
    after = tt.memory_stats()
    assert after["allocated_bytes.current"] == before["allocated_bytes.current"]
    assert after["allocated_bytes.peak"] == before["allocated_bytes.current"] + 4096 + 8192  # peak stays
    # freed blocks are cached, not returned: reserved does not drop
    assert after["reserved_bytes.current"] >= before["reserved_bytes.current"]
    assert after["reserved_bytes.current"] == after["allocated_bytes.current"] + after["cached_bytes.current"]
    tt.reset_peak_memory_stats()
    assert tt.max_memory_allocated() == tt.memory_allocated()
    assert tt.max_memory_reserved() == tt.memory_reserved()


def test_cache_hit_on_same_size_class(no_gc):
    x = tt.empty(777, dtype=tt.float64)  # 6216 bytes -> the 7168-byte class
    ptr = x.data_ptr()
    del x
    before = tt.memory_stats()
    y = tt.empty(800, dtype=tt.float64)  # 6400 bytes: same class, same (warmest) block
    d = delta(tt.memory_stats(), before)
    assert y.data_ptr() == ptr
    assert d["cache_hits"] == 1 and d["cache_misses"] == 0
    assert d["num_system_allocs"] == 0
    assert d["reserved_bytes.current"] == 0
    assert d["cached_blocks.current"] == -1 and d["cached_bytes.current"] == -7168
    assert d["allocated_bytes.current"] == 7168


def test_cache_miss_then_system_alloc(no_gc):
    tt.unpin_all()
    tt.empty_cache()
    before = tt.memory_stats()
    x = tt.empty(3000)  # 12000 bytes -> 12288 class; the cache is empty, so the system is asked
    d = delta(tt.memory_stats(), before)
    assert d["cache_misses"] == 1 and d["cache_hits"] == 0 and d["num_system_allocs"] == 1
    assert d["reserved_bytes.current"] == 12288
    del x


def test_large_blocks_reuse_within_an_eighth(no_gc):
    tt.unpin_all()
    tt.empty_cache()
    x = tt.empty(2 << 20, dtype=tt.uint8)  # 2 MiB, a large block (64 KiB multiple)
    ptr = x.data_ptr()
    del x
    before = tt.memory_stats()
    y = tt.empty((2 << 20) - 100_000, dtype=tt.uint8)  # fits and wastes less than 1/8: reused
    assert y.data_ptr() == ptr
    assert delta(tt.memory_stats(), before)["cache_hits"] == 1
    del y
    before = tt.memory_stats()
    z = tt.empty(1 << 20 | 1, dtype=tt.uint8)  # would waste nearly half: a new block
    d = delta(tt.memory_stats(), before)
    assert d["cache_misses"] == 1 and z.data_ptr() != ptr
    del z
    tt.empty_cache()


def test_empty_cache_returns_cached_bytes(no_gc):
    tt.unpin_all()
    tensors = [tt.empty(n) for n in (10, 1000, 5000, 300_000)]
    del tensors
    before = tt.memory_stats()
    assert before["cached_bytes.current"] > 0
    released = tt.empty_cache()
    after = tt.memory_stats()
    assert released == before["cached_bytes.current"]
    assert after["cached_bytes.current"] == 0 and after["cached_blocks.current"] == 0
    assert after["reserved_bytes.current"] == after["allocated_bytes.current"]
    assert after["num_system_frees"] - before["num_system_frees"] == before["cached_blocks.current"]
    assert tt.empty_cache() == 0


def test_pinned_memory_survives_empty_cache(no_gc):
    tt.unpin_all()
    tt.empty_cache()
    before = tt.memory_stats()
    with tt.pinned_memory():
        assert lib.tt_caching_allocator_is_pinned(GLOBAL_CACHE) == 1
        x = tt.empty(123_457)  # 493828 bytes -> the 524288-byte class
    assert lib.tt_caching_allocator_is_pinned(GLOBAL_CACHE) == 0
    assert tt.memory_stats()["pinned_blocks.current"] == before["pinned_blocks.current"] + 1
    y = tt.empty(123_457)  # outside the block: not pinned
    del x, y
    released = tt.empty_cache()
    assert released == 524288  # y's block went, x's pinned block stayed
    mid = tt.memory_stats()
    assert mid["cached_bytes.current"] == 524288
    assert mid["reserved_bytes.current"] == mid["allocated_bytes.current"] + 524288
    assert mid["pinned_blocks.current"] == 1
    tt.unpin_all()
    assert tt.memory_stats()["pinned_blocks.current"] == 0
    assert tt.empty_cache() == 524288
    after = tt.memory_stats()
    assert after["reserved_bytes.current"] == after["allocated_bytes.current"]


def test_pinned_memory_restores_mode_on_error():
    with pytest.raises(KeyError):
        with tt.pinned_memory():
            raise KeyError("boom")
    assert lib.tt_caching_allocator_is_pinned(GLOBAL_CACHE) == 0
    with tt.pinned_memory():
        with tt.pinned_memory():
            pass
        assert lib.tt_caching_allocator_is_pinned(GLOBAL_CACHE) == 1  # nested: outer still on
    assert lib.tt_caching_allocator_is_pinned(GLOBAL_CACHE) == 0
    tt.unpin_all()


def test_random_sizes_leave_allocated_at_baseline(leak_check):
    rng = random.Random(1234)
    before = stats()
    live: list[tt.Tensor] = []
    total = 0
    for _ in range(1000):
        if live and rng.random() < 0.45:
            live.pop(rng.randrange(len(live)))
        else:
            dtype = rng.choice([tt.uint8, tt.int16, tt.float32, tt.float64])
            live.append(tt.empty(rng.choice([0, rng.randrange(1, 300), rng.randrange(300, 100_000)]), dtype=dtype))
            total += 1
        s = tt.memory_stats()
        assert s["active_blocks.current"] - before["active_blocks.current"] == len(live)
    live.clear()
    after = stats()
    assert after["allocated_bytes.current"] == before["allocated_bytes.current"]
    assert after["requested_bytes.current"] == before["requested_bytes.current"]
    assert after["active_blocks.current"] == before["active_blocks.current"]
    d = delta(after, before)
    assert d["num_allocs"] == d["num_frees"] == total
    assert d["num_invalid_frees"] == 0
    assert after["reserved_bytes.current"] == after["allocated_bytes.current"] + after["cached_bytes.current"]


# ====================================================================== a private cache through cffi


@pytest.fixture
def private_cache():
    out = ffi.new("tt_caching_allocator **")
    assert lib.tt_caching_allocator_create(lib.tt_host_allocator(), out) == lib.TT_OK
    cache = out[0]
    yield cache, lib.tt_caching_allocator_interface(cache)


def _alloc(iface, nbytes):
    out = ffi.new("void **")
    assert iface.alloc(iface.ctx, nbytes, out) == lib.TT_OK
    return out[0]


def _private_stats(cache):
    raw = ffi.new("tt_allocator_stats *")
    lib.tt_caching_allocator_get_stats(cache, raw)
    return raw


def test_private_cache_double_free_and_foreign_pointer(private_cache):
    cache, iface = private_cache
    assert ffi.string(iface.name) == b"caching"
    p = _alloc(iface, 100)
    assert int(ffi.cast("uintptr_t", p)) % 64 == 0
    assert iface.free(iface.ctx, p) == lib.TT_OK
    assert iface.free(iface.ctx, p) == lib.TT_ERR_DOUBLE_FREE
    foreign = ffi.new("char[256]")
    assert iface.free(iface.ctx, foreign) == lib.TT_ERR_FOREIGN_POINTER
    assert iface.free(iface.ctx, ffi.cast("void *", int(ffi.cast("uintptr_t", p)) + 64)) == lib.TT_ERR_FOREIGN_POINTER
    assert iface.free(iface.ctx, ffi.NULL) == lib.TT_OK
    s = _private_stats(cache)
    assert s.num_invalid_frees == 3
    assert s.num_frees == 1 and s.num_allocs == 1
    assert s.cached_blocks == 1 and s.active_blocks == 0  # the bad frees did not corrupt the lists
    q = _alloc(iface, 101)  # same 112-byte class: the cached block again
    assert q == p
    assert iface.free(iface.ctx, q) == lib.TT_OK

    with pytest.raises(RuntimeError, match="free: double free"):
        check(iface.free(iface.ctx, p), "free")
    with pytest.raises(RuntimeError, match="free: foreign pointer"):
        check(iface.free(iface.ctx, foreign), "free")
    assert lib.tt_caching_allocator_destroy(cache) == lib.TT_OK


def test_private_cache_storages_and_trim(private_cache):
    cache, iface = private_cache
    global_before = tt.memory_stats()
    s = tt.Storage.allocate(5000, allocator=iface)
    assert s.allocator == "caching"
    st = _private_stats(cache)
    assert st.allocated_bytes == 5120 and st.requested_bytes == 5000 and st.active_blocks == 1
    assert tt.memory_stats()["num_allocs"] == global_before["num_allocs"]  # the global cache was not used
    w = s.weak()
    del s
    assert w.expired()
    st = _private_stats(cache)
    assert st.allocated_bytes == 0 and st.cached_bytes == 5120 and st.reserved_bytes == 5120
    released = ffi.new("size_t *")
    assert lib.tt_caching_allocator_trim(cache, released) == lib.TT_OK
    assert released[0] == 5120
    st = _private_stats(cache)
    assert st.reserved_bytes == 0 and st.num_backing_frees == 1
    assert lib.tt_caching_allocator_destroy(cache) == lib.TT_OK


def test_private_cache_destroy_with_live_block_reports_it(private_cache):
    cache, iface = private_cache
    p = _alloc(iface, 64)
    assert lib.tt_caching_allocator_destroy(cache) == lib.TT_ERR_LIVE_BLOCKS
    host = lib.tt_host_allocator()
    assert host.free(host.ctx, p) == lib.TT_OK  # the leaked block came from the host allocator
    with pytest.raises(RuntimeError, match="destroy"):
        check(lib.TT_ERR_LIVE_BLOCKS, "destroy")


def test_check_maps_statuses_to_exceptions():
    check(lib.TT_OK, "anything")
    for status, exc in [(lib.TT_ERR_NOMEM, MemoryError), (lib.TT_ERR_INVALID_ARG, ValueError),
                        (lib.TT_ERR_UNSUPPORTED_DTYPE, TypeError), (lib.TT_ERR_OVERFLOW, ValueError),
                        (lib.TT_ERR_DOUBLE_FREE, RuntimeError), (lib.TT_ERR_FOREIGN_POINTER, RuntimeError)]:
        with pytest.raises(exc, match=r"^myfn: .* \(detail\)$"):
            check(status, "myfn", "detail")


# ====================================================================== random numbers


@pytest.mark.parametrize(
    "make",
    [lambda: tt.rand(100), lambda: tt.randn(3, 7, dtype=tt.float64), lambda: tt.randint(0, 1000, (50,)),
     lambda: tt.rand(9, dtype=tt.float16), lambda: tt.randint(-5, 5, (20,), dtype=tt.int8)],
)
def test_manual_seed_reproducible(make):
    tt.manual_seed(1234)
    a = make().numpy().copy()
    b = make().numpy().copy()
    tt.manual_seed(1234)
    np.testing.assert_array_equal(make().numpy(), a)
    np.testing.assert_array_equal(make().numpy(), b)
    assert not np.array_equal(a, b) or a.size == 0
    tt.manual_seed(4321)
    assert not np.array_equal(make().numpy(), a)


def test_manual_seed_returns_default_generator():
    g = tt.manual_seed(7)
    assert g is tt.default_generator
    assert tt.initial_seed() == 7
    tt.manual_seed(2**70 + 5)  # taken modulo 2^64
    a = tt.rand(4).numpy().copy()
    tt.manual_seed(5)
    np.testing.assert_array_equal(tt.rand(4).numpy(), a)
    tt.manual_seed(-1)  # -1 is 2^64 - 1 modulo 2^64
    b = tt.rand(4).numpy().copy()
    tt.manual_seed(2**64 - 1)
    np.testing.assert_array_equal(tt.rand(4).numpy(), b)
    tt.manual_seed(np.int64(5))  # any integer type
    np.testing.assert_array_equal(tt.rand(4).numpy(), a)


def test_generators_are_independent():
    tt.manual_seed(99)
    expected = tt.rand(10).numpy().copy()
    g = tt.Generator().manual_seed(99)
    tt.manual_seed(99)
    from_g = tt.rand(10, generator=g).numpy().copy()
    np.testing.assert_array_equal(from_g, expected)  # same seed, same stream
    tt.rand(5, generator=g)  # drawing from g does not advance the default
    np.testing.assert_array_equal(tt.rand(10).numpy(), expected)
    h = tt.Generator().manual_seed(99)
    np.testing.assert_array_equal(tt.rand(10, generator=h).numpy(), expected)
    assert g.get_state() != h.get_state()
    with pytest.raises(TypeError):
        tt.rand(3, generator=np.random.default_rng(0))


def test_fresh_generators_start_from_the_same_default_seed():
    a, b = tt.Generator(), tt.Generator()
    assert a.initial_seed() == b.initial_seed() == torch.Generator().initial_seed()
    assert a.get_state() == b.get_state()


def test_state_round_trip():
    g = tt.Generator().manual_seed(3)
    tt.rand(17, generator=g)
    state = g.get_state()
    assert isinstance(state, bytes) and len(state) == 32
    a = tt.randn(100, generator=g).numpy().copy()
    b = tt.randint(0, 10**6, (50,), generator=g).numpy().copy()
    g.set_state(state)
    np.testing.assert_array_equal(tt.randn(100, generator=g).numpy(), a)
    np.testing.assert_array_equal(tt.randint(0, 10**6, (50,), generator=g).numpy(), b)
    # the default generator through the module functions
    tt.manual_seed(11)
    s = tt.get_rng_state()
    x = tt.rand(8).numpy().copy()
    tt.set_rng_state(s)
    np.testing.assert_array_equal(tt.rand(8).numpy(), x)
    assert g.set_state(bytearray(state)) is g


def test_randn_statistics():
    tt.manual_seed(2024)
    for dtype in (tt.float32, tt.float64):
        x = tt.randn(100_000, dtype=dtype).numpy().astype(np.float64)
        assert abs(x.mean()) < 0.015  # 5 standard errors
        assert abs(x.std() - 1.0) < 0.015
        assert abs(((x - x.mean()) ** 3).mean()) < 0.05  # symmetric
        assert 0.675 < (np.abs(x) < 1).mean() < 0.690  # P(|Z| < 1) = 0.6827
        assert np.isfinite(x).all()
    odd = tt.randn(3, 5)  # an odd count: Box-Muller's second value is dropped cleanly
    assert np.isfinite(odd.numpy()).all() and odd.shape == (3, 5)


def test_rand_statistics():
    tt.manual_seed(5)
    x = tt.rand(100_000, dtype=tt.float64).numpy()
    assert abs(x.mean() - 0.5) < 0.005
    assert abs(x.var() - 1 / 12) < 0.003
    counts, _ = np.histogram(x, bins=10, range=(0.0, 1.0))
    assert counts.min() > 9_500 and counts.max() < 10_500


@pytest.mark.parametrize("dtype", [tt.float16, tt.float32, tt.float64], ids=lambda d: d.name)
def test_rand_in_unit_interval(dtype):
    tt.manual_seed(0)
    x = tt.rand(100_000, dtype=dtype)
    assert x.dtype is dtype
    a = x.numpy()
    assert a.min() >= 0.0
    assert a.max() < 1.0, f"rand({dtype.name}) produced {int((a >= 1.0).sum())} values equal to 1.0"


@pytest.mark.parametrize("dtype", [tt.float16, tt.float32, tt.float64], ids=lambda d: d.name)
def test_rand_never_reaches_one_even_from_the_top_draw(dtype):
    # xoshiro256++ outputs rotl(s0 + s3, 23) + s0: with s0 = 0 and s3 = 2^64 - 1 the next draw is
    # 2^64 - 1, the largest possible, so the unit value is 1 - 2^-53. Rounded to float32 or float16
    # that is 1.0, which rand must step back below 1.
    g = tt.Generator()
    g.set_state(struct.pack("=4Q", 0, 1, 2, 2**64 - 1))
    value = tt.rand(1, generator=g, dtype=dtype).item()
    assert 0.0 <= value < 1.0, f"rand({dtype.name}) returned {value!r}"


def test_randint_covers_range_and_stays_in_it():
    tt.manual_seed(17)
    for dtype in (tt.int64, tt.int8, tt.uint8, tt.int16, tt.int32, tt.float32):
        low, high = (3, 10) if dtype is tt.uint8 else (-3, 4)
        x = tt.randint(low, high, (20_000,), dtype=dtype)
        assert x.dtype is dtype
        a = x.numpy()
        want = set(range(low, high))
        assert set(np.unique(a).tolist()) == want
        counts = np.unique(a, return_counts=True)[1]
        assert counts.min() > 20_000 / 7 * 0.9 and counts.max() < 20_000 / 7 * 1.1
    one = tt.randint(5, 6, (100,)).numpy()
    assert (one == 5).all()
    full_uint8 = tt.randint(0, 256, (20_000,), dtype=tt.uint8).numpy()
    assert full_uint8.min() == 0 and full_uint8.max() == 255
    full_int8 = tt.randint(-128, 128, (20_000,), dtype=tt.int8).numpy()
    assert full_int8.min() == -128 and full_int8.max() == 127
    b = tt.randint(0, 2, (1000,), dtype=tt.bool).numpy()
    assert b.dtype == np.bool_ and b.any() and not b.all()
    wide = tt.randint(-(2**62), 2**62, (1000,)).numpy()
    assert wide.min() >= -(2**62) and wide.max() < 2**62 and wide.std() > 2**60


def test_randint_signatures_match_torch():
    assert tt.randint(10, (3, 4)).shape == tuple(torch.randint(10, (3, 4)).shape)
    assert tt.randint(2, 10, (5,)).shape == (5,)
    assert tt.randint(2, 10, size=(2, 2)).shape == (2, 2)
    assert tt.randint(10, (3,)).dtype is tt.int64


def test_random_bad_arguments():
    with pytest.raises(TypeError, match="rand"):
        tt.rand(3, dtype=tt.int32)
    with pytest.raises(TypeError, match="randn"):
        tt.randn(3, dtype=tt.bool)
    with pytest.raises(RuntimeError, match="randint"):
        tt.randint(5, 5, (3,))
    with pytest.raises(RuntimeError, match="randint"):
        tt.randint(5, 2, (3,))
    with pytest.raises(RuntimeError, match="randint"):
        tt.randint(0, 300, (3,), dtype=tt.uint8)
    with pytest.raises(RuntimeError, match="randint"):
        tt.randint(-1, 10, (3,), dtype=tt.uint8)
    with pytest.raises(RuntimeError, match="randint"):
        tt.randint(0, 129, (3,), dtype=tt.int8)
    with pytest.raises(TypeError, match="manual_seed"):
        tt.manual_seed("x")
    with pytest.raises(TypeError, match="manual_seed"):
        tt.manual_seed(1.5)
    with pytest.raises(ValueError, match="set_state"):
        tt.default_generator.set_state(b"short")
    with pytest.raises(ValueError, match="set_state"):
        tt.set_rng_state(b"\0" * 33)
    with pytest.raises(ValueError, match="set_state"):
        tt.default_generator.set_state("x" * 32)
    # torch rejects the same
    with pytest.raises(RuntimeError):
        torch.rand(3, dtype=torch.int32)
    with pytest.raises(RuntimeError):
        torch.randint(5, 5, (3,))


def test_random_empty_and_shapes():
    for fn in (tt.rand, tt.randn):
        assert fn(0).shape == (0,)
        assert fn(2, 0, 3).numel() == 0
        assert fn((2, 3)).shape == (2, 3)
    assert tt.randint(0, 5, (0,)).shape == (0,)
    assert tt.rand(()).shape == () and 0.0 <= tt.rand(()).item() < 1.0


def test_seed_from_clock_changes_stream():
    s1 = tt.seed()
    a = tt.rand(4).numpy().copy()
    assert tt.initial_seed() == s1
    tt.manual_seed(s1)
    np.testing.assert_array_equal(tt.rand(4).numpy(), a)
    assert 0 <= s1 < 2**64


@pytest.mark.parametrize("bad", [5, None, "x", ffi.NULL, ffi.new("int *"), ffi.new("tt_storage *")])
def test_storage_constructors_refuse_anything_but_a_storage_pointer(bad):
    # an int cast to a pointer would be dereferenced by C: a crash, not an exception; a zeroed
    # struct from cffi (it knows the size: Python reads the data address as a field) holds no
    # reference that the new owner could later release
    for cls in (tt.Storage, tt.WeakStorage):
        with pytest.raises(TypeError, match=cls.__name__):
            cls(bad)


def test_generator_refuses_the_all_zero_state():
    # xoshiro never leaves the zero state: every draw would be 0 and randint would loop forever
    g = tt.Generator()
    with pytest.raises(ValueError, match="set_state"):
        g.set_state(bytes(32))
    assert tt.randint(0, 3, (50,), generator=g).numpy().max() > 0
