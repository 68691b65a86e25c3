/*
 * test_elementwise.c: every elementwise kernel, every dtype it accepts, on edge values.
 *
 * Values (PyTorch-checked) are tested from Python; this file is for what only the sanitizers
 * can see: each (op, dtype) row function runs on the values where C arithmetic is undefined if
 * written carelessly (INT64_MIN / -1, INT_MIN negated, shifts of negatives, NaN to int), in the
 * contiguous, broadcast-scalar and strided loops. Under UBSan any such slip is a report. A few
 * exact results pin the integer semantics that are easy to get wrong.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernels/half.h"
#include "tt/kernels/elementwise.h"
#include "tt/tt.h"
#include "tt/kernels/dispatch.h"

enum { N = 8 };

/* Edge values for every dtype, written as doubles and stored by dtype (ints wrap as C casts). */
static void fill_edges(void *buffer, int dtype, int variant) {
    const double ints[N] = {0, 1, -1, 2, -7, 127, -128, 3};
    const double floats[N] = {0.0, -0.0, 1.5, -2.5, NAN, INFINITY, -INFINITY, 1e-30};
    for (int i = 0; i < N; i++) {
        int j = (i + variant) % N;
        switch (dtype) {
        case TT_BOOL: ((uint8_t *)buffer)[i] = (uint8_t)(j & 1); break;
        case TT_INT8: ((int8_t *)buffer)[i] = (int8_t)ints[j]; break;
        case TT_INT16: ((int16_t *)buffer)[i] = j == 6 ? INT16_MIN : (int16_t)ints[j]; break;
        case TT_INT32: ((int32_t *)buffer)[i] = j == 6 ? INT32_MIN : (int32_t)ints[j]; break;
        case TT_INT64: ((int64_t *)buffer)[i] = j == 6 ? INT64_MIN : j == 5 ? INT64_MAX : (int64_t)ints[j]; break;
        case TT_UINT8: ((uint8_t *)buffer)[i] = (uint8_t)(j * 37); break;
        case TT_FLOAT16: ((uint16_t *)buffer)[i] = tt_float_to_half((float)floats[j]); break;
        case TT_FLOAT32: ((float *)buffer)[i] = (float)floats[j]; break;
        default: ((double *)buffer)[i] = floats[j]; break;
        }
    }
}

/* Runs one binary op in the three loop shapes; returns how many calls were supported. */
static int run_binary(int op, int dtype) {
    _Alignas(64) char a[N * 8], b[N * 8], out[N * 8];
    fill_edges(a, dtype, 0);
    fill_edges(b, dtype, 3);
    const int64_t shape[1] = {N}, unit[1] = {1}, zero[1] = {0};
    const int64_t half_shape[1] = {N / 2}, two[1] = {2};
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b, po = (uintptr_t)out;
    tt_status s1 = tt_binary(op, 1, shape, pa, unit, pb, unit, po, unit, dtype);
    tt_status s2 = tt_binary(op, 1, shape, pa, unit, pb, zero, po, unit, dtype);
    tt_status s3 = tt_binary(op, 1, half_shape, pa, two, pb, two, po, two, dtype);
    if (s1 == TT_ERR_UNSUPPORTED_DTYPE) {
        CHECK(s2 == s1 && s3 == s1, "op %d dtype %d: support must not depend on the layout", op, dtype);
        return 0;
    }
    int division = op == TT_FLOOR_DIVIDE || op == TT_REMAINDER || op == TT_FMOD;
    int integer = dtype != TT_FLOAT16 && dtype != TT_FLOAT32 && dtype != TT_FLOAT64;
    tt_status expected = division && integer ? TT_ERR_ZERO_DIVISION : TT_OK;  /* b holds a 0 */
    CHECK_STATUS(s1, expected, "contiguous loop");
    CHECK(s2 == TT_OK || s2 == TT_ERR_ZERO_DIVISION, "broadcast loop: unexpected status %d", (int)s2);
    CHECK(s3 == TT_OK || s3 == TT_ERR_ZERO_DIVISION, "strided loop: unexpected status %d", (int)s3);
    return 1;
}

