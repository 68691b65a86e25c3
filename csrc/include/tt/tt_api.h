/*
 * tt_api.h: the public C API of t_tensor's core.
 *
 * This file is the single source of truth for the C/Python boundary: the cffi build
 * (t_tensor/_build/ffi_build.py) reads it verbatim as its cdef, and the C sources
 * include it through tt.h. That is why it contains no #include, no #if and no
 * compiler-specific types: cffi's parser accepts plain C declarations only.
 *
 * Conventions
 *   - Every function that can fail returns a tt_status; TT_OK is 0. C never aborts;
 *     the Python layer turns a status into an exception.
 *   - Ownership is stated for every function:
 *       "borrows X"          the callee uses X for the call only; the caller keeps its reference.
 *       "returns a new reference"  the caller owns one strong reference and must release it.
 *       "steals X"           the callee takes over the caller's reference to X.
 *   - Data addresses handed to kernels are passed as uintptr_t so that Python can pass
 *     `data_ptr + offset * itemsize` as a plain int, without creating a cdata object per call.
 *   - Shapes and strides are int64_t arrays; strides are in ELEMENTS, never negative.
 *   - Kernel families (elementwise, reductions, indexing, ...) declare their entry points in
 *     csrc/include/tt/kernels/<family>.h, one header per csrc/src/kernels/<family>.c. Those
 *     headers follow the same rules as this one and are read by cffi after it.
 */

/* ------------------------------------------------------------------ status codes */

typedef enum tt_status {
    TT_OK = 0,
    TT_ERR_NOMEM = 1,             /* the system (or the backing allocator) has no memory */
    TT_ERR_INVALID_ARG = 2,       /* a NULL where an object is required, a bad size, ndim, ... */
    TT_ERR_DOUBLE_FREE = 3,       /* the allocator was asked to free a block that is already free */
    TT_ERR_FOREIGN_POINTER = 4,   /* the allocator was asked to free memory it never handed out */
    TT_ERR_UNSUPPORTED_DTYPE = 5, /* a dtype code outside tt_dtype, or one an operation cannot take */
    TT_ERR_OVERFLOW = 6,          /* a size computation would overflow */
    TT_ERR_LIVE_BLOCKS = 7,       /* an allocator was destroyed while blocks were still in use */
    TT_ERR_ZERO_DIVISION = 8,     /* integer division or remainder by zero */
    TT_ERR_INDEX = 9              /* an index (gather, scatter, take, ...) outside its dimension */
} tt_status;

/* Borrowed, static string; never NULL. */
const char *tt_status_string(tt_status status);

/* ------------------------------------------------------------------ dtypes */

/* Codes are shared with t_tensor/dtypes.py (DType.code). */
typedef enum tt_dtype {
    TT_BOOL = 0,
    TT_INT8 = 1,
    TT_INT16 = 2,
    TT_INT32 = 3,
    TT_INT64 = 4,
    TT_UINT8 = 5,
    TT_FLOAT16 = 6,
    TT_FLOAT32 = 7,
    TT_FLOAT64 = 8,
    TT_NUM_DTYPES = 9
} tt_dtype;

/* Size in bytes of one element, 0 for an unknown code. */
size_t tt_dtype_itemsize(int dtype);

/* ------------------------------------------------------------------ allocators */

/*
 * One small interface for every allocator. `alloc` writes a pointer aligned to at least
 * TT_ALIGNMENT (64) bytes into *out_ptr; `free` returns it. Both take `ctx`, the allocator's
 * own state. `name` is a borrowed static string for display.
 */
typedef struct tt_allocator {
    tt_status (*alloc)(void *ctx, size_t nbytes, void **out_ptr);
    tt_status (*free)(void *ctx, void *ptr);
    void *ctx;
    const char *name;
} tt_allocator;

/* The aligned host allocator (posix_memalign, 64-byte alignment). A request of 0 bytes gives
   NULL and TT_OK; freeing NULL is a no-op. Returns a borrowed pointer with static lifetime. */
const tt_allocator *tt_host_allocator(void);

/* Statistics of a caching allocator, in the spirit of PyTorch's caching allocator. Byte counts
   of blocks are their rounded (size-class) sizes; requested_bytes is what callers asked for. */
