// Fuzzes the options structs a caller hands in: cucore_program_options_t
// (every string, string array, count, toggle and flag, and struct_size) with
// cucore_program_create / _flags / cache_key / compile, and
// cucore_linker_options_t with cucore_linker_create / _link, over the fake
// NVRTC and nvJitLink of the unit tests; cucore_opaque_array_options_t with
// cucore_opaque_array_create / cucore_mipmapped_array_create;
// cucore_resource_descriptor_t and cucore_texture_object_options_t with
// cucore_texture_object_create / cucore_surface_object_create;
// cucore_opaque_array_copy_t with cucore_opaque_array_copy, over the fake
// driver's arrays; and the graph options: cucore_graph_complete_options_t with
// cucore_graph_definition_instantiate (a one-node definition made per input)
// and cucore_graph_builder_complete (a builder that captured one fill), and
// cucore_graph_alloc_options_t with cucore_graph_definition_add_alloc.
//
// The first byte taken (the input's last) chooses: odd, the linker; even,
// bits 1-3: 4 graphs, 5 arrays, 6 textures, 7 region copies, else a program
// (inputs of before the arrays keep their meaning but for those three values;
// inputs whose selector was 4 were programs before the graphs).
//
// Oracles: every call answers a status its header documents for it (never
// INTERNAL, never a crash or sanitizer report), a failure leaves NULL (and 0
// out-values), the cache key of a program is the same each time it is asked,
// and nothing outlives an input (library objects and the fake's driver
// objects, graphs, executables and user objects included). Enum-typed fields
// (toggles, backend, code type, array format and kind, resource kind,
// address, filter and read modes, graph memory type) get any 32-bit value,
// written as the bytes a C caller would store. Arrays: a created array
// describes itself as asked, its packed size is its rows x slices, and a small
// one round-trips bytes through host memory exactly. Textures and region
// copies: the library checks every field and side before the driver, so the
// (fake) driver never refuses one (no CUDA status). Graphs: what the library
// checks before the driver (a struct_size it cannot read, unknown complete
// flags, an upload stream of another device, a memory type out of range, size
// 0, more than 8 peers, a negative peer) is INVALID_ARGUMENT, never CUDA; a
// graph instantiated with accepted options runs its fill; an allocation node
// reports the address and size it was made with.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "fake_compilers.hpp"
#include "fuzz_support.hpp"

namespace {

fuzz::Balance g_baseline;
cucore_object_code_t *g_input = nullptr;  // a fake cubin for the linker
cucore_device_t *g_devices[2] = {};       // device 1 has no sparse arrays
cucore_stream_t *g_stream = nullptr;      // on device 0
cucore_memory_resource_t *g_pool = nullptr;  // device 0's default pool
cucore_buffer_t *g_buffer = nullptr;         // 4096 bytes of it, shared by every input (the fake keeps every
                                             // allocation it ever made: one per input would slow its counters)

// Strings and arrays that live while one input runs.
struct Strings {
    std::vector<std::string> storage;
    std::vector<std::vector<const char *>> arrays;
    std::vector<std::vector<uint32_t>> numbers;

    const char *text(FuzzedDataProvider &in) {
        if (in.ConsumeIntegralInRange<int>(0, 3) == 0) return nullptr;
        storage.reserve(256);  // pointers into it stay valid (at most 256 per input)
        if (storage.size() == 256) return "";
        storage.push_back(in.ConsumeRandomLengthString(64));
        return storage.back().c_str();
    }
    // An array and its count (sometimes NULL with a count, or with NULL entries).
    const char *const *array(FuzzedDataProvider &in, size_t &count) {
        const int choice = in.ConsumeIntegralInRange<int>(0, 7);
        count = in.ConsumeIntegralInRange<size_t>(0, 4);
        if (choice == 0) {
            count = 0;
            return nullptr;
        }
        if (choice == 1) return nullptr;  // NULL with a count
        arrays.emplace_back();
        for (size_t i = 0; i < count; ++i) arrays.back().push_back(choice == 2 ? text(in) : nonnull(in));
        return arrays.back().data();
    }
    const char *nonnull(FuzzedDataProvider &in) {
        const char *t = text(in);
        return t ? t : "x";
    }
    const uint32_t *codes(FuzzedDataProvider &in, size_t &count) {
        count = in.ConsumeIntegralInRange<size_t>(0, 3);
        if (count == 0 && in.ConsumeBool()) return nullptr;
        numbers.emplace_back();
        for (size_t i = 0; i < count; ++i) numbers.back().push_back(in.ConsumeIntegral<uint32_t>());
        return numbers.back().data();
    }
};

// Any 32-bit value, above INT32_MAX too: capi reads enum fields as integers first.
template <class Enum>
void set_raw(Enum &field, uint32_t value) {
    static_assert(sizeof(Enum) == sizeof(uint32_t));
    std::memcpy(&field, &value, sizeof value);
}
uint32_t toggle(FuzzedDataProvider &in) {
    return in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<uint32_t>(0, 2) : in.ConsumeIntegral<uint32_t>();
}
uint32_t flag(FuzzedDataProvider &in) {
    return in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<uint32_t>(0, 1) : in.ConsumeIntegral<uint32_t>();
}

// A struct_size a caller could pass: its own, an older (shorter) one, a newer
// (longer, the rest zero) one, or nonsense; the storage always has that size.
template <class T>
uint32_t pick_size(FuzzedDataProvider &in) {
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
        case 0: return 0;
        case 1: {
            // Any smaller size: one ending inside a field is refused (INVALID_ARGUMENT),
            // one between fields is an older caller's struct.
            const uint32_t n = in.ConsumeIntegralInRange<uint32_t>(1, sizeof(T) - 1);
            return n;
        }
        case 2: return sizeof(T) + in.ConsumeIntegralInRange<uint32_t>(1, 64);
        default: return sizeof(T);
    }
}

