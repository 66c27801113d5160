// Host locations, batched memory operations and stream memory operations on a
// real GPU. Batched copies: host -> device (pinned, and pageable read during
// the call), device -> device and device -> host in one cuMemcpyBatchAsync,
// every byte checked; a 3D and a 2D strided region in one cuMemcpy3DBatchAsync. Batched prefetches move the last prefetch location of
// each managed buffer; discarded buffers take new data. Stream memory
// operations: stream A waits (32- and 64-bit GEQ) on values stream B writes
// after a fill that a closed gate holds back; A stays pending until the gate
// opens, then its copy shows B's data (the ordering comes from the wait alone).
// The same through one cuStreamBatchMemOp on each side. Skips with the reason
// where the driver lacks the batched entry points (before CUDA 13.0) or
// managed memory.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "memory_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::cu;
using gpu::pattern;
using gpu::same_bytes;

class MemoryOperationsGpuTest : public gpu::MemoryGpuTest {
protected:
    void SetUp() override {
        gpu::MemoryGpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        CUCORE_ASSERT_OK(cucore_device_memory_resource_get_default(dev_, &pool_));
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &b_stream_));
    }
    void TearDown() override {
        if (b_stream_ != nullptr) {
            EXPECT_EQ(cucore_stream_synchronize(b_stream_), CUCORE_SUCCESS) << cucore_last_error_message();
            cucore_stream_release(b_stream_);
        }
        for (cucore_buffer_t *b : owned_) cucore_buffer_release(b);
        if (pool_ != nullptr) cucore_memory_resource_release(pool_);
        if (pinned_ != nullptr) cucore_memory_resource_release(pinned_);
        pinned_ = nullptr;
        b_stream_ = nullptr;
        owned_.clear();
        pool_ = nullptr;
        gpu::MemoryGpuTest::TearDown();
    }
    // A device buffer of the default pool, released by the fixture.
    cucore_buffer_t *device_buffer(std::uint64_t size) {
        cucore_buffer_t *b = alloc(pool_, size, s_);
        if (b != nullptr) owned_.push_back(b);
        return b;
    }
    // Pinned host memory (cuMemAllocHost) for the values of stream memory operations, released by the fixture:
    // the driver refuses those operations on device-pool memory (CUDA_ERROR_INVALID_VALUE, H200, driver 580).
    cucore_buffer_t *flag_buffer(std::uint64_t size) {
        if (pinned_ == nullptr) {
            EXPECT_EQ(cucore_legacy_pinned_memory_resource_create(dev_, &pinned_), CUCORE_SUCCESS);
        }
        cucore_buffer_t *b = pinned_ ? alloc(pinned_, size, s_) : nullptr;
        if (b != nullptr) owned_.push_back(b);
        return b;
    }
    static cucore_copy_batch_item_t buffers(cucore_buffer_t *src, cucore_buffer_t *dst, std::uint64_t size,
                                            std::uint32_t options_index = 0) {
        cucore_copy_batch_item_t i{};
        i.src = src;
        i.dst = dst;
        i.size = size;
        i.options_index = options_index;
        return i;
    }
    template <typename T> T value_at(cucore_buffer_t *b, std::uint64_t offset) {
        const Bytes bytes = read(b, offset, sizeof(T));
        T v;
        std::memcpy(&v, bytes.data(), sizeof v);
        return v;
    }
    int attribute(CUdevice_attribute a) {
        int v = -1;
        EXPECT_EQ(cu().DeviceGetAttribute(&v, a, cu_dev_), CUDA_SUCCESS);
        return v;
    }

    cucore_memory_resource_t *pool_ = nullptr;
    cucore_memory_resource_t *pinned_ = nullptr;
    cucore_stream_t *b_stream_ = nullptr;  // the writer ("stream B"); s_ is the waiter ("stream A")
    std::vector<cucore_buffer_t *> owned_;
};

// ---- host locations ----

TEST_F(MemoryOperationsGpuTest, HostNumaCurrentIsANode) {
    int node = -1;
    CUCORE_ASSERT_OK(cucore_host_numa_current(&node));
    EXPECT_GE(node, 0);
    EXPECT_GE(cucore::Host::current_numa_id(), 0);
}

// ---- batched copies ----

