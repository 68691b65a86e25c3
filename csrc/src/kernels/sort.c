/*
 * sort.c: sort along one dimension, binary search, lexicographic sort of rows, runs of equal
 * values or rows (see kernels/sort.h).
 *
 * Sorting: each row along the sorted dimension is copied into a contiguous buffer of
 * (key, position) pairs, sorted there by a stable merge sort (insertion-sorted runs of 16, then
 * bottom-up merges that ping-pong between two buffers), and written back: the value is copied
 * byte for byte from the input element at the sorted position, so every bit (a NaN's payload,
 * the sign of -0.0) survives. Rows are visited by tt_iter over the other dimensions, with the
 * sorted dimension set to size 1; its steps live in the context. When only a short prefix of the
 * sorted row is wanted (topk, kthvalue with a small k), a heap keeps the best pairs instead, in
 * the same total order (key, then position), so the result is the stable sort's prefix.
 *
 * Order: ascending is `a < b`, with NaN after everything; descending is `a > b`, with NaN before
 * everything. A pair moves ahead of another only when strictly before it, so the sort is stable
 * in both directions. Keys of integers and bool are their own values; float16 keys are floats.
 *
 * Every function is generated once per dtype from the dtype list (X-macros), as in
 * elementwise.c; the entry points pick the dtype's function from a table.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "strided_iter.h"
#include "tt/kernels/sort.h"

/* ------------------------------------------------------------------ dtypes and order */

#define LD_plain(T, p) (*(const T *)(p))
#define LD_bool(T, p) ((uint8_t)(*(const uint8_t *)(p) != 0))
#define LD_half(T, p) tt_half_to_float(*(const uint16_t *)(p))

/* The dtype list: (name, storage type, key type, load, kind, code). Kind I: bool and integers,
   totally ordered by < ; kind F: floats, where NaN needs its own rule. */
#define SORT_DTYPES(X)                                        \
    X(bool, uint8_t, uint8_t, LD_bool, I, TT_BOOL)            \
    X(int8, int8_t, int8_t, LD_plain, I, TT_INT8)             \
    X(int16, int16_t, int16_t, LD_plain, I, TT_INT16)         \
    X(int32, int32_t, int32_t, LD_plain, I, TT_INT32)         \
    X(int64, int64_t, int64_t, LD_plain, I, TT_INT64)         \
    X(uint8, uint8_t, uint8_t, LD_plain, I, TT_UINT8)         \
    X(float16, uint16_t, float, LD_half, F, TT_FLOAT16)       \
    X(float32, float, float, LD_plain, F, TT_FLOAT32)         \
    X(float64, double, double, LD_plain, F, TT_FLOAT64)

/* Radix keys: an unsigned integer per key type whose order is the ascending sort order (ties
   where the order has ties), as (key type, unsigned type, transform). Signed integers flip their
   sign bit. Floats: -0.0 becomes +0.0 (they compare equal, so a stable sort keeps their order),
   every NaN becomes the largest key (NaN sorts last), and the bits of the rest are flipped
   whole when negative, else only the sign bit. Descending order is the complement of the key,
   which puts NaN first, as the comparison order does. */
static inline uint8_t radix_key_uint8_t(uint8_t v) { return v; }
static inline uint8_t radix_key_int8_t(int8_t v) { return (uint8_t)((uint8_t)v ^ 0x80u); }
static inline uint16_t radix_key_int16_t(int16_t v) { return (uint16_t)((uint16_t)v ^ 0x8000u); }
static inline uint32_t radix_key_int32_t(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
static inline uint64_t radix_key_int64_t(int64_t v) { return (uint64_t)v ^ 0x8000000000000000ull; }
#define DEFINE_RADIX_FLOAT_KEY(FT, UT, UT_MAX)                          \
    static inline UT radix_key_##FT(FT v) {                             \
        if (v != v) {                                                   \
            return UT_MAX;                                              \
        }                                                               \
        const UT sign = (UT)1 << (8 * sizeof(UT) - 1);                  \
        UT u;                                                           \
        v = v == 0 ? (FT)0 : v;                                         \
        memcpy(&u, &v, sizeof u);                                       \
        return (u & sign) ? (UT)~u : (UT)(u | sign);                    \
    }
DEFINE_RADIX_FLOAT_KEY(float, uint32_t, UINT32_MAX)
DEFINE_RADIX_FLOAT_KEY(double, uint64_t, UINT64_MAX)
#define RADIX_UT_uint8_t uint8_t
#define RADIX_UT_int8_t uint8_t
#define RADIX_UT_int16_t uint16_t
#define RADIX_UT_int32_t uint32_t
#define RADIX_UT_int64_t uint64_t
#define RADIX_UT_float uint32_t
#define RADIX_UT_double uint64_t
/* The position in a radix pair: 32 bits beside keys of up to 4 bytes (an 8-byte pair instead of
   16, so every pass moves half the bytes: (1M,) float32 27.5 -> 23 ms), 64 beside 8-byte keys,
   where the pair is 16 bytes either way. Rows longer than UINT32_MAX take the merge sort. */
