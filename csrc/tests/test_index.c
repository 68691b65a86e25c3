/*
 * test_index.c: the indexing kernels (gather, scatter, nonzero, masked fill) at their edges.
 *
 * Values are checked against PyTorch from Python (tests/ops/test_indexing.py); this file is for
 * what the sanitizers see: indices at and beyond both ends of a dimension (INT64_MIN, INT64_MAX,
 * -size - 1, size) must give TT_ERR_INDEX without touching memory outside the buffers, every
 * (reduction, dtype) combine runs on duplicates, nonzero never writes past its capacity, and bad
 * arguments are refused.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernels/half.h"
#include "tt/kernels/index.h"
#include "tt/kernels/parallel.h"

/* src is a 3x4 int32 matrix read through its transpose (shape 4x3, strides 1, 4). */
static void test_gather_two_indices(void) {
    int32_t src[12];
    for (int i = 0; i < 12; i++) {
        src[i] = 100 + i;
    }
    /* out[p] = srcT[rows[p], cols[p]] over shape (2, 2), rows broadcast along dim 1. */
    int64_t rows[2] = {3, -4}, cols[2] = {0, 2};
    int32_t out[4] = {0};
    const int64_t shape[2] = {2, 2}, out_strides[2] = {2, 1}, base[2] = {0, 0};
    const uintptr_t indices[2] = {(uintptr_t)rows, (uintptr_t)cols};
    const int64_t index_strides[4] = {1, 0, 0, 1};
    const int64_t sizes[2] = {4, 3}, strides[2] = {1, 4};
    CHECK_STATUS(tt_index_gather(2, shape, (uintptr_t)out, out_strides, (uintptr_t)src, base, 2, indices,
                                 index_strides, sizes, strides, 1, TT_INT32), TT_OK, "gather");
    /* srcT[r, c] = src[c, r] = 100 + 4c + r */
    CHECK_EQ(out[0], 103, "srcT[3, 0]");
    CHECK_EQ(out[1], 111, "srcT[3, 2]");
    CHECK_EQ(out[2], 100, "srcT[-4 -> 0, 0]");
    CHECK_EQ(out[3], 108, "srcT[0, 2]");
}

static void test_out_of_range(void) {
    const int64_t bad[] = {INT64_MIN, INT64_MAX, -5, 4, 1000};
    double src[4] = {1, 2, 3, 4}, out[1];
    const int64_t shape[1] = {1}, unit[1] = {1}, zero[1] = {0}, size[1] = {4};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int wrap = 0; wrap < 2; wrap++) {
            int64_t index = bad[i];
            uintptr_t address = (uintptr_t)&index;
            CHECK_STATUS(tt_index_gather(1, shape, (uintptr_t)out, unit, (uintptr_t)src, zero, 1, &address, unit,
                                         size, unit, wrap, TT_FLOAT64), TT_ERR_INDEX, "gather out of range");
            for (int mode = 0; mode < TT_NUM_SCATTER_MODES; mode++) {
                CHECK_STATUS(tt_index_scatter(1, shape, (uintptr_t)src, zero, (uintptr_t)out, unit, 1, &address,
                                              unit, size, unit, wrap, mode, TT_FLOAT64),
                             TT_ERR_INDEX, "scatter out of range");
            }
        }
    }
    int64_t minus_one = -1;
    uintptr_t address = (uintptr_t)&minus_one;
    CHECK_STATUS(tt_index_gather(1, shape, (uintptr_t)out, unit, (uintptr_t)src, zero, 1, &address, unit, size,
                                 unit, 0, TT_FLOAT64), TT_ERR_INDEX, "-1 without wrap");
    CHECK_STATUS(tt_index_gather(1, shape, (uintptr_t)out, unit, (uintptr_t)src, zero, 1, &address, unit, size,
                                 unit, 1, TT_FLOAT64), TT_OK, "-1 with wrap");
    CHECK(out[0] == 4.0, "-1 wraps to the last element, got %g", out[0]);
    int64_t two = 2;                              /* a 0-d gather: no shape, no strides */
    address = (uintptr_t)&two;
    CHECK_STATUS(tt_index_gather(0, NULL, (uintptr_t)out, NULL, (uintptr_t)src, NULL, 1, &address, NULL, size, unit,
                                 0, TT_FLOAT64), TT_OK, "0-d gather");
    CHECK(out[0] == 3.0, "0-d gather reads src[2], got %g", out[0]);
    const int64_t empty_size[1] = {0};
    int64_t zero_index = 0;
    address = (uintptr_t)&zero_index;
    CHECK_STATUS(tt_index_gather(1, shape, (uintptr_t)out, unit, (uintptr_t)src, zero, 1, &address, unit,
                                 empty_size, unit, 1, TT_FLOAT64), TT_ERR_INDEX, "any index into an empty dim");
}

