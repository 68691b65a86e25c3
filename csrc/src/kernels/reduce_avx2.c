/*
 * reduce_avx2.c: the functions of the reduction ops (reduce_rows.h) compiled for AVX2.
 * reduce.c picks them when the CPU has it; see reduce_rows.h for why.
 */
#include "cpu_features.h"

#if TT_HAVE_X86
#pragma GCC target("avx2")
/* No a * b + c fused into one rounding: every build must give the baseline's bits. */
#pragma GCC optimize("fp-contract=off")
#define RD_TABLE tt_reduce_table_avx2
#include "reduce_rows.h"
#else
typedef int tt_reduce_avx2_is_x86_only;   /* ISO C wants a translation unit to declare something */
#endif
