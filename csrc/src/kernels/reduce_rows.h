/*
 * reduce_rows.h: the functions of every reduction op (init, row, vec, store, merge; see reduce.c)
 * for every dtype it takes, and their table.
 *
 * A template, not a header: reduce.c includes it to compile the functions for the baseline
 * instruction set, reduce_avx2.c and reduce_avx512.c under their target pragmas, as
 * elementwise_rows.h (see elementwise.c for why). Before including it, a file defines RD_TABLE,
 * the name its table is exported under; every function is static to that file. The generic rows
 * are plain C loops, and the 4-float SSE2 vectors of the baseline made them several times slower
 * than AVX-512 on the reductions without a hand-written kernel: on one thread, (512, 512) int64
 * amax(-1) 140 -> 43 us, float64 any(-1) 122 -> 42, float64 amax(0) 151 -> 57. Every build gives
 * the same bits: the loops do only operations IEEE rounds once (no reassociation: GCC keeps the
 * C order of every sum), and the builds turn off contraction into fused multiply-adds.
 * tests/ops/test_reduce_isa.py checks every op and dtype (the hand-written float32 sum kernels,
 * which add in another order, are the documented exception there).
 */
#include "reduce_internal.h"

/* ------------------------------------------------------------------ the ops
 * Sum family: acc += TR(v), finished by FIN. OUT picks the output dtype per kind. */

#define SUM_TR_I(v, p) ((uint64_t)(v))
#define SUM_TR_F(v, p) (v)
#define SUM_FIN(a, n, p) (a)
#define SUM_OUT_I OUT_INT64
#define SUM_OUT_F OUT_SAME
#define NANSUM_TR_I(v, p) ((uint64_t)(v))
#define NANSUM_TR_F(v, p) (isnan(v) ? 0 : (v))
#define NANSUM_FIN(a, n, p) (a)
#define NANSUM_OUT_I OUT_INT64
#define NANSUM_OUT_F OUT_SAME
#define MEAN_TR_F(v, p) (v)
#define MEAN_FIN(a, n, p) ((a) / (double)(n))
#define MEAN_OUT_F OUT_SAME
#define ANY_TR_I(v, p) ((uint64_t)((v) != 0))
#define ANY_TR_F(v, p) ((v) != 0)
#define ANY_FIN(a, n, p) ((a) != 0)
#define ANY_OUT_I OUT_BOOL
#define ANY_OUT_F OUT_BOOL
#define ALL_TR_I(v, p) ((uint64_t)((v) == 0))
#define ALL_TR_F(v, p) ((v) == 0)
#define ALL_FIN(a, n, p) ((a) == 0)
#define ALL_OUT_I OUT_BOOL
#define ALL_OUT_F OUT_BOOL
#define COUNT_NONZERO_TR_I(v, p) ((uint64_t)((v) != 0))
#define COUNT_NONZERO_TR_F(v, p) ((v) != 0)
#define COUNT_NONZERO_FIN(a, n, p) (a)
#define COUNT_NONZERO_OUT_I OUT_INT64
#define COUNT_NONZERO_OUT_F OUT_INT64
#define NORM_L0_TR_F(v, p) ((v) != 0)
#define NORM_L0_FIN(a, n, p) (a)
#define NORM_L0_OUT_F OUT_SAME
#define NORM_L1_TR_F(v, p) ((v) < 0 ? -(v) : (v))
#define NORM_L1_FIN(a, n, p) (a)
#define NORM_L1_OUT_F OUT_SAME
#define NORM_L2_TR_F(v, p) ((double)(v) * (double)(v))  /* in double: no overflow for float32 */
#define NORM_L2_FIN(a, n, p) sqrt(a)
#define NORM_L2_OUT_F OUT_SAME
#define NORM_LP_TR_F(v, p) pow(fabs(v), p)
#define NORM_LP_FIN(a, n, p) pow(a, 1.0 / (p))
#define NORM_LP_OUT_F OUT_SAME

/* Product family. */
#define PROD_INIT(a) ((a) = 1)
#define PROD_UPD_I(a, v, i, p) ((a) *= (uint64_t)(v))
#define PROD_UPD_F(a, v, i, p) ((a) *= (v))
#define PROD_STORE_I(T, ST, o, a) OUT_INT64(T, ST, o, a)
#define PROD_STORE_F(T, ST, o, a) OUT_SAME(T, ST, o, a)

