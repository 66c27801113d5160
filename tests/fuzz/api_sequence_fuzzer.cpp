// Fuzzes sequences of API calls over the substitute driver: three simulated
// owners each create, use and release their own streams, events, memory
// resources and buffers (and views), in any order the input says, on both
// fake devices.
//
// Oracles: every call the model expects to succeed does; each owner's buffers
// keep the bytes it wrote (read back after every step that could disturb
// them); a closed buffer answers INVALID_STATE; at the end of each input,
// after every owner released everything, no library object and no driver
// object is left (live object counts and the fake driver's counters return to
// where they were).
//
// Misuse: extra releases and uses of handles their owner has released (among
// them a memory resource released twice while its buffers live) must return
// CUCORE_ERROR_INVALID_HANDLE and leave every other owner's objects working and
// intact; a new handle never equals a released one.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"

namespace {

constexpr int kOwners = 3;
constexpr size_t kMaxEach = 6;
constexpr int kMaxSteps = 96;

cucore_device_t *g_devices[2];
cucore_stream_t *g_readers[2];  // the harness's own streams, one per device, for reading back
fuzz::Balance g_baseline;

struct Buffer {
    cucore_buffer_t *handle;
    std::vector<uint8_t> bytes;  // what it must hold
    bool closed = false;
};

struct Owner {
    std::vector<cucore_stream_t *> streams;
    std::vector<cucore_event_t *> events;
    std::vector<cucore_memory_resource_t *> resources;
    std::vector<Buffer> buffers;
    // Released handles (misuse targets).
    std::vector<cucore_stream_t *> dead_streams;
    std::vector<cucore_event_t *> dead_events;
    std::vector<cucore_memory_resource_t *> dead_resources;
    std::vector<cucore_buffer_t *> dead_buffers;
};
Owner g_owners[kOwners];

// A stale handle must never come back as a new object's.
template <class T>
void check_fresh(T *handle) {
    for (Owner &o : g_owners) {
        const void *h = handle;
        auto in = [h](const auto &v) { return std::find(v.begin(), v.end(), h) != v.end(); };
        FUZZ_CHECK(!in(o.dead_streams) && !in(o.dead_events) && !in(o.dead_resources) && !in(o.dead_buffers),
                   "a new handle equals a released one");
    }
}

template <class T>
T pick(FuzzedDataProvider &in, const std::vector<T> &v) {
    return v[in.ConsumeIntegralInRange<size_t>(0, v.size() - 1)];
}

void verify(const Buffer &b) {
    int device = -1;
    FUZZ_OK(cucore_buffer_device_id(b.handle, &device));
    FUZZ_CHECK(device == 0 || device == 1, "buffer on device %d", device);
    cucore_stream_t *stream = g_readers[device];
    std::vector<uint8_t> got(b.bytes.size());
    const cucore_status_t st = cucore_buffer_copy_to_host(b.handle, 0, got.data(), got.size(), stream);
    if (b.closed) {
        FUZZ_CHECK(st == CUCORE_ERROR_INVALID_STATE, "a closed buffer answered %s", cucore_status_string(st));
        return;
    }
    FUZZ_CHECK(st == CUCORE_SUCCESS, "reading a live buffer: %s", cucore_status_string(st));
    FUZZ_CHECK(got == b.bytes, "a buffer's bytes changed");
    uint64_t size = 0;
    FUZZ_OK(cucore_buffer_size(b.handle, &size));
    FUZZ_CHECK(size == b.bytes.size(), "a buffer's size changed");
}

// Every owner's objects still work and hold what they held.
void verify_all() {
    for (Owner &o : g_owners) {
        for (cucore_stream_t *s : o.streams) FUZZ_OK(cucore_stream_synchronize(s));
        for (cucore_event_t *e : o.events) {
            int done = 0;
            FUZZ_OK(cucore_event_query(e, &done));
        }
        for (cucore_memory_resource_t *r : o.resources) {
            cucore_memory_resource_kind_t kind{};
            FUZZ_OK(cucore_memory_resource_kind(r, &kind));
        }
        for (const Buffer &b : o.buffers) verify(b);
    }
}

void release_buffer(Owner &o, size_t i) {
    FUZZ_OK(cucore_buffer_release(o.buffers[i].handle));
    o.dead_buffers.push_back(o.buffers[i].handle);
    o.buffers.erase(o.buffers.begin() + static_cast<long>(i));
}

void step(FuzzedDataProvider &in, Owner &o) {
    const int op = in.ConsumeIntegralInRange<int>(0, 17);
    cucore_device_t *device = g_devices[in.ConsumeIntegralInRange<int>(0, 1)];
    switch (op) {
        case 0:  // create a stream
            if (o.streams.size() < kMaxEach) {
                cucore_stream_t *s = nullptr;
                FUZZ_OK(cucore_stream_create(device, nullptr, &s));
                check_fresh(s);
                o.streams.push_back(s);
            }
            break;
        case 1:  // release a stream (buffers and events may still use it)
            if (!o.streams.empty()) {
                const size_t i = in.ConsumeIntegralInRange<size_t>(0, o.streams.size() - 1);
                FUZZ_OK(cucore_stream_release(o.streams[i]));
                o.dead_streams.push_back(o.streams[i]);
                o.streams.erase(o.streams.begin() + static_cast<long>(i));
            }
            break;
        case 2:  // create an event
            if (o.events.size() < kMaxEach) {
                cucore_event_t *e = nullptr;
                FUZZ_OK(cucore_event_create(device, nullptr, &e));
                check_fresh(e);
                o.events.push_back(e);
            }
            break;
        case 3:  // record an event, make another stream wait on it
            if (!o.events.empty() && !o.streams.empty()) {
                cucore_event_t *e = pick(in, o.events);
                cucore_stream_t *s = pick(in, o.streams);
                cucore_device_t *es = nullptr, *ss = nullptr;
                FUZZ_OK(cucore_event_device(e, &es));
                FUZZ_OK(cucore_stream_device(s, &ss));
                const cucore_status_t st = cucore_event_record(e, s);
                // Recording on another device's stream is the driver's to refuse.
                FUZZ_CHECK(st == CUCORE_SUCCESS || (es != ss && st == CUCORE_ERROR_CUDA), "event_record: %s",
                           cucore_status_string(st));
                cucore_device_release(es);
                cucore_device_release(ss);
                FUZZ_OK(cucore_stream_wait_event(pick(in, o.streams), e));
            }
            break;
        case 4:  // synchronize
            if (!o.streams.empty()) FUZZ_OK(cucore_stream_synchronize(pick(in, o.streams)));
            if (!o.events.empty()) FUZZ_OK(cucore_event_synchronize(pick(in, o.events)));
            break;
        case 5:  // release an event
            if (!o.events.empty()) {
                const size_t i = in.ConsumeIntegralInRange<size_t>(0, o.events.size() - 1);
                FUZZ_OK(cucore_event_release(o.events[i]));
                o.dead_events.push_back(o.events[i]);
                o.events.erase(o.events.begin() + static_cast<long>(i));
            }
            break;
        case 6:  // create a pool resource
            if (o.resources.size() < kMaxEach) {
                cucore_memory_resource_t *r = nullptr;
                FUZZ_OK(cucore_device_memory_resource_create(device, nullptr, &r));
                check_fresh(r);
                o.resources.push_back(r);
            }
            break;
        case 7:  // release a resource, even while its buffers live (they hold it)
            if (!o.resources.empty()) {
                const size_t i = in.ConsumeIntegralInRange<size_t>(0, o.resources.size() - 1);
                FUZZ_OK(cucore_memory_resource_release(o.resources[i]));
                o.dead_resources.push_back(o.resources[i]);
                o.resources.erase(o.resources.begin() + static_cast<long>(i));
            }
            break;
        case 8:  // allocate and write
            if (!o.resources.empty() && !o.streams.empty() && o.buffers.size() < kMaxEach) {
                Buffer b{nullptr, std::vector<uint8_t>(in.ConsumeIntegralInRange<size_t>(1, 4096))};
                const uint8_t seed = in.ConsumeIntegral<uint8_t>();
                for (size_t i = 0; i < b.bytes.size(); ++i) b.bytes[i] = static_cast<uint8_t>(seed + i * 7);
                cucore_stream_t *s = pick(in, o.streams);
                cucore_memory_resource_t *r = pick(in, o.resources);
                cucore_device_t *sd = nullptr;
                int rd = -1, so = -2;
                FUZZ_OK(cucore_stream_device(s, &sd));
                FUZZ_OK(cucore_device_ordinal(sd, &so));
                cucore_device_release(sd);
                FUZZ_OK(cucore_memory_resource_device_id(r, &rd));
                const cucore_status_t st = cucore_memory_resource_allocate(r, b.bytes.size(), s, &b.handle);
                if (rd != so) {  // a stream of another device than the pool's
                    FUZZ_CHECK(st == CUCORE_ERROR_INVALID_ARGUMENT && !b.handle, "allocate across devices: %s",
                               cucore_status_string(st));
                    break;
                }
                FUZZ_CHECK(st == CUCORE_SUCCESS, "allocate: %s", cucore_status_string(st));
                check_fresh(b.handle);
                FUZZ_OK(cucore_buffer_copy_from_host(b.handle, 0, b.bytes.data(), b.bytes.size(), s));
                o.buffers.push_back(std::move(b));
            }
            break;
        case 9:  // read back
            if (!o.buffers.empty()) verify(o.buffers[in.ConsumeIntegralInRange<size_t>(0, o.buffers.size() - 1)]);
            break;
        case 10:  // release a buffer
            if (!o.buffers.empty()) release_buffer(o, in.ConsumeIntegralInRange<size_t>(0, o.buffers.size() - 1));
            break;
        case 11:  // a view (holds the parent's memory)
            if (!o.buffers.empty() && o.buffers.size() < kMaxEach) {
                const Buffer &p = o.buffers[in.ConsumeIntegralInRange<size_t>(0, o.buffers.size() - 1)];
                if (p.closed) break;
                const size_t offset = in.ConsumeIntegralInRange<size_t>(0, p.bytes.size() - 1);
                const size_t size = in.ConsumeIntegralInRange<size_t>(1, p.bytes.size() - offset);
                Buffer v{nullptr, std::vector<uint8_t>(p.bytes.begin() + static_cast<long>(offset),
                                                       p.bytes.begin() + static_cast<long>(offset + size))};
                FUZZ_OK(cucore_buffer_view(p.handle, offset, size, &v.handle));
                check_fresh(v.handle);
                o.buffers.push_back(std::move(v));
            }
            break;
        case 12:  // retain and release (the reference count balances)
            if (!o.buffers.empty()) {
                cucore_buffer_t *b = o.buffers[in.ConsumeIntegralInRange<size_t>(0, o.buffers.size() - 1)].handle;
                FUZZ_OK(cucore_buffer_retain(b));
                FUZZ_OK(cucore_buffer_release(b));
            }
            if (!o.streams.empty()) {
                cucore_stream_t *s = pick(in, o.streams);
                FUZZ_OK(cucore_stream_retain(s));
                FUZZ_OK(cucore_stream_release(s));
            }
            break;
        case 13:  // close a buffer on a stream: its memory goes, the handle stays
            if (!o.buffers.empty()) {
                Buffer &b = o.buffers[in.ConsumeIntegralInRange<size_t>(0, o.buffers.size() - 1)];
                const cucore_status_t st = cucore_buffer_close(b.handle, o.streams.empty() ? nullptr : pick(in, o.streams));
                FUZZ_CHECK(st == CUCORE_SUCCESS, "buffer_close: %s", cucore_status_string(st));
                // A view's close ends the view only; the parent's memory stays.
                b.closed = true;
            }
            break;
        case 14:  // change a buffer's deallocation stream
            if (!o.buffers.empty() && !o.streams.empty()) {
                Buffer &b = o.buffers[in.ConsumeIntegralInRange<size_t>(0, o.buffers.size() - 1)];
                const cucore_status_t st = cucore_buffer_set_deallocation_stream(b.handle, pick(in, o.streams));
                FUZZ_CHECK(st == CUCORE_SUCCESS || st == CUCORE_ERROR_INVALID_ARGUMENT ||
                               (b.closed && st == CUCORE_ERROR_INVALID_STATE),
                           "set_deallocation_stream: %s", cucore_status_string(st));
            }
            break;
        case 15:  // misuse: an extra release of a released handle
            {
                const int kind = in.ConsumeIntegralInRange<int>(0, 3);
                cucore_status_t st = CUCORE_ERROR_INVALID_HANDLE;
                if (kind == 0 && !o.dead_resources.empty())
                    st = cucore_memory_resource_release(pick(in, o.dead_resources));
                else if (kind == 1 && !o.dead_buffers.empty())
                    st = cucore_buffer_release(pick(in, o.dead_buffers));
                else if (kind == 2 && !o.dead_streams.empty())
                    st = cucore_stream_release(pick(in, o.dead_streams));
                else if (kind == 3 && !o.dead_events.empty())
                    st = cucore_event_release(pick(in, o.dead_events));
                FUZZ_CHECK(st == CUCORE_ERROR_INVALID_HANDLE, "an extra release answered %s", cucore_status_string(st));
                verify_all();
            }
            break;
        case 16:  // misuse: a use of a released handle
            {
                const int kind = in.ConsumeIntegralInRange<int>(0, 3);
                cucore_status_t st = CUCORE_ERROR_INVALID_HANDLE;
                uint64_t size = 0;
                cucore_buffer_t *b = nullptr;
                if (kind == 0 && !o.dead_resources.empty())
                    st = cucore_memory_resource_allocate(pick(in, o.dead_resources), 64, nullptr, &b);
                else if (kind == 1 && !o.dead_buffers.empty())
                    st = cucore_buffer_size(pick(in, o.dead_buffers), &size);
                else if (kind == 2 && !o.dead_streams.empty())
                    st = cucore_stream_synchronize(pick(in, o.dead_streams));
                else if (kind == 3 && !o.dead_events.empty())
                    st = cucore_event_synchronize(pick(in, o.dead_events));
                FUZZ_CHECK(st == CUCORE_ERROR_INVALID_HANDLE && b == nullptr, "a use after release answered %s",
                           cucore_status_string(st));
                verify_all();
            }
            break;
        default:  // everyone's objects are intact
            verify_all();
            break;
    }
}

void release_everything() {
    for (Owner &o : g_owners) {
        while (!o.buffers.empty()) release_buffer(o, o.buffers.size() - 1);
        for (cucore_memory_resource_t *r : o.resources) FUZZ_OK(cucore_memory_resource_release(r));
        for (cucore_event_t *e : o.events) FUZZ_OK(cucore_event_release(e));
        for (cucore_stream_t *s : o.streams) FUZZ_OK(cucore_stream_release(s));
        o = Owner{};
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fake::install(2);
    FUZZ_OK(cucore_device_get(0, &g_devices[0]));
    FUZZ_OK(cucore_device_get(1, &g_devices[1]));
    // Warm up: what the library keeps for the process once a device is used
    // (its primary context) exists before the baseline.
    for (cucore_device_t *d : g_devices) {
        cucore_stream_t *s = nullptr;
        FUZZ_OK(cucore_stream_create(d, nullptr, &s));
        FUZZ_OK(cucore_stream_release(s));
    }
    FUZZ_OK(cucore_stream_create(g_devices[0], nullptr, &g_readers[0]));
    FUZZ_OK(cucore_stream_create(g_devices[1], nullptr, &g_readers[1]));
    g_baseline = fuzz::Balance::now();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    for (int i = 0; i < kMaxSteps && in.remaining_bytes() > 0; ++i)
        step(in, g_owners[in.ConsumeIntegralInRange<int>(0, kOwners - 1)]);
    verify_all();
    release_everything();
    fuzz::Balance::now().expect_equal(g_baseline);
    return 0;
}
