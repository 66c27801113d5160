// Unit tests of the C++ façade (cucore.hpp) that need no GPU: the handle
// template's ownership rules (on empty and invalid handles, and on real objects
// made by the fake driver), cucore::Error, options conversion and host-function
// boxes. No case uses the real driver (the same checks on a GPU are in
// tests/gpu: StreamTest.FacadeCopyMoveAndCRoundTripKeepEveryObjectCount and
// EventTest.FacadeAssignmentReleasesThePreviousObject).
#include <gtest/gtest.h>

#include <cucore.hpp>

#include "test_support.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// ---- Compile-time properties -----------------------------------------------

template <typename T> constexpr bool is_cheap_handle() {
    return sizeof(T) == sizeof(void *) && std::is_nothrow_move_constructible_v<T> &&
           std::is_nothrow_move_assignable_v<T> && std::is_nothrow_destructible_v<T> &&
           std::is_nothrow_default_constructible_v<T> && std::is_copy_constructible_v<T> &&
           std::is_copy_assignable_v<T>;
}
static_assert(is_cheap_handle<cucore::Device>());
static_assert(is_cheap_handle<cucore::Context>());
static_assert(is_cheap_handle<cucore::Stream>());
static_assert(is_cheap_handle<cucore::Event>());
static_assert(std::is_base_of_v<std::exception, cucore::Error>);
static_assert(std::is_nothrow_copy_constructible_v<cucore::Error>);
// No conversions between handle kinds.
static_assert(!std::is_convertible_v<cucore::Stream, cucore::Event>);
static_assert(!std::is_constructible_v<cucore::Stream, cucore::Event>);
static_assert(!std::is_convertible_v<int, cucore::Device>); // Device(int) is explicit

// A handle value that no live object has (the library never dereferences it).
template <typename T> T *garbage() { return reinterpret_cast<T *>(std::uintptr_t{0x10}); }

// The first of the libraries libcucore's loader would try that opens, or
// nullptr. Probed with dlopen only: libcucore itself never sees the driver.
const char *loadable_real_driver() {
    static std::string path;
    const char *override_path = std::getenv("CUCORE_CUDA_DRIVER_PATH");
    for (const char *candidate : {override_path, "libcuda.so.1", "libcuda.so"}) {
        if (candidate == nullptr || *candidate == '\0') continue;
        if (void *h = dlopen(candidate, RTLD_LAZY | RTLD_LOCAL)) {
            dlclose(h);
            path = candidate;
            return path.c_str();
        }
    }
    return nullptr;
}

std::size_t live(cucore_object_type_t type) {
    std::size_t n = 0;
    EXPECT_EQ(cucore_live_object_count(type, &n), CUCORE_SUCCESS);
    return n;
}

// ---- Error -------------------------------------------------------------------

