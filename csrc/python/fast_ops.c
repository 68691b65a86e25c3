/*
 * fast_ops.c: Tensor's binary operators (a + b, a < b, 2 * a, ...), its in-place ones (a += b,
 * a.mul_(2)), its unary methods (x.exp(), -x, ...) and Storage's finalizer as CPython methods,
 * for the cases that dominate small-tensor code.
 *
 * Why this file exists. Every other call from Python into C goes through cffi, and cffi's API
 * mode releases and retakes the GIL around each call, converts each argument, and is reached from
 * a Python function frame. For a 4-element `a + b` that overhead is most of the cost: the Python
 * operator took about 12,100 instructions per call against NumPy's 5,100
 * (docs/performance_dispatch.md, "Sixth round"). These methods do the Python methods' fast
 * paths in C, holding the GIL (released only for outputs large enough to be worth it), and hand
 * every other case to the Python method they replace, unchanged. They make no decision of their
 * own beyond "is this the plain case": which (op, dtype) pairs may run and what dtype they give
 * comes from elementwise.py's own tables, read once at install time (t_tensor/_cfast.py).
 *
 * The plain cases, exactly the Python methods' fast paths with grad not involved. The tensor
 * operands are exactly t_tensor.Tensor (subclasses fall back), do not record autograd
 * (`_ag is None`) and, except for two tensors of a binary operator, are known contiguous
 * (`_dense is True`), and elementwise.py's table has an entry for (op, dtype); then
 *   - a binary operator's other operand is a Tensor of the same dtype object (`_FAST_BINARY`):
 *     both known contiguous with equal shapes, one kernel over the elements (tt_binary_new);
 *     else any shapes that broadcast and any strides, read through the strides into a fresh
 *     row-major result (tt_binary_strided_new, elementwise.py's `_fast_strided`). Or it is
 *     exactly a Python float, or exactly an int (not a bool) that fits int64
 *     (`_FAST_SCALAR_FLOAT`, `_FAST_SCALAR_INT`, tt_binary_scalar_new). The reflected operators
 *     (__radd__, ...) take only numbers, as the left operand;
 *   - a unary method is called with no arguments (`_FAST_UNARY`, tt_unary_new);
 *   - an in-place method (__iadd__, add_, ...) gets a Tensor of self's dtype and shape that does
 *     not partly overlap self, or a number as above, and the entry gives self's dtype
 *     (tt_binary_contiguous, tt_binary_scalar_contiguous; then the storage's version is bumped,
 *     as elementwise.py's `_fast_inplace` does).
 * A new result is built as wrap_new builds it: a new Storage holding the new strong reference and
 * a Tensor with the operand's shape and strides (a broadcast result: the result's shape and
 * row-major strides), offset 0, the entry's dtype, dense, no autograd; an in-place method returns
 * self.
 *
 * How Python objects are read. Tensor and Storage are Python classes with __slots__; a slot is a
 * PyObject* at a fixed offset in the instance, which the class's member descriptor records. The
 * offsets are read from those descriptors at install time (never hard-coded), and an unset slot
 * (NULL) sends the call to the Python method, which raises as before.
 *
 * Tensor._empty (the new contiguous result of every other op) and Tensor._view (every view) are
 * here too, for the same reason: their plain cases (exactly the Tensor class, no autograd record)
 * build the objects as the Python methods do. So are the one-call paths of the reductions (sum,
 * mean, amax, amin), of softmax and log_softmax (reductions._fast_reduce, reductions._fast_softmax)
 * and Tensor.__matmul__ for two matrices: see "reductions, softmax, matmul" below.
 *
 * Ownership. The install keeps one reference to the spec tuple for the life of the
 * process; every PyObject* stored in `fast` below is borrowed from it. Methods return new
 * references, as CPython requires.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "tt/tt.h"
#include "tt/kernels/dispatch.h"
#include "tt/kernels/manipulation.h"

/* Defined in cffi's generated module (t_tensor/_build/ffi_build.py's preamble): a cffi
 * `tt_storage *` object for a pointer (new reference), and back (borrows). */
PyObject *tt_py_cdata_from_pointer(void *pointer, PyObject *ctype);
void *tt_py_cdata_to_pointer(PyObject *cdata, PyObject *ctype);

#define MAX_DTYPES 16
#define MAX_METHODS 100
/* Outputs at least this large run with the GIL released, so other Python threads go on while
 * the kernel runs; below it, releasing and retaking the GIL costs more than the kernel. */
#define RELEASE_GIL_BYTES ((int64_t)1 << 16)

/* What one kind of operand pair may run, per dtype of the tensor: elementwise.py's table. */
typedef struct {
    int op_code[MAX_DTYPES]; /* -1: no fast entry for this dtype (also for a whole absent table) */
    int out_code[MAX_DTYPES];
    PyObject *out_dtype[MAX_DTYPES];
} entry_table;

/* One method: a binary operator, reflected or in place (entries in `tensors`, `ints`, `floats`),
 * or a unary method such as exp or __neg__ (entries in `unary`). An absent table has no entries. */
typedef struct {
    PyObject *fallback;  /* the Python method this one replaces: takes every other case */
    const char *name;    /* the method's name (owned by the spec) */
    int number_first;    /* reflected (__radd__, ...): the number is the left operand */
    int in_place;        /* __iadd__, add_, ...: self = op(self, other), returns self */
    entry_table tensors; /* a Tensor operand of the same dtype */
    entry_table ints;    /* a Python int that fits int64 */
    entry_table floats;  /* a Python float */
    entry_table unary;   /* no operand: self alone */
} fast_method;

/* Everything the methods read, filled from one spec at install time. */
typedef struct {
    PyObject *spec; /* owned; everything else here is borrowed from it */
    PyTypeObject *tensor_type;
    PyTypeObject *storage_type;
    PyObject *storage_ctype;
    /* slot offsets: TensorImpl's fields and Storage's */
    Py_ssize_t t_storage, t_shape, t_strides, t_offset, t_dtype, t_dense, t_ag;
    Py_ssize_t s_ptr, s_data;
    int ndtypes;
    PyObject *dtypes[MAX_DTYPES];
    int64_t itemsize[MAX_DTYPES];
    int nmethods;
    fast_method operators[MAX_METHODS];
    PyMethodDef operator_defs[MAX_METHODS];
    PyMethodDef storage_del_def;
    PyObject *empty_fallback; /* TensorImpl._empty's function: takes every other case */
    PyMethodDef empty_def;
    PyObject *view_fallback; /* Tensor._view's Python function: takes every other case */
    PyMethodDef view_def;
    int floating[MAX_DTYPES]; /* the dtype's is_floating_point */
    /* the Python functions the C helpers replace (reductions._fast_reduce, ...) and the Python
       __matmul__: each takes every case its C twin does not */
    PyObject *reduce_fallback, *softmax_fallback, *join_fallback, *matmul_fallback;
    PyMethodDef reduce_def, softmax_def, join_def, matmul_def;
} fast_state;

/* The methods' state, filled once per process; and the scratch state every install call checks
 * its spec into first, so that a spec C refuses is reported the same way before and after. The
 * state is never replaced: the method descriptors point into it, and tensors of the class they
 * were made for must keep working. A second import of t_tensor in one process (a new Tensor
 * class) therefore keeps its Python methods (tt_py_install_fast_ops returns 1). */
static fast_state fast, next_state;

#define SLOT(object, offset) (*(PyObject **)((char *)(object) + (offset)))

/* ------------------------------------------------------------------ the methods */

/* fallback(self, *args, **kwargs) with the vectorcall arguments of a METH_FASTCALL|METH_KEYWORDS
 * method. Returns a new reference or NULL with an exception set. */
static PyObject *call_fallback(PyObject *fallback, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    Py_ssize_t total = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8];
    PyObject **stack = total < 8 ? small : PyMem_Malloc((size_t)(total + 1) * sizeof(PyObject *));
    if (stack == NULL) {
        return PyErr_NoMemory();
    }
    stack[0] = self;
    for (Py_ssize_t i = 0; i < total; i++) {
        stack[i + 1] = args[i];
    }
    PyObject *result = PyObject_Vectorcall(fallback, stack, (size_t)nargs + 1, kwnames);
    if (stack != small) {
        PyMem_Free(stack);
    }
    return result;
}