/* A long gather through one index (the typed loop, on two threads, with its prefetch of the
   reads ahead): right values for in-range indices, negative ones wrapped; TT_ERR_INDEX for bad
   indices near the end of the row, extreme ones within the prefetch distance included. */
static void test_long_gather(void) {
    enum { N = 40000, SIZE = 1000 };
    static double src[SIZE], out[N];
    static int64_t index[N];
    for (int64_t i = 0; i < SIZE; i++) {
        src[i] = (double)i;
    }
    for (int64_t i = 0; i < N; i++) {
        index[i] = (i * 7919) % (2 * SIZE) - SIZE;   /* [-SIZE, SIZE) */
    }
    const int before = tt_get_num_threads();
    tt_set_num_threads(2);
    const int64_t shape[1] = {N}, unit[1] = {1}, zero[1] = {0}, size[1] = {SIZE};
    uintptr_t address = (uintptr_t)index;
    CHECK_STATUS(tt_index_gather(1, shape, (uintptr_t)out, unit, (uintptr_t)src, zero, 1, &address, unit, size,
                                 unit, 1, TT_FLOAT64), TT_OK, "long gather");
    for (int64_t i = 0; i < N; i++) {
        const int64_t want = index[i] < 0 ? index[i] + SIZE : index[i];
        CHECK(out[i] == (double)want, "long gather: out[%lld] = %g, expected %lld", (long long)i, out[i],
              (long long)want);
    }
    index[N - 3] = INT64_MAX;
    index[N - 9] = INT64_MIN;
    CHECK_STATUS(tt_index_gather(1, shape, (uintptr_t)out, unit, (uintptr_t)src, zero, 1, &address, unit, size,
                                 unit, 1, TT_FLOAT64), TT_ERR_INDEX, "long gather, bad indices near the end");
    tt_set_num_threads(before);
}

/* x[mask] over contiguous data on two threads, across many chunks: the selected elements in
   order, exactly `count` of them (ASan sees a store past the output), and the NULL cases. */
static void test_masked_select(void) {
    enum { N = 300007 };
    static int32_t x[N];
    static uint8_t mask[N];
    int64_t want = 0;
    for (int64_t i = 0; i < N; i++) {
        x[i] = (int32_t)(i * 3 + 1);
        mask[i] = (uint8_t)(((i * 2654435761u) >> 7) % 3 == 0 ? 1 + i % 2 : 0); /* nonzero bytes select */
        want += mask[i] != 0;
    }
    const int before = tt_get_num_threads();
    tt_set_num_threads(2);
    int64_t count = -1;
    tt_storage *out = tt_masked_select_new(N, (uintptr_t)x, (uintptr_t)mask, TT_INT32, &count);
    CHECK(out != NULL && count == want, "masked select: count %lld, expected %lld", (long long)count,
          (long long)want);
    if (out != NULL) {
        const int32_t *got = (const int32_t *)tt_storage_data_address(out);
        int64_t j = 0;
        for (int64_t i = 0; i < N && j < count; i++) {
            if (mask[i] != 0) {
                CHECK(got[j] == x[i], "masked select: out[%lld] = %d, expected %d", (long long)j, got[j], x[i]);
                j++;
            }
        }
        tt_storage_release(out);
    }
    memset(mask, 0, sizeof mask);
    out = tt_masked_select_new(N, (uintptr_t)x, (uintptr_t)mask, TT_INT32, &count);
    CHECK(out != NULL && count == 0, "masked select of an all-false mask: %lld elements", (long long)count);
    tt_storage_release(out);
    CHECK(tt_masked_select_new(-1, (uintptr_t)x, (uintptr_t)mask, TT_INT32, &count) == NULL, "n < 0");
    CHECK(tt_masked_select_new(N, 0, (uintptr_t)mask, TT_INT32, &count) == NULL, "NULL x");
    CHECK(tt_masked_select_new(N, (uintptr_t)x, (uintptr_t)mask, TT_NUM_DTYPES, &count) == NULL, "bad dtype");
    CHECK(tt_masked_select_new(N, (uintptr_t)x, (uintptr_t)mask, TT_INT32, NULL) == NULL, "NULL count");
    tt_set_num_threads(before);
}

