/*
 * manipulation.c: data-movement kernels for the manipulation family (see kernels/manipulation.h).
 *
 * None of these converts values, so the dtype only decides the element size: one set of loops
 * per size (1, 2, 4, 8 bytes), generated once by the ELEMENT_SIZES X-macro, serves all nine
 * dtypes. float16 needs no special case: its bits move as a uint16_t.
 *
 * tt_gather_axes turns each per-axis index table into a table of byte offsets once, then walks
 * the output with an odometer over the outer dims and a tight inner loop over the last one:
 * dst advances by its stride, src reads at row base + offset[j]. The cost is one table lookup
 * per element, the same for flip, roll, tile, repeat, repeat_interleave and the pads.
 *
 * tt_join_contiguous is cat and stack of contiguous inputs: one memcpy per (row, input) block,
 * all from one call (64 small tensors took 64 calls from Python before, ~45 us against torch's 7).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tt/tt.h"
#include "tt/kernels/manipulation.h"
#include "tt/kernels/parallel.h"

/* (bits, storage type) for each element size a dtype can have. */
#define ELEMENT_SIZES(X) X(8, uint8_t) X(16, uint16_t) X(32, uint32_t) X(64, uint64_t)

/* ------------------------------------------------------------------ row functions */

/* dst[j] = src_row[offsets[j]] for j < n; dst advances by dst_step bytes. */
typedef void (*gather_row_fn)(char *dst, int64_t dst_step, const char *src_row,
                              const int64_t *offsets, int64_t n);

/* dst[j] = src[j] for lo <= j < hi, 0 elsewhere, j < n. */
typedef void (*mask_row_fn)(char *dst, int64_t dst_step, const char *src, int64_t src_step,
                            int64_t n, int64_t lo, int64_t hi);

#define DEFINE_ROWS(BITS, T)                                                                     \
    static void gather_row_##BITS(char *dst, int64_t dst_step, const char *src_row,              \
                                  const int64_t *offsets, int64_t n) {                           \
        for (int64_t j = 0; j < n; j++) {                                                        \
            T value;                                                                             \
            memcpy(&value, src_row + offsets[j], sizeof(T));                                     \
            memcpy(dst, &value, sizeof(T));                                                      \
            dst += dst_step;                                                                     \
        }                                                                                        \
    }                                                                                            \
    static void mask_row_##BITS(char *dst, int64_t dst_step, const char *src, int64_t src_step, \
                                int64_t n, int64_t lo, int64_t hi) {                             \
        for (int64_t j = 0; j < n; j++) {                                                        \
            T value = 0;                                                                         \
            if (j >= lo && j < hi) {                                                             \
                memcpy(&value, src, sizeof(T));                                                  \
            }                                                                                    \
            memcpy(dst, &value, sizeof(T));                                                      \
            dst += dst_step;                                                                     \
            src += src_step;                                                                     \
        }                                                                                        \
    }
ELEMENT_SIZES(DEFINE_ROWS)

#define GATHER_CASE(BITS, T) case sizeof(T): return gather_row_##BITS;
static gather_row_fn gather_row(size_t itemsize) {
    switch (itemsize) {
    ELEMENT_SIZES(GATHER_CASE)
    default: return NULL;
    }
}

#define MASK_CASE(BITS, T) case sizeof(T): return mask_row_##BITS;
static mask_row_fn mask_row(size_t itemsize) {
    switch (itemsize) {
    ELEMENT_SIZES(MASK_CASE)
    default: return NULL;
    }
}

/* ------------------------------------------------------------------ checks */

