#include "core/user_memory.hpp"

#include <cstdio>
#include <string>

#include "core/error.hpp"

namespace cucore::core {

namespace {
// The public handle of a stream, lent to a callback for its duration (valid even
// if the user released theirs while a buffer keeps the stream).
cucore_stream_t *handle_of(const Lent &stream) noexcept { return static_cast<cucore_stream_t *>(stream.handle()); }
}  // namespace

Ref<UserResource> UserResource::create(const cucore_memory_resource_callbacks_t &callbacks) {
    MemoryTraits traits{callbacks.device_id, callbacks.device_accessible != 0, callbacks.host_accessible != 0,
                        callbacks.managed != 0};
    return make<UserResource>(callbacks, traits);
}

UserResource::UserResource(const cucore_memory_resource_callbacks_t &callbacks, MemoryTraits traits) noexcept
    : MemoryResource(CUCORE_MEMORY_RESOURCE_USER, Ref<Context>(), traits, false), callbacks_(callbacks) {}

UserResource::~UserResource() {
    if (callbacks_.destroy) callbacks_.destroy(callbacks_.user_data);
}

CUdeviceptr UserResource::allocate_raw(uint64_t size, Stream *stream) {
    uint64_t address = 0;
    const Lent lent(stream);
    const cucore_status_t status = callbacks_.allocate(callbacks_.user_data, size, handle_of(lent), &address);
    if (status != CUCORE_SUCCESS)
        throw Error(status, "the user memory resource's allocate callback failed (" + std::to_string(size) +
                                " bytes)");
    if (address == 0)
        throw Error(CUCORE_ERROR_OUT_OF_MEMORY,
                    "the user memory resource's allocate callback returned success with address 0");
    return address;
}

void UserResource::deallocate(CUdeviceptr address, uint64_t size, Stream *stream) {
    const Lent lent(stream);
    const cucore_status_t status = callbacks_.deallocate(callbacks_.user_data, address, size, handle_of(lent));
    // Thrown so that the release path (Allocation's destructor) reports it as a release error.
    if (status != CUCORE_SUCCESS) {
        char where[32];
        std::snprintf(where, sizeof where, "0x%llx", static_cast<unsigned long long>(address));
        throw Error(status, "the user memory resource's deallocate callback failed with status " +
                                std::to_string(static_cast<int>(status)) + " (" + std::to_string(size) +
                                " bytes at " + where + ")");
    }
}

}  // namespace cucore::core