#define RADIX_IT_uint8_t uint32_t
#define RADIX_IT_int8_t uint32_t
#define RADIX_IT_int16_t uint32_t
#define RADIX_IT_int32_t uint32_t
#define RADIX_IT_int64_t int64_t
#define RADIX_IT_float uint32_t
#define RADIX_IT_double int64_t

/* "a goes strictly before b" in ascending and in descending order. */
#define ASCENDING_I(a, b) ((a) < (b))
#define DESCENDING_I(a, b) ((a) > (b))
#define ASCENDING_F(a, b) ((a) < (b) || (isnan(b) && !isnan(a)))
#define DESCENDING_F(a, b) ((a) > (b) || (isnan(a) && !isnan(b)))

/* The same for the merge sort, which also passes a row length (unused for scalar keys). */
#define KEYS_ASCENDING_I(a, b, row_len) ASCENDING_I(a, b)
#define KEYS_DESCENDING_I(a, b, row_len) DESCENDING_I(a, b)
#define KEYS_ASCENDING_F(a, b, row_len) ASCENDING_F(a, b)
#define KEYS_DESCENDING_F(a, b, row_len) DESCENDING_F(a, b)

/* ------------------------------------------------------------------ stable merge sort */

#define RUN_LENGTH 16

/* Sorts a[0..n) using b[0..n) as scratch; returns whichever of the two holds the result.
   BEFORE(key_a, key_b, row_len) says "strictly before"; row_len is for row keys (tt_sort_rows). */
#define DEFINE_MERGE_SORT(FN, PAIR, BEFORE)                                                  \
    static PAIR *FN(PAIR *a, PAIR *b, int64_t n, int64_t row_len) {                          \
        (void)row_len;                                                                       \
        for (int64_t lo = 0; lo < n; lo += RUN_LENGTH) {                                     \
            int64_t hi = n - lo > RUN_LENGTH ? lo + RUN_LENGTH : n;                          \
            for (int64_t i = lo + 1; i < hi; i++) {                                          \
                PAIR item = a[i];                                                            \
                int64_t j = i;                                                               \
                while (j > lo && BEFORE(item.key, a[j - 1].key, row_len)) {                   \
                    a[j] = a[j - 1];                                                         \
                    j--;                                                                     \
                }                                                                            \
                a[j] = item;                                                                 \
            }                                                                                \
        }                                                                                    \
        for (int64_t width = RUN_LENGTH; width < n; width *= 2) {                            \
            for (int64_t lo = 0; lo < n; lo += 2 * width) {                                  \
                int64_t mid = n - lo > width ? lo + width : n;                               \
                int64_t hi = n - mid > width ? mid + width : n;                              \
                int64_t i = lo, j = mid, k = lo;                                             \
                if (mid == hi || !BEFORE(a[mid].key, a[mid - 1].key, row_len)) {                \
                    memcpy(b + lo, a + lo, (size_t)(hi - lo) * sizeof(PAIR)); /* in order */ \
                    continue;                                                                \
                }                                                                            \
                while (i < mid && j < hi) {                                                  \
                    b[k++] = BEFORE(a[j].key, a[i].key, row_len) ? a[j++] : a[i++];         \
                }                                                                            \
                while (i < mid) {                                                            \
                    b[k++] = a[i++];                                                         \
                }                                                                            \
                while (j < hi) {                                                             \
                    b[k++] = a[j++];                                                         \
                }                                                                            \
            }                                                                                \
            PAIR *swap = a;                                                                  \
            a = b;                                                                           \
            b = swap;                                                                        \
        }                                                                                    \
        return a;                                                                            \
    }

/* ------------------------------------------------------------------ stable LSD radix sort
 * For rows of at least RADIX_MIN elements: (unsigned key, position) pairs sorted one byte at a
 * time from the lowest, each pass a counting sort (stable), so equal keys keep their positions'
 * order, exactly what the merge sort gives. The byte histograms of every pass are counted in one
 * read of the keys first, and a pass whose byte is the same for all keys is skipped (small
 * integers, or floats of one sign and magnitude range, need fewer passes). */
#define RADIX_MIN 512

