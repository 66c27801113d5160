// The one state of the fake driver and its reset.
#include "state.hpp"

#include <cstdlib>
#include <ctime>

#include "table.hpp"

namespace fake::detail {

thread_local CUcontext t_current = nullptr;

State &state() {
    static State *const g = new State;  // never destroyed: detached stream workers may outlive main
    return *g;
}

double now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

namespace {

// Stops every stream: lets the queued work finish and the workers exit.
void stop_streams(Lock &lock) {
    State &g = state();
    wait_all_streams(lock);
    for (auto &stream : g.stream_storage) stream->destroyed = true;
    g.changed.notify_all();
    g.changed.wait(lock, [&] { return g.live_workers == 0; });
}

void forget_memory() {
    State &g = state();
    for (auto &[base, allocation] : g.allocations)
        if (allocation.owns_storage) std::free(reinterpret_cast<void *>(base));
    g.allocations.clear();
    for (auto &pool : g.default_pools) pool->used = pool->used_high = 0;
    g.pool_storage.clear();
    g.pools.clear();
    g.all_pools.clear();
    for (auto &pool : g.default_pools) g.all_pools.insert(pool.get());
    for (Pool *pool : {g.host_default_pool.get(), g.managed_default_pool.get()})
        if (pool) {
            pool->used = pool->used_high = 0;
            pool->access.clear();
            g.all_pools.insert(pool);
        }
    g.exported_pools.clear();
    g.imported_pointers.clear();
    forget_virtual_memory();
}

void forget_kernels() {
    State &g = state();
    g.library_storage.clear();
    g.libraries.clear();
    g.link_storage.clear();
    g.links.clear();
    g.link_options.clear();
    g.kernel_specs.clear();
    g.foreign_kernels.clear();
    g.functions.clear();
    g.kernel_attributes.clear();
    g.launches.clear();
    g.launch_count = 0;
    g.last_occupancy = OccupancyCall{};
}

void forget_graphics() {
    State &g = state();
    g.graphics_storage.clear();
    g.graphics.clear();
    g.graphics_log.clear();
    g.next_graphics_id = 1;
    g.graphics_violations = 0;
    g.gl_device = 0;
}

// One primary context and one default pool per device, kept across resets.
void make_devices(int devices) {
    State &g = state();
    g.devices = devices;
    while (static_cast<int>(g.primary.size()) < devices) {
        g.primary.push_back(std::make_unique<Context>(Context{static_cast<int>(g.primary.size()), true, nullptr, {}}));
        g.contexts.insert(g.primary.back().get());
        g.primary_refs.push_back(0);
    }
    while (static_cast<int>(g.default_pools.size()) < devices) {
        auto pool = std::make_unique<Pool>();
        pool->device = static_cast<int>(g.default_pools.size());
        pool->is_default = true;
        pool->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pool->props.location = {CU_MEM_LOCATION_TYPE_DEVICE, pool->device};
        g.all_pools.insert(pool.get());
        g.default_pools.push_back(std::move(pool));
    }
}

}  // namespace

void reset(int devices, bool worker_streams) {
    State &g = state();
    Lock lock(g.mutex);
    stop_streams(lock);
    g.stream_storage.clear();
    g.streams.clear();
    for (Context *context : g.contexts) context->default_stream = nullptr;
    g.event_storage.clear();
    g.events.clear();
    forget_graphs();    // before the memory: graph allocations are registered there
    forget_graphics();  // before the memory: GL buffers' storage is registered there
    forget_arrays();
    forget_kernels();
    forget_memory();
    make_devices(devices);
    g.attributes.clear();
    g.driver_version = 13000;
    g.calls = 0;
    g.fail_at = 0;
    g.fail_entry.clear();
    g.log.clear();
    g.initialized = false;
    g.worker_streams = worker_streams;
    t_current = nullptr;
    build_table();
}

}  // namespace fake::detail
