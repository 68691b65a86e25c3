/*
 * test_conv_backward.c: the convolution and average-pooling gradients (conv_backward.c) on random
 * geometries, for the sanitizers.
 *
 * Values are checked against PyTorch from Python (tests/autograd/test_conv_grad.py). Here every
 * input buffer is allocated at exactly the size its shape and strides reach, so AddressSanitizer
 * sees any read past an edge, and the results are compared with naive loops written from the
 * definition (the forward's sums, differentiated term by term), for both paths (GEMM and the
 * direct loops of small groups). Sizes include several images
 * with enough work for several workers (ThreadSanitizer), column blocks (large K), padding wider
 * than the input, stride-0 operands; float32 and float16 runs exercise the compute-type paths.
 * Bad arguments must come back as error statuses.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tt/kernels/conv.h"
#include "tt/kernels/conv_backward.h"

static uint64_t rng_state = 0xD1B54A32D192ED03ull;

static int64_t draw(int64_t lo, int64_t hi) { return lo + (int64_t)(xorshift64(&rng_state) % (uint64_t)(hi - lo + 1)); }

/* A strided (n, c, h, w) array of doubles at exactly the size it reaches, random values. */
typedef struct strided {
    int64_t shape[4], strides[4], reach;
    double *data;
} strided;

static strided make(int64_t n, int64_t c, int64_t h, int64_t w) {
    strided s = {.shape = {n, c, h, w}};
    int64_t extent = 1;
    for (int d = 3; d >= 0; d--) {
        if (draw(0, 5) == 0) {
            s.strides[d] = 0;
        } else {
            s.strides[d] = extent * draw(1, 2);
            extent = s.strides[d] * s.shape[d];
        }
    }
    s.reach = 1;
    for (int d = 0; d < 4; d++) {
        s.reach += (s.shape[d] > 0 ? s.shape[d] - 1 : 0) * s.strides[d];
    }
    s.data = malloc((size_t)s.reach * sizeof(double));
    for (int64_t i = 0; i < s.reach; i++) {
        s.data[i] = (double)draw(-8, 8) / 4;
    }
    return s;
}

static double at(const strided *s, int64_t b, int64_t c, int64_t y, int64_t x) {
    return s->data[b * s->strides[0] + c * s->strides[1] + y * s->strides[2] + x * s->strides[3]];
}

/* The same values as float32 (same strides and reach). */
static float *as_float(const strided *s) {
    float *f = malloc((size_t)s->reach * sizeof(float));
    for (int64_t i = 0; i < s->reach; i++) {
        f[i] = (float)s->data[i];
    }
    return f;
}

/* float16 bits of a small dyadic value (exact): sign, exponent, mantissa by hand. */
static uint16_t to_half(double v) {
    if (v == 0) {
        return 0;
    }
    uint16_t sign = v < 0 ? 0x8000 : 0;
    double a = fabs(v);
    int e = 0;
    while (a >= 2) { a /= 2; e++; }
    while (a < 1) { a *= 2; e--; }
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((a - 1) * 1024));
}

static double from_half(uint16_t h) {
    const int e = (h >> 10) & 31;
    const double m = e == 0 ? (h & 1023) / 1024.0 * ldexp(1, -14) : (1 + (h & 1023) / 1024.0) * ldexp(1, e - 15);
    return h & 0x8000 ? -m : m;
}

