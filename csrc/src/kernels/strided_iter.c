/* strided_iter.c: see strided_iter.h for the idea. */
#include <stdlib.h>

#include "strided_iter.h"
#include "tt/kernels/parallel.h"

#include "cpu_features.h"

static void swap_dims(tt_iter *iter, int a, int b) {
    int64_t size = iter->shape[a];
    iter->shape[a] = iter->shape[b];
    iter->shape[b] = size;
    for (int k = 0; k < iter->noperands; k++) {
        int64_t stride = iter->strides[k][a];
        iter->strides[k][a] = iter->strides[k][b];
        iter->strides[k][b] = stride;
    }
}

/* True when dim `a` should sit outside dim `b`: operand 0's stride decides, later operands
   break ties (a broadcast output dimension has stride 0 in no operand but the inputs). */
static int should_be_outer(const tt_iter *iter, int a, int b) {
    for (int k = 0; k < iter->noperands; k++) {
        if (iter->strides[k][a] != iter->strides[k][b]) {
            return iter->strides[k][a] > iter->strides[k][b];
        }
    }
    return 0;
}

/* Tile sizes, in elements. A tile row of tile_cols elements touches tile_cols cache lines of a
   transposed input; TILE_ROWS rows later those lines are used up (TILE_ROWS * itemsize bytes of
   each: two lines for 4-byte elements). Tiles of 32 x 256 (32 x 128 for 8-byte elements) measured
   best on the 4096^2 float32 a.T + b and x.T.contiguous() among 8..64 x 64..2048
   (docs/performance_memory.md); a packed tile is then PACK_BYTES = 32 KiB of stack per input. */
enum { TILE_ROWS = 32, TILE_COLS = 256, BLOCK_MIN_SPAN = 16 << 10, MAX_ITEMSIZE = 8,
       PACK_BYTES = TILE_ROWS * TILE_COLS * 4 };

/* Blocks the last two dims when some operand is walked "against the grain" there: its stride
   along the row is larger than along the next dim out, and one row of it spans more than
   BLOCK_MIN_SPAN bytes (smaller spans stay in L1 from one row to the next anyway). */
static void choose_tiles(tt_iter *iter) {
    if (iter->ndim < 2) {
        return;
    }
    const int inner = iter->ndim - 1, mid = iter->ndim - 2;
    if (iter->shape[inner] < 16 || iter->shape[mid] < 8) {
        return;
    }
    for (int k = 0; k < iter->noperands; k++) {
        int64_t along = iter->strides[k][inner], across = iter->strides[k][mid], span;
        if (along > across && !__builtin_mul_overflow(along, iter->shape[inner], &span) &&
            span > BLOCK_MIN_SPAN) {
            iter->tile_rows = TILE_ROWS;
            if (k > 0 && iter->itemsizes[k] <= MAX_ITEMSIZE) {
                iter->pack_mask |= 1u << k;
            }
        }
    }
    if (iter->tile_rows > 0) {
        int64_t widest = 1;    /* the widest packed element decides how many columns fit */
        for (int k = 0; k < iter->noperands; k++) {
            if (((iter->pack_mask >> k) & 1u) && iter->itemsizes[k] > widest) {
                widest = iter->itemsizes[k];
            }
        }
        iter->tile_cols = widest > 4 ? TILE_COLS / 2 : TILE_COLS;
    }
}

