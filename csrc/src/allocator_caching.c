/*
 * allocator_caching.c: a caching block allocator, the default for tensors.
 *
 * Asking the system for memory is slow (a page fault per fresh page, a system call for large
 * blocks), and tensor programs allocate the same sizes over and over. So a freed block is not
 * returned: it is kept on a free list and handed out again to the next request of its size.
 *
 * Design
 *   - Small requests (<= 1 MiB) are rounded up to a size class: four classes per power of two
 *     (64, 80, 96, 112, 128, 160, ...), so a block wastes at most a quarter of its size. Each
 *     class has its own free list (a stack: the most recently freed block is the warmest in
 *     cache).
 *   - Large requests are rounded up to a multiple of 64 KiB and cached in one list sorted by
 *     size. A request takes the smallest cached block that fits, unless that block is more than
 *     1/8 larger than needed (then it would waste too much and we ask the system instead).
 *   - Every block the cache owns, live or free, has a record in a hash table keyed by address.
 *     The records live outside the blocks, so a program that writes past its buffer cannot
 *     corrupt them, and free() can tell a double free (the record says "cached") from a
 *     foreign pointer (no record) and return an error instead of corrupting the lists.
 *   - trim() returns every cached, unpinned block to the backing allocator. In pinned (frozen)
 *     mode new blocks are marked pinned and trim keeps them (e.g. a planned arena that must stay
 *     warm).
 *   - One mutex guards everything. Allocation is not the place for lock-free cleverness: the
 *     critical sections are a few pointer moves long.
 *   - When the backing allocator fails, the cache trims itself and tries once more, the same
 *     retry PyTorch's caching allocator makes.
 *
 * Limitation: after a block was freed AND handed out again, a second free of the old pointer
 * frees the new owner's block; no allocator can tell those apart without per-owner tokens.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tt/tt.h"

enum {
    SMALL_LIMIT = 1 << 20,          /* requests up to 1 MiB use size classes */
    MIN_BLOCK = 64,                 /* the smallest class; also the alignment */
    LARGE_ROUNDING = 64 << 10,      /* large requests are multiples of 64 KiB */
    NUM_CLASSES = 1 + 4 * 14,       /* 64, then 4 classes in each (2^p, 2^(p+1)], p = 6..19 */
    INITIAL_BUCKETS = 256,
};

typedef enum block_state { BLOCK_LIVE, BLOCK_CACHED } block_state;

typedef struct block {
    void *ptr;
    size_t size;                /* rounded size: what the block really holds */
    size_t requested;           /* what the caller asked for (live blocks only) */
    int size_class;             /* index into the free lists, -1 for a large block */
    block_state state;
    int pinned;
    struct block *next_free;    /* free list (small) or sorted large list */
    struct block *next_in_bucket;
} block;

struct tt_caching_allocator {
    tt_allocator interface;     /* what storages call; ctx points back here */
    const tt_allocator *backing;
    pthread_mutex_t mutex;
    int pinned_mode;
    block *free_lists[NUM_CLASSES];
    block *large_free;          /* sorted by size, smallest first */
    block **buckets;            /* address -> record */
    size_t num_buckets;
    size_t num_records;
    tt_allocator_stats stats;
};

/* ------------------------------------------------------------------ size classes */

static int highest_bit(size_t value) {
    int bit = -1;
    while (value != 0) {
        value >>= 1;
        bit++;
    }
    return bit;
}

/* Rounds a small request to its class and returns the class index in *size_class. */
static size_t round_small(size_t nbytes, int *size_class) {
    if (nbytes <= MIN_BLOCK) {
        *size_class = 0;
        return MIN_BLOCK;
    }
    /* 2^p < nbytes <= 2^(p+1); the four classes in that range are 2^p + k * 2^(p-2), k=1..4 */
    int p = highest_bit(nbytes - 1);
    size_t base = (size_t)1 << p;
    size_t step = base >> 2;
    size_t k = (nbytes - base + step - 1) / step;
    *size_class = 1 + (p - 6) * 4 + (int)(k - 1);
    return base + k * step;
}

static size_t round_large(size_t nbytes) {
    return (nbytes + LARGE_ROUNDING - 1) / LARGE_ROUNDING * LARGE_ROUNDING;
}

/* ------------------------------------------------------------------ the record table */

static size_t bucket_of(const tt_caching_allocator *cache, const void *ptr) {
    /* Blocks are 64-byte aligned, so the low 6 bits carry no information. */
    uintptr_t key = (uintptr_t)ptr >> 6;
    key ^= key >> 17;
    key *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(key >> 7) & (cache->num_buckets - 1);
}