static void test_conv_backward_random(void) {
    for (int trial = 0; trial < 200; trial++) {
        const int big = trial % 40 == 0;   /* several workers, several column blocks */
        /* unit: stride and dilation 1 on the GEMM path, several images: batches of images per
           product, im2col and col2im through a zero-padded plane (w up to 12: rows as runs too) */
        const int unit = trial % 5 == 1;
        const int gemm = unit || trial % 3 == 0;   /* M x K large enough for the GEMM path, else direct loops */
        const int64_t groups = draw(1, 3), cin_g = big ? 60 : gemm ? draw(8, 10) : draw(1, 3);
        const int64_t m = gemm ? draw(8, 10) : draw(1, 3);
        /* big: K = 540 and P >= 680 outputs, more than one block of columns (COL_BUDGET / K) */
        const int64_t kh = big ? 3 : draw(1, 3), kw = big ? 3 : draw(1, 3), sh = big || unit ? 1 : draw(1, 3);
        const int64_t sw = big || unit ? 1 : draw(1, 3), dh = big || unit ? 1 : draw(1, 2);
        const int64_t dw = big || unit ? 1 : draw(1, 2);
        const int64_t ph = draw(0, 4), pw = draw(0, 4);
        const int64_t n = big ? 4 : unit ? draw(2, 6) : draw(1, 3), h = big ? 12 : draw(1, 7);
        const int64_t w = big ? 70 : unit ? draw(1, 12) : draw(1, 7);
        if (h + 2 * ph < dh * (kh - 1) + 1 || w + 2 * pw < dw * (kw - 1) + 1) {
            continue;
        }
        const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
        const int64_t c_in = groups * cin_g, c_out = groups * m;
        strided x = make(n, c_in, h, w), wt = make(c_out, cin_g, kh, kw), gy = make(n, c_out, oh, ow);
        const int64_t stride[2] = {sh, sw}, padding[2] = {ph, pw}, dilation[2] = {dh, dw};
        double *gx = malloc((size_t)(n * c_in * h * w) * sizeof(double));
        double *gw = malloc((size_t)(c_out * cin_g * kh * kw) * sizeof(double));
        double *ref_gx = calloc((size_t)(n * c_in * h * w), sizeof(double));
        double *ref_gw = calloc((size_t)(c_out * cin_g * kh * kw), sizeof(double));
        CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT64, gy.shape, (uintptr_t)gy.data, gy.strides, wt.shape,
                                              (uintptr_t)wt.data, wt.strides, stride, padding, dilation, groups,
                                              x.shape, (uintptr_t)gx), TT_OK, "backward_input");
        CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT64, x.shape, (uintptr_t)x.data, x.strides, gy.shape,
                                               (uintptr_t)gy.data, gy.strides, stride, padding, dilation, groups,
                                               wt.shape, (uintptr_t)gw), TT_OK, "backward_weight");
        for (int64_t b = 0; b < n; b++) {   /* each term x * w of out[b, co, oy, ox], differentiated */
            for (int64_t co = 0; co < c_out; co++) {
                const int64_t grp = co / m;
                for (int64_t oy = 0; oy < oh; oy++) {
                    for (int64_t ox = 0; ox < ow; ox++) {
                        const double g = at(&gy, b, co, oy, ox);
                        for (int64_t ci = 0; ci < cin_g; ci++) {
                            for (int64_t ky = 0; ky < kh; ky++) {
                                for (int64_t kx = 0; kx < kw; kx++) {
                                    const int64_t iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
                                        continue;
                                    }
                                    const int64_t c = grp * cin_g + ci;
                                    ref_gx[((b * c_in + c) * h + iy) * w + ix] += g * at(&wt, co, ci, ky, kx);
                                    ref_gw[((co * cin_g + ci) * kh + ky) * kw + kx] += g * at(&x, b, c, iy, ix);
                                }
                            }
                        }
                    }
                }
            }
        }
        double worst = 0;
        for (int64_t i = 0; i < n * c_in * h * w; i++) {
            worst = fmax(worst, fabs(gx[i] - ref_gx[i]));
        }
        for (int64_t i = 0; i < c_out * cin_g * kh * kw; i++) {
            worst = fmax(worst, fabs(gw[i] - ref_gw[i]));
        }
        CHECK(worst < 1e-9, "trial %d: float64 gradients differ from the naive loops by %g", trial, worst);
        if (trial % 4 == 0) {   /* the float32 path: same values, tolerance for float rounding */
            float *fx = as_float(&x), *fw = as_float(&wt), *fg = as_float(&gy);
            float *fgx = malloc((size_t)(n * c_in * h * w) * sizeof(float));
            float *fgw = malloc((size_t)(c_out * cin_g * kh * kw) * sizeof(float));
            CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT32, gy.shape, (uintptr_t)fg, gy.strides, wt.shape,
                                                  (uintptr_t)fw, wt.strides, stride, padding, dilation, groups,
                                                  x.shape, (uintptr_t)fgx), TT_OK, "backward_input float32");
            CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT32, x.shape, (uintptr_t)fx, x.strides, gy.shape,
                                                   (uintptr_t)fg, gy.strides, stride, padding, dilation, groups,
                                                   wt.shape, (uintptr_t)fgw), TT_OK, "backward_weight float32");
            double bad = 0;
            for (int64_t i = 0; i < n * c_in * h * w; i++) {
                bad = fmax(bad, fabs(fgx[i] - ref_gx[i]) / (1 + fabs(ref_gx[i])));
            }
            for (int64_t i = 0; i < c_out * cin_g * kh * kw; i++) {
                bad = fmax(bad, fabs(fgw[i] - ref_gw[i]) / (1 + fabs(ref_gw[i])));
            }
            CHECK(bad < 1e-4, "trial %d: float32 gradients differ from the naive loops by %g", trial, bad);
            free(fx);
            free(fw);
            free(fg);
            free(fgx);
            free(fgw);
        }
        free(x.data);
        free(wt.data);
        free(gy.data);
        free(gx);
        free(gw);
        free(ref_gx);
        free(ref_gw);
    }
}

