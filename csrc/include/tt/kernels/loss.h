/*
 * kernels/loss.h: the class-index cross-entropy's pick and gradient (csrc/src/kernels/loss.c).
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. C sources include it after
 * "tt/tt.h".
 *
 * nn.functional.cross_entropy of logits (n, c) and int64 class indices (n,) (no class weights,
 * no label smoothing, no target equal to ignore_index) takes the log_softmax from tt_softmax and
 * then these two: the pick and reduction of the loss, and the gradient with respect to the logits.
 * Both take float32 or float64 (TT_ERR_UNSUPPORTED_DTYPE otherwise) and strides in elements.
 */

/* loss[i] = -logp[i, target[i]] for i < n, where logp (n x c) has strides (rs, cs) and target
   (n int64) has stride ts. reduction 0 ("none") writes the n losses to out (contiguous, logp's
   dtype); 1 ("sum") writes their sum and 2 ("mean") their sum / n to out[0], summed in double in
   row order and rounded once. n == 0 writes nothing for "none", 0 for "sum" and NaN for "mean"
   (PyTorch's empty mean). A target outside [0, c) gives TT_ERR_INDEX (out may be partly written);
   a negative size or stride, a bad reduction or a NULL with work to do, TT_ERR_INVALID_ARG.
   Borrows everything. */
tt_status tt_nll_pick(int dtype, int64_t n, int64_t c, uintptr_t logp, int64_t rs, int64_t cs,
                      uintptr_t target, int64_t ts, int reduction, uintptr_t out);

/* The gradient of the cross-entropy with respect to the logits, from the saved log_softmax:

       out[i, j] = (exp(logp[i, j]) - (j == target[i] ? 1 : 0)) * (grad[i * gs] / divisor)

   logp and out are contiguous (n x c) of one dtype, target n int64 with stride ts, grad in logp's
   dtype with stride gs (0: one value for every row, the "sum" and "mean" reductions; divisor is n
   for "mean", else 1). The factor grad / divisor is rounded to the dtype first, as the composite
   `diff * (grad / n)` does. float32 exponentials use the vectorized exp of tt_unary. Work over
   32K elements is split over rows between threads. out must not overlap logp. Same errors as
   tt_nll_pick (divisor must be positive). Borrows everything. */
tt_status tt_cross_entropy_backward(int dtype, int64_t n, int64_t c, uintptr_t logp, uintptr_t target, int64_t ts,
                                    uintptr_t grad, int64_t gs, double divisor, uintptr_t out);