// As pick_size, with the caller's own size first (so that an input of zeros reaches past struct_size).
template <class T>
uint32_t pick_size_own_first(FuzzedDataProvider &in) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
        case 5: return 0;
        case 6: return in.ConsumeIntegralInRange<uint32_t>(1, sizeof(T) - 1);
        case 7: return sizeof(T) + in.ConsumeIntegralInRange<uint32_t>(1, 64);
        default: return sizeof(T);
    }
}
// The struct the library reads when given `size` bytes of `given`: the rest are its defaults.
template <class T>
T as_read(const T &given, uint32_t size, const T &defaults) {
    T out = defaults;
    std::memcpy(&out, &given, std::min<size_t>(size, sizeof(T)));
    return out;
}
// A small value mostly, at times one of `edges`, at times anything.
uint64_t extent(FuzzedDataProvider &in, uint64_t small, std::initializer_list<uint64_t> edges = {}) {
    const int choice = in.ConsumeIntegralInRange<int>(0, 15);
    if (choice < 12) return in.ConsumeIntegralInRange<uint64_t>(0, small);
    if (choice < 14 && edges.size()) return *(edges.begin() + in.ConsumeIntegralInRange<size_t>(0, edges.size() - 1));
    return in.ConsumeIntegral<uint64_t>();
}
// Any 32-bit float, finite mostly.
float any_float(FuzzedDataProvider &in) {
    if (in.ConsumeIntegralInRange<int>(0, 7)) return static_cast<float>(in.ConsumeIntegralInRange<int>(-64, 64)) / 4;
    const uint32_t bits = in.ConsumeIntegral<uint32_t>();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

#define EXPECT_STATUS(st, ...)                                                                           \
    do {                                                                                                 \
        const cucore_status_t allowed_[] = {__VA_ARGS__};                                                \
        bool ok_ = false;                                                                                \
        for (cucore_status_t a_ : allowed_) ok_ = ok_ || (st) == a_;                                     \
        FUZZ_CHECK(ok_, "line %d: undocumented status %s", __LINE__, cucore_status_string(st));         \
    } while (0)

void program(FuzzedDataProvider &in, Strings &s) {
    const uint32_t size = pick_size<cucore_program_options_t>(in);
    std::vector<unsigned char> storage(std::max<size_t>(size, sizeof(cucore_program_options_t)) + 8, 0);
    auto *o = reinterpret_cast<cucore_program_options_t *>(storage.data());
    *o = CUCORE_PROGRAM_OPTIONS_INIT;
    o->struct_size = size;
    o->name = s.text(in);
    static const char *arches[] = {"sm_90", "compute_90", "90", "sm_52", nullptr};
    o->arch = in.ConsumeBool() ? arches[in.ConsumeIntegralInRange<int>(0, 4)] : s.text(in);
    o->std = s.text(in);
    o->defines = s.array(in, o->define_count);
    o->undefines = s.array(in, o->undefine_count);
    o->include_paths = s.array(in, o->include_path_count);
    o->pre_includes = s.array(in, o->pre_include_count);
    o->header_names = s.array(in, o->header_count);
    size_t sources = 0;
    o->header_sources = s.array(in, sources);
    if (sources < o->header_count && o->header_sources) o->header_count = sources;  // arrays as long as the count
    if (o->header_count && o->header_names && !o->header_sources) o->header_sources = nullptr;
    o->debug = flag(in);
    o->lineinfo = flag(in);
    set_raw(o->device_code_optimize, toggle(in));
    o->use_fast_math = flag(in);
    set_raw(o->ftz, toggle(in));
    set_raw(o->prec_sqrt, toggle(in));
    set_raw(o->prec_div, toggle(in));
    set_raw(o->fma, toggle(in));
    o->extra_device_vectorization = flag(in);
    o->max_register_count = in.ConsumeBool() ? 0 : in.ConsumeIntegral<uint32_t>();
    o->relocatable_device_code = flag(in);
    o->extensible_whole_program = flag(in);
    o->link_time_optimization = flag(in);
    o->device_as_default_execution_space = flag(in);
    o->disable_warnings = flag(in);
    o->brief_diagnostics = flag(in);
    o->no_display_error_number = flag(in);
    o->diag_error = s.codes(in, o->diag_error_count);
    o->diag_suppress = s.codes(in, o->diag_suppress_count);
    o->diag_warn = s.codes(in, o->diag_warn_count);
    o->pch = flag(in);
    o->create_pch = s.text(in);
    o->use_pch = s.text(in);
    o->pch_dir = s.text(in);
    o->ptxas_options = s.array(in, o->ptxas_option_count);
    o->extra_options = s.array(in, o->extra_option_count);
    static const uint32_t types[] = {CUCORE_CODE_CXX, CUCORE_CODE_PTX, CUCORE_CODE_NVVM, 0, 4, 9};
    uint32_t type_value = in.ConsumeBool() ? CUCORE_CODE_CXX : types[in.ConsumeIntegralInRange<int>(0, 5)];
    cucore_code_type_t type;
    set_raw(type, type_value);
    const std::string code = in.ConsumeBool() ? "kernel k\nglobal g 8\n" : in.ConsumeRandomLengthString(128);
    const bool null_options = in.ConsumeIntegralInRange<int>(0, 15) == 0;

    cucore_program_t *p = reinterpret_cast<cucore_program_t *>(uintptr_t{1});
    cucore_status_t st = cucore_program_create(code.c_str(), 0, type, null_options ? nullptr : o, &p);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED,
                  CUCORE_ERROR_OUT_OF_MEMORY);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(p == nullptr, "failed program_create left the out-pointer set");
        return;
    }
    size_t length = 0;
    char flags[256];
    FUZZ_OK(cucore_program_flags(p, flags, sizeof flags, &length));
    FUZZ_CHECK(std::strlen(flags) == std::min(length, sizeof flags - 1), "program_flags length %zu for \"%s\"", length,
               flags);
    static const cucore_code_type_t targets[] = {CUCORE_CODE_PTX, CUCORE_CODE_CUBIN, CUCORE_CODE_LTOIR};
    const cucore_code_type_t target = targets[in.ConsumeIntegralInRange<int>(0, 2)];
    const char *names[] = {"k", "f<int>"};
    uint8_t k1[32], k2[32];
    st = cucore_program_cache_key(p, target, names, 2, k1);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED);
    if (st == CUCORE_SUCCESS) {
        FUZZ_OK(cucore_program_cache_key(p, target, names, 2, k2));
        FUZZ_CHECK(std::memcmp(k1, k2, 32) == 0, "the cache key changed between two calls");
    }
    cucore_object_code_t *oc = reinterpret_cast<cucore_object_code_t *>(uintptr_t{1});
    st = cucore_program_compile(p, target, names, in.ConsumeIntegralInRange<size_t>(0, 2), nullptr, &oc);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED,
                  CUCORE_ERROR_COMPILATION, CUCORE_ERROR_OUT_OF_MEMORY);
    if (st == CUCORE_SUCCESS)
        FUZZ_OK(cucore_object_code_release(oc));
    else
        FUZZ_CHECK(oc == nullptr, "failed compile left the out-pointer set");
    FUZZ_OK(cucore_program_release(p));
}

