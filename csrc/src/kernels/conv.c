/*
 * conv.c: forward 2-D convolution (conv1d is the case h = kh = 1), by im2col and a matrix product.
 *
 * For each image and group, the output positions are taken in blocks of columns. For a block,
 * im2col copies the input values each output position sees into a (K x pb) matrix `col`
 * (K = c_in/groups * kh * kw; zero where the window falls in the padding), converted to the
 * compute type; then out_block (M x pb) = w_group (M x K) * col + bias, M = c_out/groups.
 * The weights are packed once into a contiguous (c_out x K) matrix of the compute type; with a
 * bias, K grows by one: the bias is the weights' last column and col's last row is ones, so the
 * product writes the finished output in one pass.
 * Blocks keep `col` around 1 MiB, so scratch memory does not grow with the image.
 *
 * Compute types: float for float16 and float32, double for float64. The product is tt_gemm
 * (matmul.c: packed panels, AVX2/FMA micro-kernel), accumulating onto the bias: for float32 and
 * float64 straight into `out` (row stride P), for float16 into a float buffer stored afterwards.
 *
 * Threads: the units (image, group, block of positions) are split into one contiguous range per
 * worker (tt_parallel_for over the worker count), each worker with its own col/cbuf scratch and
 * writing only its units' part of `out`; tt_gemm called from inside a worker runs serially. With
 * fewer units than threads (one image), a single worker runs and tt_gemm itself uses the threads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "cpu_features.h"
#include "gemm_kernels.h"

#include "half.h"
#include "tt/tt.h"
#include "tt/kernels/conv.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/parallel.h"

#define LD_plain(p) (*(p))
#define LD_half(p) tt_half_to_float(*(p))
#define ST_plain(CT, v) (v)
#define ST_half(CT, v) tt_float_to_half(v)

/* (name, storage type, compute type, load, store, code) */
#define CONV_DTYPES(X)                                              \
    X(float16, uint16_t, float, LD_half, ST_half, TT_FLOAT16)       \
    X(float32, float, float, LD_plain, ST_plain, TT_FLOAT32)        \
    X(float64, double, double, LD_plain, ST_plain, TT_FLOAT64)

/* Elements of `col` per block, a budget: the block narrows for large K. */
#define COL_BUDGET ((int64_t)1 << 18)
/* Rows of `col` (the k dimension) per slice: a micro-panel of NR columns stays in L1. */
#define CONV_KC 256
/* Below this many multiply-adds a convolution runs its (image, group, block) units on one
   worker (its GEMMs may still use threads). */
#define CONV_PARALLEL_MIN ((double)(1 << 18))

typedef struct conv_geom {
    int64_t n, c_in, h, w;              /* input */
    int64_t c_out, cin_g, kh, kw;       /* weight */
    int64_t groups, m;                  /* m = c_out / groups */
    int64_t oh, ow;                     /* output plane */
    int64_t sh, sw, ph, pw, dh, dw;     /* stride, padding before, dilation */
    int64_t xs[4], ws[4], bs;           /* strides in elements */
} conv_geom;

/* One row of the im2col matrix: its tap of the window (column kx, row ky, input channel ci) and
   the first output position of the unit (oy0, ox0). */
typedef struct conv_tap {
    int64_t kx, ky, ci, oy0, ox0;
} conv_tap;

/* ceil(a / b) for a >= 0, b >= 1, without the division in the common case b = 1. */
static inline int64_t ceil_div(int64_t a, int64_t b) { return b == 1 ? a : (a + b - 1) / b; }

#define GEMM_DTYPE_float TT_FLOAT32
#define GEMM_DTYPE_double TT_FLOAT64
#define GEMM_DTYPE(CT) GEMM_DTYPE_##CT

/* ------------------------------------------------------------------ im2col and the driver */

/* A multiplication of non-negative sizes that reports overflow. */
static int mul_ok(int64_t a, int64_t b, int64_t *result) { return !__builtin_mul_overflow(a, b, result); }

/* True when (out - 1) * stride + (k - 1) * dilation + padding + size + 1, the largest magnitude the
   window arithmetic meets, fits in int64 (all arguments non-negative). */
static int reach_ok(int64_t out, int64_t stride, int64_t k, int64_t dilation, int64_t padding, int64_t size) {
    int64_t a, b, total;
    return mul_ok(out > 0 ? out - 1 : 0, stride, &a) && mul_ok(k - 1, dilation, &b)
           && !__builtin_add_overflow(a, b, &total) && !__builtin_add_overflow(total, padding, &total)
           && !__builtin_add_overflow(total, size, &total) && total < INT64_MAX;
}

#define DEFINE_CONV_JOB(name, T, CT, LD, ST, CODE)                                                \
    /* Shared state of one convolution: work units are (image, group, block of output positions, \
       range of micro-rows of the group's output channels). */                                    \
    typedef struct conv_job_##name {                                                              \
        const conv_geom *g;                                                                       \
        const T *x, *bias;                                                                        \
        T *out;                                                                                   \
        const CT *wpack;      /* per group: the weights in MR-tall micro-panels, per KC slice */  \
        CT *scratch;          /* per slot: col panels, then cbuf (M x pb) when T != CT, or  \
                                 the padded plane and its offsets with plane_pitch */       \
        tt_ukr_##CT ukr;                                                                          \
        int64_t K, P, pb, blocks, mrows, msplit, units, slots_n, per_slot;                        \
        int64_t plane_pitch; /* > 0: im2col reads a zero-padded copy of each input plane */      \
        atomic_uint_fast64_t slots;                                                               \
        void (*units_fn)(const struct conv_job_##name *, int64_t, int64_t, CT *);                 \
    } conv_job_##name;

/* The per-unit work (im2col into panels, micro-kernel calls), compiled once per instruction set
   (SUF, ATTR): the copies of im2col are most of the work left beside the micro-kernel. */
