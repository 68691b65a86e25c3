/*
 * elementwise.c: unary and binary elementwise kernels, for every dtype where the op makes sense.
 *
 * The shape follows copy.c: validate, let tt_iter simplify the strides, pick a row function from a
 * table indexed [op][dtype], run it. Adding an op is three lines: an expression per dtype kind, a
 * DEFINE line that generates its row functions, and a table line that registers them.
 *
 * Dtype kinds and how their values are computed:
 *   B  bool      loaded as 0/1 ints
 *   I  integers  computed in int64 and stored back with wrap-around (as PyTorch: int8 127 + 1 is
 *                -128); signed overflow is avoided by doing + - * in uint64
 *   F  floats    float32 in float, float64 in double, float16 loaded to float and rounded back;
 *                <tgmath.h> picks expf or exp by the argument's type
 * Semantics follow PyTorch: floor_divide and remainder round toward negative infinity (the
 * remainder takes the divisor's sign), maximum/minimum/relu propagate NaN, round is half to even.
 */
#include <stdint.h>
#include <tgmath.h>

#include "half.h"
#include "strided_iter.h"
#include "tt/kernels/elementwise.h"

/* ------------------------------------------------------------------ loading and storing */

#define LD_plain(T, p) (*(const T *)(p))
#define LD_bool(T, p) ((int)(*(const uint8_t *)(p) != 0))
#define LD_half(T, p) tt_half_to_float(*(const uint16_t *)(p))
#define ST_plain(T, p, v) (*(T *)(p) = (T)(v))
#define ST_bool(T, p, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))
#define ST_half(T, p, v) (*(uint16_t *)(p) = tt_float_to_half((float)(v)))

/* The dtype lists: (name, storage type, compute type, load, store, kind, code). */
#define BOOL_DTYPES(X, ...) X(__VA_ARGS__, bool, uint8_t, int, LD_bool, ST_bool, B, TT_BOOL)
#define INT_DTYPES(X, ...)                                                  \
    X(__VA_ARGS__, int8, int8_t, int64_t, LD_plain, ST_plain, I, TT_INT8)    \
    X(__VA_ARGS__, int16, int16_t, int64_t, LD_plain, ST_plain, I, TT_INT16) \
    X(__VA_ARGS__, int32, int32_t, int64_t, LD_plain, ST_plain, I, TT_INT32) \
    X(__VA_ARGS__, int64, int64_t, int64_t, LD_plain, ST_plain, I, TT_INT64) \
    X(__VA_ARGS__, uint8, uint8_t, int64_t, LD_plain, ST_plain, I, TT_UINT8)
#define FLOAT_DTYPES(X, ...)                                                       \
    X(__VA_ARGS__, float16, uint16_t, float, LD_half, ST_half, F, TT_FLOAT16)      \
    X(__VA_ARGS__, float32, float, float, LD_plain, ST_plain, F, TT_FLOAT32)       \
    X(__VA_ARGS__, float64, double, double, LD_plain, ST_plain, F, TT_FLOAT64)
#define NUMERIC_DTYPES(X, ...) INT_DTYPES(X, __VA_ARGS__) FLOAT_DTYPES(X, __VA_ARGS__)
#define INTEGRAL_DTYPES(X, ...) BOOL_DTYPES(X, __VA_ARGS__) INT_DTYPES(X, __VA_ARGS__)
#define ALL_DTYPES(X, ...) BOOL_DTYPES(X, __VA_ARGS__) NUMERIC_DTYPES(X, __VA_ARGS__)

/* ------------------------------------------------------------------ integer helpers */

static inline int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static inline int64_t int_floor_divide(int64_t a, int64_t b, tt_status *error) {
    if (b == 0) {
        *error = TT_ERR_ZERO_DIVISION;
        return 0;
    }
    if (b == -1) {
        return wrap_sub(0, a);                   /* INT64_MIN / -1 would trap */
    }
    int64_t quotient = a / b;                    /* C truncates toward zero ... */
    if ((a % b != 0) && ((a < 0) != (b < 0))) {
        quotient--;                              /* ... floor division rounds down */
    }
    return quotient;
}

