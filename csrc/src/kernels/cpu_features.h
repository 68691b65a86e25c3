/*
 * cpu_features.h: which SIMD paths kernels may take. One answer per feature for the whole process.
 *
 * Each switch is 1 when the CPU has the feature and the environment variable TT_GENERIC_KERNELS
 * allows it. TT_GENERIC_KERNELS=1 forces every kernel onto its generic (plain C) path and
 * TT_GENERIC_KERNELS=avx2 turns the AVX-512 paths off, so that every path stays reachable for
 * tests on a machine that has AVX-512. Each answer is computed at the first call
 * and cached; the environment is read then, not later.
 */
#ifndef TT_KERNELS_CPU_FEATURES_H
#define TT_KERNELS_CPU_FEATURES_H

#if defined(__x86_64__) || defined(__i386__)
#define TT_HAVE_X86 1
#else
#define TT_HAVE_X86 0
#endif

int tt_cpu_use_avx2(void);        /* AVX2 */
int tt_cpu_use_avx2_fma(void);    /* AVX2 and FMA */
int tt_cpu_use_avx512f(void);     /* AVX-512 Foundation */
int tt_cpu_use_avx512_core(void); /* AVX-512 F, BW, DQ and VL (every AVX-512 CPU since Skylake-SP) */
int tt_cpu_use_f16c(void);

/* For code compiled three times (elementwise_rows.h, cast_rows.h, index.c's masked fill): the
   build this CPU has and the environment allows, of three named NAME##_avx512 (AVX-512 F, BW,
   DQ and VL), NAME##_avx2 and NAME##_baseline. Only the baseline is referenced off x86. */
#if TT_HAVE_X86
#define TT_WIDEST_BUILD(NAME) \
    (tt_cpu_use_avx512_core() ? NAME##_avx512 : tt_cpu_use_avx2() ? NAME##_avx2 : NAME##_baseline)
#else
#define TT_WIDEST_BUILD(NAME) (NAME##_baseline)
#endif        /* F16C and AVX (float16 <-> float32 conversions) */

#endif /* TT_KERNELS_CPU_FEATURES_H */