void linker(FuzzedDataProvider &in, Strings &s) {
    const uint32_t size = pick_size<cucore_linker_options_t>(in);
    std::vector<unsigned char> storage(std::max<size_t>(size, sizeof(cucore_linker_options_t)) + 8, 0);
    auto *o = reinterpret_cast<cucore_linker_options_t *>(storage.data());
    *o = CUCORE_LINKER_OPTIONS_INIT;
    o->struct_size = size;
    o->name = s.text(in);
    o->arch = in.ConsumeBool() ? "sm_90" : s.text(in);
    set_raw(o->backend, in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<uint32_t>(0, 5)
                                                             : in.ConsumeIntegral<uint32_t>());
    o->max_register_count = in.ConsumeBool() ? 0 : in.ConsumeIntegral<uint32_t>();
    o->optimization_level = in.ConsumeIntegralInRange<int>(0, 3) ? in.ConsumeIntegralInRange<uint32_t>(0, 5)
                                                                 : in.ConsumeIntegral<uint32_t>();
    o->debug = flag(in);
    o->lineinfo = flag(in);
    o->link_time_optimization = flag(in);
    set_raw(o->ftz, toggle(in));
    set_raw(o->prec_div, toggle(in));
    set_raw(o->prec_sqrt, toggle(in));
    set_raw(o->fma, toggle(in));
    o->verbose = flag(in);
    o->ptxas_options = s.array(in, o->ptxas_option_count);
    o->extra_options = s.array(in, o->extra_option_count);
    cucore_linker_t *l = reinterpret_cast<cucore_linker_t *>(uintptr_t{1});
    cucore_status_t st = cucore_linker_create(&g_input, 1, o, &l);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED,
                  CUCORE_ERROR_COMPILATION, CUCORE_ERROR_CUDA, CUCORE_ERROR_OUT_OF_MEMORY);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(l == nullptr, "failed linker_create left the out-pointer set");
        return;
    }
    cucore_object_code_t *oc = reinterpret_cast<cucore_object_code_t *>(uintptr_t{1});
    st = cucore_linker_link(l, in.ConsumeBool() ? CUCORE_CODE_CUBIN : CUCORE_CODE_PTX, &oc);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED,
                  CUCORE_ERROR_COMPILATION, CUCORE_ERROR_CUDA, CUCORE_ERROR_INVALID_STATE);
    if (st == CUCORE_SUCCESS)
        FUZZ_OK(cucore_object_code_release(oc));
    else
        FUZZ_CHECK(oc == nullptr, "failed link left the out-pointer set");
    FUZZ_OK(cucore_linker_release(l));
}

