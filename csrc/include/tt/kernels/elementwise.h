/*
 * kernels/elementwise.h: unary and binary elementwise kernels (csrc/src/kernels/elementwise.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 */

/* Operations of one input. Output dtype = input dtype, except the predicates (LOGICAL_NOT,
   ISNAN, ISINF, ISFINITE), whose output is bool. Which dtypes each op takes is listed in
   csrc/src/kernels/elementwise.c; another dtype gives TT_ERR_UNSUPPORTED_DTYPE. */
typedef enum tt_unary_op {
    TT_NEG, TT_ABS, TT_SIGN, TT_SQUARE, TT_RELU,
    TT_EXP, TT_EXPM1, TT_LOG, TT_LOG1P, TT_LOG2, TT_LOG10, TT_SQRT, TT_RSQRT, TT_RECIPROCAL,
    TT_SIN, TT_COS, TT_TAN, TT_ASIN, TT_ACOS, TT_ATAN, TT_SINH, TT_COSH, TT_TANH,
    TT_ASINH, TT_ACOSH, TT_ATANH, TT_FLOOR, TT_CEIL, TT_ROUND, TT_TRUNC, TT_SIGMOID, TT_ERF,
    TT_BITWISE_NOT, TT_LOGICAL_NOT, TT_ISNAN, TT_ISINF, TT_ISFINITE,
    TT_NUM_UNARY_OPS
} tt_unary_op;

/* Operations of two inputs of the same dtype. Output dtype = that dtype, except the predicates
   (EQ .. LOGICAL_XOR), whose output is bool. */
typedef enum tt_binary_op {
    TT_ADD, TT_SUB, TT_MUL, TT_DIV, TT_FLOOR_DIVIDE, TT_REMAINDER, TT_POW,
    TT_MAXIMUM, TT_MINIMUM, TT_ATAN2, TT_BITWISE_AND, TT_BITWISE_OR, TT_BITWISE_XOR,
    TT_EQ, TT_NE, TT_LT, TT_LE, TT_GT, TT_GE, TT_LOGICAL_AND, TT_LOGICAL_OR, TT_LOGICAL_XOR,
    TT_NUM_BINARY_OPS
} tt_binary_op;

/* out[i] = op(x[i]) over `shape`; x is of `dtype`. Addresses are of element (0, ..., 0); strides
   in elements (0 in x broadcasts). out must not partially overlap x (out == x, same strides, is
   fine: in-place). Borrows everything. */
tt_status tt_unary(int op, int ndim, const int64_t *shape,
                   uintptr_t x, const int64_t *x_strides,
                   uintptr_t out, const int64_t *out_strides, int dtype);

/* out[i] = op(a[i], b[i]); a and b are both of `dtype`. Integer FLOOR_DIVIDE and REMAINDER by
   zero give TT_ERR_ZERO_DIVISION (out is fully written anyway, with 0 in those places). An
   integer POW with a negative exponent truncates (3 ** -1 == 0, (-1) ** -1 == -1). Borrows
   everything. */
tt_status tt_binary(int op, int ndim, const int64_t *shape,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t out, const int64_t *out_strides, int dtype);