TEST(FacadeError, CarriesStatusResultAndMessage) {
    const cucore::Error e(CUCORE_ERROR_CUDA, 700, "cucore_stream_synchronize: CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_EQ(e.status(), CUCORE_ERROR_CUDA);
    EXPECT_EQ(e.cuda_result(), 700);
    EXPECT_STREQ(e.what(), "cucore_stream_synchronize: CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_STREQ(e.status_name(), "CUCORE_ERROR_CUDA");

    const cucore::Error copy = e; // noexcept copy shares the message
    EXPECT_STREQ(copy.what(), e.what());
    EXPECT_EQ(copy.status(), e.status());

    const std::exception &base = e;
    EXPECT_STREQ(base.what(), e.what());
}

TEST(FacadeError, EmptyMessageFallsBackToStatusName) {
    EXPECT_STREQ(cucore::Error(CUCORE_ERROR_NOT_READY, 0, "").what(), "CUCORE_ERROR_NOT_READY");
    EXPECT_STREQ(cucore::Error(CUCORE_ERROR_NOT_READY, 0, nullptr).what(), "CUCORE_ERROR_NOT_READY");
}

TEST(FacadeError, DeviceCountWithoutDriverThrowsNoDriver) {
    // Only where no driver can be loaded: on a machine with one, the library
    // is never pointed at it (unit tests use the fake driver only).
    if (const char *found = loadable_real_driver())
        GTEST_SKIP() << "a CUDA driver is loadable here (" << found << "); this case needs a machine without one";
    int n = -1;
    ASSERT_EQ(cucore_device_count(&n), CUCORE_ERROR_NO_DRIVER) << cucore_last_error_message();
    const std::string c_message = cucore_last_error_message();
    try {
        (void)cucore::Device::count();
        FAIL() << "Device::count() returned without a driver";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_NO_DRIVER);
        EXPECT_EQ(e.cuda_result(), 0);
        EXPECT_STRNE(e.what(), "");
        EXPECT_EQ(std::string(e.what()), c_message);
        EXPECT_EQ(std::string(e.what()), std::string(cucore_last_error_message()));
    }
    EXPECT_THROW((void)cucore::driver_version(), cucore::Error);
    EXPECT_THROW((void)cucore::Device::all(), cucore::Error);
    EXPECT_THROW((void)cucore::Device::current(), cucore::Error);
    EXPECT_THROW(cucore::Device(0), cucore::Error);
}

class FacadeFake : public FakeDriverTest {};

TEST_F(FacadeFake, ThrownErrorEqualsTheCAbiAnswer) {
    // The façade reports exactly what the C ABI says for the same call.
    cucore_device_t *raw = nullptr;
    const cucore_status_t c_status = cucore_device_get(-1, &raw);
    ASSERT_NE(c_status, CUCORE_SUCCESS);
    EXPECT_EQ(raw, nullptr);
    const std::string c_message = cucore_last_error_message();
    const int c_result = cucore_last_cuda_result();
    try {
        (void)cucore::Device::get(-1);
        FAIL() << "Device::get(-1) did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), c_status);
        EXPECT_EQ(e.cuda_result(), c_result);
        EXPECT_EQ(std::string(e.what()), c_message);
    }
}

TEST(FacadeError, LiveObjectCountRejectsUnknownType) {
    EXPECT_EQ(cucore::live_object_count(), live(CUCORE_OBJECT_ANY));
    try {
        (void)cucore::live_object_count(static_cast<cucore_object_type_t>(9999));
        FAIL() << "an unknown object type was accepted";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_STRNE(e.what(), "");
    }
    EXPECT_EQ(cucore::version(), cucore_version());
    EXPECT_STREQ(cucore::version_string(), cucore_version_string());
    EXPECT_NO_THROW((void)cucore::release_error_count());
}

// ---- Empty handles and moved-from objects ------------------------------------

template <typename T> void expect_empty(const T &h) {
    EXPECT_FALSE(static_cast<bool>(h));
    EXPECT_EQ(h.get(), nullptr);
}

template <typename F> void expect_invalid_handle(F &&call) {
    try {
        call();
        ADD_FAILURE() << "a call on an empty handle did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_HANDLE) << e.what();
        EXPECT_STRNE(e.what(), "");
    }
}

TEST(FacadeHandle, DefaultConstructedIsEmptyAndCallsThrowInvalidHandle) {
    const cucore::Device d;
    const cucore::Context c;
    const cucore::Stream s;
    const cucore::Event e;
    expect_empty(d);
    expect_empty(c);
    expect_empty(s);
    expect_empty(e);
    expect_invalid_handle([&] { (void)d.name(); });
    expect_invalid_handle([&] { (void)d.ordinal(); });
    expect_invalid_handle([&] { (void)d.create_stream(); });
    expect_invalid_handle([&] { (void)c.handle(); });
    expect_invalid_handle([&] { (void)c.create_event(); });
    expect_invalid_handle([&] { s.synchronize(); });
    expect_invalid_handle([&] { (void)s.record(); });
    expect_invalid_handle([&] { s.wait(e); });
    expect_invalid_handle([&] { (void)e.is_done(); });
    expect_invalid_handle([&] { e.record(s); });
    expect_invalid_handle([&] { (void)(e - e); });
    expect_invalid_handle([&] { (void)cucore::Stream::create(d); });
    expect_invalid_handle([&] { (void)cucore::Event::create(c, cucore::EventOptions{true, false}); });
}

TEST(FacadeHandle, CopyAndMoveOfEmptyStayEmpty) {
    cucore::Stream a;
    cucore::Stream b = a; // copy of empty: no retain
    expect_empty(b);
    cucore::Stream c = std::move(a);
    expect_empty(c);
    expect_empty(a); // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    b = c;
    b = std::move(c);
    expect_empty(b);
    b.reset();
    b.reset(); // twice is fine
    expect_empty(b);
    EXPECT_EQ(b.release(), nullptr);
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a != b);
}

