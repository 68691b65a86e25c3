/*
 * test_conv.c: the convolution and pooling kernels on random geometries, for the sanitizers.
 *
 * Values are checked against PyTorch from Python (tests/ops/test_convolution.py). Here every
 * buffer is allocated at exactly the size its shape and strides reach, so AddressSanitizer sees
 * any read or write past an edge: padding wider than the input, strides with gaps and strides of
 * 0, many channels (several column blocks in conv.c, the last one partial), dilation, ceil-mode
 * windows. Convolution and max/avg pooling are also compared with a naive loop written from the
 * definition, and bad arguments must come back as error statuses. A float32 run covers the direct
 * kernels (stride and dilation 1, groups 1), once for every GEMM kernel this CPU can run, since
 * each GEMM kernel has its own direct convolution (or none: im2col).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "tt/kernels/conv.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/pool.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static int64_t draw(int64_t lo, int64_t hi) { return lo + (int64_t)(xorshift64(&rng_state) % (uint64_t)(hi - lo + 1)); }

/* A strided (n, c, h, w) double array at exactly the size it reaches, filled with random values. */
typedef struct strided {
    int64_t shape[4], strides[4];
    double *data;
} strided;

static strided make_input(int64_t n, int64_t c, int64_t h, int64_t w) {
    strided s = {.shape = {n, c, h, w}};
    int64_t extent = 1;
    for (int d = 3; d >= 0; d--) {   /* random gaps, sometimes a broadcast (stride 0) dimension */
        if (draw(0, 4) == 0) {
            s.strides[d] = 0;
        } else {
            s.strides[d] = extent * draw(1, 2);
            extent = s.strides[d] * s.shape[d];
        }
    }
    int64_t reach = 1;
    for (int d = 0; d < 4; d++) {
        reach += (s.shape[d] > 0 ? s.shape[d] - 1 : 0) * s.strides[d];
    }
    s.data = malloc((size_t)reach * sizeof(double));
    for (int64_t i = 0; i < reach; i++) {
        s.data[i] = (double)draw(-8, 8) / 4;
    }
    return s;
}

static double at(const strided *s, int64_t b, int64_t c, int64_t y, int64_t x) {
    return s->data[b * s->strides[0] + c * s->strides[1] + y * s->strides[2] + x * s->strides[3]];
}

/* One output element from the definition, in double: the bias plus every tap of the window
   (input channels ci0.. of x, all of w's taps for output channel co) that lies inside the input. */
static double conv_reference(const strided *x, const strided *w, double bias, int64_t b, int64_t co, int64_t ci0,
                             int64_t oy, int64_t ox, const int64_t stride[2], const int64_t padding[2],
                             const int64_t dilation[2]) {
    double sum = bias;
    for (int64_t ci = 0; ci < w->shape[1]; ci++) {
        for (int64_t ky = 0; ky < w->shape[2]; ky++) {
            for (int64_t kx = 0; kx < w->shape[3]; kx++) {
                const int64_t iy = oy * stride[0] - padding[0] + ky * dilation[0];
                const int64_t ix = ox * stride[1] - padding[1] + kx * dilation[1];
                if (iy >= 0 && iy < x->shape[2] && ix >= 0 && ix < x->shape[3]) {
                    sum += at(x, b, ci0 + ci, iy, ix) * at(w, co, ci, ky, kx);
                }
            }
        }
    }
    return sum;
}

