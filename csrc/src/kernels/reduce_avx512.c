/*
 * reduce_avx512.c: the functions of the reduction ops (reduce_rows.h) compiled for AVX-512 (F, BW, DQ, VL).
 * reduce.c picks them when the CPU has it; see reduce_rows.h for why.
 */
#include "cpu_features.h"

#if TT_HAVE_X86
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512")
/* No a * b + c fused into one rounding: every build must give the baseline's bits. */
#pragma GCC optimize("fp-contract=off")
#define RD_TABLE tt_reduce_table_avx512
#include "reduce_rows.h"
#else
typedef int tt_reduce_avx512_is_x86_only;   /* ISO C wants a translation unit to declare something */
#endif
