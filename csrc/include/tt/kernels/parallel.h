/*
 * kernels/parallel.h: how many threads kernels may use, and the one way kernels split work.
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. C sources include it after
 * "tt/tt.h".
 */

/* The number of threads kernels may use (the calling thread counts as one). Starts at the
   number of online CPUs, capped at 64. tt_set_num_threads refuses n < 1 or n > 64 with
   TT_ERR_INVALID_ARG. Thread-safe; a change applies to the next parallel region. */
tt_status tt_set_num_threads(int n);
int tt_get_num_threads(void);

/* A piece of parallel work: process items [begin, end) of the region, with the caller's `ctx`. */
typedef void (*tt_parallel_fn)(int64_t begin, int64_t end, void *ctx);

/* Runs fn over [0, n) split into contiguous chunks of at least `grain` items, on at most
   tt_get_num_threads() threads, the calling thread among them; returns when every chunk is done.
   Small work (n <= grain) runs on the calling thread alone. A call made from inside a running
   region runs serially on its thread (no nested parallelism), and so does a call made while
   another thread's region occupies the pool (several callers never wait for each other). The
   chunks depend only on n, grain and the thread count; threads claim them in any order, so fn
   must let every chunk write only its own results. fn must not fail: a kernel that can fail
   records its status in ctx. Borrows ctx. */
void tt_parallel_for(int64_t n, int64_t grain, tt_parallel_fn fn, void *ctx);