static inline int64_t int_remainder(int64_t a, int64_t b, tt_status *error) {
    if (b == 0) {
        *error = TT_ERR_ZERO_DIVISION;
        return 0;
    }
    if (b == -1) {
        return 0;
    }
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* An integer to a negative power truncates toward zero, as PyTorch computes it for integer
   exponent tensors: 1 stays 1, -1 alternates, every other base gives 0. (PyTorch refuses a
   negative Python-scalar exponent outright; that check lives in Python.) */
static inline int64_t int_pow(int64_t base, int64_t exponent) {
    if (exponent < 0) {
        if (base == 1) {
            return 1;
        }
        if (base == -1) {
            return (exponent & 1) ? -1 : 1;
        }
        return 0;
    }
    uint64_t result = 1, factor = (uint64_t)base;   /* square-and-multiply, wrapping */
    while (exponent > 0) {
        if (exponent & 1) {
            result *= factor;
        }
        factor *= factor;
        exponent >>= 1;
    }
    return (int64_t)result;
}

/* ------------------------------------------------------------------ float helpers */

/* Python's (and PyTorch's) floor division of floats: the floor of the exact quotient, computed
   from fmod so that a == b * q + r holds as closely as floating point allows. */
#define DEFINE_FLOAT_FLOOR_DIVIDE(CT)                                         \
    static inline CT floor_divide_##CT(CT a, CT b) {                          \
        if (b == 0) {                                                         \
            return a / b;                                                     \
        }                                                                     \
        CT mod = fmod(a, b);                                                  \
        CT div = (a - mod) / b;                                               \
        if (mod != 0 && ((b < 0) != (mod < 0))) {                             \
            div -= 1;                                                         \
        }                                                                     \
        if (div == 0) {                                                       \
            return copysign((CT)0, a / b);                                    \
        }                                                                     \
        CT floored = floor(div);                                              \
        return (div - floored > (CT)0.5) ? floored + 1 : floored;             \
    }                                                                         \
    static inline CT remainder_##CT(CT a, CT b) {                             \
        CT mod = fmod(a, b);                                                  \
        return (mod != 0 && ((b < 0) != (mod < 0))) ? mod + b : mod;          \
    }                                                                         \
    static inline CT maximum_##CT(CT a, CT b) { return isnan(a) ? a : isnan(b) ? b : a > b ? a : b; } \
    static inline CT minimum_##CT(CT a, CT b) { return isnan(a) ? a : isnan(b) ? b : a < b ? a : b; } \
    static inline CT sign_##CT(CT x) { return (CT)((x > 0) - (x < 0)); } /* NaN -> 0, as PyTorch */  \
    static inline CT relu_##CT(CT x) { return (isnan(x) || x > 0) ? x : (CT)0; }                       \
    static inline CT sigmoid_##CT(CT x) { return (CT)1 / ((CT)1 + exp(-x)); }
DEFINE_FLOAT_FLOOR_DIVIDE(float)
DEFINE_FLOAT_FLOOR_DIVIDE(double)

/* Pick the float or double helper by the argument's type (float16 computes in float). */
#define BY_TYPE(NAME, x) _Generic((x), float: NAME##_float, double: NAME##_double)

/* ------------------------------------------------------------------ op expressions
 * NAME_K(a, b) for kind K (B, I, F; X where one expression serves every kind). `error`, a
 * tt_status *, is in scope for the integer ops that can fail. */

