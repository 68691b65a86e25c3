/*
 * kernels/index.h: indexing kernels (csrc/src/kernels/index.c): gather and scatter through
 * int64 index tensors, nonzero, masked fill.
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 *
 * The gather and scatter kernels share one description of "which element": a loop over `shape`
 * (ndim dims) where, at position p,
 *
 *     element(p) = base + sum_d p[d] * base_strides[d]                  (the plain dims)
 *                       + sum_k idx_k(p) * dim_strides[k]                (the indexed dims)
 *     idx_k(p)   = indices[k][sum_d p[d] * index_strides[k * ndim + d]]  (int64 index tensors)
 *
 * All strides in elements (0 broadcasts). Each idx_k must lie in [0, dim_sizes[k]); with `wrap`
 * set, a negative index first has dim_sizes[k] added (Python's and NumPy's rule). An index out of
 * range stops the kernel with TT_ERR_INDEX (elements visited earlier are already written). This
 * one shape covers gather, index_select, take, take_along_dim and advanced indexing with k index
 * tensors (gather), and scatter, scatter_add, scatter_reduce, index_put_, index_add_, index_fill_
 * (scatter). Positions are visited in row-major order of `shape`, single-threaded, so a scatter
 * with duplicate indices is deterministic: the last write wins, and reductions see every value.
 */

/* How tt_index_scatter combines a value with the element it lands on. */
typedef enum tt_scatter_mode {
    TT_SCATTER_ASSIGN,   /* dst = src (raw bytes; any dtype) */
    TT_SCATTER_SUM,      /* dst = dst + src (bool: or; integers wrap) */
    TT_SCATTER_PROD,     /* dst = dst * src (bool: and; integers wrap) */
    TT_SCATTER_AMAX,     /* dst = max(dst, src), NaN wins */
    TT_SCATTER_AMIN,     /* dst = min(dst, src), NaN wins */
    TT_NUM_SCATTER_MODES
} tt_scatter_mode;

/* out[p] = src[element(p)] for every position p of `shape`. out and src are of `dtype` (only its
   size matters); index tensors are int64. nindex is in [0, TT_MAX_DIMS]. out must not overlap
   src or an index tensor. Borrows everything. */
tt_status tt_index_gather(int ndim, const int64_t *shape,
                          uintptr_t out, const int64_t *out_strides,
                          uintptr_t src, const int64_t *base_strides,
                          int nindex, const uintptr_t *indices, const int64_t *index_strides,
                          const int64_t *dim_sizes, const int64_t *dim_strides, int wrap, int dtype);

/* dst[element(p)] = mode(dst[element(p)], src[p]) for every position p of `shape`, in row-major
   order. dst and src are of `dtype`; src is addressed by src_strides (0 broadcasts a value). dst
   must not overlap src or an index tensor. Borrows everything. */
tt_status tt_index_scatter(int ndim, const int64_t *shape,
                           uintptr_t dst, const int64_t *base_strides,
                           uintptr_t src, const int64_t *src_strides,
                           int nindex, const uintptr_t *indices, const int64_t *index_strides,
                           const int64_t *dim_sizes, const int64_t *dim_strides, int wrap,
                           int mode, int dtype);

/* *count = how many elements of x are nonzero (NaN counts, -0.0 does not). x is of `dtype`, any
   strides. Borrows everything; writes *count. */
tt_status tt_count_nonzero(int ndim, const int64_t *shape, uintptr_t x, const int64_t *strides,
                           int dtype, int64_t *count);

/* Writes the coordinates of the nonzero elements of x, in row-major order, into out: a
   contiguous int64 (capacity, ndim) array. Fails with TT_ERR_INVALID_ARG if there are more than
   `capacity` (count them first with tt_count_nonzero). Borrows everything. */
tt_status tt_nonzero(int ndim, const int64_t *shape, uintptr_t x, const int64_t *strides, int dtype,
                     uintptr_t out, int64_t capacity);

/* x[index] for an x of `rows` contiguous rows of `row` elements of `dtype` each (the dims after
   the first of a row-major x; x may be 0 when there are no elements) and n int64 indices
   `index_stride` elements apart: a new default storage holding the n picked rows in order, one
   strong reference owned by the caller. An index may be negative, from the end (-rows is row 0).
   Each index is checked as it is read, once, so an index another thread changes during the call
   gives NULL or a row it named, never a read outside x. Returns NULL for a bad argument, a byte
   count past int64, an index outside [-rows, rows) (the result, allocated first, is released) or
   when memory runs out; the caller's general path then reports which. Borrows x and index. */
tt_storage *tt_index_rows_new(uintptr_t x, int64_t rows, int64_t row, uintptr_t index, int64_t n,
                              int64_t index_stride, int dtype);

/* x[mask] for n contiguous elements of `dtype` at x and n contiguous mask bytes (bool: nonzero
   selects), both of the same shape: a new default storage holding the selected elements in
   order, one strong reference owned by the caller, and *count = how many. Returns NULL (and
   leaves *count alone) for a bad argument or when memory runs out. Borrows x and mask. */
tt_storage *tt_masked_select_new(int64_t n, uintptr_t x, uintptr_t mask, int dtype, int64_t *count);

/* x[p] = *value wherever mask[p] is nonzero, over `shape`. x and *value are of `dtype`; mask is
   bool (strides 0 broadcast it). x must not have overlapping elements. Borrows everything. */
tt_status tt_masked_fill(int ndim, const int64_t *shape, uintptr_t x, const int64_t *x_strides,
                         uintptr_t mask, const int64_t *mask_strides, uintptr_t value, int dtype);
