/*
 * cast_rows.h: the row functions of dtype conversions (dst[i] = (dst dtype) src[i]) and their
 * table, indexed [source code][destination code].
 *
 * A template, not a header: copy.c includes it to compile the rows for the baseline instruction
 * set, cast_avx2.c and cast_avx512.c include it under their target pragmas, and copy.c picks the
 * widest table the CPU has (as elementwise.c does with its rows; the same conversions give the
 * same bits on every build, which tests/ops/test_elementwise_isa.py checks). Before including
 * it, a file defines CAST_TABLE, the name its table is exported under.
 *
 * Conversions follow C, made total where C leaves them undefined, with PyTorch's choices: a float
 * becomes an int8, int16 or int32 through int32 and a uint8 or int64 through int64; a value that
 * does not fit that type (or NaN) becomes its minimum, the x86 "integer indefinite" value
 * (INT32_MIN, INT64_MIN); narrower integers then wrap modulo 2^bits. Anything to bool is
 * (x != 0), so NaN is true.
 */
#include <stdint.h>

#include "half.h"
#include "strided_iter.h"

extern const tt_row_fn tt_cast_table_baseline[TT_NUM_DTYPES][TT_NUM_DTYPES];   /* copy.c */
extern const tt_row_fn tt_cast_table_avx2[TT_NUM_DTYPES][TT_NUM_DTYPES];       /* cast_avx2.c, x86 */
extern const tt_row_fn tt_cast_table_avx512[TT_NUM_DTYPES][TT_NUM_DTYPES];     /* cast_avx512.c, x86 */

/* The x86 truncating conversion to int32, made total: out of range or NaN gives INT32_MIN. */
static inline int64_t float_to_i32(double value) {
    if (!(value >= -2147483648.0 && value < 2147483648.0)) {
        return INT32_MIN;
    }
    return (int32_t)value;
}

static inline int64_t float_to_i64(double value) {
    /* 2^63 is exactly representable as a double; the valid range is [-2^63, 2^63). */
    if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0)) {
        return INT64_MIN;
    }
    return (int64_t)value;
}

/* ------------------------------------------------------------------ the dtype table
 * Each row: code, name, C storage type, kind. The kind selects how a value is loaded and
 * stored. Two identical lists exist because the C preprocessor will not expand a macro inside
 * its own expansion, and the cast table nests one list in the other. */
#define TT_DTYPE_LIST(X, ...)                        \
    X(__VA_ARGS__, TT_BOOL, bool, uint8_t, BOOLK)    \
    X(__VA_ARGS__, TT_INT8, int8, int8_t, INTK)      \
    X(__VA_ARGS__, TT_INT16, int16, int16_t, INTK)   \
    X(__VA_ARGS__, TT_INT32, int32, int32_t, INTK)   \
    X(__VA_ARGS__, TT_INT64, int64, int64_t, INTK)   \
    X(__VA_ARGS__, TT_UINT8, uint8, uint8_t, INTK)   \
    X(__VA_ARGS__, TT_FLOAT16, float16, uint16_t, HALFK) \
    X(__VA_ARGS__, TT_FLOAT32, float32, float, FLTK) \
    X(__VA_ARGS__, TT_FLOAT64, float64, double, FLTK)

#define TT_DTYPE_LIST_INNER(X, ...)                  \
    X(__VA_ARGS__, TT_BOOL, bool, uint8_t, BOOLK)    \
    X(__VA_ARGS__, TT_INT8, int8, int8_t, INTK)      \
    X(__VA_ARGS__, TT_INT16, int16, int16_t, INTK)   \
    X(__VA_ARGS__, TT_INT32, int32, int32_t, INTK)   \
    X(__VA_ARGS__, TT_INT64, int64, int64_t, INTK)   \
    X(__VA_ARGS__, TT_UINT8, uint8, uint8_t, INTK)   \
    X(__VA_ARGS__, TT_FLOAT16, float16, uint16_t, HALFK) \
    X(__VA_ARGS__, TT_FLOAT32, float32, float, FLTK) \
    X(__VA_ARGS__, TT_FLOAT64, float64, double, FLTK)

