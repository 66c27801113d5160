// libcucore C++ façade: devices and the driver (over cucore/device.h).
//
// The façade's headers include each other in one direction only (common <
// device < context < event < stream < memory_resource < buffer < the rest; see
// docs/architecture.md). A member of Device that makes or takes an object of a
// later header is declared here and defined, inline, in that header:
// primary_context() in context.hpp, create_event() in event.hpp,
// create_stream() in stream.hpp, the memory resource members in
// memory_resource.hpp, allocate() in buffer.hpp, create_opaque_array() and
// create_mipmapped_array() in opaque_array.hpp, create_texture_object() and
// create_surface_object() in texture.hpp, create_graph_builder() in
// graph_builder.hpp. Include the header of what you use (or cucore.hpp).
#ifndef CUCORE_DEVICE_HPP
#define CUCORE_DEVICE_HPP

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "device.h"
#include "stream.h"

namespace cucore {

class Context;
class Stream;
class Event;
class Buffer;
class MemoryResource;
class OpaqueArray;
class MipmappedArray;
class ResourceDescriptor;
class TextureObject;
class SurfaceObject;
class GraphBuilder;
class SystemDevice;
class DeviceResources;
struct ContextOptions;
struct StreamOptions;
struct EventOptions;
struct OpaqueArrayOptions;
struct TextureObjectOptions;

// A device's compute capability, e.g. {9, 0}.
struct ComputeCapability {
    int major = 0;
    int minor = 0;

    friend bool operator==(ComputeCapability a, ComputeCapability b) noexcept {
        return a.major == b.major && a.minor == b.minor;
    }
    friend bool operator!=(ComputeCapability a, ComputeCapability b) noexcept { return !(a == b); }
    friend bool operator<(ComputeCapability a, ComputeCapability b) noexcept {
        return a.major < b.major || (a.major == b.major && a.minor < b.minor);
    }
};

// A device's UUID (the driver's 16 bytes).
struct Uuid {
    cucore_uuid_t value{};

    const unsigned char *bytes() const noexcept { return value.bytes; }

    // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" in lower-case hex (as cuda.core).
    std::string str() const {
        char text[37];
        int n = 0;
        for (int i = 0; i < 16; ++i) {
            if (i == 4 || i == 6 || i == 8 || i == 10) text[n++] = '-';
            std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%02x",
                          static_cast<unsigned>(value.bytes[i]));
            n += 2;
        }
        return std::string(text, static_cast<std::size_t>(n));
    }

    friend bool operator==(const Uuid &a, const Uuid &b) noexcept {
        for (int i = 0; i < 16; ++i)
            if (a.value.bytes[i] != b.value.bytes[i]) return false;
        return true;
    }
    friend bool operator!=(const Uuid &a, const Uuid &b) noexcept { return !(a == b); }
};

// The range of stream priorities of a device: `least` (the default, 0) and
// `greatest` (the highest priority, a negative number).
struct StreamPriorityRange {
    int least = 0;
    int greatest = 0;
};

// The properties most programs want, read in one call.
using DeviceProperties = cucore_device_properties_t;

// The CUDA driver's version, e.g. 13000 for 13.0. Throws Error: NO_DRIVER.
inline int driver_version() {
    int v = 0;
    detail::check(cucore_driver_version(&v));
    return v;
}

// One GPU, by ordinal (cuda.core: Device). There is one device object per ordinal
// for the life of the process; getting it creates no CUDA context. A
// default-constructed Device is empty.
class Device : public Handle<Device, cucore_device_t> {
public:
    Device() noexcept = default;

    using Handle::get; // get() -> the C handle, beside the static get(ordinal)

    // The device with `ordinal`. Throws Error: INVALID_ARGUMENT (negative),
    // NO_DRIVER, NO_DEVICE (no such ordinal), CUDA.
    explicit Device(int ordinal) : Device(get(ordinal)) {}

    // The device with `ordinal`. Throws as Device(int).
    static Device get(int ordinal) {
        cucore_device_t *raw = nullptr;
        detail::check(cucore_device_get(ordinal, &raw));
        return adopt(raw);
    }

    // The device of the calling thread's current context, or device 0 when none
    // is current. Throws Error: NO_DRIVER, NO_DEVICE, CUDA.
    static Device current() {
        cucore_device_t *raw = nullptr;
        detail::check(cucore_device_get_current(&raw));
        return adopt(raw);
    }

