/*
 * test_allocator_stress.c: the caching allocator (allocator_caching.c) and the host allocator
 * (allocator_host.c).
 *
 *   stress    4 threads allocate and free random sizes on one cache; every block is filled
 *             with an owner-specific pattern that is verified before the free (two live blocks
 *             that overlap corrupt each other's pattern); at checkpoints all threads stop and
 *             one checks that no two live blocks overlap and that the statistics equal what
 *             the threads hold. At the end the statistics must add up exactly.
 *   unit      double free, foreign pointers, free(NULL), 0-byte blocks, reuse of a size class
 *             and of large blocks, pinned mode, peak reset, destroy with live blocks, the host
 *             allocator's edge cases, and a backing allocator that runs out of memory.
 *
 * The size policy the tests expect (block_size below) is the one the design comment of
 * allocator_caching.c states: 64 bytes minimum, four classes per power of two up to 1 MiB,
 * then multiples of 64 KiB.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum {
    NUM_THREADS = 4,
    OPS_PER_THREAD = 4000,
    CHECKPOINT_EVERY = 250,  /* ops between stop-the-world overlap checks */
    MAX_LIVE = 48,           /* live blocks per thread */
    KIB = 1024,
    MIB = 1024 * 1024,
};

/* The rounded size the cache should give a request of n bytes (see the header comment). */
static size_t block_size(size_t n) {
    if (n <= 64) {
        return 64;
    }
    if (n <= (size_t)MIB) {
        size_t base = 64;
        while (base * 2 < n) {
            base *= 2;           /* base < n <= 2 * base */
        }
        size_t step = base / 4;
        return base + (n - base + step - 1) / step * step;
    }
    return (n + 64 * KIB - 1) / (64 * KIB) * (64 * KIB);
}

/* The k-th class size (k = 0..56): 64, 80, 96, 112, 128, 160, ..., 1 MiB. */
static size_t class_size(int k) {
    if (k == 0) {
        return 64;
    }
    size_t base = (size_t)64 << ((k - 1) / 4);
    return base + (size_t)((k - 1) % 4 + 1) * (base / 4);
}

/* ------------------------------------------------------------------ the pattern */

/* Fills [p, p + n) with words derived from `tag`; any other owner's writes break it. */
static void fill_pattern(void *p, size_t n, uint64_t tag) {
    uint64_t *words = p;
    size_t nwords = n / 8;
    for (size_t i = 0; i < nwords; i++) {
        words[i] = tag + i;
    }
    unsigned char *tail = (unsigned char *)p + nwords * 8;
    for (size_t i = 0; i < n % 8; i++) {
        tail[i] = (unsigned char)(tag >> (8 * i));
    }
}

/* Returns the index of the first word/byte that differs, or -1. */
static long check_pattern(const void *p, size_t n, uint64_t tag) {
    const uint64_t *words = p;
    size_t nwords = n / 8;
    for (size_t i = 0; i < nwords; i++) {
        if (words[i] != tag + i) {
            return (long)(i * 8);
        }
    }
    const unsigned char *tail = (const unsigned char *)p + nwords * 8;
    for (size_t i = 0; i < n % 8; i++) {
        if (tail[i] != (unsigned char)(tag >> (8 * i))) {
            return (long)(nwords * 8 + i);
        }
    }
    return -1;
}

/* A request size from a mix: 0, tiny, around each class boundary, mid-sized, large. */
static size_t random_size(uint64_t *rng) {
    uint64_t r = xorshift64(rng);
    unsigned pick = (unsigned)(r % 100);
    r >>= 8;
    if (pick < 8) {
        return 0;
    }
    if (pick < 28) {
        return 1 + r % 64;
    }
    if (pick < 73) { /* a class boundary, -1 / exact / +1; small classes more often */
        int k = (r & 1) ? (int)((r >> 1) % 24) : (int)((r >> 1) % 57);
        int delta = (int)((r >> 8) % 3) - 1;
        return class_size(k) + (size_t)(ptrdiff_t)delta;
    }
    if (pick < 96) {
        return 1 + r % (64 * KIB);
    }
    if (pick < 98) { /* a large block just around a 64 KiB multiple */
        size_t m = (size_t)MIB + (size_t)(r % 48) * 64 * KIB;
        return m + (size_t)(ptrdiff_t)((int)((r >> 8) % 3) - 1);
    }
    return (size_t)MIB + 1 + r % (3 * (size_t)MIB);
}

