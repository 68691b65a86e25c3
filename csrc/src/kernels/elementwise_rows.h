/*
 * elementwise_rows.h: the row functions of the unary, binary and ternary elementwise kernels, for
 * every dtype where the op makes sense, and their tables.
 *
 * A template, not a header: elementwise.c includes it to compile the rows for the baseline
 * instruction set, elementwise_avx2.c and elementwise_avx512.c include it under their target
 * pragmas (see elementwise.c for why and how one is picked). Before including it, a file defines
 * EW_TABLES, the name its tables are exported under; every row function is static to that file.
 *
 * The rows are looked up in tables indexed [op][dtype]. Adding an op is three lines: an
 * expression per dtype kind, a DEFINE line that generates its row functions, and a table line
 * that registers them.
 *
 * Dtype kinds and how their values are computed:
 *   B  bool      loaded as 0/1 ints
 *   I  integers  computed in int64 and stored back with wrap-around (as PyTorch: int8 127 + 1 is
 *                -128); signed overflow is avoided by doing + - * in uint64
 *   F  floats    float32 in float, float64 in double, float16 loaded to float and rounded back;
 *                <tgmath.h> picks expf or exp by the argument's type
 * Semantics follow PyTorch: floor_divide and remainder round toward negative infinity (the
 * remainder takes the divisor's sign), maximum/minimum/relu/clamp propagate NaN, round is half to
 * even.
 *
 * Four entry families share the tables' machinery: tt_unary and tt_binary, their "_param" twins
 * (ops that take one or two double parameters, such as softplus's beta; they reach the row
 * function through its context) and tt_ternary (where, clamp, lerp: four operands on tt_iter).
 */
#include <stdint.h>
#include <tgmath.h>

/* Floating-point operations may be assumed not to trap (nothing here reads the exception flags):
   without this GCC keeps every `c ? a : b` whose arms could raise one as a branch, and the loops
   over wide_math.h's functions, all selects, would not vectorize. Values are unchanged. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options   /* popped at the end of this file */
#pragma GCC optimize("no-trapping-math")
#endif

#include "dtype_list.h"
#include "elementwise_internal.h"
#include "tt/kernels/elementwise.h"
#include "vmath.h"
#include "wide_math.h"

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

/* C's % (truncated: the remainder takes the dividend's sign), as PyTorch's fmod of integers. */
static inline int64_t int_fmod(int64_t a, int64_t b, tt_status *error) {
    if (b == 0) {
        *error = TT_ERR_ZERO_DIVISION;
        return 0;
    }
    return b == -1 ? 0 : a % b;                  /* INT64_MIN % -1 would trap */
}

/* PyTorch's shifts: amounts outside [0, 63] shift everything out. The value is shifted in int64
   and stored back with wrap-around, which gives the narrower dtypes their own widths for free. */
static inline int64_t shift_left(int64_t a, int64_t amount) {
    return (amount < 0 || amount >= 64) ? 0 : (int64_t)((uint64_t)a << amount);
}