static int run_unary(int op, int dtype) {
    _Alignas(64) char x[N * 8], out[N * 8];
    fill_edges(x, dtype, 0);
    const int64_t shape[1] = {N}, unit[1] = {1}, half_shape[1] = {N / 2}, two[1] = {2};
    tt_status s1 = tt_unary(op, 1, shape, (uintptr_t)x, unit, (uintptr_t)out, unit, dtype);
    tt_status s2 = tt_unary(op, 1, half_shape, (uintptr_t)x, two, (uintptr_t)out, two, dtype);
    tt_status s3 = tt_unary(op, 1, shape, (uintptr_t)x, unit, (uintptr_t)x, unit, dtype);  /* in place */
    if (s1 == TT_ERR_UNSUPPORTED_DTYPE) {
        CHECK(s2 == s1 && s3 == s1, "unary op %d dtype %d: support must not depend on the layout", op, dtype);
        return 0;
    }
    CHECK_STATUS(s1, TT_OK, "unary contiguous");
    CHECK_STATUS(s2, TT_OK, "unary strided");
    CHECK_STATUS(s3, TT_OK, "unary in place");
    return 1;
}

/* The parameterized and ternary entries, in the same three loop shapes. */
static int run_unary_param(int op, int dtype) {
    _Alignas(64) char x[N * 8], out[N * 8];
    fill_edges(x, dtype, 0);
    const int64_t shape[1] = {N}, unit[1] = {1}, half_shape[1] = {N / 2}, two[1] = {2};
    tt_status s1 = tt_unary_param(op, 1, shape, (uintptr_t)x, unit, (uintptr_t)out, unit, dtype, 0.5, 1.0);
    tt_status s2 = tt_unary_param(op, 1, half_shape, (uintptr_t)x, two, (uintptr_t)out, two, dtype, -2.0, 0.0);
    tt_status s3 = tt_unary_param(op, 1, shape, (uintptr_t)x, unit, (uintptr_t)x, unit, dtype, 1e30, 1.0);
    if (s1 == TT_ERR_UNSUPPORTED_DTYPE) {
        CHECK(s2 == s1 && s3 == s1, "unary param op %d dtype %d: support must not depend on the layout", op, dtype);
        return 0;
    }
    CHECK_STATUS(s1, TT_OK, "unary param contiguous");
    CHECK_STATUS(s2, TT_OK, "unary param strided");
    CHECK_STATUS(s3, TT_OK, "unary param in place");
    return 1;
}

static int run_ternary(int op, int dtype) {
    _Alignas(64) char a[N * 8], b[N * 8], c[N * 8], out[N * 8];
    fill_edges(a, op == TT_WHERE ? TT_BOOL : dtype, 0);
    fill_edges(b, dtype, 3);
    fill_edges(c, dtype, 5);
    const int64_t shape[1] = {N}, unit[1] = {1}, zero[1] = {0}, half_shape[1] = {N / 2}, two[1] = {2};
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b, pc = (uintptr_t)c, po = (uintptr_t)out;
    tt_status s1 = tt_ternary(op, 1, shape, pa, unit, pb, unit, pc, unit, po, unit, dtype);
    tt_status s2 = tt_ternary(op, 1, shape, pa, unit, pb, zero, pc, zero, po, unit, dtype);
    tt_status s3 = tt_ternary(op, 1, shape, pa, unit, pb, unit, pc, zero, po, unit, dtype);
    tt_status s4 = tt_ternary(op, 1, half_shape, pa, two, pb, two, pc, two, po, two, dtype);
    if (s1 == TT_ERR_UNSUPPORTED_DTYPE) {
        CHECK(s2 == s1 && s3 == s1 && s4 == s1, "ternary op %d dtype %d: support must not depend on the layout", op,
              dtype);
        return 0;
    }
    CHECK_STATUS(s1, TT_OK, "ternary contiguous");
    CHECK_STATUS(s2, TT_OK, "ternary scalar operands");
    CHECK_STATUS(s3, TT_OK, "ternary one scalar operand");
    CHECK_STATUS(s4, TT_OK, "ternary strided");
    return 1;
}

