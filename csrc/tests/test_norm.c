/*
 * test_norm.c: batch and layer normalization forward and backward (kernels/norm.h).
 *
 * Values against PyTorch are tested from Python (tests/nn/test_normalization.py); this file is
 * for what the sanitizers can see: calls that must be refused before they touch memory, a shape
 * whose channels cross sum blocks and run on several threads (TSan), optional outputs left out
 * (ASan: nothing written through a 0 address), the in-place backward, and both passes against a
 * plain double loop.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "tt/kernels/norm.h"
#include "tt/kernels/parallel.h"

static void test_refusals(void) {
    float x[8] = {0}, y[8], stat[2] = {0, 1};
    const uintptr_t X = (uintptr_t)x, Y = (uintptr_t)y, S = (uintptr_t)stat;
    CHECK_STATUS(tt_batch_norm_forward(TT_INT32, 2, 2, 2, X, 1, 0.1, 1e-5, 0, 0, 0, 0, Y, 0, 0, 0),
                 TT_ERR_UNSUPPORTED_DTYPE, "int32 input");
    CHECK_STATUS(tt_batch_norm_forward(TT_FLOAT32, -1, 2, 2, X, 1, 0.1, 1e-5, 0, 0, 0, 0, Y, 0, 0, 0),
                 TT_ERR_INVALID_ARG, "negative n");
    CHECK_STATUS(tt_batch_norm_forward(TT_FLOAT32, INT64_MAX / 2, 4, 2, X, 1, 0.1, 1e-5, 0, 0, 0, 0, Y, 0, 0, 0),
                 TT_ERR_OVERFLOW, "n * c * s overflows");
    CHECK_STATUS(tt_batch_norm_forward(TT_FLOAT32, 1, 2, 1, X, 1, 0.1, 1e-5, 0, 0, 0, 0, Y, 0, 0, 0),
                 TT_ERR_INVALID_ARG, "training with one value per channel");
    CHECK_STATUS(tt_batch_norm_forward(TT_FLOAT32, 2, 2, 2, X, 0, 0.1, 1e-5, S, 0, 0, 0, Y, 0, 0, 0),
                 TT_ERR_INVALID_ARG, "evaluation without running_var");
    CHECK_STATUS(tt_batch_norm_forward(TT_FLOAT32, 2, 2, 2, X, 1, 0.1, 1e-5, 0, 0, 0, 0, 0, 0, 0, 0),
                 TT_ERR_INVALID_ARG, "no output");
    CHECK_STATUS(tt_batch_norm_backward(TT_FLOAT32, 2, 2, 2, X, 0, S, 0, 1, Y, 0, 0), TT_ERR_INVALID_ARG,
                 "training backward without x_hat");
    CHECK_STATUS(tt_batch_norm_backward(TT_FLOAT32, 2, 2, 2, X, X, 0, 0, 0, Y, 0, 0), TT_ERR_INVALID_ARG,
                 "dx without invstd");
    CHECK_STATUS(tt_batch_norm_backward(TT_FLOAT64, 2, 1, 1, X, X, S, 0, 1, Y, 0, 0), TT_OK,
                 "two values per channel are enough");
    CHECK_STATUS(tt_batch_norm_forward(TT_FLOAT32, 0, 2, 5, 0, 0, 0.1, 1e-5, S, S, 0, 0, 0, 0, 0, 0), TT_OK,
                 "an empty evaluation batch");
}

/* forward (training, running stats, affine) then backward, against plain double loops; then the
   backward again in place (dx = dy) with only dx requested. */
