/*
 * kernels/dispatch.h: one-call entry points for Python's per-op fast paths (csrc/src/kernels/dispatch.c).
 *
 * A tiny op costs more in the Python around it than in its loop, and every cffi call and every
 * tuple converted to an int64_t array is a fixed cost. For the commonest case (contiguous operands
 * of one dtype and shape, a fresh output) these functions allocate the output storage AND run the
 * existing kernel (tt_unary / tt_binary of elementwise.h, unchanged semantics) in one call that
 * takes only scalars. They return a new storage (one strong reference, owned by the caller) of
 * n elements of `out_dtype`, or NULL on ANY failure (out of memory, a kernel status such as an
 * integer division by zero, a bad argument): no storage is left behind, nothing was written
 * anywhere else, and the caller re-runs the general path to raise the precise error.
 *
 * Read verbatim by cffi after tt_api.h and elementwise.h: plain declarations only.
 */

/* The row-major strides of the ndim sizes `shape` (a size-0 dim counting as 1 for the dims outside
   it, as strides.contiguous_strides) into `strides`, and the element count into *n, which must fit
   int64. Returns 0, or -1 for a bad shape (NULL with dims, a negative size, more than TT_MAX_DIMS
   dims, an overflow). The layout of every fresh result made here and in csrc/python/fast_ops.c.
   Borrows shape. */
int tt_row_major_strides(int ndim, const int64_t *shape, int64_t *strides, int64_t *n);

/* out[i] = op(x[i]) for i < n; x is contiguous, of `dtype`. op is a tt_unary_op; out_dtype is
   `dtype`, or bool for the predicates. Borrows x. */
tt_storage *tt_unary_new(int op, int64_t n, uintptr_t x, int dtype, int out_dtype);

/* out[i] = op(a[i], b[i]) for i < n; a and b are contiguous, of `dtype`. op is a tt_binary_op;
   out_dtype is `dtype`, or bool for the comparisons. Borrows a and b. */
tt_storage *tt_binary_new(int op, int64_t n, uintptr_t a, uintptr_t b, int dtype, int out_dtype);

/* out[i] = op(a[i], s), or op(s, a[i]) when scalar_first != 0, for i < n; a is contiguous, of
   `dtype`. The number s is the int64 `s_int` when is_int != 0, else the double `s_float`; it is
   first converted to `dtype` exactly as tt_copy_strided converts (a cast: integers wrap, floats
   round), then broadcast (stride 0). Borrows a. */
tt_storage *tt_binary_scalar_new(int op, int64_t n, uintptr_t a, int64_t s_int, double s_float, int is_int,
                                 int scalar_first, int dtype, int out_dtype);

/* out[i] = clamp(a[i], low, high) for i < n, as tt_ternary's CLAMP: min(max(a[i], low), high);
   a is contiguous, of `dtype`, and so is the output. Each bound is a number given as in
   tt_binary_scalar_new (the int64 *_int when *_is_int != 0, else the double *_float) and
   converted to `dtype` the same way. One pass where maximum then minimum would be two. Borrows a. */
tt_storage *tt_clamp_scalars_new(int64_t n, uintptr_t a, int64_t low_int, double low_float, int low_is_int,
                                 int64_t high_int, double high_float, int high_is_int, int dtype);

/* out[i] = cond[i] ? a[i] : b[i] for i < n, as tt_ternary's WHERE (the chosen element's bits),
   with cond a contiguous bool array and a, b and the output contiguous, of `dtype`. When
   b_is_number != 0, b is the number given as in tt_binary_scalar_new (the int64 b_int when
   b_is_int != 0, else the double b_float), converted to `dtype` the same way, and the b argument
   is unused. Returns a new reference, or NULL (a bad dtype, out of memory). Borrows cond, a, b. */
tt_storage *tt_where_new(int64_t n, uintptr_t cond, uintptr_t a, uintptr_t b, int b_is_number, int64_t b_int,
                         double b_float, int b_is_int, int dtype);

