/*
 * matmul.c: C = A @ B (optionally C += A @ B) for a batch of matrices over any strides.
 *
 * A plain cache-blocked GEMM, correct for every stride and reasonably fast, meant to be replaced
 * by packed SIMD micro-kernels later. For each block of C of at most MC x NC elements:
 *   1. zero an accumulator of MC x NC values in the compute type (float, double or 64-bit int);
 *   2. for each slice of KC along k, copy ("pack") the A block (MC x KC) and the B block
 *      (KC x NC) into contiguous buffers, converted to the compute type; this is where any
 *      strides (transposed, sliced, broadcast) and float16 are dealt with, once per element
 *      per block instead of once per multiply;
 *   3. accumulate with an i-k-j loop: four rows of C at a time, each element of a packed row of
 *      B used for all four, the innermost j loop over contiguous memory, which -O3 vectorizes;
 *   4. store the accumulator into C through C's strides, converting (and wrapping integers).
 * A thin product (fewer than 4 rows or columns) whose large operand is column-major is computed
 * transposed (C^T = B^T A^T, only strides change), so that packing reads that operand in memory
 * order.
 *
 * Integers accumulate in uint64_t: wrap-around is then defined behaviour, and wrapping each
 * product and sum modulo 2^64 and then to the storage width gives the same bits as computing in
 * the storage width (the ring Z/2^w), which is what PyTorch returns on overflow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "tt/tt.h"
#include "tt/kernels/matmul.h"

#define MC 64  /* rows of C per block */
#define NC 256 /* columns of C per block */
#define KC 256 /* length of the k slice per packed block */

/* One product's geometry, strides in bytes. */
typedef struct gemm_dims {
    int64_t m, n, k;
    int64_t a_row, a_col, b_row, b_col, c_row, c_col;
    int accumulate;
} gemm_dims;

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Loading and storing one element: (name, storage type T, compute type CT). */
#define LD_int(T, CT, p) ((CT)(int64_t)(*(const T *)(p)))   /* sign-extend, then to uint64 */
#define ST_int(T, CT, p, v) (*(T *)(p) = (T)(v))              /* keeps the low bits: wraps */
#define LD_flt(T, CT, p) ((CT)(*(const T *)(p)))
#define ST_flt(T, CT, p, v) (*(T *)(p) = (T)(v))
#define LD_half(T, CT, p) tt_half_to_float(*(const uint16_t *)(p))
#define ST_half(T, CT, p, v) (*(uint16_t *)(p) = tt_float_to_half(v))

#define MATMUL_DTYPES(X)                                     \
    X(int8, int8_t, uint64_t, int, TT_INT8)                  \
    X(int16, int16_t, uint64_t, int, TT_INT16)               \
    X(int32, int32_t, uint64_t, int, TT_INT32)               \
    X(int64, int64_t, uint64_t, int, TT_INT64)               \
    X(uint8, uint8_t, uint64_t, int, TT_UINT8)               \
    X(float16, uint16_t, float, half, TT_FLOAT16)            \
    X(float32, float, float, flt, TT_FLOAT32)                \
    X(float64, double, double, flt, TT_FLOAT64)

