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
 *
 * Environment: FAKE_CUDA_DEVICES (default 2) sets the number of devices; FAKE_CUDA_FAIL_STREAM_DESTROY=1
 * makes cuStreamDestroy fail (read on every call), to exercise libcucore's release-error reporting.
 * Build: cc -shared -fPIC -pthread -o libcuda.so.1 fake_cuda.c
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
};
enum { OP_HOST, OP_RECORD, OP_WAIT, OP_COPY, OP_SET, OP_FREE };
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
enum { MEM_DEVICE = 1, MEM_PINNED = 2 };
enum { ALLOC_LIVE, ALLOC_FREE_PENDING, ALLOC_FREED };
struct pool {
    unsigned magic;
    int device;
    int is_default;
    int destroyed;
    size_t max_size, used;
    unsigned long long release_threshold;
};
struct alloc {
    uintptr_t base;
    size_t size;
    int kind, state, device;
    struct pool *pool;
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
    if (e) {
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

/* Caller holds g_mu. A new registered allocation of `size` bytes (filled with 0xA5), or 0. */
static uintptr_t new_alloc(size_t size, int kind, int device, struct pool *pool) {
    if (g_nallocs == g_capallocs) {
        size_t cap = g_capallocs ? 2 * g_capallocs : 256;
        struct alloc *grown = realloc(g_allocs, cap * sizeof *grown);
        if (!grown) return 0;
        g_allocs = grown;
        g_capallocs = cap;
    }
    unsigned char *p = malloc(size);
    if (!p) return 0;
    memset(p, 0xA5, size);
    struct alloc *a = &g_allocs[g_nallocs++];
    a->base = (uintptr_t)p;
    a->size = size;
    a->kind = kind;
    a->state = ALLOC_LIVE;
    a->device = device;
    a->pool = pool;
    return a->base;
}

/* Caller holds g_mu. Where [p, p + n) lies: 1 inside a live allocation (its index in *index), 0 outside
   every allocation (pageable host memory), -1 in freed memory or across an allocation's end. */
static int classify(uintptr_t p, size_t n, size_t *index) {
    size_t m = n ? n : 1;
    for (size_t i = 0; i < g_nallocs; ++i) {
        struct alloc *a = &g_allocs[i];
        uintptr_t end = a->base + a->size;
        if (p < end && p + m > a->base) { /* overlaps */
            if (a->state != ALLOC_LIVE || p < a->base || p + m > end) return -1;
            if (index) *index = i;
            return 1;
        }
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
    if (props->alloc_type != 1 /* PINNED */ || props->location.type != 1 /* DEVICE */ ||
        props->handle_types != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CHECK_DEV(props->location.id);
    struct pool *p = calloc(1, sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    p->magic = POOL_MAGIC;
    p->device = props->location.id;
    p->max_size = props->max_size;
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
        uintptr_t a = new_alloc(size, MEM_DEVICE, p->device, p);
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

static CUresult f_cuMemFreeAsync(unsigned long long dptr, void *h) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    CUresult r = CUDA_SUCCESS;
    struct stream *s = resolve_stream(h, &r);
    size_t i = 0;
    if (s && (classify((uintptr_t)dptr, 1, &i) != 1 || g_allocs[i].base != dptr || g_allocs[i].kind != MEM_DEVICE))
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
static CUresult raw_mem_free(unsigned long long dptr) {
    NEED_INIT();
    pthread_mutex_lock(&g_mu);
    size_t i = 0;
    CUresult r = CUDA_SUCCESS;
    if (classify((uintptr_t)dptr, 1, &i) != 1 || g_allocs[i].base != dptr || g_allocs[i].kind != MEM_DEVICE ||
        g_allocs[i].pool)
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
    X(cuMemcpyDtoHAsync) X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async)

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
FWD(cuMemFree_v2, raw_mem_free, (unsigned long long p), (p))
FWD(cuMemcpyHtoD_v2, raw_copy, (unsigned long long d, const void *s, size_t n), ((uintptr_t)d, (uintptr_t)s, n))
FWD(cuMemcpyDtoH_v2, raw_copy, (void *d, unsigned long long s, size_t n), ((uintptr_t)d, (uintptr_t)s, n))
