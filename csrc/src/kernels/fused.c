/*
 * fused.c: a chain of elementwise float ops run as one kernel, in one pass over memory.
 *
 * The program (kernels/fused.h) is a postfix list of instructions for a stack machine. Run
 * element by element it would pay an instruction dispatch per element and op; run op by op over
 * the whole tensor it would write every intermediate to memory (what the unfused ops do). The
 * middle way used here: the elements are cut into blocks of FUSED_BLOCK. For each block, every
 * instruction runs as one tight loop over the block, on a stack of block-sized buffers that stays
 * in L1 (depth x FUSED_BLOCK elements). Only the inputs are read from memory and only the result is
 * written: the last instruction stores straight into the output.
 *
 * Inputs. The shape is simplified first (size-1 dimensions dropped, dimensions merged where every
 * input is contiguous across them, as in strided_iter.h; the output is contiguous so it always
 * merges). An input laid out contiguously over the simplified shape is used in place: LOAD pushes
 * a pointer into it. Any other input (broadcast, transposed, sliced) is gathered into the stack
 * slot by LOAD, walking its strides from the block's first multi-index. tt_iter is not used: it
 * takes at most TT_ITER_MAX_OPERANDS (4) operands and a fused group easily has more inputs.
 *
 * Types. float32 computes in float, float64 in double, with the same expressions as
 * elementwise_rows.h (<tgmath.h> picks expf or exp by type); float32 exp, log, tanh, sigmoid, erf,
 * gelu and silu call the vectorized functions of vmath.c, and float64 exp, log, tanh, sigmoid and
 * silu those of wide_math.h, as tt_unary does, so a fused chain gives the same values as the chain
 * of unfused ops.
 *
 * Threads. Blocks are independent: large shapes split the block range with tt_parallel_for;
 * every chunk allocates its own stack of buffers.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "tt/tt.h"
#include "tt/kernels/fused.h"
#include "tt/kernels/parallel.h"
#include "vmath.h"
#include "wide_math.h"

/* Elements per block: 512 float64 = 4 KB per stack slot. */
#define FUSED_BLOCK 512
/* Blocks per thread chunk below which splitting is not worth it (64 blocks = 32K elements). */
#define FUSED_GRAIN_BLOCKS 64

static int is_unary(int op) { return op >= TT_FUSED_NEG && op <= TT_FUSED_SILU; }
static int is_binary(int op) { return op >= TT_FUSED_ADD && op <= TT_FUSED_POW; }

tt_status tt_fused_check(int ninstr, const int32_t *opcodes, const int32_t *args, int ninputs, int nconstants,
                         int *depth) {
    if (ninstr < 1 || ninstr > TT_FUSED_MAX_INSTRUCTIONS || opcodes == NULL || args == NULL || ninputs < 0 ||
        ninputs > TT_FUSED_MAX_INPUTS || nconstants < 0 || nconstants > TT_FUSED_MAX_CONSTANTS) {
        return TT_ERR_INVALID_ARG;
    }
    int height = 0, highest = 0;
    for (int k = 0; k < ninstr; k++) {
        int op = opcodes[k];
        if (op == TT_FUSED_LOAD || op == TT_FUSED_CONST) {
            int limit = op == TT_FUSED_LOAD ? ninputs : nconstants;
            if (args[k] < 0 || args[k] >= limit) {
                return TT_ERR_INVALID_ARG;
            }
            height++;
        } else if (is_unary(op)) {
            if (height < 1) {
                return TT_ERR_INVALID_ARG;
            }
        } else if (is_binary(op)) {
            if (height < 2) {
                return TT_ERR_INVALID_ARG;
            }
            height--;
        } else {
            return TT_ERR_INVALID_ARG;
        }
        if (height > TT_FUSED_MAX_DEPTH) {
            return TT_ERR_INVALID_ARG;
        }
        highest = height > highest ? height : highest;
    }
    if (height != 1) {
        return TT_ERR_INVALID_ARG;
    }
    if (depth != NULL) {
        *depth = highest;
    }
    return TT_OK;
}