TEST_F(MemoryOperationsGpuTest, CopyBatchMixesHostToDeviceDeviceToDeviceAndDeviceToHost) {
    constexpr std::uint64_t kSlice = 64 * 1024;
    gpu::PinnedHost host_in(dev_, 3 * kSlice), host_out(dev_, 3 * kSlice);
    ASSERT_TRUE(host_in && host_out);
    const Bytes in = pattern(3 * kSlice, 31);
    std::memcpy(host_in.data(), in.data(), in.size());
    std::memset(host_out.data(), 0, 3 * kSlice);
    Bytes pageable = pattern(kSlice, 32);  // read during the call: changed right after

    std::vector<cucore_buffer_t *> d;
    for (int i = 0; i < 10; ++i) d.push_back(device_buffer(kSlice));
    for (cucore_buffer_t *b : d) ASSERT_NE(b, nullptr);
    for (int i = 3; i < 6; ++i) write(d[i], pattern(kSlice, 40 + i));
    for (int i = 6; i < 9; ++i) write(d[i], pattern(kSlice, 50 + i));

    cucore_copy_options_t stream_order = CUCORE_COPY_OPTIONS_INIT;
    cucore_copy_options_t overlap = CUCORE_COPY_OPTIONS_INIT;
    overlap.overlap_mode = CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE;
    cucore_copy_options_t during_call = CUCORE_COPY_OPTIONS_INIT;
    during_call.src_access_order = CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    const cucore_copy_options_t *options[] = {&stream_order, &overlap, &during_call};

    std::vector<cucore_copy_batch_item_t> items;
    for (int i = 0; i < 3; ++i) {  // pinned host -> d0..d2
        cucore_copy_batch_item_t it{};
        it.src_pointer = host_in.data();
        it.src_offset = i * kSlice;
        it.dst = d[i];
        it.size = kSlice;
        items.push_back(it);
    }
    // device -> device: d3 -> d9 (a whole slice) and the halves of d4 into d5's halves swapped, with the overlap hint
    items.push_back(buffers(d[3], d[9], kSlice, 1));
    {
        cucore_copy_batch_item_t lo = buffers(d[4], d[5], kSlice / 2, 1), hi = buffers(d[4], d[5], kSlice / 2, 1);
        lo.dst_offset = kSlice / 2;
        hi.src_offset = kSlice / 2;
        items.push_back(lo);
        items.push_back(hi);
    }
    for (int i = 0; i < 3; ++i) {  // d6..d8 -> pinned host
        cucore_copy_batch_item_t it{};
        it.src = d[6 + i];
        it.dst_pointer = host_out.data();
        it.dst_offset = i * kSlice;
        it.size = kSlice;
        items.push_back(it);
    }
    const cucore_status_t st = cucore_copy_batch(s_, items.data(), items.size(), options, 3);
    CUCORE_SKIP_IF_NOT_SUPPORTED(st, "cuMemcpyBatchAsync (CUDA 13.0 drivers)");
    CUCORE_ASSERT_OK(st);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));

    for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(same_bytes(read(d[i]), Bytes(in.begin() + i * kSlice, in.begin() + (i + 1) * kSlice))) << "d" << i;
    EXPECT_TRUE(same_bytes(read(d[9]), pattern(kSlice, 43)));
    const Bytes four = pattern(kSlice, 44);
    Bytes swapped(four.begin() + kSlice / 2, four.end());
    swapped.insert(swapped.end(), four.begin(), four.begin() + kSlice / 2);
    EXPECT_TRUE(same_bytes(read(d[5]), swapped));
    for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(same_bytes(Bytes(host_out.data() + i * kSlice, host_out.data() + (i + 1) * kSlice),
                               pattern(kSlice, 56 + i)))
            << "host slice " << i;

    // Pageable host memory read during the call (DURING_API_CALL): changing it after the call changes nothing.
    cucore_copy_batch_item_t it{};
    it.src_pointer = pageable.data();
    it.dst = d[0];
    it.size = kSlice;
    it.options_index = 2;
    CUCORE_ASSERT_OK(cucore_copy_batch(s_, &it, 1, options, 3));
    std::memset(pageable.data(), 0, pageable.size());
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(read(d[0]), pattern(kSlice, 32)));
}

