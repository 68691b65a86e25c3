/*
 * test_fused.c: the fused elementwise kernel (kernels/fused.h).
 *
 * Values against every op are tested from Python (random expression trees against the unfused
 * ops); this file is for what the sanitizers can see: programs that must be refused before they
 * run (stack underflow, bad indices, bad opcodes, too deep), strided and broadcast inputs whose
 * gathers cross block and row boundaries, a shape large enough to run on several threads (TSan),
 * every opcode on edge values (ASan/UBSan), and exact results against a plain loop.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tt/kernels/fused.h"
#include "tt/kernels/parallel.h"

enum { L = TT_FUSED_LOAD, K = TT_FUSED_CONST };

static void test_check(void) {
    int depth = -1;
    const int32_t ok_ops[] = {L, L, TT_FUSED_MUL, L, TT_FUSED_ADD, TT_FUSED_RELU};
    const int32_t ok_args[] = {0, 1, 0, 2, 0, 0};
    CHECK_STATUS(tt_fused_check(6, ok_ops, ok_args, 3, 0, &depth), TT_OK, "valid program");
    CHECK_EQ(depth, 2, "depth of relu(add(mul(@0,@1),@2))");

    const int32_t zeros[200] = {0};
    const int32_t underflow[] = {TT_FUSED_NEG};
    CHECK_STATUS(tt_fused_check(1, underflow, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "unary on empty stack");
    const int32_t binary_one[] = {L, TT_FUSED_SUB};
    CHECK_STATUS(tt_fused_check(2, binary_one, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "binary on one value");
    const int32_t two_results[] = {L, L};
    CHECK_STATUS(tt_fused_check(2, two_results, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "two results");
    const int32_t load[] = {L};
    const int32_t bad_index[] = {1};
    const int32_t negative_index[] = {-1};
    CHECK_STATUS(tt_fused_check(1, load, bad_index, 1, 0, NULL), TT_ERR_INVALID_ARG, "input out of range");
    CHECK_STATUS(tt_fused_check(1, load, negative_index, 1, 0, NULL), TT_ERR_INVALID_ARG, "negative input");
    const int32_t constant[] = {K};
    CHECK_STATUS(tt_fused_check(1, constant, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "constant out of range");
    const int32_t bad_op[] = {L, TT_FUSED_NUM_OPCODES};
    CHECK_STATUS(tt_fused_check(2, bad_op, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "opcode out of range");
    CHECK_STATUS(tt_fused_check(0, load, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "empty program");
    CHECK_STATUS(tt_fused_check(1, NULL, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG, "NULL opcodes");
    CHECK_STATUS(tt_fused_check(1, load, zeros, TT_FUSED_MAX_INPUTS + 1, 0, NULL), TT_ERR_INVALID_ARG,
                 "too many inputs");
    int32_t deep[2 * TT_FUSED_MAX_DEPTH + 1];
    for (int k = 0; k <= TT_FUSED_MAX_DEPTH; k++) {
        deep[k] = L;
    }
    for (int k = TT_FUSED_MAX_DEPTH + 1; k < 2 * TT_FUSED_MAX_DEPTH + 1; k++) {
        deep[k] = TT_FUSED_ADD;
    }
    CHECK_STATUS(tt_fused_check(2 * TT_FUSED_MAX_DEPTH + 1, deep, zeros, 1, 0, NULL), TT_ERR_INVALID_ARG,
                 "deeper than the limit");
    CHECK_STATUS(tt_fused_check(2 * TT_FUSED_MAX_DEPTH - 1, deep + 1, zeros, 1, 0, &depth), TT_OK,
                 "exactly the limit");
    CHECK_EQ(depth, TT_FUSED_MAX_DEPTH, "depth at the limit");
}

/* relu(add(mul(@0, @1), @2)) over a (rows, cols) shape: @0 transposed (stored cols x rows), @1 a
   broadcast row, @2 every other element of a (rows, 2 cols) array; compared with a plain loop. */
