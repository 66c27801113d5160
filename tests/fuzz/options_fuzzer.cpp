// Fuzzes the options structs a caller hands in: cucore_program_options_t
// (every string, string array, count, toggle and flag, and struct_size) with
// cucore_program_create / _flags / cache_key / compile, and
// cucore_linker_options_t with cucore_linker_create / _link, over the fake
// NVRTC and nvJitLink of the unit tests.
//
// Oracles: every call answers a status its header documents for it (never
// INTERNAL, never a crash or sanitizer report), a failure leaves NULL, the
// cache key of a program is the same each time it is asked, and nothing
// outlives an input. Enum-typed fields (toggles, backend, code type) get any
// 32-bit value, written as the bytes a C caller would store.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fake_compilers.hpp"
#include "fuzz_support.hpp"

namespace {

fuzz::Balance g_baseline;
cucore_object_code_t *g_input = nullptr;  // a fake cubin for the linker

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

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fake::install(2);
    fake_compilers::install();
    const std::string image = fake::image({"k"}, {{"g", 8}});
    FUZZ_OK(cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "input", &g_input));
    g_baseline = fuzz::Balance::now();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    Strings strings;
    if (in.ConsumeBool())
        linker(in, strings);
    else
        program(in, strings);
    fuzz::Balance::now().expect_equal(g_baseline);
    return 0;
}
