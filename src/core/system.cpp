#include "core/system.hpp"

#include <cstdio>
#include <cstring>

#include "core/device.hpp"
#include "core/error.hpp"

namespace cucore::core {
namespace {

// nvmlClockType_t of a cucore_system_clock_t (validated by capi).
int nvml_clock(cucore_system_clock_t clock) {
    switch (clock) {
        case CUCORE_SYSTEM_CLOCK_GRAPHICS: return 0;
        case CUCORE_SYSTEM_CLOCK_SM: return 1;
        case CUCORE_SYSTEM_CLOCK_MEMORY: return 2;
        case CUCORE_SYSTEM_CLOCK_VIDEO: return 3;
        default: throw_invalid_argument("argument 'clock' is not a cucore_system_clock_t");
    }
}

// NVML writes at most `size` bytes, NUL-terminated; a buffer one larger keeps
// the text terminated whatever a misbehaving library writes.
template <class Call>
std::string read_text(unsigned size, Call call) {
    std::string text(size + 1, '\0');
    call(&text[0], size);
    text.resize(std::char_traits<char>::length(text.c_str()));
    return text;
}

}  // namespace

std::string nvml_uuid_text(const unsigned char (&b)[16]) {
    char text[48];
    std::snprintf(text, sizeof text,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
                  b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return text;
}

SystemDevice::SystemDevice(driver::nvml::Device handle, unsigned index, std::string name, std::string uuid,
                           std::string pci_bus_id) noexcept
    : Object(CUCORE_OBJECT_SYSTEM_DEVICE),
      handle_(handle),
      index_(index),
      name_(std::move(name)),
      uuid_(std::move(uuid)),
      pci_bus_id_(std::move(pci_bus_id)) {}

std::string SystemDevice::driver_version() {
    return read_text(driver::nvml::kSystemDriverVersionSize,
                     [](char *text, unsigned size) { CUCORE_NVML(nvmlSystemGetDriverVersion, text, size); });
}

std::string SystemDevice::nvml_version() {
    return read_text(driver::nvml::kSystemNvmlVersionSize,
                     [](char *text, unsigned size) { CUCORE_NVML(nvmlSystemGetNVMLVersion, text, size); });
}

int SystemDevice::cuda_driver_version() {
    int version = 0;
    CUCORE_NVML(nvmlSystemGetCudaDriverVersion_v2, &version);
    return version;
}

unsigned SystemDevice::count() {
    unsigned count = 0;
    CUCORE_NVML(nvmlDeviceGetCount_v2, &count);
    return count;
}

Ref<SystemDevice> SystemDevice::from_handle(driver::nvml::Device handle) {
    unsigned index = 0;
    CUCORE_NVML(nvmlDeviceGetIndex, handle, &index);
    std::string name = read_text(driver::nvml::kDeviceNameSize, [handle](char *text, unsigned size) {
        CUCORE_NVML(nvmlDeviceGetName, handle, text, size);
    });
    std::string uuid = read_text(driver::nvml::kDeviceUuidSize, [handle](char *text, unsigned size) {
        CUCORE_NVML(nvmlDeviceGetUUID, handle, text, size);
    });
    driver::nvml::PciInfo pci{};
    CUCORE_NVML(nvmlDeviceGetPciInfo_v3, handle, &pci);
    pci.busId[sizeof pci.busId - 1] = '\0';
    return make<SystemDevice>(handle, index, std::move(name), std::move(uuid), std::string(pci.busId));
}

Ref<SystemDevice> SystemDevice::get(unsigned index) {
    const unsigned devices = count();
    if (index >= devices)  // NVML's own answer (INVALID_ARGUMENT), with the count in the message
        driver::throw_nvml(driver::nvml::kErrorInvalidArgument, "nvmlDeviceGetHandleByIndex_v2",
                           "argument 'index' (" + std::to_string(index) + ") is not below the number of GPUs "
                           "NVML sees (" + std::to_string(devices) + ")");
    driver::nvml::Device handle = nullptr;
    CUCORE_NVML(nvmlDeviceGetHandleByIndex_v2, index, &handle);
    return from_handle(handle);
}

Ref<SystemDevice> SystemDevice::by_uuid(const std::string &uuid) {
    driver::nvml::Device handle = nullptr;
    CUCORE_NVML(nvmlDeviceGetHandleByUUID, uuid.c_str(), &handle);
    return from_handle(handle);
}

Ref<SystemDevice> SystemDevice::by_pci_bus_id(const std::string &pci_bus_id) {
    driver::nvml::Device handle = nullptr;
    CUCORE_NVML(nvmlDeviceGetHandleByPciBusId_v2, pci_bus_id.c_str(), &handle);
    return from_handle(handle);
}

Ref<SystemDevice> SystemDevice::for_device(const Device &device) {
    unsigned char bytes[16];
    static_assert(sizeof bytes == sizeof device.uuid().bytes, "UUID sizes agree");
    std::memcpy(bytes, device.uuid().bytes, sizeof bytes);
    const std::string uuid = nvml_uuid_text(bytes);
    try {
        return by_uuid(uuid);
    } catch (const Error &error) {
        if (error.status() != CUCORE_ERROR_INVALID_ARGUMENT) throw;
        throw Error(CUCORE_ERROR_INVALID_ARGUMENT, "NVML does not see CUDA device " +
                                                       std::to_string(device.ordinal()) + " (" + uuid +
                                                       "): " + error.what());
    }
}

Ref<Device> SystemDevice::to_device() const {
    const int devices = Device::count();
    for (int ordinal = 0; ordinal < devices; ++ordinal) {
        Ref<Device> device = Device::get(ordinal);
        unsigned char bytes[16];
        std::memcpy(bytes, device->uuid().bytes, sizeof bytes);
        if (nvml_uuid_text(bytes) == uuid_) return device;
    }
    throw Error(CUCORE_ERROR_INVALID_ARGUMENT, "GPU " + std::to_string(index_) + " (" + uuid_ +
                                                   ") is not among the " + std::to_string(devices) +
                                                   " CUDA devices visible to this process (CUDA_VISIBLE_DEVICES?)");
}

cucore_system_pci_info_t SystemDevice::pci_info() const {
    driver::nvml::PciInfo pci{};
    CUCORE_NVML(nvmlDeviceGetPciInfo_v3, handle_, &pci);
    cucore_system_pci_info_t info = CUCORE_SYSTEM_PCI_INFO_INIT;
    info.domain = pci.domain;
    info.bus = pci.bus;
    info.device = pci.device;
    info.pci_device_id = pci.pciDeviceId;
    info.pci_subsystem_id = pci.pciSubSystemId;
    return info;
}

cucore_system_memory_info_t SystemDevice::memory_info() const {
    driver::nvml::Memory memory{};
    CUCORE_NVML(nvmlDeviceGetMemoryInfo, handle_, &memory);
    cucore_system_memory_info_t info = CUCORE_SYSTEM_MEMORY_INFO_INIT;
    info.total = memory.total;
    info.used = memory.used;
    info.free = memory.free;
    return info;
}

void SystemDevice::utilization(unsigned &gpu_percent, unsigned &memory_percent) const {
    driver::nvml::Utilization rates{};
    CUCORE_NVML(nvmlDeviceGetUtilizationRates, handle_, &rates);
    gpu_percent = rates.gpu;
    memory_percent = rates.memory;
}

unsigned SystemDevice::temperature() const {
    unsigned celsius = 0;
    CUCORE_NVML(nvmlDeviceGetTemperature, handle_, driver::nvml::kTemperatureGpu, &celsius);
    return celsius;
}

unsigned SystemDevice::power_usage() const {
    unsigned milliwatts = 0;
    CUCORE_NVML(nvmlDeviceGetPowerUsage, handle_, &milliwatts);
    return milliwatts;
}

unsigned SystemDevice::power_limit() const {
    unsigned milliwatts = 0;
    CUCORE_NVML(nvmlDeviceGetEnforcedPowerLimit, handle_, &milliwatts);
    return milliwatts;
}

unsigned SystemDevice::clock(cucore_system_clock_t clock) const {
    unsigned mhz = 0;
    CUCORE_NVML(nvmlDeviceGetClockInfo, handle_, nvml_clock(clock), &mhz);
    return mhz;
}

unsigned SystemDevice::max_clock(cucore_system_clock_t clock) const {
    unsigned mhz = 0;
    CUCORE_NVML(nvmlDeviceGetMaxClockInfo, handle_, nvml_clock(clock), &mhz);
    return mhz;
}

cucore_compute_mode_t SystemDevice::compute_mode() const {
    int mode = -1;
    CUCORE_NVML(nvmlDeviceGetComputeMode, handle_, &mode);
    switch (mode) {
        case 0: return CUCORE_COMPUTE_MODE_DEFAULT;
        case 1: return CUCORE_COMPUTE_MODE_EXCLUSIVE_THREAD;
        case 2: return CUCORE_COMPUTE_MODE_PROHIBITED;
        case 3: return CUCORE_COMPUTE_MODE_EXCLUSIVE_PROCESS;
        default:
            throw Error(CUCORE_ERROR_CUDA,
                        "nvmlDeviceGetComputeMode answered a compute mode this library does not know (" +
                            std::to_string(mode) + ")");
    }
}

std::vector<SystemDevice::Process> SystemDevice::processes() const {
    // The list can grow between the sizing call and the reading one: NVML then
    // answers INSUFFICIENT_SIZE with the new count; a few rounds settle it.
    std::vector<driver::nvml::ProcessInfo> infos;
    for (int attempt = 0; attempt < 8; ++attempt) {
        unsigned count = static_cast<unsigned>(infos.size());
        const driver::nvml::Return result = driver::nvml_require(
            driver::nvml_api().nvmlDeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3")(
            handle_, &count, infos.empty() ? nullptr : infos.data());
        if (result == driver::nvml::kErrorInsufficientSize) {
            infos.resize(count + 4);
            continue;
        }
        driver::check_nvml(result, "nvmlDeviceGetComputeRunningProcesses_v3");
        if (count > infos.size()) count = static_cast<unsigned>(infos.size());
        std::vector<Process> out;
        out.reserve(count);
        for (unsigned i = 0; i < count; ++i)
            out.push_back(Process{infos[i].pid, infos[i].usedGpuMemory == driver::nvml::kNotAvailable
                                                    ? CUCORE_SYSTEM_MEMORY_NOT_AVAILABLE
                                                    : static_cast<uint64_t>(infos[i].usedGpuMemory),
                                  infos[i].gpuInstanceId, infos[i].computeInstanceId});
        return out;
    }
    throw Error(CUCORE_ERROR_NOT_READY,
                "nvmlDeviceGetComputeRunningProcesses_v3: the process list kept growing while it was read");
}

}  // namespace cucore::core