#define ADD_B(a, b) ((a) | (b))
#define ADD_I(a, b) wrap_add(a, b)
#define ADD_F(a, b) ((a) + (b))
#define SUB_I(a, b) wrap_sub(a, b)
#define SUB_F(a, b) ((a) - (b))
#define MUL_B(a, b) ((a) & (b))
#define MUL_I(a, b) wrap_mul(a, b)
#define MUL_F(a, b) ((a) * (b))
#define DIV_F(a, b) ((a) / (b))
#define FLOOR_DIVIDE_I(a, b) int_floor_divide(a, b, error)
#define FLOOR_DIVIDE_F(a, b) BY_TYPE(floor_divide, a)(a, b)
#define REMAINDER_I(a, b) int_remainder(a, b, error)
#define REMAINDER_F(a, b) BY_TYPE(remainder, a)(a, b)
#define POW_I(a, b) int_pow(a, b)
#define POW_F(a, b) pow(a, b)
#define MAXIMUM_B(a, b) ((a) | (b))
#define MAXIMUM_I(a, b) ((a) > (b) ? (a) : (b))
#define MAXIMUM_F(a, b) BY_TYPE(maximum, a)(a, b)
#define MINIMUM_B(a, b) ((a) & (b))
#define MINIMUM_I(a, b) ((a) < (b) ? (a) : (b))
#define MINIMUM_F(a, b) BY_TYPE(minimum, a)(a, b)
#define ATAN2_F(a, b) atan2(a, b)
#define BITWISE_AND_B(a, b) ((a) & (b))
#define BITWISE_AND_I(a, b) ((a) & (b))
#define BITWISE_OR_B(a, b) ((a) | (b))
#define BITWISE_OR_I(a, b) ((a) | (b))
#define BITWISE_XOR_B(a, b) ((a) ^ (b))
#define BITWISE_XOR_I(a, b) ((a) ^ (b))
#define EQ_X(a, b) ((a) == (b))
#define NE_X(a, b) ((a) != (b))
#define LT_X(a, b) ((a) < (b))
#define LE_X(a, b) ((a) <= (b))
#define GT_X(a, b) ((a) > (b))
#define GE_X(a, b) ((a) >= (b))
#define LOGICAL_AND_X(a, b) (((a) != 0) & ((b) != 0))
#define LOGICAL_OR_X(a, b) (((a) != 0) | ((b) != 0))
#define LOGICAL_XOR_X(a, b) (((a) != 0) ^ ((b) != 0))

#define NEG_I(x) wrap_sub(0, x)
#define NEG_F(x) (-(x))
#define ABS_B(x) (x)
#define ABS_I(x) ((x) < 0 ? wrap_sub(0, x) : (x))
#define ABS_F(x) fabs(x)
#define SIGN_B(x) (x)
#define SIGN_I(x) (((x) > 0) - ((x) < 0))
#define SIGN_F(x) BY_TYPE(sign, x)(x)
#define SQUARE_I(x) wrap_mul(x, x)
#define SQUARE_F(x) ((x) * (x))
#define RELU_I(x) ((x) > 0 ? (x) : 0)
#define RELU_F(x) BY_TYPE(relu, x)(x)
#define EXP_F(x) exp(x)
#define EXPM1_F(x) expm1(x)
#define LOG_F(x) log(x)
#define LOG1P_F(x) log1p(x)
#define LOG2_F(x) log2(x)
#define LOG10_F(x) log10(x)
#define SQRT_F(x) sqrt(x)
#define RSQRT_F(x) (1 / sqrt(x))
#define RECIPROCAL_F(x) (1 / (x))
#define SIN_F(x) sin(x)
#define COS_F(x) cos(x)
#define TAN_F(x) tan(x)
#define ASIN_F(x) asin(x)
#define ACOS_F(x) acos(x)
#define ATAN_F(x) atan(x)
#define SINH_F(x) sinh(x)
#define COSH_F(x) cosh(x)
#define TANH_F(x) tanh(x)
#define ASINH_F(x) asinh(x)
#define ACOSH_F(x) acosh(x)
#define ATANH_F(x) atanh(x)
#define FLOOR_F(x) floor(x)
#define CEIL_F(x) ceil(x)
#define ROUND_F(x) nearbyint(x)          /* default rounding mode: half to even */
#define TRUNC_F(x) trunc(x)
#define SIGMOID_F(x) BY_TYPE(sigmoid, x)(x)
#define ERF_F(x) erf(x)
#define BITWISE_NOT_B(x) (!(x))
#define BITWISE_NOT_I(x) (~(x))
#define LOGICAL_NOT_X(x) ((x) == 0)
#define LOGICAL_NOT_F(x) ((x) == 0)
#define ISNAN_X(x) ((void)(x), 0)       /* integers are never NaN or infinite */
#define ISNAN_F(x) isnan(x)
#define ISINF_X(x) ((void)(x), 0)
#define ISINF_F(x) isinf(x)
#define ISFINITE_X(x) ((void)(x), 1)
#define ISFINITE_F(x) isfinite(x)

