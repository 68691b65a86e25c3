/* cpu_features.c: see cpu_features.h. */
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"

static int generic_forced(void) {
    const char *generic = getenv("TT_GENERIC_KERNELS");
    return generic != NULL && strcmp(generic, "1") == 0;
}

/* cached: -1 until the first call. Two threads racing on the first call compute the same answer,
   so relaxed atomics suffice: nothing else is published through this flag. */
#define DEFINE_CPU_SWITCH(NAME, TEST)                               \
    int NAME(void) {                                                \
        static int cached = -1;                                     \
        int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);    \
        if (value < 0) {                                            \
            value = !generic_forced() && (TEST);                    \
            __atomic_store_n(&cached, value, __ATOMIC_RELAXED);     \
        }                                                           \
        return value;                                               \
    }

#if TT_HAVE_X86
DEFINE_CPU_SWITCH(tt_cpu_use_avx2, (__builtin_cpu_init(), __builtin_cpu_supports("avx2")))
DEFINE_CPU_SWITCH(tt_cpu_use_avx2_fma,
                  (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
DEFINE_CPU_SWITCH(tt_cpu_use_avx512f, (__builtin_cpu_init(), __builtin_cpu_supports("avx512f")))
DEFINE_CPU_SWITCH(tt_cpu_use_f16c,
                  (__builtin_cpu_init(), __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx")))
#else
int tt_cpu_use_avx2(void) { return 0; }
int tt_cpu_use_avx2_fma(void) { return 0; }
int tt_cpu_use_avx512f(void) { return 0; }
int tt_cpu_use_f16c(void) { return 0; }
#endif
