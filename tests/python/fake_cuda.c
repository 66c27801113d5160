/* A tiny in-memory CUDA driver (libcuda.so.1 look-alike) for the Python tests on machines without a GPU.
 *
 * libcucore loads it through CUCORE_CUDA_DRIVER_PATH and resolves entry points with cuGetProcAddress_v2,
 * as it does with the real driver; the tests' raw-driver helpers dlsym the same exported names. Streams
 * are worker threads running queued operations in order (host functions, event records, waits), so
 * ordering, completion and timing behave like a real device's. Destroyed objects leave the registries
 * (so stale handles are rejected) but their memory is never freed; this is a test double, not a driver.
 *
 * Memory: device memory and page-locked host memory are host memory (malloc) in a registry of allocations,
 * so copies and fills really happen and can be read back. Every pointer an operation names is checked
 * against the registry: a range outside a live allocation, a double free or a use after free is
 * CUDA_ERROR_INVALID_VALUE, never a crash (freed memory is marked, not returned to malloc). Fills and
 * copies between registered memory run in stream order on the stream's worker; as the real driver does
 * for pageable host memory (any address outside the registry), a copy from it is staged at the call and a
 * copy to it completes before the call returns. New memory is filled with 0xA5 (never zero).
 * Pools are device, host (pinned) or managed; they keep per-device access flags (cuMemPoolSetAccess).
 * Managed allocations (cuMemAllocManaged, or from a managed pool) keep their advice and last prefetch
 * location (cuMemRangeGetAttribute reads them); a discard fills them with 0xDD. As an H100 with driver 580
 * does, cuMemAdvise refuses managed-pool memory with CUDA_ERROR_NOT_SUPPORTED and takes cuMemAllocManaged's.
 * Strided copies (cuMemcpy3DAsync) check and copy row by row. Virtual memory management maps memfd-backed
 * physical memory into reserved address ranges, so a range mapped twice shows the same bytes and a grown
 * buffer keeps its contents, as on a device.
 *
 * Environment: FAKE_CUDA_DEVICES (default 2) sets the number of devices; FAKE_CUDA_FAIL_STREAM_DESTROY=1
 * makes cuStreamDestroy fail (read on every call), to exercise libcucore's release-error reporting;
 * FAKE_CUDA_FAIL=<entry point> makes cuMemAllocManaged, cuMemFree, cuMemAdvise, cuGraphicsUnmapResources or
 * cuGraphicsUnregisterResource fail with CUDA_ERROR_UNKNOWN when named (read on every call).
 * fake_cuda_live_allocations() counts live memory.
 * Libraries, kernels and launches work on text "images" (see that section); launches are recorded, not run.
 * Build: cc -shared -fPIC -pthread -o libcuda.so.1 fake_cuda.c
 */
#define _GNU_SOURCE /* memfd_create: the physical memory of virtual memory management */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef void (*CUhostFn)(void *);

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999,
};

#define CTX_MAGIC 0x43545831u
#define STREAM_MAGIC 0x53545231u
#define EVENT_MAGIC 0x45564e31u
#define MAX_DEVICES 8
#define EVENT_DISABLE_TIMING 2u

struct stream;
struct ctx {
    unsigned magic;
    int device;
    int refs;
    struct stream *default_stream;
};
struct event {
    unsigned magic;
    struct ctx *ctx;
    unsigned flags;
    unsigned long long recorded_gen, completed_gen;
    double time_ms;
    int opened; /* IPC: cuIpcOpenEventHandle references (the fake opens the event itself, in one process) */
};
enum { OP_HOST, OP_RECORD, OP_WAIT, OP_COPY, OP_SET, OP_FREE, OP_PREFETCH, OP_DISCARD };
struct alloc;
struct op {
    int kind;
    CUhostFn fn;
    void *data;
    struct event *ev;
    unsigned long long gen;
    /* OP_COPY: dst <- src (size bytes; src freed after when staged); OP_SET: count elements of elsize
       bytes of value at dst; OP_FREE: the allocation at index `index` */
    unsigned char *dst;
    const unsigned char *src;
    size_t size, count, index;
    unsigned value, elsize;
    int staged;
    /* OP_PREFETCH / OP_DISCARD (managed memory, allocation `index`): where the pages go (type 0: nowhere) */
    int loc_type, loc_id;
    struct op *next;
};
struct stream {
    unsigned magic;
    struct ctx *ctx;
    unsigned flags;
    int priority;
    struct op *head, *tail;
    int destroy;
    struct stream *next_all;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_initialized;
static int g_device_count = -1;
static struct ctx g_primary[MAX_DEVICES];
static struct stream *g_all_streams;
static __thread struct ctx *tl_current;
static struct event **g_events;
static size_t g_nevents, g_capevents;

/* ---- memory: pools and the registry of allocations ------------------------------------------------------- */

#define POOL_MAGIC 0x504f4f31u
enum { MEM_DEVICE = 1, MEM_PINNED = 2, MEM_MANAGED = 3, MEM_VIRTUAL = 4 };
/* ALLOC_NO_ACCESS: a virtual-memory mapping no device was granted access to yet (cuMemSetAccess) */
enum { ALLOC_LIVE, ALLOC_FREE_PENDING, ALLOC_FREED, ALLOC_NO_ACCESS };
struct pool {
    unsigned magic;
    int device;
    int is_default;
    int destroyed;
    size_t max_size, used;
    unsigned long long release_threshold;
    int alloc_type, loc_type;          /* CUmemPoolProps: PINNED (1) or MANAGED (2); DEVICE, HOST, HOST_NUMA */
    unsigned char access[MAX_DEVICES]; /* CUmemAccess_flags per device (cuMemPoolSetAccess) */
    int handle_types;                  /* 1: POSIX fd shareable (IPC) */
    struct pool *imported_from;        /* IPC: the exporting pool of an imported one */
};
struct alloc {
    uintptr_t base;
    size_t size;
    int kind, state, device;
    struct pool *pool;
    /* managed memory: the advice (CUmemLocation type/id, type 0: none) and the last prefetch's location */
    int read_mostly, pref_type, pref_id, last_type, last_id;
    unsigned accessed_by; /* bit d: device d; bit 31: the host */
};
static struct pool g_default_pools[MAX_DEVICES];
static struct pool **g_pools;
static size_t g_npools, g_cappools;
static struct alloc *g_allocs;
static size_t g_nallocs, g_capallocs;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int device_count(void) {
    if (g_device_count < 0) {
        const char *e = getenv("FAKE_CUDA_DEVICES");
        int n = e ? atoi(e) : 2;
        g_device_count = n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
    }
    return g_device_count;
}

static int valid_ctx(struct ctx *c) {
    for (int i = 0; i < MAX_DEVICES; ++i)
        if (c == &g_primary[i]) return c->magic == CTX_MAGIC;
    return 0;
}

/* ---- stream workers ---------------------------------------------------------------------------------- */

static void managed_op_done(struct op *op); /* OP_PREFETCH, OP_DISCARD (memory section) */

static void *worker(void *arg) {
    struct stream *s = arg;
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!s->head && !s->destroy) pthread_cond_wait(&g_cv, &g_mu);
        if (!s->head) break;
        struct op *op = s->head;
        if (op->kind == OP_WAIT) {
            while (op->ev->completed_gen < op->gen) pthread_cond_wait(&g_cv, &g_mu);
        } else if (op->kind == OP_HOST) {
            pthread_mutex_unlock(&g_mu);
            op->fn(op->data);
            pthread_mutex_lock(&g_mu);
        } else if (op->kind == OP_COPY) {
            memmove(op->dst, op->src, op->size);
            if (op->staged) free((void *)op->src);
        } else if (op->kind == OP_SET) {
            for (size_t i = 0; i < op->count; ++i) {
                unsigned char *p = op->dst + i * op->elsize;
                if (op->elsize == 1) *p = (unsigned char)op->value;
                else if (op->elsize == 2) { unsigned short v = (unsigned short)op->value; memcpy(p, &v, 2); }
                else memcpy(p, &op->value, 4);
            }
        } else if (op->kind == OP_PREFETCH || op->kind == OP_DISCARD) {
            managed_op_done(op);
        } else if (op->kind == OP_FREE) {
            struct alloc *a = &g_allocs[op->index];
            a->state = ALLOC_FREED;
            if (a->pool) a->pool->used -= a->size;
        } else if (op->ev->completed_gen < op->gen) {
            op->ev->completed_gen = op->gen;
            op->ev->time_ms = now_ms();
        }
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        free(op);
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* Caller holds g_mu. */
static struct stream *new_stream(struct ctx *c, unsigned flags, int priority) {
    struct stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->magic = STREAM_MAGIC;
    s->ctx = c;
    s->flags = flags;
    s->priority = priority;
    s->next_all = g_all_streams;
    g_all_streams = s;
    pthread_t th;
    if (pthread_create(&th, NULL, worker, s) != 0) {
        s->magic = 0;
        return NULL;
    }
    pthread_detach(th);
    return s;
}

/* Caller holds g_mu. 0, 1 (legacy) and 2 (per-thread) name the current context's default stream. */
static struct stream *resolve_stream(void *h, CUresult *err) {
    if ((uintptr_t)h <= 2) {
        struct ctx *c = tl_current;
        if (!c) {
            *err = CUDA_ERROR_INVALID_CONTEXT;
            return NULL;
        }
        if (!c->default_stream) c->default_stream = new_stream(c, 0, 0);
        return c->default_stream;
    }
    for (struct stream *s = g_all_streams; s; s = s->next_all)
        if (s == h && s->magic == STREAM_MAGIC) return s;
    *err = CUDA_ERROR_INVALID_HANDLE;
    return NULL;
}

static struct event *resolve_event(void *h) {
    struct event *e = h;
    /* Events are never freed, but a garbage pointer must not be read: look it up in the registry. */
    for (size_t i = 0; i < g_nevents; ++i)
        if (g_events[i] == e) return e->magic == EVENT_MAGIC ? e : NULL;
    return NULL;
}
static void enqueue(struct stream *s, struct op *op) {
    op->next = NULL;
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&g_cv);
}

/* ---- entry points ---------------------------------------------------------------------------------------- */

#define NEED_INIT() do { if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

/* Whether FAKE_CUDA_FAIL names `entry` (read on each call: tests set and clear it). */
static int injected(const char *entry) {
    const char *fail = getenv("FAKE_CUDA_FAIL");
    return fail && strcmp(fail, entry) == 0;
}

