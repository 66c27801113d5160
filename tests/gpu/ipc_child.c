/* The other process of tests/gpu/ipc_test.cpp: a plain C program over the C
 * ABI, started with fork+exec. It imports the pool whose file descriptor it
 * inherited, the buffers and events whose descriptors it got on the command
 * line, checks the refusals of bad input, reads what the parent wrote (after
 * waiting on the parent's event), writes for the parent (behind a delay, then
 * records the parent's event), releases everything and reports, one line per
 * step, on the report descriptor:
 *   "ok <step>" | "fail <step>: <detail>" | "recorded" | "done <live objects>"
 *
 * Usage: cucore_ipc_child REPORT_FD DEVICE POOL_FD KIND POOL_ID_HEX BUFFER_A_HEX
 *        BUFFER_B_HEX EVENT_1_HEX EVENT_2_HEX SIZE SEED_A SEED_B OTHER_POOL_BUFFER_HEX
 * A reads SEED_A's pattern (written by the parent before event 1); the child
 * writes SEED_B's pattern into B and records event 2.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cucore.h>

#include "child_report.h"

#define REQUIRE(step, expr)                                        \
    do {                                                           \
        if ((expr) != CUCORE_SUCCESS) {                            \
            fail(step, #expr);                                     \
            return;                                                \
        }                                                          \
    } while (0)

/* Expects `status` to be `expected` with `part` in the message. */
static void expect_refused(const char *step, cucore_status_t status, cucore_status_t expected, const char *part) {
    if (status != expected) {
        ++g_failures;
        report("fail %s: status %s, expected %s (%s)", step, cucore_status_string(status),
               cucore_status_string(expected), cucore_last_error_message());
    } else if (!strstr(cucore_last_error_message(), part)) {
        ++g_failures;
        report("fail %s: the message lacks \"%s\": %s", step, part, cucore_last_error_message());
    } else {
        report("ok %s", step);
    }
}

/* Host functions must not call CUDA: this one only delays its stream. */
static void delay_stream(void *unused) {
    (void)unused;
    struct timespec delay = {0, 200 * 1000 * 1000};
    nanosleep(&delay, NULL);
}

