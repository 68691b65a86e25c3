/*
 * test_strided_iter.c: the blocked traversal and the (begin, end) ranges of tt_iter.
 *
 * A row function copies an int32 "source" (each element holds its own logical index) into a
 * contiguous output and counts visits in a second output. For transposed sources (tiled, and
 * with iter.elementwise packed through the stack buffer) over shapes that straddle the tiles,
 * and for every split of dimension 0 into two ranges, each output element must be visited once
 * and receive its own index. Under ASan a packing or tile-edge slip is an out-of-bounds report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/strided_iter.h"

static void copy_count_row(char **data, const int64_t *s, int64_t n, void *ctx) {
    (void)ctx;
    for (int64_t i = 0; i < n; i++) {
        *(int32_t *)(data[0] + i * s[0]) = *(const int32_t *)(data[2] + i * s[2]);
        *(int32_t *)(data[1] + i * s[1]) += 1;
    }
}

/* shape (ndim <= 3) walked with the source permuted: its last two dims swapped. */
static void run_case(int ndim, const int64_t *shape, int elementwise) {
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        numel *= shape[d];
    }
    int32_t *out = calloc((size_t)numel, sizeof *out), *count = calloc((size_t)numel, sizeof *count);
    int32_t *src = malloc((size_t)numel * sizeof *src);
    int64_t out_strides[3], src_strides[3], step = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        out_strides[d] = step;
        step *= shape[d];
    }
    /* the source is stored with its last two dims swapped (a transposed view of a buffer) */
    int64_t stored[3];
    memcpy(stored, shape, (size_t)ndim * sizeof *shape);
    if (ndim >= 2) {
        stored[ndim - 1] = shape[ndim - 2];
        stored[ndim - 2] = shape[ndim - 1];
    }
    int64_t stored_strides[3];
    step = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        stored_strides[d] = step;
        step *= stored[d];
    }
    memcpy(src_strides, stored_strides, (size_t)ndim * sizeof *src_strides);
    if (ndim >= 2) {
        src_strides[ndim - 1] = stored_strides[ndim - 2];
        src_strides[ndim - 2] = stored_strides[ndim - 1];
    }
    /* src element at logical position p holds p's linear (row-major) index */
    for (int64_t linear = 0; linear < numel; linear++) {
        int64_t rest = linear, offset = 0;
        for (int d = ndim - 1; d >= 0; d--) {
            offset += (rest % shape[d]) * src_strides[d];
            rest /= shape[d];
        }
        src[offset] = (int32_t)linear;
    }
    const int64_t *strides[3] = {out_strides, out_strides, src_strides};
    const size_t itemsizes[3] = {4, 4, 4};
    tt_iter iter;
    CHECK(tt_iter_init(&iter, ndim, shape, 3, strides, itemsizes) == TT_OK, "init failed");
    iter.elementwise = elementwise;
    char *base[3] = {(char *)out, (char *)count, (char *)src};
    const int64_t n0 = iter.shape[0];
    for (int64_t split = 0; split <= n0; split += (n0 > 40 ? 13 : 1)) {
        memset(count, 0, (size_t)numel * sizeof *count);
        memset(out, 0xFF, (size_t)numel * sizeof *out);
        tt_iter_run_range(&iter, base, copy_count_row, NULL, split, n0);   /* the later range first */
        tt_iter_run_range(&iter, base, copy_count_row, NULL, 0, split);
        int64_t bad = 0;
        for (int64_t i = 0; i < numel; i++) {
            bad += count[i] != 1 || out[i] != (int32_t)i;
        }
        CHECK(bad == 0, "ndim %d shape[last] %lld split %lld elementwise %d tiles %lld: %lld elements wrong", ndim,
              (long long)shape[ndim - 1], (long long)split, elementwise, (long long)iter.tile_rows, (long long)bad);
    }
    free(out);
    free(count);
    free(src);
}

int main(void) {
    const int64_t sizes[] = {1, 7, 31, 33, 64, 257, 300};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    for (int elementwise = 0; elementwise <= 1; elementwise++) {
        for (int a = 0; a < nsizes; a++) {
            int64_t one[1] = {sizes[a]};
            run_case(1, one, elementwise);
            for (int b = 0; b < nsizes; b++) {
                int64_t two[2] = {sizes[a], sizes[b]};
                run_case(2, two, elementwise);
            }
        }
        int64_t three[3] = {3, 70, 290};
        run_case(3, three, elementwise);
        int64_t flat[3] = {2, 1, 300};
        run_case(3, flat, elementwise);
    }
    /* the blocked path really runs for a big transpose */
    int64_t shape[2] = {300, 257}, out_strides[2] = {257, 1}, src_strides[2] = {1, 300};
    const int64_t *strides[2] = {out_strides, src_strides};
    const size_t itemsizes[2] = {4, 4};
    tt_iter iter;
    tt_iter_init(&iter, 2, shape, 2, strides, itemsizes);
    CHECK(iter.tile_rows > 0 && iter.tile_cols > 0 && iter.pack_mask == 2u, "expected tiles and packing, got %lld %lld %u",
          (long long)iter.tile_rows, (long long)iter.tile_cols, iter.pack_mask);
    return check_report("strided_iter");
}