/* ------------------------------------------------------------------ the stress test */

typedef struct live_block {
    void *ptr;
    size_t size;
    uint64_t tag;
} live_block;

typedef struct stress_shared {
    tt_caching_allocator *cache;
    pthread_barrier_t barrier;
    int64_t max_allocated_seen; /* the largest allocated_bytes seen at a checkpoint */
    int64_t max_reserved_seen;
} stress_shared;

typedef struct stress_thread {
    stress_shared *shared;
    int id;
    live_block live[MAX_LIVE];
    int nlive;
    long allocs, frees;
    long misaligned, corrupted, bad_status;
} stress_thread;

static stress_thread threads_state[NUM_THREADS];

static int compare_by_address(const void *a, const void *b) {
    uintptr_t pa = (uintptr_t)((const live_block *)a)->ptr;
    uintptr_t pb = (uintptr_t)((const live_block *)b)->ptr;
    return pa < pb ? -1 : pa > pb;
}

/* Run by one thread while all others wait at the barrier: every live block of every thread
   is disjoint from the others, and the statistics equal the sum of what the threads hold.
   A small block's size is exact; a large request may get a cached block up to 1/8 larger. */
static void checkpoint(stress_shared *sh) {
    static live_block all[NUM_THREADS * MAX_LIVE];
    int n = 0;
    int64_t rounded_lo = 0, rounded_hi = 0, requested = 0;
    for (int t = 0; t < NUM_THREADS; t++) {
        for (int i = 0; i < threads_state[t].nlive; i++) {
            live_block b = threads_state[t].live[i];
            all[n++] = b;
            int64_t r = (int64_t)block_size(b.size);
            rounded_lo += r;
            rounded_hi += b.size <= (size_t)MIB ? r : r + r / 8;
            requested += (int64_t)b.size;
        }
    }
    qsort(all, (size_t)n, sizeof all[0], compare_by_address);
    for (int i = 1; i < n; i++) {
        char *prev_end = (char *)all[i - 1].ptr + all[i - 1].size;
        CHECK(all[i - 1].ptr != all[i].ptr && prev_end <= (char *)all[i].ptr,
              "live blocks overlap: [%p, +%zu) and [%p, +%zu)", all[i - 1].ptr, all[i - 1].size,
              all[i].ptr, all[i].size);
    }
    tt_allocator_stats st;
    tt_caching_allocator_get_stats(sh->cache, &st);
    CHECK_EQ(st.active_blocks, n, "checkpoint: active_blocks vs live blocks held");
    CHECK(st.allocated_bytes >= rounded_lo && st.allocated_bytes <= rounded_hi,
          "checkpoint: allocated_bytes %lld outside [%lld, %lld], the sum of block sizes",
          (long long)st.allocated_bytes, (long long)rounded_lo, (long long)rounded_hi);
    CHECK_EQ(st.requested_bytes, requested, "checkpoint: requested_bytes vs sum of requests");
    CHECK_EQ(st.reserved_bytes, st.allocated_bytes + st.cached_bytes,
             "checkpoint: reserved_bytes vs allocated + cached");
    if (st.allocated_bytes > sh->max_allocated_seen) {
        sh->max_allocated_seen = st.allocated_bytes;
    }
    if (st.reserved_bytes > sh->max_reserved_seen) {
        sh->max_reserved_seen = st.reserved_bytes;
    }
}

static void stress_alloc(stress_thread *me, const tt_allocator *a, uint64_t *rng) {
    size_t size = random_size(rng);
    void *p = NULL;
    tt_status status = a->alloc(a->ctx, size, &p);
    if (status != TT_OK || p == NULL) {
        me->bad_status++;
        return;
    }
    if ((uintptr_t)p % TT_ALIGNMENT != 0) {
        me->misaligned++;
    }
    uint64_t tag = ((uint64_t)me->id << 56) ^ ((uint64_t)me->allocs * 0x9E3779B97F4A7C15ull);
    fill_pattern(p, size, tag);
    me->live[me->nlive++] = (live_block){p, size, tag};
    me->allocs++;
}