/* Unary predicates: bools and integers share the _X form, floats have their own (ISNAN_F). */
#define PRED_EXPR_B(OP) OP##_X
#define PRED_EXPR_I(OP) OP##_X
#define PRED_EXPR_F(OP) OP##_F

/* ------------------------------------------------------------------ row functions
 * Three loops per op and dtype: all operands contiguous (the compiler vectorizes it), the second
 * operand a broadcast scalar, and the general strided case. data[0] is the output. */

#define BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, SO, SA, SB)                  \
    for (int64_t i = 0; i < n; i++) {                                             \
        CT a = (CT)LD(T, pa + i * (SA));                                          \
        CT b = (CT)LD(T, pb + i * (SB));                                          \
        OUT_ST(OUT_T, o + i * (SO), EXPR(a, b));                                   \
    }

#define DEFINE_BINARY_ROW(NAME, T, CT, LD, OUT_T, OUT_ST, EXPR)                                  \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        tt_status *error = ctx;                                                                   \
        (void)error;                                                                              \
        char *o = data[0];                                                                        \
        const char *pa = data[1], *pb = data[2];                                                  \
        const int64_t so = (int64_t)sizeof(OUT_T), st = (int64_t)sizeof(T);                       \
        if (s[0] == so && s[1] == st && s[2] == st) {                                             \
            BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), (int64_t)sizeof(T), \
                        (int64_t)sizeof(T))                                                       \
        } else if (s[0] == so && s[1] == st && s[2] == 0) {                                       \
            BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), (int64_t)sizeof(T), 0) \
        } else {                                                                                  \
            BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, s[0], s[1], s[2])                          \
        }                                                                                         \
    }

#define UNARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, SO, SX)                       \
    for (int64_t i = 0; i < n; i++) {                                             \
        CT x = (CT)LD(T, px + i * (SX));                                          \
        OUT_ST(OUT_T, o + i * (SO), EXPR(x));                                      \
    }

#define DEFINE_UNARY_ROW(NAME, T, CT, LD, OUT_T, OUT_ST, EXPR)                                   \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        (void)ctx;                                                                                \
        char *o = data[0];                                                                        \
        const char *px = data[1];                                                                 \
        if (s[0] == (int64_t)sizeof(OUT_T) && s[1] == (int64_t)sizeof(T)) {                      \
            UNARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), (int64_t)sizeof(T)) \
        } else {                                                                                  \
            UNARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, s[0], s[1])                                 \
        }                                                                                         \
    }

/* Generators: an op's row function for one dtype row of a list. The output keeps the dtype
   ("same") or is bool ("pred"). */
#define GEN_BINARY_SAME(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_BINARY_ROW(binary_##OP##_##name, T, CT, LD, T, ST, OP##_##K)
#define GEN_BINARY_PRED(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_BINARY_ROW(binary_##OP##_##name, T, CT, LD, uint8_t, ST_bool, OP##_X)
#define GEN_UNARY_SAME(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_UNARY_ROW(unary_##OP##_##name, T, CT, LD, T, ST, OP##_##K)
#define GEN_UNARY_PRED(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_UNARY_ROW(unary_##OP##_##name, T, CT, LD, uint8_t, ST_bool, PRED_EXPR_##K(OP))

