// Devices: one attribute query (the multiprocessor count). Each variant checks afterwards that it
// read the value the raw driver reports.

#include <string>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

// The value every variant must read, from the raw driver (outside the timed loops).
bool expected_value(benchmark::State &state, int *value) {
    const Env &e = env();
    return ok(state,
              e.driver.cuDeviceGetAttribute_fn(value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, e.cu_device),
              "cuDeviceGetAttribute");
}

void check_value(benchmark::State &state, int expected, int got) {
    if (!state.error_occurred() && got != expected)
        fail_check(state, "multiprocessor count " + std::to_string(got) + ", the driver says " +
                              std::to_string(expected));
}

void device_attribute_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    const CUdevice device = env().cu_device;
    int expected = 0;
    if (!expected_value(state, &expected)) return;
    int value = 0;
    for (auto _ : state) {
        if (!ok(state, d.cuDeviceGetAttribute_fn(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
                "cuDeviceGetAttribute"))
            return;
        benchmark::DoNotOptimize(value);
    }
    check_value(state, expected, value);
}

void device_attribute_c(benchmark::State &state) {
    const cucore_device_t *device = env().device;
    int expected = 0;
    if (!expected_value(state, &expected)) return;
    int value = 0;
    for (auto _ : state) {
        if (!ok(state, cucore_device_attribute(device, CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &value),
                "cucore_device_attribute"))
            return;
        benchmark::DoNotOptimize(value);
    }
    check_value(state, expected, value);
}

void device_attribute_cpp(benchmark::State &state) {
    int expected = 0;
    if (!expected_value(state, &expected)) return;
    int value = 0;
    try {
        const cucore::Device &device = *env().cpp_device;
        for (auto _ : state) {
            value = device.attribute(CUCORE_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
            benchmark::DoNotOptimize(value);
        }
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
    check_value(state, expected, value);
}

const bool registered = register_operation({
    50,
    "device_attribute",
    "device attribute query",
    1.03,
    "issue 18: every other C row <= 1.03x raw",
    device_attribute_raw,
    device_attribute_c,
    device_attribute_cpp,
});

}  // namespace
}  // namespace cucore_bench