/* The dtype code of a DType object, or -1 when it is not one of the install-time dtypes. */
static int dtype_code(PyObject *dtype) {
    for (int code = 0; code < fast.ndtypes; code++) {
        if (fast.dtypes[code] == dtype) {
            return code;
        }
    }
    return -1;
}

/* Whether two shape tuples are equal; -1 with an exception set if a comparison raised. */
static int same_shape(PyObject *a, PyObject *b) {
    if (a == b) {
        return 1;
    }
    if (!PyTuple_CheckExact(a) || !PyTuple_CheckExact(b) || PyTuple_GET_SIZE(a) != PyTuple_GET_SIZE(b)) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a); i++) {
        PyObject *x = PyTuple_GET_ITEM(a, i), *y = PyTuple_GET_ITEM(b, i);
        if (x != y) { /* small ints are shared objects, so this is the common exit */
            int equal = PyObject_RichCompareBool(x, y, Py_EQ);
            if (equal <= 0) {
                return equal;
            }
        }
    }
    return 1;
}

/* The number of elements of a shape tuple, or -1 with an exception set if an item is not a
 * non-negative int or the product overflows (an empty tensor may have huge dimensions: the
 * Python method then decides). */
static int64_t shape_numel(PyObject *shape) {
    int64_t numel = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        Py_ssize_t size = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (size < 0 || __builtin_mul_overflow(numel, (int64_t)size, &numel)) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_OverflowError, "shape_numel: not a plain shape");
            }
            return -1;
        }
    }
    return numel;
}

/* A tensor operand, as read from its slots. The object fields are borrowed until hold() takes
 * references to them. */
typedef struct {
    int code;          /* dtype code */
    int64_t numel;     /* plain_tensor only */
    uintptr_t address; /* of element 0 */
    PyObject *shape, *strides, *storage;
} operand;

/* Fill `x` from `tensor` when it is exactly a Tensor that records no autograd, of a known dtype,
 * with its slots set (any layout); returns 0, or -1 (no exception set) otherwise. */
