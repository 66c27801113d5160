// Object code: compiled device code (cubin, PTX, LTO-IR, fatbin, host objects
// and libraries) and, for the loadable kinds, the driver library (CUlibrary)
// it is loaded as on first use and unloaded with the last reference.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "cucore/object_code.h"

namespace cucore::core {

class Device;
class Kernel;

// name expression -> lowered (mangled) name, in the order the compile was given them.
using NameMap = std::vector<std::pair<std::string, std::string>>;

// The immutable contents of an object code, shared between object codes made
// from one cache entry (a hit does not copy the bytes again).
struct CodeImage {
    std::string bytes;  // std::string keeps a NUL after the bytes: PTX loads as text
    cucore_code_type_t type = CUCORE_CODE_UNSET;
    NameMap names;
};

// True for CUBIN, PTX and FATBIN (what cuLibraryLoadData takes).
bool is_loadable(cucore_code_type_t type) noexcept;
// "cubin", "PTX", ... for messages.
const char *code_type_name(cucore_code_type_t type) noexcept;

class ObjectCode final : public Object, public Pooled<ObjectCode> {
  public:
    // From an image (`name` for messages; `path`: load from this file).
    static Ref<ObjectCode> create(std::shared_ptr<const CodeImage> image, std::string name, std::string path = {});
    // Copies `size` bytes.
    static Ref<ObjectCode> from_bytes(const void *data, size_t size, cucore_code_type_t type, const char *name);
    // Reads the whole file now (so its bytes and cache key are known).
    static Ref<ObjectCode> from_file(const char *path, cucore_code_type_t type, const char *name);

    ObjectCode(std::shared_ptr<const CodeImage> image, std::string name, std::string path) noexcept;
    ~ObjectCode() override;

    cucore_code_type_t code_type() const noexcept { return image_->type; }
    const std::string &bytes() const noexcept { return image_->bytes; }
    const std::string &name() const noexcept { return name_; }
    const NameMap &names() const noexcept { return image_->names; }
    const std::shared_ptr<const CodeImage> &image() const noexcept { return image_; }

    // The loaded library (loading it on first use; a failed load is retried
    // by the next call). INVALID_STATE for kinds that must be linked first.
    // The library's module in the current context (cuLibraryGetModule).
    CUmodule module();
    CUlibrary library() {
        CUlibrary loaded = library_.load(std::memory_order_acquire);
        return loaded ? loaded : load();
    }
    // The symbol `name` stands for: its lowered name if it is a name expression.
    const std::string *lowered(const char *name) const noexcept;

    Ref<Kernel> get_kernel(const char *name);
    size_t kernel_count();
    // Address and size of the global `name` in `device`'s primary context.
    void global(Device &device, const char *name, CUdeviceptr &address, size_t &size);
    void read_global(Device &device, const char *name, void *dst, size_t size);
    void write_global(Device &device, const char *name, const void *src, size_t size);

  private:
    CUlibrary load();

    std::shared_ptr<const CodeImage> image_;
    std::string name_;
    std::string path_;  // made from a file: loaded with cuLibraryLoadFromFile
    std::mutex load_mutex_;
    std::atomic<CUlibrary> library_{nullptr};
};

}  // namespace cucore::core
