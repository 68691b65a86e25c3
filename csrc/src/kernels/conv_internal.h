/*
 * conv_internal.h: what conv_backward.c asks of conv.c. Internal: not read by cffi.
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

#endif /* TT_KERNELS_CONV_INTERNAL_H */
