// DLPack on a real GPU: device buffers exported as 2-D float32 tensors and
// imported back (zero-copy: the same device memory, data written through one
// side read through the other, checked byte by byte and against the raw
// driver), an export that outlives its closed buffer, and a tensor whose memory
// came from raw cuMemAlloc, freed by its deleter exactly once.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpu_test.hpp"

namespace {

using gpu::cu;
using gpu::GpuTest;

// rows x cols floats, each a function of its position.
std::vector<float> matrix(int rows, int cols, float seed) {
    std::vector<float> m(static_cast<std::size_t>(rows) * cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) m[static_cast<std::size_t>(r) * cols + c] = seed + r * 1000.0f + c;
    return m;
}

class DLPackTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        CUCORE_ASSERT_OK(cucore_release_error_count(&release_errors_));
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s_));
        const cucore_status_t st = cucore_device_memory_resource_create(dev_, nullptr, &pool_);
        if (st == CUCORE_ERROR_NOT_SUPPORTED)
            GTEST_SKIP() << "device 0 has no stream-ordered memory pools: " << cucore_last_error_message();
        CUCORE_ASSERT_OK(st);
    }

    void TearDown() override {
        if (ready_) {
            cucore_memory_resource_release(pool_);
            cucore_stream_release(s_);
            std::uint64_t errors = 0;
            EXPECT_EQ(cucore_release_error_count(&errors), CUCORE_SUCCESS);
            EXPECT_EQ(errors, release_errors_) << "failures inside release paths during the test";
            EXPECT_EQ(gpu::current_context(), nullptr) << "a library call left a context current";
        }
        GpuTest::TearDown();
    }

    std::uint64_t address_of(const cucore_buffer_t *b) {
        std::uint64_t a = 0;
        EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS) << cucore_last_error_message();
        return a;
    }
    std::uint64_t size_of(const cucore_buffer_t *b) {
        std::uint64_t n = 0;
        EXPECT_EQ(cucore_buffer_size(b, &n), CUCORE_SUCCESS) << cucore_last_error_message();
        return n;
    }
    // The pool's bytes in use, after the stream's frees have run.
    std::uint64_t pool_used() {
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
        std::uint64_t used = 0;
        EXPECT_EQ(cucore_memory_resource_pool_attribute(pool_, CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &used),
                  CUCORE_SUCCESS)
            << cucore_last_error_message();
        return used;
    }
    template <typename T> std::vector<T> read(cucore_buffer_t *b, std::size_t count, std::uint64_t offset = 0) {
        std::vector<T> out(count);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, offset, out.data(), count * sizeof(T), s_), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
        return out;
    }
    template <typename T> void write(cucore_buffer_t *b, const std::vector<T> &values, std::uint64_t offset = 0) {
        EXPECT_EQ(cucore_buffer_copy_from_host(b, offset, values.data(), values.size() * sizeof(T), s_),
                  CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << cucore_last_error_message();
    }
    // Device memory read through the raw driver (cuMemcpyDtoH in the primary context).
    std::vector<float> raw_read(std::uint64_t address, std::size_t count) {
        std::vector<float> out(count);
        gpu::ScopedContext scope(primary_);
        const CUresult r = cu().MemcpyDtoH(out.data(), static_cast<CUdeviceptr>(address), count * sizeof(float));
        EXPECT_EQ(r, CUDA_SUCCESS) << "cuMemcpyDtoH -> " << raw::error_name(r);
        return out;
    }

    cucore_stream_t *s_ = nullptr;
    cucore_memory_resource_t *pool_ = nullptr;  // a new pool: its usage counts only this test's buffers
    std::uint64_t release_errors_ = 0;
};

constexpr int kRows = 64, kCols = 48;
constexpr std::uint64_t kBytes = std::uint64_t{kRows} * kCols * sizeof(float);

