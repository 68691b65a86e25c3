/*
 * parallel.c: the thread count and tt_parallel_for (see tt/kernels/parallel.h), on a persistent
 * pool of pthreads.
 *
 * Note [Thread pool invariants]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * One process-wide pool. Its workers are created lazily by the first region that wants them and
 * live until the process ends (or until a smaller thread count asks the surplus ones to exit).
 * A region of n items is cut into `nchunks` contiguous chunks (at most CHUNKS_PER_THREAD per
 * thread, each of at least `grain` items); chunk c is
 * [c * n / nchunks, (c + 1) * n / nchunks). The cut depends only on n, grain and the thread
 * count, never on which thread runs what, so a kernel that keeps one partial result per chunk
 * gets the same answer every time at a given thread count.
 *
 * Who runs a region:
 *   - n <= grain, a thread count of 1, or a call from inside a running region (the thread-local
 *     `in_region` flag): fn(0, n) on the calling thread, and the pool is never touched. Every
 *     thread sets in_region while it runs any part of a region, serial or not, so a kernel
 *     called from a region's fn never competes for the pool;
 *   - otherwise the caller takes `region_lock` with trylock. If another thread holds it (several
 *     Python threads calling kernels at once), the caller runs its region serially instead of
 *     waiting: no thread ever blocks on another caller's region, so there is no deadlock and no
 *     convoy. Holding region_lock, the caller owns the job fields and the worker set.
 *
 * Claiming chunks. The region's participants are the caller (slot 0) and the workers (worker i
 * is slot i + 1). Slot p owns a contiguous run of chunks, [p * nchunks / P, (p + 1) * nchunks / P)
 * for P participants, and `claim[p]` packs (generation << 32 | next chunk of that run) in one
 * 64-bit atomic. The caller publishes a job under `lock` with a new generation; everyone claims
 * chunks by compare-and-swap, first from its own slot, then from the others' (stealing), until
 * every slot is used up. Owning a fixed run is for the caches: the same thread gets the same part
 * of the data in every region of one size, so a sequence of ops on a tensor that fits in the L2
 * caches finds each half where the last op left it. With one shared counter the halves swapped
 * cores from op to op, and (256, 512) float32 a + b ran 1.8x faster on 2 threads than on one
 * instead of 2.2-2.6x. Stealing keeps the old property: a worker the OS schedules late leaves its
 * run to the others. A worker that wakes late, or that copied a job and was preempted, can only
 * claim a chunk whose generation it copied the job with: once the generation moved on, its CAS
 * fails and it never calls a stale fn/ctx. The caller claims like everyone else, so a region
 * finishes even if no worker ever wakes (a busy machine), and workers that arrive late find
 * nothing to do.
 *
 * Completion. Every finished chunk adds 1 to `done`; the region returns when done == nchunks.
 * The thread that finishes the last chunk takes `lock` and broadcasts `done_cv`; the caller
 * checks `done` under `lock` before sleeping on done_cv, so the wakeup cannot be lost. `done`
 * is reset before the job is published and only chunks of the current generation add to it
 * (they were claimed with that generation, and the caller does not return before all of them
 * finished), so no late increment can leak into the next region.
 *
 * Memory orders:
 *   - The job fields (fn, ctx, n, nchunks, job_slots, generation) are written and read under `lock`;
 *     the mutex orders them, and the caller's writes to its own data before the region
 *     happen-before the workers' reads of it (caller unlock -> worker lock).
 *   - `claim[p]`: the CAS hands out chunk indices; the job it refers to was already read under
 *     `lock`, so it orders nothing else. It is acq_rel anyway (cheap next to a chunk) so that
 *     the caller's reset (a release store) is seen before any claim of the new generation.
 *     claim[0] is stored last, and the idle workers watch it for the new generation.
 *     The generation is 32 bits: a worker would have to sleep through 2^32 regions between
 *     copying a job and claiming for a stale claim to match.
 *   - `done`: fetch_add with release after a chunk, so the chunk's writes (its output range)
 *     happen-before the caller's acquire load that sees done == nchunks; the caller then reads
 *     every chunk's output, including per-chunk partials in ctx.
 *   - `num_threads` is relaxed: it is a setting read once per region, ordering nothing.
 *   - `in_region` is thread-local: set by every thread around the chunks it runs.
 * Idle workers first watch `claim[0]` for a new generation for up to WORKER_SPIN_NS (a relaxed
 * loop with a pause instruction), then sleep on `work_cv`: ops come in sequences, and waking a
 * sleeping worker cost tens of microseconds on this VM (exp of 256K floats took 57 us on 2 threads
 * against 66 on one). The watch is only a shortcut: what the worker does next is decided under
 * `lock`, as before, so a region published during the watch, or after it, is never missed. Resizing happens under region_lock: more
 * workers are started when the count rises; when it falls, `wanted` is lowered under `lock`,
 * the surplus workers (the highest indices) are woken, exit, and are joined. A thread that
 * cannot be created just leaves the pool smaller. Nothing is joined at exit: idle workers are
 * blocked in pthread_cond_wait and the process may end under them.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "tt/tt.h"
#include "tt/kernels/parallel.h"

#define TT_MAX_THREADS 64
/* A region is cut into up to this many chunks per thread (each still >= grain items): threads
   claim chunks as they come, so a worker the OS schedules late (a busy machine) leaves its share
   to the others instead of holding the region up. */
