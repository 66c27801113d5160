// An in-memory CUDA driver for unit tests, installed through the substitute
// function table. It counts every call and can fail the N-th one, so a test can
// make each driver call of a create path fail in turn.
#pragma once

#include <cuda.h>

#include <atomic>
#include <string>
#include <vector>

#include "driver/driver.hpp"

namespace fake {

struct Counters {
    int primary_retained = 0;  // primary-context retains not yet released, all devices
    int streams = 0;           // streams created and not destroyed
    int events = 0;            // events created and not destroyed
    int pools = 0;             // memory pools created and not destroyed
    int allocations = 0;       // device (pool), pinned host and cuMemAllocManaged allocations not freed
    int vmm_handles = 0;       // cuMemCreate handles not released
    int reservations = 0;      // cuMemAddressReserve ranges not freed
    int mappings = 0;          // cuMemMap mappings not unmapped
    int imported_pointers = 0;  // IPC: cuMemPoolImportPointer mappings not freed
};

// Installs the fake driver with `devices` devices (resets all state).
void install(int devices = 2);
// Restores the real driver table (loaded on next use).
void uninstall();

// Fails the `n`-th driver call from now (1-based) with `result`; 0 disables.
void fail_call(long n, CUresult result = CUDA_ERROR_UNKNOWN);
// Makes every call of entry point `name` fail with `result` ("" clears).
void fail_entry(const std::string &name, CUresult result = CUDA_ERROR_UNKNOWN);
// Number of driver calls since install() or reset_calls().
long calls();
void reset_calls();
// Names of the calls made since reset_calls(), in order.
std::vector<std::string> call_log();

// While one lives, this thread's driver calls are neither counted nor failed
// (for test set-up inside a fault-injection window).
struct Uncounted {
    Uncounted();
    ~Uncounted();
};

Counters counters();
// Frees and forgets every allocation (after a test made the fake refuse a free).
void forget_allocations();
// The fake table itself (tests may null entries to simulate an old driver).
cucore::driver::Table &table();
// Re-installs table() after a test edited it.
void reinstall();

// Memory fakes. VMM memory is real shared memory (memfd) mapped into reserved
// host address ranges, so data survives a remap and a grow by relocation.
// Granularity: 64 KiB minimum, 128 KiB recommended. A new reservation is
// followed by a free gap of its size (so it can be extended in place) unless a
// test reserves that gap itself (cuMemAddressReserve with it as the hint).
constexpr size_t kVmmMinimumGranularity = size_t{64} << 10;
constexpr size_t kVmmRecommendedGranularity = size_t{128} << 10;
// The access flags `device` has to the VMM mapping holding `address` (-1: no mapping there).
int vmm_access(CUdeviceptr address, int device);
// The props of the physical memory mapped at `address` (zeroed if none).
CUmemAllocationProp vmm_prop(CUdeviceptr address);
// The access granted by cuMemPoolSetAccess (owning device of a device pool: read-write).
CUmemAccess_flags pool_access(CUmemoryPool pool, int device);
// The attach flags cuMemAllocManaged gave the allocation at `address` (0: none from it).
unsigned managed_attach_flags(CUdeviceptr address);
// The props a pool was created with.
CUmemPoolProps pool_props(CUmemoryPool pool);
// Overrides what cuDeviceGetAttribute answers (cleared by install()).
void set_attribute(CUdevice_attribute attribute, int device, int value);
// Overrides what cuDriverGetVersion answers (13000 after install()).
void set_driver_version(int version);
// The byte a discard leaves in managed memory (its contents are unspecified).
constexpr unsigned char kDiscardedByte = 0xDD;

// Raw fake contexts, for wrapping tests.
CUcontext make_foreign_context(int device);
CUcontext current_context();  // this thread's current context in the fake
void set_current_context(CUcontext context);

}  // namespace fake
