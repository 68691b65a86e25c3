/*
 * test_kernels.c: the copy kernel (kernels/copy.c over kernels/strided_iter.c), the half
 * conversions (kernels/half.h), the random fills (kernels/random.c) and DLPack (dlpack.c).
 *
 * Expected values come from reference code written here, independently of the kernels:
 *   - casts follow the rules stated in cast_rows.h: float -> int truncates toward zero, through
 *     int32 for int8/int16/int32 and through int64 for uint8/int64 (as PyTorch); NaN or a float
 *     outside that type's range becomes its minimum, narrower integers wrap modulo 2^bits,
 *     anything -> bool is (x != 0) (NaN is true), bool -> x gives 0/1, integer and double ->
 *     float16 go through float32 (as STORE_HALFK does, and as PyTorch does);
 *   - float16 encoding/decoding is done with ldexp/frexp/rint instead of bit tricks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/half.h"

static const char *const dtype_names[TT_NUM_DTYPES] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"};

static int is_float_dtype(int d) { return d == TT_FLOAT16 || d == TT_FLOAT32 || d == TT_FLOAT64; }

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ------------------------------------------------------------------ reference float16 */

static int ref_half_is_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

static float ref_half_to_float(uint16_t h) {
    int exponent = (h >> 10) & 0x1F;
    int mantissa = h & 0x3FF;
    double magnitude;
    if (exponent == 0x1F) {
        magnitude = mantissa ? NAN : INFINITY;
    } else if (exponent == 0) {
        magnitude = ldexp(mantissa, -24);
    } else {
        magnitude = ldexp(mantissa + 1024, exponent - 25);
    }
    return (float)((h & 0x8000u) ? -magnitude : magnitude);
}

/* Round to nearest, ties to even (rint in the default rounding mode). */
static uint16_t ref_float_to_half(float x) {
    uint16_t sign = signbit(x) ? 0x8000u : 0;
    if (isnan(x)) {
        return sign | 0x7E00u;
    }
    double a = fabs((double)x);
    if (a >= 65520.0) { /* 65504 + half an ulp (16) rounds to even: infinity */
        return sign | 0x7C00u;
    }
    if (a < ldexp(1.0, -14)) { /* subnormal range: units of 2^-24; 1024 units is 2^-14 */
        return (uint16_t)(sign | (uint16_t)rint(a * 16777216.0));
    }
    int e;
    frexp(a, &e);                  /* a in [2^(e-1), 2^e) */
    int unbiased = e - 1;
    double q = rint(ldexp(a, 10 - unbiased)); /* in [1024, 2048] */
    if (q == 2048.0) {
        q = 1024.0;
        unbiased++;
    }
    return (uint16_t)(sign | (uint16_t)((unbiased + 15) << 10) | (uint16_t)((int)q - 1024));
}

/* ------------------------------------------------------------------ reference casts */

typedef struct value {
    int is_float;
    double f;
    int64_t i;
} value;

static value load_ref(int dtype, const void *p) {
    value v = {0, 0.0, 0};
    switch (dtype) {
    case TT_BOOL: v.i = *(const uint8_t *)p != 0; break;
    case TT_INT8: v.i = *(const int8_t *)p; break;
    case TT_INT16: v.i = *(const int16_t *)p; break;
    case TT_INT32: v.i = *(const int32_t *)p; break;
    case TT_INT64: v.i = *(const int64_t *)p; break;
    case TT_UINT8: v.i = *(const uint8_t *)p; break;
    case TT_FLOAT16: v.is_float = 1; v.f = ref_half_to_float(*(const uint16_t *)p); break;
    case TT_FLOAT32: v.is_float = 1; v.f = *(const float *)p; break;
    default: v.is_float = 1; v.f = *(const double *)p; break;
    }
    return v;
}

