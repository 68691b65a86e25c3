/*
 * reduce_internal.h (internal): what reduce.c and the three builds of tt_reduce's op functions
 * (reduce_rows.h, compiled by reduce.c, reduce_avx2.c and reduce_avx512.c) share: the dtype
 * lists, the accumulators, the float32 row kernels that dispatch themselves (defined in
 * reduce.c), and the op table's entry type.
 */
#ifndef TT_KERNELS_REDUCE_INTERNAL_H
#define TT_KERNELS_REDUCE_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu_features.h"
#include "dtype_list.h"
#include "tt/tt.h"
#include "tt/kernels/reduce.h" /* no include guard (cffi reads it verbatim): included here only */

#define CHUNK 1024

/* ------------------------------------------------------------------ loading and storing */

/* LD_* and ST_* come from dtype_list.h. Reductions list dtypes in a shape of their own:
   (name, storage type, kind, load, store, code). Kind I (bool and integers) loads into int64_t,
   kind F into double. */
#define REDUCE_INT_DTYPES(X, ...)                                               \
    X(__VA_ARGS__, bool, uint8_t, I, LD_bool, ST_bool, TT_BOOL)          \
    X(__VA_ARGS__, int8, int8_t, I, LD_plain, ST_plain, TT_INT8)         \
    X(__VA_ARGS__, int16, int16_t, I, LD_plain, ST_plain, TT_INT16)      \
    X(__VA_ARGS__, int32, int32_t, I, LD_plain, ST_plain, TT_INT32)      \
    X(__VA_ARGS__, int64, int64_t, I, LD_plain, ST_plain, TT_INT64)      \
    X(__VA_ARGS__, uint8, uint8_t, I, LD_plain, ST_plain, TT_UINT8)
#define REDUCE_FLOAT_DTYPES(X, ...)                                             \
    X(__VA_ARGS__, float16, uint16_t, F, LD_half, ST_half, TT_FLOAT16)   \
    X(__VA_ARGS__, float32, float, F, LD_plain, ST_plain, TT_FLOAT32)    \
    X(__VA_ARGS__, float64, double, F, LD_plain, ST_plain, TT_FLOAT64)
#define REDUCE_ALL_DTYPES(X, ...) REDUCE_INT_DTYPES(X, __VA_ARGS__) REDUCE_FLOAT_DTYPES(X, __VA_ARGS__)

#define CT_I int64_t
#define CT_F double

/* Where a finished value goes: the input dtype, int64 or bool. */
#define OUT_SAME(T, ST, p, v) ST(T, p, v)
#define OUT_INT64(T, ST, p, v) (*(int64_t *)(p) = (int64_t)(v))
#define OUT_BOOL(T, ST, p, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))

/* ------------------------------------------------------------------ accumulators */

typedef struct { int64_t v; int64_t i; } arg_acc_I;
typedef struct { double v; int64_t i; } arg_acc_F;
typedef struct { double n, mean, m2; } var_acc;
typedef struct { double m, s; } lse_acc;

#define SUMF_ACC_I uint64_t
#define SUMF_ACC_F double
#define PRODF_ACC_I uint64_t
#define PRODF_ACC_F double
#define EXTF_ACC_I int64_t
#define EXTF_ACC_F double
#define ARGF_ACC_I arg_acc_I
#define ARGF_ACC_F arg_acc_F
#define VARF_ACC_F var_acc
#define LSEF_ACC_F lse_acc

/* Welford's update by one value, and Chan's merge of two partial results. */
static inline void var_push(var_acc *a, double v) {
    a->n += 1;
    double delta = v - a->mean;
    a->mean += delta / a->n;
    a->m2 += delta * (v - a->mean);
}

static inline void var_merge(var_acc *a, var_acc b) {
    if (b.n == 0) {
        return;
    }
    if (a->n == 0) {
        *a = b;
        return;
    }
    double n = a->n + b.n, delta = b.mean - a->mean;
    a->mean += delta * (b.n / n);
    a->m2 += b.m2 + delta * delta * (a->n * b.n / n);
    a->n = n;
}

