// Fuzzes DLPack tensors from a foreign producer (cucore/dlpack.h):
// cucore_dlpack_import / _import_legacy of a DLManagedTensor(Versioned) whose
// version, device, dtype, ndim, shape, strides, data and byte_offset come from
// the input; and, in a second mode, cucore_dlpack_export of a real buffer with
// a fuzzed layout. Ownership rules are checked: the deleter runs exactly once,
// after the last holder (buffer or view) goes, and never when the import fails.
//
// Oracles, import: a failure is INVALID_ARGUMENT or NOT_SUPPORTED, leaves NULL
// and does not call the deleter; a success has a sane tensor (major 1, bits a
// positive multiple of 8, lanes >= 1, 0 <= ndim <= 32, shapes >= 0, a device
// type libcucore imports), covers exactly the bytes the elements span
// (computed here in 128-bit arithmetic), and answers the tensor's device; a
// small well-formed tensor always imports. Export: a success reaches only
// bytes inside the buffer. Nothing outlives an input.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cucore/dlpack.h"
#include "fuzz_support.hpp"

namespace {

constexpr uint64_t kBufferSize = 4096;
cucore_device_t *g_device = nullptr;
cucore_stream_t *g_stream = nullptr;
cucore_buffer_t *g_buffer = nullptr;  // for the export mode
fuzz::Balance g_baseline;
alignas(64) unsigned char g_host[kBufferSize];  // kDLCPU data that exists

int g_deleted = 0;
void *g_deleted_tensor = nullptr;
void delete_versioned(DLManagedTensorVersioned *t) {
    ++g_deleted;
    g_deleted_tensor = t;
}
void delete_legacy(DLManagedTensor *t) {
    ++g_deleted;
    g_deleted_tensor = t;
}

int64_t pick_extent(FuzzedDataProvider &in, bool allow_negative) {
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
        case 0: return 0;
        case 1: return 1;
        case 2: return in.ConsumeIntegralInRange<int64_t>(2, 16);
        case 3: return in.ConsumeIntegralInRange<int64_t>(17, 1 << 12);
        case 4: return allow_negative ? -in.ConsumeIntegralInRange<int64_t>(1, 16) : 3;
        case 5: return INT64_MAX;
        case 6: return INT64_MIN;
        case 7: return int64_t{1} << in.ConsumeIntegralInRange<int>(20, 62);
        default: return in.ConsumeIntegral<int64_t>();
    }
}

struct Shape {
    DLDataType dtype{};
    int32_t ndim = 0;
    std::vector<int64_t> shape, strides;
    bool shape_null = false, strides_null = true;
    bool small = true;  // well-formed and far from any overflow
};

Shape pick_shape(FuzzedDataProvider &in) {
    Shape s;
    s.dtype.code = in.ConsumeIntegral<uint8_t>();
    static const uint8_t bits[] = {8, 16, 32, 64, 128, 0, 1, 4, 12, 255};
    s.dtype.bits = in.ConsumeBool() ? bits[in.ConsumeIntegralInRange<int>(0, 9)] : in.ConsumeIntegral<uint8_t>();
    const int lanes_choice = in.ConsumeIntegralInRange<int>(0, 3);
    s.dtype.lanes = lanes_choice == 0 ? 0 : lanes_choice == 3 ? in.ConsumeIntegral<uint16_t>() : lanes_choice;
    s.small = s.dtype.bits >= 8 && s.dtype.bits <= 64 && s.dtype.bits % 8 == 0 && s.dtype.lanes >= 1 &&
              s.dtype.lanes <= 2;
    const int nd = in.ConsumeIntegralInRange<int>(0, 10);
    s.ndim = nd < 8 ? nd : nd == 8 ? in.ConsumeIntegralInRange<int32_t>(-3, 40) : in.ConsumeIntegral<int32_t>();
    s.small = s.small && s.ndim >= 0 && s.ndim <= 4;
    // The producer's arrays have ndim entries (capped: libcucore must not
    // read past entry 32 of a tensor it refuses for ndim > 32).
    const size_t n = static_cast<size_t>(std::clamp<int32_t>(s.ndim, 0, 40));
    s.shape_null = s.ndim > 0 && in.ConsumeIntegralInRange<int>(0, 15) == 0;
    s.small = s.small && !s.shape_null;
    for (size_t i = 0; i < n; ++i) {
        s.shape.push_back(pick_extent(in, true));
        s.small = s.small && s.shape.back() >= 0 && s.shape.back() <= 16;
    }
    s.strides_null = in.ConsumeBool();
    if (!s.strides_null)
        for (size_t i = 0; i < n; ++i) {
            s.strides.push_back(pick_extent(in, true));
            s.small = s.small && s.strides.back() >= -16 && s.strides.back() <= 16;
        }
    return s;
}