TEST_F(MemoryOperationsGpuTest, CopyBatchOfSixtyFourSmallCopiesThroughTheFacade) {
    cucore::Stream stream = cucore::Stream::adopt((cucore_stream_retain(s_), s_));
    std::vector<cucore_buffer_t *> src, dst;
    for (int i = 0; i < 64; ++i) {
        src.push_back(device_buffer(256));
        dst.push_back(device_buffer(256));
    }
    Bytes all = pattern(64 * 256, 77);
    for (int i = 0; i < 64; ++i) write(src[i], Bytes(all.begin() + i * 256, all.begin() + (i + 1) * 256));
    std::vector<cucore::Buffer> srcs, dsts;
    for (int i = 0; i < 64; ++i) {
        cucore_buffer_retain(src[i]);
        cucore_buffer_retain(dst[i]);
        srcs.push_back(cucore::Buffer::adopt(src[i]));
        dsts.push_back(cucore::Buffer::adopt(dst[i]));
    }
    try {
        cucore::copy_batch(stream, srcs, dsts);
    } catch (const cucore::Error &e) {
        if (e.status() == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << e.what();
        throw;
    }
    stream.synchronize();
    for (int i = 0; i < 64; ++i)
        ASSERT_TRUE(same_bytes(read(dst[i]), Bytes(all.begin() + i * 256, all.begin() + (i + 1) * 256))) << i;
}

TEST_F(MemoryOperationsGpuTest, Copy3DBatchOfStridedRegions) {
    constexpr std::uint64_t kPitch = 256, kRows = 16, kSlices = 4;
    cucore_buffer_t *volume = device_buffer(kPitch * kRows * kSlices), *packed = device_buffer(64 * 8 * 2);
    ASSERT_TRUE(volume && packed);
    const Bytes image = pattern(kPitch * kRows * kSlices, 91);
    write(volume, image);
    write(packed, Bytes(64 * 8 * 2, 0));
    gpu::PinnedHost tile(dev_, 32 * 4);
    ASSERT_TRUE(tile);
    std::memset(tile.data(), 0, 32 * 4);
    // 1) 3D: 2 slices of 8 rows of 64 bytes from (x 16, y 4, slice 1) of the volume into packed 64-byte rows.
    cucore_copy_3d_t a = CUCORE_COPY_3D_INIT;
    a.src.buffer = volume;
    a.src.pitch = kPitch;
    a.src.height = kRows;
    a.src.x = 16;
    a.src.y = 4;
    a.src.z = 1;
    a.dst.buffer = packed;
    a.dst.pitch = 64;
    a.dst.height = 8;
    a.width = 64;
    a.rows = 8;
    a.depth = 2;
    // 2) 2D: 4 rows of 32 bytes from (x 100, y 10, slice 0) into pinned host rows of 32 bytes.
    cucore_copy_3d_t b = CUCORE_COPY_3D_INIT;
    b.src.buffer = volume;
    b.src.pitch = kPitch;
    b.src.x = 100;
    b.src.y = 10;
    b.dst.host = tile.data();
    b.dst.pitch = 32;
    b.width = 32;
    b.rows = 4;
    const cucore_copy_3d_t *copies[] = {&a, &b};
    const cucore_status_t st = cucore_copy_3d_batch(s_, copies, 2, nullptr);
    CUCORE_SKIP_IF_NOT_SUPPORTED(st, "cuMemcpy3DBatchAsync (CUDA 13.0 drivers)");
    CUCORE_ASSERT_OK(st);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    Bytes want_packed(64 * 8 * 2);
    for (std::uint64_t z = 0; z < 2; ++z)
        for (std::uint64_t y = 0; y < 8; ++y)
            for (std::uint64_t x = 0; x < 64; ++x)
                want_packed[(z * 8 + y) * 64 + x] = image[((1 + z) * kRows + 4 + y) * kPitch + 16 + x];
    EXPECT_TRUE(same_bytes(read(packed), want_packed));
    Bytes want_tile(32 * 4);
    for (std::uint64_t y = 0; y < 4; ++y)
        for (std::uint64_t x = 0; x < 32; ++x) want_tile[y * 32 + x] = image[(10 + y) * kPitch + 100 + x];
    EXPECT_TRUE(same_bytes(tile.bytes(), want_tile));
}

// ---- batched prefetches and discards ----

TEST_F(MemoryOperationsGpuTest, PrefetchAndDiscardBatchesOnManagedBuffers) {
    if (attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 0)
        GTEST_SKIP() << "device 0 has no concurrent managed access (prefetching to it is refused)";
    cucore_memory_resource_t *managed = nullptr;
    const cucore_status_t made = cucore_managed_memory_resource_create(dev_, nullptr, &managed);
    CUCORE_SKIP_IF_NOT_SUPPORTED(made, "managed memory");
    CUCORE_ASSERT_OK(made);
    cucore_buffer_t *m[3] = {};
    for (auto &b : m) {
        b = alloc(managed, gpu::kMiB, s_);
        owned_.push_back(b);
    }
    cucore_memory_resource_release(managed);
    const cucore_location_t device0{CUCORE_LOCATION_DEVICE, 0}, host{CUCORE_LOCATION_HOST, 0};
    const cucore_status_t st = cucore_prefetch_batch(s_, m, 3, &device0, 1);
    CUCORE_SKIP_IF_NOT_SUPPORTED(st, "cuMemPrefetchBatchAsync (CUDA 13.0 drivers)");
    CUCORE_ASSERT_OK(st);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    for (cucore_buffer_t *b : m) {
        cucore_location_t l{};
        CUCORE_ASSERT_OK(cucore_buffer_last_prefetch_location(b, &l));
        EXPECT_EQ(l.type, CUCORE_LOCATION_DEVICE);
        EXPECT_EQ(l.id, 0);
    }
    const cucore_location_t each[] = {host, device0, host};
    CUCORE_ASSERT_OK(cucore_prefetch_batch(s_, m, 3, each, 3));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    for (int i = 0; i < 3; ++i) {
        cucore_location_t l{};
        CUCORE_ASSERT_OK(cucore_buffer_last_prefetch_location(m[i], &l));
        EXPECT_EQ(l.type == CUCORE_LOCATION_DEVICE, i == 1) << "buffer " << i << ": type " << l.type;
    }
    // Discarded contents are unspecified: what is defined is that new data then reads back.
    write(m[0], pattern(gpu::kMiB, 61));
    CUCORE_ASSERT_OK(cucore_discard_batch(s_, m, 2));
    write(m[0], pattern(gpu::kMiB, 62));
    EXPECT_TRUE(same_bytes(read(m[0]), pattern(gpu::kMiB, 62)));
    CUCORE_ASSERT_OK(cucore_discard_prefetch_batch(s_, m + 2, 1, &device0, 1));
    write(m[2], pattern(gpu::kMiB, 63));
    EXPECT_TRUE(same_bytes(read(m[2]), pattern(gpu::kMiB, 63)));
}

// ---- stream memory operations ----

// Stream A (s_) waits on values stream B writes after a gated fill; A's copy then shows B's data.
TEST_F(MemoryOperationsGpuTest, OneStreamWaitsForTheValuesAnotherWrites) {
    cucore_buffer_t *flag = flag_buffer(64), *data = device_buffer(gpu::kMiB), *out = device_buffer(gpu::kMiB);
    ASSERT_TRUE(flag && data && out);
    CUCORE_ASSERT_OK(cucore_buffer_fill(flag, 0, 4, s_));
    CUCORE_ASSERT_OK(cucore_buffer_fill(data, 0, 4, s_));
    CUCORE_ASSERT_OK(cucore_buffer_fill(out, 0, 4, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    const std::uint64_t big = (std::uint64_t{1} << 40) + 5;
    {
        gpu::Gate gate;
        // B first (so that whatever queues the driver maps the streams to, B's work is ahead of A's wait).
        CUCORE_ASSERT_OK(gpu::launch(b_stream_, gate.waiter()));
        CUCORE_ASSERT_OK(cucore_buffer_fill(data, 0xA5C3A5C3u, 4, b_stream_));
        CUCORE_ASSERT_OK(cucore_stream_write_value_32(b_stream_, flag, 0, 1u, CUCORE_STREAM_WRITE_VALUE_DEFAULT));
        CUCORE_ASSERT_OK(cucore_stream_write_value_64(b_stream_, flag, 8, big, CUCORE_STREAM_WRITE_VALUE_DEFAULT));
        // A: wait for both values (cyclic >=), then copy B's data.
        CUCORE_ASSERT_OK(cucore_stream_wait_value_32(s_, flag, 0, 1u, CUCORE_STREAM_WAIT_VALUE_GEQ));
        CUCORE_ASSERT_OK(cucore_stream_wait_value_64(s_, flag, 8, std::uint64_t{1} << 40, CUCORE_STREAM_WAIT_VALUE_GEQ));
        CUCORE_ASSERT_OK(cucore_buffer_copy(out, data, s_));
        int done = -1;
        CUCORE_ASSERT_OK(cucore_stream_query(s_, &done));
        EXPECT_EQ(done, 0) << "stream A ran past its wait before the value was written";
        gate.open();
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    }
    EXPECT_TRUE(same_bytes(read(out), gpu::repeated<std::uint32_t>(0xA5C3A5C3u, gpu::kMiB)));
    EXPECT_EQ(value_at<std::uint32_t>(flag, 0), 1u);
    EXPECT_EQ(value_at<std::uint64_t>(flag, 8), big);
}

TEST_F(MemoryOperationsGpuTest, BatchMemoryOpsOnBothSides) {
    cucore_buffer_t *flag = flag_buffer(64), *data = device_buffer(gpu::kMiB), *out = device_buffer(gpu::kMiB);
    ASSERT_TRUE(flag && data && out);
    CUCORE_ASSERT_OK(cucore_buffer_fill(flag, 0, 4, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    const std::uint64_t word = 0x0123456789ABCDEFull;
    {
        gpu::Gate gate;
        CUCORE_ASSERT_OK(gpu::launch(b_stream_, gate.waiter()));
        CUCORE_ASSERT_OK(cucore_buffer_fill(data, 0x3C3C3C3Cu, 4, b_stream_));
        const cucore_stream_memory_op_t writes[] = {
            {CUCORE_STREAM_MEMORY_OP_BARRIER, CUCORE_MEMORY_BARRIER_SCOPE_DEVICE, nullptr, 0, 0},
            {CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64, CUCORE_STREAM_WRITE_VALUE_DEFAULT, flag, 8, word},
            {CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, CUCORE_STREAM_WRITE_VALUE_DEFAULT, flag, 0, 7},
        };
        CUCORE_ASSERT_OK(cucore_stream_batch_memory_ops(b_stream_, writes, 3));
        const cucore_stream_memory_op_t waits[] = {
            {CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32, CUCORE_STREAM_WAIT_VALUE_EQ, flag, 0, 7},
            {CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64, CUCORE_STREAM_WAIT_VALUE_EQ, flag, 8, word},
            {CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32, CUCORE_STREAM_WAIT_VALUE_AND, flag, 0, 4},
        };
        CUCORE_ASSERT_OK(cucore_stream_batch_memory_ops(s_, waits, 3));
        CUCORE_ASSERT_OK(cucore_stream_memory_barrier(s_, CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM));
        CUCORE_ASSERT_OK(cucore_buffer_copy(out, data, s_));
        int done = -1;
        CUCORE_ASSERT_OK(cucore_stream_query(s_, &done));
        EXPECT_EQ(done, 0) << "stream A ran past its waits before the values were written";
        gate.open();
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    }
    EXPECT_TRUE(same_bytes(read(out), gpu::repeated<std::uint32_t>(0x3C3C3C3Cu, gpu::kMiB)));
    EXPECT_EQ(value_at<std::uint32_t>(flag, 0), 7u);
    EXPECT_EQ(value_at<std::uint64_t>(flag, 8), word);
    if (attribute(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES)) {
        CUCORE_EXPECT_OK(cucore_stream_flush_remote_writes(s_));
    } else {
        CUCORE_EXPECT_STATUS(cucore_stream_flush_remote_writes(s_), CUCORE_ERROR_NOT_SUPPORTED);
    }
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
}

TEST_F(MemoryOperationsGpuTest, ManagedMemoryAndMisalignedValuesAreRefusedBeforeTheDriver) {
    cucore_buffer_t *flag = flag_buffer(64);
    CUCORE_EXPECT_STATUS(cucore_stream_write_value_32(s_, flag, 2, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_stream_wait_value_64(s_, flag, 4, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_memory_resource_t *managed = nullptr;
    if (cucore_managed_memory_resource_create(dev_, nullptr, &managed) == CUCORE_SUCCESS) {
        cucore_buffer_t *m = alloc(managed, 64, s_);
        CUCORE_EXPECT_STATUS(cucore_stream_write_value_32(s_, m, 0, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
        cucore_buffer_release(m);
        cucore_memory_resource_release(managed);
    }
    // Device-pool memory: the driver's refusal is explained (a later driver may accept it).
    cucore_buffer_t *pooled = device_buffer(64);
    const cucore_status_t on_pool = cucore_stream_write_value_32(s_, pooled, 0, 1u, 0);
    if (on_pool != CUCORE_SUCCESS) {
        EXPECT_EQ(on_pool, CUCORE_ERROR_CUDA);
        EXPECT_NE(std::string(cucore_last_error_message()).find("device memory pool"), std::string::npos)
            << cucore_last_error_message();
    }
    // Written values read back (no waits involved).
    CUCORE_ASSERT_OK(cucore_stream_write_value_32(s_, flag, 4, 0xFEEDBEEFu, 0));
    CUCORE_ASSERT_OK(cucore_stream_write_value_64(s_, flag, 16, 0xCAFEF00DDEADBEEFull, 0));
    EXPECT_EQ(value_at<std::uint32_t>(flag, 4), 0xFEEDBEEFu);
    EXPECT_EQ(value_at<std::uint64_t>(flag, 16), 0xCAFEF00DDEADBEEFull);
}

}  // namespace
