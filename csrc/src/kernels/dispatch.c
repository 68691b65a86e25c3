/*
 * dispatch.c: "allocate the output, run the kernel" in one call, for Python's fast paths.
 *
 * Nothing here computes element values: each function runs the public tt_unary / tt_binary over a
 * 1-d view of n contiguous elements, so results are bit for bit those of the general path (and
 * follow any change made to those kernels). What this file saves is Python work: one cffi call
 * with scalar arguments instead of an allocation call, an address call and a call with four shape
 * and stride tuples.
 */
#include <string.h>

#include "tt/tt.h"
#include "tt/kernels/elementwise.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/reduce.h"
#include "tt/kernels/dispatch.h"

/* A fresh default storage for n elements of dtype, or NULL (bad dtype, negative n, overflow,
   out of memory). */
static tt_storage *new_output(int64_t n, int dtype) {
    if (n < 0 || dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return NULL;
    }
    size_t itemsize = tt_dtype_itemsize(dtype);
    if ((uint64_t)n > SIZE_MAX / itemsize) {
        return NULL;
    }
    return tt_storage_new_default((size_t)n * itemsize);
}

/* The output storage when `status` is TT_OK, else NULL with the storage released. */
static tt_storage *finish(tt_storage *out, tt_status status) {
    if (status != TT_OK) {
        tt_storage_release(out);
        return NULL;
    }
    return out;
}

tt_storage *tt_unary_new(int op, int64_t n, uintptr_t x, int dtype, int out_dtype) {
    tt_storage *out = new_output(n, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    return finish(out, tt_unary(op, 1, shape, x, stride, tt_storage_data_address(out), stride, dtype));
}

tt_status tt_binary_contiguous(int op, int64_t n, uintptr_t a, uintptr_t b, uintptr_t out, int dtype) {
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    return tt_binary(op, 1, shape, a, stride, b, stride, out, stride, dtype);
}

tt_storage *tt_binary_new(int op, int64_t n, uintptr_t a, uintptr_t b, int dtype, int out_dtype) {
    tt_storage *out = new_output(n, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    return finish(out, tt_binary_contiguous(op, n, a, b, tt_storage_data_address(out), dtype));
}

int tt_row_major_strides(int ndim, const int64_t *shape, int64_t *strides, int64_t *n) {
    if (ndim < 0 || ndim > TT_MAX_DIMS || (ndim > 0 && shape == NULL)) {
        return -1;
    }
    int64_t count = 1, step = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] < 0) {
            return -1;
        }
        strides[d] = step;
        if (__builtin_mul_overflow(step, shape[d] > 0 ? shape[d] : 1, &step) ||
            __builtin_mul_overflow(count, shape[d], &count)) {
            return -1;
        }
    }
    *n = count;
    return 0;
}

tt_storage *tt_binary_strided_new(int op, int ndim, const int64_t *shape, uintptr_t a, const int64_t *a_strides,
                                  uintptr_t b, const int64_t *b_strides, int dtype, int out_dtype) {
    int64_t out_strides[TT_MAX_DIMS], n;
    if (tt_row_major_strides(ndim, shape, out_strides, &n) < 0) {
        return NULL;
    }
    tt_storage *out = new_output(n, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    return finish(out, tt_binary(op, ndim, shape, a, a_strides, b, b_strides, tt_storage_data_address(out),
                                 out_strides, dtype));
}

/* A Python number (the int64 s_int when is_int != 0, else the double s_float) in `dtype`,
   converted by the copy kernel (a 0-d copy) into *slot, 8 bytes that hold every dtype. */
static tt_status convert_scalar(int64_t s_int, double s_float, int is_int, int dtype, uint64_t *slot) {
    *slot = 0;
    uintptr_t source = is_int ? (uintptr_t)&s_int : (uintptr_t)&s_float;
    return tt_copy_strided(0, NULL, source, NULL, is_int ? TT_INT64 : TT_FLOAT64, (uintptr_t)slot, NULL, dtype);
}

tt_status tt_binary_scalar_contiguous(int op, int64_t n, uintptr_t a, int64_t s_int, double s_float, int is_int,
                                      int scalar_first, uintptr_t out, int dtype) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    uint64_t converted;
    tt_status status = convert_scalar(s_int, s_float, is_int, dtype, &converted);
    if (status != TT_OK) {
        return status;
    }
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    const int64_t broadcast[1] = {0};
    uintptr_t s = (uintptr_t)&converted;
    return scalar_first ? tt_binary(op, 1, shape, s, broadcast, a, stride, out, stride, dtype)
                        : tt_binary(op, 1, shape, a, stride, s, broadcast, out, stride, dtype);
}

tt_storage *tt_binary_scalar_new(int op, int64_t n, uintptr_t a, int64_t s_int, double s_float, int is_int,
                                 int scalar_first, int dtype, int out_dtype) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return NULL;
    }
    tt_storage *out = new_output(n, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    return finish(out, tt_binary_scalar_contiguous(op, n, a, s_int, s_float, is_int, scalar_first,
                                                   tt_storage_data_address(out), dtype));
}

/* tt_ternary's `op` into a new contiguous output of n elements of `dtype`: a contiguous, b and c
   contiguous or, when *_broadcast != 0, one element read for every position. */
static tt_storage *ternary_new(int op, int64_t n, uintptr_t a, uintptr_t b, int b_broadcast, uintptr_t c,
                               int c_broadcast, int dtype) {
    tt_storage *out = new_output(n, dtype);
    if (out == NULL) {
        return NULL;
    }
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    const int64_t broadcast[1] = {0};
    return finish(out, tt_ternary(op, 1, shape, a, stride, b, b_broadcast ? broadcast : stride, c,
                                  c_broadcast ? broadcast : stride, tt_storage_data_address(out), stride, dtype));
}