// The span of the elements in bytes: [low, high) relative to the first
// element, or false when the tensor is empty (some extent 0).
bool span(const Shape &s, __int128 &low, __int128 &high) {
    const __int128 item = __int128{s.dtype.bits / 8} * s.dtype.lanes;
    for (int64_t e : s.shape)
        if (e == 0) return false;
    // Called for tensors libcucore accepted, whose arithmetic fits int64 at
    // every step; 128 bits overflowing here means it accepted one that does not.
    low = 0;
    high = item;
    __int128 compact = 1;
    std::vector<__int128> stride(s.shape.size());
    for (size_t d = s.shape.size(); d-- > 0;) {
        stride[d] = s.strides_null ? compact : __int128{s.strides[d]};
        if (s.strides_null)
            FUZZ_CHECK(!__builtin_mul_overflow(compact, std::max<int64_t>(s.shape[d], 1), &compact),
                       "accepted strides whose product overflows 128 bits");
    }
    for (size_t d = 0; d < s.shape.size(); ++d) {
        __int128 reach;
        FUZZ_CHECK(!__builtin_mul_overflow(__int128{s.shape[d]} - 1, stride[d], &reach) &&
                       !__builtin_mul_overflow(reach, item, &reach),
                   "accepted an extent that overflows 128 bits");
        FUZZ_CHECK(!__builtin_add_overflow(reach < 0 ? low : high, reach, reach < 0 ? &low : &high),
                   "accepted a span that overflows 128 bits");
    }
    return true;
}

