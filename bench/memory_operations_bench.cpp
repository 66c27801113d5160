// Batched copies and stream memory operations.
//
// copy_batch_64x256: one batch of 64 device-to-device copies of 256 bytes (64 source and 64
//   destination buffers of the device's default pool) on one non-blocking stream:
//     raw    one cuMemcpyBatchAsync (one attribute entry: stream order, no hints);
//     C ABI  one cucore_copy_batch (64 items, default options);
//     C++    one cucore::copy_batch over a prepared std::vector<cucore::BatchCopy>.
// memcpy_64x256_single: the same 64 copies as 64 single copies:
//     raw    64 cuMemcpyAsync;  C ABI  64 cucore_buffer_copy;  C++  64 cucore::Buffer::copy_from.
//   The speed-up of the batch is memcpy_64x256_single over copy_batch_64x256, column by column
//   (bench/README.md); both rows time the host cost of queueing (queued_loop: the stream is
//   synchronized with the timer paused every kSyncEvery operations).
// stream_value_write_wait_32: cuStreamWriteValue32 of the iteration number to a 4-byte flag in pinned host
//   memory (the driver refuses stream memory operations on device-pool memory), then
//   cuStreamWaitValue32 on it (GEQ, met by the write just before it) on one stream; C ABI:
//   cucore_stream_write_value_32 + cucore_stream_wait_value_32; C++: cucore::write_value_32 +
//   cucore::wait_value_32.
//
// cuMemcpyBatchAsync, cuStreamWriteValue32 and cuStreamWaitValue32 are resolved here (through the
// driver's cuGetProcAddress, at the version libcucore asks for), not in raw_driver.hpp, whose
// entry points every benchmark needs: a driver before CUDA 13.0 skips the batch rows with the
// reason instead of stopping the whole run.
//
// Checks, outside the timing: after each loop, the last copy's destination (or the flag) holds
// the expected bytes.

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr int kCopies = 64;
constexpr std::uint64_t kCopyBytes = 256;
constexpr int kSyncEvery = 256;  // batches (or rounds of 64 copies) between timed-out synchronizations

// ---- the entry points of this file ----

using MemcpyBatchAsync = CUresult (*)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                      size_t, CUstream);
using StreamValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

struct Extra {
    MemcpyBatchAsync memcpy_batch = nullptr;
    StreamValue32 write_value_32 = nullptr;
    StreamValue32 wait_value_32 = nullptr;
};