static inline int64_t shift_right(int64_t a, int64_t amount) {
    if (amount < 0 || amount >= 64) {
        return a < 0 ? -1 : 0;
    }
    return a < 0 ? ~(~a >> amount) : a >> amount;  /* sign fill without relying on >> of negatives */
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

/* Pick the float or double helper by the argument's type (float16 computes in float). */
#define BY_TYPE(NAME, x) _Generic((x), float: NAME##_float, double: NAME##_double)
/* float (and float16) through the function F32, double through F64: wide_math.h's vectorizable
   functions, a C library function or a helper below (functions, not <tgmath.h>'s macros). */
#define BY_PRECISION(F32, F64, x) _Generic((x), float: F32, default: F64)

/* ------------------------------------------------------------------ fmod, remainder, floor_divide
 * C's fmod is exact, and the C library's loops over the bits (glibc: 10-20 ns an element), so a
 * row calling it stays scalar. mod_fast_float/double compute the same exact value with
 * operations that vectorize, for the common case that mod_fast_hard_* accepts: both finite, b not
 * zero (float64: not subnormal either), and a quotient |a / b| under 2^23 (float32) or 2^26
 * (float64). The rows (DEFINE_FLOAT_MOD_ROW) send the other elements to the C library's fmod.
 * Either way the value is fmod's, so every build gives the same bits as the C library.
 *
 * Why exact. Work with ad = |a|, bd = |b| (the result takes a's sign, copysign below), and let q
 * be the truncated rounded quotient: rounding is monotonic and integers up to 2^24 (2^53) are
 * floats (doubles), so q is trunc(ad / bd) or one more, the latter only when ad / bd lies within
 * a rounding error under an integer. r = ad - q * bd is then computed exactly:
 *   float32: q < 2^23 and bd has 24 bits, so q * bd is exact in double; the difference is fmod's
 *     value (a float) or, for the larger q, minus a multiple of the grain of a and b smaller than
 *     bd, a double too, so the subtraction is exact.
 *   float64: bd = bh + bl, bh its top 27 significant bits (the low 26 bits of the mantissa
 *     cleared), bl < 2^26 units of bd's last place; with q < 2^26 both q * bh and q * bl are
 *     exact. ad - q * bh is exact: for q >= 2 by Sterbenz's lemma (ad / (q * bh) lies in
 *     [1/2, 2] as bh > bd (1 - 2^-26)); for q = 1 by it too unless ad > 2 bh, and then ad and bh
 *     are both multiples of twice bd's last place and the difference is below 4 * 2^E (bd in
 *     [2^E, 2^(E+1))), 53 bits of that grain. Subtracting q * bl then leaves the exact r, which
 *     is representable (fmod's value, or for the larger q minus one last place of a or a
 *     multiple of b's smaller than bd), so that subtraction is exact too.
 * A negative r means q was one too many: r + bd is fmod's value, a float, so that sum is exact.
 * The products cannot overflow: q * bd exceeds ad by less than ad's last place. q itself comes
 * from (x + 2^23) - 2^23, which rounds a float 0 <= x < 2^23 to an integer (2^52: a double). */

/* Nonzero where mod_fast_* does not apply: |a / b| >= 2^23 (a inf or NaN too), b zero, inf or
   NaN. Compares of the bits, whose sign bit is the answer (the bits of |b| and of a quotient of
   magnitudes are below 2^31, but for the NaN of 0/0 or inf/inf, whose b the other two tests
   catch): integer operations of the float's width, so the row's OR over a chunk vectorizes in
   every build (SSE2 has no select of integers by a float compare). */
static inline uint32_t mod_fast_hard_float(float a, float b) {
    const uint32_t ratio = wf_bits(fabsf(a) / fabsf(b)), divisor = wf_bits(fabsf(b));
    return ((0x4affffffu - ratio) | (divisor - 1u) | (0x7f7fffffu - divisor)) >> 31;
}

static inline float mod_fast_float(float a, float b) {
    const float ratio = fabsf(a) / fabsf(b);
    float qf = (ratio + 0x1p23f) - 0x1p23f;                  /* nearest integer ... */
    qf = qf > ratio ? qf - 1.0f : qf;                        /* ... truncated */
    const double ad = fabs((double)a), bd = fabs((double)b);
    double r = ad - (double)qf * bd;
    r = r < 0 ? r + bd : r;
    return copysignf((float)r, a);
}

/* As mod_fast_hard_float: |a / b| >= 2^26, b zero, subnormal, inf or NaN. */
static inline uint64_t mod_fast_hard_double(double a, double b) {
    const uint64_t ratio = wm_bits(fabs(a) / fabs(b)), divisor = wm_bits(fabs(b));
    return ((UINT64_C(0x418fffffffffffff) - ratio) | (divisor - UINT64_C(0x0010000000000000)) |
            (UINT64_C(0x7fefffffffffffff) - divisor)) >> 63;
}

static inline double mod_fast_double(double a, double b) {
    const double ad = fabs(a), bd = fabs(b);
    const double ratio = ad / bd;
    double q = (ratio + 0x1p52) - 0x1p52;
    q = q > ratio ? q - 1.0 : q;
    const double bh = wm_double(wm_bits(bd) & ~(((uint64_t)1 << 26) - 1));
    const double bl = bd - bh;
    double r = (ad - q * bh) - q * bl;
    r = r < 0 ? r + bd : r;
    return copysign(r, a);
}

/* floor(x) exactly (-0.0, inf and NaN too) by selects: SSE2 has no vector rounding instruction,
   and a loop calling floor() stays scalar there. The builds that have one (SSE4.1 and up) use
   floor() itself; both are exact, so the bits are the same. */
#if defined(__SSE4_1__) || !(defined(__x86_64__) || defined(__i386__))
#define MOD_FLOOR(x) floor(x)
#else
#define MOD_FLOOR(x) BY_TYPE(mod_floor, x)(x)
#endif
#define DEFINE_MOD_FLOOR(CT, LIMIT)                                                                \
    static inline CT mod_floor_##CT(CT x) {                                                        \
        const CT ax = fabs(x);                                                                     \
        const CT t = (ax + LIMIT) - LIMIT;        /* ax rounded to an integer, ax < LIMIT */       \
        const CT down = t > ax ? t - 1 : t;       /* floor(ax) */                                  \
        const CT up = t < ax ? t + 1 : t;         /* ceil(ax) */                                   \
        const CT f = x < 0 ? -up : down;                                                           \
        return ax < LIMIT ? copysign(f, x) : x;   /* from LIMIT up every float is an integer */   \
    }
DEFINE_MOD_FLOOR(float, 0x1p23f)
DEFINE_MOD_FLOOR(double, 0x1p52)

/* Python's (and PyTorch's) floor division and remainder of floats, from mod = fmod(a, b): the
   floor of the exact quotient, computed so that a == b * q + r holds as closely as floating
   point allows, and the remainder with the divisor's sign (a zero keeps fmod's, the dividend's,
   as PyTorch; NumPy gives a zero the divisor's sign). Selects on values already computed, so
   loops over them vectorize; b == 0 gives a / b. */
#define DEFINE_FLOAT_FLOOR_DIVIDE(CT)                                         \
    static inline CT floor_divide_##CT(CT a, CT b, CT mod) {                  \
        const int flip = (mod != 0) & ((b < 0) != (mod < 0));                 \
        CT div = (a - mod) / b;                                               \
        div = flip ? div - 1 : div;                                           \
        const CT floored = MOD_FLOOR(div);                                    \
        CT result = (div - floored > (CT)0.5) ? floored + 1 : floored;        \
        const CT quotient = a / b;                                            \
        result = div == 0 ? copysign((CT)0, quotient) : result;               \
        return b == 0 ? quotient : result;                                    \
    }                                                                         \
    static inline CT remainder_##CT(CT b, CT mod) {                           \
        const int flip = (mod != 0) & ((b < 0) != (mod < 0));                 \
        return flip ? mod + b : mod;                                          \
    }                                                                         \
    /* NaN in either gives NaN (a first): a NaN `a` passes `a != a`, a NaN `b` fails `a > b`. One \
       select of two compares, not branches, so loops over it vectorize. */                           \
    static inline CT maximum_##CT(CT a, CT b) { return (a > b || a != a) ? a : b; }                    \
    static inline CT minimum_##CT(CT a, CT b) { return (a < b || a != a) ? a : b; }                    \
    static inline CT sign_##CT(CT x) { return (CT)((x > 0) - (x < 0)); } /* NaN -> 0, as PyTorch */  \
    static inline CT relu_##CT(CT x) { return (isnan(x) || x > 0) ? x : (CT)0; }                       \
    static inline CT sigmoid_##CT(CT x) { return (CT)1 / ((CT)1 + BY_PRECISION(expf, wide_exp, x)(-x)); }