static void test_conv_random(void) {
    for (int trial = 0; trial < 200; trial++) {
        const int64_t groups = draw(1, 3), cin_g = trial % 50 == 0 ? 70 : draw(1, 3), m = draw(1, 3);
        const int64_t kh = draw(1, 3), kw = draw(1, 3), sh = draw(1, 3), sw = draw(1, 3);
        const int64_t dh = draw(1, 2), dw = draw(1, 2), ph = draw(0, 4), pw = draw(0, 4);
        const int64_t n = draw(1, 2), h = draw(1, 7), w = draw(1, trial % 50 == 0 ? 60 : 7);
        const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
        if (h + 2 * ph < dh * (kh - 1) + 1 || w + 2 * pw < dw * (kw - 1) + 1) {
            continue;
        }
        strided x = make_input(n, groups * cin_g, h, w);
        strided wt = make_input(groups * m, cin_g, kh, kw);
        double *bias = malloc((size_t)(groups * m) * sizeof(double));
        for (int64_t i = 0; i < groups * m; i++) {
            bias[i] = (double)draw(-4, 4);
        }
        double *out = malloc((size_t)(n * groups * m * oh * ow) * sizeof(double));
        const int64_t stride[2] = {sh, sw}, padding[2] = {ph, pw}, dilation[2] = {dh, dw}, out_size[2] = {oh, ow};
        tt_status status = tt_conv2d(TT_FLOAT64, x.shape, (uintptr_t)x.data, x.strides, wt.shape,
                                     (uintptr_t)wt.data, wt.strides, (uintptr_t)bias, 1, stride, padding, dilation,
                                     groups, out_size, (uintptr_t)out);
        CHECK_STATUS(status, TT_OK, "conv2d");
        double worst = 0;
        for (int64_t b = 0; b < n; b++) {
            for (int64_t co = 0; co < groups * m; co++) {
                for (int64_t oy = 0; oy < oh; oy++) {
                    for (int64_t ox = 0; ox < ow; ox++) {
                        const double sum = conv_reference(&x, &wt, bias[co], b, co, (co / m) * cin_g, oy, ox, stride,
                                                          padding, dilation);
                        double got = out[((b * groups * m + co) * oh + oy) * ow + ox];
                        worst = fmax(worst, fabs(got - sum));
                    }
                }
            }
        }
        CHECK(worst == 0, "conv2d trial %d: off by %g (values are exact in double)", trial, worst);
        free(x.data);
        free(wt.data);
        free(bias);
        free(out);
    }
}

/* float32 convolutions shaped for the direct kernels (groups 1, stride and dilation 1, rows of 8
   or more outputs, no input channel at all now and then), with the input, weights and bias at
   exactly the size they reach. Inputs are
   quarters in [-2, 2], so every sum is exact in float32 and must equal the double reference. */
static void test_conv_direct_float32(const char *kernel) {
    for (int trial = 0; trial < 60; trial++) {
        const int64_t cin = trial % 20 == 0 ? 17 : trial % 20 == 1 ? 0 : draw(1, 4), cout = draw(1, 19);
        const int64_t kh = draw(1, 5), kw = draw(1, 5), ph = draw(0, kh - 1), pw = draw(0, kw - 1);
        const int64_t n = draw(1, 2), h = draw(1, 6), w = draw(kw, trial % 10 == 0 ? 90 : 40);
        /* sometimes a narrower output than the padding gives: the C API takes any out_size (the
           padding after the input is implied by it), and a padded row must still hold the input
           row (a review found the AVX2 kernel's row copy overran its buffer there) */
        const int64_t cut = trial % 4 == 3 ? draw(1, 12) : 0;
        const int64_t oh = h + 2 * ph - kh + 1, ow = w + 2 * pw - kw + 1 - cut;
        if (oh < 1 || ow < 1) {
            continue;
        }
        strided xd = make_input(n, cin, h, w), wd = make_input(cout, cin, kh, kw);
        int64_t x_reach = 1, w_reach = 1;
        for (int d = 0; d < 4; d++) {
            x_reach += (xd.shape[d] > 0 ? xd.shape[d] - 1 : 0) * xd.strides[d];
            w_reach += (wd.shape[d] > 0 ? wd.shape[d] - 1 : 0) * wd.strides[d];
        }
        float *x = malloc((size_t)x_reach * sizeof(float)), *wt = malloc((size_t)w_reach * sizeof(float));
        float *bias = malloc((size_t)cout * sizeof(float)), *out = malloc((size_t)(n * cout * oh * ow) * sizeof(float));
        for (int64_t i = 0; i < x_reach; i++) {
            x[i] = (float)xd.data[i];
        }
        for (int64_t i = 0; i < w_reach; i++) {
            wt[i] = (float)wd.data[i];
        }
        for (int64_t i = 0; i < cout; i++) {
            bias[i] = (float)draw(-4, 4);
        }
        const int64_t one[2] = {1, 1}, padding[2] = {ph, pw}, out_size[2] = {oh, ow};
        CHECK_STATUS(tt_conv2d(TT_FLOAT32, xd.shape, (uintptr_t)x, xd.strides, wd.shape, (uintptr_t)wt, wd.strides,
                               (uintptr_t)bias, 1, one, padding, one, 1, out_size, (uintptr_t)out),
                     TT_OK, "conv2d float32");
        double worst = 0;
        for (int64_t b = 0; b < n; b++) {
            for (int64_t co = 0; co < cout; co++) {
                for (int64_t oy = 0; oy < oh; oy++) {
                    for (int64_t ox = 0; ox < ow; ox++) {
                        const double sum = conv_reference(&xd, &wd, bias[co], b, co, 0, oy, ox, one, padding, one);
                        worst = fmax(worst, fabs(out[((b * cout + co) * oh + oy) * ow + ox] - sum));
                    }
                }
            }
        }
        CHECK(worst == 0, "conv2d float32 (%s) trial %d: off by %g (the sums are exact)", kernel, trial, worst);
        free(xd.data);
        free(wd.data);
        free(x);
        free(wt);
        free(bias);
        free(out);
    }
}

