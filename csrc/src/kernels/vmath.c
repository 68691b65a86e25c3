/*
 * vmath.c: float32 exp, log, tanh, sigmoid, erf, gelu (erf and tanh forms) and silu over arrays.
 *
 * Each function exists twice with the same algorithm and the same polynomial coefficients: a
 * generic version in plain C (one element at a time, branch-free selects so -O3 may vectorize it)
 * and an AVX2+FMA version (8 lanes, compiled with __attribute__((target("avx2,fma"))) so the rest
 * of the library keeps the baseline ISA). Every function and softmax also have an AVX-512F version
 * (16 lanes, same algorithm, bit-identical to AVX2). The public tt_v*_f32 functions pick one at run time: the
 * widest the CPU has, unless the environment variable TT_GENERIC_KERNELS is "1" (read once, on
 * first use) or tt_vmath_set_kernel names one. float64 stays on libm (elementwise.c).
 *
 * Algorithms (coefficients fitted by weighted least squares driven to equal ripple, Lawson's
 * method, in relative error against mpmath; see docs/performance_vmath.md):
 *   exp     n = round(x log2 e), r = x - n ln2 (ln2 in two parts, Cody-Waite), e^r = 1 + r +
 *           r^2 P4(r), times 2^n built in two halves from exponent bits so that results down to
 *           the denormals and up to FLT_MAX round once. x is clamped to [-104, 89] (beyond: 0 / inf).
 *   log     x = 2^e m with m in [sqrt(1/2), sqrt 2) (denormals scaled by 2^23 first), f = m - 1,
 *           log(1 + f) = f - f^2/2 + f^3 P8(f), plus e ln2 in two parts.
 *   tanh    |x| < 0.625: x + x^3 P5(x^2); otherwise sign(x) (1 - 2 / (e^{2|x|} + 1)).
 *   sigmoid e = e^{-|x|}; 1 / (1 + e) for x >= 0, e / (1 + e) below (no overflow, exact tails).
 *   silu    x * sigmoid(x).
 *   erf     |x| < 0.875: x + x Q6(x^2); otherwise 1 - erfc(|x|) with the sign of x, where
 *           erfc(z) = e^{-z^2} (1/z) G(1/z) and G is a degree-9 polynomial on two intervals of
 *           1/z; z^2 is carried as hi + lo (exact, FMA or double), so erfc keeps its relative
 *           accuracy far into the tail.
 *   gelu    0.5 x (1 + erf(x/sqrt 2)), written as 0.5 x erfc(|x|/sqrt 2) for x <= -0.875 sqrt 2
 *           and x (1 - 0.5 erfc(x/sqrt 2)) above +0.875 sqrt 2, so the negative tail is accurate.
 *   gelu_tanh  0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3); 2u and its
 *           range reduction are computed in double (the argument of the exponential is large and
 *           float would lose its low bits), the polynomial in float.
 * Special values follow the formulas' limits as PyTorch's float code does: NaN in gives NaN out,
 * exp(+-inf) = inf / 0, log(0) = -inf, log(x < 0) = NaN, tanh/erf(+-inf) = +-1,
 * sigmoid(+-inf) = 1 / 0, gelu(-inf) = silu(-inf) = gelu_tanh(-inf) = NaN (-inf * 0).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tt/tt.h"
#include "tt/kernels/vmath.h"
#include "vmath.h"
#include "cpu_features.h"

#if TT_HAVE_X86
#include <immintrin.h>
#endif

/* ------------------------------------------------------------------ constants */

#define LOG2E_F 1.44269504088896341f
#define LN2_HI_F 0.693359375f                 /* 9 significant bits: n * LN2_HI is exact */
#define LN2_LO_F (-2.12194440e-4f)            /* ln 2 - LN2_HI */
#define ROUND_MAGIC_F 12582912.0f             /* 1.5 * 2^23: adding it rounds to an integer */
#define EXP_LO_F (-104.0f)
#define EXP_HI_F 89.0f
/* Results that may end in the denormals are computed times 2^64 (exponent shift) and scaled back
   by the last multiplication, so that they are rounded once, not at every step. */
#define SHIFT 64
#define TWO_M64 0x1p-64f
#define EXP_LO_SHIFTED_F (-148.0f)             /* e^-148 2^64 is still a float (n + 64 >= -150) */

/* e^r = 1 + r + r^2 (E0 + E1 r + ... + E4 r^4) on |r| <= ln2 / 2 (relative error 3.1e-9) */
#define E0 0.4999999344767217f
#define E1 0.1666652063400662f
#define E2 0.041668388084216454f
#define E3 0.008368716347601949f
#define E4 0.0013814593636833072f

/* log(1 + f) = f - f^2 / 2 + f^3 (L0 + ... + L8 f^8), f in [sqrt(1/2) - 1, sqrt 2 - 1] (7.5e-10) */
#define L0 0.33333312598162196f
#define L1 (-0.25000009614521945f)
#define L2 0.20002119010535593f
#define L3 (-0.16667995251436366f)
#define L4 0.14219545449192308f
#define L5 (-0.1240559561971962f)
#define L6 0.11888216757111379f
#define L7 (-0.11675632293245726f)
#define L8 0.06746499540351752f
#define SQRT2_F 1.41421356237309505f

/* tanh(x) = x + x^3 (T0 + T1 s + ... + T5 s^5), s = x^2, |x| < 0.625 (1.6e-10) */
#define TANH_SMALL_F 0.625f
#define T0 (-0.333333308023294f)
#define T1 0.13333205995110525f
#define T2 (-0.0539467615797651f)
#define T3 0.021700695839685227f
#define T4 (-0.008177381335590204f)
#define T5 0.0021429473318043597f
#define TANH_CLAMP_F 9.5f                     /* tanh(9.5) rounds to 1 */

/* erf(x) = x + x (Q0 + Q1 s + ... + Q6 s^6), s = x^2, |x| < 0.875 (2.0e-10) */
#define ERF_SMALL_F 0.875f
#define Q0 0.12837916686940587f
#define Q1 (-0.37612636065781224f)
#define Q2 0.11283733002378253f
#define Q3 (-0.026861584667624408f)
#define Q4 0.005206747306056867f
#define Q5 (-0.0008211102232047834f)
#define Q6 8.675383363396031e-05f
#define ERFC_CLAMP_F 11.0f                    /* erfc(11) = 1.4e-54: 0 in float */
#define ERF_ONE_F 4.0f                        /* erf(z >= 4) rounds to 1 (erfc(4) = 1.5e-8 < 2^-25); clamping
                                                 there also keeps erfc out of the (slow) denormals */
#define FRAC_1_SQRT2_F 0.70710678118654752f

/* z e^{z^2} erfc(z) = G(u), t = 1/z, u = t - center: near (t in [0.4, 1.15], center 0.775,
   3.4e-9) and far (t in [0.09, 0.4], center 0.245, 1.4e-11) */
static const float ERFC_NEAR[10] = {
    0.46396527181213093f, -0.16804112123127574f, 0.022185844752968188f, 0.03547730357781645f,
    -0.045892575923643035f, 0.03495612182932355f, -0.018460892306152155f, 0.002969937807587083f,
    0.012787185373827732f, -0.016433929572807565f};
