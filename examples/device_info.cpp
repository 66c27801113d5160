// device_info: the same as device_info.c, with the C++ façade (cucore.hpp).
#include <cucore.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
    std::printf("libcucore %s\n", cucore::version_string());
    try {
        int count = 0;
        try {
            count = cucore::Device::count();
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NO_DRIVER) throw;
            std::printf("No CUDA driver: %s\n", e.what());
            return 0;
        }
        const int driver = cucore::driver_version();
        std::printf("CUDA driver %d.%d\n", driver / 1000, driver % 1000 / 10);
        if (count == 0) {
            std::printf("No CUDA device.\n");
            return 0;
        }
        for (const cucore::Device &dev : cucore::Device::all()) {
            const cucore::DeviceProperties p = dev.properties();
            std::printf("Device %d: %s\n", dev.ordinal(), dev.name().data());
            std::printf("  compute capability %d.%d, %d SMs, %.0f MiB, PCI %s\n",
                        p.compute_capability_major, p.compute_capability_minor, p.multiprocessor_count,
                        static_cast<double>(p.total_memory) / (1024.0 * 1024.0), dev.pci_bus_id().data());
            std::printf("  UUID %s\n", dev.uuid().str().c_str());
        }

        // Stream b waits for stream a through an event; timing events around it all.
        const cucore::Device dev(0);
        const cucore::Stream a = dev.create_stream(), b = dev.create_stream();
        std::atomic<int> value{0}, seen{-1};
        const cucore::Event start = a.record({/*timing_enabled=*/true});
        a.launch_host_func([&value] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            value = 42;
        });
        b.wait(a.record());
        b.launch_host_func([&] { seen = value.load(); });
        const cucore::Event end = b.record({/*timing_enabled=*/true});
        end.synchronize();
        std::printf("Stream demo: b's host function saw %d (written by a after 20 ms); elapsed %.2f ms\n",
                    seen.load(), end - start);
        return seen == 42 ? 0 : 1;
    } catch (const cucore::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