struct args {
    int device;
    cucore_ipc_pool_handle_t pool;
    uint8_t a[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE], b[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    uint8_t other[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    uint8_t e1[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE], e2[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    size_t size;
    unsigned seed_a, seed_b;
};

/* Bad input is refused with its own message, in a process that really imports. */
static void check_refusals(const struct args *a, cucore_device_t *dev, cucore_memory_resource_t *mr,
                           cucore_stream_t *s) {
    cucore_buffer_t *b = NULL;
    uint8_t bad[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    memcpy(bad, a->a, sizeof bad);
    bad[50] ^= 0x01;
    expect_refused("corrupted_buffer_descriptor", cucore_ipc_import_buffer(mr, bad, sizeof bad, s, &b),
                   CUCORE_ERROR_INVALID_ARGUMENT, "checksum mismatch");
    expect_refused("truncated_buffer_descriptor", cucore_ipc_import_buffer(mr, a->a, sizeof a->a - 1, s, &b),
                   CUCORE_ERROR_INVALID_ARGUMENT, "truncated");
    expect_refused("other_pools_descriptor", cucore_ipc_import_buffer(mr, a->other, sizeof a->other, s, &b),
                   CUCORE_ERROR_INVALID_ARGUMENT, "belongs to another pool");
    uint8_t bad_event[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    memcpy(bad_event, a->e1, sizeof bad_event);
    bad_event[20] ^= 0x80;
    cucore_event_t *e = NULL;
    expect_refused("corrupted_event_descriptor", cucore_ipc_import_event(dev, bad_event, sizeof bad_event, &e),
                   CUCORE_ERROR_INVALID_ARGUMENT, "checksum mismatch");
    /* A descriptor number that was open a moment ago. */
    cucore_ipc_pool_handle_t closed = a->pool;
    closed.fd = dup(a->pool.fd);
    close(closed.fd);
    cucore_memory_resource_t *none = NULL;
    expect_refused("closed_fd", cucore_ipc_import_memory_resource(dev, &closed, &none),
                   CUCORE_ERROR_INVALID_ARGUMENT, "not an open file descriptor");
    expect_refused("imported_pool_cannot_allocate", cucore_memory_resource_allocate(mr, 64, s, &b),
                   CUCORE_ERROR_INVALID_STATE, "cannot allocate");
}

static void describe_pool(const struct args *a, cucore_device_t *dev, cucore_memory_resource_t *mr) {
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    int device_id = -2, dacc = -1, hacc = -1;
    uint8_t id[CUCORE_IPC_POOL_ID_SIZE];
    REQUIRE("describe_pool", cucore_memory_resource_kind(mr, &kind));
    REQUIRE("describe_pool", cucore_memory_resource_device_id(mr, &device_id));
    REQUIRE("describe_pool", cucore_memory_resource_accessibility(mr, &dacc, &hacc));
    REQUIRE("describe_pool", cucore_ipc_memory_resource_pool_id(mr, id));
    const int pinned = a->pool.kind == CUCORE_MEMORY_RESOURCE_PINNED;
    if (kind != CUCORE_MEMORY_RESOURCE_IMPORTED || device_id != (pinned ? -1 : a->device) || dacc != 1 ||
        hacc != pinned || memcmp(id, a->pool.pool_id, sizeof id) != 0) {
        ++g_failures;
        report("fail describe_pool: kind %d device %d access %d/%d", (int)kind, device_id, dacc, hacc);
        return;
    }
    cucore_memory_resource_t *again = NULL;
    REQUIRE("import_pool_twice", cucore_ipc_import_memory_resource(dev, &a->pool, &again));
    if (again != mr) {
        ++g_failures;
        report("fail import_pool_twice: a second resource");
    } else {
        report("ok import_pool_twice");
    }
    cucore_memory_resource_release(again);
    report("ok describe_pool");
}

static void run(const struct args *a) {
    cucore_device_t *dev = NULL;
    cucore_stream_t *s = NULL;
    cucore_memory_resource_t *mr = NULL;
    cucore_buffer_t *ba = NULL, *ba2 = NULL, *bb = NULL;
    cucore_event_t *e1 = NULL, *e2 = NULL;
    uint8_t *host = malloc(a->size);
    if (!host) {
        report("fail setup: out of memory");
        return;
    }
    if (cucore_device_get(a->device, &dev) != CUCORE_SUCCESS || cucore_stream_create(dev, NULL, &s) != CUCORE_SUCCESS)
        fail("setup", "device and stream");
    else if (cucore_ipc_import_memory_resource(dev, &a->pool, &mr) != CUCORE_SUCCESS)
        fail("import_pool", "cucore_ipc_import_memory_resource");
    else {
        report("ok import_pool");
        describe_pool(a, dev, mr);
        check_refusals(a, dev, mr, s);
        if (cucore_ipc_import_buffer(mr, a->a, sizeof a->a, s, &ba) != CUCORE_SUCCESS ||
            cucore_ipc_import_buffer(mr, a->b, sizeof a->b, s, &bb) != CUCORE_SUCCESS)
            fail("import_buffers", "cucore_ipc_import_buffer");
        else if (cucore_ipc_import_event(dev, a->e1, sizeof a->e1, &e1) != CUCORE_SUCCESS ||
                 cucore_ipc_import_event(dev, a->e2, sizeof a->e2, &e2) != CUCORE_SUCCESS)
            fail("import_events", "cucore_ipc_import_event");
        else {
            report("ok import_buffers_and_events");
            /* A second import of a live buffer shares the first mapping. */
            uint64_t first = 0, second = 0, size = 0;
            if (cucore_ipc_import_buffer(mr, a->a, sizeof a->a, s, &ba2) != CUCORE_SUCCESS ||
                cucore_buffer_address(ba, &first) != CUCORE_SUCCESS ||
                cucore_buffer_address(ba2, &second) != CUCORE_SUCCESS || cucore_buffer_size(ba, &size) != CUCORE_SUCCESS)
                fail("import_twice", "second import");
            else if (first != second || first == 0 || size != a->size) {
                ++g_failures;
                report("fail import_twice: addresses %llx and %llx, size %llu", (unsigned long long)first,
                       (unsigned long long)second, (unsigned long long)size);
            } else {
                report("ok import_twice");
            }
            cucore_buffer_release(ba2);

            /* Parent -> child: wait for the parent's event, then read. */
            memset(host, 0, a->size);
            if (cucore_stream_wait_event(s, e1) != CUCORE_SUCCESS ||
                cucore_buffer_copy_to_host(ba, 0, host, a->size, s) != CUCORE_SUCCESS ||
                cucore_stream_synchronize(s) != CUCORE_SUCCESS)
                fail("read_parent_data", "wait, copy, synchronize");
            else {
                size_t bad = a->size;
                for (size_t i = 0; i < a->size && bad == a->size; ++i)
                    if (host[i] != pattern_byte(i, a->seed_a)) bad = i;
                if (bad != a->size) {
                    ++g_failures;
                    report("fail read_parent_data: byte %zu is 0x%02x, expected 0x%02x", bad, host[bad],
                           pattern_byte(bad, a->seed_a));
                } else {
                    report("ok read_parent_data");
                }
            }

            /* Child -> parent: write behind a delay, record the parent's event, tell the parent at once. */
            for (size_t i = 0; i < a->size; ++i) host[i] = pattern_byte(i, a->seed_b);
            if (cucore_stream_launch_host_func(s, delay_stream, NULL) != CUCORE_SUCCESS ||
                cucore_buffer_copy_from_host(bb, 0, host, a->size, s) != CUCORE_SUCCESS ||
                cucore_event_record(e2, s) != CUCORE_SUCCESS)
                fail("write_for_parent", "delay, copy, record");
            else
                report("recorded");
            if (cucore_stream_synchronize(s) != CUCORE_SUCCESS) fail("write_for_parent", "synchronize");
        }
    }
    /* Release everything, imports first (the exporter frees after us). */
    cucore_buffer_release(ba);
    cucore_buffer_release(bb);
    if (s && cucore_stream_synchronize(s) != CUCORE_SUCCESS) fail("release", "synchronize after the frees");
    cucore_event_release(e1);
    cucore_event_release(e2);
    cucore_memory_resource_release(mr);
    cucore_stream_release(s);
    cucore_device_release(dev);
    free(host);
}

int main(int argc, char **argv) {
    alarm(120); /* never outlive a hung test by much */
    if (argc != 14) {
        fprintf(stderr, "usage: %s REPORT_FD DEVICE POOL_FD KIND POOL_ID A B E1 E2 SIZE SEED_A SEED_B OTHER\n", argv[0]);
        return 2;
    }
    g_report = atoi(argv[1]);
    struct args a;
    memset(&a, 0, sizeof a);
    a.device = atoi(argv[2]);
    a.pool.fd = atoi(argv[3]);
    a.pool.kind = (uint32_t)atoi(argv[4]);
    a.size = (size_t)strtoull(argv[10], NULL, 10);
    a.seed_a = (unsigned)atoi(argv[11]);
    a.seed_b = (unsigned)atoi(argv[12]);
    if (from_hex(argv[5], a.pool.pool_id, sizeof a.pool.pool_id) || from_hex(argv[6], a.a, sizeof a.a) ||
        from_hex(argv[7], a.b, sizeof a.b) || from_hex(argv[8], a.e1, sizeof a.e1) ||
        from_hex(argv[9], a.e2, sizeof a.e2) || from_hex(argv[13], a.other, sizeof a.other)) {
        report("fail arguments: bad hex");
        return 2;
    }
    run(&a);
    close(a.pool.fd);
    size_t live = 0;
    cucore_live_object_count(CUCORE_OBJECT_ANY, &live);
    report("done %zu", live);
    return g_failures ? 1 : 0;
}
