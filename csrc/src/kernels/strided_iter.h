/*
 * strided_iter.h: the one N-d loop every elementwise kernel runs on.
 *
 * A kernel sees its operands as (address, strides) over a common shape. Looping over all N
 * dimensions element by element is slow, so the iterator first simplifies the problem:
 *   1. dimensions of size 1 are dropped (they contribute nothing to any address);
 *   2. dimensions are ordered so that operand 0 (the output) is walked in memory order, the
 *      smallest stride innermost: writes then stream through memory;
 *   3. neighbouring dimensions that are contiguous with each other in EVERY operand are merged,
 *      so a contiguous tensor of any shape becomes one long row.
 * What remains is an outer counter over ndim-1 dimensions and an inner "row" of shape[ndim-1]
 * elements, which the kernel processes with a tight loop taking byte strides.
 *
 * Operands are at most TT_ITER_MAX_OPERANDS; strides are converted from elements to bytes.
 */
#ifndef TT_STRIDED_ITER_H
#define TT_STRIDED_ITER_H

#include <stdint.h>

#include "tt/tt.h"

#define TT_ITER_MAX_OPERANDS 4

typedef struct tt_iter {
    int ndim;                                               /* >= 1 after init */
    int noperands;
    int64_t numel;
    int64_t shape[TT_MAX_DIMS];
    int64_t strides[TT_ITER_MAX_OPERANDS][TT_MAX_DIMS];    /* bytes */
} tt_iter;

/* The inner loop: `n` elements, operand k at data[k] advancing by strides[k] bytes. */
typedef void (*tt_row_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

/* Sets up `iter`. elem_strides[k] are operand k's strides in elements and itemsizes[k] its
   element size. Fails with TT_ERR_INVALID_ARG for a bad ndim, a negative size or too many
   operands. */
tt_status tt_iter_init(tt_iter *iter, int ndim, const int64_t *shape, int noperands,
                       const int64_t *const *elem_strides, const size_t *itemsizes);

/* Calls row_fn once per row, with every operand's address for that row. `base` holds each
   operand's address of element (0, ..., 0). */
void tt_iter_run(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx);

/* Like tt_iter_run, for the elements [begin, end) of the iteration order only (row-major over
   iter->shape, the row innermost): a row cut by a bound is passed as a shorter row. Disjoint
   ranges write disjoint parts of operand 0 whenever the output has no stride-0 dimension, so
   tt_parallel_for can run ranges on several threads. 0 <= begin <= end <= iter->numel. */
void tt_iter_run_range(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx, int64_t begin,
                       int64_t end);

/* A piece of a threaded iteration: the elements [begin, end) of iter's order, with ctx. */
typedef void (*tt_iter_chunk_fn)(int64_t begin, int64_t end, void *ctx);

/* Splits the iteration's elements into chunks of at least `grain` elements, every chunk but
   the last a multiple of `block` elements (so chunks start on aligned addresses), and runs
   chunk_fn on them through tt_parallel_for. When operand 0 has a stride-0 dimension (several
   elements write one address) it runs chunk_fn(0, numel) on the calling thread instead, so
   the last write still wins as in tt_iter_run. Borrows everything. */
void tt_iter_parallel(const tt_iter *iter, int64_t grain, int64_t block, tt_iter_chunk_fn chunk_fn, void *ctx);

/* Elements per chunk below which a kernel's region is not worth splitting: about 32K
   elements (128 KB of float32), well above the cost of waking a worker. */
#define TT_ITER_GRAIN 32768

#endif /* TT_STRIDED_ITER_H */
