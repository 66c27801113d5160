/* The other processes of tests/gpu/communicator_test.cpp: a plain C program
 * over the C ABI, started with fork+exec, reporting one line per step on the
 * report descriptor: "ok <step>" | "fail <step>: <detail>" | "done <live objects>".
 *
 * Usage:
 *   cucore_multi_gpu_child REPORT_FD nccl RANK_COUNT RANK DEVICE ID_HEX COUNT
 *     Joins the clique ID as RANK on DEVICE (one process per GPU, the id passed
 *     as hex on the command line), then all-reduces COUNT floats (rank r sends
 *     (r + 1) * (i % 7)), all-gathers COUNT int32s (rank r sends r * 1000 + i)
 *     and broadcasts rank 0's COUNT int32s, checking every value.
 *   cucore_multi_gpu_child REPORT_FD ipc_peer POOL_FD POOL_ID_HEX BUFFER_HEX SIZE SEED FILL
 *     Imports the device-0 pool whose descriptor it inherited, grants device 1
 *     access to it, reads the buffer's bytes on a stream of device 1 (a peer
 *     copy; they must be SEED's pattern), then fills it with the byte FILL by a
 *     memset that runs on device 1 (through the granted access).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cucore.h>

#include "child_report.h"

#define REQUIRE(step, expr)              \
    do {                                 \
        if ((expr) != CUCORE_SUCCESS) {  \
            fail(step, #expr);           \
            goto out;                    \
        }                                \
    } while (0)

static void nccl_rank(int rank_count, int rank, int device, const cucore_communicator_id_t *id, size_t count) {
    cucore_device_t *dev = NULL;
    cucore_stream_t *s = NULL;
    cucore_communicator_t *comm = NULL;
    cucore_buffer_t *send = NULL, *recv = NULL, *gathered = NULL;
    float *f = malloc(count * sizeof *f);
    int32_t *v = malloc((size_t)rank_count * count * sizeof *v);
    if (!f || !v) {
        report("fail setup: out of memory");
        goto out;
    }
    REQUIRE("setup", cucore_device_get(device, &dev));
    REQUIRE("setup", cucore_stream_create(dev, NULL, &s));
    REQUIRE("create", cucore_communicator_create(dev, id, rank_count, rank, &comm));
    int got_rank = -1, got_count = -1;
    REQUIRE("create", cucore_communicator_rank(comm, &got_rank));
    REQUIRE("create", cucore_communicator_rank_count(comm, &got_count));
    if (got_rank != rank || got_count != rank_count) {
        ++g_failures;
        report("fail create: rank %d of %d, expected %d of %d", got_rank, got_count, rank, rank_count);
        goto out;
    }
    report("ok create");

    /* All-reduce, sum. */
    REQUIRE("all_reduce", cucore_device_allocate(dev, count * sizeof *f, s, &send));
    REQUIRE("all_reduce", cucore_device_allocate(dev, count * sizeof *f, s, &recv));
    for (size_t i = 0; i < count; ++i) f[i] = (float)((rank + 1) * (int)(i % 7));
    REQUIRE("all_reduce", cucore_buffer_copy_from_host(send, 0, f, count * sizeof *f, s));
    REQUIRE("all_reduce", cucore_communicator_all_reduce(comm, send, recv, 0, CUCORE_DATA_TYPE_FLOAT32,
                                                         CUCORE_REDUCE_SUM, s));
    memset(f, 0, count * sizeof *f);
    REQUIRE("all_reduce", cucore_buffer_copy_to_host(recv, 0, f, count * sizeof *f, s));
    REQUIRE("all_reduce", cucore_stream_synchronize(s));
    {
        const float ranks_sum = (float)(rank_count * (rank_count + 1) / 2);
        size_t bad = count;
        for (size_t i = 0; i < count && bad == count; ++i)
            if (f[i] != ranks_sum * (float)(i % 7)) bad = i;
        if (bad != count) {
            ++g_failures;
            report("fail all_reduce: element %zu is %g, expected %g", bad, f[bad], ranks_sum * (float)(bad % 7));
        } else {
            report("ok all_reduce");
        }
    }

    /* All-gather of int32s, rank order. */
    cucore_buffer_release(send);
    send = NULL;
    REQUIRE("all_gather", cucore_device_allocate(dev, count * sizeof *v, s, &send));
    REQUIRE("all_gather", cucore_device_allocate(dev, (size_t)rank_count * count * sizeof *v, s, &gathered));
    for (size_t i = 0; i < count; ++i) v[i] = rank * 1000 + (int32_t)i;
    REQUIRE("all_gather", cucore_buffer_copy_from_host(send, 0, v, count * sizeof *v, s));
    REQUIRE("all_gather",
            cucore_communicator_all_gather(comm, send, gathered, 0, CUCORE_DATA_TYPE_INT32, s));
    memset(v, 0, (size_t)rank_count * count * sizeof *v);
    REQUIRE("all_gather", cucore_buffer_copy_to_host(gathered, 0, v, (size_t)rank_count * count * sizeof *v, s));
    REQUIRE("all_gather", cucore_stream_synchronize(s));
    {
        size_t bad = (size_t)rank_count * count;
        for (size_t j = 0; j < (size_t)rank_count * count && bad == (size_t)rank_count * count; ++j)
            if (v[j] != (int32_t)(j / count) * 1000 + (int32_t)(j % count)) bad = j;
        if (bad != (size_t)rank_count * count) {
            ++g_failures;
            report("fail all_gather: element %zu is %d", bad, v[bad]);
        } else {
            report("ok all_gather");
        }
    }

    /* Broadcast of rank 0's int32s into `send` on every rank (the root sends from its own). */
    for (size_t i = 0; i < count; ++i) v[i] = rank == 0 ? 7 * (int32_t)i - 3 : -1;
    REQUIRE("broadcast", cucore_buffer_copy_from_host(send, 0, v, count * sizeof *v, s));
    REQUIRE("broadcast", cucore_communicator_broadcast(comm, rank == 0 ? send : NULL, send, 0,
                                                       CUCORE_DATA_TYPE_INT32, 0, s));
    REQUIRE("broadcast", cucore_buffer_copy_to_host(send, 0, v, count * sizeof *v, s));
    REQUIRE("broadcast", cucore_stream_synchronize(s));
    {
        size_t bad = count;
        for (size_t i = 0; i < count && bad == count; ++i)
            if (v[i] != 7 * (int32_t)i - 3) bad = i;
        if (bad != count) {
            ++g_failures;
            report("fail broadcast: element %zu is %d", bad, v[bad]);
        } else {
            report("ok broadcast");
        }
    }
    REQUIRE("check", cucore_communicator_check(comm));
    report("ok check");