static const float ERFC_FAR[10] = {
    0.5485908430438746f, -0.11775259372447983f, -0.17108274043851937f, 0.2200057813287282f,
    -0.02111723988557596f, -0.28520152621582173f, 0.4146365297126558f, -0.06313430022235415f,
    -0.8117994247092089f, 1.3361882957810194f};
#define ERFC_SPLIT_T 0.4f
#define ERFC_NEAR_C 0.775f
#define ERFC_FAR_C 0.245f

/* gelu_tanh: 2u = x (K1 + K2 x^2) */
#define GT_K1 1.5957691216057308            /* 2 sqrt(2/pi) */
#define GT_K2 0.071354816272600249          /* 2 sqrt(2/pi) 0.044715 */
#define LOG2E_D 1.4426950408889634
#define LN2_D 0.6931471805599453

/* ------------------------------------------------------------------ dispatch */

/* The path in use: VM_AUTO until the first call (then what the CPU and TT_GENERIC_KERNELS allow),
   or what tt_vmath_set_kernel asked for. Relaxed atomics: the value is a plain choice read on every
   call; nothing else is published through it. */
enum { VM_AUTO = -1, VM_GENERIC = 0, VM_AVX2 = 1, VM_AVX512 = 2 };
static _Atomic int vmath_path = VM_AUTO;

static int vmath_detect(void) {
    if (tt_cpu_use_avx512f() && tt_cpu_use_avx2_fma()) {
        return VM_AVX512;
    }
    return tt_cpu_use_avx2_fma() ? VM_AVX2 : VM_GENERIC;
}

static int vmath_current(void) {
    int path = atomic_load_explicit(&vmath_path, memory_order_relaxed);
    if (path == VM_AUTO) {
        path = vmath_detect();
        atomic_store_explicit(&vmath_path, path, memory_order_relaxed);
    }
    return path;
}

int tt_vmath_uses_avx2(void) { return vmath_current() >= VM_AVX2; }

static const char *const VMATH_NAMES[] = {"generic", "avx2", "avx512"};

const char *tt_vmath_kernel_name(void) { return VMATH_NAMES[vmath_current()]; }

tt_status tt_vmath_set_kernel(const char *name) {
    if (name == NULL || name[0] == '\0') {
        atomic_store_explicit(&vmath_path, vmath_detect(), memory_order_relaxed);
        return TT_OK;
    }
    for (int path = VM_GENERIC; path <= VM_AVX512; path++) {
        if (strcmp(name, VMATH_NAMES[path]) == 0) {
            if (path > vmath_detect()) {
                return TT_ERR_UNSUPPORTED_DTYPE;   /* this CPU (or TT_GENERIC_KERNELS) rules it out */
            }
            atomic_store_explicit(&vmath_path, path, memory_order_relaxed);
            return TT_OK;
        }
    }
    return TT_ERR_INVALID_ARG;
}

/* ------------------------------------------------------------------ generic (plain C) */

/* The selects below compare floats; under the default -ftrapping-math GCC keeps them as branches
   and the loops stay scalar. Values are the same either way (no code here reads FP flags). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")
#endif

static inline float as_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t as_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* (1 + r + r^2 P(r)) 2^n, n in [-150, 128]: 2^n is applied as two normal halves. */
static inline float g_scale_poly(float r, int32_t n) {
    float p = E4;
    p = p * r + E3;
    p = p * r + E2;
    p = p * r + E1;
    p = p * r + E0;
    p = 1.0f + (r + r * r * p);
    int32_t h = n / 2;
    float s1 = as_float((uint32_t)(h + 127) << 23);
    float s2 = as_float((uint32_t)(n - h + 127) << 23);
    return p * s1 * s2;
}

/* e^x for x in [EXP_LO_F, EXP_HI_F] (not NaN). */
static inline float g_exp_core_shift(float x, int32_t shift) {
    float t = x * LOG2E_F + ROUND_MAGIC_F;
    float n = t - ROUND_MAGIC_F;
    int32_t ni = (int32_t)(as_bits(t) - as_bits(ROUND_MAGIC_F));
    float r = x - n * LN2_HI_F;
    r = r - n * LN2_LO_F;
    return g_scale_poly(r, ni + shift);
}

static inline float g_exp_core(float x) { return g_exp_core_shift(x, 0); }

static inline float g_exp(float x) {
    int nan = x != x;
    float c = x < EXP_LO_F ? EXP_LO_F : x > EXP_HI_F ? EXP_HI_F : x;
    float y = g_exp_core(nan ? 0.0f : c);
    return nan ? x + x : y;
}

static inline float g_log(float x) {
    int sub = x < 1.17549435e-38f;            /* denormal, zero or negative: scale (sorted below) */
    float xs = sub ? x * 8388608.0f : x;
    uint32_t u = as_bits(xs);
    int32_t e = (int32_t)((u >> 23) & 0xffu) - 127 - (sub ? 23 : 0);
    float m = as_float((u & 0x007fffffu) | 0x3f800000u);
    int big = m > SQRT2_F;
    m = big ? m * 0.5f : m;
    e += big;
    float f = m - 1.0f, fe = (float)e, f2 = f * f;
    float p = L8;
    p = p * f + L7;
    p = p * f + L6;
    p = p * f + L5;
    p = p * f + L4;
    p = p * f + L3;
    p = p * f + L2;
    p = p * f + L1;
    p = p * f + L0;
    float y = f * f2 * p + fe * LN2_LO_F;
    y = y - 0.5f * f2;
    float r = (f + y) + fe * LN2_HI_F;
    r = x == 0.0f ? -INFINITY : r;
    r = x < 0.0f ? NAN : r;
    r = x == INFINITY ? x : r;
    return x != x ? x + x : r;
}

static inline float g_tanh(float x) {
    float a = fabsf(x), s = x * x;
    float p = T5;
    p = p * s + T4;
    p = p * s + T3;
    p = p * s + T2;
    p = p * s + T1;
    p = p * s + T0;
    float small = x + x * s * p;
    float a2 = a > TANH_CLAMP_F ? 2.0f * TANH_CLAMP_F : 2.0f * a;
    float big = copysignf(1.0f - 2.0f / (g_exp(a2) + 1.0f), x);
    return a < TANH_SMALL_F ? small : big;
}