static void stress_free(stress_thread *me, const tt_allocator *a, int index) {
    live_block b = me->live[index];
    long bad = check_pattern(b.ptr, b.size, b.tag);
    if (bad >= 0) {
        me->corrupted++;
        fprintf(stderr, "thread %d: block %p (+%zu) corrupted at byte %ld: another block overlaps\n",
                me->id, b.ptr, b.size, bad);
    }
    if (a->free(a->ctx, b.ptr) != TT_OK) {
        me->bad_status++;
    }
    me->live[index] = me->live[--me->nlive];
    me->frees++;
}

static void *stress_worker(void *arg) {
    stress_thread *me = arg;
    stress_shared *sh = me->shared;
    const tt_allocator *a = tt_caching_allocator_interface(sh->cache);
    uint64_t rng = 0x243F6A8885A308D3ull * (uint64_t)(me->id + 1);
    for (int op = 1; op <= OPS_PER_THREAD; op++) {
        uint64_t r = xorshift64(&rng);
        int want_alloc = me->nlive == 0 || (me->nlive < MAX_LIVE && (r & 1));
        if (want_alloc) {
            stress_alloc(me, a, &rng);
        } else {
            stress_free(me, a, (int)((r >> 1) % (uint64_t)me->nlive));
        }
        if (me->id == 0 && (r >> 40) % 997 == 0) {
            tt_caching_allocator_trim(sh->cache, NULL); /* concurrent trims, now and then */
        }
        if (op % CHECKPOINT_EVERY == 0) {
            pthread_barrier_wait(&sh->barrier);
            if (me->id == 0) {
                checkpoint(sh);
            }
            pthread_barrier_wait(&sh->barrier);
        }
    }
    while (me->nlive > 0) {
        stress_free(me, a, me->nlive - 1);
    }
    return NULL;
}

/* Many threads, one cache: no overlap, no corruption, and statistics that add up. */
static void test_concurrent_stress(void) {
    double t0 = check_now_seconds();
    stress_shared sh = {0};
    CHECK_STATUS(tt_caching_allocator_create(tt_host_allocator(), &sh.cache), TT_OK, "create");
    pthread_barrier_init(&sh.barrier, NULL, NUM_THREADS);
    pthread_t threads[NUM_THREADS];
    for (int t = 0; t < NUM_THREADS; t++) {
        threads_state[t] = (stress_thread){.shared = &sh, .id = t};
        pthread_create(&threads[t], NULL, stress_worker, &threads_state[t]);
    }
    long allocs = 0, frees = 0, misaligned = 0, corrupted = 0, bad_status = 0;
    for (int t = 0; t < NUM_THREADS; t++) {
        pthread_join(threads[t], NULL);
        allocs += threads_state[t].allocs;
        frees += threads_state[t].frees;
        misaligned += threads_state[t].misaligned;
        corrupted += threads_state[t].corrupted;
        bad_status += threads_state[t].bad_status;
    }
    pthread_barrier_destroy(&sh.barrier);
    CHECK_EQ(misaligned, 0, "blocks not aligned to 64 bytes");
    CHECK_EQ(corrupted, 0, "blocks whose pattern was overwritten (overlapping live blocks)");
    CHECK_EQ(bad_status, 0, "alloc/free calls that did not return TT_OK");
    CHECK_EQ(allocs, frees, "the threads freed what they allocated");

    tt_allocator_stats st;
    tt_caching_allocator_get_stats(sh.cache, &st);
    CHECK_EQ(st.allocated_bytes, 0, "allocated_bytes after all frees");
    CHECK_EQ(st.requested_bytes, 0, "requested_bytes after all frees");
    CHECK_EQ(st.active_blocks, 0, "active_blocks after all frees");
    CHECK_EQ(st.num_allocs, allocs, "num_allocs vs allocations the threads counted");
    CHECK_EQ(st.num_frees, frees, "num_frees vs frees the threads counted");
    CHECK_EQ(st.cache_hits + st.cache_misses, st.num_allocs, "cache_hits + cache_misses");
    CHECK_EQ(st.num_backing_allocs, st.cache_misses, "num_backing_allocs vs cache_misses");
    CHECK_EQ(st.reserved_bytes, st.cached_bytes, "reserved_bytes vs cached_bytes when idle");
    CHECK_EQ(st.num_invalid_frees, 0, "num_invalid_frees");
    CHECK(st.allocated_bytes_peak >= sh.max_allocated_seen,
          "allocated_bytes_peak %lld below a value seen at a checkpoint %lld",
          (long long)st.allocated_bytes_peak, (long long)sh.max_allocated_seen);
    CHECK(st.reserved_bytes_peak >= sh.max_reserved_seen,
          "reserved_bytes_peak %lld below a value seen at a checkpoint %lld",
          (long long)st.reserved_bytes_peak, (long long)sh.max_reserved_seen);
    CHECK(st.cache_hits > 0, "no cache hit in %lld allocations", (long long)st.num_allocs);

    size_t released = 0;
    CHECK_STATUS(tt_caching_allocator_trim(sh.cache, &released), TT_OK, "trim");
    CHECK_EQ(released, st.cached_bytes, "bytes released by trim vs cached_bytes");
    tt_caching_allocator_get_stats(sh.cache, &st);
    CHECK_EQ(st.reserved_bytes, 0, "reserved_bytes after trim");
    CHECK_EQ(st.cached_blocks, 0, "cached_blocks after trim");
    CHECK_EQ(st.cached_bytes, 0, "cached_bytes after trim");
    CHECK_EQ(st.num_backing_frees, st.num_backing_allocs, "backing frees vs allocs after trim");
    CHECK_STATUS(tt_caching_allocator_destroy(sh.cache), TT_OK, "destroy of an idle cache");
    printf("stress: %d threads x %d ops, %ld allocs, %lld cache hits, peak allocated %lld B, "
           "%.2f s\n", NUM_THREADS, OPS_PER_THREAD, allocs, (long long)st.cache_hits,
           (long long)st.allocated_bytes_peak, check_now_seconds() - t0);
}