/* Extremum family: NaN wins (a NaN acc is kept, a NaN value replaces a number). */
#define MAX_INIT_I(a) ((a) = INT64_MIN)
#define MAX_INIT_F(a) ((a) = -INFINITY)
#define MIN_INIT_I(a) ((a) = INT64_MAX)
#define MIN_INIT_F(a) ((a) = INFINITY)
#define NORM_LINF_INIT_F MAX_INIT_F
#define NORM_LNEGINF_INIT_F MIN_INIT_F
#define MAX_UPD_I(a, v, i, p) if ((v) > (a)) (a) = (v)
#define MIN_UPD_I(a, v, i, p) if ((v) < (a)) (a) = (v)
/* Written as selects so that the loops vectorize: v > NaN is false, so a NaN acc stays. */
#define MAX_UPD_F(a, v, i, p) ((a) = (((v) > (a)) | ((v) != (v))) ? (v) : (a))
#define MIN_UPD_F(a, v, i, p) ((a) = (((v) < (a)) | ((v) != (v))) ? (v) : (a))
#define NORM_LINF_UPD_F(a, v, i, p) MAX_UPD_F(a, fabs(v), i, p)
#define NORM_LNEGINF_UPD_F(a, v, i, p) MIN_UPD_F(a, fabs(v), i, p)
/* Folding partial results (already transformed) into the acc. */
#define MAX_FOLD_F MAX_UPD_F
#define MIN_FOLD_F MIN_UPD_F
#define NORM_LINF_FOLD_F MAX_UPD_F
#define NORM_LNEGINF_FOLD_F MIN_UPD_F

/* Argument family: strict comparisons keep the first occurrence. */
#define ARGMAX_INIT_I(a) ((a).v = INT64_MIN, (a).i = 0)
#define ARGMAX_INIT_F(a) ((a).v = -INFINITY, (a).i = 0)
#define ARGMIN_INIT_I(a) ((a).v = INT64_MAX, (a).i = 0)
#define ARGMIN_INIT_F(a) ((a).v = INFINITY, (a).i = 0)
#define ARGMAX_UPD_I(a, v, idx, p) if ((v) > (a).v) ((a).v = (v), (a).i = (idx))
#define ARGMIN_UPD_I(a, v, idx, p) if ((v) < (a).v) ((a).v = (v), (a).i = (idx))
#define ARGMAX_UPD_F(a, v, idx, p) if (!((v) <= (a).v) && (a).v == (a).v) ((a).v = (v), (a).i = (idx))
#define ARGMIN_UPD_F(a, v, idx, p) if (!((v) >= (a).v) && (a).v == (a).v) ((a).v = (v), (a).i = (idx))
/* The same rules as selects, for the loop over several accs (a reduction over a leading dim),
   which then vectorizes; a row's single acc keeps the branch, which predicts well. */
#define ARG_TAKE(a, v, idx, TAKES)                                 \
    do {                                                           \
        const int take_ = TAKES;                                   \
        (a).v = take_ ? (v) : (a).v;                               \
        (a).i = take_ ? (int64_t)(idx) : (a).i;                    \
    } while (0)
#define ARGMAX_SELECT_I(a, v, idx, p) ARG_TAKE(a, v, idx, (v) > (a).v)
#define ARGMIN_SELECT_I(a, v, idx, p) ARG_TAKE(a, v, idx, (v) < (a).v)
#define ARGMAX_SELECT_F(a, v, idx, p) ARG_TAKE(a, v, idx, !((v) <= (a).v) & ((a).v == (a).v))
#define ARGMIN_SELECT_F(a, v, idx, p) ARG_TAKE(a, v, idx, !((v) >= (a).v) & ((a).v == (a).v))

/* Whether a later partial result (value bv) replaces an earlier one (av): as the UPD rules. */
#define ARGMAX_TAKES_I(bv, av) ((bv) > (av))
#define ARGMIN_TAKES_I(bv, av) ((bv) < (av))
#define ARGMAX_TAKES_F(bv, av) (!((bv) <= (av)) && (av) == (av))
#define ARGMIN_TAKES_F(bv, av) (!((bv) >= (av)) && (av) == (av))

#define VAR_FIN(a, n, p) ((a).m2 / fmax(0.0, (double)(n) - (p)))
#define STD_FIN(a, n, p) sqrt(VAR_FIN(a, n, p))
#define LSE_UPD(a, v, i, p) lse_push(&(a), v)

/* ------------------------------------------------------------------ generic row and vec */

#define ROW_LOOP(K, T, LD, S, BODY)                                   \
    for (int64_t i = 0; i < n; i++) {                                 \
        CT_##K v = (CT_##K)LD(T, p + i * (S));                        \
        BODY;                                                         \
    }

