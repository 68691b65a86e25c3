/*
 * matmul.c: C = A @ B (optionally C += A @ B) for a batch of matrices over any strides.
 *
 * Two implementations. float32 and float64 run the packed GEMM with SIMD micro-kernels further
 * down ("the float32/float64 GEMM"). Every other dtype (the integers, float16) runs the plain
 * cache-blocked GEMM right below, correct for every stride and reasonably fast. For each block of
 * C of at most MC x NC elements:
 *   1. zero an accumulator of MC x NC values in the compute type (float, double or 64-bit int);
 *   2. for each slice of KC along k, copy ("pack") the A block (MC x KC) and the B block
 *      (KC x NC) into contiguous buffers, converted to the compute type; this is where any
 *      strides (transposed, sliced, broadcast) and float16 are dealt with, once per element
 *      per block instead of once per multiply;
 *   3. accumulate with an i-k-j loop: four rows of C at a time, each element of a packed row of
 *      B used for all four, the innermost j loop over contiguous memory, which -O3 vectorizes;
 *   4. store the accumulator into C through C's strides, converting (and wrapping integers).
 * A thin product (fewer than 4 rows or columns) whose large operand is column-major is computed
 * transposed (C^T = B^T A^T, only strides change), so that packing reads that operand in memory
 * order.
 *
 * Integers accumulate in uint64_t: wrap-around is then defined behaviour, and wrapping each
 * product and sum modulo 2^64 and then to the storage width gives the same bits as computing in
 * the storage width (the ring Z/2^w), which is what PyTorch returns on overflow.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "gemm_kernels.h"
#include "half.h"
#include "tt/tt.h"
#include "tt/kernels/matmul.h"
#include "tt/kernels/parallel.h"

#define MC 64  /* rows of C per block */
#define NC 256 /* columns of C per block */
#define KC 256 /* length of the k slice per packed block */

/* One product's geometry, strides in bytes. */
typedef struct gemm_dims {
    int64_t m, n, k;
    int64_t a_row, a_col, b_row, b_col, c_row, c_col;
    int accumulate;
} gemm_dims;

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Loading and storing one element: (name, storage type T, compute type CT). */
#define LD_int(T, CT, p) ((CT)(int64_t)(*(const T *)(p)))   /* sign-extend, then to uint64 */
#define ST_int(T, CT, p, v) (*(T *)(p) = (T)(v))              /* keeps the low bits: wraps */
#define LD_flt(T, CT, p) ((CT)(*(const T *)(p)))
#define ST_flt(T, CT, p, v) (*(T *)(p) = (T)(v))
#define LD_half(T, CT, p) tt_half_to_float(*(const uint16_t *)(p))
#define ST_half(T, CT, p, v) (*(uint16_t *)(p) = tt_float_to_half(v))

#define MATMUL_DTYPES(X)                                     \
    X(int8, int8_t, uint64_t, int, TT_INT8)                  \
    X(int16, int16_t, uint64_t, int, TT_INT16)               \
    X(int32, int32_t, uint64_t, int, TT_INT32)               \
    X(int64, int64_t, uint64_t, int, TT_INT64)               \
    X(uint8, uint8_t, uint64_t, int, TT_UINT8)               \
    X(float16, uint16_t, float, half, TT_FLOAT16)            \
    X(float32, float, float, flt, TT_FLOAT32)                \
    X(float64, double, double, flt, TT_FLOAT64)