void *resolve(const char *symbol, int version) {
    using GetProc = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    static GetProc get = reinterpret_cast<GetProc>(dlsym(env().driver.library, "cuGetProcAddress_v2"));
    void *fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (get == nullptr || get(symbol, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS)
        return nullptr;
    return fn;
}

const Extra &extra() {
    static const Extra e = [] {
        Extra x;
        x.memcpy_batch = reinterpret_cast<MemcpyBatchAsync>(resolve("cuMemcpyBatchAsync", 13000));
        x.write_value_32 = reinterpret_cast<StreamValue32>(resolve("cuStreamWriteValue32", 11070));
        x.wait_value_32 = reinterpret_cast<StreamValue32>(resolve("cuStreamWaitValue32", 11070));
        return x;
    }();
    return e;
}

// ---- raw memory of the raw rows ----

struct RawCopies {
    CUstream stream = nullptr;
    CUmemoryPool pool = nullptr;
    std::vector<CUdeviceptr> src, dst;
    std::vector<size_t> sizes;

    bool make(benchmark::State &state) {
        const RawDriver &d = env().driver;
        if (!ok(state, d.cuDeviceGetMemPool_fn(&pool, env().cu_device), "cuDeviceGetMemPool")) return false;
        if (!ok(state, d.cuStreamCreateWithPriority_fn(&stream, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority"))
            return false;
        for (int i = 0; i < kCopies; ++i) {
            CUdeviceptr s = 0, t = 0;
            if (!ok(state, d.cuMemAllocFromPoolAsync_fn(&s, kCopyBytes, pool, stream), "cuMemAllocFromPoolAsync") ||
                !ok(state, d.cuMemAllocFromPoolAsync_fn(&t, kCopyBytes, pool, stream), "cuMemAllocFromPoolAsync"))
                return false;
            src.push_back(s);
            dst.push_back(t);
            sizes.push_back(kCopyBytes);
            if (!ok(state, d.cuMemsetD32Async_fn(s, 0xC0DE0000u + i, kCopyBytes / 4, stream), "cuMemsetD32Async"))
                return false;
        }
        return ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize");
    }
    // The last destination holds its source's pattern.
    void check(benchmark::State &state) {
        if (state.error_occurred() || dst.empty()) return;
        const RawDriver &d = env().driver;
        std::uint32_t words[kCopyBytes / 4] = {};
        CUdeviceptr host = 0;
        void *pinned = nullptr;
        if (!ok(state, d.cuMemAllocHost_fn(&pinned, kCopyBytes), "cuMemAllocHost")) return;
        host = reinterpret_cast<CUdeviceptr>(pinned);
        if (ok(state, d.cuMemcpyAsync_fn(host, dst.back(), kCopyBytes, stream), "cuMemcpyAsync") &&
            ok(state, d.cuStreamSynchronize_fn(stream), "cuStreamSynchronize")) {
            std::memcpy(words, pinned, kCopyBytes);
            if (words[0] != 0xC0DE0000u + (kCopies - 1) || words[kCopyBytes / 4 - 1] != words[0])
                fail_check(state, "the last copy's destination does not hold its source's pattern");
        }
        d.cuMemFreeHost_fn(pinned);
    }
    ~RawCopies() {
        const RawDriver &d = env().driver;
        for (CUdeviceptr p : src) d.cuMemFreeAsync_fn(p, stream);
        for (CUdeviceptr p : dst) d.cuMemFreeAsync_fn(p, stream);
        if (stream != nullptr) {
            d.cuStreamSynchronize_fn(stream);
            d.cuStreamDestroy_fn(stream);
        }
    }
};

// ---- C ABI memory of the C rows ----

struct CCopies {
    cucore_stream_t *stream = nullptr;
    cucore_memory_resource_t *pool = nullptr;
    std::vector<cucore_buffer_t *> src, dst;

    bool make(benchmark::State &state) {
        if (!ok(state, cucore_device_memory_resource_get_default(env().device, &pool),
                "cucore_device_memory_resource_get_default") ||
            !ok(state, cucore_stream_create(env().device, nullptr, &stream), "cucore_stream_create"))
            return false;
        for (int i = 0; i < kCopies; ++i) {
            cucore_buffer_t *s = nullptr, *t = nullptr;
            if (!ok(state, cucore_memory_resource_allocate(pool, kCopyBytes, stream, &s), "allocate")) return false;
            src.push_back(s);
            if (!ok(state, cucore_memory_resource_allocate(pool, kCopyBytes, stream, &t), "allocate")) return false;
            dst.push_back(t);
            if (!ok(state, cucore_buffer_fill(s, 0xC0DE0000u + i, 4, stream), "cucore_buffer_fill")) return false;
        }
        return ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize");
    }
    void check(benchmark::State &state) {
        if (state.error_occurred() || dst.empty()) return;
        std::uint32_t words[kCopyBytes / 4] = {};
        if (ok(state, cucore_buffer_copy_to_host(dst.back(), 0, words, kCopyBytes, stream), "copy_to_host") &&
            ok(state, cucore_stream_synchronize(stream), "cucore_stream_synchronize") &&
            (words[0] != 0xC0DE0000u + (kCopies - 1) || words[kCopyBytes / 4 - 1] != words[0]))
            fail_check(state, "the last copy's destination does not hold its source's pattern");
    }
    ~CCopies() {
        for (auto *b : src) cucore_buffer_release(b);
        for (auto *b : dst) cucore_buffer_release(b);
        if (stream != nullptr) cucore_stream_synchronize(stream);
        cucore_stream_release(stream);
        cucore_memory_resource_release(pool);
    }
};

// ---- C++ memory of the C++ rows ----

struct CppCopies {
    cucore::Stream stream;
    std::vector<cucore::Buffer> src, dst;
    std::vector<cucore::BatchCopy> batch;

    CppCopies() : stream(env().cpp_device->create_stream()) {
        cucore::MemoryResource pool = cucore::MemoryResource::device_default(*env().cpp_device);
        for (int i = 0; i < kCopies; ++i) {
            src.push_back(pool.allocate(kCopyBytes, stream));
            dst.push_back(pool.allocate(kCopyBytes, stream));
            src.back().fill(static_cast<std::uint32_t>(0xC0DE0000u + i), stream);
        }
        for (int i = 0; i < kCopies; ++i) batch.push_back({cucore::CopySide(src[i]), cucore::CopySide(dst[i]), kCopyBytes, 0});
        stream.synchronize();
    }
    void check(benchmark::State &state) {
        if (state.error_occurred()) return;
        std::uint32_t words[kCopyBytes / 4] = {};
        dst.back().copy_to_host(0, words, kCopyBytes, stream);
        stream.synchronize();
        if (words[0] != 0xC0DE0000u + (kCopies - 1) || words[kCopyBytes / 4 - 1] != words[0])
            fail_check(state, "the last copy's destination does not hold its source's pattern");
    }
};

// ---- one batch of 64 copies ----

void copy_batch_raw(benchmark::State &state) {
    const Extra &x = extra();
    if (x.memcpy_batch == nullptr) return skip_run(state, "the driver lacks cuMemcpyBatchAsync (CUDA 13.0)");
    RawCopies m;
    if (!m.make(state)) return;
    CUmemcpyAttributes attributes{};
    attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t attribute_start = 0;
    const RawDriver &d = env().driver;
    queued_loop(
        state, kSyncEvery,
        [&] {
            return ok(state, x.memcpy_batch(m.dst.data(), m.src.data(), m.sizes.data(), kCopies, &attributes,
                                            &attribute_start, 1, m.stream),
                      "cuMemcpyBatchAsync");
        },
        [&] { return ok(state, d.cuStreamSynchronize_fn(m.stream), "cuStreamSynchronize"); });
    m.check(state);
}

void copy_batch_c(benchmark::State &state) {
    if (extra().memcpy_batch == nullptr) return skip_run(state, "the driver lacks cuMemcpyBatchAsync (CUDA 13.0)");
    CCopies m;
    if (!m.make(state)) return;
    std::vector<cucore_copy_batch_item_t> items(kCopies);
    for (int i = 0; i < kCopies; ++i) {
        items[i].src = m.src[i];
        items[i].dst = m.dst[i];
        items[i].size = kCopyBytes;
    }
    queued_loop(
        state, kSyncEvery,
        [&] { return ok(state, cucore_copy_batch(m.stream, items.data(), kCopies, nullptr, 0), "cucore_copy_batch"); },
        [&] { return ok(state, cucore_stream_synchronize(m.stream), "cucore_stream_synchronize"); });
    m.check(state);
}

void copy_batch_cpp(benchmark::State &state) {
    if (extra().memcpy_batch == nullptr) return skip_run(state, "the driver lacks cuMemcpyBatchAsync (CUDA 13.0)");
    try {
        CppCopies m;
        queued_loop(
            state, kSyncEvery,
            [&] {
                cucore::copy_batch(m.stream, m.batch);
                return true;
            },
            [&] {
                m.stream.synchronize();
                return true;
            });
        m.check(state);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- the same 64 copies one by one ----

void single_copies_raw(benchmark::State &state) {
    RawCopies m;
    if (!m.make(state)) return;
    const RawDriver &d = env().driver;
    queued_loop(
        state, kSyncEvery,
        [&] {
            for (int i = 0; i < kCopies; ++i)
                if (!ok(state, d.cuMemcpyAsync_fn(m.dst[i], m.src[i], kCopyBytes, m.stream), "cuMemcpyAsync"))
                    return false;
            return true;
        },
        [&] { return ok(state, d.cuStreamSynchronize_fn(m.stream), "cuStreamSynchronize"); });
    m.check(state);
}

void single_copies_c(benchmark::State &state) {
    CCopies m;
    if (!m.make(state)) return;
    queued_loop(
        state, kSyncEvery,
        [&] {
            for (int i = 0; i < kCopies; ++i)
                if (!ok(state, cucore_buffer_copy(m.dst[i], m.src[i], m.stream), "cucore_buffer_copy")) return false;
            return true;
        },
        [&] { return ok(state, cucore_stream_synchronize(m.stream), "cucore_stream_synchronize"); });
    m.check(state);
}

void single_copies_cpp(benchmark::State &state) {
    try {
        CppCopies m;
        queued_loop(
            state, kSyncEvery,
            [&] {
                for (int i = 0; i < kCopies; ++i) m.dst[i].copy_from(m.src[i], m.stream);
                return true;
            },
            [&] {
                m.stream.synchronize();
                return true;
            });
        m.check(state);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- stream value write + wait (32-bit) ----

void value_write_wait_raw(benchmark::State &state) {
    const Extra &x = extra();
    if (x.write_value_32 == nullptr || x.wait_value_32 == nullptr)
        return skip_run(state, "the driver lacks cuStreamWriteValue32/cuStreamWaitValue32");
    RawCopies m;
    if (!m.make(state)) return;
    const RawDriver &d = env().driver;
    void *host = nullptr;  // the flag: pinned host memory (the driver refuses device-pool memory here)
    if (!ok(state, d.cuMemAllocHost_fn(&host, 64), "cuMemAllocHost")) return;
    const auto flag = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(host));
    cuuint32_t n = 0;
    queued_loop(
        state, kSyncEvery,
        [&] {
            ++n;
            return ok(state, x.write_value_32(m.stream, flag, n, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32") &&
                   ok(state, x.wait_value_32(m.stream, flag, n, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
        },
        [&] { return ok(state, d.cuStreamSynchronize_fn(m.stream), "cuStreamSynchronize"); });
    if (!state.error_occurred() && *static_cast<volatile cuuint32_t *>(host) != n)
        fail_check(state, "the flag does not hold the last value written");
    d.cuMemFreeHost_fn(host);
}

void value_write_wait_c(benchmark::State &state) {
    CCopies m;
    if (!m.make(state)) return;
    cucore_memory_resource_t *pinned = nullptr;  // the flag: pinned host memory, as in the raw variant
    cucore_buffer_t *flag = nullptr;
    if (!ok(state, cucore_legacy_pinned_memory_resource_create(env().device, &pinned), "legacy pinned resource") ||
        !ok(state, cucore_memory_resource_allocate(pinned, 64, m.stream, &flag), "allocate")) {
        cucore_memory_resource_release(pinned);
        return;
    }
    std::uint32_t n = 0;
    queued_loop(
        state, kSyncEvery,
        [&] {
            ++n;
            return ok(state, cucore_stream_write_value_32(m.stream, flag, 0, n, 0), "cucore_stream_write_value_32") &&
                   ok(state, cucore_stream_wait_value_32(m.stream, flag, 0, n, CUCORE_STREAM_WAIT_VALUE_GEQ),
                      "cucore_stream_wait_value_32");
        },
        [&] { return ok(state, cucore_stream_synchronize(m.stream), "cucore_stream_synchronize"); });
    std::uint32_t last = 0;
    if (!state.error_occurred() && ok(state, cucore_buffer_copy_to_host(flag, 0, &last, 4, m.stream), "copy") &&
        ok(state, cucore_stream_synchronize(m.stream), "sync") && last != n)
        fail_check(state, "the flag does not hold the last value written");
    cucore_buffer_release(flag);
    cucore_memory_resource_release(pinned);
}

void value_write_wait_cpp(benchmark::State &state) {
    try {
        CppCopies m;
        cucore::Buffer flag = cucore::MemoryResource::legacy_pinned(*env().cpp_device).allocate(64, m.stream);
        std::uint32_t n = 0;
        queued_loop(
            state, kSyncEvery,
            [&] {
                ++n;
                cucore::write_value_32(m.stream, flag, 0, n);
                cucore::wait_value_32(m.stream, flag, 0, n);
                return true;
            },
            [&] {
                m.stream.synchronize();
                return true;
            });
        std::uint32_t last = 0;
        flag.copy_to_host(0, &last, 4, m.stream);
        m.stream.synchronize();
        if (last != n) fail_check(state, "the flag does not hold the last value written");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

const bool registered_batch = register_operation({
    250,
    "copy_batch_64x256",
    "copy batch, 64 x 256 B (one call)",
    1.10,
    "no anchor for batched copies; the pool alloc/free bound (<= 1.10) applied to one call of 64 items",
    copy_batch_raw,
    copy_batch_c,
    copy_batch_cpp,
});

const bool registered_single = register_operation({
    251,
    "memcpy_64x256_single",
    "64 single copies, 256 B",
    1.10,
    "the copy_batch row's single-copy baseline: 64 cuMemcpyAsync per iteration",
    single_copies_raw,
    single_copies_c,
    single_copies_cpp,
});

const bool registered_value = register_operation({
    252,
    "stream_value_write_wait_32",
    "stream write + wait value, 32-bit",
    1.10,
    "no anchor for stream memory operations; the pool alloc/free bound (<= 1.10) applied",
    value_write_wait_raw,
    value_write_wait_c,
    value_write_wait_cpp,
});

}  // namespace
}  // namespace cucore_bench