    // The number of visible devices (0 when a driver is installed but no device is
    // visible). Throws Error: NO_DRIVER, CUDA.
    static int count() {
        int n = 0;
        detail::check(cucore_device_count(&n));
        return n;
    }

    // Every visible device, by ordinal. Throws as count() and get().
    static std::vector<Device> all() {
        const int n = count();
        std::vector<Device> devices;
        devices.reserve(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) devices.push_back(get(i));
        return devices;
    }

    // The device's ordinal. Throws Error: INVALID_HANDLE.
    int ordinal() const {
        int v = 0;
        detail::check(cucore_device_ordinal(handle_, &v));
        return v;
    }

    // The raw CUdevice. Throws Error: INVALID_HANDLE.
    int handle() const {
        int v = 0;
        detail::check(cucore_device_handle(handle_, &v));
        return v;
    }

    // The device's name; the storage is NUL-terminated and lives as long as the
    // process. Throws Error: INVALID_HANDLE, CUDA.
    std::string_view name() const {
        const char *s = nullptr;
        detail::check(cucore_device_name(handle_, &s));
        return s;
    }

    // The PCI bus id, "dddd:bb:dd.f" (storage as for name()). Throws as name().
    std::string_view pci_bus_id() const {
        const char *s = nullptr;
        detail::check(cucore_device_pci_bus_id(handle_, &s));
        return s;
    }

    // The device's UUID. Throws Error: INVALID_HANDLE, CUDA.
    Uuid uuid() const {
        Uuid u;
        detail::check(cucore_device_uuid(handle_, &u.value));
        return u;
    }

    // The compute capability. Throws Error: INVALID_HANDLE, CUDA.
    ComputeCapability compute_capability() const {
        ComputeCapability cc;
        detail::check(cucore_device_compute_capability(handle_, &cc.major, &cc.minor));
        return cc;
    }

    // Total device memory in bytes. Throws Error: INVALID_HANDLE, CUDA.
    std::uint64_t total_memory() const {
        std::uint64_t bytes = 0;
        detail::check(cucore_device_total_memory(handle_, &bytes));
        return bytes;
    }

    // Any device attribute. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT
    // (attribute <= 0), CUDA (the driver does not know the attribute).
    int attribute(cucore_device_attribute_t attr) const {
        int v = 0;
        detail::check(cucore_device_attribute(handle_, attr, &v));
        return v;
    }

    // The common properties in one call. Throws Error: INVALID_HANDLE, CUDA.
    DeviceProperties properties() const {
        DeviceProperties p{};
        p.struct_size = static_cast<std::uint32_t>(sizeof p);
        detail::check(cucore_device_properties(handle_, &p));
        return p;
    }

    // The range of stream priorities. Throws Error: INVALID_HANDLE, CUDA.
    StreamPriorityRange stream_priority_range() const {
        StreamPriorityRange r;
        detail::check(cucore_stream_priority_range(handle_, &r.least, &r.greatest));
        return r;
    }

    // Retains the primary context and makes it current on the calling thread (it
    // stays retained for the life of the process). Throws Error: INVALID_HANDLE, CUDA.
    void set_current() const { detail::check(cucore_device_set_current(handle_)); }

    // Waits for all work in the primary context. Throws Error: INVALID_HANDLE,
    // CUDA (an earlier asynchronous error).
    void synchronize() const { detail::check(cucore_device_synchronize(handle_)); }

    // Whether this device can access `peer`'s memory directly. Throws Error:
    // INVALID_HANDLE, CUDA.
    bool can_access_peer(const Device &peer) const {
        int v = 0;
        detail::check(cucore_device_can_access_peer(handle_, peer.get(), &v));
        return v != 0;
    }

    // Lets kernels and copies in this device's primary context reach memory of
    // `peer`'s primary context directly (cuCtxEnablePeerAccess): cuMemAlloc memory
    // and foreign pointers (pools and virtual memory are granted per resource:
    // MemoryResource::set_peer_access). Lasts until disabled; enabling twice is no
    // error. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (`peer` is this device),
    // NOT_SUPPORTED (can_access_peer() is false), CUDA.
    void enable_peer_access(const Device &peer) const {
        detail::check(cucore_device_enable_peer_access(handle_, peer.get()));
    }
    // Withdraws it (cuCtxDisablePeerAccess). Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT, INVALID_STATE (not enabled), CUDA.
    void disable_peer_access(const Device &peer) const {
        detail::check(cucore_device_disable_peer_access(handle_, peer.get()));
    }