static int64_t binary_i64(int op, int64_t a, int64_t b, tt_status *status) {
    int64_t out = 0;
    const int64_t shape[1] = {1}, unit[1] = {1};
    *status = tt_binary(op, 1, shape, (uintptr_t)&a, unit, (uintptr_t)&b, unit, (uintptr_t)&out, unit, TT_INT64);
    return out;
}

/* The integer cases C gets wrong by default, with PyTorch's answers. */
static void test_integer_semantics(void) {
    tt_status s;
    CHECK_EQ(binary_i64(TT_FLOOR_DIVIDE, -7, 2, &s), -4, "-7 // 2");
    CHECK_EQ(binary_i64(TT_REMAINDER, -7, 2, &s), 1, "-7 % 2");
    CHECK_EQ(binary_i64(TT_REMAINDER, 7, -2, &s), -1, "7 % -2");
    CHECK_EQ(binary_i64(TT_FLOOR_DIVIDE, INT64_MIN, -1, &s), INT64_MIN, "INT64_MIN // -1 wraps");
    CHECK_EQ(binary_i64(TT_REMAINDER, INT64_MIN, -1, &s), 0, "INT64_MIN % -1");
    CHECK_EQ(binary_i64(TT_ADD, INT64_MAX, 1, &s), INT64_MIN, "INT64_MAX + 1 wraps");
    CHECK_EQ(binary_i64(TT_MUL, INT64_MAX, 2, &s), -2, "INT64_MAX * 2 wraps");
    CHECK_EQ(binary_i64(TT_POW, 3, -1, &s), 0, "3 ** -1 truncates");
    CHECK_EQ(binary_i64(TT_POW, -1, -3, &s), -1, "(-1) ** -3");
    CHECK_EQ(binary_i64(TT_POW, 2, 62, &s), (int64_t)1 << 62, "2 ** 62");
    CHECK_EQ(binary_i64(TT_FMOD, -7, 2, &s), -1, "fmod(-7, 2)");
    CHECK_EQ(binary_i64(TT_FMOD, INT64_MIN, -1, &s), 0, "fmod(INT64_MIN, -1)");
    CHECK_EQ(binary_i64(TT_BITWISE_LEFT_SHIFT, 3, 63, &s), INT64_MIN, "3 << 63 wraps");
    CHECK_EQ(binary_i64(TT_BITWISE_LEFT_SHIFT, 3, 64, &s), 0, "3 << 64");
    CHECK_EQ(binary_i64(TT_BITWISE_LEFT_SHIFT, 3, -1, &s), 0, "3 << -1");
    CHECK_EQ(binary_i64(TT_BITWISE_RIGHT_SHIFT, -5, 1, &s), -3, "-5 >> 1");
    CHECK_EQ(binary_i64(TT_BITWISE_RIGHT_SHIFT, -5, 100, &s), -1, "-5 >> 100");
    CHECK_EQ(binary_i64(TT_BITWISE_RIGHT_SHIFT, INT64_MIN, 63, &s), -1, "INT64_MIN >> 63");
    CHECK_EQ(binary_i64(TT_RELU_GRAD, 5, 3, &s), 5, "relu_grad passes where the output is positive");
    CHECK_EQ(binary_i64(TT_RELU_GRAD, 5, 0, &s), 0, "relu_grad stops where the output is 0");
    CHECK_EQ(binary_i64(TT_RELU_GRAD, 5, -2, &s), 0, "relu_grad stops where the output is negative");
    binary_i64(TT_FMOD, 1, 0, &s);
    CHECK_STATUS(s, TT_ERR_ZERO_DIVISION, "fmod(1, 0)");
    binary_i64(TT_FLOOR_DIVIDE, 1, 0, &s);
    CHECK_STATUS(s, TT_ERR_ZERO_DIVISION, "1 // 0");
}

