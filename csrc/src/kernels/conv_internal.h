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
   1 on small planes go through a zero-padded copy of each input plane. This defines
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
