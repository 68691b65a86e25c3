/*
 * check.h: the assertion helpers of the C tests. No framework: a failed CHECK prints
 * file:line, the condition and a printf-style message (say what was expected and what came
 * back), counts the failure and carries on, so one run shows every broken property.
 * A test's main() ends with `return check_report("test name");`, which is non-zero when any
 * check failed.
 *
 * The counters are atomic, so CHECK may be used from worker threads; hot loops should still
 * test with a plain `if` and call CHECK only on the failure path.
 */
#ifndef TT_TESTS_CHECK_H
#define TT_TESTS_CHECK_H

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "tt/tt.h"

static atomic_long check_total = 0;
static atomic_long check_failed = 0;

/* Records one check; returns its truth value so callers can stop early. */
static inline int check_record(int ok) {
    atomic_fetch_add_explicit(&check_total, 1, memory_order_relaxed);
    if (!ok) {
        atomic_fetch_add_explicit(&check_failed, 1, memory_order_relaxed);
    }
    return ok;
}

/* CHECK(cond, fmt, ...): fmt describes the expectation, e.g. "use_count: expected 1, got %lld". */
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!check_record((cond) ? 1 : 0)) {                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

/* Integer equality with both values printed. `what` is a string naming the quantity. */
#define CHECK_EQ(got, expected, what)                                                      \
    do {                                                                                   \
        long long check_got_ = (long long)(got);                                           \
        long long check_exp_ = (long long)(expected);                                      \
        CHECK(check_got_ == check_exp_, "%s: expected %lld, got %lld", (what), check_exp_, \
              check_got_);                                                                 \
    } while (0)

/* A tt_status compared with the expected one, both printed by name. */
#define CHECK_STATUS(got, expected, what)                                                  \
    do {                                                                                   \
        tt_status check_gs_ = (got);                                                       \
        tt_status check_es_ = (expected);                                                  \
        CHECK(check_gs_ == check_es_, "%s: expected status %d (%s), got %d (%s)", (what),  \
              (int)check_es_, tt_status_string(check_es_), (int)check_gs_,                 \
              tt_status_string(check_gs_));                                                \
    } while (0)

/* A tiny per-thread random generator for the stress tests (xorshift64; state must not be 0). */
static inline uint64_t xorshift64(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static inline double check_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int check_report(const char *name) {
    long total = atomic_load(&check_total);
    long failed = atomic_load(&check_failed);
    printf("%s: %ld checks, %ld failed\n", name, total, failed);
    fflush(stdout);
    return failed == 0 ? 0 : 1;
}

#endif /* TT_TESTS_CHECK_H */