tt_storage *tt_clamp_scalars_new(int64_t n, uintptr_t a, int64_t low_int, double low_float, int low_is_int,
                                 int64_t high_int, double high_float, int high_is_int, int dtype) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return NULL;
    }
    uint64_t low, high;
    if (convert_scalar(low_int, low_float, low_is_int, dtype, &low) != TT_OK ||
        convert_scalar(high_int, high_float, high_is_int, dtype, &high) != TT_OK) {
        return NULL;
    }
    return ternary_new(TT_CLAMP, n, a, (uintptr_t)&low, 1, (uintptr_t)&high, 1, dtype);
}

tt_storage *tt_where_new(int64_t n, uintptr_t cond, uintptr_t a, uintptr_t b, int b_is_number, int64_t b_int,
                         double b_float, int b_is_int, int dtype) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return NULL;
    }
    uint64_t number;
    if (b_is_number) {
        if (convert_scalar(b_int, b_float, b_is_int, dtype, &number) != TT_OK) {
            return NULL;
        }
        b = (uintptr_t)&number;
    }
    return ternary_new(TT_WHERE, n, cond, a, 0, b, b_is_number, dtype);
}

tt_storage *tt_reduce_new(int op, int64_t outer, int64_t size, int64_t inner, uintptr_t x, int dtype, int out_dtype,
                          double param) {
    if (outer < 0 || size < 0 || inner < 0 || (inner > 0 && outer > INT64_MAX / inner)) {
        return NULL;
    }
    tt_storage *out = new_output(outer * inner, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    /* (outer, size, inner) with the middle dimension reduced; the kernel drops size-1 dims and
       merges contiguous ones, so a whole-tensor sum runs the same loop as a 1-d one. The size
       product cannot overflow: x holds outer * size * inner elements. */
    const int64_t shape[3] = {outer, size, inner};
    const int64_t x_strides[3] = {size * inner, inner, 1};
    const int64_t out_strides[3] = {inner, 0, 1};
    const int64_t unused[3] = {0, 0, 0};
    return finish(out, tt_reduce(op, 3, shape, x, x_strides, dtype, (uint64_t)1 << 1, param,
                                 tt_storage_data_address(out), out_strides, 0, unused));
}

tt_storage *tt_softmax_new(int log, int ndim, const int64_t *shape, uintptr_t x, int dtype, int dim) {
    int64_t strides[TT_MAX_DIMS], n;
    if (ndim < 1 || dim < 0 || dim >= ndim || tt_row_major_strides(ndim, shape, strides, &n) < 0) {
        return NULL;
    }
    tt_storage *out = new_output(n, dtype);
    if (out == NULL) {
        return NULL;
    }
    return finish(out, tt_softmax(log, ndim, shape, x, strides, dtype, dim, tt_storage_data_address(out), strides));
}

tt_storage *tt_matmul_new(int dtype, int64_t m, int64_t n, int64_t k, uintptr_t a, const int64_t *a_strides,
                          uintptr_t b, const int64_t *b_strides) {
    int64_t count;
    if (m < 0 || n < 0 || k < 0 || a_strides == NULL || b_strides == NULL || __builtin_mul_overflow(m, n, &count)) {
        return NULL;
    }
    tt_storage *out = new_output(count, dtype);
    if (out == NULL) {
        return NULL;
    }
    const int64_t c_strides[2] = {n, 1};
    return finish(out, tt_matmul(dtype, 0, NULL, m, n, k, a, a_strides, b, b_strides, tt_storage_data_address(out),
                                 c_strides, 0));
}

tt_storage *tt_zeros_new(size_t nbytes) {
    tt_storage *out = tt_storage_new_default(nbytes);
    if (out != NULL && nbytes > 0) {
        memset(tt_storage_data(out), 0, nbytes);
    }
    return out;
}

/* n values of src_dtype at `values`, copied (converted) into a fresh storage of `dtype`. */
static tt_storage *new_from_values(int64_t n, uintptr_t values, int src_dtype, int dtype) {
    tt_storage *out = new_output(n, dtype);
    if (out == NULL) {
        return NULL;
    }
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    return finish(out, tt_copy_strided(1, shape, values, stride, src_dtype, tt_storage_data_address(out), stride,
                                       dtype));
}

tt_storage *tt_new_from_doubles(int64_t n, const double *values, int dtype) {
    return new_from_values(n, (uintptr_t)values, TT_FLOAT64, dtype);
}

tt_storage *tt_new_from_int64s(int64_t n, const int64_t *values, int dtype) {
    return new_from_values(n, (uintptr_t)values, TT_INT64, dtype);
}

tt_storage *tt_external_new(void *data, size_t nbytes, tt_deleter deleter, void *ctx) {
    tt_storage *out = NULL;
    return tt_storage_new_external(data, nbytes, deleter, ctx, &out) == TT_OK ? out : NULL;
}

tt_storage *tt_scalar_new(int64_t s_int, double s_float, int is_int, int dtype) {
    tt_storage *out = new_output(1, dtype);
    if (out == NULL) {
        return NULL;
    }
    uintptr_t source = is_int ? (uintptr_t)&s_int : (uintptr_t)&s_float;
    return finish(out, tt_copy_strided(0, NULL, source, NULL, is_int ? TT_INT64 : TT_FLOAT64,
                                       tt_storage_data_address(out), NULL, dtype));
}