/* x[index] by whole rows on two threads, in several chunks: the picked rows in order
   (negative indices from the end, a strided index), exactly n * row elements (ASan sees a store
   past the output), an empty result, and the NULL cases: an index out of range either way, bad
   arguments. */
static void test_index_rows(void) {
    enum { ROWS = 1000, ROW = 37, N = 16001 };   /* 74-byte rows: 3,543 a chunk, so N makes 4 chunks */
    static int16_t x[ROWS * ROW];
    static int64_t index[2 * N];
    for (int64_t i = 0; i < ROWS * ROW; i++) {
        x[i] = (int16_t)(i % 30011);
    }
    for (int64_t i = 0; i < N; i++) {
        index[2 * i] = (i * 7919) % (2 * ROWS) - ROWS;   /* [-ROWS, ROWS) */
        index[2 * i + 1] = ROWS;                          /* skipped by the stride: out of range if read */
    }
    const int before = tt_get_num_threads();
    tt_set_num_threads(2);
    tt_storage *out = tt_index_rows_new((uintptr_t)x, ROWS, ROW, (uintptr_t)index, N, 2, TT_INT16);
    CHECK(out != NULL, "index rows: NULL for valid indices");
    if (out != NULL) {
        const int16_t *got = (const int16_t *)tt_storage_data_address(out);
        int bad = 0;
        for (int64_t i = 0; i < N && !bad; i++) {
            const int64_t k = index[2 * i] < 0 ? index[2 * i] + ROWS : index[2 * i];
            bad = memcmp(got + i * ROW, x + k * ROW, ROW * sizeof(int16_t)) != 0;
            CHECK(!bad, "index rows: row %lld differs", (long long)i);
        }
        tt_storage_release(out);
    }
    out = tt_index_rows_new((uintptr_t)x, ROWS, ROW, (uintptr_t)index, 0, 1, TT_INT16);
    CHECK(out != NULL && tt_storage_nbytes(out) == 0, "index rows: no index gives an empty storage");
    tt_storage_release(out);
    int64_t wrong[2] = {3, ROWS};
    CHECK(tt_index_rows_new((uintptr_t)x, ROWS, ROW, (uintptr_t)wrong, 2, 1, TT_INT16) == NULL, "index = rows");
    wrong[1] = -ROWS - 1;
    CHECK(tt_index_rows_new((uintptr_t)x, ROWS, ROW, (uintptr_t)wrong, 2, 1, TT_INT16) == NULL, "index < -rows");
    wrong[1] = INT64_MIN;
    CHECK(tt_index_rows_new((uintptr_t)x, ROWS, ROW, (uintptr_t)wrong, 2, 1, TT_INT16) == NULL, "INT64_MIN");
    CHECK(tt_index_rows_new((uintptr_t)x, ROWS, ROW, (uintptr_t)index, 1, 1, TT_NUM_DTYPES) == NULL, "bad dtype");
    CHECK(tt_index_rows_new((uintptr_t)x, ROWS, ROW, 0, 1, 1, TT_INT16) == NULL, "NULL index");
    CHECK(tt_index_rows_new(0, ROWS, ROW, (uintptr_t)index, 1, 1, TT_INT16) == NULL, "NULL x");
    CHECK(tt_index_rows_new((uintptr_t)x, -1, ROW, (uintptr_t)index, 1, 1, TT_INT16) == NULL, "rows < 0");
    CHECK(tt_index_rows_new((uintptr_t)x, ROWS, INT64_MAX / 2, (uintptr_t)index, 4, 2, TT_INT16) == NULL,
          "byte count overflows");
    tt_set_num_threads(before);
}

