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

tt_storage *tt_binary_new(int op, int64_t n, uintptr_t a, uintptr_t b, int dtype, int out_dtype) {
    tt_storage *out = new_output(n, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    return finish(out, tt_binary(op, 1, shape, a, stride, b, stride, tt_storage_data_address(out), stride, dtype));
}

tt_storage *tt_binary_scalar_new(int op, int64_t n, uintptr_t a, int64_t s_int, double s_float, int is_int,
                                 int scalar_first, int dtype, int out_dtype) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return NULL;
    }
    /* The scalar in `dtype`, converted by the copy kernel (0-d copy), in an 8-byte aligned slot
       that holds every dtype. */
    uint64_t converted = 0;
    uintptr_t source = is_int ? (uintptr_t)&s_int : (uintptr_t)&s_float;
    if (tt_copy_strided(0, NULL, source, NULL, is_int ? TT_INT64 : TT_FLOAT64, (uintptr_t)&converted, NULL,
                        dtype) != TT_OK) {
        return NULL;
    }
    tt_storage *out = new_output(n, out_dtype);
    if (out == NULL) {
        return NULL;
    }
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    const int64_t broadcast[1] = {0};
    uintptr_t s = (uintptr_t)&converted;
    uintptr_t data = tt_storage_data_address(out);
    tt_status status = scalar_first ? tt_binary(op, 1, shape, s, broadcast, a, stride, data, stride, dtype)
                                    : tt_binary(op, 1, shape, a, stride, s, broadcast, data, stride, dtype);
    return finish(out, status);
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
