/*
 * pool.c: max, average and adaptive pooling and nearest/bilinear resampling, as direct loops over
 * the (N, C) planes of a strided input into a contiguous output. The planes are split across
 * threads (tt_parallel_for, whole planes per chunk) when the call has enough work.
 *
 * Every formula follows PyTorch's CPU kernels, including their integer and floating-point
 * details (window clipping for averages, NaN handling and tie-breaking for maxima, the float
 * arithmetic of the nearest-neighbour source index), so that results agree element for element
 * up to rounding. Compute types: float for float16 and float32, double for float64.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "half.h"
#include "tt/tt.h"
#include "tt/kernels/pool.h"
#include "tt/kernels/parallel.h"

/* One step of a window maximum: v (at index idx) replaces the best so far when it is larger or
   NaN (NaN wins, as in PyTorch). Written with SSE2 compare masks on x86 (the baseline ISA): as
   C compares, GCC (under -ftrapping-math) keeps two branches per element, and on real data half
   of them mispredict (a 2x2 max pool of (16, 16, 10, 10) took 140 us, torch's 50). */
#if defined(__x86_64__)
#include <emmintrin.h>
static inline void max_step_float(float v, int64_t idx, float *best, int64_t *best_idx) {
    const __m128 vv = _mm_set_ss(v), bb = _mm_set_ss(*best);
    const __m128 take = _mm_or_ps(_mm_cmpgt_ss(vv, bb), _mm_cmpunord_ss(vv, vv));
    *best = _mm_cvtss_f32(_mm_or_ps(_mm_and_ps(take, vv), _mm_andnot_ps(take, bb)));
    const int64_t mask = -(int64_t)(_mm_movemask_ps(take) & 1);   /* all ones when taken */
    *best_idx = (idx & mask) | (*best_idx & ~mask);
}
static inline void max_step_double(double v, int64_t idx, double *best, int64_t *best_idx) {
    const __m128d vv = _mm_set_sd(v), bb = _mm_set_sd(*best);
    const __m128d take = _mm_or_pd(_mm_cmpgt_sd(vv, bb), _mm_cmpunord_sd(vv, vv));
    *best = _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(take, vv), _mm_andnot_pd(take, bb)));
    const int64_t mask = -(int64_t)(_mm_movemask_pd(take) & 1);
    *best_idx = (idx & mask) | (*best_idx & ~mask);
}
#else
#define DEFINE_MAX_STEP(CT)                                                                \
    static inline void max_step_##CT(CT v, int64_t idx, CT *best, int64_t *best_idx) {     \
        if (v > *best || isnan(v)) {                                                       \
            *best = v;                                                                     \
            *best_idx = idx;                                                               \
        }                                                                                  \
    }
DEFINE_MAX_STEP(float)
DEFINE_MAX_STEP(double)
#endif

#define LD_plain(p) (*(p))
#define LD_half(p) tt_half_to_float(*(p))
#define ST_plain(v) (v)
#define ST_half(v) tt_float_to_half(v)

/* (name, storage type, compute type, load, store, code) */
#define POOL_DTYPES(X)                                              \
    X(float16, uint16_t, float, LD_half, ST_half, TT_FLOAT16)       \
    X(float32, float, float, LD_plain, ST_plain, TT_FLOAT32)        \
    X(float64, double, double, LD_plain, ST_plain, TT_FLOAT64)

/* The input and output geometry shared by every operation. */
typedef struct plane_geom {
    int64_t n, c, h, w, oh, ow;
    int64_t xs[4];
} plane_geom;

/* The arguments of one call, shared by the parallel chunks (read-only); `planes` runs planes
   [p0, p1) of it. */
typedef struct pool_job pool_job;
struct pool_job {
    void (*planes)(const pool_job *j, int64_t p0, int64_t p1);
    plane_geom g;
    const void *x;
    void *out;
    int64_t *indices;
    const int64_t *k, *s, *p, *d;
    int include_pad, max, bilinear, align, shortcuts;
    int64_t divisor_override;
    const double *scales;
    const int64_t *cols;
    const void *col_weights;
};

static void pool_task(int64_t begin, int64_t end, void *ctx) {
    const pool_job *j = ctx;
    j->planes(j, begin, end);
}

/* Runs j over every (n, c) plane, split across threads (whole planes per chunk, each chunk writing
   only its planes' outputs) when there is enough work: `cost` is the work per output element. */
