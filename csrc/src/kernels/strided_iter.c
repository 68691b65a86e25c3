/* strided_iter.c: see strided_iter.h for the idea. */
#include "strided_iter.h"
#include "tt/kernels/parallel.h"

static void swap_dims(tt_iter *iter, int a, int b) {
    int64_t size = iter->shape[a];
    iter->shape[a] = iter->shape[b];
    iter->shape[b] = size;
    for (int k = 0; k < iter->noperands; k++) {
        int64_t stride = iter->strides[k][a];
        iter->strides[k][a] = iter->strides[k][b];
        iter->strides[k][b] = stride;
    }
}

/* True when dim `a` should sit outside dim `b`: operand 0's stride decides, later operands
   break ties (a broadcast output dimension has stride 0 in no operand but the inputs). */
static int should_be_outer(const tt_iter *iter, int a, int b) {
    for (int k = 0; k < iter->noperands; k++) {
        if (iter->strides[k][a] != iter->strides[k][b]) {
            return iter->strides[k][a] > iter->strides[k][b];
        }
    }
    return 0;
}

tt_status tt_iter_init(tt_iter *iter, int ndim, const int64_t *shape, int noperands,
                       const int64_t *const *elem_strides, const size_t *itemsizes) {
    if (ndim < 0 || ndim > TT_MAX_DIMS || noperands < 1 || noperands > TT_ITER_MAX_OPERANDS) {
        return TT_ERR_INVALID_ARG;
    }
    iter->noperands = noperands;
    iter->numel = 1;
    /* An empty shape has nothing to visit, whatever its other sizes: stop before any product
       of sizes or strides is formed (an empty (2^62, 4, 0) tensor is valid, its products not). */
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        if (shape[d] == 0) {
            iter->numel = 0;
        }
    }
    if (iter->numel == 0) {
        iter->ndim = 1;
        iter->shape[0] = 0;
        return TT_OK;
    }
    int kept = 0;
    for (int d = 0; d < ndim; d++) {
        if (__builtin_mul_overflow(iter->numel, shape[d], &iter->numel)) {
            return TT_ERR_OVERFLOW;
        }
        if (shape[d] == 1) {
            continue;                                   /* step 1: drop size-1 dims */
        }
        iter->shape[kept] = shape[d];
        for (int k = 0; k < noperands; k++) {
            if (__builtin_mul_overflow(elem_strides[k][d], (int64_t)itemsizes[k], &iter->strides[k][kept])) {
                return TT_ERR_OVERFLOW;
            }
        }
        kept++;
    }
    /* Step 2: insertion sort, outermost (largest output stride) first. Stable, and ndim is
       small, so the simple sort is the right one. */
    iter->ndim = kept;
    for (int i = 1; i < kept; i++) {
        for (int j = i; j > 0 && should_be_outer(iter, j, j - 1); j--) {
            swap_dims(iter, j, j - 1);
        }
    }
    /* Step 3: merge dim d into dim d+1 when, for every operand, stepping once in d is the
       same as stepping shape[d+1] times in d+1. */
    int out = 0;
    for (int d = 1; d < kept; d++) {
        int mergeable = 1;
        for (int k = 0; k < noperands; k++) {
            int64_t span;   /* an overflowing product cannot equal a real stride: don't merge */
            if (__builtin_mul_overflow(iter->strides[k][d], iter->shape[d], &span) ||
                iter->strides[k][out] != span) {
                mergeable = 0;
                break;
            }
        }
        if (mergeable) {
            iter->shape[out] *= iter->shape[d];
            for (int k = 0; k < noperands; k++) {
                iter->strides[k][out] = iter->strides[k][d];
            }
        } else {
            out++;
            iter->shape[out] = iter->shape[d];
            for (int k = 0; k < noperands; k++) {
                iter->strides[k][out] = iter->strides[k][d];
            }
        }
    }
    iter->ndim = kept == 0 ? 1 : out + 1;
    if (kept == 0) {                                    /* a scalar (or all size-1): one row of 1 */
        iter->shape[0] = 1;
        for (int k = 0; k < noperands; k++) {
            iter->strides[k][0] = 0;
        }
    }
    return TT_OK;
}