/* ------------------------------------------------------------------ the plan */

/* Everything a chunk of blocks needs; shared read-only by the threads except `error`. */
typedef struct fused_plan {
    int ninstr;
    const int32_t *opcodes, *args;
    const double *constants;
    int ninputs, depth, ndim;
    int64_t numel, nblocks;
    int64_t shape[TT_MAX_DIMS];                          /* simplified */
    int64_t *strides;       /* simplified, in elements: input j's at strides + j * TT_MAX_DIMS */
    const char *base[TT_FUSED_MAX_INPUTS];
    int contiguous[TT_FUSED_MAX_INPUTS];                 /* used in place by LOAD */
    char *out;
    size_t itemsize;
    int dtype;
    atomic_int error;
} fused_plan;

#define STRIDES(plan, j) ((plan)->strides + (size_t)(j) * TT_MAX_DIMS)

/* Drops size-1 dimensions and merges neighbours that every input walks contiguously. Leaves at
   least one dimension (a 0-d shape becomes [1]). Returns the element count. */
static int64_t simplify(fused_plan *plan, int ndim, const int64_t *shape, const int64_t *input_strides) {
    int nd = 0;
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        numel *= shape[d];
        if (shape[d] == 1) {
            continue;
        }
        int merge = nd > 0;
        for (int j = 0; j < plan->ninputs && merge; j++) {
            merge = STRIDES(plan, j)[nd - 1] == input_strides[(size_t)j * (size_t)ndim + (size_t)d] * shape[d];
        }
        if (merge) {
            plan->shape[nd - 1] *= shape[d];
            for (int j = 0; j < plan->ninputs; j++) {
                STRIDES(plan, j)[nd - 1] = input_strides[(size_t)j * (size_t)ndim + (size_t)d];
            }
        } else {
            plan->shape[nd] = shape[d];
            for (int j = 0; j < plan->ninputs; j++) {
                STRIDES(plan, j)[nd] = input_strides[(size_t)j * (size_t)ndim + (size_t)d];
            }
            nd++;
        }
    }
    if (nd == 0) {
        plan->shape[0] = 1;
        for (int j = 0; j < plan->ninputs; j++) {
            STRIDES(plan, j)[0] = 0;
        }
        nd = 1;
    }
    plan->ndim = nd;
    for (int j = 0; j < plan->ninputs; j++) {
        int64_t expected = 1;
        int contiguous = 1;
        for (int d = nd - 1; d >= 0; d--) {
            contiguous &= STRIDES(plan, j)[d] == expected;
            expected *= plan->shape[d];
        }
        plan->contiguous[j] = contiguous;
    }
    return numel;
}

/* ------------------------------------------------------------------ per-type machinery */

/* float32 transcendental ops through vmath.c, float64 exp, log, tanh, sigmoid, silu, erf and gelu
   through wide_math.h: the functions tt_unary uses, so fused and eager results are the same bits. */
static inline void vexp_float(const float *x, float *y, int64_t n) { tt_vexp_f32(x, y, n); }
static inline void vlog_float(const float *x, float *y, int64_t n) { tt_vlog_f32(x, y, n); }
static inline void vtanh_float(const float *x, float *y, int64_t n) { tt_vtanh_f32(x, y, n); }
static inline void vsigmoid_float(const float *x, float *y, int64_t n) { tt_vsigmoid_f32(x, y, n); }
static inline void verf_float(const float *x, float *y, int64_t n) { tt_verf_f32(x, y, n); }
static inline void vgelu_float(const float *x, float *y, int64_t n) { tt_vgelu_f32(x, y, n); }
static inline void vsilu_float(const float *x, float *y, int64_t n) { tt_vsilu_f32(x, y, n); }

#define DOUBLE_LOOP(NAME, EXPR)                                              \
    static inline void NAME##_double(const double *x, double *y, int64_t n) { \
        for (int64_t i = 0; i < n; i++) {                                    \
            double v = x[i];                                                 \
            y[i] = (EXPR);                                                   \
        }                                                                    \
    }
