/*
 * storage.c: StorageImpl, an intrusively reference-counted byte buffer.
 *
 * Note [Refcount invariants]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A tt_storage carries two atomic counters, in the object itself ("intrusive"):
 *
 *   use_count   the number of strong references. The DATA lives while use_count > 0.
 *   weak_count  the number of weak references, PLUS ONE while use_count > 0. The OBJECT
 *               (this struct) lives while weak_count > 0.
 *
 * Invariants:
 *   (1) use_count > 0  implies  weak_count > 0. All strong references together own the one
 *       extra weak reference, so the object can never be freed under a strong holder.
 *   (2) Once use_count reaches 0 it never rises again. weak_lock only increments a count it has
 *       seen above zero (a compare-and-swap loop), so a storage whose data was released cannot
 *       be resurrected.
 *   (3) The data is released exactly once (by the thread whose decrement took use_count from 1
 *       to 0), and the object is freed exactly once (by the thread whose decrement took
 *       weak_count from 1 to 0).
 *
 * release_storage: when the last strong reference goes, the data is freed at once through its
 * allocator (or external deleter), while weak holders keep the object alive: they can still ask
 * for use_count() (it is 0) and weak_lock() (it fails), but never reach the data.
 *
 * Memory orders (why each atomic uses the order it does):
 *   - Increments are relaxed. A thread may only retain a storage it already holds a reference
 *     to, so the object is alive and no other memory needs to be ordered by the increment; the
 *     later decrement provides the ordering.
 *   - Decrements are acq_rel. "release": everything this thread did with the data (writes into
 *     the buffer) happens-before the decrement. "acquire": the thread that sees the count hit
 *     zero synchronizes with all earlier decrements, so it frees the data (or the object) only
 *     after every other holder's accesses are complete.
 *   - weak_lock's successful compare-and-swap is acquire: the new strong holder must see the
 *     data as the previous strong holders left it (their decrements were releases).
 *   - A new object's counters are initialized with plain stores (atomic_init): no other thread
 *     can see the object before the creating thread publishes its pointer.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "tt/tt.h"
#include "storage_impl.h"

/* How many storage objects exist; lets tests prove that nothing leaks. */
static atomic_int_fast64_t live_objects = 0;

static tt_status storage_create(tt_storage **out) {
    tt_storage *storage = malloc(sizeof(*storage));
    if (storage == NULL) {
        return TT_ERR_NOMEM;
    }
    atomic_init(&storage->use_count, 1);
    atomic_init(&storage->weak_count, 1); /* the extra weak reference owned by the strong ones */
    atomic_init(&storage->version, 0);
    storage->data_address = 0;
    storage->nbytes = 0;
    storage->allocator = NULL;
    storage->deleter = NULL;
    storage->deleter_ctx = NULL;
    /* relaxed: a statistic, it orders nothing */
    atomic_fetch_add_explicit(&live_objects, 1, memory_order_relaxed);
    *out = storage;
    return TT_OK;
}

