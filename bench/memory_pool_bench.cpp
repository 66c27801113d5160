// Memory pools: stream-ordered allocation + free of 4 KiB from the device's default pool.
//
// Every variant allocates from the device's current pool on one non-blocking stream and frees
// on the same stream, as cuda.core's DeviceMemoryResource does; every kSyncEvery iterations the
// stream is synchronized with the timer paused, so the queue stays short.

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr int kSyncEvery = 1024;
constexpr size_t kBytes = 4096;


void pool_alloc_free_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    CUstream stream = nullptr;
    CUmemoryPool pool = nullptr;
    if (!ok(state, d.cuDeviceGetMemPool_fn(&pool, env().cu_device), "cuDeviceGetMemPool")) return;
    if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority"))
        return;
    queued_loop(
        state, kSyncEvery,
        [&] {
            CUdeviceptr ptr = 0;
            return ok(state, d.cuMemAllocFromPoolAsync_fn(&ptr, kBytes, pool, stream), "cuMemAllocFromPoolAsync") &&
                   ok(state, d.cuMemFreeAsync_fn(ptr, stream), "cuMemFreeAsync");
        },
        [&] { return ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize"); });
    d.cuStreamDestroy_fn(stream);
}

void pool_alloc_free_c(benchmark::State &state) {
    cucore_device_t *device = env().device;
    cucore_stream_t *stream = nullptr;
    cucore_memory_resource_t *resource = nullptr;
    if (!ok(state, cucore_device_memory_resource_get_default(device, &resource),
            "cucore_device_memory_resource_get_default"))
        return;
    if (ok(state, cucore_stream_create(device, nullptr, &stream), "cucore_stream_create")) {
        const long long before = live_objects(CUCORE_OBJECT_BUFFER);
        queued_loop(
            state, kSyncEvery,
            [&] {
                cucore_buffer_t *buffer = nullptr;
                return ok(state, cucore_memory_resource_allocate(resource, kBytes, stream, &buffer),
                          "cucore_memory_resource_allocate") &&
                       ok(state, cucore_buffer_release(buffer), "cucore_buffer_release");
            },
            [&] { return ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize"); });
        if (live_objects(CUCORE_OBJECT_BUFFER) != before) fail_check(state, "live buffer count changed (a leak)");
        cucore_stream_release(stream);
    }
    cucore_memory_resource_release(resource);
}

void pool_alloc_free_cpp(benchmark::State &state) {
    try {
        const cucore::Device &device = *env().cpp_device;
        cucore::MemoryResource resource = cucore::MemoryResource::device_default(device);
        cucore::Stream stream = device.create_stream();
        queued_loop(
            state, kSyncEvery, [&] {
                cucore::Buffer buffer = resource.allocate(kBytes, stream);  // freed at the end of the iteration
                return true;
            },
            [&] {
                stream.synchronize();
                return true;
            });
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

const bool registered = register_operation({
    60,
    "pool_alloc_free_4k",
    "pool alloc + free, 4 KiB",
    1.08,
    "issue 18: stream-ordered alloc + free, 4 KiB, pool (C ABI <= 1.08x raw)",
    pool_alloc_free_raw,
    pool_alloc_free_c,
    pool_alloc_free_cpp,
});

}  // namespace
}  // namespace cucore_bench
