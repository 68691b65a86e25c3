/*
 * test_manipulation.c: the manipulation kernels (tt_gather_axes, tt_triangle) under the sanitizers.
 *
 * Values are tested from Python against PyTorch; this file is for what only ASan/UBSan can see:
 * every element size in strided layouts reads and writes exactly inside its buffers, a bad
 * index is refused before anything is written, extreme diagonals do not overflow, and bad
 * arguments give a status instead of a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tt/kernels/manipulation.h"

/* The dtype of each element size, to run every size once. */
static const int SIZED_DTYPES[4] = {TT_UINT8, TT_INT16, TT_INT32, TT_FLOAT64};

/* Element `offset` of a buffer of elements of `size` bytes, read as an integer. */
static int64_t load(const char *base, size_t size, int64_t offset) {
    const char *p = base + offset * (int64_t)size;
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: return *(const int16_t *)p;
    case 4: return *(const int32_t *)p;
    default: { double d; memcpy(&d, p, sizeof d); return (int64_t)d; }
    }
}

static void store(char *base, size_t size, int64_t offset, int64_t value) {
    char *p = base + offset * (int64_t)size;
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)value; break;
    case 2: *(int16_t *)p = (int16_t)value; break;
    case 4: *(int32_t *)p = (int32_t)value; break;
    default: { double d = (double)value; memcpy(p, &d, sizeof d); break; }
    }
}

/* src is a 3x4 matrix viewed transposed (4x3, strides (1, 4)); dst is 5x3 with strides (1, 5)
   (column-major); index tables: rows [3, 0, 0, 2, 1], columns reversed [2, 1, 0]. */
static void test_gather_every_size(void) {
    for (int k = 0; k < 4; k++) {
        int dtype = SIZED_DTYPES[k];
        size_t size = tt_dtype_itemsize(dtype);
        _Alignas(64) char src[12 * 8], dst[15 * 8];
        for (int64_t i = 0; i < 12; i++) {
            store(src, size, i, i + 1);
        }
        memset(dst, 0, sizeof dst);
        const int64_t out_shape[2] = {5, 3}, src_shape[2] = {4, 3};
        const int64_t src_strides[2] = {1, 4}, dst_strides[2] = {1, 5};
        const int64_t index[8] = {3, 0, 0, 2, 1, 2, 1, 0};
        tt_status s = tt_gather_axes(2, out_shape, (uintptr_t)src, src_shape, src_strides, index,
                                     (uintptr_t)dst, dst_strides, dtype);
        CHECK_STATUS(s, TT_OK, "gather");
        for (int64_t i = 0; i < 5; i++) {
            for (int64_t j = 0; j < 3; j++) {
                int64_t want = load(src, size, index[i] * 1 + index[5 + j] * 4);
                CHECK_EQ(load(dst, size, i + 5 * j), want, "gathered element");
            }
        }
        /* a broadcast source (stride 0) and a 0-d copy */
        const int64_t zero_strides[2] = {0, 0};
        s = tt_gather_axes(2, out_shape, (uintptr_t)src, src_shape, zero_strides, index, (uintptr_t)dst,
                           dst_strides, dtype);
        CHECK_STATUS(s, TT_OK, "broadcast gather");
        CHECK_EQ(load(dst, size, 14), load(src, size, 0), "broadcast element");
        CHECK_STATUS(tt_gather_axes(0, NULL, (uintptr_t)(src + size), NULL, NULL, NULL, (uintptr_t)dst, NULL, dtype),
                     TT_OK, "0-d gather");
        CHECK_EQ(load(dst, size, 0), load(src, size, 1), "0-d element");
    }
}

