/*
 * random.c: a seeded pseudo-random generator and the fills built on it.
 *
 * The generator is xoshiro256++ (Blackman and Vigna): 256 bits of state, period 2^256 - 1, fast
 * and statistically strong for simulation (not for cryptography). A 64-bit seed is expanded
 * into the state with splitmix64, which never yields the all-zero state xoshiro must avoid.
 *
 *   uniform   u = (top 53 bits) / 2^53 in [0, 1), then low + (high - low) * u. Rounding to a
 *             narrower float can reach `high` itself, so such values are stepped back below it,
 *             one step IN THE STORED PRECISION (a step in double would round right back).
 *   normal    Box-Muller: two uniforms give two independent N(0, 1) values. The uniforms are
 *             drawn in order, a block at a time, and the pairs transformed on the threads, so
 *             the values do not depend on the thread count.
 *   integers  Lemire's multiply-and-reject method gives unbiased integers in [0, range).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu_features.h"
#include "half.h"
#include "tt/tt.h"
#include "tt/kernels/parallel.h"
#include "wide_math.h"

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void tt_generator_seed(tt_generator *gen, uint64_t seed) {
    uint64_t state = seed;
    for (int i = 0; i < 4; i++) {
        gen->s[i] = splitmix64(&state);
    }
}

static inline uint64_t next_u64(tt_generator *gen) {
    uint64_t *s = gen->s;
    uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1) with 53 random bits: every double of the form k / 2^53. */
static inline double next_unit(tt_generator *gen) {
    return (double)(next_u64(gen) >> 11) * 0x1.0p-53;
}

/* Unbiased integer in [0, range), range >= 1 (Lemire 2019). */
static uint64_t next_below(tt_generator *gen, uint64_t range) {
    __uint128_t product = (__uint128_t)next_u64(gen) * range;
    uint64_t low = (uint64_t)product;
    if (low < range) {
        uint64_t threshold = (0 - range) % range;
        while (low < threshold) {
            product = (__uint128_t)next_u64(gen) * range;
            low = (uint64_t)product;
        }
    }
    return (uint64_t)(product >> 64);
}

/* Writes a double into element i of a float array of the given dtype. */
static void store_float(void *dst, int64_t i, int dtype, double value) {
    switch (dtype) {
    case TT_FLOAT16: ((uint16_t *)dst)[i] = tt_float_to_half((float)value); break;
    case TT_FLOAT32: ((float *)dst)[i] = (float)value; break;
    default: ((double *)dst)[i] = value; break;
    }
}

/* The next float16 below h (bits), as nextafter does for float and double. */
static uint16_t half_down(uint16_t h) {
    if (h == 0x0000u) {
        return 0x8001u;               /* +0 -> the negative subnormal closest to zero */
    }
    return (h & 0x8000u) ? (uint16_t)(h + 1u) : (uint16_t)(h - 1u); /* negative: a larger magnitude */
}

static inline double double_from_double(double v) { return v; }
static inline double double_down(double v) { return nextafter(v, -INFINITY); }
static inline float float_from_double(double v) { return (float)v; }
static inline double double_from_float(float v) { return v; }
static inline float float_down(float v) { return nextafterf(v, -INFINITY); }
static inline uint16_t half_from_double(double v) { return tt_float_to_half((float)v); }
static inline double double_from_half(uint16_t v) { return tt_half_to_float(v); }

static int is_float_dtype(int dtype) {
    return dtype == TT_FLOAT16 || dtype == TT_FLOAT32 || dtype == TT_FLOAT64;
}

static tt_status check_fill(tt_generator *gen, uintptr_t dst, int64_t n) {
    if (gen == NULL || n < 0 || (n > 0 && dst == 0)) {
        return TT_ERR_INVALID_ARG;
    }
    return TT_OK;
}

/* The checks every floating-point fill shares: a valid destination and a float dtype. */
static tt_status check_float_fill(tt_generator *gen, uintptr_t dst, int64_t n, int dtype) {
    tt_status status = check_fill(gen, dst, n);
    if (status == TT_OK && !is_float_dtype(dtype)) {
        status = TT_ERR_UNSUPPORTED_DTYPE;
    }
    return status;
}