#define DEFINE_RADIX_SORT(FN, PAIR, UT)                                                        \
    static PAIR *FN(PAIR *a, PAIR *b, int64_t n) {                                             \
        enum { BYTES = sizeof(UT) };                                                           \
        int64_t counts[BYTES][256];                                                            \
        memset(counts, 0, sizeof counts);                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            const UT key = a[i].key;                                                           \
            for (int d = 0; d < BYTES; d++) {                                                  \
                counts[d][(key >> (8 * d)) & 0xFF]++;                                          \
            }                                                                                  \
        }                                                                                      \
        for (int d = 0; d < BYTES; d++) {                                                      \
            int64_t *count = counts[d];                                                        \
            if (count[(a[0].key >> (8 * d)) & 0xFF] == n) {                                    \
                continue; /* every key has this byte: the pass would not move anything */       \
            }                                                                                  \
            int64_t next = 0;                                                                  \
            for (int v = 0; v < 256; v++) {                                                    \
                const int64_t c = count[v];                                                    \
                count[v] = next;                                                               \
                next += c;                                                                     \
            }                                                                                  \
            for (int64_t i = 0; i < n; i++) {                                                  \
                b[count[(a[i].key >> (8 * d)) & 0xFF]++] = a[i];                               \
            }                                                                                  \
            PAIR *swap = a;                                                                    \
            a = b;                                                                             \
            b = swap;                                                                          \
        }                                                                                      \
        return a;                                                                              \
    }

/* ------------------------------------------------------------------ partial selection (topk)
 * The best m of n pairs, in the total order "key order, then lower position first" (which is what
 * a stable sort gives), kept in a heap whose root is the worst of them: O(n log m) instead of a
 * full sort when m is much smaller than n. A heapsort of the heap then lists them best first. */

/* p goes after q: q's key is before p's, or the keys tie and p came later. */
#define WORSE(BEFORE, p, q) (BEFORE((q).key, (p).key) || (!BEFORE((p).key, (q).key) && (p).index > (q).index))

#define DEFINE_SELECT(FN, PAIR, BEFORE)                                                      \
    static void FN##_sift(PAIR *h, int64_t size, int64_t i) {                                \
        PAIR item = h[i];                                                                    \
        for (;;) {                                                                           \
            int64_t child = 2 * i + 1;                                                       \
            if (child >= size) {                                                             \
                break;                                                                       \
            }                                                                                \
            if (child + 1 < size && WORSE(BEFORE, h[child + 1], h[child])) {                 \
                child++;                                                                     \
            }                                                                                \
            if (!WORSE(BEFORE, h[child], item)) {                                            \
                break;                                                                       \
            }                                                                                \
            h[i] = h[child];                                                                 \
            i = child;                                                                       \
        }                                                                                    \
        h[i] = item;                                                                         \
    }                                                                                        \
    /* h[0..m) holds the first m pairs of the row on entry; the rest are offered (select_offer_). */ \
    static void FN##_heapify(PAIR *h, int64_t m) {                                           \
        for (int64_t i = m / 2 - 1; i >= 0; i--) {                                           \
            FN##_sift(h, m, i);                                                              \
        }                                                                                    \
    }                                                                                        \
    static void FN##_heapsort(PAIR *h, int64_t m) {                                          \
        for (int64_t end = m - 1; end > 0; end--) {                                          \
            PAIR worst = h[0];                                                               \
            h[0] = h[end];                                                                   \
            h[end] = worst;                                                                  \
            FN##_sift(h, end, 0);                                                            \
        }                                                                                    \
    }

/* Selection pays when the kept prefix is this many times shorter than the row. */
#define SELECT_RATIO 16

/* How a row of `len` is sorted when its first `m` sorted positions are wanted: a heap of the
   best m (topk), the radix sort (long rows; with a 32-bit position beside keys of up to 4 bytes,
   `narrow`, only up to UINT32_MAX elements), or the merge sort. tt_sort sizes the row buffers by
   the same answer, so the two cannot disagree. */
enum { PATH_SELECT, PATH_RADIX, PATH_MERGE };
static inline int sort_path(int64_t len, int64_t m, int narrow) {
    if (m <= len / SELECT_RATIO) {
        return PATH_SELECT;
    }
    if (len >= RADIX_MIN && (!narrow || len <= (int64_t)UINT32_MAX)) {
        return PATH_RADIX;
    }
    return PATH_MERGE;
}
/* Elements of a contiguous row checked together against the worst kept key (see select_). */
#define SELECT_BLOCK 16

/* ------------------------------------------------------------------ sort along a dimension */

typedef struct sort_ctx sort_ctx;
typedef void (*sort_row_fn)(const sort_ctx *c, const char *x, char *values, char *indices);

struct sort_ctx {
    int64_t len;                        /* row length along the sorted dimension */
    int64_t x_step, values_step, indices_step;   /* bytes between neighbours along it */
    int64_t start, count;               /* sorted positions written */
    int descending;
    int has_values;
    void *buffer, *scratch;             /* len pairs each */
    sort_row_fn sort_row;
};

/* Writes sorted positions start .. start + count - 1 of a row: the positions are int64 fields of
   pairs `pair_size` bytes apart, the first at `first_index` (index_bytes wide: uint32 in the
   narrow radix pairs, else int64); values (when wanted) are copied byte for byte from x at each
   position. */