static inline float g_sigmoid(float x) {
    float e = g_exp(-fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

/* x e / (1 + e) below zero, with e = e^x carried as e 2^64 until the last multiplication. */
static inline float g_silu(float x) {
    float a = fabsf(x);
    float es = g_exp_core_shift(a > -EXP_LO_SHIFTED_F ? EXP_LO_SHIFTED_F : -a, SHIFT);
    es = x != x ? 0.0f : es;
    float d = 1.0f + es * TWO_M64;
    float r = x >= 0.0f ? x / d : (x * es / d) * TWO_M64;
    r = x < EXP_LO_SHIFTED_F ? x * 0.0f : r;           /* underflows (and -inf * 0 = NaN) */
    return x != x ? x + x : r;
}

static inline float g_erf_small(float x) {
    float s = x * x;
    float p = Q6;
    p = p * s + Q5;
    p = p * s + Q4;
    p = p * s + Q3;
    p = p * s + Q2;
    p = p * s + Q1;
    p = p * s + Q0;
    return x + x * p;
}

/* z erfc(z) 2^64 for z = |argument| >= ERF_SMALL_F, given z^2 = hi + lo exactly (z clamped by
   the caller to at most ERFC_CLAMP_F; hi, lo from the clamped value); *t_out = 1/z. */
static inline float g_erfc_tail(float z, float hi, float lo, float *t_out) {
    float t = 1.0f / z;
    int far = t < ERFC_SPLIT_T;
    const float *c = far ? ERFC_FAR : ERFC_NEAR;
    float u = t - (far ? ERFC_FAR_C : ERFC_NEAR_C);
    float g = c[9];
    for (int k = 8; k >= 0; k--) {
        g = g * u + c[k];
    }
    float e = g_exp_core_shift(-hi < EXP_LO_SHIFTED_F ? EXP_LO_SHIFTED_F : -hi, SHIFT);
    *t_out = t;
    return e * (1.0f - lo) * g;
}

static inline float g_erf(float x) {
    float a = fabsf(x);
    float z = a > ERF_ONE_F ? ERF_ONE_F : a < ERF_SMALL_F ? ERF_SMALL_F : a;
    float hi = z * z, lo = (float)((double)z * z - hi);
    float t;
    float zc = g_erfc_tail(z, hi, lo, &t);
    float big = copysignf(1.0f - t * zc * TWO_M64, x);
    return a < ERF_SMALL_F ? g_erf_small(x) : big;
}

static inline float g_gelu(float x) {
    float z0 = x * FRAC_1_SQRT2_F;
    if (!(fabsf(z0) >= ERF_SMALL_F)) {                  /* near 0, and NaN */
        return 0.5f * x * (1.0f + g_erf_small(z0));
    }
    if (x > ERF_ONE_F * SQRT2_F) {
        return x;                                       /* 0.5 x erfc(z) < x 2^-25 */
    }
    if (x < -ERFC_CLAMP_F * SQRT2_F) {
        return x * 0.0f;                                /* underflows (and -inf * 0 = NaN) */
    }
    float xc = fabsf(x);
    float sq = xc * xc, hi = 0.5f * sq, lo = (float)(0.5 * ((double)xc * xc - sq));
    float t;   /* 0.5 x erfc(z) = (sqrt 2 / 2) z erfc(z) with the sign of x, since x = z sqrt 2 */
    float zc = g_erfc_tail(xc * FRAC_1_SQRT2_F, hi, lo, &t) * FRAC_1_SQRT2_F;
    return x > 0.0f ? x - zc * TWO_M64 : -zc * TWO_M64;
}

static inline float g_gelu_tanh(float x) {
    double xd = x;
    double v = xd * (GT_K1 + GT_K2 * xd * xd);
    double av = v != v ? 0.0 : -fabs(v);
    av = av < (double)EXP_LO_SHIFTED_F ? (double)EXP_LO_SHIFTED_F : av;
    double nd = nearbyint(av * LOG2E_D);
    float es = g_scale_poly((float)(av - nd * LN2_D), (int32_t)nd + SHIFT);
    float d = 1.0f + es * TWO_M64;
    float r = v >= 0.0 ? x / d : (x * es / d) * TWO_M64;
    return v < (double)EXP_LO_SHIFTED_F ? x * 0.0f : r;    /* underflows (and -inf * 0 = NaN) */
}

#define DEFINE_GENERIC(NAME, FN)                                          \
    static void NAME##_generic(const float *x, float *y, int64_t n) {     \
        for (int64_t i = 0; i < n; i++) {                                 \
            y[i] = FN(x[i]);                                              \
        }                                                                 \
    }
DEFINE_GENERIC(exp, g_exp)
DEFINE_GENERIC(log, g_log)
DEFINE_GENERIC(tanh, g_tanh)
DEFINE_GENERIC(sigmoid, g_sigmoid)
DEFINE_GENERIC(silu, g_silu)
DEFINE_GENERIC(erf, g_erf)
DEFINE_GENERIC(gelu, g_gelu)
DEFINE_GENERIC(gelu_tanh, g_gelu_tanh)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* ------------------------------------------------------------------ AVX2 + FMA */
#if TT_HAVE_X86

#define AVX2 __attribute__((target("avx2,fma")))
#define V1(c) _mm256_set1_ps(c)
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)

AVX2 static inline __m256 v_abs(__m256 x) { return _mm256_andnot_ps(V1(-0.0f), x); }
AVX2 static inline __m256 v_copysign(__m256 mag, __m256 sign) {
    return _mm256_or_ps(_mm256_andnot_ps(V1(-0.0f), mag), _mm256_and_ps(V1(-0.0f), sign));
}
AVX2 static inline __m256 v_isnan(__m256 x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }

AVX2 static inline __m256 v_scale_poly(__m256 r, __m256i n) {
    __m256 p = FMA(V1(E4), r, V1(E3));
    p = FMA(p, r, V1(E2));
    p = FMA(p, r, V1(E1));
    p = FMA(p, r, V1(E0));
    p = _mm256_add_ps(V1(1.0f), FMA(_mm256_mul_ps(r, r), p, r));
    __m256i h = _mm256_srai_epi32(n, 1);
    __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(n, h), bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* e^x 2^shift for x already clamped to [EXP_LO_F, EXP_HI_F] and free of NaN. */
AVX2 static inline __m256 v_exp_core_shift(__m256 x, int shift) {
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, V1(LOG2E_F)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = FMA(n, V1(-LN2_HI_F), x);
    r = FMA(n, V1(-LN2_LO_F), r);
    return v_scale_poly(r, _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(shift)));
}

AVX2 static inline __m256 v_exp_core(__m256 x) { return v_exp_core_shift(x, 0); }

/* v_exp_core of x in [EXP_LO_F, 0] (softmax's x - max), the same bits with less work when no lane
   can end in the denormals: then 2^n is one normal float and p 2^n one multiplication, which
   rounds exactly where v_scale_poly's two halves round (nowhere, or once for a result below
   FLT_MIN when n = -126). Below n = -126 the vector takes v_scale_poly. */
AVX2 static inline __m256 v_exp_nonpositive(__m256 x) {
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, V1(LOG2E_F)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = FMA(n, V1(-LN2_HI_F), x);
    r = FMA(n, V1(-LN2_LO_F), r);
    __m256i ni = _mm256_cvtps_epi32(n);
    if (_mm256_movemask_ps(_mm256_cmp_ps(n, V1(-126.0f), _CMP_LT_OQ))) {
        return v_scale_poly(r, ni);
    }
    __m256 p = FMA(V1(E4), r, V1(E3));
    p = FMA(p, r, V1(E2));
    p = FMA(p, r, V1(E1));
    p = FMA(p, r, V1(E0));
    p = _mm256_add_ps(V1(1.0f), FMA(_mm256_mul_ps(r, r), p, r));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23)));
}