typedef struct tt_allocator_stats {
    int64_t allocated_bytes;        /* bytes in blocks handed out and not yet freed */
    int64_t allocated_bytes_peak;
    int64_t requested_bytes;        /* bytes callers asked for, over the live blocks */
    int64_t reserved_bytes;         /* bytes held from the backing allocator: live + cached */
    int64_t reserved_bytes_peak;
    int64_t active_blocks;          /* live blocks */
    int64_t cached_blocks;          /* free blocks kept for reuse */
    int64_t cached_bytes;           /* bytes in cached blocks */
    int64_t num_allocs;             /* successful alloc calls */
    int64_t num_frees;              /* successful free calls */
    int64_t cache_hits;             /* allocs served from a cached block */
    int64_t cache_misses;           /* allocs that went to the backing allocator */
    int64_t num_backing_allocs;     /* blocks obtained from the backing allocator */
    int64_t num_backing_frees;      /* blocks returned to it (by trim or destroy) */
    int64_t num_invalid_frees;      /* double frees and foreign pointers detected */
    int64_t pinned_blocks;          /* blocks (live or cached) that trim keeps */
} tt_allocator_stats;

typedef struct tt_caching_allocator tt_caching_allocator;

/* Creates a caching allocator drawing from `backing` (borrowed; must outlive the cache).
   On success *out is a new cache owned by the caller (destroy it with
   tt_caching_allocator_destroy). */
tt_status tt_caching_allocator_create(const tt_allocator *backing, tt_caching_allocator **out);

/* Returns every cached block to the backing allocator and frees the cache. Live blocks are
   not freed (their owners may still use them): they are leaked and TT_ERR_LIVE_BLOCKS is
   returned. Steals `cache`. */
tt_status tt_caching_allocator_destroy(tt_caching_allocator *cache);

/* The process-wide cache that tensors use by default. Borrowed; lives until exit. */
tt_caching_allocator *tt_global_caching_allocator(void);

/* The tt_allocator interface of `cache` (borrowed; valid while the cache lives). */
const tt_allocator *tt_caching_allocator_interface(tt_caching_allocator *cache);

/* The allocator every tensor's storage comes from (borrowed, static): the global cache's
   interface, or the host allocator when the environment variable TT_ALLOCATOR is "host" (read
   once, at the first call; a debugging switch so that AddressSanitizer or valgrind see every
   overrun instead of a reused cache block). */
const tt_allocator *tt_default_allocator(void);

/* Returns unpinned cached blocks to the backing allocator; *released_bytes (may be NULL)
   receives how many bytes went back. Borrows `cache`. */
tt_status tt_caching_allocator_trim(tt_caching_allocator *cache, size_t *released_bytes);

/* Pinned (frozen) mode: while on, every block the cache obtains is pinned, and trim keeps
   pinned blocks. tt_caching_allocator_unpin_all clears the mark on every block. */
void tt_caching_allocator_set_pinned(tt_caching_allocator *cache, int pinned);
int tt_caching_allocator_is_pinned(tt_caching_allocator *cache);
void tt_caching_allocator_unpin_all(tt_caching_allocator *cache);

/* Copies a consistent snapshot of the statistics into *out. Borrows both. */
void tt_caching_allocator_get_stats(tt_caching_allocator *cache, tt_allocator_stats *out);

/* Sets the peak counters to the current values. */
void tt_caching_allocator_reset_peak_stats(tt_caching_allocator *cache);

/* ------------------------------------------------------------------ storage */

/*
 * tt_storage (StorageImpl): an intrusively reference-counted byte buffer.
 * See csrc/src/storage.c, Note [Refcount invariants], for the rules. In short:
 *   use_count   = strong references; the data lives while it is > 0.
 *   weak_count  = weak references + 1 while use_count > 0; the object lives while it is > 0.
 * A storage holds bytes, not a dtype. Its data comes either from a tt_allocator or from
 * outside (NumPy, DLPack) together with a deleter and a context.
 */
typedef struct tt_storage tt_storage;

/* Frees externally owned data: called once, with the ctx and data given at creation. */
typedef void (*tt_deleter)(void *ctx, void *data);

/* Allocates nbytes through `allocator` (borrowed; must outlive the storage).
   On success *out is a new reference (use_count 1, weak_count 1). */
tt_status tt_storage_new(const tt_allocator *allocator, size_t nbytes, tt_storage **out);

/* The per-op fast path: nbytes from tt_default_allocator() in one call, with no
   out-parameter for the caller to allocate. Returns a new reference, or NULL when out of memory
   (the only way it can fail; the one place this API signals failure without a tt_status). */
tt_storage *tt_storage_new_default(size_t nbytes);

/* Wraps external memory. `deleter` (may be NULL) runs with (ctx, data) when the last strong
   reference goes. On success *out is a new reference. On failure the deleter is NOT called:
   the caller still owns the memory. */
tt_status tt_storage_new_external(void *data, size_t nbytes, tt_deleter deleter, void *ctx,
                                  tt_storage **out);

/* Strong references. retain: the caller must already hold a strong reference. release:
   steals one strong reference; frees the data when it was the last one. */
void tt_storage_retain(tt_storage *storage);
void tt_storage_release(tt_storage *storage);

