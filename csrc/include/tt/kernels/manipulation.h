/*
 * kernels/manipulation.h: data-movement kernels of the manipulation family
 * (csrc/src/kernels/manipulation.c): flip, roll, tile, repeat, repeat_interleave, pad, tril/triu,
 * and the joining behind cat and stack.
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 */

/* Per-axis gather: dst[i_0, ..., i_{n-1}] = src[index_0[i_0], ..., index_{n-1}[i_{n-1}]].
   `index` holds the n tables one after the other: table d has out_shape[d] entries and starts
   after the tables of dims 0..d-1 (so its length is the SUM of out_shape). Every entry must lie
   in [0, src_shape[d]), else TT_ERR_INDEX and nothing is written. Both tensors are of `dtype`
   (bytes are moved, no conversion); addresses are of element (0, ..., 0), strides in elements,
   non-negative (0 broadcasts in src). dst must not overlap src. With ndim 0, one element is
   copied. Flip (reversed tables), roll (rotated), tile and repeat (i mod n), repeat_interleave
   and the reflect/replicate/circular pads are all this one kernel. Borrows everything. */
tt_status tt_gather_axes(int ndim, const int64_t *out_shape,
                         uintptr_t src, const int64_t *src_shape, const int64_t *src_strides,
                         const int64_t *index,
                         uintptr_t dst, const int64_t *dst_strides, int dtype);

/* Lower or upper triangle of a batch of matrices (the last two of `ndim` >= 2 dims):
   dst[..., i, j] = src[..., i, j] where (j - i <= diagonal) for upper == 0 (tril), where
   (j - i >= diagonal) for upper != 0 (triu), and zero elsewhere (all-zero bytes: 0, 0.0, false).
   Both of `dtype`; strides in elements, non-negative. dst may be src itself with the same strides
   (in place); otherwise they must not overlap. Borrows everything. */
tt_status tt_triangle(int ndim, const int64_t *shape,
                      uintptr_t src, const int64_t *src_strides,
                      uintptr_t dst, const int64_t *dst_strides,
                      int dtype, int64_t diagonal, int upper);

/* cat and stack of contiguous inputs, all in one call: input i (count of them, at srcs[i]) is
   `outer` blocks of blocks[i] elements one after the other, and block j of it goes to row j of
   dst, a contiguous `outer` x (sum of blocks) array, at the column after the blocks of inputs
   0..i-1. Bytes are moved (all of `dtype`, no conversion). dst must not overlap an input; a
   block of 0 elements is skipped (its address may be 0). Large joins are split over the threads.
   Borrows everything. */
tt_status tt_join_contiguous(int64_t count, const uintptr_t *srcs, const int64_t *blocks, int64_t outer,
                             int dtype, uintptr_t dst);