/* ------------------------------------------------------------------ a recording backing */

/* A backing allocator that records every block it hands out (so a test can free what a cache
   leaked), counts calls, and can be told to fail. */
typedef struct recording_backing {
    tt_allocator iface;
    int alloc_calls, free_calls, bad_frees;
    int succeed_left;  /* < 0: no limit; else this many more allocs succeed ... */
    int fail_left;     /* ... then this many fail (< 0: all of them) */
    void *outstanding[64];
    int noutstanding;
} recording_backing;

static tt_status recording_alloc(void *ctx, size_t nbytes, void **out) {
    recording_backing *rb = ctx;
    rb->alloc_calls++;
    *out = NULL;
    if (rb->succeed_left == 0 && rb->fail_left != 0) {
        if (rb->fail_left > 0) {
            rb->fail_left--;
        }
        return TT_ERR_NOMEM;
    }
    if (rb->succeed_left > 0) {
        rb->succeed_left--;
    }
    if (rb->noutstanding == 64 || posix_memalign(out, TT_ALIGNMENT, nbytes ? nbytes : 1) != 0) {
        return TT_ERR_NOMEM;
    }
    rb->outstanding[rb->noutstanding++] = *out;
    return TT_OK;
}

static tt_status recording_free(void *ctx, void *ptr) {
    recording_backing *rb = ctx;
    rb->free_calls++;
    for (int i = 0; i < rb->noutstanding; i++) {
        if (rb->outstanding[i] == ptr) {
            rb->outstanding[i] = rb->outstanding[--rb->noutstanding];
            free(ptr);
            return TT_OK;
        }
    }
    rb->bad_frees++;
    return TT_ERR_FOREIGN_POINTER;
}

static void recording_init(recording_backing *rb) {
    memset(rb, 0, sizeof *rb);
    rb->iface = (tt_allocator){recording_alloc, recording_free, rb, "recording"};
    rb->succeed_left = -1;
    rb->fail_left = 0;
}

/* Frees whatever the backing still has out (memory a destroyed cache leaked by design). */
static void recording_free_all(recording_backing *rb) {
    while (rb->noutstanding > 0) {
        free(rb->outstanding[--rb->noutstanding]);
    }
}

/* ------------------------------------------------------------------ unit checks */

static tt_caching_allocator *new_cache(const tt_allocator *backing) {
    tt_caching_allocator *cache = NULL;
    tt_status status = tt_caching_allocator_create(backing, &cache);
    CHECK_STATUS(status, TT_OK, "tt_caching_allocator_create");
    if (status != TT_OK) {
        exit(1);
    }
    return cache;
}

static void *must_alloc(const tt_allocator *a, size_t n) {
    void *p = NULL;
    CHECK_STATUS(a->alloc(a->ctx, n, &p), TT_OK, "alloc");
    CHECK(p != NULL, "alloc(%zu) returned NULL with TT_OK", n);
    return p;
}

