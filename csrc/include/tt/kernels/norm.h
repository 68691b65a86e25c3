/*
 * kernels/norm.h: batch normalization, forward and backward, in one pass per step over a
 * contiguous (n, c, s) input (csrc/src/kernels/norm.c). s is the product of the spatial sizes
 * (1 for an (N, C) input). Autograd used to build these from a dozen elementwise and reduction
 * ops each; one call replaces them (see docs/performance_dispatch.md).
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. C sources include it after
 * "tt/tt.h".
 *
 * Common to both functions: dtype is TT_FLOAT32 or TT_FLOAT64 (else TT_ERR_UNSUPPORTED_DTYPE);
 * every address is of that dtype; the (n, c, s) tensors are contiguous in C order and the
 * per-channel ones are contiguous (c,) vectors. An optional address is 0 for "none". Per-channel
 * sums accumulate in double (float lanes of at most 32 values first, for float32). Channels are
 * split across threads (tt_parallel_for) when the call has enough work. Negative sizes, a NULL
 * required address or, in training, fewer than 2 values per channel give TT_ERR_INVALID_ARG;
 * sizes whose product overflows give TT_ERR_OVERFLOW.
 * Both borrow everything.
 */

/* y = x_hat * weight + bias with x_hat = (x - mean) * invstd, per channel, invstd = 1 /
   sqrt(var + eps).
   training = 1: mean and var are the channel's mean and biased variance over its n * s values;
   then running_mean = (1 - momentum) * running_mean + momentum * mean and running_var likewise
   with the unbiased variance (each updated in place when given).
   training = 0: mean and var are running_mean and running_var (both required).
   weight and bias are optional (1 and 0). x_hat (n, c, s), save_mean and save_invstd (c,) are
   optional outputs; y is required. y and x_hat must not overlap x or each other. */
tt_status tt_batch_norm_forward(int dtype, int64_t n, int64_t c, int64_t s, uintptr_t x, int training,
                                double momentum, double eps, uintptr_t running_mean, uintptr_t running_var,
                                uintptr_t weight, uintptr_t bias, uintptr_t y, uintptr_t x_hat,
                                uintptr_t save_mean, uintptr_t save_invstd);

/* The gradients of tt_batch_norm_forward from dy (n, c, s) and the saved x_hat and invstd (c,):
   with M = n * s, sum_dy and sum_dy_xhat per channel,
   dbias = sum_dy, dweight = sum_dy_xhat (each written when its address is given);
   dx = weight * invstd * (dy - sum_dy / M - x_hat * sum_dy_xhat / M) when training (the
   statistics depend on x), weight * invstd * dy otherwise (weight optional: 1). dx is optional
   and may be exactly dy (in place); it must not overlap x_hat. x_hat is not read when neither
   training nor dweight needs it (it may then be 0). */
tt_status tt_batch_norm_backward(int dtype, int64_t n, int64_t c, int64_t s, uintptr_t dy, uintptr_t x_hat,
                                 uintptr_t invstd, uintptr_t weight, int training, uintptr_t dx,
                                 uintptr_t dweight, uintptr_t dbias);

/* Layer normalization of `rows` contiguous rows of `cols` values (cols >= 1 when rows > 0, else
   TT_ERR_INVALID_ARG): per row, mean and invstd = 1 / sqrt(var + eps) with the biased variance
   (two-pass; summed as the batch-norm sums are: lanes of the element type over blocks of 512,
   the blocks in double), then y = (x - mean) * invstd * weight + bias in the element
   type, with weight and bias optional contiguous (cols,) vectors (1 and 0). save_mean and
   save_invstd (rows,) are optional outputs (the mean and invstd rounded to the dtype, which is
   what the backward takes). y must not overlap x. Rows are split across threads. Borrows
   everything. */
tt_status tt_layer_norm_forward(int dtype, int64_t rows, int64_t cols, uintptr_t x, double eps, uintptr_t weight,
                                uintptr_t bias, uintptr_t y, uintptr_t save_mean, uintptr_t save_invstd);

/* The gradients of tt_layer_norm_forward from dy (rows, cols), x, and the saved mean and invstd
   (rows,): with x_hat = (x - mean) * invstd and g = dy * weight (weight optional: 1),
   dx = invstd * (g - mean(g) - x_hat * mean(g * x_hat)), means over the row;
   dweight = sum over rows of dy * x_hat, dbias = sum over rows of dy (each written when its
   address is given; summed in double in blocks of 32 rows added in order, so the result is the
   same on any thread count). dx is optional and may be exactly dy (in place); it must not overlap
   x. TT_ERR_NOMEM when the column sums' scratch cannot be allocated. Borrows everything. */
tt_status tt_layer_norm_backward(int dtype, int64_t rows, int64_t cols, uintptr_t dy, uintptr_t x, uintptr_t mean,
                                 uintptr_t invstd, uintptr_t weight, uintptr_t dx, uintptr_t dweight,
                                 uintptr_t dbias);