tt_status tt_iter_init(tt_iter *iter, int ndim, const int64_t *shape, int noperands,
                       const int64_t *const *elem_strides, const size_t *itemsizes) {
    if (ndim < 0 || ndim > TT_MAX_DIMS || noperands < 1 || noperands > TT_ITER_MAX_OPERANDS) {
        return TT_ERR_INVALID_ARG;
    }
    iter->noperands = noperands;
    iter->numel = 1;
    iter->tile_rows = 0;
    iter->tile_cols = 0;
    iter->pack_mask = 0;
    iter->elementwise = 0;
    for (int k = 0; k < noperands; k++) {
        iter->itemsizes[k] = (int64_t)itemsizes[k];
    }
    /* An empty shape has nothing to visit, whatever its other sizes: stop before any product
       of sizes or strides is formed (an empty (2^62, 4, 0) tensor is valid, its products not). */
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (shape[d] == 0) {
            iter->numel = 0;
        }
    }
    if (iter->numel == 0) {
        iter->ndim = 1;
        iter->shape[0] = 0;
        return TT_OK;
    }
    int kept = 0;
    for (int d = 0; d < ndim; d++) {
        if (__builtin_mul_overflow(iter->numel, shape[d], &iter->numel)) {
            return TT_ERR_OVERFLOW;
        }
        if (shape[d] == 1) {
            continue;                                   /* step 1: drop size-1 dims */
        }
        iter->shape[kept] = shape[d];
        for (int k = 0; k < noperands; k++) {
            if (__builtin_mul_overflow(elem_strides[k][d], (int64_t)itemsizes[k], &iter->strides[k][kept])) {
                return TT_ERR_OVERFLOW;
            }
        }
        kept++;
    }
    /* Step 2: insertion sort, outermost (largest output stride) first. Stable, and ndim is
       small, so the simple sort is the right one. */
    iter->ndim = kept;
    for (int i = 1; i < kept; i++) {
        for (int j = i; j > 0 && should_be_outer(iter, j, j - 1); j--) {
            swap_dims(iter, j, j - 1);
        }
    }
    /* Step 3: merge dim d into dim d+1 when, for every operand, stepping once in d is the
       same as stepping shape[d+1] times in d+1. */
    int out = 0;
    for (int d = 1; d < kept; d++) {
        int mergeable = 1;
        for (int k = 0; k < noperands; k++) {
            int64_t span;   /* an overflowing product cannot equal a real stride: don't merge */
            if (__builtin_mul_overflow(iter->strides[k][d], iter->shape[d], &span) ||
                iter->strides[k][out] != span) {
                mergeable = 0;
                break;
            }
        }
        if (mergeable) {
            iter->shape[out] *= iter->shape[d];
            for (int k = 0; k < noperands; k++) {
                iter->strides[k][out] = iter->strides[k][d];
            }
        } else {
            out++;
            iter->shape[out] = iter->shape[d];
            for (int k = 0; k < noperands; k++) {
                iter->strides[k][out] = iter->strides[k][d];
            }
        }
    }
    iter->ndim = kept == 0 ? 1 : out + 1;
    if (kept == 0) {                                    /* a scalar (or all size-1): one row of 1 */
        iter->shape[0] = 1;
        for (int k = 0; k < noperands; k++) {
            iter->strides[k][0] = 0;
        }
    }
    choose_tiles(iter);
    return TT_OK;
}

/* Copies a rows x cols tile (element (i, j) at src + i * across + j * along) into dst, row-major.
   The source is read down its columns (j outer, i inner): along a transposed input's memory. */
