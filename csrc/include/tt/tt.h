/*
 * tt.h: include this from C. It brings in the types tt_api.h relies on and then the API,
 * which stays free of preprocessor lines so that cffi can read it as its cdef.
 */
#ifndef TT_TT_H
#define TT_TT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "tt_api.h"

/* Every allocator in t_tensor hands out memory aligned to this many bytes (a cache line,
   and enough for any SIMD load). */
#define TT_ALIGNMENT 64

/* Kernels accept at most this many dimensions (as PyTorch, which allows 64). */
#define TT_MAX_DIMS 64

#ifdef __cplusplus
}
#endif

#endif /* TT_TT_H */
