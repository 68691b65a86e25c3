/*
 * kernels/optim.h: optimizer updates in one pass over memory (csrc/src/kernels/optim.c).
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. C sources include it after
 * "tt/tt.h".
 */

/* One torch.optim.SGD update of n contiguous parameters, in place, element by element:

       d = maximize ? -grad : grad
       d = d + weight_decay * param                     (when weight_decay != 0)
       buf = first ? d : buf * momentum + (1 - dampening) * d      (when momentum != 0)
       d = nesterov ? d + momentum * buf : buf          (when momentum != 0)
       param = param + (-lr) * d

   with every product rounded before its sum (no fused multiply-add): the bits are those of the
   separate tensor ops t_tensor.optim.SGD runs otherwise (buf.mul_(momentum).add_(d, alpha=...),
   param.add_(d, alpha=-lr)). param, grad and buf (NULL when momentum == 0) are arrays of n
   elements of `dtype` (float32 or float64, else TT_ERR_UNSUPPORTED_DTYPE), in compute order
   with no partial overlap between param and the others; grad is only read. Over 32K elements the
   work is split between threads. A negative n, or a NULL with work to do, gives
   TT_ERR_INVALID_ARG. Borrows everything. */
tt_status tt_sgd_update(int dtype, int64_t n, uintptr_t param, uintptr_t grad, uintptr_t buf, double lr,
                        double momentum, double dampening, double weight_decay, int nesterov, int maximize,
                        int first);
