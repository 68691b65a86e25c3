/*
 * kernels/matmul.h: matrix multiplication (csrc/src/kernels/matmul.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 */

/* A batch of matrix products over any strides:

       C[b][i][j] = sum over p < k of A[b][i][p] * B[b][p][j]      (accumulate == 0)
       C[b][i][j] = C[b][i][j] + that sum                         (accumulate != 0)

   for every batch index b in `batch_shape` (batch_ndim dims, 0 for a single product),
   0 <= i < m, 0 <= j < n. A, B and C all have `dtype` and are given as the address of element
   (0, ..., 0) and batch_ndim + 2 strides in elements: the batch strides, then the row stride,
   then the column stride. Strides may be 0 (a broadcast batch, a repeated row) but not
   negative. C must not overlap A or B, and no two elements of C may share memory (Python
   checks both). k == 0 gives zeros (or leaves C unchanged when accumulating).

   Dtypes: float32 and float64 accumulate in their own type, float16 in float (rounded once at
   the end); the integer dtypes accumulate in 64-bit integers and wrap to their width when
   stored, as PyTorch. Bool gives TT_ERR_UNSUPPORTED_DTYPE. A bad size, stride or ndim, or a
   NULL address with work to do, gives TT_ERR_INVALID_ARG; TT_ERR_NOMEM when the scratch
   buffers cannot be allocated. Borrows everything. */
tt_status tt_matmul(int dtype, int batch_ndim, const int64_t *batch_shape,
                    int64_t m, int64_t n, int64_t k,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t c, const int64_t *c_strides,
                    int accumulate);

/* One float32 or float64 product, strides in elements (rs: row stride, cs: column stride):
   C = A @ B (accumulate == 0) or C += A @ B, with A (m x k), B (k x n), C (m x n). The same engine
   as tt_matmul (packed, cache-blocked, multi-threaded through tt_parallel_for; serial when called
   from inside a parallel region). Same rules and errors as tt_matmul; other dtypes give
   TT_ERR_UNSUPPORTED_DTYPE. Borrows everything. */
tt_status tt_gemm(int dtype, int64_t m, int64_t n, int64_t k,
                  uintptr_t a, int64_t rsa, int64_t csa, uintptr_t b, int64_t rsb, int64_t csb,
                  uintptr_t c, int64_t rsc, int64_t csc, int accumulate);

/* linear (PyTorch's addmm with beta = alpha = 1): C = bias + A @ B for one float32 or float64
   product, bias broadcast over the rows (column j gets bias[j * bias_stride]), strides in elements
   as tt_gemm. The bias is written into each tile of C just before the product's first k slice
   adds to it, so it costs no pass of its own over C; the sums are those of tt_gemm with
   accumulate over C preset to the bias, bit for bit. bias == 0 is tt_gemm without accumulate;
   k == 0 gives the broadcast bias. Same rules and errors as tt_gemm (a negative bias_stride is
   TT_ERR_INVALID_ARG); C must not overlap the bias either. Borrows everything. */
tt_status tt_linear(int dtype, int64_t m, int64_t n, int64_t k,
                    uintptr_t a, int64_t rsa, int64_t csa, uintptr_t b, int64_t rsb, int64_t csb,
                    uintptr_t bias, int64_t bias_stride, uintptr_t c, int64_t rsc, int64_t csc);

/* The micro-kernel the float32/float64 GEMM uses now: "avx512" (AVX-512F), "avx2" (AVX2+FMA) or
   "generic" (plain C); by default the best the CPU has, chosen at run time. Setting
   TT_GENERIC_KERNELS=1 in the environment (read once, at the first product) selects "generic".
   Returns a static string. */
const char *tt_gemm_kernel_name(void);

/* on != 0: every later product uses the generic micro-kernel; on == 0: back to the default choice
   (the CPU's and TT_GENERIC_KERNELS's). For tests and benchmarks. Thread-safe. */
void tt_gemm_force_generic(int on);

/* Every later product uses the micro-kernel `name` ("generic", "avx2" or "avx512"); NULL or ""
   goes back to the default choice. TT_ERR_UNSUPPORTED_DTYPE when this CPU lacks the kernel's
   instructions, TT_ERR_INVALID_ARG for an unknown name (nothing changes then). For tests and
   benchmarks. Thread-safe. Borrows name. */
tt_status tt_gemm_set_kernel(const char *name);
