/* cpu_features.c: see cpu_features.h. */
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"

/* The widest SIMD the environment allows: 0 none (TT_GENERIC_KERNELS=1), 1 up to AVX2
   (TT_GENERIC_KERNELS=avx2, so that a machine with AVX-512 runs and tests the AVX2 paths too),
   2 any (unset or another value). */
static int simd_allowed(void) {
    const char *value = getenv("TT_GENERIC_KERNELS");
    if (value != NULL && strcmp(value, "1") == 0) {
        return 0;
    }
    return value != NULL && strcmp(value, "avx2") == 0 ? 1 : 2;
}

/* cached: -1 until the first call. Two threads racing on the first call compute the same answer,
   so relaxed atomics suffice: nothing else is published through this flag. */
#define DEFINE_CPU_SWITCH(NAME, LEVEL, TEST)                        \
    int NAME(void) {                                                \
        static int cached = -1;                                     \
        int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);    \
        if (value < 0) {                                            \
            value = simd_allowed() >= (LEVEL) && (TEST);            \
            __atomic_store_n(&cached, value, __ATOMIC_RELAXED);     \
        }                                                           \
        return value;                                               \
    }

#if TT_HAVE_X86
DEFINE_CPU_SWITCH(tt_cpu_use_avx2, 1, (__builtin_cpu_init(), __builtin_cpu_supports("avx2")))
DEFINE_CPU_SWITCH(tt_cpu_use_avx2_fma, 1,
                  (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
DEFINE_CPU_SWITCH(tt_cpu_use_avx512f, 2, (__builtin_cpu_init(), __builtin_cpu_supports("avx512f")))
DEFINE_CPU_SWITCH(tt_cpu_use_avx512_core, 2,
                  (__builtin_cpu_init(), __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")))
DEFINE_CPU_SWITCH(tt_cpu_use_f16c, 1,
                  (__builtin_cpu_init(), __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx")))
#else
int tt_cpu_use_avx2(void) { return 0; }
int tt_cpu_use_avx2_fma(void) { return 0; }
int tt_cpu_use_avx512f(void) { return 0; }
int tt_cpu_use_avx512_core(void) { return 0; }
int tt_cpu_use_f16c(void) { return 0; }
#endif