// ---- arrays, textures, region copies ----

constexpr uint32_t kFormats[] = {
    CUCORE_ARRAY_FORMAT_FLOAT32,      CUCORE_ARRAY_FORMAT_UINT8,       CUCORE_ARRAY_FORMAT_UINT16,
    CUCORE_ARRAY_FORMAT_UINT32,       CUCORE_ARRAY_FORMAT_INT8,        CUCORE_ARRAY_FORMAT_INT16,
    CUCORE_ARRAY_FORMAT_INT32,        CUCORE_ARRAY_FORMAT_FLOAT16,     CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2,
    CUCORE_ARRAY_FORMAT_BC1_UNORM,    CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, CUCORE_ARRAY_FORMAT_BC4_SNORM,
    CUCORE_ARRAY_FORMAT_BC5_UNORM,    CUCORE_ARRAY_FORMAT_BC6H_SF16,   CUCORE_ARRAY_FORMAT_BC7_UNORM,
    CUCORE_ARRAY_FORMAT_UNORM_INT8X1, CUCORE_ARRAY_FORMAT_UNORM_INT8X4, CUCORE_ARRAY_FORMAT_SNORM_INT16X2,
    CUCORE_ARRAY_FORMAT_UNSET,        0x04,                            0xb0 /* NV12 */};

uint32_t format(FuzzedDataProvider &in) {
    if (in.ConsumeIntegralInRange<int>(0, 15) == 15) return in.ConsumeIntegral<uint32_t>();
    return kFormats[in.ConsumeIntegralInRange<size_t>(0, std::size(kFormats) - 1)];
}
uint32_t small_enum(FuzzedDataProvider &in, uint32_t most) {
    return in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<uint32_t>(0, most) : in.ConsumeIntegral<uint32_t>();
}

