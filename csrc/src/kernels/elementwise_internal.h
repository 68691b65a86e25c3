/*
 * elementwise_internal.h: what elementwise.c shares with the files that compile the row
 * functions (elementwise_rows.h) for one instruction set each.
 */
#ifndef TT_KERNELS_ELEMENTWISE_INTERNAL_H
#define TT_KERNELS_ELEMENTWISE_INTERNAL_H

#include "strided_iter.h"
#include "tt/tt.h"

/* What every row function receives as its context: the status an integer op may set, and the
   parameters of the "_param" ops (0 for the others). */
typedef struct ew_context {
    tt_status error;
    double p0, p1;
} ew_context;

/* One instruction set's row functions: flat [op][dtype] tables (op * TT_NUM_DTYPES + dtype),
   NULL where the op does not take the dtype. */
typedef struct ew_tables {
    const tt_row_fn *binary, *unary, *binary_param, *unary_param, *ternary;
} ew_tables;

extern const ew_tables tt_ew_tables_baseline;   /* elementwise.c */
extern const ew_tables tt_ew_tables_avx2;       /* elementwise_avx2.c, x86 only */
extern const ew_tables tt_ew_tables_avx512;     /* elementwise_avx512.c, x86 only */

#endif /* TT_KERNELS_ELEMENTWISE_INTERNAL_H */