/* Running log-sum-exp: m is the largest value seen, s the sum of exp(x - m). -inf adds nothing
   (so m = -inf keeps s = 0); NaN is final; with m = +inf the result is +inf whatever s is. */
static inline void lse_push(lse_acc *a, double v) {
    if (isnan(v) || isnan(a->m)) {
        a->m = NAN;
    } else if (v == -INFINITY) {
        return;
    } else if (v > a->m) {
        a->s = a->s * exp(a->m - v) + 1;
        a->m = v;
    } else {
        a->s += exp(v - a->m);
    }
}

/* Joins two running log-sum-exps (b's values after a's): NaN is final, -inf adds nothing. */
static inline void lse_merge(lse_acc *a, lse_acc b) {
    if (isnan(a->m) || isnan(b.m)) {
        a->m = NAN;
    } else if (b.m == -INFINITY) {
        return;
    } else if (a->m == -INFINITY) {
        *a = b;
    } else if (b.m > a->m) {
        a->s = a->s * exp(a->m - b.m) + b.s;
        a->m = b.m;
    } else {
        a->s += b.s * exp(b.m - a->m);
    }
}

static inline double lse_result(lse_acc a) { return (isinf(a.m) || isnan(a.m)) ? a.m : a.m + log(a.s); }

/* ------------------------------------------------------------------ float32 row kernels
 * Hand-written AVX2 and AVX-512 kernels in reduce.c. Each getter returns this CPU's build (as
 * TT_GENERIC_KERNELS allows), or NULL where only the generic rows apply. */

/* Plain float32 sums (sum and mean of a contiguous row): 64 float lanes in 4 or 8 vector
   registers, so that a thread keeps enough loads in flight to sum at memory speed (the 16 lanes
   of the generic row reach about 40% of it on one core in the baseline build). Each lane adds at
   most 32 values (one block of 2048 elements) before the lanes are widened into double lanes,
   which add up the blocks. */
#define SUM_F32_LANES 64
#define SUM_F32_BLOCK_N 2048
typedef double (*sum_f32_fn)(const float *p, int64_t n);
sum_f32_fn tt_reduce_sum_f32(void);

/* The maximum of a contiguous float32 row (of its negation for a minimum), NaN if it has one;
   a zero extremum is the row's first zero. n >= 1. */
typedef float (*ext_row_f32_fn)(const float *p, int64_t n, int negate);
ext_row_f32_fn tt_reduce_ext_row_f32(void);

/* The sum over a float32 row of (x - center)^2 (square != 0) or of x (square == 0), in double. */
typedef double (*sqdev_f32_fn)(const float *p, int64_t n, double center, int square);
sqdev_f32_fn tt_reduce_sqdev_f32(void);

/* ------------------------------------------------------------------ the op table */

typedef void (*init_fn)(void *accs, int64_t c);
typedef void (*row_fn)(void *acc, const char *p, int64_t n, int64_t s, int64_t base, double param);
typedef void (*vec_fn)(void *accs, const char *p, int64_t c, int64_t s, int64_t index, double param);
typedef void (*store_fn)(const void *accs, int64_t c, char *out, int64_t os, char *out2, int64_t os2,
                         int64_t count, double param);

typedef void (*merge_fn)(void *acc, const void *other);

typedef struct reduce_impl {
    init_fn init;
    row_fn row;
    vec_fn vec;
    store_fn store;
    merge_fn merge;
    size_t acc_size;
} reduce_impl;

/* One table per build of reduce_rows.h: [op][dtype]. */
extern const reduce_impl tt_reduce_table_baseline[TT_NUM_REDUCE_OPS][TT_NUM_DTYPES];
#if TT_HAVE_X86
extern const reduce_impl tt_reduce_table_avx2[TT_NUM_REDUCE_OPS][TT_NUM_DTYPES];
extern const reduce_impl tt_reduce_table_avx512[TT_NUM_REDUCE_OPS][TT_NUM_DTYPES];
#endif

#endif /* TT_KERNELS_REDUCE_INTERNAL_H */