static void test_pool_random(void) {
    for (int trial = 0; trial < 300; trial++) {
        const int64_t n = draw(1, 2), c = draw(1, 3), h = draw(1, 8), w = draw(1, 8);
        const int64_t k[2] = {draw(1, 3), draw(1, 3)}, s[2] = {draw(1, 3), draw(1, 3)}, d[2] = {draw(1, 2), draw(1, 2)};
        const int64_t p[2] = {draw(0, ((k[0] - 1) * d[0] + 1) / 2), draw(0, ((k[1] - 1) * d[1] + 1) / 2)};
        const int64_t o[2] = {(h + 2 * p[0] - d[0] * (k[0] - 1) - 1 + s[0] - 1) / s[0] + 1,
                              (w + 2 * p[1] - d[1] * (k[1] - 1) - 1 + s[1] - 1) / s[1] + 1};  /* ceil mode, loose */
        if (o[0] < 1 || o[1] < 1) {
            continue;
        }
        strided x = make_input(n, c, h, w);
        const int64_t count = n * c * o[0] * o[1];
        double *out = malloc((size_t)count * sizeof(double));
        int64_t *indices = malloc((size_t)count * sizeof(int64_t));
        CHECK_STATUS(tt_max_pool2d(TT_FLOAT64, x.shape, (uintptr_t)x.data, x.strides, k, s, p, d, o, (uintptr_t)out,
                                   (uintptr_t)indices), TT_OK, "max_pool2d");
        int bad = 0;
        for (int64_t i = 0; i < count; i++) {
            const int64_t plane = i / (o[0] * o[1]), oy = i / o[1] % o[0], ox = i % o[1];
            double best = -INFINITY;
            for (int64_t ky = 0; ky < k[0]; ky++) {
                for (int64_t kx = 0; kx < k[1]; kx++) {
                    int64_t iy = oy * s[0] - p[0] + ky * d[0], ix = ox * s[1] - p[1] + kx * d[1];
                    if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
                        best = fmax(best, at(&x, plane / c, plane % c, iy, ix));
                    }
                }
            }
            const int64_t idx = indices[i];
            bad += out[i] != best;
            bad += best > -INFINITY && (idx < 0 || idx >= h * w || at(&x, plane / c, plane % c, idx / w, idx % w) != best);
        }
        CHECK(bad == 0, "max_pool2d trial %d: %d wrong values or indices", trial, bad);
        CHECK_STATUS(tt_avg_pool2d(TT_FLOAT64, x.shape, (uintptr_t)x.data, x.strides, k, s, p, 0, 0, o,
                                   (uintptr_t)out), TT_OK, "avg_pool2d");
        CHECK_STATUS(tt_avg_pool2d(TT_FLOAT32, x.shape, (uintptr_t)x.data, x.strides, k, s, p, 1, 3, o,
                                   (uintptr_t)out), TT_OK, "avg_pool2d float32 over the same bytes");
        CHECK_STATUS(tt_adaptive_pool2d(trial % 2, TT_FLOAT64, x.shape, (uintptr_t)x.data, x.strides, o,
                                        (uintptr_t)out, (uintptr_t)indices), TT_OK, "adaptive pool");
        const double scales[2] = {trial % 3 == 0 ? 0.0 : (double)o[0] / (double)h, trial % 5 == 0 ? 1e-30 : 0.0};
        CHECK_STATUS(tt_interpolate2d(trial % 2, TT_FLOAT64, x.shape, (uintptr_t)x.data, x.strides, o, scales,
                                      trial % 4 == 0, (uintptr_t)out), TT_OK, "interpolate");
        free(x.data);
        free(out);
        free(indices);
    }
}

