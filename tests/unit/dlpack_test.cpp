// DLPack export and import against the fake driver (whose "device" memory is
// host memory): layout validation, what a tensor describes, round trips of
// host memory, and who frees what, when: an export keeps the buffer's memory
// until its deleter runs; an import calls the tensor's deleter once, after the
// buffer and all its views are gone, and never when the import fails.
#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <cucore/dlpack.hpp>

#include "test_support.hpp"

namespace {

// A producer's tensor (as PyTorch or NumPy would hand one over): the memory, the
// shape and strides live in the producer; the deleter counts its calls.
struct Producer {
    std::vector<float> data;
    int64_t shape[4] = {};
    int64_t strides[4] = {};
    std::atomic<int> deleted{0};
    DLManagedTensorVersioned versioned{};
    DLManagedTensor legacy{};

    explicit Producer(size_t n = 12) : data(n) {
        std::iota(data.begin(), data.end(), 1.0f);
        for (DLTensor *t : {&versioned.dl_tensor, &legacy.dl_tensor}) {
            t->data = data.data();
            t->device = DLDevice{kDLCPU, 0};
            t->ndim = 2;
            t->dtype = DLDataType{kDLFloat, 32, 1};
            t->shape = shape;
            t->strides = nullptr;
            t->byte_offset = 0;
        }
        shape[0] = 3;
        shape[1] = static_cast<int64_t>(n / 3);
        versioned.version = DLPackVersion{1, 0};
        versioned.manager_ctx = this;
        versioned.deleter = [](DLManagedTensorVersioned *self) {
            static_cast<Producer *>(self->manager_ctx)->deleted.fetch_add(1);
        };
        legacy.manager_ctx = this;
        legacy.deleter = [](DLManagedTensor *self) { static_cast<Producer *>(self->manager_ctx)->deleted.fetch_add(1); };
    }
    uint64_t address() const { return reinterpret_cast<uintptr_t>(data.data()); }
};

struct OwnerCounter {
    std::atomic<int> calls{0};
    static void callback(void *self) { static_cast<OwnerCounter *>(self)->calls.fetch_add(1); }
};

// A user resource whose memory is malloc'ed host memory described as the
// traits given (so every DLPack device type can be exported without a GPU).
struct HostArena {
    std::atomic<int> live{0};
    static cucore_status_t allocate(void *self, uint64_t size, cucore_stream_t *, uint64_t *address) {
        void *memory = std::malloc(size);
        if (!memory) return CUCORE_ERROR_OUT_OF_MEMORY;
        static_cast<HostArena *>(self)->live.fetch_add(1);
        *address = reinterpret_cast<uintptr_t>(memory);
        return CUCORE_SUCCESS;
    }
    static cucore_status_t deallocate(void *self, uint64_t address, uint64_t, cucore_stream_t *) {
        std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(address)));
        static_cast<HostArena *>(self)->live.fetch_sub(1);
        return CUCORE_SUCCESS;
    }
};

class DLPackTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        d_ = device(0);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &s_), CUCORE_SUCCESS);
        host_.resize(256);
        std::iota(host_.begin(), host_.end(), 0);
        ASSERT_EQ(cucore_buffer_from_handle(reinterpret_cast<uintptr_t>(host_.data()), host_.size(), nullptr,
                                            &OwnerCounter::callback, &owner_, &foreign_),
                  CUCORE_SUCCESS);
        fake::reset_calls();
    }
    void TearDown() override {
        cucore_buffer_release(foreign_);
        EXPECT_EQ(owner_.calls.load(), 1) << "the foreign owner is told once";
        cucore_stream_release(s_);
        cucore_device_release(d_);
        FakeDriverTest::TearDown();
    }
    cucore_buffer_t *pool_buffer(uint64_t size) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(d_, size, s_, &b), CUCORE_SUCCESS) << message();
        return b;
    }
    cucore_memory_resource_t *arena(int device_id, bool device_ok, bool host_ok, bool managed) {
        cucore_memory_resource_callbacks_t c{};
        c.struct_size = sizeof c;
        c.allocate = &HostArena::allocate;
        c.deallocate = &HostArena::deallocate;
        c.user_data = &arena_;
        c.device_id = device_id;
        c.device_accessible = device_ok;
        c.host_accessible = host_ok;
        c.managed = managed;
        cucore_memory_resource_t *mr = nullptr;
        EXPECT_EQ(cucore_user_memory_resource_create(&c, &mr), CUCORE_SUCCESS) << message();
        return mr;
    }
    std::vector<unsigned char> read(cucore_buffer_t *b, uint64_t offset, uint64_t size) {
        std::vector<unsigned char> out(size, 0xEE);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, offset, out.data(), size, s_), CUCORE_SUCCESS) << message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
        return out;
    }
    // Expects export of `layout` over foreign_ to fail with INVALID_ARGUMENT
    // and a message containing `text`, the out-pointer cleared, no driver call.
    void expect_rejected(const cucore_dlpack_layout_t &layout, const char *text) {
        SCOPED_TRACE(text);
        DLManagedTensorVersioned *t = reinterpret_cast<DLManagedTensorVersioned *>(0x1);
        EXPECT_EQ(cucore_dlpack_export(foreign_, &layout, &t), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(t, nullptr);
        EXPECT_EQ(message().rfind("cucore_dlpack_export:", 0), 0u) << message();
        EXPECT_NE(message().find(text), std::string::npos) << message();
        DLManagedTensor *l = reinterpret_cast<DLManagedTensor *>(0x1);
        EXPECT_EQ(cucore_dlpack_export_legacy(foreign_, &layout, &l), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(l, nullptr);
        EXPECT_NE(message().find(text), std::string::npos) << message();
        EXPECT_EQ(fake::calls(), 0);
    }
    static cucore_dlpack_layout_t layout(DLDataType dtype, int32_t ndim, const int64_t *shape,
                                         const int64_t *strides = nullptr, uint64_t byte_offset = 0) {
        cucore_dlpack_layout_t l{};
        l.struct_size = sizeof l;
        l.dtype = dtype;
        l.ndim = ndim;
        l.shape = shape;
        l.strides = strides;
        l.byte_offset = byte_offset;
        return l;
    }

    cucore_device_t *d_ = nullptr;
    cucore_stream_t *s_ = nullptr;
    std::vector<unsigned char> host_;
    OwnerCounter owner_;
    HostArena arena_;
    cucore_buffer_t *foreign_ = nullptr;  // 256 bytes of host_, owner told on release
};

constexpr DLDataType kFloat32{kDLFloat, 32, 1};
constexpr DLDataType kUInt8{kDLUInt, 8, 1};

// ---- layouts -------------------------------------------------------------------------

TEST_F(DLPackTest, LayoutsAreValidatedWithMessages) {
    const int64_t shape4x4[] = {4, 4};
    const int64_t shape8x9[] = {8, 9};  // 288 bytes of float: 32 more than the buffer
    expect_rejected(layout(DLDataType{kDLInt, 12, 1}, 2, shape4x4), "layout.dtype.bits is 12");
    expect_rejected(layout(DLDataType{kDLInt, 0, 1}, 2, shape4x4), "layout.dtype.bits is 0");
    expect_rejected(layout(DLDataType{kDLInt, 32, 0}, 2, shape4x4), "layout.dtype.lanes is 0");
    expect_rejected(layout(kFloat32, 33, shape4x4), "layout.ndim is 33");
    expect_rejected(layout(kFloat32, -1, shape4x4), "layout.ndim is -1");
    expect_rejected(layout(kFloat32, 2, nullptr), "layout.shape is NULL");
    const int64_t negative_dim[] = {4, -3};
    expect_rejected(layout(kFloat32, 2, negative_dim), "layout.shape[1] is -3");
    expect_rejected(layout(kFloat32, 2, shape8x9), "outside the buffer of 256 bytes");
    expect_rejected(layout(kFloat32, 2, shape4x4, nullptr, 193), "outside the buffer");  // 64 bytes from 193
    expect_rejected(layout(kUInt8, 0, nullptr, nullptr, 257), "layout.byte_offset (257) is past the end");
    // Negative strides reach below the first element: allowed only with room before it.
    const int64_t reversed[] = {-1};
    const int64_t sixteen[] = {16};
    expect_rejected(layout(kFloat32, 1, sixteen, reversed, 59), "below its first element");
    const int64_t huge[] = {int64_t{1} << 62, 4};
    expect_rejected(layout(kFloat32, 2, huge), "overflow");
    const int64_t big_stride[] = {INT64_MAX, 1};
    const int64_t two[] = {2, 1};
    expect_rejected(layout(kFloat32, 2, two, big_stride), "overflow");
    cucore_dlpack_layout_t ro = layout(kUInt8, 1, sixteen);
    ro.read_only = 2;
    expect_rejected(ro, "layout.read_only is 2");
    cucore_dlpack_layout_t unsized = layout(kUInt8, 1, sixteen);
    unsized.struct_size = 0;
    expect_rejected(unsized, "struct_size");

    // Fields from a newer header: accepted when zero, NOT_SUPPORTED otherwise.
    struct Newer {
        cucore_dlpack_layout_t layout;
        uint64_t extra;
    } newer{layout(kUInt8, 1, sixteen), 0};
    newer.layout.struct_size = sizeof newer;
    DLManagedTensorVersioned *t = nullptr;
    ASSERT_EQ(cucore_dlpack_export(foreign_, &newer.layout, &t), CUCORE_SUCCESS) << message();
    t->deleter(t);
    newer.extra = 1;
    EXPECT_EQ(cucore_dlpack_export(foreign_, &newer.layout, &t), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(t, nullptr);

    // Every reachable element inside is enough: the last byte exactly, negative
    // strides from an offset, broadcasting (stride 0), a zero-size tensor anywhere.
    const int64_t exact[] = {64};
    const int64_t zero_dims[] = {0, 1000000};
    const int64_t broadcast_strides[] = {0, 1};
    struct Case {
        cucore_dlpack_layout_t layout;
        const char *what;
    } accepted[] = {
        {layout(kFloat32, 1, exact), "64 floats fill 256 bytes"},
        {layout(kFloat32, 1, sixteen, reversed, 60), "reversed from the 16th float"},
        {layout(kFloat32, 2, shape4x4, broadcast_strides, 0), "broadcast rows"},
        {layout(kFloat32, 2, zero_dims, nullptr, 256), "no elements, at the end"},
        {layout(kUInt8, 0, nullptr, nullptr, 255), "a scalar at the last byte"},
        {layout(DLDataType{kDLFloat, 32, 4}, 1, sixteen), "16 float4 vectors"},
    };
    for (const Case &c : accepted) {
        SCOPED_TRACE(c.what);
        ASSERT_EQ(cucore_dlpack_export(foreign_, &c.layout, &t), CUCORE_SUCCESS) << message();
        t->deleter(t);
    }
    EXPECT_EQ(fake::calls(), 0) << "layouts are checked without the driver";
}

// ---- what an export describes ------------------------------------------------------------

TEST_F(DLPackTest, ExportDescribesTheBuffer) {
    const uint64_t base = reinterpret_cast<uintptr_t>(host_.data());
    DLManagedTensorVersioned *t = nullptr;
    ASSERT_EQ(cucore_dlpack_export(foreign_, nullptr, &t), CUCORE_SUCCESS) << message();
    EXPECT_EQ(t->version.major, 1u);
    EXPECT_EQ(t->flags, 0u);
    EXPECT_NE(t->deleter, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->dl_tensor.data), base);
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
    EXPECT_EQ(t->dl_tensor.device.device_id, 0);
    EXPECT_EQ(t->dl_tensor.ndim, 1);
    EXPECT_EQ(t->dl_tensor.dtype.code, kDLUInt);
    EXPECT_EQ(t->dl_tensor.dtype.bits, 8);
    EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
    EXPECT_EQ(t->dl_tensor.shape[0], 256);
    ASSERT_NE(t->dl_tensor.strides, nullptr) << "strides are always given";
    EXPECT_EQ(t->dl_tensor.strides[0], 1);
    EXPECT_EQ(t->dl_tensor.byte_offset, 0u);
    t->deleter(t);

    // A 2-D float layout: shape and strides copied (the caller's arrays may go),
    // compact strides filled in, the byte offset folded into data.
    int64_t shape[] = {3, 5};
    cucore_dlpack_layout_t l = layout(kFloat32, 2, shape, nullptr, 16);
    l.read_only = 1;
    ASSERT_EQ(cucore_dlpack_export(foreign_, &l, &t), CUCORE_SUCCESS) << message();
    shape[0] = shape[1] = 99;
    EXPECT_EQ(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->dl_tensor.data), base + 16);
    EXPECT_EQ(t->dl_tensor.byte_offset, 0u);
    EXPECT_EQ(t->dl_tensor.ndim, 2);
    EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
    EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
    EXPECT_EQ(std::vector<int64_t>(t->dl_tensor.shape, t->dl_tensor.shape + 2), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(std::vector<int64_t>(t->dl_tensor.strides, t->dl_tensor.strides + 2), (std::vector<int64_t>{5, 1}));

    DLManagedTensor *legacy = nullptr;
    const int64_t strides[] = {1, 3};  // column-major
    shape[0] = 3;
    shape[1] = 5;
    l.strides = strides;
    ASSERT_EQ(cucore_dlpack_export_legacy(foreign_, &l, &legacy), CUCORE_SUCCESS) << message();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(legacy->dl_tensor.data), base + 16);
    EXPECT_EQ(std::vector<int64_t>(legacy->dl_tensor.strides, legacy->dl_tensor.strides + 2),
              (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(legacy->dl_tensor.device.device_type, kDLCPU);
    legacy->deleter(legacy);
    t->deleter(t);

    // A scalar and a view: data is the view's address.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(foreign_, 100, 8, &view), CUCORE_SUCCESS);
    const cucore_dlpack_layout_t scalar = layout(DLDataType{kDLInt, 64, 1}, 0, nullptr);
    ASSERT_EQ(cucore_dlpack_export(view, &scalar, &t), CUCORE_SUCCESS) << message();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->dl_tensor.data), base + 100);
    EXPECT_EQ(t->dl_tensor.ndim, 0);
    const cucore_dlpack_layout_t too_big = layout(DLDataType{kDLInt, 64, 2}, 0, nullptr);
    DLManagedTensorVersioned *t2 = nullptr;
    EXPECT_EQ(cucore_dlpack_export(view, &too_big, &t2), CUCORE_ERROR_INVALID_ARGUMENT) << "16 bytes in a view of 8";
    t->deleter(t);
    cucore_buffer_release(view);

    // NULL out-pointers are named, before anything is made.
    fake::reset_calls();
    EXPECT_EQ(cucore_dlpack_export(foreign_, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'tensor'"), std::string::npos) << message();
    EXPECT_EQ(cucore_dlpack_export_legacy(foreign_, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'tensor'"), std::string::npos) << message();
    EXPECT_EQ(fake::calls(), 0);
}

TEST_F(DLPackTest, DeviceTypesFollowTheMemory) {
    struct Case {
        int device_id;
        bool device_ok, host_ok, managed;
        int32_t type, id;
    } cases[] = {
        {1, true, false, false, kDLCUDA, 1},        // device memory of device 1
        {-1, true, true, false, kDLCUDAHost, 0},    // page-locked host memory
        {0, true, true, true, kDLCUDAManaged, 0},   // managed memory
        {1, true, true, true, kDLCUDAManaged, 1},
        {-1, false, true, false, kDLCPU, 0},        // host memory only
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.type);
        cucore_memory_resource_t *mr = arena(c.device_id, c.device_ok, c.host_ok, c.managed);
        cucore_buffer_t *b = nullptr;
        ASSERT_EQ(cucore_memory_resource_allocate(mr, 64, nullptr, &b), CUCORE_SUCCESS) << message();
        int32_t type = -1, id = -1;
        ASSERT_EQ(cucore_dlpack_device(b, &type, &id), CUCORE_SUCCESS);
        EXPECT_EQ(type, c.type);
        EXPECT_EQ(id, c.id);
        DLManagedTensorVersioned *t = nullptr;
        ASSERT_EQ(cucore_dlpack_export(b, nullptr, &t), CUCORE_SUCCESS) << message();
        EXPECT_EQ(static_cast<int32_t>(t->dl_tensor.device.device_type), c.type);
        EXPECT_EQ(t->dl_tensor.device.device_id, c.id);
        // Imported back, the memory is described the same way.
        cucore_buffer_t *back = nullptr;
        ASSERT_EQ(cucore_dlpack_import(t, &back), CUCORE_SUCCESS) << message();
        int device_ok = -1, host_ok = -1, managed = -1, device_id = -9;
        ASSERT_EQ(cucore_buffer_accessibility(back, &device_ok, &host_ok, &managed), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_buffer_device_id(back, &device_id), CUCORE_SUCCESS);
        EXPECT_EQ(device_ok, c.device_ok ? 1 : 0);
        EXPECT_EQ(host_ok, c.host_ok ? 1 : 0);
        EXPECT_EQ(managed, c.managed ? 1 : 0);
        EXPECT_EQ(device_id, c.device_id);
        ASSERT_EQ(cucore_dlpack_device(back, &type, &id), CUCORE_SUCCESS);
        EXPECT_EQ(type, c.type);
        EXPECT_EQ(id, c.id);
        cucore_buffer_release(b);
        cucore_memory_resource_release(mr);
        EXPECT_EQ(arena_.live.load(), 1) << "the imported tensor keeps the memory";
        cucore_buffer_release(back);
        EXPECT_EQ(arena_.live.load(), 0);
    }
    // The fake driver's pool gives device memory; legacy pinned gives kDLCUDAHost.
    cucore_buffer_t *pool = pool_buffer(64);
    int32_t type = -1, id = -1;
    ASSERT_EQ(cucore_dlpack_device(pool, &type, &id), CUCORE_SUCCESS);
    EXPECT_EQ(type, kDLCUDA);
    EXPECT_EQ(id, 0);
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d_, &pinned), CUCORE_SUCCESS);
    cucore_buffer_t *host = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(pinned, 64, nullptr, &host), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_dlpack_device(host, &type, &id), CUCORE_SUCCESS);
    EXPECT_EQ(type, kDLCUDAHost);
    EXPECT_EQ(id, 0);
    ASSERT_EQ(cucore_dlpack_device(foreign_, &type, &id), CUCORE_SUCCESS);
    EXPECT_EQ(type, kDLCPU);
    EXPECT_EQ(cucore_dlpack_device(foreign_, nullptr, &id), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'device_type'"), std::string::npos) << message();
    EXPECT_EQ(cucore_dlpack_device(foreign_, &type, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'device_id'"), std::string::npos) << message();
    cucore_buffer_release(host);
    cucore_memory_resource_release(pinned);
    cucore_buffer_release(pool);
}

// ---- round trips ------------------------------------------------------------------------

TEST_F(DLPackTest, HostMemoryRoundTripsThroughExportAndImport) {
    // A 4x8 float matrix over the foreign host memory, exported, then imported.
    std::vector<float> values(64);
    std::iota(values.begin(), values.end(), 0.5f);
    std::memcpy(host_.data(), values.data(), 256);
    const int64_t shape[] = {4, 8};
    const cucore_dlpack_layout_t l = layout(kFloat32, 2, shape, nullptr, 64);  // floats 16..47
    DLManagedTensorVersioned *t = nullptr;
    ASSERT_EQ(cucore_dlpack_export(foreign_, &l, &t), CUCORE_SUCCESS) << message();
    cucore_buffer_t *imported = nullptr;
    ASSERT_EQ(cucore_dlpack_import(t, &imported), CUCORE_SUCCESS) << message();
    uint64_t address = 0, size = 0;
    ASSERT_EQ(cucore_buffer_address(imported, &address), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_size(imported, &size), CUCORE_SUCCESS);
    EXPECT_EQ(address, reinterpret_cast<uintptr_t>(host_.data()) + 64) << "zero-copy: the same memory";
    EXPECT_EQ(size, 4u * 8u * 4u);
    int device_id = 0;
    ASSERT_EQ(cucore_buffer_device_id(imported, &device_id), CUCORE_SUCCESS);
    EXPECT_EQ(device_id, -1);
    cucore_memory_resource_t *mr = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    ASSERT_EQ(cucore_buffer_memory_resource(imported, &mr), CUCORE_SUCCESS);
    EXPECT_EQ(mr, nullptr) << "imported memory has no resource";
    // The bytes read through the imported buffer are the floats 16..47.
    std::vector<unsigned char> bytes = read(imported, 0, size);
    std::vector<float> got(32);
    std::memcpy(got.data(), bytes.data(), 128);
    EXPECT_EQ(got, std::vector<float>(values.begin() + 16, values.begin() + 48));
    // Writes through the imported buffer land in the original memory.
    ASSERT_EQ(cucore_buffer_fill(imported, 0x7F, 1, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_NE(host_[63], 0x7F) << "only the tensor's bytes";
    EXPECT_EQ(host_[64], 0x7F);
    EXPECT_EQ(host_[191], 0x7F);
    EXPECT_NE(host_[192], 0x7F);

    // The same through the legacy functions.
    DLManagedTensor *legacy = nullptr;
    ASSERT_EQ(cucore_dlpack_export_legacy(imported, nullptr, &legacy), CUCORE_SUCCESS) << message();
    EXPECT_EQ(legacy->dl_tensor.shape[0], 128);
    cucore_buffer_t *again = nullptr;
    ASSERT_EQ(cucore_dlpack_import_legacy(legacy, &again), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_address(again, &address), CUCORE_SUCCESS);
    EXPECT_EQ(address, reinterpret_cast<uintptr_t>(host_.data()) + 64);
    EXPECT_EQ(read(again, 0, 4), std::vector<unsigned char>(4, 0x7F));

    // Release order does not matter; the foreign owner hears nothing until the
    // last import is gone (checked in TearDown: exactly once).
    cucore_buffer_release(imported);
    cucore_buffer_release(foreign_);
    foreign_ = nullptr;
    EXPECT_EQ(owner_.calls.load(), 0) << "the re-imported tensor still holds the memory";
    cucore_buffer_release(again);
    EXPECT_EQ(owner_.calls.load(), 1);
}

TEST_F(DLPackTest, ImportComputesTheSpanOfTheElements) {
    Producer p(12);  // 3 x 4 floats
    const uint64_t base = p.address();
    struct Case {
        int32_t ndim;
        int64_t shape[2];
        int64_t strides[2];
        bool has_strides;
        uint64_t byte_offset;
        uint64_t address, size;
        const char *what;
    } cases[] = {
        {2, {3, 4}, {0, 0}, false, 0, base, 48, "compact row-major"},
        {2, {3, 4}, {1, 3}, true, 0, base, 48, "column-major"},
        {2, {2, 2}, {4, 1}, true, 8, base + 8, 24, "a 2x2 block at [0, 2]"},
        {2, {3, 4}, {-4, 1}, true, 32, base, 48, "rows reversed from the last row"},
        {1, {4, 0}, {-1, 0}, true, 12, base, 16, "a reversed row"},
        {2, {3, 4}, {0, 1}, true, 0, base, 16, "broadcast rows"},
        {2, {0, 4}, {0, 0}, false, 4, base + 4, 0, "no elements"},
        {0, {0, 0}, {0, 0}, false, 44, base + 44, 4, "a scalar"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        p.versioned.dl_tensor.ndim = c.ndim;
        p.versioned.dl_tensor.shape = const_cast<int64_t *>(c.shape);
        p.versioned.dl_tensor.strides = c.has_strides ? const_cast<int64_t *>(c.strides) : nullptr;
        p.versioned.dl_tensor.byte_offset = c.byte_offset;
        cucore_buffer_t *b = nullptr;
        ASSERT_EQ(cucore_dlpack_import(&p.versioned, &b), CUCORE_SUCCESS) << message();
        uint64_t address = 0, size = 0;
        cucore_buffer_address(b, &address);
        cucore_buffer_size(b, &size);
        EXPECT_EQ(address, c.address);
        EXPECT_EQ(size, c.size);
        cucore_buffer_release(b);
    }
    EXPECT_EQ(p.deleted.load(), static_cast<int>(sizeof cases / sizeof cases[0])) << "one deleter call per import";
    // A zero-size tensor may have no data at all.
    const int64_t empty[] = {0};
    p.legacy.dl_tensor.ndim = 1;
    p.legacy.dl_tensor.shape = const_cast<int64_t *>(empty);
    p.legacy.dl_tensor.data = nullptr;
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_dlpack_import_legacy(&p.legacy, &b), CUCORE_SUCCESS) << message();
    uint64_t size = 9;
    cucore_buffer_size(b, &size);
    EXPECT_EQ(size, 0u);
    cucore_buffer_release(b);
    EXPECT_EQ(p.deleted.load(), 9);
}

// ---- ownership ---------------------------------------------------------------------------

TEST_F(DLPackTest, ImportedDeleterRunsOnceAfterTheBufferAndItsViews) {
    Producer p;
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_dlpack_import(&p.versioned, &b), CUCORE_SUCCESS) << message();
    cucore_buffer_t *view = nullptr, *inner = nullptr;
    ASSERT_EQ(cucore_buffer_view(b, 8, 16, &view), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_view(view, 4, 4, &inner), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_retain(b), CUCORE_SUCCESS);
    cucore_buffer_release(b);
    cucore_buffer_release(b);
    EXPECT_EQ(p.deleted.load(), 0) << "views keep the tensor";
    float value = 0;
    ASSERT_EQ(cucore_buffer_copy_to_host(inner, 0, &value, 4, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    EXPECT_EQ(value, 4.0f) << "bytes 12..16: the fourth float";
    ASSERT_EQ(cucore_buffer_close(view, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(p.deleted.load(), 0);
    cucore_buffer_release(view);
    EXPECT_EQ(p.deleted.load(), 0);
    cucore_buffer_release(inner);
    EXPECT_EQ(p.deleted.load(), 1);

    // close() lets go at once when nothing else holds the memory.
    ASSERT_EQ(cucore_dlpack_import_legacy(&p.legacy, &b), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(p.deleted.load(), 2);
    cucore_buffer_release(b);
    EXPECT_EQ(p.deleted.load(), 2) << "never twice";

    // A tensor without a deleter is fine too.
    p.versioned.deleter = nullptr;
    ASSERT_EQ(cucore_dlpack_import(&p.versioned, &b), CUCORE_SUCCESS) << message();
    cucore_buffer_release(b);
    EXPECT_EQ(p.deleted.load(), 2);
}

TEST_F(DLPackTest, FailedImportLeavesTheTensorWithTheCaller) {
    Producer p;
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
    auto expect_failure = [&](cucore_status_t expected, const char *text) {
        SCOPED_TRACE(text);
        b = reinterpret_cast<cucore_buffer_t *>(0x1);
        EXPECT_EQ(cucore_dlpack_import(&p.versioned, &b), expected) << message();
        EXPECT_EQ(b, nullptr);
        EXPECT_EQ(message().rfind("cucore_dlpack_import:", 0), 0u) << message();
        EXPECT_NE(message().find(text), std::string::npos) << message();
        b = reinterpret_cast<cucore_buffer_t *>(0x1);
        p.legacy.dl_tensor = p.versioned.dl_tensor;
        if (std::string(text).find("version") == std::string::npos) {
            EXPECT_EQ(cucore_dlpack_import_legacy(&p.legacy, &b), expected) << message();
            EXPECT_EQ(b, nullptr);
            EXPECT_NE(message().find(text), std::string::npos) << message();
        }
        EXPECT_EQ(p.deleted.load(), 0) << "a failed import never calls the deleter";
    };
    const DLTensor good = p.versioned.dl_tensor;
    p.versioned.version.major = 2;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "tensor->version is 2.0");
    p.versioned.version.major = 1;
    p.versioned.dl_tensor.dtype.bits = 4;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "tensor->dl_tensor.dtype.bits is 4");
    p.versioned.dl_tensor = good;
    p.versioned.dl_tensor.ndim = 40;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "tensor->dl_tensor.ndim is 40");
    p.versioned.dl_tensor = good;
    p.versioned.dl_tensor.shape = nullptr;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "tensor->dl_tensor.shape is NULL");
    p.versioned.dl_tensor = good;
    int64_t bad_shape[] = {3, -4};
    p.versioned.dl_tensor.shape = bad_shape;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "tensor->dl_tensor.shape[1] is -4");
    p.versioned.dl_tensor = good;
    p.versioned.dl_tensor.data = nullptr;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "data is NULL");
    p.versioned.dl_tensor = good;
    int64_t reversed[] = {-4, 1};
    p.versioned.dl_tensor.strides = reversed;
    p.versioned.dl_tensor.data = reinterpret_cast<void *>(16);
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "below address 0");
    p.versioned.dl_tensor = good;
    p.versioned.dl_tensor.byte_offset = UINT64_MAX - 8;
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "overflow");
    p.versioned.dl_tensor = good;
    p.versioned.dl_tensor.device = DLDevice{static_cast<DLDeviceType>(4), 0};  // kDLOpenCL
    expect_failure(CUCORE_ERROR_NOT_SUPPORTED, "device_type is 4");
    p.versioned.dl_tensor.device = DLDevice{kDLCUDA, 2};  // the fake driver has devices 0 and 1
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "device_id is 2");
    p.versioned.dl_tensor.device = DLDevice{kDLCUDAManaged, -1};
    expect_failure(CUCORE_ERROR_INVALID_ARGUMENT, "device_id is -1");
    EXPECT_EQ(cucore_dlpack_import(nullptr, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'tensor'"), std::string::npos) << message();
    EXPECT_EQ(cucore_dlpack_import_legacy(nullptr, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_dlpack_import(&p.versioned, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'buffer'"), std::string::npos) << message();
    EXPECT_EQ(cucore_dlpack_import_legacy(&p.legacy, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p.deleted.load(), 0);
    // The caller still owns it and frees it once.
    p.versioned.deleter(&p.versioned);
    EXPECT_EQ(p.deleted.load(), 1);

    // A CUDA tensor of an existing device imports as that device's memory.
    p.versioned.dl_tensor = good;
    p.versioned.dl_tensor.device = DLDevice{kDLCUDA, 1};
    ASSERT_EQ(cucore_dlpack_import(&p.versioned, &b), CUCORE_SUCCESS) << message();
    int device_id = -1;
    cucore_buffer_device_id(b, &device_id);
    EXPECT_EQ(device_id, 1);
    cucore_buffer_release(b);
    EXPECT_EQ(p.deleted.load(), 2);
}

TEST_F(DLPackTest, AnExportKeepsTheMemoryAfterTheBufferIsClosed) {
    cucore_buffer_t *b = pool_buffer(64);
    ASSERT_EQ(cucore_buffer_fill(b, 0xA5, 1, s_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS);
    DLManagedTensorVersioned *t = nullptr;
    ASSERT_EQ(cucore_dlpack_export(b, nullptr, &t), CUCORE_SUCCESS) << message();
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
    const int allocations = fake::counters().allocations;
    const size_t buffers = live(CUCORE_OBJECT_BUFFER);
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().allocations, allocations) << "the tensor keeps the memory";
    cucore_buffer_release(b);
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers - 1) << "the tensor holds the memory, not the buffer object";
    EXPECT_EQ(fake::counters().allocations, allocations);
    // The fake's device memory is host memory: the consumer still reads the bytes.
    const auto *bytes = static_cast<const unsigned char *>(t->dl_tensor.data);
    EXPECT_EQ(std::vector<unsigned char>(bytes, bytes + 64), std::vector<unsigned char>(64, 0xA5));
    fake::reset_calls();
    t->deleter(t);
    EXPECT_EQ(fake::counters().allocations, allocations - 1) << "the deleter frees it";
    std::vector<std::string> log = fake::call_log();
    EXPECT_NE(std::find(log.begin(), log.end(), "cuMemFreeAsync"), log.end()) << "on its deallocation stream";

    // Export of a closed buffer is INVALID_STATE.
    b = pool_buffer(16);
    ASSERT_EQ(cucore_buffer_close(b, nullptr), CUCORE_SUCCESS);
    t = reinterpret_cast<DLManagedTensorVersioned *>(0x1);
    EXPECT_EQ(cucore_dlpack_export(b, nullptr, &t), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(t, nullptr);
    EXPECT_NE(message().find("closed"), std::string::npos) << message();
    DLManagedTensor *legacy = reinterpret_cast<DLManagedTensor *>(0x1);
    EXPECT_EQ(cucore_dlpack_export_legacy(b, nullptr, &legacy), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(legacy, nullptr);
    cucore_buffer_release(b);

    // A foreign buffer's owner is told only after the tensor's deleter.
    ASSERT_EQ(cucore_dlpack_export_legacy(foreign_, nullptr, &legacy), CUCORE_SUCCESS);
    cucore_buffer_release(foreign_);
    foreign_ = nullptr;
    EXPECT_EQ(owner_.calls.load(), 0);
    legacy->deleter(legacy);
    EXPECT_EQ(owner_.calls.load(), 1);
}

TEST_F(DLPackTest, ExportsAndImportsChainAndDeletersRunOnAnyThread) {
    // Zero-size buffers export and import too.
    cucore_buffer_t *empty = pool_buffer(0);
    DLManagedTensorVersioned *t = nullptr;
    ASSERT_EQ(cucore_dlpack_export(empty, nullptr, &t), CUCORE_SUCCESS) << message();
    EXPECT_EQ(t->dl_tensor.shape[0], 0);
    cucore_buffer_t *back = nullptr;
    ASSERT_EQ(cucore_dlpack_import(t, &back), CUCORE_SUCCESS) << message();
    uint64_t size = 9;
    cucore_buffer_size(back, &size);
    EXPECT_EQ(size, 0u);
    cucore_buffer_release(back);
    cucore_buffer_release(empty);

    // export(import(export(b))) shares one allocation, freed once, after all of them.
    cucore_buffer_t *b = pool_buffer(32);
    const int allocations = fake::counters().allocations;
    DLManagedTensor *first = nullptr;
    ASSERT_EQ(cucore_dlpack_export_legacy(b, nullptr, &first), CUCORE_SUCCESS);
    cucore_buffer_t *imported = nullptr;
    ASSERT_EQ(cucore_dlpack_import_legacy(first, &imported), CUCORE_SUCCESS);
    DLManagedTensorVersioned *second = nullptr;
    ASSERT_EQ(cucore_dlpack_export(imported, nullptr, &second), CUCORE_SUCCESS);
    cucore_buffer_release(imported);
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().allocations, allocations);
    std::thread consumer([second] { second->deleter(second); });  // consumers free from anywhere
    consumer.join();
    EXPECT_EQ(fake::counters().allocations, allocations - 1);

    // Many threads exporting and freeing the same buffer.
    b = pool_buffer(128);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([b, &failures] {
            for (int k = 0; k < 200; ++k) {
                DLManagedTensorVersioned *x = nullptr;
                if (cucore_dlpack_export(b, nullptr, &x) != CUCORE_SUCCESS || x->dl_tensor.shape[0] != 128)
                    failures.fetch_add(1);
                else
                    x->deleter(x);
            }
        });
    for (std::thread &th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    cucore_buffer_release(b);
    EXPECT_EQ(fake::counters().allocations, allocations - 1);
}

// ---- the C++ façade ------------------------------------------------------------------------

TEST_F(DLPackTest, FacadeOwnsTensorsUntilTheyAreHandedOn) {
    namespace dl = cucore::dlpack;
    cucore::Buffer host = cucore::Buffer::borrow(foreign_);
    {
        cucore::DLPackTensor t = dl::export_tensor(host, cucore::DLPackLayout::of<float>({4, 16}).read_only());
        EXPECT_EQ(t.tensor().ndim, 2);
        EXPECT_EQ(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
        EXPECT_EQ(t.tensor().dtype.code, kDLFloat);
        cucore::DLPackTensor moved = std::move(t);
        EXPECT_FALSE(t);
        EXPECT_TRUE(moved);
        host.reset();
        cucore_buffer_release(foreign_);
        foreign_ = nullptr;
        EXPECT_EQ(owner_.calls.load(), 0) << "the tensor holds the memory";
    }  // the destructor calls the deleter
    EXPECT_EQ(owner_.calls.load(), 1);

    Producer p;
    cucore::DLPackTensor adopted(&p.versioned);
    cucore::Buffer imported = dl::from_dlpack(std::move(adopted));
    EXPECT_FALSE(adopted) << "the buffer owns it now";
    EXPECT_EQ(imported.address(), p.address());
    EXPECT_EQ(imported.size(), 48u);
    EXPECT_EQ(dl::device(imported).device_type, kDLCPU);
    cucore::DLPackTensor re = dl::export_tensor(imported, cucore::DLPackLayout(dl::dtype<float>(), 12).strides({1}));
    EXPECT_EQ(re.tensor().shape[0], 12);
    imported = cucore::Buffer();
    EXPECT_EQ(p.deleted.load(), 0) << "the re-export keeps it";
    re.reset();
    EXPECT_EQ(p.deleted.load(), 1);

    // A failed import leaves the tensor with its owner, which frees it.
    p.legacy.dl_tensor.dtype.lanes = 0;
    {
        cucore::LegacyDLPackTensor bad(&p.legacy);
        try {
            (void)dl::from_dlpack(std::move(bad));
            ADD_FAILURE() << "import of lanes 0 did not throw";
        } catch (const cucore::Error &e) {
            EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(e.what()).find("lanes"), std::string::npos) << e.what();
        }
        EXPECT_TRUE(bad);
        EXPECT_EQ(p.deleted.load(), 1);
    }
    EXPECT_EQ(p.deleted.load(), 2);
    try {
        cucore::DLPackLayout too_many(dl::dtype<std::uint8_t>(), std::vector<std::int64_t>(33, 1).data(), 33);
        ADD_FAILURE() << "33 dimensions did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
    }
    static_assert(dl::dtype<std::int16_t>().code == kDLInt && dl::dtype<std::int16_t>().bits == 16);
    static_assert(dl::dtype<bool>().code == kDLBool && dl::dtype<double>().bits == 64);
    static_assert(dl::dtype<std::complex<float>>().code == kDLComplex && dl::dtype<std::uint32_t>().code == kDLUInt);
}

}  // namespace