#define DEFINE_VALUES_TEST(T, DTYPE, TOL)                                                                  \
    static void test_values_##T(int64_t n, int64_t c, int64_t s) {                                         \
        const int64_t total = n * c * s, m = n * s;                                                        \
        T *x = malloc((size_t)total * sizeof(T)), *y = malloc((size_t)total * sizeof(T));                 \
        T *xh = malloc((size_t)total * sizeof(T)), *dy = malloc((size_t)total * sizeof(T));               \
        T *dx = malloc((size_t)total * sizeof(T));                                                         \
        T *ch = malloc((size_t)(8 * c) * sizeof(T));                                                       \
        if (!x || !y || !xh || !dy || !dx || !ch) {                                                        \
            CHECK(0, "out of memory");                                                                     \
            free(x), free(y), free(xh), free(dy), free(dx), free(ch);                                      \
            return;                                                                                        \
        }                                                                                                  \
        T *rm = ch, *rv = ch + c, *w = ch + 2 * c, *b = ch + 3 * c, *mean = ch + 4 * c;                   \
        T *invstd = ch + 5 * c, *dw = ch + 6 * c, *db = ch + 7 * c;                                        \
        uint64_t state = 88172645463325252ULL;                                                             \
        for (int64_t i = 0; i < total; i++) {                                                              \
            x[i] = (T)(100 + (double)(xorshift64(&state) % 2001) / 100); /* a large mean */               \
            dy[i] = (T)((double)(xorshift64(&state) % 2001) / 1000 - 1);                                   \
        }                                                                                                  \
        for (int64_t k = 0; k < c; k++) rm[k] = 0, rv[k] = 1, w[k] = (T)(0.5 + k), b[k] = (T)(k - 1.0);   \
        CHECK_STATUS(tt_batch_norm_forward(DTYPE, n, c, s, (uintptr_t)x, 1, 0.25, 1e-5, (uintptr_t)rm,       \
                                           (uintptr_t)rv, (uintptr_t)w, (uintptr_t)b, (uintptr_t)y,            \
                                           (uintptr_t)xh, (uintptr_t)mean, (uintptr_t)invstd), TT_OK, "forward"); \
        CHECK_STATUS(tt_batch_norm_backward(DTYPE, n, c, s, (uintptr_t)dy, (uintptr_t)xh, (uintptr_t)invstd,   \
                                            (uintptr_t)w, 1, (uintptr_t)dx, (uintptr_t)dw, (uintptr_t)db),     \
                     TT_OK, "backward");                                                                   \
        int64_t wrong = 0;                                                                                 \
        for (int64_t k = 0; k < c; k++) {                                                                  \
            double sum = 0, sq = 0, sdy = 0, sdyxh = 0;                                                    \
            for (int64_t img = 0; img < n; img++)                                                          \
                for (int64_t i = 0; i < s; i++) sum += x[(img * c + k) * s + i];                           \
            const double mu = sum / (double)m;                                                             \
            for (int64_t img = 0; img < n; img++)                                                          \
                for (int64_t i = 0; i < s; i++) {                                                          \
                    const double d = x[(img * c + k) * s + i] - mu;                                        \
                    sq += d * d;                                                                           \
                }                                                                                          \
            const double is = 1 / sqrt(sq / (double)m + 1e-5);                                             \
            wrong += fabs(mean[k] - mu) > TOL * fabs(mu) || fabs(invstd[k] - is) > TOL * is;               \
            wrong += fabs(rm[k] - 0.25 * mu) > TOL * fabs(mu);                                             \
            wrong += fabs(rv[k] - (0.75 + 0.25 * sq / (double)(m - 1))) > TOL * 2;                         \
            for (int64_t img = 0; img < n; img++)                                                          \
                for (int64_t i = 0; i < s; i++) {                                                          \
                    const int64_t at = (img * c + k) * s + i;                                              \
                    const double h = (x[at] - mu) * is;                                                    \
                    wrong += fabs(xh[at] - h) > 100 * TOL || fabs(y[at] - (h * w[k] + b[k])) > 100 * TOL * (1 + k); \
                    sdy += dy[at], sdyxh += dy[at] * h;                                                    \
                }                                                                                          \
            wrong += fabs(db[k] - sdy) > 10 * TOL * (double)m || fabs(dw[k] - sdyxh) > 100 * TOL * (double)m; \
            for (int64_t img = 0; img < n; img++)                                                          \
                for (int64_t i = 0; i < s; i++) {                                                          \
                    const int64_t at = (img * c + k) * s + i;                                              \
                    const double h = (x[at] - mu) * is;                                                    \
                    const double g = w[k] * is * (dy[at] - sdy / (double)m - h * sdyxh / (double)m);       \
                    wrong += fabs(dx[at] - g) > 100 * TOL * (1 + fabs(g));                                 \
                }                                                                                          \
        }                                                                                                  \
        CHECK_EQ(wrong, 0, "values off a plain double loop");                                              \
        for (int64_t i = 0; i < total; i++) dx[i] = dy[i]; /* keep dy */                                  \
        CHECK_STATUS(tt_batch_norm_backward(DTYPE, n, c, s, (uintptr_t)dy, 0, (uintptr_t)invstd, 0, 0,       \
                                            (uintptr_t)dy, 0, 0), TT_OK, "evaluation backward in place");  \
        int64_t wrong_inplace = 0;                                                                         \
        for (int64_t i = 0; i < total; i++) wrong_inplace += dy[i] != dx[i] * invstd[(i / s) % c];        \
        CHECK_EQ(wrong_inplace, 0, "in-place evaluation backward");                                        \
        free(x), free(y), free(xh), free(dy), free(dx), free(ch);                                          \
    }
