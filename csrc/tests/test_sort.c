/*
 * test_sort.c: the sorting kernels (tt_sort, tt_searchsorted, tt_unique_runs) for every dtype,
 * under the sanitizers.
 *
 * Values are checked against PyTorch from Python; here every dtype runs through the merge sort
 * (rows shorter than, equal to and longer than the insertion-sort runs), the heap selection and
 * the bisection on strided rows full of ties, with NaN, -0.0 and the integer extremes, so that
 * ASan sees every buffer access and UBSan every comparison. The checks are the properties that
 * define the result: each row is ordered, the indices are a permutation, ties keep their input
 * order, the values are the input's bytes at those indices, a prefix equals the full sort's. Rows
 * sorted on several threads (ThreadSanitizer watches) give the one-thread bits.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/half.h"
#include "tt/kernels/parallel.h"
#include "tt/kernels/sort.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* Element i of a buffer of `dtype`, as a double (float16 through float). */
static double load(const char *p, int dtype) {
    switch (dtype) {
    case TT_BOOL: return *(const uint8_t *)p != 0;
    case TT_INT8: return *(const int8_t *)p;
    case TT_INT16: return *(const int16_t *)p;
    case TT_INT32: return *(const int32_t *)p;
    case TT_INT64: return (double)*(const int64_t *)p;
    case TT_UINT8: return *(const uint8_t *)p;
    case TT_FLOAT16: return tt_half_to_float(*(const uint16_t *)p);
    case TT_FLOAT32: return *(const float *)p;
    default: return *(const double *)p;
    }
}

/* Random values with many ties: a pool of 6 per dtype (NaN, unless !nan, and both zeros for floats). */
static void fill(char *p, int64_t n, int dtype, int nan) {
    const double pool[6] = {nan ? NAN : -INFINITY, -0.0, 0.0, 1.5, -2.0, INFINITY};
    const int64_t ints[6] = {INT64_MIN, INT64_MAX, 0, 1, -1, 7};
    for (int64_t i = 0; i < n; i++) {
        int j = (int)(xorshift64(&rng_state) % 6);
        char *q = p + i * (int64_t)tt_dtype_itemsize(dtype);
        switch (dtype) {
        case TT_BOOL: *(uint8_t *)q = (uint8_t)(j & 1); break;
        case TT_INT8: *(int8_t *)q = (int8_t)(j == 0 ? INT8_MIN : j == 1 ? INT8_MAX : ints[j]); break;
        case TT_INT16: *(int16_t *)q = (int16_t)(j == 0 ? INT16_MIN : j == 1 ? INT16_MAX : ints[j]); break;
        case TT_INT32: *(int32_t *)q = (int32_t)(j == 0 ? INT32_MIN : j == 1 ? INT32_MAX : ints[j]); break;
        case TT_INT64: *(int64_t *)q = ints[j]; break;
        case TT_UINT8: *(uint8_t *)q = (uint8_t)(j * 51); break;
        case TT_FLOAT16: *(uint16_t *)q = tt_float_to_half((float)pool[j]); break;
        case TT_FLOAT32: *(float *)q = (float)pool[j]; break;
        default: *(double *)q = pool[j]; break;
        }
    }
}

/* -1, 0, 1: a before, tied with, after b, in ascending (or descending) order with NaN last (first). */
static int order(double a, double b, int descending) {
    int na = isnan(a), nb = isnan(b);
    if (na || nb) {
        return na && nb ? 0 : (na ? 1 : -1) * (descending ? -1 : 1);
    }
    return a < b ? (descending ? 1 : -1) : a > b ? (descending ? -1 : 1) : 0;
}

/* Sorts `rows` strided rows of length n (x row-major with a gap: element (r, i) at r*(3n) + 3i)
   and checks every property; then checks that prefixes [start, start + count) agree. */
