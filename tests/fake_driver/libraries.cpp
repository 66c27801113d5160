// Libraries and the driver's linker. The fake cannot run device code, so its
// images are text (see fake::image): "FAKECUBIN", then "kernel NAME [SIZES]"
// and "global NAME SIZE" lines. A loaded library's globals are device memory.
#include <cstdio>
#include <cstring>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake::detail {
namespace {

const std::string kMagic = "FAKECUBIN\n";
constexpr size_t kMaxImage = size_t{1} << 20;  // fake images are small; the driver is given no size

// The lines after the magic, or false for anything that is not a fake image.
bool image_lines(const std::string &text, std::string &lines) {
    if (text.compare(0, kMagic.size(), kMagic) != 0) return false;
    lines = text.substr(kMagic.size());
    return true;
}

// Parses one line into `library`; false for a line no image has.
bool parse_line(const std::string &line, Library &library) {
    char name[256];
    char sizes[1024] = "";
    size_t size = 0;
    if (line.empty()) return true;
    if (std::sscanf(line.c_str(), "kernel %255s %1023s", name, sizes) >= 1) {
        auto kernel = std::make_unique<KernelRecord>(KernelRecord{name, {}, &library});
        for (char *at = sizes; *at;) {
            char *end = nullptr;
            kernel->param_sizes.push_back(std::strtoul(at, &end, 10));
            if (end == at) return false;
            at = *end == ',' ? end + 1 : end;
        }
        library.kernels.push_back(std::move(kernel));
        return true;
    }
    if (std::sscanf(line.c_str(), "global %255s %zu", name, &size) == 2 && size > 0) {
        library.globals[name].assign(size, 0);
        return true;
    }
    return false;
}

CUresult load_library(CUlibrary *library, const std::string &text) {
    std::string lines;
    if (!library) return CUDA_ERROR_INVALID_VALUE;
    if (!image_lines(text, lines)) return CUDA_ERROR_INVALID_IMAGE;
    auto made = std::make_unique<Library>();
    for (size_t at = 0; at < lines.size();) {
        size_t end = lines.find('\n', at);
        if (end == std::string::npos) end = lines.size();
        if (!parse_line(lines.substr(at, end - at), *made)) return CUDA_ERROR_INVALID_IMAGE;
        at = end + 1;
    }
    Lock lock(state().mutex);
    State &g = state();
    const int device = device_of(t_current);
    for (auto &[name, bytes] : made->globals)
        register_storage(bytes.data(), bytes.size(), MemoryKind::module_global, device);
    *library = reinterpret_cast<CUlibrary>(made.get());
    g.libraries.insert(made.get());
    g.library_storage.push_back(std::move(made));
    return CUDA_SUCCESS;
}

Library *as_library(CUlibrary l) {
    auto *library = reinterpret_cast<Library *>(l);
    return state().libraries.count(library) ? library : nullptr;
}

void link_error(Link *link, const std::string &text) {
    if (!link->error_log || link->error_log_size == 0) return;
    std::snprintf(link->error_log, link->error_log_size, "%s", text.c_str());
}

Link *as_link(CUlinkState state_handle) {
    auto *link = reinterpret_cast<Link *>(state_handle);
    return state().links.count(link) ? link : nullptr;
}

}  // namespace

const KernelRecord *find_kernel_record(CUkernel kernel) {
    auto *record = reinterpret_cast<KernelRecord *>(kernel);
    for (Library *library : state().libraries)
        for (auto &k : library->kernels)
            if (k.get() == record) return record;
    return nullptr;
}

