/*
 * kernels/elementwise.h: unary and binary elementwise kernels (csrc/src/kernels/elementwise.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 */

/* Operations of one input. Output dtype = input dtype, except the predicates (LOGICAL_NOT,
   ISNAN, ISINF, ISFINITE, SIGNBIT), whose output is bool. GELU is the exact (erf) form, GELU_TANH
   PyTorch's tanh approximation; SILU is x * sigmoid(x); EXP2 is 2 ** x; CUBE is (x * x) * x,
   each product rounded, as PyTorch computes x ** 3 (t_tensor's pow runs it for that exponent). Which dtypes each op takes is listed in
   csrc/src/kernels/elementwise_rows.h; another dtype gives TT_ERR_UNSUPPORTED_DTYPE. */
typedef enum tt_unary_op {
    TT_NEG, TT_ABS, TT_SIGN, TT_SQUARE, TT_RELU,
    TT_EXP, TT_EXPM1, TT_LOG, TT_LOG1P, TT_LOG2, TT_LOG10, TT_SQRT, TT_RSQRT, TT_RECIPROCAL,
    TT_SIN, TT_COS, TT_TAN, TT_ASIN, TT_ACOS, TT_ATAN, TT_SINH, TT_COSH, TT_TANH,
    TT_ASINH, TT_ACOSH, TT_ATANH, TT_FLOOR, TT_CEIL, TT_ROUND, TT_TRUNC, TT_SIGMOID, TT_ERF,
    TT_GELU, TT_GELU_TANH, TT_SILU, TT_EXP2, TT_CUBE,
    TT_BITWISE_NOT, TT_LOGICAL_NOT, TT_ISNAN, TT_ISINF, TT_ISFINITE, TT_SIGNBIT,
    TT_NUM_UNARY_OPS
} tt_unary_op;

/* Operations of two inputs of the same dtype. Output dtype = that dtype, except the predicates
   (EQ .. LOGICAL_XOR), whose output is bool. FMOD is C's fmod (the remainder takes the dividend's
   sign). LOGADDEXP(2) is log(e**a + e**b) (base 2), computed stably. The shifts follow PyTorch:
   a left shift by a negative amount or by 64 or more gives 0, a right shift by those gives the
   sign fill (-1 or 0); other amounts shift the value in int64 and wrap to the dtype. RELU_GRAD is
   relu's backward in one pass: 0 where b <= 0, else a (a the gradient, b relu's output; a NaN in
   b passes a, as PyTorch's threshold_backward). */
typedef enum tt_binary_op {
    TT_ADD, TT_SUB, TT_MUL, TT_DIV, TT_FLOOR_DIVIDE, TT_REMAINDER, TT_POW,
    TT_MAXIMUM, TT_MINIMUM, TT_ATAN2, TT_BITWISE_AND, TT_BITWISE_OR, TT_BITWISE_XOR,
    TT_HYPOT, TT_COPYSIGN, TT_LOGADDEXP, TT_LOGADDEXP2, TT_FMOD,
    TT_BITWISE_LEFT_SHIFT, TT_BITWISE_RIGHT_SHIFT, TT_RELU_GRAD,
    TT_EQ, TT_NE, TT_LT, TT_LE, TT_GT, TT_GE, TT_LOGICAL_AND, TT_LOGICAL_OR, TT_LOGICAL_XOR,
    TT_NUM_BINARY_OPS
} tt_binary_op;

/* Which build of the row functions the kernels below run: "avx512", "avx2" or "baseline" (the
   widest this CPU has, capped by TT_GENERIC_KERNELS when first asked). A static string: the
   caller does not free it. */
const char *tt_elementwise_kernel_name(void);

/* out[i] = op(x[i]) over `shape`; x is of `dtype`. Addresses are of element (0, ..., 0); strides
   in elements (0 in x broadcasts). out must not partially overlap x (out == x, same strides, is
   fine: in-place). Borrows everything. */