void import_one(FuzzedDataProvider &in) {
    const bool versioned = in.ConsumeBool();
    Shape s = pick_shape(in);
    DLTensor t{};
    // DLPack's types include kDLOpenCL 4, kDLVulkan 7, kDLOneAPI 14, kDLHexagon 16, kDLMAIA 17.
    static const int32_t types[] = {kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, 0, 4, 7, 14, 16, 17};
    const int type_choice = in.ConsumeIntegralInRange<int>(0, 10);
    // Stored as the int32 a C producer writes; never loaded here as the enum
    // (the header's DLDeviceType names only the types libcucore uses).
    const int32_t device_type = type_choice < 10 ? types[type_choice] : in.ConsumeIntegral<int8_t>();
    static_assert(sizeof(t.device.device_type) == sizeof(int32_t));
    // Any int a producer may write, DLPack's newer types (kDLHexagon 16, kDLMAIA 17) among them.
    std::memcpy(&t.device.device_type, &device_type, sizeof device_type);
    const int id_choice = in.ConsumeIntegralInRange<int>(0, 4);
    t.device.device_id = id_choice < 2 ? id_choice : id_choice == 2 ? -1 : id_choice == 3 ? 2 : in.ConsumeIntegral<int32_t>();
    t.ndim = s.ndim;
    t.dtype = s.dtype;
    t.shape = s.shape_null ? nullptr : s.shape.data();
    t.strides = s.strides_null ? nullptr : s.strides.data();
    const int data_choice = in.ConsumeIntegralInRange<int>(0, 3);
    t.data = data_choice == 0   ? nullptr
             : data_choice == 3 ? reinterpret_cast<void *>(in.ConsumeIntegral<uintptr_t>())
                                : static_cast<void *>(g_host + 1024);
    const int offset_choice = in.ConsumeIntegralInRange<int>(0, 3);
    t.byte_offset = offset_choice == 0 ? 0 : offset_choice == 3 ? in.ConsumeIntegral<uint64_t>() : in.ConsumeIntegralInRange<uint64_t>(0, 64);
    const bool deleter = in.ConsumeBool();
    const uint32_t major = in.ConsumeIntegralInRange<int>(0, 7) ? 1 : in.ConsumeIntegral<uint32_t>();
    const bool make_view = in.ConsumeBool();

    DLManagedTensorVersioned v{};
    DLManagedTensor l{};
    void *tensor;
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(uintptr_t{1});
    cucore_status_t st;
    g_deleted = 0;
    g_deleted_tensor = nullptr;
    if (versioned) {
        v.version = {major, in.ConsumeIntegral<uint32_t>()};
        v.flags = in.ConsumeIntegral<uint64_t>();
        v.dl_tensor = t;
        v.deleter = deleter ? delete_versioned : nullptr;
        tensor = &v;
        st = cucore_dlpack_import(&v, &b);
    } else {
        l.dl_tensor = t;
        l.deleter = deleter ? delete_legacy : nullptr;
        tensor = &l;
        st = cucore_dlpack_import_legacy(&l, &b);
    }
    const bool device_ok = device_type == kDLCPU || device_type == kDLCUDAHost ||
                           ((device_type == kDLCUDA || device_type == kDLCUDAManaged) &&
                            t.device.device_id >= 0 && t.device.device_id < 2);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(b == nullptr, "failed import left the out-pointer set");
        FUZZ_CHECK(st == CUCORE_ERROR_INVALID_ARGUMENT || st == CUCORE_ERROR_NOT_SUPPORTED, "import returned %s",
                   cucore_status_string(st));
        FUZZ_CHECK(g_deleted == 0, "failed import called the deleter");
        // A small well-formed tensor with data of its own must import.
        FUZZ_CHECK(!(s.small && (!versioned || major == 1) && device_ok && data_choice == 1 && offset_choice != 3),
                   "a small well-formed tensor was refused");
        return;
    }
    FUZZ_CHECK(b != nullptr, "import succeeded with no buffer");
    FUZZ_CHECK(!versioned || major == 1, "imported DLPack major version %u", major);
    FUZZ_CHECK(s.dtype.bits > 0 && s.dtype.bits % 8 == 0 && s.dtype.lanes >= 1, "imported a bad dtype");
    FUZZ_CHECK(s.ndim >= 0 && s.ndim <= CUCORE_DLPACK_MAX_NDIM && !(s.ndim > 0 && s.shape_null), "imported ndim %d",
               s.ndim);
    for (int64_t e : s.shape) FUZZ_CHECK(e >= 0, "imported a negative extent");
    FUZZ_CHECK(device_ok, "imported device type %d id %d", device_type, t.device.device_id);
    uint64_t size = 0, address = 0;
    FUZZ_OK(cucore_buffer_size(b, &size));
    FUZZ_OK(cucore_buffer_address(b, &address));
    __int128 low = 0, high = 0;
    const unsigned __int128 first = (unsigned __int128)reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
    if (span(s, low, high)) {
        FUZZ_CHECK(t.data != nullptr, "imported elements at NULL");
        FUZZ_CHECK(__int128(size) == high - low, "buffer of %llu bytes, elements span %lld",
                   (unsigned long long)size, (long long)(high - low));
        FUZZ_CHECK((unsigned __int128)address == first + low, "buffer address does not start at the lowest element");
        FUZZ_CHECK((unsigned __int128)address + size <= ((unsigned __int128)1 << 64), "buffer wraps the address space");
    } else {
        FUZZ_CHECK(size == 0, "empty tensor imported as %llu bytes", (unsigned long long)size);
    }
    int32_t type = -1, id = -1;
    FUZZ_OK(cucore_dlpack_device(b, &type, &id));
    FUZZ_CHECK(type == device_type, "device type %d, tensor's %d", type, device_type);
    if (type == kDLCUDA || type == kDLCUDAManaged) FUZZ_CHECK(id == t.device.device_id, "device id %d", id);
    cucore_buffer_t *view = nullptr;
    if (make_view && size > 0) FUZZ_OK(cucore_buffer_view(b, 0, size, &view));
    FUZZ_CHECK(g_deleted == 0, "deleter ran while the buffer lives");
    FUZZ_OK(cucore_buffer_release(b));
    if (view) {
        FUZZ_CHECK(g_deleted == 0, "deleter ran while a view lives");
        FUZZ_OK(cucore_buffer_release(view));
    }
    FUZZ_CHECK(g_deleted == (deleter ? 1 : 0), "deleter ran %d times", g_deleted);
    FUZZ_CHECK(!deleter || g_deleted_tensor == tensor, "deleter got another tensor");
}