static int valid_strides(int ndim, const int64_t *strides) {
    for (int d = 0; d < ndim; d++) {
        if (strides[d] < 0) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ gather along axes */

tt_status tt_gather_axes(int ndim, const int64_t *out_shape,
                         uintptr_t src, const int64_t *src_shape, const int64_t *src_strides,
                         const int64_t *index,
                         uintptr_t dst, const int64_t *dst_strides, int dtype) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (ndim < 0 || ndim > TT_MAX_DIMS ||
        (ndim > 0 && (out_shape == NULL || src_shape == NULL || src_strides == NULL ||
                      dst_strides == NULL))) {
        return TT_ERR_INVALID_ARG;
    }
    if (!valid_strides(ndim, src_strides) || !valid_strides(ndim, dst_strides)) {
        return TT_ERR_INVALID_ARG;
    }
    const size_t itemsize = tt_dtype_itemsize(dtype);
    gather_row_fn row = gather_row(itemsize);
    if (row == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    int64_t total = 0;       /* entries in all tables */
    for (int d = 0; d < ndim; d++) {
        if (out_shape[d] < 0 || src_shape[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (out_shape[d] == 0) {
            return TT_OK;    /* nothing to write (and no table need be valid) */
        }
        if (__builtin_add_overflow(total, out_shape[d], &total)) {
            return TT_ERR_OVERFLOW;
        }
    }
    if (src == 0 || dst == 0 || (total > 0 && index == NULL)) {
        return TT_ERR_INVALID_ARG;
    }
    if (ndim == 0) {
        memcpy((char *)dst, (const char *)src, itemsize);
        return TT_OK;
    }
    /* Validate every index and turn it into a byte offset into src. */
    int64_t *offsets = malloc((size_t)total * sizeof(int64_t));
    if (offsets == NULL) {
        return TT_ERR_NOMEM;
    }
    int64_t start[TT_MAX_DIMS];
    int64_t dst_step[TT_MAX_DIMS];
    for (int d = 0, k = 0; d < ndim; d++) {
        start[d] = k;
        int64_t step;
        if (__builtin_mul_overflow(src_strides[d], (int64_t)itemsize, &step) ||
            __builtin_mul_overflow(dst_strides[d], (int64_t)itemsize, &dst_step[d])) {
            free(offsets);
            return TT_ERR_OVERFLOW;
        }
        for (int64_t i = 0; i < out_shape[d]; i++, k++) {
            if (index[k] < 0 || index[k] >= src_shape[d]) {
                free(offsets);
                return TT_ERR_INDEX;
            }
            if (__builtin_mul_overflow(index[k], step, &offsets[k])) {
                free(offsets);
                return TT_ERR_OVERFLOW;
            }
        }
    }
    /* Odometer over dims 0..ndim-2; src_base / dst_base track the current row. */
    const int inner = ndim - 1;
    int64_t counter[TT_MAX_DIMS] = {0};
    char *dst_row = (char *)dst;
    for (;;) {
        const char *src_row = (const char *)src;
        for (int d = 0; d < inner; d++) {
            src_row += offsets[start[d] + counter[d]];
        }
        row(dst_row, dst_step[inner], src_row, offsets + start[inner], out_shape[inner]);
        int d = inner - 1;
        for (; d >= 0; d--) {
            counter[d]++;
            dst_row += dst_step[d];
            if (counter[d] < out_shape[d]) {
                break;
            }
            dst_row -= dst_step[d] * out_shape[d];
            counter[d] = 0;
        }
        if (d < 0) {
            break;
        }
    }
    free(offsets);
    return TT_OK;
}

/* ------------------------------------------------------------------ tril / triu */

tt_status tt_triangle(int ndim, const int64_t *shape,
                      uintptr_t src, const int64_t *src_strides,
                      uintptr_t dst, const int64_t *dst_strides,
                      int dtype, int64_t diagonal, int upper) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (ndim < 2 || ndim > TT_MAX_DIMS || shape == NULL || src_strides == NULL ||
        dst_strides == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    if (!valid_strides(ndim, src_strides) || !valid_strides(ndim, dst_strides)) {
        return TT_ERR_INVALID_ARG;
    }
    const int64_t itemsize = (int64_t)tt_dtype_itemsize(dtype);
    mask_row_fn row = mask_row((size_t)itemsize);
    if (row == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    int64_t src_step[TT_MAX_DIMS], dst_step[TT_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (shape[d] == 0) {
            return TT_OK;
        }
    }
    for (int d = 0; d < ndim; d++) {
        if (__builtin_mul_overflow(src_strides[d], itemsize, &src_step[d]) ||
            __builtin_mul_overflow(dst_strides[d], itemsize, &dst_step[d])) {
            return TT_ERR_OVERFLOW;
        }
    }
    if (src == 0 || dst == 0) {
        return TT_ERR_INVALID_ARG;
    }
    const int rows_dim = ndim - 2, cols_dim = ndim - 1;
    const int64_t rows = shape[rows_dim], cols = shape[cols_dim];
    /* Clamp the diagonal so that i + diagonal cannot overflow: beyond +-(rows + cols) every
       element is kept or every element is zeroed either way. */
    const int64_t limit = rows + cols;
    const int64_t k = diagonal > limit ? limit : diagonal < -limit ? -limit : diagonal;
    int64_t counter[TT_MAX_DIMS] = {0};
    const char *src_mat = (const char *)src;
    char *dst_mat = (char *)dst;
    for (;;) {
        for (int64_t i = 0; i < rows; i++) {
            /* tril keeps j <= i + k: [0, i + k + 1); triu keeps j >= i + k: [i + k, cols). */
            int64_t lo = upper ? i + k : 0;
            int64_t hi = upper ? cols : i + k + 1;
            row(dst_mat + i * dst_step[rows_dim], dst_step[cols_dim],
                src_mat + i * src_step[rows_dim], src_step[cols_dim], cols, lo, hi);
        }
        int d = rows_dim - 1;
        for (; d >= 0; d--) {
            counter[d]++;
            src_mat += src_step[d];
            dst_mat += dst_step[d];
            if (counter[d] < shape[d]) {
                break;
            }
            src_mat -= src_step[d] * shape[d];
            dst_mat -= dst_step[d] * shape[d];
            counter[d] = 0;
        }
        if (d < 0) {
            break;
        }
    }
    return TT_OK;
}

/* ------------------------------------------------------------------ joining (cat, stack) */

/* Joins below this many bytes run on the calling thread. */
#define JOIN_PARALLEL_BYTES ((int64_t)1 << 20)

typedef struct join_job {
    int64_t count, row;          /* inputs; elements of a dst row */
    const uintptr_t *srcs;
    const int64_t *blocks, *columns; /* each input's block, and where it starts in a row */
    size_t itemsize;
    char *dst;
} join_job;

/* Items [begin, end): item = row * count + input, in dst's memory order. */
static void join_items(int64_t begin, int64_t end, void *ctx) {
    const join_job *job = ctx;
    for (int64_t it = begin; it < end; it++) {
        const int64_t j = it / job->count, i = it % job->count;
        const int64_t block = job->blocks[i];
        if (block > 0) {
            memcpy(job->dst + (size_t)(j * job->row + job->columns[i]) * job->itemsize,
                   (const char *)job->srcs[i] + (size_t)(j * block) * job->itemsize, (size_t)block * job->itemsize);
        }
    }
}

tt_status tt_join_contiguous(int64_t count, const uintptr_t *srcs, const int64_t *blocks, int64_t outer,
                             int dtype, uintptr_t dst) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (count < 0 || outer < 0 || (count > 0 && (srcs == NULL || blocks == NULL))) {
        return TT_ERR_INVALID_ARG;
    }
    const size_t itemsize = tt_dtype_itemsize(dtype);
    int64_t *columns = malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t));
    if (columns == NULL) {
        return TT_ERR_NOMEM;
    }
    int64_t row = 0;
    for (int64_t i = 0; i < count; i++) {
        if (blocks[i] < 0 || (blocks[i] > 0 && srcs[i] == 0)) {
            free(columns);
            return TT_ERR_INVALID_ARG;
        }
        if (row > INT64_MAX - blocks[i]) {
            free(columns);
            return TT_ERR_OVERFLOW;
        }
        columns[i] = row;
        row += blocks[i];
    }
    if (row > 0 && outer > 0 && (dst == 0 || outer > INT64_MAX / row || outer * row > INT64_MAX / (int64_t)itemsize ||
                                 count > INT64_MAX / outer)) {
        free(columns);
        return dst == 0 ? TT_ERR_INVALID_ARG : TT_ERR_OVERFLOW;
    }
    if (row > 0 && outer > 0) {
        join_job job = {count, row, srcs, blocks, columns, itemsize, (char *)dst};
        const int64_t items = outer * count, bytes = outer * row * (int64_t)itemsize;
        /* about 256 KiB a chunk when the join is large enough to share */
        const int64_t grain = bytes < JOIN_PARALLEL_BYTES ? items : (items * ((int64_t)1 << 18)) / bytes + 1;
        tt_parallel_for(items, grain, join_items, &job);
    }
    free(columns);
    return TT_OK;
}
