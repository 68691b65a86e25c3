/*
 * test_parallel.c: the thread pool behind tt_parallel_for, and kernels that run on it.
 *
 * What only a C test (and ThreadSanitizer) can see:
 *   - every item of a region is processed exactly once, over many regions of varied sizes and
 *     grains, while other threads change the thread count concurrently (the pool resizes);
 *   - a call from inside a region runs serially on its thread (nested regions);
 *   - several pthreads calling tt_parallel_for at once (the pool serves one region, the others
 *     run theirs serially), with no race on anything a region touches;
 *   - threaded elementwise (with an integer division by zero found by one chunk only), copy,
 *     reductions and softmax give the results of a one-thread run: bit for bit where the work
 *     splits by output, and for full reductions too (their parts do not depend on the count).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tt/kernels/elementwise.h"
#include "tt/kernels/parallel.h"
#include "tt/kernels/reduce.h"

/* ------------------------------------------------------------------ the pool */

typedef struct count_ctx {
    atomic_int *hits;       /* one counter per item */
    int64_t n;
    atomic_int nested_bad;  /* nested regions that did not run serially in one call */
    int nest;
} count_ctx;

typedef struct nested_probe {
    int calls;
    int64_t begin, end;
} nested_probe;

static void probe_fn(int64_t begin, int64_t end, void *arg) {
    nested_probe *probe = arg;     /* plain fields: a nested region must stay on this thread */
    probe->calls++;
    probe->begin = begin;
    probe->end = end;
}

static void count_fn(int64_t begin, int64_t end, void *arg) {
    count_ctx *ctx = arg;
    if (begin < 0 || end > ctx->n || begin >= end) {
        atomic_fetch_add(&ctx->nested_bad, 1000);
        return;
    }
    for (int64_t i = begin; i < end; i++) {
        atomic_fetch_add_explicit(&ctx->hits[i], 1, memory_order_relaxed);
    }
    if (ctx->nest) {
        nested_probe probe = {0, -1, -1};
        tt_parallel_for(100000, 1, probe_fn, &probe);
        if (probe.calls != 1 || probe.begin != 0 || probe.end != 100000) {
            atomic_fetch_add(&ctx->nested_bad, 1);
        }
    }
}

/* One region over n items; checks each was processed exactly once. Returns 1 when right. */
static int one_region(int64_t n, int64_t grain, int nest) {
    atomic_int *hits = calloc((size_t)(n > 0 ? n : 1), sizeof(atomic_int));
    count_ctx ctx = {hits, n, 0, nest};
    tt_parallel_for(n, grain, count_fn, &ctx);
    int ok = atomic_load(&ctx.nested_bad) == 0;
    for (int64_t i = 0; i < n; i++) {
        if (atomic_load_explicit(&hits[i], memory_order_relaxed) != 1) {
            ok = 0;
            break;
        }
    }
    free(hits);
    return ok;
}

typedef struct worker_probe {
    pthread_t caller;
    atomic_int elsewhere;
} worker_probe;

static void worker_fn(int64_t begin, int64_t end, void *arg) {
    worker_probe *wp = arg;
    (void)begin;
    (void)end;
    if (!pthread_equal(pthread_self(), wp->caller)) {
        atomic_fetch_add(&wp->elsewhere, 1);
    }
    struct timespec pause = {0, 2000000};    /* 2 ms */
    nanosleep(&pause, NULL);
}

/* Records the first chunk each thread ran: the caller's and one worker's. */
typedef struct first_chunk_probe {
    pthread_t caller;
    atomic_llong caller_first, worker_first;   /* -1 until set */
} first_chunk_probe;

static void first_chunk_fn(int64_t begin, int64_t end, void *arg) {
    first_chunk_probe *fp = arg;
    (void)end;
    long long unset = -1;
    atomic_llong *first = pthread_equal(pthread_self(), fp->caller) ? &fp->caller_first : &fp->worker_first;
    atomic_compare_exchange_strong(first, &unset, (long long)begin);
    struct timespec pause = {0, 1000000};    /* 1 ms */
    nanosleep(&pause, NULL);
}

static atomic_int stop_changing = 0;

static void *change_threads(void *arg) {
    uint64_t state = (uint64_t)(uintptr_t)arg | 1;
    while (!atomic_load(&stop_changing)) {
        tt_set_num_threads(1 + (int)(xorshift64(&state) % 5));
        sched_yield();
    }
    return NULL;
}

typedef struct caller_arg {
    uint64_t seed;
    int regions;
    atomic_int failures;
} caller_arg;

static void *caller(void *arg) {
    caller_arg *c = arg;
    uint64_t state = c->seed;
    for (int r = 0; r < c->regions; r++) {
        int64_t n = (int64_t)(xorshift64(&state) % 5000);
        int64_t grain = 1 + (int64_t)(xorshift64(&state) % 300);
        if (!one_region(n, grain, (int)(xorshift64(&state) % 4 == 0))) {
            atomic_fetch_add(&c->failures, 1);
        }
    }
    return NULL;
}

