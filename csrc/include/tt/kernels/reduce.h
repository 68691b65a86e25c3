/*
 * kernels/reduce.h: reductions, cumulative scans and softmax (csrc/src/kernels/reduce.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 */

/* What tt_reduce computes for each output element, over the reduced elements x_1 .. x_n.
   Output dtype ("out") and the dtypes taken ("takes"):
     SUM, NANSUM (NaN counted as 0), PROD     all dtypes; out int64 for bool and integers, else the input dtype
     MEAN (sum / n)                           floats; out = input dtype
     MAX, MIN (NaN wins)                      all dtypes; out = input dtype
     ARGMAX, ARGMIN (first occurrence,        all dtypes; out int64 = index of the element in the reduced
       NaN counts as the extreme)               dims, row-major; out2 (may be 0) gets the value, input dtype
     ANY, ALL                                 all dtypes; out bool (bytes 0/1)
     COUNT_NONZERO                            all dtypes; out int64
     VAR, STD (param = correction:            floats; out = input dtype
       sum (x - mean)^2 / max(0, n - param))
     LOGSUMEXP (log sum exp x, stable)        floats; out = input dtype
     NORM_L0 (count of nonzeros), NORM_L1     floats; out = input dtype
       (sum |x|), NORM_L2 (sqrt sum x^2),
       NORM_LINF (max |x|), NORM_LNEGINF
       (min |x|), NORM_LP ((sum |x|^p)^(1/p), param = p)
   An empty reduction (n = 0) gives the identity (0, 1, false, true, ...; NaN for MEAN and VAR,
   -inf for LOGSUMEXP, the dtype's lowest value for MAX, ...): callers that must refuse it
   (PyTorch's max of nothing) check first. */
typedef enum tt_reduce_op {
    TT_RED_SUM, TT_RED_NANSUM, TT_RED_PROD, TT_RED_MEAN, TT_RED_MAX, TT_RED_MIN,
    TT_RED_ARGMAX, TT_RED_ARGMIN, TT_RED_ANY, TT_RED_ALL, TT_RED_COUNT_NONZERO,
    TT_RED_VAR, TT_RED_STD, TT_RED_LOGSUMEXP,
    TT_RED_NORM_L0, TT_RED_NORM_L1, TT_RED_NORM_L2, TT_RED_NORM_LINF, TT_RED_NORM_LNEGINF, TT_RED_NORM_LP,
    TT_NUM_REDUCE_OPS
} tt_reduce_op;

/* Reduce x (of `dtype`, `shape`, strides in elements) over the dimensions whose bit is set in
   `reduce_mask` (bit d = dimension d). out (and out2 for ARGMAX/ARGMIN values) are given with
   `ndim` strides over the same shape, 0 on the reduced dimensions (so keepdim or not is only a
   matter of the caller's view). Every output element is written once. Borrows everything. */
tt_status tt_reduce(int op, int ndim, const int64_t *shape,
                    uintptr_t x, const int64_t *x_strides, int dtype,
                    uint64_t reduce_mask, double param,
                    uintptr_t out, const int64_t *out_strides,
                    uintptr_t out2, const int64_t *out2_strides);

/* Cumulative operations along one dimension. */
typedef enum tt_scan_op {
    TT_SCAN_SUM, TT_SCAN_PROD,
    TT_NUM_SCAN_OPS
} tt_scan_op;

/* out[..., k, ...] = x[..., 0, ...] op ... op x[..., k, ...] along dimension `dim` (in [0, ndim),
   ndim >= 1). All dtypes; out is int64 for bool and integers (wrapping), else the input dtype.
   out must not overlap x. Borrows everything. */
tt_status tt_scan(int op, int ndim, const int64_t *shape,
                  uintptr_t x, const int64_t *x_strides, int dtype, int dim,
                  uintptr_t out, const int64_t *out_strides);

/* Softmax along dimension `dim` (in [0, ndim), ndim >= 1), fused: per line, the max, the sum of
   exp(x - max), then out = exp(x - max) / sum, or with `log` set, out = x - max - log(sum).
   Floats only; out has the input dtype and must not overlap x. Borrows everything. */
tt_status tt_softmax(int log, int ndim, const int64_t *shape,
                     uintptr_t x, const int64_t *x_strides, int dtype, int dim,
                     uintptr_t out, const int64_t *out_strides);

/* Singular values of each of `batch` matrices of m rows and n columns: matrix b, element (i, j)
   of x is at x_strides[0]*b + x_strides[1]*i + x_strides[2]*j (elements). out gets min(m, n)
   values per matrix in descending order, value k of matrix b at out_strides[0]*b +
   out_strides[1]*k. One-sided Jacobi (Hestenes) in double: columns are rotated pairwise until
   all are orthogonal (at most 80 sweeps); the values are then the column norms. A matrix holding
   NaN or inf gets NaN values. Floats only; out has the input dtype. Returns TT_ERR_NOMEM if the
   max(m, n) x min(m, n) work matrix cannot be allocated. Borrows everything. */
tt_status tt_singular_values(int64_t batch, int64_t m, int64_t n,
                             uintptr_t x, const int64_t *x_strides, int dtype,
                             uintptr_t out, const int64_t *out_strides);