AVX2 static inline __m256 v_exp(__m256 x) {
    __m256 nan = v_isnan(x);
    __m256 c = _mm256_min_ps(_mm256_max_ps(x, V1(EXP_LO_F)), V1(EXP_HI_F));  /* NaN -> EXP_LO_F, blended back below */
    return _mm256_blendv_ps(v_exp_core(c), _mm256_add_ps(x, x), nan);
}

AVX2 static inline __m256 v_log(__m256 x) {
    __m256 sub = _mm256_cmp_ps(x, V1(1.17549435e-38f), _CMP_LT_OQ);
    __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, V1(8388608.0f)), sub);
    __m256i u = _mm256_castps_si256(xs);
    __m256i e = _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 23), _mm256_set1_epi32(0xff)),
                                 _mm256_set1_epi32(127));
    e = _mm256_sub_epi32(e, _mm256_and_si256(_mm256_castps_si256(sub), _mm256_set1_epi32(23)));
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32(0x007fffff)),
                                                   _mm256_set1_epi32(0x3f800000)));
    __m256 big = _mm256_cmp_ps(m, V1(SQRT2_F), _CMP_GT_OQ);
    m = _mm256_blendv_ps(m, _mm256_mul_ps(m, V1(0.5f)), big);
    e = _mm256_sub_epi32(e, _mm256_castps_si256(big));             /* big lanes are -1 */
    __m256 f = _mm256_sub_ps(m, V1(1.0f)), fe = _mm256_cvtepi32_ps(e), f2 = _mm256_mul_ps(f, f);
    __m256 p = FMA(V1(L8), f, V1(L7));
    p = FMA(p, f, V1(L6));
    p = FMA(p, f, V1(L5));
    p = FMA(p, f, V1(L4));
    p = FMA(p, f, V1(L3));
    p = FMA(p, f, V1(L2));
    p = FMA(p, f, V1(L1));
    p = FMA(p, f, V1(L0));
    __m256 y = FMA(_mm256_mul_ps(f, f2), p, _mm256_mul_ps(fe, V1(LN2_LO_F)));
    y = FMA(V1(-0.5f), f2, y);
    __m256 r = FMA(fe, V1(LN2_HI_F), _mm256_add_ps(f, y));
    r = _mm256_blendv_ps(r, V1(-INFINITY), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
    r = _mm256_blendv_ps(r, V1(NAN), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
    r = _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, V1(INFINITY), _CMP_EQ_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(x, x), v_isnan(x));
}

AVX2 static inline __m256 v_tanh(__m256 x) {
    __m256 a = v_abs(x), s = _mm256_mul_ps(x, x);
    __m256 p = FMA(V1(T5), s, V1(T4));
    p = FMA(p, s, V1(T3));
    p = FMA(p, s, V1(T2));
    p = FMA(p, s, V1(T1));
    p = FMA(p, s, V1(T0));
    __m256 small = FMA(_mm256_mul_ps(x, s), p, x);
    __m256 a2 = _mm256_mul_ps(V1(2.0f), _mm256_min_ps(a, V1(TANH_CLAMP_F)));  /* NaN -> clamp */
    __m256 q = _mm256_div_ps(V1(2.0f), _mm256_add_ps(v_exp_core(a2), V1(1.0f)));
    __m256 big = v_copysign(_mm256_sub_ps(V1(1.0f), q), x);
    __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, V1(TANH_SMALL_F), _CMP_LT_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(x, x), v_isnan(x));
}

AVX2 static inline __m256 v_sigmoid(__m256 x) {
    __m256 e = v_exp(_mm256_or_ps(x, V1(-0.0f)));                  /* e^{-|x|} */
    __m256 num = _mm256_blendv_ps(e, V1(1.0f), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
    return _mm256_div_ps(num, _mm256_add_ps(V1(1.0f), e));
}

AVX2 static inline __m256 v_erf_small(__m256 x) {
    __m256 s = _mm256_mul_ps(x, x);
    __m256 p = FMA(V1(Q6), s, V1(Q5));
    p = FMA(p, s, V1(Q4));
    p = FMA(p, s, V1(Q3));
    p = FMA(p, s, V1(Q2));
    p = FMA(p, s, V1(Q1));
    p = FMA(p, s, V1(Q0));
    return FMA(x, p, x);
}

/* z erfc(z) 2^64, z in [ERF_SMALL_F, ERFC_CLAMP_F], z^2 = hi + lo; *t_out = 1/z. */
AVX2 static inline __m256 v_erfc_tail(__m256 z, __m256 hi, __m256 lo, __m256 *t_out) {
    __m256 t = _mm256_div_ps(V1(1.0f), z);
    __m256 far = _mm256_cmp_ps(t, V1(ERFC_SPLIT_T), _CMP_LT_OQ);
    __m256 u = _mm256_sub_ps(t, _mm256_blendv_ps(V1(ERFC_NEAR_C), V1(ERFC_FAR_C), far));
    __m256 g = _mm256_blendv_ps(V1(ERFC_NEAR[9]), V1(ERFC_FAR[9]), far);
    for (int k = 8; k >= 0; k--) {
        g = FMA(g, u, _mm256_blendv_ps(V1(ERFC_NEAR[k]), V1(ERFC_FAR[k]), far));
    }
    __m256 e = v_exp_core_shift(_mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), hi), V1(EXP_LO_SHIFTED_F)), SHIFT);
    *t_out = t;
    return _mm256_mul_ps(_mm256_mul_ps(e, _mm256_sub_ps(V1(1.0f), lo)), g);
}

AVX2 static inline __m256 v_erf(__m256 x) {
    __m256 a = v_abs(x);
    __m256 z = _mm256_max_ps(_mm256_min_ps(a, V1(ERF_ONE_F)), V1(ERF_SMALL_F));  /* NaN -> clamp */
    __m256 hi = _mm256_mul_ps(z, z), lo = FMA(z, z, _mm256_sub_ps(_mm256_setzero_ps(), hi));
    __m256 t;
    __m256 zc = v_erfc_tail(z, hi, lo, &t);
    __m256 big = v_copysign(FMA(_mm256_mul_ps(t, zc), V1(-TWO_M64), V1(1.0f)), x);
    __m256 r = _mm256_blendv_ps(big, v_erf_small(x), _mm256_cmp_ps(a, V1(ERF_SMALL_F), _CMP_LT_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(x, x), v_isnan(x));
}

AVX2 static inline __m256 v_gelu(__m256 x) {
    __m256 z0 = _mm256_mul_ps(x, V1(FRAC_1_SQRT2_F));
    __m256 xc = _mm256_max_ps(_mm256_min_ps(v_abs(x), V1(ERFC_CLAMP_F * SQRT2_F)), V1(ERF_SMALL_F * SQRT2_F));
    __m256 sq = _mm256_mul_ps(xc, xc), lo = FMA(xc, xc, _mm256_sub_ps(_mm256_setzero_ps(), sq));
    __m256 t;   /* 0.5 x erfc(z) = (sqrt 2 / 2) z erfc(z) with the sign of x, since x = z sqrt 2 */
    __m256 zc = _mm256_mul_ps(v_erfc_tail(_mm256_mul_ps(xc, V1(FRAC_1_SQRT2_F)), _mm256_mul_ps(sq, V1(0.5f)),
                                          _mm256_mul_ps(lo, V1(0.5f)), &t), V1(FRAC_1_SQRT2_F));
    __m256 pos = FMA(zc, V1(-TWO_M64), x);
    __m256 neg = _mm256_mul_ps(zc, V1(-TWO_M64));
    __m256 tail = _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ));
    __m256 under = _mm256_cmp_ps(x, V1(-ERFC_CLAMP_F * SQRT2_F), _CMP_LT_OQ);
    tail = _mm256_blendv_ps(tail, _mm256_mul_ps(x, _mm256_setzero_ps()), under);
    __m256 small = _mm256_mul_ps(_mm256_mul_ps(V1(0.5f), x), _mm256_add_ps(V1(1.0f), v_erf_small(z0)));
    __m256 r = _mm256_blendv_ps(tail, small, _mm256_cmp_ps(v_abs(z0), V1(ERF_SMALL_F), _CMP_LT_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(x, x), v_isnan(x));
}

