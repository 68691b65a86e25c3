/*
 * parallel.c: the thread count and tt_parallel_for (see tt/kernels/parallel.h).
 *
 * This first version runs every region on the calling thread; it fixes the interface that the
 * kernels are written against. The thread pool that splits regions across threads replaces the
 * body of tt_parallel_for without changing its callers.
 */
#include <stdatomic.h>
#include <unistd.h>

#include "tt/tt.h"
#include "tt/kernels/parallel.h"

#define TT_MAX_THREADS 64

static atomic_int num_threads = 0;   /* 0: not yet set, use the CPU count */

static int online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) {
        return 1;
    }
    return n > TT_MAX_THREADS ? TT_MAX_THREADS : (int)n;
}

tt_status tt_set_num_threads(int n) {
    if (n < 1 || n > TT_MAX_THREADS) {
        return TT_ERR_INVALID_ARG;
    }
    atomic_store_explicit(&num_threads, n, memory_order_relaxed);
    return TT_OK;
}

int tt_get_num_threads(void) {
    int n = atomic_load_explicit(&num_threads, memory_order_relaxed);
    return n > 0 ? n : online_cpus();
}

void tt_parallel_for(int64_t n, int64_t grain, tt_parallel_fn fn, void *ctx) {
    (void)grain;
    if (n > 0) {
        fn(0, n, ctx);
    }
}