tt_status tt_random_uniform(tt_generator *gen, uintptr_t dst, int64_t n, int dtype,
                            double low, double high) {
    tt_status status = check_float_fill(gen, dst, n, dtype);
    if (status != TT_OK) {
        return status;
    }
    if (!(low <= high) || !isfinite(high - low)) {
        return TT_ERR_INVALID_ARG;
    }
    /* One loop per dtype, the generator's state in a local copy (in registers, not reloaded
       after each store): 1M float32, ~2.4 -> ~1 ms, the same values. A value rounded to the
       dtype can land on `high` (round to nearest), and is then moved down to the one below. */
    tt_generator local = *gen;
#define UNIFORM_FILL(T, TO, FROM, DOWN)                                    \
    for (int64_t i = 0; i < n; i++) {                                      \
        T v = TO(low + (high - low) * next_unit(&local));                  \
        while (high > low && FROM(v) >= high) {                            \
            v = DOWN(v);                                                   \
        }                                                                  \
        ((T *)dst)[i] = v;                                                 \
    }
    switch (dtype) {
    case TT_FLOAT16: UNIFORM_FILL(uint16_t, half_from_double, double_from_half, half_down) break;
    case TT_FLOAT32: UNIFORM_FILL(float, float_from_double, double_from_float, float_down) break;
    default: UNIFORM_FILL(double, double_from_double, double_from_double, double_down) break;
    }
#undef UNIFORM_FILL
    *gen = local;
    return TT_OK;
}

/* Pairs per block of uniforms drawn before a parallel transform (1 MiB of doubles), and the pairs
   below which the transform stays on one thread. */
#define NORMAL_BLOCK 65536
#define NORMAL_PARALLEL_MIN 2048
#define NORMAL_SMALL_BLOCK 256 /* on the stack, for small fills (or when malloc fails) */

/* Box-Muller over `count` pairs of uniforms in place: u[2k], u[2k + 1] become
   mean + (std r) cos(a) and mean + (std r) sin(a), r = sqrt(-2 log(1 - u[2k])) (1 - u is in
   (0, 1], so the log is finite), a = 2 pi u[2k + 1]. wide_math.h's log and sincos vectorize, so
   the loop is compiled for the baseline, AVX2 and AVX-512 and the widest this CPU has runs, as
   the elementwise rows; contraction into fused multiply-adds is off, so every build gives the
   same values. (1024, 1024) float32 randn: ~6.9 -> ~3.6 ms (the C library's log, cos and sin
   before), now bound by the sequential generator. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#define DEFINE_NORMAL_TRANSFORM(NAME, TARGET)                                                  \
    TARGET static void NAME(double *u, int64_t count, double mean, double std) {              \
        for (int64_t k = 0; k < count; k++) {                                                 \
            const double radius = std * sqrt(-2.0 * wd_log_finite(1.0 - u[2 * k]));            \
            double sin_a, cos_a;                                                              \
            wide_sincos(6.283185307179586476925286766559 * u[2 * k + 1], &sin_a, &cos_a);    \
            u[2 * k] = mean + radius * cos_a;                                                 \
            u[2 * k + 1] = mean + radius * sin_a;                                             \
        }                                                                                     \
    }
DEFINE_NORMAL_TRANSFORM(normal_transform_baseline, )
#if TT_HAVE_X86
DEFINE_NORMAL_TRANSFORM(normal_transform_avx2, __attribute__((target("avx2"))))
DEFINE_NORMAL_TRANSFORM(normal_transform_avx512,
                        __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512"))))
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

typedef void (*normal_transform_fn)(double *u, int64_t count, double mean, double std);

typedef struct normal_job {
    void *out;
    int64_t n;
    int dtype;
    double mean, std;
    double *units;   /* the block's uniforms, two a pair */
    int64_t first;   /* the block's first pair */
    normal_transform_fn transform;
} normal_job;

