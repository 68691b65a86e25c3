/*
 * test_matmul.c: tt_matmul against a naive triple loop, for what only the sanitizers can see.
 *
 * Values and semantics are tested from Python against PyTorch; here every operand lives in a
 * buffer of exactly the size its strides reach, so AddressSanitizer reports any read or write
 * past an operand (the packing of partial blocks at the edges is where that would happen), and
 * UBSan reports signed overflow (integer products of extreme values must wrap in unsigned
 * arithmetic). Sizes straddle the block sizes (64 rows, 256 columns, 256 along k), operands are
 * contiguous, transposed, padded or broadcast (batch stride 0), and the transposed orientation
 * (fewer than 4 columns) and accumulate mode run too.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/half.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/parallel.h"

static const int DTYPES[] = {TT_INT8, TT_INT16, TT_INT32, TT_INT64, TT_UINT8, TT_FLOAT16, TT_FLOAT32, TT_FLOAT64};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int is_float(int dtype) { return dtype == TT_FLOAT16 || dtype == TT_FLOAT32 || dtype == TT_FLOAT64; }

/* Element i of a buffer as a double (floats) or as the low bits of an int64 (integers). */
static double load_f(const char *p, int dtype) {
    switch (dtype) {
    case TT_FLOAT16: return tt_half_to_float(*(const uint16_t *)p);
    case TT_FLOAT32: return *(const float *)p;
    default: return *(const double *)p;
    }
}

static uint64_t load_i(const char *p, int dtype) {
    switch (dtype) {
    case TT_INT8: return (uint64_t)(int64_t)*(const int8_t *)p;
    case TT_INT16: return (uint64_t)(int64_t)*(const int16_t *)p;
    case TT_INT32: return (uint64_t)(int64_t)*(const int32_t *)p;
    case TT_UINT8: return *(const uint8_t *)p;
    default: return (uint64_t)*(const int64_t *)p;
    }
}

/* Random contents: small floats (exact enough), integers over all 64 bits (they overflow). */
static void fill_random(char *buffer, size_t count, int dtype) {
    size_t size = tt_dtype_itemsize(dtype);
    for (size_t i = 0; i < count; i++) {
        uint64_t r = next_random();
        char *p = buffer + i * size;
        if (dtype == TT_FLOAT16) {
            *(uint16_t *)p = tt_float_to_half((float)((int)(r % 17) - 8) / 4.0f);
        } else if (dtype == TT_FLOAT32) {
            *(float *)p = (float)((int)(r % 2001) - 1000) / 500.0f;
        } else if (dtype == TT_FLOAT64) {
            *(double *)p = (double)((int)(r % 2001) - 1000) / 500.0;
        } else {
            memcpy(p, &r, size); /* low bytes of a 64-bit random number */
        }
    }
}

/* Elements a view reaches: 1 + sum (size - 1) * stride (0 for an empty view). */
static size_t extent(int ndim, const int64_t *shape, const int64_t *strides) {
    size_t last = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0) {
            return 0;
        }
        last += (size_t)((shape[d] - 1) * strides[d]);
    }
    return last + 1;
}

typedef struct layout {
    int64_t a[3], b[3], c[3]; /* batch, row, column strides in elements */
} layout;