static CUresult f_cuGetErrorName(CUresult r, const char **s) {
    static char buf[64];
    switch (r) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
    case CUDA_ERROR_UNKNOWN: *s = "CUDA_ERROR_UNKNOWN"; break;
    case 208: *s = "CUDA_ERROR_ALREADY_MAPPED"; break;
    case 211: *s = "CUDA_ERROR_NOT_MAPPED"; break;
    case 212: *s = "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"; break;
    case 213: *s = "CUDA_ERROR_NOT_MAPPED_AS_POINTER"; break;
    default: snprintf(buf, sizeof buf, "CUDA_ERROR_%d", r); *s = buf; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
static CUresult f_cuGetErrorString(CUresult r, const char **s) { return f_cuGetErrorName(r, s); }

static CUresult f_cuInit(unsigned flags) {
    (void)flags;
    pthread_mutex_lock(&g_mu);
    if (!g_initialized) {
        for (int i = 0; i < MAX_DEVICES; ++i) {
            g_primary[i].magic = CTX_MAGIC;
            g_primary[i].device = i;
            g_default_pools[i].magic = POOL_MAGIC;
            g_default_pools[i].device = i;
            g_default_pools[i].is_default = 1;
            g_default_pools[i].alloc_type = 1;
            g_default_pools[i].loc_type = 1;
            g_default_pools[i].access[i] = 3; /* the owner reads and writes its pool */
        }
        g_initialized = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
static CUresult f_cuDriverGetVersion(int *v) {
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetCount(int *n) {
    NEED_INIT();
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = device_count();
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGet(CUdevice *d, int ordinal) {
    NEED_INIT();
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}
#define CHECK_DEV(dev) do { NEED_INIT(); if ((dev) < 0 || (dev) >= device_count()) return CUDA_ERROR_INVALID_DEVICE; } while (0)
static CUresult f_cuDeviceGetName(char *name, int len, CUdevice dev) {
    CHECK_DEV(dev);
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "Fake CUDA Device %d", dev);
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetUuid(unsigned char *uuid, CUdevice dev) {
    CHECK_DEV(dev);
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)(0x10 * dev + i);
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetPCIBusId(char *id, int len, CUdevice dev) {
    CHECK_DEV(dev);
    if (!id || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(id, (size_t)len, "0000:%02x:00.0", dev + 0x18);
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
    CHECK_DEV(dev);
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceGetAttribute(int *v, int attr, CUdevice dev) {
    CHECK_DEV(dev);
    if (!v || attr < 1 || attr > 147) return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case 1: *v = 1024; break;              /* max threads per block */
    case 2: case 3: *v = 1024; break;      /* block dim x, y */
    case 4: *v = 64; break;                /* block dim z */
    case 8: *v = 49152; break;             /* shared memory per block */
    case 10: *v = 32; break;               /* warp size */
    case 13: *v = 1980000; break;          /* clock rate */
    case 16: *v = 132; break;              /* multiprocessor count */
    case 18: *v = 0; break;                /* integrated */
    case 33: *v = dev + 0x18; break;       /* PCI bus id */
    case 34: *v = 0; break;                /* PCI device id */
    case 36: *v = 2619000; break;          /* memory clock */
    case 37: *v = 5120; break;             /* bus width */
    case 38: *v = 52428800; break;         /* L2 */
    case 39: *v = 2048; break;             /* threads per SM */
    case 41: *v = 1; break;                /* unified addressing */
    case 50: *v = 0; break;                /* PCI domain */
    case 75: *v = 9; break;                /* compute capability major */
    case 76: *v = 0; break;                /* minor */
    case 81: *v = 233472; break;           /* shared memory per SM */
    case 83: *v = 1; break;                /* concurrent managed access */
    case 95: *v = 1; break;                /* cooperative launch */
    case 115: *v = 1; break;               /* memory pools */
    default: *v = (attr * 7 + dev) % 1000; break;
    }
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
    CHECK_DEV(dev);
    CHECK_DEV(peer);
    if (!can) return CUDA_ERROR_INVALID_VALUE;
    *can = dev != peer;
    return CUDA_SUCCESS;
}
static CUresult f_cuDevicePrimaryCtxRetain(struct ctx **c, CUdevice dev) {
    CHECK_DEV(dev);
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    g_primary[dev].refs++;
    pthread_mutex_unlock(&g_mu);
    *c = &g_primary[dev];
    return CUDA_SUCCESS;
}
static CUresult f_cuDevicePrimaryCtxRelease(CUdevice dev) {
    CHECK_DEV(dev);
    pthread_mutex_lock(&g_mu);
    CUresult r = g_primary[dev].refs > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS) g_primary[dev].refs--;
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuCtxGetCurrent(struct ctx **c) {
    NEED_INIT();
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    *c = tl_current;
    return CUDA_SUCCESS;
}
static CUresult f_cuCtxSetCurrent(struct ctx *c) {
    NEED_INIT();
    if (c && !valid_ctx(c)) return CUDA_ERROR_INVALID_CONTEXT;
    tl_current = c;
    return CUDA_SUCCESS;
}
static CUresult f_cuCtxGetDevice(CUdevice *d) {
    NEED_INIT();
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    *d = tl_current->device;
    return CUDA_SUCCESS;
}
static CUresult f_cuCtxSynchronize(void) {
    NEED_INIT();
    struct ctx *c = tl_current;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    for (;;) {
        int busy = 0;
        for (struct stream *s = g_all_streams; s; s = s->next_all)
            if (s->ctx == c && s->head) busy = 1;
        if (!busy) break;
        pthread_cond_wait(&g_cv, &g_mu);
    }
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
static CUresult f_cuCtxGetStreamPriorityRange(int *least, int *greatest) {
    NEED_INIT();
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}
static CUresult f_cuStreamCreateWithPriority(struct stream **out, unsigned flags, int priority) {
    NEED_INIT();
    if (!out || flags > 1) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    if (priority > 0) priority = 0;
    if (priority < -5) priority = -5;
    pthread_mutex_lock(&g_mu);
    struct stream *s = new_stream(tl_current, flags, priority);
    pthread_mutex_unlock(&g_mu);
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    *out = s;
    return CUDA_SUCCESS;
}
static CUresult f_cuStreamCreate(struct stream **out, unsigned flags) {
    return f_cuStreamCreateWithPriority(out, flags, 0);
}
static CUresult f_cuStreamDestroy(void *h) {
    NEED_INIT();
    if ((uintptr_t)h <= 2) return CUDA_ERROR_INVALID_HANDLE;
    const char *fail = getenv("FAKE_CUDA_FAIL_STREAM_DESTROY"); /* read on each call: tests toggle it */
    if (fail && fail[0] == '1') return 999;                     /* CUDA_ERROR_UNKNOWN */
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s) {
        s->magic = 0;
        s->destroy = 1;
        /* Unlink it (the worker still owns the memory) so look-ups stay short. */
        for (struct stream **p = &g_all_streams; *p; p = &(*p)->next_all) {
            if (*p == s) {
                *p = s->next_all;
                break;
            }
        }
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuStreamSynchronize(void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    while (s && s->head) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuStreamQuery(void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s && s->head) r = CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuStreamWaitEvent(void *h, void *ev, unsigned flags) {
    NEED_INIT();
    (void)flags;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    struct event *e = resolve_event(ev);
    if (s && !e) r = CUDA_ERROR_INVALID_HANDLE;
    if (s && e && e->recorded_gen > e->completed_gen) {
        struct op *op = calloc(1, sizeof *op);
        op->kind = OP_WAIT;
        op->ev = e;
        op->gen = e->recorded_gen;
        enqueue(s, op);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuStreamGetCtx(void *h, struct ctx **c) {
    NEED_INIT();
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s) *c = s->ctx;
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuStreamGetPriority(void *h, int *p) {
    NEED_INIT();
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s) *p = s->priority;
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuStreamGetFlags(void *h, unsigned *f) {
    NEED_INIT();
    if (!f) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s) *f = s->flags;
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuLaunchHostFunc(void *h, CUhostFn fn, void *data) {
    NEED_INIT();
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s) {
        struct op *op = calloc(1, sizeof *op);
        op->kind = OP_HOST;
        op->fn = fn;
        op->data = data;
        enqueue(s, op);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuEventCreate(struct event **out, unsigned flags) {
    NEED_INIT();
    if (!out || flags > 7) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    struct event *e = calloc(1, sizeof *e);
    e->magic = EVENT_MAGIC;
    e->ctx = tl_current;
    e->flags = flags;
    pthread_mutex_lock(&g_mu);
    if (g_nevents == g_capevents) {
        g_capevents = g_capevents ? 2 * g_capevents : 256;
        g_events = realloc(g_events, g_capevents * sizeof *g_events);
    }
    g_events[g_nevents++] = e;
    pthread_mutex_unlock(&g_mu);
    *out = e;
    return CUDA_SUCCESS;
}
static CUresult f_cuEventDestroy(void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct event *e = resolve_event(h);
    if (e && e->opened > 0) {
        --e->opened; /* an opened IPC handle goes; the event stays */
    } else if (e) {
        e->magic = 0;
        /* Drop it from the registry (queued operations may still point at the memory: never freed). */
        for (size_t i = 0; i < g_nevents; ++i) {
            if (g_events[i] == e) {
                g_events[i] = g_events[--g_nevents];
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult f_cuEventRecord(void *ev, void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct event *e = resolve_event(ev);
    struct stream *s = e ? resolve_stream(h, &r) : NULL;
    if (!e) r = CUDA_ERROR_INVALID_HANDLE;
    if (s) {
        struct op *op = calloc(1, sizeof *op);
        op->kind = OP_RECORD;
        op->ev = e;
        op->gen = ++e->recorded_gen;
        enqueue(s, op);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuEventQuery(void *ev) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct event *e = resolve_event(ev);
    CUresult r = !e ? CUDA_ERROR_INVALID_HANDLE
                    : e->completed_gen < e->recorded_gen ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuEventSynchronize(void *ev) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct event *e = resolve_event(ev);
    while (e && e->completed_gen < e->recorded_gen) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult f_cuEventElapsedTime(float *ms, void *start, void *end) {
    NEED_INIT();
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct event *a = resolve_event(start), *b = resolve_event(end);
    CUresult r = CUDA_SUCCESS;
    if (!a || !b || (a->flags & EVENT_DISABLE_TIMING) || (b->flags & EVENT_DISABLE_TIMING) ||
        !a->recorded_gen || !b->recorded_gen)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (a->completed_gen < a->recorded_gen || b->completed_gen < b->recorded_gen)
        r = CUDA_ERROR_NOT_READY;
    else
        *ms = (float)(b->time_ms - a->time_ms);
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* ---- memory ------------------------------------------------------------------------------------------------ */

/* Caller holds g_mu. */
static struct pool *resolve_pool(void *h) {
    for (int i = 0; i < device_count(); ++i)
        if (h == &g_default_pools[i]) return &g_default_pools[i];
    for (size_t i = 0; i < g_npools; ++i)
        if (g_pools[i] == h && g_pools[i]->magic == POOL_MAGIC && !g_pools[i]->destroyed) return g_pools[i];
    return NULL;
}

/* Caller holds g_mu. A new, zeroed registry entry (NULL when out of memory). */
static struct alloc *push_alloc(void) {
    if (g_nallocs == g_capallocs) {
        size_t cap = g_capallocs ? 2 * g_capallocs : 256;
        struct alloc *grown = realloc(g_allocs, cap * sizeof *grown);
        if (!grown) return NULL;
        g_allocs = grown;
        g_capallocs = cap;
    }
    struct alloc *a = &g_allocs[g_nallocs++];
    memset(a, 0, sizeof *a);
    return a;
}

/* Caller holds g_mu. A new registered allocation of `size` bytes (filled with 0xA5), or 0. */
static uintptr_t new_alloc(size_t size, int kind, int device, struct pool *pool) {
    unsigned char *p = malloc(size);
    if (!p) return 0;
    memset(p, 0xA5, size);
    struct alloc *a = push_alloc();
    if (!a) {
        free(p);
        return 0;
    }
    a->base = (uintptr_t)p;
    a->size = size;
    a->kind = kind;
    a->state = ALLOC_LIVE;
    a->device = device;
    a->pool = pool;
    return a->base;
}

/* Caller holds g_mu. The live virtual-memory mapping starting at `p`, or -1. */
static long live_mapping_at(uintptr_t p) {
    for (size_t i = 0; i < g_nallocs; ++i)
        if (g_allocs[i].kind == MEM_VIRTUAL && g_allocs[i].state == ALLOC_LIVE && g_allocs[i].base == p) return (long)i;
    return -1;
}

/* Caller holds g_mu. Where [p, p + n) lies: 1 inside a live allocation (its index in *index; consecutive
   virtual-memory mappings count as one), 0 outside every allocation (pageable host memory), -1 in freed or
   inaccessible memory or across an allocation's end. Live entries are looked at first: a virtual address
   range can be mapped again after it was unmapped. */
static int classify(uintptr_t p, size_t n, size_t *index) {
    size_t m = n ? n : 1;
    for (size_t i = 0; i < g_nallocs; ++i) {
        struct alloc *a = &g_allocs[i];
        if (a->state != ALLOC_LIVE || p < a->base || p >= a->base + a->size) continue;
        if (index) *index = i;
        uintptr_t end = a->base + a->size;
        if (p + m <= end) return 1;
        if (a->kind != MEM_VIRTUAL) return -1;
        while (end < p + m) {
            long j = live_mapping_at(end);
            if (j < 0) return -1;
            end = g_allocs[j].base + g_allocs[j].size;
        }
        return 1;
    }
    for (size_t i = 0; i < g_nallocs; ++i) {
        struct alloc *a = &g_allocs[i];
        if (p < a->base + a->size && p + m > a->base) return -1; /* overlaps something not live */
    }
    return 0;
}

static CUresult f_cuDeviceGetMemPool(struct pool **out, CUdevice dev) {
    CHECK_DEV(dev);
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = &g_default_pools[dev];
    return CUDA_SUCCESS;
}

/* CUmemPoolProps as the CUDA 12.2+ headers lay it out. */
struct pool_props {
    int alloc_type, handle_types;
    struct { int type, id; } location;
    void *win32_security_attributes;
    size_t max_size;
    unsigned short usage;
    unsigned char reserved[54];
};

static CUresult f_cuMemPoolCreate(struct pool **out, const struct pool_props *props) {
    NEED_INIT();
    if (!out || !props) return CUDA_ERROR_INVALID_VALUE;
    /* PINNED (1) pools of a device (1), the host (2) or a host NUMA node (3), shareable (POSIX fd: 1) or not;
       MANAGED (2) pools with no (0), a device or a host preferred location, not shareable. */
    const int type = props->alloc_type, where = props->location.type, id = props->location.id;
    if ((type != 1 && type != 2) || (props->handle_types != 0 && props->handle_types != 1) ||
        (type == 2 && props->handle_types != 0))
        return CUDA_ERROR_INVALID_VALUE;
    if (where == 1) CHECK_DEV(id);
    else if (!(where == 2 || (where == 3 && id >= 0) || (type == 2 && where == 0))) return CUDA_ERROR_INVALID_VALUE;
    struct pool *p = calloc(1, sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    p->magic = POOL_MAGIC;
    p->device = where == 1 ? id : -1;
    p->max_size = props->max_size;
    p->alloc_type = type;
    p->loc_type = where;
    p->handle_types = props->handle_types;
    if (type == 1 && where == 1) p->access[id] = 3; /* a device pool: its device reads and writes */
    pthread_mutex_lock(&g_mu);
    if (g_npools == g_cappools) {
        g_cappools = g_cappools ? 2 * g_cappools : 64;
        g_pools = realloc(g_pools, g_cappools * sizeof *g_pools);
    }
    g_pools[g_npools++] = p;
    pthread_mutex_unlock(&g_mu);
    *out = p;
    return CUDA_SUCCESS;
}

static CUresult f_cuMemPoolDestroy(void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct pool *p = resolve_pool(h);
    CUresult r = (!p || p->is_default) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) p->destroyed = 1; /* outstanding allocations stay valid, as with the real driver */
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemPoolSetAttribute(void *h, int attr, void *value) {
    NEED_INIT();
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct pool *p = resolve_pool(h);
    CUresult r = CUDA_SUCCESS;
    if (!p) r = CUDA_ERROR_INVALID_VALUE;
    else if (attr == 4) p->release_threshold = *(unsigned long long *)value; /* RELEASE_THRESHOLD */
    else if (attr < 1 || attr > 8 || attr == 5 || attr == 7) r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemAllocFromPoolAsync(unsigned long long *dptr, size_t size, void *pool, void *h) {
    NEED_INIT();
    if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct pool *p = resolve_pool(pool);
    struct stream *s = resolve_stream(h, &r);
    if (s && !p) r = CUDA_ERROR_INVALID_VALUE;
    if (s && p && p->max_size && (size > p->max_size || p->used > p->max_size - size)) r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        uintptr_t a = new_alloc(size, p->alloc_type == 2 ? MEM_MANAGED : p->loc_type == 1 ? MEM_DEVICE : MEM_PINNED,
                                p->device, p);
        if (a) {
            p->used += size;
            *dptr = a;
        } else {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static int unmap_import(uintptr_t address); /* IPC section */

static CUresult f_cuMemFreeAsync(unsigned long long dptr, void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    size_t i = 0;
    if (s && unmap_import((uintptr_t)dptr)) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_SUCCESS; /* an imported pointer is unmapped, never freed */
    }
    if (s && (classify((uintptr_t)dptr, 1, &i) != 1 || g_allocs[i].base != dptr || !g_allocs[i].pool))
        r = CUDA_ERROR_INVALID_VALUE; /* not the start of a live pool allocation: a double or bad free */
    if (r == CUDA_SUCCESS) {
        g_allocs[i].state = ALLOC_FREE_PENDING;
        struct op *op = calloc(1, sizeof *op);
        op->kind = OP_FREE;
        op->index = i;
        enqueue(s, op);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemAllocHost(void **out, size_t size) {
    NEED_INIT();
    if (!out || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    uintptr_t a = new_alloc(size, MEM_PINNED, tl_current->device, NULL);
    pthread_mutex_unlock(&g_mu);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    *out = (void *)a;
    return CUDA_SUCCESS;
}

/* Managed memory outside pools, usable at once (synchronous), from the host and every device. */
static CUresult f_cuMemAllocManaged(unsigned long long *dptr, size_t size, unsigned flags) {
    NEED_INIT();
    if (injected("cuMemAllocManaged")) return CUDA_ERROR_UNKNOWN;
    if (!dptr || size == 0 || (flags != 1 && flags != 2)) return CUDA_ERROR_INVALID_VALUE; /* ATTACH_GLOBAL, _HOST */
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    uintptr_t a = new_alloc(size, MEM_MANAGED, tl_current->device, NULL);
    pthread_mutex_unlock(&g_mu);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = a;
    return CUDA_SUCCESS;
}

static CUresult f_cuMemFreeHost(void *ptr) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    size_t i = 0;
    CUresult r = CUDA_SUCCESS;
    if (classify((uintptr_t)ptr, 1, &i) != 1 || g_allocs[i].base != (uintptr_t)ptr || g_allocs[i].kind != MEM_PINNED)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        g_allocs[i].state = ALLOC_FREED;
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* A copy of n bytes in stream order. Registered memory on both sides: queued. Pageable (unregistered) source:
   staged now, then queued. Pageable destination: waits for the stream's earlier work, then copies now. */
static CUresult copy_async(uintptr_t dst, uintptr_t src, size_t n, void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    int dk = s ? classify(dst, n, NULL) : 0, sk = s ? classify(src, n, NULL) : 0;
    if (s && (dk < 0 || sk < 0 || (n && (!dst || !src)))) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && n) {
        if (dk == 0) {
            while (s->head) pthread_cond_wait(&g_cv, &g_mu);
            memmove((void *)dst, (const void *)src, n);
        } else {
            struct op *op = calloc(1, sizeof *op);
            op->kind = OP_COPY;
            op->dst = (unsigned char *)dst;
            op->size = n;
            if (sk == 0) {
                unsigned char *staged = malloc(n);
                memcpy(staged, (const void *)src, n);
                op->src = staged;
                op->staged = 1;
            } else {
                op->src = (const unsigned char *)src;
            }
            enqueue(s, op);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t n, void *h) {
    return copy_async((uintptr_t)dst, (uintptr_t)src, n, h);
}
static CUresult f_cuMemcpyHtoDAsync(unsigned long long dst, const void *src, size_t n, void *h) {
    return copy_async((uintptr_t)dst, (uintptr_t)src, n, h);
}
static CUresult f_cuMemcpyDtoHAsync(void *dst, unsigned long long src, size_t n, void *h) {
    return copy_async((uintptr_t)dst, (uintptr_t)src, n, h);
}

static CUresult memset_async(unsigned long long dst, unsigned value, unsigned elsize, size_t count, void *h) {
    NEED_INIT();
    if (dst % elsize) return CUDA_ERROR_INVALID_VALUE; /* the driver wants 2- and 4-byte alignment */
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    if (s && count && classify((uintptr_t)dst, count * elsize, NULL) != 1) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && count) {
        struct op *op = calloc(1, sizeof *op);
        op->kind = OP_SET;
        op->dst = (unsigned char *)(uintptr_t)dst;
        op->value = value;
        op->elsize = elsize;
        op->count = count;
        enqueue(s, op);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void *h) {
    return memset_async(d, v, 1, n, h);
}
static CUresult f_cuMemsetD16Async(unsigned long long d, unsigned short v, size_t n, void *h) {
    return memset_async(d, v, 2, n, h);
}
static CUresult f_cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void *h) {
    return memset_async(d, v, 4, n, h);
}

/* Synchronous entry points for the tests' raw-driver helpers (exported below, not in the proc table). */
static CUresult raw_mem_alloc(unsigned long long *dptr, size_t size) {
    NEED_INIT();
    if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    uintptr_t a = new_alloc(size, MEM_DEVICE, tl_current->device, NULL);
    pthread_mutex_unlock(&g_mu);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = a;
    return CUDA_SUCCESS;
}
/* cuMemAlloc's and cuMemAllocManaged's memory (not a pool's, not pinned host memory), as the driver frees. */
static CUresult f_cuMemFree(unsigned long long dptr) {
    NEED_INIT();
    if (injected("cuMemFree")) return CUDA_ERROR_UNKNOWN;
    pthread_mutex_lock(&g_mu);
    size_t i = 0;
    CUresult r = CUDA_SUCCESS;
    if (classify((uintptr_t)dptr, 1, &i) != 1 || g_allocs[i].base != dptr ||
        (g_allocs[i].kind != MEM_DEVICE && g_allocs[i].kind != MEM_MANAGED) || g_allocs[i].pool)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        g_allocs[i].state = ALLOC_FREED;
    pthread_mutex_unlock(&g_mu);
    return r;
}
/* Synchronous copies: wait for every stream first (the real ones synchronize with the legacy stream only;
   the tests synchronize their streams first anyway). */
static CUresult raw_copy(uintptr_t dst, uintptr_t src, size_t n) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    for (;;) {
        int busy = 0;
        for (struct stream *s = g_all_streams; s; s = s->next_all)
            if (s->head) busy = 1;
        if (!busy) break;
        pthread_cond_wait(&g_cv, &g_mu);
    }
    CUresult r = CUDA_SUCCESS;
    if (classify(dst, n, NULL) < 0 || classify(src, n, NULL) < 0) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && n) memmove((void *)dst, (const void *)src, n);
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* ---- pool access, managed memory, strided and peer copies, virtual memory management ------------------- */

struct mem_location {
    int type, id; /* CUmemLocation: 0 none, 1 device, 2 host, 3 host NUMA, 4 the current thread's NUMA node */
};
struct access_desc {
    struct mem_location location;
    int flags; /* CUmemAccess_flags: 0 none, 1 read, 3 read-write */
};

/* A location the driver accepts for memory: a device that exists, the host, a NUMA node (current: node 0). */
static int valid_location(struct mem_location *l) {
    if (l->type == 1) return l->id >= 0 && l->id < device_count();
    if (l->type == 4) {
        l->type = 3;
        l->id = 0;
    }
    return l->type == 2 || (l->type == 3 && l->id >= 0);
}

static CUresult f_cuMemPoolSetAccess(void *h, const struct access_desc *map, size_t count) {
    NEED_INIT();
    if (!map || !count) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct pool *p = resolve_pool(h);
    CUresult r = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; r == CUDA_SUCCESS && i < count; ++i) {
        const struct access_desc *d = &map[i];
        if (d->location.type != 1 || d->location.id < 0 || d->location.id >= device_count())
            r = CUDA_ERROR_INVALID_DEVICE;
        else if (d->flags != 0 && d->flags != 3) /* pools are read-write or nothing */
            r = CUDA_ERROR_INVALID_VALUE;
        else if (p->alloc_type == 1 && p->loc_type == 1 && d->location.id == p->device && d->flags == 0)
            r = CUDA_ERROR_INVALID_DEVICE; /* a device pool's own device keeps its access */
    }
    for (size_t i = 0; r == CUDA_SUCCESS && i < count; ++i) p->access[map[i].location.id] = (unsigned char)map[i].flags;
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemPoolGetAccess(int *flags, void *h, const struct mem_location *location) {
    NEED_INIT();
    if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
    if (location->type != 1 || location->id < 0 || location->id >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_mu);
    struct pool *p = resolve_pool(h);
    if (p) *flags = p->access[location->id];
    pthread_mutex_unlock(&g_mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Caller holds g_mu. The managed allocation holding all of [dptr, dptr + count), or NULL. */
static struct alloc *managed_range(unsigned long long dptr, size_t count, size_t *index) {
    size_t i = 0;
    if (!count || classify((uintptr_t)dptr, count, &i) != 1 || g_allocs[i].kind != MEM_MANAGED) return NULL;
    if (index) *index = i;
    return &g_allocs[i];
}

static CUresult f_cuMemAdvise(unsigned long long dptr, size_t count, int advice, struct mem_location location) {
    NEED_INIT();
    if (injected("cuMemAdvise")) return CUDA_ERROR_UNKNOWN;
    pthread_mutex_lock(&g_mu);
    struct alloc *a = managed_range(dptr, count, NULL);
    CUresult r = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (a && a->pool) r = CUDA_ERROR_NOT_SUPPORTED; /* managed-pool memory, as driver 580 on an H100 answers */
    if (a && advice >= 3 && advice != 4 && !valid_location(&location)) r = CUDA_ERROR_INVALID_DEVICE;
    if (r == CUDA_SUCCESS) {
        unsigned bit = location.type == 1 ? 1u << location.id : 1u << 31;
        switch (advice) {
        case 1: a->read_mostly = 1; break;                 /* SET_READ_MOSTLY */
        case 2: a->read_mostly = 0; break;                 /* UNSET_READ_MOSTLY */
        case 3: a->pref_type = location.type; a->pref_id = location.type == 2 ? 0 : location.id; break;
        case 4: a->pref_type = 0; a->pref_id = 0; break;   /* UNSET_PREFERRED_LOCATION */
        case 5: a->accessed_by |= bit; break;              /* SET_ACCESSED_BY */
        case 6: a->accessed_by &= ~bit; break;             /* UNSET_ACCESSED_BY */
        default: r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* A location as the legacy int attributes give it: a device ordinal, -1 (CU_DEVICE_CPU), -2 (none). */
static int legacy_id(int type, int id) { return type == 1 ? id : type ? -1 : -2; }

static CUresult f_cuMemRangeGetAttribute(void *data, size_t size, int attribute, unsigned long long dptr,
                                         size_t count) {
    NEED_INIT();
    if (!data || size < 4 || size % 4) return CUDA_ERROR_INVALID_VALUE;
    int *out = data;
    pthread_mutex_lock(&g_mu);
    struct alloc *a = managed_range(dptr, count, NULL);
    CUresult r = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (a && attribute != 3 && size != 4) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        switch (attribute) {
        case 1: *out = a->read_mostly; break;
        case 2: *out = legacy_id(a->pref_type, a->pref_id); break;
        case 3: { /* ACCESSED_BY: the devices (and -1 for the host), then -2 */
            size_t n = size / 4, k = 0;
            for (int d = 0; d < device_count() && k < n; ++d)
                if (a->accessed_by & (1u << d)) out[k++] = d;
            if ((a->accessed_by & (1u << 31)) && k < n) out[k++] = -1;
            while (k < n) out[k++] = -2;
            break;
        }
        case 4: *out = legacy_id(a->last_type, a->last_id); break;
        case 5: *out = a->pref_type; break;
        case 6: *out = a->pref_id; break;
        case 7: *out = a->last_type; break;
        case 8: *out = a->last_id; break;
        default: r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* Runs on the stream's worker (g_mu held): a prefetch records where the pages went; a discard makes the
   contents unspecified (0xDD here) and, with a location, prefetches them there. */
static void managed_op_done(struct op *op) {
    struct alloc *a = &g_allocs[op->index];
    if (a->state != ALLOC_LIVE) return;
    if (op->kind == OP_DISCARD) memset((void *)a->base, 0xDD, a->size);
    a->last_type = op->loc_type;
    a->last_id = op->loc_id;
}

/* Caller holds g_mu. Queues a prefetch or discard of the managed range on stream `h`. */
static CUresult managed_op(int kind, unsigned long long dptr, size_t count, struct mem_location *loc, void *h) {
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    size_t i = 0;
    if (s && !managed_range(dptr, count, &i)) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && loc && !valid_location(loc)) r = CUDA_ERROR_INVALID_DEVICE;
    if (r == CUDA_SUCCESS) {
        struct op *op = calloc(1, sizeof *op);
        op->kind = kind;
        op->index = i;
        op->loc_type = loc ? loc->type : 0;
        op->loc_id = loc && loc->type != 2 ? loc->id : 0;
        enqueue(s, op);
    }
    return r;
}

static CUresult f_cuMemPrefetchAsync(unsigned long long dptr, size_t count, struct mem_location location,
                                     unsigned flags, void *h) {
    NEED_INIT();
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = managed_op(OP_PREFETCH, dptr, count, &location, h);
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemDiscardBatchAsync(unsigned long long *dptrs, size_t *sizes, size_t count,
                                         unsigned long long flags, void *h) {
    NEED_INIT();
    if (!dptrs || !sizes || !count || flags) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; i < count && r == CUDA_SUCCESS; ++i) r = managed_op(OP_DISCARD, dptrs[i], sizes[i], NULL, h);
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* Operands prefetch_idx[i] .. prefetch_idx[i + 1] - 1 go to locations[i] after the discard. */
static CUresult f_cuMemDiscardAndPrefetchBatchAsync(unsigned long long *dptrs, size_t *sizes, size_t count,
                                                    struct mem_location *locations, size_t *prefetch_idx,
                                                    size_t nlocations, unsigned long long flags, void *h) {
    NEED_INIT();
    if (!dptrs || !sizes || !count || !locations || !prefetch_idx || !nlocations || flags || prefetch_idx[0] != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0, l = 0; i < count && r == CUDA_SUCCESS; ++i) {
        while (l + 1 < nlocations && prefetch_idx[l + 1] <= i) ++l;
        struct mem_location loc = locations[l];
        r = managed_op(OP_DISCARD, dptrs[i], sizes[i], &loc, h);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* CUDA_MEMCPY3D (v2). */
struct memcpy3d {
    size_t src_x, src_y, src_z, src_lod;
    int src_type;
    const void *src_host;
    unsigned long long src_device;
    void *src_array, *reserved0;
    size_t src_pitch, src_height;
    size_t dst_x, dst_y, dst_z, dst_lod;
    int dst_type;
    void *dst_host;
    unsigned long long dst_device;
    void *dst_array, *reserved1;
    size_t dst_pitch, dst_height;
    size_t width, height, depth;
};

/* Caller holds g_mu. One row of a strided copy, in stream order (as copy_async: pageable memory is read or
   written at the call). Checked by the caller. */
static void copy_row_locked(struct stream *s, uintptr_t dst, uintptr_t src, size_t n, int dk, int sk) {
    if (dk == 0) {
        while (s->head) pthread_cond_wait(&g_cv, &g_mu);
        memmove((void *)dst, (const void *)src, n);
        return;
    }
    struct op *op = calloc(1, sizeof *op);
    op->kind = OP_COPY;
    op->dst = (unsigned char *)dst;
    op->size = n;
    if (sk == 0) {
        unsigned char *staged = malloc(n);
        memcpy(staged, (const void *)src, n);
        op->src = staged;
        op->staged = 1;
    } else {
        op->src = (const unsigned char *)src;
    }
    enqueue(s, op);
}

/* The address of row (y, z) of one side; 0 for a memory type this driver does not take (arrays). */
static uintptr_t row_address(int type, const void *host, unsigned long long device, size_t pitch, size_t height,
                             size_t x, size_t y, size_t z) {
    uintptr_t base = type == 1 ? (uintptr_t)host : (type == 2 || type == 4) ? (uintptr_t)device : 0;
    return base ? base + (z * height + y) * pitch + x : 0;
}

static CUresult f_cuMemcpy3DAsync(const struct memcpy3d *p, void *h) {
    NEED_INIT();
    if (!p || p->src_lod || p->dst_lod || p->reserved0 || p->reserved1 || p->src_x + p->width > p->src_pitch ||
        p->dst_x + p->width > p->dst_pitch ||
        (p->depth > 1 && (p->src_y + p->height > p->src_height || p->dst_y + p->height > p->dst_height)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!p->width || !p->height || !p->depth) return CUDA_SUCCESS;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    /* Check every row first: nothing is copied when any row is outside its memory. */
    for (size_t z = 0; s && r == CUDA_SUCCESS && z < p->depth; ++z) {
        for (size_t y = 0; r == CUDA_SUCCESS && y < p->height; ++y) {
            uintptr_t d = row_address(p->dst_type, p->dst_host, p->dst_device, p->dst_pitch, p->dst_height, p->dst_x,
                                      p->dst_y + y, p->dst_z + z);
            uintptr_t sr = row_address(p->src_type, p->src_host, p->src_device, p->src_pitch, p->src_height,
                                       p->src_x, p->src_y + y, p->src_z + z);
            int dk = d ? classify(d, p->width, NULL) : -1, sk = sr ? classify(sr, p->width, NULL) : -1;
            /* device memory must be registered; host memory may be pageable */
            if (dk < 0 || sk < 0 || (p->dst_type == 2 && dk != 1) || (p->src_type == 2 && sk != 1))
                r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    for (size_t z = 0; s && r == CUDA_SUCCESS && z < p->depth; ++z) {
        for (size_t y = 0; y < p->height; ++y) {
            uintptr_t d = row_address(p->dst_type, p->dst_host, p->dst_device, p->dst_pitch, p->dst_height, p->dst_x,
                                      p->dst_y + y, p->dst_z + z);
            uintptr_t sr = row_address(p->src_type, p->src_host, p->src_device, p->src_pitch, p->src_height,
                                       p->src_x, p->src_y + y, p->src_z + z);
            copy_row_locked(s, d, sr, p->width, classify(d, p->width, NULL), classify(sr, p->width, NULL));
        }
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* Between two contexts' memory: each registered device pointer must belong to its context's device. */
static CUresult f_cuMemcpyPeerAsync(unsigned long long dst, struct ctx *dst_ctx, unsigned long long src,
                                    struct ctx *src_ctx, size_t n, void *h) {
    NEED_INIT();
    if (!valid_ctx(dst_ctx) || !valid_ctx(src_ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    size_t di = 0, si = 0;
    int dk = classify((uintptr_t)dst, n, &di), sk = classify((uintptr_t)src, n, &si);
    CUresult r = CUDA_SUCCESS;
    if ((dk == 1 && g_allocs[di].kind == MEM_DEVICE && g_allocs[di].device != dst_ctx->device) ||
        (sk == 1 && g_allocs[si].kind == MEM_DEVICE && g_allocs[si].device != src_ctx->device))
        r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&g_mu);
    return r ? r : copy_async((uintptr_t)dst, (uintptr_t)src, n, h);
}

/* Virtual memory management. Physical memory is a memfd; a reservation is an inaccessible anonymous mapping
   (never unmapped, so no later allocation reuses its addresses); cuMemMap maps the memfd over part of it, so
   two mappings of the same physical memory see the same bytes, as on a device. */
#define VMM_MIN_GRANULARITY ((size_t)64 << 10)
#define VMM_GRANULARITY ((size_t)2 << 20)
#define PHYS_MAGIC 0x50485931u

struct phys {
    unsigned magic;
    int fd, device, released;
    size_t size;
};
struct reservation {
    uintptr_t base;
    size_t size;
    int freed;
};
struct alloc_prop { /* CUmemAllocationProp */
    int type, handle_types;
    struct mem_location location;
    void *win32_metadata;
    unsigned char compression, rdma;
    unsigned short usage;
    unsigned char reserved[4];
};
static struct phys **g_phys;
static size_t g_nphys, g_capphys;
static struct reservation *g_res;
static size_t g_nres, g_capres;

static CUresult check_prop(const struct alloc_prop *prop) {
    if (!prop || prop->type != 1 || (prop->handle_types != 0 && prop->handle_types != 1)) return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type == 1)
        return prop->location.id >= 0 && prop->location.id < device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    return prop->location.type == 2 || (prop->location.type == 3 && prop->location.id >= 0) ? CUDA_SUCCESS
                                                                                            : CUDA_ERROR_INVALID_VALUE;
}

static CUresult f_cuMemGetAllocationGranularity(size_t *granularity, const struct alloc_prop *prop, int option) {
    NEED_INIT();
    if (!granularity || (option != 0 && option != 1)) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_prop(prop);
    if (r == CUDA_SUCCESS) *granularity = option ? VMM_GRANULARITY : VMM_MIN_GRANULARITY;
    return r;
}

/* Caller holds g_mu. */
static struct phys *resolve_phys(unsigned long long handle) {
    for (size_t i = 0; i < g_nphys; ++i)
        if ((uintptr_t)g_phys[i] == handle && g_phys[i]->magic == PHYS_MAGIC && !g_phys[i]->released) return g_phys[i];
    return NULL;
}

static CUresult f_cuMemCreate(unsigned long long *handle, size_t size, const struct alloc_prop *prop,
                              unsigned long long flags) {
    NEED_INIT();
    if (!handle || !size || size % VMM_MIN_GRANULARITY || flags) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_prop(prop);
    if (r) return r;
    int fd = memfd_create("fake_cuda_vmm", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    void *fill = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0) fill = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fill == MAP_FAILED) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memset(fill, 0xA5, size); /* new memory is never zero */
    munmap(fill, size);
    struct phys *ph = calloc(1, sizeof *ph);
    ph->magic = PHYS_MAGIC;
    ph->fd = fd;
    ph->device = prop->location.type == 1 ? prop->location.id : -1;
    ph->size = size;
    pthread_mutex_lock(&g_mu);
    if (g_nphys == g_capphys) {
        g_capphys = g_capphys ? 2 * g_capphys : 64;
        g_phys = realloc(g_phys, g_capphys * sizeof *g_phys);
    }
    g_phys[g_nphys++] = ph;
    pthread_mutex_unlock(&g_mu);
    *handle = (uintptr_t)ph;
    return CUDA_SUCCESS;
}

/* The bytes stay while mapped (the mappings hold the memfd open). */
static CUresult f_cuMemRelease(unsigned long long handle) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct phys *ph = resolve_phys(handle);
    if (ph) {
        ph->released = 1;
        close(ph->fd);
    }
    pthread_mutex_unlock(&g_mu);
    return ph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult f_cuMemAddressReserve(unsigned long long *ptr, size_t size, size_t alignment,
                                      unsigned long long addr, unsigned long long flags) {
    NEED_INIT();
    if (!ptr || !size || size % VMM_MIN_GRANULARITY || flags || (alignment & (alignment - 1)) ||
        addr % VMM_MIN_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    if (!alignment) alignment = VMM_GRANULARITY;
    const int prot = PROT_NONE, mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    uintptr_t base = 0;
    if (addr) { /* a hint: taken when that range is free */
        void *p = mmap((void *)(uintptr_t)addr, size, prot, mflags, -1, 0);
        if (p != MAP_FAILED && (uintptr_t)p == addr) base = addr;
        else if (p != MAP_FAILED) munmap(p, size);
    }
    if (!base) {
        void *p = mmap(NULL, size + alignment, prot, mflags, -1, 0);
        if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
        uintptr_t start = (uintptr_t)p;
        base = (start + alignment - 1) & ~(uintptr_t)(alignment - 1);
        if (base > start) munmap(p, base - start);
        if (start + size + alignment > base + size) munmap((void *)(base + size), start + size + alignment - base - size);
    }
    pthread_mutex_lock(&g_mu);
    if (g_nres == g_capres) {
        g_capres = g_capres ? 2 * g_capres : 64;
        g_res = realloc(g_res, g_capres * sizeof *g_res);
    }
    g_res[g_nres].base = base;
    g_res[g_nres].size = size;
    g_res[g_nres].freed = 0;
    ++g_nres;
    pthread_mutex_unlock(&g_mu);
    *ptr = base;
    return CUDA_SUCCESS;
}

/* Caller holds g_mu. Whether [p, p + n) lies in live reservations (adjacent ones join). */
static int reserved(uintptr_t p, size_t n) {
    uintptr_t at = p;
    while (at < p + n) {
        size_t i = 0;
        while (i < g_nres && (g_res[i].freed || at < g_res[i].base || at >= g_res[i].base + g_res[i].size)) ++i;
        if (i == g_nres) return 0;
        at = g_res[i].base + g_res[i].size;
    }
    return 1;
}

/* Caller holds g_mu. Whether [p, p + n) is exactly a run of whole mappings (mapped, with access or not);
   with `state`, their state becomes that. */
static int mapped_exactly(uintptr_t p, size_t n, int state) {
    uintptr_t at = p;
    while (at < p + n) {
        size_t i = 0;
        while (i < g_nallocs && !(g_allocs[i].kind == MEM_VIRTUAL && g_allocs[i].base == at &&
                                  (g_allocs[i].state == ALLOC_LIVE || g_allocs[i].state == ALLOC_NO_ACCESS)))
            ++i;
        if (i == g_nallocs || at + g_allocs[i].size > p + n) return 0;
        at += g_allocs[i].size;
    }
    for (at = p; state >= 0 && at < p + n;) {
        for (size_t i = 0; i < g_nallocs; ++i) {
            struct alloc *a = &g_allocs[i];
            if (a->kind == MEM_VIRTUAL && a->base == at && (a->state == ALLOC_LIVE || a->state == ALLOC_NO_ACCESS)) {
                a->state = state;
                at += a->size;
                break;
            }
        }
    }
    return 1;
}

static CUresult f_cuMemAddressFree(unsigned long long ptr, size_t size) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < g_nres; ++i) {
        if (g_res[i].freed || g_res[i].base != ptr || g_res[i].size != size) continue;
        r = CUDA_SUCCESS;
        for (size_t j = 0; j < g_nallocs; ++j) { /* unmap first */
            struct alloc *a = &g_allocs[j];
            if (a->kind == MEM_VIRTUAL && (a->state == ALLOC_LIVE || a->state == ALLOC_NO_ACCESS) &&
                a->base < ptr + size && a->base + a->size > ptr)
                r = CUDA_ERROR_INVALID_VALUE;
        }
        if (r == CUDA_SUCCESS) g_res[i].freed = 1; /* the addresses stay reserved (inaccessible) for good */
        break;
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemMap(unsigned long long ptr, size_t size, size_t offset, unsigned long long handle,
                           unsigned long long flags) {
    NEED_INIT();
    if (!ptr || !size || flags || ptr % VMM_MIN_GRANULARITY || size % VMM_MIN_GRANULARITY ||
        offset % VMM_MIN_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct phys *ph = resolve_phys(handle);
    CUresult r = ph && offset + size <= ph->size && reserved(ptr, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; r == CUDA_SUCCESS && i < g_nallocs; ++i) { /* nothing mapped there yet */
        struct alloc *a = &g_allocs[i];
        if (a->kind == MEM_VIRTUAL && (a->state == ALLOC_LIVE || a->state == ALLOC_NO_ACCESS) &&
            a->base < ptr + size && a->base + a->size > ptr)
            r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r == CUDA_SUCCESS &&
        mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ph->fd, (off_t)offset) ==
            MAP_FAILED)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    struct alloc *a = r == CUDA_SUCCESS ? push_alloc() : NULL;
    if (a) {
        a->base = (uintptr_t)ptr;
        a->size = size;
        a->kind = MEM_VIRTUAL;
        a->state = ALLOC_NO_ACCESS; /* until cuMemSetAccess */
        a->device = ph->device;
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemUnmap(unsigned long long ptr, size_t size) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = size && mapped_exactly(ptr, size, -1) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        /* wait for queued work that may touch it, then make the range inaccessible again */
        for (int busy = 1; busy;) {
            busy = 0;
            for (struct stream *s = g_all_streams; s; s = s->next_all)
                if (s->head) busy = 1;
            if (busy) pthread_cond_wait(&g_cv, &g_mu);
        }
        mapped_exactly(ptr, size, ALLOC_FREED);
        mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemSetAccess(unsigned long long ptr, size_t size, const struct access_desc *desc, size_t count) {
    NEED_INIT();
    if (!desc || !count || !size) return CUDA_ERROR_INVALID_VALUE;
    int any = 0;
    for (size_t i = 0; i < count; ++i) {
        if (desc[i].location.type != 1 || desc[i].location.id < 0 || desc[i].location.id >= device_count())
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != 0 && desc[i].flags != 1 && desc[i].flags != 3) return CUDA_ERROR_INVALID_VALUE;
        any |= desc[i].flags != 0;
    }
    pthread_mutex_lock(&g_mu);
    CUresult r = mapped_exactly(ptr, size, -1) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    /* The fake keeps one bit: accessible from some device or not (revoking a peer leaves the owner's). */
    if (r == CUDA_SUCCESS && any) mapped_exactly(ptr, size, ALLOC_LIVE);
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* ---- IPC: pools as memfd descriptors, pointers imported at the exporter's address ------------------------- */

/* One process holds both sides here, so an import "maps" the exporter's memory at its own address (copies
   through either handle see the same bytes) and an opened event is the exporter's event itself. */
#define IPC_MAGIC 0xFA4E1BC0DE5EA1EDull
struct ipc_bytes { unsigned char reserved[64]; }; /* CUmemPoolPtrExportData, CUipcEventHandle */
struct exported_pool { dev_t dev; ino_t ino; struct pool *pool; };
struct imported_pointer { uintptr_t address; struct pool *pool; };
static struct exported_pool *g_exports;
static size_t g_nexports, g_capexports;
static struct imported_pointer *g_imports;
static size_t g_nimports, g_capimports;

/* Caller holds g_mu. Removes an imported mapping of `address`; whether there was one. */
static int unmap_import(uintptr_t address) {
    for (size_t i = 0; i < g_nimports; ++i) {
        if (g_imports[i].address == address) {
            g_imports[i] = g_imports[--g_nimports];
            return 1;
        }
    }
    return 0;
}

static CUresult f_cuMemPoolExportToShareableHandle(void *handle, void *pool, int type, unsigned long long flags) {
    NEED_INIT();
    if (!handle || flags || type != 1 /* POSIX fd */) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct pool *p = resolve_pool(pool);
    CUresult r = (!p || p->is_default || p->imported_from || !(p->handle_types & 1)) ? CUDA_ERROR_INVALID_VALUE
                                                                                     : CUDA_SUCCESS;
    int fd = -1;
    struct stat st;
    if (r == CUDA_SUCCESS && ((fd = memfd_create("fake-cuda-pool", MFD_CLOEXEC)) < 0 || fstat(fd, &st) != 0))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        if (g_nexports == g_capexports) {
            g_capexports = g_capexports ? 2 * g_capexports : 16;
            g_exports = realloc(g_exports, g_capexports * sizeof *g_exports);
        }
        g_exports[g_nexports].dev = st.st_dev;
        g_exports[g_nexports].ino = st.st_ino;
        g_exports[g_nexports++].pool = p;
        *(int *)handle = fd;
    } else if (fd >= 0) {
        close(fd);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemPoolImportFromShareableHandle(struct pool **out, void *handle, int type,
                                                     unsigned long long flags) {
    NEED_INIT();
    if (!out || flags || type != 1) return CUDA_ERROR_INVALID_VALUE;
    struct stat st;
    if (fstat((int)(intptr_t)handle, &st) != 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct pool *source = NULL;
    for (size_t i = g_nexports; i-- > 0 && !source;)
        if (g_exports[i].dev == st.st_dev && g_exports[i].ino == st.st_ino) source = resolve_pool(g_exports[i].pool);
    pthread_mutex_unlock(&g_mu);
    if (!source) return CUDA_ERROR_INVALID_VALUE;
    struct pool *p = calloc(1, sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = *source;
    p->is_default = 0;
    p->destroyed = 0;
    p->used = 0;
    p->imported_from = source;
    pthread_mutex_lock(&g_mu);
    if (g_npools == g_cappools) {
        g_cappools = g_cappools ? 2 * g_cappools : 64;
        g_pools = realloc(g_pools, g_cappools * sizeof *g_pools);
    }
    g_pools[g_npools++] = p;
    pthread_mutex_unlock(&g_mu);
    *out = p;
    return CUDA_SUCCESS;
}

static CUresult f_cuMemPoolExportPointer(struct ipc_bytes *data, unsigned long long dptr) {
    NEED_INIT();
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    size_t i = 0;
    CUresult r = (classify((uintptr_t)dptr, 1, &i) == 1 && g_allocs[i].base == dptr && g_allocs[i].pool &&
                  (g_allocs[i].pool->handle_types & 1))
                     ? CUDA_SUCCESS
                     : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        const unsigned long long words[3] = {IPC_MAGIC, dptr, (unsigned long long)(uintptr_t)g_allocs[i].pool};
        memset(data, 0, sizeof *data);
        memcpy(data->reserved, words, sizeof words);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuMemPoolImportPointer(unsigned long long *dptr, void *pool, struct ipc_bytes *data) {
    NEED_INIT();
    if (!dptr || !data) return CUDA_ERROR_INVALID_VALUE;
    unsigned long long words[3];
    memcpy(words, data->reserved, sizeof words);
    pthread_mutex_lock(&g_mu);
    struct pool *p = resolve_pool(pool);
    size_t i = 0;
    CUresult r = CUDA_SUCCESS;
    if (!p || !p->imported_from || words[0] != IPC_MAGIC || (uintptr_t)p->imported_from != words[2] ||
        classify((uintptr_t)words[1], 1, &i) != 1 || g_allocs[i].base != words[1] || g_allocs[i].pool != p->imported_from)
        r = CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; r == CUDA_SUCCESS && k < g_nimports; ++k)
        if (g_imports[k].address == words[1] && g_imports[k].pool == p) r = 208; /* CUDA_ERROR_ALREADY_MAPPED */
    if (r == CUDA_SUCCESS) {
        if (g_nimports == g_capimports) {
            g_capimports = g_capimports ? 2 * g_capimports : 64;
            g_imports = realloc(g_imports, g_capimports * sizeof *g_imports);
        }
        g_imports[g_nimports].address = (uintptr_t)words[1];
        g_imports[g_nimports++].pool = p;
        *dptr = words[1];
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuIpcGetEventHandle(struct ipc_bytes *handle, void *ev) {
    NEED_INIT();
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct event *e = resolve_event(ev);
    CUresult r = !e ? CUDA_ERROR_INVALID_HANDLE
                    : ((e->flags & 4) && (e->flags & EVENT_DISABLE_TIMING)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        const unsigned long long words[2] = {IPC_MAGIC, (unsigned long long)(uintptr_t)e};
        memset(handle, 0, sizeof *handle);
        memcpy(handle->reserved, words, sizeof words);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuIpcOpenEventHandle(struct event **out, struct ipc_bytes handle) {
    NEED_INIT();
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    unsigned long long words[2];
    memcpy(words, handle.reserved, sizeof words);
    pthread_mutex_lock(&g_mu);
    struct event *e = words[0] == IPC_MAGIC ? resolve_event((void *)(uintptr_t)words[1]) : NULL;
    if (e) ++e->opened;
    pthread_mutex_unlock(&g_mu);
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    *out = e;
    return CUDA_SUCCESS;
}

/* ---- libraries, kernels and launches ------------------------------------------------------------------------
 * The fake cannot run device code, so its "images" are text it can parse:
 *     FAKECUBIN
 *     kernel NAME [SIZE,SIZE,...]      (a kernel and its parameters' sizes, packed at natural alignment)
 *     global NAME SIZE                 (a module global of SIZE bytes, registered device memory)
 * Anything else is CUDA_ERROR_INVALID_IMAGE. A CUkernel is also its own CUfunction. cuLaunchKernelEx checks
 * the stream and the kernel, then records the launch (configuration, attributes and a copy of every
 * argument's bytes, as many as the kernel's parameter sizes say) for fake_cuda_last_launch(). */

#define LIB_MAGIC 0x4c494231u
#define KERNEL_MAGIC 0x4b524e31u
#define MAX_FAKE_KERNELS 16
#define MAX_FAKE_PARAMS 32
#define CUDA_ERROR_INVALID_IMAGE 200
struct flib;
struct fkernel {
    unsigned magic;
    struct flib *lib;
    char name[64];
    size_t nparams, sizes[MAX_FAKE_PARAMS], offsets[MAX_FAKE_PARAMS];
    int attrs[20]; /* CU_FUNC_ATTRIBUTE_* values by index */
};
struct fglobal {
    char name[64];
    size_t size;
    uintptr_t address;
};
struct flib {
    unsigned magic;
    int unloaded;
    size_t nkernels, nglobals;
    struct fkernel kernels[MAX_FAKE_KERNELS];
    struct fglobal globals[MAX_FAKE_KERNELS];
    struct flib *next;
};
static struct flib *g_libs;
static int g_live_libraries;

/* What the last launch was given (fake_cuda_last_launch). */
struct fake_launch {
    unsigned grid[3], block[3], shared_memory_bytes;
    void *stream;
    void *kernel;
    unsigned num_attrs;
    int attr_ids[8];
    int attr_values[8][3]; /* cluster: x, y, z; cooperative, PSS, priority: [0] */
    size_t nparams;
    size_t sizes[MAX_FAKE_PARAMS];
    unsigned char args[MAX_FAKE_PARAMS][256];
    unsigned long long count; /* launches so far */
};
static struct fake_launch g_last_launch;

static int parse_image(struct flib *lib, const char *text, size_t len) {
    if (len < 9 || memcmp(text, "FAKECUBIN", 9) != 0) return 0;
    const char *p = text + 9, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        char line[512];
        size_t n = (size_t)(eol - p) < sizeof line - 1 ? (size_t)(eol - p) : sizeof line - 1;
        memcpy(line, p, n);
        line[n] = 0;
        char name[64], sizes[400] = "";
        size_t gsize = 0;
        if (sscanf(line, "kernel %63s %399s", name, sizes) >= 1 && lib->nkernels < MAX_FAKE_KERNELS) {
            struct fkernel *k = &lib->kernels[lib->nkernels++];
            k->magic = KERNEL_MAGIC;
            k->lib = lib;
            snprintf(k->name, sizeof k->name, "%s", name);
            size_t offset = 0;
            for (char *tok = strtok(sizes, ","); tok && k->nparams < MAX_FAKE_PARAMS; tok = strtok(NULL, ",")) {
                size_t s = (size_t)strtoul(tok, NULL, 10), align = s >= 8 ? 8 : s ? s : 1;
                offset = (offset + align - 1) / align * align;
                k->offsets[k->nparams] = offset;
                k->sizes[k->nparams++] = s;
                offset += s;
            }
            k->attrs[0] = 1024;   /* max threads per block */
            k->attrs[4] = 16;     /* registers */
            k->attrs[5] = 90;     /* PTX version */
            k->attrs[6] = 90;     /* binary version */
            k->attrs[8] = 49152;  /* max dynamic shared memory */
            k->attrs[9] = -1;     /* preferred carveout */
        } else if (sscanf(line, "global %63s %zu", name, &gsize) == 2 && gsize && lib->nglobals < MAX_FAKE_KERNELS) {
            struct fglobal *g = &lib->globals[lib->nglobals++];
            snprintf(g->name, sizeof g->name, "%s", name);
            g->size = gsize;
            g->address = new_alloc(gsize, MEM_DEVICE, 0, NULL);
            if (g->address) memset((void *)g->address, 0, gsize);
        } else if (line[0]) {
            return 0;
        }
        p = eol + 1;
    }
    return 1;
}

static CUresult load_image(struct flib **out, const char *text, size_t len) {
    NEED_INIT();
    if (!out || !text) return CUDA_ERROR_INVALID_VALUE;
    struct flib *lib = calloc(1, sizeof *lib);
    if (!lib) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&g_mu);
    if (!parse_image(lib, text, len)) {
        pthread_mutex_unlock(&g_mu);
        free(lib);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    lib->magic = LIB_MAGIC;
    lib->next = g_libs;
    g_libs = lib;
    ++g_live_libraries;
    pthread_mutex_unlock(&g_mu);
    *out = lib;
    return CUDA_SUCCESS;
}

static CUresult f_cuLibraryLoadData(struct flib **out, const void *code, void *jo, void **jv, unsigned nj, void *lo,
                                    void **lv, unsigned nl) {
    (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    if (!code) return CUDA_ERROR_INVALID_VALUE;
    NEED_INIT();
    /* The image's size is not passed: fake images are NUL-terminated text (at most 64 KiB); anything
       without the magic (a real cubin) is refused after reading no more than the magic's length. */
    if (strnlen(code, 9) < 9 || memcmp(code, "FAKECUBIN", 9) != 0) return CUDA_ERROR_INVALID_IMAGE;
    return load_image(out, code, strnlen(code, 1 << 16));
}

static CUresult f_cuLibraryLoadFromFile(struct flib **out, const char *path, void *jo, void **jv, unsigned nj,
                                        void *lo, void **lv, unsigned nl) {
    (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(path, "rb");
    if (!f) return CUDA_ERROR_NOT_FOUND;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return load_image(out, buf, n);
}

/* Caller holds g_mu. */
static struct flib *resolve_lib(void *h) {
    for (struct flib *l = g_libs; l; l = l->next)
        if (l == h) return l->magic == LIB_MAGIC && !l->unloaded ? l : NULL;
    return NULL;
}
static struct fkernel *resolve_kernel(void *h) {
    for (struct flib *l = g_libs; l; l = l->next)
        for (size_t i = 0; i < l->nkernels; ++i)
            if (&l->kernels[i] == h) return l->unloaded ? NULL : &l->kernels[i];
    return NULL;
}

static CUresult f_cuLibraryUnload(void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct flib *l = resolve_lib(h);
    if (l) {
        l->unloaded = 1; /* kept (never freed) so stale handles are recognised */
        --g_live_libraries;
        for (size_t i = 0; i < l->nglobals; ++i) {
            size_t index = 0;
            if (l->globals[i].address && classify(l->globals[i].address, 1, &index) == 1)
                g_allocs[index].state = ALLOC_FREED;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult f_cuLibraryGetKernel(struct fkernel **out, void *h, const char *name) {
    NEED_INIT();
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct flib *l = resolve_lib(h);
    CUresult r = l ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; l && i < l->nkernels; ++i)
        if (strcmp(l->kernels[i].name, name) == 0) {
            *out = &l->kernels[i];
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuLibraryGetKernelCount(unsigned *count, void *h) {
    NEED_INIT();
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct flib *l = resolve_lib(h);
    if (l) *count = (unsigned)l->nkernels;
    pthread_mutex_unlock(&g_mu);
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult f_cuLibraryGetGlobal(unsigned long long *dptr, size_t *bytes, void *h, const char *name) {
    NEED_INIT();
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct flib *l = resolve_lib(h);
    CUresult r = l ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; l && i < l->nglobals; ++i)
        if (strcmp(l->globals[i].name, name) == 0) {
            if (dptr) *dptr = l->globals[i].address;
            if (bytes) *bytes = l->globals[i].size;
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_mu);
    return r;
}

static CUresult f_cuKernelGetFunction(void **out, void *h) {
    NEED_INIT();
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(h);
    pthread_mutex_unlock(&g_mu);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *out = k;
    return CUDA_SUCCESS;
}

static CUresult func_attribute(int *v, int attr, void *h) {
    NEED_INIT();
    if (!v || attr < 0 || attr >= 20) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(h);
    if (k) *v = k->attrs[attr];
    pthread_mutex_unlock(&g_mu);
    return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult f_cuFuncGetAttribute(int *v, int attr, void *f) { return func_attribute(v, attr, f); }
static CUresult f_cuKernelGetAttribute(int *v, int attr, void *h, CUdevice dev) {
    CHECK_DEV(dev);
    return func_attribute(v, attr, h);
}
static CUresult func_set_attribute(int attr, int value, void *h) {
    NEED_INIT();
    /* settable: max dynamic shared memory (8, up to 227 KiB), carveout (9), cluster dims and policy (11-15) */
    if (!(attr == 8 || attr == 9 || (attr >= 11 && attr <= 15))) return CUDA_ERROR_INVALID_VALUE;
    if (attr == 8 && (value < 0 || value > 232448)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(h);
    if (k) k->attrs[attr] = value;
    pthread_mutex_unlock(&g_mu);
    return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult f_cuFuncSetAttribute(void *f, int attr, int value) { return func_set_attribute(attr, value, f); }
static CUresult f_cuKernelSetAttribute(int attr, int value, void *h, CUdevice dev) {
    CHECK_DEV(dev);
    return func_set_attribute(attr, value, h);
}
static CUresult kernel_name(const char **name, void *h) {
    NEED_INIT();
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(h);
    if (k) *name = k->name;
    pthread_mutex_unlock(&g_mu);
    return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult f_cuKernelGetName(const char **name, void *h) { return kernel_name(name, h); }
static CUresult f_cuFuncGetName(const char **name, void *f) { return kernel_name(name, f); }
static CUresult param_info(void *h, size_t index, size_t *offset, size_t *size) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(h);
    CUresult r = !k ? CUDA_ERROR_INVALID_HANDLE : index >= k->nparams ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        if (offset) *offset = k->offsets[index];
        if (size) *size = k->sizes[index];
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}
static CUresult f_cuKernelGetParamInfo(void *h, size_t i, size_t *o, size_t *s) { return param_info(h, i, o, s); }
static CUresult f_cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *s) { return param_info(f, i, o, s); }

struct launch_attribute {
    int id;
    int pad;
    union {
        unsigned char bytes[64];
        struct { unsigned x, y, z; } cluster;
        int value;
    } value;
};
struct launch_config {
    unsigned grid[3], block[3], shared_memory_bytes;
    void *stream;
    struct launch_attribute *attrs;
    unsigned num_attrs;
};

static CUresult f_cuLaunchKernelEx(const struct launch_config *config, void *f, void **params, void **extra) {
    NEED_INIT();
    if (!config || extra) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct fkernel *k = resolve_kernel(f);
    if (!k) r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS) resolve_stream(config->stream, &r);
    if (r == CUDA_SUCCESS && k->nparams && !params) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && config->num_attrs > 8) r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        struct fake_launch *L = &g_last_launch;
        unsigned long long count = L->count;
        memset(L, 0, sizeof *L);
        L->count = count + 1;
        memcpy(L->grid, config->grid, sizeof L->grid);
        memcpy(L->block, config->block, sizeof L->block);
        L->shared_memory_bytes = config->shared_memory_bytes;
        L->stream = config->stream;
        L->kernel = k;
        L->num_attrs = config->num_attrs;
        for (unsigned i = 0; i < config->num_attrs; ++i) {
            L->attr_ids[i] = config->attrs[i].id;
            if (config->attrs[i].id == 4) {
                L->attr_values[i][0] = (int)config->attrs[i].value.cluster.x;
                L->attr_values[i][1] = (int)config->attrs[i].value.cluster.y;
                L->attr_values[i][2] = (int)config->attrs[i].value.cluster.z;
            } else {
                L->attr_values[i][0] = config->attrs[i].value.value;
            }
        }
        L->nparams = k->nparams;
        for (size_t i = 0; i < k->nparams; ++i) {
            L->sizes[i] = k->sizes[i];
            memcpy(L->args[i], params[i], k->sizes[i] < 256 ? k->sizes[i] : 256);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* Occupancy: a simple model of a 132-SM device with 2048 threads and 228 KiB of shared memory per SM. */
static int blocks_per_sm(int block_size, size_t smem) {
    if (block_size <= 0 || block_size > 1024) return 0;
    int by_threads = 2048 / block_size, by_smem = smem ? (int)(233472 / smem) : 32;
    int n = by_threads < by_smem ? by_threads : by_smem;
    return n > 32 ? 32 : n;
}
static CUresult f_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, void *f, int block, size_t smem,
                                                                       unsigned flags) {
    (void)flags;
    NEED_INIT();
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(f);
    pthread_mutex_unlock(&g_mu);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *n = blocks_per_sm(block, smem);
    return CUDA_SUCCESS;
}
static CUresult f_cuOccupancyMaxPotentialBlockSize(int *grid, int *block, void *f, void *b2d, size_t smem, int limit) {
    (void)b2d;
    NEED_INIT();
    if (!grid || !block) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(f);
    pthread_mutex_unlock(&g_mu);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    int b = limit > 0 && limit < 1024 ? limit : 1024;
    *block = b;
    *grid = 132 * blocks_per_sm(b, smem);
    return CUDA_SUCCESS;
}
static CUresult f_cuOccupancyAvailableDynamicSMemPerBlock(size_t *bytes, void *f, int nblocks, int block) {
    NEED_INIT();
    if (!bytes || nblocks <= 0 || block <= 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(f);
    pthread_mutex_unlock(&g_mu);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *bytes = (size_t)(233472 / nblocks);
    return CUDA_SUCCESS;
}
static CUresult f_cuOccupancyMaxPotentialClusterSize(int *size, void *f, const struct launch_config *config) {
    NEED_INIT();
    if (!size || !config) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(f);
    pthread_mutex_unlock(&g_mu);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *size = 8;
    return CUDA_SUCCESS;
}
static CUresult f_cuOccupancyMaxActiveClusters(int *n, void *f, const struct launch_config *config) {
    NEED_INIT();
    if (!n || !config) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct fkernel *k = resolve_kernel(f);
    pthread_mutex_unlock(&g_mu);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->num_attrs; ++i)
        if (config->attrs[i].id == 4)
            cluster = config->attrs[i].value.cluster.x * config->attrs[i].value.cluster.y *
                      config->attrs[i].value.cluster.z;
    *n = (int)(132 / (cluster ? cluster : 1));
    return CUDA_SUCCESS;
}
static CUresult f_cuMemcpyDtoH(void *dst, unsigned long long src, size_t n) {
    return raw_copy((uintptr_t)dst, (uintptr_t)src, n);
}
static CUresult f_cuMemcpyHtoD(unsigned long long dst, const void *src, size_t n) {
    return raw_copy((uintptr_t)dst, (uintptr_t)src, n);
}

/* ---- Graphics interop (OpenGL) -------------------------------------------------------------------------
 * There is no GL here: any GL name but 0 registers. A GL buffer is FAKE_GL_BUFFER_SIZE bytes of device
 * memory that lives from registration to unregistration (so data survives unmap and map again); a GL image
 * (any target) is a 16x8 RGBA8 2D array with FAKE_GL_IMAGE_LEVELS levels (arrays are descriptors only:
 * cuMemcpy3DAsync does not copy into them). Name 0 is CUDA_ERROR_INVALID_HANDLE (as the driver says for a
 * name that is no GL buffer). Every register, map-flag change, map, unmap and unregister is appended to a
 * log that the tests read (fake_cuda_graphics_log) to check the order of calls and their streams.
 * FAKE_CUDA_FAIL=cuGraphicsUnmapResources or =cuGraphicsUnregisterResource makes that call fail with
 * CUDA_ERROR_UNKNOWN after doing its work (the resource is unmapped or unregistered all the same). */

#define CUDA_ERROR_ALREADY_MAPPED 208
#define CUDA_ERROR_NOT_MAPPED 211
#define CUDA_ERROR_NOT_MAPPED_AS_ARRAY 212
#define CUDA_ERROR_NOT_MAPPED_AS_POINTER 213
#define GRES_MAGIC 0x47524531u
#define GARR_MAGIC 0x47415231u
#define FAKE_GL_BUFFER_SIZE ((size_t)4096)
#define FAKE_GL_IMAGE_LEVELS 2

struct garray {
    unsigned magic;
    size_t width, height;
    int is_mipmapped;
};

struct gres {
    unsigned magic;
    int live, mapped, is_image;
    unsigned id, gl_name, map_flags;
    uintptr_t mem;
    struct garray levels[FAKE_GL_IMAGE_LEVELS];
    struct garray mipmapped;
};

static struct gres **g_gres;
static size_t g_ngres, g_capgres;
static char g_glog[1 << 16];
static size_t g_nglog;

/* Caller holds g_mu. */
static void glog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void glog(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g_glog + g_nglog, sizeof g_glog - g_nglog, fmt, ap);
    va_end(ap);
    if (n > 0) g_nglog = g_nglog + (size_t)n < sizeof g_glog ? g_nglog + (size_t)n : sizeof g_glog - 1;
}

/* Caller holds g_mu. A live registration, or NULL. */
static struct gres *resolve_gres(void *h) {
    for (size_t i = 0; i < g_ngres; ++i)
        if (g_gres[i] == h && g_gres[i]->magic == GRES_MAGIC && g_gres[i]->live) return g_gres[i];
    return NULL;
}

static CUresult gl_register(struct gres **out, unsigned name, int is_image, unsigned flags) {
    NEED_INIT();
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!tl_current) return CUDA_ERROR_INVALID_CONTEXT;
    if (name == 0) return CUDA_ERROR_INVALID_HANDLE;
    struct gres *r = calloc(1, sizeof *r);
    if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&g_mu);
    if (g_ngres == g_capgres) {
        size_t cap = g_capgres ? 2 * g_capgres : 16;
        struct gres **grown = realloc(g_gres, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&g_mu);
            free(r);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g_gres = grown;
        g_capgres = cap;
    }
    r->magic = GRES_MAGIC;
    r->live = 1;
    r->is_image = is_image;
    r->id = (unsigned)g_ngres + 1;
    r->gl_name = name;
    if (!is_image) {
        r->mem = new_alloc(FAKE_GL_BUFFER_SIZE, MEM_DEVICE, tl_current->device, NULL);
        if (!r->mem) {
            pthread_mutex_unlock(&g_mu);
            free(r);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    for (int l = 0; l < FAKE_GL_IMAGE_LEVELS; ++l)
        r->levels[l] = (struct garray){GARR_MAGIC, (size_t)16 >> l, (size_t)8 >> l, 0};
    r->mipmapped = (struct garray){GARR_MAGIC, 16, 8, 1};
    g_gres[g_ngres++] = r;
    glog("register %u %s %u flags %u\n", r->id, is_image ? "image" : "buffer", name, flags);
    pthread_mutex_unlock(&g_mu);
    *out = r;
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphicsGLRegisterBuffer(struct gres **out, unsigned name, unsigned flags) {
    return gl_register(out, name, 0, flags);
}
static CUresult f_cuGraphicsGLRegisterImage(struct gres **out, unsigned name, unsigned target, unsigned flags) {
    (void)target;
    return gl_register(out, name, 1, flags);
}
static CUresult f_cuGraphicsUnregisterResource(void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct gres *r = resolve_gres(h);
    if (!r) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    glog("unregister %u%s\n", r->id, r->mapped ? " while-mapped" : "");
    CUresult rc = injected("cuGraphicsUnregisterResource") ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
    r->live = 0;
    r->mapped = 0;
    for (size_t i = 0; r->mem && i < g_nallocs; ++i)
        if (g_allocs[i].base == r->mem && g_allocs[i].state == ALLOC_LIVE) g_allocs[i].state = ALLOC_FREED;
    pthread_mutex_unlock(&g_mu);
    return rc;
}
static CUresult f_cuGraphicsResourceSetMapFlags(void *h, unsigned flags) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct gres *r = resolve_gres(h);
    CUresult rc = !r ? CUDA_ERROR_INVALID_HANDLE : r->mapped ? CUDA_ERROR_ALREADY_MAPPED
                : flags > 2 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        r->map_flags = flags;
        glog("mapflags %u %u\n", r->id, flags);
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
/* mapping != 0: map, else unmap; all or nothing. */
static CUresult gl_map(unsigned count, void **resources, void *stream, int mapping) {
    NEED_INIT();
    if (!count || !resources) return CUDA_ERROR_INVALID_VALUE;
    CUresult err = CUDA_SUCCESS;
    if (stream && !resolve_stream(stream, &err)) return err;
    pthread_mutex_lock(&g_mu);
    CUresult rc = CUDA_SUCCESS;
    for (unsigned i = 0; i < count && rc == CUDA_SUCCESS; ++i) {
        struct gres *r = resolve_gres(resources[i]);
        if (!r) rc = CUDA_ERROR_INVALID_HANDLE;
        else if (mapping && r->mapped) rc = CUDA_ERROR_ALREADY_MAPPED;
        else if (!mapping && !r->mapped) rc = CUDA_ERROR_NOT_MAPPED;
    }
    if (rc == CUDA_SUCCESS) {
        glog("%s", mapping ? "map" : "unmap");
        for (unsigned i = 0; i < count; ++i) {
            struct gres *r = resources[i];
            r->mapped = mapping;
            glog(" %u", r->id);
        }
        glog(" stream %#lx\n", (unsigned long)(uintptr_t)stream);
        if (!mapping && injected("cuGraphicsUnmapResources")) rc = CUDA_ERROR_UNKNOWN; /* unmapped anyway */
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
static CUresult f_cuGraphicsMapResources(unsigned count, void **resources, void *stream) {
    return gl_map(count, resources, stream, 1);
}
static CUresult f_cuGraphicsUnmapResources(unsigned count, void **resources, void *stream) {
    return gl_map(count, resources, stream, 0);
}
static CUresult f_cuGraphicsResourceGetMappedPointer(unsigned long long *dptr, size_t *size, void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    struct gres *r = resolve_gres(h);
    CUresult rc = !r ? CUDA_ERROR_INVALID_HANDLE : !r->mapped ? CUDA_ERROR_NOT_MAPPED
                : r->is_image ? CUDA_ERROR_NOT_MAPPED_AS_POINTER : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        if (dptr) *dptr = r->mem;
        if (size) *size = FAKE_GL_BUFFER_SIZE;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
static CUresult f_cuGraphicsSubResourceGetMappedArray(struct garray **out, void *h, unsigned index, unsigned level) {
    NEED_INIT();
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct gres *r = resolve_gres(h);
    CUresult rc = !r ? CUDA_ERROR_INVALID_HANDLE : !r->mapped ? CUDA_ERROR_NOT_MAPPED
                : !r->is_image ? CUDA_ERROR_NOT_MAPPED_AS_ARRAY
                : (index || level >= FAKE_GL_IMAGE_LEVELS) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) *out = &r->levels[level];
    pthread_mutex_unlock(&g_mu);
    return rc;
}
static CUresult f_cuGraphicsResourceGetMappedMipmappedArray(struct garray **out, void *h) {
    NEED_INIT();
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    struct gres *r = resolve_gres(h);
    CUresult rc = !r ? CUDA_ERROR_INVALID_HANDLE : !r->mapped ? CUDA_ERROR_NOT_MAPPED
                : !r->is_image ? CUDA_ERROR_NOT_MAPPED_AS_ARRAY : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) *out = &r->mipmapped;
    pthread_mutex_unlock(&g_mu);
    return rc;
}
static CUresult f_cuMipmappedArrayGetLevel(struct garray **out, struct garray *mip, unsigned level) {
    NEED_INIT();
    if (!out || !mip || mip->magic != GARR_MAGIC || !mip->is_mipmapped) return CUDA_ERROR_INVALID_VALUE;
    if (level >= FAKE_GL_IMAGE_LEVELS) return CUDA_ERROR_INVALID_VALUE;
    struct gres *r = (struct gres *)((char *)mip - offsetof(struct gres, mipmapped));
    *out = &r->levels[level];
    return CUDA_SUCCESS;
}
struct array3d_descriptor {
    size_t width, height, depth;
    int format;
    unsigned channels, flags;
};
static CUresult f_cuArray3DGetDescriptor(struct array3d_descriptor *d, struct garray *a) {
    NEED_INIT();
    if (!d || !a || a->magic != GARR_MAGIC || a->is_mipmapped) return CUDA_ERROR_INVALID_VALUE;
    *d = (struct array3d_descriptor){a->width, a->height, 0, 0x01 /* CU_AD_FORMAT_UNSIGNED_INT8 */, 4, 0};
    return CUDA_SUCCESS;
}
/* The fake "GL context" is on device 0. */
static CUresult f_cuGLGetDevices(unsigned *count, int *devices, unsigned capacity, int list) {
    NEED_INIT();
    if (!count || list < 1 || list > 3) return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    if (capacity && devices) devices[0] = 0;
    return CUDA_SUCCESS;
}

/* The log of graphics calls, for the tests: copies up to cap - 1 bytes and a NUL; returns the length. */
EXPORT size_t fake_cuda_graphics_log(char *out, size_t cap) {
    pthread_mutex_lock(&g_mu);
    size_t n = g_nglog < cap ? g_nglog : cap ? cap - 1 : 0;
    if (out && cap) {
        memcpy(out, g_glog, n);
        out[n] = 0;
    }
    size_t total = g_nglog;
    pthread_mutex_unlock(&g_mu);
    return total;
}
EXPORT void fake_cuda_graphics_clear_log(void) {
    pthread_mutex_lock(&g_mu);
    g_nglog = 0;
    g_glog[0] = 0;
    pthread_mutex_unlock(&g_mu);
}
/* Registrations not yet unregistered. */
EXPORT int fake_cuda_live_graphics_resources(void) {
    pthread_mutex_lock(&g_mu);
    int n = 0;
    for (size_t i = 0; i < g_ngres; ++i) n += g_gres[i]->live;
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* ---- cuGetProcAddress and the plain exported names ----------------------------------------------------- */

#define ENTRY_POINTS(X)                                                                                    \
    X(cuGetErrorName) X(cuGetErrorString) X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet)                   \
    X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId) X(cuDeviceTotalMem)   \
    X(cuDeviceGetAttribute) X(cuDeviceCanAccessPeer) X(cuDevicePrimaryCtxRetain)                           \
    X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice)                   \
    X(cuCtxSynchronize) X(cuCtxGetStreamPriorityRange) X(cuStreamCreate) X(cuStreamCreateWithPriority)     \
    X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuStreamWaitEvent) X(cuStreamGetCtx)      \
    X(cuStreamGetPriority) X(cuStreamGetFlags) X(cuLaunchHostFunc) X(cuEventCreate) X(cuEventDestroy)      \
    X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuEventElapsedTime) X(cuDeviceGetMemPool)     \
    X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemPoolSetAttribute) X(cuMemAllocFromPoolAsync)             \
    X(cuMemFreeAsync) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyAsync) X(cuMemcpyHtoDAsync)             \
    X(cuMemcpyDtoHAsync) X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async)                       \
    X(cuMemPoolSetAccess) X(cuMemPoolGetAccess) X(cuMemAdvise) X(cuMemRangeGetAttribute)                   \
    X(cuMemPrefetchAsync) X(cuMemDiscardBatchAsync) X(cuMemDiscardAndPrefetchBatchAsync) X(cuMemcpy3DAsync) \
    X(cuMemcpyPeerAsync) X(cuMemGetAllocationGranularity) X(cuMemCreate) X(cuMemRelease)                   \
    X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess)                 \
    X(cuMemPoolExportToShareableHandle) X(cuMemPoolImportFromShareableHandle) X(cuMemPoolExportPointer)      \
    X(cuMemPoolImportPointer) X(cuIpcGetEventHandle) X(cuIpcOpenEventHandle) X(cuMemAllocManaged) X(cuMemFree)     \
    X(cuLibraryLoadData) X(cuLibraryLoadFromFile) X(cuLibraryUnload) X(cuLibraryGetKernel)                   \
    X(cuLibraryGetKernelCount) X(cuLibraryGetGlobal) X(cuKernelGetFunction) X(cuKernelGetAttribute)           \
    X(cuKernelSetAttribute) X(cuKernelGetName) X(cuKernelGetParamInfo) X(cuFuncGetAttribute)                  \
    X(cuFuncSetAttribute) X(cuFuncGetName) X(cuFuncGetParamInfo) X(cuLaunchKernelEx)                         \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) X(cuOccupancyMaxPotentialBlockSize)               \
    X(cuOccupancyAvailableDynamicSMemPerBlock) X(cuOccupancyMaxPotentialClusterSize)                          \
    X(cuOccupancyMaxActiveClusters) X(cuMemcpyDtoH) X(cuMemcpyHtoD) X(cuGraphicsGLRegisterBuffer)             \
    X(cuGraphicsGLRegisterImage) X(cuGraphicsUnregisterResource) X(cuGraphicsMapResources)                   \
    X(cuGraphicsUnmapResources) X(cuGraphicsResourceGetMappedPointer) X(cuGraphicsSubResourceGetMappedArray)  \
    X(cuGraphicsResourceGetMappedMipmappedArray) X(cuGraphicsResourceSetMapFlags) X(cuGLGetDevices)           \
    X(cuMipmappedArrayGetLevel) X(cuArray3DGetDescriptor)

static const struct {
    const char *name;
    void *fn;
} g_table[] = {
#define ROW(name) {#name, (void *)f_##name},
    ENTRY_POINTS(ROW)
#undef ROW
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    (void)version;
    (void)flags;
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof g_table / sizeof g_table[0]; ++i) {
        if (strcmp(g_table[i].name, symbol) == 0) {
            *pfn = g_table[i].fn;
            if (status) *status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
            return CUDA_SUCCESS;
        }
    }
    *pfn = NULL;
    if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return CUDA_ERROR_NOT_FOUND;
}

/* The names a program linking libcuda (or dlsym-ing it) uses: the tests' raw-driver helpers. */
#define FWD(ret_name, impl, params, args) EXPORT CUresult ret_name params { return impl args; }
FWD(cuInit, f_cuInit, (unsigned f), (f))
FWD(cuDriverGetVersion, f_cuDriverGetVersion, (int *v), (v))
FWD(cuDeviceGet, f_cuDeviceGet, (CUdevice *d, int o), (d, o))
FWD(cuDeviceGetCount, f_cuDeviceGetCount, (int *n), (n))
FWD(cuDeviceGetName, f_cuDeviceGetName, (char *n, int l, CUdevice d), (n, l, d))
FWD(cuDeviceGetAttribute, f_cuDeviceGetAttribute, (int *v, int a, CUdevice d), (v, a, d))
FWD(cuDeviceTotalMem_v2, f_cuDeviceTotalMem, (size_t *b, CUdevice d), (b, d))
FWD(cuDeviceGetUuid, f_cuDeviceGetUuid, (unsigned char *u, CUdevice d), (u, d))
FWD(cuDeviceGetUuid_v2, f_cuDeviceGetUuid, (unsigned char *u, CUdevice d), (u, d))
FWD(cuDeviceGetPCIBusId, f_cuDeviceGetPCIBusId, (char *p, int l, CUdevice d), (p, l, d))
FWD(cuDevicePrimaryCtxRetain, f_cuDevicePrimaryCtxRetain, (struct ctx **c, CUdevice d), (c, d))
FWD(cuDevicePrimaryCtxRelease_v2, f_cuDevicePrimaryCtxRelease, (CUdevice d), (d))
FWD(cuCtxGetCurrent, f_cuCtxGetCurrent, (struct ctx **c), (c))
FWD(cuCtxSetCurrent, f_cuCtxSetCurrent, (struct ctx *c), (c))
FWD(cuCtxSynchronize, f_cuCtxSynchronize, (void), ())
FWD(cuStreamCreate, f_cuStreamCreate, (struct stream **s, unsigned f), (s, f))
FWD(cuStreamDestroy_v2, f_cuStreamDestroy, (void *s), (s))
FWD(cuStreamSynchronize, f_cuStreamSynchronize, (void *s), (s))
FWD(cuStreamQuery, f_cuStreamQuery, (void *s), (s))
FWD(cuLaunchHostFunc, f_cuLaunchHostFunc, (void *s, CUhostFn f, void *d), (s, f, d))
FWD(cuEventCreate, f_cuEventCreate, (struct event **e, unsigned f), (e, f))
FWD(cuEventDestroy_v2, f_cuEventDestroy, (void *e), (e))
FWD(cuEventRecord, f_cuEventRecord, (void *e, void *s), (e, s))
FWD(cuEventQuery, f_cuEventQuery, (void *e), (e))
FWD(cuEventSynchronize, f_cuEventSynchronize, (void *e), (e))
FWD(cuEventElapsedTime, f_cuEventElapsedTime, (float *m, void *a, void *b), (m, a, b))
FWD(cuMemAlloc_v2, raw_mem_alloc, (unsigned long long *p, size_t n), (p, n))
FWD(cuMemFree_v2, f_cuMemFree, (unsigned long long p), (p))
FWD(cuMemcpyHtoD_v2, raw_copy, (unsigned long long d, const void *s, size_t n), ((uintptr_t)d, (uintptr_t)s, n))
FWD(cuMemcpyDtoH_v2, raw_copy, (void *d, unsigned long long s, size_t n), ((uintptr_t)d, (uintptr_t)s, n))

/* For the tests' leak checks (dlsym'd when running on this fake): allocations not freed, of every kind but
   virtual-memory mappings; a stream-ordered free counts once queued. */
EXPORT int fake_cuda_live_allocations(void) {
    pthread_mutex_lock(&g_mu);
    int n = 0;
    for (size_t i = 0; i < g_nallocs; ++i) n += g_allocs[i].kind != MEM_VIRTUAL && g_allocs[i].state == ALLOC_LIVE;
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* The last kernel launch (for the tests' packing checks) and the number of loaded libraries. */
EXPORT const struct fake_launch *fake_cuda_last_launch(void) { return &g_last_launch; }
EXPORT int fake_cuda_live_libraries(void) {
    pthread_mutex_lock(&g_mu);
    int n = g_live_libraries;
    pthread_mutex_unlock(&g_mu);
    return n;
}