DOUBLE_LOOP(vexp, wide_exp(v))
DOUBLE_LOOP(vlog, wide_log(v))
DOUBLE_LOOP(vtanh, wide_tanh(v))
DOUBLE_LOOP(vsigmoid, 1 / (1 + wide_exp(-v)))
DOUBLE_LOOP(verf, wide_erf(v))
DOUBLE_LOOP(vgelu, v * 0.5 * (1 + wide_erf(v * 0.70710678118654752440)))
DOUBLE_LOOP(vsilu, v / (1 + wide_exp(-v)))

/* Copies n elements of an input, from multi-index `start` of the simplified shape, into dst. */
#define DEFINE_GATHER(T)                                                                                    \
    static void gather_##T(T *dst, const fused_plan *plan, int j, const int64_t *start, int64_t n) {        \
        const int64_t *st = STRIDES(plan, j);                                                               \
        const T *src = (const T *)plan->base[j];                                                            \
        const int last = plan->ndim - 1;                                                                    \
        int64_t idx[TT_MAX_DIMS];                                                                           \
        int64_t off = 0;                                                                                    \
        for (int d = 0; d <= last; d++) {                                                                   \
            idx[d] = start[d];                                                                              \
            off += idx[d] * st[d];                                                                          \
        }                                                                                                   \
        int64_t done = 0;                                                                                   \
        while (done < n) {                                                                                  \
            int64_t run = plan->shape[last] - idx[last];                                                    \
            run = run < n - done ? run : n - done;                                                          \
            const int64_t s = st[last];                                                                     \
            if (s == 0) {                                                                                   \
                const T v = src[off];                                                                       \
                for (int64_t i = 0; i < run; i++) dst[done + i] = v;                                        \
            } else if (s == 1) {                                                                            \
                memcpy(dst + done, src + off, (size_t)run * sizeof(T));                                     \
            } else {                                                                                        \
                for (int64_t i = 0; i < run; i++) dst[done + i] = src[off + i * s];                         \
            }                                                                                               \
            done += run;                                                                                    \
            off += run * s;                                                                                 \
            idx[last] += run;                                                                               \
            for (int d = last; d > 0 && idx[d] == plan->shape[d]; d--) {                                    \
                off += st[d - 1] - idx[d] * st[d];                                                          \
                idx[d] = 0;                                                                                 \
                idx[d - 1]++;                                                                               \
            }                                                                                               \
        }                                                                                                   \
    }

#define UNARY(EXPR)                        \
    for (int64_t i = 0; i < n; i++) {      \
        __typeof__(*dst) x = a[i];         \
        dst[i] = (EXPR);                   \
    }                                      \
    break
#define BINARY(EXPR)                       \
    for (int64_t i = 0; i < n; i++) {      \
        __typeof__(*dst) x = a[i], y = b[i]; \
        dst[i] = (EXPR);                   \
    }                                      \
    break

/* Runs the program over the block of n elements starting at linear index `first` (multi-index
   `start`), writing the result to out_block. slots[p] is stack slot p's buffer. */