static int64_t ref_float_to_int64(double f) {
    if (isnan(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0) {
        return INT64_MIN;
    }
    return (int64_t)trunc(f);
}

static int64_t ref_float_to_int32(double f) {
    if (isnan(f) || f >= 2147483648.0 || f < -2147483648.0) {
        return INT32_MIN;
    }
    return (int64_t)trunc(f);
}

/* Writes v converted to `dtype` into out (itemsize bytes). */
static void store_ref(int dtype, value v, void *out) {
    if (dtype == TT_BOOL) {
        *(uint8_t *)out = v.is_float ? (v.f != 0.0) : (v.i != 0);
    } else if (dtype == TT_FLOAT16) {
        float f = v.is_float ? (float)v.f : (float)v.i;
        *(uint16_t *)out = ref_float_to_half(f);
    } else if (dtype == TT_FLOAT32) {
        *(float *)out = v.is_float ? (float)v.f : (float)v.i;
    } else if (dtype == TT_FLOAT64) {
        *(double *)out = v.is_float ? v.f : (double)v.i;
    } else {
        /* Integers: to int32 (signed destinations up to 32 bits) or int64, then keep the low bytes
           (wrap modulo 2^bits; little-endian). */
        const int via_int32 = dtype == TT_INT8 || dtype == TT_INT16 || dtype == TT_INT32;
        uint64_t wide = (uint64_t)(v.is_float ? (via_int32 ? ref_float_to_int32(v.f) : ref_float_to_int64(v.f)) : v.i);
        memcpy(out, &wide, tt_dtype_itemsize(dtype));
    }
}

/* Compares one element; NaN matches any NaN. Returns 1 when equal. */
static int element_matches(int dtype, const void *got, const void *expected) {
    if (dtype == TT_FLOAT16 && ref_half_is_nan(*(const uint16_t *)expected)) {
        return ref_half_is_nan(*(const uint16_t *)got);
    }
    if (dtype == TT_FLOAT32 && isnan(*(const float *)expected)) {
        return isnan(*(const float *)got);
    }
    if (dtype == TT_FLOAT64 && isnan(*(const double *)expected)) {
        return isnan(*(const double *)got);
    }
    return memcmp(got, expected, tt_dtype_itemsize(dtype)) == 0;
}

static void format_element(int dtype, const void *p, char *buf, size_t n) {
    value v = load_ref(dtype, p);
    uint64_t raw = 0;
    memcpy(&raw, p, tt_dtype_itemsize(dtype));
    if (v.is_float) {
        snprintf(buf, n, "%.17g (0x%llx)", v.f, (unsigned long long)raw);
    } else {
        snprintf(buf, n, "%lld (0x%llx)", (long long)v.i, (unsigned long long)raw);
    }
}

/* ------------------------------------------------------------------ source values */

enum { NVALS = 12 };

/* Twelve interesting values of each dtype, written into `out` (NVALS elements). */
static void source_values(int dtype, void *out) {
    static const uint8_t b[NVALS] = {0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0};
    static const int8_t i8[NVALS] = {-128, -1, 0, 1, 127, -7, 100, -100, 5, -5, 64, -65};
    static const int16_t i16[NVALS] = {-32768, 32767, 255, 256, -129, 128,
                                       0,      -1,    1000, -1000, 300, -300};
    static const int32_t i32[NVALS] = {INT32_MIN, INT32_MAX, 70000, -70000, 65535, 65536,
                                       16777217,  -1,        0,     2,      255,   256};
    static const int64_t i64[NVALS] = {INT64_MIN,
                                       INT64_MAX,
                                       ((int64_t)1 << 40) + 3,
                                       -5,
                                       ((int64_t)1 << 53) + 1,
                                       -(((int64_t)1 << 53) + 1),
                                       ((int64_t)1 << 32) + 7,
                                       0,
                                       1,
                                       -1,
                                       127,
                                       -129};
    static const uint8_t u8[NVALS] = {0, 255, 128, 127, 1, 200, 2, 64, 99, 250, 17, 0};
    /* all exactly representable in float16 */
    const float f16[NVALS] = {0.0f,      -0.0f,  1.5f,  -2.75f, 65504.0f, INFINITY,
                              -INFINITY, NAN,    300.75f, 0x1p-24f, -0.5f,  0.99951171875f};
    const float f32[NVALS] = {3.7f,  -3.7f, 1e10f,         -1e20f, NAN,     INFINITY,
                              0x1p31f, 0.5f, -0x1p63f, 0x1p63f, 65519.0f, -129.9f};
    const double f64[NVALS] = {1e300, -1e300, 2.5,       -2.5,   255.9, 256.0,
                               -1.0,  NAN,    -INFINITY, 1e-30, 4294967296.5, 0x1p-25};
    switch (dtype) {
    case TT_BOOL: memcpy(out, b, sizeof b); break;
    case TT_INT8: memcpy(out, i8, sizeof i8); break;
    case TT_INT16: memcpy(out, i16, sizeof i16); break;
    case TT_INT32: memcpy(out, i32, sizeof i32); break;
    case TT_INT64: memcpy(out, i64, sizeof i64); break;
    case TT_UINT8: memcpy(out, u8, sizeof u8); break;
    case TT_FLOAT16:
        for (int k = 0; k < NVALS; k++) {
            ((uint16_t *)out)[k] = ref_float_to_half(f16[k]);
        }
        break;
    case TT_FLOAT32: memcpy(out, f32, sizeof f32); break;
    default: memcpy(out, f64, sizeof f64); break;
    }
}

/* ------------------------------------------------------------------ copy: all dtype pairs */

/* Every (src, dst) dtype pair on a transposed source and a strided destination with gaps:
   values follow the reference casts, and bytes outside the destination view stay untouched. */
static void test_copy_all_pairs_strided(void) {
    /* logical shape (3, 4); src stored transposed: element (i, j) at j * 3 + i */
    const int64_t shape[2] = {3, 4};
    const int64_t src_strides[2] = {1, 3};
    const int64_t dst_strides[2] = {8, 2}; /* element (i, j) at i * 8 + j * 2, of 24 */
    for (int sd = 0; sd < TT_NUM_DTYPES; sd++) {
        size_t ss = tt_dtype_itemsize(sd);
        unsigned char vals[NVALS * 8], src[NVALS * 8];
        source_values(sd, vals);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                memcpy(src + (size_t)(j * 3 + i) * ss, vals + (size_t)(i * 4 + j) * ss, ss);
            }
        }
        for (int dd = 0; dd < TT_NUM_DTYPES; dd++) {
            size_t ds = tt_dtype_itemsize(dd);
            unsigned char dst[24 * 8];
            memset(dst, 0xCD, sizeof dst);
            tt_status st = tt_copy_strided(2, shape, (uintptr_t)src, src_strides, sd,
                                           (uintptr_t)dst, dst_strides, dd);
            CHECK_STATUS(st, TT_OK, "tt_copy_strided");
            int written[24] = {0};
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 4; j++) {
                    int pos = i * 8 + j * 2;
                    written[pos] = 1;
                    unsigned char expected[8];
                    store_ref(dd, load_ref(sd, vals + (size_t)(i * 4 + j) * ss), expected);
                    const unsigned char *got = dst + (size_t)pos * ds;
                    if (!element_matches(dd, got, expected)) {
                        char in[64], e[64], g[64];
                        format_element(sd, vals + (size_t)(i * 4 + j) * ss, in, sizeof in);
                        format_element(dd, expected, e, sizeof e);
                        format_element(dd, got, g, sizeof g);
                        CHECK(0, "copy %s -> %s of %s at (%d,%d): expected %s, got %s",
                              dtype_names[sd], dtype_names[dd], in, i, j, e, g);
                    } else {
                        check_record(1);
                    }
                }
            }
            for (int pos = 0; pos < 24; pos++) {
                for (size_t k = 0; !written[pos] && k < ds; k++) {
                    if (dst[(size_t)pos * ds + k] != 0xCD) {
                        CHECK(0, "copy %s -> %s wrote outside the view at element %d",
                              dtype_names[sd], dtype_names[dd], pos);
                        break;
                    }
                }
            }
        }
    }
}

/* A deterministic pseudo-random element of `dtype` (floats include fractions and negatives). */
static void random_element(int dtype, uint64_t *state, void *out) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = *state >> 11;
    value v = {0, 0.0, 0};
    if (dtype == TT_BOOL) {
        v.i = (int64_t)(r & 1);
    } else if (is_float_dtype(dtype)) {
        v.is_float = 1;
        v.f = ((double)(r % 100000) - 50000.0) / 64.0; /* fractions, negatives, int8 overflow */
    } else {
        v.i = (int64_t)(r * 0x9E3779B97F4A7C15ull);
    }
    store_ref(dtype, v, out);
}

/* Every pair again on a permuted 3-d problem the iterator must reorder and cannot merge,
   plus the contiguous case it merges into one row. */