void export_one(FuzzedDataProvider &in) {
    Shape s = pick_shape(in);
    cucore_dlpack_layout_t layout = CUCORE_DLPACK_LAYOUT_INIT;
    layout.read_only = in.ConsumeIntegral<uint32_t>();
    layout.dtype = s.dtype;
    layout.ndim = s.ndim;
    layout.shape = s.shape_null ? nullptr : s.shape.data();
    layout.strides = s.strides_null ? nullptr : s.strides.data();
    layout.byte_offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, kBufferSize + 8)
                                          : in.ConsumeIntegral<uint64_t>();
    const bool legacy = in.ConsumeBool();
    DLManagedTensorVersioned *v = reinterpret_cast<DLManagedTensorVersioned *>(uintptr_t{1});
    DLManagedTensor *l = reinterpret_cast<DLManagedTensor *>(uintptr_t{1});
    const cucore_status_t st =
        legacy ? cucore_dlpack_export_legacy(g_buffer, &layout, &l) : cucore_dlpack_export(g_buffer, &layout, &v);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK((legacy ? (void *)l : (void *)v) == nullptr, "failed export left the out-pointer set");
        FUZZ_CHECK(st == CUCORE_ERROR_INVALID_ARGUMENT, "export returned %s", cucore_status_string(st));
        return;
    }
    const DLTensor &t = legacy ? l->dl_tensor : v->dl_tensor;
    FUZZ_CHECK(t.ndim == s.ndim, "exported ndim %d, asked %d", t.ndim, s.ndim);
    for (int d = 0; d < t.ndim; ++d) FUZZ_CHECK(t.shape[d] == s.shape[d], "exported another shape");
    __int128 low = 0, high = 0;
    if (span(s, low, high)) {
        // Every reachable element lies in the buffer.
        FUZZ_CHECK(__int128(layout.byte_offset) + low >= 0 && __int128(layout.byte_offset) + high <= __int128(kBufferSize),
                   "exported elements outside the buffer: [%lld, %lld) at offset %llu", (long long)low,
                   (long long)high, (unsigned long long)layout.byte_offset);
    }
    if (legacy)
        l->deleter(l);
    else
        v->deleter(v);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fake::install(2);
    FUZZ_OK(cucore_device_get(0, &g_device));
    FUZZ_OK(cucore_stream_create(g_device, nullptr, &g_stream));
    FUZZ_OK(cucore_device_allocate(g_device, kBufferSize, g_stream, &g_buffer));
    g_baseline = fuzz::Balance::now();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    if (in.ConsumeIntegralInRange<int>(0, 3) == 0)
        export_one(in);
    else
        import_one(in);
    fuzz::Balance::now().expect_equal(g_baseline);
    return 0;
}