/* Table entries: [op][dtype code] = row function. */
#define REG_BINARY(OP, name, T, CT, LD, ST, K, CODE) [TT_##OP][CODE] = binary_##OP##_##name,
#define REG_UNARY(OP, name, T, CT, LD, ST, K, CODE) [TT_##OP][CODE] = unary_##OP##_##name,

/* Each op: which dtypes it takes, and whether its output is the same dtype or bool. */
#define BINARY_OPS(X)                                \
    X(ALL_DTYPES, SAME, ADD)                         \
    X(NUMERIC_DTYPES, SAME, SUB)                     \
    X(ALL_DTYPES, SAME, MUL)                         \
    X(FLOAT_DTYPES, SAME, DIV)                       \
    X(NUMERIC_DTYPES, SAME, FLOOR_DIVIDE)            \
    X(NUMERIC_DTYPES, SAME, REMAINDER)               \
    X(NUMERIC_DTYPES, SAME, POW)                     \
    X(ALL_DTYPES, SAME, MAXIMUM)                     \
    X(ALL_DTYPES, SAME, MINIMUM)                     \
    X(FLOAT_DTYPES, SAME, ATAN2)                     \
    X(INTEGRAL_DTYPES, SAME, BITWISE_AND)            \
    X(INTEGRAL_DTYPES, SAME, BITWISE_OR)             \
    X(INTEGRAL_DTYPES, SAME, BITWISE_XOR)            \
    X(ALL_DTYPES, PRED, EQ)                          \
    X(ALL_DTYPES, PRED, NE)                          \
    X(ALL_DTYPES, PRED, LT)                          \
    X(ALL_DTYPES, PRED, LE)                          \
    X(ALL_DTYPES, PRED, GT)                          \
    X(ALL_DTYPES, PRED, GE)                          \
    X(ALL_DTYPES, PRED, LOGICAL_AND)                 \
    X(ALL_DTYPES, PRED, LOGICAL_OR)                  \
    X(ALL_DTYPES, PRED, LOGICAL_XOR)

#define UNARY_OPS(X)                                                        \
    X(NUMERIC_DTYPES, SAME, NEG) X(ALL_DTYPES, SAME, ABS)                   \
    X(ALL_DTYPES, SAME, SIGN) X(NUMERIC_DTYPES, SAME, SQUARE)                \
    X(NUMERIC_DTYPES, SAME, RELU) X(FLOAT_DTYPES, SAME, EXP)                \
    X(FLOAT_DTYPES, SAME, EXPM1) X(FLOAT_DTYPES, SAME, LOG)                 \
    X(FLOAT_DTYPES, SAME, LOG1P) X(FLOAT_DTYPES, SAME, LOG2)                \
    X(FLOAT_DTYPES, SAME, LOG10) X(FLOAT_DTYPES, SAME, SQRT)                \
    X(FLOAT_DTYPES, SAME, RSQRT) X(FLOAT_DTYPES, SAME, RECIPROCAL)          \
    X(FLOAT_DTYPES, SAME, SIN) X(FLOAT_DTYPES, SAME, COS)                   \
    X(FLOAT_DTYPES, SAME, TAN) X(FLOAT_DTYPES, SAME, ASIN)                  \
    X(FLOAT_DTYPES, SAME, ACOS) X(FLOAT_DTYPES, SAME, ATAN)                 \
    X(FLOAT_DTYPES, SAME, SINH) X(FLOAT_DTYPES, SAME, COSH)                 \
    X(FLOAT_DTYPES, SAME, TANH) X(FLOAT_DTYPES, SAME, ASINH)                \
    X(FLOAT_DTYPES, SAME, ACOSH) X(FLOAT_DTYPES, SAME, ATANH)               \
    X(FLOAT_DTYPES, SAME, FLOOR) X(FLOAT_DTYPES, SAME, CEIL)                \
    X(FLOAT_DTYPES, SAME, ROUND) X(FLOAT_DTYPES, SAME, TRUNC)               \
    X(FLOAT_DTYPES, SAME, SIGMOID) X(FLOAT_DTYPES, SAME, ERF)               \
    X(INTEGRAL_DTYPES, SAME, BITWISE_NOT) X(ALL_DTYPES, PRED, LOGICAL_NOT)  \
    X(ALL_DTYPES, PRED, ISNAN) X(ALL_DTYPES, PRED, ISINF)                   \
    X(ALL_DTYPES, PRED, ISFINITE)

