/*
 * test_reduce.c: tt_reduce, tt_scan, tt_softmax and tt_singular_values on shapes that cross the
 * kernel's chunk of 1024 outputs, in both loops (rows and columns), with transposed and
 * broadcast (stride 0) inputs, for every (op, dtype).
 *
 * Values are tested against PyTorch from Python on small shapes; here the sanitizers watch the
 * driver's pointer walks on large ones, and a naive reference (written out below, over logical
 * indices) checks the exact results of the integer sum, max, argmax and the scans.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/half.h"
#include "tt/kernels/reduce.h"

enum { D0 = 3, D1 = 1030, D2 = 2, NUMEL = D0 * D1 * D2 };

static void store_value(void *buffer, int64_t i, int dtype, double v) {
    switch (dtype) {
    case TT_BOOL: ((uint8_t *)buffer)[i] = v != 0; break;
    case TT_INT8: ((int8_t *)buffer)[i] = (int8_t)v; break;
    case TT_INT16: ((int16_t *)buffer)[i] = (int16_t)v; break;
    case TT_INT32: ((int32_t *)buffer)[i] = (int32_t)v; break;
    case TT_INT64: ((int64_t *)buffer)[i] = (int64_t)v; break;
    case TT_UINT8: ((uint8_t *)buffer)[i] = (uint8_t)v; break;
    case TT_FLOAT16: ((uint16_t *)buffer)[i] = tt_float_to_half((float)v); break;
    case TT_FLOAT32: ((float *)buffer)[i] = (float)v; break;
    default: ((double *)buffer)[i] = v; break;
    }
}

/* Small integers with many ties; floats also get NaN and infinities in a few places. */
static double value_at(int64_t i, int dtype) {
    int floating = dtype >= TT_FLOAT16;
    if (floating && i % 997 == 5) {
        return NAN;
    }
    if (floating && i % 1009 == 7) {
        return i % 2 ? INFINITY : -INFINITY;
    }
    return (double)((i * 7919) % 13) - 6;
}

static int reduce_out_itemsize(int op, int dtype) {
    switch (op) {
    case TT_RED_SUM: case TT_RED_NANSUM: case TT_RED_PROD:
        return dtype >= TT_FLOAT16 ? (int)tt_dtype_itemsize(dtype) : 8;
    case TT_RED_ARGMAX: case TT_RED_ARGMIN: case TT_RED_COUNT_NONZERO:
        return 8;
    case TT_RED_ANY: case TT_RED_ALL:
        return 1;
    default:
        return (int)tt_dtype_itemsize(dtype);
    }
}

/* The three layouts of the (D0, D1, D2) logical tensor: contiguous, fully transposed memory, and
   the middle dim broadcast (stride 0, memory holds one D1 slice). */
static void layout_strides(int layout, int64_t *strides) {
    const int64_t contiguous[3] = {D1 * D2, D2, 1}, transposed[3] = {1, D0, D0 * D1}, broadcast[3] = {D2, 0, 1};
    memcpy(strides, layout == 0 ? contiguous : layout == 1 ? transposed : broadcast, sizeof contiguous);
}

static int64_t offset_of(const int64_t *strides, int64_t i0, int64_t i1, int64_t i2) {
    return i0 * strides[0] + i1 * strides[1] + i2 * strides[2];
}