#define DEFINE_STRIDED_TEST(T, DTYPE)                                                                       \
    static void test_strided_##T(int64_t rows, int64_t cols) {                                              \
        T *a = malloc((size_t)(rows * cols) * sizeof(T));                                                   \
        T *b = malloc((size_t)cols * sizeof(T));                                                            \
        T *c = malloc((size_t)(rows * cols * 2) * sizeof(T));                                               \
        T *out = malloc((size_t)(rows * cols) * sizeof(T));                                                 \
        if (!a || !b || !c || !out) {                                                                       \
            CHECK(0, "out of memory");                                                                      \
            free(a), free(b), free(c), free(out);                                                           \
            return;                                                                                         \
        }                                                                                                   \
        uint64_t state = 88172645463325252ULL;                                                              \
        for (int64_t i = 0; i < rows * cols; i++) a[i] = (T)((double)(xorshift64(&state) % 2001) / 100 - 10); \
        for (int64_t i = 0; i < cols; i++) b[i] = (T)((double)(xorshift64(&state) % 2001) / 100 - 10);      \
        for (int64_t i = 0; i < 2 * rows * cols; i++) c[i] = (T)((double)(xorshift64(&state) % 2001) / 100 - 10); \
        const int32_t ops[] = {L, L, TT_FUSED_MUL, L, TT_FUSED_ADD, TT_FUSED_RELU};                         \
        const int32_t args[] = {0, 1, 0, 2, 0, 0};                                                          \
        const uintptr_t inputs[] = {(uintptr_t)a, (uintptr_t)b, (uintptr_t)c};                              \
        const int64_t strides[] = {1, rows, 0, 1, 2 * cols, 2};                                             \
        const int64_t shape[] = {rows, cols};                                                               \
        const double constants[] = {0.0};                                                                   \
        CHECK_STATUS(tt_fused_eval(6, ops, args, constants, 1, 3, inputs, strides, 2, shape, (uintptr_t)out, \
                                   DTYPE), TT_OK, "strided eval");                                          \
        int64_t wrong = 0;                                                                                  \
        for (int64_t r = 0; r < rows; r++) {                                                                \
            for (int64_t q = 0; q < cols; q++) {                                                            \
                T x = a[q * rows + r] * b[q];                                                               \
                x = x + c[r * 2 * cols + 2 * q];                                                            \
                x = x > 0 ? x : 0;                                                                          \
                wrong += out[r * cols + q] != x;                                                            \
            }                                                                                               \
        }                                                                                                   \
        CHECK_EQ(wrong, 0, "wrong elements of the strided result");                                         \
        free(a), free(b), free(c), free(out);                                                               \
    }
DEFINE_STRIDED_TEST(float, TT_FLOAT32)
DEFINE_STRIDED_TEST(double, TT_FLOAT64)

