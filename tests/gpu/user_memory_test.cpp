// User memory resources on a real GPU: a resource whose callbacks allocate
// with the raw driver's cuMemAlloc, checked byte by byte.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::kMiB;
using gpu::pattern;
using gpu::same_bytes;

class UserMemoryGpuTest : public gpu::PoolKindsGpuTest {};

struct RawAllocator {
    CUcontext context = nullptr;
    std::mutex mutex;
    std::vector<std::uint64_t> allocated, freed;
    std::vector<cucore_stream_t *> streams;
    CUresult last_free = CUDA_ERROR_UNKNOWN;
    std::atomic<int> destroyed{0};

    static cucore_status_t allocate(void *self, std::uint64_t size, cucore_stream_t *stream, std::uint64_t *address) {
        auto *r = static_cast<RawAllocator *>(self);
        CUdeviceptr ptr = 0;
        CUresult result;
        {
            gpu::ScopedContext scope(r->context);
            result = cu().MemAlloc(&ptr, static_cast<size_t>(size));
        }
        if (result == CUDA_ERROR_OUT_OF_MEMORY) return CUCORE_ERROR_OUT_OF_MEMORY;
        if (result != CUDA_SUCCESS) return CUCORE_ERROR_CUDA;
        std::lock_guard<std::mutex> lock(r->mutex);
        r->allocated.push_back(ptr);
        r->streams.push_back(stream);
        *address = ptr;
        return CUCORE_SUCCESS;
    }
    static cucore_status_t deallocate(void *self, std::uint64_t address, std::uint64_t, cucore_stream_t *) {
        auto *r = static_cast<RawAllocator *>(self);
        CUresult result;
        {
            gpu::ScopedContext scope(r->context);
            result = cu().MemFree(static_cast<CUdeviceptr>(address));
        }
        std::lock_guard<std::mutex> lock(r->mutex);
        r->freed.push_back(address);
        r->last_free = result;
        return result == CUDA_SUCCESS ? CUCORE_SUCCESS : CUCORE_ERROR_CUDA;  // a failure is a release error
    }
    static void destroy(void *self) { ++static_cast<RawAllocator *>(self)->destroyed; }
};

TEST_F(UserMemoryGpuTest, UserResourceOverRawCuMemAlloc) {
    RawAllocator raw_alloc;
    raw_alloc.context = primary_;
    cucore_memory_resource_callbacks_t callbacks{};
    callbacks.struct_size = sizeof callbacks;
    callbacks.allocate = &RawAllocator::allocate;
    callbacks.deallocate = &RawAllocator::deallocate;
    callbacks.destroy = &RawAllocator::destroy;
    callbacks.user_data = &raw_alloc;
    callbacks.device_id = 0;
    callbacks.device_accessible = 1;
    cucore_memory_resource_t *user = nullptr;
    CUCORE_ASSERT_OK(cucore_user_memory_resource_create(&callbacks, &user));
    const std::uint64_t n = 3 * kMiB + 1;
    cucore_buffer_t *b = alloc(user, n, s_);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(raw_alloc.allocated.size(), 1u);
    EXPECT_EQ(gpu::address_of(b), raw_alloc.allocated[0]);
    EXPECT_EQ(raw_alloc.streams[0], s_);
    EXPECT_EQ(pointer_attribute<int>(gpu::address_of(b), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL), 0);
    int device_id = 9;
    CUCORE_EXPECT_OK(cucore_buffer_device_id(b, &device_id));
    EXPECT_EQ(device_id, 0);
    // The library's copies and fills reach the memory; the raw driver agrees.
    const Bytes data = pattern(static_cast<std::size_t>(n), 3);
    write(b, data);
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b), data.size()), data));
    const Bytes raw_data = pattern(static_cast<std::size_t>(n), 4);
    raw_write(gpu::address_of(b), raw_data);
    EXPECT_TRUE(same_bytes(read(b), raw_data));
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x6B, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b), data.size()), Bytes(static_cast<std::size_t>(n), 0x6B)));
    // Released in any order: freed with the buffer, destroyed with the last reference.
    std::uint64_t release_errors_before = 0;
    CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_before));
    CUCORE_EXPECT_OK(cucore_memory_resource_release(user));
    EXPECT_EQ(raw_alloc.destroyed.load(), 0);
    CUCORE_EXPECT_OK(cucore_buffer_release(b));
    ASSERT_EQ(raw_alloc.freed.size(), 1u);
    EXPECT_EQ(raw_alloc.freed[0], raw_alloc.allocated[0]);
    EXPECT_EQ(raw_alloc.last_free, CUDA_SUCCESS) << raw::error_name(raw_alloc.last_free);
    std::uint64_t release_errors_after = 0;
    CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_after));
    EXPECT_EQ(release_errors_after, release_errors_before) << "a successful free reports nothing";
    EXPECT_EQ(raw_alloc.destroyed.load(), 1);
}

}  // namespace