static void test_copy_all_pairs_3d(void) {
    const int64_t shape[3] = {5, 7, 6};
    const int64_t src_permuted[3] = {1, 30, 5}; /* a (7, 6, 5) buffer seen as (5, 7, 6) */
    const int64_t contiguous[3] = {42, 6, 1};
    enum { N = 210 };
    for (int sd = 0; sd < TT_NUM_DTYPES; sd++) {
        size_t ss = tt_dtype_itemsize(sd);
        static unsigned char src[N * 8];
        uint64_t state = 12345 + (uint64_t)sd;
        for (int k = 0; k < N; k++) {
            random_element(sd, &state, src + (size_t)k * ss);
        }
        for (int dd = 0; dd < TT_NUM_DTYPES; dd++) {
            size_t ds = tt_dtype_itemsize(dd);
            for (int variant = 0; variant < 2; variant++) {
                const int64_t *sstr = variant == 0 ? src_permuted : contiguous;
                static unsigned char dst[N * 8];
                memset(dst, 0xCD, sizeof dst);
                CHECK_STATUS(tt_copy_strided(3, shape, (uintptr_t)src, sstr, sd, (uintptr_t)dst,
                                             contiguous, dd),
                             TT_OK, "3-d copy");
                long bad = 0, first = -1;
                for (int a = 0; a < 5; a++) {
                    for (int b = 0; b < 7; b++) {
                        for (int c = 0; c < 6; c++) {
                            int64_t so = a * sstr[0] + b * sstr[1] + c * sstr[2];
                            int64_t d = a * 42 + b * 6 + c;
                            unsigned char expected[8];
                            store_ref(dd, load_ref(sd, src + so * (int64_t)ss), expected);
                            if (!element_matches(dd, dst + d * (int64_t)ds, expected)) {
                                bad++;
                                first = first < 0 ? d : first;
                            }
                        }
                    }
                }
                CHECK(bad == 0, "3-d copy %s -> %s (%s source): %ld wrong elements, first at %ld",
                      dtype_names[sd], dtype_names[dd], variant == 0 ? "permuted" : "contiguous",
                      bad, first);
            }
        }
    }
}

/* ------------------------------------------------------------------ float16 */

/* All 65536 half patterns: decoding matches the reference exactly, and every non-NaN half
   survives half -> float -> half; NaN stays NaN (with its sign). Also through the kernel. */
static void test_half_round_trip_exhaustive(void) {
    long bad_decode = 0, bad_round_trip = 0, bad_nan = 0, bad_ref = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = tt_half_to_float((uint16_t)h);
        float r = ref_half_to_float((uint16_t)h);
        uint16_t back = tt_float_to_half(f);
        if (ref_half_is_nan((uint16_t)h)) {
            if (!isnan(f) || !ref_half_is_nan(back) || (back & 0x8000u) != (h & 0x8000u)) {
                bad_nan++;
            }
            continue;
        }
        if (float_bits(f) != float_bits(r)) {
            if (bad_decode++ == 0) {
                fprintf(stderr, "half 0x%04x decodes to %a, expected %a\n", h, f, r);
            }
        }
        if (back != h) {
            if (bad_round_trip++ == 0) {
                fprintf(stderr, "half 0x%04x -> float %a -> half 0x%04x\n", h, f, back);
            }
        }
        if (ref_float_to_half(r) != h) {
            bad_ref++; /* the test's own reference is inconsistent */
        }
    }
    CHECK_EQ(bad_decode, 0, "half -> float decodings differing from the reference");
    CHECK_EQ(bad_round_trip, 0, "non-NaN halves not surviving half -> float -> half");
    CHECK_EQ(bad_nan, 0, "NaN halves not staying NaN (same sign)");
    CHECK_EQ(bad_ref, 0, "reference round trip (test self-check)");

    /* The same through the copy kernel: float16 -> float32 -> float16. */
    static uint16_t halves[65536], again[65536];
    static float floats[65536];
    for (uint32_t h = 0; h < 65536; h++) {
        halves[h] = (uint16_t)h;
    }
    const int64_t shape[1] = {65536}, one[1] = {1};
    CHECK_STATUS(tt_copy_strided(1, shape, (uintptr_t)halves, one, TT_FLOAT16, (uintptr_t)floats,
                                 one, TT_FLOAT32), TT_OK, "copy float16 -> float32");
    CHECK_STATUS(tt_copy_strided(1, shape, (uintptr_t)floats, one, TT_FLOAT32, (uintptr_t)again,
                                 one, TT_FLOAT16), TT_OK, "copy float32 -> float16");
    long bad_kernel = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        int nan = ref_half_is_nan((uint16_t)h);
        if (nan ? !ref_half_is_nan(again[h]) : again[h] != h) {
            bad_kernel++;
        }
    }
    CHECK_EQ(bad_kernel, 0, "halves changed by a float16 -> float32 -> float16 kernel round trip");
}

