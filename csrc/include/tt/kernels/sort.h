/*
 * kernels/sort.h: sorting, selection, binary search and runs of equal values
 * (csrc/src/kernels/sort.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 *
 * Order used by every kernel here (PyTorch's and NumPy's): ascending puts NaN after every other
 * value, descending puts NaN before every other value; -0.0 and 0.0 are equal, all NaNs are equal
 * to each other for ordering. Every sort is stable: equal elements keep their input order, so
 * their indices ascend (in both directions). Every dtype is accepted; float16 compares as float.
 */

/* Stable sort of every row along `dim` of x (shape `shape`, `ndim` >= 1 dims), keeping sorted
   positions [start, start + count) of each row: values[.., j, ..] = the (start + j)-th element
   of the sorted row and indices[.., j, ..] (int64) its position in the row. values and indices
   have x's shape except count along `dim`. values may be 0 (only indices are written).
   Addresses are of element (0, ..., 0); strides in elements (0 in x broadcasts). The outputs must
   not overlap x or each other. Needs 0 <= start, 0 <= count, start + count <= shape[dim]
   (TT_ERR_INVALID_ARG otherwise). Borrows everything; allocates scratch for one row
   (TT_ERR_NOMEM when that fails). */
tt_status tt_sort(int ndim, const int64_t *shape, int dim,
                  uintptr_t x, const int64_t *x_strides,
                  uintptr_t values, const int64_t *values_strides,
                  uintptr_t indices, const int64_t *indices_strides,
                  int64_t start, int64_t count, int dtype, int descending);

/* For every element v of `values` (shape `shape`, `ndim` >= 0 dims) the insertion point of v in
   its row of a sorted sequence, written to out (int64, or int32 when out_int32 is nonzero).
   The row of element i starts at seq + seq_strides . i (seq_strides over `shape`, 0 where one row
   serves many values) and holds seq_len elements seq_step apart. Left side (right == 0): the
   first position p with row[p] >= v; right side: the first p with row[p] > v, found by bisection
   exactly as PyTorch does (a comparison with NaN is false, so NaN goes to the end of the row).
   When sorter is not 0 it is a contiguous int64 tensor of sorter_numel elements holding one
   permutation per row (the row of element i addressed by sorter_strides . i, entries sorter_step
   apart), and the sorted row is row[sorter[p]]; every entry must be in [0, seq_len), else
   TT_ERR_INDEX before any search. values and seq are both of `dtype`. Borrows everything. */
tt_status tt_searchsorted(int ndim, const int64_t *shape,
                          uintptr_t values, const int64_t *values_strides,
                          uintptr_t seq, const int64_t *seq_strides, int64_t seq_len, int64_t seq_step,
                          uintptr_t sorter, const int64_t *sorter_strides, int64_t sorter_step,
                          int64_t sorter_numel, uintptr_t out, const int64_t *out_strides, int out_int32,
                          int dtype, int right);

/* Stable lexicographic sort of nrows contiguous rows of row_len elements of `dtype` at `data`
   (row r at data + r * row_len * itemsize), compared element by element in ascending order
   (NaN last). Writes perm[j] (int64, nrows entries) = the row that goes j-th, and, when sorted
   is not 0, copies that row to row j of sorted (nrows * row_len elements, not overlapping data).
   Borrows everything; allocates scratch (TT_ERR_NOMEM when that fails). */
tt_status tt_sort_rows(int64_t nrows, int64_t row_len, uintptr_t data, uintptr_t sorted, uintptr_t perm,
                       int dtype);

/* Groups runs of equal adjacent rows among the n contiguous rows of row_len elements at `data`
   (of `dtype`; row_len 1 for single values). Rows are equal when every element is ==, so
   -0.0 == 0.0 and a NaN equals nothing: each row holding a NaN is its own run. perm
   (contiguous int64, or 0 for the identity) gives each row's original position, as the indices
   of a sort do. Writes, for run g (0 <= g < *num_runs): row g of unique = the run's first row,
   counts[g] (int64) = its length, first[g] (int64) = perm of its first row; and
   inverse[perm[j]] (int64) = the run of row j. Each output may be 0 (not written); unique needs
   room for n rows, counts, first and inverse for n entries. A perm entry outside [0, n) gives
   TT_ERR_INDEX. Borrows everything. */
tt_status tt_unique_runs(int64_t n, int64_t row_len, uintptr_t data, uintptr_t perm,
                         uintptr_t unique, uintptr_t counts, uintptr_t first, uintptr_t inverse,
                         int dtype, int64_t *num_runs);