/* -|2u| reduced in double for 4 lanes: r = v - n ln2 (float) and n (int32). */
AVX2 static inline void v_gelu_tanh_reduce(__m128 x, __m128 *r, __m128i *n, __m128 *v_out) {
    __m256d xd = _mm256_cvtps_pd(x);
    __m256d v = _mm256_mul_pd(xd, _mm256_fmadd_pd(_mm256_set1_pd(GT_K2), _mm256_mul_pd(xd, xd),
                                                  _mm256_set1_pd(GT_K1)));
    __m256d av = _mm256_or_pd(v, _mm256_set1_pd(-0.0));
    av = _mm256_andnot_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q), av);                /* NaN -> 0 */
    av = _mm256_max_pd(av, _mm256_set1_pd((double)EXP_LO_SHIFTED_F));
    __m256d nd = _mm256_round_pd(_mm256_mul_pd(av, _mm256_set1_pd(LOG2E_D)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *r = _mm256_cvtpd_ps(_mm256_fnmadd_pd(nd, _mm256_set1_pd(LN2_D), av));
    *n = _mm256_cvtpd_epi32(nd);
    *v_out = _mm256_cvtpd_ps(v);
}

AVX2 static inline __m256 v_gelu_tanh(__m256 x) {
    __m128 r0, r1, v0, v1;
    __m128i n0, n1;
    v_gelu_tanh_reduce(_mm256_castps256_ps128(x), &r0, &n0, &v0);
    v_gelu_tanh_reduce(_mm256_extractf128_ps(x, 1), &r1, &n1, &v1);
    __m256i n = _mm256_add_epi32(_mm256_set_m128i(n1, n0), _mm256_set1_epi32(SHIFT));
    __m256 es = v_scale_poly(_mm256_set_m128(r1, r0), n);
    __m256 d = FMA(es, V1(TWO_M64), V1(1.0f));
    __m256 pos = _mm256_div_ps(x, d);
    __m256 neg = _mm256_mul_ps(_mm256_div_ps(_mm256_mul_ps(x, es), d), V1(TWO_M64));
    __m256 v = _mm256_set_m128(v1, v0);
    __m256 r = _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ));
    __m256 under = _mm256_cmp_ps(v, V1(EXP_LO_SHIFTED_F), _CMP_LT_OQ);
    return _mm256_blendv_ps(r, _mm256_mul_ps(x, _mm256_setzero_ps()), under);
}

AVX2 static inline __m256 v_silu(__m256 x) {
    __m256 na = _mm256_max_ps(_mm256_or_ps(x, V1(-0.0f)), V1(EXP_LO_SHIFTED_F));  /* NaN -> bound */
    __m256 es = v_exp_core_shift(na, SHIFT);
    __m256 d = FMA(es, V1(TWO_M64), V1(1.0f));
    __m256 pos = _mm256_div_ps(x, d);
    __m256 neg = _mm256_mul_ps(_mm256_div_ps(_mm256_mul_ps(x, es), d), V1(TWO_M64));
    __m256 r = _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
    __m256 under = _mm256_cmp_ps(x, V1(EXP_LO_SHIFTED_F), _CMP_LT_OQ);
    r = _mm256_blendv_ps(r, _mm256_mul_ps(x, _mm256_setzero_ps()), under);
    return _mm256_blendv_ps(r, _mm256_add_ps(x, x), v_isnan(x));
}

/* Full vectors straight from memory; the tail (n % 8) through a zero-padded stack buffer. */
#define DEFINE_AVX2(NAME, FN)                                             \
    AVX2 static void NAME##_avx2(const float *x, float *y, int64_t n) {   \
        int64_t i = 0;                                                    \
        for (; i + 8 <= n; i += 8) {                                      \
            _mm256_storeu_ps(y + i, FN(_mm256_loadu_ps(x + i)));          \
        }                                                                 \
        if (i < n) {                                                      \
            float buffer[8] = {0};                                        \
            memcpy(buffer, x + i, (size_t)(n - i) * sizeof(float));       \
            _mm256_storeu_ps(buffer, FN(_mm256_loadu_ps(buffer)));        \
            memcpy(y + i, buffer, (size_t)(n - i) * sizeof(float));       \
        }                                                                 \
    }
DEFINE_AVX2(exp, v_exp)
DEFINE_AVX2(log, v_log)
DEFINE_AVX2(tanh, v_tanh)
DEFINE_AVX2(sigmoid, v_sigmoid)
DEFINE_AVX2(silu, v_silu)
DEFINE_AVX2(erf, v_erf)
DEFINE_AVX2(gelu, v_gelu)
DEFINE_AVX2(gelu_tanh, v_gelu_tanh)

/* softmax / log_softmax of one contiguous line, fused: max (NaN tracked apart), e = exp(x - max)
   stored (softmax) and summed in double, then scaled (or x - max - log(sum)). */
AVX2 static void softmax_avx2(const float *x, float *o, int64_t L, int log_softmax) {
    __m256 vmax = V1(-INFINITY), nan = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= L; k += 8) {
        __m256 v = _mm256_loadu_ps(x + k);
        _mm_prefetch((const char *)(x + k) + 512, _MM_HINT_T0);   /* runs on into the next line */
        vmax = _mm256_max_ps(vmax, v);
        nan = _mm256_or_ps(nan, v_isnan(v));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, vmax);
    float m = -INFINITY;
    for (int j = 0; j < 8; j++) {
        m = lanes[j] > m ? lanes[j] : m;
    }
    for (; k < L; k++) {
        m = (x[k] > m || x[k] != x[k]) ? x[k] : m;
    }
    m = _mm256_movemask_ps(nan) ? NAN : m;
    const __m256 mv = V1(m);
    /* With a finite max every x - max is <= 0 (or -inf) and not NaN, and v_exp of it is v_exp_core
       of it clamped below: the same bits without v_exp's NaN test and blend and its upper clamp,
       a sixth of the line's work. An infinite or NaN max (x - max may be NaN) takes v_exp. */
    const int finite_max = m > -INFINITY && m < INFINITY;
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (k = 0; k + 8 <= L; k += 8) {
        const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + k), mv);
        __m256 e = finite_max ? v_exp_nonpositive(_mm256_max_ps(d, V1(EXP_LO_F))) : v_exp(d);
        if (!log_softmax) {
            _mm256_storeu_ps(o + k, e);
        }
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double sums[4], total = 0;
    _mm256_storeu_pd(sums, _mm256_add_pd(s0, s1));
    if (k < L) {
        float buffer[8];
        memcpy(buffer, x + k, (size_t)(L - k) * sizeof(float));
        _mm256_storeu_ps(buffer, v_exp(_mm256_sub_ps(_mm256_loadu_ps(buffer), mv)));
        for (int64_t j = 0; j < L - k; j++) {
            total += buffer[j];
            if (!log_softmax) {
                o[k + j] = buffer[j];
            }
        }
    }
    total += (sums[0] + sums[1]) + (sums[2] + sums[3]);
    const __m256 scale = V1(log_softmax ? (float)log(total) : (float)(1.0 / total));
    for (k = 0; k + 8 <= L; k += 8) {
        __m256 r = log_softmax ? _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + k), mv), scale)
                               : _mm256_mul_ps(_mm256_loadu_ps(o + k), scale);
        _mm256_storeu_ps(o + k, r);
    }
    const float scale1 = _mm256_cvtss_f32(scale);
    for (; k < L; k++) {
        o[k] = log_softmax ? (x[k] - m) - scale1 : o[k] * scale1;
    }
}