TEST(FacadeHandle, AdoptReleaseRoundTripWithoutLibraryCalls) {
    cucore_event_t *raw = garbage<cucore_event_t>();
    cucore::Event e = cucore::Event::adopt(raw);
    EXPECT_TRUE(static_cast<bool>(e));
    EXPECT_EQ(e.get(), raw);
    cucore::Event moved = std::move(e);
    expect_empty(e); // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.get(), raw);
    cucore::Event other;
    swap(moved, other);
    expect_empty(moved);
    EXPECT_EQ(other.get(), raw);
    EXPECT_EQ(other.release(), raw); // ownership back to C: nothing is released
    expect_empty(other);
}

TEST(FacadeHandle, CopyOfInvalidHandleThrowsAndLeavesTargetUnchanged) {
    cucore::Stream bad = cucore::Stream::adopt(garbage<cucore_stream_t>());
    try {
        cucore::Stream copy = bad;
        ADD_FAILURE() << "copying an invalid handle did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_HANDLE);
    }
    cucore::Stream target;
    EXPECT_THROW(target = bad, cucore::Error);
    expect_empty(target); // strong guarantee: unchanged
    EXPECT_THROW((void)cucore::Stream::borrow(garbage<cucore_stream_t>()), cucore::Error);
    expect_invalid_handle([&] { bad.synchronize(); });
    // Destroying it must not throw or crash: release answers INVALID_HANDLE,
    // which the destructor swallows.
    bad.reset();
    expect_empty(bad);
    { cucore::Device d = cucore::Device::adopt(garbage<cucore_device_t>()); }
    { cucore::Context c = cucore::Context::adopt(garbage<cucore_context_t>()); }
    { cucore::Event e = cucore::Event::adopt(garbage<cucore_event_t>()); }
}

// ---- Options -----------------------------------------------------------------------

TEST(FacadeOptions, StreamOptionsConvertToC) {
    const cucore_stream_options_t def = cucore::StreamOptions{}.to_c();
    EXPECT_EQ(def.struct_size, sizeof(cucore_stream_options_t));
    EXPECT_EQ(def.flags, 0u); // non-blocking, as cuda.core
    EXPECT_EQ(def.priority, 0);
    const cucore_stream_options_t blk = cucore::StreamOptions{false, -3}.to_c();
    EXPECT_EQ(blk.flags, static_cast<std::uint32_t>(CUCORE_STREAM_BLOCKING));
    EXPECT_EQ(blk.priority, -3);
}

TEST(FacadeOptions, EventOptionsConvertToC) {
    const cucore_event_options_t def = cucore::EventOptions{}.to_c();
    EXPECT_EQ(def.struct_size, sizeof(cucore_event_options_t));
    EXPECT_EQ(def.flags, 0u);
    const cucore::EventOptions timing{true, false};
    const cucore::EventOptions blocking{false, true};
    const cucore::EventOptions both{true, true};
    EXPECT_EQ(timing.to_c().flags, static_cast<std::uint32_t>(CUCORE_EVENT_TIMING));
    EXPECT_EQ(blocking.to_c().flags, static_cast<std::uint32_t>(CUCORE_EVENT_BLOCKING_SYNC));
    EXPECT_EQ(both.to_c().flags,
              static_cast<std::uint32_t>(CUCORE_EVENT_TIMING | CUCORE_EVENT_BLOCKING_SYNC));
}

TEST(FacadeValues, UuidAndComputeCapability) {
    cucore::Uuid u;
    for (int i = 0; i < 16; ++i) u.value.bytes[i] = static_cast<unsigned char>(i * 17);
    EXPECT_EQ(u.str(), "00112233-4455-6677-8899-aabbccddeeff");
    cucore::Uuid v = u;
    EXPECT_TRUE(u == v);
    v.value.bytes[15] = 0;
    EXPECT_TRUE(u != v);
    EXPECT_TRUE((cucore::ComputeCapability{8, 9} < cucore::ComputeCapability{9, 0}));
    EXPECT_TRUE((cucore::ComputeCapability{9, 0} == cucore::ComputeCapability{9, 0}));
    EXPECT_TRUE((cucore::ComputeCapability{9, 0} != cucore::ComputeCapability{9, 1}));
}

// ---- Host-function boxes -------------------------------------------------------------

