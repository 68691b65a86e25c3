/*
 * vmath.h (internal): vectorized float32 transcendental functions over arrays (vmath.c).
 *
 * Not read by cffi. Every function computes y[i] = f(x[i]) for 0 <= i < n (n <= 0 does nothing);
 * x and y may be the same array (in place), otherwise they must not overlap. Borrows both.
 * The AVX2+FMA path is picked at run time when the CPU has both and TT_GENERIC_KERNELS is not "1";
 * the generic path evaluates the same polynomials in plain C. Accuracy (max ULP error against the
 * correctly rounded result) is listed in docs/performance_vmath.md and tested in
 * tests/ops/test_vmath.py.
 */
#ifndef TT_KERNELS_VMATH_INTERNAL_H
#define TT_KERNELS_VMATH_INTERNAL_H

#include <stdint.h>

void tt_vexp_f32(const float *x, float *y, int64_t n);
void tt_vlog_f32(const float *x, float *y, int64_t n);
void tt_vtanh_f32(const float *x, float *y, int64_t n);
void tt_vsigmoid_f32(const float *x, float *y, int64_t n);
void tt_verf_f32(const float *x, float *y, int64_t n);
void tt_vgelu_f32(const float *x, float *y, int64_t n);       /* 0.5 x (1 + erf(x / sqrt 2)) */
void tt_vgelu_tanh_f32(const float *x, float *y, int64_t n);  /* PyTorch's tanh approximation */
void tt_vsilu_f32(const float *x, float *y, int64_t n);       /* x * sigmoid(x) */

/* softmax (log_softmax != 0: log_softmax) of one contiguous line of L floats: m = max (NaN wins),
   o = exp(x - m) / sum (sum in double), or (x - m) - log(sum). o may be x (in place). */
void tt_vsoftmax_f32(const float *x, float *o, int64_t L, int log_softmax);

/* Nonzero when the AVX2+FMA kernels are in use (decided once, on first use). */
int tt_vmath_uses_avx2(void);

#endif /* TT_KERNELS_VMATH_INTERNAL_H */
