// libcucore C++ façade: CUDA streams (over cucore/stream.h).
#ifndef CUCORE_STREAM_HPP
#define CUCORE_STREAM_HPP

#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "common.hpp"
#include "context.hpp"
#include "device.hpp"
#include "event.hpp"
#include "stream.h"

namespace cucore {

class GraphBuilder;
class DeviceResources;

namespace detail {

// A callable small and trivial enough to travel inside the host function's
// void* itself, so queuing it allocates nothing.
template <typename F>
constexpr bool fits_in_pointer_v = std::is_trivially_copyable_v<F> &&
                                   std::is_trivially_destructible_v<F> &&
                                   sizeof(F) <= sizeof(void *) && alignof(F) <= alignof(void *);

template <typename F> void invoke_inline_host_fn(void *user_data) noexcept {
    alignas(F) unsigned char storage[sizeof(F)];
    std::memcpy(storage, &user_data, sizeof(F));
    (*std::launder(reinterpret_cast<F *>(storage)))();
}

template <typename F> void invoke_boxed_host_fn(void *user_data) noexcept {
    std::unique_ptr<F> box(static_cast<F *>(user_data));
    (*box)();
}
} // namespace detail

// How to create a stream (cuda.core: StreamOptions). The defaults match
// cuda.core: non-blocking, default priority.
struct StreamOptions {
    // Non-blocking streams do not synchronize with the legacy default stream.
    bool nonblocking = true;
    // 0 is the default (lowest); lower numbers are higher priority, down to
    // Device::stream_priority_range().greatest. Out-of-range values are clamped.
    int priority = 0;

    // The C options these stand for.
    cucore_stream_options_t to_c() const noexcept {
        cucore_stream_options_t o{};
        o.struct_size = static_cast<std::uint32_t>(sizeof o);
        o.flags = nonblocking ? 0u : static_cast<std::uint32_t>(CUCORE_STREAM_BLOCKING);
        o.priority = priority;
        return o;
    }
};

// A CUDA stream (cuda.core: Stream). It holds its context, so it stays usable
// whatever else is released. A default-constructed Stream is empty.
class Stream : public Handle<Stream, cucore_stream_t> {
public:
    Stream() noexcept = default;

    // A new stream in `device`'s primary context, or in `context`. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, CUDA, OUT_OF_MEMORY.
    static Stream create(const Device &device);
    static Stream create(const Device &device, const StreamOptions &options);
    static Stream create(const Context &context);
    static Stream create(const Context &context, const StreamOptions &options);

    // The legacy default stream (CU_STREAM_LEGACY) and the per-thread default
    // stream (CU_STREAM_PER_THREAD) of `device`'s primary context. Releasing
    // them destroys nothing. Throw Error: INVALID_HANDLE, CUDA.
    static Stream legacy_default(const Device &device);
    static Stream per_thread_default(const Device &device);

    // Wraps a foreign CUstream without owning it (its context is asked from the
    // driver and retained). When the last reference goes, `on_release(user_data)`
    // runs if given. Throws Error: NO_DRIVER, CUDA (not a stream).
    static Stream from_handle(void *cu_stream, cucore_release_fn on_release = nullptr,
                              void *user_data = nullptr) {
        cucore_stream_t *raw = nullptr;
        detail::check(cucore_stream_from_handle(cu_stream, on_release, user_data, &raw));
        return adopt(raw);
    }

    // Waits until all queued work has completed. Throws Error: INVALID_HANDLE,
    // CUDA (an asynchronous error from that work).
    void synchronize() const { detail::check(cucore_stream_synchronize(handle_)); }

    // Whether all queued work has completed. Throws Error: INVALID_HANDLE, CUDA.
    bool is_done() const {
        int done = 0;
        detail::check(cucore_stream_query(handle_, &done));
        return done != 0;
    }

    // Makes future work on this stream wait for `event`'s last recorded work.
    // Throws Error: INVALID_HANDLE, CUDA.
    void wait(const Event &event) const;

    // Makes future work on this stream wait for all work queued on `other` so far
    // (works across devices). Throws Error: INVALID_HANDLE, CUDA.
    void wait(const Stream &other) const {
        detail::check(cucore_stream_wait_stream(handle_, other.handle_));
    }

    // Creates an event (default options, or `options`), records it here and
    // returns it. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT, CUDA.
    Event record() const;
    Event record(const EventOptions &options) const;

    // Records an existing `event` here. Throws as Event::record().
    void record(const Event &event) const;

    // Queues `fn(user_data)` (cuLaunchHostFunc): it runs on a driver thread after
    // all earlier work and blocks later work until it returns; it must not call
    // CUDA. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (NULL fn), CUDA.
    void launch_host_func(cucore_host_fn fn, void *user_data) const {
        detail::check(cucore_stream_launch_host_func(handle_, fn, user_data));
    }

