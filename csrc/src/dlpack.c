/*
 * dlpack.c: sharing tensors with other libraries through DLPack, without copying.
 *
 * Export: the DLManagedTensor we hand out owns one strong reference to our storage. Its
 * deleter (called exactly once, by the consumer or by the capsule's destructor if nobody
 * consumed it) releases that reference and frees the struct, shape and strides, which live in
 * one allocation.
 *
 * Import: the producer's DLManagedTensor becomes the context of an external storage; the
 * storage's deleter calls the producer's deleter when our last strong reference goes.
 */
#include <stdlib.h>
#include <string.h>

#include "tt/tt.h"

enum { DL_CPU = 1, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BOOL = 6 };

static int dl_dtype(int dtype, DLDataType *out) {
    out->lanes = 1;
    out->bits = (uint8_t)(tt_dtype_itemsize(dtype) * 8);
    switch (dtype) {
    case TT_BOOL: out->code = DL_BOOL; return 1;
    case TT_INT8: case TT_INT16: case TT_INT32: case TT_INT64: out->code = DL_INT; return 1;
    case TT_UINT8: out->code = DL_UINT; return 1;
    case TT_FLOAT16: case TT_FLOAT32: case TT_FLOAT64: out->code = DL_FLOAT; return 1;
    default: return 0;
    }
}

/* The export's allocation: the managed struct followed by shape and strides. */
typedef struct export_legacy {
    DLManagedTensor managed;
    int64_t dims[];
} export_legacy;

typedef struct export_versioned {
    DLManagedTensorVersioned managed;
    int64_t dims[];
} export_versioned;

static void delete_legacy(DLManagedTensor *self) {
    tt_storage_release((tt_storage *)self->manager_ctx);
    free(self);   /* the struct is the first member of its export_legacy allocation */
}

static void delete_versioned(DLManagedTensorVersioned *self) {
    tt_storage_release((tt_storage *)self->manager_ctx);
    free(self);
}

static void fill_tensor(DLTensor *t, uintptr_t data, int ndim, const int64_t *shape,
                        const int64_t *strides, DLDataType dtype, int64_t *dims) {
    t->data = (void *)data;
    t->device.device_type = DL_CPU;
    t->device.device_id = 0;
    t->ndim = ndim;
    t->dtype = dtype;
    t->shape = dims;
    t->strides = dims + ndim;
    t->byte_offset = 0;
    if (ndim > 0) {
        memcpy(dims, shape, (size_t)ndim * sizeof(int64_t));
        memcpy(dims + ndim, strides, (size_t)ndim * sizeof(int64_t));
    }
}

tt_status tt_dlpack_export(tt_storage *storage, uintptr_t data, int ndim, const int64_t *shape,
                           const int64_t *strides, int dtype, int versioned, void **out) {
    if (storage == NULL || out == NULL || ndim < 0 || ndim > TT_MAX_DIMS ||
        (ndim > 0 && (shape == NULL || strides == NULL))) {
        return TT_ERR_INVALID_ARG;
    }
    *out = NULL;
    DLDataType dl;
    if (!dl_dtype(dtype, &dl)) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    size_t dims_bytes = 2 * (size_t)ndim * sizeof(int64_t);
    if (versioned) {
        export_versioned *e = malloc(sizeof(*e) + dims_bytes);
        if (e == NULL) {
            return TT_ERR_NOMEM;
        }
        e->managed.version.major = 1;
        e->managed.version.minor = 0;
        e->managed.manager_ctx = storage;
        e->managed.deleter = delete_versioned;
        e->managed.flags = 0;
        fill_tensor(&e->managed.dl_tensor, data, ndim, shape, strides, dl, e->dims);
        *out = &e->managed;
    } else {
        export_legacy *e = malloc(sizeof(*e) + dims_bytes);
        if (e == NULL) {
            return TT_ERR_NOMEM;
        }
        e->managed.manager_ctx = storage;
        e->managed.deleter = delete_legacy;
        fill_tensor(&e->managed.dl_tensor, data, ndim, shape, strides, dl, e->dims);
        *out = &e->managed;
    }
    tt_storage_retain(storage);   /* the export's own strong reference */
    return TT_OK;
}

static void release_imported_legacy(void *ctx, void *data) {
    (void)data;
    DLManagedTensor *managed = ctx;
    if (managed->deleter != NULL) {
        managed->deleter(managed);
    }
}

static void release_imported_versioned(void *ctx, void *data) {
    (void)data;
    DLManagedTensorVersioned *managed = ctx;
    if (managed->deleter != NULL) {
        managed->deleter(managed);
    }
}

tt_status tt_storage_from_dlpack(void *managed, int versioned, uintptr_t data, size_t nbytes,
                                 tt_storage **out) {
    if (managed == NULL || out == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    tt_deleter deleter = versioned ? release_imported_versioned : release_imported_legacy;
    return tt_storage_new_external((void *)data, nbytes, deleter, managed, out);
}
