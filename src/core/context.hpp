// Contexts, and the one way libcucore binds a context for the duration of a call.
#pragma once

#include <cuda.h>

#include <vector>

#include "core/event_cache.hpp"
#include "core/handle.hpp"
#include "core/owner.hpp"
#include "cucore/common.h"

namespace cucore::core {

class Device;
class SmResource;
class WorkqueueResource;

class Context final : public Object {
  public:
    // The primary context of `device`, shared by every caller while it lives.
    static Ref<Context> primary(Device &device);
    // A foreign context, not owned; on_release(user_data) runs at the last release.
    static Ref<Context> wrap(CUcontext context, cucore_release_fn on_release, void *user_data);
    // The context current on this thread wrapped (a primary one is recognised);
    // throws INVALID_STATE when none is current.
    static Ref<Context> current();
    // The same, or an empty Ref when no context is current.
    static Ref<Context> current_if_any();
    // A green context of `device` made of `sm` and `workqueues` (the driver's
    // rules checked first and named); it holds them and destroys the green
    // context (cuGreenCtxDestroy) when it goes.
    static Ref<Context> create_green(Device &device, const std::vector<SmResource *> &sm,
                                     const std::vector<WorkqueueResource *> &workqueues);

    Context(Ref<Device> device, CUcontext context, bool primary) noexcept;
    ~Context() override;

    CUcontext cu() const noexcept { return context_; }
    Device &device() const noexcept { return *device_; }
    const Ref<Device> &device_ref() const noexcept { return device_; }
    bool is_primary() const noexcept { return primary_; }
    bool is_green() const noexcept { return green_ != nullptr; }
    // The green context behind cu() (null for other contexts).
    CUgreenCtx green() const noexcept { return green_; }
    void set_current();
    void synchronize();
    // The driver events this context keeps for reuse (core/event_cache.hpp), drained before it goes; null
    // for a foreign context, which its owner may destroy under spare events.
    EventCache *spare_events() noexcept { return primary_ || green_ ? &events_ : nullptr; }

  private:
    Ref<Device> device_;
    CUcontext context_;
    bool primary_;
    ForeignOwner owner_;  // wrapped contexts only
    CUgreenCtx green_ = nullptr;         // green contexts only (owned)
    std::vector<Ref<Object>> resources_;  // green contexts only: what they were made of
    EventCache events_;
};

// Makes `context` current for the lifetime of the guard and restores the
// caller's current context afterwards (a failure to restore is reported as a
// release error, since destructors cannot throw). Switches only when needed.
// This is the one way libcucore binds a context.
//
// Calls whose driver entry point names every object explicitly (an event, a
// created stream, including destroying them) do not depend on the current
// context, so they pass `needed = false` and pay nothing; calls that create
// objects or use the legacy or per-thread default stream always bind. On the
// H100 server each bind costs a cuCtxGetCurrent of tens of nanoseconds.
//
// Destructors and release paths, which cannot throw, use the ReleasePath form:
// it never throws, and a failed bind (and later a failed restore) is reported
// as a release error naming what the release was doing. The release then still
// runs (the driver reports its own failure if it needed the context).
class ScopedContext {
  public:
    // What a release path is doing ("unregistering a graphics resource"), for messages.
    struct ReleasePath {
        const char *what;
    };

    // For calls into a library that may switch the thread's context itself (NCCL sets devices): binds
    // `context` (null: keeps the current one) and always sets the caller's back at the end.
    struct RestoreAlways {};

    explicit ScopedContext(CUcontext context) : ScopedContext(context, true) {}
    ScopedContext(CUcontext context, RestoreAlways);  // throws if the driver fails
    ScopedContext(CUcontext context, bool needed);  // throws if the driver fails
    ScopedContext(CUcontext context, ReleasePath release) noexcept;
    ~ScopedContext();
    ScopedContext(const ScopedContext &) = delete;
    ScopedContext &operator=(const ScopedContext &) = delete;

  private:
    CUcontext previous_ = nullptr;
    bool switched_ = false;
};

// Releases the primary context of `device` (cuDevicePrimaryCtxRelease), reporting a failure as a release error.
void release_primary_context(CUdevice device, const char *what) noexcept;

// The device ordinal of `context` (binding it to ask the driver).
int device_ordinal_of(CUcontext context);

}  // namespace cucore::core