/* Loading a value of each kind. Bools load as 0/1, halves as float. */
/* (b + 255) >> 8 is 0 for 0 and 1 for 1..255: "b != 0" without the branch GCC emits for it,
   which mispredicts on every other element of a random mask (5 ns an element). */
#define LOAD_BOOLK(T, p) ((int64_t)(((uint32_t)(*(const uint8_t *)(p)) + 255u) >> 8))
#define LOAD_INTK(T, p) (*(const T *)(p))
#define LOAD_HALFK(T, p) tt_half_to_float(*(const uint16_t *)(p))
#define LOAD_FLTK(T, p) (*(const T *)(p))

/* A loaded value as an int64, for integer destinations. */
/* A loaded value as an int64, for an integer destination of type T. A float goes through int32
   for int8, int16 and int32 destinations and through int64 for uint8 and int64 ones, as PyTorch
   converts (so 3e9 is INT32_MIN as int32 and 0 as int16, and 2^32 + 255 is 255 as uint8). */
#define NARROW_SIGNED(T) ((T)-1 < 0 && sizeof(T) <= 4)
#define AS_INT_BOOLK(T, v) ((int64_t)(v))
#define AS_INT_INTK(T, v) ((int64_t)(v))
#define AS_INT_HALFK(T, v) (NARROW_SIGNED(T) ? float_to_i32((double)(v)) : float_to_i64((double)(v)))
#define AS_INT_FLTK(T, v) (NARROW_SIGNED(T) ? float_to_i32((double)(v)) : float_to_i64((double)(v)))

/* Storing into each kind; SK is the source kind. */
#define STORE_BOOLK(T, p, SK, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))
#define STORE_INTK(T, p, SK, v) (*(T *)(p) = (T)AS_INT_##SK(T, v))
#define STORE_HALFK(T, p, SK, v) (*(uint16_t *)(p) = tt_float_to_half((float)(v)))
#define STORE_FLTK(T, p, SK, v) (*(T *)(p) = (T)(v))

/* One row function per (source, destination) pair: data[0] is dst, data[1] is src. Both
   contiguous (casting a whole tensor) takes a loop with constant steps, which the compiler
   vectorizes where the instruction set has the conversion: the baseline build has float32 ->
   float64 ((256, 512): ~26 -> ~17 us), the AVX-512 one nearly every pair (float32 -> int32
   58 -> 11 us, int64 -> float32 27 -> 11, bool -> float32 39 -> 14). */
#define DEFINE_CAST(SC, SN, ST, SK, DC, DN, DT, DK)                                         \
    static void cast_##SN##_to_##DN(char **data, const int64_t *strides, int64_t n,         \
                                    void *ctx) {                                             \
        (void)ctx;                                                                           \
        char *dst = data[0];                                                                 \
        const char *src = data[1];                                                           \
        if (strides[0] == (int64_t)sizeof(DT) && strides[1] == (int64_t)sizeof(ST)) {       \
            for (int64_t i = 0; i < n; i++) {                                                \
                STORE_##DK(DT, dst + i * (int64_t)sizeof(DT), SK,                            \
                           LOAD_##SK(ST, src + i * (int64_t)sizeof(ST)));                    \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                    \
            STORE_##DK(DT, dst, SK, LOAD_##SK(ST, src));                                     \
            dst += strides[0];                                                               \
            src += strides[1];                                                               \
        }                                                                                    \
    }
#define DEFINE_CASTS_FROM(_, SC, SN, ST, SK) TT_DTYPE_LIST_INNER(DEFINE_CAST, SC, SN, ST, SK)
TT_DTYPE_LIST(DEFINE_CASTS_FROM, _)

/* The dispatch table, indexed [source code][destination code]. */
#define CAST_ENTRY(SC, SN, ST, SK, DC, DN, DT, DK) [DC] = cast_##SN##_to_##DN,
#define CAST_ROW(_, SC, SN, ST, SK) [SC] = {TT_DTYPE_LIST_INNER(CAST_ENTRY, SC, SN, ST, SK)},
const tt_row_fn CAST_TABLE[TT_NUM_DTYPES][TT_NUM_DTYPES] = {TT_DTYPE_LIST(CAST_ROW, _)};
