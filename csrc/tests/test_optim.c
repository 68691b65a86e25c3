/*
 * test_optim.c: tt_sgd_update against the same steps written out, for what only the sanitizers
 * can see: arrays of exactly n elements (AddressSanitizer), and enough of them for two threads
 * (ThreadSanitizer). Bit-identity with the tensor ops is tested from Python.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "tt/kernels/optim.h"
#include "tt/kernels/parallel.h"

static void test_sgd(int threads, int nesterov, double weight_decay) {
    CHECK_STATUS(tt_set_num_threads(threads), TT_OK, "tt_set_num_threads");
    const int64_t n = 70000;
    double *param = malloc((size_t)n * sizeof(double)), *grad = malloc((size_t)n * sizeof(double));
    double *buf = malloc((size_t)n * sizeof(double)), *want_p = malloc((size_t)n * sizeof(double));
    double *want_b = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        param[i] = want_p[i] = sin((double)i);
        grad[i] = cos((double)i);
    }
    const double lr = 0.01, momentum = 0.9, dampening = nesterov ? 0.0 : 0.25;
    for (int step = 0; step < 2; step++) {
        CHECK_STATUS(tt_sgd_update(TT_FLOAT64, n, (uintptr_t)param, (uintptr_t)grad, (uintptr_t)buf, lr, momentum,
                                   dampening, weight_decay, nesterov, 0, step == 0),
                     TT_OK, "tt_sgd_update");
        for (int64_t i = 0; i < n; i++) {
            double d = grad[i] + weight_decay * want_p[i];
            want_b[i] = step == 0 ? d : want_b[i] * momentum + (1 - dampening) * d;
            d = nesterov ? d + momentum * want_b[i] : want_b[i];
            want_p[i] = want_p[i] + (-lr) * d;
        }
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += param[i] != want_p[i] || buf[i] != want_b[i];
    CHECK(bad == 0, "tt_sgd_update (%d threads, nesterov %d): %ld elements differ", threads, nesterov, (long)bad);
    CHECK_STATUS(tt_sgd_update(TT_FLOAT64, n, (uintptr_t)param, (uintptr_t)grad, 0, lr, momentum, 0, 0, 0, 0, 0),
                 TT_ERR_INVALID_ARG, "momentum without a buffer");
    CHECK_STATUS(tt_sgd_update(TT_INT64, n, (uintptr_t)param, (uintptr_t)grad, (uintptr_t)buf, lr, 0, 0, 0, 0, 0, 0),
                 TT_ERR_UNSUPPORTED_DTYPE, "int64 parameters");
    CHECK_STATUS(tt_sgd_update(TT_FLOAT64, -1, (uintptr_t)param, (uintptr_t)grad, 0, lr, 0, 0, 0, 0, 0, 0),
                 TT_ERR_INVALID_ARG, "negative size");
    free(param);
    free(grad);
    free(buf);
    free(want_p);
    free(want_b);
}

int main(void) {
    for (int threads = 1; threads <= 2; threads++) {
        test_sgd(threads, 0, 0.0);
        test_sgd(threads, 1, 0.05);
    }
    return check_report("test_optim");
}
