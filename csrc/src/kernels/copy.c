/*
 * copy.c: the strided copy kernel, dst[i] = (dst dtype) src[i] for any strides and dtypes.
 *
 * It materializes views (contiguous(), clone(), reshape of a non-viewable tensor), converts
 * dtypes (to(dtype)), fills (a source with all strides 0 is a broadcast scalar) and writes
 * into views (t[1:, ::2] = x). Every later elementwise kernel has the same shape:
 *   1. validate the arguments and return a status (never abort);
 *   2. let tt_iter simplify the strides into outer dims + one inner row;
 *   3. pick a row function for the dtypes (a table generated once by macros, not by hand);
 *   4. run it.
 *
 * The conversion rows and their semantics are in cast_rows.h, compiled for the baseline here and
 * for AVX2 and AVX-512 in cast_avx2.c and cast_avx512.c.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_features.h"

#define CAST_TABLE tt_cast_table_baseline
#include "cast_rows.h"

/* The conversion rows of the widest instruction set this CPU has and the environment allows. */
static const tt_row_fn (*cast_table_for_cpu(void))[TT_NUM_DTYPES] { return TT_WIDEST_BUILD(tt_cast_table); }

/* ------------------------------------------------------------------ same-dtype fast rows
 * Without a conversion a copy only moves bytes, so one row per element size serves all dtypes.
 * When the source stride is 0 (a broadcast scalar) the loop is a fill the compiler vectorizes. */