#define DEFINE_RUN_BLOCK(T)                                                                                  \
    DEFINE_GATHER(T)                                                                                         \
    static void run_block_##T(const fused_plan *plan, T **slots, int64_t first, const int64_t *start,       \
                              int64_t n, T *out_block) {                                                     \
        const T *value[TT_FUSED_MAX_DEPTH];                                                                  \
        int top = 0; /* number of values on the stack */                                                     \
        for (int k = 0; k < plan->ninstr; k++) {                                                             \
            const int op = plan->opcodes[k];                                                                 \
            if (op == TT_FUSED_LOAD) {                                                                       \
                const int j = plan->args[k];                                                                 \
                if (plan->contiguous[j]) {                                                                   \
                    value[top] = (const T *)plan->base[j] + first;                                           \
                } else {                                                                                     \
                    gather_##T(slots[top], plan, j, start, n);                                               \
                    value[top] = slots[top];                                                                 \
                }                                                                                            \
                top++;                                                                                       \
                continue;                                                                                    \
            }                                                                                                \
            if (op == TT_FUSED_CONST) {                                                                      \
                const T c = (T)plan->constants[plan->args[k]];                                               \
                for (int64_t i = 0; i < n; i++) slots[top][i] = c;                                           \
                value[top] = slots[top];                                                                     \
                top++;                                                                                       \
                continue;                                                                                    \
            }                                                                                                \
            const int binary = is_binary(op);                                                                \
            const int p = top - 1 - binary; /* the result replaces the first operand */                     \
            const T *a = value[p];                                                                           \
            const T *b = binary ? value[p + 1] : a;                                                          \
            T *dst = k == plan->ninstr - 1 ? out_block : slots[p];                                           \
            switch (op) {                                                                                    \
            case TT_FUSED_NEG: UNARY(-x);                                                                    \
            case TT_FUSED_ABS: UNARY(fabs(x));                                                               \
            case TT_FUSED_SQUARE: UNARY(x * x);                                                              \
            case TT_FUSED_RELU: UNARY((isnan(x) || x > 0) ? x : (T)0);                                       \
            case TT_FUSED_SQRT: UNARY(sqrt(x));                                                              \
            case TT_FUSED_RSQRT: UNARY(1 / sqrt(x));                                                         \
            case TT_FUSED_RECIPROCAL: UNARY(1 / x);                                                          \
            case TT_FUSED_EXP: vexp_##T(a, dst, n); break;                                                   \
            case TT_FUSED_LOG: vlog_##T(a, dst, n); break;                                                   \
            case TT_FUSED_TANH: vtanh_##T(a, dst, n); break;                                                 \
            case TT_FUSED_SIGMOID: vsigmoid_##T(a, dst, n); break;                                           \
            case TT_FUSED_ERF: verf_##T(a, dst, n); break;                                                   \
            case TT_FUSED_GELU: vgelu_##T(a, dst, n); break;                                                 \
            case TT_FUSED_SILU: vsilu_##T(a, dst, n); break;                                                 \
            case TT_FUSED_ADD: BINARY(x + y);                                                                \
            case TT_FUSED_SUB: BINARY(x - y);                                                                \
            case TT_FUSED_MUL: BINARY(x * y);                                                                \
            case TT_FUSED_DIV: BINARY(x / y);                                                                \
            case TT_FUSED_MAXIMUM: BINARY(isnan(x) ? x : isnan(y) ? y : x > y ? x : y);                      \
            case TT_FUSED_MINIMUM: BINARY(isnan(x) ? x : isnan(y) ? y : x < y ? x : y);                      \
            case TT_FUSED_POW: BINARY(pow(x, y));                                                            \
            default: break; /* unreachable: the program was checked */                                       \
            }                                                                                                \
            value[p] = dst;                                                                                  \
            top = p + 1;                                                                                     \
        }                                                                                                    \
        if (value[0] != out_block) { /* the program ended with a LOAD or CONST */                           \
            memcpy(out_block, value[0], (size_t)n * sizeof(T));                                              \
        }                                                                                                    \
    }

DEFINE_RUN_BLOCK(float)
DEFINE_RUN_BLOCK(double)