/* Expand: define every row function, then fill the two tables from the same op lists. */
#define DEFINE_BINARY_OP(LIST, OUT, OP) LIST(GEN_BINARY_##OUT, OP)
#define DEFINE_UNARY_OP(LIST, OUT, OP) LIST(GEN_UNARY_##OUT, OP)
#define REGISTER_BINARY_OP(LIST, OUT, OP) LIST(REG_BINARY, OP)
#define REGISTER_UNARY_OP(LIST, OUT, OP) LIST(REG_UNARY, OP)

BINARY_OPS(DEFINE_BINARY_OP)
UNARY_OPS(DEFINE_UNARY_OP)

static const tt_row_fn binary_table[TT_NUM_BINARY_OPS][TT_NUM_DTYPES] = {BINARY_OPS(REGISTER_BINARY_OP)};
static const tt_row_fn unary_table[TT_NUM_UNARY_OPS][TT_NUM_DTYPES] = {UNARY_OPS(REGISTER_UNARY_OP)};

/* ------------------------------------------------------------------ entry points */

static tt_status run(tt_row_fn row, int noperands, int ndim, const int64_t *shape,
                     const uintptr_t *addresses, const int64_t *const *strides, int dtype,
                     int out_dtype) {
    size_t itemsizes[3] = {tt_dtype_itemsize(out_dtype), tt_dtype_itemsize(dtype), tt_dtype_itemsize(dtype)};
    tt_iter iter;
    tt_status status = tt_iter_init(&iter, ndim, shape, noperands, strides, itemsizes);
    if (status != TT_OK || iter.numel == 0) {
        return status;
    }
    char *base[3];
    for (int k = 0; k < noperands; k++) {
        if (addresses[k] == 0) {
            return TT_ERR_INVALID_ARG;
        }
        base[k] = (char *)addresses[k];
    }
    tt_status error = TT_OK;
    tt_iter_run(&iter, base, row, &error);
    return error;
}

static int is_predicate_binary(int op) { return op >= TT_EQ; }
static int is_predicate_unary(int op) { return op >= TT_LOGICAL_NOT; }

tt_status tt_unary(int op, int ndim, const int64_t *shape,
                   uintptr_t x, const int64_t *x_strides,
                   uintptr_t out, const int64_t *out_strides, int dtype) {
    if (op < 0 || op >= TT_NUM_UNARY_OPS || ndim < 0 || ndim > TT_MAX_DIMS) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES || unary_table[op][dtype] == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    const uintptr_t addresses[2] = {out, x};
    const int64_t *strides[2] = {out_strides, x_strides};
    int out_dtype = is_predicate_unary(op) ? TT_BOOL : dtype;
    return run(unary_table[op][dtype], 2, ndim, shape, addresses, strides, dtype, out_dtype);
}

tt_status tt_binary(int op, int ndim, const int64_t *shape,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t out, const int64_t *out_strides, int dtype) {
    if (op < 0 || op >= TT_NUM_BINARY_OPS || ndim < 0 || ndim > TT_MAX_DIMS) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES || binary_table[op][dtype] == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    const uintptr_t addresses[3] = {out, a, b};
    const int64_t *strides[3] = {out_strides, a_strides, b_strides};
    int out_dtype = is_predicate_binary(op) ? TT_BOOL : dtype;
    return run(binary_table[op][dtype], 3, ndim, shape, addresses, strides, dtype, out_dtype);
}
