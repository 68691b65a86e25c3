/*
 * test_refcount_stress.c: the reference counts of tt_storage (storage.c, Note [Refcount
 * invariants]) under single-threaded exact checks and multi-threaded stress.
 *
 *   unit      exact use/weak counts after each operation, data freed when the last strong
 *             reference goes, object freed when the last weak one goes.
 *   phase 1   8 threads x 10^6 random retain/release, weak_retain/weak_release, weak_lock and
 *             nested sequences on one storage that main keeps alive: afterwards the counts are
 *             exactly back to 1/1 and nothing was freed early; main's release frees it once.
 *   phase 2   the race that matters: weak holders spin on weak_lock while the last strong
 *             reference goes (dropped by main, or by a worker): zero is final, the data is
 *             freed exactly once, the object exactly once.
 *
 * Run it under ThreadSanitizer (orderings) and AddressSanitizer (use after free, double free);
 * run_c_tests.sh does both.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum {
    NUM_THREADS = 8,
    OPS_PER_THREAD = 1000000, /* the minimum; every build mode runs it */
    PHASE2_ROUNDS = 200,      /* per variant */
    BUF_BYTES = 64,
    ZERO_CONFIRMATIONS = 64,  /* weak_lock tries after the first 0, to check it stays 0 */
};

/* ------------------------------------------------------------------ a counting deleter */

typedef struct deleter_probe {
    atomic_int calls;
    atomic_int wrong_data; /* called with a data pointer other than the one given */
    void *expected_data;
} deleter_probe;

static void counting_deleter(void *ctx, void *data) {
    deleter_probe *probe = ctx;
    if (data != probe->expected_data) {
        atomic_fetch_add(&probe->wrong_data, 1);
    }
    atomic_fetch_add(&probe->calls, 1);
    free(data);
}

/* A storage over a malloc'd buffer filled with (i * 7 + 1), freed by counting_deleter. */
static tt_storage *make_counted_storage(deleter_probe *probe) {
    unsigned char *buf = malloc(BUF_BYTES);
    for (int i = 0; i < BUF_BYTES; i++) {
        buf[i] = (unsigned char)(i * 7 + 1);
    }
    atomic_init(&probe->calls, 0);
    atomic_init(&probe->wrong_data, 0);
    probe->expected_data = buf;
    tt_storage *storage = NULL;
    tt_status status = tt_storage_new_external(buf, BUF_BYTES, counting_deleter, probe, &storage);
    CHECK_STATUS(status, TT_OK, "tt_storage_new_external");
    if (status != TT_OK) {
        free(buf);
        exit(1);
    }
    return storage;
}

/* Reads one byte of the data; only legal while holding a strong reference. Returns 1 when
   the byte still has the pattern make_counted_storage wrote. */
static int data_intact(tt_storage *storage, uint64_t r) {
    const volatile unsigned char *data = tt_storage_data(storage);
    if (data == NULL) {
        return 0;
    }
    int i = (int)(r % BUF_BYTES);
    return data[i] == (unsigned char)(i * 7 + 1);
}

/* ------------------------------------------------------------------ unit checks */

/* Exact counts through a whole life cycle, single-threaded, with an allocator-backed storage
   so that the allocator's statistics prove when the data is freed. */