/* float -> half rounding on hand-picked values: overflow threshold, ties to even, subnormals. */
static void test_float_to_half_rounding(void) {
    static const struct {
        float in;
        uint16_t expected;
        const char *why;
    } cases[] = {
        {65504.0f, 0x7BFF, "largest finite half"},
        {65519.0f, 0x7BFF, "just below the overflow threshold"},
        {65520.0f, 0x7C00, "65520 is the tie between 65504 and 2^16: rounds to infinity"},
        {1e6f, 0x7C00, "overflow"},
        {-65520.0f, 0xFC00, "negative overflow"},
        {1.0f + 0x1p-11f, 0x3C00, "1 + 2^-11 is a tie: to even (1.0)"},
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01, "just above the tie: up"},
        {1.0f + 3 * 0x1p-11f, 0x3C02, "1 + 3*2^-11 is a tie: to even (1 + 2^-9)"},
        {0x1p-24f, 0x0001, "smallest subnormal 2^-24"},
        {0x1p-25f, 0x0000, "2^-25 is the tie between 0 and 2^-24: to even (0)"},
        {-0x1p-25f, 0x8000, "-2^-25 rounds to -0"},
        {3 * 0x1p-26f, 0x0001, "3*2^-26 is above the tie: up to 2^-24"},
        {3 * 0x1p-25f, 0x0002, "3*2^-25 is the tie between 2^-24 and 2^-23: to even (2^-23)"},
        {0x1p-14f, 0x0400, "smallest normal"},
        {0x1p-14f - 0x1p-25f, 0x0400, "tie between the largest subnormal and 2^-14: to even"},
        {1e-8f, 0x0000, "far below the smallest subnormal"},
        {-0.0f, 0x8000, "negative zero"},
        {INFINITY, 0x7C00, "infinity"},
        {-INFINITY, 0xFC00, "negative infinity"},
        {0.1f, 0x2E66, "0.1"},
        {2049.0f, 0x6800, "2049 is a tie between 2048 and 2050: to even (2048)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint16_t got = tt_float_to_half(cases[k].in);
        CHECK(got == cases[k].expected, "float_to_half(%a) [%s]: expected 0x%04x, got 0x%04x",
              cases[k].in, cases[k].why, cases[k].expected, got);
        uint16_t ref = ref_float_to_half(cases[k].in);
        CHECK(ref == cases[k].expected, "test reference float_to_half(%a): 0x%04x", cases[k].in,
              ref);
    }
    CHECK(ref_half_is_nan(tt_float_to_half(NAN)), "float_to_half(NaN) is not a NaN");
    CHECK(ref_half_is_nan(tt_float_to_half(bits_float(0x7F800001u))),
          "float_to_half(signalling NaN with a low payload) is not a NaN");

    /* 10^6 random float bit patterns against the reference. */
    uint64_t state = 88172645463325252ull;
    long bad = 0;
    for (int k = 0; k < 1000000; k++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        float f = bits_float((uint32_t)state);
        uint16_t got = tt_float_to_half(f), ref = ref_float_to_half(f);
        int ok = isnan(f) ? ref_half_is_nan(got) : got == ref;
        if (!ok && bad++ == 0) {
            fprintf(stderr, "float_to_half(%a): expected 0x%04x, got 0x%04x\n", f, ref, got);
        }
    }
    CHECK_EQ(bad, 0, "random floats whose half conversion differs from the reference");
}

/* ------------------------------------------------------------------ copy: special shapes */

/* A source with all strides 0 is a broadcast scalar: a fill, with and without a cast. */
static void test_copy_broadcast(void) {
    const int64_t shape[2] = {3, 5}, zero[2] = {0, 0}, contiguous[2] = {5, 1};
    const int64_t strided[2] = {10, 2};
    double scalar = -3.75;
    int32_t out[15];
    CHECK_STATUS(tt_copy_strided(2, shape, (uintptr_t)&scalar, zero, TT_FLOAT64, (uintptr_t)out,
                                 contiguous, TT_INT32), TT_OK, "broadcast float64 -> int32");
    for (int k = 0; k < 15; k++) {
        CHECK_EQ(out[k], -3, "broadcast fill float64 -3.75 -> int32 (truncation)");
    }
    int16_t value = 0x1234;
    int16_t fill[30];
    memset(fill, 0, sizeof fill);
    CHECK_STATUS(tt_copy_strided(2, shape, (uintptr_t)&value, zero, TT_INT16, (uintptr_t)fill,
                                 strided, TT_INT16), TT_OK, "broadcast int16 into a strided view");
    for (int k = 0; k < 30; k++) {
        int in_view = (k % 2 == 0) && (k % 10) / 2 < 5;
        CHECK_EQ(fill[k], in_view ? 0x1234 : 0, "strided broadcast fill");
    }
    /* broadcast along one dimension only: a column (3, 1) stretched to (3, 5) */
    const float column[3] = {1.5f, -2.5f, 7.0f};
    const int64_t col_strides[2] = {1, 0};
    float wide[15];
    CHECK_STATUS(tt_copy_strided(2, shape, (uintptr_t)column, col_strides, TT_FLOAT32,
                                 (uintptr_t)wide, contiguous, TT_FLOAT32), TT_OK, "column broadcast");
    for (int k = 0; k < 15; k++) {
        CHECK(wide[k] == column[k / 5], "column broadcast at %d: expected %g, got %g", k,
              column[k / 5], wide[k]);
    }
}

/* 0-d tensors, size-1 dimensions, the 64-dimension limit. */
static void test_copy_degenerate_shapes(void) {
    float src = 2.9f;
    int64_t dst = 0;
    CHECK_STATUS(tt_copy_strided(0, NULL, (uintptr_t)&src, NULL, TT_FLOAT32, (uintptr_t)&dst, NULL,
                                 TT_INT64), TT_OK, "0-d copy");
    CHECK_EQ(dst, 2, "0-d copy float32 2.9 -> int64");

    const int64_t ones[3] = {1, 1, 1}, any[3] = {7, 0, 99};
    uint8_t b = 0;
    CHECK_STATUS(tt_copy_strided(3, ones, (uintptr_t)&src, any, TT_FLOAT32, (uintptr_t)&b, any,
                                 TT_BOOL), TT_OK, "all-size-1 copy");
    CHECK_EQ(b, 1, "all-size-1 copy float32 2.9 -> bool");

    int64_t shape64[64], strides64[64];
    for (int d = 0; d < 64; d++) {
        shape64[d] = 1;
        strides64[d] = 1;
    }
    shape64[10] = 2;
    shape64[50] = 3;
    strides64[10] = 3; /* (2, 3) row-major in the only non-1 dims */
    double s6[6] = {1, 2, 3, 4, 5, 6};
    int8_t d6[6] = {0};
    CHECK_STATUS(tt_copy_strided(64, shape64, (uintptr_t)s6, strides64, TT_FLOAT64, (uintptr_t)d6,
                                 strides64, TT_INT8), TT_OK, "64-d copy");
    for (int k = 0; k < 6; k++) {
        CHECK_EQ(d6[k], k + 1, "64-d copy element");
    }
}

