/*
 * gemm_kernels.h: the float GEMM's micro-kernels (matmul.c) for kernel files that pack their own
 * operands (conv.c writes im2col straight into packed B micro-panels). Internal: not read by cffi.
 *
 * A micro-kernel computes one mr x nr corner of an MR x NR tile:
 *     C[i][j] (+)= sum over p < kc of ap[p * MR + i] * bp[p * NR + j]
 * ap: an MR-tall micro-panel of A (column p holds A[0..MR, p]), bp: an NR-wide micro-panel of B
 * (row p holds B[p, 0..NR]), both contiguous and zero-padded to the full tile; C through its
 * strides (rsc, csc in elements); load_c != 0 adds to C, else overwrites it.
 */
#ifndef TT_KERNELS_GEMM_KERNELS_H
#define TT_KERNELS_GEMM_KERNELS_H

#include <stdatomic.h>
#include <stdint.h>

typedef void (*tt_ukr_float_fn)(int64_t kc, const float *restrict ap, const float *restrict bp, float *c,
                                int64_t rsc, int64_t csc, int mr, int nr, int load_c);
typedef void (*tt_ukr_double_fn)(int64_t kc, const double *restrict ap, const double *restrict bp, double *c,
                                 int64_t rsc, int64_t csc, int mr, int nr, int load_c);

typedef struct tt_ukr_float {
    int mr, nr;
    tt_ukr_float_fn fn;
} tt_ukr_float;

typedef struct tt_ukr_double {
    int mr, nr;
    tt_ukr_double_fn fn;
} tt_ukr_double;

/* A micro-kernel (and its tile) of the family products use now (see tt_gemm_kernel_name), for a
   product with m rows: of the family's tiles, the one that pads m the least. */
tt_ukr_float tt_gemm_ukr_float(int64_t m);
tt_ukr_double tt_gemm_ukr_double(int64_t m);

/* A free list of up to 64 scratch buffers as one bitmask: take returns the index of a free one
   among the first `count` and marks it used (waiting, yielding, if all are in use); give frees it.
   For parallel regions whose chunks each need a buffer: with `count` = the thread count, a chunk
   always finds one. */
int tt_slot_take(atomic_uint_fast64_t *slots, int64_t count);
void tt_slot_give(atomic_uint_fast64_t *slots, int index);

#endif /* TT_KERNELS_GEMM_KERNELS_H */