#define CHUNKS_PER_THREAD 4

static atomic_int num_threads = 0;   /* 0: not yet set, use the CPU count */

/* The CPU count, read once: sysconf reads /sys (about 4 us), and every parallel_for asks. A
   race between two first callers only makes both read it; they store the same value. */
static atomic_int cpu_count = 0;

static int online_cpus(void) {
    int cached = atomic_load_explicit(&cpu_count, memory_order_relaxed);
    if (cached > 0) {
        return cached;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    int count = n < 1 ? 1 : (n > TT_MAX_THREADS ? TT_MAX_THREADS : (int)n);
    atomic_store_explicit(&cpu_count, count, memory_order_relaxed);
    return count;
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

/* ------------------------------------------------------------------ the pool */

static _Thread_local int in_region = 0;

static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;  /* one region on the pool at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;         /* the job fields, wanted, condvars */
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;

/* Under `lock`. */
static uint32_t generation = 0;
static tt_parallel_fn job_fn = NULL;
static void *job_ctx = NULL;
static int64_t job_n = 0;
static int64_t job_nchunks = 0;
static int wanted = 0;                  /* workers with index >= wanted exit */

/* Under region_lock only. */
static pthread_t workers[TT_MAX_THREADS];
static uint32_t start_generation[TT_MAX_THREADS];   /* written before pthread_create */
static int alive = 0;

/* Per slot: generation << 32 | next chunk index of the slot's run. Each on its own cache line,
   so that claims from one's own run do not bounce a line shared with the other threads. */
typedef struct {
    _Alignas(64) atomic_uint_fast64_t next;
} slot_claim;
static slot_claim claim[TT_MAX_THREADS];
static int64_t job_slots = 0;           /* under `lock`: participants of the current region */
static atomic_int_fast64_t done = 0;    /* chunks finished in the current region */

/* The end of slot p's run of chunks (its start is the end of slot p - 1's). */
static int64_t slot_end(int64_t p, int64_t slots, int64_t nchunks) { return (p + 1) * nchunks / slots; }

/* Runs chunks of generation `gen` until none is left: the ones of slot `own` first, then the
   other slots' in turn. */
static void run_chunks(uint32_t gen, tt_parallel_fn fn, void *ctx, int64_t n, int64_t nchunks,
                       int64_t slots, int64_t own) {
    for (int64_t k = 0; k < slots; k++) {
        const int64_t p = (own + k) % slots;
        const int64_t end = slot_end(p, slots, nchunks);
        atomic_uint_fast64_t *next = &claim[p].next;
        uint64_t cur = atomic_load_explicit(next, memory_order_acquire);
        for (;;) {
            if ((uint32_t)(cur >> 32) != gen || (int64_t)(cur & 0xffffffffu) >= end) {
                break;
            }
            if (!atomic_compare_exchange_weak_explicit(next, &cur, cur + 1, memory_order_acq_rel,
                                                       memory_order_acquire)) {
                continue;               /* cur was reloaded */
            }
            const int64_t c = (int64_t)(cur & 0xffffffffu);
            /* n * (c + 1) in 128 bits: no overflow for any n. */
            const int64_t begin = (int64_t)((__int128)n * c / nchunks);
            const int64_t end_item = (int64_t)((__int128)n * (c + 1) / nchunks);
            in_region = 1;
            fn(begin, end_item, ctx);
            in_region = 0;
            if (atomic_fetch_add_explicit(&done, 1, memory_order_acq_rel) + 1 == nchunks) {
                pthread_mutex_lock(&lock);
                pthread_cond_broadcast(&done_cv);
                pthread_mutex_unlock(&lock);
            }
            cur = atomic_load_explicit(next, memory_order_acquire);
        }
    }
}

/* How long an idle worker watches for the next region before it sleeps: 1 ms. In a training
   step the Python between two kernels of the backward often takes more than the 100 us this
   was, so workers slept and were woken for every op; at 1 ms the digits CNN's step went from
   about 2.17 to 1.97 ms (5 ms gave no more). OpenMP runtimes spin far longer (Intel's default
   KMP_BLOCKTIME is 200 ms). */
#define WORKER_SPIN_NS 1000000

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Returns when a region newer than `seen` is published in `claim[0]` (acquire: it was stored after
   the job fields, under `lock`) or WORKER_SPIN_NS have passed. Called without `lock`. */
static void watch_for_work(uint32_t seen) {
    const int64_t until = monotonic_ns() + WORKER_SPIN_NS;
    for (int i = 1;; i++) {
        if ((uint32_t)(atomic_load_explicit(&claim[0].next, memory_order_acquire) >> 32) != seen) {
            return;
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (i % 64 == 0 && monotonic_ns() >= until) {
            return;
        }
    }
}

static void *worker_main(void *arg) {
    const int index = (int)(intptr_t)arg;
    uint32_t seen = start_generation[index];   /* regions published after the creation count */
    pthread_mutex_lock(&lock);
    for (;;) {
        if (generation == seen && index < wanted) {
            pthread_mutex_unlock(&lock);
            watch_for_work(seen);
            pthread_mutex_lock(&lock);
        }
        while (generation == seen && index < wanted) {
            pthread_cond_wait(&work_cv, &lock);
        }
        if (index >= wanted) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        seen = generation;
        tt_parallel_fn fn = job_fn;
        void *ctx = job_ctx;
        int64_t n = job_n, nchunks = job_nchunks, slots = job_slots;
        pthread_mutex_unlock(&lock);
        run_chunks(seen, fn, ctx, n, nchunks, slots, (index + 1) % slots);
        pthread_mutex_lock(&lock);
    }
}

/* Under region_lock: make the pool hold `target` workers (fewer if a thread cannot start). */
static void resize(int target) {
    if (target < alive) {
        pthread_mutex_lock(&lock);
        wanted = target;
        pthread_cond_broadcast(&work_cv);
        pthread_mutex_unlock(&lock);
        for (int i = target; i < alive; i++) {
            pthread_join(workers[i], NULL);
        }
        alive = target;
        return;
    }
    pthread_mutex_lock(&lock);
    wanted = target;
    pthread_mutex_unlock(&lock);
    while (alive < target) {
        start_generation[alive] = generation;   /* only the region_lock holder changes it */
        if (pthread_create(&workers[alive], NULL, worker_main, (void *)(intptr_t)alive) != 0) {
            break;
        }
        alive++;
    }
    if (alive < target) {
        pthread_mutex_lock(&lock);
        wanted = alive;
        pthread_mutex_unlock(&lock);
    }
}

/* A region (or the rest of one) on the calling thread alone; calls made inside stay serial. */
static void run_serial(int64_t n, tt_parallel_fn fn, void *ctx) {
    const int outer = in_region;
    in_region = 1;
    fn(0, n, ctx);
    in_region = outer;
}

void tt_parallel_for(int64_t n, int64_t grain, tt_parallel_fn fn, void *ctx) {
    if (n <= 0) {
        return;
    }
    if (grain < 1) {
        grain = 1;
    }
    if (n <= grain || in_region) {  /* small work never asks for the thread count */
        run_serial(n, fn, ctx);
        return;
    }
    const int threads = tt_get_num_threads();
    if (threads <= 1) {
        run_serial(n, fn, ctx);
        return;
    }
    int64_t nchunks = (n - 1) / grain + 1;  /* every chunk holds at least `grain` items */
    if (nchunks > n / grain) {
        nchunks = n / grain;
    }
    if (nchunks > CHUNKS_PER_THREAD * (int64_t)threads) {
        nchunks = CHUNKS_PER_THREAD * (int64_t)threads;
    }
    if (nchunks <= 1 || pthread_mutex_trylock(&region_lock) != 0) {
        run_serial(n, fn, ctx);             /* the pool is busy with another caller's region */
        return;
    }
    if (alive != threads - 1) {
        resize(threads - 1);
    }
    if (alive == 0) {
        pthread_mutex_unlock(&region_lock);
        run_serial(n, fn, ctx);
        return;
    }
    pthread_mutex_lock(&lock);
    generation++;
    job_fn = fn;
    job_ctx = ctx;
    job_n = n;
    job_nchunks = nchunks;
    job_slots = alive + 1;
    atomic_store_explicit(&done, 0, memory_order_relaxed);
    for (int64_t p = job_slots - 1; p >= 0; p--) {   /* claim[0], the one workers watch, last */
        const int64_t start = p == 0 ? 0 : slot_end(p - 1, job_slots, nchunks);
        atomic_store_explicit(&claim[p].next, (uint64_t)generation << 32 | (uint64_t)start,
                              memory_order_release);
    }
    const uint32_t gen = generation;
    const int64_t slots = job_slots;
    if (nchunks - 1 >= alive) {
        pthread_cond_broadcast(&work_cv);
    } else {
        for (int64_t i = 0; i < nchunks - 1; i++) {
            pthread_cond_signal(&work_cv);   /* enough workers for the chunks beyond the caller's */
        }
    }
    pthread_mutex_unlock(&lock);

    run_chunks(gen, fn, ctx, n, nchunks, slots, 0);

    if (atomic_load_explicit(&done, memory_order_acquire) != nchunks) {
        for (int spin = 0; spin < 64 && atomic_load_explicit(&done, memory_order_acquire) != nchunks; spin++) {
            sched_yield();
        }
        pthread_mutex_lock(&lock);
        while (atomic_load_explicit(&done, memory_order_acquire) != nchunks) {
            pthread_cond_wait(&done_cv, &lock);
        }
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_unlock(&region_lock);
}
