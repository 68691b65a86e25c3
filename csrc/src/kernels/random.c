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
 *   normal    Box-Muller: two uniforms give two independent N(0, 1) values.
 *   integers  Lemire's multiply-and-reject method gives unbiased integers in [0, range).
 */
#include <math.h>
#include <stdint.h>

#include "half.h"
#include "tt/tt.h"

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

static double load_float(const void *dst, int64_t i, int dtype) {
    switch (dtype) {
    case TT_FLOAT16: return tt_half_to_float(((const uint16_t *)dst)[i]);
    case TT_FLOAT32: return ((const float *)dst)[i];
    default: return ((const double *)dst)[i];
    }
}

/* Replaces element i by the next representable value below it, in its own dtype. */
static void step_down(void *dst, int64_t i, int dtype) {
    switch (dtype) {
    case TT_FLOAT16: {
        uint16_t *h = &((uint16_t *)dst)[i];
        if (*h == 0x0000u) {
            *h = 0x8001u;               /* +0 -> the negative subnormal closest to zero */
        } else if (*h & 0x8000u) {
            *h = (uint16_t)(*h + 1u);   /* negative: a larger magnitude is smaller */
        } else {
            *h = (uint16_t)(*h - 1u);
        }
        break;
    }
    case TT_FLOAT32: ((float *)dst)[i] = nextafterf(((float *)dst)[i], -INFINITY); break;
    default: ((double *)dst)[i] = nextafter(((double *)dst)[i], -INFINITY); break;
    }
}

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
    void *out = (void *)dst;
    for (int64_t i = 0; i < n; i++) {
        store_float(out, i, dtype, low + (high - low) * next_unit(gen));
        /* float32 and float16 round to nearest: a value just below `high` can round up to it. */
        while (high > low && load_float(out, i, dtype) >= high) {
            step_down(out, i, dtype);
        }
    }
    return TT_OK;
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
    void *out = (void *)dst;
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t i = 0; i < n; i += 2) {
        /* 1 - u lies in (0, 1], so the logarithm is finite. */
        double radius = sqrt(-2.0 * log(1.0 - next_unit(gen)));
        double angle = two_pi * next_unit(gen);
        store_float(out, i, dtype, mean + std * radius * cos(angle));
        if (i + 1 < n) {
            store_float(out, i + 1, dtype, mean + std * radius * sin(angle));
        }
    }
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