static void check_sort(int dtype, int64_t rows, int64_t n, int descending) {
    const size_t size = tt_dtype_itemsize(dtype);
    char *x = calloc((size_t)(rows * 3 * n + 1), size);
    char *values = calloc((size_t)(rows * n + 1), size);
    int64_t *indices = calloc((size_t)(rows * n + 1), sizeof(int64_t));
    char *part_values = calloc((size_t)(rows * n + 1), size);
    int64_t *part_indices = calloc((size_t)(rows * n + 1), sizeof(int64_t));
    int *seen = calloc((size_t)(n + 1), sizeof(int));
    fill(x, rows * 3 * n, dtype, 1);
    /* dims (rows, n), sorting dim 1; the output is laid out (n, rows): transposed. */
    const int64_t shape[2] = {rows, n}, x_strides[2] = {3 * n, 3}, out_strides[2] = {1, rows};
    tt_status s = tt_sort(2, shape, 1, (uintptr_t)x, x_strides, (uintptr_t)values, out_strides,
                          (uintptr_t)indices, out_strides, 0, n, dtype, descending);
    CHECK_STATUS(s, TT_OK, "tt_sort");
    for (int64_t r = 0; r < rows && s == TT_OK; r++) {
        memset(seen, 0, (size_t)(n + 1) * sizeof(int));
        for (int64_t j = 0; j < n; j++) {
            int64_t idx = indices[j * rows + r];
            if (!check_record(idx >= 0 && idx < n && !seen[idx])) {
                fprintf(stderr, "dtype %d n %lld: index %lld is not a permutation entry\n", dtype, (long long)n,
                        (long long)idx);
                goto done;
            }
            seen[idx] = 1;
            const char *src = x + (r * 3 * n + 3 * idx) * (int64_t)size;
            CHECK(memcmp(values + (j * rows + r) * (int64_t)size, src, size) == 0,
                  "dtype %d: value %lld is not the input's bytes at its index", dtype, (long long)j);
            if (j > 0) {
                int64_t prev = indices[(j - 1) * rows + r];
                double a = load(x + (r * 3 * n + 3 * prev) * (int64_t)size, dtype), b = load(src, dtype);
                int o = order(a, b, descending);
                CHECK(o < 0 || (o == 0 && prev < idx), "dtype %d desc %d n %lld: positions %lld, %lld out of order",
                      dtype, descending, (long long)n, (long long)(j - 1), (long long)j);
            }
        }
    }
    /* prefixes (the heap path when short) and single positions (kthvalue) agree with the sort,
       from the strided rows and from a contiguous copy (whose selection checks blocks at once) */
    char *dense = calloc((size_t)(rows * n + 1), size);
    for (int64_t i = 0; i < rows * n; i++) {
        memcpy(dense + i * (int64_t)size, x + 3 * i * (int64_t)size, size);
    }
    const int64_t dense_strides[2] = {n, 1};
    const int64_t starts[3] = {0, 0, n / 2}, counts[3] = {n / 20 + (n > 0), n / 3, n > 0};
    for (int c = 0; c < 6; c++) {
        if (starts[c % 3] + counts[c % 3] > n) {
            continue;
        }
        const int64_t start = starts[c % 3], count = counts[c % 3], part_strides[2] = {count, 1};
        s = tt_sort(2, shape, 1, c < 3 ? (uintptr_t)x : (uintptr_t)dense, c < 3 ? x_strides : dense_strides,
                    (uintptr_t)part_values, part_strides, (uintptr_t)part_indices, part_strides, start, count, dtype,
                    descending);
        CHECK_STATUS(s, TT_OK, "tt_sort of a part");
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t j = 0; j < count; j++) {
                CHECK_EQ(part_indices[r * count + j], indices[(start + j) * rows + r], "prefix index");
            }
        }
    }
    free(dense);
done:
    free(x);
    free(values);
    free(indices);
    free(part_values);
    free(part_indices);
    free(seen);
}

/* Searches values in a sorted row (without NaN) with and without a sorter; compares with a linear
   scan for the first p with row[p] >= v (left) or row[p] > v (right), none for a NaN value. */
