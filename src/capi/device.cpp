// C ABI: devices and the driver.
#include "capi/capi.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_driver_version(int *version) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(version, "version");
        result = core::Device::driver_version();
    });
}

cucore_status_t cucore_device_count(int *count) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(count, "count");
        result = core::Device::count();
    });
}

cucore_status_t cucore_device_get(int ordinal, cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(core::Device::get(ordinal));
    });
}

cucore_status_t cucore_device_get_current(cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(core::Device::current());
    });
}

cucore_status_t cucore_device_ordinal(const cucore_device_t *device, int *ordinal) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(ordinal, "ordinal");
        result = capi::get(device, "device").ordinal();
    });
}

cucore_status_t cucore_device_handle(const cucore_device_t *device, int *cu_device) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(cu_device, "cu_device");
        result = capi::get(device, "device").cu();
    });
}

cucore_status_t cucore_device_name(const cucore_device_t *device, const char **name) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(name, "name");
        result = capi::get(device, "device").name().c_str();
    });
}

cucore_status_t cucore_device_pci_bus_id(const cucore_device_t *device, const char **pci_bus_id) {
    return capi::guarded(__func__, [&] {
        const char *&result = capi::out(pci_bus_id, "pci_bus_id");
        result = capi::get(device, "device").pci_bus_id().c_str();
    });
}

cucore_status_t cucore_device_uuid(const cucore_device_t *device, cucore_uuid_t *uuid) {
    return capi::guarded(__func__, [&] {
        cucore_uuid_t &result = capi::out(uuid, "uuid");
        core::Device &object = capi::get(device, "device");
        static_assert(sizeof result.bytes == sizeof object.uuid().bytes, "UUID sizes agree");
        std::memcpy(result.bytes, object.uuid().bytes, sizeof result.bytes);
    });
}

cucore_status_t cucore_device_compute_capability(const cucore_device_t *device, int *major, int *minor) {
    return capi::guarded(__func__, [&] {
        int &major_out = capi::out(major, "major");
        int &minor_out = capi::out(minor, "minor");
        capi::get(device, "device").compute_capability(major_out, minor_out);
    });
}

cucore_status_t cucore_device_total_memory(const cucore_device_t *device, uint64_t *bytes) {
    return capi::guarded(__func__, [&] {
        uint64_t &result = capi::out(bytes, "bytes");
        core::Device &object = capi::get(device, "device");
        result = object.total_memory();
    });
}

cucore_status_t cucore_device_attribute(const cucore_device_t *device, cucore_device_attribute_t attribute,
                                        int *value) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(value, "value");
        core::Device &object = capi::get(device, "device");
        // Values past the toolkit's CU_DEVICE_ATTRIBUTE_MAX are refused here: converting them to
        // CUdevice_attribute would be undefined behaviour (outside the enum's range).
        const int32_t known = capi::check_enum_range(attribute, 1, static_cast<int32_t>(CU_DEVICE_ATTRIBUTE_MAX) - 1,
                                                     "attribute", "is not a device attribute");
        result = object.attribute(static_cast<CUdevice_attribute>(known));
    });
}

cucore_status_t cucore_device_properties(const cucore_device_t *device, cucore_device_properties_t *properties) {
    return capi::guarded(__func__, [&] {
        core::Device &object = capi::get(device, "device");
        capi::require(properties, "properties");
        const uint32_t size = properties->struct_size;
        const size_t minimum = offsetof(cucore_device_properties_t, ordinal) + sizeof(int);
        if (size < minimum)
            core::throw_invalid_argument("argument 'properties' has struct_size " + std::to_string(size) +
                                         "; initialise it with CUCORE_DEVICE_PROPERTIES_INIT");
        cucore_device_properties_t full{};
        object.properties(full);
        full.struct_size = size;
        std::memcpy(properties, &full, size < sizeof full ? size : sizeof full);
    });
}

cucore_status_t cucore_device_set_current(cucore_device_t *device) {
    return capi::guarded(__func__, [&] { capi::get(device, "device").set_current(); });
}

cucore_status_t cucore_device_synchronize(cucore_device_t *device) {
    return capi::guarded(__func__, [&] { capi::get(device, "device").synchronize(); });
}

cucore_status_t cucore_device_can_access_peer(const cucore_device_t *device, const cucore_device_t *peer,
                                              int *can_access) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(can_access, "can_access");
        core::Device &object = capi::get(device, "device");
        core::Device &other = capi::get(peer, "peer");
        result = object.can_access_peer(other) ? 1 : 0;
    });
}

cucore_status_t cucore_device_enable_peer_access(cucore_device_t *device, cucore_device_t *peer) {
    return capi::guarded(__func__, [&] { capi::get(device, "device").enable_peer_access(capi::get(peer, "peer")); });
}

cucore_status_t cucore_device_disable_peer_access(cucore_device_t *device, cucore_device_t *peer) {
    return capi::guarded(__func__, [&] { capi::get(device, "device").disable_peer_access(capi::get(peer, "peer")); });
}

}  // extern "C"