static void test_avg_pool_backward_random(void) {
    for (int trial = 0; trial < 200; trial++) {
        const int adaptive = trial % 3 == 0, include_pad = trial % 2;
        const int64_t n = draw(0, 2), c = draw(1, 3), h = draw(1, 7), w = draw(1, 7);
        int64_t k[2] = {draw(1, 3), draw(1, 3)}, s[2] = {draw(1, 3), draw(1, 3)}, p[2], o[2];
        const int64_t divisor_override = trial % 5 == 0 ? draw(1, 5) : 0;
        for (int d = 0; d < 2; d++) {
            p[d] = draw(0, k[d] / 2);
            const int64_t size = d == 0 ? h : w;
            o[d] = adaptive ? draw(1, 9) : (size + 2 * p[d] - k[d] + s[d] - 1) / s[d] + 1;   /* ceil mode */
            if (!adaptive && (o[d] - 1) * s[d] >= size + p[d]) {
                o[d]--;
            }
        }
        if (o[0] < 1 || o[1] < 1) {   /* a kernel larger than the padded input */
            continue;
        }
        strided gy = make(n, c, o[0], o[1]);
        const int64_t in_size[2] = {h, w}, total = n * c * h * w;
        double *gx = malloc((size_t)(total + 1) * sizeof(double)), *ref = calloc((size_t)(total + 1), sizeof(double));
        CHECK_STATUS(tt_avg_pool2d_backward(TT_FLOAT64, adaptive, gy.shape, (uintptr_t)gy.data, gy.strides, k, s, p,
                                            include_pad, divisor_override, in_size, (uintptr_t)gx), TT_OK,
                     "avg_pool2d_backward");
        for (int64_t b = 0; b < n * c; b++) {
            for (int64_t oy = 0; oy < o[0]; oy++) {
                for (int64_t ox = 0; ox < o[1]; ox++) {
                    int64_t y0, y1, x0, x1, divisor;
                    if (adaptive) {
                        y0 = oy * h / o[0];
                        y1 = ((oy + 1) * h + o[0] - 1) / o[0];
                        x0 = ox * w / o[1];
                        x1 = ((ox + 1) * w + o[1] - 1) / o[1];
                        divisor = (y1 - y0) * (x1 - x0);
                    } else {
                        y0 = oy * s[0] - p[0];
                        x0 = ox * s[1] - p[1];
                        y1 = y0 + k[0] < h + p[0] ? y0 + k[0] : h + p[0];
                        x1 = x0 + k[1] < w + p[1] ? x0 + k[1] : w + p[1];
                        const int64_t padded = (y1 - y0) * (x1 - x0);
                        y0 = y0 < 0 ? 0 : y0;
                        x0 = x0 < 0 ? 0 : x0;
                        y1 = y1 < h ? y1 : h;
                        x1 = x1 < w ? x1 : w;
                        divisor = divisor_override ? divisor_override : include_pad ? padded : (y1 - y0) * (x1 - x0);
                    }
                    for (int64_t iy = y0; iy < y1; iy++) {
                        for (int64_t ix = x0; ix < x1; ix++) {
                            ref[(b * h + iy) * w + ix] += at(&gy, b / c, b % c, oy, ox) / (double)divisor;
                        }
                    }
                }
            }
        }
        double worst = 0;
        for (int64_t i = 0; i < total; i++) {
            worst = fmax(worst, fabs(gx[i] - ref[i]));
        }
        CHECK(worst < 1e-12, "trial %d: average-pooling gradient differs from the naive loop by %g", trial, worst);
        if (trial % 7 == 0) {   /* float16: accumulated in float, stored once */
            uint16_t *hg = malloc((size_t)gy.reach * sizeof(uint16_t)), *hx = malloc((size_t)(total + 1) * 2);
            for (int64_t i = 0; i < gy.reach; i++) {
                hg[i] = to_half(gy.data[i]);
            }
            CHECK_STATUS(tt_avg_pool2d_backward(TT_FLOAT16, adaptive, gy.shape, (uintptr_t)hg, gy.strides, k, s, p,
                                                include_pad, divisor_override, in_size, (uintptr_t)hx), TT_OK,
                         "avg_pool2d_backward float16");
            double bad = 0;
            for (int64_t i = 0; i < total; i++) {
                bad = fmax(bad, fabs(from_half(hx[i]) - ref[i]) / (1 + fabs(ref[i])));
            }
            CHECK(bad < 2e-3, "trial %d: float16 average-pooling gradient off by %g", trial, bad);
            free(hg);
            free(hx);
        }
        free(gy.data);
        free(gx);
        free(ref);
    }
}

