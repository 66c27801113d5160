// Streams.
#pragma once

#include <cuda.h>

#include <atomic>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "core/owner.hpp"
#include "cucore/stream.h"

namespace cucore::core {

class Event;
class GraphAttachments;

class Stream final : public Object, public Pooled<Stream> {
  public:
    static Ref<Stream> create(Ref<Context> context, uint32_t flags, int priority);
    // CU_STREAM_LEGACY or CU_STREAM_PER_THREAD bound to `context`.
    static Ref<Stream> builtin(Ref<Context> context, CUstream which);
    // A foreign stream, not owned; its context is asked from the driver.
    static Ref<Stream> wrap(CUstream stream, cucore_release_fn on_release, void *user_data);

    Stream(Ref<Context> context, CUstream stream, bool owned) noexcept;
    ~Stream() override;

    void synchronize();
    bool query();
    void wait(Event &event);
    void wait(Stream &other);
    Ref<Event> record(uint32_t event_flags);
    void launch_host_func(cucore_host_fn fn, void *user_data);
    int priority();
    uint32_t flags();
    cucore_capture_status_t capture_status();

    CUstream cu() const noexcept { return stream_; }
    CUcontext cu_context() const noexcept { return cu_context_; }
    int device_ordinal() const noexcept { return device_ordinal_; }
    // The legacy and per-thread default streams mean "of the current context".
    bool is_builtin() const noexcept { return builtin_; }
    bool owned() const noexcept { return owned_; }
    // The driver handle for a caller outside the library (cucore_stream_handle): from then on someone else
    // may capture this stream, so events recorded on it are no longer reused (core/event_cache.hpp).
    CUstream escape() noexcept {
        shared_.store(true, std::memory_order_relaxed);
        return stream_;
    }
    // Whether code outside the library can reach the driver stream (a foreign or built-in stream, or one
    // whose handle was given out), and so may be capturing it unseen.
    bool shared() const noexcept { return shared_.load(std::memory_order_relaxed); }
    Context &context() const noexcept { return *context_; }
    const Ref<Context> &context_ref() const noexcept { return context_; }

    // While a graph builder captures this stream: what the captured graph
    // holds; work enqueued here adds the objects it uses (null otherwise).
    GraphAttachments *capture_sink() const noexcept { return capture_sink_.load(std::memory_order_acquire); }
    void set_capture_sink(GraphAttachments *sink) noexcept { capture_sink_.store(sink, std::memory_order_release); }
    // Throws INVALID_STATE naming `call` while a graph builder captures this stream.
    void refuse_during_capture(const char *call) const;

  private:
    Ref<Context> context_;
    CUcontext cu_context_;  // cached: no pointer chase on hot paths
    int device_ordinal_;    // cached likewise
    CUstream stream_;
    bool builtin_;
    bool owned_;
    std::atomic<bool> shared_;  // see shared()
    ForeignOwner owner_;  // wrapped streams only
    std::atomic<GraphAttachments *> capture_sink_{nullptr};
};

// Keeps `object` alive for the graph `stream` is being captured into, if any
// (inline: on the hot paths it is one load and a branch).
void hold_for_capture_slow(Stream &stream, Object &object);
inline void hold_for_capture(Stream &stream, Object &object) {
    if (__builtin_expect(stream.capture_sink() != nullptr, 0)) hold_for_capture_slow(stream, object);
}

// Destroys a driver stream, reporting a failure as a release error.
void destroy_stream(CUstream stream, const char *what) noexcept;

// Greatest and least priorities of the device of `context`.
void stream_priority_range(Context &context, int &least, int &greatest);

}  // namespace cucore::core