tt_status tt_unary(int op, int ndim, const int64_t *shape,
                   uintptr_t x, const int64_t *x_strides,
                   uintptr_t out, const int64_t *out_strides, int dtype);

/* out[i] = op(a[i], b[i]); a and b are both of `dtype`. Integer FLOOR_DIVIDE, REMAINDER and FMOD
   by zero give TT_ERR_ZERO_DIVISION (out is fully written anyway, with 0 in those places). An
   integer POW with a negative exponent truncates (3 ** -1 == 0, (-1) ** -1 == -1). Borrows
   everything. */
tt_status tt_binary(int op, int ndim, const int64_t *shape,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t out, const int64_t *out_strides, int dtype);

/* Operations of one float input and one or two double parameters p0, p1 (float16 and float32
   compute with them rounded to float). Output dtype = input dtype.
     SOFTPLUS    p0 = beta, p1 = threshold: x where x * beta > threshold, else log1p(exp(x * beta)) / beta
     LEAKY_RELU  p0 = negative slope: x where x > 0, else x * p0
     ELU         p0 = alpha: x where x > 0, else alpha * expm1(x)
     LOGIT       p0 = eps, p1 != 0 to clamp x to [eps, 1 - eps] first: log(x / (1 - x)) */
typedef enum tt_unary_param_op {
    TT_SOFTPLUS, TT_LEAKY_RELU, TT_ELU, TT_LOGIT,
    TT_NUM_UNARY_PARAM_OPS
} tt_unary_param_op;

/* Operations of two float inputs and one double parameter p0. Output dtype = input dtype.
     LERP_SCALAR  p0 = weight: PyTorch's lerp of a (start) and b (end) with a scalar weight
     ADD_SCALED   p0 = alpha: a + alpha * b (add and sub with alpha) in one pass; alpha and the
                  product are rounded to the compute type, as a product then a sum would be */
typedef enum tt_binary_param_op {
    TT_LERP_SCALAR, TT_ADD_SCALED,
    TT_NUM_BINARY_PARAM_OPS
} tt_binary_param_op;

/* Operations of three inputs. Output dtype = `dtype`.
     WHERE  a is a bool condition (one byte per element, nonzero = true), b and c of `dtype`:
            out = a ? b : c (the element is copied bit for bit); any dtype
     CLAMP  a, b, c of `dtype`: min(max(a, b), c), NaN in any of them propagates; any dtype
     LERP   a, b, c of float `dtype`: PyTorch's lerp of start a, end b with weight c:
            a + c * (b - a) where |c| < 0.5, else b - (b - a) * (1 - c) */
typedef enum tt_ternary_op {
    TT_WHERE, TT_CLAMP, TT_LERP,
    TT_NUM_TERNARY_OPS
} tt_ternary_op;

/* out[i] = op(x[i]; p0, p1), as tt_unary. Borrows everything. */
tt_status tt_unary_param(int op, int ndim, const int64_t *shape,
                         uintptr_t x, const int64_t *x_strides,
                         uintptr_t out, const int64_t *out_strides, int dtype, double p0, double p1);

/* out[i] = op(a[i], b[i]; p0), as tt_binary. Borrows everything. */
tt_status tt_binary_param(int op, int ndim, const int64_t *shape,
                          uintptr_t a, const int64_t *a_strides,
                          uintptr_t b, const int64_t *b_strides,
                          uintptr_t out, const int64_t *out_strides, int dtype, double p0);

/* out[i] = op(a[i], b[i], c[i]) over `shape`, strides in elements (0 broadcasts); see
   tt_ternary_op for the operands' dtypes. out must not partially overlap an input. Borrows
   everything. */
tt_status tt_ternary(int op, int ndim, const int64_t *shape,
                     uintptr_t a, const int64_t *a_strides,
                     uintptr_t b, const int64_t *b_strides,
                     uintptr_t c, const int64_t *c_strides,
                     uintptr_t out, const int64_t *out_strides, int dtype);
