"""Memory statistics and control of the caching allocator that tensors draw from.

Freed tensor memory is not returned to the system: the caching allocator keeps the block and
hands it out again for the next tensor of that size class, which saves page faults and system
calls. These functions show what it holds and let you give memory back.

>>> import t_tensor as tt
>>> tt.reset_peak_memory_stats()
>>> before = tt.memory_allocated()
>>> x = tt.empty(1000)                 # 4000 bytes, rounded up to the 4096-byte size class
>>> tt.memory_allocated() - before
4096
>>> del x
>>> tt.memory_allocated() - before     # freed, but still cached (reserved) for reuse
0
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from t_tensor._capi import check, ffi, lib

__all__ = [
    "memory_stats",
    "reset_peak_memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "empty_cache",
    "pinned_memory",
    "unpin_all",
    "live_storages",
]

_CACHE = lib.tt_global_caching_allocator()

# tt_allocator_stats field -> key in memory_stats(), named like torch.cuda.memory_stats().
_STAT_KEYS = {
    "allocated_bytes": "allocated_bytes.current",
    "allocated_bytes_peak": "allocated_bytes.peak",
    "requested_bytes": "requested_bytes.current",
    "reserved_bytes": "reserved_bytes.current",
    "reserved_bytes_peak": "reserved_bytes.peak",
    "active_blocks": "active_blocks.current",
    "cached_blocks": "cached_blocks.current",
    "cached_bytes": "cached_bytes.current",
    "num_allocs": "num_allocs",
    "num_frees": "num_frees",
    "cache_hits": "cache_hits",
    "cache_misses": "cache_misses",
    "num_backing_allocs": "num_system_allocs",
    "num_backing_frees": "num_system_frees",
    "num_invalid_frees": "num_invalid_frees",
    "pinned_blocks": "pinned_blocks.current",
}


def memory_stats() -> dict[str, int]:
    """A snapshot of the caching allocator's counters, keyed like ``torch.cuda.memory_stats``.

    ``allocated_bytes`` are bytes in live blocks (rounded to size classes), ``reserved_bytes``
    all bytes held from the system (live plus cached), and hits/misses say how often a request
    was served from the cache.

    >>> import t_tensor as tt
    >>> stats = tt.memory_stats()
    >>> stats["reserved_bytes.current"] >= stats["allocated_bytes.current"]
    True
    """
    raw = ffi.new("tt_allocator_stats *")
    lib.tt_caching_allocator_get_stats(_CACHE, raw)
    return {key: int(getattr(raw, field)) for field, key in _STAT_KEYS.items()}


def reset_peak_memory_stats() -> None:
    """Set the peak counters to the current values."""
    lib.tt_caching_allocator_reset_peak_stats(_CACHE)


def memory_allocated() -> int:
    """Bytes in live tensor blocks."""
    return memory_stats()["allocated_bytes.current"]


def max_memory_allocated() -> int:
    """Peak of :func:`memory_allocated` since start or the last reset."""
    return memory_stats()["allocated_bytes.peak"]


def memory_reserved() -> int:
    """Bytes held from the system: live blocks plus the cache."""
    return memory_stats()["reserved_bytes.current"]


def max_memory_reserved() -> int:
    """Peak of :func:`memory_reserved` since start or the last reset."""
    return memory_stats()["reserved_bytes.peak"]


def empty_cache() -> int:
    """Return every cached, unpinned block to the system; gives the number of bytes released.

    >>> import t_tensor as tt
    >>> x = tt.empty(10_000); del x
    >>> tt.empty_cache() >= 40_000
    True
    """
    released = ffi.new("size_t *")
    check(lib.tt_caching_allocator_trim(_CACHE, released), "empty_cache")
    return int(released[0])


@contextmanager
def pinned_memory() -> Iterator[None]:
    """Within this block, new cache blocks are pinned: :func:`empty_cache` keeps them.

    Use it to keep memory that will be needed again warm (a planned arena, a training loop's
    buffers) through calls to ``empty_cache``. :func:`unpin_all` releases the pins.

    >>> import t_tensor as tt
    >>> with tt.pinned_memory():
    ...     x = tt.empty(123_457)
    >>> del x
    >>> _ = tt.empty_cache()
    >>> tt.memory_stats()["pinned_blocks.current"] >= 1
    True
    >>> tt.unpin_all()
    """
    previous = lib.tt_caching_allocator_is_pinned(_CACHE)
    lib.tt_caching_allocator_set_pinned(_CACHE, 1)
    try:
        yield
    finally:
        lib.tt_caching_allocator_set_pinned(_CACHE, previous)


def unpin_all() -> None:
    """Clear the pin on every block, so that the next :func:`empty_cache` may release them."""
    lib.tt_caching_allocator_unpin_all(_CACHE)


def live_storages() -> int:
    """How many C storage objects exist right now (a leak check for tests and learners)."""
    return int(lib.tt_storage_live_objects())