    // Queues a copy of the callable `f` (called as f()), as above. The copy is
    // destroyed on the driver thread right after it ran; a callable that fits in
    // a pointer and is trivially copyable travels without any allocation. `f`
    // must not throw (the process would terminate) and must not call CUDA.
    // Throws Error as above (the copy is then destroyed at once), or
    // std::bad_alloc.
    template <typename F,
              typename = std::enable_if_t<std::is_invocable_v<std::decay_t<F> &>>>
    void launch_host_func(F &&f) const {
        using Fn = std::decay_t<F>;
        if constexpr (detail::fits_in_pointer_v<Fn>) {
            const Fn copy(std::forward<F>(f));
            void *user_data = nullptr;
            std::memcpy(&user_data, static_cast<const void *>(&copy), sizeof(Fn));
            detail::check(cucore_stream_launch_host_func(handle_, &detail::invoke_inline_host_fn<Fn>,
                                                         user_data));
        } else {
            std::unique_ptr<Fn> box(new Fn(std::forward<F>(f)));
            detail::check(cucore_stream_launch_host_func(handle_, &detail::invoke_boxed_host_fn<Fn>,
                                                         box.get()));
            (void)box.release(); // the driver thread owns it now
        }
    }

    // The stream's priority. Throws Error: INVALID_HANDLE, CUDA.
    int priority() const {
        int p = 0;
        detail::check(cucore_stream_priority(handle_, &p));
        return p;
    }

    // The stream's cucore_stream_flag_t bits. Throws Error: INVALID_HANDLE, CUDA.
    std::uint32_t flags() const {
        std::uint32_t f = 0;
        detail::check(cucore_stream_flags(handle_, &f));
        return f;
    }

    // Whether the stream does not synchronize with the legacy default stream.
    // Throws as flags().
    bool is_nonblocking() const { return (flags() & CUCORE_STREAM_BLOCKING) == 0; }

    // Whether the library created the stream (true) or wraps a foreign one.
    // Throws Error: INVALID_HANDLE.
    bool is_owned() const {
        int owned = 0;
        detail::check(cucore_stream_is_owned(handle_, &owned));
        return owned != 0;
    }

    // The raw CUstream (CU_STREAM_LEGACY is (void*)1, CU_STREAM_PER_THREAD
    // (void*)2). Throws Error: INVALID_HANDLE.
    void *handle() const {
        void *h = nullptr;
        detail::check(cucore_stream_handle(handle_, &h));
        return h;
    }

    // The stream's device and context. Throw Error: INVALID_HANDLE.
    Device device() const;
    Context context() const;
    // Its context's SM and workqueue resources. Defined in device_resources.hpp.
    DeviceResources resources() const;

    // A graph builder capturing on this stream (cuda.core:
    // Stream.create_graph_builder). Defined and documented in graph_builder.hpp
    // (GraphBuilder::create).
    GraphBuilder create_graph_builder() const;
};

static_assert(sizeof(Stream) == sizeof(void *), "a Stream is exactly one C handle");

inline Stream Stream::create(const Device &device) {
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_stream_create(device.get(), nullptr, &raw));
    return adopt(raw);
}

inline Stream Stream::create(const Device &device, const StreamOptions &options) {
    const cucore_stream_options_t o = options.to_c();
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_stream_create(device.get(), &o, &raw));
    return adopt(raw);
}

inline Stream Stream::create(const Context &context) {
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_stream_create_in_context(context.get(), nullptr, &raw));
    return adopt(raw);
}

inline Stream Stream::create(const Context &context, const StreamOptions &options) {
    const cucore_stream_options_t o = options.to_c();
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_stream_create_in_context(context.get(), &o, &raw));
    return adopt(raw);
}

inline Stream Stream::legacy_default(const Device &device) {
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_stream_get_legacy_default(device.get(), &raw));
    return adopt(raw);
}

inline Stream Stream::per_thread_default(const Device &device) {
    cucore_stream_t *raw = nullptr;
    detail::check(cucore_stream_get_per_thread_default(device.get(), &raw));
    return adopt(raw);
}

inline void Stream::wait(const Event &event) const {
    detail::check(cucore_stream_wait_event(handle_, event.get()));
}

inline Event Stream::record() const {
    cucore_event_t *raw = nullptr;
    detail::check(cucore_stream_record(handle_, nullptr, &raw));
    return Event::adopt(raw);
}

inline Event Stream::record(const EventOptions &options) const {
    const cucore_event_options_t o = options.to_c();
    cucore_event_t *raw = nullptr;
    detail::check(cucore_stream_record(handle_, &o, &raw));
    return Event::adopt(raw);
}

inline void Stream::record(const Event &event) const { event.record(*this); }

inline Device Stream::device() const {
    cucore_device_t *raw = nullptr;
    detail::check(cucore_stream_device(handle_, &raw));
    return Device::adopt(raw);
}

inline Context Stream::context() const {
    cucore_context_t *raw = nullptr;
    detail::check(cucore_stream_context(handle_, &raw));
    return Context::adopt(raw);
}

// The members of earlier headers' classes that make or take a Stream (declared
// in device.hpp, context.hpp and event.hpp).
inline Stream Device::create_stream() const { return Stream::create(*this); }
inline Stream Device::create_stream(const StreamOptions &options) const { return Stream::create(*this, options); }

inline Stream Context::create_stream() const { return Stream::create(*this); }
inline Stream Context::create_stream(const StreamOptions &options) const { return Stream::create(*this, options); }

inline void Event::record(const Stream &stream) const { detail::check(cucore_event_record(handle_, stream.get())); }

} // namespace cucore

#endif // CUCORE_STREAM_HPP
