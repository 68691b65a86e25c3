/*
 * py_glue.c: the little C that needs Python.h. It is compiled into the extension only; the
 * core in csrc/src never includes Python, so the C tests build without it.
 *
 * A DLPack capsule that nobody consumed must free its tensor when the capsule dies. That
 * destructor has to be a C function taking a PyObject*, so it lives here. Capsule names are
 * static strings because a PyCapsule keeps the name pointer, not a copy.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tt/tt.h"

static const char legacy_name[] = "dltensor";
static const char versioned_name[] = "dltensor_versioned";
static const char used_legacy_name[] = "used_dltensor";
static const char used_versioned_name[] = "used_dltensor_versioned";

static void capsule_destructor(PyObject *capsule) {
    /* A consumer renames the capsule to used_*; then the tensor is the consumer's to free. */
    if (PyCapsule_IsValid(capsule, legacy_name)) {
        DLManagedTensor *managed = PyCapsule_GetPointer(capsule, legacy_name);
        if (managed != NULL && managed->deleter != NULL) {
            managed->deleter(managed);
        }
    } else if (PyCapsule_IsValid(capsule, versioned_name)) {
        DLManagedTensorVersioned *managed = PyCapsule_GetPointer(capsule, versioned_name);
        if (managed != NULL && managed->deleter != NULL) {
            managed->deleter(managed);
        }
    }
}

uintptr_t tt_py_capsule_destructor(void) { return (uintptr_t)capsule_destructor; }

const char *tt_py_capsule_name(int versioned, int used) {
    if (used) {
        return versioned ? used_versioned_name : used_legacy_name;
    }
    return versioned ? versioned_name : legacy_name;
}