/* Eight values all sent to element 1 of a 3-element destination, for every mode and dtype. */
static void test_scatter_duplicates(void) {
    enum { N = 8 };
    int64_t index[N];
    for (int i = 0; i < N; i++) {
        index[i] = 1;
    }
    const int64_t shape[1] = {N}, unit[1] = {1}, zero[1] = {0}, size[1] = {3};
    const uintptr_t address = (uintptr_t)index;
    for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
        for (int mode = 0; mode < TT_NUM_SCATTER_MODES; mode++) {
            _Alignas(8) unsigned char dst[3 * 8], src[N * 8];
            size_t itemsize = tt_dtype_itemsize(dtype);
            memset(dst, 0, sizeof dst);
            for (int i = 0; i < N; i++) {       /* src[i] = 1 in the dtype's encoding */
                switch (dtype) {
                case TT_FLOAT16: { uint16_t h = tt_float_to_half(1.0f); memcpy(src + i * 2, &h, 2); break; }
                case TT_FLOAT32: { float f = 1.0f; memcpy(src + i * 4, &f, 4); break; }
                case TT_FLOAT64: { double d = 1.0; memcpy(src + i * 8, &d, 8); break; }
                default: memset(src + i * itemsize, 0, itemsize); src[i * itemsize] = 1; break;
                }
            }
            CHECK_STATUS(tt_index_scatter(1, shape, (uintptr_t)dst, zero, (uintptr_t)src, unit, 1, &address, unit,
                                          size, unit, 0, mode, dtype), TT_OK, "scatter duplicates");
            double got;
            switch (dtype) {
            case TT_FLOAT16: { uint16_t h; memcpy(&h, dst + 2, 2); got = tt_half_to_float(h); break; }
            case TT_FLOAT32: { float f; memcpy(&f, dst + 4, 4); got = f; break; }
            case TT_FLOAT64: memcpy(&got, dst + 8, 8); break;
            default: got = dst[itemsize]; break;    /* little-endian low byte; values stay small */
            }
            double expected = mode == TT_SCATTER_SUM ? (dtype == TT_BOOL ? 1 : N)
                              : mode == TT_SCATTER_PROD || mode == TT_SCATTER_AMIN ? 0 : 1;
            CHECK(got == expected, "mode %d dtype %d: expected %g, got %g", mode, dtype, expected, got);
            CHECK(dst[0] == 0 && dst[2 * itemsize] == 0, "mode %d dtype %d: neighbours untouched", mode, dtype);
        }
    }
    /* NaN wins in max and min, from either side */
    double dst[2] = {NAN, 1.0}, src[2] = {5.0, NAN};
    int64_t idx[2] = {0, 1};
    const int64_t two[1] = {2};
    const uintptr_t a = (uintptr_t)idx;
    for (int mode = TT_SCATTER_AMAX; mode <= TT_SCATTER_AMIN; mode++) {
        dst[0] = NAN;
        dst[1] = 1.0;
        CHECK_STATUS(tt_index_scatter(1, two, (uintptr_t)dst, zero, (uintptr_t)src, unit, 1, &a, unit, two, unit, 0,
                                      mode, TT_FLOAT64), TT_OK, "amax/amin");
        CHECK(isnan(dst[0]) && isnan(dst[1]), "mode %d: NaN must win", mode);
    }
}