static void test_bad_arguments(void) {
    const int64_t shape[1] = {1}, unit[1] = {1};
    float x = 1.0f, out;
    CHECK_STATUS(tt_unary(TT_NUM_UNARY_OPS, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&out, unit, TT_FLOAT32),
                 TT_ERR_INVALID_ARG, "unknown unary op");
    CHECK_STATUS(tt_binary(-1, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&x, unit, (uintptr_t)&out, unit, TT_FLOAT32),
                 TT_ERR_INVALID_ARG, "unknown binary op");
    CHECK_STATUS(tt_unary(TT_EXP, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&out, unit, 42),
                 TT_ERR_UNSUPPORTED_DTYPE, "unknown dtype");
    CHECK_STATUS(tt_unary(TT_EXP, 1, shape, 0, unit, (uintptr_t)&out, unit, TT_FLOAT32), TT_ERR_INVALID_ARG,
                 "NULL input");
    CHECK_STATUS(tt_ternary(TT_NUM_TERNARY_OPS, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&x, unit, (uintptr_t)&x,
                            unit, (uintptr_t)&out, unit, TT_FLOAT32),
                 TT_ERR_INVALID_ARG, "unknown ternary op");
    CHECK_STATUS(tt_ternary(TT_LERP, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&x, unit, (uintptr_t)&x, unit,
                            (uintptr_t)&out, unit, TT_INT32),
                 TT_ERR_UNSUPPORTED_DTYPE, "lerp of integers");
    CHECK_STATUS(tt_unary_param(TT_SOFTPLUS, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&out, unit, TT_BOOL, 1.0, 20.0),
                 TT_ERR_UNSUPPORTED_DTYPE, "softplus of bool");
    CHECK_STATUS(tt_binary_param(-1, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&x, unit, (uintptr_t)&out, unit,
                                 TT_FLOAT32, 0.5),
                 TT_ERR_INVALID_ARG, "unknown binary param op");
    CHECK_STATUS(tt_binary_param(TT_ADD_SCALED, 1, shape, (uintptr_t)&x, unit, (uintptr_t)&x, unit,
                                 (uintptr_t)&out, unit, TT_INT32, 0.5),
                 TT_ERR_UNSUPPORTED_DTYPE, "add_scaled of integers");
    const int64_t empty[1] = {0};
    CHECK_STATUS(tt_unary(TT_EXP, 1, empty, 0, unit, 0, unit, TT_FLOAT32), TT_OK, "empty with NULL addresses");
}

/* TT_ADD_SCALED: a + alpha * b, the product rounded to the element type before the sum, through
   strides (b broadcast with stride 0). */
static void test_add_scaled(void) {
    const float a[4] = {1.0f, -2.0f, 0.1f, 3.0f}, b = 0.3f;
    float out[4];
    const int64_t shape[1] = {4}, unit[1] = {1}, zero[1] = {0};
    CHECK_STATUS(tt_binary_param(TT_ADD_SCALED, 1, shape, (uintptr_t)a, unit, (uintptr_t)&b, zero, (uintptr_t)out,
                                 unit, TT_FLOAT32, -0.7),
                 TT_OK, "add_scaled float32");
    for (int i = 0; i < 4; i++) {
        const float product = (float)-0.7 * b, want = a[i] + product;
        CHECK(out[i] == want, "add_scaled[%d]: %.9g, want %.9g", i, (double)out[i], (double)want);
    }
    const double da[2] = {1.0, 2.5}, db[2] = {4.0, -8.0};
    double dout[2];
    const int64_t two[1] = {2};
    CHECK_STATUS(tt_binary_param(TT_ADD_SCALED, 1, two, (uintptr_t)da, unit, (uintptr_t)db, unit, (uintptr_t)dout,
                                 unit, TT_FLOAT64, 0.25),
                 TT_OK, "add_scaled float64");
    CHECK(dout[0] == 2.0 && dout[1] == 0.5, "add_scaled float64: %g %g", dout[0], dout[1]);
}