static void test_exact_counts(void) {
    tt_caching_allocator *cache = NULL;
    CHECK_STATUS(tt_caching_allocator_create(tt_host_allocator(), &cache), TT_OK, "create cache");
    const tt_allocator *alloc = tt_caching_allocator_interface(cache);
    int64_t live0 = tt_storage_live_objects();

    tt_storage *s = NULL;
    CHECK_STATUS(tt_storage_new(alloc, 100, &s), TT_OK, "tt_storage_new(100)");
    CHECK_EQ(tt_storage_live_objects(), live0 + 1, "live objects after new");
    CHECK_EQ(tt_storage_use_count(s), 1, "use_count of a new storage");
    CHECK_EQ(tt_storage_weak_count(s), 1, "weak_count of a new storage");
    CHECK(tt_storage_data(s) != NULL, "data of a 100-byte storage is NULL");
    CHECK_EQ(tt_storage_nbytes(s), 100, "nbytes");
    CHECK(strcmp(tt_storage_allocator_name(s), "caching") == 0, "allocator name: got %s",
          tt_storage_allocator_name(s));
    tt_allocator_stats st;
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.active_blocks, 1, "active blocks while the storage lives");

    tt_storage_retain(s);
    CHECK_EQ(tt_storage_use_count(s), 2, "use_count after retain");
    CHECK_EQ(tt_storage_weak_count(s), 1, "weak_count after retain");
    tt_storage_weak_retain(s);
    CHECK_EQ(tt_storage_use_count(s), 2, "use_count after weak_retain");
    CHECK_EQ(tt_storage_weak_count(s), 2, "weak_count after weak_retain");

    CHECK_EQ(tt_storage_weak_lock(s), 1, "weak_lock while alive");
    CHECK_EQ(tt_storage_use_count(s), 3, "use_count after a successful weak_lock");
    tt_storage_release(s);
    tt_storage_release(s);
    CHECK_EQ(tt_storage_use_count(s), 1, "use_count after two releases");
    CHECK(tt_storage_data(s) != NULL, "data freed while a strong reference remains");

    tt_storage_release(s); /* the last strong reference: data goes, object stays */
    CHECK_EQ(tt_storage_use_count(s), 0, "use_count after the last release");
    CHECK_EQ(tt_storage_weak_count(s), 1, "weak_count with only the weak handle left");
    CHECK(tt_storage_data(s) == NULL, "data pointer after the last release: expected NULL, got %p",
          tt_storage_data(s));
    CHECK_EQ(tt_storage_nbytes(s), 0, "nbytes after the last release");
    tt_caching_allocator_get_stats(cache, &st);
    CHECK_EQ(st.active_blocks, 0, "active blocks after the last strong release");
    CHECK_EQ(st.num_frees, 1, "allocator frees after the last strong release");
    CHECK_EQ(st.num_invalid_frees, 0, "invalid frees");
    CHECK_EQ(tt_storage_live_objects(), live0 + 1, "object freed while a weak reference remains");

    CHECK_EQ(tt_storage_weak_lock(s), 0, "weak_lock after the data was released");
    CHECK_EQ(tt_storage_use_count(s), 0, "use_count after a failed weak_lock");
    tt_storage_weak_release(s);
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after the last weak release");

    CHECK_STATUS(tt_caching_allocator_destroy(cache), TT_OK, "destroy cache");
}

/* Creation edge cases: external memory with and without a deleter, bad arguments. */
static void test_creation_edges(void) {
    int64_t live0 = tt_storage_live_objects();
    tt_storage *s = (tt_storage *)1;
    CHECK_STATUS(tt_storage_new(NULL, 10, &s), TT_ERR_INVALID_ARG, "tt_storage_new(NULL allocator)");
    CHECK_STATUS(tt_storage_new(tt_host_allocator(), 10, NULL), TT_ERR_INVALID_ARG,
                 "tt_storage_new(out NULL)");
    CHECK_STATUS(tt_storage_new_external(NULL, 0, NULL, NULL, NULL), TT_ERR_INVALID_ARG,
                 "tt_storage_new_external(out NULL)");

    /* A host-allocated empty storage has a NULL data pointer (host gives NULL for 0 bytes). */
    CHECK_STATUS(tt_storage_new(tt_host_allocator(), 0, &s), TT_OK, "tt_storage_new(host, 0)");
    CHECK(tt_storage_data(s) == NULL, "data of an empty host storage: expected NULL");
    CHECK(strcmp(tt_storage_allocator_name(s), "host") == 0, "allocator name: got %s",
          tt_storage_allocator_name(s));
    tt_storage_release(s);

    /* External memory without a deleter: releasing it must not touch the memory. */
    static char not_owned[16];
    CHECK_STATUS(tt_storage_new_external(not_owned, sizeof not_owned, NULL, NULL, &s), TT_OK,
                 "tt_storage_new_external without deleter");
    CHECK(strcmp(tt_storage_allocator_name(s), "external") == 0, "allocator name: got %s",
          tt_storage_allocator_name(s));
    tt_storage_release(s);

    /* The per-op fast path: the global cache, one call, NULL on failure. */
    s = tt_storage_new_default(100);
    CHECK(s != NULL, "tt_storage_new_default(100) returned NULL");
    if (s != NULL) {
        CHECK_EQ(tt_storage_use_count(s), 1, "use_count of a default storage");
        CHECK_EQ(tt_storage_weak_count(s), 1, "weak_count of a default storage");
        CHECK(tt_storage_data_address(s) == (uintptr_t)tt_storage_data(s) &&
                  tt_storage_data_address(s) % TT_ALIGNMENT == 0,
              "data_address %#lx vs data %p", (unsigned long)tt_storage_data_address(s),
              tt_storage_data(s));
        CHECK(strcmp(tt_storage_allocator_name(s), "caching") == 0, "allocator name: got %s",
              tt_storage_allocator_name(s));
        tt_storage_release(s);
    }
    CHECK(tt_storage_new_default(SIZE_MAX) == NULL, "tt_storage_new_default(SIZE_MAX) succeeded");
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after the edge cases");
}

