// Fuzzes the IPC descriptors another process hands us (cucore/ipc.h):
// cucore_ipc_import_buffer and cucore_ipc_import_event with arbitrary bytes
// and sizes, into a pool imported from a real (fake-driver) IPC pool.
//
// Input: byte 0 chooses the mode, the rest is the descriptor or patches:
//   bit 0  event descriptor (else buffer descriptor)
//   bit 1  patch mode: start from a genuine descriptor and apply the rest as
//          (offset, value) byte pairs (else the rest is the descriptor, any size)
//   bit 2  repair: rewrite magic and version, and recompute the checksum, so
//          the input reaches the checks behind them and the driver
// Oracles: a failure leaves the out-pointer NULL and is INVALID_ARGUMENT or a
// driver error (CUDA), never anything else; a success happens only for a
// well-formed descriptor (magic, version, checksum, kind, reserved bytes,
// checked here independently) of the imported pool, and gives a buffer of the
// size the descriptor says, no larger than the exporter's allocation, holding
// the bytes the exporter wrote (or an event that records and synchronizes);
// nothing outlives the input.
#include <cstdint>
#include <vector>

#include <unistd.h>

#include "fuzz_support.hpp"

namespace {

constexpr uint64_t kBufferSize = 4096;

struct World {
    cucore_device_t *d0 = nullptr, *d1 = nullptr;
    cucore_stream_t *s0 = nullptr, *s1 = nullptr;
    cucore_memory_resource_t *exporter = nullptr, *imported = nullptr;
    cucore_buffer_t *buffer = nullptr;
    cucore_event_t *event = nullptr;
    uint8_t buffer_descriptor[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    uint8_t event_descriptor[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    std::vector<uint8_t> pattern;
    fuzz::Balance baseline;
};
World *g;

void repair(std::vector<uint8_t> &d, bool event) {
    if (event) {
        if (d.size() < CUCORE_IPC_EVENT_DESCRIPTOR_SIZE) return;
        std::memcpy(d.data(), "CUE", 3);
        d[3] = 1;
        fuzz::put_le(d.data() + 68, fuzz::fnv1a32(d.data(), 68), 4);
    } else {
        if (d.size() < CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE) return;
        std::memcpy(d.data(), "CUCOREIB", 8);
        fuzz::put_le(d.data() + 8, 1, 4);
        fuzz::put_le(d.data() + 120, fuzz::fnv1a64(d.data(), 120), 8);
    }
}

void import_buffer(const std::vector<uint8_t> &d) {
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(uintptr_t{1});  // must become NULL on failure
    const cucore_status_t st = cucore_ipc_import_buffer(g->imported, d.data(), d.size(), g->s1, &b);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(b == nullptr, "failed import_buffer left the out-pointer set");
        FUZZ_CHECK(st == CUCORE_ERROR_INVALID_ARGUMENT || st == CUCORE_ERROR_CUDA,
                   "import_buffer returned %s", cucore_status_string(st));
        FUZZ_CHECK(*cucore_last_error_message(), "failure without a message");
        return;
    }
    FUZZ_CHECK(b != nullptr, "import_buffer succeeded with no buffer");
    // Only a well-formed descriptor of this pool (the format of
    // src/core/ipc_descriptor.hpp, checked here independently) imports; what
    // the export data means is the driver's to judge.
    FUZZ_CHECK(d.size() == CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE, "imported a %zu-byte descriptor", d.size());
    FUZZ_CHECK(std::memcmp(d.data(), "CUCOREIB", 8) == 0 && fuzz::get_le(d.data() + 8, 4) == 1,
               "imported a descriptor with a bad magic or version");
    FUZZ_CHECK(fuzz::get_le(d.data() + 120, 8) == fuzz::fnv1a64(d.data(), 120), "imported despite a bad checksum");
    FUZZ_CHECK(fuzz::get_le(d.data() + 12, 4) == CUCORE_MEMORY_RESOURCE_DEVICE,
               "imported a descriptor of pool kind %u into a device pool", (unsigned)fuzz::get_le(d.data() + 12, 4));
    FUZZ_CHECK(std::memcmp(d.data() + 16, g->buffer_descriptor + 16, 16) == 0, "imported with a foreign pool id");
    for (int i = 104; i < 120; ++i) FUZZ_CHECK(d[i] == 0, "imported with reserved byte %d set", i);
    uint64_t size = 0;
    FUZZ_OK(cucore_buffer_size(b, &size));
    FUZZ_CHECK(size == fuzz::get_le(d.data() + 32, 8), "buffer size %llu, descriptor says %llu",
               (unsigned long long)size, (unsigned long long)fuzz::get_le(d.data() + 32, 8));
    // A descriptor that claims more than the exporter's allocation must not
    // give a buffer reaching past it (the import checks the driver's range).
    if (size > kBufferSize) {
        FUZZ_CHECK(false, "imported buffer of %llu bytes over a %llu-byte allocation",
                   (unsigned long long)size, (unsigned long long)kBufferSize);
        FUZZ_OK(cucore_buffer_release(b));
        return;
    }
    std::vector<uint8_t> got(size);
    FUZZ_OK(cucore_buffer_copy_to_host(b, 0, got.data(), size, g->s1));
    FUZZ_CHECK(std::memcmp(got.data(), g->pattern.data(), size) == 0, "imported buffer has other bytes");
    FUZZ_OK(cucore_buffer_release(b));
}

void import_event(const std::vector<uint8_t> &d) {
    cucore_event_t *e = reinterpret_cast<cucore_event_t *>(uintptr_t{1});
    const cucore_status_t st = cucore_ipc_import_event(g->d0, d.data(), d.size(), &e);
    if (st != CUCORE_SUCCESS) {
        FUZZ_CHECK(e == nullptr, "failed import_event left the out-pointer set");
        FUZZ_CHECK(st == CUCORE_ERROR_INVALID_ARGUMENT || st == CUCORE_ERROR_CUDA,
                   "import_event returned %s", cucore_status_string(st));
        return;
    }
    FUZZ_CHECK(e != nullptr, "import_event succeeded with no event");
    FUZZ_CHECK(d.size() == CUCORE_IPC_EVENT_DESCRIPTOR_SIZE && std::memcmp(d.data(), "CUE", 3) == 0 && d[3] == 1 &&
                   fuzz::get_le(d.data() + 68, 4) == fuzz::fnv1a32(d.data(), 68),
               "imported an event from a malformed descriptor");
    FUZZ_OK(cucore_event_record(e, g->s0));
    FUZZ_OK(cucore_event_synchronize(e));
    FUZZ_OK(cucore_event_release(e));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fake::install(2);
    g = new World;
    FUZZ_OK(cucore_device_get(0, &g->d0));
    FUZZ_OK(cucore_device_get(1, &g->d1));
    FUZZ_OK(cucore_stream_create(g->d0, nullptr, &g->s0));
    FUZZ_OK(cucore_stream_create(g->d1, nullptr, &g->s1));
    cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    o.ipc_enabled = 1;
    FUZZ_OK(cucore_device_memory_resource_create(g->d0, &o, &g->exporter));
    cucore_ipc_pool_handle_t h{};
    FUZZ_OK(cucore_ipc_export_memory_resource(g->exporter, &h));
    FUZZ_OK(cucore_ipc_import_memory_resource(g->d1, &h, &g->imported));
    close(h.fd);
    FUZZ_OK(cucore_memory_resource_allocate(g->exporter, kBufferSize, g->s0, &g->buffer));
    g->pattern.resize(kBufferSize);
    for (size_t i = 0; i < kBufferSize; ++i) g->pattern[i] = static_cast<uint8_t>(i * 131 + 7);
    FUZZ_OK(cucore_buffer_copy_from_host(g->buffer, 0, g->pattern.data(), kBufferSize, g->s0));
    FUZZ_OK(cucore_stream_synchronize(g->s0));
    FUZZ_OK(cucore_ipc_export_buffer(g->buffer, g->buffer_descriptor));
    cucore_event_options_t eo{sizeof(cucore_event_options_t), CUCORE_EVENT_INTERPROCESS};
    FUZZ_OK(cucore_event_create(g->d0, &eo, &g->event));
    FUZZ_OK(cucore_ipc_export_event(g->event, g->event_descriptor));
    // The genuine descriptors import (the oracles' positive side works).
    import_buffer({g->buffer_descriptor, g->buffer_descriptor + sizeof g->buffer_descriptor});
    import_event({g->event_descriptor, g->event_descriptor + sizeof g->event_descriptor});
    g->baseline = fuzz::Balance::now();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t mode = data[0];
    const bool event = mode & 1, patch = mode & 2, fix = mode & 4;
    std::vector<uint8_t> d;
    if (patch) {
        if (event)
            d.assign(g->event_descriptor, g->event_descriptor + sizeof g->event_descriptor);
        else
            d.assign(g->buffer_descriptor, g->buffer_descriptor + sizeof g->buffer_descriptor);
        for (size_t i = 1; i + 1 < size; i += 2) d[data[i] % d.size()] = data[i + 1];
    } else {
        d.assign(data + 1, data + size);
    }
    if (fix) repair(d, event);
    if (event)
        import_event(d);
    else
        import_buffer(d);
    fuzz::Balance::now().expect_equal(g->baseline);
    return 0;
}