/* ------------------------------------------------------------------ AVX-512F */
/* Every function again on 16 lanes, the same steps and constants as the AVX2 code, with two
   differences that do not change a bit: 2^n is applied by vscalefps, which multiplies by 2^n with a
   single rounding, exactly what the two-halves product above achieves; and selects are mask
   operations instead of blends. The division stays a true division. So the results are
   bit-identical to AVX2 (tested); the gain is twice the lanes per instruction. */

#define AVX512 __attribute__((target("avx512f,avx2,fma")))
#define W1(c) _mm512_set1_ps(c)
#define WFMA(a, b, c) _mm512_fmadd_ps(a, b, c)

/* Sign-bit logic through the integer forms: the float and/or/andnot intrinsics are AVX512DQ. */
AVX512 static inline __m512 w_or_sign(__m512 x) {       /* -|x| */
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
}
AVX512 static inline __m512 w_copysign(__m512 mag, __m512 sign) {
    const __m512i s = _mm512_set1_epi32(INT32_MIN);
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(s, _mm512_castps_si512(mag)),
                                               _mm512_and_si512(s, _mm512_castps_si512(sign))));
}
AVX512 static inline __mmask16 w_isnan(__m512 x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); }
AVX512 static inline __mmask16 w_lt(__m512 a, __m512 b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }

/* (1 + r + r^2 P(r)) 2^n for an integral float n: vscalefps rounds once, as v_scale_poly does. */
AVX512 static inline __m512 w_scale_poly(__m512 r, __m512 n) {
    __m512 p = WFMA(W1(E4), r, W1(E3));
    p = WFMA(p, r, W1(E2));
    p = WFMA(p, r, W1(E1));
    p = WFMA(p, r, W1(E0));
    p = _mm512_add_ps(W1(1.0f), WFMA(_mm512_mul_ps(r, r), p, r));
    return _mm512_scalef_ps(p, n);
}

/* e^x 2^shift for x clamped to [EXP_LO_F, EXP_HI_F], free of NaN. */
AVX512 static inline __m512 w_exp_core_shift(__m512 x, int shift) {
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, W1(LOG2E_F)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = WFMA(n, W1(-LN2_HI_F), x);
    r = WFMA(n, W1(-LN2_LO_F), r);
    return w_scale_poly(r, _mm512_add_ps(n, W1((float)shift)));
}

AVX512 static inline __m512 w_exp_core(__m512 x) { return w_exp_core_shift(x, 0); }

AVX512 static inline __m512 w_exp(__m512 x) {
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    __m512 c = _mm512_min_ps(_mm512_max_ps(x, W1(EXP_LO_F)), W1(EXP_HI_F));
    return _mm512_mask_add_ps(w_exp_core(c), nan, x, x);
}

AVX512 static inline __m512 w_log(__m512 x) {
    const __m512 zero = _mm512_setzero_ps();
    __mmask16 sub = w_lt(x, W1(1.17549435e-38f));
    __m512 xs = _mm512_mask_mul_ps(x, sub, x, W1(8388608.0f));
    __m512i u = _mm512_castps_si512(xs);
    __m512i e = _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(u, 23), _mm512_set1_epi32(0xff)),
                                 _mm512_set1_epi32(127));
    e = _mm512_mask_sub_epi32(e, sub, e, _mm512_set1_epi32(23));
    __m512 m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(u, _mm512_set1_epi32(0x007fffff)),
                                                   _mm512_set1_epi32(0x3f800000)));
    __mmask16 big = _mm512_cmp_ps_mask(m, W1(SQRT2_F), _CMP_GT_OQ);
    m = _mm512_mask_mul_ps(m, big, m, W1(0.5f));
    e = _mm512_mask_add_epi32(e, big, e, _mm512_set1_epi32(1));
    __m512 f = _mm512_sub_ps(m, W1(1.0f)), fe = _mm512_cvtepi32_ps(e), f2 = _mm512_mul_ps(f, f);
    __m512 p = WFMA(W1(L8), f, W1(L7));
    p = WFMA(p, f, W1(L6));
    p = WFMA(p, f, W1(L5));
    p = WFMA(p, f, W1(L4));
    p = WFMA(p, f, W1(L3));
    p = WFMA(p, f, W1(L2));
    p = WFMA(p, f, W1(L1));
    p = WFMA(p, f, W1(L0));
    __m512 y = WFMA(_mm512_mul_ps(f, f2), p, _mm512_mul_ps(fe, W1(LN2_LO_F)));
    y = WFMA(W1(-0.5f), f2, y);
    __m512 r = WFMA(fe, W1(LN2_HI_F), _mm512_add_ps(f, y));
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, zero, _CMP_EQ_OQ), W1(-INFINITY));
    r = _mm512_mask_mov_ps(r, w_lt(x, zero), W1(NAN));
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, W1(INFINITY), _CMP_EQ_OQ), x);
    return _mm512_mask_add_ps(r, w_isnan(x), x, x);
}

AVX512 static inline __m512 w_tanh(__m512 x) {
    __m512 a = _mm512_abs_ps(x), s = _mm512_mul_ps(x, x);
    __m512 p = WFMA(W1(T5), s, W1(T4));
    p = WFMA(p, s, W1(T3));
    p = WFMA(p, s, W1(T2));
    p = WFMA(p, s, W1(T1));
    p = WFMA(p, s, W1(T0));
    __m512 small = WFMA(_mm512_mul_ps(x, s), p, x);
    __m512 a2 = _mm512_mul_ps(W1(2.0f), _mm512_min_ps(a, W1(TANH_CLAMP_F)));  /* NaN -> clamp */
    __m512 q = _mm512_div_ps(W1(2.0f), _mm512_add_ps(w_exp_core(a2), W1(1.0f)));
    __m512 big = w_copysign(_mm512_sub_ps(W1(1.0f), q), x);
    __m512 r = _mm512_mask_blend_ps(w_lt(a, W1(TANH_SMALL_F)), big, small);
    return _mm512_mask_add_ps(r, w_isnan(x), x, x);
}