void arrays(FuzzedDataProvider &in) {
    const uint32_t size = pick_size_own_first<cucore_opaque_array_options_t>(in);
    std::vector<unsigned char> storage(std::max<size_t>(size, sizeof(cucore_opaque_array_options_t)) + 8, 0);
    auto *o = reinterpret_cast<cucore_opaque_array_options_t *>(storage.data());
    *o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    o->struct_size = size;
    set_raw(o->format, format(in));
    o->num_channels = static_cast<uint32_t>(extent(in, 4));
    set_raw(o->kind, small_enum(in, 3));
    o->flags = in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<uint32_t>(0, 15) : in.ConsumeIntegral<uint32_t>();
    o->reserved0 = in.ConsumeIntegralInRange<int>(0, 15) ? 0 : in.ConsumeIntegral<uint32_t>();
    // Past the limits at times (2D 131072 x 65536, 3D 16384 or 8192 x 8192 x 32768, layered 2048, cubemap 2046).
    o->width = 1 + extent(in, 40, {131072, 131073, 32768, 32769, 16384, 16385, 8192, 8193});
    o->height = extent(in, 40, {65536, 65537, 32768, 32769, 16384, 8193});
    o->depth = extent(in, 8, {16384, 16385, 32768, 32769});
    o->layers = extent(in, 8, {2046, 2047, 2048, 2049});
    cucore_device_t *device = g_devices[in.ConsumeIntegralInRange<int>(0, 1)];
    const cucore_opaque_array_options_t defaults = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    const cucore_opaque_array_options_t read = as_read(*o, size, defaults);
    const bool null_options = in.ConsumeIntegralInRange<int>(0, 31) == 31;

    cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(uintptr_t{1});
    cucore_status_t st = cucore_opaque_array_create(device, null_options ? nullptr : o, &a);
    // CUDA: what the driver judges (DEPTH_TEXTURE of some formats); OUT_OF_MEMORY: more than the device has.
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED,
                  CUCORE_ERROR_OUT_OF_MEMORY, CUCORE_ERROR_CUDA);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(a == nullptr, "failed opaque_array_create left the out-pointer set");
    } else {
        cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        FUZZ_OK(cucore_opaque_array_info(a, &info));
        FUZZ_CHECK(info.format == read.format && info.kind == read.kind && info.flags == read.flags &&
                       info.width == read.width && info.height == read.height && info.depth == read.depth &&
                       info.layers == read.layers,
                   "the array describes itself otherwise than asked");
        FUZZ_CHECK(read.num_channels == 0 || info.num_channels == read.num_channels, "channels %u, asked %u",
                   info.num_channels, read.num_channels);
        FUZZ_CHECK(info.size_bytes == info.row_bytes * info.row_count * info.slice_count, "size_bytes %llu",
                   static_cast<unsigned long long>(info.size_bytes));
        void *raw = nullptr;
        FUZZ_OK(cucore_opaque_array_handle(a, &raw));
        const CUDA_ARRAY3D_DESCRIPTOR d = fake::array_descriptor(static_cast<CUarray>(raw));
        FUZZ_CHECK(d.Width == info.width && d.NumChannels == info.num_channels &&
                       static_cast<uint32_t>(d.Format) == static_cast<uint32_t>(info.format),
                   "the driver was given another description");
        if (info.size_bytes <= (64u << 10)) {  // small: bytes round-trip exactly
            std::vector<unsigned char> bytes(info.size_bytes), back(info.size_bytes, 0xEE);
            for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
            FUZZ_OK(cucore_opaque_array_copy_from_host(a, bytes.data(), bytes.size(), g_stream));
            FUZZ_OK(cucore_opaque_array_copy_to_host(a, back.data(), back.size(), g_stream));
            FUZZ_OK(cucore_stream_synchronize(g_stream));
            FUZZ_CHECK(bytes == back, "the packed bytes did not round-trip");
            const std::vector<unsigned char> *stored = fake::array_bytes(static_cast<CUarray>(raw));
            FUZZ_CHECK(stored && *stored == bytes, "the driver's packed layout differs from the library's");
        }
        FUZZ_OK(cucore_opaque_array_close(a));
        FUZZ_OK(cucore_opaque_array_release(a));
    }

    const uint32_t levels = in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<uint32_t>(0, 18)
                                                                 : in.ConsumeIntegral<uint32_t>();
    cucore_mipmapped_array_t *m = reinterpret_cast<cucore_mipmapped_array_t *>(uintptr_t{1});
    st = cucore_mipmapped_array_create(device, null_options ? nullptr : o, levels, &m);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_NOT_SUPPORTED,
                  CUCORE_ERROR_OUT_OF_MEMORY, CUCORE_ERROR_CUDA);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(m == nullptr, "failed mipmapped_array_create left the out-pointer set");
        return;
    }
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    FUZZ_OK(cucore_mipmapped_array_info(m, &info));
    FUZZ_CHECK(info.num_levels == levels, "%u levels, asked %u", info.num_levels, levels);
    cucore_opaque_array_t *last = nullptr;
    FUZZ_OK(cucore_mipmapped_array_level(m, levels - 1, &last));
    cucore_opaque_array_t *past = reinterpret_cast<cucore_opaque_array_t *>(uintptr_t{1});
    FUZZ_CHECK(cucore_mipmapped_array_level(m, levels, &past) == CUCORE_ERROR_INVALID_ARGUMENT && past == nullptr,
               "a level past the last was given");
    FUZZ_OK(cucore_mipmapped_array_release(m));
    FUZZ_OK(cucore_opaque_array_release(last));
}

// What a texture or surface may be made over in one input.
struct Resources {
    cucore_opaque_array_t *array = nullptr;
    cucore_mipmapped_array_t *mipmapped = nullptr;
    cucore_buffer_t *buffer = nullptr;  // 4096 bytes, or a view of them
    ~Resources() {
        cucore_buffer_release(buffer);
        cucore_mipmapped_array_release(mipmapped);
        cucore_opaque_array_release(array);
    }
};