/* One batched product of `batch` x (m x k) @ (k x n) under `lay`, checked element by element. */
static void run_case(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const layout *lay, int accumulate) {
    const int64_t ashape[3] = {batch, m, k}, bshape[3] = {batch, k, n}, cshape[3] = {batch, m, n};
    size_t size = tt_dtype_itemsize(dtype);
    size_t na = extent(3, ashape, lay->a), nb = extent(3, bshape, lay->b), nc = extent(3, cshape, lay->c);
    char *a = malloc(na * size + 1), *b = malloc(nb * size + 1), *c = malloc(nc * size + 1);
    char *before = malloc(nc * size + 1);
    if (!check_record(a && b && c && before)) {
        fprintf(stderr, "run_case: out of memory\n");
        free(a), free(b), free(c), free(before);
        return;
    }
    fill_random(a, na, dtype);
    fill_random(b, nb, dtype);
    fill_random(c, nc, dtype);
    memcpy(before, c, nc * size);
    const int64_t batch_shape[1] = {batch};
    tt_status status = tt_matmul(dtype, 1, batch_shape, m, n, k, (uintptr_t)a, lay->a, (uintptr_t)b, lay->b,
                                 (uintptr_t)c, lay->c, accumulate);
    CHECK_STATUS(status, TT_OK, "tt_matmul");
    int bad = 0;
    for (int64_t t = 0; t < batch && !bad; t++) {
        for (int64_t i = 0; i < m && !bad; i++) {
            for (int64_t j = 0; j < n && !bad; j++) {
                size_t at = (size_t)(t * lay->c[0] + i * lay->c[1] + j * lay->c[2]) * size;
                if (is_float(dtype)) {
                    double want = accumulate ? load_f(before + at, dtype) : 0.0;
                    double scale = fabs(want); /* sum of the magnitudes: what rounding errors scale with */
                    for (int64_t p = 0; p < k; p++) {
                        double term =
                            load_f(a + (t * lay->a[0] + i * lay->a[1] + p * lay->a[2]) * (int64_t)size, dtype) *
                            load_f(b + (t * lay->b[0] + p * lay->b[1] + j * lay->b[2]) * (int64_t)size, dtype);
                        want += term;
                        scale += fabs(term);
                    }
                    double got = load_f(c + at, dtype);
                    double tolerance = (dtype == TT_FLOAT16 ? 1e-3 : dtype == TT_FLOAT32 ? 4e-5 : 1e-13) * (scale + 1);
                    bad = fabs(got - want) > tolerance;
                    CHECK(!bad, "dtype %d %lldx%lldx%lld: C[%lld][%lld][%lld] = %g, expected %g", dtype, (long long)m,
                          (long long)n, (long long)k, (long long)t, (long long)i, (long long)j, got, want);
                } else {
                    uint64_t want = accumulate ? load_i(before + at, dtype) : 0;
                    for (int64_t p = 0; p < k; p++) {
                        want += load_i(a + (t * lay->a[0] + i * lay->a[1] + p * lay->a[2]) * (int64_t)size, dtype) *
                                load_i(b + (t * lay->b[0] + p * lay->b[1] + j * lay->b[2]) * (int64_t)size, dtype);
                    }
                    uint64_t mask = size == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * size)) - 1;
                    bad = (load_i(c + at, dtype) & mask) != (want & mask);
                    CHECK(!bad, "dtype %d %lldx%lldx%lld: C[%lld][%lld][%lld] wrong", dtype, (long long)m, (long long)n,
                          (long long)k, (long long)t, (long long)i, (long long)j);
                }
            }
        }
    }
    free(a), free(b), free(c), free(before);
}

static void test_layouts(int dtype) {
    const int64_t sizes[][4] = {
        /* batch, m, n, k */
        {1, 66, 258, 257}, {2, 5, 7, 3}, {1, 65, 2, 300}, {3, 1, 1, 33}, {1, 9, 300, 1}, {2, 4, 3, 0},
        {1, 151, 37, 300}, /* float GEMM: past MC (144) and KC (256), rows split across workers */
        {1, 250, 45, 520}, /* past MC (240) of the AVX-512 tile, k in three KC slices */
        {16, 17, 19, 33},  /* float GEMM: enough small products to split the batch across workers */
        {2, 16, 40, 24},   /* small AVX-512 products with m a multiple of 8, not of 12: 8 rows a call */
    };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t batch = sizes[s][0], m = sizes[s][1], n = sizes[s][2], k = sizes[s][3];
        layout contiguous = {{m * k, k, 1}, {k * n, n, 1}, {m * n, n, 1}};
        layout transposed = {{m * k, 1, m}, {k * n, 1, k}, {m * n, 1, m}};              /* column-major */
        layout padded = {{0, 2 * k + 3, 2}, {(k + 1) * (n + 2), n + 2, 1}, {m * n * 2, 2 * n, 2}}; /* A broadcast */
        int big = m * n * k > 100000; /* the block-edge case: two layouts are enough (time under TSan) */
        run_case(dtype, batch, m, n, k, &transposed, 0);
        run_case(dtype, batch, m, n, k, &padded, 0);
        if (!big) {
            run_case(dtype, batch, m, n, k, &contiguous, 0);
            run_case(dtype, batch, m, n, k, &contiguous, 1);
        }
    }
}