static void test_pool(void) {
    /* One caller, fixed counts: sizes around the grain and the chunk counts. */
    for (int threads = 1; threads <= 6; threads++) {
        CHECK_STATUS(tt_set_num_threads(threads), TT_OK, "set_num_threads");
        int bad = 0;
        const int64_t sizes[] = {0, 1, 2, 63, 64, 65, 127, 128, 1000, 4097};
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            for (int64_t grain = 1; grain <= 130; grain += 43) {
                bad += !one_region(sizes[s], grain, 0);
                bad += !one_region(sizes[s], grain, 1);
            }
        }
        CHECK_EQ(bad, 0, "regions with an item not processed exactly once (one caller)");
    }
    /* Small work never splits: the whole range in one call. */
    nested_probe probe = {0, -1, -1};
    tt_set_num_threads(4);
    tt_parallel_for(50, 50, probe_fn, &probe);
    CHECK(probe.calls == 1 && probe.begin == 0 && probe.end == 50, "n <= grain: one call over [0, 50), got %d",
          probe.calls);
    /* The pool really runs chunks on other threads: slow chunks leave the workers time to wake. */
    int on_worker = 0;
    for (int attempt = 0; attempt < 50 && !on_worker; attempt++) {
        worker_probe wp = {pthread_self(), 0};
        tt_parallel_for(4, 1, worker_fn, &wp);
        on_worker = atomic_load(&wp.elsewhere) > 0;
    }
    CHECK(on_worker, "no chunk ever ran on a pool worker");
    /* Each thread starts on its own run of chunks (Note [Thread pool invariants]): on 2 threads, 8
       items in 8 chunks, the caller's run is [0, 4) and the worker's [4, 8). Either may steal
       from the other once its own run is done, so only the first chunk each ran is fixed; a
       worker that wakes after the caller finished everything runs nothing, hence the retries. */
    tt_set_num_threads(2);
    int own_runs = 0;
    for (int attempt = 0; attempt < 50 && !own_runs; attempt++) {
        first_chunk_probe fp = {pthread_self(), -1, -1};
        tt_parallel_for(8, 1, first_chunk_fn, &fp);
        own_runs = atomic_load(&fp.caller_first) == 0 && atomic_load(&fp.worker_first) == 4;
    }
    CHECK(own_runs, "the caller and the worker did not start on their own runs of chunks");
    /* Several callers and a thread changing the count meanwhile. */
    enum { CALLERS = 4 };
    pthread_t changer, callers[CALLERS];
    caller_arg args[CALLERS];
    atomic_store(&stop_changing, 0);
    pthread_create(&changer, NULL, change_threads, (void *)(uintptr_t)12345);
    for (int i = 0; i < CALLERS; i++) {
        args[i].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        args[i].regions = 300;
        atomic_init(&args[i].failures, 0);
        pthread_create(&callers[i], NULL, caller, &args[i]);
    }
    int failures = 0;
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(callers[i], NULL);
        failures += atomic_load(&args[i].failures);
    }
    atomic_store(&stop_changing, 1);
    pthread_join(changer, NULL);
    CHECK_EQ(failures, 0, "regions with an item not processed exactly once (concurrent callers)");
}

/* ------------------------------------------------------------------ kernels on the pool */

enum { ROWS = 300, COLS = 700 };   /* 210000 elements: several chunks at the kernels' grain */