DEFINE_VALUES_TEST(float, TT_FLOAT32, 1e-5)
DEFINE_VALUES_TEST(double, TT_FLOAT64, 1e-12)

/* Layer normalization: refusals, then forward and backward of rows that cross the sum block
   (NORM_BLOCK 512) and the backward's 32-row blocks, on 1 and 2 threads, against plain double
   loops; optional outputs left out (nothing written through 0), and dweight / dbias the same
   bits on both thread counts. */
static void test_layer_norm(int64_t rows, int64_t cols) {
    float scratch[4] = {0};
    const uintptr_t S = (uintptr_t)scratch;
    CHECK_STATUS(tt_layer_norm_forward(TT_INT32, 1, 2, S, 1e-5, 0, 0, S, 0, 0), TT_ERR_UNSUPPORTED_DTYPE,
                 "layer_norm int32");
    CHECK_STATUS(tt_layer_norm_forward(TT_FLOAT32, 2, 0, S, 1e-5, 0, 0, S, 0, 0), TT_ERR_INVALID_ARG,
                 "layer_norm rows of nothing");
    CHECK_STATUS(tt_layer_norm_forward(TT_FLOAT32, INT64_MAX / 2, 4, S, 1e-5, 0, 0, S, 0, 0), TT_ERR_OVERFLOW,
                 "layer_norm rows * cols overflows");
    CHECK_STATUS(tt_layer_norm_backward(TT_FLOAT32, 1, 2, S, 0, S, S, 0, S, 0, 0), TT_ERR_INVALID_ARG,
                 "layer_norm backward without x");
    const int64_t total = rows * cols;
    double *x = malloc((size_t)total * sizeof(double)), *dy = malloc((size_t)total * sizeof(double));
    double *y = malloc((size_t)total * sizeof(double)), *dx = malloc((size_t)total * sizeof(double));
    double *w = malloc((size_t)cols * sizeof(double)), *b = malloc((size_t)cols * sizeof(double));
    double *dw = malloc((size_t)cols * 2 * sizeof(double)), *db = malloc((size_t)cols * 2 * sizeof(double));
    double *mean = malloc((size_t)rows * sizeof(double)), *invstd = malloc((size_t)rows * sizeof(double));
    if (!x || !dy || !y || !dx || !w || !b || !dw || !db || !mean || !invstd) {
        CHECK(0, "out of memory");
    } else {
        uint64_t state = 0x2545F4914F6CDD1DULL;
        for (int64_t i = 0; i < total; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            x[i] = (double)(state >> 40) / (double)(1 << 24) * 4.0 + 3.0;
            dy[i] = (double)((state >> 20) & 0xFFFFF) / (double)(1 << 20) - 0.5;
        }
        for (int64_t i = 0; i < cols; i++) {
            w[i] = 1.0 + 0.01 * (double)(i % 7);
            b[i] = 0.1 * (double)(i % 3);
        }
        for (int threads = 1; threads <= 2; threads++) {
            CHECK_STATUS(tt_set_num_threads(threads), TT_OK, "tt_set_num_threads");
            CHECK_STATUS(tt_layer_norm_forward(TT_FLOAT64, rows, cols, (uintptr_t)x, 1e-5, (uintptr_t)w, (uintptr_t)b,
                                               (uintptr_t)y, (uintptr_t)mean, (uintptr_t)invstd), TT_OK, "forward");
            CHECK_STATUS(tt_layer_norm_backward(TT_FLOAT64, rows, cols, (uintptr_t)dy, (uintptr_t)x, (uintptr_t)mean,
                                                (uintptr_t)invstd, (uintptr_t)w, (uintptr_t)dx,
                                                (uintptr_t)(dw + (threads - 1) * cols),
                                                (uintptr_t)(db + (threads - 1) * cols)), TT_OK, "backward");
            int bad = 0;
            for (int64_t r = 0; r < rows && !bad; r++) {
                const double *xr = x + r * cols, *gr = dy + r * cols;
                double m = 0, v = 0, sg = 0, sgx = 0;
                for (int64_t i = 0; i < cols; i++) m += xr[i];
                m /= (double)cols;
                for (int64_t i = 0; i < cols; i++) v += (xr[i] - m) * (xr[i] - m);
                const double is = 1.0 / sqrt(v / (double)cols + 1e-5);
                for (int64_t i = 0; i < cols; i++) {
                    sg += gr[i] * w[i];
                    sgx += gr[i] * w[i] * (xr[i] - m) * is;
                }
                for (int64_t i = 0; i < cols && !bad; i++) {
                    const double h = (xr[i] - m) * is;
                    const double want_y = h * w[i] + b[i];
                    const double want_dx = is * (gr[i] * w[i] - sg / (double)cols - h * sgx / (double)cols);
                    bad = fabs(y[r * cols + i] - want_y) > 1e-12 || fabs(dx[r * cols + i] - want_dx) > 1e-11;
                    CHECK(!bad, "layer_norm %lldx%lld row %lld col %lld: y %g (%g), dx %g (%g)", (long long)rows,
                          (long long)cols, (long long)r, (long long)i, y[r * cols + i], want_y, dx[r * cols + i],
                          want_dx);
                }
            }
            for (int64_t i = 0; i < cols && !bad; i++) {
                double want_w = 0, want_b = 0;
                for (int64_t r = 0; r < rows; r++) {
                    want_w += dy[r * cols + i] * (x[r * cols + i] - mean[r]) * invstd[r];
                    want_b += dy[r * cols + i];
                }
                bad = fabs(dw[(threads - 1) * cols + i] - want_w) > 1e-9 || fabs(db[(threads - 1) * cols + i] - want_b) > 1e-9;
                CHECK(!bad, "layer_norm dweight/dbias column %lld", (long long)i);
            }
        }
        for (int64_t i = 0; i < cols; i++) {
            CHECK(dw[i] == dw[cols + i] && db[i] == db[cols + i], "dweight/dbias differ between 1 and 2 threads");
        }
        /* optional outputs left out, in place (dx = dy), float32 */
        float *xf = malloc((size_t)total * sizeof(float)), *gf = malloc((size_t)total * sizeof(float));
        float *stats = malloc((size_t)rows * 2 * sizeof(float));
        if (xf && gf && stats) {
            for (int64_t i = 0; i < total; i++) xf[i] = (float)x[i], gf[i] = (float)dy[i];
            CHECK_STATUS(tt_layer_norm_forward(TT_FLOAT32, rows, cols, (uintptr_t)xf, 1e-5, 0, 0, (uintptr_t)gf,
                                               (uintptr_t)stats, (uintptr_t)(stats + rows)), TT_OK, "forward f32");
            for (int64_t i = 0; i < total; i++) gf[i] = (float)dy[i];
            CHECK_STATUS(tt_layer_norm_backward(TT_FLOAT32, rows, cols, (uintptr_t)gf, (uintptr_t)xf, (uintptr_t)stats,
                                                (uintptr_t)(stats + rows), 0, (uintptr_t)gf, 0, 0), TT_OK,
                         "backward f32 in place");
        }
        free(xf), free(gf), free(stats);
    }
    free(x), free(dy), free(y), free(dx), free(w), free(b), free(dw), free(db), free(mean), free(invstd);
}

int main(void) {
    test_refusals();
    test_layer_norm(70, 600);
    test_layer_norm(3, 5);
    test_values_float(3, 5, 7);
    test_values_double(3, 5, 7);
    CHECK_STATUS(tt_set_num_threads(4), TT_OK, "four threads");
    test_values_float(10, 8, 1000);  /* 1000 crosses a 512-element block; 80000 elements: threads */
    test_values_double(10, 8, 1000);
    test_values_float(4, 3, 1);      /* an (N, C) input */
    test_values_float(100, 3, 7);    /* small planes: lanes fill across planes, folded past 512 values */
    test_values_double(70, 2, 64);   /* a fold after every 8 planes */
    return check_report("test_norm");
}
