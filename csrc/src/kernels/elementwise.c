/*
 * elementwise.c: the entry points of the unary, binary and ternary elementwise kernels.
 *
 * The shape follows copy.c: validate, let tt_iter simplify the strides, pick a row function from a
 * table indexed [op][dtype], run it (on the thread pool when the work is large). The row
 * functions and their tables are in elementwise_rows.h, with the semantics of every op.
 *
 * Three builds of the rows. The rows are plain C loops that GCC vectorizes, and how well depends
 * on the instruction set it may use: the baseline x86-64 has 4-float SSE2 vectors, no masked
 * selects and no 64-bit integer compares. So the same rows are compiled three times: here for the
 * baseline, in elementwise_avx2.c for AVX2 and in elementwise_avx512.c for AVX-512 (F, BW, DQ, VL),
 * and the widest this CPU has (and TT_GENERIC_KERNELS allows, see cpu_features.h) is picked at
 * run time. (256, 512) float32 on one thread, baseline -> AVX-512: maximum 26 -> 18 us, a > b 19 ->
 * 10, clamp to two numbers as two passes 43 -> 26. The results are the same bits on every build: the rows do only
 * operations that IEEE rounds exactly once (the SIMD forms of + - * / sqrt and compares are the
 * scalar ones, lane by lane) or call the same libm and vmath functions, and contraction of a * b + c
 * into one fused multiply-add, which would round once instead of twice, is turned off in the
 * builds whose CPUs have FMA. tests/ops/test_elementwise_isa.py checks every op and dtype.
 */
#include <stdatomic.h>

#include "cpu_features.h"
#define EW_TABLES tt_ew_tables_baseline
#include "elementwise_rows.h"

/* The row tables of the widest instruction set this CPU has and the environment allows. */
static const ew_tables *row_tables(void) { return TT_WIDEST_BUILD(&tt_ew_tables); }  /* &tt_ew_tables_avx512, ... */

const char *tt_elementwise_kernel_name(void) {
    const ew_tables *tables = row_tables();
#if TT_HAVE_X86
    if (tables == &tt_ew_tables_avx512) {
        return "avx512";
    }
    if (tables == &tt_ew_tables_avx2) {
        return "avx2";
    }
#endif
    return "baseline";
}

/* ------------------------------------------------------------------ entry points */

/* Looks up table[op][dtype] (a flat array of `nops` rows) after validating op, ndim and dtype. */
static tt_status lookup(const tt_row_fn *table, int nops, int op, int ndim, int dtype, tt_row_fn *row) {
    if (op < 0 || op >= nops || ndim < 0 || ndim > TT_MAX_DIMS) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES || table[(size_t)op * TT_NUM_DTYPES + (size_t)dtype] == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    *row = table[(size_t)op * TT_NUM_DTYPES + (size_t)dtype];
    return TT_OK;
}

/* A threaded run: every chunk walks its own range of elements with its own context (the row
   functions write context->error), and a failing chunk records its status in `error`. Any
   chunk's status will do: they are all the same integer division by zero. */
typedef struct ew_job {
    const tt_iter *iter;
    char *const *base;
    tt_row_fn row;
    double p0, p1;
    atomic_int error;
} ew_job;

static void ew_chunk(int64_t begin, int64_t end, void *arg) {
    ew_job *job = arg;
    ew_context context = {TT_OK, job->p0, job->p1};
    tt_iter_run_range(job->iter, job->base, job->row, &context, begin, end);
    if (context.error != TT_OK) {
        atomic_store_explicit(&job->error, (int)context.error, memory_order_relaxed);
    }
}

/* Operand 0 is the output. itemsizes[k] is operand k's element size. Large work is split
   across threads by ranges of the outermost dimension (tt_iter_parallel); the region's end
   orders the chunks' writes, and their error stores, before the caller reads them. */
static tt_status run(tt_row_fn row, int noperands, int ndim, const int64_t *shape, const uintptr_t *addresses,
                     const int64_t *const *strides, const size_t *itemsizes, double p0, double p1) {
    tt_iter iter;
    tt_status status = tt_iter_init(&iter, ndim, shape, noperands, strides, itemsizes);
    if (status != TT_OK || iter.numel == 0) {
        return status;
    }
    char *base[TT_ITER_MAX_OPERANDS];
    for (int k = 0; k < noperands; k++) {
        if (addresses[k] == 0) {
            return TT_ERR_INVALID_ARG;
        }
        base[k] = (char *)addresses[k];
    }
    iter.elementwise = 1;   /* every row function here reads element i of each operand only */
    ew_job job = {&iter, base, row, p0, p1, TT_OK};
    tt_iter_parallel(&iter, TT_ITER_GRAIN, 64, ew_chunk, &job);
    return (tt_status)atomic_load_explicit(&job.error, memory_order_relaxed);
}