TEST_F(DLPackTest, DeviceBufferRoundTripsAsA2DFloatTensor) {
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(pool_, kBytes, s_, &b));
    const std::vector<float> m = matrix(kRows, kCols, 0.25f);
    write(b, m);

    const std::int64_t shape[] = {kRows, kCols};
    cucore_dlpack_layout_t layout{};
    layout.struct_size = sizeof layout;
    layout.dtype = DLDataType{kDLFloat, 32, 1};
    layout.ndim = 2;
    layout.shape = shape;
    DLManagedTensorVersioned *t = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_export(b, &layout, &t));
    EXPECT_EQ(t->version.major, 1u);
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(t->dl_tensor.device.device_id, 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t->dl_tensor.data), address_of(b));
    EXPECT_EQ(t->dl_tensor.shape[0], kRows);
    EXPECT_EQ(t->dl_tensor.shape[1], kCols);
    EXPECT_EQ(t->dl_tensor.strides[0], kCols);
    EXPECT_EQ(t->dl_tensor.strides[1], 1);
    int32_t type = -1, id = -1;
    CUCORE_ASSERT_OK(cucore_dlpack_device(b, &type, &id));
    EXPECT_EQ(type, kDLCUDA);
    EXPECT_EQ(id, 0);

    // Imported back: the same device memory, no copy.
    cucore_buffer_t *imported = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_import(t, &imported));
    EXPECT_EQ(address_of(imported), address_of(b));
    EXPECT_EQ(size_of(imported), kBytes);
    int device_id = -1;
    CUCORE_ASSERT_OK(cucore_buffer_device_id(imported, &device_id));
    EXPECT_EQ(device_id, 0);
    EXPECT_EQ(read<float>(imported, m.size()), m) << "read through the imported buffer";

    // Written through the imported buffer, seen through the original and the raw driver.
    const std::vector<float> m2 = matrix(kRows, kCols, -7.5f);
    write(imported, m2);
    EXPECT_EQ(read<float>(b, m2.size()), m2);
    EXPECT_EQ(raw_read(address_of(b), m2.size()), m2);
    // A device-to-device copy between the two (whole row 3 onto row 0).
    cucore_buffer_t *row0 = nullptr, *row3 = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, 0, kCols * sizeof(float), &row0));
    CUCORE_ASSERT_OK(cucore_buffer_view(imported, 3 * kCols * sizeof(float), kCols * sizeof(float), &row3));
    CUCORE_ASSERT_OK(cucore_buffer_copy(row0, row3, s_));
    std::vector<float> expected = m2;
    std::copy(m2.begin() + 3 * kCols, m2.begin() + 4 * kCols, expected.begin());
    EXPECT_EQ(read<float>(imported, expected.size()), expected);
    cucore_buffer_release(row0);
    cucore_buffer_release(row3);

    // The tensor (now the imported buffer) keeps the memory after the original is closed.
    CUCORE_ASSERT_OK(cucore_buffer_close(b, nullptr));
    cucore_buffer_release(b);
    EXPECT_GE(pool_used(), kBytes) << "the export holds the allocation";
    EXPECT_EQ(raw_read(address_of(imported), expected.size()), expected);
    cucore_buffer_release(imported);  // calls the deleter: the memory goes back to the pool
    EXPECT_EQ(pool_used(), 0u);
}

TEST_F(DLPackTest, StridedLayoutsExportTheRightElements) {
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(pool_, kBytes, s_, &b));
    const std::vector<float> m = matrix(kRows, kCols, 1.0f);
    write(b, m);

    // An 8x8 block at row 2, column 4 (a byte offset, row stride kCols), exported legacy.
    const std::int64_t shape[] = {8, 8};
    const std::int64_t strides[] = {kCols, 1};
    cucore_dlpack_layout_t layout{};
    layout.struct_size = sizeof layout;
    layout.dtype = DLDataType{kDLFloat, 32, 1};
    layout.ndim = 2;
    layout.shape = shape;
    layout.strides = strides;
    layout.byte_offset = (2 * kCols + 4) * sizeof(float);
    DLManagedTensor *t = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_export_legacy(b, &layout, &t));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t->dl_tensor.data), address_of(b) + layout.byte_offset);
    cucore_buffer_t *block = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_import_legacy(t, &block));
    EXPECT_EQ(address_of(block), address_of(b) + layout.byte_offset);
    EXPECT_EQ(size_of(block), (7u * kCols + 8u) * sizeof(float)) << "from the first to the last element";
    const std::vector<float> span = read<float>(block, 7 * kCols + 8);
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c)
            EXPECT_EQ(span[static_cast<std::size_t>(r) * kCols + c], m[static_cast<std::size_t>(r + 2) * kCols + 4 + c])
                << "element (" << r << ", " << c << ")";

    // Rows reversed (a negative stride from the last row): the span is the whole matrix.
    const std::int64_t reversed[] = {-kCols, 1};
    layout.strides = reversed;
    const std::int64_t full[] = {kRows, kCols};
    layout.shape = full;
    layout.byte_offset = std::uint64_t{kRows - 1} * kCols * sizeof(float);
    DLManagedTensorVersioned *rt = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_export(b, &layout, &rt));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(rt->dl_tensor.data), address_of(b) + layout.byte_offset);
    cucore_buffer_t *whole = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_import(rt, &whole));
    EXPECT_EQ(address_of(whole), address_of(b));
    EXPECT_EQ(size_of(whole), kBytes);
    EXPECT_EQ(read<float>(whole, m.size()), m);

    // One row more than the buffer holds is refused before anything is made.
    layout.byte_offset = 0;
    layout.strides = nullptr;
    const std::int64_t too_many[] = {kRows + 1, kCols};
    layout.shape = too_many;
    DLManagedTensorVersioned *bad = nullptr;
    CUCORE_EXPECT_STATUS(cucore_dlpack_export(b, &layout, &bad), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(bad, nullptr);

    cucore_buffer_release(b);
    cucore_buffer_release(block);
    EXPECT_GE(pool_used(), kBytes) << "the reversed import still holds it";
    cucore_buffer_release(whole);
    EXPECT_EQ(pool_used(), 0u);
}