static void check_searchsorted(int dtype, int64_t n) {
    const size_t size = tt_dtype_itemsize(dtype);
    char *row = calloc((size_t)(n + 1), size), *values = calloc((size_t)(n + 1), size);
    int64_t *sorted_idx = calloc((size_t)(n + 1), sizeof(int64_t)), *out = calloc((size_t)(n + 1), sizeof(int64_t));
    int64_t *reversed = calloc((size_t)(n + 1), sizeof(int64_t));
    char *shuffled = calloc((size_t)(n + 1), size), *scratch = calloc((size_t)(n + 1), size);
    fill(scratch, n, dtype, 0);   /* NaN in a row breaks bisection (in PyTorch too): NaN only as values */
    fill(values, n, dtype, 1);
    const int64_t shape[1] = {n}, unit[1] = {1}, zero[1] = {0};
    CHECK_STATUS(tt_sort(1, shape, 0, (uintptr_t)scratch, unit, (uintptr_t)row, unit, (uintptr_t)sorted_idx, unit,
                         0, n, dtype, 0), TT_OK, "sort the row");
    for (int right = 0; right <= 1; right++) {
        CHECK_STATUS(tt_searchsorted(1, shape, (uintptr_t)values, unit, (uintptr_t)row, zero, n, 1,
                                     0, NULL, 0, 0, (uintptr_t)out, unit, 0, dtype, right), TT_OK, "search");
        for (int64_t i = 0; i < n; i++) {
            double v = load(values + i * (int64_t)size, dtype);
            int64_t expected = 0;
            while (expected < n) {
                double m = load(row + expected * (int64_t)size, dtype);
                if (right ? (m > v) : (m >= v)) {
                    break;
                }
                expected++;
            }
            CHECK_EQ(out[i], expected, "insertion point");
        }
        /* the same row stored back to front, with a sorter that reads it front to back */
        for (int64_t i = 0; i < n; i++) {
            memcpy(shuffled + (n - 1 - i) * (int64_t)size, row + i * (int64_t)size, size);
            reversed[i] = n - 1 - i;
        }
        int64_t *again = calloc((size_t)(n + 1), sizeof(int64_t));
        CHECK_STATUS(tt_searchsorted(1, shape, (uintptr_t)values, unit, (uintptr_t)shuffled, zero, n, 1,
                                     (uintptr_t)reversed, zero, 1, n, (uintptr_t)again, unit, 0, dtype, right),
                     TT_OK, "search with a sorter");
        CHECK(n == 0 || memcmp(again, out, (size_t)n * sizeof(int64_t)) == 0, "a sorter changes nothing");
        free(again);
    }
    if (n > 0) {
        reversed[0] = n;   /* one past the end */
        CHECK_STATUS(tt_searchsorted(1, shape, (uintptr_t)values, unit, (uintptr_t)shuffled, zero, n, 1,
                                     (uintptr_t)reversed, zero, 1, n, (uintptr_t)out, unit, 0, dtype, 0),
                     TT_ERR_INDEX, "sorter entry out of range");
    }
    free(row);
    free(values);
    free(sorted_idx);
    free(out);
    free(reversed);
    free(shuffled);
    free(scratch);
}

/* Runs of a sorted buffer: counts add up, the inverse and first positions are consistent. */
static void check_unique_runs(int dtype, int64_t n) {
    const size_t size = tt_dtype_itemsize(dtype);
    char *x = calloc((size_t)(n + 1), size), *sorted = calloc((size_t)(n + 1), size);
    char *unique = calloc((size_t)(n + 1), size);
    int64_t *perm = calloc((size_t)(n + 1), sizeof(int64_t)), *counts = calloc((size_t)(n + 1), sizeof(int64_t));
    int64_t *first = calloc((size_t)(n + 1), sizeof(int64_t)), *inverse = calloc((size_t)(n + 1), sizeof(int64_t));
    fill(x, n, dtype, 1);
    const int64_t shape[1] = {n}, unit[1] = {1};
    CHECK_STATUS(tt_sort(1, shape, 0, (uintptr_t)x, unit, (uintptr_t)sorted, unit, (uintptr_t)perm, unit, 0, n,
                         dtype, 0), TT_OK, "sort before runs");
    int64_t runs = -1;
    CHECK_STATUS(tt_unique_runs(n, 1, (uintptr_t)sorted, (uintptr_t)perm, (uintptr_t)unique, (uintptr_t)counts,
                                (uintptr_t)first, (uintptr_t)inverse, dtype, &runs), TT_OK, "runs");
    int64_t total = 0;
    for (int64_t g = 0; g < runs; g++) {
        total += counts[g];
        CHECK(memcmp(unique + g * (int64_t)size, x + first[g] * (int64_t)size, size) == 0, "first occurrence");
    }
    CHECK_EQ(total, n, "counts add up to n");
    for (int64_t i = 0; i < n; i++) {
        double a = load(x + i * (int64_t)size, dtype), b = load(unique + inverse[i] * (int64_t)size, dtype);
        CHECK(a == b || (isnan(a) && isnan(b)), "inverse maps element %lld to its value", (long long)i);
    }
    if (n > 0) {
        perm[n - 1] = -1;
        CHECK_STATUS(tt_unique_runs(n, 1, (uintptr_t)sorted, (uintptr_t)perm, 0, 0, 0, (uintptr_t)inverse, dtype, &runs),
                     TT_ERR_INDEX, "perm entry out of range");
    }
    free(x);
    free(sorted);
    free(unique);
    free(perm);
    free(counts);
    free(first);
    free(inverse);
}

