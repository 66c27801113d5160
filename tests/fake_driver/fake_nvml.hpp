// The substitute NVML of the tests (src/driver/nvml.hpp's table): `devices`
// GPUs that agree with the fake driver's (device d: name "Fake GPU d", the
// UUID of the fake's cuDeviceGetUuid, bus id "00000000:<d + 1>:00.0", memory
// kDeviceMemory + d with 1 GiB used), readings that name the device (utilization
// 10 + d / 20 + d percent, 40 + d degrees, 100000 + d mW drawn of a 700000 mW
// limit, clocks of an H100: graphics 1755 + d, SM 1755 + d, memory 2619,
// video 1545 MHz; the maxima 1980, 1980, 2619, 1710), compute mode DEFAULT
// and no process until set_processes(). The other queries answer an H100's
// values, fixed per device d: Hopper (9), brand NVIDIA (14), minor number d,
// module id d + 1, NUMA node d, C2C on device 1 only, persistence on, no
// display, compute capability 9.0, addressing HMM on device 0 (none on 1),
// P-state 0 on device 0 (unknown, 32, on 1), P-states {0, 5, 8}, event reasons
// 0x1 of 0x1FF, event types ECC and XID, auto boost (on, default off), one fan
// (30 % or as set, 1500 RPM, target 35 %, 20..100 %, policy 0), cooler
// (variable, GPU | memory), attributes {132 + d, 7, 7, 0, 7, 1, 7, 7, 81559},
// BAR1 128 GiB with 32 MiB + d used, memory v2 with 512 MiB reserved, PCI
// class 3.2, PCIe gen 5 (now 4) x16 (now x8), TX 1000 / RX 2000 KB/s, replay
// d + 3, one dynamic P-state domain (10 + d %, 30 / 20), TPC repair pending
// on device 1, thresholds 92/89/95/87 (acoustic NOT_SUPPORTED), margin
// 45 - d, serial "165822000000<d>", 18 NVLink 4.0 links (16 active), no MIG,
// CPUs 4d..4d+3 and NUMA node d, the other GPUs nearest (ancestor NUMA node),
// P2P OK but atomics, branch "r580_00", process p "fake-process-<p>", and the
// fields 91 (18), 1 (1) and 186 (100.5 double). Every call but nvmlErrorString is
// counted, logged and can be made to fail, as the fake driver's calls are.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "driver/nvml.hpp"

namespace fake::nvml {

// The fake's table, reset to `devices` GPUs and the defaults above.
const cucore::driver::NvmlTable &table(unsigned devices = 2);
// The fake's table as it is (the shared library's exports call through it).
const cucore::driver::NvmlTable &current_table();
// In-process (unit tests, linked with libcucore's internals): resets the fake
// and installs it as libcucore's NVML. Inline, so that fake_nvml.cpp needs
// nothing of libcucore and builds into the shared fakes too.
inline void install(unsigned devices = 2) { cucore::driver::install_nvml_substitute(&table(devices)); }
// Back to the real NVML (loaded on next use).
inline void uninstall() { cucore::driver::install_nvml_substitute(nullptr); }

// Fails the `n`-th counted call from now (1-based) with `result`; 0 disables.
void fail_call(long n, int result = cucore::driver::nvml::kErrorUnknown);
// Makes every call of `name` fail with `result` ("" clears).
void fail_entry(const std::string &name, int result = cucore::driver::nvml::kErrorUnknown);
long calls();
void reset_calls();
std::vector<std::string> call_log();

// What nvmlDeviceGetComputeRunningProcesses_v3 lists for every device: (pid, used bytes).
void set_processes(const std::vector<std::pair<uint32_t, unsigned long long>> &processes);
// Delivers event `type` (an nvmlEventType bit) with `data` of GPU `device` to each
// live event set that registered it (events are made only here; a wait with none
// queued answers NVML_ERROR_TIMEOUT at once).
void post_event(unsigned device, unsigned long long type, unsigned long long data);
// Event sets made and not yet freed.
size_t live_event_sets();
// Delivers system event `type` (an nvmlSystemEventType bit: 1 unbind, 2 bind)
// of the GPU at `gpu_id` (NVML's packing: domain << 16 | bus << 8 | device;
// fake device d is (d + 1) << 8) to each live system event set that registered
// it; a wait with none queued answers NVML_ERROR_TIMEOUT at once. The system
// event calls check each request's version (NVML_STRUCT_VERSION(..., 1)),
// answering ARGUMENT_VERSION_MISMATCH otherwise, and record types 1 and 2
// (others NOT_SUPPORTED).
void post_system_event(unsigned long long type, unsigned gpu_id);
// System event sets made and not yet freed.
size_t live_system_event_sets();
// The field ids nvmlDeviceClearFieldValues was asked to clear since the reset.
std::vector<unsigned> cleared_fields();
// What nvmlDeviceGetComputeMode answers (NVML's value).
void set_compute_mode(int mode);

}  // namespace fake::nvml