/* Argument validation: statuses, never a crash, and numel 0 needs no addresses. */
static void test_copy_invalid_args(void) {
    const int64_t shape[2] = {3, 0}, strides[2] = {1, 1}, neg[2] = {3, -1}, good[2] = {2, 2};
    float buf[4] = {0};
    CHECK_STATUS(tt_copy_strided(2, shape, 0, strides, TT_FLOAT32, 0, strides, TT_INT8), TT_OK,
                 "numel 0 with NULL addresses");
    CHECK_STATUS(tt_copy_strided(0, NULL, 0, NULL, TT_FLOAT32, (uintptr_t)buf, NULL, TT_FLOAT32),
                 TT_ERR_INVALID_ARG, "0-d copy from a NULL address");
    CHECK_STATUS(tt_copy_strided(2, good, (uintptr_t)buf, strides, TT_NUM_DTYPES, (uintptr_t)buf,
                                 strides, TT_FLOAT32), TT_ERR_UNSUPPORTED_DTYPE, "src dtype 9");
    CHECK_STATUS(tt_copy_strided(2, good, (uintptr_t)buf, strides, TT_FLOAT32, (uintptr_t)buf,
                                 strides, -1), TT_ERR_UNSUPPORTED_DTYPE, "dst dtype -1");
    int64_t big[65] = {0}, big_strides[65] = {0};
    for (int d = 0; d < 65; d++) {
        big[d] = 1;
    }
    CHECK_STATUS(tt_copy_strided(65, big, (uintptr_t)buf, big_strides, TT_FLOAT32, (uintptr_t)buf,
                                 big_strides, TT_FLOAT32), TT_ERR_INVALID_ARG, "ndim 65");
    CHECK_STATUS(tt_copy_strided(-1, big, (uintptr_t)buf, big_strides, TT_FLOAT32, (uintptr_t)buf,
                                 big_strides, TT_FLOAT32), TT_ERR_INVALID_ARG, "ndim -1");
    CHECK_STATUS(tt_copy_strided(2, neg, (uintptr_t)buf, strides, TT_FLOAT32, (uintptr_t)buf,
                                 strides, TT_FLOAT32), TT_ERR_INVALID_ARG, "negative size");
    CHECK_STATUS(tt_copy_strided(2, NULL, (uintptr_t)buf, strides, TT_FLOAT32, (uintptr_t)buf,
                                 strides, TT_FLOAT32), TT_ERR_INVALID_ARG, "NULL shape");
    CHECK_STATUS(tt_copy_strided(2, good, (uintptr_t)buf, NULL, TT_FLOAT32, (uintptr_t)buf,
                                 strides, TT_FLOAT32), TT_ERR_INVALID_ARG, "NULL src strides");
    CHECK_EQ(tt_max_dims(), 64, "tt_max_dims");
}

/* Shapes whose element count overflows int64. KNOWN BUG (strided_iter.c, tt_iter_init): the
   running product `numel *= shape[d]` and the merge test `strides * shape` are signed int64
   multiplications that overflow, which is undefined behaviour (UBSan reports it; the Python
   layer creates such tensors: t_tensor.empty((2**62, 4, 0)) is a valid empty tensor, and its
   copies reach this code). In practice the product wraps: (2^62, 4) gives numel 0, and the
   copy returns TT_OK without copying anything, although TT_ERR_OVERFLOW exists for this. */
static void test_copy_shape_overflow(void) {
    const int64_t empty_huge[3] = {(int64_t)1 << 62, 4, 0}, zeros[3] = {0, 0, 0};
    CHECK_STATUS(tt_copy_strided(3, empty_huge, 0, zeros, TT_FLOAT32, 0, zeros, TT_FLOAT32), TT_OK,
                 "empty copy of shape (2^62, 4, 0) (must also be free of undefined behaviour)");
    const int64_t huge[2] = {(int64_t)1 << 62, 4};
    float x = 1.0f, y = 0.0f;
    tt_status st = tt_copy_strided(2, huge, (uintptr_t)&x, zeros, TT_FLOAT32, (uintptr_t)&y, zeros,
                                   TT_FLOAT32);
    CHECK(st == TT_ERR_OVERFLOW || st == TT_ERR_INVALID_ARG,
          "copy of shape (2^62, 4), 2^64 elements: expected TT_ERR_OVERFLOW, got %d (%s)%s",
          (int)st, tt_status_string(st), st == TT_OK && y == 0.0f ? " and nothing was copied" : "");
}

/* ------------------------------------------------------------------ random */

enum { NDRAWS = 100000 };

/* The same seed gives the same stream; another seed another one. */
static void test_rng_determinism(void) {
    static double a[1000], b[1000], c[1000];
    tt_generator g;
    tt_generator_seed(&g, 42);
    tt_random_uniform(&g, (uintptr_t)a, 1000, TT_FLOAT64, 0.0, 1.0);
    tt_generator_seed(&g, 42);
    tt_random_uniform(&g, (uintptr_t)b, 1000, TT_FLOAT64, 0.0, 1.0);
    tt_generator_seed(&g, 43);
    tt_random_uniform(&g, (uintptr_t)c, 1000, TT_FLOAT64, 0.0, 1.0);
    CHECK(memcmp(a, b, sizeof a) == 0, "same seed gave different streams");
    CHECK(memcmp(a, c, sizeof a) != 0, "seeds 42 and 43 gave the same stream");
    /* A fill continues the stream: two fills of 500 equal one fill of 1000. */
    tt_generator_seed(&g, 42);
    tt_random_uniform(&g, (uintptr_t)c, 500, TT_FLOAT64, 0.0, 1.0);
    tt_random_uniform(&g, (uintptr_t)(c + 500), 500, TT_FLOAT64, 0.0, 1.0);
    CHECK(memcmp(a, c, sizeof a) == 0, "two fills of 500 differ from one fill of 1000");
    tt_generator_seed(&g, 0);
    CHECK(g.s[0] | g.s[1] | g.s[2] | g.s[3], "seed 0 gave the all-zero xoshiro state");
}