#define DEFINE_GENERIC_ROW(OP, name, T, K, LD, ACC, UPD)                                       \
    static void row_##OP##_##name(void *acc, const char *p, int64_t n, int64_t s, int64_t base, \
                                  double param) {                                              \
        (void)param;                                                                           \
        (void)base;                                                                            \
        ACC a = *(ACC *)acc;                                                                   \
        if (s == (int64_t)sizeof(T)) {                                                         \
            ROW_LOOP(K, T, LD, (int64_t)sizeof(T), UPD(a, v, base + i, param))                 \
        } else {                                                                               \
            ROW_LOOP(K, T, LD, s, UPD(a, v, base + i, param))                                  \
        }                                                                                      \
        *(ACC *)acc = a;                                                                       \
    }

#define VEC_LOOP(K, T, LD, S, BODY)                                   \
    for (int64_t j = 0; j < c; j++) {                                 \
        CT_##K v = (CT_##K)LD(T, p + j * (S));                        \
        BODY;                                                         \
    }

#define DEFINE_GENERIC_VEC(OP, name, T, K, LD, ACC, UPD)                                          \
    static void vec_##OP##_##name(void *accs, const char *p, int64_t c, int64_t s, int64_t index, \
                                  double param) {                                                 \
        (void)param;                                                                              \
        (void)index;                                                                              \
        ACC *a = accs;                                                                            \
        if (s == (int64_t)sizeof(T)) {                                                            \
            VEC_LOOP(K, T, LD, (int64_t)sizeof(T), UPD(a[j], v, index, param))                    \
        } else {                                                                                  \
            VEC_LOOP(K, T, LD, s, UPD(a[j], v, index, param))                                     \
        }                                                                                         \
    }

#define DEFINE_INIT(OP, name, ACC, INIT)                       \
    static void init_##OP##_##name(void *accs, int64_t c) {    \
        ACC *a = accs;                                         \
        for (int64_t j = 0; j < c; j++) {                      \
            INIT(a[j]);                                        \
        }                                                      \
    }

