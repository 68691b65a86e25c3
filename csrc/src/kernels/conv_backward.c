/*
 * conv_backward.c: gradients of the 2-D convolution and of average pooling (conv1d / 1-D pooling
 * are the case h = 1). Kept apart from conv.c and pool.c, whose forward code it does not touch.
 *
 * Convolution, per image and group, with K = c_in/groups * kh * kw, M = c_out/groups, P = oh * ow,
 * G = the image's grad_out of the group (M x P), W = the group's weights (M x K):
 *   dx:  col = W^T @ G (K x P), then col2im adds col[(ci, ky, kx), p] to the input position
 *        output position p read through (ci, ky, kx); positions in the padding are dropped.
 *   dw:  dW += G @ im2col(x)^T (M x K), summed over the images.
 * Groups with a small M x K (depthwise convolutions: M = 1, K = kh * kw) skip the products, whose
 * fixed cost would dominate: direct loops apply each kernel tap to whole output rows instead.
 * Output positions are taken in blocks so that `col` stays around 1 MiB; on small planes (one block
 * an image) a product takes a batch of images instead, their positions side by side (batch_size),
 * and at stride and dilation 1 im2col and col2im go through a zero-padded copy of each input plane
 * (padded_pitch). The products are
 * tt_gemm (matmul.c) in the compute type: float for float16 and float32, double for float64;
 * grad_out and the weights are first packed into contiguous compute-type matrices.
 *
 * Threads: the images are split into one contiguous range per worker (tt_parallel_for over the
 * workers). For dx each worker writes only its images' part of grad_input; for dw each worker sums
 * into its own (c_out x K) accumulator, and the accumulators are added in worker order at the end
 * (deterministic for a given thread count). With one image, or little work, a single worker runs
 * and tt_gemm itself uses the threads.
 *
 * Average pooling: every output gradient divided by its window's divisor is added onto the
 * window's input elements, plane by plane (planes split across threads), accumulated in the
 * compute type (for float16 in a float buffer stored at the end).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "half.h"
#include "tt/tt.h"
#include "tt/kernels/conv.h"
#include "tt/kernels/conv_backward.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/parallel.h"

#define LD_plain(p) (*(p))
#define LD_half(p) tt_half_to_float(*(p))
#define ST_plain(v) (v)
#define ST_half(v) tt_float_to_half(v)

/* (name, storage type, compute type, load, store, code, gemm dtype) */
#define CONVB_DTYPES(X)                                                         \
    X(float16, uint16_t, float, LD_half, ST_half, TT_FLOAT16, TT_FLOAT32)       \
    X(float32, float, float, LD_plain, ST_plain, TT_FLOAT32, TT_FLOAT32)        \
    X(float64, double, double, LD_plain, ST_plain, TT_FLOAT64, TT_FLOAT64)

/* Elements of `col` per block, a budget: the block narrows for large K. */
#define COL_BUDGET ((int64_t)1 << 18)
/* Below this many multiply-adds, one worker (whose GEMMs may still use the threads). */
#define PARALLEL_MIN ((double)(1 << 18))

typedef struct bgeom {
    int64_t n, c_in, h, w;              /* input */
    int64_t c_out, cin_g, kh, kw;       /* weight */
    int64_t groups, m, k;               /* m = c_out / groups, k = cin_g * kh * kw */
    int64_t oh, ow, p;                  /* output plane, p = oh * ow */
    int64_t sh, sw, ph, pw, dh, dw;     /* stride, padding before, dilation */
    int64_t pb, blocks;                 /* block of output positions, number of blocks */
    int64_t xs[4], ws[4], gs[4];        /* strides in elements: x (or unused), weight, grad_out */
} bgeom;

static int mul_ok(int64_t a, int64_t b, int64_t *result) { return !__builtin_mul_overflow(a, b, result); }

static int non_negative(const int64_t *values, int count) {
    for (int i = 0; i < count; i++) {
        if (values[i] < 0) {
            return 0;
        }
    }
    return 1;
}

/* True when (out - 1) * stride + (k - 1) * dilation + padding + size + 1 fits in int64. */
static int reach_ok(int64_t out, int64_t stride, int64_t k, int64_t dilation, int64_t padding, int64_t size) {
    int64_t a, b, total;
    return mul_ok(out > 0 ? out - 1 : 0, stride, &a) && mul_ok(k - 1, dilation, &b)
           && !__builtin_add_overflow(a, b, &total) && !__builtin_add_overflow(total, padding, &total)
           && !__builtin_add_overflow(total, size, &total) && total < INT64_MAX;
}

/* Fills and checks the geometry shared by both convolution gradients; *elems gets the number of
   elements of each worker's scratch besides `extra`. */
