/*
 * test_dispatch.c: the "allocate and run" functions of kernels/dispatch.h that Python's one-call
 * paths use (tt_softmax_new, tt_matmul_new, tt_reduce_new, tt_binary_strided_new): each result
 * equals the kernel run into memory of our own (the same bits), holds exactly the output's bytes
 * (ASan sees a store past it), and every bad argument gives NULL with nothing left behind.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tt/kernels/dispatch.h"
#include "tt/kernels/elementwise.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/parallel.h"
#include "tt/kernels/reduce.h"

/* softmax and log_softmax over each dim of a (3, 5, 7) float tensor, against tt_softmax into a
   buffer of our own; a zero-size dim; bad arguments. */
static void test_softmax_new(void) {
    enum { A = 3, B = 5, C = 7, N = A * B * C };
    static float x[N], want[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)((i * 37) % 23) * 0.25f - 2.0f;
    }
    const int64_t shape[3] = {A, B, C}, strides[3] = {B * C, C, 1};
    for (int log = 0; log <= 1; log++) {
        for (int dim = 0; dim < 3; dim++) {
            CHECK_STATUS(tt_softmax(log, 3, shape, (uintptr_t)x, strides, TT_FLOAT32, dim, (uintptr_t)want, strides),
                         TT_OK, "softmax into our buffer");
            tt_storage *out = tt_softmax_new(log, 3, shape, (uintptr_t)x, TT_FLOAT32, dim);
            CHECK(out != NULL && tt_storage_nbytes(out) == sizeof want, "softmax_new: log %d dim %d", log, dim);
            if (out != NULL) {
                CHECK(memcmp(tt_storage_data(out), want, sizeof want) == 0, "softmax_new: other bits (dim %d)", dim);
                tt_storage_release(out);
            }
        }
    }
    const int64_t empty[2] = {4, 0};
    tt_storage *out = tt_softmax_new(0, 2, empty, 0, TT_FLOAT64, 1);
    CHECK(out != NULL && tt_storage_nbytes(out) == 0, "softmax_new: a zero-size dim gives an empty storage");
    tt_storage_release(out);
    const int64_t negative[2] = {4, -1}, huge[2] = {INT64_MAX / 2, 4};
    CHECK(tt_softmax_new(0, 3, NULL, (uintptr_t)x, TT_FLOAT32, 0) == NULL, "NULL shape");
    CHECK(tt_softmax_new(0, 0, shape, (uintptr_t)x, TT_FLOAT32, 0) == NULL, "no dims");
    CHECK(tt_softmax_new(0, 3, shape, (uintptr_t)x, TT_FLOAT32, 3) == NULL, "dim out of range");
    CHECK(tt_softmax_new(0, 3, shape, (uintptr_t)x, TT_FLOAT32, -1) == NULL, "negative dim");
    CHECK(tt_softmax_new(0, 3, shape, (uintptr_t)x, TT_INT32, 0) == NULL, "an integer dtype");
    CHECK(tt_softmax_new(0, 2, negative, (uintptr_t)x, TT_FLOAT32, 0) == NULL, "a negative size");
    CHECK(tt_softmax_new(0, 2, huge, (uintptr_t)x, TT_FLOAT32, 0) == NULL, "an element count past int64");
    CHECK(tt_softmax_new(0, TT_MAX_DIMS + 1, shape, (uintptr_t)x, TT_FLOAT32, 0) == NULL, "too many dims");
}

/* (m x k) @ (k x n) for a transposed a and a row-major b, on 1 and 2 threads, against tt_matmul
   into a buffer of our own; k = 0 gives zeros; bad arguments. */