/* -1, 0, 1: lexicographic order of two rows, ascending with NaN last. */
static int row_order(const char *a, const char *b, int64_t row_len, int dtype) {
    const int64_t size = (int64_t)tt_dtype_itemsize(dtype);
    for (int64_t i = 0; i < row_len; i++) {
        int o = order(load(a + i * size, dtype), load(b + i * size, dtype), 0);
        if (o != 0) {
            return o;
        }
    }
    return 0;
}

/* Rows (unique with dim): sorted lexicographically and stably, then grouped into runs. */
static void check_rows(int dtype, int64_t nrows, int64_t row_len) {
    const int64_t size = (int64_t)tt_dtype_itemsize(dtype), row_bytes = row_len * size;
    char *data = calloc((size_t)(nrows * row_len + 1), (size_t)size);
    char *sorted = calloc((size_t)(nrows * row_len + 1), (size_t)size);
    char *unique = calloc((size_t)(nrows * row_len + 1), (size_t)size);
    int64_t *perm = calloc((size_t)(nrows + 1), sizeof(int64_t)), *counts = calloc((size_t)(nrows + 1), sizeof(int64_t));
    int64_t *first = calloc((size_t)(nrows + 1), sizeof(int64_t)), *inverse = calloc((size_t)(nrows + 1), sizeof(int64_t));
    fill(data, nrows * row_len, dtype, 1);
    CHECK_STATUS(tt_sort_rows(nrows, row_len, (uintptr_t)data, (uintptr_t)sorted, (uintptr_t)perm, dtype), TT_OK,
                 "tt_sort_rows");
    for (int64_t j = 0; j < nrows; j++) {
        if (!check_record(perm[j] >= 0 && perm[j] < nrows)) {
            fprintf(stderr, "dtype %d: row permutation entry %lld out of range\n", dtype, (long long)perm[j]);
            goto done;
        }
        CHECK(row_bytes == 0 || memcmp(sorted + j * row_bytes, data + perm[j] * row_bytes, (size_t)row_bytes) == 0,
              "sorted row %lld is the input row at its index", (long long)j);
        if (j > 0) {
            int o = row_order(data + perm[j - 1] * row_bytes, data + perm[j] * row_bytes, row_len, dtype);
            CHECK(o < 0 || (o == 0 && perm[j - 1] < perm[j]), "dtype %d: rows %lld, %lld out of order", dtype,
                  (long long)(j - 1), (long long)j);
        }
    }
    int64_t runs = -1, total = 0;
    CHECK_STATUS(tt_unique_runs(nrows, row_len, (uintptr_t)sorted, (uintptr_t)perm, (uintptr_t)unique,
                                (uintptr_t)counts, (uintptr_t)first, (uintptr_t)inverse, dtype, &runs), TT_OK, "row runs");
    for (int64_t g = 0; g < runs; g++) {
        total += counts[g];
        CHECK(row_bytes == 0 || memcmp(unique + g * row_bytes, data + first[g] * row_bytes, (size_t)row_bytes) == 0,
              "a run's row is its first occurrence");
    }
    CHECK_EQ(total, nrows, "row counts add up");
    for (int64_t r = 0; r < nrows; r++) {
        CHECK(row_order(data + r * row_bytes, unique + inverse[r] * row_bytes, row_len, dtype) == 0,
              "inverse maps row %lld to an equal row", (long long)r);
    }
done:
    free(data);
    free(sorted);
    free(unique);
    free(perm);
    free(counts);
    free(first);
    free(inverse);
}