static void test_float16_conv(void) {
    /* a 1x1 image of ones through a 1x1 kernel of 2: dx = 2 * gy, dw = sum of gy */
    const int64_t gy_shape[4] = {3, 1, 2, 2}, gy_strides[4] = {4, 4, 2, 1}, w_shape[4] = {1, 1, 1, 1};
    const int64_t w_strides[4] = {1, 1, 1, 1}, x_shape[4] = {3, 1, 2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    uint16_t gy[12], w = to_half(2), x[12], gx[12], gw = 0;
    for (int i = 0; i < 12; i++) {
        gy[i] = to_half(0.25 * (i % 4 + 1));
        x[i] = to_half(1);
    }
    CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT16, gy_shape, (uintptr_t)gy, gy_strides, w_shape, (uintptr_t)&w,
                                          w_strides, one, zero, one, 1, x_shape, (uintptr_t)gx), TT_OK, "float16 dx");
    CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT16, x_shape, (uintptr_t)x, gy_strides, gy_shape, (uintptr_t)gy,
                                           gy_strides, one, zero, one, 1, w_shape, (uintptr_t)&gw), TT_OK,
                 "float16 dw");
    for (int i = 0; i < 12; i++) {
        CHECK(from_half(gx[i]) == 0.5 * (i % 4 + 1), "float16 dx[%d] = %g", i, from_half(gx[i]));
    }
    CHECK(from_half(gw) == 7.5, "float16 dw = %g, expected 7.5", from_half(gw));
}

