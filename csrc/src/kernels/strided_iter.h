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

#endif /* TT_STRIDED_ITER_H */