/* A double free is reported and leaves the free list intact: the block must not be handed
   out twice afterwards. */
static void test_double_free(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    void *p = must_alloc(a, 100);
    CHECK_STATUS(a->free(a->ctx, p), TT_OK, "first free");
    CHECK_STATUS(a->free(a->ctx, p), TT_ERR_DOUBLE_FREE, "second free of the same block");
    void *q1 = must_alloc(a, 100);
    void *q2 = must_alloc(a, 100);
    CHECK(q1 == p, "the cached block was not reused: expected %p, got %p", p, q1);
    CHECK(q2 != q1, "a double-freed block was handed out twice (%p)", q1);
    tt_allocator_stats st;
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.num_invalid_frees, 1, "num_invalid_frees after one double free");
    CHECK_EQ(st.num_frees, 1, "num_frees counts only the valid free");
    CHECK_EQ(st.active_blocks, 2, "active_blocks");
    a->free(a->ctx, q1);
    a->free(a->ctx, q2);
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* Pointers the cache never handed out are refused, not pushed on a free list. */
static void test_foreign_pointers(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    void *live = must_alloc(a, 256);
    void *heap = malloc(64);
    int on_stack = 0;
    CHECK_STATUS(a->free(a->ctx, heap), TT_ERR_FOREIGN_POINTER, "free of a malloc'd pointer");
    CHECK_STATUS(a->free(a->ctx, (char *)live + 64), TT_ERR_FOREIGN_POINTER,
                 "free of an interior pointer of a live block");
    CHECK_STATUS(a->free(a->ctx, &on_stack), TT_ERR_FOREIGN_POINTER, "free of a stack address");
    CHECK_STATUS(a->free(a->ctx, NULL), TT_OK, "free(NULL)");
    tt_allocator_stats st;
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.num_invalid_frees, 3, "num_invalid_frees after three foreign frees");
    CHECK_EQ(st.num_frees, 0, "num_frees (free(NULL) and invalid frees do not count)");
    CHECK_EQ(st.active_blocks, 1, "the live block is still live");
    CHECK_EQ(st.cached_blocks, 0, "nothing was cached");
    free(heap);
    CHECK_STATUS(a->free(a->ctx, live), TT_OK, "free of the live block");
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* 0-byte requests get real, distinct, aligned blocks (callers may compare data pointers). */
static void test_zero_byte_blocks(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    void *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = must_alloc(a, 0);
        CHECK((uintptr_t)p[i] % TT_ALIGNMENT == 0, "0-byte block %p not 64-aligned", p[i]);
        for (int j = 0; j < i; j++) {
            CHECK(p[i] != p[j], "0-byte blocks %d and %d share the address %p", i, j, p[i]);
        }
    }
    tt_allocator_stats st;
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.allocated_bytes, 4 * 64, "allocated_bytes of four 0-byte blocks");
    CHECK_EQ(st.requested_bytes, 0, "requested_bytes of four 0-byte blocks");
    for (int i = 0; i < 4; i++) {
        a->free(a->ctx, p[i]);
    }
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* A freed block serves the next request of its class (same pointer, a cache hit), and the
   rounding follows the documented classes. */
static void test_size_class_reuse(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    tt_allocator_stats st;
    void *p = must_alloc(a, 100); /* class 112 */
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.allocated_bytes, 112, "block size of a 100-byte request");
    a->free(a->ctx, p);
    void *q = must_alloc(a, 97); /* same class */
    CHECK(q == p, "a 97-byte request did not reuse the cached 112-byte block (%p vs %p)", q, p);
    void *r = must_alloc(a, 113); /* next class (128): a miss */
    CHECK(r != p, "a 113-byte request got the live 112-byte block");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.cache_hits, 1, "cache_hits");
    CHECK_EQ(st.cache_misses, 2, "cache_misses");
    CHECK_EQ(st.allocated_bytes, 112 + 128, "allocated_bytes");
    a->free(a->ctx, q);
    a->free(a->ctx, r);
    /* Every class boundary: n rounds to the class, n + 1 to the next one. */
    for (int k = 0; k < 57; k++) {
        size_t n = class_size(k);
        void *b = must_alloc(a, n);
        void *c = must_alloc(a, n + 1);
        tt_caching_allocator_get_stats(cache, &st);
        CHECK_EQ(st.allocated_bytes, (int64_t)(block_size(n) + block_size(n + 1)),
                 "allocated_bytes for a class boundary pair");
        CHECK_EQ(block_size(n), n, "test's own class table");
        a->free(a->ctx, b);
        a->free(a->ctx, c);
    }
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* Large blocks: best fit within 1/8 of the (rounded) request; a much smaller request must not
   take a big cached block. */