static tt_status make_geom(bgeom *g, const int64_t *x_shape, const int64_t *gy_shape, const int64_t *gy_strides,
                           const int64_t *w_shape, const int64_t *stride, const int64_t *padding,
                           const int64_t *dilation, int64_t groups) {
    if (x_shape == NULL || gy_shape == NULL || gy_strides == NULL || w_shape == NULL || stride == NULL
        || padding == NULL || dilation == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    if (!non_negative(x_shape, 4) || !non_negative(gy_shape, 4) || !non_negative(gy_strides, 4)
        || !non_negative(w_shape, 4) || !non_negative(padding, 2) || groups < 1 || stride[0] < 1 || stride[1] < 1
        || dilation[0] < 1 || dilation[1] < 1 || w_shape[2] < 1 || w_shape[3] < 1 || w_shape[0] % groups != 0
        || gy_shape[0] != x_shape[0] || gy_shape[1] != w_shape[0]) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t c_in;
    if (!mul_ok(w_shape[1], groups, &c_in) || c_in != x_shape[1]) {
        return TT_ERR_INVALID_ARG;
    }
    *g = (bgeom){
        .n = x_shape[0], .c_in = x_shape[1], .h = x_shape[2], .w = x_shape[3],
        .c_out = w_shape[0], .cin_g = w_shape[1], .kh = w_shape[2], .kw = w_shape[3],
        .groups = groups, .m = w_shape[0] / groups, .oh = gy_shape[2], .ow = gy_shape[3],
        .sh = stride[0], .sw = stride[1], .ph = padding[0], .pw = padding[1], .dh = dilation[0], .dw = dilation[1],
        .gs = {gy_strides[0], gy_strides[1], gy_strides[2], gy_strides[3]},
    };
    for (int d = 0; d < 2; d++) {
        if (!reach_ok(gy_shape[2 + d], stride[d], w_shape[2 + d], dilation[d], padding[d], x_shape[2 + d])) {
            return TT_ERR_OVERFLOW;
        }
    }
    int64_t t;
    if (!mul_ok(g->cin_g, g->kh, &t) || !mul_ok(t, g->kw, &g->k) || !mul_ok(g->oh, g->ow, &g->p)
        || !mul_ok(g->c_out, g->p, &t) || !mul_ok(g->c_out, g->k, &t) || !mul_ok(g->c_in, g->h, &t)
        || !mul_ok(t, g->w, &t) || !mul_ok(t, g->n, &t)) {
        return TT_ERR_OVERFLOW;
    }
    g->pb = g->p;
    if (g->k > 0 && g->k * g->pb > COL_BUDGET) {
        g->pb = COL_BUDGET / g->k < 64 ? 64 : COL_BUDGET / g->k;
        g->pb = g->pb < g->p ? g->pb : g->p;
    }
    g->blocks = g->pb > 0 ? (g->p + g->pb - 1) / g->pb : 0;
    return TT_OK;
}

/* How many workers: one per thread when there are enough images and work, else one. */
static int64_t worker_count(const bgeom *g) {
    int64_t workers = tt_get_num_threads();
    const double work = (double)g->n * (double)g->c_out * (double)g->k * (double)g->p;
    if (workers > g->n || work < PARALLEL_MIN) {
        workers = 1;
    }
    return workers;
}

/* Per-worker scratch sizes in elements, all checked against SIZE_MAX. */
static int scratch_ok(int64_t a, int64_t b, int64_t c, int64_t workers, size_t elem, int64_t *per_worker) {
    int64_t total;
    if (__builtin_add_overflow(a, b, &total) || __builtin_add_overflow(total, c, &total)) {
        return 0;
    }
    total = (total + 15) / 16 * 16;
    *per_worker = total;
    return mul_ok(total, workers, &total) && total < (int64_t)(SIZE_MAX / 2 / elem);
}

/* Groups whose (c_out/groups) x K weight block is smaller than this (depthwise convolutions, tiny
   kernels) skip the GEMM: direct loops, per kernel tap, are faster than a product that small. */
#define DIRECT_MAX 64

/* The row pitch of the zero-padded plane im2col and col2im go through when they may (stride and
   dilation 1, one block of positions an image, the GEMM path, a small plane), else 0. Its rows are
   the input rows -ph .. oh + kh - 2 - ph, its columns -pw .. ow + kw - 2 - pw. */
static int64_t padded_pitch(const bgeom *g) {
    const int64_t pitch = g->ow + g->kw - 1, rows = g->oh + g->kh - 1;
    const int ok = g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->blocks == 1 && g->p > 0
                   && g->m * g->k >= DIRECT_MAX && padded_plane_fits(rows, pitch);
    return ok ? pitch : 0;
}

/* Images per product in the gradients' GEMM path: with one block of positions per image (a
   small plane) and products (not the direct loops), as many images as keep `col` and the packed
   grad_out each within COL_BUDGET, at most a worker's share; else 1. `allowed`: the caller can
   take several (dx needs T to be the compute type, to accumulate the batch's images in
   grad_input itself). The
   digits CNN's (64, 16, 4, 4) x 32 3 x 3 layer ran 128 products of K x 16 x 32 per call before. */
static int64_t batch_size(const bgeom *g, int64_t workers, int allowed) {
    int64_t per_image, gy_per_image;
    if (!allowed || g->blocks != 1 || g->m * g->k < DIRECT_MAX || g->p == 0 || g->k == 0
        || !mul_ok(g->k, g->p, &per_image) || !mul_ok(g->c_out, g->p, &gy_per_image)) {
        return 1;
    }
    /* col and the batch's packed grad_out (c_out x batch * P) both within COL_BUDGET */
    int64_t batch = COL_BUDGET / (per_image > gy_per_image ? per_image : gy_per_image);
    const int64_t share = (g->n + workers - 1) / workers;
    batch = batch < share ? batch : share;
    return batch < 1 ? 1 : batch;
}

/* The output columns ox in [*lo, *hi) whose input column ox * stride + off lies in [0, w),
   clipped to [0, ow). */
static void column_range(int64_t off, int64_t stride, int64_t w, int64_t ow, int64_t *lo, int64_t *hi) {
    int64_t l = off < 0 ? (-off + stride - 1) / stride : 0;
    int64_t h = off < w ? (w - off + stride - 1) / stride : 0;
    l = l < ow ? l : ow;
    h = h < ow ? h : ow;
    *lo = l;
    *hi = h > l ? h : l;
}


#define DEFINE_CONVB(name, T, CT, LD, ST, CODE, GEMM)                                              \
    /* col[r * ld + j] for output positions p0 .. p0 + pn - 1 (r = (ci * kh + ky) * kw + kx), x at  \
       the group's first channel of the image; zero where the window reads the padding. The        \
       positions are walked one output row at a time, and within a row only the valid columns are \
       read. */                                                                                     \
    static void im2col_##name(const bgeom *g, const T *x, int64_t p0, int64_t pn, CT *col, int64_t ld) { \
        for (int64_t r = 0; r < g->k; r++) {                                                        \
            const int64_t ci = r / (g->kh * g->kw), ky = r / g->kw % g->kh, kx = r % g->kw;         \
            const int64_t off = kx * g->dw - g->pw;                                                 \
            int64_t lo, hi;                                                                         \
            column_range(off, g->sw, g->w, g->ow, &lo, &hi);                                        \
            CT *row = col + r * ld;                                                                 \
            int64_t j = 0, oy = p0 / g->ow, ox = p0 % g->ow;                                        \
            while (j < pn) {                                                                        \
                const int64_t end = ox + (g->ow - ox < pn - j ? g->ow - ox : pn - j);               \
                const int64_t iy = oy * g->sh - g->ph + ky * g->dh;                                 \
                CT *dst = row + j; /* dst[t - ox] for the columns t in [ox, end) */                \
                const int64_t a = lo > ox ? lo : ox, b = hi < end ? hi : end;                       \
                if (iy < 0 || iy >= g->h || a >= b) {                                               \
                    for (int64_t t = ox; t < end; t++) dst[t - ox] = 0;                             \
                } else {                                                                            \
                    const T *src = x + ci * g->xs[1] + iy * g->xs[2];                               \
                    for (int64_t t = ox; t < a; t++) dst[t - ox] = 0;                               \
                    for (int64_t t = a; t < b; t++) dst[t - ox] = (CT)LD(src + (t * g->sw + off) * g->xs[3]); \
                    for (int64_t t = b; t < end; t++) dst[t - ox] = 0;                              \
                }                                                                                   \
                j += end - ox;                                                                      \
                ox = 0;                                                                             \
                oy++;                                                                               \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* The reverse of im2col: img (the group's cin_g contiguous h x w planes) += col (rows ld apart). */ \
    static void col2im_##name(const bgeom *g, const CT *col, int64_t p0, int64_t pn, CT *img, int64_t ld) { \
        for (int64_t r = 0; r < g->k; r++) {                                                        \
            const int64_t ci = r / (g->kh * g->kw), ky = r / g->kw % g->kh, kx = r % g->kw;         \
            const int64_t off = kx * g->dw - g->pw;                                                 \
            int64_t lo, hi;                                                                         \
            column_range(off, g->sw, g->w, g->ow, &lo, &hi);                                        \
            const CT *row = col + r * ld;                                                           \
            int64_t j = 0, oy = p0 / g->ow, ox = p0 % g->ow;                                        \
            while (j < pn) {                                                                        \
                const int64_t end = ox + (g->ow - ox < pn - j ? g->ow - ox : pn - j);               \
                const int64_t iy = oy * g->sh - g->ph + ky * g->dh;                                 \
                if (iy >= 0 && iy < g->h) {                                                         \
                    const int64_t a = lo > ox ? lo : ox, b = hi < end ? hi : end;                   \
                    const CT *src = row + j;                                                        \
                    CT *dst = img + (ci * g->h + iy) * g->w;                                        \
                    for (int64_t t = a; t < b; t++) dst[t * g->sw + off] += src[t - ox];            \
                }                                                                                   \
                j += end - ox;                                                                      \
                ox = 0;                                                                             \
                oy++;                                                                               \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    DEFINE_FILL_PADDED(fill_padded_##name, bgeom, T, CT, LD)                                        \
                                                                                                    \
    /* im2col of all P positions (padded_pitch(g) = pitch > 0): each input channel is copied into   \
       the zero-padded plane `pad` once, and tap (ky, kx) of position t reads pad[offsets[t] +      \
       ky * pitch + kx] with no bounds to test (offsets[t] = oy * pitch + ox). */                   \
    static void padded_im2col_##name(const bgeom *g, const T *x, CT *col, int64_t ld, int64_t pitch, CT *pad, \
                                     const int32_t *offsets) {                                      \
        for (int64_t ci = 0, r = 0; ci < g->cin_g; ci++) {                                          \
            fill_padded_##name(g, x + ci * g->xs[1], pitch, pad);                                   \
            for (int64_t ky = 0; ky < g->kh; ky++) {                                                \
                for (int64_t kx = 0; kx < g->kw; kx++, r++) {                                       \
                    const CT *base = pad + ky * pitch + kx;                                         \
                    CT *dst = col + r * ld;                                                         \
                    if (g->ow >= PLANE_RUN_MIN) {                                                   \
                        for (int64_t oy = 0; oy < g->oh; oy++, dst += g->ow)                        \
                            for (int64_t ox = 0; ox < g->ow; ox++) dst[ox] = base[oy * pitch + ox]; \
                    } else {                                                                        \
                        for (int64_t t = 0; t < g->p; t++) dst[t] = base[offsets[t]];               \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* The reverse: each input channel's taps are added into the zero-padded plane `pad` (in the    \
       order col2im adds them into img, so the sums are the same bits), whose part inside the image \
       is then added into img (the group's cin_g contiguous h x w planes). */                       \
    static void padded_col2im_##name(const bgeom *g, const CT *col, int64_t ld, CT *img, int64_t pitch, CT *pad, \
                                     const int32_t *offsets) {                                      \
        const int64_t rows = g->oh + g->kh - 1;                                                     \
        for (int64_t ci = 0, r = 0; ci < g->cin_g; ci++) {                                          \
            for (int64_t e = 0; e < rows * pitch; e++) pad[e] = 0;                                  \
            for (int64_t ky = 0; ky < g->kh; ky++) {                                                \
                for (int64_t kx = 0; kx < g->kw; kx++, r++) {                                       \
                    CT *base = pad + ky * pitch + kx;                                               \
                    const CT *src = col + r * ld;                                                   \
                    if (g->ow >= PLANE_RUN_MIN) {                                                   \
                        for (int64_t oy = 0; oy < g->oh; oy++, src += g->ow)                        \
                            for (int64_t ox = 0; ox < g->ow; ox++) base[oy * pitch + ox] += src[ox]; \
                    } else {                                                                        \
                        for (int64_t t = 0; t < g->p; t++) base[offsets[t]] += src[t];              \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
            CT *dst = img + ci * g->h * g->w;                                                       \
            for (int64_t iy = 0; iy < g->h && iy + g->ph < rows; iy++) {                            \
                const CT *row = pad + (iy + g->ph) * pitch + g->pw;                                 \
                for (int64_t ix = 0; ix < g->w && ix + g->pw < pitch; ix++) dst[iy * g->w + ix] += row[ix]; \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* Direct dx of one image and group (no GEMM): img += the group's weights wq (m x K) applied    \
       tap by tap to its grad_out rows gq (m x P). */                                               \
    static void direct_input_##name(const bgeom *g, const CT *wq, const CT *gq, CT *img) {          \
        for (int64_t r = 0; r < g->k; r++) {                                                        \
            const int64_t ci = r / (g->kh * g->kw), ky = r / g->kw % g->kh, kx = r % g->kw;         \
            const int64_t off = kx * g->dw - g->pw;                                                 \
            int64_t lo, hi;                                                                         \
            column_range(off, g->sw, g->w, g->ow, &lo, &hi);                                        \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                                \
                const int64_t iy = oy * g->sh - g->ph + ky * g->dh;                                 \
                if (iy < 0 || iy >= g->h) {                                                         \
                    continue;                                                                       \
                }                                                                                   \
                CT *dst = img + (ci * g->h + iy) * g->w;                                            \
                for (int64_t i = 0; i < g->m; i++) {                                                \
                    const CT wv = wq[i * g->k + r], *src = gq + i * g->p + oy * g->ow;              \
                    for (int64_t t = lo; t < hi; t++) dst[t * g->sw + off] += wv * src[t];          \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* Direct dw of one image and group (no GEMM): acc (m x K) += grad_out rows gq (m x P) times    \
       the input values each tap saw; x at the group's first channel of the image. */              \
    static void direct_weight_##name(const bgeom *g, const T *x, const CT *gq, CT *acc) {           \
        for (int64_t r = 0; r < g->k; r++) {                                                        \
            const int64_t ci = r / (g->kh * g->kw), ky = r / g->kw % g->kh, kx = r % g->kw;         \
            const int64_t off = kx * g->dw - g->pw;                                                 \
            int64_t lo, hi;                                                                         \
            column_range(off, g->sw, g->w, g->ow, &lo, &hi);                                        \
            for (int64_t i = 0; i < g->m; i++) {                                                    \
                CT sum = 0;                                                                         \
                for (int64_t oy = 0; oy < g->oh; oy++) {                                            \
                    const int64_t iy = oy * g->sh - g->ph + ky * g->dh;                             \
                    if (iy < 0 || iy >= g->h) {                                                     \
                        continue;                                                                   \
                    }                                                                               \
                    const T *src = x + ci * g->xs[1] + iy * g->xs[2];                               \
                    const CT *gr = gq + i * g->p + oy * g->ow;                                      \
                    for (int64_t t = lo; t < hi; t++) sum += gr[t] * (CT)LD(src + (t * g->sw + off) * g->xs[3]); \
                }                                                                                   \
                acc[i * g->k + r] += sum;                                                           \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* One image's grad_out as a (c_out x P) compute-type matrix, rows ld apart. */                 \
    static void pack_gy_##name(const bgeom *g, const T *gy, int64_t b, CT *dst, int64_t ld) {       \
        for (int64_t co = 0; co < g->c_out; co++) {                                                 \
            const T *src = gy + b * g->gs[0] + co * g->gs[1];                                       \
            CT *row = dst + co * ld;                                                                \
            for (int64_t oy = 0; oy < g->oh; oy++) {                                                \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                            \
                    *row++ = (CT)LD(src + oy * g->gs[2] + ox * g->gs[3]);                           \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* The grad_out of images bb .. bb + nb - 1 side by side in gbuf (c_out x nb * P); returns the  \
       row stride, nb * P. */                                                                       \
    static int64_t pack_gy_batch_##name(const bgeom *g, const T *gy, int64_t bb, int64_t nb, CT *gbuf) { \
        for (int64_t i = 0; i < nb; i++) {                                                          \
            pack_gy_##name(g, gy, bb + i, gbuf + i * g->p, nb * g->p);                              \
        }                                                                                           \
        return nb * g->p;                                                                           \
    }                                                                                               \
                                                                                                    \
    typedef struct convb_job_##name {                                                               \
        const bgeom *g;                                                                             \
        const T *x, *gy;                                                                            \
        const CT *wpack;     /* dx: the weights as a contiguous (c_out x K) matrix */               \
        T *out;              /* dx: grad_input */                                                   \
        CT *scratch;         /* per worker, per_worker elements */                                  \
        tt_status *status;   /* per worker */                                                       \
        int64_t workers, per_worker;                                                                \
        int64_t batch;       /* images per product (batch_size) */                                  \
        int64_t pitch, padded_elems; /* padded_pitch, and the plane plus offsets at scratch's end */ \
        /* what a worker runs on its share of the images: input_images or weight_images */         \
        tt_status (*images)(const struct convb_job_##name *, int64_t, int64_t, CT *);               \
    } convb_job_##name;                                                                             \
                                                                                                    \
    /* A worker's padded plane and position offsets, at the end of its scratch (NULL when the       \
       gradients do not go through the plane). */                                                   \
    static CT *padded_scratch_##name(const struct convb_job_##name *j, CT *scratch, int32_t **offsets) { \
        if (j->pitch == 0) {                                                                        \
            *offsets = NULL;                                                                        \
            return NULL;                                                                            \
        }                                                                                           \
        CT *pad = scratch + j->per_worker - j->padded_elems;                                        \
        int32_t *off = (int32_t *)(void *)(pad + (j->g->oh + j->g->kh - 1) * j->pitch);            \
        plane_offsets(off, j->g->p, j->g->ow, j->pitch);                                            \
        *offsets = off;                                                                             \
        return pad;                                                                                 \
    }                                                                                               \
                                                                                                    \
    /* dx for images [b0, b1): scratch = gbuf (c_out x batch * P), col (K x batch * pb), then an    \
       image accumulator (c_in x h x w) when T is not the compute type (else the accumulation is in \
       `out` itself). With a batch of several images (a small plane, one block of positions; see   \
       batch_size), the batch's positions are the columns of one product per group, instead of a   \
       tiny (K x P x m) product per image. */                                                       \
    static tt_status input_images_##name(const convb_job_##name *j, int64_t b0, int64_t b1, CT *scratch) { \
        const bgeom *g = j->g;                                                                      \
        const int64_t plane = g->h * g->w, image = g->c_in * plane;                                 \
        const int direct = sizeof(T) == sizeof(CT);                                                 \
        CT *gbuf = scratch, *col = gbuf + g->c_out * j->batch * g->p, *acc = col + g->k * j->batch * g->pb; \
        int32_t *offsets;                                                                           \
        CT *pad = padded_scratch_##name(j, scratch, &offsets);                                      \
        for (int64_t bb = b0; bb < b1; bb += j->batch) {                                            \
            const int64_t nb = b1 - bb < j->batch ? b1 - bb : j->batch;                             \
            const int64_t ld = pack_gy_batch_##name(g, j->gy, bb, nb, gbuf);                        \
            if (j->batch > 1) { /* T is CT: the images accumulate in `out` */                       \
                CT *imgs = (CT *)(void *)(j->out + bb * image);                                     \
                memset(imgs, 0, (size_t)(nb * image) * sizeof(CT));                                 \
                for (int64_t grp = 0; grp < g->groups; grp++) {                                     \
                    tt_status s = tt_gemm(GEMM, g->k, ld, g->m, (uintptr_t)(j->wpack + grp * g->m * g->k), 1, \
                                          g->k, (uintptr_t)(gbuf + grp * g->m * ld), ld, 1, (uintptr_t)col, \
                                          ld, 1, 0);                                                \
                    if (s != TT_OK) {                                                               \
                        return s;                                                                   \
                    }                                                                               \
                    for (int64_t i = 0; i < nb; i++) {                                              \
                        CT *img = imgs + i * image + grp * g->cin_g * plane;                        \
                        if (pad != NULL) {                                                          \
                            padded_col2im_##name(g, col + i * g->p, ld, img, j->pitch, pad, offsets); \
                        } else {                                                                    \
                            col2im_##name(g, col + i * g->p, 0, g->p, img, ld);                     \
                        }                                                                           \
                    }                                                                               \
                }                                                                                   \
                continue;                                                                           \
            }                                                                                       \
            const int64_t b = bb; /* one image: gbuf's rows are P apart */                          \
            CT *img = direct ? (CT *)(void *)(j->out + b * image) : acc;                            \
            memset(img, 0, (size_t)image * sizeof(CT));                                             \
            for (int64_t grp = 0; grp < g->groups; grp++) {                                         \
                if (g->m * g->k < DIRECT_MAX) {                                                     \
                    direct_input_##name(g, j->wpack + grp * g->m * g->k, gbuf + grp * g->m * g->p,  \
                                        img + grp * g->cin_g * plane);                              \
                    continue;                                                                       \
                }                                                                                   \
                for (int64_t blk = 0; blk < g->blocks; blk++) {                                     \
                    const int64_t p0 = blk * g->pb, pn = g->p - p0 < g->pb ? g->p - p0 : g->pb;     \
                    tt_status s = tt_gemm(GEMM, g->k, pn, g->m, (uintptr_t)(j->wpack + grp * g->m * g->k), 1, \
                                          g->k, (uintptr_t)(gbuf + grp * g->m * g->p + p0), g->p, 1,  \
                                          (uintptr_t)col, pn, 1, 0);                                \
                    if (s != TT_OK) {                                                               \
                        return s;                                                                   \
                    }                                                                               \
                    if (pad != NULL) { /* one block: p0 = 0, pn = P */                             \
                        padded_col2im_##name(g, col, pn, img + grp * g->cin_g * plane, j->pitch, pad, offsets); \
                    } else {                                                                        \
                        col2im_##name(g, col, p0, pn, img + grp * g->cin_g * plane, pn);            \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
            if (!direct) {                                                                          \
                for (int64_t e = 0; e < image; e++) {                                               \
                    j->out[b * image + e] = ST(acc[e]);                                             \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
        return TT_OK;                                                                               \
    }                                                                                               \
                                                                                                    \
    /* dw for images [b0, b1), summed into this worker's accumulator (the first c_out * K elements  \
       of its scratch, zeroed by the caller); then gbuf (c_out x batch * P) and col (K x batch *    \
       pb). With a batch of several images, one product per group takes the batch's positions as   \
       its inner dimension. */                                                                      \
    static tt_status weight_images_##name(const convb_job_##name *j, int64_t b0, int64_t b1, CT *scratch) { \
        const bgeom *g = j->g;                                                                      \
        CT *acc = scratch, *gbuf = acc + g->c_out * g->k, *col = gbuf + g->c_out * j->batch * g->p; \
        int32_t *offsets;                                                                           \
        CT *pad = padded_scratch_##name(j, scratch, &offsets);                                      \
        for (int64_t bb = b0; bb < b1; bb += j->batch) {                                            \
            const int64_t nb = b1 - bb < j->batch ? b1 - bb : j->batch;                             \
            const int64_t ld = pack_gy_batch_##name(g, j->gy, bb, nb, gbuf);                        \
            for (int64_t grp = 0; grp < g->groups; grp++) {                                         \
                if (g->m * g->k < DIRECT_MAX) { /* batch 1 */                                       \
                    const T *xg = j->x + bb * g->xs[0] + grp * g->cin_g * g->xs[1];                 \
                    direct_weight_##name(g, xg, gbuf + grp * g->m * g->p, acc + grp * g->m * g->k); \
                    continue;                                                                       \
                }                                                                                   \
                for (int64_t blk = 0; blk < g->blocks; blk++) { /* one block when nb > 1 */         \
                    const int64_t p0 = blk * g->pb, pn = g->p - p0 < g->pb ? g->p - p0 : g->pb;     \
                    for (int64_t i = 0; i < nb; i++) {                                              \
                        const T *xg = j->x + (bb + i) * g->xs[0] + grp * g->cin_g * g->xs[1];       \
                        if (pad != NULL) { /* one block: p0 = 0, pn = P */                         \
                            padded_im2col_##name(g, xg, col + i * pn, nb * pn, j->pitch, pad, offsets); \
                        } else {                                                                    \
                            im2col_##name(g, xg, p0, pn, col + i * pn, nb * pn);                    \
                        }                                                                           \
                    }                                                                               \
                    tt_status s = tt_gemm(GEMM, g->m, g->k, nb * pn, (uintptr_t)(gbuf + grp * g->m * ld + p0), ld, \
                                          1, (uintptr_t)col, 1, nb * pn, (uintptr_t)(acc + grp * g->m * g->k), \
                                          g->k, 1, 1);                                              \
                    if (s != TT_OK) {                                                               \
                        return s;                                                                   \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
        return TT_OK;                                                                               \
    }                                                                                               \
                                                                                                    \
    /* Worker w runs j->images on its contiguous share of the images, with its own scratch. */     \
    static void worker_task_##name(int64_t begin, int64_t end, void *ctx) {                         \
        const convb_job_##name *j = ctx;                                                            \
        for (int64_t w = begin; w < end; w++) {                                                     \
            j->status[w] = j->images(j, j->g->n * w / j->workers, j->g->n * (w + 1) / j->workers,   \
                                     j->scratch + w * j->per_worker);                               \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    /* Runs j->images over the workers; the first failing worker's status, else TT_OK. */          \
    static tt_status run_workers_##name(convb_job_##name *j) {                                      \
        for (int64_t w = 0; w < j->workers; w++) {                                                  \
            j->status[w] = TT_OK;                                                                   \
        }                                                                                           \
        if (j->workers > 1) {                                                                       \
            tt_parallel_for(j->workers, 1, worker_task_##name, j);                                  \
        } else {                                                                                    \
            worker_task_##name(0, 1, j);                                                            \
        }                                                                                           \
        for (int64_t w = 0; w < j->workers; w++) {                                                  \
            if (j->status[w] != TT_OK) {                                                            \
                return j->status[w];                                                                \
            }                                                                                       \
        }                                                                                           \
        return TT_OK;                                                                               \
    }                                                                                               \
                                                                                                    \
    static tt_status backward_input_##name(const bgeom *g, const T *gy, const T *w, T *out) {       \
        const int64_t workers = worker_count(g);                                                    \
        const int64_t image = g->c_in * g->h * g->w;                                                \
        const int64_t batch = batch_size(g, workers, sizeof(T) == sizeof(CT));                      \
        const int64_t pitch = padded_pitch(g);                                                      \
        const int64_t padded_elems = pitch > 0 ? plane_scratch_elems(g->oh + g->kh - 1, pitch) : 0; \
        int64_t per_worker, col_elems, gy_elems;                                                    \
        if (!mul_ok(g->k, g->pb, &col_elems) || !mul_ok(col_elems, batch, &col_elems)               \
            || !mul_ok(g->c_out * g->p, batch, &gy_elems)                                           \
            || !scratch_ok(gy_elems, col_elems, (sizeof(T) == sizeof(CT) ? 0 : image) + padded_elems, workers, \
                           sizeof(CT), &per_worker)) {                                              \
            return TT_ERR_OVERFLOW;                                                                 \
        }                                                                                           \
        CT *wpack = malloc((size_t)(g->c_out * g->k + 1) * sizeof(CT));                             \
        CT *scratch = malloc((size_t)(per_worker * workers + 1) * sizeof(CT));                      \
        tt_status *status = malloc((size_t)workers * sizeof(tt_status));                            \
        if (wpack == NULL || scratch == NULL || status == NULL) {                                   \
            free(wpack);                                                                            \
            free(scratch);                                                                          \
            free(status);                                                                           \
            return TT_ERR_NOMEM;                                                                    \
        }                                                                                           \
        CT *wp = wpack;                                                                             \
        for (int64_t co = 0; co < g->c_out; co++) {                                                 \
            for (int64_t ci = 0; ci < g->cin_g; ci++) {                                             \
                for (int64_t ky = 0; ky < g->kh; ky++) {                                            \
                    for (int64_t kx = 0; kx < g->kw; kx++) {                                        \
                        *wp++ = (CT)LD(w + co * g->ws[0] + ci * g->ws[1] + ky * g->ws[2] + kx * g->ws[3]); \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
        convb_job_##name job = {.g = g, .gy = gy, .wpack = wpack, .out = out, .scratch = scratch,   \
                                .status = status, .workers = workers, .per_worker = per_worker,     \
                                .batch = batch, .pitch = pitch, .padded_elems = padded_elems,       \
                                .images = input_images_##name};                                     \
        const tt_status result = run_workers_##name(&job);                                          \
        free(wpack);                                                                                \
        free(scratch);                                                                              \
        free(status);                                                                               \
        return result;                                                                              \
    }                                                                                               \
                                                                                                    \
    static tt_status backward_weight_##name(const bgeom *g, const T *x, const T *gy, T *out) {      \
        const int64_t workers = worker_count(g);                                                    \
        const int64_t wsize = g->c_out * g->k;                                                      \
        const int64_t batch = batch_size(g, workers, 1);                                            \
        const int64_t pitch = padded_pitch(g);                                                      \
        const int64_t padded_elems = pitch > 0 ? plane_scratch_elems(g->oh + g->kh - 1, pitch) : 0; \
        int64_t per_worker, col_elems, gy_elems;                                                    \
        if (!mul_ok(g->k, g->pb, &col_elems) || !mul_ok(col_elems, batch, &col_elems)               \
            || !mul_ok(g->c_out * g->p, batch, &gy_elems)                                           \
            || !scratch_ok(wsize, gy_elems, col_elems + padded_elems, workers, sizeof(CT), &per_worker)) { \
            return TT_ERR_OVERFLOW;                                                                 \
        }                                                                                           \
        CT *scratch = malloc((size_t)(per_worker * workers + 1) * sizeof(CT));                      \
        tt_status *status = malloc((size_t)workers * sizeof(tt_status));                            \
        if (scratch == NULL || status == NULL) {                                                    \
            free(scratch);                                                                          \
            free(status);                                                                           \
            return TT_ERR_NOMEM;                                                                    \
        }                                                                                           \
        for (int64_t w = 0; w < workers; w++) {                                                     \
            memset(scratch + w * per_worker, 0, (size_t)wsize * sizeof(CT));                        \
        }                                                                                           \
        convb_job_##name job = {.g = g, .x = x, .gy = gy, .scratch = scratch, .status = status,    \
                                .workers = workers, .per_worker = per_worker, .batch = batch,       \
                                .pitch = pitch, .padded_elems = padded_elems,                       \
                                .images = weight_images_##name};                                    \
        const tt_status result = run_workers_##name(&job);                                          \
        if (result == TT_OK) {                                                                      \
            for (int64_t i = 0; i < wsize; i++) {                                                   \
                CT sum = scratch[i];                                                                \
                for (int64_t w = 1; w < workers; w++) {                                             \
                    sum += scratch[w * per_worker + i];                                             \
                }                                                                                   \
                out[i] = ST(sum);                                                                   \
            }                                                                                       \
        }                                                                                           \
        free(scratch);                                                                              \
        free(status);                                                                               \
        return result;                                                                              \
    }
CONVB_DTYPES(DEFINE_CONVB)

/* With stride 1, dilation 1 and one group, dx is the convolution of grad_out by the weights turned
   by 180 degrees with input and output channels swapped, padded by k - 1 - p: for tiny planes that
   is tt_conv2d's tiny-plane kernel (conv.c), which needs no col2im, only the flipped weights. */
static int stride_one(const bgeom *g) {
    return g->groups == 1 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1
           && g->oh == g->h + 2 * g->ph - g->kh + 1 && g->ow == g->w + 2 * g->pw - g->kw + 1;
}

static int tiny_planes_input(const bgeom *g) {
    return stride_one(g) && g->ph <= g->kh - 1 && g->pw <= g->kw - 1
           && tt_conv2d_plane_kernel(g->c_out, g->oh, g->ow, g->kh, g->kw, g->kh - 1 - g->ph, g->kw - 1 - g->pw);
}

static tt_status backward_input_by_forward(const bgeom *g, const float *grad_out, const float *weight,
                                           float *grad_input) {
    /* flipped[ci][co][ky][kx] = weight[co][ci][kh - 1 - ky][kw - 1 - kx] */
    float *flipped = malloc((size_t)(g->c_in * g->c_out * g->kh * g->kw) * sizeof(float));
    if (flipped == NULL) {
        return TT_ERR_NOMEM;
    }
    float *f = flipped;
    int finite = 1;
    for (int64_t ci = 0; ci < g->c_in; ci++) {
        for (int64_t co = 0; co < g->c_out; co++) {
            for (int64_t ky = 0; ky < g->kh; ky++) {
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    *f = weight[co * g->ws[0] + ci * g->ws[1] + (g->kh - 1 - ky) * g->ws[2] + (g->kw - 1 - kx) * g->ws[3]];
                    finite &= isfinite(*f++);
                }
            }
        }
    }
    if (!finite) {
        /* the convolution would multiply dy's zero padding by an inf or NaN weight, making NaN
           where PyTorch (and the general code, which adds only windows that exist) stay finite */
        free(flipped);
        return backward_input_float32(g, grad_out, weight, grad_input);
    }
    const int64_t gy_shape[4] = {g->n, g->c_out, g->oh, g->ow};
    const int64_t f_shape[4] = {g->c_in, g->c_out, g->kh, g->kw};
    const int64_t f_strides[4] = {g->c_out * g->kh * g->kw, g->kh * g->kw, g->kw, 1};
    const int64_t ones[2] = {1, 1}, padding[2] = {g->kh - 1 - g->ph, g->kw - 1 - g->pw}, size[2] = {g->h, g->w};
    const tt_status status = tt_conv2d(TT_FLOAT32, gy_shape, (uintptr_t)grad_out, g->gs, f_shape, (uintptr_t)flipped,
                                       f_strides, 0, 0, ones, padding, ones, 1, size, (uintptr_t)grad_input);
    free(flipped);
    return status;
}

/* dW of a tiny-plane convolution: tt_conv2d_plane_weight_grad (conv.c), which sums over images and
   positions in registers, instead of the general code's one product per image with k = P (16 or
   fewer), each a pass over dW. */
static int tiny_planes_weight(const bgeom *g) {
    return stride_one(g) && tt_conv2d_plane_weight_grad_applies(g->c_in, g->h, g->w, g->kh, g->kw, g->ph, g->pw);
}

tt_status tt_conv2d_backward_input(int dtype,
                                   const int64_t *gy_shape, uintptr_t grad_out, const int64_t *gy_strides,
                                   const int64_t *w_shape, uintptr_t weight, const int64_t *w_strides,
                                   const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                   int64_t groups, const int64_t *x_shape, uintptr_t grad_input) {
    if (w_strides == NULL || !non_negative(w_strides, 4)) {
        return TT_ERR_INVALID_ARG;
    }
    bgeom g;
    tt_status status = make_geom(&g, x_shape, gy_shape, gy_strides, w_shape, stride, padding, dilation, groups);
    if (status != TT_OK) {
        return status;
    }
    memcpy(g.ws, w_strides, sizeof g.ws);
    if (g.n == 0 || g.c_in == 0 || g.h == 0 || g.w == 0) {
        return TT_OK;
    }
    if (grad_input == 0 || (g.p > 0 && g.c_out > 0 && (grad_out == 0 || weight == 0))) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype == TT_FLOAT32 && g.p > 0 && g.c_out > 0 && tiny_planes_input(&g)) {
        return backward_input_by_forward(&g, (const float *)grad_out, (const float *)weight, (float *)grad_input);
    }
    switch (dtype) {
#define CALL_INPUT(name, T, CT, LD, ST, CODE, GEMM) \
    case CODE: \
        return backward_input_##name(&g, (const T *)grad_out, (const T *)weight, (T *)grad_input);
        CONVB_DTYPES(CALL_INPUT)
#undef CALL_INPUT
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}

tt_status tt_conv2d_backward_weight(int dtype,
                                    const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                                    const int64_t *gy_shape, uintptr_t grad_out, const int64_t *gy_strides,
                                    const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                    int64_t groups, const int64_t *w_shape, uintptr_t grad_weight) {
    if (x_strides == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    bgeom g;
    tt_status status = make_geom(&g, x_shape, gy_shape, gy_strides, w_shape, stride, padding, dilation, groups);
    if (status != TT_OK) {
        return status;
    }
    if (!non_negative(x_strides, 4)) {
        return TT_ERR_INVALID_ARG;
    }
    memcpy(g.xs, x_strides, sizeof g.xs);
    if (g.c_out == 0 || g.k == 0) {
        return TT_OK;
    }
    if (grad_weight == 0) {
        return TT_ERR_INVALID_ARG;
    }
    if (g.n == 0 || g.p == 0) {   /* nothing to sum: zeros */
        switch (dtype) {
#define ZERO_WEIGHT(name, T, CT, LD, ST, CODE, GEMM) \
    case CODE: \
        memset((void *)grad_weight, 0, (size_t)(g.c_out * g.k) * sizeof(T)); \
        return TT_OK;
            CONVB_DTYPES(ZERO_WEIGHT)
#undef ZERO_WEIGHT
        default:
            return TT_ERR_UNSUPPORTED_DTYPE;
        }
    }
    if (grad_out == 0 || (x == 0 && g.c_in > 0 && g.h > 0 && g.w > 0)) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype == TT_FLOAT32 && g.c_in > 0 && tiny_planes_weight(&g)) {
        const int64_t x_shape4[4] = {g.n, g.c_in, g.h, g.w};
        return tt_conv2d_plane_weight_grad((const float *)x, x_shape4, g.xs, (const float *)grad_out, g.c_out, g.gs,
                                           g.kh, g.kw, g.ph, g.pw, (float *)grad_weight);
    }
    switch (dtype) {
#define CALL_WEIGHT(name, T, CT, LD, ST, CODE, GEMM) \
    case CODE: \
        return backward_weight_##name(&g, (const T *)x, (const T *)grad_out, (T *)grad_weight);
        CONVB_DTYPES(CALL_WEIGHT)
#undef CALL_WEIGHT
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}

/* ------------------------------------------------------------------ average pooling */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Adaptive windows, as pool.c (PyTorch's start_index / end_index). */
static int64_t window_start(int64_t o, int64_t out, int64_t in) { return (o / out) * in + ((o % out) * in) / out; }
static int64_t window_end(int64_t o, int64_t out, int64_t in) { return 1 + ((o + 1) * in - 1) / out; }

typedef struct avgb_job {
    int64_t n, c, h, w, oh, ow, gs[4];
    int64_t k[2], s[2], p[2];
    int adaptive, include_pad;
    int64_t divisor_override;
    const void *gy;
    void *acc;   /* compute-type accumulator, contiguous (n, c, h, w) */
} avgb_job;

#define DEFINE_AVGB(name, T, CT, LD, ST, CODE, GEMM)                                               \
    static void avgb_planes_##name(int64_t p0, int64_t p1, void *ctx) {                            \
        const avgb_job *j = ctx;                                                                   \
        const T *gy = j->gy;                                                                       \
        for (int64_t plane = p0; plane < p1; plane++) {                                            \
            CT *acc = (CT *)j->acc + plane * j->h * j->w;                                          \
            const T *g = gy + (plane / j->c) * j->gs[0] + (plane % j->c) * j->gs[1];               \
            memset(acc, 0, (size_t)(j->h * j->w) * sizeof(CT));                                    \
            for (int64_t oy = 0; oy < j->oh; oy++) {                                               \
                int64_t y0, y1, padded_h;                                                          \
                if (j->adaptive) {                                                                 \
                    y0 = window_start(oy, j->oh, j->h);                                            \
                    y1 = window_end(oy, j->oh, j->h);                                              \
                    padded_h = y1 - y0;                                                            \
                } else {                                                                           \
                    y0 = oy * j->s[0] - j->p[0];                                                   \
                    y1 = min64(y0 + j->k[0], j->h + j->p[0]);                                      \
                    padded_h = y1 - y0;                                                            \
                    y0 = max64(y0, 0);                                                             \
                    y1 = min64(y1, j->h);                                                          \
                }                                                                                  \
                for (int64_t ox = 0; ox < j->ow; ox++) {                                           \
                    int64_t x0, x1, padded_w;                                                      \
                    if (j->adaptive) {                                                             \
                        x0 = window_start(ox, j->ow, j->w);                                        \
                        x1 = window_end(ox, j->ow, j->w);                                          \
                        padded_w = x1 - x0;                                                        \
                    } else {                                                                       \
                        x0 = ox * j->s[1] - j->p[1];                                               \
                        x1 = min64(x0 + j->k[1], j->w + j->p[1]);                                  \
                        padded_w = x1 - x0;                                                        \
                        x0 = max64(x0, 0);                                                         \
                        x1 = min64(x1, j->w);                                                      \
                    }                                                                              \
                    if (y0 >= y1 || x0 >= x1) {                                                    \
                        continue;                                                                  \
                    }                                                                              \
                    const int64_t divisor = j->adaptive              ? padded_h * padded_w         \
                                            : j->divisor_override > 0 ? j->divisor_override        \
                                            : j->include_pad          ? padded_h * padded_w        \
                                                                      : (y1 - y0) * (x1 - x0);     \
                    const CT v = (CT)LD(g + oy * j->gs[2] + ox * j->gs[3]) / (CT)divisor;          \
                    for (int64_t iy = y0; iy < y1; iy++) {                                         \
                        for (int64_t ix = x0; ix < x1; ix++) {                                     \
                            acc[iy * j->w + ix] += v;                                              \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static tt_status avgb_##name(avgb_job *j, T *out, int64_t total, int64_t grain) {              \
        CT *acc = sizeof(T) == sizeof(CT) ? (CT *)(void *)out : malloc((size_t)total * sizeof(CT)); \
        if (acc == NULL) {                                                                         \
            return TT_ERR_NOMEM;                                                                   \
        }                                                                                          \
        j->acc = acc;                                                                              \
        tt_parallel_for(j->n * j->c, grain, avgb_planes_##name, j);                                \
        if ((void *)acc != (void *)out) {                                                          \
            for (int64_t i = 0; i < total; i++) {                                                 \
                out[i] = ST(acc[i]);                                                               \
            }                                                                                      \
            free(acc);                                                                             \
        }                                                                                          \
        return TT_OK;                                                                              \
    }
CONVB_DTYPES(DEFINE_AVGB)

tt_status tt_avg_pool2d_backward(int dtype, int adaptive,
                                 const int64_t *gy_shape, uintptr_t grad_out, const int64_t *gy_strides,
                                 const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                                 int count_include_pad, int64_t divisor_override,
                                 const int64_t *in_size, uintptr_t grad_input) {
    if (gy_shape == NULL || gy_strides == NULL || in_size == NULL || !non_negative(gy_shape, 4)
        || !non_negative(gy_strides, 4) || !non_negative(in_size, 2) || divisor_override < 0) {
        return TT_ERR_INVALID_ARG;
    }
    avgb_job j = {.n = gy_shape[0], .c = gy_shape[1], .h = in_size[0], .w = in_size[1], .oh = gy_shape[2],
                  .ow = gy_shape[3], .gs = {gy_strides[0], gy_strides[1], gy_strides[2], gy_strides[3]},
                  .adaptive = adaptive != 0, .include_pad = count_include_pad != 0,
                  .divisor_override = divisor_override, .gy = (const void *)grad_out};
    if (!adaptive) {
        if (kernel == NULL || stride == NULL || padding == NULL) {
            return TT_ERR_INVALID_ARG;
        }
        for (int d = 0; d < 2; d++) {
            if (kernel[d] < 1 || stride[d] < 1 || padding[d] < 0 || !reach_ok(gy_shape[2 + d], stride[d], kernel[d],
                                                                                1, padding[d], in_size[d])) {
                return kernel[d] < 1 || stride[d] < 1 || padding[d] < 0 ? TT_ERR_INVALID_ARG : TT_ERR_OVERFLOW;
            }
            j.k[d] = kernel[d];
            j.s[d] = stride[d];
            j.p[d] = padding[d];
        }
    } else if ((j.oh > 0 && j.h > 0 && j.oh > INT64_MAX / 2 / j.h) || (j.ow > 0 && j.w > 0 && j.ow > INT64_MAX / 2 / j.w)) {
        return TT_ERR_OVERFLOW;   /* window_end computes (o + 1) * in */
    }
    int64_t total, plane_out;
    if (!mul_ok(j.n, j.c, &total) || !mul_ok(total, j.h, &total) || !mul_ok(total, j.w, &total)
        || total > (int64_t)(SIZE_MAX / 16) || !mul_ok(j.oh, j.ow, &plane_out)) {
        return TT_ERR_OVERFLOW;
    }
    if (total == 0) {
        return TT_OK;
    }
    if (grad_input == 0 || (plane_out > 0 && grad_out == 0)) {
        return TT_ERR_INVALID_ARG;
    }
    const int64_t per_plane = j.h * j.w + plane_out * 4;
    const int64_t grain = per_plane >= (1 << 15) ? 1 : ((1 << 15) + per_plane - 1) / per_plane;
    switch (dtype) {
#define CALL_AVGB(name, T, CT, LD, ST, CODE, GEMM) \
    case CODE: \
        return avgb_##name(&j, (T *)grad_input, total, grain);
        CONVB_DTYPES(CALL_AVGB)
#undef CALL_AVGB
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
}

/* ------------------------------------------------------------------ max pooling */

typedef struct maxb_job {
    int64_t plane_size, outputs;
    const void *gy;
    const int64_t *indices;
    void *gx;
    atomic_int bad_index;
} maxb_job;

#define DEFINE_MAXB(name, T, CT, LD, ST, CODE, GEMM)                                                \
    static void maxb_planes_##name(int64_t p0, int64_t p1, void *ctx) {                             \
        maxb_job *j = ctx;                                                                          \
        for (int64_t p = p0; p < p1; p++) {                                                         \
            const T *gy = (const T *)j->gy + p * j->outputs;                                        \
            const int64_t *at = j->indices + p * j->outputs;                                        \
            T *gx = (T *)j->gx + p * j->plane_size;                                                 \
            memset(gx, 0, (size_t)j->plane_size * sizeof(T));                                       \
            for (int64_t o = 0; o < j->outputs; o++) {                                              \
                const int64_t i = at[o];                                                            \
                if (i < 0 || i >= j->plane_size) {                                                  \
                    atomic_store_explicit(&j->bad_index, 1, memory_order_relaxed);                  \
                    continue;                                                                       \
                }                                                                                   \
                gx[i] = ST((CT)LD(gx + i) + (CT)LD(gy + o));                                        \
            }                                                                                       \
        }                                                                                           \
    }
CONVB_DTYPES(DEFINE_MAXB)

tt_status tt_max_pool_backward(int dtype, int64_t planes, int64_t plane_size, int64_t outputs,
                               uintptr_t grad_out, uintptr_t indices, uintptr_t grad_input) {
    int64_t total;
    if (planes < 0 || plane_size < 0 || outputs < 0 || !mul_ok(planes, plane_size, &total)
        || !mul_ok(planes, outputs, &total)) {
        return TT_ERR_INVALID_ARG;
    }
    if (planes == 0 || plane_size == 0) {
        return TT_OK;
    }
    if (grad_input == 0 || (outputs > 0 && (grad_out == 0 || indices == 0))) {
        return TT_ERR_INVALID_ARG;
    }
    maxb_job job = {.plane_size = plane_size, .outputs = outputs, .gy = (const void *)grad_out,
                    .indices = (const int64_t *)indices, .gx = (void *)grad_input};
    atomic_init(&job.bad_index, 0);
    const int64_t grain = ((int64_t)1 << 14) / (plane_size + outputs) + 1;   /* about 16K elements a chunk */
    switch (dtype) {
#define CALL_MAXB(name, T, CT, LD, ST, CODE, GEMM) \
    case CODE: \
        tt_parallel_for(planes, grain, maxb_planes_##name, &job); \
        break;
        CONVB_DTYPES(CALL_MAXB)
#undef CALL_MAXB
    default:
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    return atomic_load_explicit(&job.bad_index, memory_order_relaxed) ? TT_ERR_INDEX : TT_OK;
}