#define STORE_HEAD(OP, name, ACC)                                                                  \
    static void store_##OP##_##name(const void *accs, int64_t c, char *out, int64_t os, char *out2, \
                                    int64_t os2, int64_t count, double param) {                    \
        (void)out2;                                                                                \
        (void)os2;                                                                                 \
        (void)count;                                                                               \
        (void)param;                                                                               \
        const ACC *a = accs;

/* ------------------------------------------------------------------ the families */

#define ZERO_INIT(a) ((a) = 0)
#define SUM_UPD(a, v, i, p) ((a) += (v))

/* Sum family, integers: a plain loop (the compiler vectorizes it). */
#define SUMF_ROW_I(OP, name, T, LD)                                                             \
    static void row_##OP##_##name(void *acc, const char *p, int64_t n, int64_t s, int64_t base, \
                                  double param) {                                              \
        (void)param;                                                                           \
        (void)base;                                                                            \
        uint64_t a = *(uint64_t *)acc;                                                         \
        if (s == (int64_t)sizeof(T)) {                                                         \
            ROW_LOOP(I, T, LD, (int64_t)sizeof(T), a += OP##_TR_I(v, param))                   \
        } else {                                                                               \
            ROW_LOOP(I, T, LD, s, a += OP##_TR_I(v, param))                                    \
        }                                                                                      \
        *(uint64_t *)acc = a;                                                                  \
    }

/* Sum family, floats: pairwise summation over blocks of at most PAIRWISE_BLOCK_N elements, each
   block summed in PAIRWISE_LANES lanes of the transformed value's type (float for a float16 or
   float32 sum; int for the counts), then the block sums join the pairwise tree in double. Sixteen
   lanes are four (SSE) vector accumulators for float32, so the adds of one block form four
   independent chains instead of one: a single thread then sums at memory speed instead of at one
   vector add per add latency. Each lane adds at most 32 values before the block's lanes are
   combined in double, so the rounding error stays that of a short float sum. */
#define PAIRWISE_LANES 16
#define PAIRWISE_BLOCK_N 512
#define PAIRWISE_BLOCK(OP, T, LD, S)                                               \
    for (; i + PAIRWISE_LANES <= n; i += PAIRWISE_LANES) {                         \
        for (int k = 0; k < PAIRWISE_LANES; k++) {                                 \
            lane[k] += OP##_TR_F(LD(T, p + (i + k) * (S)), param);                 \
        }                                                                          \
    }

/* Which ops sum the values themselves (their transform is the identity). */
#define SUM_PLAIN 1
#define MEAN_PLAIN 1
#define NANSUM_PLAIN 0
#define ANY_PLAIN 0
#define ALL_PLAIN 0
#define COUNT_NONZERO_PLAIN 0
#define NORM_L0_PLAIN 0
#define NORM_L1_PLAIN 0
#define NORM_L2_PLAIN 0
/* Which ops sum squares (NORM_L2: the block kernel squares in double). */
#define SUM_SQUARES 0
#define MEAN_SQUARES 0
#define NANSUM_SQUARES 0
#define ANY_SQUARES 0
#define ALL_SQUARES 0
#define COUNT_NONZERO_SQUARES 0
#define NORM_L0_SQUARES 0
#define NORM_L1_SQUARES 0
#define NORM_L2_SQUARES 1
#define NORM_LP_SQUARES 0
#define NORM_LP_PLAIN 0

#define SUMF_ROW_F(OP, name, T, LD)                                                             \
    static double pairwise_##OP##_##name(const char *p, int64_t n, int64_t s, double param) {  \
        (void)param;                                                                           \
        if (n <= PAIRWISE_BLOCK_N) {                                                           \
            __typeof__(OP##_TR_F(LD(T, p), param) + 0) lane[PAIRWISE_LANES] = {0};             \
            int64_t i = 0;                                                                     \
            if (s == (int64_t)sizeof(T)) {                                                     \
                PAIRWISE_BLOCK(OP, T, LD, (int64_t)sizeof(T))                                  \
            } else {                                                                           \
                PAIRWISE_BLOCK(OP, T, LD, s)                                                   \
            }                                                                                  \
            for (; i < n; i++) {                                                               \
                lane[0] += OP##_TR_F(LD(T, p + i * s), param);                                 \
            }                                                                                  \
            double total = 0;                                                                  \
            for (int k = 0; k < PAIRWISE_LANES; k += 4) {                                      \
                total += ((double)lane[k] + (double)lane[k + 1]) + ((double)lane[k + 2] + (double)lane[k + 3]); \
            }                                                                                  \
            return total;                                                                      \
        }                                                                                      \
        int64_t half = (n / 2) & ~(int64_t)(PAIRWISE_LANES - 1);                               \
        return pairwise_##OP##_##name(p, half, s, param) +                                     \
               pairwise_##OP##_##name(p + half * s, n - half, s, param);                       \
    }                                                                                          \
    static void row_##OP##_##name(void *acc, const char *p, int64_t n, int64_t s, int64_t base, \
                                  double param) {                                              \
        (void)base;                                                                            \
        if (OP##_PLAIN && __builtin_types_compatible_p(T, float) && s == (int64_t)sizeof(T)) {  \
            const sum_f32_fn sum = tt_reduce_sum_f32();                                        \
            if (sum != NULL) {                                                                 \
                *(double *)acc += sum((const float *)p, n);                                    \
                return;                                                                        \
            }                                                                                  \
        }                                                                                      \
        if (OP##_SQUARES && __builtin_types_compatible_p(T, float) && s == (int64_t)sizeof(T)) { \
            /* squared and summed in double (a float square overflows past 1.8e19, as          \
               NORM_L2_TR_F notes) in vector registers: the 16 double lanes below compile to    \
               SSE2 pairs, half the speed of a plain sum */                                     \
            const sqdev_f32_fn dev = tt_reduce_sqdev_f32();                                              \
            if (dev != NULL) {                                                                 \
                *(double *)acc += dev((const float *)(const void *)p, n, 0.0, 1);              \
                return;                                                                        \
            }                                                                                  \
        }                                                                                      \
        *(double *)acc += pairwise_##OP##_##name(p, n, s, param);                              \
    }

/* Merging two accs of a family: `a` covers earlier elements than `b` (argmax keeps a on ties). */
#define DEFINE_MERGE(OP, name, ACC, BODY)                                     \
    static void merge_##OP##_##name(void *acc, const void *other) {           \
        ACC *a = acc;                                                         \
        const ACC *b = other;                                                 \
        BODY;                                                                 \
    }