#define DEFINE_PACK(BITS)                                                                           \
    static void pack_##BITS(char *dst, const char *src, int64_t rows, int64_t cols, int64_t across, \
                            int64_t along) {                                                        \
        uint##BITS##_t *out = (uint##BITS##_t *)dst;                                                \
        for (int64_t j = 0; j < cols; j++) {                                                        \
            const char *column = src + j * along;                                                   \
            for (int64_t i = 0; i < rows; i++) {                                                    \
                out[i * cols + j] = *(const uint##BITS##_t *)(column + i * across);                 \
            }                                                                                       \
        }                                                                                           \
    }
DEFINE_PACK(8)
DEFINE_PACK(16)
DEFINE_PACK(32)
DEFINE_PACK(64)

#if TT_HAVE_X86
#include <immintrin.h>

/* 4-byte elements whose columns are contiguous (across == 4), rows and cols multiples of 8: 8x8
   blocks transposed in AVX registers (8 column loads, 24 shuffles, 8 row stores). */
__attribute__((target("avx2"))) static void pack_32_avx2(char *dst, const char *src, int64_t rows, int64_t cols,
                                                         int64_t along) {
    float *out = (float *)dst;
    for (int64_t j = 0; j < cols; j += 8) {
        for (int64_t i = 0; i < rows; i += 8) {
            const char *s = src + j * along + i * 4;
            __m256 r0 = _mm256_loadu_ps((const float *)(s + 0 * along));
            __m256 r1 = _mm256_loadu_ps((const float *)(s + 1 * along));
            __m256 r2 = _mm256_loadu_ps((const float *)(s + 2 * along));
            __m256 r3 = _mm256_loadu_ps((const float *)(s + 3 * along));
            __m256 r4 = _mm256_loadu_ps((const float *)(s + 4 * along));
            __m256 r5 = _mm256_loadu_ps((const float *)(s + 5 * along));
            __m256 r6 = _mm256_loadu_ps((const float *)(s + 6 * along));
            __m256 r7 = _mm256_loadu_ps((const float *)(s + 7 * along));
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *o = out + i * cols + j;
            _mm256_storeu_ps(o + 0 * cols, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(o + 1 * cols, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(o + 2 * cols, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(o + 3 * cols, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(o + 4 * cols, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(o + 5 * cols, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(o + 6 * cols, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(o + 7 * cols, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    }
}
#endif


static void pack_tile(char *dst, const char *src, int64_t itemsize, int64_t rows, int64_t cols, int64_t across,
                      int64_t along) {
#if TT_HAVE_X86
    if (itemsize == 4 && across == 4 && rows % 8 == 0 && cols % 8 == 0 && tt_cpu_use_avx2()) {
        pack_32_avx2(dst, src, rows, cols, along);
        return;
    }
#endif
    switch (itemsize) {
    case 1: pack_8(dst, src, rows, cols, across, along); break;
    case 2: pack_16(dst, src, rows, cols, across, along); break;
    case 4: pack_32(dst, src, rows, cols, across, along); break;
    default: pack_64(dst, src, rows, cols, across, along); break;
    }
}

/* Visits the tiles of the last two dims (mid = ndim-2 restricted to [mid_lo, mid_hi), inner =
   ndim-1 whole); data[k] points at operand k's element (mid_lo, 0) of this 2-D slice. */
static void run_tiles(const tt_iter *iter, char *const *data, const int64_t *row_strides, int64_t mid_lo,
                      int64_t mid_hi, tt_row_fn row_fn, void *ctx) {
    const int inner = iter->ndim - 1, mid = iter->ndim - 2, nop = iter->noperands;
    const int64_t cols = iter->shape[inner], tr = iter->tile_rows, tc = iter->tile_cols;
    const unsigned packed = iter->elementwise ? iter->pack_mask : 0u;
    /* 64-byte aligned so that packed rows start on cache lines (and vector loads may align). */
    _Alignas(64) char buffers[TT_ITER_MAX_OPERANDS - 1][PACK_BYTES];
    int64_t strides[TT_ITER_MAX_OPERANDS];
    char *p[TT_ITER_MAX_OPERANDS];
    for (int k = 0; k < nop; k++) {
        strides[k] = (packed >> k) & 1u ? iter->itemsizes[k] : row_strides[k];
    }
    for (int64_t i0 = mid_lo; i0 < mid_hi; i0 += tr) {
        const int64_t i1 = i0 + tr < mid_hi ? i0 + tr : mid_hi;
        for (int64_t j0 = 0; j0 < cols; j0 += tc) {
            const int64_t n = cols - j0 < tc ? cols - j0 : tc;
            for (int k = 1; k < nop; k++) {
                if ((packed >> k) & 1u) {
                    pack_tile(buffers[k - 1], data[k] + (i0 - mid_lo) * iter->strides[k][mid] + j0 * row_strides[k],
                              iter->itemsizes[k], i1 - i0, n, iter->strides[k][mid], row_strides[k]);
                }
            }
            for (int64_t i = i0; i < i1; i++) {
                for (int k = 0; k < nop; k++) {
                    p[k] = (packed >> k) & 1u ? buffers[k - 1] + (i - i0) * n * iter->itemsizes[k]
                                              : data[k] + (i - mid_lo) * iter->strides[k][mid] + j0 * row_strides[k];
                }
                row_fn(p, strides, n, ctx);
            }
        }
    }
}

void tt_iter_run_range(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx, int64_t begin,
                       int64_t end) {
    if (iter->numel == 0) {
        return;
    }
    begin = begin < 0 ? 0 : begin;
    end = end > iter->shape[0] ? iter->shape[0] : end;
    if (begin >= end) {
        return;
    }
    const int nop = iter->noperands, inner = iter->ndim - 1;
    const int blocked = iter->tile_rows > 0;
    int64_t row_strides[TT_ITER_MAX_OPERANDS];
    char *data[TT_ITER_MAX_OPERANDS];
    for (int k = 0; k < nop; k++) {
        row_strides[k] = iter->strides[k][inner];
        data[k] = base[k] + begin * iter->strides[k][0];
    }
    if (iter->ndim == 1) {                              /* the range is a slice of the one row */
        row_fn(data, row_strides, end - begin, ctx);
        return;
    }
    /* The odometer runs over dims [0, body): the body is one row, or a tiled 2-D slice. */
    const int body = blocked ? inner - 1 : inner;
    if (body == 0) {                                    /* blocked 2-D: the range is tile rows */
        run_tiles(iter, data, row_strides, begin, end, row_fn, ctx);
        return;
    }
    int64_t counter[TT_MAX_DIMS] = {0};
    counter[0] = begin;
    for (;;) {
        if (blocked) {
            run_tiles(iter, data, row_strides, 0, iter->shape[inner - 1], row_fn, ctx);
        } else {
            row_fn(data, row_strides, iter->shape[inner], ctx);
        }
        /* Advance the outer counter like an odometer, fixing up each operand's address. */
        int d = body - 1;
        for (; d >= 0; d--) {
            counter[d]++;
            for (int k = 0; k < nop; k++) {
                data[k] += iter->strides[k][d];
            }
            const int64_t lo = d == 0 ? begin : 0, hi = d == 0 ? end : iter->shape[d];
            if (counter[d] < hi) {
                break;
            }
            for (int k = 0; k < nop; k++) {
                data[k] -= iter->strides[k][d] * (hi - lo);
            }
            counter[d] = lo;
        }
        if (d < 0) {
            return;
        }
    }
}

void tt_iter_run(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx) {
    tt_iter_run_range(iter, base, row_fn, ctx, 0, iter->shape[0]);
}

typedef struct block_job {
    tt_iter_chunk_fn fn;
    void *ctx;
    int64_t outer, block;
} block_job;

/* Units [begin, end) of `block` indices each become the dimension-0 range they cover. */
static void run_blocks(int64_t begin, int64_t end, void *arg) {
    const block_job *job = arg;
    const int64_t last = end * job->block;
    job->fn(begin * job->block, last < job->outer ? last : job->outer, job->ctx);
}

void tt_iter_parallel(const tt_iter *iter, int64_t grain, int64_t block, tt_iter_chunk_fn chunk_fn, void *ctx) {
    if (iter->numel == 0) {
        return;
    }
    const int64_t outer = iter->shape[0];
    int shared_output = 0;
    for (int d = 0; d < iter->ndim; d++) {
        shared_output |= iter->strides[0][d] == 0 && iter->shape[d] > 1;
    }
    if (shared_output || iter->numel <= grain || outer < 2) {
        chunk_fn(0, outer, ctx);
        return;
    }
    const int64_t per_index = iter->numel / outer;              /* elements under one index of dim 0 */
    const int64_t unit = iter->ndim == 1 && block > 1 ? block : 1;
    const int64_t grain_indices = (grain + per_index - 1) / per_index;
    const int64_t grain_units = (grain_indices + unit - 1) / unit;
    block_job job = {chunk_fn, ctx, outer, unit};
    tt_parallel_for((outer - 1) / unit + 1, grain_units < 1 ? 1 : grain_units, run_blocks, &job);
}
