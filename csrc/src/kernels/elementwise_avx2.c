/*
 * elementwise_avx2.c: the elementwise row functions (elementwise_rows.h) compiled for AVX2.
 * elementwise.c picks them when the CPU has it; see there for why.
 */
#include "cpu_features.h"

#if TT_HAVE_X86
#pragma GCC target("avx2")
/* No a * b + c fused into one rounding: every build must give the baseline's bits. */
#pragma GCC optimize("fp-contract=off")
#define EW_TABLES tt_ew_tables_avx2
#include "elementwise_rows.h"
#else
typedef int tt_elementwise_avx2_is_x86_only;   /* ISO C wants a translation unit to declare something */
#endif