// A callable that counts its live copies and its calls.
struct Counted {
    static int live;
    static int calls;
    std::string payload = std::string(64, 'x'); // not trivially copyable: boxed on the heap
    Counted() { ++live; }
    Counted(const Counted &o) : payload(o.payload) { ++live; }
    Counted(Counted &&o) noexcept : payload(std::move(o.payload)) { ++live; }
    Counted &operator=(const Counted &) = default;
    ~Counted() { --live; }
    void operator()() { ++calls; }
};
int Counted::live = 0;
int Counted::calls = 0;

TEST(FacadeHostFunc, BoxedCallableRunsOnceAndIsFreed) {
    Counted::live = 0;
    Counted::calls = 0;
    {
        Counted f;
        auto *box = new Counted(f);
        EXPECT_EQ(Counted::live, 2);
        cucore::detail::invoke_boxed_host_fn<Counted>(box); // what the driver thread does
        EXPECT_EQ(Counted::calls, 1);
        EXPECT_EQ(Counted::live, 1);
    }
    EXPECT_EQ(Counted::live, 0);
}

TEST(FacadeHostFunc, SmallTrivialCallableTravelsInThePointer) {
    int hits = 0;
    auto f = [&hits] { ++hits; };
    static_assert(cucore::detail::fits_in_pointer_v<decltype(f)>);
    static_assert(!cucore::detail::fits_in_pointer_v<Counted>);
    void *user_data = nullptr;
    std::memcpy(&user_data, static_cast<const void *>(&f), sizeof f);
    cucore::detail::invoke_inline_host_fn<decltype(f)>(user_data);
    EXPECT_EQ(hits, 1);
}

TEST(FacadeHostFunc, FailedLaunchFreesTheBoxAndThrows) {
    Counted::live = 0;
    Counted::calls = 0;
    const cucore::Stream empty;
    {
        Counted f;
        EXPECT_THROW(empty.launch_host_func(f), cucore::Error);
        EXPECT_THROW(empty.launch_host_func(Counted{}), cucore::Error);
        EXPECT_EQ(Counted::live, 1); // only `f`: the boxes were freed
    }
    EXPECT_EQ(Counted::live, 0);
    EXPECT_EQ(Counted::calls, 0);
    int hits = 0;
    EXPECT_THROW(empty.launch_host_func([&hits] { ++hits; }), cucore::Error);
    EXPECT_THROW(empty.launch_host_func(
                     [](void *p) { ++*static_cast<int *>(p); }, &hits),
                 cucore::Error);
    EXPECT_EQ(hits, 0);
}

// ---- With objects of the fake driver ------------------------------------------------

TEST_F(FacadeFake, CopyRetainsMoveStealsDestructorReleases) {
    const cucore::Device dev(0);
    const std::size_t streams0 = live(CUCORE_OBJECT_STREAM);
    const std::size_t events0 = live(CUCORE_OBJECT_EVENT);
    const int driver_streams0 = fake::counters().streams;
    {
        cucore::Stream a = dev.create_stream();
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
        EXPECT_EQ(fake::counters().streams, driver_streams0 + 1);
        cucore::Stream b = a; // retain: the same object
        EXPECT_TRUE(a == b);
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
        a.reset(); // b keeps it alive
        EXPECT_EQ(fake::counters().streams, driver_streams0 + 1);
        EXPECT_NO_THROW(b.synchronize());
        cucore::Stream c = std::move(b);
        expect_empty(b); // NOLINT(bugprone-use-after-move)
        expect_invalid_handle([&] { b.synchronize(); });
        EXPECT_TRUE(c.is_done());
        cucore::Event e = c.record();
        EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
        cucore::Event f;
        f = e; // copy assignment retains
        e = cucore::Event{}; // releases one reference
        EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
        EXPECT_TRUE(f.is_done());
    } // destructors release
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0);
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0);
    EXPECT_EQ(fake::counters().streams, driver_streams0);
}

TEST_F(FacadeFake, AssignmentReleasesThePreviousObject) {
    const cucore::Device dev(1);
    const std::size_t events0 = live(CUCORE_OBJECT_EVENT);
    cucore::Event a = dev.create_event();
    cucore::Event b = dev.create_event({true, true});
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 2);
    a = b; // a's first event is released
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
    const cucore::Event &same = a;
    a = same; // self-assignment keeps it
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
    EXPECT_TRUE(a.is_timing_enabled());
    EXPECT_TRUE(a.is_blocking_sync());
    b = std::move(a);
    expect_empty(a); // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
    b = cucore::Event{};
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0);
}

