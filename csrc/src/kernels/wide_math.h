/*
 * wide_math.h (internal): transcendental functions written so that a loop calling them
 * vectorizes: float64 exp, expm1, exp2, log, log2, log10, log1p and tanh (the first section,
 * which the float32 functions evaluated in double use too), float64 sin, cos, tan, sinh, cosh,
 * asinh, acosh, atanh, hypot, logaddexp, logaddexp2 and softplus, float64 atan, asin, acos and
 * atan2, float64 erf, then the float32 ones.
 *
 * Included by elementwise_rows.h, so it is compiled in each of its three builds (baseline, AVX2,
 * AVX-512). The float32 (and float16, which computes in float) rows of sin, cos, tan, asin, acos,
 * atan, sinh, cosh, asinh, acosh, atanh, exp2, expm1, log2, log10, log1p, atan2, hypot,
 * logaddexp, logaddexp2 and softplus call these instead of the C library's scalar functions,
 * which no compiler vectorizes: on (256, 512) float32, 2 threads, sin went from 376 us to 52,
 * log1p from 811 to 40 (docs/performance_vmath.md has the table and the accuracy of each).
 *
 * How they vectorize: no branches and no library calls. Both sides of every choice are computed
 * and the answer selected (c ? a : b on values already computed, which elementwise_rows.h lets
 * GCC turn into blends with no-trapping-math), integers are taken from the bits of floats, and
 * rounding to an integer uses the 1.5 * 2^23 (2^52) trick instead of a conversion instruction
 * AVX2 lacks. Only IEEE operations (+ - * / sqrt) are used and contraction into fused
 * multiply-adds is off in the builds, so all three builds give the same bits.
 *
 * Two precisions:
 *   - float (wf_ helpers): sin, cos, tan, asin, acos, atan, atan2, exp2, expm1, log2, log10,
 *     log1p, logaddexp, logaddexp2, softplus. Twice the lanes of double; the error is a few float
 *     roundings, 1-3 ULP (the bounds measured and asserted in tests/ops/test_wide_math.py).
 *   - double (the float64 functions and their wd_ helpers): sinh, cosh, asinh, acosh, atanh,
 *     hypot, and the reduction of sin, cos and tan modulo pi/2. A float argument is exact in
 *     double and every step keeps a relative error near 2^-50, so the one rounding that matters
 *     is the final double -> float conversion:
 *     the correctly rounded float, except for the rare x whose exact result lies within that
 *     error of a halfway point between two floats (then 1 ULP: sinh and cosh have a handful of
 *     them among all floats, found by exhaustive search in review). Overflow and underflow of the
 *     float result come out right for free: the double intermediate has room, and the conversion
 *     rounds to inf, a subnormal or 0. These were already faster than PyTorch's in double, or
 *     close, so they stayed there.
 *
 * The polynomials are truncated Taylor series on small reduced ranges: a few terms longer than
 * minimax fits, but their coefficients are exact facts (1/k!, 1/(2k+1)) and their error is the
 * first omitted term, stated beside each one.
 *
 * sin, cos and tan reduce the argument modulo pi/2 in double (float32: a three-part pi/2;
 * float64: four parts and two-sums), exact for |x| <= 2^20; larger arguments (and inf and NaN)
 * are recomputed by the C library after the vector loop (elementwise_rows.h,
 * DEFINE_WIDE_TRIG_ROW), which does the full reduction.
 */
#ifndef TT_KERNELS_WIDE_MATH_H
#define TT_KERNELS_WIDE_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Every function is inlined into the row loops: a call would stop the loop vectorizing (GCC
   otherwise keeps the larger ones out of line in rows with several loop variants). */
#if defined(__GNUC__)
#define WM_INLINE static inline __attribute__((always_inline))
#else
#define WM_INLINE static inline
#endif

#define WM_MAGIC 0x1.8p52                  /* x + 1.5 * 2^52 - 1.5 * 2^52 rounds x to an integer */
#define WM_LOG2E 0x1.71547652b82fep+0
#define WM_LN2 0x1.62e42fefa39efp-1
#define WM_LN2_HI 0x1.62e42fee00000p-1     /* 32 bits: n * WM_LN2_HI is exact for |n| < 2^21 */
#define WM_LN2_LO 0x1.a39ef35793c76p-33    /* ln 2 - WM_LN2_HI */
#define WM_SQRT2 0x1.6a09e667f3bcdp+0
#define WM_2_PI 0x1.45f306dc9c883p-1       /* 2 / pi */
#define WM_PIO2_1 0x1.921fb54400000p+0     /* pi/2 in three parts of 33, 33 and 53 bits: */
#define WM_PIO2_2 0x1.0b4611a600000p-34    /* n * part is exact for |n| < 2^20 in the first two */
#define WM_PIO2_3 0x1.3198a2e037073p-69
#define WM_TRIG_MAX 0x1p20f                /* |x| above this: the C library (see the top) */
#define WM_EXP_CLAMP 200.0                 /* e^200 overflows a float, e^-200 underflows it */

WM_INLINE uint64_t wm_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