#define DEFINE_CONV_CORE(name, T, CT, LD, ST, SUF, ATTR)                                          \
    /* Positions [a, a + len) of one im2col row into the micro-panels: position t goes to        \
       dst[(t / NR) * pstride + t % NR]; the values are src[0], src[step], ... (zeros when src is  \
       NULL). */                                                                                  \
    ATTR static void put_run_##name##_##SUF(CT *dst, int64_t NR, int64_t pstride, int64_t a, int64_t len,      \
                               const T *src, int64_t step) {                                      \
        const int shift = __builtin_ctzll((unsigned long long)NR); /* NR is a power of two */      \
        while (len > 0) {                                                                         \
            const int64_t off = a & (NR - 1), n = NR - off < len ? NR - off : len;                \
            CT *d = dst + (a >> shift) * pstride + off;                                           \
            if (src == NULL) {                                                                    \
                for (int64_t t = 0; t < n; t++) d[t] = 0;                                         \
            } else if (step == 1) {                                                               \
                for (int64_t t = 0; t < n; t++) d[t] = (CT)LD(src + t);                           \
                src += n;                                                                         \
            } else {                                                                              \
                for (int64_t t = 0; t < n; t++) d[t] = (CT)LD(src + t * step);                    \
                src += n * step;                                                                  \
            }                                                                                     \
            a += n;                                                                               \
            len -= n;                                                                             \
        }                                                                                         \
    }                                                                                             \
                                                                                                  \
    /* Row (ci * kh + ky) * kw + kx (`tap`) of the im2col matrix for pn output positions from    \
       (tap->oy0, tap->ox0) of one image and group: the input values that tap of the window sees \
       (zero in the padding), written into micro-panels as put_run does; x points at the group's \
       first channel of the image. */                                                             \
    ATTR static void im2col_row_##name##_##SUF(const conv_geom *g, const T *x, const conv_tap *tap, int64_t pn, \
                                  CT *dst, int64_t NR, int64_t pstride) {                         \
        const int64_t kx = tap->kx, ky = tap->ky;                                                 \
        const T *xc = x + tap->ci * g->xs[1];                                                     \
        int64_t oy = tap->oy0, ox = tap->ox0, j = 0;                                              \
        /* the columns inside the row for a span that starts at ox = 0, found once: every span   \
           but the first starts there (on a small plane, divisions cost as much as the copies) */ \
        const int64_t ix_first = kx * g->dw - g->pw;                                              \
        const int64_t lo_first = ix_first < 0 ? ceil_div(-ix_first, g->sw) : 0;                   \
        const int64_t hi_first = ix_first < g->w ? ceil_div(g->w - ix_first, g->sw) : 0;          \
        while (j < pn) {                                                                          \
            const int64_t span = g->ow - ox < pn - j ? g->ow - ox : pn - j;                       \
            const int64_t iy = oy * g->sh - g->ph + ky * g->dh;                                   \
            if (iy < 0 || iy >= g->h) {                                                           \
                put_run_##name##_##SUF(dst, NR, pstride, j, span, NULL, 0);                               \
            } else {                                                                              \
                const int64_t ix0 = ox * g->sw - g->pw + kx * g->dw, step = g->sw * g->xs[3];     \
                /* the positions t whose column ix0 + t * sw lies inside the row */               \
                int64_t lo = ox == 0 ? lo_first : ix0 < 0 ? ceil_div(-ix0, g->sw) : 0;            \
                int64_t hi = ox == 0 ? hi_first : ix0 < g->w ? ceil_div(g->w - ix0, g->sw) : 0;   \
                lo = lo < span ? lo : span;                                                       \
                hi = hi < span ? hi : span;                                                       \
                hi = hi > lo ? hi : lo;                                                           \
                put_run_##name##_##SUF(dst, NR, pstride, j, lo, NULL, 0);                                 \
                put_run_##name##_##SUF(dst, NR, pstride, j + lo, hi - lo,                                 \
                               xc + iy * g->xs[2] + (ix0 + lo * g->sw) * g->xs[3], step);         \
                put_run_##name##_##SUF(dst, NR, pstride, j + hi, span - hi, NULL, 0);                     \
            }                                                                                     \
            j += span;                                                                            \
            ox = 0;                                                                               \
            oy++;                                                                                 \
        }                                                                                         \
    }                                                                                             \
                                                                                                  \
    ATTR static void conv_units_##name##_##SUF(const conv_job_##name *j, int64_t u0, int64_t u1, CT *scratch) { \
        const conv_geom *g = j->g;                                                                \
        const int64_t M = g->m, P = j->P, K = j->K; /* K includes the bias row */                \
        const int64_t MR = j->ukr.mr, NR = j->ukr.nr, Mp = j->mrows * MR;                         \
        const int direct = sizeof(T) == sizeof(CT); /* the product lands in `out` itself */       \
        const int64_t kcmax = K < CONV_KC ? K : CONV_KC;                                          \
        const int64_t pp = (j->pb + NR - 1) / NR * NR; /* positions padded to whole panels */     \
        CT *col = scratch, *cbuf = col + kcmax * pp;                                              \
        T *plane = (T *)(void *)(col + kcmax * pp); /* with plane_pitch: T is CT, no cbuf */     \
        /* with plane_pitch: position t of the output plane reads plane[offsets[t] + tap's] */    \
        int32_t *offsets = (int32_t *)(void *)(plane + (g->oh + g->kh - 1) * j->plane_pitch);    \
        if (j->plane_pitch > 0) {                                                                 \
            plane_offsets(offsets, P, g->ow, j->plane_pitch);                                     \
        }                                                                                         \
        for (int64_t u = u0; u < u1; u++) {                                                       \
            const int64_t ms = u % j->msplit, blk = u / j->msplit % j->blocks;                    \
            const int64_t grp = u / j->msplit / j->blocks % g->groups;                            \
            const int64_t b = u / j->msplit / j->blocks / g->groups;                              \
            const int64_t p0 = blk * j->pb, pn = P - p0 < j->pb ? P - p0 : j->pb;                 \
            const int64_t panels = (pn + NR - 1) / NR;                                            \
            const int64_t i0 = j->mrows * ms / j->msplit * MR, i1 = j->mrows * (ms + 1) / j->msplit * MR; \
            const T *xg = j->x + b * g->xs[0] + grp * g->cin_g * g->xs[1];                        \
            T *o = j->out + (b * g->c_out + grp * M) * P + p0;                                    \
            CT *c = direct ? (CT *)(void *)o : cbuf;                                              \
            const int64_t rsc = direct ? P : pn;                                                  \
            if (K == 0) { /* no input channel and no bias: zeros */                               \
                for (int64_t i = i0; i < i1 && i < M; i++)                                        \
                    for (int64_t t = 0; t < pn; t++) c[i * rsc + t] = 0;                          \
            }                                                                                     \
            for (int64_t pc = 0; pc < K; pc += CONV_KC) {                                         \
                const int64_t kc = K - pc < CONV_KC ? K - pc : CONV_KC;                           \
                /* im2col rows [pc, pc + kc) straight into NR-wide micro-panels (row rr of panel  \
                   q at col + q * kc * NR + rr * NR), zero past pn */                             \
                /* row pc's tap, then the next row's by counting (no divisions per row) */        \
                conv_tap tap = {.kx = pc % g->kw, .ky = pc / g->kw % g->kh, .ci = pc / g->kw / g->kh, \
                                .oy0 = p0 / g->ow, .ox0 = p0 % g->ow};                            \
                for (int64_t rr = 0; rr < kc; rr++) {                                             \
                    const int64_t r = pc + rr;                                                    \
                    CT *dst = col + rr * NR;                                                      \
                    if (j->bias && r == K - 1) { /* the bias: weight column K - 1 x ones */       \
                        for (int64_t q = 0; q < panels; q++)                                      \
                            for (int64_t t = 0; t < NR; t++) dst[q * kc * NR + t] = 1;            \
                    } else if (j->plane_pitch > 0) {                                              \
                        /* the whole plane (p0 = 0, pn = P): output row oy of this tap is the run \
                           plane[(oy + ky) * pitch + kx ...], no bounds to test */                \
                        const int64_t pitch = j->plane_pitch;                                     \
                        if (rr == 0 || (tap.kx == 0 && tap.ky == 0)) {                            \
                            fill_plane_##name(g, xg + tap.ci * g->xs[1], pitch, plane);           \
                        }                                                                         \
                        const T *base = plane + tap.ky * pitch + tap.kx;                          \
                        if (g->ow >= PLANE_RUN_MIN) {                                             \
                            for (int64_t oy = 0; oy < g->oh; oy++) {                              \
                                put_run_##name##_##SUF(dst, NR, kc * NR, oy * g->ow, g->ow, base + oy * pitch, 1); \
                            }                                                                     \
                        } else { /* runs too short to pay for a call: one gather a position */    \
                            for (int64_t q = 0, t = 0; q < panels; q++) {                         \
                                CT *d = dst + q * kc * NR;                                        \
                                const int64_t end = pn - t < NR ? pn - t : NR;                    \
                                for (int64_t i = 0; i < end; i++, t++) d[i] = base[offsets[t]];   \
                            }                                                                     \
                        }                                                                         \
                    } else {                                                                      \
                        im2col_row_##name##_##SUF(g, xg, &tap, pn, dst, NR, kc * NR);             \
                    }                                                                             \
                    if (++tap.kx == g->kw) {                                                      \
                        tap.kx = 0;                                                               \
                        if (++tap.ky == g->kh) {                                                  \
                            tap.ky = 0;                                                           \
                            tap.ci++;                                                             \
                        }                                                                         \
                    }                                                                             \
                    put_run_##name##_##SUF(dst, NR, kc * NR, pn, panels * NR - pn, NULL, 0);              \
                }                                                                                 \
                const CT *wk = j->wpack + grp * Mp * K + pc * Mp;                                 \
                for (int64_t q = 0; q < panels; q++) {                                            \
                    const int nr = (int)(pn - q * NR < NR ? pn - q * NR : NR);                    \
                    for (int64_t i = i0; i < i1 && i < M; i += MR) {                              \
                        const int mr = (int)(M - i < MR ? M - i : MR);                            \
                        j->ukr.fn(kc, wk + i * kc, col + q * kc * NR, c + i * rsc + q * NR, rsc, 1, mr, nr, \
                                  pc > 0);                                                        \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
            if (!direct) {                                                                        \
                for (int64_t i = i0; i < i1 && i < M; i++) {                                      \
                    for (int64_t t = 0; t < pn; t++) {                                            \
                        o[i * P + t] = ST(CT, cbuf[i * pn + t]);                                  \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

CONV_DTYPES(DEFINE_CONV_JOB)
/* fill_plane_<dtype>: the zero-padded input planes im2col reads at stride and dilation 1 (taken
   only where the storage type is the compute type, so the plane holds T) */
#define DEFINE_CONV_FILL_PLANE(name, T, CT, LD, ST, CODE) DEFINE_FILL_PADDED(fill_plane_##name, conv_geom, T, T, LD_plain)
CONV_DTYPES(DEFINE_CONV_FILL_PLANE)
#define CONV_CORE_GENERIC(name, T, CT, LD, ST, CODE) DEFINE_CONV_CORE(name, T, CT, LD, ST, generic, )
CONV_DTYPES(CONV_CORE_GENERIC)
#if TT_HAVE_X86
#define CONV_CORE_AVX2(name, T, CT, LD, ST, CODE) \
    DEFINE_CONV_CORE(name, T, CT, LD, ST, avx2, __attribute__((target("avx2"))))
#define CONV_CORE_AVX512(name, T, CT, LD, ST, CODE) \
    DEFINE_CONV_CORE(name, T, CT, LD, ST, avx512, __attribute__((target("avx512f"))))
CONV_DTYPES(CONV_CORE_AVX2)
CONV_DTYPES(CONV_CORE_AVX512)
#endif

#if TT_HAVE_X86
#define CONV_PICK_UNITS(name)                                                                      \
    (tt_cpu_use_avx512f() ? conv_units_##name##_avx512                                             \
                          : tt_cpu_use_avx2() ? conv_units_##name##_avx2 : conv_units_##name##_generic)
#else
#define CONV_PICK_UNITS(name) conv_units_##name##_generic
#endif

#define DEFINE_CONV(name, T, CT, LD, ST, CODE)                                                   \
    static void conv_task_##name(int64_t begin, int64_t end, void *ctx) {                         \
        conv_job_##name *j = ctx;                                                                 \
        const int slot = tt_slot_take(&j->slots, j->slots_n);                                     \
        j->units_fn(j, begin, end, j->scratch + slot * j->per_slot);                              \
        tt_slot_give(&j->slots, slot);                                                            \
    }                                                                                             \
                                                                                                  \
    static tt_status conv_##name(const conv_geom *g, const T *x, const T *w, const T *bias, T *out) { \
        const int64_t K = g->cin_g * g->kh * g->kw + (bias != NULL), P = g->oh * g->ow, M = g->m; \
        if (g->n == 0 || g->c_out == 0 || P == 0) {                                               \
            return TT_OK;                                                                         \
        }                                                                                         \
        const tt_ukr_##CT ukr = tt_gemm_ukr_##CT(M);                                                  \
        const int64_t kcmax = K < CONV_KC ? K : CONV_KC;                                          \
        int64_t pb = P;                                                                           \
        if (kcmax > 0 && kcmax * pb > COL_BUDGET) {                                               \
            pb = COL_BUDGET / kcmax < 64 ? 64 : COL_BUDGET / kcmax;                               \
            pb = pb < P ? pb : P;                                                                 \
        }                                                                                         \
        const int64_t pp = (pb + ukr.nr - 1) / ukr.nr * ukr.nr, mrows = (M + ukr.mr - 1) / ukr.mr; \
        int64_t w_elems, col_elems, c_elems, units;                                               \
        if (!mul_ok(g->groups, mrows * ukr.mr, &w_elems) || !mul_ok(w_elems, K, &w_elems)          \
            || !mul_ok(kcmax, pp, &col_elems) || !mul_ok(M, pb, &c_elems)                     \
            || w_elems > (int64_t)(SIZE_MAX / 2 / sizeof(CT)) || col_elems > (int64_t)(SIZE_MAX / 2 / sizeof(CT)) \
            || c_elems > (int64_t)(SIZE_MAX / 2 / sizeof(CT)) || !mul_ok(g->n, g->groups, &units)) {   \
            return TT_ERR_OVERFLOW;                                                               \
        }                                                                                         \
        const int64_t blocks = (P + pb - 1) / pb;                                                 \
        if (!mul_ok(units, blocks, &units)) {                                                     \
            return TT_ERR_OVERFLOW;                                                               \
        }                                                                                         \
        /* Threads take units as they come. With few units (one image) the output channels are   \
           split too, so that every thread has work. */                                           \
        int64_t threads = tt_get_num_threads();                                                   \
        threads = threads > 64 ? 64 : threads;                                                    \
        const double work = (double)units * (double)M * (double)pb * (double)(K + 1);             \
        const int parallel = threads > 1 && work >= CONV_PARALLEL_MIN;                            \
        int64_t msplit = 1;                                                                       \
        if (parallel && units < 4 * threads) {                                                    \
            msplit = (4 * threads + units - 1) / units;                                           \
            msplit = msplit < mrows ? msplit : mrows;                                             \
        }                                                                                         \
        const int64_t slots_n = parallel ? threads : 1;                                           \
        /* im2col from a zero-padded copy of each input plane: for stride and dilation 1 when a    \
           unit covers the whole output plane and the padded plane is small. On a small plane     \
           the runs of a row are a few values each, and finding them (bounds, padding) cost 4x    \
           the micro-kernel: (64, 16, 4, 4) x 32 filters 3x3. */                                 \
        const int64_t plane_pitch = g->ow + g->kw - 1, plane_rows = g->oh + g->kh - 1;             \
        const int use_plane = sizeof(T) == sizeof(CT) && g->sh == 1 && g->sw == 1 && g->dh == 1   \
                              && g->dw == 1 && pb == P && g->cin_g > 0                           \
                              && padded_plane_fits(plane_rows, plane_pitch);                      \
        const int64_t extra = use_plane ? plane_scratch_elems(plane_rows, plane_pitch)            \
                                        : sizeof(T) == sizeof(CT) ? 0 : c_elems;                  \
        const int64_t per_slot = (col_elems + extra + 15) / 16 * 16;                              \
        CT *wpack = malloc((size_t)(w_elems + 1) * sizeof(CT));                                   \
        CT *scratch = malloc((size_t)(per_slot * slots_n + 1) * sizeof(CT));                      \
        if (wpack == NULL || scratch == NULL) {                                                   \
            free(wpack);                                                                          \
            free(scratch);                                                                        \
            return TT_ERR_NOMEM;                                                                  \
        }                                                                                         \
        /* Weights: per group, per KC slice, MR-tall micro-panels (zero rows past M); the bias    \
           (when given) is column K - 1. */                                                       \
        const int64_t MR = ukr.mr, Mp = mrows * MR;                                               \
        for (int64_t grp = 0; grp < g->groups; grp++) {                                           \
            for (int64_t pc = 0; pc < K; pc += CONV_KC) {                                         \
                const int64_t kc = K - pc < CONV_KC ? K - pc : CONV_KC;                           \
                CT *wp = wpack + grp * Mp * K + pc * Mp;                                          \
                for (int64_t i = 0; i < Mp; i++) {                                                \
                    const int64_t co = grp * M + i;                                               \
                    for (int64_t rr = 0; rr < kc; rr++) {                                         \
                        const int64_t r = pc + rr, kx = r % g->kw, ky = r / g->kw % g->kh;        \
                        const int64_t ci = r / g->kw / g->kh;                                     \
                        CT v = 0;                                                                 \
                        if (i < M && bias && r == K - 1) {                                        \
                            v = (CT)LD(bias + co * g->bs);                                        \
                        } else if (i < M) {                                                       \
                            v = (CT)LD(w + co * g->ws[0] + ci * g->ws[1] + ky * g->ws[2] + kx * g->ws[3]); \
                        }                                                                         \
                        wp[(i / MR) * MR * kc + rr * MR + i % MR] = v;                            \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        conv_job_##name job = {.g = g, .x = x, .bias = bias, .out = out, .wpack = wpack,          \
                               .scratch = scratch, .ukr = ukr, .K = K, .P = P, .pb = pb,           \
                               .blocks = blocks, .mrows = mrows, .msplit = msplit,                \
                               .units = units * msplit, .slots_n = slots_n, .per_slot = per_slot, \
                               .plane_pitch = use_plane ? plane_pitch : 0};                       \
        atomic_init(&job.slots, 0);                                                               \
        job.units_fn = CONV_PICK_UNITS(name);                                                     \
        if (parallel) {                                                                           \
            tt_parallel_for(job.units, 1, conv_task_##name, &job);                                \
        } else {                                                                                  \
            conv_task_##name(0, job.units, &job);                                                 \
        }                                                                                         \
        free(wpack);                                                                              \
        free(scratch);                                                                            \
        return TT_OK;                                                                             \
    }
CONV_DTYPES(DEFINE_CONV)

/* ------------------------------------------------------------------ direct kernel, few input channels */
/* A convolution whose window holds few values (cin * kh * kw <= DIRECT_MAX_TAPS: the first layer
   of an image network, 3 channels x 3 x 3, but also 16 channels x 3 x 3) gives a GEMM with a small
   k: im2col then costs as much as the product, or more. The direct kernel skips it (measured
   faster than im2col up to 16 x 3 x 3 and 6 x 5 x 5 windows, 64 output channels included): for one output row and 16 output columns it keeps
   16 output channels in 16 AVX-512 registers, and for every tap of the window loads the 16 input
   values that tap sees once (a masked load: the padding reads as zeros, nothing outside the row is
   touched) and multiplies it into all 16 channels with their broadcast weight. The weights are
   repacked as [channel block][tap][16 channels] (zeros past c_out), the bias starts the sums.
   Taken for float32, groups == 1, stride and dilation 1, unit column stride, when the float GEMM
   runs its AVX-512 kernel (the AVX2 GEMM kernel has a direct kernel of its own, below; forcing the
   generic one tests the im2col path). */
#define DIRECT_MAX_TAPS 160
#define DIRECT_CO 16

#if TT_HAVE_X86
#include <immintrin.h>

/* The geometry both row kernels (AVX-512 here, AVX2 below) take: one group, stride and dilation
   1, contiguous input rows, few taps, rows of at least 8 outputs. */
static int direct_rows_geometry(const conv_geom *g) {
    return g->groups == 1 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->xs[3] == 1
           && g->cin_g * g->kh * g->kw <= DIRECT_MAX_TAPS && g->ow >= 8;
}

static int direct_applies(const conv_geom *g) {
    return direct_rows_geometry(g) && strcmp(tt_gemm_kernel_name(), "avx512") == 0;
}

typedef struct direct_job {
    const conv_geom *g;
    const float *x;
    const float *wpad;   /* [block][tap][co] */
    const float *bpad;   /* [block][co] */
    float *out;
    int64_t blocks;      /* channel blocks of co: DIRECT_CO (AVX-512) or DIRECT2_CO (AVX2) */
    /* AVX2 only: each worker's zero-padded copies of the input rows one output row reads */
    int64_t pitch;       /* floats per padded row */
    int64_t band;        /* output rows per unit */
    float *rows;         /* workers x (cin_g * (band + kh - 1) * pitch) */
    int64_t workers;
    atomic_uint_fast64_t slots;   /* free list of the row buffers */
} direct_job;

/* Lanes l < width of row[ix0 + l] into *v, zero where the column ix0 + l is outside [0, w);
   0 (and *v untouched) when no lane is inside. Only columns inside the row are read: at the left
   border the load starts at column 0 and an expand moves it into lanes lo.., so no address
   before the row is formed either. */
__attribute__((target("avx512f"))) static inline int load_window(const float *row, int64_t ix0, int64_t width,
                                                                int64_t w, __m512 *v) {
    const int64_t lo = ix0 < 0 ? -ix0 : 0;
    const int64_t hi = w - ix0 < width ? w - ix0 : width;
    if (hi <= lo) {
        return 0;
    }
    const __mmask16 m = (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
    *v = lo == 0 ? _mm512_maskz_loadu_ps(m, row + ix0) : _mm512_maskz_expandloadu_ps(m, row);
    return 1;
}

/* Units are (image, channel block, output row). */
__attribute__((target("avx512f"))) static void direct_rows(int64_t begin, int64_t end, void *ctx) {
    const direct_job *j = ctx;
    const conv_geom *g = j->g;
    const int64_t taps = g->cin_g * g->kh * g->kw, P = g->oh * g->ow;
    for (int64_t u = begin; u < end; u++) {
        const int64_t y = u % g->oh, cb = u / g->oh % j->blocks, b = u / g->oh / j->blocks;
        const float *wb = j->wpad + cb * taps * DIRECT_CO, *bb = j->bpad + cb * DIRECT_CO;
        const int64_t channels = g->c_out - cb * DIRECT_CO < DIRECT_CO ? g->c_out - cb * DIRECT_CO : DIRECT_CO;
        float *ob = j->out + (b * g->c_out + cb * DIRECT_CO) * P + y * g->ow;
        for (int64_t x0 = 0; x0 < g->ow; x0 += 16) {
            const int64_t width = g->ow - x0 < 16 ? g->ow - x0 : 16;
            const __mmask16 store_mask = (__mmask16)((1u << width) - 1u);
            /* every loop over acc is unrolled, so the compiler keeps it in 16 registers */
            __m512 acc[DIRECT_CO];
#pragma GCC unroll 16
            for (int c = 0; c < DIRECT_CO; c++) {
                acc[c] = _mm512_set1_ps(bb[c]);
            }
            for (int64_t ci = 0; ci < g->cin_g && j->x != NULL; ci++) {   /* no x: an empty input */
                for (int64_t ky = 0; ky < g->kh; ky++) {
                    const int64_t iy = y - g->ph + ky;
                    if (iy < 0 || iy >= g->h) {
                        continue;   /* a padding row: adds nothing */
                    }
                    const float *row = j->x + b * g->xs[0] + ci * g->xs[1] + iy * g->xs[2];
                    const float *wt = wb + ((ci * g->kh + ky) * g->kw) * DIRECT_CO;
                    for (int64_t kx = 0; kx < g->kw; kx++, wt += DIRECT_CO) {
                        __m512 v;
                        if (!load_window(row, x0 - g->pw + kx, width, g->w, &v)) {
                            continue;
                        }
#pragma GCC unroll 16
                        for (int c = 0; c < DIRECT_CO; c++) {
                            acc[c] = _mm512_fmadd_ps(v, _mm512_set1_ps(wt[c]), acc[c]);
                        }
                    }
                }
            }
#pragma GCC unroll 16
            for (int c = 0; c < DIRECT_CO; c++) {
                if (c < channels) {
                    _mm512_mask_storeu_ps(ob + c * P + x0, store_mask, acc[c]);
                }
            }
        }
    }
}

/* The direct kernel for AVX2 (taken when the GEMM runs its AVX2 kernel, with the same limits as
   the AVX-512 one). AVX2 has 16 registers of 8 floats, too few for 16 channels: a block is
   DIRECT2_CO = 4 output channels x 24 output columns (three vectors), 12 accumulators, and each
   tap costs 3 loads of input, 4 broadcasts of a weight and 12 FMAs (the GEMM's 6 x 16 kernel
   needs 8 loads for its 12). Four channels pad no common channel count (16 output channels are
   four blocks; six-channel blocks would compute 18). A row's last columns take 3, 2 or 1 vectors.
   AVX2 has no cheap masked or expanding loads, so a unit (image, band of output rows) first
   copies the input rows its windows read (each input channel, each row inside the image) into a
   zero-padded buffer of `pitch` floats a row: padding columns and the slack past the row's end
   read as zeros, and the tap loop is plain unaligned loads with no border test. The buffer
   serves every output row and channel block of the unit. 3-wide windows get their own copy of
   the tap loop with kx fixed (not unrolled: GCC then hoists the next tap's loads and spills). */
#define DIRECT2_CO 4
#define DIRECT2_V 3
/* A worker's row buffer holds at most this many floats (it should stay in L1/L2), else im2col. */
#define DIRECT2_MAX_ROW_FLOATS ((int64_t)1 << 15)

/* Floats per padded row: the output row rounded up to whole vectors, plus the window's reach. */
static int64_t direct2_pitch(const conv_geom *g) { return (g->ow + 7) / 8 * 8 + g->kw - 1; }

/* Output rows per unit: up to DIRECT2_BAND, fewer when the band's row copies would pass the
   buffer budget (direct2_applies guarantees one row fits) or when there would be fewer than
   DIRECT2_UNITS_PER_THREAD units a thread (the units are claimed as they come, so a thread the
   OS holds up leaves its share to the others). Longer bands copy the kh - 1 rows two bands share
   fewer times and write longer runs of each output plane: (32, 3, 64, 64) x 16, 3 x 3, 16 rows
   instead of 8 took 4-5% less time per call (per-call ratios, both builds in one process). */
#define DIRECT2_BAND 16
#define DIRECT2_UNITS_PER_THREAD 4
static int64_t direct2_band(const conv_geom *g, int64_t threads) {
    const int64_t fit = DIRECT2_MAX_ROW_FLOATS / (g->cin_g * direct2_pitch(g)) - (g->kh - 1);
    const int64_t shared = g->n * g->oh / (DIRECT2_UNITS_PER_THREAD * threads);
    int64_t band = fit < DIRECT2_BAND ? fit : DIRECT2_BAND;
    band = shared < band ? shared : band;
    return band < 1 ? 1 : band;
}

/* At least one input channel (the band's size divides by the channel count), and a padded row
   that holds the whole input row: the C API takes any out_size, and a narrower output than
   w + 2 pw - kw + 1 (the padding after the input is implied by out_size) would not. */
static int direct2_applies(const conv_geom *g) {
    return direct_rows_geometry(g) && g->cin_g > 0 && direct2_pitch(g) >= g->pw + g->w
           && g->cin_g * g->kh * direct2_pitch(g) <= DIRECT2_MAX_ROW_FLOATS
           && strcmp(tt_gemm_kernel_name(), "avx2") == 0;
}

/* Input row iy of (image b, channel ci) into dst[0..pitch): dst[pw + i] = x[.., iy, i], zeros
   around it (direct2_applies checks pitch >= pw + w). */
static void direct2_fill_row(const conv_geom *g, const float *x, int64_t b, int64_t ci, int64_t iy,
                             int64_t pitch, float *dst) {
    const float *src = x + b * g->xs[0] + ci * g->xs[1] + iy * g->xs[2];
    memset(dst, 0, (size_t)g->pw * sizeof(float));
    memcpy(dst + g->pw, src, (size_t)g->w * sizeof(float));
    memset(dst + g->pw + g->w, 0, (size_t)(pitch - g->pw - g->w) * sizeof(float));
}

/* One block of DIRECT2_CO channels x V vectors of columns: bias plus every tap, from the padded
   rows (already offset to the segment's first column), stored into `width` columns of the first
   `channels` output planes at ob. Inlined with constant V (and KW = 3 for 3-wide windows), so
   every loop over acc unrolls and acc lives in registers. */
__attribute__((target("avx2,fma"), always_inline)) static inline void direct2_block(
    const conv_geom *g, const float *rows, int64_t pitch, int64_t ci_stride, int64_t ky0, int64_t ky1,
    const float *wb, const float *bb, float *ob, int64_t P, int64_t width, int64_t channels, const int V,
    const int64_t KW) {
    __m256 acc[DIRECT2_CO * DIRECT2_V];
#pragma GCC unroll 4
    for (int c = 0; c < DIRECT2_CO; c++) {
#pragma GCC unroll 3
        for (int v = 0; v < V; v++) {
            acc[c * DIRECT2_V + v] = _mm256_broadcast_ss(bb + c);
        }
    }
    for (int64_t ci = 0; ci < g->cin_g; ci++) {
        for (int64_t ky = ky0; ky < ky1; ky++) {
            const float *row = rows + ci * ci_stride + ky * pitch;
            const float *wt = wb + (ci * g->kh + ky) * KW * DIRECT2_CO;
#pragma GCC unroll 1
            for (int64_t kx = 0; kx < KW; kx++, wt += DIRECT2_CO) {
                __m256 in[DIRECT2_V];
#pragma GCC unroll 3
                for (int v = 0; v < V; v++) {
                    in[v] = _mm256_loadu_ps(row + kx + 8 * v);
                }
#pragma GCC unroll 4
                for (int c = 0; c < DIRECT2_CO; c++) {
                    const __m256 wc = _mm256_broadcast_ss(wt + c);
#pragma GCC unroll 3
                    for (int v = 0; v < V; v++) {
                        acc[c * DIRECT2_V + v] = _mm256_fmadd_ps(in[v], wc, acc[c * DIRECT2_V + v]);
                    }
                }
            }
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < DIRECT2_CO; c++) {
        if (c < channels) {
            float *dst = ob + c * P;
            if (width == 8 * V) {
#pragma GCC unroll 3
                for (int v = 0; v < V; v++) {
                    _mm256_storeu_ps(dst + 8 * v, acc[c * DIRECT2_V + v]);
                }
            } else {   /* the row's last, partial vector */
                float tail[8 * DIRECT2_V];
#pragma GCC unroll 3
                for (int v = 0; v < V; v++) {
                    _mm256_storeu_ps(tail + 8 * v, acc[c * DIRECT2_V + v]);
                }
                memcpy(dst, tail, (size_t)width * sizeof(float));
            }
        }
    }
}

/* The block for the columns [x0, x0 + width): 3, 2 or 1 vectors, with kw a constant for 3-wide
   windows. */
__attribute__((target("avx2,fma"))) static void direct2_segment(const conv_geom *g, const float *rows, int64_t pitch,
                                                                int64_t ci_stride, int64_t ky0, int64_t ky1,
                                                                const float *wb, const float *bb, float *ob,
                                                                int64_t P, int64_t width, int64_t channels) {
    const int vectors = (int)((width + 7) / 8);
#define DIRECT2_BLOCK(V, KW) direct2_block(g, rows, pitch, ci_stride, ky0, ky1, wb, bb, ob, P, width, channels, V, KW)
    if (g->kw == 3) {
        if (vectors == 3) {
            DIRECT2_BLOCK(3, 3);
        } else if (vectors == 2) {
            DIRECT2_BLOCK(2, 3);
        } else {
            DIRECT2_BLOCK(1, 3);
        }
    } else if (vectors == 3) {
        DIRECT2_BLOCK(3, g->kw);
    } else if (vectors == 2) {
        DIRECT2_BLOCK(2, g->kw);
    } else {
        DIRECT2_BLOCK(1, g->kw);
    }
#undef DIRECT2_BLOCK
}

/* Units are (image, band of j->band output rows). The band's input rows (band + kh - 1 of them
   per input channel, those inside the image) are copied once and serve every output row, channel
   block and segment of the band: per output row, copying kh rows a channel cost 16% of a 3 x 3
   convolution of 64-wide rows (a libc call per row and border), a band of 8 rows cuts the copies
   by 2.4x. Within a band the channel blocks are the outer loop: each block then writes its four
   output planes' rows of the band in order, four sequential streams of memory, where a loop over
   rows outside wrote a row of every output plane in turn (16 streams for 16 channels).
   (32, 3, 64, 64) x 16, 3 x 3: 5-7% less time per call (median of per-call ratios, both builds
   loaded in one process and called in turn). */
static void direct_rows_avx2(int64_t begin, int64_t end, void *ctx) {
    direct_job *j = ctx;
    const conv_geom *g = j->g;
    const int64_t taps = g->cin_g * g->kh * g->kw, P = g->oh * g->ow, pitch = j->pitch;
    const int64_t cols = 8 * DIRECT2_V, bands = (g->oh + j->band - 1) / j->band;
    const int64_t band_rows = j->band + g->kh - 1, ci_stride = band_rows * pitch;
    const int slot = tt_slot_take(&j->slots, j->workers);
    float *rows = j->rows + slot * g->cin_g * ci_stride;
    for (int64_t u = begin; u < end; u++) {
        const int64_t y0 = u % bands * j->band, b = u / bands;
        const int64_t y1 = g->oh - y0 < j->band ? g->oh : y0 + j->band;
        /* buffer row r of a channel holds input row y0 - ph + r; only those inside the image are
           copied, and only those are read (each output row's ky range below) */
        for (int64_t ci = 0; ci < g->cin_g && j->x != NULL; ci++) {   /* no x: an empty input */
            for (int64_t r = 0; r < (y1 - y0) + g->kh - 1; r++) {
                const int64_t iy = y0 - g->ph + r;
                if (iy >= 0 && iy < g->h) {
                    direct2_fill_row(g, j->x, b, ci, iy, pitch, rows + ci * ci_stride + r * pitch);
                }
            }
        }
        for (int64_t cb = 0; cb < j->blocks; cb++) {
            const float *wb = j->wpad + cb * taps * DIRECT2_CO, *bb = j->bpad + cb * DIRECT2_CO;
            const int64_t channels =
                g->c_out - cb * DIRECT2_CO < DIRECT2_CO ? g->c_out - cb * DIRECT2_CO : DIRECT2_CO;
            for (int64_t y = y0; y < y1; y++) {
                /* the window rows inside the image: ky in [ky0, ky1); none without an input */
                const int64_t ky0 = g->ph - y > 0 ? g->ph - y : 0;
                const int64_t ky1 = j->x == NULL ? ky0 : g->h + g->ph - y < g->kh ? g->h + g->ph - y : g->kh;
                const float *rows_y = rows + (y - y0) * pitch;
                float *ob = j->out + (b * g->c_out + cb * DIRECT2_CO) * P + y * g->ow;
                for (int64_t x0 = 0; x0 < g->ow; x0 += cols) {
                    const int64_t width = g->ow - x0 < cols ? g->ow - x0 : cols;
                    direct2_segment(g, rows_y + x0, pitch, ci_stride, ky0, ky1, wb, bb, ob + x0, P, width, channels);
                }
            }
        }
    }
    tt_slot_give(&j->slots, slot);
}

/* Tiny planes (an output plane of at most 16 positions, stride 1, dilation 1: the 4 x 4 and 2 x 2
   planes at the end of a small CNN). The direct kernel above wants a row of at least 8 outputs;
   im2col costs a copy per (tap, output row) there, for a GEMM with 16 columns. Instead the whole
   output plane of a channel is one vector: the input plane is laid out zero-padded with row pitch
   w + pw (the right padding of a row is the left padding of the next: pw zeros serve both), which
   takes (h + 2 ph) * (w + pw) + pw <= 32 floats, two registers. The values one tap of the window
   sees at the 16 output positions are then one two-register permute of that layout (indices
   y * pitch + x plus the tap's offset ky * pitch + kx), and each tap is one FMA per output
   channel, as in the direct kernel. */
static int plane_layout_fits(const conv_geom *g) {
    const int64_t pitch = g->w + g->pw;
    return g->oh * g->ow <= 16 && g->oh >= 1 && g->ow >= 1 && g->oh == g->h + 2 * g->ph - g->kh + 1
           && g->ow == g->w + 2 * g->pw - g->kw + 1 && (g->h + 2 * g->ph) * pitch + g->pw <= 32;
}

static int plane_applies(const conv_geom *g) {
    /* no limit on the taps: each costs one permute and one FMA per channel, where im2col would
       copy the tap's row for a GEMM of 16 columns */
    return g->groups == 1 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && plane_layout_fits(g)
           && strcmp(tt_gemm_kernel_name(), "avx512") == 0;
}

static conv_geom plane_geom(int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph,
                            int64_t pw) {
    return (conv_geom){.n = n, .c_in = c_in, .h = h, .w = w, .cin_g = c_in, .kh = kh, .kw = kw, .groups = 1,
                       .oh = h + 2 * ph - kh + 1, .ow = w + 2 * pw - kw + 1,
                       .sh = 1, .sw = 1, .ph = ph, .pw = pw, .dh = 1, .dw = 1};
}

int tt_conv2d_plane_kernel(int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph, int64_t pw) {
    const conv_geom g = plane_geom(0, c_in, h, w, kh, kw, ph, pw);
    return plane_applies(&g);
}

/* The permute indices of the output positions in the padded layout: y * pitch + x for p = y * ow
   + x < P; lanes past P read element 0 (and are never stored). */
__attribute__((target("avx512f"))) static __m512i plane_positions(const conv_geom *g) {
    const int64_t P = g->oh * g->ow, pitch = g->w + g->pw;
    int32_t positions[16] = {0};
    for (int64_t p = 0; p < P; p++) {
        positions[p] = (int32_t)(p / g->ow * pitch + p % g->ow);
    }
    return _mm512_loadu_si512(positions);
}

/* One input plane (image b, channel ci) into padded[0..32) in the zero-padded layout. */
static void fill_padded_plane(const conv_geom *g, const float *x, int64_t b, int64_t ci, float *padded) {
    const int64_t pitch = g->w + g->pw;
    memset(padded, 0, 32 * sizeof(float));
    const float *plane = x + b * g->xs[0] + ci * g->xs[1];
    for (int64_t r = 0; r < g->h; r++) {
        for (int64_t c = 0; c < g->w; c++) {
            padded[(r + g->ph) * pitch + c + g->pw] = plane[r * g->xs[2] + c * g->xs[3]];
        }
    }
}

/* The same plane as two registers. */
__attribute__((target("avx512f"))) static inline void load_padded_plane(const conv_geom *g, const float *x,
                                                                       int64_t b, int64_t ci, __m512 *lo,
                                                                       __m512 *hi) {
    float padded[32];
    fill_padded_plane(g, x, b, ci, padded);
    *lo = _mm512_loadu_ps(padded);
    *hi = _mm512_loadu_ps(padded + 16);
}

/* Units are (image, channel block). */
__attribute__((target("avx512f"))) static void direct_planes(int64_t begin, int64_t end, void *ctx) {
    const direct_job *j = ctx;
    const conv_geom *g = j->g;
    const int64_t taps = g->cin_g * g->kh * g->kw, P = g->oh * g->ow, pitch = g->w + g->pw;
    const __m512i index = plane_positions(g);
    const __mmask16 store_mask = (__mmask16)((1u << P) - 1u);
    for (int64_t u = begin; u < end; u++) {
        const int64_t cb = u % j->blocks, b = u / j->blocks;
        const float *wt = j->wpad + cb * taps * DIRECT_CO, *bb = j->bpad + cb * DIRECT_CO;
        const int64_t channels = g->c_out - cb * DIRECT_CO < DIRECT_CO ? g->c_out - cb * DIRECT_CO : DIRECT_CO;
        __m512 acc[DIRECT_CO];
#pragma GCC unroll 16
        for (int c = 0; c < DIRECT_CO; c++) {
            acc[c] = _mm512_set1_ps(bb[c]);
        }
        for (int64_t ci = 0; ci < g->cin_g && j->x != NULL; ci++) {   /* no x: an empty input */
            __m512 lo, hi;
            load_padded_plane(g, j->x, b, ci, &lo, &hi);
            for (int64_t ky = 0; ky < g->kh; ky++) {
                for (int64_t kx = 0; kx < g->kw; kx++, wt += DIRECT_CO) {
                    const __m512i at = _mm512_add_epi32(index, _mm512_set1_epi32((int)(ky * pitch + kx)));
                    const __m512 v = _mm512_permutex2var_ps(lo, at, hi);
#pragma GCC unroll 16
                    for (int c = 0; c < DIRECT_CO; c++) {
                        acc[c] = _mm512_fmadd_ps(v, _mm512_set1_ps(wt[c]), acc[c]);
                    }
                }
            }
        }
        float *ob = j->out + (b * g->c_out + cb * DIRECT_CO) * P;
#pragma GCC unroll 16
        for (int c = 0; c < DIRECT_CO; c++) {
            if (c < channels) {
                _mm512_mask_storeu_ps(ob + c * P, store_mask, acc[c]);
            }
        }
    }
}

/* The weight gradient of a tiny-plane convolution, direct: dW[o][ci][tap] = sum over images and
   output positions p of dy[b][o][p] * xpad[b][ci][p + offset(tap)]. A unit is (block of 16 output
   channels, input channel): it keeps the unit's 16 x taps sums in `taps` registers (lanes = output
   channels) and, for every image and position, adds the 16 channels' dy (one load from dy laid
   out as [image][position][channel]) times each tap's input value (a broadcast from the padded
   plane). No im2col matrix and no reduction across threads: every unit writes its own part of dW,
   in a fixed order, so the result does not depend on the thread count. */
typedef struct plane_wgrad_job {
    const conv_geom *g;
    const float *xpad;   /* [image][ci][32]: the padded planes */
    const float *gt;     /* [image][p][mpad]: dy with channels innermost, zero past c_out */
    float *gw;           /* (c_out, c_in, kh, kw), contiguous */
    int64_t mpad;        /* c_out rounded up to 16 */
} plane_wgrad_job;

typedef struct plane_prep_job {
    const conv_geom *g;
    const float *x, *gy;
    const int64_t *gs;
    float *xpad, *gt;
    int64_t mpad;
} plane_prep_job;

/* Images [begin, end): their padded planes and their dy transposed. */
static void plane_prepare(int64_t begin, int64_t end, void *ctx) {
    const plane_prep_job *j = ctx;
    const conv_geom *g = j->g;
    const int64_t P = g->oh * g->ow;
    for (int64_t b = begin; b < end; b++) {
        for (int64_t ci = 0; ci < g->cin_g; ci++) {
            fill_padded_plane(g, j->x, b, ci, j->xpad + (b * g->cin_g + ci) * 32);
        }
        float *gt = j->gt + b * P * j->mpad;
        memset(gt, 0, (size_t)(P * j->mpad) * sizeof(float));
        for (int64_t o = 0; o < g->c_out; o++) {
            const float *src = j->gy + b * j->gs[0] + o * j->gs[1];
            float *dst = gt + o;
            for (int64_t y = 0; y < g->oh; y++) {
                for (int64_t x = 0; x < g->ow; x++, dst += j->mpad) {
                    *dst = src[y * j->gs[2] + x * j->gs[3]];
                }
            }
        }
    }
}

#define PLANE_WGRAD_MAX_TAPS 16

/* sums[t][lane] += acc[t] (in double), then acc[t] = 0, for the first `taps` taps. */
__attribute__((target("avx512f"))) static void plane_wgrad_fold(double sums[][16], __m512 *acc, int64_t taps) {
    for (int64_t t = 0; t < taps; t++) {
        const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(acc[t]));
        const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[t]), 1)));
        _mm512_storeu_pd(sums[t], _mm512_add_pd(_mm512_loadu_pd(sums[t]), lo));
        _mm512_storeu_pd(sums[t] + 8, _mm512_add_pd(_mm512_loadu_pd(sums[t] + 8), hi));
        acc[t] = _mm512_setzero_ps();
    }
}

/* One unit (channel block cb, input channel ci) for a kh x kw window; inlined with kh = kw = 3 as
   constants too, so that the taps of a row are offsets from one pointer and no tap count is
   tested in the loop. */
__attribute__((target("avx512f"), always_inline)) static inline void plane_wgrad_unit(const plane_wgrad_job *j,
                                                                                   int64_t cb, int64_t ci,
                                                                                   const int64_t kh,
                                                                                   const int64_t kw) {
    const conv_geom *g = j->g;
    const int64_t P = g->oh * g->ow, pitch = g->w + g->pw, taps = kh * kw, K = g->cin_g * taps;
    __m512 acc[PLANE_WGRAD_MAX_TAPS];
#pragma GCC unroll 16
    for (int t = 0; t < PLANE_WGRAD_MAX_TAPS; t++) {
        acc[t] = _mm512_setzero_ps();
    }
    /* The float sums are added into double ones every `fold` images (about 256 products a lane),
       so the rounding error does not grow with the batch. */
    double sums[PLANE_WGRAD_MAX_TAPS][16] = {{0}};
    const int64_t fold = P >= 256 ? 1 : 256 / P;
    for (int64_t b = 0; b < g->n; b++) {
        if (b % fold == 0 && b > 0) {
            plane_wgrad_fold(sums, acc, taps);
        }
        const float *xp = j->xpad + (b * g->cin_g + ci) * 32;
        const float *gt = j->gt + b * P * j->mpad + cb * 16;
        for (int64_t y = 0; y < g->oh; y++) {
            for (int64_t x = 0; x < g->ow; x++, gt += j->mpad) {
                const __m512 dy = _mm512_loadu_ps(gt);
                const float *at = xp + y * pitch + x;
#pragma GCC unroll 16
                for (int t = 0; t < PLANE_WGRAD_MAX_TAPS; t++) {
                    if (t < taps) {
                        acc[t] = _mm512_fmadd_ps(dy, _mm512_set1_ps(at[t / kw * pitch + t % kw]), acc[t]);
                    }
                }
            }
        }
    }
    plane_wgrad_fold(sums, acc, taps);
    const int64_t channels = g->c_out - cb * 16 < 16 ? g->c_out - cb * 16 : 16;
    for (int64_t t = 0; t < taps; t++) {
        for (int64_t l = 0; l < channels; l++) {
            j->gw[(cb * 16 + l) * K + ci * taps + t] = (float)sums[t][l];
        }
    }
}

/* Units [begin, end) of (channel block, input channel). */
__attribute__((target("avx512f"))) static void plane_wgrad_units(int64_t begin, int64_t end, void *ctx) {
    const plane_wgrad_job *j = ctx;
    const conv_geom *g = j->g;
    for (int64_t u = begin; u < end; u++) {
        if (g->kh == 3 && g->kw == 3) {
            plane_wgrad_unit(j, u / g->cin_g, u % g->cin_g, 3, 3);
        } else {
            plane_wgrad_unit(j, u / g->cin_g, u % g->cin_g, g->kh, g->kw);
        }
    }
}

int tt_conv2d_plane_weight_grad_applies(int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph,
                                        int64_t pw) {
    return kh * kw <= PLANE_WGRAD_MAX_TAPS && tt_conv2d_plane_kernel(c_in, h, w, kh, kw, ph, pw);
}

tt_status tt_conv2d_plane_weight_grad(const float *x, const int64_t *x_shape, const int64_t *x_strides,
                                      const float *gy, int64_t c_out, const int64_t *gy_strides, int64_t kh,
                                      int64_t kw, int64_t ph, int64_t pw, float *gw) {
    conv_geom g = plane_geom(x_shape[0], x_shape[1], x_shape[2], x_shape[3], kh, kw, ph, pw);
    memcpy(g.xs, x_strides, sizeof g.xs);
    g.c_out = c_out;
    const int64_t P = g.oh * g.ow, mpad = (c_out + 15) / 16 * 16;
    float *xpad = malloc((size_t)(g.n * g.cin_g * 32 + g.n * P * mpad + 1) * sizeof(float));
    if (xpad == NULL) {
        return TT_ERR_NOMEM;
    }
    float *gt = xpad + g.n * g.cin_g * 32;
    const plane_prep_job prep = {&g, x, gy, gy_strides, xpad, gt, mpad};
    tt_parallel_for(g.n, 16, plane_prepare, (void *)&prep);
    const plane_wgrad_job job = {&g, xpad, gt, gw, mpad};
    const int64_t per_unit = g.n * P * kh * kw;
    tt_parallel_for(mpad / 16 * g.cin_g, ((int64_t)1 << 15) / (per_unit > 0 ? per_unit : 1) + 1, plane_wgrad_units,
                    (void *)&job);
    free(xpad);
    return TT_OK;
}

/* The direct kernels' three layouts: AVX-512 rows and tiny planes (16-channel blocks), AVX2 rows
   (4-channel blocks); DIRECT_NONE: im2col. */
enum { DIRECT_NONE = -1, DIRECT_ROWS = 0, DIRECT_PLANES = 1, DIRECT_ROWS_AVX2 = 2 };

/* The layout a float32 convolution takes, decided once: each test reads the GEMM kernel, which
   another thread may change meanwhile (tt_gemm_set_kernel), so a second look could pick a layout
   whose conditions were never checked. */
static int direct_layout(const conv_geom *g) {
    if (direct_applies(g)) {
        return DIRECT_ROWS;
    }
    if (plane_applies(g)) {
        return DIRECT_PLANES;
    }
    return direct2_applies(g) ? DIRECT_ROWS_AVX2 : DIRECT_NONE;
}

/* A direct kernel: the weights (and bias) repacked as [block][tap][co channels], zeros past c_out. */
static tt_status conv_direct_float32(const conv_geom *g, const float *x, const float *w, const float *bias,
                                     float *out, int layout) {
    const int64_t co_block = layout == DIRECT_ROWS_AVX2 ? DIRECT2_CO : DIRECT_CO;
    const int64_t taps = g->cin_g * g->kh * g->kw, blocks = (g->c_out + co_block - 1) / co_block;
    direct_job job = {.g = g, .x = x, .out = out, .blocks = blocks};
    int64_t row_floats = 0;
    if (layout == DIRECT_ROWS_AVX2) {
        job.pitch = direct2_pitch(g);
        job.workers = tt_get_num_threads() < 64 ? tt_get_num_threads() : 64;   /* the slot mask's width */
        job.band = direct2_band(g, job.workers);
        row_floats = g->cin_g * (job.band + g->kh - 1) * job.pitch;
        atomic_init(&job.slots, 0);
    }
    float *wpad = calloc((size_t)(blocks * (taps + 1) * co_block + job.workers * row_floats), sizeof(float));
    if (wpad == NULL) {
        return TT_ERR_NOMEM;
    }
    float *bpad = wpad + blocks * taps * co_block;
    for (int64_t co = 0; co < g->c_out; co++) {
        float *wc = wpad + (co / co_block) * taps * co_block + co % co_block;
        for (int64_t ci = 0; ci < g->cin_g; ci++) {
            for (int64_t ky = 0; ky < g->kh; ky++) {
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    const int64_t t = (ci * g->kh + ky) * g->kw + kx;
                    wc[t * co_block] = w[co * g->ws[0] + ci * g->ws[1] + ky * g->ws[2] + kx * g->ws[3]];
                }
            }
        }
        bpad[(co / co_block) * co_block + co % co_block] = bias != NULL ? bias[co * g->bs] : 0.0f;
    }
    job.wpad = wpad;
    job.bpad = bpad;
    job.rows = bpad + blocks * co_block;
    /* about 2^16 multiply-adds per chunk, so small convolutions stay on one thread */
    int64_t units, per_unit;
    tt_parallel_fn task;
    if (layout == DIRECT_ROWS_AVX2) {
        units = g->n * ((g->oh + job.band - 1) / job.band);   /* the rows are copied once a band */
        per_unit = job.band * g->ow * taps * blocks * co_block;
        task = direct_rows_avx2;
    } else {
        units = g->n * blocks * (layout == DIRECT_PLANES ? 1 : g->oh);
        per_unit = (layout == DIRECT_PLANES ? 16 : g->ow) * taps * DIRECT_CO;
        task = layout == DIRECT_PLANES ? direct_planes : direct_rows;
    }
    tt_parallel_for(units, ((int64_t)1 << 16) / (per_unit > 0 ? per_unit : 1) + 1, task, &job);
    free(wpad);
    return TT_OK;
}

/* Depthwise (groups == c_in, one input channel per group, `m` output channels each): every output
   row is its channel's bias plus kh * kw shifted input rows times one weight each. im2col would
   build a K = kh * kw matrix per channel for a GEMM with a single row; instead each output row is
   computed in up to DEPTHWISE_CHUNKS chunks of 16 columns at a time (independent sums, so the
   FMAs of different chunks overlap), with the same masked loads as the direct kernel. Units are
   (image, output channel, output row). */
#define DEPTHWISE_CHUNKS 4

static int depthwise_applies(const conv_geom *g) {
    return g->groups > 1 && g->groups == g->c_in && g->cin_g == 1 && g->sh == 1 && g->sw == 1 && g->dh == 1
           && g->dw == 1 && g->xs[3] == 1 && g->ow >= 8 && strcmp(tt_gemm_kernel_name(), "avx512") == 0;
}

typedef struct depthwise_job {
    const conv_geom *g;
    const float *x, *w, *bias;
    float *out;
} depthwise_job;

__attribute__((target("avx512f"))) static void depthwise_rows(int64_t begin, int64_t end, void *ctx) {
    const depthwise_job *j = ctx;
    const conv_geom *g = j->g;
    const int64_t P = g->oh * g->ow;
    for (int64_t u = begin; u < end; u++) {
        const int64_t y = u % g->oh, co = u / g->oh % g->c_out, b = u / g->oh / g->c_out;
        const int64_t ci = co / g->m;   /* the group's one input channel */
        const float *plane = j->x != NULL ? j->x + b * g->xs[0] + ci * g->xs[1] : NULL;
        const float *wc = j->w + co * g->ws[0];
        const float bias = j->bias != NULL ? j->bias[co * g->bs] : 0.0f;
        float *orow = j->out + (b * g->c_out + co) * P + y * g->ow;
        for (int64_t x0 = 0; x0 < g->ow; x0 += 16 * DEPTHWISE_CHUNKS) {
            int64_t widths[DEPTHWISE_CHUNKS];
            __m512 acc[DEPTHWISE_CHUNKS];
#pragma GCC unroll 4
            for (int q = 0; q < DEPTHWISE_CHUNKS; q++) {
                const int64_t left = g->ow - (x0 + 16 * q);
                widths[q] = left <= 0 ? 0 : left < 16 ? left : 16;
                acc[q] = _mm512_set1_ps(bias);
            }
            for (int64_t ky = 0; ky < g->kh && j->x != NULL; ky++) {   /* no x: an empty input */
                const int64_t iy = y - g->ph + ky;
                if (iy < 0 || iy >= g->h) {
                    continue;
                }
                const float *row = plane + iy * g->xs[2];
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    const __m512 wv = _mm512_set1_ps(wc[ky * g->ws[2] + kx * g->ws[3]]);
#pragma GCC unroll 4
                    for (int q = 0; q < DEPTHWISE_CHUNKS; q++) {
                        __m512 v;
                        if (widths[q] > 0 && load_window(row, x0 + 16 * q - g->pw + kx, widths[q], g->w, &v)) {
                            acc[q] = _mm512_fmadd_ps(v, wv, acc[q]);
                        }
                    }
                }
            }
#pragma GCC unroll 4
            for (int q = 0; q < DEPTHWISE_CHUNKS; q++) {
                if (widths[q] > 0) {
                    _mm512_mask_storeu_ps(orow + x0 + 16 * q, (__mmask16)((1u << widths[q]) - 1u), acc[q]);
                }
            }
        }
    }
}

static tt_status conv_depthwise_float32(const conv_geom *g, const float *x, const float *w, const float *bias,
                                        float *out) {
    depthwise_job job = {g, x, w, bias, out};
    const int64_t per_unit = g->ow * g->kh * g->kw;
    tt_parallel_for(g->n * g->c_out * g->oh, ((int64_t)1 << 15) / (per_unit > 0 ? per_unit : 1) + 1, depthwise_rows,
                    &job);
    return TT_OK;
}
#else
int tt_conv2d_plane_kernel(int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph, int64_t pw) {
    (void)c_in, (void)h, (void)w, (void)kh, (void)kw, (void)ph, (void)pw;
    return 0;   /* the kernel is AVX-512 only */
}

int tt_conv2d_plane_weight_grad_applies(int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph,
                                        int64_t pw) {
    return tt_conv2d_plane_kernel(c_in, h, w, kh, kw, ph, pw);
}

tt_status tt_conv2d_plane_weight_grad(const float *x, const int64_t *x_shape, const int64_t *x_strides,
                                      const float *gy, int64_t c_out, const int64_t *gy_strides, int64_t kh,
                                      int64_t kw, int64_t ph, int64_t pw, float *gw) {
    (void)x, (void)x_shape, (void)x_strides, (void)gy, (void)c_out, (void)gy_strides, (void)kh, (void)kw, (void)ph,
        (void)pw, (void)gw;
    return TT_ERR_UNSUPPORTED_DTYPE;
}
#endif

/* ------------------------------------------------------------------ entry point */

static int all_non_negative(const int64_t *values, int count) {
    for (int i = 0; i < count; i++) {
        if (values[i] < 0) {
            return 0;
        }
    }
    return 1;
}

tt_status tt_conv2d(int dtype,
                    const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                    const int64_t *w_shape, uintptr_t weight, const int64_t *w_strides,
                    uintptr_t bias, int64_t bias_stride,
                    const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                    int64_t groups, const int64_t *out_size, uintptr_t out) {
    if (x_shape == NULL || x_strides == NULL || w_shape == NULL || w_strides == NULL || stride == NULL
        || padding == NULL || dilation == NULL || out_size == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    if (!all_non_negative(x_shape, 4) || !all_non_negative(x_strides, 4) || !all_non_negative(w_shape, 4)
        || !all_non_negative(w_strides, 4) || !all_non_negative(padding, 2) || !all_non_negative(out_size, 2)
        || bias_stride < 0 || groups < 1 || stride[0] < 1 || stride[1] < 1 || dilation[0] < 1 || dilation[1] < 1
        || w_shape[2] < 1 || w_shape[3] < 1 || w_shape[0] % groups != 0) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t c_in;
    if (!mul_ok(w_shape[1], groups, &c_in) || c_in != x_shape[1]) {
        return TT_ERR_INVALID_ARG;
    }
    const conv_geom g = {
        .n = x_shape[0], .c_in = x_shape[1], .h = x_shape[2], .w = x_shape[3],
        .c_out = w_shape[0], .cin_g = w_shape[1], .kh = w_shape[2], .kw = w_shape[3],
        .groups = groups, .m = w_shape[0] / groups, .oh = out_size[0], .ow = out_size[1],
        .sh = stride[0], .sw = stride[1], .ph = padding[0], .pw = padding[1], .dh = dilation[0], .dw = dilation[1],
        .xs = {x_strides[0], x_strides[1], x_strides[2], x_strides[3]},
        .ws = {w_strides[0], w_strides[1], w_strides[2], w_strides[3]},
        .bs = bias_stride,
    };
    for (int d = 0; d < 2; d++) {   /* the farthest input coordinate a window reaches must fit in int64 */
        if (!reach_ok(out_size[d], stride[d], w_shape[2 + d], dilation[d], padding[d], x_shape[2 + d])) {
            return TT_ERR_OVERFLOW;
        }
    }
    int64_t out_elems;
    if (!mul_ok(g.n, g.c_out, &out_elems) || !mul_ok(out_elems, g.oh, &out_elems) || !mul_ok(out_elems, g.ow, &out_elems)) {
        return TT_ERR_OVERFLOW;
    }
    if (out_elems == 0) {
        return TT_OK;
    }
    /* An empty operand may have no address at all (NULL from the host allocator or from a DLPack
       producer): x is empty without channels or pixels, the weight without input channels. */
    if (out == 0 || (weight == 0 && g.cin_g > 0) || (x == 0 && g.c_in > 0 && g.h > 0 && g.w > 0)) {
        return TT_ERR_INVALID_ARG;
    }
#if TT_HAVE_X86
    const int layout = dtype == TT_FLOAT32 ? direct_layout(&g) : DIRECT_NONE;
    if (layout != DIRECT_NONE) {
        return conv_direct_float32(&g, (const float *)x, (const float *)weight, (const float *)bias, (float *)out,
                                   layout);
    }
    if (dtype == TT_FLOAT32 && depthwise_applies(&g)) {
        return conv_depthwise_float32(&g, (const float *)x, (const float *)weight, (const float *)bias,
                                      (float *)out);
    }
#endif
    switch (dtype) {
#define CALL_CONV(name, T, CT, LD, ST, CODE) \
    case CODE: \
        return conv_##name(&g, (const T *)x, (const T *)weight, (const T *)bias, (T *)out);
        CONV_DTYPES(CALL_CONV)
#undef CALL_CONV
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}