TEST_F(FacadeFake, OwnershipPassesToAndFromC) {
    const cucore::Device dev(0);
    const std::size_t streams0 = live(CUCORE_OBJECT_STREAM);
    cucore::Stream s = dev.create_stream({false, -1});
    cucore_stream_t *raw = s.release(); // C owns it now
    expect_empty(s);
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
    int priority = 0;
    ASSERT_EQ(cucore_stream_priority(raw, &priority), CUCORE_SUCCESS);
    EXPECT_EQ(priority, -1);
    {
        const cucore::Stream borrowed = cucore::Stream::borrow(raw); // +1, C keeps its own
        EXPECT_FALSE(borrowed.is_nonblocking());
    }
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
    {
        const cucore::Stream adopted = cucore::Stream::adopt(raw); // takes C's reference
        EXPECT_EQ(adopted.priority(), -1);
    }
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0);
    EXPECT_EQ(cucore_stream_release(raw), CUCORE_ERROR_INVALID_HANDLE); // stale now
}

TEST_F(FacadeFake, DriverFailureThrowsErrorWithTheCudaResult) {
    const cucore::Device dev(0);
    fake::fail_entry("cuStreamCreateWithPriority", CUDA_ERROR_OUT_OF_MEMORY);
    try {
        (void)dev.create_stream();
        ADD_FAILURE() << "create_stream did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_NE(e.status(), CUCORE_SUCCESS);
        EXPECT_EQ(e.cuda_result(), CUDA_ERROR_OUT_OF_MEMORY);
        EXPECT_STRNE(e.what(), "");
        EXPECT_EQ(std::string(e.what()), std::string(cucore_last_error_message()));
    }
    fake::fail_entry("");
    fake::fail_entry("cuEventElapsedTime", CUDA_ERROR_NOT_READY);
    const cucore::Stream s = dev.create_stream();
    const cucore::Event a = s.record({true, false});
    const cucore::Event b = s.record({true, false});
    try {
        (void)(b - a);
        ADD_FAILURE() << "elapsed time did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_NOT_READY);
        EXPECT_EQ(e.cuda_result(), CUDA_ERROR_NOT_READY);
    }
    fake::fail_entry("");
    EXPECT_FLOAT_EQ(b - a, cucore::Event::elapsed_time(a, b));
}

TEST_F(FacadeFake, HostFunctionBoxesRunOnceAndAreFreed) {
    const cucore::Stream s = cucore::Device(0).create_stream();
    Counted::live = 0;
    Counted::calls = 0;
    {
        Counted f;
        s.launch_host_func(f);         // boxed copy
        s.launch_host_func(Counted{}); // boxed move
        s.synchronize();
        EXPECT_EQ(Counted::calls, 2);
        EXPECT_EQ(Counted::live, 1); // only `f`
    }
    EXPECT_EQ(Counted::live, 0);
    int hits = 0;
    s.launch_host_func([&hits] { ++hits; }); // travels in the pointer
    s.launch_host_func([](void *p) { ++*static_cast<int *>(p); }, &hits);
    s.synchronize();
    EXPECT_EQ(hits, 2);
}