static void test_gather_refuses_bad_input(void) {
    int32_t src[6] = {1, 2, 3, 4, 5, 6}, dst[6] = {0};
    const int64_t shape[1] = {6}, unit[1] = {1}, negative[1] = {-1};
    int64_t index[6] = {0, 1, 2, 3, 4, 6};
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, shape, unit, index, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INDEX, "index past the end");
    index[5] = -1;
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, shape, unit, index, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INDEX, "negative index");
    CHECK_EQ(dst[0], 0, "nothing written after a bad index");
    index[5] = 5;
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, shape, negative, index, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INVALID_ARG, "negative source stride");
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, shape, unit, index, (uintptr_t)dst, negative, TT_INT32),
                 TT_ERR_INVALID_ARG, "negative destination stride");
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, shape, unit, NULL, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INVALID_ARG, "NULL index");
    CHECK_STATUS(tt_gather_axes(1, shape, 0, shape, unit, index, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INVALID_ARG, "NULL source");
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, shape, unit, index, (uintptr_t)dst, unit, 99),
                 TT_ERR_UNSUPPORTED_DTYPE, "unknown dtype");
    CHECK_STATUS(tt_gather_axes(-1, shape, (uintptr_t)src, shape, unit, index, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INVALID_ARG, "negative ndim");
    const int64_t empty[1] = {0};
    CHECK_STATUS(tt_gather_axes(1, empty, 0, empty, unit, NULL, 0, unit, TT_INT32), TT_OK, "empty output");
    /* a source dim of size 0 with a non-empty output: every index is out of range */
    CHECK_STATUS(tt_gather_axes(1, shape, (uintptr_t)src, empty, unit, index, (uintptr_t)dst, unit, TT_INT32),
                 TT_ERR_INDEX, "gather from an empty dim");
}

/* A batch of two 3x4 matrices, transposed layout for the source, in place and out of place. */
static void test_triangle(void) {
    const int64_t diagonals[7] = {0, 1, -1, 5, -5, INT64_MAX, INT64_MIN};
    for (int k = 0; k < 4; k++) {
        int dtype = SIZED_DTYPES[k];
        size_t size = tt_dtype_itemsize(dtype);
        for (int upper = 0; upper < 2; upper++) {
            for (int t = 0; t < 7; t++) {
                _Alignas(64) char src[24 * 8], dst[24 * 8];
                for (int64_t i = 0; i < 24; i++) {
                    store(src, size, i, i + 1);
                }
                const int64_t shape[3] = {2, 3, 4}, src_strides[3] = {12, 1, 3}, dst_strides[3] = {12, 4, 1};
                tt_status s = tt_triangle(3, shape, (uintptr_t)src, src_strides, (uintptr_t)dst, dst_strides,
                                          dtype, diagonals[t], upper);
                CHECK_STATUS(s, TT_OK, "triangle");
                for (int64_t b = 0; b < 2; b++) {
                    for (int64_t i = 0; i < 3; i++) {
                        for (int64_t j = 0; j < 4; j++) {
                            int64_t d = diagonals[t];
                            int keep = upper ? (j - i >= d) : (j - i <= d);
                            int64_t want = keep ? load(src, size, b * 12 + i + 3 * j) : 0;
                            CHECK_EQ(load(dst, size, b * 12 + 4 * i + j), want, "triangle element");
                        }
                    }
                }
                /* in place over the same strides */
                s = tt_triangle(3, shape, (uintptr_t)src, src_strides, (uintptr_t)src, src_strides, dtype,
                                diagonals[t], upper);
                CHECK_STATUS(s, TT_OK, "triangle in place");
                CHECK_EQ(load(src, size, 13), load(dst, size, 16), "in place agrees with out of place");
            }
        }
    }
    int32_t x[4] = {0};
    const int64_t shape[2] = {2, 2}, strides[2] = {2, 1}, negative[2] = {-2, 1}, empty[2] = {0, 2};
    CHECK_STATUS(tt_triangle(1, shape, (uintptr_t)x, strides, (uintptr_t)x, strides, TT_INT32, 0, 0),
                 TT_ERR_INVALID_ARG, "1-d triangle");
    CHECK_STATUS(tt_triangle(2, shape, (uintptr_t)x, negative, (uintptr_t)x, strides, TT_INT32, 0, 0),
                 TT_ERR_INVALID_ARG, "negative stride");
    CHECK_STATUS(tt_triangle(2, shape, 0, strides, (uintptr_t)x, strides, TT_INT32, 0, 0), TT_ERR_INVALID_ARG,
                 "NULL source");
    CHECK_STATUS(tt_triangle(2, shape, (uintptr_t)x, strides, (uintptr_t)x, strides, -1, 0, 0),
                 TT_ERR_UNSUPPORTED_DTYPE, "unknown dtype");
    CHECK_STATUS(tt_triangle(2, empty, 0, strides, 0, strides, TT_INT32, 0, 0), TT_OK, "empty batch");
}

int main(void) {
    test_gather_every_size();
    test_gather_refuses_bad_input();
    test_triangle();
    return check_report("test_manipulation");
}