void tt_iter_run(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx) {
    if (iter->numel == 0) {
        return;
    }
    const int inner = iter->ndim - 1;
    int64_t row_strides[TT_ITER_MAX_OPERANDS];
    char *data[TT_ITER_MAX_OPERANDS];
    for (int k = 0; k < iter->noperands; k++) {
        row_strides[k] = iter->strides[k][inner];
        data[k] = base[k];
    }
    int64_t counter[TT_MAX_DIMS] = {0};
    for (;;) {
        row_fn(data, row_strides, iter->shape[inner], ctx);
        /* Advance the outer counter like an odometer, fixing up each operand's address. */
        int d = inner - 1;
        for (; d >= 0; d--) {
            counter[d]++;
            for (int k = 0; k < iter->noperands; k++) {
                data[k] += iter->strides[k][d];
            }
            if (counter[d] < iter->shape[d]) {
                break;
            }
            for (int k = 0; k < iter->noperands; k++) {
                data[k] -= iter->strides[k][d] * iter->shape[d];
            }
            counter[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}

void tt_iter_run_range(const tt_iter *iter, char *const *base, tt_row_fn row_fn, void *ctx, int64_t begin,
                       int64_t end) {
    if (begin >= end || iter->numel == 0) {
        return;
    }
    const int inner = iter->ndim - 1;
    const int64_t row_len = iter->shape[inner];
    int64_t row_strides[TT_ITER_MAX_OPERANDS];
    char *data[TT_ITER_MAX_OPERANDS];       /* each operand's address of the current row's start */
    int64_t counter[TT_MAX_DIMS] = {0};
    int64_t offset = begin % row_len;       /* where in the first row to start */
    int64_t row = begin / row_len;
    for (int d = inner - 1; d >= 0; d--) {  /* the row index, as digits of the outer counter */
        counter[d] = row % iter->shape[d];
        row /= iter->shape[d];
    }
    for (int k = 0; k < iter->noperands; k++) {
        row_strides[k] = iter->strides[k][inner];
        data[k] = base[k];
        for (int d = 0; d < inner; d++) {
            data[k] += counter[d] * iter->strides[k][d];
        }
    }
    int64_t left = end - begin;
    for (;;) {
        const int64_t n = row_len - offset < left ? row_len - offset : left;
        char *start[TT_ITER_MAX_OPERANDS];
        for (int k = 0; k < iter->noperands; k++) {
            start[k] = data[k] + offset * row_strides[k];
        }
        row_fn(start, row_strides, n, ctx);
        left -= n;
        offset = 0;
        if (left == 0) {
            return;
        }
        for (int d = inner - 1; d >= 0; d--) {  /* the odometer of tt_iter_run */
            counter[d]++;
            for (int k = 0; k < iter->noperands; k++) {
                data[k] += iter->strides[k][d];
            }
            if (counter[d] < iter->shape[d]) {
                break;
            }
            for (int k = 0; k < iter->noperands; k++) {
                data[k] -= iter->strides[k][d] * iter->shape[d];
            }
            counter[d] = 0;
        }
    }
}

typedef struct block_job {
    tt_iter_chunk_fn fn;
    void *ctx;
    int64_t numel, block;
} block_job;

static void run_blocks(int64_t begin, int64_t end, void *arg) {
    const block_job *job = arg;
    const int64_t last = end * job->block;
    job->fn(begin * job->block, last < job->numel ? last : job->numel, job->ctx);
}

void tt_iter_parallel(const tt_iter *iter, int64_t grain, int64_t block, tt_iter_chunk_fn chunk_fn, void *ctx) {
    if (iter->numel == 0) {
        return;
    }
    int shared_output = 0;
    for (int d = 0; d < iter->ndim; d++) {
        shared_output |= iter->strides[0][d] == 0 && iter->shape[d] > 1;
    }
    if (shared_output || iter->numel <= grain) {
        chunk_fn(0, iter->numel, ctx);
        return;
    }
    if (block < 1) {
        block = 1;
    }
    block_job job = {chunk_fn, ctx, iter->numel, block};
    tt_parallel_for((iter->numel - 1) / block + 1, (grain - 1) / block + 1, run_blocks, &job);
}
