"""Storage: the Python owner of one strong reference to a C ``tt_storage``.

A storage is a reference-counted block of bytes (no dtype, no shape). Tensors are views onto
storages: every tensor holds its own :class:`Storage` object, and each :class:`Storage` object
holds exactly one strong reference, which it releases when Python collects it. So
``use_count()`` counts the tensors (and other holders, such as DLPack exports) that keep the
bytes alive, and you can watch it change as views come and go.

A :class:`WeakStorage` holds a weak reference: it keeps the C object (and its counts) alive but
not the data. ``lock()`` gives a new :class:`Storage` while the data lives, and ``None`` once the
last strong reference went (the data was released at that moment; zero is final).

>>> s = Storage.allocate(16)
>>> s.use_count(), s.weak_count()
(1, 1)
>>> w = s.weak()
>>> s.weak_count()           # the weak handle, plus one held by all strong refs together
2
>>> del s
>>> w.expired(), w.lock()
(True, None)
"""

from __future__ import annotations

from t_tensor._capi import check, ffi, lib

__all__ = ["Storage", "WeakStorage", "default_allocator"]


def default_allocator():
    """The C allocator tensors use (borrowed, static): the process-wide caching allocator, or the
    plain host allocator when the environment variable ``TT_ALLOCATOR=host`` was set at start-up
    (a debugging switch: every storage is then its own ``posix_memalign`` block, so AddressSanitizer
    and valgrind see each overrun and use after free instead of a reused cache block)."""
    return _DEFAULT_ALLOCATOR


_DEFAULT_ALLOCATOR = lib.tt_default_allocator()  # reads TT_ALLOCATOR once, in C
_MAX_NBYTES = 2**63 - 1
_STORAGE_POINTER = ffi.typeof("tt_storage *")


_new = object.__new__
_RETAIN = lib.tt_storage_retain
_RELEASE = lib.tt_storage_release


def adopt(ptr) -> Storage:
    """Wrap a fresh, non-NULL ``tt_storage *`` returned by C (a plain pointer carrying one new
    strong reference, e.g. from ``tt_storage_new_default`` or the dispatch.h fast paths): the
    per-op path, no checks, no cast."""
    self = _new(Storage)
    self._data = ptr.data_address  # a field read, not a call (csrc/src/storage_impl.h)
    self._ptr = ptr
    return self


def _checked_pointer(ptr, cls: str, count=lib.tt_storage_use_count):
    """The constructors take a C pointer handed over by this library; anything else (an int, a
    NULL) would be dereferenced by C, so it is refused here. So is a storage with no reference of
    the kind the new owner takes (`count`: the strong count for Storage, the weak one for
    WeakStorage): cffi can allocate a zeroed ``tt_storage`` (``ffi.new``; it knows the struct's size,
    see csrc/src/storage_impl.h), and owning it would release what was never retained."""
    if not isinstance(ptr, ffi.CData) or ffi.typeof(ptr) is not _STORAGE_POINTER or ptr == ffi.NULL or count(ptr) <= 0:
        raise TypeError(f"{cls}: construct it with Storage.allocate(), tensor.untyped_storage() or storage.weak()")
    return ffi.cast("tt_storage *", ptr)