static double element_as_double(int dtype, const void *buf, int64_t i) {
    switch (dtype) {
    case TT_FLOAT16: return tt_half_to_float(((const uint16_t *)buf)[i]);
    case TT_FLOAT32: return ((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

/* uniform: every draw in [low, high) in every float dtype, mean near the middle. Bounds are
   representable in float16, so the only way out of range is a rounding up to `high`. */
static void test_uniform_bounds(void) {
    static const double ranges[][2] = {{0.0, 1.0}, {-2.0, 3.0}, {10.0, 10.5}};
    static unsigned char buf[NDRAWS * 8];
    for (int dtype = TT_FLOAT16; dtype <= TT_FLOAT64; dtype++) {
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
            double low = ranges[r][0], high = ranges[r][1];
            tt_generator g;
            tt_generator_seed(&g, 7 + r);
            CHECK_STATUS(tt_random_uniform(&g, (uintptr_t)buf, NDRAWS, dtype, low, high), TT_OK,
                         "tt_random_uniform");
            long below = 0, at_or_above = 0;
            double sum = 0;
            for (int64_t i = 0; i < NDRAWS; i++) {
                double x = element_as_double(dtype, buf, i);
                below += !(x >= low);
                at_or_above += !(x < high);
                sum += x;
            }
            double mean = sum / NDRAWS, expected = (low + high) / 2;
            double tolerance = 6 * (high - low) / sqrt(12.0 * NDRAWS) + (high - low) * 1e-3;
            CHECK(below == 0 && at_or_above == 0,
                  "uniform %s [%g, %g): %ld draws below low, %ld draws >= high (of %d)",
                  dtype_names[dtype], low, high, below, at_or_above, NDRAWS);
            CHECK(fabs(mean - expected) < tolerance, "uniform %s [%g, %g): mean %g, expected %g",
                  dtype_names[dtype], low, high, mean, expected);
        }
    }
}

/* normal: sample mean and standard deviation near the parameters; odd n fills the last one. */
static void test_normal_moments(void) {
    static unsigned char buf[(NDRAWS + 1) * 8];
    const double mean = 2.0, std = 3.0;
    for (int dtype = TT_FLOAT16; dtype <= TT_FLOAT64; dtype++) {
        tt_generator g;
        tt_generator_seed(&g, 99);
        int64_t n = NDRAWS + 1; /* odd: the last element comes from an unpaired draw */
        memset(buf, 0xFF, sizeof buf); /* NaN in every float dtype */
        CHECK_STATUS(tt_random_normal(&g, (uintptr_t)buf, n, dtype, mean, std), TT_OK,
                     "tt_random_normal");
        double sum = 0, sum2 = 0;
        long not_finite = 0;
        for (int64_t i = 0; i < n; i++) {
            double x = element_as_double(dtype, buf, i);
            not_finite += !isfinite(x);
            sum += x;
            sum2 += x * x;
        }
        double m = sum / n, s = sqrt(sum2 / n - m * m);
        CHECK_EQ(not_finite, 0, "normal draws that are not finite (unwritten or bad)");
        CHECK(fabs(m - mean) < 0.05, "normal %s: mean %g, expected %g", dtype_names[dtype], m, mean);
        CHECK(fabs(s - std) < 0.05, "normal %s: std %g, expected %g", dtype_names[dtype], s, std);
    }
    double zero_std[4];
    tt_generator g;
    tt_generator_seed(&g, 1);
    CHECK_STATUS(tt_random_normal(&g, (uintptr_t)zero_std, 4, TT_FLOAT64, 5.0, 0.0), TT_OK,
                 "normal with std 0");
    CHECK(zero_std[0] == 5.0 && zero_std[3] == 5.0, "normal with std 0 is not constant");
}

/* integers: every value in [low, high), all of a small range hit, the full int64 range works. */
static void test_integers(void) {
    tt_generator g;
    tt_generator_seed(&g, 5);
    static int8_t i8[NDRAWS];
    CHECK_STATUS(tt_random_integers(&g, (uintptr_t)i8, NDRAWS, TT_INT8, -5, 7), TT_OK, "int8");
    int seen[12] = {0};
    long out_of_range = 0;
    for (int i = 0; i < NDRAWS; i++) {
        if (i8[i] < -5 || i8[i] >= 7) {
            out_of_range++;
        } else {
            seen[i8[i] + 5]++;
        }
    }
    CHECK_EQ(out_of_range, 0, "int8 integers outside [-5, 7)");
    for (int v = 0; v < 12; v++) {
        /* each value expects 8333; 6 sigma is about 550 */
        CHECK(abs(seen[v] - NDRAWS / 12) < 600, "integers [-5, 7): value %d drawn %d times", v - 5,
              seen[v]);
    }

    static int64_t i64[NDRAWS];
    CHECK_STATUS(tt_random_integers(&g, (uintptr_t)i64, NDRAWS, TT_INT64, 42, 43), TT_OK,
                 "range 1");
    long not_42 = 0;
    for (int i = 0; i < NDRAWS; i++) {
        not_42 += i64[i] != 42;
    }
    CHECK_EQ(not_42, 0, "integers in [42, 43) that are not 42");

    CHECK_STATUS(tt_random_integers(&g, (uintptr_t)i64, NDRAWS, TT_INT64, INT64_MIN, INT64_MAX),
                 TT_OK, "range wider than 2^63");
    long negative = 0, at_max = 0;
    double mean = 0;
    for (int i = 0; i < NDRAWS; i++) {
        negative += i64[i] < 0;
        at_max += i64[i] == INT64_MAX;
        mean += (double)i64[i] / 9223372036854775808.0 / NDRAWS;
    }
    CHECK_EQ(at_max, 0, "draws equal to the excluded high INT64_MAX");
    CHECK(labs(negative - NDRAWS / 2) < 1000, "full range: %ld negative draws of %d", negative,
          NDRAWS);
    CHECK(fabs(mean) < 0.02, "full range: mean / 2^63 = %g, expected ~0", mean);

    static uint8_t u8[NDRAWS];
    CHECK_STATUS(tt_random_integers(&g, (uintptr_t)u8, NDRAWS, TT_UINT8, 0, 256), TT_OK, "uint8");
    int hits[256] = {0}, missing = 0;
    for (int i = 0; i < NDRAWS; i++) {
        hits[u8[i]]++;
    }
    for (int v = 0; v < 256; v++) {
        missing += hits[v] == 0;
    }
    CHECK_EQ(missing, 0, "uint8 values in [0, 256) never drawn");

    static double f64[1000];
    CHECK_STATUS(tt_random_integers(&g, (uintptr_t)f64, 1000, TT_FLOAT64, -3, 4), TT_OK,
                 "integers as float64");
    long bad = 0;
    for (int i = 0; i < 1000; i++) {
        bad += f64[i] != floor(f64[i]) || f64[i] < -3 || f64[i] >= 4;
    }
    CHECK_EQ(bad, 0, "float64 integers that are fractional or outside [-3, 4)");
}

/* Invalid arguments give statuses, and nothing is written. */
static void test_random_invalid_args(void) {
    tt_generator g;
    tt_generator_seed(&g, 1);
    double buf[4] = {0};
    uintptr_t p = (uintptr_t)buf;
    CHECK_STATUS(tt_random_uniform(&g, p, 4, TT_FLOAT64, 1.0, 0.0), TT_ERR_INVALID_ARG,
                 "uniform high < low");
    CHECK_STATUS(tt_random_uniform(&g, p, 4, TT_FLOAT64, 0.0, NAN), TT_ERR_INVALID_ARG,
                 "uniform NaN high");
    CHECK_STATUS(tt_random_uniform(&g, p, 4, TT_FLOAT64, -INFINITY, 0.0), TT_ERR_INVALID_ARG,
                 "uniform infinite low");
    CHECK_STATUS(tt_random_uniform(&g, p, 4, TT_FLOAT64, -1e308, 1e308), TT_ERR_INVALID_ARG,
                 "uniform range overflowing to infinity");
    CHECK_STATUS(tt_random_uniform(&g, p, 4, TT_INT32, 0.0, 1.0), TT_ERR_UNSUPPORTED_DTYPE,
                 "uniform int32");
    CHECK_STATUS(tt_random_uniform(&g, p, 4, TT_NUM_DTYPES, 0.0, 1.0), TT_ERR_UNSUPPORTED_DTYPE,
                 "uniform dtype 9");
    CHECK_STATUS(tt_random_normal(&g, p, 4, TT_FLOAT64, 0.0, NAN), TT_ERR_INVALID_ARG,
                 "normal NaN std");
    CHECK_STATUS(tt_random_normal(&g, p, 4, TT_FLOAT64, 0.0, -1.0), TT_ERR_INVALID_ARG,
                 "normal negative std");
    CHECK_STATUS(tt_random_normal(&g, p, 4, TT_FLOAT64, INFINITY, 1.0), TT_ERR_INVALID_ARG,
                 "normal infinite mean");
    CHECK_STATUS(tt_random_normal(&g, p, 4, TT_BOOL, 0.0, 1.0), TT_ERR_UNSUPPORTED_DTYPE,
                 "normal bool");
    CHECK_STATUS(tt_random_integers(&g, p, 4, TT_INT64, 5, 5), TT_ERR_INVALID_ARG,
                 "integers high == low");
    CHECK_STATUS(tt_random_integers(&g, p, 4, TT_INT64, 5, 4), TT_ERR_INVALID_ARG,
                 "integers high < low");
    CHECK_STATUS(tt_random_integers(&g, p, 4, TT_BOOL, 0, 2), TT_ERR_UNSUPPORTED_DTYPE,
                 "integers bool");
    CHECK_STATUS(tt_random_integers(&g, p, 4, -1, 0, 2), TT_ERR_UNSUPPORTED_DTYPE,
                 "integers dtype -1");
    CHECK_STATUS(tt_random_uniform(&g, p, -1, TT_FLOAT64, 0.0, 1.0), TT_ERR_INVALID_ARG,
                 "negative n");
    CHECK_STATUS(tt_random_uniform(&g, 0, 4, TT_FLOAT64, 0.0, 1.0), TT_ERR_INVALID_ARG,
                 "NULL dst with n > 0");
    CHECK_STATUS(tt_random_uniform(NULL, p, 4, TT_FLOAT64, 0.0, 1.0), TT_ERR_INVALID_ARG,
                 "NULL generator");
    CHECK_STATUS(tt_random_uniform(&g, 0, 0, TT_FLOAT64, 0.0, 1.0), TT_OK, "n 0, NULL dst");
    CHECK(buf[0] == 0 && buf[3] == 0, "a failed fill wrote into the buffer");
}

/* ------------------------------------------------------------------ DLPack */

/* Export: every field right, the export holds a strong reference its deleter drops. */
static void test_dlpack_export(void) {
    int64_t live0 = tt_storage_live_objects();
    tt_storage *s = NULL;
    CHECK_STATUS(tt_storage_new(tt_host_allocator(), 24 * sizeof(float), &s), TT_OK, "storage");
    uintptr_t data = (uintptr_t)tt_storage_data(s) + 2 * sizeof(float);
    const int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
    static const struct {
        int dtype;
        uint8_t code, bits;
    } codes[] = {{TT_BOOL, 6, 8},    {TT_INT8, 0, 8},     {TT_INT16, 0, 16},
                 {TT_INT32, 0, 32},  {TT_INT64, 0, 64},   {TT_UINT8, 1, 8},
                 {TT_FLOAT16, 2, 16}, {TT_FLOAT32, 2, 32}, {TT_FLOAT64, 2, 64}};
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
        for (int versioned = 0; versioned < 2; versioned++) {
            void *out = NULL;
            CHECK_STATUS(tt_dlpack_export(s, data, 2, shape, strides, codes[k].dtype, versioned,
                                          &out), TT_OK, "tt_dlpack_export");
            CHECK_EQ(tt_storage_use_count(s), 2, "use_count while an export lives");
            DLTensor *t;
            if (versioned) {
                DLManagedTensorVersioned *m = out;
                CHECK(m->version.major == 1 && m->version.minor == 0, "version %u.%u",
                      m->version.major, m->version.minor);
                CHECK_EQ(m->flags, 0, "flags");
                CHECK(m->manager_ctx != NULL && m->deleter != NULL, "no manager_ctx or deleter");
                t = &m->dl_tensor;
            } else {
                DLManagedTensor *m = out;
                CHECK(m->manager_ctx != NULL && m->deleter != NULL, "no manager_ctx or deleter");
                t = &m->dl_tensor;
            }
            CHECK((uintptr_t)t->data == data, "data: expected %p, got %p", (void *)data, t->data);
            CHECK_EQ(t->byte_offset, 0, "byte_offset");
            CHECK_EQ(t->device.device_type, 1, "device_type (kDLCPU)");
            CHECK_EQ(t->device.device_id, 0, "device_id");
            CHECK_EQ(t->ndim, 2, "ndim");
            CHECK(t->shape[0] == 2 && t->shape[1] == 3, "shape (%lld, %lld)",
                  (long long)t->shape[0], (long long)t->shape[1]);
            CHECK(t->strides != NULL && t->strides[0] == 1 && t->strides[1] == 2,
                  "strides not (1, 2)");
            CHECK(t->dtype.code == codes[k].code && t->dtype.bits == codes[k].bits &&
                      t->dtype.lanes == 1,
                  "%s dtype: expected (code %u, bits %u, lanes 1), got (%u, %u, %u)",
                  dtype_names[codes[k].dtype], codes[k].code, codes[k].bits, t->dtype.code,
                  t->dtype.bits, t->dtype.lanes);
            if (versioned) {
                DLManagedTensorVersioned *m = out;
                m->deleter(m);
            } else {
                DLManagedTensor *m = out;
                m->deleter(m);
            }
            CHECK_EQ(tt_storage_use_count(s), 1, "use_count after the export's deleter ran");
        }
    }
    void *out = (void *)1;
    CHECK_STATUS(tt_dlpack_export(s, data, 2, shape, strides, TT_NUM_DTYPES, 0, &out),
                 TT_ERR_UNSUPPORTED_DTYPE, "export of dtype 9");
    CHECK_STATUS(tt_dlpack_export(s, data, 65, shape, strides, TT_FLOAT32, 0, &out),
                 TT_ERR_INVALID_ARG, "export with ndim 65");
    CHECK_STATUS(tt_dlpack_export(NULL, data, 2, shape, strides, TT_FLOAT32, 0, &out),
                 TT_ERR_INVALID_ARG, "export of NULL storage");
    CHECK_EQ(tt_storage_use_count(s), 1, "failed exports took no reference");

    /* A 0-d export, which outlives the exporter's own reference. */
    CHECK_STATUS(tt_dlpack_export(s, data, 0, NULL, NULL, TT_FLOAT32, 1, &out), TT_OK,
                 "0-d export");
    DLManagedTensorVersioned *m = out;
    CHECK_EQ(m->dl_tensor.ndim, 0, "0-d export ndim");
    tt_storage_release(s); /* the exporter lets go first */
    CHECK_EQ(tt_storage_live_objects(), live0 + 1, "the export keeps the storage alive");
    CHECK(*(volatile float *)m->dl_tensor.data == *(volatile float *)m->dl_tensor.data,
          "reading the exported data");
    m->deleter(m);
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after the export's deleter");
}

typedef struct import_probe {
    DLManagedTensor legacy;
    DLManagedTensorVersioned versioned;
    int legacy_calls, versioned_calls;
} import_probe;

static void probe_legacy_deleter(DLManagedTensor *self) {
    ((import_probe *)self->manager_ctx)->legacy_calls++;
}

static void probe_versioned_deleter(DLManagedTensorVersioned *self) {
    ((import_probe *)self->manager_ctx)->versioned_calls++;
}

/* Import: the producer's deleter runs exactly once, when the last strong reference goes. */
static void test_dlpack_import(void) {
    int64_t live0 = tt_storage_live_objects();
    float payload[6] = {1, 2, 3, 4, 5, 6};
    import_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.legacy.manager_ctx = &probe;
    probe.legacy.deleter = probe_legacy_deleter;
    probe.legacy.dl_tensor.data = payload;
    probe.versioned.manager_ctx = &probe;
    probe.versioned.deleter = probe_versioned_deleter;
    probe.versioned.dl_tensor.data = payload;

    tt_storage *s = NULL;
    CHECK_STATUS(tt_storage_from_dlpack(&probe.legacy, 0, (uintptr_t)payload, sizeof payload, &s),
                 TT_OK, "import legacy");
    CHECK(tt_storage_data(s) == payload, "imported data pointer");
    CHECK_EQ(tt_storage_nbytes(s), sizeof payload, "imported nbytes");
    tt_storage_retain(s);
    tt_storage_weak_retain(s);
    tt_storage_release(s);
    CHECK_EQ(probe.legacy_calls, 0, "legacy deleter calls while a strong reference remains");
    tt_storage_release(s);
    CHECK_EQ(probe.legacy_calls, 1, "legacy deleter calls after the last strong release");
    tt_storage_weak_release(s);
    CHECK_EQ(probe.legacy_calls, 1, "legacy deleter calls after the last weak release");

    CHECK_STATUS(tt_storage_from_dlpack(&probe.versioned, 1, (uintptr_t)payload, sizeof payload,
                                        &s), TT_OK, "import versioned");
    tt_storage_release(s);
    CHECK_EQ(probe.versioned_calls, 1, "versioned deleter calls");
    CHECK_EQ(probe.legacy_calls, 1, "the legacy deleter was not called again");

    CHECK_STATUS(tt_storage_from_dlpack(NULL, 0, 0, 0, &s), TT_ERR_INVALID_ARG, "import NULL");
    CHECK_STATUS(tt_storage_from_dlpack(&probe.legacy, 0, 0, 0, NULL), TT_ERR_INVALID_ARG,
                 "import with out NULL");
    CHECK_EQ(probe.legacy_calls, 1, "a failed import called the deleter");
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after the imports");

    /* Round trip: our own export imported back; dropping the import drops the original. */
    tt_storage *orig = NULL;
    CHECK_STATUS(tt_storage_new(tt_host_allocator(), 64, &orig), TT_OK, "storage");
    void *exported = NULL;
    const int64_t shape[1] = {16}, strides[1] = {1};
    CHECK_STATUS(tt_dlpack_export(orig, (uintptr_t)tt_storage_data(orig), 1, shape, strides,
                                  TT_FLOAT32, 0, &exported), TT_OK, "export for the round trip");
    tt_storage *imported = NULL;
    CHECK_STATUS(tt_storage_from_dlpack(exported, 0, (uintptr_t)tt_storage_data(orig), 64,
                                        &imported), TT_OK, "import of our own export");
    tt_storage_release(orig);
    CHECK_EQ(tt_storage_live_objects(), live0 + 2, "original kept alive by the import");
    tt_storage_release(imported);
    CHECK_EQ(tt_storage_live_objects(), live0, "live objects after the round trip");
}

int main(void) {
    test_copy_all_pairs_strided();
    test_copy_all_pairs_3d();
    test_half_round_trip_exhaustive();
    test_float_to_half_rounding();
    test_copy_broadcast();
    test_copy_degenerate_shapes();
    test_copy_invalid_args();
    test_copy_shape_overflow();
    test_rng_determinism();
    test_uniform_bounds();
    test_normal_moments();
    test_integers();
    test_random_invalid_args();
    test_dlpack_export();
    test_dlpack_import();
    return check_report("test_kernels");
}