static void test_bad_arguments(void) {
    const int64_t gy_shape[4] = {1, 2, 2, 2}, gs[4] = {8, 4, 2, 1}, w_shape[4] = {2, 1, 2, 2}, ws[4] = {4, 4, 2, 1};
    const int64_t x_shape[4] = {1, 1, 3, 3}, xs[4] = {9, 9, 3, 1}, one[2] = {1, 1}, zero[2] = {0, 0};
    const int64_t in_size[2] = {3, 3}, neg[2] = {-1, 0}, far[2] = {INT64_MAX - 2, INT64_MAX - 2};
    double buf[64] = {0};
    const uintptr_t p = (uintptr_t)buf;
    CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT64, gy_shape, p, gs, w_shape, p, ws, one, zero, one, 1, x_shape, p),
                 TT_OK, "valid dx");
    CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT64, x_shape, p, xs, gy_shape, p, gs, one, zero, one, 1, w_shape, p),
                 TT_OK, "valid dw");
    CHECK_STATUS(tt_conv2d_backward_input(TT_INT32, gy_shape, p, gs, w_shape, p, ws, one, zero, one, 1, x_shape, p),
                 TT_ERR_UNSUPPORTED_DTYPE, "int32 dx");
    CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT64, gy_shape, p, gs, w_shape, p, ws, one, zero, one, 2, x_shape, p),
                 TT_ERR_INVALID_ARG, "groups not matching the channels");
    CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT64, gy_shape, p, gs, w_shape, p, ws, zero, zero, one, 1, x_shape, p),
                 TT_ERR_INVALID_ARG, "stride 0");
    CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT64, x_shape, p, xs, gy_shape, p, gs, one, neg, one, 1, w_shape, p),
                 TT_ERR_INVALID_ARG, "negative padding");
    CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT64, x_shape, p, xs, gy_shape, p, gs, far, zero, one, 1, w_shape, p),
                 TT_ERR_OVERFLOW, "window reach overflowing int64");
    CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT64, x_shape, p, xs, gy_shape, p, gs, one, zero, one, 1, w_shape, 0),
                 TT_ERR_INVALID_ARG, "NULL result");
    CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT64, NULL, p, gs, w_shape, p, ws, one, zero, one, 1, x_shape, p),
                 TT_ERR_INVALID_ARG, "NULL shape");
    CHECK_STATUS(tt_avg_pool2d_backward(TT_FLOAT64, 0, gy_shape, p, gs, zero, one, zero, 1, 0, in_size, p),
                 TT_ERR_INVALID_ARG, "kernel 0");
    CHECK_STATUS(tt_avg_pool2d_backward(TT_FLOAT64, 0, gy_shape, p, gs, one, one, zero, 1, -2, in_size, p),
                 TT_ERR_INVALID_ARG, "negative divisor");
    CHECK_STATUS(tt_avg_pool2d_backward(TT_FLOAT64, 0, gy_shape, p, gs, NULL, one, zero, 1, 0, in_size, p),
                 TT_ERR_INVALID_ARG, "NULL kernel");
    CHECK_STATUS(tt_avg_pool2d_backward(TT_BOOL, 1, gy_shape, p, gs, NULL, NULL, NULL, 0, 0, in_size, p),
                 TT_ERR_UNSUPPORTED_DTYPE, "bool");
    CHECK_STATUS(tt_avg_pool2d_backward(TT_FLOAT64, 1, gy_shape, p, gs, NULL, NULL, NULL, 0, 0, far, p),
                 TT_ERR_OVERFLOW, "huge planes");
}

/* Tiny planes (stride 1, dilation 1, one group, output planes of at most 16 positions): float32
   forward, dx and dW take conv.c's tiny-plane kernels on a CPU with AVX-512 (the forward and dx
   its plane kernel, dW its register sums) and the general code elsewhere; all must match the naive
   loops. Values are quarters, so every sum is exact in float32. Strided operands, output channel
   counts on both sides of the kernels' blocks of 16, windows of 1 to 25 taps. */