static void test_bad_arguments(void) {
    float x = 1.0f, y = 2.0f, out = 0.0f;
    const int64_t unit[2] = {1, 1}, negative[2] = {-1, 1};
    uintptr_t px = (uintptr_t)&x, py = (uintptr_t)&y, po = (uintptr_t)&out;
    CHECK_STATUS(tt_matmul(TT_BOOL, 0, NULL, 1, 1, 1, px, unit, py, unit, po, unit, 0), TT_ERR_UNSUPPORTED_DTYPE,
                 "bool");
    CHECK_STATUS(tt_matmul(99, 0, NULL, 1, 1, 1, px, unit, py, unit, po, unit, 0), TT_ERR_UNSUPPORTED_DTYPE,
                 "unknown dtype");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, -1, 1, 1, px, unit, py, unit, po, unit, 0), TT_ERR_INVALID_ARG,
                 "negative m");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, 1, 1, 1, px, negative, py, unit, po, unit, 0), TT_ERR_INVALID_ARG,
                 "negative stride");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, -1, NULL, 1, 1, 1, px, unit, py, unit, po, unit, 0), TT_ERR_INVALID_ARG,
                 "negative batch_ndim");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, 1, 1, 1, px, unit, py, unit, 0, unit, 0), TT_ERR_INVALID_ARG,
                 "NULL output");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, 1, 1, 1, 0, unit, py, unit, po, unit, 0), TT_ERR_INVALID_ARG,
                 "NULL input");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, 0, 1, 1, 0, unit, 0, unit, 0, unit, 0), TT_OK, "empty, NULLs");
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, 1, 1, 0, 0, unit, 0, unit, po, unit, 0), TT_OK, "k = 0");
    CHECK(out == 0.0f, "k = 0 writes zeros, got %g", (double)out);
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, 1, 1, 1, px, unit, py, unit, po, unit, 0), TT_OK, "1x1x1");
    CHECK(out == 2.0f, "1x1x1: expected 2, got %g", (double)out);
}

/* tt_gemm: accumulation onto C with a non-unit column stride (the edge-tile store path), and the
   dtypes it refuses. */
static void test_gemm_entry(void) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 2, 1, 0, 3}, c[12];
    for (int i = 0; i < 12; i++) c[i] = (float)i;
    /* A (2x3) @ B (3x2) added to C seen as 2x2 with strides (6, 2) */
    CHECK_STATUS(tt_gemm(TT_FLOAT32, 2, 2, 3, (uintptr_t)a, 3, 1, (uintptr_t)b, 2, 1, (uintptr_t)c, 6, 2, 1), TT_OK,
                 "tt_gemm accumulate");
    const float want[4] = {0 + 5, 2 + 11, 6 + 14, 8 + 23};
    const int at[4] = {0, 2, 6, 8};
    for (int i = 0; i < 4; i++) {
        CHECK(c[at[i]] == want[i], "tt_gemm: c[%d] = %g, expected %g", at[i], (double)c[at[i]], (double)want[i]);
    }
    CHECK(c[1] == 1.0f && c[7] == 7.0f, "tt_gemm wrote outside C");
    CHECK_STATUS(tt_gemm(TT_INT32, 1, 1, 1, (uintptr_t)a, 1, 1, (uintptr_t)b, 1, 1, (uintptr_t)c, 1, 1, 0),
                 TT_ERR_UNSUPPORTED_DTYPE, "tt_gemm int32");
}