DEFINE_FLOAT_FLOOR_DIVIDE(float)
DEFINE_FLOAT_FLOOR_DIVIDE(double)

/* The activations and the other ops added with them, in PyTorch's formulas. */
#define DEFINE_FLOAT_ACTIVATIONS(CT)                                                               \
    static inline CT gelu_##CT(CT x) {                                                             \
        return x * (CT)0.5 * ((CT)1 + BY_PRECISION(erf, wide_erf, x)(x * (CT)0.70710678118654752440)); \
    }                                                                                              \
    static inline CT gelu_tanh_##CT(CT x) {                                                        \
        CT inner = (CT)0.79788456080286535588 * (x + (CT)0.044715 * x * x * x); /* sqrt(2/pi) */   \
        return (CT)0.5 * x * ((CT)1 + BY_PRECISION(tanhf, wide_tanh, x)(inner));                   \
    }                                                                                              \
    static inline CT silu_##CT(CT x) { return x / ((CT)1 + BY_PRECISION(expf, wide_exp, x)(-x)); }   \
    static inline CT leaky_relu_##CT(CT x, CT slope) { return x > 0 ? x : x * slope; }             \
    static inline CT elu_##CT(CT x, CT alpha) { return x <= 0 ? BY_PRECISION(expm1f, wide_expm1, x)(x) * alpha : x; } \
    static inline CT logit_##CT(CT x, CT eps, int clamp) {                                         \
        if (clamp) {                                                                               \
            x = x < eps ? eps : x > (CT)1 - eps ? (CT)1 - eps : x;                                 \
        }                                                                                          \
        return BY_PRECISION(logf, wide_log, x)(x / ((CT)1 - x));                                    \
    }                                                                                              \
    static inline CT lerp_##CT(CT start, CT end, CT weight) {                                      \
        return fabs(weight) < (CT)0.5 ? start + weight * (end - start)                             \
                                      : end - (end - start) * ((CT)1 - weight);                    \
    }                                                                                              \
    /* minimum(maximum(x, low), high), the same bits (a NaN x wins, then a NaN low, then a NaN  \
       high), written as plain compares and NaN selects: GCC does not if-convert the nested       \
       NaN-propagating selects (a branchy scalar loop, 1.4 GB/s on (16M,) float32), this vectorizes. */ \
    static inline CT clamp_##CT(CT x, CT low, CT high) {                                           \
        CT t = x > low ? x : low;                                                                  \
        CT r = t < high ? t : high;                                                                \
        r = high != high ? high : r;                                                               \
        r = low != low ? low : r;                                                                  \
        return x != x ? x : r;                                                                     \
    }
DEFINE_FLOAT_ACTIVATIONS(float)
DEFINE_FLOAT_ACTIVATIONS(double)

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
#define REMAINDER_I(a, b) int_remainder(a, b, error)
#define POW_I(a, b) int_pow(a, b)
#define POW_F(a, b) pow(a, b)
#define MAXIMUM_B(a, b) ((a) | (b))
#define MAXIMUM_I(a, b) ((a) > (b) ? (a) : (b))
#define MAXIMUM_F(a, b) BY_TYPE(maximum, a)(a, b)
#define MINIMUM_B(a, b) ((a) & (b))
#define MINIMUM_I(a, b) ((a) < (b) ? (a) : (b))
#define MINIMUM_F(a, b) BY_TYPE(minimum, a)(a, b)
#define ATAN2_F(a, b) BY_PRECISION(wide_atan2f, wide_atan2, a)(a, b)
#define BITWISE_AND_B(a, b) ((a) & (b))
#define BITWISE_AND_I(a, b) ((a) & (b))
#define BITWISE_OR_B(a, b) ((a) | (b))
#define BITWISE_OR_I(a, b) ((a) | (b))
#define BITWISE_XOR_B(a, b) ((a) ^ (b))
#define BITWISE_XOR_I(a, b) ((a) ^ (b))
#define HYPOT_F(a, b) BY_PRECISION(wide_hypotf, wide_hypot, a)(a, b)
#define COPYSIGN_F(a, b) copysign(a, b)
#define LOGADDEXP_F(a, b) BY_PRECISION(wide_logaddexpf, wide_logaddexp, a)(a, b)
#define LOGADDEXP2_F(a, b) BY_PRECISION(wide_logaddexp2f, wide_logaddexp2, a)(a, b)
#define FMOD_I(a, b) int_fmod(a, b, error)
#define BITWISE_LEFT_SHIFT_I(a, b) shift_left(a, b)
#define BITWISE_RIGHT_SHIFT_I(a, b) shift_right(a, b)
#define RELU_GRAD_I(a, b) ((b) <= 0 ? 0 : (a))
#define RELU_GRAD_F(a, b) ((b) <= 0 ? 0 : (a))   /* NaN in b passes the gradient, as in PyTorch */
#define LERP_SCALAR_F(a, b) BY_TYPE(lerp, a)(a, b, p0)
#define ADD_SCALED_F(a, b) ((a) + (__typeof__(a))p0 * (b))   /* the product rounded, then the sum */
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
#define CUBE_F(x) ((x) * (x) * (x))      /* (x * x) * x: C multiplies left to right */
#define RELU_I(x) ((x) > 0 ? (x) : 0)
#define RELU_F(x) BY_TYPE(relu, x)(x)
#define EXP_F(x) BY_PRECISION(expf, wide_exp, x)(x)
#define EXPM1_F(x) BY_PRECISION(wide_expm1f, wide_expm1, x)(x)
#define LOG_F(x) BY_PRECISION(logf, wide_log, x)(x)
#define LOG1P_F(x) BY_PRECISION(wide_log1pf, wide_log1p, x)(x)
#define LOG2_F(x) BY_PRECISION(wide_log2f, wide_log2, x)(x)
#define LOG10_F(x) BY_PRECISION(wide_log10f, wide_log10, x)(x)
#define SQRT_F(x) sqrt(x)
#define RSQRT_F(x) (1 / sqrt(x))
#define RECIPROCAL_F(x) (1 / (x))
#define ASIN_F(x) BY_PRECISION(wide_asinf, wide_asin, x)(x)
#define ACOS_F(x) BY_PRECISION(wide_acosf, wide_acos, x)(x)
#define ATAN_F(x) BY_PRECISION(wide_atanf, wide_atan, x)(x)
#define SINH_F(x) BY_PRECISION(wide_sinhf, wide_sinh, x)(x)
#define COSH_F(x) BY_PRECISION(wide_coshf, wide_cosh, x)(x)
#define TANH_F(x) BY_PRECISION(tanhf, wide_tanh, x)(x)
#define ASINH_F(x) BY_PRECISION(wide_asinhf, wide_asinh, x)(x)
#define ACOSH_F(x) BY_PRECISION(wide_acoshf, wide_acosh, x)(x)
#define ATANH_F(x) BY_PRECISION(wide_atanhf, wide_atanh, x)(x)
#define FLOOR_F(x) floor(x)
#define CEIL_F(x) ceil(x)
#define ROUND_F(x) nearbyint(x)          /* default rounding mode: half to even */
#define TRUNC_F(x) trunc(x)
#define SIGMOID_F(x) BY_TYPE(sigmoid, x)(x)
#define ERF_F(x) BY_PRECISION(erf, wide_erf, x)(x) /* float and float16 rows take VMATH_ERF */
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
#define SIGNBIT_B(x) ((void)(x), 0)
#define SIGNBIT_I(x) ((x) < 0)
#define SIGNBIT_F(x) (signbit(x) != 0)
#define GELU_F(x) BY_TYPE(gelu, x)(x)
#define GELU_TANH_F(x) BY_TYPE(gelu_tanh, x)(x)
#define SILU_F(x) BY_TYPE(silu, x)(x)
#define EXP2_F(x) BY_PRECISION(wide_exp2f, wide_exp2, x)(x)
/* parameterized (p0, p1 are the row's doubles; the helper's prototype converts them) */
#define SOFTPLUS_F(x) BY_PRECISION(wide_softplusf, wide_softplus, x)(x, p0, p1)
#define LEAKY_RELU_F(x) BY_TYPE(leaky_relu, x)(x, p0)
#define ELU_F(x) BY_TYPE(elu, x)(x, p0)
#define LOGIT_F(x) BY_TYPE(logit, x)(x, p0, p1 != 0)

