/*
 * kernels/conv.h: forward convolution (csrc/src/kernels/conv.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 */

/* A 2-D convolution, cross-correlation as PyTorch computes it (conv1d is the case h = kh = 1):

     out[n, co, oy, ox] = bias[co] + sum over ci < c_in / groups, ky < kh, kx < kw of
         x[n, g * c_in/groups + ci, oy * stride[0] - padding[0] + ky * dilation[0],
                                    ox * stride[1] - padding[1] + kx * dilation[1]] * w[co, ci, ky, kx]

   where g = co / (c_out / groups). Positions outside the input read as zero, so padding[] is the
   padding before each spatial dimension; the padding after it is implied by out_size.
   x_shape = (n, c_in, h, w) and w_shape = (c_out, c_in / groups, kh, kw); strides in elements, any
   non-negative values (0 broadcasts). bias: c_out values `bias_stride` elements apart, or address 0
   for no bias. out: a contiguous (n, c_out, out_size[0], out_size[1]) buffer, written entirely.
   x, weight, bias and out are all of `dtype`, a float dtype (float16 is computed in float).
   Fails with TT_ERR_INVALID_ARG on inconsistent shapes (groups not dividing the channels, stride or
   dilation < 1, negative padding or sizes), TT_ERR_UNSUPPORTED_DTYPE for a non-float dtype,
   TT_ERR_NOMEM when scratch memory cannot be had. Borrows everything. */
tt_status tt_conv2d(int dtype,
                    const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                    const int64_t *w_shape, uintptr_t weight, const int64_t *w_strides,
                    uintptr_t bias, int64_t bias_stride,
                    const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                    int64_t groups, const int64_t *out_size, uintptr_t out);