AVX512 static inline __m512 w_sigmoid(__m512 x) {
    __m512 e = w_exp(w_or_sign(x));                                 /* e^{-|x|} */
    __m512 num = _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), W1(1.0f));
    return _mm512_div_ps(num, _mm512_add_ps(W1(1.0f), e));
}

/* x >= 0: x / d; below: x e / d, with e = e^{-|x|} carried as es = e 2^64 and d = 1 + e. */
AVX512 static inline __m512 w_x_over_1_plus_e(__m512 x, __m512 es, __mmask16 positive) {
    __m512 d = WFMA(es, W1(TWO_M64), W1(1.0f));
    __m512 pos = _mm512_div_ps(x, d);
    __m512 neg = _mm512_mul_ps(_mm512_div_ps(_mm512_mul_ps(x, es), d), W1(TWO_M64));
    return _mm512_mask_blend_ps(positive, neg, pos);
}

AVX512 static inline __m512 w_silu(__m512 x) {
    __m512 na = _mm512_max_ps(w_or_sign(x), W1(EXP_LO_SHIFTED_F));   /* NaN -> bound */
    __m512 es = w_exp_core_shift(na, SHIFT);
    __m512 r = w_x_over_1_plus_e(x, es, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ));
    r = _mm512_mask_mul_ps(r, w_lt(x, W1(EXP_LO_SHIFTED_F)), x, _mm512_setzero_ps());
    return _mm512_mask_add_ps(r, w_isnan(x), x, x);
}

AVX512 static inline __m512 w_erf_small(__m512 x) {
    __m512 s = _mm512_mul_ps(x, x);
    __m512 p = WFMA(W1(Q6), s, W1(Q5));
    p = WFMA(p, s, W1(Q4));
    p = WFMA(p, s, W1(Q3));
    p = WFMA(p, s, W1(Q2));
    p = WFMA(p, s, W1(Q1));
    p = WFMA(p, s, W1(Q0));
    return WFMA(x, p, x);
}

/* z erfc(z) 2^64, z in [ERF_SMALL_F, ERFC_CLAMP_F], z^2 = hi + lo; *t_out = 1/z. */
AVX512 static inline __m512 w_erfc_tail(__m512 z, __m512 hi, __m512 lo, __m512 *t_out) {
    __m512 t = _mm512_div_ps(W1(1.0f), z);
    __mmask16 far = w_lt(t, W1(ERFC_SPLIT_T));
    __m512 u = _mm512_sub_ps(t, _mm512_mask_blend_ps(far, W1(ERFC_NEAR_C), W1(ERFC_FAR_C)));
    __m512 g = _mm512_mask_blend_ps(far, W1(ERFC_NEAR[9]), W1(ERFC_FAR[9]));
    for (int k = 8; k >= 0; k--) {
        g = WFMA(g, u, _mm512_mask_blend_ps(far, W1(ERFC_NEAR[k]), W1(ERFC_FAR[k])));
    }
    __m512 e = w_exp_core_shift(_mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), hi), W1(EXP_LO_SHIFTED_F)), SHIFT);
    *t_out = t;
    return _mm512_mul_ps(_mm512_mul_ps(e, _mm512_sub_ps(W1(1.0f), lo)), g);
}

AVX512 static inline __m512 w_erf(__m512 x) {
    __m512 a = _mm512_abs_ps(x);
    __m512 z = _mm512_max_ps(_mm512_min_ps(a, W1(ERF_ONE_F)), W1(ERF_SMALL_F));  /* NaN -> clamp */
    __m512 hi = _mm512_mul_ps(z, z), lo = WFMA(z, z, _mm512_sub_ps(_mm512_setzero_ps(), hi));
    __m512 t;
    __m512 zc = w_erfc_tail(z, hi, lo, &t);
    __m512 big = w_copysign(WFMA(_mm512_mul_ps(t, zc), W1(-TWO_M64), W1(1.0f)), x);
    __m512 r = _mm512_mask_blend_ps(w_lt(a, W1(ERF_SMALL_F)), big, w_erf_small(x));
    return _mm512_mask_add_ps(r, w_isnan(x), x, x);
}

AVX512 static inline __m512 w_gelu(__m512 x) {
    const __m512 zero = _mm512_setzero_ps();
    __m512 z0 = _mm512_mul_ps(x, W1(FRAC_1_SQRT2_F));
    __m512 xc = _mm512_max_ps(_mm512_min_ps(_mm512_abs_ps(x), W1(ERFC_CLAMP_F * SQRT2_F)), W1(ERF_SMALL_F * SQRT2_F));
    __m512 sq = _mm512_mul_ps(xc, xc), lo = WFMA(xc, xc, _mm512_sub_ps(zero, sq));
    __m512 t;   /* 0.5 x erfc(z) = (sqrt 2 / 2) z erfc(z) with the sign of x, since x = z sqrt 2 */
    __m512 zc = _mm512_mul_ps(w_erfc_tail(_mm512_mul_ps(xc, W1(FRAC_1_SQRT2_F)), _mm512_mul_ps(sq, W1(0.5f)),
                                          _mm512_mul_ps(lo, W1(0.5f)), &t), W1(FRAC_1_SQRT2_F));
    __m512 pos = WFMA(zc, W1(-TWO_M64), x);
    __m512 neg = _mm512_mul_ps(zc, W1(-TWO_M64));
    __m512 tail = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ), neg, pos);
    tail = _mm512_mask_mul_ps(tail, w_lt(x, W1(-ERFC_CLAMP_F * SQRT2_F)), x, zero);
    __m512 small = _mm512_mul_ps(_mm512_mul_ps(W1(0.5f), x), _mm512_add_ps(W1(1.0f), w_erf_small(z0)));
    __m512 r = _mm512_mask_blend_ps(w_lt(_mm512_abs_ps(z0), W1(ERF_SMALL_F)), tail, small);
    return _mm512_mask_add_ps(r, w_isnan(x), x, x);
}

/* -|2u| reduced in double for 8 lanes: r = v - n ln2 and n (both as floats), and v. */
AVX512 static inline void w_gelu_tanh_reduce(__m256 x, __m256 *r, __m256 *n, __m256 *v_out) {
    __m512d xd = _mm512_cvtps_pd(x);
    __m512d v = _mm512_mul_pd(xd, _mm512_fmadd_pd(_mm512_set1_pd(GT_K2), _mm512_mul_pd(xd, xd),
                                                  _mm512_set1_pd(GT_K1)));
    __m512d av = _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(v), _mm512_set1_epi64(INT64_MIN)));
    av = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), av);                /* NaN -> 0 */
    av = _mm512_max_pd(av, _mm512_set1_pd((double)EXP_LO_SHIFTED_F));
    __m512d nd = _mm512_roundscale_pd(_mm512_mul_pd(av, _mm512_set1_pd(LOG2E_D)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *r = _mm512_cvtpd_ps(_mm512_fnmadd_pd(nd, _mm512_set1_pd(LN2_D), av));
    *n = _mm512_cvtpd_ps(nd);
    *v_out = _mm512_cvtpd_ps(v);
}

AVX512 static inline __m512 w_join(__m256 low, __m256 high) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(low)),
                                               _mm256_castps_pd(high), 1));
}