static void test_bad_arguments(void) {
    double x[4] = {1, 2, 3, 4}, w[1] = {1}, out[4];
    const int64_t xs[4] = {4, 4, 2, 1}, x_shape[4] = {1, 1, 2, 2}, ws[4] = {1, 1, 1, 1}, w_shape[4] = {1, 1, 1, 1};
    const int64_t one[2] = {1, 1}, zero[2] = {0, 0}, out_size[2] = {2, 2}, bad_w[4] = {1, 2, 1, 1};
    uintptr_t px = (uintptr_t)x, pw = (uintptr_t)w, po = (uintptr_t)out;
    CHECK_STATUS(tt_conv2d(TT_FLOAT64, x_shape, px, xs, w_shape, pw, ws, 0, 0, one, zero, one, 1, out_size, po), TT_OK,
                 "1x1 conv");
    CHECK(out[3] == 4.0, "1x1 conv copies: got %g", out[3]);
    CHECK_STATUS(tt_conv2d(TT_INT64, x_shape, px, xs, w_shape, pw, ws, 0, 0, one, zero, one, 1, out_size, po),
                 TT_ERR_UNSUPPORTED_DTYPE, "integer conv");
    CHECK_STATUS(tt_conv2d(TT_FLOAT64, x_shape, px, xs, bad_w, pw, ws, 0, 0, one, zero, one, 1, out_size, po),
                 TT_ERR_INVALID_ARG, "channel mismatch");
    CHECK_STATUS(tt_conv2d(TT_FLOAT64, x_shape, px, xs, w_shape, pw, ws, 0, 0, zero, zero, one, 1, out_size, po),
                 TT_ERR_INVALID_ARG, "stride 0");
    CHECK_STATUS(tt_conv2d(TT_FLOAT64, x_shape, px, xs, w_shape, pw, ws, 0, 0, one, zero, one, 0, out_size, po),
                 TT_ERR_INVALID_ARG, "groups 0");
    const int64_t far[2] = {(int64_t)1 << 62, (int64_t)1 << 62}, three[2] = {3, 3};
    CHECK_STATUS(tt_conv2d(TT_FLOAT64, x_shape, px, xs, w_shape, pw, ws, 0, 0, far, far, one, 1, three, po),
                 TT_ERR_OVERFLOW, "window arithmetic beyond int64");
    CHECK_STATUS(tt_max_pool2d(TT_FLOAT64, x_shape, px, xs, one, far, far, one, three, po, 0), TT_ERR_OVERFLOW,
                 "pooling window arithmetic beyond int64");
    CHECK_STATUS(tt_conv2d(TT_FLOAT64, x_shape, 0, xs, w_shape, pw, ws, 0, 0, one, zero, one, 1, out_size, po),
                 TT_ERR_INVALID_ARG, "NULL input");
    CHECK_STATUS(tt_max_pool2d(TT_FLOAT64, x_shape, px, xs, zero, one, zero, one, out_size, po, 0),
                 TT_ERR_INVALID_ARG, "kernel 0");
    CHECK_STATUS(tt_avg_pool2d(TT_UINT8, x_shape, px, xs, one, one, zero, 1, 0, out_size, po),
                 TT_ERR_UNSUPPORTED_DTYPE, "integer avg_pool");
    const int64_t empty_plane[4] = {1, 1, 0, 2};
    CHECK_STATUS(tt_adaptive_pool2d(0, TT_FLOAT64, empty_plane, px, xs, out_size, po, 0), TT_ERR_INVALID_ARG,
                 "adaptive pool of an empty plane");
    const double huge[2] = {1e-300, -1.0};
    CHECK_STATUS(tt_interpolate2d(0, TT_FLOAT64, x_shape, px, xs, out_size, huge, 0, po), TT_OK,
                 "nearest with a tiny scale: clamped, no overflow");
    CHECK_STATUS(tt_interpolate2d(1, TT_FLOAT32, x_shape, px, xs, out_size, huge, 0, po), TT_OK,
                 "bilinear with a tiny scale: clamped, no overflow");
}

int main(void) {
    test_conv_random();
    const char *const kernels[] = {"generic", "avx2", "avx512"};
    for (int k = 0; k < 3; k++) {
        if (tt_gemm_set_kernel(kernels[k]) == TT_OK) {   /* refused when the CPU lacks it */
            test_conv_direct_float32(kernels[k]);
        }
    }
    tt_gemm_set_kernel(NULL);
    test_pool_random();
    test_bad_arguments();
    return check_report("test_conv");
}
