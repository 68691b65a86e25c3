/*
 * kernels/vmath.h: introspection of the vectorized float32 math kernels (csrc/src/kernels/vmath.c).
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. The array functions themselves
 * are internal (csrc/src/kernels/vmath.h) and reached through tt_unary and tt_softmax.
 */

/* "avx2" when exp/log/tanh/sigmoid/erf/gelu/silu of float32 run on the AVX2+FMA kernels,
   "generic" otherwise (no AVX2+FMA on this CPU, or TT_GENERIC_KERNELS=1 in the environment when
   first asked). A static string: the caller does not free it. */
const char *tt_vmath_kernel_name(void);
