/*
 * kernels/conv_backward.h: gradients of the 2-D convolution (csrc/src/kernels/conv_backward.c).
 *
 * Read verbatim by cffi after tt_api.h, so: plain declarations only, no #include, no #if.
 * C sources include it after "tt/tt.h".
 *
 * The forward is tt_conv2d (conv.h), whose notation this follows: x (n, c_in, h, w), weight
 * (c_out, c_in / groups, kh, kw), grad_out (n, c_out, oh, ow) = dL/d out; stride, padding (before
 * each dimension) and dilation as given to tt_conv2d. conv1d is the case h = kh = 1. Inputs are
 * read through any non-negative strides (in elements); results are contiguous buffers, written
 * entirely. All tensors have `dtype`, a float dtype (float16 is computed in float), else
 * TT_ERR_UNSUPPORTED_DTYPE. Inconsistent shapes (channels not matching, groups not dividing them,
 * stride or dilation < 1, negative sizes or padding) give TT_ERR_INVALID_ARG, sizes whose products
 * overflow TT_ERR_OVERFLOW, failed scratch allocations TT_ERR_NOMEM. Both borrow everything.
 */

/* dL/dx, a transposed convolution: for each image and group, col = w_group^T @ grad_out_group
   (a matrix product), then col2im adds every column entry back onto the input position it was
   read from (entries falling in the padding are dropped). in_size = (h, w) of the input;
   grad_input: a contiguous (n, c_in, h, w) buffer. */
tt_status tt_conv2d_backward_input(int dtype,
                                   const int64_t *gy_shape, uintptr_t grad_out, const int64_t *gy_strides,
                                   const int64_t *w_shape, uintptr_t weight, const int64_t *w_strides,
                                   const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                   int64_t groups, const int64_t *x_shape, uintptr_t grad_input);

/* dL/dweight: for each group, the sum over the images of grad_out_group @ im2col(x_group)^T.
   w_shape = (c_out, c_in / groups, kh, kw); grad_weight: a contiguous buffer of that shape.
   The bias gradient (a plain sum of grad_out) is not computed here. */
tt_status tt_conv2d_backward_weight(int dtype,
                                    const int64_t *x_shape, uintptr_t x, const int64_t *x_strides,
                                    const int64_t *gy_shape, uintptr_t grad_out, const int64_t *gy_strides,
                                    const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                    int64_t groups, const int64_t *w_shape, uintptr_t grad_weight);

/* dL/dx of average pooling (tt_avg_pool2d, same window and divisor rules): every output
   gradient, divided by its window's divisor, is added to each input element of its window.
   gy_shape = (n, c, oh, ow); in_size = (h, w); grad_input: a contiguous (n, c, h, w) buffer.
   adaptive != 0: the windows and divisors of tt_adaptive_pool2d's mean instead (kernel, stride,
   padding, count_include_pad and divisor_override are then ignored and may be NULL / 0). */
tt_status tt_avg_pool2d_backward(int dtype, int adaptive,
                                 const int64_t *gy_shape, uintptr_t grad_out, const int64_t *gy_strides,
                                 const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                                 int count_include_pad, int64_t divisor_override,
                                 const int64_t *in_size, uintptr_t grad_input);

/* dL/dx of max pooling, from the indices tt_max_pool2d returned: grad_input, a contiguous
   (planes, plane_size) buffer, is zeroed, then each grad_out[p][o] is added at
   grad_input[p][indices[p][o]], outputs in order (as scatter_add would). grad_out and indices are
   contiguous (planes, outputs), indices int64. An index outside [0, plane_size) gives TT_ERR_INDEX
   (grad_input then holds partial sums). Float dtypes (float16 adds in float, rounding each sum).
   Planes are split across threads. Borrows everything. */
tt_status tt_max_pool_backward(int dtype, int64_t planes, int64_t plane_size, int64_t outputs,
                               uintptr_t grad_out, uintptr_t indices, uintptr_t grad_input);