static void run_planes(const pool_job *j, int64_t cost) {
    const int64_t planes = j->g.n * j->g.c, per_plane = j->g.oh * j->g.ow * (cost > 0 ? cost : 1);
    const int64_t grain = per_plane >= (1 << 15) ? 1 : ((1 << 15) + per_plane - 1) / per_plane;
    tt_parallel_for(planes, grain, pool_task, (void *)j);
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Adaptive windows, PyTorch's start_index / end_index. */
static int64_t window_start(int64_t o, int64_t out, int64_t in) { return (o / out) * in + ((o % out) * in) / out; }
static int64_t window_end(int64_t o, int64_t out, int64_t in) { return 1 + ((o + 1) * in - 1) / out; }

/* PyTorch's nearest_idx: float arithmetic on purpose, to pick the same pixels. Its 2-D kernel
   takes two shortcuts (same size: the same index; twice the size: half the index) even when a
   scale factor says otherwise, its 1-D kernel never does: `shortcuts` picks which rule. */
static int64_t nearest_index(int64_t dst, int64_t in, int64_t out, double scale, int shortcuts) {
    if (shortcuts && out == in) {
        return dst;
    }
    if (shortcuts && out - in == in) {
        return dst >> 1;
    }
    const float ratio = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
    const float source = floorf((float)dst * ratio);
    return source < (float)in ? (int64_t)source : in - 1;   /* also catches inf and NaN */
}

/* One (n, c) plane of the input: the address of its element (0, 0). */
#define PLANE(g, base, plane) ((base) + ((plane) / (g)->c) * (g)->xs[0] + ((plane) % (g)->c) * (g)->xs[1])

#define DEFINE_POOL(name, T, CT, LD, ST, CODE)                                                     \
    /* The common 2x2 window, stride 2, no padding or dilation, every window inside the input    \
       (ceil_mode may add partial ones): the four values as a tree, (a, b) and (c, d) side by      \
       side, then the two winners. It picks what the scan a, b, c, d of max_step picks (the first  \
       maximum; the last NaN): the right pair wins only when its winner is larger or NaN. Two     \
       steps deep instead of four and no loop per window, so the windows of a row overlap in the  \
       CPU: (64, 32, 4, 4) took 87 us, now 29 (torch 34). */                                      \
    static void max_pool_2x2_##name(const pool_job *j, int64_t p0, int64_t p1) {                   \
        const plane_geom *g = &j->g;                                                               \
        const int64_t ys = g->xs[2], xs = g->xs[3];                                                \
        T *out = j->out;                                                                           \
        int64_t *indices = j->indices;                                                             \
        for (int64_t plane = p0; plane < p1; plane++) {                                            \
            const T *xp = PLANE(g, (const T *)j->x, plane);                                        \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                const T *r0 = xp + 2 * oy * ys, *r1 = r0 + ys;                                     \
                const int64_t i0 = 2 * oy * g->w, o0 = (plane * g->oh + oy) * g->ow;               \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    const int64_t at = 2 * ox * xs;                                                \
                    CT top = (CT)LD(r0 + at), bottom = (CT)LD(r1 + at);                            \
                    int64_t top_index = i0 + 2 * ox, bottom_index = top_index + g->w;              \
                    max_step_##CT((CT)LD(r0 + at + xs), top_index + 1, &top, &top_index);          \
                    max_step_##CT((CT)LD(r1 + at + xs), bottom_index + 1, &bottom, &bottom_index); \
                    max_step_##CT(bottom, bottom_index, &top, &top_index);                         \
                    out[o0 + ox] = ST(top);                                                        \
                    if (indices) {                                                                 \
                        indices[o0 + ox] = top_index;                                              \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void max_pool_##name(const pool_job *j, int64_t p0, int64_t p1) {                       \
        const plane_geom *g = &j->g;                                                               \
        const T *x = j->x;                                                                         \
        T *out = j->out;                                                                           \
        int64_t *indices = j->indices;                                                             \
        const int64_t *k = j->k, *s = j->s, *p = j->p, *d = j->d;                                  \
        if (k[0] == 2 && k[1] == 2 && s[0] == 2 && s[1] == 2 && p[0] == 0 && p[1] == 0               \
            && d[0] == 1 && d[1] == 1 && 2 * g->oh <= g->h && 2 * g->ow <= g->w) { /* not ceil_mode's \
                                                                                     partial windows */ \
            max_pool_2x2_##name(j, p0, p1);                                                        \
            return;                                                                                \
        }                                                                                          \
        for (int64_t plane = p0; plane < p1; plane++) {                                            \
            const T *xp = PLANE(g, x, plane);                                                      \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                int64_t y0 = oy * s[0] - p[0];                                                     \
                const int64_t y1 = min64(y0 + (k[0] - 1) * d[0] + 1, g->h);                        \
                while (y0 < 0) {                                                                   \
                    y0 += d[0];                                                                    \
                }                                                                                  \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    int64_t x0 = ox * s[1] - p[1];                                                 \
                    const int64_t x1 = min64(x0 + (k[1] - 1) * d[1] + 1, g->w);                    \
                    while (x0 < 0) {                                                               \
                        x0 += d[1];                                                                \
                    }                                                                              \
                    int64_t best_index = y0 * g->w + x0;                                           \
                    CT best = -(CT)INFINITY;                                                       \
                    for (int64_t iy = y0; iy < y1; iy += d[0]) {                                   \
                        for (int64_t ix = x0; ix < x1; ix += d[1]) {                               \
                            max_step_##CT((CT)LD(xp + iy * g->xs[2] + ix * g->xs[3]), iy * g->w + ix, \
                                          &best, &best_index);                                     \
                        }                                                                          \
                    }                                                                              \
                    const int64_t o = (plane * g->oh + oy) * g->ow + ox;                           \
                    out[o] = ST(best);                                                             \
                    if (indices) {                                                                 \
                        indices[o] = best_index;                                                   \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void avg_pool_##name(const pool_job *j, int64_t p0, int64_t p1) {                       \
        const plane_geom *g = &j->g;                                                               \
        const T *x = j->x;                                                                         \
        T *out = j->out;                                                                           \
        const int64_t *k = j->k, *s = j->s, *p = j->p, divisor_override = j->divisor_override;     \
        const int include_pad = j->include_pad;                                                    \
        for (int64_t plane = p0; plane < p1; plane++) {                                            \
            const T *xp = PLANE(g, x, plane);                                                      \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                int64_t y0 = oy * s[0] - p[0];                                                     \
                int64_t y1 = min64(y0 + k[0], g->h + p[0]);                                        \
                const int64_t padded_h = y1 - y0;                                                  \
                y0 = max64(y0, 0);                                                                 \
                y1 = min64(y1, g->h);                                                              \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    int64_t x0 = ox * s[1] - p[1];                                                 \
                    int64_t x1 = min64(x0 + k[1], g->w + p[1]);                                    \
                    const int64_t padded_w = x1 - x0;                                              \
                    x0 = max64(x0, 0);                                                             \
                    x1 = min64(x1, g->w);                                                          \
                    const int64_t o = (plane * g->oh + oy) * g->ow + ox;                           \
                    if (y0 >= y1 || x0 >= x1) {                                                    \
                        out[o] = ST((CT)0);                                                        \
                        continue;                                                                  \
                    }                                                                              \
                    CT sum = 0;                                                                    \
                    for (int64_t iy = y0; iy < y1; iy++) {                                         \
                        for (int64_t ix = x0; ix < x1; ix++) {                                     \
                            sum += (CT)LD(xp + iy * g->xs[2] + ix * g->xs[3]);                     \
                        }                                                                          \
                    }                                                                              \
                    const int64_t divisor = divisor_override > 0 ? divisor_override                \
                                            : include_pad      ? padded_h * padded_w               \
                                                               : (y1 - y0) * (x1 - x0);            \
                    out[o] = ST(sum / (CT)divisor);                                                \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void adaptive_pool_##name(const pool_job *j, int64_t p0, int64_t p1) {                  \
        const plane_geom *g = &j->g;                                                               \
        const T *x = j->x;                                                                         \
        T *out = j->out;                                                                           \
        int64_t *indices = j->indices;                                                             \
        const int max = j->max;                                                                    \
        for (int64_t plane = p0; plane < p1; plane++) {                                            \
            const T *xp = PLANE(g, x, plane);                                                      \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                const int64_t y0 = window_start(oy, g->oh, g->h), y1 = window_end(oy, g->oh, g->h); \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    const int64_t x0 = window_start(ox, g->ow, g->w), x1 = window_end(ox, g->ow, g->w); \
                    const int64_t o = (plane * g->oh + oy) * g->ow + ox;                           \
                    CT acc = max ? -(CT)INFINITY : (CT)0;                                          \
                    int64_t best_index = y0 * g->w + x0;                                           \
                    for (int64_t iy = y0; iy < y1; iy++) {                                         \
                        for (int64_t ix = x0; ix < x1; ix++) {                                     \
                            const CT v = (CT)LD(xp + iy * g->xs[2] + ix * g->xs[3]);               \
                            if (!max) {                                                            \
                                acc += v;                                                          \
                            } else if (v > acc || isnan(v)) {                                      \
                                acc = v;                                                           \
                                best_index = iy * g->w + ix;                                       \
                            }                                                                      \
                        }                                                                          \
                    }                                                                              \
                    out[o] = ST(max ? acc : acc / (CT)(y1 - y0) / (CT)(x1 - x0));                  \
                    if (indices) {                                                                 \
                        indices[o] = best_index;                                                   \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Source indices and weights of one output coordinate along one dimension (PyTorch's         \
       compute_source_index_and_lambda). */                                                       \
    static void linear_source_##name(int64_t dst, int64_t in, int64_t out, double scale, int align, \
                                     int64_t *i0, int64_t *i1, CT *l0, CT *l1) {                   \
        if (out == in) {                                                                           \
            *i0 = *i1 = dst;                                                                       \
            *l0 = 1;                                                                               \
            *l1 = 0;                                                                               \
            return;                                                                                \
        }                                                                                          \
        CT ratio;                                                                                  \
        if (align) {                                                                               \
            ratio = out > 1 ? (CT)(in - 1) / (CT)(out - 1) : (CT)0;                                \
        } else {                                                                                   \
            ratio = scale > 0 ? (CT)(1.0 / scale) : (CT)in / (CT)out;                              \
        }                                                                                          \
        CT real;                                                                                   \
        if (align) {                                                                               \
            real = ratio * (CT)dst;                                                                \
        } else {                                                                                   \
            real = ratio * ((CT)dst + (CT)0.5) - (CT)0.5;                                          \
            real = real < 0 ? (CT)0 : real;                                                        \
        }                                                                                          \
        if (!(real < (CT)in)) { /* past the last pixel, or not finite: the last pixel */          \
            real = (CT)(in - 1);                                                                   \
        }                                                                                          \
        *i0 = min64((int64_t)floor(real), in - 1);                                                 \
        CT lambda = real - (CT)*i0;                                                                \
        lambda = lambda < 0 ? (CT)0 : lambda > 1 ? (CT)1 : lambda;                                 \
        *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);                                                        \
        *l1 = lambda;                                                                              \
        *l0 = (CT)1 - lambda;                                                                      \
    }                                                                                              \
                                                                                                   \
    static void interpolate_planes_##name(const pool_job *j, int64_t p0, int64_t p1) {            \
        const plane_geom *g = &j->g;                                                               \
        const T *x = j->x;                                                                         \
        T *out = j->out;                                                                           \
        const int64_t *cols = j->cols;                                                             \
        const CT *col_weights = j->col_weights;                                                    \
        const int bilinear = j->bilinear, align = j->align;                                        \
        const double *scales = j->scales;                                                          \
        for (int64_t plane = p0; plane < p1; plane++) {                                    \
            const T *xp = PLANE(g, x, plane);                                                      \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                               \
                T *o = out + (plane * g->oh + oy) * g->ow;                                         \
                if (!bilinear) {                                                                   \
                    const T *row = xp + nearest_index(oy, g->h, g->oh, scales[0], j->shortcuts) * g->xs[2]; \
                    for (int64_t ox = 0; ox < g->ow; ox++) {                                       \
                        o[ox] = row[cols[2 * ox] * g->xs[3]];                                      \
                    }                                                                              \
                    continue;                                                                      \
                }                                                                                  \
                int64_t y0, y1;                                                                    \
                CT ly0, ly1;                                                                       \
                linear_source_##name(oy, g->h, g->oh, scales[0], align, &y0, &y1, &ly0, &ly1);     \
                const T *r0 = xp + y0 * g->xs[2], *r1 = xp + y1 * g->xs[2];                        \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                    const int64_t c0 = cols[2 * ox] * g->xs[3], c1 = cols[2 * ox + 1] * g->xs[3];  \
                    const CT lx0 = col_weights[2 * ox], lx1 = col_weights[2 * ox + 1];             \
                    const CT top = (CT)LD(r0 + c0) * lx0 + (CT)LD(r0 + c1) * lx1;                  \
                    const CT bottom = (CT)LD(r1 + c0) * lx0 + (CT)LD(r1 + c1) * lx1;               \
                    o[ox] = ST(top * ly0 + bottom * ly1);                                          \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static tt_status interpolate_##name(const plane_geom *g, int mode, const double *scales,      \
                                        int align, const T *x, T *out) {                           \
        /* Per output column: source columns and weights; per output row the same, computed      \
           once for the whole call. */                                                             \
        const int bilinear = mode == 1, shortcuts = mode == 0;                                     \
        int64_t *cols = malloc((size_t)(2 * g->ow + 1) * sizeof(int64_t));                         \
        CT *col_weights = malloc((size_t)(2 * g->ow + 1) * sizeof(CT));                            \
        if (cols == NULL || col_weights == NULL) {                                                 \
            free(cols);                                                                            \
            free(col_weights);                                                                     \
            return TT_ERR_NOMEM;                                                                   \
        }                                                                                          \
        for (int64_t ox = 0; ox < g->ow; ox++) {                                                   \
            if (bilinear) {                                                                        \
                linear_source_##name(ox, g->w, g->ow, scales[1], align, &cols[2 * ox], &cols[2 * ox + 1], \
                                     &col_weights[2 * ox], &col_weights[2 * ox + 1]);              \
            } else {                                                                               \
                cols[2 * ox] = nearest_index(ox, g->w, g->ow, scales[1], shortcuts);               \
            }                                                                                      \
        }                                                                                          \
        pool_job job = {.planes = interpolate_planes_##name, .g = *g, .x = x, .out = out,         \
                        .bilinear = bilinear, .align = align, .shortcuts = shortcuts, .scales = scales, \
                        .cols = cols,                                                              \
                        .col_weights = col_weights};                                               \
        run_planes(&job, bilinear ? 4 : 1);                                                        \
        free(cols);                                                                                \
        free(col_weights);                                                                         \
        return TT_OK;                                                                              \
    }
POOL_DTYPES(DEFINE_POOL)

/* ------------------------------------------------------------------ entry points */

static int non_negative(const int64_t *values, int count) {
    for (int i = 0; i < count; i++) {
        if (values[i] < 0) {
            return 0;
        }
    }
    return 1;
}

/* Fills `g` from the common arguments and checks them. TT_OK with g->n * g->c * oh * ow == 0
   means there is nothing to do. */
static tt_status plane_setup(plane_geom *g, int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                             const int64_t *out_size, uintptr_t out) {
    if (x_shape == NULL || x_strides == NULL || out_size == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype != TT_FLOAT16 && dtype != TT_FLOAT32 && dtype != TT_FLOAT64) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (!non_negative(x_shape, 4) || !non_negative(x_strides, 4) || !non_negative(out_size, 2)) {
        return TT_ERR_INVALID_ARG;
    }
    *g = (plane_geom){
        .n = x_shape[0], .c = x_shape[1], .h = x_shape[2], .w = x_shape[3], .oh = out_size[0], .ow = out_size[1],
        .xs = {x_strides[0], x_strides[1], x_strides[2], x_strides[3]},
    };
    int64_t total;
    if (__builtin_mul_overflow(g->n, g->c, &total) || __builtin_mul_overflow(total, g->oh, &total)
        || __builtin_mul_overflow(total, g->ow, &total)) {
        return TT_ERR_OVERFLOW;
    }
    if (total > 0 && (out == 0 || x == 0)) {
        return TT_ERR_INVALID_ARG;
    }
    return TT_OK;
}

/* True when (out - 1) * stride + (k - 1) * dilation + 2 * padding + size + 1, the largest magnitude
   the window arithmetic meets, fits in int64 (all arguments non-negative). */
static int reach_ok(int64_t out, int64_t stride, int64_t k, int64_t dilation, int64_t padding, int64_t size) {
    int64_t a, b, total;
    return !__builtin_mul_overflow(out > 0 ? out - 1 : 0, stride, &a) && !__builtin_mul_overflow(k, dilation, &b)
           && !__builtin_add_overflow(a, b, &total) && !__builtin_add_overflow(total, padding, &total)
           && !__builtin_add_overflow(total, padding, &total) && !__builtin_add_overflow(total, size, &total)
           && total < INT64_MAX;
}

static int nothing_to_do(const plane_geom *g) { return g->n == 0 || g->c == 0 || g->oh == 0 || g->ow == 0; }

tt_status tt_max_pool2d(int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                        const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                        const int64_t *dilation, const int64_t *out_size, uintptr_t out, uintptr_t indices) {
    plane_geom g;
    tt_status status = plane_setup(&g, dtype, x_shape, x, x_strides, out_size, out);
    if (status != TT_OK || nothing_to_do(&g)) {
        return status;
    }
    if (kernel == NULL || stride == NULL || padding == NULL || dilation == NULL || g.h < 1 || g.w < 1) {
        return TT_ERR_INVALID_ARG;
    }
    for (int d = 0; d < 2; d++) {
        if (kernel[d] < 1 || stride[d] < 1 || dilation[d] < 1 || padding[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (!reach_ok(out_size[d], stride[d], kernel[d], dilation[d], padding[d], x_shape[2 + d])) {
            return TT_ERR_OVERFLOW;
        }
    }
    switch (dtype) {
#define CALL(name, T, CT, LD, ST, CODE) \
    case CODE: \
        { \
            pool_job job = {.planes = max_pool_##name, .g = g, .x = (const T *)x, .out = (T *)out, \
                            .indices = (int64_t *)indices, .k = kernel, .s = stride, .p = padding, .d = dilation}; \
            run_planes(&job, kernel[0] * kernel[1]); \
        } \
        return TT_OK;
        POOL_DTYPES(CALL)
#undef CALL
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}

tt_status tt_avg_pool2d(int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                        const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                        int count_include_pad, int64_t divisor_override,
                        const int64_t *out_size, uintptr_t out) {
    plane_geom g;
    tt_status status = plane_setup(&g, dtype, x_shape, x, x_strides, out_size, out);
    if (status != TT_OK || nothing_to_do(&g)) {
        return status;
    }
    if (kernel == NULL || stride == NULL || padding == NULL || divisor_override < 0) {
        return TT_ERR_INVALID_ARG;
    }
    for (int d = 0; d < 2; d++) {
        if (kernel[d] < 1 || stride[d] < 1 || padding[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (!reach_ok(out_size[d], stride[d], kernel[d], 1, padding[d], x_shape[2 + d])) {
            return TT_ERR_OVERFLOW;
        }
    }
    switch (dtype) {
#define CALL(name, T, CT, LD, ST, CODE) \
    case CODE: \
        { \
            pool_job job = {.planes = avg_pool_##name, .g = g, .x = (const T *)x, .out = (T *)out, .k = kernel, \
                            .s = stride, .p = padding, .include_pad = count_include_pad, \
                            .divisor_override = divisor_override}; \
            run_planes(&job, kernel[0] * kernel[1]); \
        } \
        return TT_OK;
        POOL_DTYPES(CALL)
#undef CALL
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}

tt_status tt_adaptive_pool2d(int max, int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                             const int64_t *out_size, uintptr_t out, uintptr_t indices) {
    plane_geom g;
    tt_status status = plane_setup(&g, dtype, x_shape, x, x_strides, out_size, out);
    if (status != TT_OK || nothing_to_do(&g)) {
        return status;
    }
    if (g.h < 1 || g.w < 1) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t product;   /* window bounds compute (o + 1) * in */
    if (__builtin_mul_overflow(g.oh + 1, g.h, &product) || __builtin_mul_overflow(g.ow + 1, g.w, &product)) {
        return TT_ERR_OVERFLOW;
    }
    switch (dtype) {
#define CALL(name, T, CT, LD, ST, CODE) \
    case CODE: \
        { \
            pool_job job = {.planes = adaptive_pool_##name, .g = g, .x = (const T *)x, .out = (T *)out, \
                            .indices = (int64_t *)indices, .max = max != 0}; \
            run_planes(&job, (g.h + g.oh - 1) / g.oh * ((g.w + g.ow - 1) / g.ow) + 1); \
        } \
        return TT_OK;
        POOL_DTYPES(CALL)
#undef CALL
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}

tt_status tt_interpolate2d(int mode, int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                           const int64_t *out_size, const double *scales, int align_corners, uintptr_t out) {
    plane_geom g;
    tt_status status = plane_setup(&g, dtype, x_shape, x, x_strides, out_size, out);
    if (status != TT_OK || nothing_to_do(&g)) {
        return status;
    }
    if (scales == NULL || g.h < 1 || g.w < 1 || mode < 0 || mode > 2) {
        return TT_ERR_INVALID_ARG;
    }
    switch (dtype) {
#define CALL(name, T, CT, LD, ST, CODE) \
    case CODE: \
        return interpolate_##name(&g, mode, scales, align_corners != 0, (const T *)x, (T *)out);
        POOL_DTYPES(CALL)
#undef CALL
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}