static void test_large_block_reuse(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    tt_allocator_stats st;
    void *big = must_alloc(a, 2 * MIB);
    a->free(a->ctx, big);
    void *close = must_alloc(a, 2 * MIB - 100 * KIB); /* rounds to 31 x 64 KiB: within 1/8 */
    CHECK(close == big, "a slightly smaller large request did not reuse the cached block");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.allocated_bytes, 2 * MIB, "allocated_bytes counts the whole reused block");
    CHECK_EQ(st.requested_bytes, 2 * MIB - 100 * KIB, "requested_bytes");
    a->free(a->ctx, close);
    void *small = must_alloc(a, MIB + MIB / 5); /* 1.2 MiB: 2 MiB would waste > 1/8 */
    CHECK(small != big, "a much smaller large request took the cached 2 MiB block");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.cache_hits, 1, "cache_hits");
    CHECK_EQ(st.cache_misses, 2, "cache_misses");
    CHECK_EQ(st.cached_blocks, 1, "the 2 MiB block stays cached");
    a->free(a->ctx, small);
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* Pinned mode: blocks obtained while pinned survive trim until unpin_all. */
static void test_pinned_mode(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    tt_allocator_stats st;
    CHECK_EQ(tt_caching_allocator_is_pinned(cache), 0, "a new cache is not pinned");
    tt_caching_allocator_set_pinned(cache, 1);
    CHECK_EQ(tt_caching_allocator_is_pinned(cache), 1, "is_pinned after set_pinned(1)");
    void *pinned = must_alloc(a, 4000);  /* class 4096 */
    tt_caching_allocator_set_pinned(cache, 0);
    void *plain = must_alloc(a, 10000);  /* class 10240 */
    a->free(a->ctx, pinned);
    a->free(a->ctx, plain);
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.pinned_blocks, 1, "pinned_blocks");
    size_t released = 0;
    tt_caching_allocator_trim(cache, &released);
    CHECK_EQ(released, 10240, "trim released only the unpinned block");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.reserved_bytes, 4096, "reserved_bytes keeps the pinned block");
    CHECK_EQ(st.cached_blocks, 1, "the pinned block stays cached");
    void *again = must_alloc(a, 4000);
    CHECK(again == pinned, "the pinned cached block was not reused");
    a->free(a->ctx, again);
    tt_caching_allocator_unpin_all(cache);
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.pinned_blocks, 0, "pinned_blocks after unpin_all");
    tt_caching_allocator_trim(cache, &released);
    CHECK_EQ(released, 4096, "trim after unpin_all released the formerly pinned block");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.reserved_bytes, 0, "reserved_bytes after unpin_all + trim");
    CHECK_EQ(st.num_backing_frees, st.num_backing_allocs, "backing frees vs allocs");
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* Peaks follow the high-water mark and reset to the current values. */
static void test_peak_stats(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    tt_allocator_stats st;
    void *p = must_alloc(a, 3 * MIB);
    void *q = must_alloc(a, 64);
    a->free(a->ctx, p);
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.allocated_bytes_peak, 3 * MIB + 64, "allocated_bytes_peak");
    CHECK_EQ(st.reserved_bytes_peak, 3 * MIB + 64, "reserved_bytes_peak");
    tt_caching_allocator_trim(cache, NULL);
    tt_caching_allocator_reset_peak_stats(cache);
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.allocated_bytes_peak, 64, "allocated_bytes_peak after reset");
    CHECK_EQ(st.reserved_bytes_peak, 64, "reserved_bytes_peak after reset");
    a->free(a->ctx, q);
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* destroy with a live block reports it, returns the cached blocks, and leaks only the live one
   (which the recording backing then frees, so the leak checker stays clean). */