/* Pairs [begin, end) of the current block: transformed in place, then stored (elements 2p and
   2p + 1 < n of the output). */
static void normal_pairs(int64_t begin, int64_t end, void *arg) {
    const normal_job *job = arg;
    double *u = job->units + 2 * begin;
    job->transform(u, end - begin, job->mean, job->std);
    const int64_t first = 2 * (job->first + begin);
    const int64_t count = 2 * (end - begin) < job->n - first ? 2 * (end - begin) : job->n - first;
    switch (job->dtype) {
    case TT_FLOAT16:
        for (int64_t i = 0; i < count; i++) {
            ((uint16_t *)job->out)[first + i] = tt_float_to_half((float)u[i]);
        }
        break;
    case TT_FLOAT32:
        for (int64_t i = 0; i < count; i++) {
            ((float *)job->out)[first + i] = (float)u[i];
        }
        break;
    default:
        for (int64_t i = 0; i < count; i++) {
            ((double *)job->out)[first + i] = u[i];
        }
        break;
    }
}

tt_status tt_random_normal(tt_generator *gen, uintptr_t dst, int64_t n, int dtype,
                           double mean, double std) {
    tt_status status = check_float_fill(gen, dst, n, dtype);
    if (status != TT_OK) {
        return status;
    }
    if (!(std >= 0.0) || !isfinite(std) || !isfinite(mean)) {
        return TT_ERR_INVALID_ARG;
    }
    /* The generator is sequential, the transform (a log, a sqrt, a cosine and a sine a pair) is
       most of the time: each block's uniforms are drawn in order, then its pairs are transformed
       on the threads. Pair p still takes uniforms 2p and 2p + 1, so the values do not depend on
       the thread count or the block size. */
    double small[2 * NORMAL_SMALL_BLOCK];
    const int64_t pairs = (n + 1) / 2;
    double *units = pairs > NORMAL_SMALL_BLOCK ? malloc((size_t)(2 * NORMAL_BLOCK) * sizeof(double)) : NULL;
    const int64_t block = units != NULL ? NORMAL_BLOCK : NORMAL_SMALL_BLOCK;
    normal_job job = {(void *)dst, n, dtype, mean, std, units != NULL ? units : small, 0,
                      TT_WIDEST_BUILD(normal_transform)};
    for (int64_t first = 0; first < pairs; first += block) {
        const int64_t count = pairs - first < block ? pairs - first : block;
        tt_generator local = *gen; /* its state in registers, not reloaded after each store */
        for (int64_t k = 0; k < 2 * count; k++) {
            job.units[k] = next_unit(&local);
        }
        *gen = local;
        job.first = first;
        tt_parallel_for(count, NORMAL_PARALLEL_MIN, normal_pairs, &job);
    }
    free(units);
    return TT_OK;
}

tt_status tt_random_integers(tt_generator *gen, uintptr_t dst, int64_t n, int dtype,
                             int64_t low, int64_t high) {
    tt_status status = check_fill(gen, dst, n);
    if (status != TT_OK) {
        return status;
    }
    if (dtype == TT_BOOL || dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (high <= low) {
        return TT_ERR_INVALID_ARG;
    }
    /* high - low may exceed INT64_MAX; in unsigned arithmetic it is exact. */
    uint64_t range = (uint64_t)high - (uint64_t)low;
    char *out = (char *)dst;
    for (int64_t i = 0; i < n; i++) {
        int64_t value = (int64_t)((uint64_t)low + next_below(gen, range));
        switch (dtype) {
        case TT_INT8: ((int8_t *)out)[i] = (int8_t)value; break;
        case TT_INT16: ((int16_t *)out)[i] = (int16_t)value; break;
        case TT_INT32: ((int32_t *)out)[i] = (int32_t)value; break;
        case TT_INT64: ((int64_t *)out)[i] = value; break;
        case TT_UINT8: ((uint8_t *)out)[i] = (uint8_t)value; break;
        default: store_float(out, i, dtype, (double)value); break;
        }
    }
    return TT_OK;
}