/* Every op and dtype, every mask, every layout: statuses, and exact checks for a few ops. */
static int run_reduce_all(void) {
    const int64_t shape[3] = {D0, D1, D2};
    void *x = malloc(NUMEL * 8), *out = malloc(NUMEL * 8), *out2 = malloc(NUMEL * 8);
    int runs = 0;
    for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
        for (int64_t i = 0; i < NUMEL; i++) {
            store_value(x, i, dtype, value_at(i, dtype));
        }
        for (int layout = 0; layout < 3; layout++) {
            int64_t xs[3];
            layout_strides(layout, xs);
            for (uint64_t mask = 0; mask < 8; mask++) {
                int64_t kept[3], os[3], running = 1;
                for (int d = 2; d >= 0; d--) {
                    kept[d] = (mask >> d) & 1 ? 1 : shape[d];
                    os[d] = (mask >> d) & 1 ? 0 : running;
                    running *= kept[d];
                }
                for (int op = 0; op < TT_NUM_REDUCE_OPS; op++) {
                    int osz = reduce_out_itemsize(op, dtype);
                    tt_status s = tt_reduce(op, 3, shape, (uintptr_t)x, xs, dtype, mask, 2.5, (uintptr_t)out, os,
                                            (uintptr_t)out2, os);
                    if (s == TT_ERR_UNSUPPORTED_DTYPE) {
                        continue;
                    }
                    CHECK_STATUS(s, TT_OK, "tt_reduce");
                    runs++;
                    if (dtype != TT_INT32 && dtype != TT_FLOAT64) {
                        continue;
                    }
                    /* Naive reference over logical indices, for every output element. */
                    for (int64_t k0 = 0; k0 < kept[0]; k0++) {
                        for (int64_t k1 = 0; k1 < kept[1]; k1++) {
                            for (int64_t k2 = 0; k2 < kept[2]; k2++) {
                                int64_t n = 0, arg = 0, isum = 0;
                                double best = 0;
                                int have = 0;
                                for (int64_t r0 = 0; r0 < ((mask & 1) ? D0 : 1); r0++) {
                                    for (int64_t r1 = 0; r1 < ((mask & 2) ? D1 : 1); r1++) {
                                        for (int64_t r2 = 0; r2 < ((mask & 4) ? D2 : 1); r2++) {
                                            int64_t off = offset_of(xs, k0 + r0, k1 + r1, k2 + r2);
                                            double v = dtype == TT_INT32 ? ((int32_t *)x)[off] : ((double *)x)[off];
                                            isum += dtype == TT_INT32 ? ((int32_t *)x)[off] : 0;
                                            if (!have || (!isnan(best) && (v > best || isnan(v)))) {
                                                best = v;
                                                arg = n;
                                                have = 1;
                                            }
                                            n++;
                                        }
                                    }
                                }
                                char *o = (char *)out + (k0 * os[0] + k1 * os[1] + k2 * os[2]) * osz;
                                if (op == TT_RED_ARGMAX) {
                                    if (*(int64_t *)o != arg) {
                                        CHECK_EQ(*(int64_t *)o, arg, "argmax index");
                                    }
                                } else if (op == TT_RED_SUM && dtype == TT_INT32) {
                                    if (*(int64_t *)o != isum) {
                                        CHECK_EQ(*(int64_t *)o, isum, "int32 sum");
                                    }
                                } else if (op == TT_RED_MAX && dtype == TT_FLOAT64) {
                                    double got = *(double *)o;
                                    CHECK((isnan(got) && isnan(best)) || got == best, "max: expected %g, got %g",
                                          best, got);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    free(x);
    free(out);
    free(out2);
    return runs;
}

static void test_scans_and_softmax(void) {
    const int64_t shape[3] = {D0, D1, D2};
    double *x = malloc(NUMEL * sizeof(double)), *out = malloc(NUMEL * sizeof(double));
    for (int64_t i = 0; i < NUMEL; i++) {
        x[i] = (double)((i * 31) % 7) - 3;
    }
    for (int layout = 0; layout < 3; layout++) {
        int64_t xs[3];
        layout_strides(layout, xs);
        const int64_t os[3] = {D1 * D2, D2, 1};
        for (int dim = 0; dim < 3; dim++) {
            CHECK_STATUS(tt_scan(TT_SCAN_SUM, 3, shape, (uintptr_t)x, xs, TT_FLOAT64, dim, (uintptr_t)out, os), TT_OK,
                         "cumsum");
            /* Along the middle dim, the last element of every line is the line's sum. */
            for (int64_t i0 = 0; dim == 1 && i0 < D0; i0++) {
                for (int64_t i2 = 0; i2 < D2; i2++) {
                    double total = 0;
                    for (int64_t i1 = 0; i1 < D1; i1++) {
                        total += x[offset_of(xs, i0, i1, i2)];
                    }
                    CHECK(out[offset_of(os, i0, D1 - 1, i2)] == total, "cumsum line total");
                }
            }
            for (int log_softmax = 0; log_softmax < 2; log_softmax++) {
                CHECK_STATUS(tt_softmax(log_softmax, 3, shape, (uintptr_t)x, xs, TT_FLOAT64, dim, (uintptr_t)out, os),
                             TT_OK, "softmax");
            }
        }
        CHECK_STATUS(tt_softmax(0, 3, shape, (uintptr_t)x, xs, TT_FLOAT64, 2, (uintptr_t)out, os), TT_OK, "softmax");
        double line = out[0] + out[1];
        CHECK(fabs(line - 1) < 1e-12, "softmax line sums to %g", line);
    }
    for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
        int64_t xs[3];
        layout_strides(1, xs);
        tt_status s = tt_scan(TT_SCAN_PROD, 3, shape, (uintptr_t)x, xs, dtype, 1, (uintptr_t)out, xs);
        CHECK_STATUS(s, TT_OK, "cumprod of every dtype");
        s = tt_softmax(1, 3, shape, (uintptr_t)x, xs, dtype, 0, (uintptr_t)out, xs);
        CHECK_STATUS(s, dtype >= TT_FLOAT16 ? TT_OK : TT_ERR_UNSUPPORTED_DTYPE, "log_softmax dtypes");
    }
    free(x);
    free(out);
}

static void test_singular_values(void) {
    /* diag(3, -4) scaled into a 3 x 2 matrix: singular values 4 and 3. */
    const double a[6] = {3, 0, 0, -4, 0, 0};
    double sv[2];
    const int64_t xs[3] = {6, 2, 1}, os[2] = {2, 1};
    CHECK_STATUS(tt_singular_values(1, 3, 2, (uintptr_t)a, xs, TT_FLOAT64, (uintptr_t)sv, os), TT_OK, "svd");
    CHECK(fabs(sv[0] - 4) < 1e-12 && fabs(sv[1] - 3) < 1e-12, "singular values %g %g", sv[0], sv[1]);
    const int64_t ts[3] = {6, 1, 2};   /* the transpose, 2 x 3 */
    CHECK_STATUS(tt_singular_values(1, 2, 3, (uintptr_t)a, ts, TT_FLOAT64, (uintptr_t)sv, os), TT_OK, "svd wide");
    CHECK(fabs(sv[0] - 4) < 1e-12 && fabs(sv[1] - 3) < 1e-12, "singular values %g %g", sv[0], sv[1]);
    CHECK_STATUS(tt_singular_values(1, 2, 2, (uintptr_t)a, xs, TT_INT64, (uintptr_t)sv, os),
                 TT_ERR_UNSUPPORTED_DTYPE, "svd of integers");
}

static void test_bad_arguments(void) {
    const int64_t shape[1] = {4}, unit[1] = {1}, zero[1] = {0}, empty[1] = {0};
    float x[4] = {1, 2, 3, 4}, out[4];
    CHECK_STATUS(tt_reduce(TT_NUM_REDUCE_OPS, 1, shape, (uintptr_t)x, unit, TT_FLOAT32, 1, 0, (uintptr_t)out, zero, 0,
                           zero), TT_ERR_INVALID_ARG, "unknown op");
    CHECK_STATUS(tt_reduce(TT_RED_SUM, 1, shape, (uintptr_t)x, unit, TT_FLOAT32, 2, 0, (uintptr_t)out, zero, 0,
                           zero), TT_ERR_INVALID_ARG, "mask bit beyond ndim");
    CHECK_STATUS(tt_reduce(TT_RED_MEAN, 1, shape, (uintptr_t)x, unit, TT_INT32, 1, 0, (uintptr_t)out, zero, 0, zero),
                 TT_ERR_UNSUPPORTED_DTYPE, "mean of int32");
    CHECK_STATUS(tt_reduce(TT_RED_SUM, 1, shape, 0, unit, TT_FLOAT32, 1, 0, (uintptr_t)out, zero, 0, zero),
                 TT_ERR_INVALID_ARG, "NULL input");
    CHECK_STATUS(tt_reduce(TT_RED_SUM, 1, empty, 0, unit, TT_FLOAT32, 1, 0, (uintptr_t)out, zero, 0, zero), TT_OK,
                 "sum of nothing with a NULL input");
    CHECK(out[0] == 0, "sum of nothing is 0, got %g", out[0]);
    CHECK_STATUS(tt_scan(TT_SCAN_SUM, 1, shape, (uintptr_t)x, unit, TT_FLOAT32, 1, (uintptr_t)out, unit),
                 TT_ERR_INVALID_ARG, "scan dim out of range");
}

int main(void) {
    int runs = run_reduce_all();
    printf("      ran %d (op, dtype, layout, mask) reductions\n", runs);
    CHECK(runs > 1000, "expected most (op, dtype) pairs to be supported, ran %d", runs);
    test_scans_and_softmax();
    test_singular_values();
    test_bad_arguments();
    return check_report("test_reduce");
}