static void test_nonzero(void) {
    /* a 3x2 float view with strides (4, 2) over 12 floats: NaN and -0.0 included */
    float data[12] = {0};
    data[0] = -0.0f;
    data[2] = NAN;
    data[4] = 0.0f;
    data[6] = 0.0f;
    data[8] = 2.0f;
    data[10] = -0.0f;
    const int64_t shape[2] = {3, 2}, strides[2] = {4, 2};
    int64_t count = -1;
    CHECK_STATUS(tt_count_nonzero(2, shape, (uintptr_t)data, strides, TT_FLOAT32, &count), TT_OK, "count");
    CHECK_EQ(count, 2, "nonzero count (NaN counts, -0.0 does not)");
    int64_t rows[2 * 2 + 2] = {0, 0, 0, 0, -7, -7};
    CHECK_STATUS(tt_nonzero(2, shape, (uintptr_t)data, strides, TT_FLOAT32, (uintptr_t)rows, 2), TT_OK, "nonzero");
    CHECK(rows[0] == 0 && rows[1] == 1 && rows[2] == 2 && rows[3] == 0, "coordinates (0,1) (2,0)");
    CHECK(rows[4] == -7 && rows[5] == -7, "nothing written past the capacity");
    CHECK_STATUS(tt_nonzero(2, shape, (uintptr_t)data, strides, TT_FLOAT32, (uintptr_t)rows, 1), TT_ERR_INVALID_ARG,
                 "more nonzeros than capacity");
    uint16_t half[3] = {0x8000u, 0x7e00u, 0};   /* -0.0, NaN, 0 */
    const int64_t three[1] = {3}, unit[1] = {1};
    CHECK_STATUS(tt_count_nonzero(1, three, (uintptr_t)half, unit, TT_FLOAT16, &count), TT_OK, "half count");
    CHECK_EQ(count, 1, "float16 nonzero count");
    double scalar = 3.0;
    CHECK_STATUS(tt_count_nonzero(0, NULL, (uintptr_t)&scalar, NULL, TT_FLOAT64, &count), TT_OK, "0-d count");
    CHECK_EQ(count, 1, "0-d nonzero count");
}

/* nonzero of contiguous data takes the chunked path: (300, 1001) int16 and its (300300,) view,
   on two threads, against a plain loop; more nonzeros than the capacity write nothing. */
static void test_nonzero_contiguous(void) {
    enum { ROWS = 300, COLUMNS = 1001, N = ROWS * COLUMNS };
    static int16_t data[N];
    static int64_t rows[2 * N + 1];
    int64_t want = 0;
    for (int64_t i = 0; i < N; i++) {
        data[i] = (int16_t)(((i * 2654435761u) >> 9) % 5 == 0 ? (i % 7) - 3 : 0);
        want += data[i] != 0;
    }
    const int before = tt_get_num_threads();
    tt_set_num_threads(2);
    const int64_t shape[2] = {ROWS, COLUMNS}, strides[2] = {COLUMNS, 1}, flat[1] = {N}, unit[1] = {1};
    int64_t count = -1;
    CHECK_STATUS(tt_count_nonzero(2, shape, (uintptr_t)data, strides, TT_INT16, &count), TT_OK, "count");
    CHECK_EQ(count, want, "contiguous nonzero count");
    rows[2 * want] = -7;
    CHECK_STATUS(tt_nonzero(2, shape, (uintptr_t)data, strides, TT_INT16, (uintptr_t)rows, want), TT_OK, "2-d");
    int64_t j = 0;
    for (int64_t i = 0; i < N; i++) {
        if (data[i] != 0) {
            CHECK(rows[2 * j] == i / COLUMNS && rows[2 * j + 1] == i % COLUMNS, "2-d coordinates of element %lld",
                  (long long)i);
            j++;
        }
    }
    CHECK(rows[2 * want] == -7, "nothing written past the capacity");
    CHECK_STATUS(tt_nonzero(1, flat, (uintptr_t)data, unit, TT_INT16, (uintptr_t)rows, want), TT_OK, "1-d");
    j = 0;
    for (int64_t i = 0; i < N; i++) {
        if (data[i] != 0) {
            CHECK(rows[j] == i, "1-d coordinate of element %lld", (long long)i);
            j++;
        }
    }
    rows[want - 1] = -7;
    CHECK_STATUS(tt_nonzero(1, flat, (uintptr_t)data, unit, TT_INT16, (uintptr_t)rows, want - 1), TT_ERR_INVALID_ARG,
                 "more nonzeros than capacity");
    CHECK(rows[want - 1] == -7, "a refused call writes nothing past the capacity");
    tt_set_num_threads(before);
}

