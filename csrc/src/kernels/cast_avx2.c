/*
 * cast_avx2.c: the dtype conversion rows (cast_rows.h) compiled for AVX2. copy.c picks them
 * when the CPU has it.
 */
#include "cpu_features.h"

#if TT_HAVE_X86
#pragma GCC target("avx2")
#pragma GCC optimize("fp-contract=off")   /* as elementwise_avx2.c: the baseline's bits */
#define CAST_TABLE tt_cast_table_avx2
#include "cast_rows.h"
#else
typedef int tt_cast_avx2_is_x86_only;   /* ISO C wants a translation unit to declare something */
#endif
