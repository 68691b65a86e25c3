/*
 * cast_avx512.c: the dtype conversion rows (cast_rows.h) compiled for AVX-512 (F, BW, DQ, VL). copy.c picks them
 * when the CPU has it.
 */
#include "cpu_features.h"

#if TT_HAVE_X86
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512")
#pragma GCC optimize("fp-contract=off")   /* as elementwise_avx512.c: the baseline's bits */
#define CAST_TABLE tt_cast_table_avx512
#include "cast_rows.h"
#else
typedef int tt_cast_avx512_is_x86_only;   /* ISO C wants a translation unit to declare something */
#endif