tt_status tt_storage_new(const tt_allocator *allocator, size_t nbytes, tt_storage **out) {
    if (allocator == NULL || out == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    *out = NULL;
    void *data = NULL;
    tt_status status = allocator->alloc(allocator->ctx, nbytes, &data);
    if (status != TT_OK) {
        return status;
    }
    tt_storage *storage = NULL;
    status = storage_create(&storage);
    if (status != TT_OK) {
        allocator->free(allocator->ctx, data);
        return status;
    }
    storage->data_address = (uintptr_t)data;
    storage->nbytes = nbytes;
    storage->allocator = allocator;
    *out = storage;
    return TT_OK;
}

tt_storage *tt_storage_new_default(size_t nbytes) {
    tt_storage *storage = NULL;
    return tt_storage_new(tt_default_allocator(), nbytes, &storage) == TT_OK ? storage : NULL;
}

tt_status tt_storage_new_external(void *data, size_t nbytes, tt_deleter deleter, void *ctx,
                                  tt_storage **out) {
    if (out == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    *out = NULL;
    tt_storage *storage = NULL;
    tt_status status = storage_create(&storage);
    if (status != TT_OK) {
        return status;
    }
    storage->data_address = (uintptr_t)data;
    storage->nbytes = nbytes;
    storage->deleter = deleter;
    storage->deleter_ctx = ctx;
    *out = storage;
    return TT_OK;
}

/* Frees the data; runs once, in the thread that dropped the last strong reference. */
static void release_storage(tt_storage *storage) {
    void *data = (void *)storage->data_address;
    storage->data_address = 0;
    storage->nbytes = 0;
    if (storage->allocator != NULL) {
        /* A caching allocator would report a double free here; it cannot happen, because
           this function runs once per storage (invariant 3). */
        storage->allocator->free(storage->allocator->ctx, data);
    } else if (storage->deleter != NULL) {
        storage->deleter(storage->deleter_ctx, data);
    }
}

void tt_storage_retain(tt_storage *storage) {
    /* relaxed: the caller already holds a strong reference (see the Note) */
    atomic_fetch_add_explicit(&storage->use_count, 1, memory_order_relaxed);
}

void tt_storage_release(tt_storage *storage) {
    /* acq_rel: publish our uses of the data, and see everyone's before freeing it */
    if (atomic_fetch_sub_explicit(&storage->use_count, 1, memory_order_acq_rel) == 1) {
        release_storage(storage);
        /* The strong references collectively owned one weak reference; give it back. */
        tt_storage_weak_release(storage);
    }
}

void tt_storage_weak_retain(tt_storage *storage) {
    /* relaxed: the caller holds a strong or weak reference, so the object is alive */
    atomic_fetch_add_explicit(&storage->weak_count, 1, memory_order_relaxed);
}

void tt_storage_weak_release(tt_storage *storage) {
    /* acq_rel: the thread that frees the object must see every other holder's last access */
    if (atomic_fetch_sub_explicit(&storage->weak_count, 1, memory_order_acq_rel) == 1) {
        free(storage);
        atomic_fetch_sub_explicit(&live_objects, 1, memory_order_relaxed);
    }
}

int tt_storage_weak_lock(tt_storage *storage) {
    /* relaxed load: only a starting guess for the compare-and-swap below */
    int_fast64_t count = atomic_load_explicit(&storage->use_count, memory_order_relaxed);
    while (count > 0) {
        /* Increment only from a value we saw above zero, so zero stays final (invariant 2).
           On failure `count` is reloaded and we retry; relaxed suffices for the reload. */
        if (atomic_compare_exchange_weak_explicit(&storage->use_count, &count, count + 1,
                                                  memory_order_acquire, memory_order_relaxed)) {
            return 1;
        }
    }
    return 0;
}

int64_t tt_storage_use_count(const tt_storage *storage) {
    /* acquire: pairs with the release half of the decrements. A count of 0 says the data is
       being released or is gone, NOT that release_storage has finished: another thread may
       still be inside it. Never use the data on the strength of this count alone. */
    return (int64_t)atomic_load_explicit(&((tt_storage *)storage)->use_count, memory_order_acquire);
}

int64_t tt_storage_weak_count(const tt_storage *storage) {
    return (int64_t)atomic_load_explicit(&((tt_storage *)storage)->weak_count, memory_order_acquire);
}

void *tt_storage_data(const tt_storage *storage) { return (void *)storage->data_address; }

uintptr_t tt_storage_data_address(const tt_storage *storage) { return storage->data_address; }

size_t tt_storage_nbytes(const tt_storage *storage) { return storage->nbytes; }

const char *tt_storage_allocator_name(const tt_storage *storage) {
    return storage->allocator != NULL ? storage->allocator->name : "external";
}

int64_t tt_storage_live_objects(void) {
    return (int64_t)atomic_load_explicit(&live_objects, memory_order_relaxed);
}

int64_t tt_storage_version(const tt_storage *storage) {
    return (int64_t)atomic_load_explicit(&((tt_storage *)storage)->version, memory_order_relaxed);
}

int64_t tt_storage_bump_version(tt_storage *storage) {
    return (int64_t)atomic_fetch_add_explicit(&storage->version, 1, memory_order_relaxed) + 1;
}
