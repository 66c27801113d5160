// libcucore C++ façade: object code (over cucore/object_code.h).
//
//   cucore::ObjectCode code = program.compile(CUCORE_CODE_CUBIN, {"saxpy<float>"});
//   cucore::Kernel k = code.get_kernel("saxpy<float>");
//   float scale = code.read_global<float>(dev, "scale");
#ifndef CUCORE_OBJECT_CODE_HPP
#define CUCORE_OBJECT_CODE_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.hpp"
#include "device.hpp"
#include "kernel.hpp"
#include "object_code.h"

namespace cucore {

// Where a module global lives on one device.
struct GlobalInfo {
    std::uint64_t address = 0;
    std::size_t size = 0;
};

// Compiled device code (cuda.core: ObjectCode). Loadable kinds (CUBIN, PTX,
// FATBIN) are loaded on first use and unloaded with the last reference.
class ObjectCode : public Handle<ObjectCode, cucore_object_code_t> {
public:
    ObjectCode() noexcept = default;

    // Copies `size` bytes of code of kind `type`. Throws Error: INVALID_ARGUMENT, OUT_OF_MEMORY.
    static ObjectCode create(const void *data, std::size_t size, cucore_code_type_t type,
                             const char *name = nullptr) {
        cucore_object_code_t *raw = nullptr;
        detail::check(cucore_object_code_create(data, size, type, name, &raw));
        return adopt(raw);
    }
    static ObjectCode create(const std::string &bytes, cucore_code_type_t type, const char *name = nullptr) {
        return create(bytes.data(), bytes.size(), type, name);
    }
    // Reads the file at `path` now. Throws Error: INVALID_ARGUMENT (unreadable, empty), OUT_OF_MEMORY.
    static ObjectCode from_file(const std::string &path, cucore_code_type_t type, const char *name = nullptr) {
        cucore_object_code_t *raw = nullptr;
        detail::check(cucore_object_code_create_from_file(path.c_str(), type, name, &raw));
        return adopt(raw);
    }

    // Loads the code into the driver now. Throws Error: INVALID_STATE (link first), CUDA.
    void load() const { detail::check(cucore_object_code_load(handle_)); }

    cucore_code_type_t code_type() const {
        cucore_code_type_t type = CUCORE_CODE_UNSET;
        detail::check(cucore_object_code_code_type(handle_, &type));
        return type;
    }
    // The bytes (valid while this object code lives).
    const void *data() const {
        const void *bytes = nullptr;
        std::size_t count = 0;
        detail::check(cucore_object_code_data(handle_, &bytes, &count));
        return bytes;
    }
    std::size_t size() const {
        const void *bytes = nullptr;
        std::size_t count = 0;
        detail::check(cucore_object_code_data(handle_, &bytes, &count));
        return count;
    }
    // A copy of the bytes.
    std::string code() const {
        const void *bytes = nullptr;
        std::size_t count = 0;
        detail::check(cucore_object_code_data(handle_, &bytes, &count));
        return std::string(static_cast<const char *>(bytes), count);
    }
    std::string name() const {
        const char *text = nullptr;
        detail::check(cucore_object_code_name(handle_, &text));
        return text;
    }
    // Name expression -> lowered name pairs (cuda.core: symbol_mapping).
    std::vector<std::pair<std::string, std::string>> name_expressions() const {
        std::size_t count = 0;
        detail::check(cucore_object_code_name_expression_count(handle_, &count));
        std::vector<std::pair<std::string, std::string>> result;
        result.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            const char *expression = nullptr;
            const char *lowered = nullptr;
            detail::check(cucore_object_code_name_expression(handle_, i, &expression, &lowered));
            result.emplace_back(expression, lowered);
        }
        return result;
    }

    // The kernel named `name` (a name expression or the symbol). Throws Error:
    // INVALID_ARGUMENT (no such kernel), INVALID_STATE (not loadable), CUDA.
    Kernel get_kernel(const char *name) const {
        cucore_kernel_t *raw = nullptr;
        detail::check(cucore_object_code_get_kernel(handle_, name, &raw));
        return Kernel::adopt(raw);
    }
    Kernel get_kernel(const std::string &name) const { return get_kernel(name.c_str()); }

    std::size_t kernel_count() const {
        std::size_t count = 0;
        detail::check(cucore_object_code_kernel_count(handle_, &count));
        return count;
    }

    // A module global on `device`. Throws Error: INVALID_ARGUMENT (no such global), CUDA.
    GlobalInfo get_global(const Device &device, const char *name) const {
        GlobalInfo info;
        detail::check(cucore_object_code_get_global(handle_, device.get(), name, &info.address, &info.size));
        return info;
    }
    void read_global(const Device &device, const char *name, void *dst, std::size_t size) const {
        detail::check(cucore_object_code_read_global(handle_, device.get(), name, dst, size));
    }
    void write_global(const Device &device, const char *name, const void *src, std::size_t size) const {
        detail::check(cucore_object_code_write_global(handle_, device.get(), name, src, size));
    }
    // Typed access: T's size must equal the global's.
    template <typename T>
    T read_global(const Device &device, const char *name) const {
        static_assert(std::is_trivially_copyable<T>::value, "globals are copied as bytes");
        T value{};
        read_global(device, name, &value, sizeof value);
        return value;
    }
    template <typename T>
    void write_global(const Device &device, const char *name, const T &value) const {
        static_assert(std::is_trivially_copyable<T>::value, "globals are copied as bytes");
        write_global(device, name, &value, sizeof value);
    }

    // The raw CUlibrary (loads the code first).
    void *handle() const {
        void *library = nullptr;
        detail::check(cucore_object_code_handle(handle_, &library));
        return library;
    }

    // The raw CUmodule of the code in the current context (cuLibraryGetModule),
    // for driver APIs that take a module. Throws Error: as handle(), CUDA.
    void *module() const {
        void *module = nullptr;
        detail::check(cucore_object_code_module(handle_, &module));
        return module;
    }
};

} // namespace cucore

#endif // CUCORE_OBJECT_CODE_HPP