/* Every opcode, both dtypes, on edge values: a binary op gets (x, y) = (edge[i], edge[7 - i]). */
static void test_every_op_on_edges(void) {
    const double edges[8] = {0.0, -0.0, 1.5, -2.5, NAN, INFINITY, -INFINITY, 1e-30};
    for (int dtype = TT_FLOAT32; dtype <= TT_FLOAT64; dtype++) {
        float xf[8], yf[8], of[8];
        double xd[8], yd[8], od[8];
        for (int i = 0; i < 8; i++) {
            xf[i] = (float)edges[i], yf[i] = (float)edges[7 - i];
            xd[i] = edges[i], yd[i] = edges[7 - i];
        }
        const int f32 = dtype == TT_FLOAT32;
        const uintptr_t inputs[] = {f32 ? (uintptr_t)xf : (uintptr_t)xd, f32 ? (uintptr_t)yf : (uintptr_t)yd};
        const int64_t strides[] = {1, 1};
        const int64_t shape[] = {8};
        const double constants[] = {2.0};
        for (int op = TT_FUSED_NEG; op < TT_FUSED_NUM_OPCODES; op++) {
            const int binary = op >= TT_FUSED_ADD;
            const int32_t ops[] = {L, L, op};
            const int32_t args[] = {0, 1, 0};
            const int32_t unary_ops[] = {L, op};
            tt_status status = binary ? tt_fused_eval(3, ops, args, constants, 1, 2, inputs, strides, 1, shape,
                                                      f32 ? (uintptr_t)of : (uintptr_t)od, dtype)
                                      : tt_fused_eval(2, unary_ops, args, constants, 1, 1, inputs, strides, 1,
                                                      shape, f32 ? (uintptr_t)of : (uintptr_t)od, dtype);
            CHECK_STATUS(status, TT_OK, "every op on edges");
        }
        /* a constant-only program on a 0-d shape, and a LOAD-only program (copied to out) */
        const int32_t cops[] = {K, K, TT_FUSED_POW};
        const int32_t cargs[] = {0, 0, 0};
        CHECK_STATUS(tt_fused_eval(3, cops, cargs, constants, 1, 0, NULL, NULL, 0, NULL,
                                   f32 ? (uintptr_t)of : (uintptr_t)od, dtype), TT_OK, "constants only");
        CHECK(f32 ? of[0] == 4.0f : od[0] == 4.0, "pow(2, 2) should be 4");
        const int32_t lops[] = {L};
        CHECK_STATUS(tt_fused_eval(1, lops, cargs, constants, 1, 2, inputs, strides, 1, shape,
                                   f32 ? (uintptr_t)of : (uintptr_t)od, dtype), TT_OK, "load only");
        CHECK(f32 ? of[2] == 1.5f : od[2] == 1.5, "a copy of @0");
    }
}

static void test_eval_refusals(void) {
    float x[4] = {1, 2, 3, 4}, out[4] = {0};
    const uintptr_t inputs[] = {(uintptr_t)x};
    const int64_t strides[] = {1}, bad_strides[] = {-1};
    const int64_t shape[] = {4}, bad_shape[] = {-4}, empty[] = {0};
    const int32_t ops[] = {L}, args[] = {0};
    const double constants[] = {0};
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, strides, 1, shape, (uintptr_t)out, TT_FLOAT16),
                 TT_ERR_UNSUPPORTED_DTYPE, "float16");
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, bad_strides, 1, shape, (uintptr_t)out,
                               TT_FLOAT32), TT_ERR_INVALID_ARG, "negative stride");
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, strides, 1, bad_shape, (uintptr_t)out,
                               TT_FLOAT32), TT_ERR_INVALID_ARG, "negative size");
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, strides, 1, shape, 0, TT_FLOAT32),
                 TT_ERR_INVALID_ARG, "NULL out");
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, NULL, strides, 1, shape, (uintptr_t)out, TT_FLOAT32),
                 TT_ERR_INVALID_ARG, "NULL inputs");
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, strides, TT_MAX_DIMS + 1, shape,
                               (uintptr_t)out, TT_FLOAT32), TT_ERR_INVALID_ARG, "too many dims");
    const int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 30};
    const int64_t huge_strides[] = {0, 0};
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, huge_strides, 2, huge, (uintptr_t)out,
                               TT_FLOAT32), TT_ERR_OVERFLOW, "too many elements");
    CHECK_STATUS(tt_fused_eval(1, ops, args, constants, 1, 1, inputs, strides, 1, empty, 0, TT_FLOAT32), TT_OK,
                 "empty shape: nothing to do");
    CHECK(out[0] == 0 && out[3] == 0, "refused calls must not write");
}

int main(void) {
    test_check();
    test_eval_refusals();
    test_every_op_on_edges();
    test_strided_float(3, 700);     /* rows longer than a block */
    test_strided_double(37, 5);     /* blocks spanning many short rows */
    test_strided_float(1, 1);
    tt_set_num_threads(4);
    test_strided_float(301, 517);   /* several threads */
    test_strided_double(301, 517);
    return check_report("fused");
}