static void test_destroy_with_live_blocks(void) {
    recording_backing rb;
    recording_init(&rb);
    tt_caching_allocator *cache = new_cache(&rb.iface);
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    void *live = must_alloc(a, 1000);
    void *cached = must_alloc(a, 5000);
    a->free(a->ctx, cached);
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_ERR_LIVE_BLOCKS,
                 "destroy with a live block");
    CHECK_EQ(rb.free_calls, 1, "backing frees during destroy (the cached block only)");
    CHECK_EQ(rb.noutstanding, 1, "blocks left outstanding (the live one)");
    CHECK(rb.noutstanding == 1 && rb.outstanding[0] == live, "the leaked block is not the live one");
    CHECK_EQ(rb.bad_frees, 0, "backing frees of unknown pointers");
    recording_free_all(&rb);
    CHECK_STATUS(tt_caching_allocator_destroy(NULL), TT_ERR_INVALID_ARG, "destroy(NULL)");
    tt_caching_allocator *out = NULL;
    CHECK_STATUS(tt_caching_allocator_create(NULL, &out), TT_ERR_INVALID_ARG, "create(NULL)");
    CHECK_STATUS(tt_caching_allocator_create(&rb.iface, NULL), TT_ERR_INVALID_ARG,
                 "create(out NULL)");
}

/* Huge requests fail with TT_ERR_NOMEM instead of overflowing or crashing. */
static void test_huge_requests(void) {
    tt_caching_allocator *cache = new_cache(tt_host_allocator());
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    void *p = (void *)1;
    CHECK_STATUS(a->alloc(a->ctx, SIZE_MAX, &p), TT_ERR_NOMEM, "caching alloc(SIZE_MAX)");
    CHECK(p == NULL, "out pointer after a failed alloc: expected NULL, got %p", p);
    CHECK_STATUS(a->alloc(a->ctx, SIZE_MAX / 2, &p), TT_ERR_NOMEM, "caching alloc(SIZE_MAX/2)");
    /* 2^50 bytes passes the size checks and reaches the backing allocator, which fails. */
    CHECK_STATUS(a->alloc(a->ctx, (size_t)1 << 50, &p), TT_ERR_NOMEM, "caching alloc(2^50)");
    tt_allocator_stats st;
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.num_allocs, 0, "num_allocs after failed allocs");
    CHECK_EQ(st.reserved_bytes, 0, "reserved_bytes after failed allocs");
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
}

/* The host allocator: 0 bytes is NULL/OK, huge is NOMEM, everything 64-aligned. */
static void test_host_allocator(void) {
    const tt_allocator *h = tt_host_allocator();
    CHECK(h == tt_host_allocator(), "tt_host_allocator is not a singleton");
    CHECK(strcmp(h->name, "host") == 0, "host allocator name: got %s", h->name);
    void *p = (void *)1;
    CHECK_STATUS(h->alloc(h->ctx, 0, &p), TT_OK, "host alloc(0)");
    CHECK(p == NULL, "host alloc(0): expected NULL, got %p", p);
    p = (void *)1;
    CHECK_STATUS(h->alloc(h->ctx, SIZE_MAX / 2, &p), TT_ERR_NOMEM, "host alloc(SIZE_MAX/2)");
    CHECK(p == NULL, "host alloc(SIZE_MAX/2) left %p in *out", p);
    CHECK_STATUS(h->alloc(h->ctx, SIZE_MAX, &p), TT_ERR_NOMEM, "host alloc(SIZE_MAX)");
    CHECK_STATUS(h->alloc(h->ctx, 10, NULL), TT_ERR_INVALID_ARG, "host alloc(out NULL)");
    const size_t sizes[] = {1, 7, 63, 64, 65, 1000, 4096, 100000, 3 * MIB};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        p = NULL;
        CHECK_STATUS(h->alloc(h->ctx, sizes[i], &p), TT_OK, "host alloc");
        CHECK(p != NULL && (uintptr_t)p % TT_ALIGNMENT == 0, "host alloc(%zu) gave %p", sizes[i], p);
        memset(p, 0xAB, sizes[i]);
        CHECK_STATUS(h->free(h->ctx, p), TT_OK, "host free");
    }
    CHECK_STATUS(h->free(h->ctx, NULL), TT_OK, "host free(NULL)");
}

/* The backing allocator runs out: without cached blocks the error comes back at once (one
   backing call); with cached blocks the cache trims itself and retries exactly once. */