static block *find_record(const tt_caching_allocator *cache, const void *ptr) {
    for (block *b = cache->buckets[bucket_of(cache, ptr)]; b != NULL; b = b->next_in_bucket) {
        if (b->ptr == ptr) {
            return b;
        }
    }
    return NULL;
}

/* Doubles the table when it is full enough that chains grow; failure just keeps the old one. */
static void maybe_grow_table(tt_caching_allocator *cache) {
    if (cache->num_records < cache->num_buckets) {
        return;
    }
    size_t old_count = cache->num_buckets;
    block **old = cache->buckets;
    block **fresh = calloc(old_count * 2, sizeof(block *));
    if (fresh == NULL) {
        return;
    }
    cache->buckets = fresh;
    cache->num_buckets = old_count * 2;
    for (size_t i = 0; i < old_count; i++) {
        block *b = old[i];
        while (b != NULL) {
            block *next = b->next_in_bucket;
            size_t index = bucket_of(cache, b->ptr);
            b->next_in_bucket = fresh[index];
            fresh[index] = b;
            b = next;
        }
    }
    free(old);
}

static void insert_record(tt_caching_allocator *cache, block *b) {
    maybe_grow_table(cache);
    size_t index = bucket_of(cache, b->ptr);
    b->next_in_bucket = cache->buckets[index];
    cache->buckets[index] = b;
    cache->num_records++;
}

static void remove_record(tt_caching_allocator *cache, block *target) {
    block **link = &cache->buckets[bucket_of(cache, target->ptr)];
    while (*link != NULL) {
        if (*link == target) {
            *link = target->next_in_bucket;
            cache->num_records--;
            return;
        }
        link = &(*link)->next_in_bucket;
    }
}

/* ------------------------------------------------------------------ free lists */

static void push_cached(tt_caching_allocator *cache, block *b) {
    b->state = BLOCK_CACHED;
    if (b->size_class >= 0) {
        b->next_free = cache->free_lists[b->size_class];
        cache->free_lists[b->size_class] = b;
    } else {
        block **link = &cache->large_free;
        while (*link != NULL && (*link)->size < b->size) {
            link = &(*link)->next_free;
        }
        b->next_free = *link;
        *link = b;
    }
    cache->stats.cached_blocks++;
    cache->stats.cached_bytes += (int64_t)b->size;
}

/* Takes a cached block that can serve `size` bytes off its list, or returns NULL. */
static block *pop_cached(tt_caching_allocator *cache, size_t size, int size_class) {
    block *b = NULL;
    if (size_class >= 0) {
        b = cache->free_lists[size_class];
        if (b != NULL) {
            cache->free_lists[size_class] = b->next_free;
        }
    } else {
        block **link = &cache->large_free;
        while (*link != NULL && (*link)->size < size) {
            link = &(*link)->next_free;
        }
        /* Best fit, as the list is sorted; refuse it when it wastes more than 1/8. */
        if (*link != NULL && (*link)->size - size <= size / 8) {
            b = *link;
            *link = b->next_free;
        }
    }
    if (b != NULL) {
        b->next_free = NULL;
        cache->stats.cached_blocks--;
        cache->stats.cached_bytes -= (int64_t)b->size;
    }
    return b;
}

/* Returns one cached block (already off its list) to the backing allocator. */
static void release_block(tt_caching_allocator *cache, block *b) {
    remove_record(cache, b);
    cache->backing->free(cache->backing->ctx, b->ptr);
    cache->stats.reserved_bytes -= (int64_t)b->size;
    cache->stats.num_backing_frees++;
    if (b->pinned) {
        cache->stats.pinned_blocks--;
    }
    free(b);
}

/* Releases cached blocks; keeps pinned ones unless include_pinned. Caller holds the mutex. */
static size_t trim_locked(tt_caching_allocator *cache, int include_pinned) {
    size_t released = 0;
    for (int c = -1; c < NUM_CLASSES; c++) {
        block **link = c < 0 ? &cache->large_free : &cache->free_lists[c];
        while (*link != NULL) {
            block *b = *link;
            if (b->pinned && !include_pinned) {
                link = &b->next_free;
                continue;
            }
            *link = b->next_free;
            cache->stats.cached_blocks--;
            cache->stats.cached_bytes -= (int64_t)b->size;
            released += b->size;
            release_block(cache, b);
        }
    }
    return released;
}