static void test_masked_fill(void) {
    int16_t x[6] = {1, 2, 3, 4, 5, 6};
    uint8_t mask[3] = {1, 0, 1};
    int16_t value = -9;
    const int64_t shape[2] = {2, 3}, x_strides[2] = {3, 1}, mask_strides[2] = {0, 1};
    CHECK_STATUS(tt_masked_fill(2, shape, (uintptr_t)x, x_strides, (uintptr_t)mask, mask_strides, (uintptr_t)&value,
                                TT_INT16), TT_OK, "masked fill");
    CHECK(x[0] == -9 && x[1] == 2 && x[2] == -9 && x[3] == -9 && x[4] == 5 && x[5] == -9, "broadcast mask");
}

static void test_bad_arguments(void) {
    double buffer[4] = {0};
    int64_t index = 0;
    const uintptr_t address = (uintptr_t)&index;
    const int64_t shape[1] = {1}, unit[1] = {1}, size[1] = {4}, negative[1] = {-1};
    const uintptr_t p = (uintptr_t)buffer;
    CHECK_STATUS(tt_index_gather(65, shape, p, unit, p, unit, 1, &address, unit, size, unit, 0, TT_FLOAT64),
                 TT_ERR_INVALID_ARG, "too many dims");
    CHECK_STATUS(tt_index_gather(1, shape, p, unit, p, unit, 65, &address, unit, size, unit, 0, TT_FLOAT64),
                 TT_ERR_INVALID_ARG, "too many index tensors");
    CHECK_STATUS(tt_index_gather(1, shape, p, unit, p, unit, 1, &address, unit, size, unit, 0, 42),
                 TT_ERR_UNSUPPORTED_DTYPE, "unknown dtype");
    CHECK_STATUS(tt_index_gather(1, shape, 0, unit, p, unit, 1, &address, unit, size, unit, 0, TT_FLOAT64),
                 TT_ERR_INVALID_ARG, "NULL output");
    CHECK_STATUS(tt_index_gather(1, shape, p, unit, p, unit, 1, &address, unit, negative, unit, 0, TT_FLOAT64),
                 TT_ERR_INVALID_ARG, "negative dim size");
    CHECK_STATUS(tt_index_gather(1, negative, p, unit, p, unit, 1, &address, unit, size, unit, 0, TT_FLOAT64),
                 TT_ERR_INVALID_ARG, "negative shape");
    const int64_t two[1] = {2}, zero[1] = {0};
    CHECK_STATUS(tt_index_gather(1, two, p, negative, p, unit, 1, &address, zero, size, unit, 0, TT_FLOAT64),
                 TT_ERR_INVALID_ARG, "negative stride");
    CHECK_STATUS(tt_index_scatter(1, shape, p, unit, p, unit, 1, &address, unit, size, unit, 0, TT_NUM_SCATTER_MODES,
                                  TT_FLOAT64), TT_ERR_INVALID_ARG, "unknown scatter mode");
    CHECK_STATUS(tt_count_nonzero(1, shape, p, unit, TT_FLOAT64, NULL), TT_ERR_INVALID_ARG, "NULL count");
    CHECK_STATUS(tt_nonzero(1, shape, p, unit, TT_FLOAT64, 0, -1), TT_ERR_INVALID_ARG, "negative capacity");
    CHECK_STATUS(tt_masked_fill(1, shape, p, unit, 0, unit, p, TT_FLOAT64), TT_ERR_INVALID_ARG, "NULL mask");
    const int64_t empty[1] = {0};
    CHECK_STATUS(tt_index_gather(1, empty, 0, unit, 0, unit, 1, &address, unit, size, unit, 0, TT_FLOAT64), TT_OK,
                 "empty gather with NULL addresses");
}

int main(void) {
    test_gather_two_indices();
    test_out_of_range();
    test_long_gather();
    test_masked_select();
    test_index_rows();
    test_scatter_duplicates();
    test_nonzero();
    test_nonzero_contiguous();
    test_masked_fill();
    test_bad_arguments();
    return check_report("test_index");
}