static void test_kernels(void) {
    const int64_t n = (int64_t)ROWS * COLS;
    float *a = malloc(sizeof(float) * (size_t)n), *b = malloc(sizeof(float) * (size_t)n);
    float *out1 = malloc(sizeof(float) * (size_t)n), *out2 = malloc(sizeof(float) * (size_t)n);
    int64_t *ia = malloc(sizeof(int64_t) * (size_t)n), *ib = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *iout = malloc(sizeof(int64_t) * (size_t)n);
    uint64_t state = 42;
    for (int64_t i = 0; i < n; i++) {
        a[i] = (float)((double)(xorshift64(&state) % 20001) / 1000.0 - 10.0);
        b[i] = (float)((double)(xorshift64(&state) % 20001) / 1000.0 - 10.0);
        ia[i] = (int64_t)(xorshift64(&state) % 1000) - 500;
        ib[i] = 1 + (int64_t)(xorshift64(&state) % 7);
    }
    const int64_t shape[2] = {ROWS, COLS}, rowmajor[2] = {COLS, 1}, colmajor[2] = {1, ROWS};
    const int64_t flat[1] = {n}, unit[1] = {1};
    const uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;

    /* Elementwise with a transposed operand, 1 thread vs 3: bit for bit. */
    tt_set_num_threads(1);
    CHECK_STATUS(tt_binary(TT_ATAN2, 2, shape, pa, rowmajor, pb, colmajor, (uintptr_t)out1, rowmajor, TT_FLOAT32),
                 TT_OK, "atan2, 1 thread");
    tt_set_num_threads(3);
    CHECK_STATUS(tt_binary(TT_ATAN2, 2, shape, pa, rowmajor, pb, colmajor, (uintptr_t)out2, rowmajor, TT_FLOAT32),
                 TT_OK, "atan2, 3 threads");
    CHECK(memcmp(out1, out2, sizeof(float) * (size_t)n) == 0, "atan2: threaded result differs from one thread");

    /* Integer division: right on every chunk, and a zero divisor in the last chunk is reported. */
    CHECK_STATUS(tt_binary(TT_FLOOR_DIVIDE, 1, flat, (uintptr_t)ia, unit, (uintptr_t)ib, unit, (uintptr_t)iout, unit,
                           TT_INT64), TT_OK, "floor_divide");
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t q = ia[i] / ib[i];
        if ((ia[i] % ib[i] != 0) && (ia[i] < 0)) {
            q--;
        }
        wrong += iout[i] != q;
    }
    CHECK_EQ(wrong, 0, "floor_divide: wrong quotients");
    ib[n - 3] = 0;
    CHECK_STATUS(tt_binary(TT_FLOOR_DIVIDE, 1, flat, (uintptr_t)ia, unit, (uintptr_t)ib, unit, (uintptr_t)iout, unit,
                           TT_INT64), TT_ERR_ZERO_DIVISION, "floor_divide by a zero in the last chunk");

    /* A strided copy (transpose) on 3 threads. */
    CHECK_STATUS(tt_copy_strided(2, shape, pa, colmajor, TT_FLOAT32, (uintptr_t)out1, rowmajor, TT_FLOAT32), TT_OK,
                 "copy");
    wrong = 0;
    for (int64_t r = 0; r < ROWS; r++) {
        for (int64_t c = 0; c < COLS; c++) {
            wrong += out1[r * COLS + c] != a[r + c * ROWS];
        }
    }
    CHECK_EQ(wrong, 0, "copy: misplaced elements");

    /* Reductions: over rows, over columns and to one value, 1 thread vs 3, bit for bit. */
    const uint64_t masks[3] = {1, 2, 3};
    const int ops[4] = {TT_RED_SUM, TT_RED_MAX, TT_RED_ARGMIN, TT_RED_VAR};
    for (int o = 0; o < 4; o++) {
        for (int k = 0; k < 3; k++) {
            const int64_t ostr[2] = {masks[k] & 1 ? 0 : (masks[k] & 2 ? 1 : COLS), masks[k] & 2 ? 0 : 1};
            tt_set_num_threads(1);
            int is_arg = ops[o] == TT_RED_ARGMIN;
            int64_t r1[ROWS > COLS ? ROWS : COLS], r3[ROWS > COLS ? ROWS : COLS];
            memset(r1, 0, sizeof(r1));
            memset(r3, 0, sizeof(r3));
            CHECK_STATUS(tt_reduce(ops[o], 2, shape, pa, rowmajor, TT_FLOAT32, masks[k], 1.0, (uintptr_t)r1, ostr, 0,
                                   NULL), TT_OK, "reduce, 1 thread");
            tt_set_num_threads(3);
            CHECK_STATUS(tt_reduce(ops[o], 2, shape, pa, rowmajor, TT_FLOAT32, masks[k], 1.0, (uintptr_t)r3, ostr, 0,
                                   NULL), TT_OK, "reduce, 3 threads");
            CHECK(memcmp(r1, r3, sizeof(r1)) == 0, "reduce op %d mask %d: threaded result differs", ops[o],
                  (int)masks[k]);
            (void)is_arg;
        }
    }
    /* The full sum against a double-precision reference. */
    float total = 0;
    CHECK_STATUS(tt_reduce(TT_RED_SUM, 1, flat, pa, unit, TT_FLOAT32, 1, 0.0, (uintptr_t)&total, unit, 0, NULL),
                 TT_OK, "full sum");
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        want += a[i];
    }
    CHECK(fabs(total - want) <= 1e-6 * fabs(want) + 1e-2, "full sum: expected %g, got %g", want, (double)total);

    /* Softmax along the rows, 1 thread vs 3. */
    tt_set_num_threads(1);
    CHECK_STATUS(tt_softmax(0, 2, shape, pa, rowmajor, TT_FLOAT32, 1, (uintptr_t)out1, rowmajor), TT_OK, "softmax");
    tt_set_num_threads(3);
    CHECK_STATUS(tt_softmax(0, 2, shape, pa, rowmajor, TT_FLOAT32, 1, (uintptr_t)out2, rowmajor), TT_OK, "softmax");
    CHECK(memcmp(out1, out2, sizeof(float) * (size_t)n) == 0, "softmax: threaded result differs from one thread");

    free(a);
    free(b);
    free(out1);
    free(out2);
    free(ia);
    free(ib);
    free(iout);
}

int main(void) {
    test_pool();
    test_kernels();
    return check_report("test_parallel");
}