TEST_F(FacadeFake, QueriesForwardToTheCAbi) {
    EXPECT_EQ(cucore::Device::count(), 2);
    const std::vector<cucore::Device> all = cucore::Device::all();
    ASSERT_EQ(all.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        const cucore::Device &d = all[static_cast<std::size_t>(i)];
        EXPECT_EQ(d.ordinal(), i);
        EXPECT_TRUE(d == cucore::Device::get(i)); // one object per ordinal
        const char *name = nullptr;
        ASSERT_EQ(cucore_device_name(d.get(), &name), CUCORE_SUCCESS);
        EXPECT_EQ(d.name(), std::string(name));
        cucore_uuid_t uuid{};
        ASSERT_EQ(cucore_device_uuid(d.get(), &uuid), CUCORE_SUCCESS);
        EXPECT_EQ(std::memcmp(d.uuid().bytes(), uuid.bytes, 16), 0);
        EXPECT_EQ(d.properties().ordinal, i);
        int major = 0, minor = 0;
        ASSERT_EQ(cucore_device_compute_capability(d.get(), &major, &minor), CUCORE_SUCCESS);
        EXPECT_EQ(d.compute_capability(), (cucore::ComputeCapability{major, minor}));
        EXPECT_EQ(d.attribute(CUCORE_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), major);
    }
    const cucore::Context c = all[1].primary_context();
    EXPECT_TRUE(c.is_primary());
    EXPECT_TRUE(c.device() == all[1]);
    const cucore::Stream s = c.create_stream();
    EXPECT_TRUE(s.context() == c);
    EXPECT_TRUE(s.device() == all[1]);
    EXPECT_TRUE(s.is_owned());
    const cucore::Event e = c.create_event();
    EXPECT_TRUE(e.context() == c);
    EXPECT_TRUE(e.device() == all[1]);
    EXPECT_EQ(cucore::Stream::legacy_default(all[0]).handle(), reinterpret_cast<void *>(1));
    EXPECT_EQ(cucore::Stream::per_thread_default(all[0]).handle(), reinterpret_cast<void *>(2));
    EXPECT_EQ(fake::current_context(), nullptr); // nothing was made current
}

void count_release(void *p) { ++*static_cast<int *>(p); }

TEST_F(FacadeFake, ForeignContextOwnerIsToldOnceAtTheLastRelease) {
    CUcontext foreign = fake::make_foreign_context(0);
    int released = 0;
    cucore::Stream s;
    {
        const cucore::Context c = cucore::Context::from_handle(foreign, &count_release, &released);
        EXPECT_EQ(c.handle(), static_cast<void *>(foreign));
        EXPECT_FALSE(c.is_primary());
        const cucore::Context copy = c;
        s = copy.create_stream();
    }
    EXPECT_EQ(released, 0); // the stream holds the context
    s.synchronize();
    s.reset();
    EXPECT_EQ(released, 1);
}

// ---- Copy, move and C round trip, with every object counted -------------------------

TEST_F(FacadeFake, CopyMoveAndCRoundTripKeepEveryObjectCount) {
    const cucore::Device dev(0);
    const std::size_t streams0 = live(CUCORE_OBJECT_STREAM);
    const std::size_t any0 = live(CUCORE_OBJECT_ANY);
    const int driver_streams0 = fake::counters().streams;
    {
        cucore::Stream a = dev.create_stream();
        const std::size_t any1 = live(CUCORE_OBJECT_ANY);
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
        cucore::Stream b = a; // retain: same object
        EXPECT_TRUE(a == b);
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
        a.reset(); // b keeps it alive
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
        EXPECT_NO_THROW(b.synchronize());
        cucore::Stream c = std::move(b);
        expect_empty(b); // NOLINT(bugprone-use-after-move)
        EXPECT_EQ(live(CUCORE_OBJECT_ANY), any1);
        // Ownership to C and back.
        cucore_stream_t *raw = c.release();
        expect_empty(c);
        EXPECT_EQ(cucore_stream_synchronize(raw), CUCORE_SUCCESS);
        cucore::Stream d = cucore::Stream::adopt(raw);
        cucore::Stream e = cucore::Stream::borrow(d.get()); // +1
        d.reset();
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0 + 1);
        EXPECT_EQ(fake::counters().streams, driver_streams0 + 1);
        e.reset(); // last reference
        EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams0);
        EXPECT_EQ(fake::counters().streams, driver_streams0); // destroyed in the driver
    }
    EXPECT_EQ(live(CUCORE_OBJECT_ANY), any0);
}

TEST_F(FacadeFake, AssignmentOfDefaultEventsReleasesThePreviousObject) {
    const cucore::Device dev(0);
    const std::size_t events0 = live(CUCORE_OBJECT_EVENT);
    const int driver_events0 = driver_objects().events;
    cucore::Event a = dev.create_event();
    cucore::Event b = dev.create_event();
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 2);
    EXPECT_EQ(driver_objects().events, driver_events0 + 2);
    a = b; // a's first event is released
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
    EXPECT_EQ(driver_objects().events, driver_events0 + 1);
    const cucore::Event &same = a;
    a = same; // self-assignment keeps it
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
    b = std::move(a);
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0 + 1);
    b = cucore::Event{};
    EXPECT_EQ(live(CUCORE_OBJECT_EVENT), events0);
    EXPECT_EQ(driver_objects().events, driver_events0);
}

} // namespace
