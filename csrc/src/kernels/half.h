/*
 * half.h: IEEE 754 binary16 <-> binary32 conversion, written out in integer arithmetic so it
 * works on every compiler and CPU (no _Float16, no F16C needed).
 *
 * binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
 * binary32: 1 sign bit, 8 exponent bits (bias 127), 23 mantissa bits.
 * float -> half rounds to nearest, ties to even, as hardware conversion does.
 */
#ifndef TT_HALF_H
#define TT_HALF_H

#include <stdint.h>
#include <string.h>

static inline float tt_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1Fu;
    uint32_t mantissa = h & 0x3FFu;
    uint32_t bits;
    if (exponent == 0x1Fu) {                       /* inf or NaN: keep the payload */
        bits = sign | 0x7F800000u | (mantissa << 13);
    } else if (exponent != 0) {                    /* normal: rebias the exponent */
        bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {                    /* signed zero */
        bits = sign;
    } else {                                       /* subnormal half: normalize it */
        exponent = 113u;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            exponent--;
        }
        bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
    }
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline uint16_t tt_float_to_half(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t exponent = (bits >> 23) & 0xFFu;
    uint32_t mantissa = bits & 0x7FFFFFu;
    if (exponent == 0xFFu) {                       /* inf stays inf; NaN stays a (quiet) NaN */
        return (uint16_t)(sign | 0x7C00u | (mantissa != 0 ? 0x200u | (mantissa >> 13) : 0));
    }
    int32_t half_exponent = (int32_t)exponent - 127 + 15;
    if (half_exponent >= 0x1F) {                   /* too large: overflow to infinity */
        return (uint16_t)(sign | 0x7C00u);
    }
    if (half_exponent <= 0) {                      /* subnormal half, or zero */
        if (half_exponent < -10) {
            return sign;                           /* below half the smallest subnormal */
        }
        mantissa |= 0x800000u;                     /* make the implicit bit explicit */
        uint32_t shift = (uint32_t)(14 - half_exponent);
        uint32_t result = mantissa >> shift;
        uint32_t remainder = mantissa & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (remainder > halfway || (remainder == halfway && (result & 1u))) {
            result++;
        }
        return (uint16_t)(sign | result);
    }
    uint32_t result = ((uint32_t)half_exponent << 10) | (mantissa >> 13);
    uint32_t remainder = mantissa & 0x1FFFu;
    if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u))) {
        result++;                                  /* may carry into the exponent: still right */
    }
    return (uint16_t)(sign | result);
}

#endif /* TT_HALF_H */