/* ternary */
#define CLAMP_B(a, b, c) (((a) | (b)) & (c))
#define CLAMP_I(a, b, c) MINIMUM_I(MAXIMUM_I(a, b), c)
#define CLAMP_F(a, b, c) BY_TYPE(clamp, a)(a, b, c)
#define LERP_F(a, b, c) BY_TYPE(lerp, a)(a, b, c)

/* Unary predicates: bools and integers share the _X form, floats have their own (ISNAN_F);
   SIGNBIT has one per kind. */
#define PRED_EXPR_B(OP) PRED_PICK_##OP(OP##_X, OP##_B)
#define PRED_EXPR_I(OP) PRED_PICK_##OP(OP##_X, OP##_I)
#define PRED_EXPR_F(OP) OP##_F
#define PRED_PICK_LOGICAL_NOT(shared, own) shared
#define PRED_PICK_ISNAN(shared, own) shared
#define PRED_PICK_ISINF(shared, own) shared
#define PRED_PICK_ISFINITE(shared, own) shared
#define PRED_PICK_SIGNBIT(shared, own) own

/* ------------------------------------------------------------------ row functions
 * Loops per op and dtype: all operands contiguous (the compiler vectorizes it), one operand a
 * broadcast scalar (binary ops: either one), and the general strided case. data[0] is the output. */

#define BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, SO, SA, SB)                  \
    for (int64_t i = 0; i < n; i++) {                                             \
        CT a = (CT)LD(T, pa + i * (SA));                                          \
        CT b = (CT)LD(T, pb + i * (SB));                                          \
        OUT_ST(OUT_T, o + i * (SO), EXPR(a, b));                                   \
    }

#define DEFINE_BINARY_ROW(NAME, T, CT, LD, OUT_T, OUT_ST, EXPR)                                  \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        ew_context *context = ctx;                                                                \
        tt_status *error = &context->error;                                                       \
        const double p0 = context->p0;                                                            \
        (void)error;                                                                              \
        (void)p0;                                                                                 \
        char *o = data[0];                                                                        \
        const char *pa = data[1], *pb = data[2];                                                  \
        const int64_t so = (int64_t)sizeof(OUT_T), st = (int64_t)sizeof(T);                       \
        if (s[0] == so && s[1] == st && s[2] == st) {                                             \
            BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), (int64_t)sizeof(T), \
                        (int64_t)sizeof(T))                                                       \
        } else if (s[0] == so && s[1] == st && s[2] == 0) {                                       \
            BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), (int64_t)sizeof(T), 0) \
        } else if (s[0] == so && s[1] == 0 && s[2] == st) {   /* a number first: 2 - x, 0.1 * x */ \
            BINARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), 0, (int64_t)sizeof(T)) \
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
        const ew_context *context = ctx;                                                          \
        const double p0 = context->p0, p1 = context->p1;                                          \
        (void)p0;                                                                                 \
        (void)p1;                                                                                 \
        char *o = data[0];                                                                        \
        const char *px = data[1];                                                                 \
        if (s[0] == (int64_t)sizeof(OUT_T) && s[1] == (int64_t)sizeof(T)) {                      \
            UNARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, (int64_t)sizeof(OUT_T), (int64_t)sizeof(T)) \
        } else {                                                                                  \
            UNARY_LOOP(T, CT, LD, OUT_T, OUT_ST, EXPR, s[0], s[1])                                 \
        }                                                                                         \
    }

