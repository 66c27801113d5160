#include "core/object_code.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/kernel.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

bool is_loadable(cucore_code_type_t type) noexcept {
    return type == CUCORE_CODE_CUBIN || type == CUCORE_CODE_PTX || type == CUCORE_CODE_FATBIN;
}

const char *code_type_name(cucore_code_type_t type) noexcept {
    switch (type) {
        case CUCORE_CODE_CXX: return "C++";
        case CUCORE_CODE_PTX: return "PTX";
        case CUCORE_CODE_NVVM: return "NVVM";
        case CUCORE_CODE_CUBIN: return "cubin";
        case CUCORE_CODE_LTOIR: return "LTO-IR";
        case CUCORE_CODE_FATBIN: return "fatbin";
        case CUCORE_CODE_OBJECT: return "object";
        case CUCORE_CODE_LIBRARY: return "library";
        default: return "unknown";
    }
}

Ref<ObjectCode> ObjectCode::create(std::shared_ptr<const CodeImage> image, std::string name, std::string path) {
    return make<ObjectCode>(std::move(image), std::move(name), std::move(path));
}

Ref<ObjectCode> ObjectCode::from_bytes(const void *data, size_t size, cucore_code_type_t type, const char *name) {
    if (size == 0) throw_invalid_argument("argument 'size' is 0");
    auto image = std::make_shared<CodeImage>();
    image->bytes.assign(static_cast<const char *>(data), size);
    image->type = type;
    return create(std::move(image), name ? name : "");
}

Ref<ObjectCode> ObjectCode::from_file(const char *path, cucore_code_type_t type, const char *name) {
    FILE *file = std::fopen(path, "rb");
    if (!file)
        throw_invalid_argument(std::string("argument 'path' (\"") + path + "\") cannot be read: " + std::strerror(errno));
    auto image = std::make_shared<CodeImage>();
    char chunk[65536];
    size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) image->bytes.append(chunk, n);
    const bool failed = std::ferror(file) != 0;
    const int error = errno;
    std::fclose(file);
    if (failed)
        throw_invalid_argument(std::string("argument 'path' (\"") + path + "\") cannot be read: " + std::strerror(error));
    if (image->bytes.empty()) throw_invalid_argument(std::string("argument 'path' (\"") + path + "\") is an empty file");
    image->type = type;
    return create(std::move(image), name ? name : path, path);
}

ObjectCode::ObjectCode(std::shared_ptr<const CodeImage> image, std::string name, std::string path) noexcept
    : Object(CUCORE_OBJECT_OBJECT_CODE), image_(std::move(image)), name_(std::move(name)), path_(std::move(path)) {}

ObjectCode::~ObjectCode() {
    if (CUlibrary library = library_.load(std::memory_order_acquire))
        release_reported("cuLibraryUnload", "unloading an object code", [library](const driver::Table &api) {
            return api.cuLibraryUnload ? api.cuLibraryUnload(library) : CUDA_ERROR_NOT_INITIALIZED;
        });
}

CUlibrary ObjectCode::load() {
    if (!is_loadable(code_type()))
        throw Error(CUCORE_ERROR_INVALID_STATE, std::string("object code '") + name_ + "' is " +
                                                    code_type_name(code_type()) +
                                                    ", which the driver cannot load: link it first (cucore_linker_create)");
    std::lock_guard<std::mutex> lock(load_mutex_);
    if (CUlibrary loaded = library_.load(std::memory_order_acquire)) return loaded;
    CUlibrary library = nullptr;
    // The library API is context-independent: one load serves every device.
    if (!path_.empty())
        CUCORE_CALL(cuLibraryLoadFromFile, &library, path_.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    else
        CUCORE_CALL(cuLibraryLoadData, &library, image_->bytes.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    library_.store(library, std::memory_order_release);
    return library;
}

CUmodule ObjectCode::module() {
    const CUlibrary loaded = library();
    CUmodule module = nullptr;
    CUCORE_CALL(cuLibraryGetModule, &module, loaded);
    return module;
}

const std::string *ObjectCode::lowered(const char *name) const noexcept {
    for (const auto &[expression, lowered_name] : image_->names)
        if (expression == name) return &lowered_name;
    return nullptr;
}

namespace {

// "'a', 'b'" of what a lookup tried, for messages.
std::string tried(const char *name, const std::string *lowered) {
    std::string text = std::string("the name expression's lowered name '");
    if (lowered) return text + *lowered + "'";
    return std::string("the symbol '") + name + "'";
}

}  // namespace

Ref<Kernel> ObjectCode::get_kernel(const char *name) {
    CUlibrary lib = library();
    const std::string *symbol = lowered(name);
    CUkernel kernel = nullptr;
    const CUresult result = CUCORE_DRIVER(cuLibraryGetKernel)(&kernel, lib, symbol ? symbol->c_str() : name);
    if (result == CUDA_ERROR_NOT_FOUND) {
        std::string known;
        for (const auto &entry : image_->names) known += (known.empty() ? "" : ", ") + ("'" + entry.first + "'");
        throw_invalid_argument(std::string("no kernel named '") + name + "' in object code '" + name_ + "' (tried " +
                               tried(name, symbol) + (known.empty() ? "; it has no name expressions" : "; its name expressions: " + known) + ")");
    }
    check(result, "cuLibraryGetKernel");
    return make_library_kernel(Ref<Object>(this), kernel, symbol ? symbol->c_str() : name);
}

size_t ObjectCode::kernel_count() {
    CUlibrary lib = library();
    unsigned count = 0;
    CUCORE_CALL(cuLibraryGetKernelCount, &count, lib);
    return count;
}

void ObjectCode::global(Device &device, const char *name, CUdeviceptr &address, size_t &size) {
    CUlibrary lib = library();
    const std::string *symbol = lowered(name);
    // Globals are per context: the device's primary context is the one asked.
    Ref<Context> primary = device.primary_context();
    ScopedContext bind(primary->cu());
    const CUresult result = CUCORE_DRIVER(cuLibraryGetGlobal)(&address, &size, lib, symbol ? symbol->c_str() : name);
    if (result == CUDA_ERROR_NOT_FOUND)
        throw_invalid_argument(std::string("no global named '") + name + "' in object code '" + name_ + "' (tried " +
                               tried(name, symbol) + ")");
    check(result, "cuLibraryGetGlobal");
}

namespace {
void check_global_size(const char *name, size_t expected, size_t size) {
    if (size != expected)
        throw_invalid_argument(std::string("argument 'size' (") + std::to_string(size) + ") differs from the size of global '" +
                               name + "' (" + std::to_string(expected) + " bytes)");
}
}  // namespace

void ObjectCode::read_global(Device &device, const char *name, void *dst, size_t size) {
    CUdeviceptr address = 0;
    size_t global_size = 0;
    global(device, name, address, global_size);
    check_global_size(name, global_size, size);
    Ref<Context> primary = device.primary_context();
    ScopedContext bind(primary->cu());
    CUCORE_CALL(cuMemcpyDtoH, dst, address, size);
}

void ObjectCode::write_global(Device &device, const char *name, const void *src, size_t size) {
    CUdeviceptr address = 0;
    size_t global_size = 0;
    global(device, name, address, global_size);
    check_global_size(name, global_size, size);
    Ref<Context> primary = device.primary_context();
    ScopedContext bind(primary->cu());
    CUCORE_CALL(cuMemcpyHtoD, address, src, size);
}

}  // namespace cucore::core