/* ------------------------------------------------------------------ phase 1 */

typedef struct phase1_arg {
    tt_storage *storage; /* the thread owns one strong and one weak reference to it */
    uint64_t seed;
    long ops;
    long failed_locks;   /* weak_lock returned 0 although main holds a strong reference */
    long low_counts;     /* a snapshot below what this thread and main provably hold */
    long bad_data;       /* the data changed or vanished while a strong reference was held */
    pthread_barrier_t *start; /* all workers start together, so their traffic overlaps */
} phase1_arg;

/* Holds 2..8 references of random kinds, checks the counts cover them, drops them in reverse. */
static void nested_sequence(phase1_arg *a, uint64_t r) {
    enum { STRONG = 0, WEAK = 1, LOCKED = 2, NONE = 3 };
    int kinds[8];
    int n = 2 + (int)((r >> 8) % 7);
    int strong = 0, weak = 0;
    for (int j = 0; j < n; j++) {
        int kind = (int)((r >> (16 + 2 * j)) % 3);
        if (kind == STRONG) {
            tt_storage_retain(a->storage);
            strong++;
        } else if (kind == WEAK) {
            tt_storage_weak_retain(a->storage);
            weak++;
        } else if (tt_storage_weak_lock(a->storage)) {
            strong++;
        } else {
            a->failed_locks++;
            kind = NONE;
        }
        kinds[j] = kind;
    }
    /* main (1) + this thread's own reference (1) + what it holds now, at least */
    if (tt_storage_use_count(a->storage) < 2 + strong ||
        tt_storage_weak_count(a->storage) < 2 + weak) {
        a->low_counts++;
    }
    if (strong > 0 && !data_intact(a->storage, r)) {
        a->bad_data++;
    }
    for (int j = n - 1; j >= 0; j--) {
        if (kinds[j] == STRONG || kinds[j] == LOCKED) {
            tt_storage_release(a->storage);
        } else if (kinds[j] == WEAK) {
            tt_storage_weak_release(a->storage);
        }
    }
}

static void *phase1_worker(void *arg) {
    phase1_arg *a = arg;
    uint64_t rng = a->seed;
    pthread_barrier_wait(a->start);
    for (long i = 0; i < a->ops; i++) {
        uint64_t r = xorshift64(&rng);
        switch (r & 3) {
        case 0:
            tt_storage_retain(a->storage);
            tt_storage_release(a->storage);
            break;
        case 1:
            tt_storage_weak_retain(a->storage);
            tt_storage_weak_release(a->storage);
            break;
        case 2:
            if (tt_storage_weak_lock(a->storage)) {
                if (!data_intact(a->storage, r >> 2)) {
                    a->bad_data++;
                }
                tt_storage_release(a->storage);
            } else {
                a->failed_locks++;
            }
            break;
        default:
            nested_sequence(a, r);
            break;
        }
    }
    tt_storage_release(a->storage);
    tt_storage_weak_release(a->storage);
    return NULL;
}

