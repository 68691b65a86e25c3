/*
 * optim.c: optimizer updates in one pass over memory (see kernels/optim.h).
 *
 * An SGD step with momentum as tensor ops is three passes over each parameter's memory
 * (buf *= momentum; buf += d; param -= lr * buf) plus a Python dispatch each: eight reads and
 * writes of a parameter-sized array, where one pass needs five (read param, grad and buf, write
 * param and buf). The arithmetic is the ops' own, step for step in the same type, so the result
 * is bit-identical (the Python test compares the bits with the separate ops): the update is
 * compiled with fp-contract off, so that no compiler contracts a product and a sum into one fused
 * multiply-add, as GCC does by default where the target has FMA (-march=native, aarch64).
 */
#include <stdint.h>

#include "tt/tt.h"
#include "tt/kernels/optim.h"
#include "tt/kernels/parallel.h"

/* Elements per thread chunk below which an update stays on one thread. */
#define OPTIM_GRAIN ((int64_t)1 << 15)

typedef struct sgd_job {
    void *param, *buf;
    const void *grad;
    double lr, momentum, dampening, weight_decay;
    int nesterov, maximize, first;
} sgd_job;

/* The loop-invariant options become separate loops (the compiler unswitches them), each of
   which vectorizes. */
#define DEFINE_SGD(T)                                                                              \
    __attribute__((optimize("fp-contract=off"))) static void sgd_##T(int64_t begin, int64_t end,   \
                                                                   void *ctx) {                    \
        const sgd_job *job = ctx;                                                                  \
        T *restrict param = (T *)job->param;                                                       \
        T *restrict buf = (T *)job->buf;                                                           \
        const T *restrict grad = (const T *)job->grad;                                             \
        const T lr = (T)-job->lr, momentum = (T)job->momentum, keep = (T)(1.0 - job->dampening);  \
        const T decay = (T)job->weight_decay;                                                      \
        const int has_momentum = job->momentum != 0, has_decay = job->weight_decay != 0;           \
        for (int64_t i = begin; i < end; i++) {                                                    \
            T d = job->maximize ? -grad[i] : grad[i];                                              \
            if (has_decay) {                                                                       \
                d = d + decay * param[i];                                                          \
            }                                                                                      \
            if (has_momentum) {                                                                    \
                const T b = job->first ? d : buf[i] * momentum + keep * d;                         \
                buf[i] = b;                                                                        \
                d = job->nesterov ? d + momentum * b : b;                                          \
            }                                                                                      \
            param[i] = param[i] + lr * d;                                                          \
        }                                                                                          \
    }
DEFINE_SGD(float)
DEFINE_SGD(double)

tt_status tt_sgd_update(int dtype, int64_t n, uintptr_t param, uintptr_t grad, uintptr_t buf, double lr,
                        double momentum, double dampening, double weight_decay, int nesterov, int maximize,
                        int first) {
    if (dtype != TT_FLOAT32 && dtype != TT_FLOAT64) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (n < 0) {
        return TT_ERR_INVALID_ARG;
    }
    if (n == 0) {
        return TT_OK;
    }
    if (param == 0 || grad == 0 || (momentum != 0 && buf == 0)) {
        return TT_ERR_INVALID_ARG;
    }
    sgd_job job = {.param = (void *)param, .buf = (void *)buf, .grad = (const void *)grad, .lr = lr,
                   .momentum = momentum, .dampening = dampening, .weight_decay = weight_decay,
                   .nesterov = nesterov != 0, .maximize = maximize != 0, .first = first != 0};
    tt_parallel_for(n, OPTIM_GRAIN, dtype == TT_FLOAT32 ? sgd_float : sgd_double, &job);
    return TT_OK;
}