static int is_predicate_binary(int op) { return op >= TT_EQ; }
static int is_predicate_unary(int op) { return op >= TT_LOGICAL_NOT; }

static tt_status run_unary(tt_row_fn row, int ndim, const int64_t *shape, uintptr_t x, const int64_t *x_strides,
                           uintptr_t out, const int64_t *out_strides, int dtype, int out_dtype, double p0,
                           double p1) {
    const uintptr_t addresses[2] = {out, x};
    const int64_t *strides[2] = {out_strides, x_strides};
    const size_t itemsizes[2] = {tt_dtype_itemsize(out_dtype), tt_dtype_itemsize(dtype)};
    return run(row, 2, ndim, shape, addresses, strides, itemsizes, p0, p1);
}

static tt_status run_binary(tt_row_fn row, int ndim, const int64_t *shape, uintptr_t a, const int64_t *a_strides,
                            uintptr_t b, const int64_t *b_strides, uintptr_t out, const int64_t *out_strides,
                            int dtype, int out_dtype, double p0) {
    const uintptr_t addresses[3] = {out, a, b};
    const int64_t *strides[3] = {out_strides, a_strides, b_strides};
    const size_t itemsizes[3] = {tt_dtype_itemsize(out_dtype), tt_dtype_itemsize(dtype), tt_dtype_itemsize(dtype)};
    return run(row, 3, ndim, shape, addresses, strides, itemsizes, p0, 0.0);
}

tt_status tt_unary(int op, int ndim, const int64_t *shape,
                   uintptr_t x, const int64_t *x_strides,
                   uintptr_t out, const int64_t *out_strides, int dtype) {
    tt_row_fn row;
    tt_status status = lookup(row_tables()->unary, TT_NUM_UNARY_OPS, op, ndim, dtype, &row);
    if (status != TT_OK) {
        return status;
    }
    int out_dtype = is_predicate_unary(op) ? TT_BOOL : dtype;
    return run_unary(row, ndim, shape, x, x_strides, out, out_strides, dtype, out_dtype, 0.0, 0.0);
}

tt_status tt_unary_param(int op, int ndim, const int64_t *shape,
                         uintptr_t x, const int64_t *x_strides,
                         uintptr_t out, const int64_t *out_strides, int dtype, double p0, double p1) {
    tt_row_fn row;
    tt_status status = lookup(row_tables()->unary_param, TT_NUM_UNARY_PARAM_OPS, op, ndim, dtype, &row);
    if (status != TT_OK) {
        return status;
    }
    return run_unary(row, ndim, shape, x, x_strides, out, out_strides, dtype, dtype, p0, p1);
}

tt_status tt_binary(int op, int ndim, const int64_t *shape,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t out, const int64_t *out_strides, int dtype) {
    tt_row_fn row;
    tt_status status = lookup(row_tables()->binary, TT_NUM_BINARY_OPS, op, ndim, dtype, &row);
    if (status != TT_OK) {
        return status;
    }
    int out_dtype = is_predicate_binary(op) ? TT_BOOL : dtype;
    return run_binary(row, ndim, shape, a, a_strides, b, b_strides, out, out_strides, dtype, out_dtype, 0.0);
}

tt_status tt_binary_param(int op, int ndim, const int64_t *shape,
                          uintptr_t a, const int64_t *a_strides,
                          uintptr_t b, const int64_t *b_strides,
                          uintptr_t out, const int64_t *out_strides, int dtype, double p0) {
    tt_row_fn row;
    tt_status status = lookup(row_tables()->binary_param, TT_NUM_BINARY_PARAM_OPS, op, ndim, dtype, &row);
    if (status != TT_OK) {
        return status;
    }
    return run_binary(row, ndim, shape, a, a_strides, b, b_strides, out, out_strides, dtype, dtype, p0);
}

tt_status tt_ternary(int op, int ndim, const int64_t *shape,
                     uintptr_t a, const int64_t *a_strides,
                     uintptr_t b, const int64_t *b_strides,
                     uintptr_t c, const int64_t *c_strides,
                     uintptr_t out, const int64_t *out_strides, int dtype) {
    tt_row_fn row;
    tt_status status = lookup(row_tables()->ternary, TT_NUM_TERNARY_OPS, op, ndim, dtype, &row);
    if (status != TT_OK) {
        return status;
    }
    const size_t size = tt_dtype_itemsize(dtype);
    const uintptr_t addresses[4] = {out, a, b, c};
    const int64_t *strides[4] = {out_strides, a_strides, b_strides, c_strides};
    const size_t itemsizes[4] = {size, op == TT_WHERE ? tt_dtype_itemsize(TT_BOOL) : size, size, size};
    return run(row, 4, ndim, shape, addresses, strides, itemsizes, 0.0, 0.0);
}