/* ------------------------------------------------------------------ the interface */

static void update_peaks(tt_allocator_stats *stats) {
    if (stats->allocated_bytes > stats->allocated_bytes_peak) {
        stats->allocated_bytes_peak = stats->allocated_bytes;
    }
    if (stats->reserved_bytes > stats->reserved_bytes_peak) {
        stats->reserved_bytes_peak = stats->reserved_bytes;
    }
}

/* Gets a fresh block from the backing allocator; caller holds the mutex. */
static tt_status new_block(tt_caching_allocator *cache, size_t size, int size_class, block **out) {
    block *b = malloc(sizeof(*b));
    if (b == NULL) {
        return TT_ERR_NOMEM;
    }
    void *ptr = NULL;
    tt_status status = cache->backing->alloc(cache->backing->ctx, size, &ptr);
    if (status == TT_ERR_NOMEM && cache->stats.cached_blocks > 0) {
        trim_locked(cache, 0);
        status = cache->backing->alloc(cache->backing->ctx, size, &ptr);
    }
    if (status != TT_OK) {
        free(b);
        return status;
    }
    b->ptr = ptr;
    b->size = size;
    b->requested = 0;
    b->size_class = size_class;
    b->state = BLOCK_LIVE;
    b->pinned = cache->pinned_mode;
    b->next_free = NULL;
    b->next_in_bucket = NULL;
    insert_record(cache, b);
    cache->stats.reserved_bytes += (int64_t)size;
    cache->stats.num_backing_allocs++;
    if (b->pinned) {
        cache->stats.pinned_blocks++;
    }
    *out = b;
    return TT_OK;
}

