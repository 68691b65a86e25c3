/*
 * test_loss.c: tt_nll_pick and tt_cross_entropy_backward against plain loops, for what only the
 * sanitizers can see.
 *
 * Values and gradients are tested from Python against PyTorch; here every operand lives in a
 * buffer of exactly the size it spans (logits strided, targets strided), so AddressSanitizer
 * reports a read or write past one, and the backward runs on enough rows for two threads, so
 * ThreadSanitizer sees its chunks. A target outside [0, c) must come back as TT_ERR_INDEX.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "tt/kernels/loss.h"
#include "tt/kernels/parallel.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double next_uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Log-probabilities (n x c, row stride c) of random logits, computed in double. */
static void fill_log_probabilities(double *logp, int64_t n, int64_t c) {
    for (int64_t i = 0; i < n; i++) {
        double *row = logp + i * c, top = -INFINITY, total = 0;
        for (int64_t j = 0; j < c; j++) {
            row[j] = 4 * next_uniform() - 2;
            top = row[j] > top ? row[j] : top;
        }
        for (int64_t j = 0; j < c; j++) total += exp(row[j] - top);
        for (int64_t j = 0; j < c; j++) row[j] -= top + log(total);
    }
}

static void test_pick(void) {
    const int64_t n = 5, c = 3, ts = 2;
    double logp[15];
    int64_t target[2 * 5 - 1]; /* stride 2: exactly the span of 5 targets */
    fill_log_probabilities(logp, n, c);
    for (int64_t i = 0; i < n; i++) target[i * ts] = i % c;
    for (int64_t i = 0; i < n - 1; i++) target[i * ts + 1] = 99; /* between the targets: never read */
    double rows[5], sum = 0, mean = 0;
    CHECK_STATUS(tt_nll_pick(TT_FLOAT64, n, c, (uintptr_t)logp, c, 1, (uintptr_t)target, ts, 0, (uintptr_t)rows),
                 TT_OK, "tt_nll_pick none");
    CHECK_STATUS(tt_nll_pick(TT_FLOAT64, n, c, (uintptr_t)logp, c, 1, (uintptr_t)target, ts, 1, (uintptr_t)&sum),
                 TT_OK, "tt_nll_pick sum");
    CHECK_STATUS(tt_nll_pick(TT_FLOAT64, n, c, (uintptr_t)logp, c, 1, (uintptr_t)target, ts, 2, (uintptr_t)&mean),
                 TT_OK, "tt_nll_pick mean");
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        CHECK(rows[i] == -logp[i * c + i % c], "row %ld: %g, expected %g", (long)i, rows[i], -logp[i * c + i % c]);
        want += rows[i];
    }
    CHECK(sum == want && mean == want / n, "sum %g mean %g, expected %g and %g", sum, mean, want, want / n);
    /* the logits read transposed: column stride c... here row stride 1, column stride n */
    float logp_t[15], rows_t[5];
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < c; j++) logp_t[j * n + i] = (float)logp[i * c + j];
    CHECK_STATUS(tt_nll_pick(TT_FLOAT32, n, c, (uintptr_t)logp_t, 1, n, (uintptr_t)target, ts, 0, (uintptr_t)rows_t),
                 TT_OK, "tt_nll_pick transposed float32");
    for (int64_t i = 0; i < n; i++) {
        CHECK(rows_t[i] == -(float)logp[i * c + i % c], "transposed row %ld: %g", (long)i, (double)rows_t[i]);
    }
    float empty_mean = 0;
    CHECK_STATUS(tt_nll_pick(TT_FLOAT32, 0, c, 0, c, 1, 0, 1, 2, (uintptr_t)&empty_mean), TT_OK, "empty mean");
    CHECK(isnan(empty_mean), "the mean of no rows: %g, expected NaN", (double)empty_mean);
    target[2 * ts] = c; /* out of range */
    CHECK_STATUS(tt_nll_pick(TT_FLOAT64, n, c, (uintptr_t)logp, c, 1, (uintptr_t)target, ts, 1, (uintptr_t)&sum),
                 TT_ERR_INDEX, "tt_nll_pick bad target");
    CHECK_STATUS(tt_nll_pick(TT_FLOAT64, n, c, (uintptr_t)logp, c, 1, (uintptr_t)target, ts, 3, (uintptr_t)&sum),
                 TT_ERR_INVALID_ARG, "tt_nll_pick bad reduction");
    CHECK_STATUS(tt_nll_pick(TT_INT32, n, c, (uintptr_t)logp, c, 1, (uintptr_t)target, ts, 1, (uintptr_t)&sum),
                 TT_ERR_UNSUPPORTED_DTYPE, "tt_nll_pick int32");
}

static void test_backward(int threads) {
    CHECK_STATUS(tt_set_num_threads(threads), TT_OK, "tt_set_num_threads");
    const int64_t n = 700, c = 100; /* 70K elements: two chunks on two threads */
    double *logp = malloc((size_t)(n * c) * sizeof(double)), *out = malloc((size_t)(n * c) * sizeof(double));
    float *logp_f = malloc((size_t)(n * c) * sizeof(float)), *out_f = malloc((size_t)(n * c) * sizeof(float));
    int64_t *target = malloc((size_t)n * sizeof(int64_t));
    double *grad = malloc((size_t)n * sizeof(double));
    float grad_f = 0.5f;
    fill_log_probabilities(logp, n, c);
    for (int64_t i = 0; i < n * c; i++) logp_f[i] = (float)logp[i];
    for (int64_t i = 0; i < n; i++) {
        target[i] = (int64_t)(next_uniform() * (double)c);
        grad[i] = next_uniform() - 0.5;
    }
    CHECK_STATUS(tt_cross_entropy_backward(TT_FLOAT64, n, c, (uintptr_t)logp, (uintptr_t)target, 1, (uintptr_t)grad, 1,
                                           1.0, (uintptr_t)out),
                 TT_OK, "backward float64, one gradient per row");
    CHECK_STATUS(tt_cross_entropy_backward(TT_FLOAT32, n, c, (uintptr_t)logp_f, (uintptr_t)target, 1,
                                           (uintptr_t)&grad_f, 0, (double)n, (uintptr_t)out_f),
                 TT_OK, "backward float32, the mean's one gradient");
    double worst = 0, worst_f = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < c; j++) {
            const double onehot = j == target[i] ? 1.0 : 0.0, p = exp(logp[i * c + j]);
            worst = fmax(worst, fabs(out[i * c + j] - (p - onehot) * grad[i]));
            worst_f = fmax(worst_f, fabs(out_f[i * c + j] - (p - onehot) * (0.5 / (double)n)));
        }
    }
    CHECK(worst < 1e-15, "float64 backward: max error %g", worst);
    CHECK(worst_f < 1e-9, "float32 backward: max error %g", worst_f);
    target[n - 1] = -1;
    CHECK_STATUS(tt_cross_entropy_backward(TT_FLOAT64, n, c, (uintptr_t)logp, (uintptr_t)target, 1, (uintptr_t)grad, 1,
                                           1.0, (uintptr_t)out),
                 TT_ERR_INDEX, "backward bad target");
    CHECK_STATUS(tt_cross_entropy_backward(TT_FLOAT64, n, c, (uintptr_t)logp, (uintptr_t)target, 1, (uintptr_t)grad, 1,
                                           0.0, (uintptr_t)out),
                 TT_ERR_INVALID_ARG, "backward zero divisor");
    free(logp);
    free(out);
    free(logp_f);
    free(out_f);
    free(target);
    free(grad);
}

int main(void) {
    test_pick();
    test_backward(1);
    test_backward(2);
    return check_report("test_loss");
}