/* float16 and float32 rows of the ops with a vectorized float32 kernel (vmath.c): a contiguous
   float32 row goes straight to the array function (in place too: x and y may be the same array);
   any other row (strided, or float16) is loaded through a float buffer in chunks, computed there,
   and stored back. float64 keeps the libm expression (DEFINE_UNARY_ROW). */
#define VMATH_CHUNK 256
#define DEFINE_VMATH_ROW(NAME, T, LD, ST, VFN)                                                   \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        (void)ctx;                                                                                \
        char *o = data[0];                                                                        \
        const char *px = data[1];                                                                 \
        if (sizeof(T) == sizeof(float) && s[0] == (int64_t)sizeof(float) && s[1] == (int64_t)sizeof(float)) { \
            VFN((const float *)(const void *)px, (float *)(void *)o, n);                          \
            return;                                                                               \
        }                                                                                         \
        float buffer[VMATH_CHUNK];                                                                \
        for (int64_t i0 = 0; i0 < n; i0 += VMATH_CHUNK) {                                         \
            const int64_t c = n - i0 < VMATH_CHUNK ? n - i0 : VMATH_CHUNK;                        \
            for (int64_t i = 0; i < c; i++) {                                                     \
                buffer[i] = (float)LD(T, px + (i0 + i) * s[1]);                                   \
            }                                                                                     \
            VFN(buffer, buffer, c);                                                               \
            for (int64_t i = 0; i < c; i++) {                                                     \
                ST(T, o + (i0 + i) * s[0], buffer[i]);                                            \
            }                                                                                     \
        }                                                                                         \
    }

/* Rows of sin, cos and tan: wide_math.h's vectorized function (CT: float for float16 and float32,
   double for float64) over a chunk loaded into a buffer (any stride, in place too), then the C
   library for the elements the vector reduction does not cover (|x| > 2^20, inf, NaN), which are
   rare. */
