/*
 * kernels/pool.h: pooling and resampling over (N, C) planes (csrc/src/kernels/pool.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 *
 * Common to every function here: the input is x_shape = (n, c, h, w) with strides in elements
 * (any non-negative values); the output `out` (and `indices`, int64, when given) is a contiguous
 * (n, c, out_size[0], out_size[1]) buffer of `dtype`, written entirely; dtype is a float dtype
 * (float16 is computed in float), else TT_ERR_UNSUPPORTED_DTYPE. 1-D operations are the case
 * h = 1. Inconsistent arguments give TT_ERR_INVALID_ARG. All borrow everything.
 */

/* Max pooling: out[.., oy, ox] = max of x[.., oy*stride[0] - padding[0] + ky*dilation[0],
   ox*stride[1] - padding[1] + kx*dilation[1]] over ky < kernel[0], kx < kernel[1], positions inside
   the input only. NaN wins (the last NaN of the window), ties keep the first maximum. indices
   (address 0 for none) receive the flat index iy * w + ix of the chosen element. A window with
   no element inside the input gives -inf and the index of its clamped start. */
tt_status tt_max_pool2d(int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                        const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                        const int64_t *dilation, const int64_t *out_size, uintptr_t out, uintptr_t indices);

/* Average pooling, PyTorch's rule: the window [oy*s - p, oy*s - p + k) is first cut at the padded
   edge (h + p), its size then is the divisor when count_include_pad, and is cut again to the input
   for the sum (and for the divisor when not count_include_pad). divisor_override > 0 replaces the
   divisor. A window with no element inside the input gives 0. */
tt_status tt_avg_pool2d(int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                        const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                        int count_include_pad, int64_t divisor_override,
                        const int64_t *out_size, uintptr_t out);

/* Adaptive pooling: output row oy covers input rows [floor(oy*h/oh), ceil((oy+1)*h/oh)), and the
   same for columns. max = 0: the mean of the window; max = 1: its maximum (NaN wins, as in
   tt_max_pool2d), with the flat index into `indices` when that is not 0. Needs h, w >= 1 when the
   output is not empty. */
tt_status tt_adaptive_pool2d(int max, int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                             const int64_t *out_size, uintptr_t out, uintptr_t indices);

/* Resampling to out_size, PyTorch's upsample kernels. scales[d] > 0 is the user's scale factor
   for dimension d (its reciprocal maps output to input coordinates), else in/out sizes are used.
   bilinear = 0: nearest, source index min(floor(dst * scale), in - 1) in float arithmetic (with
   PyTorch's shortcuts for out == in and out == 2 * in when no scale is given). bilinear = 1: linear in each dimension,
   align_corners as PyTorch (align_corners = 1: scale (in - 1) / (out - 1)). h, w >= 1. */
tt_status tt_interpolate2d(int bilinear, int dtype, const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                           const int64_t *out_size, const double *scales, int align_corners, uintptr_t out);