static tt_status caching_alloc(void *ctx, size_t nbytes, void **out_ptr) {
    tt_caching_allocator *cache = ctx;
    if (out_ptr == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    *out_ptr = NULL;
    if (nbytes > (size_t)PTRDIFF_MAX - LARGE_ROUNDING) {
        return TT_ERR_NOMEM;
    }
    /* Even a 0-byte request gets a real, unique block: callers may compare data pointers. */
    int size_class = -1;
    size_t size = nbytes <= SMALL_LIMIT ? round_small(nbytes, &size_class) : round_large(nbytes);

    pthread_mutex_lock(&cache->mutex);
    block *b = pop_cached(cache, size, size_class);
    tt_status status = TT_OK;
    if (b != NULL) {
        b->state = BLOCK_LIVE;
        cache->stats.cache_hits++;
    } else {
        status = new_block(cache, size, size_class, &b);
        if (status == TT_OK) {
            cache->stats.cache_misses++;
        }
    }
    if (status == TT_OK) {
        b->requested = nbytes;
        cache->stats.allocated_bytes += (int64_t)b->size;
        cache->stats.requested_bytes += (int64_t)nbytes;
        cache->stats.active_blocks++;
        cache->stats.num_allocs++;
        update_peaks(&cache->stats);
        *out_ptr = b->ptr;
    }
    pthread_mutex_unlock(&cache->mutex);
    return status;
}

static tt_status caching_free(void *ctx, void *ptr) {
    tt_caching_allocator *cache = ctx;
    if (ptr == NULL) {
        return TT_OK;
    }
    pthread_mutex_lock(&cache->mutex);
    block *b = find_record(cache, ptr);
    tt_status status = TT_OK;
    if (b == NULL) {
        status = TT_ERR_FOREIGN_POINTER;
    } else if (b->state == BLOCK_CACHED) {
        status = TT_ERR_DOUBLE_FREE;
    }
    if (status != TT_OK) {
        cache->stats.num_invalid_frees++;
    } else {
        cache->stats.allocated_bytes -= (int64_t)b->size;
        cache->stats.requested_bytes -= (int64_t)b->requested;
        cache->stats.active_blocks--;
        cache->stats.num_frees++;
        b->requested = 0;
        push_cached(cache, b);
    }
    pthread_mutex_unlock(&cache->mutex);
    return status;
}

/* ------------------------------------------------------------------ public functions */

tt_status tt_caching_allocator_create(const tt_allocator *backing, tt_caching_allocator **out) {
    if (backing == NULL || out == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    *out = NULL;
    tt_caching_allocator *cache = calloc(1, sizeof(*cache));
    if (cache == NULL) {
        return TT_ERR_NOMEM;
    }
    cache->buckets = calloc(INITIAL_BUCKETS, sizeof(block *));
    if (cache->buckets == NULL || pthread_mutex_init(&cache->mutex, NULL) != 0) {
        free(cache->buckets);
        free(cache);
        return TT_ERR_NOMEM;
    }
    cache->num_buckets = INITIAL_BUCKETS;
    cache->backing = backing;
    cache->interface.alloc = caching_alloc;
    cache->interface.free = caching_free;
    cache->interface.ctx = cache;
    cache->interface.name = "caching";
    *out = cache;
    return TT_OK;
}

tt_status tt_caching_allocator_destroy(tt_caching_allocator *cache) {
    if (cache == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    pthread_mutex_lock(&cache->mutex);
    trim_locked(cache, 1);
    /* What is left in the table is live: leak the memory (its owners may still use it) but
       free the bookkeeping. */
    int64_t live = cache->stats.active_blocks;
    for (size_t i = 0; i < cache->num_buckets; i++) {
        block *b = cache->buckets[i];
        while (b != NULL) {
            block *next = b->next_in_bucket;
            free(b);
            b = next;
        }
    }
    free(cache->buckets);
    pthread_mutex_unlock(&cache->mutex);
    pthread_mutex_destroy(&cache->mutex);
    free(cache);
    return live == 0 ? TT_OK : TT_ERR_LIVE_BLOCKS;
}

static tt_caching_allocator *global_cache = NULL;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void create_global_cache(void) {
    /* On failure global_cache stays NULL and storages fall back to the host allocator. */
    tt_caching_allocator_create(tt_host_allocator(), &global_cache);
}

tt_caching_allocator *tt_global_caching_allocator(void) {
    pthread_once(&global_once, create_global_cache);
    return global_cache;
}

const tt_allocator *tt_caching_allocator_interface(tt_caching_allocator *cache) {
    return cache == NULL ? tt_host_allocator() : &cache->interface;
}

/* The allocator of tensors, chosen once per process: TT_ALLOCATOR=host makes every storage a
   plain posix_memalign block (no caching), so that a memory checker (AddressSanitizer, valgrind)
   sees each overrun and each use after free; any other value, or none, selects the cache. */
static const tt_allocator *default_allocator = NULL;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void choose_default_allocator(void) {
    const char *choice = getenv("TT_ALLOCATOR");
    if (choice != NULL && strcmp(choice, "host") == 0) {
        default_allocator = tt_host_allocator();
    } else {
        default_allocator = tt_caching_allocator_interface(tt_global_caching_allocator());
    }
}

const tt_allocator *tt_default_allocator(void) {
    pthread_once(&default_once, choose_default_allocator);
    return default_allocator;
}

tt_status tt_caching_allocator_trim(tt_caching_allocator *cache, size_t *released_bytes) {
    if (cache == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    pthread_mutex_lock(&cache->mutex);
    size_t released = trim_locked(cache, 0);
    pthread_mutex_unlock(&cache->mutex);
    if (released_bytes != NULL) {
        *released_bytes = released;
    }
    return TT_OK;
}

void tt_caching_allocator_set_pinned(tt_caching_allocator *cache, int pinned) {
    pthread_mutex_lock(&cache->mutex);
    cache->pinned_mode = pinned != 0;
    pthread_mutex_unlock(&cache->mutex);
}

int tt_caching_allocator_is_pinned(tt_caching_allocator *cache) {
    pthread_mutex_lock(&cache->mutex);
    int pinned = cache->pinned_mode;
    pthread_mutex_unlock(&cache->mutex);
    return pinned;
}

void tt_caching_allocator_unpin_all(tt_caching_allocator *cache) {
    pthread_mutex_lock(&cache->mutex);
    for (size_t i = 0; i < cache->num_buckets; i++) {
        for (block *b = cache->buckets[i]; b != NULL; b = b->next_in_bucket) {
            b->pinned = 0;
        }
    }
    cache->stats.pinned_blocks = 0;
    pthread_mutex_unlock(&cache->mutex);
}

void tt_caching_allocator_get_stats(tt_caching_allocator *cache, tt_allocator_stats *out) {
    pthread_mutex_lock(&cache->mutex);
    *out = cache->stats;
    pthread_mutex_unlock(&cache->mutex);
}

void tt_caching_allocator_reset_peak_stats(tt_caching_allocator *cache) {
    pthread_mutex_lock(&cache->mutex);
    cache->stats.allocated_bytes_peak = cache->stats.allocated_bytes;
    cache->stats.reserved_bytes_peak = cache->stats.reserved_bytes;
    pthread_mutex_unlock(&cache->mutex);
}