/* Weak references. weak_retain: the caller must already hold a strong or weak reference.
   weak_release: steals one weak reference; frees the object when it was the last one. */
void tt_storage_weak_retain(tt_storage *storage);
void tt_storage_weak_release(tt_storage *storage);

/* Tries to turn a weak reference into a strong one. Borrows the caller's weak reference.
   Returns 1 and adds a new strong reference (the caller must release it) while the data is
   alive; returns 0 once the use count has reached zero, which is final. */
int tt_storage_weak_lock(tt_storage *storage);

/* Snapshots of the counts (borrows). Exact only when no other thread is changing them. */
int64_t tt_storage_use_count(const tt_storage *storage);
int64_t tt_storage_weak_count(const tt_storage *storage);

/* Borrowed data pointer; NULL after the data was released (or for an empty host buffer). */
void *tt_storage_data(const tt_storage *storage);

/* The same address as an integer, which Python keeps for kernel calls without a cast. */
uintptr_t tt_storage_data_address(const tt_storage *storage);
size_t tt_storage_nbytes(const tt_storage *storage);

/* Borrowed static string: the allocator's name, or "external". */
const char *tt_storage_allocator_name(const tt_storage *storage);

/* Number of tt_storage objects alive in the process (created and not yet freed). */
int64_t tt_storage_live_objects(void);

/* The version counter shared by every tensor over this storage (borrows): 0 at creation,
   bumped by each in-place write. Autograd records it when it saves a tensor for backward and
   refuses to use the tensor if it changed. bump returns the new value. */
int64_t tt_storage_version(const tt_storage *storage);
int64_t tt_storage_bump_version(tt_storage *storage);

/* ------------------------------------------------------------------ kernels: copy */

/* Largest number of dimensions a kernel accepts. */
int tt_max_dims(void);

/*
 * dst[i] = (dst dtype) src[i] for every index i of `shape`, any strides, any dtypes.
 * `src` and `dst` are the addresses of element (0, ..., 0). Strides are in elements and may
 * be 0 in src (broadcasting). The caller guarantees the addresses and extents are valid and
 * that dst does not overlap src. Borrows everything.
 */
tt_status tt_copy_strided(int ndim, const int64_t *shape,
                          uintptr_t src, const int64_t *src_strides, int src_dtype,
                          uintptr_t dst, const int64_t *dst_strides, int dst_dtype);

/* ------------------------------------------------------------------ kernels: random */

/* xoshiro256++ state. Seed it with tt_generator_seed (splitmix64 expands the seed). */
typedef struct tt_generator {
    uint64_t s[4];
} tt_generator;

void tt_generator_seed(tt_generator *gen, uint64_t seed);

/* Fill n contiguous elements at dst. Borrows gen (and advances it).
   uniform: float dtypes, values in [low, high).
   normal: float dtypes, mean + std * N(0, 1) (Box-Muller).
   integers: integer and float dtypes, uniform integers in [low, high), high > low. */
tt_status tt_random_uniform(tt_generator *gen, uintptr_t dst, int64_t n, int dtype,
                            double low, double high);
tt_status tt_random_normal(tt_generator *gen, uintptr_t dst, int64_t n, int dtype,
                           double mean, double std);
tt_status tt_random_integers(tt_generator *gen, uintptr_t dst, int64_t n, int dtype,
                             int64_t low, int64_t high);

/* ------------------------------------------------------------------ DLPack */

/* The DLPack structures (v1.0 of the standard, with the legacy unversioned form). */
typedef struct DLPackVersion {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef struct DLDevice {
    int32_t device_type;   /* kDLCPU = 1 */
    int32_t device_id;
} DLDevice;

typedef struct DLDataType {
    uint8_t code;          /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6 */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct DLTensor {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;      /* in elements; NULL means compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;        /* bit 0: read only, bit 1: is copied */
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* Exports a view of `storage` (borrowed; the export takes a new strong reference that its
   deleter releases). `data` is the address of element (0, ..., 0). On success *out is a
   DLManagedTensorVersioned* when `versioned` is nonzero, else a DLManagedTensor*; ownership
   passes to whoever calls its deleter exactly once. */
tt_status tt_dlpack_export(tt_storage *storage, uintptr_t data, int ndim, const int64_t *shape,
                           const int64_t *strides, int dtype, int versioned, void **out);

/* Wraps the memory of an imported DLPack tensor [data, data + nbytes) in a storage. Steals
   `managed` (a DLManagedTensorVersioned* when `versioned`, else a DLManagedTensor*): its
   deleter runs when the storage's last strong reference goes. On success *out is a new
   reference; on failure the deleter is NOT called and the caller still owns `managed`. */
tt_status tt_storage_from_dlpack(void *managed, int versioned, uintptr_t data, size_t nbytes,
                                 tt_storage **out);