static void test_backing_out_of_memory(void) {
    recording_backing rb;
    tt_allocator_stats st;

    /* Always failing, nothing cached: one call, TT_ERR_NOMEM, no statistics change. */
    recording_init(&rb);
    rb.succeed_left = 0;
    rb.fail_left = -1;
    tt_caching_allocator *cache = new_cache(&rb.iface);
    const tt_allocator *a = tt_caching_allocator_interface(cache);
    void *p = (void *)1;
    CHECK_STATUS(a->alloc(a->ctx, 100, &p), TT_ERR_NOMEM, "alloc with a failing backing");
    CHECK(p == NULL, "out pointer after NOMEM: expected NULL, got %p", p);
    CHECK_EQ(rb.alloc_calls, 1, "backing calls with nothing cached (no retry)");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.num_allocs + st.cache_misses + st.reserved_bytes + st.num_backing_allocs, 0,
             "statistics after a failed alloc");
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");

    /* One success, then failures: the cached block is trimmed, the retry fails too. */
    recording_init(&rb);
    rb.succeed_left = 1;
    rb.fail_left = -1;
    cache = new_cache(&rb.iface);
    a = tt_caching_allocator_interface(cache);
    void *small = must_alloc(a, 100);
    a->free(a->ctx, small);
    CHECK_STATUS(a->alloc(a->ctx, 5000, &p), TT_ERR_NOMEM, "alloc after trim-and-retry failed");
    CHECK_EQ(rb.alloc_calls, 3, "backing alloc calls (1 ok, 1 failed, 1 retry)");
    CHECK_EQ(rb.free_calls, 1, "backing free calls (the trimmed cached block)");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.cached_blocks, 0, "cached_blocks after the out-of-memory trim");
    CHECK_EQ(st.reserved_bytes, 0, "reserved_bytes after the out-of-memory trim");
    CHECK_EQ(st.num_allocs, 1, "num_allocs");
    CHECK_EQ(st.num_backing_frees, 1, "num_backing_frees");
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
    CHECK_EQ(rb.noutstanding, 0, "backing blocks outstanding after destroy");

    /* One transient failure: the retry after the trim succeeds. */
    recording_init(&rb);
    rb.succeed_left = 1;
    rb.fail_left = 1;
    cache = new_cache(&rb.iface);
    a = tt_caching_allocator_interface(cache);
    small = must_alloc(a, 100);
    a->free(a->ctx, small);
    rb.succeed_left = 0; /* the next call fails once, then calls succeed again */
    p = NULL;
    CHECK_STATUS(a->alloc(a->ctx, 5000, &p), TT_OK, "alloc whose retry succeeds");
    CHECK_EQ(rb.alloc_calls, 3, "backing alloc calls (1 ok, 1 failed, 1 retry ok)");
    CHECK_EQ(rb.free_calls, 1, "backing free calls (the trimmed cached block)");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.cache_misses, 2, "cache_misses");
    CHECK_EQ(st.num_backing_allocs, 2, "num_backing_allocs");
    CHECK_EQ(st.reserved_bytes, 5120, "reserved_bytes (the 5120-byte class block only)");
    a->free(a->ctx, p);
    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy");
    CHECK_EQ(rb.noutstanding, 0, "backing blocks outstanding after destroy");
}

/* The global cache is one object, and its interface works. */
static void test_global_cache(void) {
    tt_caching_allocator *g = tt_global_caching_allocator();
    CHECK(g != NULL && g == tt_global_caching_allocator(), "global cache missing or not unique");
    if (g == NULL) {
        return;
    }
    const tt_allocator *a = tt_caching_allocator_interface(g);
    CHECK(strcmp(a->name, "caching") == 0, "global cache name: got %s", a->name);
    void *p = must_alloc(a, 123);
    CHECK_STATUS(a->free(a->ctx, p), TT_OK, "free to the global cache");
    tt_caching_allocator_trim(g, NULL);
    CHECK(tt_caching_allocator_interface(NULL) == tt_host_allocator(),
          "interface(NULL) should fall back to the host allocator");
}

int main(void) {
    test_host_allocator();
    test_double_free();
    test_foreign_pointers();
    test_zero_byte_blocks();
    test_size_class_reuse();
    test_large_block_reuse();
    test_pinned_mode();
    test_peak_stats();
    test_destroy_with_live_blocks();
    test_huge_requests();
    test_backing_out_of_memory();
    test_global_cache();
    test_concurrent_stress();
    return check_report("test_allocator_stress");
}