    // The primary context, retained while the result or any object made in it
    // lives. Throws Error: INVALID_HANDLE, CUDA.
    Context primary_context() const;

    // The device's SM and workqueue resources, and a green context made of some
    // of them. Defined and documented in device_resources.hpp.
    DeviceResources resources() const;
    Context create_context(const ContextOptions &options) const;

    // A new stream in the primary context (defaults: non-blocking, priority 0).
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT, CUDA, OUT_OF_MEMORY.
    Stream create_stream() const;
    Stream create_stream(const StreamOptions &options) const;

    // A new event in the primary context (defaults: no timing, spin on sync).
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT, CUDA, OUT_OF_MEMORY.
    Event create_event() const;
    Event create_event(const EventOptions &options) const;

    // Allocates `size` bytes from the device's default memory resource
    // (memory_resource()), ordered on `stream` (cuda.core: Device.allocate).
    // Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (stream of another device),
    // NOT_SUPPORTED (no memory pools), OUT_OF_MEMORY, CUDA.
    Buffer allocate(std::uint64_t size, const Stream &stream) const;

    // The device's default memory resource: the one set with
    // set_memory_resource(), else one on the device's current pool. Throws
    // Error: INVALID_HANDLE, NOT_SUPPORTED, CUDA.
    MemoryResource memory_resource() const;

    // Makes `resource` the device's default (process-wide, all languages).
    // Throws Error: INVALID_HANDLE.
    void set_memory_resource(const MemoryResource &resource);

    // Returns the device to its current pool as the default. Never fails on a
    // valid device; throws Error: INVALID_HANDLE.
    void reset_memory_resource();

    // A new CUDA array on this device (cuda.core: Device.create_opaque_array),
    // owned: destroyed when its last reference and every texture or surface
    // object over it are gone. Defined and documented in opaque_array.hpp
    // (OpaqueArray::create).
    OpaqueArray create_opaque_array(const OpaqueArrayOptions &options) const;

    // A new mipmapped array of `num_levels` levels whose level 0 `options`
    // describe. Defined and documented in opaque_array.hpp (MipmappedArray::create).
    MipmappedArray create_mipmapped_array(const OpaqueArrayOptions &options, std::uint32_t num_levels) const;

    // A texture object over `resource`, which must be this device's; without
    // options, the defaults (point sampling, clamp, element-type reads).
    // Defined and documented in texture.hpp (TextureObject::create).
    TextureObject create_texture_object(const ResourceDescriptor &resource) const;
    TextureObject create_texture_object(const ResourceDescriptor &resource, const TextureObjectOptions &options) const;

    // A surface object over an array of this device created with surface
    // load/store. Defined and documented in texture.hpp (SurfaceObject::create).
    SurfaceObject create_surface_object(const ResourceDescriptor &resource) const;

    // A graph builder capturing on a new non-blocking stream of the primary
    // context (cuda.core: Device.create_graph_builder). Defined and documented
    // in graph_builder.hpp (GraphBuilder::create).
    GraphBuilder create_graph_builder() const;

    // The NVML view of this GPU (cuda.core: Device.to_system_device); defined in system.hpp.
    SystemDevice to_system_device() const;

    // Two Device objects are equal when they name the same device (the library
    // may give distinct handles for one device). Never throws.
    friend bool operator==(const Device &a, const Device &b) noexcept {
        if (a.handle_ == b.handle_) return true;
        if (a.handle_ == nullptr || b.handle_ == nullptr) return false;
        int oa = -1, ob = -1;
        return cucore_device_ordinal(a.handle_, &oa) == CUCORE_SUCCESS &&
               cucore_device_ordinal(b.handle_, &ob) == CUCORE_SUCCESS && oa == ob;
    }
    friend bool operator!=(const Device &a, const Device &b) noexcept { return !(a == b); }
};

static_assert(sizeof(Device) == sizeof(void *), "a Device is exactly one C handle");

} // namespace cucore

#endif // CUCORE_DEVICE_HPP