/* out = op(a, b) over `shape` (ndim dims), a and b of `dtype` read through their strides (in
   elements; 0 for a broadcast dim), into a fresh row-major storage of `out_dtype`: broadcasting,
   transposed and sliced operands in one call. Borrows everything. */
tt_storage *tt_binary_strided_new(int op, int ndim, const int64_t *shape, uintptr_t a, const int64_t *a_strides,
                                  uintptr_t b, const int64_t *b_strides, int dtype, int out_dtype);

/* The same two kernels writing into existing memory: `out` holds n contiguous elements of `dtype`
   (so these are for ops whose result dtype is the operands' dtype), for in-place ops such as
   a.add_(b). `out` may be `a` or `b` itself (each element is read before it is written) but must
   not partly overlap them. Borrows everything; returns the kernel's status, as tt_binary does
   (an integer division by zero may have written part of `out` when it reports). */
tt_status tt_binary_contiguous(int op, int64_t n, uintptr_t a, uintptr_t b, uintptr_t out, int dtype);
tt_status tt_binary_scalar_contiguous(int op, int64_t n, uintptr_t a, int64_t s_int, double s_float, int is_int,
                                      int scalar_first, uintptr_t out, int dtype);

/* The reduction `op` (a tt_reduce_op without a second output: not argmax/argmin) of a contiguous
   x of `dtype` viewed as (outer, size, inner), over the middle dimension: out[o, i] = op over k of
   x[o, k, i], a fresh contiguous (outer, inner) storage of `out_dtype`, as tt_reduce computes it
   (`param` as there). NULL on any failure, like the functions above. Borrows x. */
tt_storage *tt_reduce_new(int op, int64_t outer, int64_t size, int64_t inner, uintptr_t x, int dtype, int out_dtype,
                          double param);

/* softmax (log_softmax when log != 0) of the contiguous x of `dtype` (ndim >= 1 dims of
   `shape`) along dimension `dim` (in [0, ndim)), into a fresh contiguous storage of `dtype`, as
   tt_softmax computes it. Borrows x and shape. */
tt_storage *tt_softmax_new(int log, int ndim, const int64_t *shape, uintptr_t x, int dtype, int dim);

/* The m x n product of a (m x k) and b (k x n) of `dtype`, read through their strides (in
   elements, row then column), into a fresh contiguous storage, as tt_matmul computes it.
   Borrows a, b and the stride arrays. */
tt_storage *tt_matmul_new(int dtype, int64_t m, int64_t n, int64_t k, uintptr_t a, const int64_t *a_strides,
                          uintptr_t b, const int64_t *b_strides);

/* A fresh default storage of nbytes zero bytes (every dtype's zero is all-zero bytes), or NULL
   when out of memory. */
tt_storage *tt_zeros_new(size_t nbytes);

/* A fresh default storage holding the n values converted to `dtype` as tt_copy_strided converts
   (a cast), or NULL on failure (out of memory, bad dtype, n < 0). Python passes a list of floats
   (resp. ints), which cffi converts to a temporary array. Borrows values. */
tt_storage *tt_new_from_doubles(int64_t n, const double *values, int dtype);
tt_storage *tt_new_from_int64s(int64_t n, const int64_t *values, int dtype);

/* tt_storage_new_external returning the storage (NULL on failure, in which case the deleter was
   not called and the caller still owns the memory), for the per-call path of from_numpy. */
tt_storage *tt_external_new(void *data, size_t nbytes, tt_deleter deleter, void *ctx);

/* A fresh default storage holding one element of `dtype`: the int64 `s_int` when is_int != 0,
   else the double `s_float`, converted as tt_copy_strided converts (a cast: integers wrap, floats
   round). NULL on failure (out of memory, bad dtype). */
tt_storage *tt_scalar_new(int64_t s_int, double s_float, int is_int, int dtype);