/* Phase 1: heavy concurrent traffic on counts that never reach zero must leave them exact. */
static void test_phase1_mixed_traffic(void) {
    double t0 = check_now_seconds();
    int64_t live0 = tt_storage_live_objects();
    deleter_probe probe;
    tt_storage *s = make_counted_storage(&probe);

    pthread_t threads[NUM_THREADS];
    phase1_arg args[NUM_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, NUM_THREADS);
    for (int t = 0; t < NUM_THREADS; t++) {
        tt_storage_retain(s);      /* the worker's own strong reference */
        tt_storage_weak_retain(s); /* and its weak one, for weak_lock */
        args[t] = (phase1_arg){.storage = s, .seed = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1),
                               .ops = OPS_PER_THREAD, .start = &start};
        pthread_create(&threads[t], NULL, phase1_worker, &args[t]);
    }
    long failed_locks = 0, low_counts = 0, bad_data = 0;
    for (int t = 0; t < NUM_THREADS; t++) {
        pthread_join(threads[t], NULL);
        failed_locks += args[t].failed_locks;
        low_counts += args[t].low_counts;
        bad_data += args[t].bad_data;
    }
    pthread_barrier_destroy(&start);
    CHECK_EQ(failed_locks, 0, "weak_lock failures while main held a strong reference");
    CHECK_EQ(low_counts, 0, "count snapshots below the references provably held");
    CHECK_EQ(bad_data, 0, "data reads that found the buffer changed or gone");
    CHECK_EQ(tt_storage_use_count(s), 1, "use_count after all threads joined");
    CHECK_EQ(tt_storage_weak_count(s), 1, "weak_count after all threads joined");
    CHECK_EQ(atomic_load(&probe.calls), 0, "deleter calls while main still holds a reference");
    CHECK_EQ(tt_storage_live_objects(), live0 + 1, "live objects before main's release");

    tt_storage_release(s);
    CHECK_EQ(atomic_load(&probe.calls), 1, "deleter calls after main's release");
    CHECK_EQ(atomic_load(&probe.wrong_data), 0, "deleter calls with a wrong data pointer");
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after main's release");
    printf("phase 1: %d threads x %d ops in %.2f s\n", NUM_THREADS, OPS_PER_THREAD,
           check_now_seconds() - t0);
}

/* ------------------------------------------------------------------ phase 2 */

typedef struct phase2_shared {
    tt_storage *storage;
    atomic_int ready;
    atomic_int go;
    atomic_long attempts; /* weak_lock calls made by all workers so far */
    atomic_int released;  /* the owner of the last strong reference has dropped it */
} phase2_shared;

typedef struct phase2_arg {
    phase2_shared *shared;
    long release_at;  /* >= 0: this worker owns the last strong reference, drops it then */
    long successes;   /* weak_lock returned 1 */
    long resurrections; /* weak_lock returned 1 after it had returned 0 */
    long bad_data;
} phase2_arg;

static void wait_for_go(phase2_shared *sh) {
    atomic_fetch_add(&sh->ready, 1);
    while (!atomic_load(&sh->go)) {
        sched_yield();
    }
}

/* Spins on weak_lock/release until the lock has failed ZERO_CONFIRMATIONS times, then drops
   its weak reference. Workers that keep locking can keep the count above zero forever (a
   livelock of the test, not of the code), so once the last owner has released, each worker
   makes at most POST_RELEASE_LOCKS more successful locks and then waits, holding nothing,
   until the count is 0. It never yields while holding a reference, for the same reason. */