/* The in-place entry points of dispatch.h write into their first operand. */
static void test_contiguous_in_place(void) {
    float a[4] = {1, 2, 3, 4};
    const float b[4] = {10, 20, 30, 40};
    CHECK_STATUS(tt_binary_contiguous(TT_ADD, 4, (uintptr_t)a, (uintptr_t)b, (uintptr_t)a, TT_FLOAT32), TT_OK,
                 "a += b");
    CHECK(a[0] == 11 && a[3] == 44, "a += b values");
    CHECK_STATUS(tt_binary_contiguous(TT_MUL, 4, (uintptr_t)a, (uintptr_t)a, (uintptr_t)a, TT_FLOAT32), TT_OK,
                 "a *= a");
    CHECK(a[0] == 121 && a[3] == 1936, "a *= a values");
    CHECK_STATUS(tt_binary_scalar_contiguous(TT_SUB, 4, (uintptr_t)a, 0, 1.5, 0, 1, (uintptr_t)a, TT_FLOAT32), TT_OK,
                 "a = 1.5 - a");
    CHECK(a[0] == -119.5f, "1.5 - a value");
    int32_t i[3] = {7, -7, 8};
    CHECK_STATUS(tt_binary_scalar_contiguous(TT_FLOOR_DIVIDE, 3, (uintptr_t)i, 2, 0.0, 1, 0, (uintptr_t)i, TT_INT32),
                 TT_OK, "i //= 2");
    CHECK(i[0] == 3 && i[1] == -4 && i[2] == 4, "i //= 2 values");
    CHECK_STATUS(tt_binary_scalar_contiguous(TT_FLOOR_DIVIDE, 3, (uintptr_t)i, 0, 0.0, 1, 0, (uintptr_t)i, TT_INT32),
                 TT_ERR_ZERO_DIVISION, "i //= 0");
    CHECK_STATUS(tt_binary_scalar_contiguous(TT_ADD, 3, (uintptr_t)i, 0, 0.0, 1, 0, (uintptr_t)i, 99),
                 TT_ERR_UNSUPPORTED_DTYPE, "bad dtype");
}

int main(void) {
    test_add_scaled();
    test_contiguous_in_place();
    int binary_rows = 0, unary_rows = 0;
    for (int op = 0; op < TT_NUM_BINARY_OPS; op++) {
        for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
            binary_rows += run_binary(op, dtype);
        }
    }
    for (int op = 0; op < TT_NUM_UNARY_OPS; op++) {
        for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
            unary_rows += run_unary(op, dtype);
        }
    }
    int param_rows = 0, ternary_rows = 0;
    for (int op = 0; op < TT_NUM_UNARY_PARAM_OPS; op++) {
        for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
            param_rows += run_unary_param(op, dtype);
        }
    }
    for (int op = 0; op < TT_NUM_TERNARY_OPS; op++) {
        for (int dtype = 0; dtype < TT_NUM_DTYPES; dtype++) {
            ternary_rows += run_ternary(op, dtype);
        }
    }
    printf("      ran %d binary, %d unary, %d unary-param and %d ternary (op, dtype) kernels\n", binary_rows,
           unary_rows, param_rows, ternary_rows);
    CHECK(binary_rows > 150 && unary_rows > 150, "expected most (op, dtype) pairs to be supported");
    CHECK(param_rows == 4 * 3 && ternary_rows == 9 + 9 + 3, "unexpected param/ternary kernel count");
    test_integer_semantics();
    test_bad_arguments();
    return check_report("test_elementwise");
}