AVX512 static inline __m512 w_gelu_tanh(__m512 x) {
    __m256 r0, r1, n0, n1, v0, v1;
    w_gelu_tanh_reduce(_mm512_castps512_ps256(x), &r0, &n0, &v0);
    w_gelu_tanh_reduce(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)), &r1, &n1, &v1);
    __m512 es = w_scale_poly(w_join(r0, r1), _mm512_add_ps(w_join(n0, n1), W1((float)SHIFT)));
    __m512 v = w_join(v0, v1);
    __m512 r = w_x_over_1_plus_e(x, es, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ));
    return _mm512_mask_mul_ps(r, w_lt(v, W1(EXP_LO_SHIFTED_F)), x, _mm512_setzero_ps());
}

/* Full vectors straight from memory; the tail (n % 16) through masked loads and stores, so
   nothing outside [0, n) is touched (the padding lanes compute on zeros). */
#define DEFINE_AVX512(NAME, FN)                                                      \
    AVX512 static void NAME##_avx512(const float *x, float *y, int64_t n) {          \
        int64_t i = 0;                                                               \
        for (; i + 16 <= n; i += 16) {                                               \
            _mm512_storeu_ps(y + i, FN(_mm512_loadu_ps(x + i)));                     \
        }                                                                            \
        if (i < n) {                                                                 \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                         \
            _mm512_mask_storeu_ps(y + i, m, FN(_mm512_maskz_loadu_ps(m, x + i)));    \
        }                                                                            \
    }
DEFINE_AVX512(exp, w_exp)
DEFINE_AVX512(log, w_log)
DEFINE_AVX512(tanh, w_tanh)
DEFINE_AVX512(sigmoid, w_sigmoid)
DEFINE_AVX512(silu, w_silu)
DEFINE_AVX512(erf, w_erf)
DEFINE_AVX512(gelu, w_gelu)
DEFINE_AVX512(gelu_tanh, w_gelu_tanh)

/* The same steps as softmax_avx2: max (NaN tracked apart), e = exp(x - max) stored and summed in
   double, then scaled (or x - max - log(sum)). Masked tails: padding lanes are zeroed after the
   exp, so the sum is unchanged. */
AVX512 static void softmax_avx512(const float *x, float *o, int64_t L, int log_softmax) {
    const int64_t full = L & ~(int64_t)15;
    const __mmask16 tail = (__mmask16)((1u << (L - full)) - 1u);
    __m512 vmax = W1(-INFINITY);
    __mmask16 nan = 0;
    for (int64_t k = 0; k < full; k += 16) {
        __m512 v = _mm512_loadu_ps(x + k);
        _mm_prefetch((const char *)(x + k) + 1024, _MM_HINT_T0);   /* runs on into the next line */
        vmax = _mm512_max_ps(vmax, v);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    if (tail) {
        __m512 v = _mm512_mask_loadu_ps(W1(-INFINITY), tail, x + full);
        vmax = _mm512_max_ps(vmax, v);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    const float m = nan ? NAN : _mm512_reduce_max_ps(vmax);
    const __m512 mv = W1(m);
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (int64_t k = 0; k <= full; k += 16) {
        const __mmask16 mask = k < full ? (__mmask16)0xFFFF : tail;
        if (mask == 0) {
            break;
        }
        /* Padding lanes load the max, so they take exp(0): exp(-inf) would make vscalefps produce
           a zero from 2^-150, a denormal-range result that costs a microcode assist (~100
           cycles) for every line's tail (a (256, 10) log_softmax: 30 -> 8 us). */
        __m512 e = w_exp(_mm512_sub_ps(_mm512_mask_loadu_ps(mv, mask, x + k), mv));
        e = _mm512_maskz_mov_ps(mask, e);          /* padding lanes forced to 0 */
        if (!log_softmax) {
            _mm512_mask_storeu_ps(o + k, mask, e);
        }
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    }
    const double total = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    const __m512 scale = W1(log_softmax ? (float)log(total) : (float)(1.0 / total));
    for (int64_t k = 0; k <= full; k += 16) {
        const __mmask16 mask = k < full ? (__mmask16)0xFFFF : tail;
        if (mask == 0) {
            break;
        }
        __m512 r = log_softmax
                       ? _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + k), mv), scale)
                       : _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, o + k), scale);
        _mm512_mask_storeu_ps(o + k, mask, r);
    }
}

/* AVX-512 if the path in use is AVX-512, else AVX2, else generic. */
#define PICK(NAME) \
    (vmath_current() == VM_AVX512 ? NAME##_avx512 : tt_vmath_uses_avx2() ? NAME##_avx2 : NAME##_generic)
#else
#define PICK(NAME) NAME##_generic
#endif /* TT_HAVE_X86 */

/* ------------------------------------------------------------------ public entry points */

#define DEFINE_ENTRY(NAME, PICKER)                                        \
    void tt_v##NAME##_f32(const float *x, float *y, int64_t n) {          \
        if (n > 0) {                                                      \
            PICKER(NAME)(x, y, n);                                        \
        }                                                                 \
    }
DEFINE_ENTRY(exp, PICK)
DEFINE_ENTRY(log, PICK)
DEFINE_ENTRY(tanh, PICK)
DEFINE_ENTRY(sigmoid, PICK)
DEFINE_ENTRY(silu, PICK)
DEFINE_ENTRY(erf, PICK)
DEFINE_ENTRY(gelu, PICK)
DEFINE_ENTRY(gelu_tanh, PICK)

/* The generic line: the same steps through the array exp, in chunks of a stack buffer, summed
   in double over four running partial sums. */
static void softmax_generic(const float *x, float *o, int64_t L, int log_softmax) {
    enum { BUF = 256 };
    float m = -INFINITY, buffer[BUF];
    for (int64_t k = 0; k < L; k++) {
        m = (x[k] > m || x[k] != x[k]) ? x[k] : m;
    }
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t k0 = 0; k0 < L; k0 += BUF) {
        const int64_t c = L - k0 < BUF ? L - k0 : BUF;
        float *e = log_softmax ? buffer : o + k0;
        for (int64_t i = 0; i < c; i++) {
            e[i] = x[k0 + i] - m;
        }
        exp_generic(e, e, c);
        int64_t i = 0;
        for (; i + 4 <= c; i += 4) {
            s0 += e[i];
            s1 += e[i + 1];
            s2 += e[i + 2];
            s3 += e[i + 3];
        }
        for (; i < c; i++) {
            s0 += e[i];
        }
    }
    const double total = (s0 + s1) + (s2 + s3);
    const float scale = (float)(log_softmax ? log(total) : 1.0 / total);
    for (int64_t k = 0; k < L; k++) {
        o[k] = log_softmax ? (x[k] - m) - scale : o[k] * scale;
    }
}

void tt_vsoftmax_f32(const float *x, float *o, int64_t L, int log_softmax) {
    if (L > 0) {
        PICK(softmax)(x, o, L, log_softmax);
    }
}