// A producer's tensor over raw cuMemAlloc memory: its deleter frees it.
struct RawTensor {
    DLManagedTensorVersioned tensor{};
    std::int64_t shape[1] = {0};
    CUcontext context = nullptr;
    std::atomic<int> deleted{0};
    CUresult freed = CUDA_ERROR_UNKNOWN;

    static void deleter(DLManagedTensorVersioned *self) {
        auto *owner = static_cast<RawTensor *>(self->manager_ctx);
        gpu::ScopedContext scope(owner->context);
        owner->freed = cu().MemFree(reinterpret_cast<CUdeviceptr>(self->dl_tensor.data));
        owner->deleted.fetch_add(1);
    }
};

TEST_F(DLPackTest, ImportsATensorOverRawCuMemAlloc) {
    constexpr std::size_t n = 4096;
    CUdeviceptr raw = 0;
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) * 0.5f - 100.0f;
    {
        gpu::ScopedContext scope(primary_);
        CU_ASSERT_OK(cu().MemAlloc(&raw, n * sizeof(float)));
        CU_ASSERT_OK(cu().MemcpyHtoD(raw, values.data(), n * sizeof(float)));
        CU_ASSERT_OK(cu().CtxSynchronize());
    }
    RawTensor producer;
    producer.context = primary_;
    producer.shape[0] = static_cast<std::int64_t>(n);
    DLManagedTensorVersioned &t = producer.tensor;
    t.version = DLPackVersion{1, 0};
    t.manager_ctx = &producer;
    t.deleter = &RawTensor::deleter;
    t.dl_tensor.data = reinterpret_cast<void *>(raw);
    t.dl_tensor.device = DLDevice{kDLCUDA, 0};
    t.dl_tensor.ndim = 1;
    t.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    t.dl_tensor.shape = producer.shape;

    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_import(&t, &b));
    EXPECT_EQ(address_of(b), static_cast<std::uint64_t>(raw));
    EXPECT_EQ(size_of(b), n * sizeof(float));
    int device_id = -1, device_ok = -1, host_ok = -1, managed = -1;
    CUCORE_ASSERT_OK(cucore_buffer_device_id(b, &device_id));
    CUCORE_ASSERT_OK(cucore_buffer_accessibility(b, &device_ok, &host_ok, &managed));
    EXPECT_EQ(device_id, 0);
    EXPECT_EQ((std::vector<int>{device_ok, host_ok, managed}), (std::vector<int>{1, 0, 0}));
    EXPECT_EQ(read<float>(b, n), values) << "the producer's data, read through libcucore";

    // Written through libcucore (a fill and a copy into a view), read through the raw driver.
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x3F800000u, 4, s_));  // 1.0f
    cucore_buffer_t *tail = nullptr;
    CUCORE_ASSERT_OK(cucore_buffer_view(b, (n - 16) * sizeof(float), 16 * sizeof(float), &tail));
    const std::vector<float> last(values.end() - 16, values.end());
    write(tail, last);
    std::vector<float> expected(n, 1.0f);
    std::copy(last.begin(), last.end(), expected.end() - 16);
    EXPECT_EQ(raw_read(raw, n), expected);

    // The deleter runs once, when the buffer and its view are both gone.
    cucore_buffer_release(b);
    EXPECT_EQ(producer.deleted.load(), 0) << "the view keeps the tensor";
    cucore_buffer_release(tail);
    EXPECT_EQ(producer.deleted.load(), 1);
    EXPECT_EQ(producer.freed, CUDA_SUCCESS) << "cuMemFree in the deleter";

    // Re-exported through libcucore, then imported: the deleter still runs once.
    RawTensor second;
    second.context = primary_;
    second.shape[0] = 16;
    {
        gpu::ScopedContext scope(primary_);
        CU_ASSERT_OK(cu().MemAlloc(&raw, 16 * sizeof(float)));
    }
    second.tensor = t;
    second.tensor.manager_ctx = &second;
    second.tensor.dl_tensor.data = reinterpret_cast<void *>(raw);
    second.tensor.dl_tensor.shape = second.shape;
    CUCORE_ASSERT_OK(cucore_dlpack_import(&second.tensor, &b));
    DLManagedTensorVersioned *again = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_export(b, nullptr, &again));
    EXPECT_EQ(again->dl_tensor.shape[0], static_cast<std::int64_t>(16 * sizeof(float)));
    cucore_buffer_release(b);
    EXPECT_EQ(second.deleted.load(), 0);
    again->deleter(again);
    EXPECT_EQ(second.deleted.load(), 1);
    EXPECT_EQ(second.freed, CUDA_SUCCESS);
}