#define GEN_SUMF(OP, name, T, K, LD, ST, CODE)                                      \
    DEFINE_INIT(OP, name, SUMF_ACC_##K, ZERO_INIT)                                  \
    DEFINE_MERGE(OP, name, SUMF_ACC_##K, *a += *b)                                  \
    SUMF_ROW_##K(OP, name, T, LD)                                                   \
    static void vec_##OP##_##name(void *accs, const char *p, int64_t c, int64_t s,  \
                                  int64_t index, double param) {                    \
        (void)param;                                                                \
        (void)index;                                                                \
        SUMF_ACC_##K *a = accs;                                                     \
        if (s == (int64_t)sizeof(T)) {                                              \
            VEC_LOOP(K, T, LD, (int64_t)sizeof(T), a[j] += OP##_TR_##K(v, param))   \
        } else {                                                                    \
            VEC_LOOP(K, T, LD, s, a[j] += OP##_TR_##K(v, param))                    \
        }                                                                           \
    }                                                                               \
    STORE_HEAD(OP, name, SUMF_ACC_##K)                                              \
        for (int64_t j = 0; j < c; j++) {                                           \
            OP##_OUT_##K(T, ST, out + j * os, OP##_FIN(a[j], count, param));        \
        }                                                                           \
    }

#define GEN_PRODF(OP, name, T, K, LD, ST, CODE)                                     \
    DEFINE_INIT(OP, name, PRODF_ACC_##K, PROD_INIT)                                 \
    DEFINE_MERGE(OP, name, PRODF_ACC_##K, *a *= *b)                                 \
    DEFINE_GENERIC_ROW(OP, name, T, K, LD, PRODF_ACC_##K, PROD_UPD_##K)             \
    DEFINE_GENERIC_VEC(OP, name, T, K, LD, PRODF_ACC_##K, PROD_UPD_##K)             \
    STORE_HEAD(OP, name, PRODF_ACC_##K)                                             \
        for (int64_t j = 0; j < c; j++) {                                           \
            PROD_STORE_##K(T, ST, out + j * os, a[j]);                              \
        }                                                                           \
    }

/* Extremum rows: integers in one chain; floats in one vector register of lanes of the load type
   (GCC's vector extension, as wide as the build's registers: 8 doubles under AVX-512; written
   out as 8 scalar lanes, GCC 12 kept the double rows scalar there), then folded into the acc. A lane takes v when OP's comparison holds or v is NaN (the UPD rules);
   the norms compare |v| (the sign bit cleared). */
#if defined(__AVX512F__)
#define EXT_VBYTES 64
#elif defined(__AVX2__)
#define EXT_VBYTES 32
#else
#define EXT_VBYTES 16
#endif
#define EXT_MERGE_I(OP, a, b) OP##_UPD_I(a, b, 0, 0)
#define EXT_MERGE_F(OP, a, b) OP##_FOLD_F(a, b, 0, 0)
#define EXTF_ROW_I(OP, name, T, LD) DEFINE_GENERIC_ROW(OP, name, T, I, LD, EXTF_ACC_I, OP##_UPD_I)
#define EXT_VBEATS_MAX(v, lane) ((v) > (lane))
#define EXT_VBEATS_MIN(v, lane) ((v) < (lane))
#define EXT_VBEATS_NORM_LINF EXT_VBEATS_MAX
#define EXT_VBEATS_NORM_LNEGINF EXT_VBEATS_MIN
#define EXT_VABS_MAX 0
#define EXT_VABS_MIN 0
#define EXT_VABS_NORM_LINF 1
#define EXT_VABS_NORM_LNEGINF 1
#define EXT_ACCS 4 /* independent vectors: 4 compare-select chains in flight */
#define EXT_LANES(OP, T, LD, S)                                                     \
    for (; i + EXT_ACCS * EXT_VL <= n; i += EXT_ACCS * EXT_VL) {                    \
        for (int a = 0; a < EXT_ACCS; a++) {                                        \
            ext_vec v;                                                              \
            for (int k = 0; k < EXT_VL; k++) {                                      \
                v[k] = LD(T, p + (i + a * EXT_VL + k) * (S));                       \
            }                                                                       \
            if (EXT_VABS_##OP) {                                                    \
                v = (ext_vec)((ext_mask)v & ~sign);                                 \
            }                                                                       \
            const ext_mask take = EXT_VBEATS_##OP(v, lane[a]) | (v != v);           \
            lane[a] = (ext_vec)(((ext_mask)lane[a] & ~take) | ((ext_mask)v & take)); \
        }                                                                           \
    }
/* The extremum ops that are a plain max (1) or min (-1) of the values, rather than of their
   magnitudes (0: the norms): they take ext_row_f32 for a contiguous float32 row (a min maximizes
   the negation), and every path returns a row's first zero when the extremum is zero. */
#define EXT_KIND_MAX 1
#define EXT_KIND_MIN (-1)
#define EXT_KIND_NORM_LINF 0
#define EXT_KIND_NORM_LNEGINF 0
#define EXTF_ROW_F(OP, name, T, LD)                                                                 \
    static void row_##OP##_##name(void *acc, const char *p, int64_t n, int64_t s, int64_t base,     \
                                  double param) {                                                  \
        (void)base;                                                                                \
        (void)param;                                                                               \
        if (EXT_KIND_##OP != 0 && n > 0 && __builtin_types_compatible_p(T, float) && s == (int64_t)sizeof(T)) { \
            const ext_row_f32_fn ext = tt_reduce_ext_row_f32();                                              \
            if (ext != NULL) {                                                                     \
                double a = *(double *)acc;                                                         \
                const double row = ext((const float *)(const void *)p, n, EXT_KIND_##OP < 0);       \
                OP##_FOLD_F(a, row, 0, param); /* a macro: it reads `row` more than once */        \
                *(double *)acc = a;                                                                \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
        typedef __typeof__(LD(T, p) + 0) LT;                                                       \
        typedef LT ext_vec __attribute__((vector_size(EXT_VBYTES)));                               \
        typedef __typeof__((ext_vec){0} < (ext_vec){0}) ext_mask; /* integer lanes, same width */  \
        enum { EXT_VL = EXT_VBYTES / sizeof(LT) };                                                 \
        const ext_mask sign = (ext_mask)(-(ext_vec){0}) ^ (ext_mask)((ext_vec){0}); /* -0.0's bits */ \
        ext_vec lane[EXT_ACCS];                                                                    \
        for (int a = 0; a < EXT_ACCS; a++) {                                                       \
            for (int k = 0; k < EXT_VL; k++) {                                                     \
                LT init;                                                                           \
                OP##_INIT_F(init);                                                                 \
                lane[a][k] = init;                                                                 \
            }                                                                                      \
        }                                                                                          \
        int64_t i = 0;                                                                             \
        if (s == (int64_t)sizeof(T)) {                                                             \
            EXT_LANES(OP, T, LD, (int64_t)sizeof(T))                                               \
        } else {                                                                                   \
            EXT_LANES(OP, T, LD, s)                                                                \
        }                                                                                          \
        double r;                                                                                  \
        OP##_INIT_F(r);                                                                            \
        for (int a = 0; a < EXT_ACCS; a++) {                                                       \
            for (int k = 0; k < EXT_VL; k++) {                                                     \
                OP##_FOLD_F(r, (double)lane[a][k], 0, param);                                      \
            }                                                                                      \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            OP##_UPD_F(r, (double)LD(T, p + i * s), 0, param);                                     \
        }                                                                                          \
        /* a max/min of zero: the row's first zero, as ext_row_f32 (the lanes' order would       \
           decide its sign); NaN: the row's first NaN, so its bits do not depend on the lanes'    \
           width (one per build) */                                                               \
        const int first_nan = r != r;                                                              \
        if (first_nan || (EXT_KIND_##OP != 0 && r == 0)) {                                         \
            for (int64_t z = 0; z < n; z++) {                                                      \
                const double v = (double)LD(T, p + z * s);                                        \
                if (first_nan ? v != v : v == 0) {                                                 \
                    r = v;                                                                         \
                    break;                                                                         \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        double a = *(double *)acc;                                                                 \
        OP##_FOLD_F(a, r, 0, param);                                                               \
        *(double *)acc = a;                                                                        \
    }

#define GEN_EXTF(OP, name, T, K, LD, ST, CODE)                                      \
    DEFINE_INIT(OP, name, EXTF_ACC_##K, OP##_INIT_##K)                              \
    DEFINE_MERGE(OP, name, EXTF_ACC_##K, EXT_MERGE_##K(OP, *a, *b))                 \
    EXTF_ROW_##K(OP, name, T, LD)                                                   \
    DEFINE_GENERIC_VEC(OP, name, T, K, LD, EXTF_ACC_##K, OP##_UPD_##K)              \
    STORE_HEAD(OP, name, EXTF_ACC_##K)                                              \
        for (int64_t j = 0; j < c; j++) {                                           \
            ST(T, out + j * os, a[j]);                                              \
        }                                                                           \
    }

/* Argument rows. Integers: the generic row. Floats, in two passes: the extremum by the MAX or
   MIN row (vectorized: lanes, or ext_row_f32), then the first element equal to it (the first NaN
   when it is NaN), found ARG_BLOCK elements at a time with an OR over each block, which
   vectorizes; the row is then in cache. The same element as a sequential scan with strict
   comparisons (NaN wins, ties and -0/+0 go to the first), and the value kept is that element;
   (1024, 1024) float32 argmax(-1) went
   from ~560 us to ~200 on one thread (NumPy ~150), float64 from ~1240 to ~380 (NumPy ~290). */
#define ARG_EXT_ARGMAX MAX
#define ARG_EXT_ARGMIN MIN
#define ARG_BLOCK 64
#define ARG_FIND(T, LD, S, COND)                                                                  \
    for (int64_t i0 = 0; i0 < n && !found; i0 += ARG_BLOCK) {                                     \
        const int64_t b = n - i0 < ARG_BLOCK ? n - i0 : ARG_BLOCK;                                \
        int hit = 0;                                                                              \
        for (int64_t i = 0; i < b; i++) {                                                         \
            const LT v = LD(T, p + (i0 + i) * (S));                                               \
            hit |= (COND);                                                                        \
        }                                                                                         \
        for (int64_t i = 0; i < b && hit && !found; i++) {                                        \
            const LT v = LD(T, p + (i0 + i) * (S));                                               \
            if (COND) {                                                                           \
                found = 1;                                                                        \
                index = i0 + i;                                                                   \
            }                                                                                     \
        }                                                                                         \
    }
#define ARGF_ROW_I(OP, name, T, LD) DEFINE_GENERIC_ROW(OP, name, T, I, LD, ARGF_ACC_I, OP##_UPD_I)
#define ARGF_ROW_F(OP, name, T, LD) ARGF_ROW_F_EXT(OP, ARG_EXT_##OP, name, T, LD)
#define ARGF_ROW_F_EXT(OP, EXT, name, T, LD) ARGF_ROW_F_DEF(OP, EXT, name, T, LD)
#define ARGF_ROW_F_DEF(OP, EXT, name, T, LD)                                                      \
    static void row_##OP##_##name(void *acc, const char *p, int64_t n, int64_t s, int64_t base,   \
                                  double param) {                                                \
        (void)param;                                                                             \
        typedef __typeof__(LD(T, p) + 0) LT;                                                     \
        double e;                                                                                \
        EXT##_INIT_F(e);                                                                         \
        row_##EXT##_##name(&e, p, n, s, 0, 0.0);                                                 \
        const LT target = (LT)e; /* exact: e is one of the elements, or NaN */                   \
        int found = 0;                                                                           \
        int64_t index = 0;                                                                       \
        if (e != e && s == (int64_t)sizeof(T)) {                                                 \
            ARG_FIND(T, LD, (int64_t)sizeof(T), v != v)                                          \
        } else if (e != e) {                                                                     \
            ARG_FIND(T, LD, s, v != v)                                                           \
        } else if (s == (int64_t)sizeof(T)) {                                                    \
            ARG_FIND(T, LD, (int64_t)sizeof(T), v == target)                                     \
        } else {                                                                                 \
            ARG_FIND(T, LD, s, v == target)                                                      \
        }                                                                                        \
        ARGF_ACC_F *a = acc;                                                                     \
        if (found && OP##_TAKES_F(e, a->v)) {                                                    \
            a->v = (double)LD(T, p + index * s); /* the element itself: a NaN keeps its bits */  \
            a->i = base + index;                                                                 \
        }                                                                                        \
    }

#define GEN_ARGF(OP, name, T, K, LD, ST, CODE)                                      \
    DEFINE_INIT(OP, name, ARGF_ACC_##K, OP##_INIT_##K)                              \
    DEFINE_MERGE(OP, name, ARGF_ACC_##K, if (OP##_TAKES_##K(b->v, a->v)) *a = *b)   \
    ARGF_ROW_##K(OP, name, T, LD)                                                   \
    DEFINE_GENERIC_VEC(OP, name, T, K, LD, ARGF_ACC_##K, OP##_SELECT_##K)           \
    STORE_HEAD(OP, name, ARGF_ACC_##K)                                              \
        for (int64_t j = 0; j < c; j++) {                                           \
            *(int64_t *)(out + j * os) = a[j].i;                                    \
            if (out2 != NULL) {                                                     \
                ST(T, out2 + j * os2, a[j].v);                                      \
            }                                                                       \
        }                                                                           \
    }

/* Variance: a row is done in two passes (its mean, then squared deviations), merged by Chan's
   formula; the column loop updates each acc by Welford's. */
#define VAR_INIT(a) ((a).n = 0, (a).mean = 0, (a).m2 = 0)
#define VAR_UPD(a, v, i, p) var_push(&(a), v)
#define GEN_VARF(OP, name, T, K, LD, ST, CODE)                                                  \
    DEFINE_INIT(OP, name, var_acc, VAR_INIT)                                                    \
    DEFINE_MERGE(OP, name, var_acc, var_merge(a, *b))                                           \
    static void row_##OP##_##name(void *acc, const char *p, int64_t n, int64_t s, int64_t base, \
                                  double param) {                                              \
        (void)base;                                                                            \
        (void)param;                                                                           \
        if (__builtin_types_compatible_p(T, float) && s == (int64_t)sizeof(T) && n > 0) {      \
            /* a contiguous float32 row: both passes in vector registers, in double */         \
            const sqdev_f32_fn dev = tt_reduce_sqdev_f32();                                              \
            if (dev != NULL) {                                                                 \
                const float *row_p = (const float *)(const void *)p;                           \
                const double row_mean = dev(row_p, n, 0.0, 0) / (double)n;                     \
                var_acc row = {(double)n, row_mean, dev(row_p, n, row_mean, 1)};               \
                var_merge((var_acc *)acc, row);                                                \
                return;                                                                        \
            }                                                                                  \
        }                                                                                      \
        double total = 0, m2 = 0;                                                              \
        ROW_LOOP(K, T, LD, s, total += v)                                                      \
        double mean = total / (double)n;                                                       \
        ROW_LOOP(K, T, LD, s, m2 += (v - mean) * (v - mean))                                   \
        var_acc row = {(double)n, mean, m2};                                                   \
        var_merge((var_acc *)acc, row);                                                        \
    }                                                                                          \
    DEFINE_GENERIC_VEC(OP, name, T, K, LD, var_acc, VAR_UPD)                                   \
    STORE_HEAD(OP, name, var_acc)                                                              \
        for (int64_t j = 0; j < c; j++) {                                                      \
            ST(T, out + j * os, OP##_FIN(a[j], count, param));                                 \
        }                                                                                      \
    }

#define LSE_INIT(a) ((a).m = -INFINITY, (a).s = 0)
#define GEN_LSEF(OP, name, T, K, LD, ST, CODE)                                      \
    DEFINE_INIT(OP, name, lse_acc, LSE_INIT)                                        \
    DEFINE_MERGE(OP, name, lse_acc, lse_merge(a, *b))                               \
    DEFINE_GENERIC_ROW(OP, name, T, K, LD, lse_acc, LSE_UPD)                        \
    DEFINE_GENERIC_VEC(OP, name, T, K, LD, lse_acc, LSE_UPD)                        \
    STORE_HEAD(OP, name, lse_acc)                                                   \
        for (int64_t j = 0; j < c; j++) {                                           \
            ST(T, out + j * os, lse_result(a[j]));                                  \
        }                                                                           \
    }

/* Every op: (dtypes it takes, name, family). */
#define REDUCE_OPS(X)                                                        \
    X(REDUCE_ALL_DTYPES, SUM, SUMF) X(REDUCE_ALL_DTYPES, NANSUM, SUMF)                     \
    X(REDUCE_ALL_DTYPES, PROD, PRODF) X(REDUCE_FLOAT_DTYPES, MEAN, SUMF)                   \
    X(REDUCE_ALL_DTYPES, MAX, EXTF) X(REDUCE_ALL_DTYPES, MIN, EXTF)                        \
    X(REDUCE_ALL_DTYPES, ARGMAX, ARGF) X(REDUCE_ALL_DTYPES, ARGMIN, ARGF)                  \
    X(REDUCE_ALL_DTYPES, ANY, SUMF) X(REDUCE_ALL_DTYPES, ALL, SUMF)                        \
    X(REDUCE_ALL_DTYPES, COUNT_NONZERO, SUMF)                                       \
    X(REDUCE_FLOAT_DTYPES, VAR, VARF) X(REDUCE_FLOAT_DTYPES, STD, VARF)                    \
    X(REDUCE_FLOAT_DTYPES, LOGSUMEXP, LSEF)                                         \
    X(REDUCE_FLOAT_DTYPES, NORM_L0, SUMF) X(REDUCE_FLOAT_DTYPES, NORM_L1, SUMF)            \
    X(REDUCE_FLOAT_DTYPES, NORM_L2, SUMF) X(REDUCE_FLOAT_DTYPES, NORM_LINF, EXTF)          \
    X(REDUCE_FLOAT_DTYPES, NORM_LNEGINF, EXTF) X(REDUCE_FLOAT_DTYPES, NORM_LP, SUMF)

#define DEFINE_REDUCE_OP(LIST, OP, FAM) LIST(GEN_##FAM, OP)
#define REG_REDUCE(OP, FAM, name, T, K, LD, ST, CODE) \
    [TT_RED_##OP][CODE] = {init_##OP##_##name, row_##OP##_##name, vec_##OP##_##name, store_##OP##_##name, \
                           merge_##OP##_##name, sizeof(FAM##_ACC_##K)},
#define REGISTER_REDUCE_OP(LIST, OP, FAM) LIST(REG_REDUCE, OP, FAM)

REDUCE_OPS(DEFINE_REDUCE_OP)

const reduce_impl RD_TABLE[TT_NUM_REDUCE_OPS][TT_NUM_DTYPES] = {REDUCE_OPS(REGISTER_REDUCE_OP)};