CUresult f_cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *, void **, unsigned int,
                             CUlibraryOption *, void **, unsigned int) {
    if (!code) return CUDA_ERROR_INVALID_VALUE;
    // Anything without the magic (a real cubin) is refused after reading no more than the magic's length.
    const auto *text = static_cast<const char *>(code);
    if (strnlen(text, kMagic.size()) < kMagic.size() || std::memcmp(text, kMagic.data(), kMagic.size()) != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    return load_library(library, std::string(text, strnlen(text, kMaxImage)));
}
CUresult f_cuLibraryLoadFromFile(CUlibrary *library, const char *file, CUjit_option *, void **, unsigned int,
                                 CUlibraryOption *, void **, unsigned int) {
    if (!file) return CUDA_ERROR_INVALID_VALUE;
    FILE *f = std::fopen(file, "rb");
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    std::string text;
    char chunk[4096];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0 && text.size() < kMaxImage;) text.append(chunk, n);
    std::fclose(f);
    return load_library(library, text.substr(0, strnlen(text.c_str(), text.size())));
}
CUresult f_cuLibraryUnload(CUlibrary library) {
    Lock lock(state().mutex);
    Library *l = as_library(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    state().libraries.erase(l);  // kept until install(): stale handles are recognised
    for (auto &[name, bytes] : l->globals) free_allocation(reinterpret_cast<CUdeviceptr>(bytes.data()));
    return CUDA_SUCCESS;
}
CUresult f_cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name) {
    if (!kernel || !name) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Library *l = as_library(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    for (auto &k : l->kernels)
        if (k->name == name) {
            *kernel = reinterpret_cast<CUkernel>(k.get());
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
// The module of a library in the current context: the fake has one module per library, its Library itself.
CUresult f_cuLibraryGetModule(CUmodule *module, CUlibrary library) {
    if (!module) return CUDA_ERROR_INVALID_VALUE;
    if (!current_context()) return CUDA_ERROR_INVALID_CONTEXT;
    Lock lock(state().mutex);
    Library *l = as_library(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    *module = reinterpret_cast<CUmodule>(l);
    return CUDA_SUCCESS;
}
CUresult f_cuLibraryGetKernelCount(unsigned int *count, CUlibrary library) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Library *l = as_library(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(l->kernels.size());
    return CUDA_SUCCESS;
}
CUresult f_cuLibraryGetGlobal(CUdeviceptr *address, size_t *bytes, CUlibrary library, const char *name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Library *l = as_library(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;  // globals are per context
    auto it = l->globals.find(name);
    if (it == l->globals.end()) return CUDA_ERROR_NOT_FOUND;
    if (address) *address = reinterpret_cast<CUdeviceptr>(it->second.data());
    if (bytes) *bytes = it->second.size();
    return CUDA_SUCCESS;
}

CUresult f_cuLinkCreate(unsigned int count, CUjit_option *options, void **values, CUlinkState *link_state) {
    if (!link_state || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    State &g = state();
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    auto link = std::make_unique<Link>();
    g.link_options.clear();
    for (unsigned i = 0; i < count; ++i) {
        g.link_options.emplace_back(options[i], reinterpret_cast<uintptr_t>(values[i]));
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) link->error_log = static_cast<char *>(values[i]);
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            link->error_log_size = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
    }
    *link_state = reinterpret_cast<CUlinkState>(link.get());
    g.links.insert(link.get());
    g.link_storage.push_back(std::move(link));
    return CUDA_SUCCESS;
}
CUresult f_cuLinkAddData(CUlinkState link_state, CUjitInputType type_argument, void *data, size_t size,
                         const char *name, unsigned int, CUjit_option *, void **) {
    const int type = value_of(type_argument);
    Lock lock(state().mutex);
    Link *link = as_link(link_state);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    if (!data || size == 0 || type == CU_JIT_INPUT_NVVM) return CUDA_ERROR_INVALID_VALUE;
    const std::string text(static_cast<const char *>(data), strnlen(static_cast<const char *>(data), size));
    std::string lines;
    if (!image_lines(text, lines)) {
        link_error(link, std::string("error: ") + (name ? name : "input") + " is not a fake image\nsecond line\n");
        return CUDA_ERROR_INVALID_PTX;
    }
    link->merged += lines;
    return CUDA_SUCCESS;
}
CUresult f_cuLinkComplete(CUlinkState link_state, void **cubin, size_t *size) {
    Lock lock(state().mutex);
    Link *link = as_link(link_state);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    if (!cubin || !size) return CUDA_ERROR_INVALID_VALUE;
    link->cubin = kMagic + link->merged;
    *cubin = link->cubin.data();
    *size = link->cubin.size() + 1;  // a cubin's size; the fake's text is NUL-terminated
    return CUDA_SUCCESS;
}
CUresult f_cuLinkDestroy(CUlinkState link_state) {
    Lock lock(state().mutex);
    Link *link = as_link(link_state);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    state().links.erase(link);
    return CUDA_SUCCESS;
}

}  // namespace fake::detail

namespace fake {

using detail::Lock;
using detail::state;

std::string image(const std::vector<std::string> &kernels, const std::vector<std::pair<std::string, size_t>> &globals) {
    std::string text = detail::kMagic;
    for (const std::string &k : kernels) text += "kernel " + k + "\n";
    for (const auto &[name, size] : globals) text += "global " + name + " " + std::to_string(size) + "\n";
    return text;
}

const KernelRecord *kernel_record(CUkernel kernel) {
    Lock lock(state().mutex);
    return detail::find_kernel_record(kernel);
}

std::vector<std::pair<int, uintptr_t>> last_link_options() {
    Lock lock(state().mutex);
    return state().link_options;
}

}  // namespace fake