static void *phase2_worker(void *arg) {
    enum { POST_RELEASE_LOCKS = 16 };
    phase2_arg *a = arg;
    phase2_shared *sh = a->shared;
    tt_storage *s = sh->storage;
    wait_for_go(sh);
    int zero_seen = 0;
    int confirmations = 0;
    long post_release = 0;
    for (long i = 0; confirmations < ZERO_CONFIRMATIONS; i++) {
        if (i == a->release_at) {
            tt_storage_release(s); /* the owner's reference, possibly the last strong one */
            atomic_store(&sh->released, 1);
        }
        if (post_release >= POST_RELEASE_LOCKS) {
            while (tt_storage_use_count(s) > 0) {
                sched_yield();
            }
        }
        int locked = tt_storage_weak_lock(s);
        atomic_fetch_add_explicit(&sh->attempts, 1, memory_order_relaxed);
        if (locked) {
            a->successes++;
            if (zero_seen) {
                a->resurrections++;
            }
            if (!data_intact(s, (uint64_t)i)) {
                a->bad_data++;
            }
            tt_storage_release(s);
            if (atomic_load(&sh->released)) {
                post_release++;
            }
        } else {
            zero_seen = 1;
            confirmations++;
        }
        if ((i & 31) == 31) {
            sched_yield(); /* 8 spinning threads on few cores: let the owner run */
        }
    }
    tt_storage_weak_release(s);
    return NULL;
}

/* One round: every worker gets a weak reference; the last strong one is dropped by main once
   the workers made a random number of lock attempts (releaser < 0), or by worker `releaser`
   after a random number of its own attempts. */
static void phase2_round(uint64_t *rng, int releaser, long *successes) {
    int64_t live0 = tt_storage_live_objects();
    deleter_probe probe;
    phase2_shared sh;
    sh.storage = make_counted_storage(&probe);
    atomic_init(&sh.ready, 0);
    atomic_init(&sh.go, 0);
    atomic_init(&sh.attempts, 0);
    atomic_init(&sh.released, 0);
    long delay = (long)(xorshift64(rng) % 2000);

    pthread_t threads[NUM_THREADS];
    phase2_arg args[NUM_THREADS];
    for (int t = 0; t < NUM_THREADS; t++) {
        tt_storage_weak_retain(sh.storage);
        args[t] = (phase2_arg){.shared = &sh, .release_at = t == releaser ? delay : -1};
        pthread_create(&threads[t], NULL, phase2_worker, &args[t]);
    }
    while (atomic_load(&sh.ready) < NUM_THREADS) {
        sched_yield();
    }
    atomic_store(&sh.go, 1);
    if (releaser < 0) {
        while (atomic_load_explicit(&sh.attempts, memory_order_relaxed) < delay) {
            sched_yield();
        }
        tt_storage_release(sh.storage); /* main's, the last strong reference */
        atomic_store(&sh.released, 1);
    }
    long resurrections = 0, bad_data = 0;
    for (int t = 0; t < NUM_THREADS; t++) {
        pthread_join(threads[t], NULL);
        resurrections += args[t].resurrections;
        bad_data += args[t].bad_data;
        *successes += args[t].successes;
    }
    CHECK_EQ(resurrections, 0, "weak_lock successes after a failure (zero must be final)");
    CHECK_EQ(bad_data, 0, "data reads under a weak_lock'ed reference that found it changed");
    CHECK_EQ(atomic_load(&probe.calls), 1, "deleter calls in a phase 2 round");
    CHECK_EQ(atomic_load(&probe.wrong_data), 0, "deleter calls with a wrong data pointer");
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after a phase 2 round");
}

/* Phase 2: weak_lock racing with the last strong release, main or a worker releasing. */
static void test_phase2_last_release_race(void) {
    double t0 = check_now_seconds();
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    long main_successes = 0, worker_successes = 0;
    for (int round = 0; round < PHASE2_ROUNDS; round++) {
        phase2_round(&rng, -1, &main_successes);
    }
    for (int round = 0; round < PHASE2_ROUNDS; round++) {
        phase2_round(&rng, round % NUM_THREADS, &worker_successes);
    }
    /* Not a property of the code, a property of the test: the race must have been run. */
    CHECK(main_successes > 0 && worker_successes > 0,
          "no weak_lock ever succeeded before the release (main %ld, worker %ld): the race was "
          "not exercised", main_successes, worker_successes);
    printf("phase 2: 2 x %d rounds in %.2f s (weak_lock successes: %ld main-release, %ld "
           "worker-release)\n", PHASE2_ROUNDS, check_now_seconds() - t0, main_successes,
           worker_successes);
}

int main(void) {
    test_exact_counts();
    test_creation_edges();
    test_phase1_mixed_traffic();
    test_phase2_last_release_race();
    return check_report("test_refcount_stress");
}