static void test_tiny_planes_float32(void) {
    const int64_t geometries[][6] = {   /* h, w, kh, kw, ph, pw */
        {4, 4, 3, 3, 1, 1}, {2, 2, 3, 3, 1, 1}, {1, 3, 1, 3, 0, 1}, {3, 5, 2, 3, 0, 0}, {2, 2, 5, 5, 2, 2},
        {4, 4, 1, 1, 0, 0}, {3, 3, 3, 3, 0, 0}, {1, 1, 3, 3, 1, 1}, {4, 2, 3, 2, 1, 0},
    };
    const int64_t channel_counts[][2] = {{1, 1}, {5, 17}, {16, 33}, {3, 16}};
    for (size_t gi = 0; gi < sizeof geometries / sizeof geometries[0]; gi++) {
        for (size_t ci_ = 0; ci_ < sizeof channel_counts / sizeof channel_counts[0]; ci_++) {
            const int64_t h = geometries[gi][0], w = geometries[gi][1], kh = geometries[gi][2], kw = geometries[gi][3];
            const int64_t ph = geometries[gi][4], pw = geometries[gi][5];
            const int64_t c_in = channel_counts[ci_][0], c_out = channel_counts[ci_][1], n = 3;
            const int64_t oh = h + 2 * ph - kh + 1, ow = w + 2 * pw - kw + 1;
            strided x = make(n, c_in, h, w), wt = make(c_out, c_in, kh, kw), gy = make(n, c_out, oh, ow);
            float *fx = as_float(&x), *fw = as_float(&wt), *fg = as_float(&gy);
            float *out = malloc((size_t)(n * c_out * oh * ow) * sizeof(float));
            float *gx = malloc((size_t)(n * c_in * h * w) * sizeof(float));
            float *gw = malloc((size_t)(c_out * c_in * kh * kw) * sizeof(float));
            double *ref_out = calloc((size_t)(n * c_out * oh * ow), sizeof(double));
            double *ref_gx = calloc((size_t)(n * c_in * h * w), sizeof(double));
            double *ref_gw = calloc((size_t)(c_out * c_in * kh * kw), sizeof(double));
            const int64_t ones[2] = {1, 1}, padding[2] = {ph, pw}, out_size[2] = {oh, ow};
            CHECK_STATUS(tt_conv2d(TT_FLOAT32, x.shape, (uintptr_t)fx, x.strides, wt.shape, (uintptr_t)fw, wt.strides, 0,
                                   0, ones, padding, ones, 1, out_size, (uintptr_t)out), TT_OK, "tiny conv2d");
            CHECK_STATUS(tt_conv2d_backward_input(TT_FLOAT32, gy.shape, (uintptr_t)fg, gy.strides, wt.shape,
                                                  (uintptr_t)fw, wt.strides, ones, padding, ones, 1, x.shape,
                                                  (uintptr_t)gx), TT_OK, "tiny backward_input");
            CHECK_STATUS(tt_conv2d_backward_weight(TT_FLOAT32, x.shape, (uintptr_t)fx, x.strides, gy.shape,
                                                   (uintptr_t)fg, gy.strides, ones, padding, ones, 1, wt.shape,
                                                   (uintptr_t)gw), TT_OK, "tiny backward_weight");
            for (int64_t b = 0; b < n; b++) {
                for (int64_t co = 0; co < c_out; co++) {
                    for (int64_t oy = 0; oy < oh; oy++) {
                        for (int64_t ox = 0; ox < ow; ox++) {
                            const double g = at(&gy, b, co, oy, ox);
                            double *o = ref_out + ((b * c_out + co) * oh + oy) * ow + ox;
                            for (int64_t ci = 0; ci < c_in; ci++) {
                                for (int64_t ky = 0; ky < kh; ky++) {
                                    for (int64_t kx = 0; kx < kw; kx++) {
                                        const int64_t iy = oy - ph + ky, ix = ox - pw + kx;
                                        if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
                                            continue;
                                        }
                                        *o += at(&x, b, ci, iy, ix) * at(&wt, co, ci, ky, kx);
                                        ref_gx[((b * c_in + ci) * h + iy) * w + ix] += g * at(&wt, co, ci, ky, kx);
                                        ref_gw[((co * c_in + ci) * kh + ky) * kw + kx] += g * at(&x, b, ci, iy, ix);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            double worst = 0;
            for (int64_t i = 0; i < n * c_out * oh * ow; i++) {
                worst = fmax(worst, fabs(out[i] - ref_out[i]));
            }
            for (int64_t i = 0; i < n * c_in * h * w; i++) {
                worst = fmax(worst, fabs(gx[i] - ref_gx[i]));
            }
            for (int64_t i = 0; i < c_out * c_in * kh * kw; i++) {
                worst = fmax(worst, fabs(gw[i] - ref_gw[i]));
            }
            CHECK(worst == 0, "tiny planes %zu/%zu: off by %g (quarters: exact in float32)", gi, ci_, worst);
            free(x.data);
            free(wt.data);
            free(gy.data);
            free(fx);
            free(fw);
            free(fg);
            free(out);
            free(gx);
            free(gw);
            free(ref_out);
            free(ref_gx);
            free(ref_gw);
        }
    }
}

/* tt_max_pool_backward against a plain loop: repeated indices add up, in order; a bad index is
   refused with TT_ERR_INDEX; float64, float32 and float16. */
static void test_max_pool_backward(void) {
    const int64_t planes = 37, size = 20, outputs = 9;
    int64_t *indices = malloc((size_t)(planes * outputs) * sizeof(int64_t));
    double *gy = malloc((size_t)(planes * outputs) * sizeof(double)), *gx = malloc((size_t)(planes * size) * sizeof(double));
    double *ref = calloc((size_t)(planes * size), sizeof(double));
    float *fy = malloc((size_t)(planes * outputs) * sizeof(float)), *fx = malloc((size_t)(planes * size) * sizeof(float));
    uint16_t *hy = malloc((size_t)(planes * outputs) * sizeof(uint16_t)), *hx = malloc((size_t)(planes * size) * sizeof(uint16_t));
    for (int64_t i = 0; i < planes * outputs; i++) {
        indices[i] = draw(0, size - 1);
        gy[i] = (double)draw(-8, 8) / 4;
        fy[i] = (float)gy[i];
        hy[i] = to_half(gy[i]);
        ref[(i / outputs) * size + indices[i]] += gy[i];
    }
    for (int64_t i = 0; i < planes * size; i++) {
        gx[i] = fx[i] = 99;   /* overwritten: the kernel zeroes each plane first */
        hx[i] = to_half(99);
    }
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT64, planes, size, outputs, (uintptr_t)gy, (uintptr_t)indices,
                                      (uintptr_t)gx), TT_OK, "max_pool_backward float64");
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT32, planes, size, outputs, (uintptr_t)fy, (uintptr_t)indices,
                                      (uintptr_t)fx), TT_OK, "max_pool_backward float32");
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT16, planes, size, outputs, (uintptr_t)hy, (uintptr_t)indices,
                                      (uintptr_t)hx), TT_OK, "max_pool_backward float16");
    double worst = 0;
    for (int64_t i = 0; i < planes * size; i++) {   /* quarters, at most 9 of them: exact in all three */
        worst = fmax(worst, fabs(gx[i] - ref[i]) + fabs(fx[i] - ref[i]) + fabs(from_half(hx[i]) - ref[i]));
    }
    CHECK(worst == 0, "max_pool_backward: off by %g", worst);
    indices[5] = size;
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT32, planes, size, outputs, (uintptr_t)fy, (uintptr_t)indices,
                                      (uintptr_t)fx), TT_ERR_INDEX, "max_pool_backward index past the plane");
    indices[5] = -1;
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT32, planes, size, outputs, (uintptr_t)fy, (uintptr_t)indices,
                                      (uintptr_t)fx), TT_ERR_INDEX, "max_pool_backward negative index");
    CHECK_STATUS(tt_max_pool_backward(TT_INT32, planes, size, outputs, (uintptr_t)fy, (uintptr_t)indices,
                                      (uintptr_t)fx), TT_ERR_UNSUPPORTED_DTYPE, "max_pool_backward int32");
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT32, -1, size, outputs, (uintptr_t)fy, (uintptr_t)indices,
                                      (uintptr_t)fx), TT_ERR_INVALID_ARG, "max_pool_backward negative planes");
    CHECK_STATUS(tt_max_pool_backward(TT_FLOAT32, planes, size, outputs, (uintptr_t)fy, (uintptr_t)indices, 0),
                 TT_ERR_INVALID_ARG, "max_pool_backward NULL output");
    free(indices);
    free(gy);
    free(gx);
    free(ref);
    free(fy);
    free(fx);
    free(hy);
    free(hx);
}

int main(void) {
    test_conv_backward_random();
    test_max_pool_backward();
    test_tiny_planes_float32();
    test_avg_pool_backward_random();
    test_float16_conv();
    test_bad_arguments();
    return check_report("test_conv_backward");
}
