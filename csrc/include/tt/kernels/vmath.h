/*
 * kernels/vmath.h: introspection of the vectorized float32 math kernels (csrc/src/kernels/vmath.c).
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. The array functions themselves
 * are internal (csrc/src/kernels/vmath.h) and reached through tt_unary and tt_softmax.
 */

/* "avx512" when exp and softmax of float32 run on the AVX-512F kernels (and the other functions on
   the AVX2+FMA ones), "avx2" when exp/log/tanh/sigmoid/erf/gelu/silu/softmax run on the AVX2+FMA
   kernels, "generic" otherwise (no AVX2+FMA on this CPU, or TT_GENERIC_KERNELS=1 in the
   environment when first asked). A static string: the caller does not free it. */
const char *tt_vmath_kernel_name(void);

/* Every later call uses the path `name` ("generic", "avx2" or "avx512"); NULL or "" goes back to
   the widest the CPU allows. TT_ERR_UNSUPPORTED_DTYPE when this CPU (or TT_GENERIC_KERNELS=1)
   rules the path out, TT_ERR_INVALID_ARG for an unknown name; nothing changes then. For tests and
   benchmarks: not meant to be switched while other threads compute. Borrows name. */
tt_status tt_vmath_set_kernel(const char *name);