class Storage:
    """Owns one strong reference to a C storage. Construct with the class methods, not directly."""

    # _ptr: a plain (non-owning) cdata pointer; this object owns one strong reference to it and
    # releases it in __del__, exactly once. Several Storage objects (one per tensor) may hold the
    # same cdata object: each owns its own reference. _data: the data address as an int, read once.
    #
    # Why __del__ and not ffi.gc: ffi.gc makes a second, owning cdata object per storage and
    # calls back through it at collection, which costs more than a slotted __del__ on the per-op
    # path. The semantics are the same: CPython runs __del__ when the last reference goes (at the
    # `del`, as the use_count tests check), exactly once (PEP 442), also for objects in cycles.
    # A copy of the object would release twice, so copying makes a new owner (share()) and
    # pickling is refused.
    __slots__ = ("_ptr", "_data", "__weakref__")

    def __init__(self, owned_ptr, data: int | None = None) -> None:
        # Steals the strong reference `owned_ptr` carries. The cast makes a plain pointer: the
        # argument may be an ffi.gc object (a WeakStorage's), which must not be kept alive.
        ptr = _checked_pointer(owned_ptr, "Storage")
        self._data = ptr.data_address if data is None else data
        self._ptr = ptr  # set last: __del__ releases only a fully built owner

    def __del__(self, _release=_RELEASE) -> None:
        # t_tensor/_cfast.py replaces this by the same steps in C when the package is imported
        # (csrc/python/fast_ops.c: a Python frame and a cffi call per tensor cost more than the
        # rest of freeing it); this one serves a Storage freed before that. The default argument
        # keeps the C function reachable during interpreter shutdown, when module globals may
        # already be cleared.
        try:
            ptr = self._ptr
        except AttributeError:  # __init__ failed before taking ownership: nothing to release
            return
        _release(ptr)

    def __copy__(self) -> Storage:
        return self.share()

    def __reduce_ex__(self, protocol):
        raise TypeError("Storage: cannot be pickled or deep-copied (it owns C memory); copy the tensor instead")

    @classmethod
    def allocate(cls, nbytes: int, allocator=None, *, fn: str = "Storage.allocate") -> Storage:
        """A new storage of ``nbytes`` uninitialized bytes from ``allocator`` (default: :func:`default_allocator`).

        ``fn`` names the caller in error messages (``empty: out of memory ...``).

        >>> Storage.allocate(100).nbytes
        100
        """
        if nbytes < 0:
            raise ValueError(f"{fn}: nbytes must be non-negative, got {nbytes}")
        if nbytes > _MAX_NBYTES:  # beyond what size_t and any allocator can hold
            raise MemoryError(f"{fn}: cannot allocate {nbytes} bytes")
        out = ffi.new("tt_storage **")
        status = lib.tt_storage_new(allocator or _DEFAULT_ALLOCATOR, nbytes, out)
        check(status, fn, f"{nbytes} bytes")
        return cls(out[0])

    @classmethod
    def _allocate_default(cls, nbytes: int, fn: str) -> Storage:
        """The per-op fast path: default allocator, one C call, no out-parameter, no cast.

        Callers guarantee ``0 <= nbytes``; a fresh pointer is not an ffi.gc object, so it can be
        wrapped directly.
        """
        if nbytes > _MAX_NBYTES:
            raise MemoryError(f"{fn}: cannot allocate {nbytes} bytes")
        ptr = lib.tt_storage_new_default(nbytes)
        if not ptr:
            raise MemoryError(f"{fn}: out of memory ({nbytes} bytes)")
        return adopt(ptr)

    def share(self) -> Storage:
        """Another owner of the same bytes: a new strong reference (use_count grows by one)."""
        ptr = self._ptr
        _RETAIN(ptr)
        other = _new(Storage)
        other._data = self._data
        other._ptr = ptr
        return other

    def use_count(self) -> int:
        """Strong references: how many owners keep the data alive."""
        return lib.tt_storage_use_count(self._ptr)

    def weak_count(self) -> int:
        """Weak references, plus one held collectively by the strong references."""
        return lib.tt_storage_weak_count(self._ptr)

    def weak(self) -> WeakStorage:
        """A weak handle that does not keep the data alive."""
        lib.tt_storage_weak_retain(self._ptr)
        return WeakStorage(self._ptr)

    def data_ptr(self) -> int:
        """Address of the first byte (0 for an empty host buffer)."""
        return self._data

    @property
    def nbytes(self) -> int:
        return lib.tt_storage_nbytes(self._ptr)

    @property
    def allocator(self) -> str:
        """Name of the allocator that owns the bytes: 'caching', 'host' or 'external'."""
        return ffi.string(lib.tt_storage_allocator_name(self._ptr)).decode()

    def __len__(self) -> int:
        return self.nbytes

    def __repr__(self) -> str:
        return (
            f"Storage(nbytes={self.nbytes}, data_ptr=0x{self._data:x}, allocator='{self.allocator}', "
            f"use_count={self.use_count()}, weak_count={self.weak_count()})"
        )


class WeakStorage:
    """A weak reference to a C storage. Get one with :meth:`Storage.weak`."""

    __slots__ = ("_ptr",)

    def __init__(self, owned_weak_ptr) -> None:
        # Steals one weak reference; released when this handle is collected. (See Storage on the cast.)
        self._ptr = ffi.gc(_checked_pointer(owned_weak_ptr, "WeakStorage", lib.tt_storage_weak_count),
                           lib.tt_storage_weak_release)

    def lock(self) -> Storage | None:
        """A new strong owner while the data lives, else ``None`` (and ``None`` forever after)."""
        if lib.tt_storage_weak_lock(self._ptr):
            return Storage(self._ptr)
        return None

    def expired(self) -> bool:
        """True once the last strong reference went and the data was released."""
        return lib.tt_storage_use_count(self._ptr) == 0

    def use_count(self) -> int:
        return lib.tt_storage_use_count(self._ptr)

    def weak_count(self) -> int:
        return lib.tt_storage_weak_count(self._ptr)

    def __repr__(self) -> str:
        state = "expired" if self.expired() else "alive"
        return f"WeakStorage({state}, use_count={self.use_count()}, weak_count={self.weak_count()})"