#define DEFINE_MOVE(BITS)                                                                    \
    static void move_##BITS(char **data, const int64_t *strides, int64_t n, void *ctx) {    \
        (void)ctx;                                                                           \
        char *dst = data[0];                                                                 \
        const char *src = data[1];                                                           \
        if (strides[1] == 0 && strides[0] == (int64_t)sizeof(uint##BITS##_t)) {             \
            uint##BITS##_t value = *(const uint##BITS##_t *)src;                             \
            uint##BITS##_t *out = (uint##BITS##_t *)dst;                                     \
            for (int64_t i = 0; i < n; i++) {                                                \
                out[i] = value;                                                              \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        if (strides[0] == (int64_t)sizeof(uint##BITS##_t) && strides[0] == strides[1]) {    \
            memcpy(dst, src, (size_t)n * sizeof(uint##BITS##_t));                            \
            return;                                                                          \
        }                                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                    \
            *(uint##BITS##_t *)dst = *(const uint##BITS##_t *)src;                           \
            dst += strides[0];                                                               \
            src += strides[1];                                                               \
        }                                                                                    \
    }
DEFINE_MOVE(8)
DEFINE_MOVE(16)
DEFINE_MOVE(32)
DEFINE_MOVE(64)

/* ------------------------------------------------------------------ float16 <-> float32 with F16C
 * vcvtps2ph with imm 0 rounds to nearest even, like tt_float_to_half, and handles subnormals,
 * infinities and NaN payloads the same way (a NaN gets the quiet bit and keeps the top payload
 * bits). vcvtph2ps also matches tt_half_to_float except on signalling NaNs, which the hardware
 * quiets: a block of 8 holding one takes the scalar path, so every bit pattern converts exactly as
 * the generic code does (tested exhaustively in tests/ops/test_memory_kernels.py). Contiguous rows
 * only; strided rows take the generic functions. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

__attribute__((target("f16c,avx"))) static void f16c_float32_to_float16(char **data, const int64_t *strides,
                                                                         int64_t n, void *ctx) {
    if (strides[0] != 2 || strides[1] != 4) {
        cast_float32_to_float16(data, strides, n, ctx);
        return;
    }
    uint16_t *dst = (uint16_t *)data[0];
    const float *src = (const float *)data[1];
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), half);
    }
    for (; i < n; i++) {
        dst[i] = tt_float_to_half(src[i]);
    }
}

__attribute__((target("f16c,avx"))) static void f16c_float16_to_float32(char **data, const int64_t *strides,
                                                                         int64_t n, void *ctx) {
    if (strides[0] != 4 || strides[1] != 2) {
        cast_float16_to_float32(data, strides, n, ctx);
        return;
    }
    float *dst = (float *)data[0];
    const uint16_t *src = (const uint16_t *)data[1];
    const __m128i exp_quiet = _mm_set1_epi16(0x7E00), snan_exp = _mm_set1_epi16(0x7C00);
    const __m128i payload = _mm_set1_epi16(0x01FF), zero = _mm_setzero_si128();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i half = _mm_loadu_si128((const __m128i *)(src + i));
        /* signalling NaN: exponent all ones, quiet bit clear, payload nonzero */
        __m128i snan = _mm_andnot_si128(_mm_cmpeq_epi16(_mm_and_si128(half, payload), zero),
                                        _mm_cmpeq_epi16(_mm_and_si128(half, exp_quiet), snan_exp));
        if (_mm_movemask_epi8(snan) != 0) {
            for (int64_t k = i; k < i + 8; k++) {
                dst[k] = tt_half_to_float(src[k]);
            }
            continue;
        }
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(half));
    }
    for (; i < n; i++) {
        dst[i] = tt_half_to_float(src[i]);
    }
}
#endif

/* The row for a conversion: the F16C rows where the CPU has them, else the generic table. */
static tt_row_fn cast_row(int src_dtype, int dst_dtype) {
#if defined(__x86_64__) || defined(__i386__)
    if (src_dtype == TT_FLOAT32 && dst_dtype == TT_FLOAT16 && tt_cpu_use_f16c()) {
        return f16c_float32_to_float16;
    }
    if (src_dtype == TT_FLOAT16 && dst_dtype == TT_FLOAT32 && tt_cpu_use_f16c()) {
        return f16c_float16_to_float32;
    }
#endif
    return cast_table_for_cpu()[src_dtype][dst_dtype];
}

static tt_row_fn move_row(size_t itemsize) {
    switch (itemsize) {
    case 1: return move_8;
    case 2: return move_16;
    case 4: return move_32;
    default: return move_64;
    }
}

/* Large copies are split across threads by ranges of the outermost dimension, each chunk
   writing its own part of dst (tt_iter_parallel). */
typedef struct copy_job {
    const tt_iter *iter;
    char *base[2];
    tt_row_fn row;
} copy_job;

static void copy_chunk(int64_t begin, int64_t end, void *arg) {
    const copy_job *job = arg;
    tt_iter_run_range(job->iter, job->base, job->row, NULL, begin, end);
}

tt_status tt_copy_strided(int ndim, const int64_t *shape,
                          uintptr_t src, const int64_t *src_strides, int src_dtype,
                          uintptr_t dst, const int64_t *dst_strides, int dst_dtype) {
    if (src_dtype < 0 || src_dtype >= TT_NUM_DTYPES || dst_dtype < 0 ||
        dst_dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (ndim < 0 || ndim > TT_MAX_DIMS || (ndim > 0 && (shape == NULL || src_strides == NULL ||
                                                        dst_strides == NULL))) {
        return TT_ERR_INVALID_ARG;
    }
    const int64_t *strides[2] = {dst_strides, src_strides};
    const size_t itemsizes[2] = {tt_dtype_itemsize(dst_dtype), tt_dtype_itemsize(src_dtype)};
    tt_iter iter;
    tt_status status = tt_iter_init(&iter, ndim, shape, 2, strides, itemsizes);
    if (status != TT_OK) {
        return status;
    }
    if (iter.numel == 0) {
        return TT_OK;
    }
    if (src == 0 || dst == 0) {
        return TT_ERR_INVALID_ARG;
    }
    /* A broadcast scalar (every source stride 0) with a dtype change: convert the one element
       once, then fill with the same-dtype row, which the compiler vectorizes. */
    uint64_t converted = 0;
    int scalar_source = 1;
    for (int d = 0; d < ndim; d++) {
        scalar_source &= src_strides[d] == 0 || shape[d] == 1;
    }
    if (scalar_source && src_dtype != dst_dtype) {
        char *one[2] = {(char *)&converted, (char *)src};
        const int64_t unit[2] = {0, 0};
        tt_cast_table_baseline[src_dtype][dst_dtype](one, unit, 1, NULL);
        src = (uintptr_t)&converted;
        src_dtype = dst_dtype;
    }
    tt_row_fn row = src_dtype == dst_dtype ? move_row(itemsizes[0]) : cast_row(src_dtype, dst_dtype);
    iter.elementwise = 1;   /* a copy reads element i of the source only: transposed tiles pack */
    copy_job job = {&iter, {(char *)dst, (char *)src}, row};
    tt_iter_parallel(&iter, TT_ITER_GRAIN, 64, copy_chunk, &job);
    return TT_OK;
}