void textures(FuzzedDataProvider &in) {
    struct Shape {
        cucore_array_format_t format;
        uint32_t channels;
        cucore_array_kind_t kind;
        uint64_t width, height, layers;
    };
    static const Shape shapes[] = {
        {CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_PLAIN, 16, 16, 0},
        {CUCORE_ARRAY_FORMAT_UINT8, 4, CUCORE_ARRAY_KIND_PLAIN, 32, 8, 0},
        {CUCORE_ARRAY_FORMAT_INT32, 2, CUCORE_ARRAY_KIND_LAYERED, 8, 0, 3},
        {CUCORE_ARRAY_FORMAT_UINT16, 1, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 8, 8, 2},
        {CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, 0, CUCORE_ARRAY_KIND_PLAIN, 16, 16, 0},
        {CUCORE_ARRAY_FORMAT_FLOAT16, 4, CUCORE_ARRAY_KIND_CUBEMAP, 16, 16, 0},
    };
    const Shape &shape = shapes[in.ConsumeIntegralInRange<size_t>(0, std::size(shapes) - 1)];
    const bool block = shape.format == CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB;
    cucore_opaque_array_options_t ao = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    ao.format = shape.format;
    ao.num_channels = shape.channels;
    ao.kind = shape.kind;
    ao.width = shape.width;
    ao.height = shape.height;
    ao.layers = shape.layers;
    ao.flags = !block && in.ConsumeBool() ? CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE : 0;
    Resources r;
    FUZZ_OK(cucore_opaque_array_create(g_devices[0], &ao, &r.array));
    FUZZ_OK(cucore_mipmapped_array_create(g_devices[0], &ao, 2, &r.mipmapped));
    if (in.ConsumeIntegralInRange<int>(0, 7) == 7) {  // a view, aligned or not
        FUZZ_OK(cucore_buffer_view(g_buffer, in.ConsumeBool() ? 512 : 16, 2048, &r.buffer));
    } else {
        FUZZ_OK(cucore_buffer_retain(g_buffer));
        r.buffer = g_buffer;
    }

    const uint32_t rsize = pick_size_own_first<cucore_resource_descriptor_t>(in);
    std::vector<unsigned char> rstorage(std::max<size_t>(rsize, sizeof(cucore_resource_descriptor_t)) + 8, 0);
    auto *rd = reinterpret_cast<cucore_resource_descriptor_t *>(rstorage.data());
    *rd = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    rd->struct_size = rsize;
    const uint32_t kind = in.ConsumeIntegralInRange<int>(0, 7) ? 1 + in.ConsumeIntegralInRange<uint32_t>(0, 3)
                                                               : in.ConsumeIntegral<uint32_t>();
    set_raw(rd->kind, kind);
    // The fields of its kind mostly; at times those of another too.
    const bool extra = in.ConsumeIntegralInRange<int>(0, 15) == 15;
    if (kind == 1 || extra) rd->array = r.array;
    if (kind == 2 || (extra && in.ConsumeBool())) rd->mipmapped_array = r.mipmapped;
    if (kind == 3 || kind == 4 || (extra && in.ConsumeBool())) {
        rd->buffer = r.buffer;
        set_raw(rd->format, format(in));
        rd->num_channels = static_cast<uint32_t>(extent(in, 4));
    }
    if (kind == 3 || extra) rd->size_bytes = in.ConsumeBool() ? 0 : extent(in, 4100, {4096, 2048, 1 << 28});
    if (kind == 4 || extra) {
        rd->width = extent(in, 64, {131072, 131073});
        rd->height = extent(in, 64, {65000, 65001});
        rd->pitch_bytes = in.ConsumeBool() ? 32 * in.ConsumeIntegralInRange<uint64_t>(0, 16) : extent(in, 600, {2097120, 2097152});
    }

    const uint32_t osize = pick_size_own_first<cucore_texture_object_options_t>(in);
    std::vector<unsigned char> ostorage(std::max<size_t>(osize, sizeof(cucore_texture_object_options_t)) + 8, 0);
    auto *o = reinterpret_cast<cucore_texture_object_options_t *>(ostorage.data());
    *o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    o->struct_size = osize;
    for (auto &mode : o->address_mode) set_raw(mode, small_enum(in, 3));
    set_raw(o->filter_mode, small_enum(in, 1));
    set_raw(o->read_mode, small_enum(in, 1));
    o->normalized_coords = flag(in);
    o->srgb = flag(in);
    o->disable_trilinear_optimization = flag(in);
    o->seamless_cubemap = flag(in);
    o->max_anisotropy = static_cast<uint32_t>(extent(in, 17));
    set_raw(o->mipmap_filter_mode, small_enum(in, 1));
    o->mipmap_level_bias = any_float(in);
    o->min_mipmap_level_clamp = any_float(in);
    o->max_mipmap_level_clamp = any_float(in);
    for (float &c : o->border_color) c = any_float(in);
    const int device = in.ConsumeIntegralInRange<int>(0, 3);  // NULL (the resource's), 0, or 1 (not the resource's)
    cucore_device_t *on = device == 0 || device == 3 ? nullptr : g_devices[device - 1];

    cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(uintptr_t{1});
    cucore_status_t st = cucore_texture_object_create(on, rd, in.ConsumeIntegralInRange<int>(0, 15) ? o : nullptr, &t);
    // INVALID_HANDLE: a NULL handle where the kind needs one. Never CUDA: every check is the library's first.
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_INVALID_HANDLE,
                  CUCORE_ERROR_NOT_SUPPORTED);
    if (st == CUCORE_SUCCESS) {
        uint64_t handle = 0;
        FUZZ_OK(cucore_texture_object_handle(t, &handle));
        fake::TextureRecord record;
        FUZZ_CHECK(fake::texture_record(handle, record) && !record.destroyed, "no live driver texture object");
        if (in.ConsumeBool()) FUZZ_OK(cucore_texture_object_close(t));
        FUZZ_OK(cucore_texture_object_release(t));
        FUZZ_CHECK(fake::texture_record(handle, record) && record.destroyed, "the texture object was not destroyed");
    } else {
        FUZZ_CHECK(t == nullptr, "failed texture_object_create left the out-pointer set");
    }
    cucore_surface_object_t *s = reinterpret_cast<cucore_surface_object_t *>(uintptr_t{1});
    st = cucore_surface_object_create(on, rd, &s);
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_INVALID_HANDLE,
                  CUCORE_ERROR_NOT_SUPPORTED);
    if (st == CUCORE_SUCCESS) {
        FUZZ_CHECK(ao.flags & CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE, "a surface over an array without load/store");
        FUZZ_OK(cucore_surface_object_release(s));
    } else {
        FUZZ_CHECK(s == nullptr, "failed surface_object_create left the out-pointer set");
    }
}

