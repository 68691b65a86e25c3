/* status.c: names of status codes and sizes of dtypes. */
#include "tt/tt.h"

const char *tt_status_string(tt_status status) {
    switch (status) {
    case TT_OK: return "ok";
    case TT_ERR_NOMEM: return "out of memory";
    case TT_ERR_INVALID_ARG: return "invalid argument";
    case TT_ERR_DOUBLE_FREE: return "double free: the block is already free";
    case TT_ERR_FOREIGN_POINTER: return "foreign pointer: the allocator never handed out this address";
    case TT_ERR_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case TT_ERR_OVERFLOW: return "size overflow";
    case TT_ERR_LIVE_BLOCKS: return "allocator destroyed while blocks were still in use";
    case TT_ERR_ZERO_DIVISION: return "ZeroDivisionError: integer division or remainder by zero";
    case TT_ERR_INDEX: return "index out of range";
    }
    return "unknown status";
}

size_t tt_dtype_itemsize(int dtype) {
    switch (dtype) {
    case TT_BOOL: case TT_INT8: case TT_UINT8: return 1;
    case TT_INT16: case TT_FLOAT16: return 2;
    case TT_INT32: case TT_FLOAT32: return 4;
    case TT_INT64: case TT_FLOAT64: return 8;
    default: return 0;
    }
}

int tt_max_dims(void) { return TT_MAX_DIMS; }