#define WIDE_TRIG_CHUNK 256
#define WIDE_TRIG_OUTSIDE(v) (!(fabs(v) <= WM_TRIG_MAX))
#define DEFINE_WIDE_TRIG_ROW(NAME, T, CT, LD, ST, WIDE, LIBM)                                     \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        (void)ctx;                                                                                \
        char *o = data[0];                                                                        \
        const char *px = data[1];                                                                 \
        CT in[WIDE_TRIG_CHUNK], out[WIDE_TRIG_CHUNK];                                             \
        for (int64_t i0 = 0; i0 < n; i0 += WIDE_TRIG_CHUNK) {                                     \
            const int64_t c = n - i0 < WIDE_TRIG_CHUNK ? n - i0 : WIDE_TRIG_CHUNK;                \
            if (s[1] == (int64_t)sizeof(T)) { /* the common case, as a loop that vectorizes */    \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    in[i] = (CT)LD(T, px + (i0 + i) * (int64_t)sizeof(T));                       \
                }                                                                                 \
            } else {                                                                              \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    in[i] = (CT)LD(T, px + (i0 + i) * s[1]);                                      \
                }                                                                                 \
            }                                                                                     \
            int outside = 0;                                                                      \
            for (int64_t i = 0; i < c; i++) {                                                     \
                out[i] = WIDE(in[i]);                                                             \
                outside |= WIDE_TRIG_OUTSIDE(in[i]);                                              \
            }                                                                                     \
            if (outside) {                                                                        \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    if (WIDE_TRIG_OUTSIDE(in[i])) {                                               \
                        out[i] = (CT)LIBM((double)in[i]); /* full reduction, then rounded */      \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
            if (s[0] == (int64_t)sizeof(T)) {                                                     \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    ST(T, o + (i0 + i) * (int64_t)sizeof(T), out[i]);                             \
                }                                                                                 \
            } else {                                                                              \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    ST(T, o + (i0 + i) * s[0], out[i]);                                           \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

/* Rows of float fmod, remainder and floor_divide (CT: float for float16 and float32, double for
   float64): a chunk of each operand loaded into a buffer (any stride, a broadcast one too), fmod
   by mod_fast_* in a loop that vectorizes, then the C library's fmod for the elements it does
   not take (mod_fast_hard_*: huge quotients, inf, NaN, zero divisors; rare), then FINISH(a, b, mod)
   stored. The output may be an input (in place): a chunk is read before it is written. */
#define MOD_CHUNK 256
#define MOD_LOAD(T, CT, LD, buffer, p, stride)                                                    \
    if ((stride) == (int64_t)sizeof(T)) {                                                         \
        for (int64_t i = 0; i < c; i++) {                                                         \
            buffer[i] = (CT)LD(T, p + (i0 + i) * (int64_t)sizeof(T));                             \
        }                                                                                         \
    } else if ((stride) == 0) {                                                                   \
        const CT value = (CT)LD(T, p);                                                            \
        for (int64_t i = 0; i < c; i++) {                                                         \
            buffer[i] = value;                                                                    \
        }                                                                                         \
    } else {                                                                                      \
        for (int64_t i = 0; i < c; i++) {                                                         \
            buffer[i] = (CT)LD(T, p + (i0 + i) * (stride));                                       \
        }                                                                                         \
    }
#define DEFINE_FLOAT_MOD_ROW(NAME, T, CT, LD, ST, FINISH)                                        \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        (void)ctx;                                                                                \
        char *o = data[0];                                                                        \
        const char *pa = data[1], *pb = data[2];                                                  \
        CT av[MOD_CHUNK], bv[MOD_CHUNK], mv[MOD_CHUNK];                                           \
        for (int64_t i0 = 0; i0 < n; i0 += MOD_CHUNK) {                                           \
            const int64_t c = n - i0 < MOD_CHUNK ? n - i0 : MOD_CHUNK;                            \
            MOD_LOAD(T, CT, LD, av, pa, s[1])                                                     \
            MOD_LOAD(T, CT, LD, bv, pb, s[2])                                                     \
            __typeof__(BY_TYPE(mod_fast_hard, av[0])(av[0], bv[0])) hard = 0;                    \
            for (int64_t i = 0; i < c; i++) {                                                     \
                mv[i] = BY_TYPE(mod_fast, av[i])(av[i], bv[i]);                                   \
                hard |= BY_TYPE(mod_fast_hard, av[i])(av[i], bv[i]);                              \
            }                                                                                     \
            if (hard) {                                                                           \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    if (BY_TYPE(mod_fast_hard, av[i])(av[i], bv[i])) {                            \
                        mv[i] = fmod(av[i], bv[i]);                                               \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
            if (s[0] == (int64_t)sizeof(T)) {                                                     \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    ST(T, o + (i0 + i) * (int64_t)sizeof(T), FINISH(av[i], bv[i], mv[i]));       \
                }                                                                                 \
            } else {                                                                              \
                for (int64_t i = 0; i < c; i++) {                                                 \
                    ST(T, o + (i0 + i) * s[0], FINISH(av[i], bv[i], mv[i]));                     \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }
#define FINISH_FMOD(a, b, mod) (mod)
#define FINISH_REMAINDER(a, b, mod) BY_TYPE(remainder, a)(b, mod)
#define FINISH_FLOOR_DIVIDE(a, b, mod) BY_TYPE(floor_divide, a)(a, b, mod)

#define TERNARY_LOOP(T, CT, LD, ST, EXPR, SO, SA, SB, SC)                         \
    for (int64_t i = 0; i < n; i++) {                                             \
        CT a = (CT)LD(T, pa + i * (SA));                                          \
        CT b = (CT)LD(T, pb + i * (SB));                                          \
        CT c = (CT)LD(T, pc + i * (SC));                                          \
        ST(T, o + i * (SO), EXPR(a, b, c));                                       \
    }

/* Ternary ops of one dtype: all contiguous, the last two broadcast scalars (clamp to numbers,
   lerp with a scalar end and weight), or strided. */
#define DEFINE_TERNARY_ROW(NAME, T, CT, LD, ST, EXPR)                                            \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        (void)ctx;                                                                                \
        char *o = data[0];                                                                        \
        const char *pa = data[1], *pb = data[2], *pc = data[3];                                   \
        const int64_t st = (int64_t)sizeof(T);                                                    \
        if (s[0] == st && s[1] == st && s[2] == st && s[3] == st) {                               \
            TERNARY_LOOP(T, CT, LD, ST, EXPR, (int64_t)sizeof(T), (int64_t)sizeof(T), (int64_t)sizeof(T), \
                         (int64_t)sizeof(T))                                                      \
        } else if (s[0] == st && s[1] == st && s[2] == 0 && s[3] == 0) {                          \
            /* b and c read once: the output never overlaps a broadcast input (elementwise.py    \
               computes into a new tensor then), and with them in registers the loop vectorizes */ \
            const CT b = (CT)LD(T, pb), c = (CT)LD(T, pc);                                        \
            for (int64_t i = 0; i < n; i++) {                                                     \
                CT a = (CT)LD(T, pa + i * st);                                                    \
                ST(T, o + i * st, EXPR(a, b, c));                                                 \
            }                                                                                     \
        } else {                                                                                  \
            TERNARY_LOOP(T, CT, LD, ST, EXPR, s[0], s[1], s[2], s[3])                             \
        }                                                                                         \
    }

/* where copies the chosen element's bits (no conversion, so -0.0 and NaN payloads survive). The
   choice is made with a mask on the bits, not a branch: a random mask would mispredict every
   other element (5 ns each), and the masked form vectorizes. One row per element size serves
   every dtype; fast loops for all contiguous and for `other` a broadcast scalar (where(m, x, 0)). */
#define WHERE_LOOP(U, SO, SC, SB, SE)                                                             \
    for (int64_t i = 0; i < n; i++) {                                                             \
        const U take = (U)0 - (U)(*(const uint8_t *)(pcond + i * (SC)) != 0);                     \
        const U b = *(const U *)(pb + i * (SB)), e = *(const U *)(pe + i * (SE));                 \
        *(U *)(o + i * (SO)) = (U)((b & take) | (e & (U)~take));                                  \
    }

#define DEFINE_WHERE_BITS(BITS)                                                                   \
    static void where_bits_##BITS(char **data, const int64_t *s, int64_t n) {                    \
        char *o = data[0];                                                                        \
        const char *pcond = data[1], *pb = data[2], *pe = data[3];                                \
        const int64_t st = (int64_t)sizeof(uint##BITS##_t);                                       \
        if (s[0] == st && s[1] == 1 && s[2] == st && s[3] == st) {                                \
            WHERE_LOOP(uint##BITS##_t, st, 1, st, st)                                             \
        } else if (s[0] == st && s[1] == 1 && s[2] == st && s[3] == 0) {                          \
            WHERE_LOOP(uint##BITS##_t, st, 1, st, 0)                                              \
        } else {                                                                                  \
            WHERE_LOOP(uint##BITS##_t, s[0], s[1], s[2], s[3])                                    \
        }                                                                                         \
    }
DEFINE_WHERE_BITS(8)
DEFINE_WHERE_BITS(16)
DEFINE_WHERE_BITS(32)
DEFINE_WHERE_BITS(64)

#define DEFINE_WHERE_ROW(NAME, T)                                                                 \
    static void NAME(char **data, const int64_t *s, int64_t n, void *ctx) {                      \
        (void)ctx;                                                                                \
        switch (sizeof(T)) {                                                                      \
        case 1: where_bits_8(data, s, n); break;                                                  \
        case 2: where_bits_16(data, s, n); break;                                                 \
        case 4: where_bits_32(data, s, n); break;                                                 \
        default: where_bits_64(data, s, n); break;                                                \
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
/* MOD: the integer kinds through the expression, the floats through DEFINE_FLOAT_MOD_ROW. */
#define GEN_BINARY_MOD(OP, name, T, CT, LD, ST, K, CODE) GEN_BINARY_MOD_##K(OP, name, T, CT, LD, ST)
#define GEN_BINARY_MOD_I(OP, name, T, CT, LD, ST) DEFINE_BINARY_ROW(binary_##OP##_##name, T, CT, LD, T, ST, OP##_I)
#define GEN_BINARY_MOD_F(OP, name, T, CT, LD, ST) DEFINE_FLOAT_MOD_ROW(binary_##OP##_##name, T, CT, LD, ST, FINISH_##OP)
/* VEC: float16/float32 through the vmath kernel VMATH_<OP>, float64 through the expression. */
#define GEN_UNARY_VEC(OP, name, T, CT, LD, ST, K, CODE) GEN_UNARY_VEC_##name(OP, name, T, CT, LD, ST, K)
#define GEN_UNARY_VEC_float16(OP, name, T, CT, LD, ST, K) DEFINE_VMATH_ROW(unary_##OP##_##name, T, LD, ST, VMATH_##OP)
#define GEN_UNARY_VEC_float32(OP, name, T, CT, LD, ST, K) DEFINE_VMATH_ROW(unary_##OP##_##name, T, LD, ST, VMATH_##OP)
#define GEN_UNARY_VEC_float64(OP, name, T, CT, LD, ST, K) \
    DEFINE_UNARY_ROW(unary_##OP##_##name, T, CT, LD, T, ST, OP##_##K)
/* TRIG: every float dtype through DEFINE_WIDE_TRIG_ROW (float16 computes in float). */
#define GEN_UNARY_TRIG(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_WIDE_TRIG_ROW(unary_##OP##_##name, T, CT, LD, ST, WIDE_##OP, LIBM_##OP)
#define WIDE_SIN(x) BY_PRECISION(wide_sinf, wide_sin, x)(x)
#define WIDE_COS(x) BY_PRECISION(wide_cosf, wide_cos, x)(x)
#define WIDE_TAN(x) BY_PRECISION(wide_tanf, wide_tan, x)(x)
#define LIBM_SIN sin
#define LIBM_COS cos
#define LIBM_TAN tan
#define VMATH_EXP tt_vexp_f32
#define VMATH_LOG tt_vlog_f32
#define VMATH_TANH tt_vtanh_f32
#define VMATH_SIGMOID tt_vsigmoid_f32
#define VMATH_ERF tt_verf_f32
#define VMATH_GELU tt_vgelu_f32
#define VMATH_GELU_TANH tt_vgelu_tanh_f32
#define VMATH_SILU tt_vsilu_f32
#define GEN_UNARY_PRED(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_UNARY_ROW(unary_##OP##_##name, T, CT, LD, uint8_t, ST_bool, PRED_EXPR_##K(OP))

#define GEN_TERNARY_SAME(OP, name, T, CT, LD, ST, K, CODE) \
    DEFINE_TERNARY_ROW(ternary_##OP##_##name, T, CT, LD, ST, OP##_##K)
#define GEN_TERNARY_BITS(OP, name, T, CT, LD, ST, K, CODE) DEFINE_WHERE_ROW(ternary_##OP##_##name, T)

/* Table entries: [op][dtype code] = row function. */
#define REG_BINARY(OP, name, T, CT, LD, ST, K, CODE) [TT_##OP][CODE] = binary_##OP##_##name,
#define REG_UNARY(OP, name, T, CT, LD, ST, K, CODE) [TT_##OP][CODE] = unary_##OP##_##name,
#define REG_TERNARY(OP, name, T, CT, LD, ST, K, CODE) [TT_##OP][CODE] = ternary_##OP##_##name,

/* Each op: which dtypes it takes, and whether its output is the same dtype or bool. */
#define BINARY_OPS(X)                                \
    X(ALL_DTYPES, SAME, ADD)                         \
    X(NUMERIC_DTYPES, SAME, SUB)                     \
    X(ALL_DTYPES, SAME, MUL)                         \
    X(FLOAT_DTYPES, SAME, DIV)                       \
    X(NUMERIC_DTYPES, MOD, FLOOR_DIVIDE)             \
    X(NUMERIC_DTYPES, MOD, REMAINDER)                \
    X(NUMERIC_DTYPES, SAME, POW)                     \
    X(ALL_DTYPES, SAME, MAXIMUM)                     \
    X(ALL_DTYPES, SAME, MINIMUM)                     \
    X(FLOAT_DTYPES, SAME, ATAN2)                     \
    X(INTEGRAL_DTYPES, SAME, BITWISE_AND)            \
    X(INTEGRAL_DTYPES, SAME, BITWISE_OR)             \
    X(INTEGRAL_DTYPES, SAME, BITWISE_XOR)            \
    X(FLOAT_DTYPES, SAME, HYPOT)                     \
    X(FLOAT_DTYPES, SAME, COPYSIGN)                  \
    X(FLOAT_DTYPES, SAME, LOGADDEXP)                 \
    X(FLOAT_DTYPES, SAME, LOGADDEXP2)                \
    X(NUMERIC_DTYPES, MOD, FMOD)                     \
    X(INT_DTYPES, SAME, BITWISE_LEFT_SHIFT)          \
    X(INT_DTYPES, SAME, BITWISE_RIGHT_SHIFT)         \
    X(NUMERIC_DTYPES, SAME, RELU_GRAD)               \
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
    X(NUMERIC_DTYPES, SAME, RELU) X(FLOAT_DTYPES, VEC, EXP)                \
    X(FLOAT_DTYPES, SAME, EXPM1) X(FLOAT_DTYPES, VEC, LOG)                 \
    X(FLOAT_DTYPES, SAME, LOG1P) X(FLOAT_DTYPES, SAME, LOG2)                \
    X(FLOAT_DTYPES, SAME, LOG10) X(FLOAT_DTYPES, SAME, SQRT)                \
    X(FLOAT_DTYPES, SAME, RSQRT) X(FLOAT_DTYPES, SAME, RECIPROCAL)          \
    X(FLOAT_DTYPES, TRIG, SIN) X(FLOAT_DTYPES, TRIG, COS)                   \
    X(FLOAT_DTYPES, TRIG, TAN) X(FLOAT_DTYPES, SAME, ASIN)                  \
    X(FLOAT_DTYPES, SAME, ACOS) X(FLOAT_DTYPES, SAME, ATAN)                 \
    X(FLOAT_DTYPES, SAME, SINH) X(FLOAT_DTYPES, SAME, COSH)                 \
    X(FLOAT_DTYPES, VEC, TANH) X(FLOAT_DTYPES, SAME, ASINH)                \
    X(FLOAT_DTYPES, SAME, ACOSH) X(FLOAT_DTYPES, SAME, ATANH)               \
    X(FLOAT_DTYPES, SAME, FLOOR) X(FLOAT_DTYPES, SAME, CEIL)                \
    X(FLOAT_DTYPES, SAME, ROUND) X(FLOAT_DTYPES, SAME, TRUNC)               \
    X(FLOAT_DTYPES, VEC, SIGMOID) X(FLOAT_DTYPES, VEC, ERF)               \
    X(FLOAT_DTYPES, VEC, GELU) X(FLOAT_DTYPES, VEC, GELU_TANH)            \
    X(FLOAT_DTYPES, VEC, SILU) X(FLOAT_DTYPES, SAME, EXP2)                 \
    X(FLOAT_DTYPES, SAME, CUBE)                                             \
    X(INTEGRAL_DTYPES, SAME, BITWISE_NOT) X(ALL_DTYPES, PRED, LOGICAL_NOT)  \
    X(ALL_DTYPES, PRED, ISNAN) X(ALL_DTYPES, PRED, ISINF)                   \
    X(ALL_DTYPES, PRED, ISFINITE) X(ALL_DTYPES, PRED, SIGNBIT)

#define UNARY_PARAM_OPS(X)                                                  \
    X(FLOAT_DTYPES, SAME, SOFTPLUS) X(FLOAT_DTYPES, SAME, LEAKY_RELU)       \
    X(FLOAT_DTYPES, SAME, ELU) X(FLOAT_DTYPES, SAME, LOGIT)

#define BINARY_PARAM_OPS(X) X(FLOAT_DTYPES, SAME, LERP_SCALAR) X(FLOAT_DTYPES, SAME, ADD_SCALED)

/* WHERE moves bits ("BITS"); CLAMP and LERP compute. */
#define TERNARY_OPS(X) X(ALL_DTYPES, BITS, WHERE) X(ALL_DTYPES, SAME, CLAMP) X(FLOAT_DTYPES, SAME, LERP)

/* Expand: define every row function, then fill the two tables from the same op lists. */
#define DEFINE_BINARY_OP(LIST, OUT, OP) LIST(GEN_BINARY_##OUT, OP)
#define DEFINE_UNARY_OP(LIST, OUT, OP) LIST(GEN_UNARY_##OUT, OP)
#define REGISTER_BINARY_OP(LIST, OUT, OP) LIST(REG_BINARY, OP)
#define REGISTER_UNARY_OP(LIST, OUT, OP) LIST(REG_UNARY, OP)
#define DEFINE_TERNARY_OP(LIST, OUT, OP) LIST(GEN_TERNARY_##OUT, OP)
#define REGISTER_TERNARY_OP(LIST, OUT, OP) LIST(REG_TERNARY, OP)

BINARY_OPS(DEFINE_BINARY_OP)
UNARY_OPS(DEFINE_UNARY_OP)
BINARY_PARAM_OPS(DEFINE_BINARY_OP)
UNARY_PARAM_OPS(DEFINE_UNARY_OP)
TERNARY_OPS(DEFINE_TERNARY_OP)

static const tt_row_fn binary_table[TT_NUM_BINARY_OPS][TT_NUM_DTYPES] = {BINARY_OPS(REGISTER_BINARY_OP)};
static const tt_row_fn unary_table[TT_NUM_UNARY_OPS][TT_NUM_DTYPES] = {UNARY_OPS(REGISTER_UNARY_OP)};
static const tt_row_fn binary_param_table[TT_NUM_BINARY_PARAM_OPS][TT_NUM_DTYPES] = {
    BINARY_PARAM_OPS(REGISTER_BINARY_OP)};
static const tt_row_fn unary_param_table[TT_NUM_UNARY_PARAM_OPS][TT_NUM_DTYPES] = {
    UNARY_PARAM_OPS(REGISTER_UNARY_OP)};
static const tt_row_fn ternary_table[TT_NUM_TERNARY_OPS][TT_NUM_DTYPES] = {TERNARY_OPS(REGISTER_TERNARY_OP)};

const ew_tables EW_TABLES = {&binary_table[0][0], &unary_table[0][0], &binary_param_table[0][0],
                             &unary_param_table[0][0], &ternary_table[0][0]};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
