/*
 * kernels/fused.h: a fused chain of elementwise float ops, evaluated in one pass over memory
 * (csrc/src/kernels/fused.c). The program comes from t_tensor/graph/fused_expr.py, which parses
 * an expression such as "relu(add(mul(@0,@1),@2))" into postfix instructions.
 *
 * Read verbatim by cffi after tt_api.h: plain declarations only. C sources include it after
 * "tt/tt.h".
 *
 * A program is `ninstr` instructions (opcodes[k], args[k]) run on a stack machine:
 *   TT_FUSED_LOAD   pushes input args[k] (0 <= args[k] < ninputs)
 *   TT_FUSED_CONST  pushes constants[args[k]] (0 <= args[k] < nconstants), rounded to the dtype
 *   a unary op      pops x, pushes op(x)
 *   a binary op     pops b, then a, pushes op(a, b)
 * A valid program never pops an empty stack, never holds more than TT_FUSED_MAX_DEPTH values and
 * ends with exactly one value: the result. args[k] is ignored for the ops. Every op computes as
 * the unfused kernel of tt_unary / tt_binary does for the same dtype (float32 exp, log, tanh,
 * sigmoid, erf, gelu and silu through the same vectorized functions), so fused and unfused
 * results agree.
 */

typedef enum tt_fused_opcode {
    TT_FUSED_LOAD, TT_FUSED_CONST,
    /* unary */
    TT_FUSED_NEG, TT_FUSED_ABS, TT_FUSED_SQUARE, TT_FUSED_RELU, TT_FUSED_EXP, TT_FUSED_LOG,
    TT_FUSED_SQRT, TT_FUSED_RSQRT, TT_FUSED_RECIPROCAL, TT_FUSED_TANH, TT_FUSED_SIGMOID,
    TT_FUSED_ERF, TT_FUSED_GELU, TT_FUSED_SILU,
    /* binary */
    TT_FUSED_ADD, TT_FUSED_SUB, TT_FUSED_MUL, TT_FUSED_DIV, TT_FUSED_MAXIMUM, TT_FUSED_MINIMUM,
    TT_FUSED_POW,
    TT_FUSED_NUM_OPCODES
} tt_fused_opcode;

/* Limits of one program: inputs, stack depth, instructions, constants. */
typedef enum tt_fused_limits {
    TT_FUSED_MAX_INPUTS = 64,
    TT_FUSED_MAX_DEPTH = 64,
    TT_FUSED_MAX_INSTRUCTIONS = 4096,
    TT_FUSED_MAX_CONSTANTS = 4096
} tt_fused_limits;

/* Checks a program (see above) for `ninputs` inputs and `nconstants` constants: opcode range,
   operand indices, stack underflow, depth and a single result. On success writes the largest
   stack depth the program reaches into *depth (may be NULL). Returns TT_ERR_INVALID_ARG for a bad
   program or a NULL array where ninstr > 0, TT_OK otherwise. Borrows everything. */
tt_status tt_fused_check(int ninstr, const int32_t *opcodes, const int32_t *args, int ninputs, int nconstants,
                         int *depth);

/* out[i] = program(inputs[0][i], ..., inputs[ninputs-1][i]) over `shape` (ndim dims), for dtype
   TT_FLOAT32 or TT_FLOAT64 (any other gives TT_ERR_UNSUPPORTED_DTYPE); every input and out are of
   that dtype. inputs[j] is the address of input j's element (0, ..., 0) and
   input_strides[j * ndim + d] its stride along dimension d in elements (0 broadcasts; never
   negative). out is contiguous (C order); it may be exactly an input that is contiguous over
   `shape` (same address: in place, each element is read before it is written), and must not
   overlap any input otherwise. The program is checked first (tt_fused_check). Elements are
   processed in blocks: each block of every non-contiguous input is gathered into a small buffer,
   then every instruction runs as one loop over the block, and the last one writes into out; no
   intermediate ever reaches memory beyond the block buffers.
   Large shapes are split across threads (tt_parallel_for). Returns TT_ERR_INVALID_ARG for a bad
   program, size, stride or NULL address, TT_ERR_OVERFLOW for a shape of more than 2**54 elements,
   TT_ERR_NOMEM when a block workspace cannot be allocated. Borrows everything. */
tt_status tt_fused_eval(int ninstr, const int32_t *opcodes, const int32_t *args, const double *constants,
                        int nconstants, int ninputs, const uintptr_t *inputs, const int64_t *input_strides,
                        int ndim, const int64_t *shape, uintptr_t out, int dtype);
