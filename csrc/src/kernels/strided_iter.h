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
 * Blocking (transposes). When an input's strides disagree with the output's in the last two
 * dimensions (a.T + b, x.T.contiguous()), walking whole rows reads that input down a column: one
 * cache line (and often one page) per element, evicted before the next row comes back for its
 * neighbour. tt_iter_init detects this and tt_iter_run then walks the last two dimensions in
 * tiles of tile_rows x tile_cols elements, calling the row function once per tile row (rows of
 * tile_cols elements), so every line an input brings in is used tile_rows times while it is still
 * in L1. Every kernel on tt_iter gets this for free; row functions only ever see shorter rows.
 * The order in which elements are visited changes, so a row function must not depend on it
 * (none does: each output element is computed from its own inputs, or accumulated commutatively).
 * A kernel whose row function reads exactly element i of each operand at data[k] + i * strides[k]
 * (nothing beyond it: true of elementwise ops and copies, not of reductions along a line) may set
 * iter.elementwise = 1 after tt_iter_init: each tile of a transposed input is then first copied
 * into a small contiguous buffer (on the stack, read column-wise so the source streams), and the
 * row function sees that input with a unit stride, which takes its vectorized loop.
 *
 * Splitting work (threads). tt_iter_run_range(iter, ..., begin, end) visits only the positions
 * whose index along dimension 0 (the outermost, after simplification) lies in [begin, end).
 * Disjoint ranges visit disjoint output elements and share no state inside the iterator, so
 * ranges may run concurrently; tiling stays inside each range. For ndim == 1 dimension 0 is the
 * row itself and a range is a slice of it. tt_iter_run(iter, ...) is the range [0, shape[0]).
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
    int64_t itemsizes[TT_ITER_MAX_OPERANDS];
    int64_t tile_rows, tile_cols;   /* > 0: walk dims ndim-2, ndim-1 in tiles; 0: whole rows */
    unsigned pack_mask;             /* inputs walked against the grain (bit k: operand k) */
    int elementwise;                /* set by the kernel: tiles of pack_mask inputs may be packed */
} tt_iter;

/* The inner loop: `n` elements, operand k at data[k] advancing by strides[k] bytes. */
typedef void (*tt_row_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

/* Sets up `iter`. elem_strides[k] are operand k's strides in elements and itemsizes[k] its
   element size. Fails with TT_ERR_INVALID_ARG for a bad ndim, a negative size or too many
   operands. */
tt_status tt_iter_init(tt_iter *iter, int ndim, const int64_t *shape, int noperands,
                       const int64_t *const *elem_strides, const size_t *itemsizes);

/* Calls row_fn once per row (or tile row, when blocked), with every operand's address for that
   row. `base` holds each operand's address of element (0, ..., 0). */
void tt_iter_run(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx);

/* The same, restricted to indices [begin, end) of dimension 0 (clamped to [0, shape[0])).
   Independent of other ranges: safe to run disjoint ranges on different threads. */
void tt_iter_run_range(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx, int64_t begin,
                       int64_t end);

/* A piece of a threaded iteration: the indices [begin, end) of dimension 0, for tt_iter_run_range. */
typedef void (*tt_iter_chunk_fn)(int64_t begin, int64_t end, void *ctx);

/* Splits dimension 0 of the iteration into ranges of at least `grain` elements' worth and runs
   chunk_fn on them through tt_parallel_for; chunk_fn passes its range to tt_iter_run_range. When
   the iteration is one row (ndim == 1) every range but the last is a multiple of `block`
   elements, so chunks start on aligned addresses. When operand 0 has a stride-0 dimension
   (several elements write one address) it runs chunk_fn(0, shape[0]) on the calling thread
   instead, so the last write still wins as in tt_iter_run. Borrows everything. */
void tt_iter_parallel(const tt_iter *iter, int64_t grain, int64_t block, tt_iter_chunk_fn chunk_fn, void *ctx);

/* Elements per chunk below which a kernel's region is not worth splitting: about 32K
   elements (128 KB of float32), well above the cost of waking a worker. */
#define TT_ITER_GRAIN 32768

#endif /* TT_STRIDED_ITER_H */