#define DEFINE_GEMM(NAME, T, CT, KIND, CODE)                                                          \
    /* dst[r * cols + c] = src[r][c] converted; walks src in its cheaper order. */                    \
    static void pack_##NAME(CT *restrict dst, const char *src, int64_t rows, int64_t cols,           \
                            int64_t s_row, int64_t s_col) {                                           \
        if (s_col <= s_row) {                                                                         \
            for (int64_t r = 0; r < rows; r++) {                                                      \
                const char *row = src + r * s_row;                                                    \
                CT *out = dst + r * cols;                                                             \
                if (s_col == (int64_t)sizeof(T)) {                                                    \
                    for (int64_t c = 0; c < cols; c++) out[c] = LD_##KIND(T, CT, row + c * (int64_t)sizeof(T)); \
                } else {                                                                              \
                    for (int64_t c = 0; c < cols; c++) out[c] = LD_##KIND(T, CT, row + c * s_col);    \
                }                                                                                     \
            }                                                                                         \
        } else {                                                                                      \
            for (int64_t c = 0; c < cols; c++) {                                                      \
                const char *col = src + c * s_col;                                                    \
                for (int64_t r = 0; r < rows; r++) dst[r * cols + c] = LD_##KIND(T, CT, col + r * s_row); \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    /* acc[mc x nc] += ap[mc x kc] @ bp[kc x nc], all contiguous. */                                  \
    static void block_##NAME(CT *restrict acc, const CT *restrict ap, const CT *restrict bp,         \
                             int64_t mc, int64_t nc, int64_t kc) {                                    \
        int64_t i = 0;                                                                                \
        for (; i + 4 <= mc; i += 4) {                                                                 \
            CT *restrict c0 = acc + i * nc, *restrict c1 = c0 + nc, *restrict c2 = c1 + nc,          \
                         *restrict c3 = c2 + nc;                                                      \
            const CT *a0 = ap + i * kc, *a1 = a0 + kc, *a2 = a1 + kc, *a3 = a2 + kc;                  \
            for (int64_t p = 0; p < kc; p++) {                                                        \
                const CT x0 = a0[p], x1 = a1[p], x2 = a2[p], x3 = a3[p];                              \
                const CT *restrict brow = bp + p * nc;                                                \
                for (int64_t j = 0; j < nc; j++) {                                                    \
                    const CT y = brow[j];                                                             \
                    c0[j] += x0 * y;                                                                  \
                    c1[j] += x1 * y;                                                                  \
                    c2[j] += x2 * y;                                                                  \
                    c3[j] += x3 * y;                                                                  \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        for (; i < mc; i++) {                                                                         \
            CT *restrict c0 = acc + i * nc;                                                           \
            const CT *a0 = ap + i * kc;                                                               \
            for (int64_t p = 0; p < kc; p++) {                                                        \
                const CT x0 = a0[p];                                                                  \
                const CT *restrict brow = bp + p * nc;                                                \
                for (int64_t j = 0; j < nc; j++) c0[j] += x0 * brow[j];                               \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    /* One product, blocked; acc, ap and bp are scratch of the sizes tt_matmul allocates. */          \
    static void gemm_##NAME(const gemm_dims *d, const char *a, const char *b, char *c, CT *acc,       \
                            CT *ap, CT *bp) {                                                         \
        for (int64_t i0 = 0; i0 < d->m; i0 += MC) {                                                   \
            const int64_t mc = min64(MC, d->m - i0);                                                  \
            for (int64_t j0 = 0; j0 < d->n; j0 += NC) {                                               \
                const int64_t nc = min64(NC, d->n - j0);                                              \
                memset(acc, 0, (size_t)(mc * nc) * sizeof(CT));                                       \
                for (int64_t p0 = 0; p0 < d->k; p0 += KC) {                                           \
                    const int64_t kc = min64(KC, d->k - p0);                                          \
                    pack_##NAME(ap, a + i0 * d->a_row + p0 * d->a_col, mc, kc, d->a_row, d->a_col);   \
                    pack_##NAME(bp, b + p0 * d->b_row + j0 * d->b_col, kc, nc, d->b_row, d->b_col);   \
                    block_##NAME(acc, ap, bp, mc, nc, kc);                                            \
                }                                                                                     \
                for (int64_t i = 0; i < mc; i++) {                                                    \
                    char *row = c + (i0 + i) * d->c_row + j0 * d->c_col;                              \
                    const CT *src = acc + i * nc;                                                     \
                    for (int64_t j = 0; j < nc; j++) {                                                \
                        char *p = row + j * d->c_col;                                                 \
                        CT v = src[j];                                                                \
                        if (d->accumulate) {                                                          \
                            v += LD_##KIND(T, CT, p);                                                 \
                        }                                                                             \
                        ST_##KIND(T, CT, p, v);                                                       \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    /* Every product of the batch; `offsets` walks the batch index like an odometer. */               \
    static tt_status run_##NAME(const gemm_dims *d, int batch_ndim, const int64_t *batch_shape,       \
                                int64_t batch, const char *a, const int64_t *a_bs, const char *b,     \
                                const int64_t *b_bs, char *c, const int64_t *c_bs) {                  \
        const size_t acc_n = (size_t)(min64(d->m, MC) * min64(d->n, NC));                             \
        const size_t ap_n = (size_t)(min64(d->m, MC) * min64(d->k, KC));                              \
        const size_t bp_n = (size_t)(min64(d->k, KC) * min64(d->n, NC));                              \
        CT *scratch = malloc((acc_n + ap_n + bp_n + 1) * sizeof(CT));                                 \
        if (scratch == NULL) {                                                                        \
            return TT_ERR_NOMEM;                                                                      \
        }                                                                                             \
        int64_t index[TT_MAX_DIMS] = {0};                                                             \
        for (int64_t t = 0; t < batch; t++) {                                                         \
            gemm_##NAME(d, a, b, c, scratch, scratch + acc_n, scratch + acc_n + ap_n);                \
            for (int dim = batch_ndim - 1; dim >= 0; dim--) {                                         \
                const int64_t size = (int64_t)sizeof(T);                                              \
                if (++index[dim] < batch_shape[dim]) {                                                \
                    a += a_bs[dim] * size;                                                            \
                    b += b_bs[dim] * size;                                                            \
                    c += c_bs[dim] * size;                                                            \
                    break;                                                                            \
                }                                                                                     \
                index[dim] = 0;                                                                       \
                a -= (batch_shape[dim] - 1) * a_bs[dim] * size;                                       \
                b -= (batch_shape[dim] - 1) * b_bs[dim] * size;                                       \
                c -= (batch_shape[dim] - 1) * c_bs[dim] * size;                                       \
            }                                                                                         \
        }                                                                                             \
        free(scratch);                                                                                \
        return TT_OK;                                                                                 \
    }

MATMUL_DTYPES(DEFINE_GEMM)

typedef tt_status (*run_fn)(const gemm_dims *, int, const int64_t *, int64_t, const char *,
                            const int64_t *, const char *, const int64_t *, char *, const int64_t *);

#define REGISTER_GEMM(NAME, T, CT, KIND, CODE) [CODE] = run_##NAME,
static const run_fn run_table[TT_NUM_DTYPES] = {MATMUL_DTYPES(REGISTER_GEMM)};

/* ====================================================================== the float32/float64 GEMM
 *
 * Packed panels, cache blocking and a register-blocked micro-kernel (the BLIS/GotoBLAS loop
 * nest). For one product C (m x n) = A (m x k) @ B (k x n):
 *
 *   for jc over n in steps of NC:                 a B panel of NC columns
 *     for pc over k in steps of KC:
 *       pack B[pc:pc+KC, jc:jc+NC] into NR-wide micro-panels (kc x NR each, row p holds B[p, j..j+NR))
 *       for each unit (a rectangle of the (m, NC) tile), claimed by whichever thread is free:
 *         for ic over its rows in steps of MC:
 *           pack A[ic:ic+MC, pc:pc+KC] into MR-tall micro-panels (kc x MR, column p holds A[i..i+MR, p])
 *           for jr over its NR panels, ir over the MC block in steps of MR:
 *             micro-kernel: the MR x NR tile of C (+)= A micro-panel @ B micro-panel
 *
 * Packing reads A and B through their strides (transposed, sliced and broadcast operands cost
 * no copy beyond the packing itself) and pads the edge panels with zeros, so the micro-kernel
 * always computes a full MR x NR tile; an edge tile is stored through a small buffer.
 *
 * Three micro-kernels, each with its own blocking (one "family" of packing and loops per tile
 * shape, generated by DEFINE_FAST_GEMM), picked at run time:
 *   avx512 (AVX-512F): float32 12 x 32 (24 zmm accumulators, 2 loads of B and 12 broadcasts of
 *            A per step), float64 12 x 16; KC = 512, MC = 240 (float32: the A block is 480 KiB,
 *            in the 2 MiB L2; a 64 KiB B micro-panel streams from L2), NC = 4096. KC = 512
 *            rather than 256 halves the micro-kernel calls, whose fixed cost (zeroing, the C
 *            tile's loads and stores) was ~5% of a 256-step call: 1 thread 141-147 -> 151-153
 *            GFLOP/s on 1024^3 and 2048^3 (128: 135-141; 384: 147; 768: as 512).
 *   avx2 (AVX2+FMA): float32 6 x 16 (12 ymm accumulators), float64 6 x 8; KC = 256 (a 16 KiB B
 *            micro-panel stays in L1), MC = 144 (float32: a 144 KiB A block in L2), NC = 4096.
 *   generic: plain C with the avx2 blocking (the compiler vectorizes it for the baseline ISA).
 * The vector kernels are compiled with __attribute__((target(...))) (the rest of the build stays
 * generic x86-64). TT_GENERIC_KERNELS=1 in the environment (read once) or tt_gemm_force_generic(1)
 * selects the generic one; tt_gemm_set_kernel names one explicitly (tests, benchmarks).
 *
 * Threads: when a column range of B fits a core's L2 (a thread's share of all of k, or a share of
 * one k slice cut into a few ranges per thread), column units each pack their range and multiply
 * all rows by it (column_task). Otherwise
 * the B panel is packed once per (jc, pc) by all threads (disjoint micro-panels) and is
 * then shared read-only; the (m, nc) tile is cut into about 4 units per thread (rows in whole MR
 * micro-rows, and also columns in whole NR micro-panels when m is small), claimed dynamically
 * through tt_parallel_for, so a thread the OS (or the hypervisor) holds up leaves its share to the
 * others instead of stalling the product. Each unit packs its A blocks into one of `workers`
 * buffers, taken from a free-list bitmask for the duration of a chunk, and writes only its
 * rectangle of C. A batch of small products is instead split over the batch (each worker runs
 * whole products with its own buffers). Every element of C is computed by one unit in one fixed
 * order, so results do not depend on the thread count or on which thread ran what.
 */

#if defined(__x86_64__) || defined(__i386__)
#define TT_GEMM_X86 1
#include <immintrin.h>
#include <sched.h>
#else
#define TT_GEMM_X86 0
#endif

/* A thread's share of a packed B panel that stays in its core's L2 alongside an A block: half of
   a 2 MiB L2, all of a 1 MiB one. */
#define GEMM_L2_SHARE_BYTES ((int64_t)1 << 20)

/* Below this many multiply-adds a product runs on one thread. */
#define GEMM_PARALLEL_MIN_FLOPS ((int64_t)1 << 17)
/* Column units hold at least this many micro-panels of B each. */
#define GEMM_MIN_PANELS 4
/* Units of one product per thread (dynamic load balance). */
#define GEMM_UNITS_PER_THREAD 4
/* The packed B panel of one step holds at most about this many elements (all of k at once when it
   fits: two parallel regions per product instead of two per KC slice). */
#define GEMM_BPACK_ELEMS ((int64_t)1 << 21)
/* Scratch blocks up to this size are kept for the next product. */
#define GEMM_CACHE_MAX ((size_t)32 << 20)

enum { KERNEL_GENERIC = 0, KERNEL_AVX2 = 1, KERNEL_AVX512 = 2, KERNEL_AUTO = -1 };
static const char *const kernel_names[] = {"generic", "avx2", "avx512"};

/* -1: not decided yet; else the best kernel this CPU (and TT_GENERIC_KERNELS) allows.
   `forced`: KERNEL_AUTO, or the kernel tt_gemm_set_kernel / tt_gemm_force_generic asked for. */
static atomic_int gemm_detected = -1;
static atomic_int gemm_forced = KERNEL_AUTO;

static int gemm_detect(void) {
    int choice = atomic_load_explicit(&gemm_detected, memory_order_relaxed);
    if (choice < 0) {
        /* cpu_features.h's switches, so TT_GENERIC_KERNELS means the same here as elsewhere */
        choice = tt_cpu_use_avx512f() ? KERNEL_AVX512 : tt_cpu_use_avx2_fma() ? KERNEL_AVX2 : KERNEL_GENERIC;
        atomic_store_explicit(&gemm_detected, choice, memory_order_relaxed);
    }
    return choice;
}

/* The kernel products use now. */
static int gemm_kernel(void) {
    const int forced = atomic_load_explicit(&gemm_forced, memory_order_relaxed);
    return forced != KERNEL_AUTO ? forced : gemm_detect();
}

const char *tt_gemm_kernel_name(void) { return kernel_names[gemm_kernel()]; }

void tt_gemm_force_generic(int on) {
    atomic_store_explicit(&gemm_forced, on ? KERNEL_GENERIC : KERNEL_AUTO, memory_order_relaxed);
}

tt_status tt_gemm_set_kernel(const char *name) {
    if (name == NULL || name[0] == '\0') {
        atomic_store_explicit(&gemm_forced, KERNEL_AUTO, memory_order_relaxed);
        return TT_OK;
    }
    for (int k = KERNEL_GENERIC; k <= KERNEL_AVX512; k++) {
        if (strcmp(name, kernel_names[k]) == 0) {
            int ok = k == KERNEL_GENERIC;
#if TT_GEMM_X86
            __builtin_cpu_init();
            if (k == KERNEL_AVX2) {
                ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
            } else if (k == KERNEL_AVX512) {
                ok = __builtin_cpu_supports("avx512f");
            }
#endif
            if (!ok) {
                return TT_ERR_UNSUPPORTED_DTYPE;
            }
            atomic_store_explicit(&gemm_forced, k, memory_order_relaxed);
            return TT_OK;
        }
    }
    return TT_ERR_INVALID_ARG;
}

/* Stores an MR x NR tile `acc` (row-major, NR wide) into C's mr x nr corner: C = acc, or
   C += acc when load_c. */
#define DEFINE_TILE_STORE(T, MR, NR)                                                              \
    static void tile_store_##T##_##MR##x##NR(const T *acc, T *c, int64_t rsc, int64_t csc, int mr, \
                                             int nr, int load_c) {                                \
        for (int i = 0; i < mr; i++) {                                                           \
            T *row = c + i * rsc;                                                                 \
            const T *src = acc + i * (NR);                                                        \
            if (load_c) {                                                                         \
                for (int j = 0; j < nr; j++) row[j * csc] += src[j];                              \
            } else {                                                                              \
                for (int j = 0; j < nr; j++) row[j * csc] = src[j];                               \
            }                                                                                     \
        }                                                                                         \
    }

/* The generic micro-kernel: acc (MR x NR) = sum over p of ap[p] (MR values) x bp[p] (NR values),
   in plain C that the compiler vectorizes for the baseline ISA. */
#define DEFINE_GENERIC_UKR(T, MR, NR)                                                             \
    static void ukr_generic_##T(int64_t kc, const T *restrict ap, const T *restrict bp, T *c,     \
                                int64_t rsc, int64_t csc, int mr, int nr, int load_c) {           \
        T acc[(MR) * (NR)];                                                                       \
        for (int t = 0; t < (MR) * (NR); t++) acc[t] = 0;                                         \
        for (int64_t p = 0; p < kc; p++) {                                                        \
            const T *restrict a = ap + p * (MR);                                                  \
            const T *restrict b = bp + p * (NR);                                                  \
            for (int i = 0; i < (MR); i++) {                                                      \
                const T x = a[i];                                                                 \
                for (int j = 0; j < (NR); j++) acc[i * (NR) + j] += x * b[j];                     \
            }                                                                                     \
        }                                                                                         \
        tile_store_##T##_##MR##x##NR(acc, c, rsc, csc, mr, nr, load_c);                           \
    }

DEFINE_TILE_STORE(float, 6, 16)
DEFINE_TILE_STORE(double, 6, 8)
DEFINE_GENERIC_UKR(float, 6, 16)
DEFINE_GENERIC_UKR(double, 6, 8)

#if TT_GEMM_X86
/* The AVX2+FMA micro-kernels: 6 rows x 2 vectors of accumulators (12 registers), two vector loads
   of B and one broadcast of A per row and step. V: vector type, S: intrinsic suffix (ps/pd),
   W: lanes. A full tile with unit column stride is updated in place, any other through acc.
   As in the AVX-512 kernels below, the body reads A(i, p) at ap[i * lda + p * astep] and B(p, 0..NR)
   at bp + p * ldb: the packed kernel passes lda = 1, astep = 6, ldb = NR as constants (GCC
   compiles a copy of the body specialized to them, the same loop as a body written with plain
   offsets), the strided one reads a row-major A where it lies (small_gemm_f32). */
#define DEFINE_AVX2_UKR(T, V, S, W, NR)                                                              \
    __attribute__((target("avx2,fma"))) static inline void ukr_avx2_body_##T(                      \
        int64_t kc, const T *restrict ap, const int64_t lda, const int64_t astep, const T *restrict bp, \
        const int64_t ldb, T *c, int64_t rsc, int64_t csc, int mr, int nr, int load_c) {          \
        V c00 = _mm256_setzero_##S(), c01 = _mm256_setzero_##S();                                  \
        V c10 = _mm256_setzero_##S(), c11 = _mm256_setzero_##S();                                  \
        V c20 = _mm256_setzero_##S(), c21 = _mm256_setzero_##S();                                  \
        V c30 = _mm256_setzero_##S(), c31 = _mm256_setzero_##S();                                  \
        V c40 = _mm256_setzero_##S(), c41 = _mm256_setzero_##S();                                  \
        V c50 = _mm256_setzero_##S(), c51 = _mm256_setzero_##S();                                  \
        for (int i = 0; i < mr; i++) { /* C is needed at the end: start fetching it now */         \
            _mm_prefetch((const char *)(c + i * rsc), _MM_HINT_T0);                                \
            _mm_prefetch((const char *)(c + i * rsc + (nr - 1) * csc), _MM_HINT_T0);               \
        }                                                                                          \
        /* rows 0-3 and 4-5 from two bases, at offsets 0, lda, 2 lda, 3 lda */                     \
        const T *a0 = ap, *a4 = ap + 4 * lda;                                                      \
        _Pragma("GCC unroll 4")                                                                    \
        for (int64_t p = 0; p < kc; p++) {                                                         \
            const V b0 = _mm256_loadu_##S(bp), b1 = _mm256_loadu_##S(bp + (W));                    \
            V a;                                                                                   \
            a = _mm256_broadcast_s##S##_(a0);                                                      \
            c00 = _mm256_fmadd_##S(a, b0, c00);                                                    \
            c01 = _mm256_fmadd_##S(a, b1, c01);                                                    \
            a = _mm256_broadcast_s##S##_(a0 + lda);                                                \
            c10 = _mm256_fmadd_##S(a, b0, c10);                                                    \
            c11 = _mm256_fmadd_##S(a, b1, c11);                                                    \
            a = _mm256_broadcast_s##S##_(a0 + 2 * lda);                                            \
            c20 = _mm256_fmadd_##S(a, b0, c20);                                                    \
            c21 = _mm256_fmadd_##S(a, b1, c21);                                                    \
            a = _mm256_broadcast_s##S##_(a0 + 3 * lda);                                            \
            c30 = _mm256_fmadd_##S(a, b0, c30);                                                    \
            c31 = _mm256_fmadd_##S(a, b1, c31);                                                    \
            a = _mm256_broadcast_s##S##_(a4);                                                      \
            c40 = _mm256_fmadd_##S(a, b0, c40);                                                    \
            c41 = _mm256_fmadd_##S(a, b1, c41);                                                    \
            a = _mm256_broadcast_s##S##_(a4 + lda);                                                \
            c50 = _mm256_fmadd_##S(a, b0, c50);                                                    \
            c51 = _mm256_fmadd_##S(a, b1, c51);                                                    \
            a0 += astep;                                                                           \
            a4 += astep;                                                                           \
            bp += ldb;                                                                             \
        }                                                                                          \
        const V rows[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};           \
        if (mr == 6 && nr == 2 * (W) && csc == 1) {                                                \
            for (int i = 0; i < 6; i++) {                                                          \
                T *row = c + i * rsc;                                                              \
                V lo = rows[2 * i], hi = rows[2 * i + 1];                                          \
                if (load_c) {                                                                      \
                    lo = _mm256_add_##S(lo, _mm256_loadu_##S(row));                                \
                    hi = _mm256_add_##S(hi, _mm256_loadu_##S(row + (W)));                          \
                }                                                                                  \
                _mm256_storeu_##S(row, lo);                                                        \
                _mm256_storeu_##S(row + (W), hi);                                                  \
            }                                                                                      \
        } else {                                                                                   \
            T acc[6 * 2 * (W)];                                                                    \
            for (int i = 0; i < 12; i++) _mm256_storeu_##S(acc + i * (W), rows[i]);                \
            tile_store_##T##_6x##NR(acc, c, rsc, csc, mr, nr, load_c);                             \
        }                                                                                          \
    }                                                                                              \
    __attribute__((target("avx2,fma"))) static void ukr_avx2_##T(                                  \
        int64_t kc, const T *restrict ap, const T *restrict bp, T *c, int64_t rsc, int64_t csc,   \
        int mr, int nr, int load_c) {                                                              \
        ukr_avx2_body_##T(kc, ap, 1, 6, bp, 2 * (W), c, rsc, csc, mr, nr, load_c);                 \
    }
#define _mm256_broadcast_sps_ _mm256_broadcast_ss
#define _mm256_broadcast_spd_ _mm256_broadcast_sd
DEFINE_AVX2_UKR(float, __m256, ps, 8, 16)
DEFINE_AVX2_UKR(double, __m256d, pd, 4, 8)

/* The float kernel reading A where it lies (see small_gemm_f32). */
__attribute__((target("avx2,fma"))) static void ukr_avx2_strided_float(
    int64_t kc, const float *restrict ap, int64_t lda, int64_t astep, const float *restrict bp, int64_t ldb,
    float *c, int64_t rsc, int64_t csc, int mr, int nr, int load_c) {
    ukr_avx2_body_float(kc, ap, lda, astep, bp, ldb, c, rsc, csc, mr, nr, load_c);
}

/* The AVX-512F micro-kernels: MR rows x 2 vectors of accumulators (12 rows: 24 of the 32 zmm
   registers; 8 rows: 16, for products with a multiple of 8 rows, such as convolutions' output
   channels), two vector loads of B and one broadcast of A (folded into the FMA) per row and step.
   With unit column stride every tile, edges included, is stored with (masked) vector stores; any
   other C goes through acc. */
#define AVX512_ROW(i, S, V)                                                                         \
    a = _mm512_set1_##S((i) < 4 ? a0[(i) * lda] : (i) < 8 ? a4[((i) - 4) * lda] : a8[((i) - 8) * lda]); \
    c##i##_0 = _mm512_fmadd_##S(a, b0, c##i##_0);                                                  \
    c##i##_1 = _mm512_fmadd_##S(a, b1, c##i##_1);
#define AVX512_ZERO(i, S, V) V c##i##_0 = _mm512_setzero_##S(), c##i##_1 = _mm512_setzero_##S();
#define AVX512_ROWS8(X, S, V) X(0, S, V) X(1, S, V) X(2, S, V) X(3, S, V) X(4, S, V) X(5, S, V) X(6, S, V) X(7, S, V)
#define AVX512_ROWS12(X, S, V) AVX512_ROWS8(X, S, V) X(8, S, V) X(9, S, V) X(10, S, V) X(11, S, V)
#define AVX512_LIST(i, S, V) c##i##_0, c##i##_1,
#define _mm512_mask_loadu_ps_(m, p) _mm512_maskz_loadu_ps(m, p)
#define _mm512_mask_loadu_pd_(m, p) _mm512_maskz_loadu_pd(m, p)
/* The body reads A(i, p) at ap[i * lda + p * astep] and B(p, 0..NR) at bp + p * ldb: the packed
   kernel fixes lda = 1, astep = MR, ldb = NR as constants (so it compiles to plain offsets); the
   strided one takes them as arguments, to read a row-major A or B where it lies. */
#define DEFINE_AVX512_UKR(T, V, S, W, MR, NR)                                                        \
    DEFINE_TILE_STORE(T, MR, NR)                                                                    \
    __attribute__((target("avx512f"))) static inline void ukr_avx512_body_##T##_##MR(              \
        int64_t kc, const T *restrict ap, const int64_t lda, const int64_t astep, const T *restrict bp, \
        const int64_t ldb, T *c, int64_t rsc, int64_t csc, int mr, int nr, int load_c) {          \
        AVX512_ROWS##MR(AVX512_ZERO, S, V)                                                          \
        for (int i = 0; i < mr; i++) { /* C is needed at the end: start fetching it now */         \
            _mm_prefetch((const char *)(c + i * rsc), _MM_HINT_T0);                                \
            _mm_prefetch((const char *)(c + i * rsc + (nr - 1) * csc), _MM_HINT_T0);               \
        }                                                                                          \
        /* rows 0-3, 4-7 and 8-11 from three bases, at offsets 0, lda, 2 lda, 3 lda: few enough    \
           registers that none is spilled when lda is not a constant */                           \
        const T *a0 = ap, *a4 = ap + 4 * lda, *a8 = (MR) > 8 ? ap + 8 * lda : ap;                  \
        for (int64_t p = 0; p < kc; p++) {                                                         \
            const V b0 = _mm512_loadu_##S(bp), b1 = _mm512_loadu_##S(bp + (W));                    \
            _mm_prefetch((const char *)(bp + 16 * ldb), _MM_HINT_T0);                              \
            _mm_prefetch((const char *)(bp + 16 * ldb + (W)), _MM_HINT_T0);                        \
            _mm_prefetch((const char *)(a0 + 16 * astep), _MM_HINT_T0);                            \
            V a;                                                                                   \
            AVX512_ROWS##MR(AVX512_ROW, S, V)                                                       \
            a0 += astep;                                                                           \
            a4 += astep;                                                                           \
            a8 += astep;                                                                           \
            bp += ldb;                                                                             \
        }                                                                                          \
        const V rows[2 * (MR)] = {AVX512_ROWS##MR(AVX512_LIST, S, V)};                              \
        if (csc == 1) {                                                                            \
            const __mmask16 m0 = (__mmask16)(nr >= (W) ? (1u << (W)) - 1 : (1u << nr) - 1);        \
            const __mmask16 m1 = (__mmask16)(nr >= 2 * (W) ? (1u << (W)) - 1                       \
                                              : nr > (W) ? (1u << (nr - (W))) - 1 : 0);            \
            for (int i = 0; i < mr; i++) {                                                         \
                T *row = c + i * rsc;                                                              \
                V lo = rows[2 * i], hi = rows[2 * i + 1];                                          \
                if (nr == 2 * (W)) {                                                               \
                    if (load_c) {                                                                  \
                        lo = _mm512_add_##S(lo, _mm512_loadu_##S(row));                            \
                        hi = _mm512_add_##S(hi, _mm512_loadu_##S(row + (W)));                      \
                    }                                                                              \
                    _mm512_storeu_##S(row, lo);                                                    \
                    _mm512_storeu_##S(row + (W), hi);                                              \
                } else {                                                                           \
                    if (load_c) {                                                                  \
                        lo = _mm512_add_##S(lo, _mm512_mask_loadu_##S##_(m0, row));                \
                        hi = _mm512_add_##S(hi, _mm512_mask_loadu_##S##_(m1, row + (W)));          \
                    }                                                                              \
                    _mm512_mask_storeu_##S(row, m0, lo);                                           \
                    _mm512_mask_storeu_##S(row + (W), m1, hi);                                     \
                }                                                                                  \
            }                                                                                      \
        } else {                                                                                   \
            T acc[(MR) * 2 * (W)];                                                                 \
            for (int i = 0; i < 2 * (MR); i++) _mm512_storeu_##S(acc + i * (W), rows[i]);          \
            tile_store_##T##_##MR##x##NR(acc, c, rsc, csc, mr, nr, load_c);                        \
        }                                                                                          \
    }                                                                                              \
    __attribute__((target("avx512f"))) static void ukr_avx512_##T##_##MR(                          \
        int64_t kc, const T *restrict ap, const T *restrict bp, T *c, int64_t rsc, int64_t csc,   \
        int mr, int nr, int load_c) {                                                              \
        ukr_avx512_body_##T##_##MR(kc, ap, 1, (MR), bp, 2 * (W), c, rsc, csc, mr, nr, load_c);     \
    }
DEFINE_AVX512_UKR(float, __m512, ps, 16, 12, 32)
DEFINE_AVX512_UKR(double, __m512d, pd, 8, 12, 16)
DEFINE_AVX512_UKR(float, __m512, ps, 16, 8, 32)
DEFINE_AVX512_UKR(double, __m512d, pd, 8, 8, 16)

/* The same micro-kernels reading their operands in place (see small_gemm_f32). */
__attribute__((target("avx512f"))) static void ukr_avx512_strided_float_12(
    int64_t kc, const float *restrict ap, int64_t lda, int64_t astep, const float *restrict bp, int64_t ldb,
    float *c, int64_t rsc, int64_t csc, int mr, int nr, int load_c) {
    ukr_avx512_body_float_12(kc, ap, lda, astep, bp, ldb, c, rsc, csc, mr, nr, load_c);
}
__attribute__((target("avx512f"))) static void ukr_avx512_strided_float_8(
    int64_t kc, const float *restrict ap, int64_t lda, int64_t astep, const float *restrict bp, int64_t ldb,
    float *c, int64_t rsc, int64_t csc, int mr, int nr, int load_c) {
    ukr_avx512_body_float_8(kc, ap, lda, astep, bp, ldb, c, rsc, csc, mr, nr, load_c);
}

/* Packing an operand whose packed order is across its memory order (A row-major into MR-tall
   panels, B column-major into NR-wide panels) is a transposition: element by element it costs
   about 3 cycles per float, which is a sixth of a 128^3 product. These move 16 x 16 blocks
   through registers instead: 16 loads, the usual 4-stage shuffle network (64 shuffles), 16 stores.

   transpose16: dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols (both
   <= 16). Only those elements are read or written (masked loads and stores). */
__attribute__((target("avx512f"))) static void transpose16_f32(const float *src, int64_t src_stride, int rows,
                                                              int cols, float *dst, int64_t dst_stride) {
    const __mmask16 col_mask = (__mmask16)((1u << cols) - 1u), row_mask = (__mmask16)((1u << rows) - 1u);
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) {
        r[i] = i < rows ? _mm512_maskz_loadu_ps(col_mask, src + i * src_stride) : _mm512_setzero_ps();
    }
    /* Within each 128-bit lane: 4 x 4 transposes of rows 4g..4g+3, so that r[4g + c] holds, in
       lane L, column 4L + c of those four rows. */
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int g = 0; g < 16; g += 4) {
        const __m512d t0 = _mm512_castps_pd(t[g]), t1 = _mm512_castps_pd(t[g + 1]);
        const __m512d t2 = _mm512_castps_pd(t[g + 2]), t3 = _mm512_castps_pd(t[g + 3]);
        r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
        r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
        r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
        r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
    /* Then gather lane L of r[c], r[4 + c], r[8 + c], r[12 + c] into column 4L + c. */
    for (int c = 0; c < 4; c++) {
        const __m512 x0 = _mm512_shuffle_f32x4(r[c], r[4 + c], _MM_SHUFFLE(2, 0, 2, 0));
        const __m512 x1 = _mm512_shuffle_f32x4(r[c], r[4 + c], _MM_SHUFFLE(3, 1, 3, 1));
        const __m512 y0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], _MM_SHUFFLE(2, 0, 2, 0));
        const __m512 y1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], _MM_SHUFFLE(3, 1, 3, 1));
        t[c] = _mm512_shuffle_f32x4(x0, y0, _MM_SHUFFLE(2, 0, 2, 0));
        t[8 + c] = _mm512_shuffle_f32x4(x0, y0, _MM_SHUFFLE(3, 1, 3, 1));
        t[4 + c] = _mm512_shuffle_f32x4(x1, y1, _MM_SHUFFLE(2, 0, 2, 0));
        t[12 + c] = _mm512_shuffle_f32x4(x1, y1, _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int c = 0; c < cols; c++) {
        _mm512_mask_storeu_ps(dst + c * dst_stride, row_mask, t[c]);
    }
}

/* A full 12-row panel of a row-major A (csa == 1) into dst[p * 12 + i]. */
__attribute__((target("avx512f"))) static void pack_a_rows_f32x12(float *restrict dst, const float *src,
                                                                 int64_t rsa, int64_t kc) {
    for (int64_t p = 0; p < kc; p += 16) {
        const int cols = kc - p < 16 ? (int)(kc - p) : 16;
        transpose16_f32(src + p, rsa, 12, cols, dst + p * 12, 12);
    }
}

/* A full 6-row panel of a row-major A (csa == 1) into dst[p * 6 + i], for the AVX2 family: eight
   columns at a time through registers, an 8 x 8 transpose (unpack, shuffle, 128-bit permute) of
   the six rows and two zero rows, column q stored as 8 floats at dst + 6 q, whose last two the
   store of column q + 1 overwrites; column 7 stores exactly 6. The scalar loop it replaces wrote
   one float at a time with a stride of 6 and cost ~8% of a 1024^3 product on two threads (every
   column unit packs all of A). The rest of the columns (kc not a multiple of 8) one by one. */
__attribute__((target("avx2"))) static void pack_a_rows_f32x6(float *restrict dst, const float *src, int64_t rsa,
                                                              int64_t kc) {
    const __m256 zero = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        const float *s0 = src + p;
        const __m256 r0 = _mm256_loadu_ps(s0), r1 = _mm256_loadu_ps(s0 + rsa);
        const __m256 r2 = _mm256_loadu_ps(s0 + 2 * rsa), r3 = _mm256_loadu_ps(s0 + 3 * rsa);
        const __m256 r4 = _mm256_loadu_ps(s0 + 4 * rsa), r5 = _mm256_loadu_ps(s0 + 5 * rsa);
        /* t: pairs of rows interleaved; u: columns (q | q + 4) of rows 0-3 and of rows 4-5 (+ 2 zeros) */
        const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        const __m256 u4 = _mm256_shuffle_ps(t4, zero, 0x44), u5 = _mm256_shuffle_ps(t4, zero, 0xEE);
        const __m256 u6 = _mm256_shuffle_ps(t5, zero, 0x44), u7 = _mm256_shuffle_ps(t5, zero, 0xEE);
        float *d = dst + p * 6;
        _mm256_storeu_ps(d + 0, _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps(d + 6, _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps(d + 12, _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps(d + 18, _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps(d + 30, _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps(d + 36, _mm256_permute2f128_ps(u2, u6, 0x31));
        const __m256 last = _mm256_permute2f128_ps(u3, u7, 0x31);
        _mm_storeu_ps(d + 42, _mm256_castps256_ps128(last));
        _mm_storel_pi((__m64 *)(d + 46), _mm256_extractf128_ps(last, 1));
    }
    for (; p < kc; p++) {
        for (int i = 0; i < 6; i++) {
            dst[p * 6 + i] = src[i * rsa + p];
        }
    }
}

/* A full 32-column panel of a column-major B (rsb == 1) into out[p * 32 + j]; and of a row-major
   B (csb == 1), two vector copies per row. */
__attribute__((target("avx512f"))) static void pack_b_cols_f32x32(float *restrict out, const float *src,
                                                                 int64_t csb, int64_t kc) {
    for (int64_t p = 0; p < kc; p += 16) {
        const int rows = kc - p < 16 ? (int)(kc - p) : 16;
        transpose16_f32(src + p, csb, 16, rows, out + p * 32, 32);
        transpose16_f32(src + 16 * csb + p, csb, 16, rows, out + p * 32 + 16, 32);
    }
}

__attribute__((target("avx512f"))) static void pack_b_rows_f32x32(float *restrict out, const float *src,
                                                                 int64_t rsb, int64_t kc) {
    for (int64_t p = 0; p < kc; p++) {
        _mm512_storeu_ps(out + p * 32, _mm512_loadu_ps(src + p * rsb));
        _mm512_storeu_ps(out + p * 32 + 16, _mm512_loadu_ps(src + p * rsb + 16));
    }
}
#endif

/* One product's operands (strides in elements) and the batch around it, per element type. */
#define DEFINE_GEMM_TYPES(T)                                                                       \
    typedef void (*ukr_##T##_fn)(int64_t, const T *restrict, const T *restrict, T *, int64_t,      \
                                 int64_t, int, int, int);                                          \
    typedef struct prob_##T {                                                                      \
        int64_t m, n, k;                                                                           \
        const T *a;                                                                                \
        int64_t rsa, csa;                                                                          \
        const T *b;                                                                                \
        int64_t rsb, csb;                                                                          \
        T *c;                                                                                      \
        int64_t rsc, csc;                                                                          \
        int accumulate;                                                                            \
        const T *bias;        /* NULL, or C = bias + A @ B (tt_linear): bias[j * bias_stride] */   \
        int64_t bias_stride;  /* for column j, or for row i when bias_rows (a swapped product) */  \
        int bias_rows;                                                                             \
    } prob_##T;                                                                                    \
                                                                                                   \
    /* The mr x nr tile of C at (i0, j0) (c: its first element) set to the bias, before the      \
       product's first k slice adds to it: no pass of its own over C, and the tile is in L1 when  \
       the micro-kernel reads it back. */                                                         \
    static void bias_tile_##T(const prob_##T *pr, T *c, int64_t i0, int64_t j0, int mr, int nr) {  \
        for (int r = 0; r < mr; r++) {                                                             \
            T *row = c + r * pr->rsc;                                                              \
            if (pr->bias_rows) {                                                                   \
                const T value = pr->bias[(i0 + r) * pr->bias_stride];                              \
                for (int q = 0; q < nr; q++) row[q * pr->csc] = value;                             \
            } else {                                                                               \
                for (int q = 0; q < nr; q++) row[q * pr->csc] = pr->bias[(j0 + q) * pr->bias_stride]; \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    typedef struct batch_##T {                                                                     \
        prob_##T base;                                                                             \
        int batch_ndim;                                                                            \
        const int64_t *batch_shape, *a_bs, *b_bs, *c_bs;                                           \
        int64_t batch, bsize;                                                                      \
        ukr_##T##_fn ukr;                                                                          \
        T *apacks, *bpacks;                                                                        \
        int64_t inner_workers;                                                                     \
        atomic_uint_fast64_t slots; /* free list of the workers' buffers (batch split) */          \
    } batch_##T;
DEFINE_GEMM_TYPES(float)
DEFINE_GEMM_TYPES(double)

int tt_slot_take(atomic_uint_fast64_t *slots, int64_t count) {
    for (;;) {
        uint64_t cur = atomic_load_explicit(slots, memory_order_relaxed);
        for (int64_t i = 0; i < count; i++) {
            if (!(cur & ((uint64_t)1 << i)) &&
                atomic_compare_exchange_strong_explicit(slots, &cur, cur | ((uint64_t)1 << i),
                                                        memory_order_acquire, memory_order_relaxed)) {
                return (int)i;
            }
        }
#if TT_GEMM_X86
        sched_yield();
#endif
    }
}

void tt_slot_give(atomic_uint_fast64_t *slots, int index) {
    atomic_fetch_and_explicit(slots, ~((uint64_t)1 << index), memory_order_release);
}

/* Scratch of the float GEMM. One block is kept between products (packing buffers of a few MiB
   would otherwise be mapped, and page-faulted, afresh on every call); it starts with a 64-byte
   header holding its usable size. Concurrent products each take their own block. */
static _Atomic(char *) gemm_cache = NULL;

static void *scratch_take(size_t bytes) {
    char *blk = atomic_exchange_explicit(&gemm_cache, NULL, memory_order_acquire);
    if (blk != NULL && *(size_t *)blk >= bytes) {
        return blk + 64;
    }
    free(blk);
    void *mem = NULL;
    if (posix_memalign(&mem, 64, bytes + 64) != 0) {
        return NULL;
    }
    *(size_t *)mem = bytes;
    return (char *)mem + 64;
}

static void scratch_give(void *p) {
    char *blk = (char *)p - 64;
    if (*(size_t *)blk > GEMM_CACHE_MAX) {
        free(blk);
        return;
    }
    free(atomic_exchange_explicit(&gemm_cache, blk, memory_order_acq_rel));
}

/* One family of packing and loops for an MR x NR micro-tile and MC/KC/NC blocking. */
#define DEFINE_FAST_GEMM(TAG, T, MR, NR, MC, KC, NC)                                               \
    /* The k rows of one slice of a product's k: k cut into as few slices of at most KC as        \
       possible, of equal size (784 = 4 x 196, not 3 x 256 + 16: a thin last slice costs a whole  \
       pass over C for little work). A function of k alone: every blocking uses these slices. */  \
    static inline int64_t kslice_##TAG(int64_t k) {                                                \
        const int64_t slices = (k + (KC) - 1) / (KC);                                              \
        return slices > 1 ? (k + slices - 1) / slices : k;                                         \
    }                                                                                              \
                                                                                                   \
    /* A[0:mc, 0:kc] (A points at the block's first element) into MR-tall micro-panels. */         \
    static void pack_a_##TAG(T *restrict dst, const T *a, int64_t rsa, int64_t csa, int64_t mc,    \
                             int64_t kc) {                                                         \
        for (int64_t i0 = 0; i0 < mc; i0 += (MR), dst += (MR) * kc) {                              \
            const int64_t rows = mc - i0 < (MR) ? mc - i0 : (MR);                                  \
            const T *src = a + i0 * rsa;                                                           \
            if (rows == (MR) && csa == 1 && rsa != 1 && PACK_A_ROWS_##TAG(dst, src, rsa, kc)) {    \
                continue;                                                                          \
            }                                                                                      \
            if (rows == (MR) && rsa == 1) {                                                        \
                for (int64_t p = 0; p < kc; p++)                                                   \
                    for (int i = 0; i < (MR); i++) dst[p * (MR) + i] = src[p * csa + i];           \
            } else {                                                                               \
                for (int64_t i = 0; i < rows; i++) {                                               \
                    const T *r = src + i * rsa;                                                    \
                    for (int64_t p = 0; p < kc; p++) dst[p * (MR) + i] = r[p * csa];               \
                }                                                                                  \
                for (int64_t i = rows; i < (MR); i++)                                              \
                    for (int64_t p = 0; p < kc; p++) dst[p * (MR) + i] = 0;                        \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Micro-panels [q0, q1) of B[0:kc, 0:nc] (NR columns each, zero-padded past nc). */           \
    static void pack_b_##TAG(T *restrict dst, const T *b, int64_t rsb, int64_t csb, int64_t kc,    \
                             int64_t nc, int64_t q0, int64_t q1) {                                 \
        for (int64_t q = q0; q < q1; q++) {                                                        \
            T *out = dst + q * (NR) * kc;                                                          \
            const int64_t j0 = q * (NR), cols = nc - j0 < (NR) ? nc - j0 : (NR);                   \
            const T *src = b + j0 * csb;                                                           \
            if (cols == (NR) && PACK_B_FAST_##TAG(out, src, rsb, csb, kc)) {                       \
                continue;                                                                          \
            }                                                                                      \
            if (cols == (NR) && csb == 1) {                                                        \
                for (int64_t p = 0; p < kc; p++)                                                   \
                    for (int j = 0; j < (NR); j++) out[p * (NR) + j] = src[p * rsb + j];           \
            } else {                                                                               \
                for (int64_t j = 0; j < cols; j++) {                                               \
                    const T *col = src + j * csb;                                                  \
                    for (int64_t p = 0; p < kc; p++) out[p * (NR) + j] = col[p * rsb];             \
                }                                                                                  \
                for (int64_t j = cols; j < (NR); j++)                                              \
                    for (int64_t p = 0; p < kc; p++) out[p * (NR) + j] = 0;                        \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Rows [r0, r1) x micro-panels [q0, q1) of the current (jc, pb) step: for each MC block of    \
       rows, every KC slice of the packed k range in order (the C block stays in L2 between       \
       slices); A is packed into apack. */                                                        \
    static void macro_##TAG(const prob_##T *pr, ukr_##T##_fn ukr, const T *bpack, T *apack,       \
                            int64_t pb, int64_t kb, int64_t step, int64_t jc, int64_t nc, int64_t r0, \
                            int64_t r1, int64_t q0, int64_t q1) {                                  \
        const int64_t panels = (nc + (NR) - 1) / (NR);                                             \
        for (int64_t ic = r0; ic < r1; ic += (MC)) {                                               \
            const int64_t mc = r1 - ic < (MC) ? r1 - ic : (MC);                                    \
            for (int64_t p0 = 0; p0 < kb; p0 += step) {                                            \
                const int64_t pc = pb + p0, kc = kb - p0 < step ? kb - p0 : step;                  \
                const int load_c = pr->accumulate || pc > 0;                                       \
                const T *bslice = bpack + p0 * panels * (NR);                                      \
                pack_a_##TAG(apack, pr->a + ic * pr->rsa + pc * pr->csa, pr->rsa, pr->csa, mc, kc); \
                for (int64_t q = q0; q < q1; q++) {                                                \
                    const int64_t j = q * (NR);                                                    \
                    const int nr = (int)(nc - j < (NR) ? nc - j : (NR));                           \
                    const T *bp = bslice + q * (NR) * kc;                                          \
                    T *cj = pr->c + ic * pr->rsc + (jc + j) * pr->csc;                             \
                    for (int64_t i = 0; i < mc; i += (MR)) {                                       \
                        const int mr = (int)(mc - i < (MR) ? mc - i : (MR));                       \
                        T *tile = cj + i * pr->rsc;                                                \
                        int add_to_c = load_c;                                                     \
                        if (!add_to_c && pr->bias != NULL) {                                       \
                            bias_tile_##T(pr, tile, ic + i, jc + j, mr, nr);                       \
                            add_to_c = 1;                                                          \
                        }                                                                          \
                        ukr(kc, apack + i * kc, bp, tile, pr->rsc, pr->csc, mr, nr, add_to_c);     \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Shared state of one parallel product. */                                                    \
    typedef struct par_##TAG {                                                                     \
        const prob_##T *pr;                                                                        \
        ukr_##T##_fn ukr;                                                                          \
        T *bpack, *apacks;                                                                         \
        int64_t pb, kb, jc, nc, panels;                                                            \
        int64_t kstep;    /* the k rows of one slice, kslice(k): the same for every block */       \
        int64_t tm, tn;   /* the unit grid: tm row ranges x tn column ranges */                    \
        int64_t workers;  /* A buffers in apacks */                                                \
        atomic_uint_fast64_t slots;                                                                \
    } par_##TAG;                                                                                   \
                                                                                                   \
    /* Items [begin, end) of the packing of B[pb:pb+kb, jc:jc+nc]: item = (k slice of kstep rows, \
       micro-panel); the slice at row p0 of the block lives at bpack + p0 * panels * NR. */        \
    static void pack_b_task_##TAG(int64_t begin, int64_t end, void *ctx) {                         \
        const par_##TAG *s = ctx;                                                                  \
        const prob_##T *pr = s->pr;                                                                \
        for (int64_t it = begin; it < end;) {                                                      \
            const int64_t slice = it / s->panels, q0 = it % s->panels;                             \
            const int64_t q1 = end - it < s->panels - q0 ? q0 + (end - it) : s->panels;            \
            const int64_t step = s->kstep;                                                         \
            const int64_t p0 = slice * step, kc = s->kb - p0 < step ? s->kb - p0 : step;           \
            pack_b_##TAG(s->bpack + p0 * s->panels * (NR),                                         \
                         pr->b + (s->pb + p0) * pr->rsb + s->jc * pr->csb, pr->rsb, pr->csb, kc,   \
                         s->nc, q0, q1);                                                           \
            it += q1 - q0;                                                                         \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void macro_task_##TAG(int64_t begin, int64_t end, void *ctx) {                          \
        par_##TAG *s = ctx;                                                                        \
        const int64_t rows = (s->pr->m + (MR) - 1) / (MR);                                         \
        const int slot = tt_slot_take(&s->slots, s->workers);                                         \
        T *apack = s->apacks + slot * (int64_t)(MC) * (KC);                                        \
        for (int64_t u = begin; u < end; u++) {                                                    \
            const int64_t um = u / s->tn, un = u % s->tn;                                          \
            const int64_t r0 = rows * um / s->tm * (MR);                                           \
            int64_t r1 = rows * (um + 1) / s->tm * (MR);                                           \
            r1 = r1 < s->pr->m ? r1 : s->pr->m;                                                    \
            const int64_t q0 = s->panels * un / s->tn, q1 = s->panels * (un + 1) / s->tn;          \
            if (r0 < r1 && q0 < q1) {                                                              \
                macro_##TAG(s->pr, s->ukr, s->bpack, apack, s->pb, s->kb, s->kstep, s->jc, s->nc, r0, r1, q0, q1); \
            }                                                                                      \
        }                                                                                          \
        tt_slot_give(&s->slots, slot);                                                                \
    }                                                                                              \
                                                                                                   \
    /* Column units (see gemm_run): unit un of tn packs its own micro-panels of B, every k slice, \
       then multiplies all of A's rows by them, so its share of B is packed into and stays in the \
       L2 of the core that uses it. */                                                            \
    static void column_task_##TAG(int64_t begin, int64_t end, void *ctx) {                         \
        par_##TAG *s = ctx;                                                                        \
        const int64_t step = s->kstep, slices = (s->kb + step - 1) / step;                         \
        const int slot = tt_slot_take(&s->slots, s->workers);                                      \
        T *apack = s->apacks + slot * (int64_t)(MC) * (KC);                                        \
        for (int64_t un = begin; un < end; un++) {                                                 \
            const int64_t q0 = s->panels * un / s->tn, q1 = s->panels * (un + 1) / s->tn;          \
            if (q0 == q1) {                                                                        \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t slice = 0; slice < slices; slice++) {                                     \
                pack_b_task_##TAG(slice * s->panels + q0, slice * s->panels + q1, s);              \
            }                                                                                      \
            macro_##TAG(s->pr, s->ukr, s->bpack, apack, s->pb, s->kb, s->kstep, s->jc, s->nc, 0, s->pr->m, q0, q1); \
        }                                                                                          \
        tt_slot_give(&s->slots, slot);                                                             \
    }                                                                                              \
                                                                                                   \
    /* The k rows of B packed at once for a panel of nc columns: all of k when the packed panel   \
       stays within GEMM_BPACK_ELEMS, else a multiple of k's slice (kslice(k)) that does. Blocks  \
       are whole slices, so every element of C sums the same slices in the same order whatever    \
       the blocking, the unit shapes or the thread count. */                                      \
    static int64_t k_block_##TAG(int64_t k, int64_t nc) {                                          \
        const int64_t width = (nc + (NR) - 1) / (NR) * (NR), step = kslice_##TAG(k);               \
        int64_t kb = GEMM_BPACK_ELEMS / width / step * step;                                       \
        kb = kb < step ? step : kb;                                                                \
        return k < kb ? k : kb;                                                                    \
    }                                                                                              \
                                                                                                   \
    /* C = A @ B (or C += A @ B) for one product with k > 0, on `workers` threads (1: on the       \
       calling thread). apacks holds `workers` blocks of MC x KC, bpack one packed B panel          \
       (k_block x nc, see bpack_elems). Two regions per (jc, k block): pack B, then the units. */  \
    static void gemm_run_##TAG(const prob_##T *pr, ukr_##T##_fn ukr, int64_t workers, T *apacks,  \
                               T *bpack) {                                                         \
        par_##TAG s = {.pr = pr, .ukr = ukr, .bpack = bpack, .apacks = apacks, .tm = 1, .tn = 1,   \
                       .workers = workers, .kstep = kslice_##TAG(pr->k)};                          \
        atomic_init(&s.slots, 0);                                                                  \
        const int64_t rows = (pr->m + (MR) - 1) / (MR), want = GEMM_UNITS_PER_THREAD * workers;    \
        if (workers > 1) {                                                                         \
            /* Row ranges of at most MC rows, a multiple of the wanted unit count when there are   \
               enough micro-rows; column ranges make up the count when there are not. */           \
            int64_t tm = (rows + (MC) / (MR) - 1) / ((MC) / (MR));                                 \
            tm = (tm + want - 1) / want * want;                                                    \
            s.tm = tm < rows ? tm : rows;                                                          \
        }                                                                                          \
        for (int64_t jc = 0; jc < pr->n; jc += (NC)) {                                             \
            s.jc = jc;                                                                             \
            s.nc = pr->n - jc < (NC) ? pr->n - jc : (NC);                                          \
            s.panels = (s.nc + (NR) - 1) / (NR);                                                   \
            int64_t kb_max = k_block_##TAG(pr->k, s.nc);                                           \
            int columns = 0;                                                                       \
            if (workers > 1 && s.panels >= 2 * workers) {                                          \
                /* Column units when a unit's share of B fits a core's L2: one unit per thread    \
                   for all of k at once, else k one slice at a time (whole slices: results stay   \
                   the same on any thread count) in as few units as fit, down to GEMM_MIN_PANELS  \
                   micro-panels a unit. */                                                        \
                const int64_t panel_bytes = (NR) * (int64_t)sizeof(T);                             \
                if (kb_max == pr->k &&                                                             \
                    (s.panels + workers - 1) / workers * panel_bytes * pr->k <= GEMM_L2_SHARE_BYTES) { \
                    columns = 1;                                                                   \
                    s.tn = workers;                                                                \
                } else {                                                                           \
                    for (int64_t units = workers; s.panels >= units * GEMM_MIN_PANELS; units += workers) { \
                        if ((s.panels + units - 1) / units * panel_bytes * s.kstep <= GEMM_L2_SHARE_BYTES) { \
                            columns = 1;                                                           \
                            s.tn = units;                                                          \
                            kb_max = s.kstep;                                                      \
                            break;                                                                 \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            if (!columns && workers > 1) {                                                         \
                const int64_t tn = s.tm >= want ? 1 : (want + s.tm - 1) / s.tm;                    \
                s.tn = tn < s.panels ? tn : s.panels;                                              \
            }                                                                                      \
            for (int64_t pb = 0; pb < pr->k; pb += kb_max) {                                       \
                s.pb = pb;                                                                         \
                s.kb = pr->k - pb < kb_max ? pr->k - pb : kb_max;                                  \
                const int64_t items = (s.kb + s.kstep - 1) / s.kstep * s.panels; /* slices x panels */ \
                if (columns) {                                                                     \
                    /* Column units, each of which packs its share of B itself. On 2 threads,   \
                       (256, 512) @ (512, 784): ~210 -> ~255 GFLOP/s, 1024^3: ~290 -> ~305, and    \
                       2048^3 (4 units, k one slice at a time): ~295 -> ~315, against row units,   \
                       each of which reads all of B from L3. */                                   \
                    tt_parallel_for(s.tn, 1, column_task_##TAG, &s);                               \
                } else if (workers > 1) {                                                          \
                    tt_parallel_for(items, 8, pack_b_task_##TAG, &s);                              \
                    tt_parallel_for(s.tm * s.tn, 1, macro_task_##TAG, &s);                         \
                } else {                                                                           \
                    pack_b_task_##TAG(0, items, &s);                                               \
                    macro_##TAG(pr, ukr, bpack, apacks, pb, s.kb, s.kstep, jc, s.nc, 0, pr->m, 0, s.panels); \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Elements of the packed B panel of a product (k x n). */                                     \
    static int64_t bpack_elems_##TAG(int64_t k, int64_t n) {                                       \
        const int64_t nc = n < (NC) ? n : (NC);                                                    \
        const int64_t width = (nc + (NR) - 1) / (NR) * (NR);                                       \
        return (k_block_##TAG(k, nc) * width + 15) / 16 * 16;                                      \
    }                                                                                              \
                                                                                                   \
    /* Products [t0, t1) of the batch; apacks/bpack are this caller's buffers. */                  \
    static void batch_range_##TAG(const batch_##T *s, int64_t t0, int64_t t1, int64_t workers,    \
                                  T *apacks, T *bpack) {                                           \
        int64_t index[TT_MAX_DIMS] = {0};                                                          \
        prob_##T pr = s->base;                                                                     \
        int64_t rest = t0;                                                                         \
        for (int d = s->batch_ndim - 1; d >= 0; d--) {                                             \
            index[d] = rest % s->batch_shape[d];                                                   \
            rest /= s->batch_shape[d];                                                             \
            pr.a += index[d] * s->a_bs[d];                                                         \
            pr.b += index[d] * s->b_bs[d];                                                         \
            pr.c += index[d] * s->c_bs[d];                                                         \
        }                                                                                          \
        for (int64_t t = t0; t < t1; t++) {                                                        \
            const prob_##T current = pr;                                                           \
            for (int d = s->batch_ndim - 1; d >= 0; d--) { /* pr: the next product */             \
                if (++index[d] < s->batch_shape[d]) {                                              \
                    pr.a += s->a_bs[d];                                                            \
                    pr.b += s->b_bs[d];                                                            \
                    pr.c += s->c_bs[d];                                                            \
                    break;                                                                         \
                }                                                                                  \
                index[d] = 0;                                                                      \
                pr.a -= (s->batch_shape[d] - 1) * s->a_bs[d];                                      \
                pr.b -= (s->batch_shape[d] - 1) * s->b_bs[d];                                      \
                pr.c -= (s->batch_shape[d] - 1) * s->c_bs[d];                                      \
            }                                                                                      \
            if (!SMALL_GEMM_##TAG(&current, s->ukr, workers, apacks, bpack, t + 1 < t1 ? &pr : NULL)) { \
                gemm_run_##TAG(&current, s->ukr, workers, apacks, bpack);                          \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Products [begin, end) of a batch split over the threads: chunks are claimed as they come  \
       (a thread the OS holds up leaves its share to the others), each with a buffer pair taken   \
       from the free list for its duration. */                                                    \
    static void batch_task_##TAG(int64_t begin, int64_t end, void *ctx) {                          \
        batch_##T *s = ctx;                                                                        \
        const int slot = tt_slot_take(&s->slots, s->inner_workers);                                \
        batch_range_##TAG(s, begin, end, 1, s->apacks + slot * (int64_t)(MC) * (KC),               \
                          s->bpacks + slot * s->bsize);                                            \
        tt_slot_give(&s->slots, slot);                                                             \
    }                                                                                              \
                                                                                                   \
    /* The batch of products of tt_matmul (k > 0) with micro-kernel `ukr` of this family. */       \
    static tt_status fast_batch_##TAG(batch_##T *s, ukr_##T##_fn ukr) {                           \
        const prob_##T *pr = &s->base;                                                             \
        const int64_t flops = pr->m * pr->n * pr->k;                                               \
        int64_t threads = tt_get_num_threads(), workers = 1, over_batch = 0;                       \
        if (threads > 64) {                                                                        \
            threads = 64; /* the A-buffer free list is one 64-bit mask */                          \
        }                                                                                          \
        if (threads > 1 && flops * s->batch >= GEMM_PARALLEL_MIN_FLOPS) {                          \
            if (s->batch >= threads && flops <= ((int64_t)1 << 24)) {                              \
                over_batch = 1;                                                                    \
                workers = threads;                                                                 \
            } else if (flops >= GEMM_PARALLEL_MIN_FLOPS) {                                         \
                workers = threads;                                                                 \
            }                                                                                      \
        }                                                                                          \
        s->bsize = bpack_elems_##TAG(pr->k, pr->n);                                                \
        const int64_t asize = (int64_t)(MC) * (KC);                                                \
        const int64_t total = asize * workers + s->bsize * (over_batch ? workers : 1);             \
        void *mem = scratch_take((size_t)total * sizeof(T));                                       \
        if (mem == NULL) {                                                                         \
            return TT_ERR_NOMEM;                                                                   \
        }                                                                                          \
        s->ukr = ukr;                                                                              \
        s->apacks = mem;                                                                           \
        s->bpacks = s->apacks + asize * workers;                                                   \
        if (over_batch) {                                                                          \
            s->inner_workers = workers;                                                            \
            atomic_init(&s->slots, 0);                                                             \
            tt_parallel_for(s->batch, 1, batch_task_##TAG, s);                                     \
        } else {                                                                                   \
            batch_range_##TAG(s, 0, s->batch, workers, s->apacks, s->bpacks);                      \
        }                                                                                          \
        scratch_give(mem);                                                                               \
        return TT_OK;                                                                              \
    }

/* Fast packers per family: a nonzero value means the panel was packed. The AVX-512 float family
   has them for A and B (it runs only on CPUs with AVX-512F), the AVX2 float family for A. */
/* The 6-row packer needs AVX2 only; the generic kernel shares the s6x16 family and its packed layout
   (a packer moves bits, so the generic path computes the same products either way). */
#if TT_GEMM_X86
#define PACK_A_ROWS_s6x16(dst, src, rsa, kc) (tt_cpu_use_avx2() ? (pack_a_rows_f32x6(dst, src, rsa, kc), 1) : 0)
#else
#define PACK_A_ROWS_s6x16(dst, src, rsa, kc) 0
#endif
#define PACK_A_ROWS_d6x8(dst, src, rsa, kc) 0
#define PACK_A_ROWS_d12x16(dst, src, rsa, kc) 0
#define PACK_A_ROWS_s12x32(dst, src, rsa, kc) (pack_a_rows_f32x12(dst, src, rsa, kc), 1)
/* The small-product path (small_gemm_f32): nonzero when it ran the product. A fits one packed
   block (m <= MC) and k at most 256: a B panel of 256 rows stays in L1 (AVX2, 16 KiB) or L2. */
#if TT_GEMM_X86
#define SMALL_GEMM_s6x16(pr, ukr, workers, apacks, bpack, next)                                   \
    ((workers) == 1 && (ukr) == ukr_avx2_float && (pr)->m <= 144 && (pr)->k <= 256                 \
         ? (small_gemm_f32_avx2(pr, apacks, bpack, next), 1)                                       \
         : 0)
#else
#define SMALL_GEMM_s6x16(pr, ukr, workers, apacks, bpack, next) 0
#endif
#define SMALL_GEMM_d6x8(pr, ukr, workers, apacks, bpack, next) 0
#define SMALL_GEMM_d12x16(pr, ukr, workers, apacks, bpack, next) 0
#define SMALL_GEMM_s12x32(pr, ukr, workers, apacks, bpack, next)                                  \
    ((workers) == 1 && (ukr) == ukr_avx512_float_12 && (pr)->m <= 240 && (pr)->k <= 256            \
         ? (small_gemm_f32_avx512(pr, apacks, bpack, next), 1)                                     \
         : 0)
#define PACK_B_FAST_s6x16(out, src, rsb, csb, kc) 0
#define PACK_B_FAST_d6x8(out, src, rsb, csb, kc) 0
#define PACK_B_FAST_d12x16(out, src, rsb, csb, kc) 0
#define PACK_B_FAST_s12x32(out, src, rsb, csb, kc)                                                 \
    ((csb) == 1 ? (pack_b_rows_f32x32(out, src, rsb, kc), 1)                                       \
                : (rsb) == 1 ? (pack_b_cols_f32x32(out, src, csb, kc), 1) : 0)

#if TT_GEMM_X86
static void small_gemm_f32_avx2(const prob_float *pr, float *apack, float *bpack, const prob_float *next);
static void small_gemm_f32_avx512(const prob_float *pr, float *apack, float *bpack, const prob_float *next);
#endif

DEFINE_FAST_GEMM(s6x16, float, 6, 16, 144, 256, 4096)
DEFINE_FAST_GEMM(d6x8, double, 6, 8, 72, 256, 2048)
#if TT_GEMM_X86
DEFINE_FAST_GEMM(s12x32, float, 12, 32, 240, 512, 4096)
DEFINE_FAST_GEMM(d12x16, double, 12, 16, 120, 512, 2048)
#endif

#if TT_GEMM_X86
/* A float micro-kernel family as the small-product path sees it: its micro-kernel reading A
   through (lda, astep) and B through ldb, the tile (mr x nr), and the family's packers. `rows8`,
   when not NULL, is the same kernel on 8 rows (AVX-512). */
typedef void (*ukr_strided_float_fn)(int64_t kc, const float *restrict ap, int64_t lda, int64_t astep,
                                     const float *restrict bp, int64_t ldb, float *c, int64_t rsc, int64_t csc,
                                     int mr, int nr, int load_c);
typedef struct small_family {
    int64_t mr, nr;
    ukr_strided_float_fn ukr, rows8;
    void (*pack_a)(float *restrict dst, const float *a, int64_t rsa, int64_t csa, int64_t mc, int64_t kc);
    void (*pack_b)(float *restrict dst, const float *b, int64_t rsb, int64_t csb, int64_t kc, int64_t nc,
                   int64_t q0, int64_t q1);
} small_family;

/* A product small enough that A fits one packed block (m <= MC, k <= 256), on one thread: packing
   is then a sizeable share of the work (a transposition of A for 2 m n k / (m k) flops, a tenth of
   a 128^3 product), so full mr-row panels of a row-major A (unit column stride) are broadcast
   straight from their rows. The last partial panel, and A in other layouts, are packed as usual (A
   once for all column panels). B is still packed, one nr-column panel at a time: read in place,
   the rows of a panel lie a row stride apart, and a power-of-two stride (128 floats) crowds them
   into a few L1 sets. Same arithmetic in the same order as the packed path, so the results are
   bit-identical. */
static void small_gemm_f32(const small_family *f, const prob_float *pr, float *apack, float *bpack,
                           const prob_float *next) {
    const int64_t m = pr->m, n = pr->n, k = pr->k, nr_full = f->nr;
    /* The next product of a batch (NULL: none) is fetched into L2 while this one computes, a few
       of its rows of A and B before each micro-kernel call: a batch of (128, 128) products read
       every operand cold from L3 or memory, and packing B stalled on it. Only rows contiguous in
       memory (row-major A and B) are fetched. */
    const int a_direct = pr->csa == 1;
    /* Rows 8 at a time (AVX-512) when that covers m exactly and mr would not (m = 64: 8 calls a
       column panel instead of 6 with a last one two-thirds empty; m = 128: 16 instead of 11 with
       the last one packed); the accumulators run the same sums, so the bits are the same. */
    const int64_t step = f->rows8 != NULL && a_direct && m % 8 == 0 && m % f->mr != 0 ? 8 : f->mr;
    const int64_t calls = (n + nr_full - 1) / nr_full * ((m + step - 1) / step);
    const int fetch_a = next != NULL && next->csa == 1, fetch_b = next != NULL && next->csb == 1;
    const int64_t a_rows = fetch_a ? (m + calls - 1) / calls : 0, b_rows = fetch_b ? (k + calls - 1) / calls : 0;
    int64_t a_next = 0, b_next = 0;
    const int64_t full_rows = m / step * step;
    if (!a_direct) {
        f->pack_a(apack, pr->a, pr->rsa, pr->csa, m, k);
    } else if (full_rows < m) {
        f->pack_a(apack, pr->a + full_rows * pr->rsa, pr->rsa, pr->csa, m - full_rows, k);
    }
    for (int64_t j = 0; j < n; j += nr_full) {
        const int nr = (int)(n - j < nr_full ? n - j : nr_full);
        f->pack_b(bpack, pr->b + j * pr->csb, pr->rsb, pr->csb, k, nr, 0, 1);
        for (int64_t i = 0; i < m; i += step) {
            const int mr = (int)(m - i < step ? m - i : step);
            float *c = pr->c + i * pr->rsc + j * pr->csc;
            for (int64_t end = a_next + a_rows < m ? a_next + a_rows : m; a_next < end; a_next++) {
                for (int64_t p = 0; p < k; p += 16) _mm_prefetch((const char *)(next->a + a_next * next->rsa + p), _MM_HINT_T1);
            }
            for (int64_t end = b_next + b_rows < k ? b_next + b_rows : k; b_next < end; b_next++) {
                for (int64_t q = 0; q < n; q += 16) _mm_prefetch((const char *)(next->b + b_next * next->rsb + q), _MM_HINT_T1);
            }
            int add_to_c = pr->accumulate;
            if (!add_to_c && pr->bias != NULL) {
                bias_tile_float(pr, c, i, j, mr, nr);
                add_to_c = 1;
            }
            if (step == 8) {
                f->rows8(k, pr->a + i * pr->rsa, pr->rsa, 1, bpack, nr_full, c, pr->rsc, pr->csc, mr, nr, add_to_c);
            } else if (a_direct && i < full_rows) {
                f->ukr(k, pr->a + i * pr->rsa, pr->rsa, 1, bpack, nr_full, c, pr->rsc, pr->csc, mr, nr, add_to_c);
            } else {
                const float *ap = apack + (a_direct ? 0 : i * k);
                f->ukr(k, ap, 1, f->mr, bpack, nr_full, c, pr->rsc, pr->csc, mr, nr, add_to_c);
            }
        }
    }
}

static const small_family small_avx2 = {6, 16, ukr_avx2_strided_float, NULL, pack_a_s6x16, pack_b_s6x16};
static const small_family small_avx512 = {12, 32, ukr_avx512_strided_float_12, ukr_avx512_strided_float_8,
                                          pack_a_s12x32, pack_b_s12x32};

static void small_gemm_f32_avx2(const prob_float *pr, float *apack, float *bpack, const prob_float *next) {
    small_gemm_f32(&small_avx2, pr, apack, bpack, next);
}

static void small_gemm_f32_avx512(const prob_float *pr, float *apack, float *bpack, const prob_float *next) {
    small_gemm_f32(&small_avx512, pr, apack, bpack, next);
}
#endif

tt_ukr_float tt_gemm_ukr_float(int64_t m) {
#if TT_GEMM_X86
    const int kernel = gemm_kernel();
    if (kernel == KERNEL_AVX512) {
        if ((m + 7) / 8 * 8 < (m + 11) / 12 * 12) {
            return (tt_ukr_float){8, 32, ukr_avx512_float_8};
        }
        return (tt_ukr_float){12, 32, ukr_avx512_float_12};
    }
    if (kernel == KERNEL_AVX2) {
        return (tt_ukr_float){6, 16, ukr_avx2_float};
    }
#endif
    return (tt_ukr_float){6, 16, ukr_generic_float};
}

tt_ukr_double tt_gemm_ukr_double(int64_t m) {
#if TT_GEMM_X86
    const int kernel = gemm_kernel();
    if (kernel == KERNEL_AVX512) {
        if ((m + 7) / 8 * 8 < (m + 11) / 12 * 12) {
            return (tt_ukr_double){8, 16, ukr_avx512_double_8};
        }
        return (tt_ukr_double){12, 16, ukr_avx512_double_12};
    }
    if (kernel == KERNEL_AVX2) {
        return (tt_ukr_double){6, 8, ukr_avx2_double};
    }
#endif
    return (tt_ukr_double){6, 8, ukr_generic_double};
}

tt_status tt_gemm(int dtype, int64_t m, int64_t n, int64_t k,
                  uintptr_t a, int64_t rsa, int64_t csa, uintptr_t b, int64_t rsb, int64_t csb,
                  uintptr_t c, int64_t rsc, int64_t csc, int accumulate) {
    if (dtype != TT_FLOAT32 && dtype != TT_FLOAT64) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    const int64_t strides[6] = {rsa, csa, rsb, csb, rsc, csc};
    return tt_matmul(dtype, 0, NULL, m, n, k, a, strides, b, strides + 2, c, strides + 4, accumulate);
}

static tt_status fast_matmul(int dtype, int batch_ndim, const int64_t *batch_shape, int64_t batch, int64_t m,
                             int64_t n, int64_t k, uintptr_t a, const int64_t *a_strides, uintptr_t b,
                             const int64_t *b_strides, uintptr_t c, const int64_t *c_strides, int accumulate,
                             uintptr_t bias, int64_t bias_stride);

tt_status tt_linear(int dtype, int64_t m, int64_t n, int64_t k, uintptr_t a, int64_t rsa, int64_t csa, uintptr_t b,
                    int64_t rsb, int64_t csb, uintptr_t bias, int64_t bias_stride, uintptr_t c, int64_t rsc,
                    int64_t csc) {
    if (dtype != TT_FLOAT32 && dtype != TT_FLOAT64) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (bias == 0) {
        return tt_gemm(dtype, m, n, k, a, rsa, csa, b, rsb, csb, c, rsc, csc, 0);
    }
    const int64_t strides[6] = {rsa, csa, rsb, csb, rsc, csc};
    if (m < 0 || n < 0 || k < 0 || bias_stride < 0) {
        return TT_ERR_INVALID_ARG;
    }
    for (int d = 0; d < 6; d++) {
        if (strides[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
    }
    if (m == 0 || n == 0) {
        return TT_OK; /* C has no elements */
    }
    if (c == 0 || (k > 0 && (a == 0 || b == 0))) {
        return TT_ERR_INVALID_ARG;
    }
    if (k == 0) { /* empty sums: C is the bias */
        const int64_t shape[2] = {m, n}, bias_strides[2] = {0, bias_stride};
        return tt_copy_strided(2, shape, bias, bias_strides, dtype, c, strides + 4, dtype);
    }
    return fast_matmul(dtype, 0, NULL, 1, m, n, k, a, strides, b, strides + 2, c, strides + 4, 0, bias, bias_stride);
}

/* tt_matmul for float32 and float64 (arguments validated, C not empty). */
static tt_status fast_matmul(int dtype, int batch_ndim, const int64_t *batch_shape, int64_t batch, int64_t m,
                             int64_t n, int64_t k, uintptr_t a, const int64_t *a_strides, uintptr_t b,
                             const int64_t *b_strides, uintptr_t c, const int64_t *c_strides, int accumulate,
                             uintptr_t bias, int64_t bias_stride) {
    const int r = batch_ndim, s = batch_ndim + 1;
    if (k == 0) { /* empty sums: C = 0, or C unchanged */
        if (!accumulate) {
            const int64_t zero_strides[TT_MAX_DIMS + 2] = {0};
            int64_t shape[TT_MAX_DIMS + 2];
            for (int d = 0; d < batch_ndim; d++) shape[d] = batch_shape[d];
            shape[r] = m;
            shape[s] = n;
            const double zero = 0.0;
            return tt_copy_strided(batch_ndim + 2, shape, (uintptr_t)&zero, zero_strides, TT_FLOAT64, c, c_strides,
                                   dtype);
        }
        return TT_OK;
    }
    const int kernel = gemm_kernel();
    const int64_t mr = kernel == KERNEL_AVX512 ? 12 : 6;
    const int64_t nr = (dtype == TT_FLOAT32 ? 16 : 8) * (kernel == KERNEL_AVX512 ? 2 : 1);
    /* A product is computed transposed (C^T = B^T A^T; only strides change) when that pads it to
       at least a fifth fewer whole tiles: a matrix with few columns then pads them to MR rows
       rather than to NR (2 vectors) columns. A small gain is not worth it: a row-major C seen
       transposed has a column stride, and its tiles are then stored element by element (x @ W.T
       for a (256, 784) x and a (512, 784) W ran at 108 GFLOP/s transposed for 2% less padding). */
    const int64_t padded = (m + mr - 1) / mr * mr * ((n + nr - 1) / nr * nr);
    const int64_t padded_swapped = (n + mr - 1) / mr * mr * ((m + nr - 1) / nr * nr);
    const int swap = 5 * padded_swapped < 4 * padded;
    const int64_t *as = swap ? b_strides : a_strides, *bs = swap ? a_strides : b_strides;
    const int ar = swap ? s : r, ac = swap ? r : s, cr = swap ? s : r, cc = swap ? r : s;
    if (swap) {
        const int64_t t = m;
        m = n;
        n = t;
        const uintptr_t u = a;
        a = b;
        b = u;
    }
#define FAST_BATCH(T)                                                                              \
    batch_##T st = {.base = {m, n, k, (const T *)a, as[ar], as[ac], (const T *)b, bs[ar], bs[ac],  \
                             (T *)c, c_strides[cr], c_strides[cc], accumulate},                    \
                    .batch_ndim = batch_ndim, .batch_shape = batch_shape, .a_bs = as, .b_bs = bs,  \
                    .c_bs = c_strides, .batch = batch};                                             \
    st.base.bias = (const T *)bias;                                                                \
    st.base.bias_stride = bias_stride;                                                             \
    st.base.bias_rows = swap
    if (dtype == TT_FLOAT32) {
        FAST_BATCH(float);
#if TT_GEMM_X86
        if (kernel == KERNEL_AVX512) {
            return fast_batch_s12x32(&st, ukr_avx512_float_12);
        }
        if (kernel == KERNEL_AVX2) {
            return fast_batch_s6x16(&st, ukr_avx2_float);
        }
#endif
        return fast_batch_s6x16(&st, ukr_generic_float);
    }
    FAST_BATCH(double);
#if TT_GEMM_X86
    if (kernel == KERNEL_AVX512) {
        return fast_batch_d12x16(&st, ukr_avx512_double_12);
    }
    if (kernel == KERNEL_AVX2) {
        return fast_batch_d6x8(&st, ukr_avx2_double);
    }
#endif
    return fast_batch_d6x8(&st, ukr_generic_double);
#undef FAST_BATCH
}

tt_status tt_matmul(int dtype, int batch_ndim, const int64_t *batch_shape,
                    int64_t m, int64_t n, int64_t k,
                    uintptr_t a, const int64_t *a_strides,
                    uintptr_t b, const int64_t *b_strides,
                    uintptr_t c, const int64_t *c_strides,
                    int accumulate) {
    if (dtype < 0 || dtype >= TT_NUM_DTYPES || run_table[dtype] == NULL) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (batch_ndim < 0 || batch_ndim > TT_MAX_DIMS || m < 0 || n < 0 || k < 0 ||
        a_strides == NULL || b_strides == NULL || c_strides == NULL || (batch_ndim > 0 && batch_shape == NULL)) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t batch = 1;
    for (int dim = 0; dim < batch_ndim; dim++) {
        if (batch_shape[dim] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        batch *= batch_shape[dim];
        if (batch == 0) {
            break;
        }
    }
    for (int dim = 0; dim < batch_ndim + 2; dim++) {
        if (a_strides[dim] < 0 || b_strides[dim] < 0 || c_strides[dim] < 0) {
            return TT_ERR_INVALID_ARG;
        }
    }
    if (batch == 0 || m == 0 || n == 0) {
        return TT_OK; /* C has no elements */
    }
    if (c == 0 || (k > 0 && (a == 0 || b == 0))) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype == TT_FLOAT32 || dtype == TT_FLOAT64) {
        return fast_matmul(dtype, batch_ndim, batch_shape, batch, m, n, k, a, a_strides, b, b_strides, c,
                           c_strides, accumulate != 0, 0, 0);
    }
    const int64_t size = (int64_t)tt_dtype_itemsize(dtype);
    const int r = batch_ndim, s = batch_ndim + 1; /* where the row and column strides are */
    gemm_dims d = {m, n, k,
                   a_strides[r] * size, a_strides[s] * size,
                   b_strides[r] * size, b_strides[s] * size,
                   c_strides[r] * size, c_strides[s] * size, accumulate != 0};
    const int64_t *a_bs = a_strides, *b_bs = b_strides;
    uintptr_t first = a, second = b;
    /* A thin product (matrix @ vector, vector @ matrix) costs about as much as reading its one
       large operand, so that operand should be packed row by row, in memory order: when it is
       column-major, compute C^T = B^T A^T instead (only the strides change). */
    int transpose = 0;
    if (m < 4 || n < 4) {
        transpose = m > n ? d.a_row < d.a_col : d.b_row < d.b_col;
    }
    if (transpose) {
        gemm_dims t = {n, m, k,
                       d.b_col, d.b_row, d.a_col, d.a_row, d.c_col, d.c_row, d.accumulate};
        d = t;
        a_bs = b_strides;
        b_bs = a_strides;
        first = b;
        second = a;
    }
    return run_table[dtype](&d, batch_ndim, batch_shape, batch, (const char *)first, a_bs,
                            (const char *)second, b_bs, (char *)c, c_strides);
}