out:
    cucore_buffer_release(send);
    cucore_buffer_release(recv);
    cucore_buffer_release(gathered);
    if (s && cucore_stream_synchronize(s) != CUCORE_SUCCESS) fail("release", "synchronize");
    cucore_communicator_release(comm);
    cucore_stream_release(s);
    cucore_device_release(dev);
    free(f);
    free(v);
}

static void ipc_peer(int pool_fd, const uint8_t *pool_id, const uint8_t *descriptor, size_t size, unsigned seed,
                     unsigned fill) {
    cucore_device_t *dev0 = NULL, *dev1 = NULL;
    cucore_stream_t *s0 = NULL, *s1 = NULL;
    cucore_memory_resource_t *mr = NULL;
    cucore_buffer_t *b = NULL, *mine = NULL;
    uint8_t *host = malloc(size);
    cucore_ipc_pool_handle_t pool;
    memset(&pool, 0, sizeof pool);
    pool.fd = pool_fd;
    pool.kind = CUCORE_MEMORY_RESOURCE_DEVICE;
    memcpy(pool.pool_id, pool_id, sizeof pool.pool_id);
    if (!host) {
        report("fail setup: out of memory");
        goto out;
    }
    REQUIRE("setup", cucore_device_get(0, &dev0));
    REQUIRE("setup", cucore_device_get(1, &dev1));
    REQUIRE("setup", cucore_stream_create(dev0, NULL, &s0));
    REQUIRE("setup", cucore_stream_create(dev1, NULL, &s1));
    /* The pool lives on device 0; this process works on device 1. */
    REQUIRE("import_pool", cucore_ipc_import_memory_resource(dev0, &pool, &mr));
    REQUIRE("grant_device_1", cucore_memory_resource_set_peer_access(mr, dev1, CUCORE_ACCESS_READ_WRITE));
    {
        cucore_access_t access = CUCORE_ACCESS_NONE;
        REQUIRE("grant_device_1", cucore_memory_resource_peer_access(mr, dev1, &access));
        if (access != CUCORE_ACCESS_READ_WRITE) {
            ++g_failures;
            report("fail grant_device_1: access %d", (int)access);
            goto out;
        }
    }
    report("ok import_and_grant");
    REQUIRE("import_buffer", cucore_ipc_import_buffer(mr, descriptor, CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE, s0, &b));
    /* Read on device 1: a peer copy into device 1's memory, then to the host on device 1's stream. */
    memset(host, 0, size);
    REQUIRE("read_on_device_1", cucore_device_allocate(dev1, size, s1, &mine));
    REQUIRE("read_on_device_1", cucore_buffer_copy(mine, b, s1));
    REQUIRE("read_on_device_1", cucore_buffer_copy_to_host(mine, 0, host, size, s1));
    REQUIRE("read_on_device_1", cucore_stream_synchronize(s1));
    {
        size_t bad = size;
        for (size_t i = 0; i < size && bad == size; ++i)
            if (host[i] != pattern_byte(i, seed)) bad = i;
        if (bad != size) {
            ++g_failures;
            report("fail read_on_device_1: byte %zu is 0x%02x, expected 0x%02x", bad, host[bad],
                   pattern_byte(bad, seed));
        } else {
            report("ok read_on_device_1");
        }
    }
    /* A memset that runs on device 1 writes device 0's memory through the granted mapping. */
    REQUIRE("write_on_device_1", cucore_buffer_fill(b, fill, 1, s1));
    REQUIRE("write_on_device_1", cucore_stream_synchronize(s1));
    report("ok write_on_device_1");
out:
    cucore_buffer_release(mine);
    cucore_buffer_release(b);
    if (s1 && cucore_stream_synchronize(s1) != CUCORE_SUCCESS) fail("release", "synchronize device 1");
    if (s0 && cucore_stream_synchronize(s0) != CUCORE_SUCCESS) fail("release", "synchronize");
    cucore_memory_resource_release(mr);
    cucore_stream_release(s0);
    cucore_stream_release(s1);
    cucore_device_release(dev0);
    cucore_device_release(dev1);
    free(host);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s REPORT_FD nccl|ipc_peer ...\n", argv[0]);
        return 2;
    }
    g_report = atoi(argv[1]);
    if (strcmp(argv[2], "nccl") == 0 && argc == 8) {
        cucore_communicator_id_t id;
        if (from_hex(argv[6], (uint8_t *)id.internal, sizeof id.internal)) {
            report("fail arguments: bad id hex");
            return 2;
        }
        nccl_rank(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), &id, (size_t)strtoull(argv[7], NULL, 10));
    } else if (strcmp(argv[2], "ipc_peer") == 0 && argc == 9) {
        uint8_t pool_id[CUCORE_IPC_POOL_ID_SIZE], descriptor[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
        if (from_hex(argv[4], pool_id, sizeof pool_id) || from_hex(argv[5], descriptor, sizeof descriptor)) {
            report("fail arguments: bad hex");
            return 2;
        }
        ipc_peer(atoi(argv[3]), pool_id, descriptor, (size_t)strtoull(argv[6], NULL, 10), (unsigned)atoi(argv[7]),
                 (unsigned)atoi(argv[8]));
    } else {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        return 2;
    }
    size_t live = 0;
    cucore_live_object_count(CUCORE_OBJECT_ANY, &live);
    report("done %zu", live);
    return g_failures ? 1 : 0;
}