static void write_sorted(const sort_ctx *c, const char *x, char *values, char *indices, const void *first_index,
                         size_t index_bytes, size_t pair_size, size_t itemsize) {
    const char *at = (const char *)first_index + (size_t)c->start * pair_size;
    for (int64_t j = 0; j < c->count; j++, at += pair_size) {
        int64_t index;
        if (index_bytes == sizeof(uint32_t)) {
            uint32_t narrow;
            memcpy(&narrow, at, sizeof narrow);
            index = narrow;
        } else {
            memcpy(&index, at, sizeof index);
        }
        memcpy(indices + j * c->indices_step, &index, sizeof index);
        if (values != NULL) {
            memcpy(values + j * c->values_step, x + index * c->x_step, itemsize);
        }
    }
}

#define DEFINE_SORT_ROW(name, T, KT, LD, K, CODE)                                                    \
    typedef struct pair_##name {                                                                     \
        KT key;                                                                                      \
        int64_t index;                                                                               \
    } pair_##name;                                                                                   \
    DEFINE_MERGE_SORT(sort_ascending_##name, pair_##name, KEYS_ASCENDING_##K)                        \
    DEFINE_MERGE_SORT(sort_descending_##name, pair_##name, KEYS_DESCENDING_##K)                      \
    DEFINE_SELECT(select_ascending_##name, pair_##name, ASCENDING_##K)                               \
    DEFINE_SELECT(select_descending_##name, pair_##name, DESCENDING_##K)                             \
    typedef struct rpair_##name {                                                                    \
        RADIX_UT_##KT key;                                                                           \
        RADIX_IT_##KT index;                                                                         \
    } rpair_##name;                                                                                  \
    /* the radix pairs live in the same buffers as the merge sort's pairs */                         \
    _Static_assert(sizeof(rpair_##name) <= sizeof(pair_##name), "radix pair fits a pair");          \
    DEFINE_RADIX_SORT(radix_sort_##name, rpair_##name, RADIX_UT_##KT)                                \
    /* Element i of the row offered to the heap of the best m. It comes after every kept one, so   \
       it enters exactly when its key is strictly before the worst kept key (the heap's WORSE      \
       order with the index tie-break decided): one compare. */                                    \
    static inline void select_offer_##name(const sort_ctx *c, pair_##name *a, int64_t m, const char *x, \
                                           int64_t i) {                                              \
        const KT key = (KT)LD(T, x + i * c->x_step);                                                 \
        if (c->descending ? DESCENDING_##K(key, a[0].key) : ASCENDING_##K(key, a[0].key)) {          \
            a[0] = (pair_##name){key, i};                                                            \
            if (c->descending) {                                                                     \
                select_descending_##name##_sift(a, m, 0);                                            \
            } else {                                                                                 \
                select_ascending_##name##_sift(a, m, 0);                                             \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    /* The best m pairs of the row, best first, into a[0..m). */                                     \
    static void select_##name(const sort_ctx *c, const char *x, pair_##name *a, int64_t m) {        \
        for (int64_t i = 0; i < m; i++) {                                                            \
            a[i].key = (KT)LD(T, x + i * c->x_step);                                                 \
            a[i].index = i;                                                                          \
        }                                                                                            \
        if (c->descending) {                                                                         \
            select_descending_##name##_heapify(a, m);                                                \
        } else {                                                                                     \
            select_ascending_##name##_heapify(a, m);                                                 \
        }                                                                                            \
        int64_t i = m;                                                                               \
        if (c->x_step == (int64_t)sizeof(T)) {                                                       \
            /* A contiguous row in blocks: an element enters only if its key is strictly before    \
               the worst kept one (it comes later, so a tie keeps the earlier), and while none     \
               does the worst stays put, so a block none of whose keys beats it at the start is    \
               skipped whole, with compares the compiler vectorizes. For random rows of 512 and a  \
               top 8 about half the blocks are skipped; the heap's sifts are the rest of the cost  \
               (about 10% fewer samples in the kernel than with a check per element). */           \
            for (; i + SELECT_BLOCK <= c->len; i += SELECT_BLOCK) {                                  \
                const KT worst = a[0].key;                                                           \
                int enters = 0;                                                                      \
                for (int64_t j = 0; j < SELECT_BLOCK; j++) {                                         \
                    const KT key = (KT)LD(T, x + (i + j) * (int64_t)sizeof(T));                      \
                    enters |= c->descending ? DESCENDING_##K(key, worst) : ASCENDING_##K(key, worst); \
                }                                                                                    \
                for (int64_t j = 0; enters && j < SELECT_BLOCK; j++) {                               \
                    select_offer_##name(c, a, m, x, i + j);                                          \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        for (; i < c->len; i++) {                                                                    \
            select_offer_##name(c, a, m, x, i);                                                      \
        }                                                                                            \
        if (c->descending) {                                                                         \
            select_descending_##name##_heapsort(a, m);                                               \
        } else {                                                                                     \
            select_ascending_##name##_heapsort(a, m);                                                \
        }                                                                                            \
    }                                                                                                \
    static void sort_row_##name(const sort_ctx *c, const char *x, char *values, char *indices) {    \
        pair_##name *a = c->buffer, *b = c->scratch;                                                 \
        const int64_t m = c->start + c->count;                                                       \
        const int path = sort_path(c->len, m, sizeof(RADIX_IT_##KT) < sizeof(int64_t));             \
        if (path == PATH_SELECT) {                                                                   \
            select_##name(c, x, a, m);                                                               \
            write_sorted(c, x, values, indices, &a[0].index, sizeof a[0].index, sizeof *a, sizeof(T)); \
        } else if (path == PATH_RADIX) {                                                             \
            rpair_##name *ra = c->buffer, *rb = c->scratch;                                          \
            const RADIX_UT_##KT flip = c->descending ? (RADIX_UT_##KT) ~(RADIX_UT_##KT)0 : 0;        \
            for (int64_t i = 0; i < c->len; i++) {                                                   \
                ra[i].key = (RADIX_UT_##KT)(radix_key_##KT((KT)LD(T, x + i * c->x_step)) ^ flip);    \
                ra[i].index = (RADIX_IT_##KT)i;                                                      \
            }                                                                                        \
            const rpair_##name *sorted = radix_sort_##name(ra, rb, c->len);                          \
            write_sorted(c, x, values, indices, &sorted[0].index, sizeof sorted[0].index, sizeof *sorted, \
                         sizeof(T));                                                                 \
        } else {                                                                                     \
            for (int64_t i = 0; i < c->len; i++) {                                                   \
                a[i].key = (KT)LD(T, x + i * c->x_step);                                             \
                a[i].index = i;                                                                      \
            }                                                                                        \
            const pair_##name *sorted = c->descending ? sort_descending_##name(a, b, c->len, 1)      \
                                                      : sort_ascending_##name(a, b, c->len, 1);      \
            write_sorted(c, x, values, indices, &sorted[0].index, sizeof sorted[0].index, sizeof *sorted, \
                         sizeof(T));                                                                 \
        }                                                                                            \
    }
SORT_DTYPES(DEFINE_SORT_ROW)

#define REGISTER_SORT_ROW(name, T, KT, LD, K, CODE) [CODE] = sort_row_##name,
#define REGISTER_PAIR_SIZE(name, T, KT, LD, K, CODE) [CODE] = sizeof(pair_##name),
#define REGISTER_RADIX_PAIR_SIZE(name, T, KT, LD, K, CODE) [CODE] = sizeof(rpair_##name),
#define REGISTER_NARROW(name, T, KT, LD, K, CODE) [CODE] = sizeof(RADIX_IT_##KT) < sizeof(int64_t),
static const sort_row_fn sort_rows_table[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_SORT_ROW)};
static const size_t pair_sizes[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_PAIR_SIZE)};
static const size_t radix_pair_sizes[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_RADIX_PAIR_SIZE)};
static const int narrow_positions[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_NARROW)};

/* The iterator's row function: n rows, operand 0 = indices, 1 = x, 2 = values (if any). */
static void sort_rows(char **data, const int64_t *s, int64_t n, void *vctx) {
    const sort_ctx *c = vctx;
    for (int64_t r = 0; r < n; r++) {
        c->sort_row(c, data[1] + r * s[1], c->has_values ? data[2] + r * s[2] : NULL, data[0] + r * s[0]);
    }
}

/* A threaded sort: the settings shared by every range of rows, each range with its own buffers. */
typedef struct sort_job {
    const tt_iter *iter;
    char *const *base;
    sort_ctx settings;                  /* buffer and scratch unset */
    size_t buffer_bytes;                /* len pairs */
    atomic_int status;                  /* TT_ERR_NOMEM when a range could not get its buffers */
} sort_job;

/* Elements (rows x row length) below which a range of rows is not worth a thread of its own. */
#define SORT_GRAIN 4096

/* The pair buffers come from the default (caching) allocator, as tensors do: a 1M-element row
   needs two 16 MiB buffers, and fresh ones from malloc were mapped and page-faulted on every call
   (a fifth of a (1M,) float32 sort). */
static void sort_chunk(int64_t begin, int64_t end, void *arg) {
    sort_job *job = arg;
    sort_ctx c = job->settings;
    const tt_allocator *allocator = tt_default_allocator();
    c.buffer = c.scratch = NULL;
    if (allocator->alloc(allocator->ctx, job->buffer_bytes, &c.buffer) != TT_OK ||
        allocator->alloc(allocator->ctx, job->buffer_bytes, &c.scratch) != TT_OK) {
        atomic_store_explicit(&job->status, (int)TT_ERR_NOMEM, memory_order_relaxed);
    } else {
        tt_iter_run_range(job->iter, job->base, sort_rows, &c, begin, end);
    }
    allocator->free(allocator->ctx, c.buffer);   /* NULL: nothing */
    allocator->free(allocator->ctx, c.scratch);
}

static int byte_step(int64_t elements, size_t itemsize, int64_t *out) {
    return !__builtin_mul_overflow(elements, (int64_t)itemsize, out);
}

tt_status tt_sort(int ndim, const int64_t *shape, int dim,
                  uintptr_t x, const int64_t *x_strides,
                  uintptr_t values, const int64_t *values_strides,
                  uintptr_t indices, const int64_t *indices_strides,
                  int64_t start, int64_t count, int dtype, int descending) {
    if (ndim < 1 || ndim > TT_MAX_DIMS || dim < 0 || dim >= ndim || shape == NULL || x_strides == NULL ||
        indices_strides == NULL || (values != 0 && values_strides == NULL)) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    const int64_t len = shape[dim];
    if (len < 0 || start < 0 || count < 0 || start > len || count > len - start) {
        return TT_ERR_INVALID_ARG;
    }
    int64_t outer[TT_MAX_DIMS];
    int empty = count == 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return TT_ERR_INVALID_ARG;
        }
        outer[d] = d == dim ? 1 : shape[d];
        empty |= shape[d] == 0;
    }
    if (empty) {
        return TT_OK;
    }
    if (x == 0 || indices == 0) {
        return TT_ERR_INVALID_ARG;
    }
    const size_t itemsize = tt_dtype_itemsize(dtype);
    sort_ctx c = {.len = len, .start = start, .count = count, .descending = descending != 0,
                  .has_values = values != 0, .sort_row = sort_rows_table[dtype]};
    if (!byte_step(x_strides[dim], itemsize, &c.x_step) ||
        !byte_step(indices_strides[dim], sizeof(int64_t), &c.indices_step) ||
        (values != 0 && !byte_step(values_strides[dim], itemsize, &c.values_step))) {
        return TT_ERR_OVERFLOW;
    }
    const int64_t *strides[3] = {indices_strides, x_strides, values_strides};
    const size_t itemsizes[3] = {sizeof(int64_t), itemsize, itemsize};
    tt_iter iter;
    tt_status status = tt_iter_init(&iter, ndim, outer, values != 0 ? 3 : 2, strides, itemsizes);
    if (status != TT_OK) {
        return status;
    }
    /* len pairs per buffer, of the kind the rows' path uses (radix pairs may be half the size) */
    const size_t pair_size = sort_path(len, start + count, narrow_positions[dtype]) == PATH_RADIX
                                 ? radix_pair_sizes[dtype] : pair_sizes[dtype];
    if ((uint64_t)len > SIZE_MAX / pair_size) {
        return TT_ERR_OVERFLOW;
    }
    char *base[3] = {(char *)indices, (char *)x, (char *)values};
    sort_job job = {&iter, base, c, (size_t)len * pair_size, TT_OK};
    /* Rows are independent: threads take ranges of them, each range at least SORT_GRAIN elements
       (a (256, 512) topk of 8: 2 x faster on 2 threads). */
    tt_iter_parallel(&iter, len >= SORT_GRAIN ? 1 : SORT_GRAIN / len, 1, sort_chunk, &job);
    return (tt_status)atomic_load_explicit(&job.status, memory_order_relaxed);
}

/* ------------------------------------------------------------------ binary search */

typedef struct search_ctx {
    int64_t len, seq_step, sorter_step;   /* steps in bytes */
    int right, out_int32, has_sorter;
} search_ctx;

/* PyTorch's bisection: go right while !(row[mid] >= v) (left side) or !(row[mid] > v) (right
   side). Operands: 0 = out, 1 = values, 2 = seq, 3 = sorter (if any). Sorter entries were
   checked before the search. */
#define DEFINE_SEARCH(name, T, KT, LD, K, CODE)                                                    \
    static void search_##name(char **data, const int64_t *s, int64_t n, void *vctx) {             \
        const search_ctx *c = vctx;                                                                \
        for (int64_t r = 0; r < n; r++) {                                                          \
            const KT v = (KT)LD(T, data[1] + r * s[1]);                                            \
            const char *row = data[2] + r * s[2];                                                  \
            const char *perm = c->has_sorter ? data[3] + r * s[3] : NULL;                          \
            int64_t lo = 0, hi = c->len;                                                           \
            while (lo < hi) {                                                                      \
                const int64_t mid = lo + ((hi - lo) >> 1);                                         \
                int64_t at = mid;                                                                  \
                if (perm != NULL) {                                                                \
                    memcpy(&at, perm + mid * c->sorter_step, sizeof at);                           \
                }                                                                                  \
                const KT m = (KT)LD(T, row + at * c->seq_step);                                    \
                if (c->right ? !(m > v) : !(m >= v)) {                                             \
                    lo = mid + 1;                                                                  \
                } else {                                                                           \
                    hi = mid;                                                                      \
                }                                                                              \
            }                                                                                      \
            if (c->out_int32) {                                                                    \
                const int32_t p = (int32_t)lo;                                                     \
                memcpy(data[0] + r * s[0], &p, sizeof p);                                          \
            } else {                                                                               \
                memcpy(data[0] + r * s[0], &lo, sizeof lo);                                        \
            }                                                                                      \
        }                                                                                          \
    }
SORT_DTYPES(DEFINE_SEARCH)

#define REGISTER_SEARCH(name, T, KT, LD, K, CODE) [CODE] = search_##name,
static const tt_row_fn search_table[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_SEARCH)};

tt_status tt_searchsorted(int ndim, const int64_t *shape,
                          uintptr_t values, const int64_t *values_strides,
                          uintptr_t seq, const int64_t *seq_strides, int64_t seq_len, int64_t seq_step,
                          uintptr_t sorter, const int64_t *sorter_strides, int64_t sorter_step,
                          int64_t sorter_numel, uintptr_t out, const int64_t *out_strides, int out_int32,
                          int dtype, int right) {
    if (ndim < 0 || ndim > TT_MAX_DIMS || seq_len < 0 || sorter_numel < 0 ||
        (ndim > 0 && (shape == NULL || values_strides == NULL || seq_strides == NULL || out_strides == NULL)) ||
        (sorter != 0 && ndim > 0 && sorter_strides == NULL)) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (sorter != 0) {                    /* every entry in range before any is followed */
        for (int64_t i = 0; i < sorter_numel; i++) {
            int64_t entry;
            memcpy(&entry, (const char *)sorter + i * (int64_t)sizeof entry, sizeof entry);
            if (entry < 0 || entry >= seq_len) {
                return TT_ERR_INDEX;
            }
        }
    }
    const size_t itemsize = tt_dtype_itemsize(dtype);
    search_ctx c = {.len = seq_len, .right = right != 0, .out_int32 = out_int32 != 0, .has_sorter = sorter != 0};
    if (!byte_step(seq_step, itemsize, &c.seq_step) || !byte_step(sorter_step, sizeof(int64_t), &c.sorter_step)) {
        return TT_ERR_OVERFLOW;
    }
    const int64_t *strides[4] = {out_strides, values_strides, seq_strides, sorter_strides};
    const size_t itemsizes[4] = {out_int32 ? sizeof(int32_t) : sizeof(int64_t), itemsize, itemsize, sizeof(int64_t)};
    tt_iter iter;
    tt_status status = tt_iter_init(&iter, ndim, shape, sorter != 0 ? 4 : 3, strides, itemsizes);
    if (status != TT_OK || iter.numel == 0) {
        return status;
    }
    if (out == 0 || values == 0 || (seq == 0 && seq_len > 0)) {
        return TT_ERR_INVALID_ARG;
    }
    char *base[4] = {(char *)out, (char *)values, (char *)seq, (char *)sorter};
    tt_iter_run(&iter, base, search_table[dtype], &c);
    return TT_OK;
}

/* ------------------------------------------------------------------ sorting whole rows
 * For unique along a dimension: rows of row_len contiguous elements, ordered lexicographically
 * (element by element, in the ascending order above), by the same stable merge sort over
 * (row address, row number) pairs. */

typedef struct row_pair {
    const char *key;
    int64_t index;
} row_pair;

#define DEFINE_ROWS(name, T, KT, LD, K, CODE)                                                        \
    static int rows_before_##name(const char *a, const char *b, int64_t row_len) {                  \
        for (int64_t i = 0; i < row_len; i++) {                                                     \
            const KT x = (KT)LD(T, a + i * (int64_t)sizeof(T));                                     \
            const KT y = (KT)LD(T, b + i * (int64_t)sizeof(T));                                     \
            if (ASCENDING_##K(x, y)) {                                                              \
                return 1;                                                                           \
            }                                                                                       \
            if (ASCENDING_##K(y, x)) {                                                              \
                return 0;                                                                           \
            }                                                                                       \
        }                                                                                           \
        return 0;                                                                                   \
    }                                                                                               \
    /* Equal when every element is == (so a row holding NaN equals no row). */                     \
    static inline int rows_equal_##name(const char *a, const char *b, int64_t row_len) {            \
        for (int64_t i = 0; i < row_len; i++) {                                                     \
            if (!((KT)LD(T, a + i * (int64_t)sizeof(T)) == (KT)LD(T, b + i * (int64_t)sizeof(T)))) { \
                return 0;                                                                           \
            }                                                                                       \
        }                                                                                           \
        return 1;                                                                                   \
    }                                                                                               \
    DEFINE_MERGE_SORT(lexsort_##name, row_pair, rows_before_##name)
SORT_DTYPES(DEFINE_ROWS)

typedef row_pair *(*lexsort_fn)(row_pair *a, row_pair *b, int64_t n, int64_t row_len);
#define REGISTER_LEXSORT(name, T, KT, LD, K, CODE) [CODE] = lexsort_##name,
static const lexsort_fn lexsort_table[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_LEXSORT)};

tt_status tt_sort_rows(int64_t nrows, int64_t row_len, uintptr_t data, uintptr_t sorted, uintptr_t perm,
                       int dtype) {
    if (nrows < 0 || row_len < 0) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    if (nrows == 0) {
        return TT_OK;
    }
    int64_t row_bytes, total;
    if (__builtin_mul_overflow(row_len, (int64_t)tt_dtype_itemsize(dtype), &row_bytes) ||
        __builtin_mul_overflow(row_bytes, nrows, &total) || (uint64_t)nrows > SIZE_MAX / sizeof(row_pair)) {
        return TT_ERR_OVERFLOW;
    }
    if (perm == 0 || (data == 0 && total > 0)) {
        return TT_ERR_INVALID_ARG;
    }
    row_pair *a = malloc((size_t)nrows * sizeof(row_pair)), *b = malloc((size_t)nrows * sizeof(row_pair));
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return TT_ERR_NOMEM;
    }
    for (int64_t r = 0; r < nrows; r++) {
        a[r].key = (const char *)data + r * row_bytes;
        a[r].index = r;
    }
    const row_pair *order = lexsort_table[dtype](a, b, nrows, row_len);
    int64_t *out = (int64_t *)perm;
    for (int64_t j = 0; j < nrows; j++) {
        out[j] = order[j].index;
        if (sorted != 0 && row_bytes > 0) {
            memcpy((char *)sorted + j * row_bytes, order[j].key, (size_t)row_bytes);
        }
    }
    free(a);
    free(b);
    return TT_OK;
}

/* ------------------------------------------------------------------ runs of equal values */

#define DEFINE_RUNS(name, T, KT, LD, K, CODE)                                                        \
    static void runs_##name(int64_t n, int64_t row_len, const char *data, const int64_t *perm,      \
                            char *unique, int64_t *counts, int64_t *first, int64_t *inverse,         \
                            int64_t *num_runs) {                                                     \
        const int64_t row_bytes = row_len * (int64_t)sizeof(T);                                      \
        int64_t g = -1;                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                            \
            const char *row = data + j * row_bytes;                                                  \
            const int64_t position = perm != NULL ? perm[j] : j;                                     \
            if (j == 0 || !rows_equal_##name(row, row - row_bytes, row_len)) {                       \
                g++;                                                                                 \
                if (unique != NULL && row_bytes > 0) {                                               \
                    memcpy(unique + g * row_bytes, row, (size_t)row_bytes);                          \
                }                                                                                    \
                if (counts != NULL) {                                                                \
                    counts[g] = 0;                                                                   \
                }                                                                                    \
                if (first != NULL) {                                                                 \
                    first[g] = position;                                                             \
                }                                                                                    \
            }                                                                                        \
            if (counts != NULL) {                                                                    \
                counts[g]++;                                                                         \
            }                                                                                        \
            if (inverse != NULL) {                                                                   \
                inverse[position] = g;                                                               \
            }                                                                                        \
        }                                                                                            \
        *num_runs = g + 1;                                                                           \
    }