WM_INLINE double wm_double(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

WM_INLINE double wm_clamp(double x, double limit) {
    x = x < -limit ? -limit : x; /* NaN passes both tests unchanged */
    return x > limit ? limit : x;
}

/* 2^n * e^r where t = n + WM_MAGIC (|n| <= 1022): the exponent field is built from t's bits. */
WM_INLINE double wm_scale(double t, double e_r) {
    /* t's bits are those of 1.5 * 2^52 plus n in the low mantissa bits, whose low 12 bits are
       zero; adding the bias and shifting the exponent field into place leaves n + 1023 there. */
    return e_r * wm_double((wm_bits(t) + 1023) << 52);
}

/* ------------------------------------------------------------------ float64
 * exp, expm1, exp2, log, log2, log10, log1p and tanh of doubles (float64 tensors; the sections
 * after this one add the trigonometric, hyperbolic and two-argument functions), within 1-3 ULP
 * (tests/ops/test_wide_math.py lists each): the same
 * reductions with the polynomials carried far enough for 53 bits, and fdlibm's arrangement of
 * the last additions so that the final rounding dominates. Measured in tests/ops/test_wide_math.py
 * against NumPy's long double (x86 80-bit) functions. */

/* m * 2^n for an integer-valued double n, |n| <= 2044 (callers pass |n| <= 1082): two factors
   within double's exponent range, so an overflowing or subnormal result is rounded once. */
WM_INLINE double wd_ldexp(double m, double n) {
    const double half = n * 0.5 + WM_MAGIC;
    const double rest = (n - (half - WM_MAGIC)) + WM_MAGIC;
    return (m * wm_scale(half, 1.0)) * wm_scale(rest, 1.0);
}

/* e^r - 1 for |r| <= 0.35 to r^14 (first omitted term < 2^-57 relative), as r + r^2 p. */
WM_INLINE double wd_expm1_poly(double r) {
    double p = 1.0 / 87178291200;   /* 1/14! */
    p = p * r + 1.0 / 6227020800;
    p = p * r + 1.0 / 479001600;
    p = p * r + 1.0 / 39916800;
    p = p * r + 1.0 / 3628800;
    p = p * r + 1.0 / 362880;
    p = p * r + 1.0 / 40320;
    p = p * r + 1.0 / 5040;
    p = p * r + 1.0 / 720;
    p = p * r + 1.0 / 120;
    p = p * r + 1.0 / 24;
    p = p * r + 1.0 / 6;
    p = p * r + 0.5;
    return r + r * r * p;
}

/* x = n ln 2 + r for |x| <= 750, |r| <= ln(2) / 2 + a hair; n * WM_LN2_HI is exact and so is
   x - n * WM_LN2_HI. Returns r; *n gets n. */
WM_INLINE double wd_exp_reduce(double x, double *n) {
    const double t = x * WM_LOG2E + WM_MAGIC;
    *n = t - WM_MAGIC;
    return (x - *n * WM_LN2_HI) - *n * WM_LN2_LO;
}

/* e^x for |x| <= 700, where 2^n is a normal double: one scaling, no clamp (the float32 sinh and
   cosh). */
WM_INLINE double wd_exp_normal(double x) {
    double n;
    const double r = wd_exp_reduce(x, &n);
    return wm_scale(n + WM_MAGIC, 1.0 + wd_expm1_poly(r));
}

WM_INLINE double wide_exp(double x) {
    double n;
    const double r = wd_exp_reduce(wm_clamp(x, 750.0), &n); /* beyond: inf or 0 anyway */
    return wd_ldexp(1.0 + wd_expm1_poly(r), n);
}

WM_INLINE double wide_expm1(double x) {
    double n;
    const double c = wm_clamp(x, 750.0);
    const double a = c < -60.0 ? -60.0 : c; /* e^-60 - 1 rounds to -1; n stays >= -87 */
    const double p = wd_expm1_poly(wd_exp_reduce(a, &n));
    /* n <= 53: 2^n p + (2^n - 1), 2^n - 1 exact for n >= -53 (below, it rounds to -1, within an
       ULP of the result); above, the -1 is at most half an ULP */
    const double scale = wm_scale(n > 53.0 ? WM_MAGIC : n + WM_MAGIC, 1.0);
    const double near = scale * p + (scale - 1.0);
    const double far = wd_ldexp(1.0 + p, n);
    const double r = n > 53.0 ? far : near;
    return x == 0.0 ? x : r; /* keeps -0 */
}

/* fdlibm's log reduction: x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), s = f / (2 + f), so that
   log(1 + f) = f - (f^2/2 - s (f^2/2 + R)), R = 2 s^2/3 + 2 s^4/5 + ... to s^20 (first omitted term
   < 2^-57 relative). x positive and finite (subnormals are scaled by 2^54 first). Returns
   s (f^2/2 + R); *e, *f and *hfsq (f^2/2) get the other parts, which the callers add in the
   order that keeps the final rounding dominant. */
WM_INLINE double wd_log_reduce(double x, double *e, double *f, double *hfsq) {
    const int tiny = x < 0x1p-1022;
    const uint64_t bits = wm_bits(tiny ? x * 0x1p54 : x);
    const double biased = wm_double(0x4330000000000000ULL | (bits >> 52)) - 0x1p52;
    const double m1 = wm_double((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
    const int high = m1 > WM_SQRT2;
    const double m = high ? m1 * 0.5 : m1;
    *e = biased - (high ? 1022.0 : 1023.0) - (tiny ? 54.0 : 0.0);
    *f = m - 1.0;
    const double s = *f / (2.0 + *f), z = s * s;
    double p = 2.0 / 21;
    p = p * z + 2.0 / 19;
    p = p * z + 2.0 / 17;
    p = p * z + 2.0 / 15;
    p = p * z + 2.0 / 13;
    p = p * z + 2.0 / 11;
    p = p * z + 2.0 / 9;
    p = p * z + 2.0 / 7;
    p = p * z + 2.0 / 5;
    p = p * z + 2.0 / 3;
    *hfsq = 0.5 * *f * *f;
    return s * (*hfsq + z * p);
}

/* log x = e ln 2 + log(1 + f), ln 2 in two parts (fdlibm's order of the additions). */
WM_INLINE double wd_log_finite(double x) { /* x positive and finite */
    double e, f, hfsq;
    const double t = wd_log_reduce(x, &e, &f, &hfsq);
    return e * WM_LN2_HI - ((hfsq - (t + e * WM_LN2_LO)) - f);
}

WM_INLINE double wide_log(double x) {
    const int inside = x > 0.0 && x < INFINITY;
    const double r = wd_log_finite(inside ? x : 1.0);
    return inside ? r : (x == 0.0 ? -INFINITY : (x == INFINITY ? x : NAN));
}

/* 2^x = 2^n e^(f ln 2), f = x - n exact, |f| <= 1/2. */
WM_INLINE double wide_exp2(double x) {
    const double a = wm_clamp(x, 1100.0); /* beyond: inf or 0 anyway */
    const double t = a + WM_MAGIC;
    const double n = t - WM_MAGIC;
    return wd_ldexp(1.0 + wd_expm1_poly((a - n) * WM_LN2), n);
}

/* log2 and log10 from the natural log's parts: e + log(m) log2(e), e log10(2) + log(m) log10(e),
   with log(m) = f - (f^2/2 - s (f^2/2 + R)) (wd_log_reduce). */
WM_INLINE double wd_log_m(double x, double *e) {
    double f, hfsq;
    const double t = wd_log_reduce(x, e, &f, &hfsq);
    return f - (hfsq - t);
}

#define WD_LOG2E_HI 0x1.7154765200000p+0   /* log2(e), log10(e) and log10(2) in two parts */
#define WD_LOG2E_LO 0x1.705fc2eefa200p-33
#define WD_LOG10E_HI 0x1.bcb7b15200000p-2
#define WD_LOG10E_LO 0x1.b9438ca9aadd5p-36
#define WD_LOG10_2_HI 0x1.3441350a00000p-2
#define WD_LOG10_2_LO (-0x1.0c0219dc1da99p-39)

WM_INLINE double wide_log2(double x) {
    const int inside = x > 0.0 && x < INFINITY;
    double e;
    const double lm = wd_log_m(inside ? x : 1.0, &e);
    const double r = e + (lm * WD_LOG2E_LO + lm * WD_LOG2E_HI);
    return inside ? r : (x == 0.0 ? -INFINITY : (x == INFINITY ? x : NAN));
}

WM_INLINE double wide_log10(double x) {
    const int inside = x > 0.0 && x < INFINITY;
    double e;
    const double lm = wd_log_m(inside ? x : 1.0, &e);
    const double r = e * WD_LOG10_2_HI + ((e * WD_LOG10_2_LO + lm * WD_LOG10E_LO) + lm * WD_LOG10E_HI);
    return inside ? r : (x == 0.0 ? -INFINITY : (x == INFINITY ? x : NAN));
}

/* fdlibm's log1p for x > -1, finite: u = 1 + x rounds; c = the rounding error of u, exactly,
   over u (wd_log1p_correction); log(u) + c. Other x give garbage, which wide_log1p replaces. */
WM_INLINE double wd_log1p_correction(double x, double u) {
    return (u > 2.0 ? 1.0 - (u - x) : x - (u - 1.0)) / u;
}

WM_INLINE double wd_log1p_finite(double x) {
    const double u = 1.0 + x;
    const double r = wd_log_finite(u) + wd_log1p_correction(x, u);
    return x == 0.0 ? x : r; /* keeps -0 */
}

WM_INLINE double wide_log1p(double x) {
    const int inside = x > -1.0 && x < INFINITY;
    /* on x itself (lanes outside are replaced at the end): with `inside ? x : 0` here, and with
       wide_log's own selects inside, GCC merged the tests into selects of booleans and the loop
       did not vectorize */
    const double r = wd_log1p_finite(x);
    return inside ? r : (x == -1.0 ? -INFINITY : (x == INFINITY ? x : NAN));
}

/* tanh x = -expm1(-2|x|) / (2 + expm1(-2|x|)) with x's sign: no cancellation anywhere; |x| >= 22
   rounds to +-1. */
WM_INLINE double wide_tanh(double x) {
    const double a = fabs(x);
    const double e = wide_expm1(-2.0 * (a > 22.0 ? 22.0 : a)); /* NaN passes */
    const double r = copysign(-e / (2.0 + e), x);
    return a >= 22.0 ? copysign(1.0, x) : r; /* NaN: a >= 22 is false, r is NaN */
}

/* ------------------------------------------------------------------ float64 sin, cos, tan */

#define WD_PIO2_3 0x1.3198a2e000000p-69    /* pi/2's third 33 bits (after WM_PIO2_1, WM_PIO2_2) */
#define WD_PIO2_4 0x1.b839a252049c1p-104   /* and the rest, rounded: pi/2 - the four < 2^-159 */

/* a + b = sum + *err exactly (Knuth's two-sum: no assumption on the magnitudes). */
WM_INLINE double wd_two_sum(double a, double b, double *err) {
    const double sum = a + b;
    const double b_part = sum - a;
    *err = (a - (sum - b_part)) + (b - b_part);
    return sum;
}

/* x = n pi/2 + (*hi + *lo) for |x| <= 2^20, |*lo| within an ULP of *hi; a larger x, inf and NaN
   are replaced by 0 (the row recomputes them with the C library). pi/2 comes in four parts, the
   first three of 33 bits, so n times each is exact (|n| < 2^20) and so is x - n WM_PIO2_1; the two
   subtractions after it keep their rounding errors (two-sum), and only n WD_PIO2_4 rounds. The
   absolute error, below 2^-125, is far below the smallest |r| of any double: the double closest
   to a multiple of pi/2 is about 2^-61 away from it (6381956970095103 * 2^797). Returns n mod 4. */
WM_INLINE uint64_t wd_reduce_pio2(double x, double *hi, double *lo) {
    const double a = fabs(x) <= WM_TRIG_MAX ? x : 0.0;
    const double t = a * WM_2_PI + WM_MAGIC;
    const double n = t - WM_MAGIC;
    double e2, e3;
    const double r2 = wd_two_sum(a - n * WM_PIO2_1, -(n * WM_PIO2_2), &e2);
    const double r3 = wd_two_sum(r2, -(n * WD_PIO2_3), &e3);
    const double tail = (e2 + e3) - n * WD_PIO2_4;
    *hi = r3 + tail;
    *lo = (r3 - *hi) + tail; /* |tail| is far below |r3|: this is the exact rounding error */
    return wm_bits(t) & 3;
}

/* sin and cos of hi + lo for |hi| <= pi/4 (+ a hair), lo to first order: Taylor to hi^17 and
   hi^18 (first omitted terms < 2^-62 and 2^-69 relative). cos as w + the exact rounding error of
   w = 1 - hi^2/2 + the rest, so that the last addition is the one rounding that matters. *s_lo
   and *c_lo get the rounding errors of those last additions (for tan; sin and cos drop them). */
WM_INLINE void wd_sincos_poly(double hi, double lo, double *s, double *s_lo, double *c, double *c_lo) {
    const double z = hi * hi;
    double ps = 1.0 / 355687428096000.0;   /* 1/17! */
    ps = ps * z - 1.0 / 1307674368000.0;
    ps = ps * z + 1.0 / 6227020800.0;
    ps = ps * z - 1.0 / 39916800.0;
    ps = ps * z + 1.0 / 362880.0;
    ps = ps * z - 1.0 / 5040.0;
    ps = ps * z + 1.0 / 120.0;
    ps = ps * z - 1.0 / 6.0;
    const double s_tail = hi * z * ps + lo * (1.0 - 0.5 * z);
    *s = hi + s_tail;
    *s_lo = s_tail - (*s - hi);
    double pc = -1.0 / 6402373705728000.0; /* -1/18! */
    pc = pc * z + 1.0 / 20922789888000.0;
    pc = pc * z - 1.0 / 87178291200.0;
    pc = pc * z + 1.0 / 479001600.0;
    pc = pc * z - 1.0 / 3628800.0;
    pc = pc * z + 1.0 / 40320.0;
    pc = pc * z - 1.0 / 720.0;
    pc = pc * z + 1.0 / 24.0;
    const double half_z = 0.5 * z, w = 1.0 - half_z;
    const double c_tail = ((1.0 - w) - half_z) + (z * z * pc - hi * lo);
    *c = w + c_tail;
    *c_lo = c_tail - (*c - w);
}

/* a b - product exactly, for product = a * b rounded (Dekker's two-product: a and b split into
   halves of 26 bits whose products are exact). |a b| well inside the range. */
WM_INLINE double wd_product_error(double a, double b, double product) {
    const double a_big = 134217729.0 * a, b_big = 134217729.0 * b; /* 2^27 + 1 */
    const double a_hi = a_big - (a_big - a), a_lo = a - a_hi;
    const double b_hi = b_big - (b_big - b), b_lo = b - b_hi;
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
}

/* sin x and cos x from one reduction (cos x = sin(x + pi/2): quadrant q + 1); |x| <= 2^20, as
   wd_reduce_pio2. random.c's normal fill takes both. */
WM_INLINE void wide_sincos(double x, double *sin_x, double *cos_x) {
    double hi, lo, s, s_lo, c, c_lo;
    const uint64_t q = wd_reduce_pio2(x, &hi, &lo);
    wd_sincos_poly(hi, lo, &s, &s_lo, &c, &c_lo);
    const double sin_v = (q & 1) ? c : s, cos_v = (q & 1) ? s : c;
    *sin_x = (q & 2) ? -sin_v : sin_v;
    *cos_x = ((q + 1) & 2) ? -cos_v : cos_v;
}

WM_INLINE double wide_sin(double x) {
    double s, c;
    wide_sincos(x, &s, &c);
    return x == 0.0 ? x : s; /* keeps -0 */
}

WM_INLINE double wide_cos(double x) {
    double s, c;
    wide_sincos(x, &s, &c);
    return c;
}

/* x with the low 27 bits of its mantissa cleared: at most 26 significant bits, so its product
   with another such number, with a number of 27 bits or with a centre (12 bits) is exact, and so
   is x - wd_high(x) (27 bits). Cheaper than wd_product_error's split, which wd_divide does not
   need: there only one factor of each product is split. */
WM_INLINE double wd_high(double x) { return wm_double(wm_bits(x) & ~((1ULL << 27) - 1)); }

/* (num + num_lo) / (den + den_lo) as r + *delta: r_h * d_h and r_h * (den - d_h) are exact and
   num - r_h * d_h is too (Sterbenz), so rho is the residual num + num_lo - r_h (den + den_lo) to
   a relative 2^-50 and delta = r_h + rho / den - r is below 2^-50 |r|. */
WM_INLINE double wd_divide(double num, double num_lo, double den, double den_lo, double *delta) {
    const double inv = 1.0 / den;
    const double r = num * inv;
    const double r_h = wd_high(r), d_h = wd_high(den);
    const double rho = ((num - r_h * d_h) - r_h * (den - d_h)) + (num_lo - r_h * den_lo);
    *delta = (r_h - r) + rho * inv;
    return r;
}

/* tan = sin / cos (odd n: -cos / sin), both as a sum of two doubles, divided by wd_divide so
   that only the final addition rounds. */
WM_INLINE double wide_tan(double x) {
    double hi, lo, s, s_lo, c, c_lo, delta;
    const uint64_t q = wd_reduce_pio2(x, &hi, &lo);
    wd_sincos_poly(hi, lo, &s, &s_lo, &c, &c_lo);
    const int odd = (q & 1) != 0;
    const double num = odd ? c : s, num_lo = odd ? c_lo : s_lo;
    const double den = odd ? s : c, den_lo = odd ? s_lo : c_lo;
    const double quotient = wd_divide(num, num_lo, den, den_lo, &delta);
    const double r = quotient + delta;
    return x == 0.0 ? x : (odd ? -r : r);
}

/* ------------------------------------------------------------------ float64 hyperbolic */

/* e^a / 4 = result + *lo for 0 <= a <= 710.5 (NaN passes): *lo carries the rounding of 1 + p, so
   sinh and cosh round once at the end; 2^(n - 2) is a normal double for n <= 1025. */
WM_INLINE double wd_exp_quarter(double a, double *lo) {
    double n;
    const double p = wd_expm1_poly(wd_exp_reduce(a, &n));
    const double s = 1.0 + p;
    const double quarter = wm_scale(n - 2.0 + WM_MAGIC, 1.0);
    *lo = quarter * ((1.0 - s) + p); /* (1 - s) + p is the exact rounding error of s */
    return quarter * s;
}

/* |x| < 1: the series (to x^17; the first omitted term < 2^-56 relative), which does not cancel;
   above, 2 (e^a/4 - e^-a/4) with e^-a/4 = 1 / (16 (e^a/4)), overflowing to inf past 710.47. */
WM_INLINE double wide_sinh(double x) {
    const double a = wm_clamp(fabs(x), 710.5);
    double lo;
    const double big = wd_exp_quarter(a, &lo);
    const double large = 2.0 * (big + (lo - 0.0625 / big));
    const double a2 = a * a;
    double p = 1.0 / 355687428096000.0; /* 1/17! */
    p = p * a2 + 1.0 / 1307674368000.0;
    p = p * a2 + 1.0 / 6227020800.0;
    p = p * a2 + 1.0 / 39916800.0;
    p = p * a2 + 1.0 / 362880.0;
    p = p * a2 + 1.0 / 5040.0;
    p = p * a2 + 1.0 / 120.0;
    p = p * a2 + 1.0 / 6.0;
    const double small = a + a * a2 * p;
    return copysign(a < 1.0 ? small : large, x);
}

/* 2 (e^a/4 + e^-a/4): no cancellation for any a. */
WM_INLINE double wide_cosh(double x) {
    double lo;
    const double big = wd_exp_quarter(wm_clamp(fabs(x), 710.5), &lo);
    return 2.0 * (big + (lo + 0.0625 / big));
}

/* log u + c, for asinh and acosh's three forms, which share one log: log1p(y) below 2 (u = 1 + y,
   c its rounding correction), log(w) up to 2^28 (u = w, c = 0), log(b) + ln 2 above (u = b). */
WM_INLINE double wd_log_of_form(double b, double y, double w) {
    const double u_small = 1.0 + y;
    const double u = b < 2.0 ? u_small : (b < 0x1p28 ? w : b);
    const double c = b < 2.0 ? wd_log1p_correction(y, u_small) : (b < 0x1p28 ? 0.0 : WM_LN2);
    return wd_log_finite(u) + c;
}

/* log(a + sqrt(a^2 + 1)) as log1p(a + a^2 / (1 + sqrt(1 + a^2))) below 2, log(2a + 1 / (a +
   sqrt(a^2 + 1))) up to 2^28, where the correction is small and 2a exact, and log(a) + ln 2 above
   (a^2 + 1 rounds to a^2). */
WM_INLINE double wide_asinh(double x) {
    const double a = fabs(x);
    const int finite = a < INFINITY; /* false for inf and NaN, which are their own asinh */
    const double b = finite ? a : 0.0;
    const double b2 = b * b;
    const double r = wd_log_of_form(b, b + b2 / (1.0 + sqrt(1.0 + b2)), 2.0 * b + 1.0 / (b + sqrt(b2 + 1.0)));
    return finite ? copysign(r, x) : x;
}

/* The same three forms for x >= 1: log1p(t + sqrt(2t + t^2)), t = x - 1 exact, below 2. */
WM_INLINE double wide_acosh(double x) {
    const int inside = x >= 1.0 && x < INFINITY;
    const double b = inside ? x : 1.0;
    const double t = b - 1.0;
    const double r = wd_log_of_form(b, t + sqrt(2.0 * t + t * t), 2.0 * b - 1.0 / (b + sqrt(b * b - 1.0)));
    return inside ? r : (x == INFINITY ? x : NAN);
}

/* log1p(2a / (1 - a)) / 2: 2.41 ULP at worst (a review's hunt), log1p's 1.44 plus the quotient's
   rounding. fdlibm's split at 1/2 into log1p(2a + 2a^2 / (1 - a)) did not measure better on a
   sweep here. */
WM_INLINE double wide_atanh(double x) {
    const double a = fabs(x);
    const int inside = a < 1.0;
    const double b = inside ? a : 0.0;
    const double r = copysign(0.5 * wd_log1p_finite(2.0 * b / (1.0 - b)), x);
    const double edge = a == 1.0 ? copysign(INFINITY, x) : NAN;
    return inside ? r : edge;
}

/* ------------------------------------------------------------------ float64, two arguments */

/* sqrt(x^2 + y^2) without overflow or underflow: both scaled by the power of 2 that brings the
   larger near 1, the squares summed exactly as two doubles (two-products), the square root
   corrected once by Newton's step on that sum, and scaled back: 0.50 ULP for a normal result; a
   subnormal one rounds twice (the scaling back rounds again: 0.75 ULP, as glibc's 0.77). inf
   wins over NaN, as C's hypot. */
WM_INLINE double wide_hypot(double x, double y) {
    const double ax = fabs(x), ay = fabs(y);
    const double big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
    uint64_t e = wm_bits(big) >> 52; /* the biased exponent: 0 for 0 and subnormals */
    e = e < 1 ? 1 : (e > 2045 ? 2045 : e);
    const double down = wm_double((2046 - e) << 52), up = wm_double(e << 52); /* 2^(1023-e), 2^(e-1023) */
    const double m = big * down, s = small * down;
    const double mm = m * m, ss = s * s;
    const double sum = mm + ss;
    const double sum_lo = ((mm - sum) + ss) + (wd_product_error(m, m, mm) + wd_product_error(s, s, ss));
    const double root = sqrt(sum), square = root * root;
    const double r = (root + (((sum - square) - wd_product_error(root, root, square)) + sum_lo) / (2.0 * root)) * up;
    const double finite = big == 0.0 ? 0.0 : r;
    return (isinf(x) || isinf(y)) ? INFINITY : (isnan(x) || isnan(y)) ? x + y : finite;
}

/* log(e^a + e^b) = max + log1p(e^-|a - b|); equal infinities give themselves. */
WM_INLINE double wide_logaddexp(double a, double b) {
    const double m = a > b ? a : b, d = fabs(a - b);
    const double r = m + wd_log1p_finite(wide_exp(-d));
    return (isinf(a) && a == b) ? a : (isnan(d) ? a + b : r);
}

/* log2(2^a + 2^b) = max + log1p(2^-|a - b|) log2(e), log2(e) in two parts. */
WM_INLINE double wide_logaddexp2(double a, double b) {
    const double m = a > b ? a : b, d = fabs(a - b);
    const double l = wd_log1p_finite(wide_exp2(-d));
    const double r = m + (l * WD_LOG2E_LO + l * WD_LOG2E_HI);
    return (isinf(a) && a == b) ? a : (isnan(d) ? a + b : r);
}

/* PyTorch's softplus, as wide_softplusf in double. */
WM_INLINE double wide_softplus(double x, double beta, double threshold) {
    const double z = x * beta;
    const double r = ((z > 0.0 ? z : 0.0) + wd_log1p_finite(wide_exp(-fabs(z)))) / beta;
    return z > threshold ? x : r;
}

/* ------------------------------------------------------------------ float64 inverse trigonometric
 * atan, asin, acos and atan2 of doubles, within 0.75 ULP (tests/ops/test_wide_math.py lists each).
 *   - atan and atan2: atan q = atan(c) + atan(r), r = (q - c) / (1 + c q), for the centre c in
 *     {0, ~tan(pi/8), 1, ~tan(3pi/8)} nearest q, or pi/2 + atan(-1 / q) for q > 4.76, so that
 *     |r| <= 0.21 and a Taylor series to r^23 suffices. atan2 takes r = (|y| - c |x|) / (|x| +
 *     c |y|) and pi minus the angle for negative x. The centres have 12 bits, so c times half of a
 *     double's bits is exact: the numerator and denominator are formed exactly as sums of two
 *     doubles, the division's rounding error is recovered from the exact residual, and atan(c)
 *     (in two parts) + r is added with its rounding error kept, so that the last addition is the
 *     only rounding of the result's size.
 *   - asin and acos: asin's Taylor series (to x^49) on |x| <= 1/2; above, asin |x| = pi/2 - 2 asin t
 *     and acos |x| = 2 asin t, t = sqrt((1 - |x|) / 2) <= 1/2, with t's rounding error carried. */

#define WD_ATAN_C1 0x1.a82p-2                   /* 3393 / 8192, tan(pi/8) to 12 bits */
#define WD_ATAN_C1_HI 0x1.9219388e31acep-2      /* atan(WD_ATAN_C1), atan(1), pi/2 in two parts */
#define WD_ATAN_C1_LO (-0x1.af60b40cbf614p-56)
#define WD_ATAN_C3 0x1.35p+1                    /* 2472 / 1024, tan(3pi/8) to 12 bits */
#define WD_ATAN_C3_HI 0x1.2d9654c66566fp+0      /* atan(WD_ATAN_C3) in two parts */
#define WD_ATAN_C3_LO 0x1.7bebc063c8655p-54
#define WD_PI_4_HI 0x1.921fb54442d18p-1
#define WD_PI_4_LO 0x1.1a62633145c07p-55
#define WD_PI_2_HI 0x1.921fb54442d18p+0
#define WD_PI_2_LO 0x1.1a62633145c07p-54
#define WD_PI_HI 0x1.921fb54442d18p+1           /* pi in two parts */
#define WD_PI_LO 0x1.1a62633145c07p-53
#define WD_3PI_4 0x1.2d97c7f3321d2p+1           /* 3pi/4 rounded: atan2(+-inf, -inf) */

/* atan(r + delta) - r for |r| <= 0.21, |delta| < 2^-50 |r|: r^3 p + delta (1 - r^2), Taylor to
   r^23 (first omitted term r^25 / 25 < 2^-58 relative); the next term of delta's, delta r^4, is
   below 2^-58 |r|. */
WM_INLINE double wd_atan_rest(double r, double delta) {
    /* p = -(1/3 + r^4/7 + r^8/11 + ...) + r^2 (1/5 + r^4/9 + ...): two chains, half the latency */
    const double r2 = r * r, r4 = r2 * r2;
    double a = -1.0 / 23, b = 1.0 / 21;
    a = a * r4 - 1.0 / 19;
    b = b * r4 + 1.0 / 17;
    a = a * r4 - 1.0 / 15;
    b = b * r4 + 1.0 / 13;
    a = a * r4 - 1.0 / 11;
    b = b * r4 + 1.0 / 9;
    a = a * r4 - 1.0 / 7;
    b = b * r4 + 1.0 / 5;
    a = a * r4 - 1.0 / 3;
    const double p = a + r2 * b;
    return delta * (1.0 - r2) + r * r2 * p;
}

/* The centre for |x| or n / m: c = 0, WD_ATAN_C1, 1, WD_ATAN_C3 up to 0.21, 0.668 (tan(3pi/16)),
   1 / 0.668, 1 / 0.21, and infinity beyond (*far: atan = pi/2 + atan(-1 / q)), with atan(c) in two
   parts. Selected one interval after the other: nested selects did not vectorize. */
#define WD_ATAN_BOUND1 0.21
#define WD_ATAN_BOUND2 0.668
#define WD_ATAN_BOUND3 0x1.7f3bc8d07aa27p+0 /* 1 / 0.668 */
#define WD_ATAN_BOUND4 0x1.30c30c30c30c3p+2 /* 1 / 0.21 */
WM_INLINE double wd_atan_centre(int j1, int j2, int j3, int far, double *atan_c, double *atan_c_lo) {
    double c = 0.0, hi = 0.0, lo = 0.0;
    c = j1 ? WD_ATAN_C1 : c;
    hi = j1 ? WD_ATAN_C1_HI : hi;
    lo = j1 ? WD_ATAN_C1_LO : lo;
    c = j2 ? 1.0 : c;
    hi = j2 ? WD_PI_4_HI : hi;
    lo = j2 ? WD_PI_4_LO : lo;
    c = j3 ? WD_ATAN_C3 : c;
    hi = j3 ? WD_ATAN_C3_HI : hi;
    lo = j3 ? WD_ATAN_C3_LO : lo;
    *atan_c = far ? WD_PI_2_HI : hi;
    *atan_c_lo = far ? WD_PI_2_LO : lo;
    return c;
}

/* atan(n / m) = atan_c + r + tail, for n, m >= 0 with m + 2.42 n finite and both normal doubles
   or 0 (not both). Returns r (|r| <= 0.21); *atan_c and *tail get the other two (|tail| < 2^-50
   |r| + an ULP of atan_c). */
WM_INLINE double wd_atan_ratio(double n, double m, double *atan_c, double *tail) {
    const int j1 = n >= WD_ATAN_BOUND1 * m, j2 = n >= WD_ATAN_BOUND2 * m;
    const int j3 = n >= WD_ATAN_BOUND3 * m, far = n >= WD_ATAN_BOUND4 * m;
    double atan_c_lo;
    const double c = wd_atan_centre(j1, j2, j3, far, atan_c, &atan_c_lo);
    /* numerator n - c m = num + num_lo: c m_h and c m_l are exact, n - c m_h is exact (c m_h is
       within a factor 2 of n: Sterbenz), and the subtraction of c m_l keeps its error (TwoSum) */
    const double m_h = wd_high(m), n_h = wd_high(n);
    const double n1 = n - c * m_h, t = c * (m - m_h);
    double num_lo, den1_lo;
    const double num = wd_two_sum(n1, -t, &num_lo);
    /* denominator m + c n = den + den_lo: m + c n_h (TwoSum: either may be larger), then + c n_l
       (Fast2Sum) */
    const double cn_h = c * n_h, cn_l = c * (n - n_h);
    const double den1 = wd_two_sum(m, cn_h, &den1_lo);
    const double den = den1 + cn_l;
    const double den_lo = den1_lo + ((den1 - den) + cn_l);
    double delta;
    const double r = wd_divide(far ? -m : num, far ? 0.0 : num_lo, far ? n : den, far ? 0.0 : den_lo, &delta);
    *tail = atan_c_lo + wd_atan_rest(r, delta);
    return r;
}

/* atan |x| = atan(c) + atan((|x| - c) / (1 + c |x|)) for c in {0, WD_ATAN_C1, 1, WD_ATAN_C3},
   = pi/2 + atan(-1 / |x|) above 4.76: |r| <= 0.21 in each interval. |x| - c is exact (Sterbenz),
   and so is 1 + c (|x|)_h; 1 + c |x| = den + den_lo keeps the rounding of + c (|x|)_l. */
WM_INLINE double wide_atan(double x) {
    const double a0 = fabs(x);
    const double a = a0 > 0x1p60 ? 0x1p60 : a0; /* atan(2^60) rounds to pi/2, as atan(inf); NaN passes */
    const int far = a >= WD_ATAN_BOUND4;
    double atan_c, atan_c_lo;
    const double c = wd_atan_centre(a >= WD_ATAN_BOUND1, a >= WD_ATAN_BOUND2, a >= WD_ATAN_BOUND3, far, &atan_c, &atan_c_lo);
    const double a_h = wd_high(a), ca_l = c * (a - a_h);
    const double den1 = 1.0 + c * a_h, den2 = den1 + ca_l, den2_lo = (den1 - den2) + ca_l;
    const double num = a - c;
    double delta;
    const double r = wd_divide(far ? -1.0 : num, 0.0, far ? a : den2, far ? 0.0 : den2_lo, &delta);
    const double s = atan_c + r, e = (atan_c - s) + r; /* Fast2Sum: atan_c is 0 or > |r| */
    return copysign(s + (e + (atan_c_lo + wd_atan_rest(r, delta))), x); /* +-0 too: s is +0 */
}

/* asin t - t for 0 <= t <= 1/2: t^3 p(t^2), Taylor to t^49, the coefficient of t^(2k+1) being
   binom(2k, k) / (4^k (2k + 1)) (binom(2k, k) < 2^53 and 4^k are exact, so each is rounded once);
   the first omitted term, binom(50, 25) / (4^25 51) t^51, is below 2^-58.9 asin t. */
#define WD_ASIN_C(binom, k) ((binom) / (double)(1ULL << (2 * (k))) / (2 * (k) + 1))
WM_INLINE double wd_asin_rest(double t) {
    /* p = a(t^8) + t^2 b(t^8) + t^4 (c(t^8) + t^2 d(t^8)): four short chains instead of one of
       24 steps, whose latency, not the operations, bounded the speed */
    const double t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
    double a = WD_ASIN_C(538257874440.0, 21);
    a = a * t8 + WD_ASIN_C(2333606220.0, 17);
    a = a * t8 + WD_ASIN_C(10400600.0, 13);
    a = a * t8 + WD_ASIN_C(48620.0, 9);
    a = a * t8 + WD_ASIN_C(252.0, 5);
    a = a * t8 + WD_ASIN_C(2.0, 1);
    double b = WD_ASIN_C(2104098963720.0, 22);
    b = b * t8 + WD_ASIN_C(9075135300.0, 18);
    b = b * t8 + WD_ASIN_C(40116600.0, 14);
    b = b * t8 + WD_ASIN_C(184756.0, 10);
    b = b * t8 + WD_ASIN_C(924.0, 6);
    b = b * t8 + WD_ASIN_C(6.0, 2);
    double c = WD_ASIN_C(8233430727600.0, 23);
    c = c * t8 + WD_ASIN_C(35345263800.0, 19);
    c = c * t8 + WD_ASIN_C(155117520.0, 15);
    c = c * t8 + WD_ASIN_C(705432.0, 11);
    c = c * t8 + WD_ASIN_C(3432.0, 7);
    c = c * t8 + WD_ASIN_C(20.0, 3);
    double d = WD_ASIN_C(32247603683100.0, 24);
    d = d * t8 + WD_ASIN_C(137846528820.0, 20);
    d = d * t8 + WD_ASIN_C(601080390.0, 16);
    d = d * t8 + WD_ASIN_C(2704156.0, 12);
    d = d * t8 + WD_ASIN_C(12870.0, 8);
    d = d * t8 + WD_ASIN_C(70.0, 4);
    const double p = (a + t2 * b) + t4 * (c + t2 * d);
    return t * t2 * p;
}

/* asin and acos of a = |x| <= 1 from asin of v = a (a <= 1/2) or v = t = sqrt((1 - a) / 2)
   (a > 1/2: asin a = pi/2 - 2 asin t, acos a = 2 asin t), both <= 1/2: the result is
   big + scale (v + v_lo + asin_rest(v)) + small, with scale in {+-1, +-2} and big in {0, pi/2, pi}
   chosen by the caller. z = (1 - a) / 2 is exact; t's rounding error is recovered as t_lo =
   (z - t^2) / 2t and enters as asin(t + t_lo) = asin t + t_lo (1 + t^2 / 2) (the next term,
   3 t^4 / 8, is below 2.4% of a term below 2^-52 t). Sets
   *v, *v_lo (0 for a <= 1/2) and returns asin_rest(v). */
WM_INLINE double wd_asin_parts(double a, double *v, double *v_lo) {
    const double z = (1.0 - a) * 0.5;
    const double t = sqrt(z); /* a > 1: NaN, replaced by the callers */
    /* z - t^2 = (z - t_h^2) - t_l (t + t_h): the first difference is exact (Sterbenz), the product
       rounds at 2^-78 z, far below the residual (about 2^-53 z) */
    const double t_h = wd_high(t), t_l = t - t_h;
    const double res = (z - t_h * t_h) - t_l * (t + t_h);
    /* 1 / t to 2^-8, enough for t_lo (below 2^-52 t): 2^(1022 - e) (2 - m) for t = 2^e m from
       t's bits (a division would take the divider, already busy with the square root), the
       constant tuned for the least relative error (5.1%) over a mantissa, then a Newton step.
       t == 0 (a == 1) gives a finite y, and res is 0. */
    const double y0 = wm_double(0x7FDE600000000000ULL - wm_bits(t));
    const double y = y0 * (2.0 - t * y0);
    const double t_lo = (res * y) * (0.5 + 0.25 * z); /* res / 2t (1 + t^2 / 2), z = t^2 */
    const int small = a <= 0.5;
    *v = small ? a : t;
    *v_lo = small ? 0.0 : t_lo;
    return wd_asin_rest(*v);
}

/* big + scale * (v + v_lo + rest) + small with one rounding of the result's size: big + scale v
   is exact in two parts (Fast2Sum: big is 0 or at least 2 |v| here). */
WM_INLINE double wd_asin_sum(double big, double small, double scale, double v, double v_lo, double rest) {
    const double sv = scale * v, h = big + sv, e = (big - h) + sv;
    return h + (e + (small + scale * (v_lo + rest)));
}

WM_INLINE double wide_asin(double x) {
    const double a = fabs(x);
    double v, v_lo;
    const double rest = wd_asin_parts(a, &v, &v_lo);
    const int small = a <= 0.5;
    const double r = wd_asin_sum(small ? 0.0 : WD_PI_2_HI, small ? 0.0 : WD_PI_2_LO, small ? 1.0 : -2.0, v, v_lo, rest);
    return a > 1.0 ? NAN : copysign(r, x); /* +-0 too: r is +0 */
}

/* acos x = pi/2 -+ asin |x| for |x| <= 1/2, 2 asin t for x > 1/2, pi - 2 asin t for x < -1/2. */
WM_INLINE double wide_acos(double x) {
    const double a = fabs(x);
    double v, v_lo;
    const double rest = wd_asin_parts(a, &v, &v_lo);
    const int small = a <= 0.5;
    /* x's sign as a number (1 for negative x, -0 too, else 0): selects on it mixed with `small`
       did not vectorize */
    const double negative = 0.5 - 0.5 * copysign(1.0, x);
    const double big = small ? WD_PI_2_HI : negative * WD_PI_HI;
    const double low = small ? WD_PI_2_LO : negative * WD_PI_LO;
    const double scale = small ? 2.0 * negative - 1.0 : 2.0 - 4.0 * negative;
    const double r = wd_asin_sum(big, low, scale, v, v_lo, rest);
    return a > 1.0 ? NAN : r;
}

/* atan2(y, x) = atan(|y| / |x|) for x >= 0, pi - that for x < 0 (sign bit), with y's sign. */
WM_INLINE double wide_atan2(double y, double x) {
    const double ay = fabs(y), ax = fabs(x);
    /* only the ratio matters: both are scaled by 2^(1019 - e), e the larger's exponent, so that
       the larger is in [2^1019, 2^1020); when that factor would overflow (e < -4), by 2^1023.
       Then m + c n cannot overflow, the smaller is a normal double unless the angle rounds to 0
       (or it is 0), and where the angle is subnormal, n / m is rounded once, at the end. */
    const double big = ay > ax ? ay : ax;
    const double e = wm_double(0x4330000000000000ULL | (wm_bits(big) >> 52)) - (0x1p52 + 1023.0);
    const double scale = wm_scale((e < -4.0 ? 1023.0 : 1019.0 - e) + WM_MAGIC, 1.0);
    double atan_c, tail;
    const double r = wd_atan_ratio(ay * scale, ax * scale, &atan_c, &tail);
    /* x < 0 (sign bit): pi - atan_c - r - tail, pi - atan_c with its rounding error (Fast2Sum;
       pi - atan_c > |r|) */
    const int negative = (wm_bits(x) >> 63) != 0; /* -0 too; signbit() stops GCC vectorizing */
    const double sigma = negative ? -1.0 : 1.0;
    const double sc = sigma * atan_c, k = negative ? WD_PI_HI : 0.0;
    const double b = k + sc, b_lo = ((k - b) + sc) + (negative ? WD_PI_LO : 0.0);
    const double sr = sigma * r, h = b + sr, eh = (b - h) + sr;
    const double angle = h + (eh + (b_lo + sigma * tail));
    /* y == 0 (x may be 0 too), infinities: the exact cases, all with y's sign */
    const double flat = negative ? WD_PI_HI : 0.0;
    const double steep = ax == INFINITY ? (negative ? WD_3PI_4 : WD_PI_4_HI) : WD_PI_2_HI;
    const double edge = ay == INFINITY ? steep : flat;
    const double result = (ay > 0.0 && ay < INFINITY && ax < INFINITY) ? angle : edge;
    return (isnan(x) || isnan(y)) ? x + y : copysign(result, y);
}

#define WD_2_SQRTPI 0x1.20dd750429b6dp+0    /* 2 / sqrt(pi) */
#define WD_2_SQRTPI_LO 0x1.1ae3a914fed80p-56 /* 2 / sqrt(pi) - WD_2_SQRTPI */
/* erf x for a subnormal x, correctly rounded: erf x is x 2/sqrt(pi) to far below its last place,
   and x = k 2^-1074 for an integer k < 2^52, so the result is round(k 2/sqrt(pi)) 2^-1074 (a normal
   result below 2^-1021 lies on the same grid). k C is formed exactly enough in doubles (C in two
   parts, Dekker's product error of k C_hi, which cannot underflow at this scale), rounded to an
   integer by the fraction left over, and scaled back exactly. The single product x C, rounded in
   the subnormal range, carried the constant's rounding error besides its own: 0.569 ULP at worst;
   computed unscaled, Dekker's partial products underflow (1 ULP). Ties cannot occur (C is
   irrational); only a fraction within ~2^-53 of one half could round the wrong way. */
WM_INLINE double wd_erf_subnormal(double x) {
    const double k = fabs(x) * 0x1p600 * 0x1p474;   /* exact: an integer below 2^52 */
    const double p = k * WD_2_SQRTPI;                /* below 2^53: its ulp is at most 1 */
    const double r = wd_product_error(k, WD_2_SQRTPI, p) + k * WD_2_SQRTPI_LO;
    const double n0 = p < 0x1p52 ? (p + 0x1p52) - 0x1p52 : p;   /* p rounded to an integer */
    const double f = (p - n0) + r;                               /* k C - n0, |f| < 1.5 */
    const double n = f > 0.5 ? n0 + 1.0 : f < -0.5 ? n0 - 1.0 : n0;
    const double result = n * 0x1p-600 * 0x1p-474;               /* exact: n 2^-1074 is representable */
    return copysign(result, x);   /* erf(-0) is -0 */
}

/* ------------------------------------------------------------------ float64 erf
 * Two pieces, both computed and the answer selected (see the top):
 *   |x| < 2:       erf x = x P(x^2), P of degree 18 in u = x^2 / 2 - 1 (x^2 in [0, 4]);
 *   2 <= |x| < 6:  erf x = 1 - erfc |x|, erfc y = e^(-y^2) t G(t), t = 1/y, G of degree 14 in
 *                  6 t - 2 (t in (1/6, 1/2]); e^(-y^2) = e^(-hi) (1 - lo), y^2 = hi + lo exactly;
 *   |x| >= 6:      +-1 (erf rounds to 1 from 5.93 on).
 * Unlike the Taylor series above, P and G are Chebyshev interpolants (fitted in 50-digit
 * arithmetic with mpmath at the Chebyshev nodes of each interval, then expanded in the powers of
 * u; docs/performance_vmath.md has the script): the series of erf converges too slowly on [0, 2],
 * and erfc has none that converges. Their own errors, with the coefficients rounded to double: P
 * 2^-54.4 relative to erf(x)/x, G 2^-49.6 relative to G, which is below 2^-57 absolute on erf
 * since erfc(2) = 0.0047. erf's measured maximum error is 1.55 ULP (tests/ops/test_wide_math.py).
 * float64 gelu (erf form) calls it too, in the eager and the fused kernels. */
#define WD_ERF_P0 0x1.5990d95f8c2b3p-1   /* P's constant term */
WM_INLINE double wide_erf(double x) {
    const double ax = fabs(x);
    /* |x|^2 = hi + lo exactly (|x| capped at 6, where erf is +-1 already, so that it cannot
       overflow): both pieces take it. u = hi / 2 - 1 + lo / 2: with x^2 rounded, the error of
       P near x = 2 was 0.5 ULP larger. */
    const double y = ax < 6.0 ? ax : 6.0;
    const double hi = y * y, lo = wd_product_error(y, y, hi);
    const double u = (hi * 0.5 - 1.0) + lo * 0.5;
    /* P - P0 = u Q(u), by Horner's scheme (Estrin's was 8% faster but up to 2.0 ULP) */
    double q = 0x1.bb18325dae03cp-43;
    q = q * u - 0x1.0a510be19391ap-39;
    q = q * u + 0x1.1f5782e6a3060p-36;
    q = q * u - 0x1.3428d0223c47fp-33;
    q = q * u + 0x1.37efeda14ed01p-30;
    q = q * u - 0x1.281a1a6b66770p-27;
    q = q * u + 0x1.06d55ce81008cp-24;
    q = q * u - 0x1.b256b6c896e22p-22;
    q = q * u + 0x1.4c4be91d01cdep-19;
    q = q * u - 0x1.d3f5944b5f604p-17;
    q = q * u + 0x1.2d27beea90361p-14;
    q = q * u - 0x1.5f6c684156355p-12;
    q = q * u + 0x1.705616d993033p-10;
    q = q * u - 0x1.5712a483d1feep-8;
    q = q * u + 0x1.18a17bf1510c0p-6;
    q = q * u - 0x1.8ea53db5a717fp-5;
    q = q * u + 0x1.e962f50e2314bp-4;
    q = q * u - 0x1.0b60e85d30896p-2;
    /* the last step and the product with x carry their rounding errors (near x = 2: 2.1 ULP
       without, 1.55 with) */
    const double w = q * u, s = WD_ERF_P0 + w, s_lo = (WD_ERF_P0 - s) + w; /* |w| < 0.3 < P0 */
    const double xs = x * s;
    const double small = ax < 0x1p-1022 ? wd_erf_subnormal(x) : xs + (wd_product_error(x, s, xs) + x * s_lo);
    const double t = 1.0 / (y < 2.0 ? 2.0 : y), v = t * 6.0 - 2.0; /* finite for every x */
    /* G by Estrin's scheme (gL_i: node i of level L, which adds v^(2^L) times its right child):
       shorter dependency chains than Horner's, as accurate here */
    const double g0_0 = 0x1.12f21ddd9f5e2p-1 - 0x1.865fd27e52a0cp-6 * v;
    const double g0_1 = -0x1.a40f49b1bcc80p-9 + 0x1.daf77339391c7p-11 * v;
    const double g0_2 = -0x1.4c1ed6f646362p-14 - 0x1.a1171debb2400p-17 * v;
    const double g0_3 = 0x1.8cfddeb459604p-18 - 0x1.111141adf3c65p-20 * v;
    const double g0_4 = 0x1.82462c52ab360p-27 + 0x1.9b77a7a06c2f3p-25 * v;
    const double g0_5 = -0x1.10360ad912d6bp-26 + 0x1.63b53861e5dd6p-29 * v;
    const double g0_6 = 0x1.573289e8d74d1p-34 - 0x1.ed61ce95d8c56p-33 * v;
    const double v2 = v * v;
    const double g1_0 = g0_0 + g0_1 * v2;
    const double g1_1 = g0_2 + g0_3 * v2;
    const double g1_2 = g0_4 + g0_5 * v2;
    const double g1_3 = g0_6 + 0x1.13bc961d3fa81p-34 * v2;
    const double v4 = v2 * v2;
    const double g2_0 = g1_0 + g1_1 * v4;
    const double g2_1 = g1_2 + g1_3 * v4;
    const double v8 = v4 * v4;
    const double g = g2_0 + g2_1 * v8;
    const double large = 1.0 - wide_exp(-hi) * (1.0 - lo) * (t * g);
    /* NaN fails ax >= 2 and stays NaN in `small`; +-inf gives +-1; -0 keeps its sign (the
       correction added to x s is +0 there) */
    return ax >= 2.0 ? copysign(ax < 6.0 ? large : 1.0, x) : x == 0.0 ? x : small;
}

/* ------------------------------------------------------------------ float helpers
 * (see the top for which functions use them; the only double step left in them is the reduction
 * of sin, cos and tan modulo pi/2, which a float cannot do exactly) */

#define WF_MAGIC 0x1.8p23f                 /* rounds a float of magnitude < 2^22 to an integer */
#define WF_LOG2E 0x1.715476p+0f
#define WF_LN2 0x1.62e430p-1f
#define WF_LN2_HI 0x1.630000p-1f           /* 9 bits: n * WF_LN2_HI is exact for |n| < 2^15 */
#define WF_LN2_LO (-0x1.bd0106p-13f)
#define WF_LOG2E_HI 0x1.716000p+0f         /* log2(e) and log10(e) in two parts: not exact, but the */
#define WF_LOG2E_LO (-0x1.7135a8p-13f)
#define WF_LOG10_2_HI 0x1.344000p-2f       /* 12 bits: n * WF_LOG10_2_HI is exact for |n| < 2^12 */
#define WF_LOG10_2_LO 0x1.3509f8p-18f
#define WF_LOG10E_HI 0x1.bcc000p-2f        /* low part is not rounded into the high one */
#define WF_LOG10E_LO (-0x1.09d5b2p-15f)
#define WF_SQRT2 0x1.6a09e6p+0f
#define WF_SQRT3 0x1.bb67aep+0f
#define WF_TAN_PI_12 0x1.126146p-2f
#define WF_PI_HI 0x1.921fb6p+1f            /* pi, pi/2 and pi/6 as float + the float rest */
#define WF_PI_LO (-0x1.777a5cp-24f)
#define WF_PI_2_HI 0x1.921fb6p+0f
#define WF_PI_2_LO (-0x1.777a5cp-25f)
#define WF_PI_4 0x1.921fb6p-1f             /* pi/4 and 3pi/4 rounded: atan2 of equal magnitudes */
#define WF_3PI_4 0x1.2d97c8p+1f
#define WF_PI_6_HI 0x1.0c1524p-1f
#define WF_PI_6_LO (-0x1.f4a326p-27f)

WM_INLINE uint32_t wf_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

WM_INLINE float wf_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 2^n from t = n + WF_MAGIC, |n| <= 126: as wm_scale, with 9 low zero bits and bias 127. */
WM_INLINE float wf_pow2(float t) { return wf_float((wf_bits(t) + 127) << 23); }

/* e^r - 1 for |r| <= 0.35, Taylor to r^8 (first omitted term < 2^-29 relative). */
WM_INLINE float wf_expm1_poly(float r) {
    float p = 1.0f / 40320;
    p = p * r + 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    return r + r * r * p;
}

/* m * 2^n with n an integer-valued float, |n| <= 252: 2^n in two factors within float's exponent
   range, so an overflowing or subnormal result is rounded once, by the second multiply. */
WM_INLINE float wf_ldexp(float m, float n) {
    const float half = n * 0.5f + WF_MAGIC;
    const float rest = (n - (half - WF_MAGIC)) + WF_MAGIC;
    return (m * wf_pow2(half)) * wf_pow2(rest);
}

/* log of a positive finite float as e ln 2 + log m, m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(s),
   s = (m - 1) / (m + 1), |s| <= 0.1716, to s^11 (first omitted term < 2^-31 relative). Returns
   log m; *e gets e (subnormal x are scaled up by 2^23 first). */
WM_INLINE float wf_log_parts(float x, float *e) {
    const int tiny = x < 0x1p-126f;
    const uint32_t bits = wf_bits(tiny ? x * 0x1p23f : x);
    const float biased = (float)(int32_t)(bits >> 23);
    const float m1 = wf_float((bits & 0x007fffffu) | 0x3f800000u); /* [1, 2) */
    const int high = m1 > WF_SQRT2;
    const float m = high ? m1 * 0.5f : m1;
    *e = biased - (high ? 126.0f : 127.0f) - (tiny ? 23.0f : 0.0f);
    const float s = (m - 1.0f) / (m + 1.0f), z = s * s;
    float p = 2.0f / 11;
    p = p * z + 2.0f / 9;
    p = p * z + 2.0f / 7;
    p = p * z + 2.0f / 5;
    p = p * z + 2.0f / 3;
    return 2.0f * s + s * z * p;
}

/* log u for u positive and finite, ln 2 in two parts (e * WF_LN2_HI is exact). */
WM_INLINE float wf_log(float u) {
    float e;
    const float log_m = wf_log_parts(u, &e);
    return e * WF_LN2_HI + (e * WF_LN2_LO + log_m);
}

/* e^x for x <= 89 (NaN passes; below -104 the result is 0): x = n ln 2 + r, |r| <= ln(2) / 2. */
WM_INLINE float wf_exp(float x) {
    const float a = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
    const float t = a * WF_LOG2E + WF_MAGIC;
    const float n = t - WF_MAGIC;
    return wf_ldexp(1.0f + wf_expm1_poly((a - n * WF_LN2_HI) - n * WF_LN2_LO), n);
}

/* log(1 + y) for y > -1, finite: u = 1 + y rounds, and log(u) * y / (u - 1) corrects for it to
   first order; |y| < 2^-24 (and +-0) gives y, which is log1p(y) rounded. */
WM_INLINE float wf_log1p(float y) {
    const float u = 1.0f + y, d = u - 1.0f;
    const float corrected = wf_log(u) * (y / d);
    return d == 0.0f ? y : corrected;
}

/* atan(q) for q >= 0 (inf included): q > 1 -> pi/2 - atan(1/q); then z > tan(pi/12) ->
   pi/6 + atan(w), w = (z sqrt3 - 1) / (z + sqrt3); |w| <= 0.268, Taylor to w^13 (first omitted
   term < 2^-30 relative); pi/2 and pi/6 are added in two parts. q == 1 gives pi/4 rounded:
   pi/6 + atan(tan(pi/12)) would carry sqrt3's rounding. */
WM_INLINE float wf_atan_nonneg(float q) {
    const int invert = q > 1.0f;
    const float z = invert ? 1.0f / q : q;
    const int shift = z > WF_TAN_PI_12;
    const float w = shift ? (z * WF_SQRT3 - 1.0f) / (z + WF_SQRT3) : z;
    const float w2 = w * w;
    float p = 1.0f / 13;
    p = p * w2 - 1.0f / 11;
    p = p * w2 + 1.0f / 9;
    p = p * w2 - 1.0f / 7;
    p = p * w2 + 1.0f / 5;
    p = p * w2 - 1.0f / 3;
    const float atan_w = w + w * w2 * p;
    const float r = shift ? (atan_w + WF_PI_6_LO) + WF_PI_6_HI : atan_w;
    const float angle = invert ? (WF_PI_2_HI - r) + WF_PI_2_LO : r;
    return q == 1.0f ? WF_PI_4 : angle;
}

/* sin r and cos r for |r| <= pi/4 (+ a hair), Taylor to r^9 and r^10 (first omitted terms
   < 2^-28 and 2^-32 relative). */
WM_INLINE void wf_sincos_poly(float r, float *s, float *c) {
    const float r2 = r * r;
    float ps = 1.0f / 362880;
    ps = ps * r2 - 1.0f / 5040;
    ps = ps * r2 + 1.0f / 120;
    ps = ps * r2 - 1.0f / 6;
    *s = r + r * r2 * ps;
    float pc = -1.0f / 3628800;
    pc = pc * r2 + 1.0f / 40320;
    pc = pc * r2 - 1.0f / 720;
    pc = pc * r2 + 1.0f / 24;
    pc = pc * r2 - 0.5f;
    *c = 1.0f + r2 * pc;
}

/* x = n pi/2 + r for |x| <= 2^20 (a larger x is replaced by 0: the row recomputes it), in
   double: each of x - n P1 and n P2 is exact, so r carries one rounding relative to itself even
   when x is close to a multiple of pi/2. Returns n mod 4; *s, *c get sin r and cos r in float. */
WM_INLINE uint64_t wf_reduce_pio2(float x, float *s, float *c) {
    const double a = fabs(x) <= WM_TRIG_MAX ? (double)x : 0.0;
    const double t = a * WM_2_PI + WM_MAGIC;
    const double n = t - WM_MAGIC;
    const double r = ((a - n * WM_PIO2_1) - n * WM_PIO2_2) - n * WM_PIO2_3;
    wf_sincos_poly((float)r, s, c);
    return wm_bits(t) & 3; /* n's low bits, two's complement in the mantissa */
}

/* ------------------------------------------------------------------ the float32 functions
 * sin, tan, expm1 and the other odd functions return x itself at +-0: the sums r + r^3 p below
 * would turn -0 into +0. */

WM_INLINE float wide_sinf(float x) {
    float s, c;
    const uint64_t q = wf_reduce_pio2(x, &s, &c);
    const float v = (q & 1) ? c : s;
    const float r = (q & 2) ? -v : v;
    return x == 0.0f ? x : r;
}

WM_INLINE float wide_cosf(float x) {
    float s, c;
    const uint64_t q = wf_reduce_pio2(x, &s, &c) + 1; /* cos x = sin(x + pi/2) */
    const float v = (q & 1) ? c : s;
    return (q & 2) ? -v : v;
}

WM_INLINE float wide_tanf(float x) {
    float s, c;
    const uint64_t q = wf_reduce_pio2(x, &s, &c);
    const float even = s / c, odd = -c / s;
    const float r = (q & 1) ? odd : even;
    return x == 0.0f ? x : r;
}

WM_INLINE float wide_asinf(float x) {
    const float q = fabsf(x) / sqrtf((1.0f - x) * (1.0f + x)); /* |x| > 1: NaN; |x| == 1: inf */
    return copysignf(wf_atan_nonneg(q), x);
}

WM_INLINE float wide_acosf(float x) {
    return 2.0f * wf_atan_nonneg(sqrtf((1.0f - x) / (1.0f + x))); /* -1 -> 2 atan(inf) */
}

WM_INLINE float wide_atanf(float x) { return copysignf(wf_atan_nonneg(fabsf(x)), x); }

WM_INLINE float wide_exp2f(float x) {
    const float a = x < -160.0f ? -160.0f : (x > 160.0f ? 160.0f : x); /* NaN passes */
    const float t = a + WF_MAGIC;
    const float n = t - WF_MAGIC;
    return wf_ldexp(1.0f + wf_expm1_poly((a - n) * WF_LN2), n); /* a - n is exact */
}

WM_INLINE float wide_expm1f(float x) {
    const float a = x < -30.0f ? -30.0f : (x > 89.0f ? 89.0f : x); /* e^-30 - 1 rounds to -1 */
    const float t = a * WF_LOG2E + WF_MAGIC;
    const float n = t - WF_MAGIC;
    const float p = wf_expm1_poly((a - n * WF_LN2_HI) - n * WF_LN2_LO);
    /* n <= 24: 2^n p + (2^n - 1), where 2^n - 1 is exact; above, the -1 is below half an ULP
       and 2^n (1 + p) may overflow, so it goes through wf_ldexp */
    const float scale = wf_pow2(n > 24.0f ? WF_MAGIC : t);
    const float near = scale * p + (scale - 1.0f);
    const float far = wf_ldexp(1.0f + p, n);
    const float r = n > 24.0f ? far : near;
    return x == 0.0f ? x : r;
}

/* 0 -> -inf, +inf -> +inf, anything else outside the domain (negative, NaN) -> NaN. */
#define WF_LOG_SPECIALS(x) ((x) == 0.0f ? -INFINITY : (x) == INFINITY ? INFINITY : NAN)

WM_INLINE float wide_log2f(float x) {
    const int inside = x > 0.0f && x < INFINITY;
    float e;
    const float log_m = wf_log_parts(inside ? x : 1.0f, &e);
    const float r = e + (log_m * WF_LOG2E_HI + log_m * WF_LOG2E_LO);
    return inside ? r : WF_LOG_SPECIALS(x);
}

WM_INLINE float wide_log10f(float x) {
    const int inside = x > 0.0f && x < INFINITY;
    float e;
    const float log_m = wf_log_parts(inside ? x : 1.0f, &e);
    const float r = e * WF_LOG10_2_HI + ((e * WF_LOG10_2_LO + log_m * WF_LOG10E_LO) + log_m * WF_LOG10E_HI);
    return inside ? r : WF_LOG_SPECIALS(x);
}

/* log(1 + x): u = 1 + x rounds, and log(u) * x / (u - 1) corrects for it to first order. */
WM_INLINE float wide_log1pf(float x) {
    const int inside = x > -1.0f && x < INFINITY;
    const float r = wf_log1p(inside ? x : 0.0f);
    return inside ? r : WF_LOG_SPECIALS(x + 1.0f);
}

/* ------------------------------------------------------------------ in double
 * The rest evaluate in double, through the float64 functions above: sinh, cosh, asinh, acosh,
 * atanh, and hypot below. */

WM_INLINE float wide_sinhf(float x) {
    const double a = wm_clamp(fabs((double)x), WM_EXP_CLAMP);
    const double e = wd_exp_normal(a);
    const double large = 0.5 * (e - 1.0 / e);
    /* a < 0.25: the series, which has no cancellation (to a^13: < 2^-52 relative) */
    const double a2 = a * a;
    double p = 1.0 / 6227020800;
    p = p * a2 + 1.0 / 39916800;
    p = p * a2 + 1.0 / 362880;
    p = p * a2 + 1.0 / 5040;
    p = p * a2 + 1.0 / 120;
    p = p * a2 + 1.0 / 6;
    const double small = a + a * a2 * p;
    return (float)copysign(a < 0.25 ? small : large, (double)x);
}

WM_INLINE float wide_coshf(float x) {
    const double e = wd_exp_normal(wm_clamp(fabs((double)x), WM_EXP_CLAMP));
    return (float)(0.5 * (e + 1.0 / e));
}

WM_INLINE float wide_asinhf(float x) {
    const double a = fabs((double)x);
    const int finite = a < INFINITY; /* false for inf and NaN, which are their own asinh */
    const double b = finite ? a : 0.0;
    const double r = wd_log1p_finite(b + b * b / (1.0 + sqrt(1.0 + b * b)));
    return finite ? (float)copysign(r, (double)x) : x;
}

WM_INLINE float wide_acoshf(float x) {
    const double y = x;
    const int inside = y >= 1.0 && y < INFINITY;
    const double b = inside ? y : 1.0;
    const double r = wd_log1p_finite((b - 1.0) + sqrt((b - 1.0) * (b + 1.0)));
    return inside ? (float)r : (y == INFINITY ? x : NAN);
}

WM_INLINE float wide_atanhf(float x) {
    const double y = x, a = fabs(y);
    const int inside = a < 1.0;
    const double b = inside ? a : 0.0;
    const double r = copysign(0.5 * wd_log1p_finite(2.0 * b / (1.0 - b)), y);
    const double edge = a == 1.0 ? copysign(INFINITY, y) : NAN;
    return (float)(inside ? r : edge);
}

/* ------------------------------------------------------------------ two arguments */

/* hypot in double, the others in float. */

WM_INLINE float wide_atan2f(float y, float x) {
    const int both_inf = isinf(y) && isinf(x);
    /* y == 0: the angle is 0 or pi whatever x (0 / 0 would be NaN); both infinite: pi/4 apart */
    const float q = y == 0.0f ? 0.0f : both_inf ? 1.0f : fabsf(y) / fabsf(x);
    const float angle = wf_atan_nonneg(q);
    const int negative_x = (wf_bits(x) >> 31) != 0; /* -0 too; signbit() stops GCC vectorizing */
    /* pi - angle, with its exact cases rounded once: pi - pi/2 from the already rounded pi/2
       would be an ULP low (atan2(1, -0)), and 3pi/4 for equal magnitudes */
    const float supplement = q == INFINITY ? WF_PI_2_HI : q == 1.0f ? WF_3PI_4 : (WF_PI_HI - angle) + WF_PI_LO;
    const float r = copysignf(negative_x ? supplement : angle, y);
    return (isnan(y) || isnan(x)) ? y + x : r;
}

WM_INLINE float wide_hypotf(float a, float b) {
    const double x = a, y = b;
    const double r = sqrt(x * x + y * y); /* cannot overflow in double */
    return (isinf(x) || isinf(y)) ? INFINITY : (float)r; /* inf wins over NaN, as C's hypot */
}

/* log(e^a + e^b) = max + log1p(e^-|a - b|); equal infinities give themselves. */
WM_INLINE float wide_logaddexpf(float a, float b) {
    const float m = a > b ? a : b, d = fabsf(a - b);
    const float r = m + wf_log1p(wf_exp(-d));
    return (isinf(a) && a == b) ? a : (isnan(d) ? a + b : r);
}

/* log2(2^a + 2^b) = max + log1p(2^-|a - b|) log2(e). */
WM_INLINE float wide_logaddexp2f(float a, float b) {
    const float m = a > b ? a : b, d = fabsf(a - b);
    const float l = wf_log1p(wide_exp2f(-d));
    const float r = m + (l * WF_LOG2E_HI + l * WF_LOG2E_LO);
    return (isinf(a) && a == b) ? a : (isnan(d) ? a + b : r);
}

/* PyTorch's softplus: x where x * beta > threshold, else log1p(e^z) / beta with z = x * beta,
   evaluated as (max(z, 0) + log1p(e^-|z|)) / beta, which cannot overflow whatever the threshold. */
WM_INLINE float wide_softplusf(float x, float beta, float threshold) {
    const float z = x * beta;
    const float r = ((z > 0.0f ? z : 0.0f) + wf_log1p(wf_exp(-fabsf(z)))) / beta;
    return z > threshold ? x : r;
}

#endif /* TT_KERNELS_WIDE_MATH_H */
