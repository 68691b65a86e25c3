/*
 * storage_impl.h: the layout of tt_storage (StorageImpl). Private to storage.c, with one
 * exception: the Python extension reads `data_address` as a struct field (cffi, declared in
 * t_tensor/_build/ffi_build.py), because a field read costs a quarter of a call through cffi
 * (tt_storage_data_address), and every new tensor reads it once.
 *
 * Why the plain read is safe: data_address is written before the storage is published (its
 * creator returns the pointer) and cleared only by release_storage, after the last strong
 * reference is gone. A reader holding a strong reference therefore always sees the value written
 * at creation; no other thread writes it meanwhile. Everything else here is storage.c's alone
 * (see its Note [Refcount invariants]). cffi now knows the struct's size, so `ffi.new("tt_storage *")`
 * makes a zeroed one; t_tensor's Storage and WeakStorage constructors refuse a storage that holds
 * no reference of their kind (storage.py, _checked_pointer).
 */
#ifndef TT_STORAGE_IMPL_H
#define TT_STORAGE_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

#include "tt/tt.h"

struct tt_storage {
    atomic_int_fast64_t use_count;
    atomic_int_fast64_t weak_count;
    /* Bumped by every in-place write (autograd's check that a tensor saved for backward was not
       modified). Relaxed: it orders nothing; a reader on another thread racing a writer gets
       either value, which is all autograd needs (the two would race on the data anyway). */
    atomic_int_fast64_t version;
    uintptr_t data_address;          /* the data's address as an integer; 0 once released */
    size_t nbytes;
    /* Exactly one of these two ways to free the data is used. */
    const tt_allocator *allocator;   /* borrowed; NULL for external memory */
    tt_deleter deleter;              /* external memory only; may be NULL */
    void *deleter_ctx;
};

#endif