void copies(FuzzedDataProvider &in) {
    static const cucore_opaque_array_options_t shapes[] = {
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_FLOAT32, 2, CUCORE_ARRAY_KIND_PLAIN, 0, 0, 12, 10, 0, 0},
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_UINT8, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 0, 8, 6, 4, 0},
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_UINT16, 4, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 0, 0, 4, 4, 0, 2},
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_BC1_UNORM, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 0, 18, 12, 0, 0},
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_INT32, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 0, 40, 0, 0, 0},
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_BC7_UNORM, 0, CUCORE_ARRAY_KIND_LAYERED, 0, 0, 8, 8, 0, 2},
        {sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_UINT8, 4, CUCORE_ARRAY_KIND_LAYERED, 0, 0, 16, 0, 0, 3},
    };
    Resources first, second;
    FUZZ_OK(cucore_opaque_array_create(g_devices[0], &shapes[in.ConsumeIntegralInRange<size_t>(0, std::size(shapes) - 1)],
                                       &first.array));
    FUZZ_OK(cucore_opaque_array_create(g_devices[0], &shapes[in.ConsumeIntegralInRange<size_t>(0, std::size(shapes) - 1)],
                                       &second.array));
    FUZZ_OK(cucore_buffer_retain(g_buffer));
    first.buffer = g_buffer;
    // Host memory is the caller's to vouch for: sides of it stay within this (see `host_side`).
    static std::vector<unsigned char> host(1 << 20, 0x5A);

    const uint32_t size = pick_size_own_first<cucore_opaque_array_copy_t>(in);
    std::vector<unsigned char> storage(std::max<size_t>(size, sizeof(cucore_opaque_array_copy_t)) + 8, 0);
    auto *c = reinterpret_cast<cucore_opaque_array_copy_t *>(storage.data());
    *c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c->struct_size = size;
    c->reserved0 = in.ConsumeIntegralInRange<int>(0, 15) ? 0 : in.ConsumeIntegral<uint32_t>();
    // lo..hi mostly, at times one of `edges`, at times anything.
    auto pick = [&in](uint64_t lo, uint64_t hi, std::initializer_list<uint64_t> edges) -> uint64_t {
        const int choice = in.ConsumeIntegralInRange<int>(0, 15);
        if (choice < 13) return in.ConsumeIntegralInRange<uint64_t>(lo, hi);
        if (choice < 15) return *(edges.begin() + in.ConsumeIntegralInRange<size_t>(0, edges.size() - 1));
        return in.ConsumeIntegral<uint64_t>();
    };
    bool host_used = false;
    auto side = [&](cucore_array_region_t &array, cucore_memory_region_t &memory, bool array_first) {
        // 0: an array (the first or the second), 1: the buffer, 2: host memory, 3: both, 4: neither.
        int what = in.ConsumeIntegralInRange<int>(0, 7);
        if (what > 4) what = array_first ? 0 : 1;
        if (what == 0) {
            array.array = in.ConsumeBool() ? first.array : second.array;
            cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
            FUZZ_OK(cucore_opaque_array_info(array.array, &info));
            const uint64_t grid = info.format >= CUCORE_ARRAY_FORMAT_BC1_UNORM &&
                                          info.format <= CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB ? 4 : 1;
            array.x = grid * pick(0, info.width / 2 / grid, {info.width, UINT64_MAX, UINT64_MAX - 3});
            array.y = grid * pick(0, info.height / 2 / grid, {info.height, UINT64_MAX});
            array.z = pick(0, info.slice_count - 1, {info.slice_count, UINT64_MAX});
            return;
        }
        if (what == 1 || what == 3) memory.buffer = first.buffer;
        if (what == 2 || what == 3) {
            memory.host = host.data();
            host_used = true;
        }
        if (in.ConsumeBool()) return;  // packed from the start
        memory.offset = pick(0, 1024, {4096, UINT64_MAX});
        memory.pitch = pick(0, 256, {UINT64_MAX});
        memory.height = pick(0, 32, {UINT64_MAX});
        memory.x = pick(0, 64, {UINT64_MAX});
        memory.y = pick(0, 16, {UINT64_MAX});
        memory.z = pick(0, 4, {UINT64_MAX});
    };
    side(c->src_array, c->src_memory, in.ConsumeIntegralInRange<int>(0, 3) != 3);
    side(c->dst_array, c->dst_memory, !c->src_array.array);
    c->width = pick(1, 16, {0, UINT64_MAX, uint64_t{1} << 62});
    c->height = pick(1, 8, {0, UINT64_MAX});
    c->depth = pick(1, 3, {0, UINT64_MAX});
    if (host_used) {
        // Keep a host side within `host`: small fields only (the library cannot check host memory).
        for (cucore_memory_region_t *m : {&c->src_memory, &c->dst_memory}) {
            if (!m->host) continue;
            m->offset %= 1025;
            m->pitch %= 257;
            m->height %= 33;
            m->x %= 65;
            m->y %= 17;
            m->z %= 5;
        }
        c->width %= 65;
        c->height %= 33;
        c->depth %= 9;
    }
    cucore_stream_t *stream = in.ConsumeIntegralInRange<int>(0, 31) ? g_stream : nullptr;
    const cucore_status_t st = cucore_opaque_array_copy(in.ConsumeIntegralInRange<int>(0, 63) ? c : nullptr, stream);
    // Never CUDA: every side is checked against its array or buffer before the driver.
    EXPECT_STATUS(st, CUCORE_SUCCESS, CUCORE_ERROR_INVALID_ARGUMENT, CUCORE_ERROR_INVALID_HANDLE,
                  CUCORE_ERROR_NOT_SUPPORTED);
    FUZZ_OK(cucore_stream_synchronize(g_stream));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fake::install(2);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, 1, 0);
    fake_compilers::install();
    FUZZ_OK(cucore_device_get(0, &g_devices[0]));
    FUZZ_OK(cucore_device_get(1, &g_devices[1]));
    // Warm up: what the library keeps for the process once a device is used (its primary context) exists
    // before the baseline.
    cucore_stream_t *warm = nullptr;
    FUZZ_OK(cucore_stream_create(g_devices[1], nullptr, &warm));
    FUZZ_OK(cucore_stream_release(warm));
    FUZZ_OK(cucore_stream_create(g_devices[0], nullptr, &g_stream));
    FUZZ_OK(cucore_device_memory_resource_get_default(g_devices[0], &g_pool));
    FUZZ_OK(cucore_memory_resource_allocate(g_pool, 4096, g_stream, &g_buffer));
    const std::string image = fake::image({"k"}, {{"g", 8}});
    FUZZ_OK(cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "input", &g_input));
    g_baseline = fuzz::Balance::now();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    Strings strings;
    const uint8_t selector = in.ConsumeIntegral<uint8_t>();
    if (selector & 1) {
        linker(in, strings);
    } else {
        switch ((selector >> 1) & 7) {
            case 5: arrays(in); break;
            case 6: textures(in); break;
            case 7: copies(in); break;
            default: program(in, strings); break;
        }
    }
    fuzz::Balance::now().expect_equal(g_baseline);
    return 0;
}