/* tt_linear: C = bias + A @ B against a naive loop, each operand in a buffer of exactly the size
   it spans (the bias strided), on shapes that take the small path, several k slices and the
   transposed orientation (few columns: the bias then runs along the computed rows). */
static void test_linear_entry(void) {
    const int64_t shapes[][3] = {{3, 5, 2}, {13, 10, 40}, {25, 70, 300}, {250, 40, 700}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        const int64_t m = shapes[t][0], n = shapes[t][1], k = shapes[t][2], bias_stride = 3;
        float *a = malloc((size_t)(m * k) * sizeof(float)), *b = malloc((size_t)(k * n) * sizeof(float));
        float *bias = malloc((size_t)((n - 1) * bias_stride + 1) * sizeof(float));
        float *c = malloc((size_t)(m * n) * sizeof(float));
        for (int64_t i = 0; i < m * k; i++) a[i] = (float)(next_random() % 9) - 4.0f;
        for (int64_t i = 0; i < k * n; i++) b[i] = (float)(next_random() % 9) - 4.0f;
        for (int64_t j = 0; j < (n - 1) * bias_stride + 1; j++) bias[j] = (float)(next_random() % 5);
        /* B is read transposed, as linear's weight: B (k x n) at b[j * k + p] */
        CHECK_STATUS(tt_linear(TT_FLOAT32, m, n, k, (uintptr_t)a, k, 1, (uintptr_t)b, 1, k, (uintptr_t)bias,
                               bias_stride, (uintptr_t)c, n, 1),
                     TT_OK, "tt_linear");
        int bad = 0;
        for (int64_t i = 0; i < m && !bad; i++) {
            for (int64_t j = 0; j < n && !bad; j++) {
                double want = bias[j * bias_stride];
                for (int64_t p = 0; p < k; p++) want += (double)a[i * k + p] * b[j * k + p];
                bad = c[i * n + j] != (float)want; /* small integers: exact */
                CHECK(!bad, "tt_linear %ldx%ldx%ld: c[%ld][%ld] = %g, expected %g", (long)m, (long)n, (long)k, (long)i,
                      (long)j, (double)c[i * n + j], want);
            }
        }
        free(a);
        free(b);
        free(bias);
        free(c);
    }
}

int main(void) {
    for (size_t d = 0; d < sizeof DTYPES / sizeof DTYPES[0]; d++) {
        test_layouts(DTYPES[d]);
    }
    /* the float GEMM again on every micro-kernel this CPU runs, and on 1 and 2 threads */
    const int floats[2] = {TT_FLOAT32, TT_FLOAT64};
    const char *kernels[3] = {"generic", "avx2", "avx512"};
    for (int kernel = 0; kernel < 3; kernel++) {
        if (tt_gemm_set_kernel(kernels[kernel]) != TT_OK) {
            continue; /* the CPU lacks it */
        }
        for (int threads = 1; threads <= 2; threads++) {
            CHECK_STATUS(tt_set_num_threads(threads), TT_OK, "tt_set_num_threads");
            for (int d = 0; d < 2; d++) {
                test_layouts(floats[d]);
            }
            test_gemm_entry();
            test_linear_entry();
        }
    }
    CHECK_STATUS(tt_gemm_set_kernel("sse9"), TT_ERR_INVALID_ARG, "tt_gemm_set_kernel unknown name");
    CHECK_STATUS(tt_gemm_set_kernel(NULL), TT_OK, "tt_gemm_set_kernel(NULL)");
    tt_gemm_force_generic(1);
    CHECK(strcmp(tt_gemm_kernel_name(), "generic") == 0, "tt_gemm_force_generic(1)");
    tt_gemm_force_generic(0);
    test_bad_arguments();
    return check_report("test_matmul");
}