TEST_F(DLPackTest, PinnedAndManagedMemoryHaveTheirDeviceTypes) {
    cucore_memory_resource_t *pinned = nullptr;
    CUCORE_ASSERT_OK(cucore_legacy_pinned_memory_resource_create(dev_, &pinned));
    cucore_buffer_t *host = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(pinned, 256, nullptr, &host));
    DLManagedTensorVersioned *t = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_export(host, nullptr, &t));
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDAHost);
    EXPECT_EQ(t->dl_tensor.device.device_id, 0);
    // Page-locked memory is the host's: written through the tensor's pointer, read through the library.
    std::memset(t->dl_tensor.data, 0x5C, 256);
    const std::vector<std::uint8_t> got = read<std::uint8_t>(host, 256);
    EXPECT_EQ(got, std::vector<std::uint8_t>(256, 0x5C));
    cucore_buffer_t *back = nullptr;
    CUCORE_ASSERT_OK(cucore_dlpack_import(t, &back));
    int device_ok = 0, host_ok = 0;
    CUCORE_ASSERT_OK(cucore_buffer_accessibility(back, &device_ok, &host_ok, nullptr));
    EXPECT_EQ(device_ok, 1);
    EXPECT_EQ(host_ok, 1);
    cucore_buffer_release(back);
    cucore_buffer_release(host);
    cucore_memory_resource_release(pinned);

    // Managed memory of both kinds: cuMemAllocManaged (the default) and a managed pool.
    for (std::uint32_t use_pool : {0u, 1u}) {
        SCOPED_TRACE(use_pool ? "a managed pool" : "cuMemAllocManaged");
        cucore_managed_memory_resource_options_t o = CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT;
        o.use_pool = use_pool;
        cucore_memory_resource_t *managed = nullptr;
        const cucore_status_t st = cucore_managed_memory_resource_create(dev_, &o, &managed);
        if (st == CUCORE_ERROR_NOT_SUPPORTED) {
            std::printf("[   INFO   ] managed part (use_pool %u) skipped: %s\n", static_cast<unsigned>(use_pool),
                        cucore_last_error_message());
            continue;
        }
        CUCORE_ASSERT_OK(st);
        cucore_buffer_t *m = nullptr;
        CUCORE_ASSERT_OK(cucore_memory_resource_allocate(managed, 1024, s_, &m));
        CUCORE_ASSERT_OK(cucore_buffer_fill(m, 0x11223344u, 4, s_));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        DLManagedTensor *lt = nullptr;
        CUCORE_ASSERT_OK(cucore_dlpack_export_legacy(m, nullptr, &lt));
        EXPECT_EQ(lt->dl_tensor.device.device_type, kDLCUDAManaged);
        EXPECT_EQ(lt->dl_tensor.device.device_id, 0);
        std::uint32_t word = 0;
        std::memcpy(&word, static_cast<const char *>(lt->dl_tensor.data) + 1020, 4);  // managed: host-readable
        EXPECT_EQ(word, 0x11223344u);
        cucore_buffer_release(m);
        lt->deleter(lt);
        cucore_memory_resource_release(managed);
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    }
}

TEST_F(DLPackTest, FacadeExportsAndImportsDeviceBuffers) {
    namespace dl = cucore::dlpack;
    const cucore::Stream s = cucore::Stream::borrow(s_);
    const cucore::MemoryResource mr = cucore::MemoryResource::borrow(pool_);
    const std::vector<float> m = matrix(16, 16, 3.0f);
    cucore::Buffer b = mr.allocate(m.size() * sizeof(float), s);
    b.copy_from_host(m, s);
    cucore::DLPackTensor t = dl::export_tensor(b, cucore::DLPackLayout::of<float>({16, 16}).strides({1, 16}));  // the transpose
    EXPECT_EQ(t.tensor().strides[0], 1);
    EXPECT_EQ(dl::device(b).device_type, kDLCUDA);
    b.close();
    cucore::Buffer back = dl::from_dlpack(std::move(t));
    EXPECT_FALSE(t);
    std::vector<float> got(m.size());
    back.copy_to_host(got, s);
    s.synchronize();
    EXPECT_EQ(got, m) << "the closed buffer's memory lives on in the tensor";
}

}  // namespace
