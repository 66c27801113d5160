// The generic readers of a SystemDevice (include/cucore/system.h): numeric
// queries, texts, changes, related devices, field values and device pairs.
// Each query makes one NVML call (two for the PCI link) and gives its values
// in the order system.h documents.
#include <climits>
#include <cstring>

#include "core/error.hpp"
#include "core/system.hpp"

namespace cucore::core {
namespace {

namespace nv = driver::nvml;

// NVML's ints as int64 (unsigned values stay positive; 64-bit masks keep their bits).
int64_t u(unsigned v) { return static_cast<int64_t>(v); }
int64_t u64(unsigned long long v) { return static_cast<int64_t>(v); }

// The indices of the set bits of a bit set of `words` unsigned longs.
std::vector<int64_t> bit_indices(const std::vector<unsigned long> &words) {
    std::vector<int64_t> out;
    const unsigned bits = sizeof(unsigned long) * CHAR_BIT;
    for (size_t w = 0; w < words.size(); ++w)
        for (unsigned b = 0; b < bits; ++b)
            if (words[w] >> b & 1UL) out.push_back(static_cast<int64_t>(w * bits + b));
    return out;
}

// NVML writes at most `size` bytes, NUL-terminated; one more keeps it terminated.
template <class Call>
std::string read_text(unsigned size, Call call) {
    std::string text(size + 1, '\0');
    call(&text[0], size);
    text.resize(std::char_traits<char>::length(text.c_str()));
    return text;
}

constexpr unsigned kAffinityWords = 64;  // 4096 CPUs or NUMA nodes
constexpr unsigned kMaxDevices = 64;     // a list of GPUs NVML fills (more than any machine has)

}  // namespace

std::vector<int64_t> SystemDevice::query(cucore_system_query_t query, int64_t arg0, int64_t arg1) const {
    const nv::Device d = handle_;
    const int a0 = static_cast<int>(arg0), a1 = static_cast<int>(arg1);  // capi checked both fit
    const unsigned ua0 = static_cast<unsigned>(arg0);
    unsigned v = 0;
    int i = 0, j = 0;
    switch (query) {
        case CUCORE_SYSTEM_QUERY_ARCHITECTURE: CUCORE_NVML(nvmlDeviceGetArchitecture, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_BRAND: CUCORE_NVML(nvmlDeviceGetBrand, d, &i); return {i};
        case CUCORE_SYSTEM_QUERY_MINOR_NUMBER: CUCORE_NVML(nvmlDeviceGetMinorNumber, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_MODULE_ID: CUCORE_NVML(nvmlDeviceGetModuleId, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_NUMA_NODE_ID: CUCORE_NVML(nvmlDeviceGetNumaNodeId, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_C2C_ENABLED: {
            nv::C2cModeInfo info{};
            CUCORE_NVML(nvmlDeviceGetC2cModeInfoV, d, &info);
            return {info.isC2cEnabled ? 1 : 0};
        }
        case CUCORE_SYSTEM_QUERY_PERSISTENCE_MODE: CUCORE_NVML(nvmlDeviceGetPersistenceMode, d, &i); return {i != 0};
        case CUCORE_SYSTEM_QUERY_DISPLAY_CONNECTED: CUCORE_NVML(nvmlDeviceGetDisplayMode, d, &i); return {i != 0};
        case CUCORE_SYSTEM_QUERY_DISPLAY_ACTIVE: CUCORE_NVML(nvmlDeviceGetDisplayActive, d, &i); return {i != 0};
        case CUCORE_SYSTEM_QUERY_COMPUTE_CAPABILITY:
            CUCORE_NVML(nvmlDeviceGetCudaComputeCapability, d, &i, &j);
            return {i, j};
        case CUCORE_SYSTEM_QUERY_ADDRESSING_MODE: {
            nv::AddressingMode mode{};
            mode.version = nv::struct_version<nv::AddressingMode>(1);
            CUCORE_NVML(nvmlDeviceGetAddressingMode, d, &mode);
            return {u(mode.value)};
        }
        case CUCORE_SYSTEM_QUERY_PERFORMANCE_STATE: CUCORE_NVML(nvmlDeviceGetPerformanceState, d, &i); return {i};
        case CUCORE_SYSTEM_QUERY_SUPPORTED_PSTATES: {
            // NVML documents `size` in bytes of a 16-entry array; room for 16 entries
            // of either reading keeps a library that counts entries inside the buffer.
            int states[64];
            for (int &s : states) s = nv::kPstateUnknown;
            CUCORE_NVML(nvmlDeviceGetSupportedPerformanceStates, d, states, static_cast<unsigned>(16 * sizeof(int)));
            std::vector<int64_t> out;
            for (int k = 0; k < 16; ++k)
                if (states[k] != nv::kPstateUnknown) out.push_back(states[k]);
            return out;
        }
        case CUCORE_SYSTEM_QUERY_CLOCK_EVENT_REASONS: {
            unsigned long long mask = 0;
            CUCORE_NVML(nvmlDeviceGetCurrentClocksEventReasons, d, &mask);
            return {u64(mask)};
        }
        case CUCORE_SYSTEM_QUERY_SUPPORTED_CLOCK_EVENT_REASONS: {
            unsigned long long mask = 0;
            CUCORE_NVML(nvmlDeviceGetSupportedClocksEventReasons, d, &mask);
            return {u64(mask)};
        }
        case CUCORE_SYSTEM_QUERY_SUPPORTED_EVENT_TYPES: {
            unsigned long long mask = 0;
            CUCORE_NVML(nvmlDeviceGetSupportedEventTypes, d, &mask);
            return {u64(mask)};
        }
        case CUCORE_SYSTEM_QUERY_AUTO_BOOSTED_CLOCKS:
            CUCORE_NVML(nvmlDeviceGetAutoBoostedClocksEnabled, d, &i, &j);
            return {i != 0, j != 0};
        case CUCORE_SYSTEM_QUERY_CLOCK: CUCORE_NVML(nvmlDeviceGetClock, d, a0, a1, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_MAX_CLOCK: CUCORE_NVML(nvmlDeviceGetMaxClockInfo, d, a0, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_MAX_CUSTOMER_BOOST_CLOCK:
            CUCORE_NVML(nvmlDeviceGetMaxCustomerBoostClock, d, a0, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_PSTATE_CLOCK_RANGE: {
            unsigned lo = 0, hi = 0;
            CUCORE_NVML(nvmlDeviceGetMinMaxClockOfPState, d, a0, a1, &lo, &hi);
            return {u(lo), u(hi)};
        }
        case CUCORE_SYSTEM_QUERY_CLOCK_OFFSETS: {
            nv::ClockOffset offset{};
            offset.version = nv::struct_version<nv::ClockOffset>(1);
            offset.type = a0;
            offset.pstate = a1;
            CUCORE_NVML(nvmlDeviceGetClockOffsets, d, &offset);
            return {offset.clockOffsetMHz, offset.minClockOffsetMHz, offset.maxClockOffsetMHz};
        }
        case CUCORE_SYSTEM_QUERY_FAN_COUNT: CUCORE_NVML(nvmlDeviceGetNumFans, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_FAN_SPEED: CUCORE_NVML(nvmlDeviceGetFanSpeed_v2, d, ua0, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_FAN_SPEED_RPM: {
            nv::FanSpeedInfo info{};
            info.version = nv::struct_version<nv::FanSpeedInfo>(1);
            info.fan = ua0;
            CUCORE_NVML(nvmlDeviceGetFanSpeedRPM, d, &info);
            return {u(info.speed)};
        }
        case CUCORE_SYSTEM_QUERY_FAN_TARGET_SPEED: CUCORE_NVML(nvmlDeviceGetTargetFanSpeed, d, ua0, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_FAN_SPEED_RANGE: {
            unsigned lo = 0, hi = 0;
            CUCORE_NVML(nvmlDeviceGetMinMaxFanSpeed, d, &lo, &hi);
            return {u(lo), u(hi)};
        }
        case CUCORE_SYSTEM_QUERY_FAN_CONTROL_POLICY:
            CUCORE_NVML(nvmlDeviceGetFanControlPolicy_v2, d, ua0, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_COOLER: {
            nv::CoolerInfo info{};
            info.version = nv::struct_version<nv::CoolerInfo>(1);
            info.index = ua0;
            CUCORE_NVML(nvmlDeviceGetCoolerInfo, d, &info);
            return {info.signalType, info.target};
        }
        case CUCORE_SYSTEM_QUERY_ATTRIBUTES: {
            nv::DeviceAttributes a{};
            CUCORE_NVML(nvmlDeviceGetAttributes_v2, d, &a);
            return {u(a.multiprocessorCount), u(a.sharedCopyEngineCount), u(a.sharedDecoderCount),
                    u(a.sharedEncoderCount),  u(a.sharedJpegCount),       u(a.sharedOfaCount),
                    u(a.gpuInstanceSliceCount), u(a.computeInstanceSliceCount), u64(a.memorySizeMB)};
        }
        case CUCORE_SYSTEM_QUERY_BAR1_MEMORY: {
            nv::Bar1Memory m{};
            CUCORE_NVML(nvmlDeviceGetBAR1MemoryInfo, d, &m);
            return {u64(m.bar1Total), u64(m.bar1Free), u64(m.bar1Used)};
        }
        case CUCORE_SYSTEM_QUERY_MEMORY: {
            nv::MemoryV2 m{};
            m.version = nv::struct_version<nv::MemoryV2>(2);
            CUCORE_NVML(nvmlDeviceGetMemoryInfo_v2, d, &m);
            return {u64(m.total), u64(m.reserved), u64(m.free), u64(m.used)};
        }
        case CUCORE_SYSTEM_QUERY_PCI_INFO: {
            nv::PciInfoExt p{};
            p.version = nv::struct_version<nv::PciInfoExt>(1);
            CUCORE_NVML(nvmlDeviceGetPciInfoExt, d, &p);
            return {u(p.domain), u(p.bus), u(p.device), u(p.pciDeviceId), u(p.pciSubSystemId), u(p.baseClass),
                    u(p.subClass)};
        }
        case CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_GENERATION:
            CUCORE_NVML(nvmlDeviceGetMaxPcieLinkGeneration, d, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_PCIE_GPU_MAX_LINK_GENERATION:
            CUCORE_NVML(nvmlDeviceGetGpuMaxPcieLinkGeneration, d, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_PCIE_MAX_LINK_WIDTH: CUCORE_NVML(nvmlDeviceGetMaxPcieLinkWidth, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_PCIE_LINK_GENERATION:
            CUCORE_NVML(nvmlDeviceGetCurrPcieLinkGeneration, d, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_PCIE_LINK_WIDTH: CUCORE_NVML(nvmlDeviceGetCurrPcieLinkWidth, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_PCIE_THROUGHPUT: CUCORE_NVML(nvmlDeviceGetPcieThroughput, d, a0, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_PCIE_REPLAY_COUNTER:
            CUCORE_NVML(nvmlDeviceGetPcieReplayCounter, d, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_DYNAMIC_PSTATES: {
            nv::DynamicPstatesInfo info{};
            CUCORE_NVML(nvmlDeviceGetDynamicPstatesInfo, d, &info);
            std::vector<int64_t> out{u(info.flags)};
            for (const auto &domain : info.utilization)
                out.insert(out.end(), {domain.bIsPresent ? 1 : 0, u(domain.percentage), u(domain.incThreshold),
                                       u(domain.decThreshold)});
            return out;
        }
        case CUCORE_SYSTEM_QUERY_PROCESSES: {
            std::vector<int64_t> out;
            for (const Process &p : processes())
                out.insert(out.end(), {u(p.pid), u64(p.used_memory), u(p.gpu_instance_id), u(p.compute_instance_id)});
            return out;
        }
        case CUCORE_SYSTEM_QUERY_REPAIR_STATUS: {
            nv::RepairStatus status{};
            status.version = nv::struct_version<nv::RepairStatus>(1);
            CUCORE_NVML(nvmlDeviceGetRepairStatus, d, &status);
            return {status.bChannelRepairPending ? 1 : 0, status.bTpcRepairPending ? 1 : 0};
        }
        case CUCORE_SYSTEM_QUERY_TEMPERATURE_THRESHOLD:
            CUCORE_NVML(nvmlDeviceGetTemperatureThreshold, d, a0, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_TEMPERATURE_MARGIN: {
            nv::MarginTemperature margin{};
            margin.version = nv::struct_version<nv::MarginTemperature>(1);
            CUCORE_NVML(nvmlDeviceGetMarginTemperature, d, &margin);
            return {margin.marginTemperature};
        }
        case CUCORE_SYSTEM_QUERY_THERMAL_SETTINGS: {
            nv::ThermalSettings settings{};
            CUCORE_NVML(nvmlDeviceGetThermalSettings, d, ua0, &settings);
            std::vector<int64_t> out;
            for (unsigned k = 0; k < settings.count && k < 3; ++k) {
                const auto &s = settings.sensor[k];
                out.insert(out.end(), {s.controller, s.defaultMinTemp, s.defaultMaxTemp, s.currentTemp, s.target});
            }
            return out;
        }
        case CUCORE_SYSTEM_QUERY_INFOROM_CHECKSUM:
            CUCORE_NVML(nvmlDeviceGetInforomConfigurationChecksum, d, &v);
            return {u(v)};
        case CUCORE_SYSTEM_QUERY_BBX_FLUSH_TIME: {
            unsigned long long timestamp = 0;
            unsigned long duration = 0;
            CUCORE_NVML(nvmlDeviceGetLastBBXFlushTime, d, &timestamp, &duration);
            return {u64(timestamp), u64(duration)};
        }
        case CUCORE_SYSTEM_QUERY_NVLINK_COUNT: {
            cucore_system_field_value_t field{};
            field.field_id = nv::kFieldNvlinkLinkCount;
            field_values(&field, 1);
            if (field.result != nv::kSuccess) driver::throw_nvml(field.result, "nvmlDeviceGetFieldValues");
            return {u64(field.value)};
        }
        case CUCORE_SYSTEM_QUERY_NVLINK_VERSION: CUCORE_NVML(nvmlDeviceGetNvLinkVersion, d, ua0, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_NVLINK_STATE: CUCORE_NVML(nvmlDeviceGetNvLinkState, d, ua0, &i); return {i != 0};
        case CUCORE_SYSTEM_QUERY_MIG_MODE: {
            unsigned current = 0, pending = 0;
            CUCORE_NVML(nvmlDeviceGetMigMode, d, &current, &pending);
            return {current != 0, pending != 0};
        }
        case CUCORE_SYSTEM_QUERY_IS_MIG_DEVICE: CUCORE_NVML(nvmlDeviceIsMigDeviceHandle, d, &v); return {v != 0};
        case CUCORE_SYSTEM_QUERY_MAX_MIG_DEVICES: CUCORE_NVML(nvmlDeviceGetMaxMigDeviceCount, d, &v); return {u(v)};
        case CUCORE_SYSTEM_QUERY_CPU_AFFINITY: {
            std::vector<unsigned long> set(kAffinityWords);
            CUCORE_NVML(nvmlDeviceGetCpuAffinityWithinScope, d, kAffinityWords, set.data(), a0);
            return bit_indices(set);
        }
        case CUCORE_SYSTEM_QUERY_MEMORY_AFFINITY: {
            std::vector<unsigned long> set(kAffinityWords);
            CUCORE_NVML(nvmlDeviceGetMemoryAffinity, d, kAffinityWords, set.data(), a0);
            return bit_indices(set);
        }
        default: throw_invalid_argument("argument 'query' is not a cucore_system_query_t");
    }
}

std::string SystemDevice::text(cucore_system_text_t text, int64_t arg) const {
    const nv::Device d = handle_;
    // NVML's buffer sizes: NVML_DEVICE_SERIAL_BUFFER_SIZE 30, PART_NUMBER 80, INFOROM_VERSION 16.
    switch (text) {
        case CUCORE_SYSTEM_TEXT_SERIAL:
            return read_text(30, [d](char *t, unsigned n) { CUCORE_NVML(nvmlDeviceGetSerial, d, t, n); });
        case CUCORE_SYSTEM_TEXT_BOARD_PART_NUMBER:
            return read_text(80, [d](char *t, unsigned n) { CUCORE_NVML(nvmlDeviceGetBoardPartNumber, d, t, n); });
        case CUCORE_SYSTEM_TEXT_INFOROM_IMAGE_VERSION:
            return read_text(16, [d](char *t, unsigned n) { CUCORE_NVML(nvmlDeviceGetInforomImageVersion, d, t, n); });
        case CUCORE_SYSTEM_TEXT_INFOROM_VERSION: {
            const int object = static_cast<int>(arg);
            return read_text(16, [d, object](char *t, unsigned n) {
                CUCORE_NVML(nvmlDeviceGetInforomVersion, d, object, t, n);
            });
        }
        default: throw_invalid_argument("argument 'text' is not a cucore_system_text_t");
    }
}

void SystemDevice::control(cucore_system_control_t control, int64_t arg0, int64_t arg1) {
    const nv::Device d = handle_;
    switch (control) {
        case CUCORE_SYSTEM_CONTROL_PERSISTENCE_MODE:
            CUCORE_NVML(nvmlDeviceSetPersistenceMode, d, arg0 ? 1 : 0);
            return;
        case CUCORE_SYSTEM_CONTROL_SET_CPU_AFFINITY: CUCORE_NVML(nvmlDeviceSetCpuAffinity, d); return;
        case CUCORE_SYSTEM_CONTROL_CLEAR_CPU_AFFINITY: CUCORE_NVML(nvmlDeviceClearCpuAffinity, d); return;
        case CUCORE_SYSTEM_CONTROL_FAN_SPEED:
            CUCORE_NVML(nvmlDeviceSetFanSpeed_v2, d, static_cast<unsigned>(arg0), static_cast<unsigned>(arg1));
            return;
        case CUCORE_SYSTEM_CONTROL_FAN_DEFAULT_SPEED:
            CUCORE_NVML(nvmlDeviceSetDefaultFanSpeed_v2, d, static_cast<unsigned>(arg0));
            return;
        case CUCORE_SYSTEM_CONTROL_MIG_MODE: {
            nv::Return activation = nv::kSuccess;
            CUCORE_NVML(nvmlDeviceSetMigMode, d, arg0 ? 1u : 0u, &activation);
            driver::check_nvml(activation, "nvmlDeviceSetMigMode (activation)");
            return;
        }
        case CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM: CUCORE_NVML(nvmlDeviceValidateInforom, d); return;
        default: throw_invalid_argument("argument 'control' is not a cucore_system_control_t");
    }
}

namespace {
std::vector<Ref<SystemDevice>> wrap_all(const nv::Device *handles, unsigned count) {
    std::vector<Ref<SystemDevice>> out;
    for (unsigned k = 0; k < count && k < kMaxDevices; ++k) out.push_back(SystemDevice::from_handle(handles[k]));
    return out;
}
}  // namespace

std::vector<Ref<SystemDevice>> SystemDevice::related(cucore_system_relation_t relation, int64_t arg) const {
    const nv::Device d = handle_;
    nv::Device handles[kMaxDevices] = {};
    switch (relation) {
        case CUCORE_SYSTEM_RELATION_NEAREST_GPUS: {
            unsigned count = kMaxDevices;
            CUCORE_NVML(nvmlDeviceGetTopologyNearestGpus, d, static_cast<int>(arg), &count, handles);
            return wrap_all(handles, count);
        }
        case CUCORE_SYSTEM_RELATION_MIG_DEVICE:
            CUCORE_NVML(nvmlDeviceGetMigDeviceHandleByIndex, d, static_cast<unsigned>(arg), &handles[0]);
            return wrap_all(handles, 1);
        case CUCORE_SYSTEM_RELATION_MIG_PARENT:
            CUCORE_NVML(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, d, &handles[0]);
            return wrap_all(handles, 1);
        default: throw_invalid_argument("argument 'relation' is not a cucore_system_relation_t");
    }
}

std::vector<Ref<SystemDevice>> SystemDevice::with_cpu_affinity(unsigned cpu) {
    nv::Device handles[kMaxDevices] = {};
    unsigned count = kMaxDevices;
    CUCORE_NVML(nvmlSystemGetTopologyGpuSet, cpu, &count, handles);
    return wrap_all(handles, count);
}

void SystemDevice::field_values(cucore_system_field_value_t *values, size_t count) const {
    std::vector<nv::FieldValue> fields(count);
    for (size_t k = 0; k < count; ++k) {
        fields[k].fieldId = values[k].field_id;
        fields[k].scopeId = values[k].scope_id;
    }
    CUCORE_NVML(nvmlDeviceGetFieldValues, handle_, static_cast<int>(count), fields.data());
    for (size_t k = 0; k < count; ++k) {
        const nv::FieldValue &f = fields[k];
        cucore_system_field_value_t &out = values[k];
        out.timestamp = f.timestamp;
        out.latency_usec = f.latencyUsec;
        out.value_type = f.valueType;
        out.result = f.nvmlReturn;
        switch (f.valueType) {  // zero-extended bits of the member NVML wrote
            case 0: std::memcpy(&out.value, &f.value.dVal, sizeof(double)); break;
            case 1: out.value = f.value.uiVal; break;
            case 2: out.value = f.value.ulVal; break;
            case 3: out.value = f.value.ullVal; break;
            case 4: out.value = static_cast<uint64_t>(f.value.sllVal); break;
            case 5: out.value = static_cast<uint32_t>(f.value.siVal); break;
            case 6: out.value = f.value.usVal; break;
            default: out.value = f.value.ullVal; break;
        }
    }
}

void SystemDevice::clear_field_values(const cucore_system_field_value_t *values, size_t count) {
    std::vector<nv::FieldValue> fields(count);
    for (size_t k = 0; k < count; ++k) {
        fields[k].fieldId = values[k].field_id;
        fields[k].scopeId = values[k].scope_id;
    }
    CUCORE_NVML(nvmlDeviceClearFieldValues, handle_, static_cast<int>(count), fields.data());
}

int SystemDevice::p2p_status(const SystemDevice &peer, int caps_index) const {
    int status = 0;
    CUCORE_NVML(nvmlDeviceGetP2PStatus, handle_, peer.handle_, caps_index, &status);
    return status;
}

int SystemDevice::common_ancestor(const SystemDevice &peer) const {
    int level = 0;
    CUCORE_NVML(nvmlDeviceGetTopologyCommonAncestor, handle_, peer.handle_, &level);
    return level;
}

std::string SystemDevice::driver_branch() {
    nv::DriverBranchInfo info{};
    info.version = nv::struct_version<nv::DriverBranchInfo>(1);
    CUCORE_NVML(nvmlSystemGetDriverBranch, &info, static_cast<unsigned>(sizeof info.branch));
    info.branch[sizeof info.branch - 1] = '\0';
    return info.branch;
}

std::string SystemDevice::process_name(unsigned pid) {
    // NVML documents no maximum; 1024 covers Linux's comm and cmdline names it reads.
    return read_text(1024, [pid](char *t, unsigned n) { CUCORE_NVML(nvmlSystemGetProcessName, pid, t, n); });
}

}  // namespace cucore::core