static void test_bad_arguments(void) {
    float x[4] = {3, 1, 2, 0};
    int64_t idx[4];
    const int64_t shape[1] = {4}, unit[1] = {1};
    CHECK_STATUS(tt_sort(1, shape, 1, (uintptr_t)x, unit, 0, NULL, (uintptr_t)idx, unit, 0, 4, TT_FLOAT32, 0),
                 TT_ERR_INVALID_ARG, "dim out of range");
    CHECK_STATUS(tt_sort(1, shape, 0, (uintptr_t)x, unit, 0, NULL, (uintptr_t)idx, unit, 2, 3, TT_FLOAT32, 0),
                 TT_ERR_INVALID_ARG, "start + count past the row");
    CHECK_STATUS(tt_sort(1, shape, 0, (uintptr_t)x, unit, 0, NULL, (uintptr_t)idx, unit, 0, 4, 99, 0),
                 TT_ERR_UNSUPPORTED_DTYPE, "unknown dtype");
    CHECK_STATUS(tt_sort(1, shape, 0, 0, unit, 0, NULL, (uintptr_t)idx, unit, 0, 4, TT_FLOAT32, 0),
                 TT_ERR_INVALID_ARG, "NULL input");
    CHECK_STATUS(tt_sort(0, shape, 0, (uintptr_t)x, unit, 0, NULL, (uintptr_t)idx, unit, 0, 1, TT_FLOAT32, 0),
                 TT_ERR_INVALID_ARG, "0 dims");
    CHECK_STATUS(tt_sort(1, shape, 0, (uintptr_t)x, unit, 0, NULL, (uintptr_t)idx, unit, 0, 4, TT_FLOAT32, 1),
                 TT_OK, "indices only");
    CHECK(idx[0] == 0 && idx[1] == 2 && idx[2] == 1 && idx[3] == 3, "descending argsort of 3 1 2 0");
    int64_t runs;
    CHECK_STATUS(tt_unique_runs(-1, 1, (uintptr_t)x, 0, 0, 0, 0, 0, TT_FLOAT32, &runs), TT_ERR_INVALID_ARG, "n < 0");
    CHECK_STATUS(tt_unique_runs(0, 1, 0, 0, 0, 0, 0, 0, TT_FLOAT32, &runs), TT_OK, "empty");
    CHECK_EQ(runs, 0, "no runs in nothing");
}

/* Many rows split across threads (ranges of rows, each with its own buffers) give the bits of a
   one-thread run: full sorts (merge and radix) and a top 5 (the heap selection). */
static void test_threaded_rows(void) {
    const int dtypes[] = {TT_FLOAT32, TT_INT64, TT_FLOAT16};
    const int64_t shapes[][2] = {{300, 100}, {40, 3000}, {5000, 3}};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int dtype = dtypes[d];
            const int64_t rows = shapes[s][0], len = shapes[s][1], n = rows * len;
            const size_t size = tt_dtype_itemsize(dtype);
            char *x = malloc((size_t)n * size);
            fill(x, n, dtype, 1);
            const int64_t shape[2] = {rows, len}, strides[2] = {len, 1};
            for (int top = 0; top <= 1; top++) {
                const int64_t count = top ? (len < 5 ? len : 5) : len;
                const int64_t out_strides[2] = {count, 1};
                char *values[2];
                int64_t *indices[2];
                for (int run = 0; run < 2; run++) {
                    tt_set_num_threads(run == 0 ? 1 : 4);
                    values[run] = calloc((size_t)(rows * count), size);
                    indices[run] = calloc((size_t)(rows * count), sizeof(int64_t));
                    CHECK_STATUS(tt_sort(2, shape, 1, (uintptr_t)x, strides, (uintptr_t)values[run], out_strides,
                                         (uintptr_t)indices[run], out_strides, 0, count, dtype, top),
                                 TT_OK, "threaded sort");
                }
                CHECK(memcmp(values[0], values[1], (size_t)(rows * count) * size) == 0 &&
                          memcmp(indices[0], indices[1], (size_t)(rows * count) * sizeof(int64_t)) == 0,
                      "dtype %d, (%lld, %lld), count %lld: 4 threads differ from 1", dtype, (long long)rows,
                      (long long)len, (long long)count);
                for (int run = 0; run < 2; run++) {
                    free(values[run]);
                    free(indices[run]);
                }
            }
            free(x);
        }
    }
    tt_set_num_threads(1);
}

int main(void) {
    const int64_t lengths[] = {0, 1, 2, 15, 16, 17, 33, 100, 1000};
    for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            for (int descending = 0; descending <= 1; descending++) {
                check_sort(dtype, 3, lengths[i], descending);
            }
            check_searchsorted(dtype, lengths[i]);
            check_unique_runs(dtype, lengths[i]);
            check_rows(dtype, lengths[i], 2);
            check_rows(dtype, lengths[i], 0);
        }
        check_rows(dtype, 200, 5);
    }
    test_bad_arguments();
    test_threaded_rows();
    return check_report("test_sort");
}