SORT_DTYPES(DEFINE_RUNS)

typedef void (*runs_fn)(int64_t n, int64_t row_len, const char *data, const int64_t *perm, char *unique,
                        int64_t *counts, int64_t *first, int64_t *inverse, int64_t *num_runs);
#define REGISTER_RUNS(name, T, KT, LD, K, CODE) [CODE] = runs_##name,
static const runs_fn runs_table[TT_NUM_DTYPES] = {SORT_DTYPES(REGISTER_RUNS)};

tt_status tt_unique_runs(int64_t n, int64_t row_len, uintptr_t data, uintptr_t perm,
                         uintptr_t unique, uintptr_t counts, uintptr_t first, uintptr_t inverse,
                         int dtype, int64_t *num_runs) {
    if (n < 0 || row_len < 0 || num_runs == NULL) {
        return TT_ERR_INVALID_ARG;
    }
    if (dtype < 0 || dtype >= TT_NUM_DTYPES) {
        return TT_ERR_UNSUPPORTED_DTYPE;
    }
    int64_t row_bytes, total;
    if (__builtin_mul_overflow(row_len, (int64_t)tt_dtype_itemsize(dtype), &row_bytes) ||
        __builtin_mul_overflow(row_bytes, n, &total)) {
        return TT_ERR_OVERFLOW;
    }
    if (data == 0 && total > 0) {
        return TT_ERR_INVALID_ARG;
    }
    const int64_t *order = (const int64_t *)perm;
    if (order != NULL) {
        for (int64_t j = 0; j < n; j++) {
            if (order[j] < 0 || order[j] >= n) {
                return TT_ERR_INDEX;
            }
        }
    }
    runs_table[dtype](n, row_len, (const char *)data, order, (char *)unique, (int64_t *)counts, (int64_t *)first,
                      (int64_t *)inverse, num_runs);
    return TT_OK;
}
