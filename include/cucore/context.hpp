// libcucore C++ façade: CUDA contexts (over cucore/context.h).
//
// Context's members that make streams and events are defined in stream.hpp
// and event.hpp (the headers include each other in one direction only; see
// device.hpp).
#ifndef CUCORE_CONTEXT_HPP
#define CUCORE_CONTEXT_HPP

#include "common.hpp"
#include "context.h"
#include "device.hpp"

namespace cucore {

class Stream;
class Event;
class DeviceResources;
struct StreamOptions;
struct EventOptions;
struct ContextOptions;

// A CUDA context (cuda.core: Context): a device's primary context, a green
// context made of device resources (device_resources.hpp), or a foreign
// CUcontext wrapped without ownership. A default-constructed Context is empty.
class Context : public Handle<Context, cucore_context_t> {
public:
    Context() noexcept = default;

    // The primary context of `device` (retained while this object or anything
    // made in it lives). Throws Error: INVALID_HANDLE, CUDA.
    static Context primary(const Device &device);

    // A green context of `device` made of `options`' resources; it runs its
    // work only on them. Defined and documented in device_resources.hpp.
    static Context create(const Device &device, const ContextOptions &options);

    // The context current on the calling thread; an empty Context (false) when
    // none is. Throws Error: NO_DRIVER, CUDA.
    static Context current() {
        cucore_context_t *raw = nullptr;
        detail::check(cucore_context_get_current(&raw));
        return adopt(raw);
    }

    // Wraps a foreign CUcontext without owning it. When the last reference goes,
    // `on_release(user_data)` runs (if given) and nothing else is done to the
    // context. Throws Error: INVALID_ARGUMENT (NULL), NO_DRIVER, CUDA.
    static Context from_handle(void *cu_context, cucore_release_fn on_release = nullptr,
                               void *user_data = nullptr) {
        cucore_context_t *raw = nullptr;
        detail::check(cucore_context_from_handle(cu_context, on_release, user_data, &raw));
        return adopt(raw);
    }

    // The raw CUcontext. Throws Error: INVALID_HANDLE.
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_context_handle(handle_, &h));
        return h;
    }

    // Whether this is its device's primary context. Throws Error: INVALID_HANDLE.
    bool is_primary() const {
        int v = 0;
        detail::check(cucore_context_is_primary(handle_, &v));
        return v != 0;
    }

    // Whether this is a green context. Throws Error: INVALID_HANDLE.
    bool is_green() const {
        int v = 0;
        detail::check(cucore_context_is_green(handle_, &v));
        return v != 0;
    }

    // The raw CUgreenCtx of a green context (nullptr for others). Throws Error: INVALID_HANDLE.
    void *green_handle() const {
        void *h = nullptr;
        detail::check(cucore_context_green_handle(handle_, &h));
        return h;
    }

    // Its SM and workqueue resources (a green context's own). Defined in device_resources.hpp.
    DeviceResources resources() const;

    // The context's device. Throws Error: INVALID_HANDLE.
    Device device() const;

    // Makes the context current on the calling thread (the caller manages what is
    // current afterwards). Throws Error: INVALID_HANDLE, CUDA.
    void set_current() const { detail::check(cucore_context_set_current(handle_)); }

    // Waits for all work in the context. Throws Error: INVALID_HANDLE, CUDA.
    void synchronize() const { detail::check(cucore_context_synchronize(handle_)); }

    // A new stream in this context. Throws as Stream::create.
    Stream create_stream() const;
    Stream create_stream(const StreamOptions &options) const;

    // A new event in this context. Throws as Event::create.
    Event create_event() const;
    Event create_event(const EventOptions &options) const;
};

static_assert(sizeof(Context) == sizeof(void *), "a Context is exactly one C handle");

inline Context Context::primary(const Device &device) { return device.primary_context(); }

inline Device Context::device() const {
    cucore_device_t *raw = nullptr;
    detail::check(cucore_context_device(handle_, &raw));
    return Device::adopt(raw);
}

// Device's member that makes a Context (declared in device.hpp).
inline Context Device::primary_context() const {
    cucore_context_t *raw = nullptr;
    detail::check(cucore_context_get_primary(handle_, &raw));
    return Context::adopt(raw);
}

} // namespace cucore

#endif // CUCORE_CONTEXT_HPP
