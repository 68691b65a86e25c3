/*
 * conv_internal.h: what conv_backward.c asks of conv.c, and what both share. Internal: not read
 * by cffi.
 */
#ifndef TT_KERNELS_CONV_INTERNAL_H
#define TT_KERNELS_CONV_INTERNAL_H

#include <stdint.h>

#include "tt/tt.h"

/* Whether tt_conv2d (float32) runs its tiny-plane kernel for a convolution with stride 1,
   dilation 1 and one group of c_in channels of (h, w) planes by (kh, kw) windows with padding
   (ph, pw): each output plane at most 16 positions, the zero-padded input plane at most 32 floats,
   and the AVX-512 GEMM kernel selected. Borrows nothing. */
int tt_conv2d_plane_kernel(int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph, int64_t pw);

/* Whether tt_conv2d_plane_weight_grad takes such a convolution (tt_conv2d_plane_kernel, and a
   window of at most 16 taps). */
int tt_conv2d_plane_weight_grad_applies(int64_t c_in, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t ph,
                                        int64_t pw);

/* Its weight gradient: x (n, c_in, h, w) through x_strides, dy (n, c_out, oh, ow) through
   gy_strides, into gw, a contiguous (c_out, c_in, kh, kw) buffer (overwritten). Borrows x and dy;
   split over the threads by (block of 16 output channels, input channel). TT_ERR_NOMEM when its
   scratch (the padded planes and dy transposed) cannot be allocated. */
tt_status tt_conv2d_plane_weight_grad(const float *x, const int64_t *x_shape, const int64_t *x_strides,
                                      const float *gy, int64_t c_out, const int64_t *gy_strides, int64_t kh,
                                      int64_t kw, int64_t ph, int64_t pw, float *gw);

/* im2col (conv.c) and the gradients' im2col and col2im (conv_backward.c) at stride and dilation
   1 on small planes go through a zero-padded copy of each input plane: oh + kh - 1 rows of
   pitch ow + kw - 1. PLANE_MAX bounds its size (elements); output rows at least
   PLANE_RUN_MIN wide are copied as runs, narrower ones position by position through a table of
   offsets (plane_offsets). A worker keeps the plane and then the P int32 offsets in
   plane_scratch_elems elements of its scratch (P <= the plane's size, an element >= 4 bytes). */
#define PLANE_MAX ((int64_t)4096)
#define PLANE_RUN_MIN 8

/* Whether a padded plane of `rows` x `pitch` is small enough (each checked before the product). */
static inline int padded_plane_fits(int64_t rows, int64_t pitch) {
    return rows <= PLANE_MAX && pitch <= PLANE_MAX && rows * pitch <= PLANE_MAX;
}

static inline int64_t plane_scratch_elems(int64_t rows, int64_t pitch) { return 2 * rows * pitch; }

/* offsets[t] = oy * pitch + ox for the p positions t = oy * ow + ox of the output plane. */
static inline void plane_offsets(int32_t *offsets, int64_t p, int64_t ow, int64_t pitch) {
    for (int64_t t = 0, oy = 0, ox = 0; t < p; t++) {
        offsets[t] = (int32_t)(oy * pitch + ox);
        if (++ox == ow) {
            ox = 0;
            oy++;
        }
    }
}

/* The plane's filler. This defines
       static void FNAME(const GEOM *g, const T *xc, int64_t pitch, CT *pad)
   which copies one input channel xc (rows g->xs[2] apart, columns g->xs[3] apart, loaded with
   LD) into pad[0 .. (g->oh + g->kh - 1) * pitch): pad[r * pitch + c] = xc[r - ph][c - pw], zero
   outside the (g->h, g->w) plane. GEOM is either file's geometry struct (the same field names). */
#define DEFINE_FILL_PADDED(FNAME, GEOM, T, CT, LD)                                                   \
    static void FNAME(const GEOM *g, const T *xc, int64_t pitch, CT *pad) {                           \
        const int64_t c_lo = g->pw < pitch ? g->pw : pitch;                                           \
        const int64_t c_hi = g->pw + g->w < pitch ? g->pw + g->w : pitch;                             \
        for (int64_t r = 0; r < g->oh + g->kh - 1; r++, pad += pitch) {                               \
            const int64_t iy = r - g->ph;                                                             \
            if (iy < 0 || iy >= g->h) {                                                               \
                for (int64_t c = 0; c < pitch; c++) pad[c] = 0;                                       \
                continue;                                                                             \
            }                                                                                         \
            const T *src = xc + iy * g->xs[2] + (c_lo - g->pw) * g->xs[3];                            \
            for (int64_t c = 0; c < c_lo; c++) pad[c] = 0;                                            \
            for (int64_t c = c_lo; c < c_hi; c++, src += g->xs[3]) pad[c] = (CT)LD(src);              \
            for (int64_t c = c_hi > c_lo ? c_hi : c_lo; c < pitch; c++) pad[c] = 0;                   \
        }                                                                                             \
    }

#endif /* TT_KERNELS_CONV_INTERNAL_H */