static void test_matmul_new(void) {
    enum { M = 70, K = 33, N = 45 };
    static float a[K * M], b[K * N], want[M * N];
    for (int i = 0; i < K * M; i++) {
        a[i] = (float)(i % 17) - 8.0f;
    }
    for (int i = 0; i < K * N; i++) {
        b[i] = (float)(i % 13) * 0.5f;
    }
    const int64_t a_strides[2] = {1, M}, b_strides[2] = {N, 1}, c_strides[2] = {N, 1};
    CHECK_STATUS(tt_matmul(TT_FLOAT32, 0, NULL, M, N, K, (uintptr_t)a, a_strides, (uintptr_t)b, b_strides,
                           (uintptr_t)want, c_strides, 0),
                 TT_OK, "matmul into our buffer");
    const int before = tt_get_num_threads();
    for (int threads = 1; threads <= 2; threads++) {
        tt_set_num_threads(threads);
        tt_storage *out = tt_matmul_new(TT_FLOAT32, M, N, K, (uintptr_t)a, a_strides, (uintptr_t)b, b_strides);
        CHECK(out != NULL && tt_storage_nbytes(out) == sizeof want, "matmul_new on %d threads", threads);
        if (out != NULL) {
            CHECK(memcmp(tt_storage_data(out), want, sizeof want) == 0, "matmul_new: other bits");
            tt_storage_release(out);
        }
    }
    tt_set_num_threads(before);
    tt_storage *out = tt_matmul_new(TT_FLOAT64, 3, 4, 0, 0, a_strides, 0, b_strides);
    CHECK(out != NULL && tt_storage_nbytes(out) == 3 * 4 * sizeof(double), "matmul_new: k = 0");
    if (out != NULL) {
        const double *z = tt_storage_data(out);
        int zero = 1;
        for (int i = 0; i < 12; i++) {
            zero &= z[i] == 0.0;
        }
        CHECK(zero, "matmul_new: k = 0 gives zeros");
        tt_storage_release(out);
    }
    out = tt_matmul_new(TT_FLOAT32, 0, N, K, (uintptr_t)a, a_strides, (uintptr_t)b, b_strides);
    CHECK(out != NULL && tt_storage_nbytes(out) == 0, "matmul_new: m = 0 gives an empty storage");
    tt_storage_release(out);
    CHECK(tt_matmul_new(TT_FLOAT32, M, N, K, (uintptr_t)a, NULL, (uintptr_t)b, b_strides) == NULL, "NULL strides");
    CHECK(tt_matmul_new(TT_FLOAT32, M, N, K, (uintptr_t)a, a_strides, (uintptr_t)b, NULL) == NULL, "NULL strides");
    CHECK(tt_matmul_new(TT_FLOAT32, -1, N, K, (uintptr_t)a, a_strides, (uintptr_t)b, b_strides) == NULL, "m < 0");
    CHECK(tt_matmul_new(TT_FLOAT32, INT64_MAX / 2, 4, K, (uintptr_t)a, a_strides, (uintptr_t)b, b_strides) == NULL,
          "m * n past int64");
    CHECK(tt_matmul_new(TT_NUM_DTYPES, M, N, K, (uintptr_t)a, a_strides, (uintptr_t)b, b_strides) == NULL,
          "bad dtype");
    CHECK(tt_matmul_new(TT_FLOAT32, M, N, K, 0, a_strides, (uintptr_t)b, b_strides) == NULL, "NULL a with k > 0");
}

/* tt_binary_strided_new's shape checks (shared with tt_softmax_new). */
static void test_binary_strided_new_shapes(void) {
    const float one = 1.0f;
    const int64_t zero_strides[2] = {0, 0}, shape[2] = {2, 3}, negative[2] = {2, -3}, huge[2] = {INT64_MAX / 2, 3};
    tt_storage *out = tt_binary_strided_new(TT_ADD, 2, shape, (uintptr_t)&one, zero_strides, (uintptr_t)&one,
                                            zero_strides, TT_FLOAT32, TT_FLOAT32);
    CHECK(out != NULL && tt_storage_nbytes(out) == 6 * sizeof(float), "a broadcast 2x3 sum");
    if (out != NULL) {
        const float *sum = tt_storage_data(out);
        CHECK(sum[0] == 2.0f && sum[5] == 2.0f, "1 + 1 = %g", (double)sum[0]);
        tt_storage_release(out);
    }
    CHECK(tt_binary_strided_new(TT_ADD, 2, NULL, 0, zero_strides, 0, zero_strides, TT_FLOAT32, TT_FLOAT32) == NULL,
          "NULL shape");
    CHECK(tt_binary_strided_new(TT_ADD, 2, negative, 0, zero_strides, 0, zero_strides, TT_FLOAT32, TT_FLOAT32) ==
              NULL,
          "a negative size");
    CHECK(tt_binary_strided_new(TT_ADD, 2, huge, (uintptr_t)&one, zero_strides, (uintptr_t)&one, zero_strides,
                                TT_FLOAT32, TT_FLOAT32) == NULL,
          "an element count past int64");
}

int main(void) {
    test_softmax_new();
    test_matmul_new();
    test_binary_strided_new_shapes();
    return check_report("test_dispatch");
}