/* Blocks [begin, end) of the plan: one workspace (depth slots of FUSED_BLOCK elements) per chunk. */
static void fused_chunk(int64_t begin, int64_t end, void *arg) {
    fused_plan *plan = arg;
    const size_t slot_bytes = (size_t)FUSED_BLOCK * plan->itemsize;
    char *workspace = aligned_alloc(64, (size_t)plan->depth * slot_bytes);
    if (workspace == NULL) {
        atomic_store_explicit(&plan->error, (int)TT_ERR_NOMEM, memory_order_relaxed);
        return;
    }
    void *slots[TT_FUSED_MAX_DEPTH];
    for (int p = 0; p < plan->depth; p++) {
        slots[p] = workspace + (size_t)p * slot_bytes;
    }
    int64_t start[TT_MAX_DIMS];
    for (int64_t blk = begin; blk < end; blk++) {
        const int64_t first = blk * FUSED_BLOCK;
        int64_t n = plan->numel - first;
        n = n < FUSED_BLOCK ? n : FUSED_BLOCK;
        int64_t rest = first;
        for (int d = plan->ndim - 1; d >= 0; d--) {
            start[d] = rest % plan->shape[d];
            rest /= plan->shape[d];
        }
        if (plan->dtype == TT_FLOAT32) {
            run_block_float(plan, (float **)slots, first, start, n, (float *)plan->out + first);
        } else {
            run_block_double(plan, (double **)slots, first, start, n, (double *)plan->out + first);
        }
    }
    free(workspace);
}

tt_status tt_fused_eval(int ninstr, const int32_t *opcodes, const int32_t *args, const double *constants,
                        int nconstants, int ninputs, const uintptr_t *inputs, const int64_t *input_strides,
                        int ndim, const int64_t *shape, uintptr_t out, int dtype) {
    int depth = 0;
    tt_status status = tt_fused_check(ninstr, opcodes, args, ninputs, nconstants, &depth);
    if (status != TT_OK) {
        return status;
    }
    if (dtype != TT_FLOAT32 && dtype != TT_FLOAT64) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (ndim < 0 || ndim > TT_MAX_DIMS || (ndim > 0 && shape == NULL) || (nconstants > 0 && constants == NULL) ||
        (ninputs > 0 && (inputs == NULL || (ndim > 0 && input_strides == NULL)))) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (shape[d] == 0) {
            return TT_OK; /* nothing to compute */
        }
        if (numel > INT64_MAX / FUSED_BLOCK / shape[d]) {
            return TT_ERR_OVERFLOW; /* the block arithmetic must not overflow */
        }
        numel *= shape[d];
    }
    for (int j = 0; j < ninputs; j++) {
        if (inputs[j] == 0) {
            return TT_ERR_INVALID_ARG;
        }
        for (int d = 0; d < ndim; d++) {
            if (input_strides[(size_t)j * (size_t)ndim + (size_t)d] < 0) {
                return TT_ERR_INVALID_ARG;
            }
        }
    }
    if (out == 0) {
        return TT_ERR_INVALID_ARG;
    }
    /* The plan lives on this stack frame (the workers only borrow it during tt_parallel_for);
       its strides are allocated for the inputs there are. */
    fused_plan plan_storage;
    fused_plan *plan = &plan_storage;
    plan->strides = ninputs > 0 ? malloc((size_t)ninputs * TT_MAX_DIMS * sizeof(int64_t)) : NULL;
    if (ninputs > 0 && plan->strides == NULL) {
        return TT_ERR_NOMEM;
    }
    plan->ninstr = ninstr;
    plan->opcodes = opcodes;
    plan->args = args;
    plan->constants = constants;
    plan->ninputs = ninputs;
    plan->depth = depth;
    plan->out = (char *)out;
    plan->dtype = dtype;
    plan->itemsize = tt_dtype_itemsize(dtype);
    for (int j = 0; j < ninputs; j++) {
        plan->base[j] = (const char *)inputs[j];
    }
    plan->numel = simplify(plan, ndim, shape, input_strides);
    plan->nblocks = (plan->numel + FUSED_BLOCK - 1) / FUSED_BLOCK;
    atomic_init(&plan->error, (int)TT_OK);
    if (plan->nblocks <= FUSED_GRAIN_BLOCKS) {
        fused_chunk(0, plan->nblocks, plan); /* small: skip tt_parallel_for (it asks the CPU count) */
    } else {
        tt_parallel_for(plan->nblocks, FUSED_GRAIN_BLOCKS, fused_chunk, plan);
    }
    status = (tt_status)atomic_load_explicit(&plan->error, memory_order_relaxed);
    free(plan->strides);
    return status;
}
