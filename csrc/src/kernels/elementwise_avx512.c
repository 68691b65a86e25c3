/*
 * elementwise_avx512.c: the elementwise row functions (elementwise_rows.h) compiled for AVX-512 (F, BW, DQ, VL).
 * elementwise.c picks them when the CPU has it; see there for why.
 */
#include "cpu_features.h"

#if TT_HAVE_X86
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512")
/* No a * b + c fused into one rounding: every build must give the baseline's bits. */
#pragma GCC optimize("fp-contract=off")
#define EW_TABLES tt_ew_tables_avx512
#include "elementwise_rows.h"
#else
typedef int tt_elementwise_avx512_is_x86_only;   /* ISO C wants a translation unit to declare something */
#endif