static int read_tensor(PyObject *tensor, operand *x) {
    if (Py_TYPE(tensor) != fast.tensor_type || SLOT(tensor, fast.t_ag) != Py_None || SLOT(tensor, fast.t_dense) == NULL) {
        return -1;
    }
    x->code = dtype_code(SLOT(tensor, fast.t_dtype));
    x->shape = SLOT(tensor, fast.t_shape);
    x->strides = SLOT(tensor, fast.t_strides);
    x->storage = SLOT(tensor, fast.t_storage);
    PyObject *offset = SLOT(tensor, fast.t_offset);
    if (x->code < 0 || x->shape == NULL || !PyTuple_CheckExact(x->shape) || x->strides == NULL ||
        x->storage == NULL || Py_TYPE(x->storage) != fast.storage_type || offset == NULL) {
        return -1;
    }
    PyObject *data = SLOT(x->storage, fast.s_data);
    if (data == NULL) {
        return -1;
    }
    /* each conversion checked at once: a failed one made an exception object (an allocation, which
       may run a collection), and nothing borrowed is read after it */
    uintptr_t address = (uintptr_t)PyLong_AsUnsignedLongLong(data);
    if (address == (uintptr_t)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t elements = PyLong_AsSsize_t(offset);
    if (elements == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    /* unsigned: wraps like the C core's own address arithmetic */
    x->address = address + (uintptr_t)elements * (uintptr_t)fast.itemsize[x->code];
    return 0;
}

/* read_tensor for a plain-case operand: also known dense (`_dense is True`), with its element
 * count; returns 0, or -1 (no exception set) for "not the plain case". */
static int plain_tensor(PyObject *tensor, operand *x) {
    if (Py_TYPE(tensor) != fast.tensor_type || SLOT(tensor, fast.t_dense) != Py_True || read_tensor(tensor, x) < 0) {
        return -1;
    }
    if ((x->numel = shape_numel(x->shape)) < 0) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* Between reading the operands and building the result, other Python code can run: other
 * threads while the GIL is released, and a collection (with its callbacks and finalizers) inside
 * tp_alloc. It could clear an operand's slots or drop its last reference to the storage the
 * kernel reads, so the fields used later are held for the duration. */
static void hold(const operand *x) {
    Py_INCREF(x->shape);
    Py_INCREF(x->strides);
    Py_INCREF(x->storage);
}

static void drop(const operand *x) {
    Py_DECREF(x->shape);
    Py_DECREF(x->strides);
    Py_DECREF(x->storage);
}

/* The kernel call, with the GIL released for large outputs (see RELEASE_GIL_BYTES). */
#define RUN_RELEASING_GIL_IF_LARGE(nbytes, call)                                                     \
    do {                                                                                             \
        if ((nbytes) >= RELEASE_GIL_BYTES) {                                                         \
            Py_BEGIN_ALLOW_THREADS call;                                                             \
            Py_END_ALLOW_THREADS                                                                     \
        } else {                                                                                     \
            call;                                                                                    \
        }                                                                                            \
    } while (0)

/* A new Tensor over the fresh storage `ptr` (its one strong reference is taken over, also on
 * failure), with the shape and strides tuples `shape` and `strides` (borrowed), offset 0, dtype
 * `dtype`. Returns a new reference,
 * or NULL without an exception set: "not the plain case", so the caller runs the Python method
 * (whose general path tries again and raises its own error; ptr NULL means a kernel refused,
 * e.g. an integer division by zero, or memory ran out). */
static PyObject *wrap_new(tt_storage *ptr, PyObject *shape, PyObject *strides, PyObject *dtype) {
    if (ptr == NULL) {
        return NULL;
    }
    PyObject *storage = fast.storage_type->tp_alloc(fast.storage_type, 0);
    PyObject *data = storage != NULL ? PyLong_FromUnsignedLongLong(tt_storage_data_address(ptr)) : NULL;
    PyObject *pointer = data != NULL ? tt_py_cdata_from_pointer(ptr, fast.storage_ctype) : NULL;
    if (pointer == NULL) {
        Py_XDECREF(data);
        Py_XDECREF(storage); /* _ptr unset: its finalizer releases nothing */
        tt_storage_release(ptr);
        PyErr_Clear();
        return NULL;
    }
    SLOT(storage, fast.s_data) = data;
    SLOT(storage, fast.s_ptr) = pointer; /* from here on the Storage owns the reference */

    PyObject *result = fast.tensor_type->tp_alloc(fast.tensor_type, 0);
    if (result == NULL) {
        Py_DECREF(storage);
        PyErr_Clear();
        return NULL;
    }
    SLOT(result, fast.t_storage) = storage;
    SLOT(result, fast.t_shape) = Py_NewRef(shape);
    SLOT(result, fast.t_strides) = Py_NewRef(strides);
    SLOT(result, fast.t_offset) = PyLong_FromLong(0); /* a cached small int: cannot fail */
    SLOT(result, fast.t_dtype) = Py_NewRef(dtype);
    SLOT(result, fast.t_dense) = Py_NewRef(Py_True);
    SLOT(result, fast.t_ag) = Py_NewRef(Py_None);
    return result;
}

/* The sizes and strides of a shape tuple and a strides tuple, into arrays of TT_MAX_DIMS; returns
 * the dimension count, or -1 (no exception set) when they are not non-negative exact ints of one
 * length within TT_MAX_DIMS (the Python method then decides). */
static int read_layout(PyObject *shape, PyObject *strides, int64_t *sizes, int64_t *steps) {
    if (!PyTuple_CheckExact(strides) || PyTuple_GET_SIZE(shape) != PyTuple_GET_SIZE(strides) ||
        PyTuple_GET_SIZE(shape) > TT_MAX_DIMS) {
        return -1;
    }
    const int ndim = (int)PyTuple_GET_SIZE(shape);
    for (int d = 0; d < ndim; d++) {
        PyObject *size = PyTuple_GET_ITEM(shape, d), *step = PyTuple_GET_ITEM(strides, d);
        if (!PyLong_CheckExact(size) || !PyLong_CheckExact(step)) {
            return -1; /* exact ints only: nothing here runs Python code (__index__) */
        }
        sizes[d] = PyLong_AsLongLong(size);
        steps[d] = sizes[d] < 0 ? -1 : PyLong_AsLongLong(step);
        if (sizes[d] < 0 || steps[d] < 0) {
            PyErr_Clear();
            return -1;
        }
    }
    return ndim;
}

/* A tuple of the n ints `values` (new reference), or NULL with an exception set. */
static PyObject *int_tuple(const int64_t *values, int n) {
    PyObject *tuple = PyTuple_New(n);
    for (int d = 0; tuple != NULL && d < n; d++) {
        PyObject *item = PyLong_FromLongLong(values[d]);
        if (item == NULL) {
            Py_CLEAR(tuple);
        } else {
            PyTuple_SET_ITEM(tuple, d, item);
        }
    }
    return tuple;
}

/* A new Tensor of `dtype` with the row-major layout of the ndim `sizes` over the fresh storage
 * `ptr` (taken over, also on failure); `shape` is the shape tuple when the caller has one
 * (borrowed), else NULL. NULL without an exception set when anything fails. */
static PyObject *wrap_new_sizes(tt_storage *ptr, const int64_t *sizes, int ndim, PyObject *shape, PyObject *dtype) {
    int64_t strides[TT_MAX_DIMS], numel;
    PyObject *shape_tuple = NULL, *strides_tuple = NULL;
    if (ptr != NULL && tt_row_major_strides(ndim, sizes, strides, &numel) == 0) {
        shape_tuple = shape != NULL ? Py_NewRef(shape) : int_tuple(sizes, ndim);
        strides_tuple = shape_tuple != NULL ? int_tuple(strides, ndim) : NULL;
    }
    if (strides_tuple == NULL) {
        Py_XDECREF(shape_tuple);
        PyErr_Clear();
        if (ptr != NULL) {
            tt_storage_release(ptr);
        }
        return NULL;
    }
    PyObject *result = wrap_new(ptr, shape_tuple, strides_tuple, dtype);
    Py_DECREF(strides_tuple);
    Py_DECREF(shape_tuple);
    return result;
}

/* tensor op tensor of one dtype in any shapes that broadcast and any strides (elementwise.py's
 * `_fast_strided`): each operand is read through its strides, 0 along the dimensions it is
 * broadcast over, into a fresh row-major result (tt_binary_strided_new). The result's shape tuple
 * is an operand's when it has the result's shape. The caller holds both operands: the tuples made
 * here can start a collection. */
static PyObject *broadcast_case(const fast_method *op, const operand *a, const operand *b) {
    int64_t a_sizes[TT_MAX_DIMS], a_steps[TT_MAX_DIMS], b_sizes[TT_MAX_DIMS], b_steps[TT_MAX_DIMS];
    const int a_ndim = read_layout(a->shape, a->strides, a_sizes, a_steps);
    const int b_ndim = a_ndim < 0 ? -1 : read_layout(b->shape, b->strides, b_sizes, b_steps);
    if (b_ndim < 0) {
        return NULL;
    }
    const int ndim = a_ndim > b_ndim ? a_ndim : b_ndim;
    int64_t shape[TT_MAX_DIMS], a_read[TT_MAX_DIMS], b_read[TT_MAX_DIMS], strides[TT_MAX_DIMS];
    int64_t numel;
    int a_is_shape = a_ndim == ndim, b_is_shape = b_ndim == ndim;
    for (int d = ndim - 1; d >= 0; d--) { /* aligned on the right; a missing dim has size 1 */
        const int i = d - (ndim - a_ndim), j = d - (ndim - b_ndim);
        const int64_t a_size = i >= 0 ? a_sizes[i] : 1, b_size = j >= 0 ? b_sizes[j] : 1;
        if (a_size != b_size && a_size != 1 && b_size != 1) {
            return NULL; /* they do not broadcast: the Python method raises */
        }
        shape[d] = a_size == 1 ? b_size : a_size;
        a_read[d] = i >= 0 && a_size == shape[d] ? a_steps[i] : 0;
        b_read[d] = j >= 0 && b_size == shape[d] ? b_steps[j] : 0;
        a_is_shape &= a_size == shape[d];
        b_is_shape &= b_size == shape[d];
    }
    const int out_code = op->tensors.out_code[a->code];
    int64_t nbytes;
    if (tt_row_major_strides(ndim, shape, strides, &numel) < 0 ||
        __builtin_mul_overflow(numel, fast.itemsize[out_code], &nbytes)) {
        return NULL; /* the Python method raises */
    }
    tt_storage *ptr;
    RUN_RELEASING_GIL_IF_LARGE(nbytes, ptr = tt_binary_strided_new(op->tensors.op_code[a->code], ndim, shape, a->address,
                                                                   a_read, b->address, b_read, a->code, out_code));
    return wrap_new_sizes(ptr, shape, ndim, a_is_shape ? a->shape : b_is_shape ? b->shape : NULL,
                          op->tensors.out_dtype[a->code]);
}

/* tensor op tensor, one dtype: both known dense with equal shapes (one contiguous kernel over the
 * elements), else broadcast_case. */
static PyObject *tensor_tensor_case(const fast_method *op, PyObject *a_object, PyObject *b_object) {
    operand a, b;
    if (read_tensor(a_object, &a) < 0 || op->tensors.op_code[a.code] < 0 || read_tensor(b_object, &b) < 0 ||
        b.code != a.code) {
        return NULL;
    }
    PyObject *result = NULL;
    hold(&a);
    hold(&b);
    const int same = same_shape(a.shape, b.shape);
    if (same < 0) {
        PyErr_Clear();
    } else if (!same || SLOT(a_object, fast.t_dense) != Py_True || SLOT(b_object, fast.t_dense) != Py_True) {
        result = broadcast_case(op, &a, &b);
    } else if ((a.numel = shape_numel(a.shape)) < 0) {
        PyErr_Clear();
    } else {
        const int out_code = op->tensors.out_code[a.code];
        tt_storage *ptr;
        RUN_RELEASING_GIL_IF_LARGE(a.numel * fast.itemsize[out_code],
                                   ptr = tt_binary_new(op->tensors.op_code[a.code], a.numel, a.address, b.address,
                                                       a.code, out_code));
        result = wrap_new(ptr, a.shape, a.strides, op->tensors.out_dtype[a.code]);
    }
    drop(&b);
    drop(&a);
    return result;
}

/* tensor op number, or number op tensor for a reflected method: `number` is an exact int or
 * float (the caller checked). */
static PyObject *tensor_number_case(const fast_method *op, PyObject *tensor, PyObject *number) {
    int is_int = PyLong_CheckExact(number);
    const entry_table *table = is_int ? &op->ints : &op->floats;
    int64_t s_int = 0;
    double s_float = 0.0;
    if (is_int) {
        int overflow;
        s_int = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (overflow != 0) {
            return NULL; /* outside int64: the general path decides */
        }
    } else {
        s_float = PyFloat_AS_DOUBLE(number);
    }
    operand x;
    if (plain_tensor(tensor, &x) < 0 || table->op_code[x.code] < 0) {
        return NULL;
    }
    const int out_code = table->out_code[x.code];
    tt_storage *ptr;
    hold(&x);
    RUN_RELEASING_GIL_IF_LARGE(x.numel * fast.itemsize[out_code],
                               ptr = tt_binary_scalar_new(table->op_code[x.code], x.numel, x.address, s_int, s_float,
                                                          is_int, op->number_first, x.code, out_code));
    PyObject *result = wrap_new(ptr, x.shape, x.strides, table->out_dtype[x.code]);
    drop(&x);
    return result;
}

/* op(self) for a unary method. */
static PyObject *unary_case(const fast_method *op, PyObject *tensor) {
    operand x;
    if (plain_tensor(tensor, &x) < 0 || op->unary.op_code[x.code] < 0) {
        return NULL;
    }
    const int out_code = op->unary.out_code[x.code];
    tt_storage *ptr;
    hold(&x);
    RUN_RELEASING_GIL_IF_LARGE(x.numel * fast.itemsize[out_code],
                               ptr = tt_unary_new(op->unary.op_code[x.code], x.numel, x.address, x.code, out_code));
    PyObject *result = wrap_new(ptr, x.shape, x.strides, op->unary.out_dtype[x.code]);
    drop(&x);
    return result;
}

/* self = op(self, other) for an in-place method: `other` a Tensor of self's dtype and shape that
 * does not partly overlap it (it may be self), or an exact int or float; the tables hold only the
 * entries whose result dtype is self's. Returns self (new reference); NULL without an exception
 * for "not the plain case", NULL with one if the kernel failed (after writing: no fallback). */
static PyObject *in_place_case(const fast_method *op, PyObject *self, PyObject *other) {
    operand out, b;
    int is_tensor = Py_TYPE(other) == fast.tensor_type, is_int = PyLong_CheckExact(other);
    if ((!is_tensor && !is_int && !PyFloat_CheckExact(other)) || plain_tensor(self, &out) < 0) {
        return NULL;
    }
    const entry_table *table = is_tensor ? &op->tensors : is_int ? &op->ints : &op->floats;
    const int op_code = table->op_code[out.code];
    if (op_code < 0) {
        return NULL;
    }
    int64_t s_int = 0;
    double s_float = 0.0;
    if (is_tensor) {
        if (plain_tensor(other, &b) < 0 || b.code != out.code || same_shape(out.shape, b.shape) != 1) {
            PyErr_Clear();
            return NULL;
        }
        const uintptr_t nbytes = (uintptr_t)out.numel * (uintptr_t)fast.itemsize[out.code];
        const uintptr_t distance = b.address > out.address ? b.address - out.address : out.address - b.address;
        if (distance != 0 && distance < nbytes) {
            return NULL; /* partly overlapping: the general path copies */
        }
    } else if (is_int) {
        int overflow;
        s_int = PyLong_AsLongLongAndOverflow(other, &overflow);
        if (overflow != 0) {
            return NULL;
        }
    } else {
        s_float = PyFloat_AS_DOUBLE(other);
    }
    PyObject *pointer = SLOT(out.storage, fast.s_ptr);
    tt_storage *storage = pointer != NULL ? tt_py_cdata_to_pointer(pointer, fast.storage_ctype) : NULL;
    if (storage == NULL) {
        PyErr_Clear();
        return NULL;
    }
    tt_status status;
    hold(&out);
    if (is_tensor) {
        hold(&b);
    }
    RUN_RELEASING_GIL_IF_LARGE(
        out.numel * fast.itemsize[out.code],
        status = is_tensor ? tt_binary_contiguous(op_code, out.numel, out.address, b.address, out.address, out.code)
                           : tt_binary_scalar_contiguous(op_code, out.numel, out.address, s_int, s_float, is_int, 0,
                                                         out.address, out.code));
    tt_storage_bump_version(storage); /* an in-place write: autograd's saved copies are now stale */
    if (is_tensor) {
        drop(&b);
    }
    drop(&out);
    if (status != TT_OK) { /* the tables leave out the ops that can fail, such as integer division */
        PyErr_Format(PyExc_RuntimeError, "%s: %s", op->name, tt_status_string(status));
        return NULL;
    }
    return Py_NewRef(self);
}

static PyObject *fast_method_call(const fast_method *op, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
    if (nargs == 0 && kwnames == NULL) {
        PyObject *result = unary_case(op, self);
        if (result != NULL) {
            return result;
        }
    } else if (nargs == 1 && kwnames == NULL && op->in_place) {
        PyObject *result = in_place_case(op, self, args[0]);
        if (result != NULL || PyErr_Occurred()) {
            return result;
        }
    } else if (nargs == 1 && kwnames == NULL) {
        PyObject *other = args[0], *result = NULL;
        if (Py_TYPE(other) == fast.tensor_type) {
            result = tensor_tensor_case(op, self, other);
        } else if (PyFloat_CheckExact(other) || PyLong_CheckExact(other)) {
            result = tensor_number_case(op, self, other);
        }
        if (result != NULL) {
            return result;
        }
    }
    return call_fallback(op->fallback, self, args, nargs, kwnames);
}

/* One C function per operator slot: a method gets no pointer to its own definition, so each
 * slot's function passes its index. */
#define OPERATOR_METHOD(k)                                                                           \
    static PyObject *operator_##k(PyObject *self, PyObject *const *args, Py_ssize_t nargs,           \
                                  PyObject *kwnames) {                                               \
        return fast_method_call(&fast.operators[k], self, args, nargs, kwnames);                        \
    }
#define TEN_OPERATOR_METHODS(tens)                                                                   \
    OPERATOR_METHOD(tens##0) OPERATOR_METHOD(tens##1) OPERATOR_METHOD(tens##2) OPERATOR_METHOD(tens##3)      \
    OPERATOR_METHOD(tens##4) OPERATOR_METHOD(tens##5) OPERATOR_METHOD(tens##6) OPERATOR_METHOD(tens##7)      \
    OPERATOR_METHOD(tens##8) OPERATOR_METHOD(tens##9)
TEN_OPERATOR_METHODS() TEN_OPERATOR_METHODS(1) TEN_OPERATOR_METHODS(2) TEN_OPERATOR_METHODS(3)
TEN_OPERATOR_METHODS(4) TEN_OPERATOR_METHODS(5) TEN_OPERATOR_METHODS(6) TEN_OPERATOR_METHODS(7)
TEN_OPERATOR_METHODS(8) TEN_OPERATOR_METHODS(9)

#define TEN_OPERATOR_NAMES(tens)                                                                     \
    operator_##tens##0, operator_##tens##1, operator_##tens##2, operator_##tens##3, operator_##tens##4,  \
    operator_##tens##5, operator_##tens##6, operator_##tens##7, operator_##tens##8, operator_##tens##9
static PyObject *(*const operator_functions[MAX_METHODS])(PyObject *, PyObject *const *, Py_ssize_t, PyObject *) = {
    TEN_OPERATOR_NAMES(),  TEN_OPERATOR_NAMES(1), TEN_OPERATOR_NAMES(2), TEN_OPERATOR_NAMES(3),
    TEN_OPERATOR_NAMES(4), TEN_OPERATOR_NAMES(5), TEN_OPERATOR_NAMES(6), TEN_OPERATOR_NAMES(7),
    TEN_OPERATOR_NAMES(8), TEN_OPERATOR_NAMES(9),
};

/* Storage.__del__: release the one strong reference this Storage owns, if it got as far as owning
 * one (`_ptr` is set last by every constructor). CPython calls it once per object (PEP 442). */
static PyObject *storage_del(PyObject *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *pointer = SLOT(self, fast.s_ptr);
    if (pointer == NULL) {
        Py_RETURN_NONE;
    }
    tt_storage *storage = tt_py_cdata_to_pointer(pointer, fast.storage_ctype);
    if (storage == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    tt_storage_release(storage);
    Py_RETURN_NONE;
}

/* Tensor._empty(shape, dtype, fn="empty"), TensorImpl._empty of tensor_impl.py, which every op
 * that makes a result outside this file calls: a classmethod, so `cls` is the class it was called
 * on. The plain case: exactly the Tensor class, positional arguments, a shape tuple of at most
 * TT_MAX_DIMS exact non-negative ints and one of the spec's dtypes. Then the storage comes from
 * tt_storage_new_default, and the Tensor is built as wrap_new builds it, with the row-major
 * strides (a size-0 dimension counting as 1 for the dimensions outside it, as
 * strides.contiguous_strides). Anything else, an overflow, and an allocation that fails run the
 * Python method, which raises its own errors. In Python the method took about 10,000
 * instructions, 2.4 times a whole `a + b` of this file. */
static PyObject *tensor_empty(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (cls != (PyObject *)fast.tensor_type || kwnames != NULL || nargs < 2 || nargs > 3 ||
        !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) > TT_MAX_DIMS) {
        return call_fallback(fast.empty_fallback, cls, args, nargs, kwnames);
    }
    PyObject *shape = args[0], *dtype = args[1];
    const int code = dtype_code(dtype);
    const int ndim = (int)PyTuple_GET_SIZE(shape);
    int64_t sizes[TT_MAX_DIMS], strides[TT_MAX_DIMS], numel, nbytes = -1;
    int plain = code >= 0;
    for (int d = 0; d < ndim && plain; d++) {
        PyObject *item = PyTuple_GET_ITEM(shape, d);
        sizes[d] = PyLong_CheckExact(item) ? PyLong_AsLongLong(item) : -1;
        if (sizes[d] < 0) {
            PyErr_Clear(); /* not an int, negative, or too large for int64: Python decides */
            plain = 0;
        }
    }
    if (plain && (tt_row_major_strides(ndim, sizes, strides, &numel) < 0 ||
                  __builtin_mul_overflow(numel, fast.itemsize[code], &nbytes))) {
        nbytes = -1;
    }
    if (nbytes >= 0) {
        PyObject *result = wrap_new_sizes(tt_storage_new_default((size_t)nbytes), sizes, ndim, shape, dtype);
        if (result != NULL) {
            return result;
        }
    }
    return call_fallback(fast.empty_fallback, cls, args, nargs, kwnames);
}

/* Tensor._view(shape, strides, offset) of views.py, through which every view is made (indexing,
 * view, reshape, transpose, .T, ...): a tensor over the same storage with the given metadata and
 * one more strong reference. The plain case: exactly a Tensor that records no autograd (a tensor
 * with an autograd record may join the graph: Python decides), over exactly a Storage with its
 * slots set, three positional arguments. Like the Python method it checks nothing about the
 * layout (its callers have). The new Storage shares the old one's `_data` and `_ptr` objects, as
 * Storage.share does. Python took about 4,500 instructions for it (its frame, share()'s frame,
 * the cffi retain). */
static PyObject *tensor_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (Py_TYPE(self) != fast.tensor_type || kwnames != NULL || nargs != 3 || SLOT(self, fast.t_ag) != Py_None) {
        return call_fallback(fast.view_fallback, self, args, nargs, kwnames);
    }
    PyObject *storage = SLOT(self, fast.t_storage), *dtype = SLOT(self, fast.t_dtype);
    if (storage == NULL || Py_TYPE(storage) != fast.storage_type || dtype == NULL) {
        return call_fallback(fast.view_fallback, self, args, nargs, kwnames);
    }
    PyObject *pointer = SLOT(storage, fast.s_ptr), *data = SLOT(storage, fast.s_data);
    tt_storage *ptr = pointer != NULL && data != NULL ? tt_py_cdata_to_pointer(pointer, fast.storage_ctype) : NULL;
    if (ptr == NULL) {
        PyErr_Clear();
        return call_fallback(fast.view_fallback, self, args, nargs, kwnames);
    }
    /* Held while the new objects are allocated: a collection there runs arbitrary code, which could
     * clear self's slots and release the old Storage (and with it the bytes' last reference). */
    Py_INCREF(storage);
    Py_INCREF(pointer);
    Py_INCREF(data);
    Py_INCREF(dtype);
    PyObject *other = fast.storage_type->tp_alloc(fast.storage_type, 0);
    if (other == NULL) {
        Py_DECREF(pointer);
        Py_DECREF(data);
        Py_DECREF(dtype);
        Py_DECREF(storage);
        PyErr_Clear();
        return call_fallback(fast.view_fallback, self, args, nargs, kwnames);
    }
    /* The Storage is whole before the next tracked allocation (as in wrap_new): a collection there
     * can reach it (gc.get_objects), and must not find it without its slots. */
    tt_storage_retain(ptr); /* the new Storage's strong reference; `storage` keeps ptr alive until here */
    SLOT(other, fast.s_data) = data;       /* the references taken above move into the slots */
    SLOT(other, fast.s_ptr) = pointer;     /* from here on `other` owns the new reference */
    PyObject *result = fast.tensor_type->tp_alloc(fast.tensor_type, 0);
    if (result == NULL) {
        Py_DECREF(other); /* its finalizer releases the reference retained above */
        Py_DECREF(dtype);
        Py_DECREF(storage);
        PyErr_Clear();
        return call_fallback(fast.view_fallback, self, args, nargs, kwnames);
    }
    SLOT(result, fast.t_storage) = other;
    SLOT(result, fast.t_shape) = Py_NewRef(args[0]);
    SLOT(result, fast.t_strides) = Py_NewRef(args[1]);
    SLOT(result, fast.t_offset) = Py_NewRef(args[2]);
    SLOT(result, fast.t_dtype) = dtype;
    SLOT(result, fast.t_dense) = Py_NewRef(Py_None);
    SLOT(result, fast.t_ag) = Py_NewRef(Py_None);
    Py_DECREF(storage);
    return result;
}

/* ------------------------------------------------------------------ reductions, softmax, matmul
 *
 * reductions._fast_reduce and reductions._fast_softmax, the one-call paths of sum, mean, amax,
 * amin, softmax and log_softmax, and the @ operator. Each takes the plain case in C and hands
 * every other call to the Python function or method it replaces (given in the spec), which
 * returns None for the general path or computes the result itself. The plain case: exactly a
 * Tensor that records no autograd, known dense (`_dense is True`), of a floating dtype, and
 * arguments of exactly the expected types. The kernels are the general path's (tt_reduce,
 * tt_softmax, tt_matmul through dispatch.c's "allocate and run" functions), so the results are
 * the same bits. A kernel that fails (it does not for these inputs; out of memory does) sends
 * the call to the Python function, which raises the precise error. */

/* The exact int `dim` as a dimension of an ndim-dim tensor, counted from the end when negative:
 * in [0, ndim), or -1 when it is out of range (an ndim of 0 has no dims) or past a long long. */
static int normalize_dim(PyObject *dim, int ndim) {
    int overflow;
    const long long value = PyLong_AsLongLongAndOverflow(dim, &overflow);
    if (overflow != 0 || value < -ndim || value >= ndim) {
        return -1;
    }
    return (int)(value < 0 ? value + ndim : value);
}

/* Whether `x` is a plain floating operand (plain_tensor, floating dtype) with its sizes read into
 * `sizes`; returns the dimension count, or -1 (no exception set). */
static int plain_float_tensor(PyObject *tensor, operand *x, int64_t *sizes) {
    int64_t steps[TT_MAX_DIMS];
    if (plain_tensor(tensor, x) < 0 || !fast.floating[x->code]) {
        return -1;
    }
    return read_layout(x->shape, x->strides, sizes, steps);
}

/* _fast_reduce(op, x, dim, keepdim[, needs_elements]) of reductions.py: `op` (a tt_reduce op) over
 * all of x (dim None) or over the int dim, keepdim None or a bool, needs_elements a bool (max and
 * min: nothing to reduce is the general path's). The result: a fresh tensor of x's dtype. */
static PyObject *reduce_case(PyObject *const *args, Py_ssize_t nargs) {
    PyObject *op = args[0], *dim = args[2], *keepdim = args[3];
    const int needs_elements = nargs == 5 && args[4] == Py_True;
    if (!PyLong_CheckExact(op) || (dim != Py_None && !PyLong_CheckExact(dim)) ||
        (keepdim != Py_None && keepdim != Py_True && keepdim != Py_False) ||
        (nargs == 5 && args[4] != Py_True && args[4] != Py_False)) {
        return NULL;
    }
    operand x;
    int64_t sizes[TT_MAX_DIMS], out_sizes[TT_MAX_DIMS];
    const int ndim = plain_float_tensor(args[1], &x, sizes);
    int overflow;
    const long op_code = PyLong_AsLongAndOverflow(op, &overflow);
    if (ndim < 0 || overflow != 0 || op_code < 0 || op_code > INT32_MAX) {
        return NULL;
    }
    int64_t outer = 1, size = x.numel, inner = 1;
    int out_ndim = 0;
    if (dim == Py_None) {
        out_ndim = keepdim == Py_True ? ndim : 0;
        for (int i = 0; i < out_ndim; i++) {
            out_sizes[i] = 1;
        }
    } else {
        const int d = normalize_dim(dim, ndim);
        if (d < 0) {
            return NULL; /* also any int dim of a 0-d x */
        }
        for (int i = 0; i < ndim; i++) {
            /* x may have no elements and still dims whose product passes int64 */
            if ((i < d && __builtin_mul_overflow(outer, sizes[i], &outer)) ||
                (i > d && __builtin_mul_overflow(inner, sizes[i], &inner))) {
                return NULL;
            }
            if (i != d) {
                out_sizes[out_ndim++] = sizes[i];
            } else if (keepdim == Py_True) {
                out_sizes[out_ndim++] = 1;
            }
        }
        size = sizes[d];
    }
    if (needs_elements && size == 0) {
        return NULL;
    }
    tt_storage *ptr;
    hold(&x);
    RUN_RELEASING_GIL_IF_LARGE(x.numel * fast.itemsize[x.code],
                               ptr = tt_reduce_new((int)op_code, outer, size, inner, x.address, x.code, x.code, 0.0));
    PyObject *result = wrap_new_sizes(ptr, out_sizes, out_ndim, NULL, fast.dtypes[x.code]);
    drop(&x);
    return result;
}

static PyObject *fast_reduce(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    if (kwnames == NULL && (nargs == 4 || nargs == 5)) {
        PyObject *result = reduce_case(args, nargs);
        if (result != NULL) {
            return result;
        }
    }
    return PyObject_Vectorcall(fast.reduce_fallback, args, (size_t)nargs, kwnames);
}

/* _fast_softmax(x, dim, log) of reductions.py: log_softmax (log: True) or softmax over the int dim
 * of a plain floating x of at least one dimension; a fresh tensor of x's dtype and shape. */
static PyObject *softmax_case(PyObject *const *args) {
    PyObject *dim = args[1], *log = args[2];
    if (!PyLong_CheckExact(dim) || (log != Py_True && log != Py_False)) {
        return NULL;
    }
    operand x;
    int64_t sizes[TT_MAX_DIMS];
    const int ndim = plain_float_tensor(args[0], &x, sizes);
    const int d = ndim > 0 ? normalize_dim(dim, ndim) : -1;
    if (d < 0) {
        return NULL;
    }
    tt_storage *ptr;
    hold(&x);
    RUN_RELEASING_GIL_IF_LARGE(x.numel * fast.itemsize[x.code],
                               ptr = tt_softmax_new(log == Py_True, ndim, sizes, x.address, x.code, d));
    PyObject *result = wrap_new_sizes(ptr, sizes, ndim, x.shape, fast.dtypes[x.code]);
    drop(&x);
    return result;
}

static PyObject *fast_softmax(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    if (kwnames == NULL && nargs == 3) {
        PyObject *result = softmax_case(args);
        if (result != NULL) {
            return result;
        }
    }
    return PyObject_Vectorcall(fast.softmax_fallback, args, (size_t)nargs, kwnames);
}

/* _fast_join(tensors, dim, new_axis) of manipulation.py: cat (new_axis False) or stack (True) of a
 * list or tuple of plain tensors (exactly Tensor, no autograd record, known dense) of one dtype,
 * whose shapes fit (stack: equal; cat: equal but along dim, at least one dim), along the int dim,
 * into a result with no zero-size dim. Every input is then `outer` blocks of (its size along dim)
 * x `inner` elements, all copied by one tt_join_contiguous. Any dtype: bytes are moved. */
#define JOIN_ON_STACK 16
static PyObject *join_case(PyObject *const *args) {
    PyObject *sequence = args[0], *dim = args[1], *new_axis_object = args[2];
    if ((!PyList_CheckExact(sequence) && !PyTuple_CheckExact(sequence)) || !PyLong_CheckExact(dim) ||
        (new_axis_object != Py_True && new_axis_object != Py_False)) {
        return NULL;
    }
    const int new_axis = new_axis_object == Py_True;
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    /* The items are read once, in the first loop below, which runs no Python code (so a list
       cannot change under it); each operand is held from then on, and nothing reads the list
       again (other threads may change it while the GIL is released). */
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    if (count == 0) {
        return NULL;
    }
    operand small[JOIN_ON_STACK];
    uintptr_t small_srcs[JOIN_ON_STACK];
    int64_t small_blocks[JOIN_ON_STACK];
    operand *inputs = small;
    uintptr_t *srcs = small_srcs;
    int64_t *blocks = small_blocks; /* first each input's size along dim, then its block */
    if (count > JOIN_ON_STACK) {
        inputs = PyMem_Malloc((size_t)count * sizeof(operand));
        srcs = PyMem_Malloc((size_t)count * sizeof(uintptr_t));
        blocks = PyMem_Malloc((size_t)count * sizeof(int64_t));
    }
    PyObject *result = NULL;
    Py_ssize_t held = 0;
    int64_t first[TT_MAX_DIMS], sizes[TT_MAX_DIMS], steps[TT_MAX_DIMS];
    int ndim = 0, d = 0, code = -1;
    if (inputs == NULL || srcs == NULL || blocks == NULL) {
        goto done;
    }
    for (Py_ssize_t t = 0; t < count; t++) {
        operand *x = &inputs[t];
        if (plain_tensor(items[t], x) < 0) {
            goto done;
        }
        hold(x);
        held = t + 1;
        const int x_ndim = read_layout(x->shape, x->strides, t == 0 ? first : sizes, steps);
        if (t == 0) {
            ndim = x_ndim;
            code = x->code;
            d = ndim < 0 || ndim + new_axis > TT_MAX_DIMS ? -1 : normalize_dim(dim, ndim + new_axis);
            if (d < 0) {
                goto done; /* also cat of 0-d inputs (no dims): the general path raises */
            }
        } else {
            if (x->code != code || x_ndim != ndim) {
                goto done;
            }
            for (int i = 0; i < ndim; i++) {
                if (sizes[i] != first[i] && (new_axis || i != d)) {
                    goto done;
                }
            }
        }
        blocks[t] = new_axis ? 1 : t == 0 ? first[d] : sizes[d];
        srcs[t] = x->address;
    }
    /* the result's sizes: the inputs' with dim's the sum of theirs (cat), or with count inserted
       at dim (stack); inputs are `outer` blocks of their size along dim times `inner` elements */
    const int out_ndim = ndim + new_axis;
    int64_t out_sizes[TT_MAX_DIMS], along = 0, outer = 1, inner = 1, nbytes;
    for (Py_ssize_t t = 0; t < count; t++) {
        if (__builtin_add_overflow(along, blocks[t], &along)) {
            goto done;
        }
    }
    for (int i = 0; i < out_ndim; i++) {
        out_sizes[i] = i == d ? along : first[i < d || !new_axis ? i : i - 1];
        if (out_sizes[i] == 0) {
            goto done; /* nothing to copy: the general path makes the empty result */
        }
        if ((i < d && __builtin_mul_overflow(outer, out_sizes[i], &outer)) ||
            (i > d && __builtin_mul_overflow(inner, out_sizes[i], &inner))) {
            goto done;
        }
    }
    for (Py_ssize_t t = 0; t < count; t++) {
        if (__builtin_mul_overflow(blocks[t], inner, &blocks[t])) {
            goto done;
        }
    }
    if (__builtin_mul_overflow(outer, along, &nbytes) || __builtin_mul_overflow(nbytes, inner, &nbytes) ||
        __builtin_mul_overflow(nbytes, fast.itemsize[code], &nbytes)) {
        goto done;
    }
    tt_storage *ptr = tt_storage_new_default((size_t)nbytes);
    if (ptr == NULL) {
        goto done;
    }
    tt_status status;
    RUN_RELEASING_GIL_IF_LARGE(nbytes, status = tt_join_contiguous(count, srcs, blocks, outer, code,
                                                                   tt_storage_data_address(ptr)));
    if (status != TT_OK) {
        tt_storage_release(ptr);
        goto done;
    }
    result = wrap_new_sizes(ptr, out_sizes, out_ndim, NULL, fast.dtypes[code]);
done:
    for (Py_ssize_t t = 0; t < held; t++) {
        drop(&inputs[t]);
    }
    if (inputs != small) {
        PyMem_Free(inputs);
        PyMem_Free(srcs);
        PyMem_Free(blocks);
    }
    return result;
}

static PyObject *fast_join(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (kwnames == NULL && nargs == 3) {
        PyObject *result = join_case(args);
        if (result != NULL) {
            return result;
        }
    }
    return PyObject_Vectorcall(fast.join_fallback, args, (size_t)nargs, kwnames);
}

/* Products at least this large (m * n * k) run with the GIL released. */
#define RELEASE_GIL_MULTIPLY_ADDS ((int64_t)1 << 16)

/* self @ other for two plain-case matrices (2-D, any strides, nothing to record) of one dtype,
 * float32 or float64, with matching inner sizes: a fresh contiguous (m, n) tensor. */
static PyObject *matmul_case(PyObject *self, PyObject *other) {
    operand a, b;
    if (Py_TYPE(other) != fast.tensor_type || read_tensor(self, &a) < 0 || read_tensor(other, &b) < 0 ||
        a.code != b.code || (a.code != TT_FLOAT32 && a.code != TT_FLOAT64)) {
        return NULL;
    }
    int64_t a_sizes[TT_MAX_DIMS], a_steps[TT_MAX_DIMS], b_sizes[TT_MAX_DIMS], b_steps[TT_MAX_DIMS];
    if (PyTuple_GET_SIZE(a.shape) != 2 || PyTuple_GET_SIZE(b.shape) != 2 ||
        read_layout(a.shape, a.strides, a_sizes, a_steps) != 2 || read_layout(b.shape, b.strides, b_sizes, b_steps) != 2 ||
        a_sizes[1] != b_sizes[0]) {
        return NULL;
    }
    const int64_t m = a_sizes[0], k = a_sizes[1], n = b_sizes[1];
    int64_t work;
    if (__builtin_mul_overflow(m, n, &work) || __builtin_mul_overflow(work, k, &work)) {
        return NULL;
    }
    tt_storage *ptr;
    hold(&a);
    hold(&b);
    RUN_RELEASING_GIL_IF_LARGE(work >= RELEASE_GIL_MULTIPLY_ADDS ? RELEASE_GIL_BYTES : 0,
                               ptr = tt_matmul_new(a.code, m, n, k, a.address, a_steps, b.address, b_steps));
    const int64_t sizes[2] = {m, n};
    PyObject *result = wrap_new_sizes(ptr, sizes, 2, NULL, fast.dtypes[a.code]);
    drop(&b);
    drop(&a);
    return result;
}

static PyObject *tensor_matmul(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (Py_TYPE(self) == fast.tensor_type && kwnames == NULL && nargs == 1) {
        PyObject *result = matmul_case(self, args[0]);
        if (result != NULL) {
            return result;
        }
    }
    return call_fallback(fast.matmul_fallback, self, args, nargs, kwnames);
}

/* ------------------------------------------------------------------ install */

/* The offset of the object slot `name` of `type` (its member descriptor's), or -1 with an
 * exception set. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
    PyObject *descriptor = PyObject_GetAttrString((PyObject *)type, name);
    if (descriptor == NULL) {
        return -1;
    }
    Py_ssize_t offset = -1;
    if (Py_TYPE(descriptor) == &PyMemberDescr_Type &&
        ((PyMemberDescrObject *)descriptor)->d_member->type == T_OBJECT_EX) {
        offset = ((PyMemberDescrObject *)descriptor)->d_member->offset;
    } else {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ field", type->tp_name, name);
    }
    Py_DECREF(descriptor);
    return offset;
}

static int read_int_attribute(PyObject *object, const char *name, long low, long high, long *value) {
    PyObject *attribute = PyObject_GetAttrString(object, name);
    if (attribute == NULL) {
        return -1;
    }
    *value = PyLong_AsLong(attribute);
    Py_DECREF(attribute);
    if (*value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (*value < low || *value > high) {
        PyErr_Format(PyExc_ValueError, "%s = %ld is out of range", name, *value);
        return -1;
    }
    return 0;
}

/* Fill `table` from a tuple of one entry per dtype of `state` (None, or (op code, output
 * DType)), or from None (no entries at all). Returns 0, or -1 with an exception set. */
static int read_table(const fast_state *state, PyObject *entries, entry_table *table) {
    for (int code = 0; code < MAX_DTYPES; code++) {
        table->op_code[code] = -1;
    }
    if (entries == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(entries) || PyTuple_GET_SIZE(entries) != state->ndtypes) {
        PyErr_SetString(PyExc_ValueError, "an entry table needs one entry per dtype");
        return -1;
    }
    for (int code = 0; code < state->ndtypes; code++) {
        PyObject *entry = PyTuple_GET_ITEM(entries, code);
        if (entry == Py_None) {
            continue;
        }
        long op_code, out_code;
        PyObject *out_dtype;
        if (!PyArg_ParseTuple(entry, "lO", &op_code, &out_dtype) ||
            read_int_attribute(out_dtype, "code", 0, state->ndtypes - 1, &out_code) < 0) {
            return -1;
        }
        if (state->dtypes[out_code] != out_dtype || op_code < 0 || op_code > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "an entry's dtype is not one of the spec's dtypes");
            return -1;
        }
        table->op_code[code] = (int)op_code;
        table->out_code[code] = (int)out_code;
        table->out_dtype[code] = out_dtype;
    }
    return 0;
}

/* Fill `state` from the spec tuple (see t_tensor/_cfast.py): (Tensor class, Storage class,
 * ffi.typeof("tt_storage *"), the dtypes in code order, one tuple per method). Returns 0, or -1
 * with an exception set. Borrows `spec`; `state->spec` is left for the caller to set. */
static int read_spec(PyObject *spec, fast_state *state) {
    PyTypeObject *tensor_type, *storage_type;
    PyObject *ctype, *dtypes, *methods, *empty_fallback, *view_fallback, *helpers, *matmul_doc;
    if (!PyArg_ParseTuple(spec, "O!O!OO!O!OOO!", &PyType_Type, &tensor_type, &PyType_Type, &storage_type, &ctype,
                          &PyTuple_Type, &dtypes, &PyTuple_Type, &methods, &empty_fallback, &view_fallback,
                          &PyTuple_Type, &helpers) ||
        !PyArg_ParseTuple(helpers, "OOOOU", &state->reduce_fallback, &state->softmax_fallback, &state->join_fallback,
                          &state->matmul_fallback, &matmul_doc)) {
        return -1; /* a tuple: what it holds lives as long as the spec */
    }
    if (!PyCallable_Check(empty_fallback) || !PyCallable_Check(view_fallback) ||
        !PyCallable_Check(state->reduce_fallback) || !PyCallable_Check(state->softmax_fallback) ||
        !PyCallable_Check(state->join_fallback) || !PyCallable_Check(state->matmul_fallback)) {
        PyErr_SetString(PyExc_TypeError, "the spec's fallbacks must be the Python _empty, _view, _fast_reduce, "
                                         "_fast_softmax, _fast_join and __matmul__ functions");
        return -1;
    }
    const char *matmul_text = PyUnicode_AsUTF8(matmul_doc); /* lives as long as the spec */
    if (matmul_text == NULL) {
        return -1;
    }
    state->empty_fallback = empty_fallback;
    state->view_fallback = view_fallback;
    /* The bridge casts it to cffi's ctype descriptor: anything else would be read as one. */
    if (strcmp(Py_TYPE(ctype)->tp_name, "_cffi_backend.CType") != 0) {
        PyErr_SetString(PyExc_TypeError, "the spec's third item must be ffi.typeof(\"tt_storage *\")");
        return -1;
    }
    if (PyTuple_GET_SIZE(dtypes) > MAX_DTYPES || PyTuple_GET_SIZE(methods) > MAX_METHODS) {
        PyErr_SetString(PyExc_ValueError, "too many dtypes or methods for fast_ops.c's tables");
        return -1;
    }
    state->tensor_type = tensor_type;
    state->storage_type = storage_type;
    state->storage_ctype = ctype;
    const char *tensor_slots[] = {"_storage", "_shape", "_strides", "_offset", "_dtype", "_dense", "_ag"};
    Py_ssize_t *tensor_offsets[] = {&state->t_storage, &state->t_shape, &state->t_strides, &state->t_offset,
                                    &state->t_dtype,   &state->t_dense, &state->t_ag};
    for (int i = 0; i < 7; i++) {
        if ((*tensor_offsets[i] = slot_offset(tensor_type, tensor_slots[i])) < 0) {
            return -1;
        }
    }
    if ((state->s_ptr = slot_offset(storage_type, "_ptr")) < 0 ||
        (state->s_data = slot_offset(storage_type, "_data")) < 0) {
        return -1;
    }

    state->ndtypes = (int)PyTuple_GET_SIZE(dtypes);
    for (int code = 0; code < state->ndtypes; code++) {
        PyObject *dtype = PyTuple_GET_ITEM(dtypes, code);
        long dtype_code_value, itemsize, floating;
        if (read_int_attribute(dtype, "code", code, code, &dtype_code_value) < 0 ||
            read_int_attribute(dtype, "itemsize", 1, 16, &itemsize) < 0 ||
            read_int_attribute(dtype, "is_floating_point", 0, 1, &floating) < 0) {
            return -1;
        }
        state->dtypes[code] = dtype;
        state->itemsize[code] = itemsize;
        state->floating[code] = (int)floating;
    }

    state->nmethods = (int)PyTuple_GET_SIZE(methods);
    for (int k = 0; k < state->nmethods; k++) {
        PyObject *name, *fallback, *tensors, *ints, *floats, *unary, *doc;
        fast_method *op = &state->operators[k];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(methods, k), "UOppOOOOU", &name, &fallback, &op->number_first,
                              &op->in_place, &tensors, &ints, &floats, &unary, &doc) ||
            read_table(state, tensors, &op->tensors) < 0 || read_table(state, ints, &op->ints) < 0 ||
            read_table(state, floats, &op->floats) < 0 || read_table(state, unary, &op->unary) < 0) {
            return -1;
        }
        const char *method_name = PyUnicode_AsUTF8(name); /* both live as long as the spec */
        const char *method_doc = PyUnicode_AsUTF8(doc);    /* (its first line: the signature) */
        if (method_name == NULL || method_doc == NULL) {
            return -1;
        }
        op->fallback = fallback;
        op->name = method_name;
        state->operator_defs[k] = (PyMethodDef){method_name, (PyCFunction)(void (*)(void))operator_functions[k],
                                                METH_FASTCALL | METH_KEYWORDS, method_doc};
    }
    state->storage_del_def = (PyMethodDef){"__del__", storage_del, METH_NOARGS,
                                           "Release the one strong reference this Storage owns (in C)."};
    state->empty_def = (PyMethodDef){"_empty", (PyCFunction)(void (*)(void))tensor_empty,
                                     METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
                                     "A new contiguous tensor with uninitialized memory (TensorImpl._empty; "
                                     "runs in C for the plain cases, csrc/python/fast_ops.c)."};
    state->view_def = (PyMethodDef){"_view", (PyCFunction)(void (*)(void))tensor_view, METH_FASTCALL | METH_KEYWORDS,
                                    "A tensor over the same storage with new metadata (Tensor._view; runs in C for "
                                    "the plain cases, csrc/python/fast_ops.c)."};
    state->reduce_def = (PyMethodDef){"_fast_reduce", (PyCFunction)(void (*)(void))fast_reduce,
                                      METH_FASTCALL | METH_KEYWORDS,
                                      "_fast_reduce(op, x, dim, keepdim, needs_elements=False)\n--\n\n"
                                      "reductions._fast_reduce in C for the plain cases (csrc/python/fast_ops.c)."};
    state->softmax_def = (PyMethodDef){"_fast_softmax", (PyCFunction)(void (*)(void))fast_softmax,
                                       METH_FASTCALL | METH_KEYWORDS,
                                       "_fast_softmax(x, dim, log)\n--\n\n"
                                       "reductions._fast_softmax in C for the plain cases (csrc/python/fast_ops.c)."};
    state->join_def = (PyMethodDef){"_fast_join", (PyCFunction)(void (*)(void))fast_join, METH_FASTCALL | METH_KEYWORDS,
                                    "_fast_join(tensors, dim, new_axis)\n--\n\n"
                                    "manipulation._fast_join in C for the plain cases (csrc/python/fast_ops.c)."};
    state->matmul_def = (PyMethodDef){"__matmul__", (PyCFunction)(void (*)(void))tensor_matmul,
                                      METH_FASTCALL | METH_KEYWORDS, matmul_text};
    return 0;
}

/* methods[name] = descriptor, taking over `descriptor` (a new reference, or NULL with an exception
 * set); on any failure `*methods` is cleared. Called with `*methods` NULL, it only drops
 * `descriptor`: the callers make descriptors only while `*methods` is set. */
static void add_method(PyObject **methods, const char *name, PyObject *descriptor) {
    if (*methods != NULL && (descriptor == NULL || PyDict_SetItemString(*methods, name, descriptor) < 0)) {
        Py_CLEAR(*methods);
    }
    Py_XDECREF(descriptor);
}

/* The method descriptors of the installed state, as {name: descriptor} (new reference), or NULL
 * with an exception set. They point into `fast`, which is why `fast` is only ever replaced whole. */
static PyObject *make_methods(void) {
    PyObject *methods = PyDict_New();
    for (int k = 0; methods != NULL && k < fast.nmethods; k++) {
        const PyMethodDef *def = &fast.operator_defs[k];
        add_method(&methods, def->ml_name, PyDescr_NewMethod(fast.tensor_type, &fast.operator_defs[k]));
    }
    add_method(&methods, "Storage.__del__",
               methods != NULL ? PyDescr_NewMethod(fast.storage_type, &fast.storage_del_def) : NULL);
    add_method(&methods, "_empty", methods != NULL ? PyDescr_NewClassMethod(fast.tensor_type, &fast.empty_def) : NULL);
    add_method(&methods, "_view", methods != NULL ? PyDescr_NewMethod(fast.tensor_type, &fast.view_def) : NULL);
    add_method(&methods, "__matmul__",
               methods != NULL ? PyDescr_NewMethod(fast.tensor_type, &fast.matmul_def) : NULL);
    add_method(&methods, "_fast_reduce", methods != NULL ? PyCFunction_New(&fast.reduce_def, NULL) : NULL);
    add_method(&methods, "_fast_softmax", methods != NULL ? PyCFunction_New(&fast.softmax_def, NULL) : NULL);
    add_method(&methods, "_fast_join", methods != NULL ? PyCFunction_New(&fast.join_def, NULL) : NULL);
    return methods;
}

/* Check `spec` and, when nothing is installed yet, install it; returns the new methods (new
 * reference), or NULL with an exception set (a spec C refuses), or NULL with no exception set
 * when the methods were installed already. */
static PyObject *install(PyObject *spec) {
    memset(&next_state, 0, sizeof next_state);
    if (!PyTuple_Check(spec)) {
        PyErr_SetString(PyExc_TypeError, "_SPEC must be a tuple");
        return NULL;
    }
    if (read_spec(spec, &next_state) < 0 || fast.spec != NULL) {
        return NULL;
    }
    next_state.spec = Py_NewRef(spec); /* kept for the life of the process */
    fast = next_state;
    return make_methods();
}

/* Reads `_SPEC` from the module `module_name` (already in sys.modules) and stores the methods as
 * its `_METHODS`, or the exception as its `_ERROR`. Called through cffi, which has released the
 * GIL: it takes the GIL back itself. Returns 0 (installed), 1 (a valid spec, but the methods were
 * installed in this process already: nothing changed), or -1 (failed: see `_ERROR`). */
int tt_py_install_fast_ops(const char *module_name) {
    PyGILState_STATE gil = PyGILState_Ensure();
    int status = -1;
    PyObject *name = PyUnicode_FromString(module_name);
    PyObject *module = name != NULL ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (module == NULL) {
        PyErr_Clear();
        PyGILState_Release(gil);
        return -1;
    }
    PyObject *spec = PyObject_GetAttrString(module, "_SPEC");
    PyObject *methods = spec != NULL ? install(spec) : NULL;
    Py_XDECREF(spec);
    if (methods != NULL && PyObject_SetAttrString(module, "_METHODS", methods) == 0) {
        status = 0;
    } else if (methods == NULL && !PyErr_Occurred()) {
        status = 1;
    } else {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_NormalizeException(&type, &value, &traceback);
        if (value == NULL || PyObject_SetAttrString(module, "_ERROR", value) < 0) {
            PyErr_Clear();
        }
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
    }
    Py_XDECREF(methods);
    Py_DECREF(module);
    PyGILState_Release(gil);
    return status;
}