#define DEFINE_GEMM(NAME, T, CT, KIND, CODE)                                                          \
    /* dst[r * cols + c] = src[r][c] converted; walks src in its cheaper order. */                    \
    static void pack_##NAME(CT *restrict dst, const char *src, int64_t rows, int64_t cols,           \
                            int64_t s_row, int64_t s_col) {                                           \
        if (s_col <= s_row) {                                                                         \
            for (int64_t r = 0; r < rows; r++) {                                                      \
                const char *row = src + r * s_row;                                                    \
                CT *out = dst + r * cols;                                                             \
                if (s_col == (int64_t)sizeof(T)) {                                                    \
                    for (int64_t c = 0; c < cols; c++) out[c] = LD_##KIND(T, CT, row + c * (int64_t)sizeof(T)); \
                } else {                                                                              \
                    for (int64_t c = 0; c < cols; c++) out[c] = LD_##KIND(T, CT, row + c * s_col);    \
                }                                                                                     \
            }                                                                                         \
        } else {                                                                                      \
            for (int64_t c = 0; c < cols; c++) {                                                      \
                const char *col = src + c * s_col;                                                    \
                for (int64_t r = 0; r < rows; r++) dst[r * cols + c] = LD_##KIND(T, CT, col + r * s_row); \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    /* acc[mc x nc] += ap[mc x kc] @ bp[kc x nc], all contiguous. */                                  \
    static void block_##NAME(CT *restrict acc, const CT *restrict ap, const CT *restrict bp,         \
                             int64_t mc, int64_t nc, int64_t kc) {                                    \
        int64_t i = 0;                                                                                \
        for (; i + 4 <= mc; i += 4) {                                                                 \
            CT *restrict c0 = acc + i * nc, *restrict c1 = c0 + nc, *restrict c2 = c1 + nc,          \
                         *restrict c3 = c2 + nc;                                                      \
            const CT *a0 = ap + i * kc, *a1 = a0 + kc, *a2 = a1 + kc, *a3 = a2 + kc;                  \
            for (int64_t p = 0; p < kc; p++) {                                                        \
                const CT x0 = a0[p], x1 = a1[p], x2 = a2[p], x3 = a3[p];                              \
                const CT *restrict brow = bp + p * nc;                                                \
                for (int64_t j = 0; j < nc; j++) {                                                    \
                    const CT y = brow[j];                                                             \
                    c0[j] += x0 * y;                                                                  \
                    c1[j] += x1 * y;                                                                  \
                    c2[j] += x2 * y;                                                                  \
                    c3[j] += x3 * y;                                                                  \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        for (; i < mc; i++) {                                                                         \
            CT *restrict c0 = acc + i * nc;                                                           \
            const CT *a0 = ap + i * kc;                                                               \
            for (int64_t p = 0; p < kc; p++) {                                                        \
                const CT x0 = a0[p];                                                                  \
                const CT *restrict brow = bp + p * nc;                                                \
                for (int64_t j = 0; j < nc; j++) c0[j] += x0 * brow[j];                               \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    /* One product, blocked; acc, ap and bp are scratch of the sizes tt_matmul allocates. */          \
    static void gemm_##NAME(const gemm_dims *d, const char *a, const char *b, char *c, CT *acc,       \
                            CT *ap, CT *bp) {                                                         \
        for (int64_t i0 = 0; i0 < d->m; i0 += MC) {                                                   \
            const int64_t mc = min64(MC, d->m - i0);                                                  \
            for (int64_t j0 = 0; j0 < d->n; j0 += NC) {                                               \
                const int64_t nc = min64(NC, d->n - j0);                                              \
                memset(acc, 0, (size_t)(mc * nc) * sizeof(CT));                                       \
                for (int64_t p0 = 0; p0 < d->k; p0 += KC) {                                           \
                    const int64_t kc = min64(KC, d->k - p0);                                          \
                    pack_##NAME(ap, a + i0 * d->a_row + p0 * d->a_col, mc, kc, d->a_row, d->a_col);   \
                    pack_##NAME(bp, b + p0 * d->b_row + j0 * d->b_col, kc, nc, d->b_row, d->b_col);   \
                    block_##NAME(acc, ap, bp, mc, nc, kc);                                            \
                }                                                                                     \
                for (int64_t i = 0; i < mc; i++) {                                                    \
                    char *row = c + (i0 + i) * d->c_row + j0 * d->c_col;                              \
                    const CT *src = acc + i * nc;                                                     \
                    for (int64_t j = 0; j < nc; j++) {                                                \
                        char *p = row + j * d->c_col;                                                 \
                        CT v = src[j];                                                                \
                        if (d->accumulate) {                                                          \
                            v += LD_##KIND(T, CT, p);                                                 \
                        }                                                                             \
                        ST_##KIND(T, CT, p, v);                                                       \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    /* Every product of the batch; `offsets` walks the batch index like an odometer. */               \
    static tt_status run_##NAME(const gemm_dims *d, int batch_ndim, const int64_t *batch_shape,       \
                                int64_t batch, const char *a, const int64_t *a_bs, const char *b,     \
                                const int64_t *b_bs, char *c, const int64_t *c_bs) {                  \
        const size_t acc_n = (size_t)(min64(d->m, MC) * min64(d->n, NC));                             \
        const size_t ap_n = (size_t)(min64(d->m, MC) * min64(d->k, KC));                              \
        const size_t bp_n = (size_t)(min64(d->k, KC) * min64(d->n, NC));                              \
        CT *scratch = malloc((acc_n + ap_n + bp_n + 1) * sizeof(CT));                                 \
        if (scratch == NULL) {                                                                        \
            return TT_ERR_NOMEM;                                                                      \
        }                                                                                             \
        int64_t index[TT_MAX_DIMS] = {0};                                                             \
        for (int64_t t = 0; t < batch; t++) {                                                         \
            gemm_##NAME(d, a, b, c, scratch, scratch + acc_n, scratch + acc_n + ap_n);                \
            for (int dim = batch_ndim - 1; dim >= 0; dim--) {                                         \
                const int64_t size = (int64_t)sizeof(T);                                              \
                if (++index[dim] < batch_shape[dim]) {                                                \
                    a += a_bs[dim] * size;                                                            \
                    b += b_bs[dim] * size;                                                            \
                    c += c_bs[dim] * size;                                                            \
                    break;                                                                            \
                }                                                                                     \
                index[dim] = 0;                                                                       \
                a -= (batch_shape[dim] - 1) * a_bs[dim] * size;                                       \
                b -= (batch_shape[dim] - 1) * b_bs[dim] * size;                                       \
                c -= (batch_shape[dim] - 1) * c_bs[dim] * size;                                       \
            }                                                                                         \
        }                                                                                             \
        free(scratch);                                                                                \
        return TT_OK;                                                                                 \
    }

MATMUL_DTYPES(DEFINE_GEMM)

typedef tt_status (*run_fn)(const gemm_dims *, int, const int64_t *, int64_t, const char *,
                            const int64_t *, const char *, const int64_t *, char *, const int64_t *);

#define REGISTER_GEMM(NAME, T, CT, KIND, CODE) [CODE] = run_##NAME,
static const run_fn run_table[TT_NUM_DTYPES] = {MATMUL_DTYPES(REGISTER_GEMM)};

tt_status tt_matmul(int dtype, int batch_ndim, const int64_t *batch_shape,
                    int64_t m, int64_t n, int64_t k,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t c, const int64_t *c_strides,
                    int accumulate) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES || run_table[dtype] == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (batch_ndim < 0 || batch_ndim > TT_MAX_DIMS || m < 0 || n < 0 || k < 0 ||
        a_strides == NULL || b_strides == NULL || c_strides == NULL || (batch_ndim > 0 && batch_shape == NULL)) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t batch = 1;
    for (int dim = 0; dim < batch_ndim; dim++) {
        if (batch_shape[dim] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        batch *= batch_shape[dim];
        if (batch == 0) {
            break;
        }
    }
    for (int dim = 0; dim < batch_ndim + 2; dim++) {
        if (a_strides[dim] < 0 || b_strides[dim] < 0 || c_strides[dim] < 0) {
            return TT_ERR_INVALID_ARG;
        }
    }
    if (batch == 0 || m == 0 || n == 0) {
        return TT_OK; /* C has no elements */
    }
    if (c == 0 || (k > 0 && (a == 0 || b == 0))) {
        return TT_ERR_INVALID_ARG;
    }
    const int64_t size = (int64_t)tt_dtype_itemsize(dtype);
    const int r = batch_ndim, s = batch_ndim + 1; /* where the row and column strides are */
    gemm_dims d = {m, n, k,
                   a_strides[r] * size, a_strides[s] * size,
                   b_strides[r] * size, b_strides[s] * size,
                   c_strides[r] * size, c_strides[s] * size, accumulate != 0};
    const int64_t *a_bs = a_strides, *b_bs = b_strides;
    uintptr_t first = a, second = b;
    /* A thin product (matrix @ vector, vector @ matrix) costs about as much as reading its one
       large operand, so that operand should be packed row by row, in memory order: when it is
       column-major, compute C^T = B^T A^T instead (only the strides change). */
    int transpose = 0;
    if (m < 4 || n < 4) {
        transpose = m > n ? d.a_row < d.a_col : d.b_row < d.b_col;
    }
    if (transpose) {
        gemm_dims t = {n, m, k,
                       d.b_col, d.b_row, d.a_col, d.a_row, d.c_col, d.c_row, d.accumulate};
        d = t;
        a_bs = b_strides;
        b_bs = a_strides;
        first = b;
        second = a;
    }
    return run_table[dtype](&d, batch_ndim, batch_shape, batch, (const char *)first, a_bs,
                            (const char *)second, b_bs, (char *)c, c_strides);
}
