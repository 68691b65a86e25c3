/*
 * dtype_list.h: how kernels load and store an element of each dtype, and the X-macro lists that
 * generate one function per dtype. Shared by the kernel files whose loops are written over these
 * lists (elementwise_rows.h, index.c; reduce.c uses the loads and stores with a list of its own shape).
 *
 * A list entry is (name, storage type, compute type, load, store, kind, code):
 *   B  bool      stored as uint8, loaded as 0/1 ints
 *   I  integers  computed in int64 and stored back with wrap-around
 *   F  floats    float32 in float, float64 in double, float16 loaded to float and rounded back
 * X is called as X(__VA_ARGS__, entry...) so that a caller can pass extra leading arguments
 * (an op name, say) through to every generated function.
 */
#ifndef TT_KERNELS_DTYPE_LIST_H
#define TT_KERNELS_DTYPE_LIST_H

#include <stdint.h>

#include "half.h"

#define LD_plain(T, p) (*(const T *)(p))
#define LD_bool(T, p) ((int)(*(const uint8_t *)(p) != 0))
#define LD_half(T, p) tt_half_to_float(*(const uint16_t *)(p))
#define ST_plain(T, p, v) (*(T *)(p) = (T)(v))
#define ST_bool(T, p, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))
#define ST_half(T, p, v) (*(uint16_t *)(p) = tt_float_to_half((float)(v)))

#define BOOL_DTYPES(X, ...) X(__VA_ARGS__, bool, uint8_t, int, LD_bool, ST_bool, B, TT_BOOL)
#define INT_DTYPES(X, ...)                                                  \
    X(__VA_ARGS__, int8, int8_t, int64_t, LD_plain, ST_plain, I, TT_INT8)    \
    X(__VA_ARGS__, int16, int16_t, int64_t, LD_plain, ST_plain, I, TT_INT16) \
    X(__VA_ARGS__, int32, int32_t, int64_t, LD_plain, ST_plain, I, TT_INT32) \
    X(__VA_ARGS__, int64, int64_t, int64_t, LD_plain, ST_plain, I, TT_INT64) \
    X(__VA_ARGS__, uint8, uint8_t, int64_t, LD_plain, ST_plain, I, TT_UINT8)
#define FLOAT_DTYPES(X, ...)                                                       \
    X(__VA_ARGS__, float16, uint16_t, float, LD_half, ST_half, F, TT_FLOAT16)      \
    X(__VA_ARGS__, float32, float, float, LD_plain, ST_plain, F, TT_FLOAT32)       \
    X(__VA_ARGS__, float64, double, double, LD_plain, ST_plain, F, TT_FLOAT64)
#define NUMERIC_DTYPES(X, ...) INT_DTYPES(X, __VA_ARGS__) FLOAT_DTYPES(X, __VA_ARGS__)
#define INTEGRAL_DTYPES(X, ...) BOOL_DTYPES(X, __VA_ARGS__) INT_DTYPES(X, __VA_ARGS__)
#define ALL_DTYPES(X, ...) BOOL_DTYPES(X, __VA_ARGS__) NUMERIC_DTYPES(X, __VA_ARGS__)

#endif /* TT_KERNELS_DTYPE_LIST_H */
