// Compile check of the C++ façade: built (never run) as C++17 and as C++20 with
// -Wall -Wextra -Werror -pedantic. It includes every header on its own and
// twice, and instantiates every member and template so that a warning anywhere
// in cucore.hpp fails the build.
#include <cucore/stream.hpp> // any capability header alone brings what it needs
#include <cucore/event.hpp>
#include <cucore/context.hpp>
#include <cucore/device.hpp>
#include <cucore/common.hpp>
#include <cucore.hpp>
#include <cucore.hpp> // include guards

#include <string>
#include <utility>
#include <vector>

static_assert(sizeof(cucore::Device) == sizeof(void *));
static_assert(sizeof(cucore::Context) == sizeof(void *));
static_assert(sizeof(cucore::Stream) == sizeof(void *));
static_assert(sizeof(cucore::Event) == sizeof(void *));

namespace {

struct BigCallable { // heap-boxed by launch_host_func
    std::vector<int> data;
    void operator()() const noexcept {}
};

void host_fn(void *) {}

void release_cb(void *) {}

} // namespace

// Referenced from nowhere: the point is that it compiles cleanly.
int cucore_facade_compile_check();

int cucore_facade_compile_check() {
    int sum = cucore::Device::count() + cucore::Device::driver_version();
    std::vector<cucore::Device> all = cucore::Device::all();
    cucore::Device dev(0);
    cucore::Device same = cucore::Device::get(0);
    cucore::Device cur = cucore::Device::current();
    sum += dev.ordinal() + dev.handle() + static_cast<int>(dev.name().size()) +
           static_cast<int>(dev.pci_bus_id().size()) + static_cast<int>(dev.uuid().str().size()) +
           dev.compute_capability().major + static_cast<int>(dev.total_memory() != 0) +
           dev.attribute(CUCORE_DEVICE_ATTRIBUTE_WARP_SIZE) + dev.properties().multiprocessor_count +
           dev.stream_priority_range().greatest + static_cast<int>(dev.can_access_peer(same)) +
           static_cast<int>(dev == cur);
    dev.set_current();
    dev.synchronize();

    cucore::Context ctx = dev.primary_context();
    cucore::Context prim = cucore::Context::primary(dev);
    cucore::Context foreign = cucore::Context::from_handle(ctx.handle(), &release_cb, nullptr);
    sum += static_cast<int>(ctx.is_primary()) + ctx.device().ordinal() + static_cast<int>(prim == foreign);
    ctx.set_current();
    ctx.synchronize();

    cucore::StreamOptions sopts;
    sopts.nonblocking = false;
    sopts.priority = -1;
    cucore::Stream s1 = dev.create_stream();
    cucore::Stream s2 = dev.create_stream(sopts);
    cucore::Stream s3 = ctx.create_stream({true, 0});
    cucore::Stream s4 = cucore::Stream::create(ctx, sopts);
    cucore::Stream legacy = cucore::Stream::legacy_default(dev);
    cucore::Stream ptds = cucore::Stream::per_thread_default(dev);
    cucore::Stream wrapped = cucore::Stream::from_handle(s1.handle());
    cucore::Stream wrapped2 = cucore::Stream::from_handle(s1.handle(), &release_cb, &sum);

    cucore::EventOptions eopts;
    eopts.timing_enabled = true;
    cucore::Event e1 = dev.create_event();
    cucore::Event e2 = dev.create_event(eopts);
    cucore::Event e3 = ctx.create_event({true, true});
    cucore::Event e4 = cucore::Event::create(ctx);
    cucore::Event e5 = s1.record();
    cucore::Event e6 = s1.record(eopts);
    cucore::Event e7 = cucore::Event::from_handle(e1.handle(), &release_cb, nullptr);
    s1.record(e2);
    e3.record(s2);
    s2.wait(e2);
    s2.wait(s1);
    int hits = 0;
    s1.launch_host_func([&hits] { ++hits; });                 // travels in the pointer
    s1.launch_host_func([&hits, &sum] { hits += sum; });      // boxed
    s1.launch_host_func(BigCallable{{1, 2, 3}});              // boxed, moved
    const BigCallable big{{4}};
    s1.launch_host_func(big);                                 // boxed, copied
    s1.launch_host_func(&host_fn, nullptr);                   // raw
    s1.synchronize();
    e6.synchronize();
    const float ms = e6 - e2;
    const float ms2 = cucore::Event::elapsed_ms(e2, e6);
    sum += static_cast<int>(ms + ms2) + static_cast<int>(s1.is_done()) + s1.priority() +
           static_cast<int>(s1.is_nonblocking()) + static_cast<int>(s1.flags()) +
           static_cast<int>(s1.is_owned()) + s1.device().ordinal() +
           static_cast<int>(s1.context().is_primary()) + static_cast<int>(e1.is_done()) +
           static_cast<int>(e1.flags()) + static_cast<int>(e1.is_timing_enabled()) +
           static_cast<int>(e1.is_blocking_sync()) + e1.device().ordinal() +
           static_cast<int>(e1.context().is_primary()) + static_cast<int>(e1.handle() != nullptr);

    // Ownership to and from C.
    cucore_stream_t *raw = s4.release();
    cucore::Stream back = cucore::Stream::adopt(raw);
    cucore::Stream borrowed = cucore::Stream::borrow(back.get());
    swap(back, borrowed);
    back.reset();
    cucore::Stream moved = std::move(borrowed);
    cucore::Stream copied = moved;
    copied = moved;
    copied = std::move(moved);
    sum += static_cast<int>(static_cast<bool>(copied)) + static_cast<int>(copied != legacy) +
           static_cast<int>(all.size()) + static_cast<int>(ptds == wrapped) +
           static_cast<int>(wrapped2 == s3) + static_cast<int>(e4 == e5) + static_cast<int>(e7 == e1);

    try {
        (void)cucore::live_object_count(CUCORE_OBJECT_STREAM);
        (void)cucore::release_error_count();
    } catch (const cucore::Error &e) {
        sum += static_cast<int>(e.status()) + e.cuda_result() + static_cast<int>(std::string(e.what()).size()) +
               static_cast<int>(std::string(e.status_name()).size());
    }
    sum += static_cast<int>(cucore::version()) + static_cast<int>(std::string(cucore::version_string()).size()) +
           static_cast<int>(std::string(cucore::status_string(CUCORE_SUCCESS)).size());
    return sum + hits;
}
