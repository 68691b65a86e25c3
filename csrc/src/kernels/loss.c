/*
 * loss.c: the class-index cross-entropy's pick and gradient (see kernels/loss.h).
 *
 * cross_entropy(x, target) in its plain case was log_softmax, a gather, a negation and a mean in
 * the forward, and arange, softmax, a comparison, a where, a division and a product in the
 * backward: a dozen ops, each a Python dispatch and a pass over memory, for what is two passes.
 * The forward keeps tt_softmax for the log_softmax (its saved output is what the backward needs);
 * tt_nll_pick then picks and reduces in one call, and tt_cross_entropy_backward turns the saved
 * log-probabilities into the gradient in one pass: exp(logp) is the softmax (PyTorch's
 * log_softmax backward uses it the same way), minus one at the target, times the incoming
 * gradient.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>

#include "tt/tt.h"
#include "tt/kernels/loss.h"
#include "tt/kernels/parallel.h"
#include "vmath.h"

/* Elements per thread chunk below which the gradient stays on one thread. */
#define LOSS_GRAIN_ELEMENTS ((int64_t)1 << 15)

/* Sizes, strides and the reduction are checked here; NULL addresses only when there is work. */
static tt_status check_shape(int dtype, int64_t n, int64_t c, int64_t ts) {
    if (dtype != TT_FLOAT32 && dtype != TT_FLOAT64) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (n < 0 || c < 0 || ts < 0) {
        return TT_ERR_INVALID_ARG;
    }
    return TT_OK;
}

#define DEFINE_PICK(T)                                                                              \
    static tt_status pick_##T(int64_t n, int64_t c, const T *logp, int64_t rs, int64_t cs,         \
                              const int64_t *target, int64_t ts, int reduction, T *out) {           \
        double total = 0;                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                           \
            const int64_t t = target[i * ts];                                                       \
            if (t < 0 || t >= c) {                                                                  \
                return TT_ERR_INDEX;                                                                \
            }                                                                                       \
            const T loss = -logp[i * rs + t * cs];                                                  \
            if (reduction == 0) {                                                                   \
                out[i] = loss;                                                                      \
            } else {                                                                                \
                total += (double)loss;                                                              \
            }                                                                                       \
        }                                                                                           \
        if (reduction == 1) {                                                                       \
            out[0] = (T)total;                                                                      \
        } else if (reduction == 2) {                                                                \
            out[0] = n > 0 ? (T)(total / (double)n) : (T)NAN;                                       \
        }                                                                                           \
        return TT_OK;                                                                               \
    }
DEFINE_PICK(float)
DEFINE_PICK(double)

tt_status tt_nll_pick(int dtype, int64_t n, int64_t c, uintptr_t logp, int64_t rs, int64_t cs, uintptr_t target,
                      int64_t ts, int reduction, uintptr_t out) {
    tt_status status = check_shape(dtype, n, c, ts);
    if (status != TT_OK) {
        return status;
    }
    if (rs < 0 || cs < 0 || reduction < 0 || reduction > 2) {
        return TT_ERR_INVALID_ARG;
    }
    if (out == 0 && (reduction != 0 || n > 0)) {
        return TT_ERR_INVALID_ARG;
    }
    if (n > 0 && (logp == 0 || target == 0)) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype == TT_FLOAT32) {
        return pick_float(n, c, (const float *)logp, rs, cs, (const int64_t *)target, ts, reduction, (float *)out);
    }
    return pick_double(n, c, (const double *)logp, rs, cs, (const int64_t *)target, ts, reduction, (double *)out);
}

/* One backward call: rows are split between threads; a bad target is recorded (relaxed: only
   its value matters, read after tt_parallel_for has joined every chunk), not returned, since
   tt_parallel_for's chunks cannot fail. */
typedef struct ce_job {
    int64_t c, ts, gs;
    const void *logp, *grad;
    const int64_t *target;
    double divisor;
    void *out;
    atomic_int bad_target;
} ce_job;

/* exp of a contiguous run: the vectorized kernel for float32, as tt_unary's exp. */
static void exp_run_float(const float *x, float *y, int64_t count) { tt_vexp_f32(x, y, count); }
static void exp_run_double(const double *x, double *y, int64_t count) {
    for (int64_t i = 0; i < count; i++) y[i] = exp(x[i]);
}

#define DEFINE_CE_ROWS(T)                                                                           \
    static void ce_rows_##T(int64_t begin, int64_t end, void *ctx) {                                \
        ce_job *job = ctx;                                                                          \
        const int64_t c = job->c;                                                                   \
        const T *logp = (const T *)job->logp + begin * c;                                           \
        T *out = (T *)job->out + begin * c;                                                         \
        exp_run_##T(logp, out, (end - begin) * c);                                                  \
        for (int64_t i = begin; i < end; i++, out += c) {                                           \
            const int64_t t = job->target[i * job->ts];                                             \
            if (t < 0 || t >= c) {                                                                  \
                atomic_store_explicit(&job->bad_target, 1, memory_order_relaxed);                   \
                continue;                                                                           \
            }                                                                                       \
            const T scale = (T)((double)((const T *)job->grad)[i * job->gs] / job->divisor);        \
            out[t] -= (T)1;                                                                         \
            for (int64_t j = 0; j < c; j++) out[j] *= scale;                                        \
        }                                                                                           \
    }
DEFINE_CE_ROWS(float)
DEFINE_CE_ROWS(double)

tt_status tt_cross_entropy_backward(int dtype, int64_t n, int64_t c, uintptr_t logp, uintptr_t target, int64_t ts,
                                    uintptr_t grad, int64_t gs, double divisor, uintptr_t out) {
    tt_status status = check_shape(dtype, n, c, ts);
    if (status != TT_OK) {
        return status;
    }
    if (gs < 0 || !(divisor > 0)) {
        return TT_ERR_INVALID_ARG;
    }
    if (n == 0 || c == 0) {
        return TT_OK;
    }
    if (logp == 0 || target == 0 || grad == 0 || out == 0) {
        return TT_ERR_INVALID_ARG;
    }
    ce_job job = {.c = c, .ts = ts, .gs = gs, .logp = (const void *)logp, .grad = (const void *)grad,
                  .target = (const int64_t *)target, .divisor = divisor, .out = (void *)out};
    atomic_init(&job.bad_target, 0);
    const int64_t grain = LOSS_GRAIN_ELEMENTS / c + 1;
    tt_parallel_for(n, grain, dtype == TT_FLOAT32 ? ce_rows_float : ce_rows_double, &job);
    return atomic_load_explicit(&job.bad_target, memory_order_relaxed) ? TT_ERR_INDEX : TT_OK;
}
