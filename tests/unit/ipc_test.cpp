// IPC (cucore/ipc.h) through the fake driver: pools exported and imported,
// buffers and events round-tripping through their descriptors, the import
// cache, and every way a descriptor or handle can be wrong.
#include <fcntl.h>

#include <thread>

#include "core/ipc_descriptor.hpp"
#include "ipc_fixture.hpp"

namespace {

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// ---- events -------------------------------------------------------------------------------------

TEST_F(IpcTest, InterprocessEventsAreCreatedWithoutTimingAndRefuseTiming) {
    cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
    o.flags = CUCORE_EVENT_INTERPROCESS;
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_create(d0_, &o, &e), CUCORE_SUCCESS) << message();
    uint32_t flags = 0;
    ASSERT_EQ(cucore_event_flags(e, &flags), CUCORE_SUCCESS);
    EXPECT_EQ(flags, static_cast<uint32_t>(CUCORE_EVENT_INTERPROCESS));
    float ms = 1;
    EXPECT_EQ(cucore_event_elapsed_time(e, e, &ms), CUCORE_ERROR_INVALID_STATE) << "no timing: " << message();
    cucore_event_release(e);

    for (bool through_stream : {false, true}) {
        o.flags = CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_TIMING;
        fake::reset_calls();
        e = reinterpret_cast<cucore_event_t *>(0x1);
        cucore_status_t status = through_stream ? cucore_stream_record(s0_, &o, &e) : cucore_event_create(d0_, &o, &e);
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(e, nullptr);
        EXPECT_TRUE(contains(message(), "CUCORE_EVENT_INTERPROCESS") && contains(message(), "CUCORE_EVENT_TIMING"))
            << message();
        EXPECT_EQ(fake::calls(), 0) << "checked before any driver call";
    }
    // A stream can record an interprocess event too.
    o.flags = CUCORE_EVENT_INTERPROCESS | CUCORE_EVENT_BLOCKING_SYNC;
    ASSERT_EQ(cucore_stream_record(s0_, &o, &e), CUCORE_SUCCESS) << message();
    EventBytes d{};
    EXPECT_EQ(cucore_ipc_export_event(e, d.data()), CUCORE_SUCCESS) << message();
    cucore_event_release(e);
}

TEST_F(IpcTest, EventsRoundTripThroughTheirDescriptor) {
    cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
    o.flags = CUCORE_EVENT_INTERPROCESS;
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_create(d0_, &o, &e), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_record(e, s0_), CUCORE_SUCCESS);
    EventBytes d{};
    ASSERT_EQ(cucore_ipc_export_event(e, d.data()), CUCORE_SUCCESS) << message();
    EXPECT_EQ(std::memcmp(d.data(), "CUE\x01", 4), 0);

    const int events = driver_objects().events;
    cucore_event_t *imported = nullptr;
    ASSERT_EQ(cucore_ipc_import_event(d1_, d.data(), d.size(), &imported), CUCORE_SUCCESS) << message();
    EXPECT_EQ(driver_objects().events, events + 1) << "the import is an event of its own (cuIpcOpenEventHandle)";
    void *raw_imported = nullptr, *raw_exported = nullptr;
    cucore_event_handle(imported, &raw_imported);
    cucore_event_handle(e, &raw_exported);
    EXPECT_NE(raw_imported, raw_exported);
    uint32_t flags = 0;
    cucore_event_flags(imported, &flags);
    EXPECT_EQ(flags, static_cast<uint32_t>(CUCORE_EVENT_INTERPROCESS));
    cucore_device_t *on = nullptr;
    ASSERT_EQ(cucore_event_device(imported, &on), CUCORE_SUCCESS);
    int ordinal = -1;
    cucore_device_ordinal(on, &ordinal);
    EXPECT_EQ(ordinal, 1) << "opened in the importing device's primary context";
    cucore_device_release(on);
    // It works as any event, and can be exported again.
    EXPECT_EQ(cucore_stream_wait_event(s1_, imported), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_event_record(imported, s1_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_event_synchronize(imported), CUCORE_SUCCESS) << message();
    EventBytes again{};
    EXPECT_EQ(cucore_ipc_export_event(imported, again.data()), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    cucore_event_release(imported);
    EXPECT_EQ(count_calls("cuEventDestroy"), 1u) << "an imported event is destroyed with its last reference";
    cucore_event_release(e);
}

TEST_F(IpcTest, EventsWithoutTheInterprocessFlagAreNotExported) {
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_create(d0_, nullptr, &e), CUCORE_SUCCESS);
    EventBytes d;
    d.fill(0x77);
    fake::reset_calls();
    EXPECT_EQ(cucore_ipc_export_event(e, d.data()), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "cucore_ipc_export_event:") && contains(message(), "CUCORE_EVENT_INTERPROCESS"))
        << message();
    EXPECT_EQ(d, EventBytes{}) << "the descriptor reads zeros after a failure";
    EXPECT_EQ(fake::calls(), 0);
    cucore_event_release(e);
}

TEST_F(IpcTest, EventDescriptorsAreValidatedBeforeTheDriver) {
    cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
    o.flags = CUCORE_EVENT_INTERPROCESS;
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_create(d0_, &o, &e), CUCORE_SUCCESS);
    EventBytes good{};
    ASSERT_EQ(cucore_ipc_export_event(e, good.data()), CUCORE_SUCCESS);
    auto refuse = [&](const uint8_t *bytes, uint64_t size, const std::string &expected) {
        SCOPED_TRACE(expected + " (" + std::to_string(size) + " bytes)");
        fake::reset_calls();
        cucore_event_t *imported = reinterpret_cast<cucore_event_t *>(0x1);
        EXPECT_EQ(cucore_ipc_import_event(d0_, bytes, size, &imported), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(imported, nullptr);
        EXPECT_TRUE(contains(message(), "cucore_ipc_import_event: argument 'descriptor'")) << message();
        EXPECT_TRUE(contains(message(), expected)) << message();
        EXPECT_EQ(fake::calls(), 0) << "nothing reaches the driver";
    };
    refuse(nullptr, good.size(), "is NULL");
    refuse(good.data(), 0, "truncated");
    refuse(good.data(), good.size() - 1, "truncated: 71 bytes");
    std::vector<uint8_t> longer(good.begin(), good.end());
    longer.push_back(0);
    refuse(longer.data(), longer.size(), "has 73 bytes");
    for (size_t i = 0; i < good.size(); ++i) {
        for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
            EventBytes bad = good;
            bad[i] ^= flip;
            refuse(bad.data(), bad.size(), i < 3 ? "bad magic" : i == 3 ? "format version" : "checksum mismatch");
        }
    }
    cucore_event_release(e);
}

// ---- pools --------------------------------------------------------------------------------------

TEST_F(IpcTest, DevicePoolsExportAsAFileDescriptorAndImportOnce) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    uint8_t id[CUCORE_IPC_POOL_ID_SIZE] = {};
    ASSERT_EQ(cucore_ipc_memory_resource_pool_id(mr, id), CUCORE_SUCCESS) << message();
    EXPECT_NE(std::vector<uint8_t>(id, id + 16), std::vector<uint8_t>(16, 0)) << "a random identifier";
    cucore_ipc_pool_handle_t h = export_pool(mr);
    ASSERT_GE(h.fd, 0);
    EXPECT_NE(fcntl(h.fd, F_GETFD), -1) << "a real, open descriptor";
    EXPECT_EQ(h.kind, static_cast<uint32_t>(CUCORE_MEMORY_RESOURCE_DEVICE));
    EXPECT_EQ(std::memcmp(h.pool_id, id, 16), 0);
    void *raw = nullptr;
    cucore_memory_resource_handle(mr, &raw);
    EXPECT_EQ(fake::pool_props(static_cast<CUmemoryPool>(raw)).handleTypes, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);

    cucore_memory_resource_t *imported = import_pool(d0_, h);
    ASSERT_NE(imported, nullptr);
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_UNSET;
    cucore_memory_resource_kind(imported, &kind);
    EXPECT_EQ(kind, CUCORE_MEMORY_RESOURCE_IMPORTED);
    int device_id = -2, dacc = -1, hacc = -1;
    cucore_memory_resource_device_id(imported, &device_id);
    cucore_memory_resource_accessibility(imported, &dacc, &hacc);
    EXPECT_EQ(device_id, 0);
    EXPECT_EQ(dacc, 1);
    EXPECT_EQ(hacc, 0);
    uint8_t imported_id[CUCORE_IPC_POOL_ID_SIZE] = {};
    ASSERT_EQ(cucore_ipc_memory_resource_pool_id(imported, imported_id), CUCORE_SUCCESS);
    EXPECT_EQ(std::memcmp(imported_id, id, 16), 0);
    void *imported_raw = nullptr;
    cucore_memory_resource_handle(imported, &imported_raw);
    EXPECT_NE(imported_raw, raw) << "the import is a pool handle of its own";

    // The same pool again: the same resource, and no second driver import.
    fake::reset_calls();
    cucore_memory_resource_t *again = import_pool(d0_, h);
    EXPECT_EQ(again, imported);
    EXPECT_EQ(count_calls("cuMemPoolImportFromShareableHandle"), 0u);
    cucore_memory_resource_release(again);
    // On another device it is refused rather than silently given device 0's resource.
    cucore_memory_resource_t *other = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    EXPECT_EQ(cucore_ipc_import_memory_resource(d1_, &h, &other), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "already imported on device 0")) << message();
    EXPECT_EQ(other, nullptr);

    // An imported pool maps buffers; it cannot allocate.
    cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
    EXPECT_EQ(cucore_memory_resource_allocate(imported, 64, s0_, &b), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(message(), "cannot allocate")) << message();
    EXPECT_EQ(b, nullptr);

    // The last reference destroys the imported pool; importing then makes a new one.
    const int pools = fake::counters().pools;
    cucore_memory_resource_release(imported);
    EXPECT_EQ(fake::counters().pools, pools - 1);
    fake::reset_calls();
    imported = import_pool(d0_, h);
    EXPECT_EQ(count_calls("cuMemPoolImportFromShareableHandle"), 1u);
    cucore_memory_resource_release(imported);
    close(h.fd);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcTest, PinnedPoolsImportAsHostMemoryTheDeviceCanReach) {
    cucore_memory_resource_t *mr = ipc_pool(d0_, true);
    cucore_ipc_pool_handle_t h = export_pool(mr);
    EXPECT_EQ(h.kind, static_cast<uint32_t>(CUCORE_MEMORY_RESOURCE_PINNED));
    cucore_memory_resource_t *imported = import_pool(d1_, h);
    int device_id = -2, dacc = -1, hacc = -1;
    cucore_memory_resource_device_id(imported, &device_id);
    cucore_memory_resource_accessibility(imported, &dacc, &hacc);
    EXPECT_EQ(device_id, -1);
    EXPECT_EQ(dacc, 1);
    EXPECT_EQ(hacc, 1);
    void *raw = nullptr;
    cucore_memory_resource_handle(imported, &raw);
    EXPECT_EQ(fake::pool_access(static_cast<CUmemoryPool>(raw), 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        << "the importing device is granted access";

    cucore_buffer_t *b = allocate(mr, 512, s0_);
    const std::vector<uint8_t> data = pattern(512, 9);
    write(b, data, s0_);
    BufferBytes d = export_buffer(b);
    cucore_buffer_t *ib = import_buffer(imported, d, s1_);
    EXPECT_EQ(read(ib, s1_), data);
    int bdev = -2, bd = -1, bh = -1, bm = -1;
    cucore_buffer_device_id(ib, &bdev);
    cucore_buffer_accessibility(ib, &bd, &bh, &bm);
    EXPECT_EQ(bdev, -1);
    EXPECT_EQ(bd + bh * 2 + bm * 4, 3) << "device and host accessible, not managed";
    cucore_buffer_release(ib);
    cucore_buffer_release(b);
    cucore_memory_resource_release(imported);
    close(h.fd);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcTest, ExportingNeedsAnIpcEnabledPool) {
    cucore_memory_resource_t *plain = nullptr, *deflt = nullptr, *legacy = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_create(d0_, nullptr, &plain), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &deflt), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d0_, &legacy), CUCORE_SUCCESS);
    for (cucore_memory_resource_t *mr : {plain, deflt, legacy}) {
        fake::reset_calls();
        cucore_ipc_pool_handle_t h;
        std::memset(&h, 0x55, sizeof h);
        EXPECT_EQ(cucore_ipc_export_memory_resource(mr, &h), CUCORE_ERROR_NOT_SUPPORTED);
        EXPECT_TRUE(contains(message(), "ipc_enabled")) << message();
        EXPECT_EQ(h.fd, -1) << "never a descriptor the caller might close";
        EXPECT_EQ(h.kind, 0u);
        uint8_t id[CUCORE_IPC_POOL_ID_SIZE];
        std::memset(id, 0x55, sizeof id);
        EXPECT_EQ(cucore_ipc_memory_resource_pool_id(mr, id), CUCORE_ERROR_NOT_SUPPORTED);
        EXPECT_EQ(id[0] | id[15], 0) << "cleared";
        EXPECT_EQ(fake::calls(), 0);
    }
    // Nor can their buffers be exported.
    cucore_buffer_t *b = allocate(plain, 64, s0_), *pinned = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(legacy, 64, nullptr, &pinned), CUCORE_SUCCESS);
    cucore_buffer_t *foreign = nullptr;
    ASSERT_EQ(cucore_buffer_from_handle(0x1000, 64, d0_, nullptr, nullptr, &foreign), CUCORE_SUCCESS);
    for (cucore_buffer_t *buffer : {b, pinned, foreign}) {
        BufferBytes d;
        d.fill(0x55);
        EXPECT_EQ(cucore_ipc_export_buffer(buffer, d.data()), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(message(), "IPC-enabled pool")) << message();
        EXPECT_EQ(d, BufferBytes{});
    }
    cucore_buffer_release(foreign);
    cucore_buffer_release(pinned);
    cucore_buffer_release(b);
    cucore_memory_resource_release(legacy);
    cucore_memory_resource_release(deflt);
    cucore_memory_resource_release(plain);
}

TEST_F(IpcTest, ImportingChecksTheHandleFirst) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_ipc_pool_handle_t h = export_pool(mr);
    auto refuse = [&](cucore_ipc_pool_handle_t bad, cucore_status_t status, const std::string &expected) {
        SCOPED_TRACE(expected);
        fake::reset_calls();
        cucore_memory_resource_t *out = reinterpret_cast<cucore_memory_resource_t *>(0x1);
        EXPECT_EQ(cucore_ipc_import_memory_resource(d0_, &bad, &out), status) << message();
        EXPECT_EQ(out, nullptr);
        EXPECT_TRUE(contains(message(), expected)) << message();
    };
    // A closed descriptor: an fd number that was valid a moment ago.
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    cucore_ipc_pool_handle_t closed = h;
    closed.fd = pipe_fds[0];
    refuse(closed, CUCORE_ERROR_INVALID_ARGUMENT, "argument 'handle->fd' (" + std::to_string(pipe_fds[0]) +
                                                      ") is not an open file descriptor");
    EXPECT_EQ(fake::calls(), 0);
    closed.fd = -1;
    refuse(closed, CUCORE_ERROR_INVALID_ARGUMENT, "is not an open file descriptor");
    cucore_ipc_pool_handle_t wrong_kind = h;
    wrong_kind.kind = CUCORE_MEMORY_RESOURCE_LEGACY_PINNED;
    refuse(wrong_kind, CUCORE_ERROR_INVALID_ARGUMENT, "argument 'handle->kind' is 2");
    EXPECT_EQ(fake::calls(), 0);
    // An open descriptor that is not a pool's: the driver says so.
    cucore_ipc_pool_handle_t not_a_pool = h;
    not_a_pool.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    not_a_pool.pool_id[0] ^= 1;  // not the registered pool either
    refuse(not_a_pool, CUCORE_ERROR_CUDA, "cuMemPoolImportFromShareableHandle");
    close(not_a_pool.fd);
    // NULL handle.
    cucore_memory_resource_t *out = nullptr;
    EXPECT_EQ(cucore_ipc_import_memory_resource(d0_, nullptr, &out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "'handle' is NULL")) << message();
    close(h.fd);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcTest, ThePoolIdSurvivesAndExportsGiveNewDescriptors) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_ipc_pool_handle_t a = export_pool(mr), b = export_pool(mr);
    EXPECT_NE(a.fd, b.fd) << "each export is a new descriptor the caller owns";
    EXPECT_EQ(std::memcmp(a.pool_id, b.pool_id, 16), 0) << "one pool, one identifier";
    cucore_memory_resource_t *other = ipc_pool(d0_);
    cucore_ipc_pool_handle_t c = export_pool(other);
    EXPECT_NE(std::memcmp(a.pool_id, c.pool_id, 16), 0) << "pools have distinct identifiers";
    // Either descriptor imports the same pool.
    cucore_memory_resource_t *ia = import_pool(d0_, a), *ib = import_pool(d0_, b);
    EXPECT_EQ(ia, ib);
    for (auto *r : {ia, ib, other, mr}) cucore_memory_resource_release(r);
    for (int fd : {a.fd, b.fd, c.fd}) close(fd);
}

// ---- buffers ------------------------------------------------------------------------------------

TEST_F(IpcTest, BuffersRoundTripThroughTheirDescriptorBothWays) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_ipc_pool_handle_t h = export_pool(mr);
    cucore_memory_resource_t *imported = import_pool(d0_, h);
    cucore_buffer_t *b = allocate(mr, 1000, s0_);
    write(b, pattern(1000, 3), s0_);
    BufferBytes d = export_buffer(b);
    EXPECT_EQ(std::memcmp(d.data(), "CUCOREIB", 8), 0);

    cucore_buffer_t *ib = import_buffer(imported, d, s0_);
    uint64_t size = 0;
    cucore_buffer_size(ib, &size);
    EXPECT_EQ(size, 1000u);
    EXPECT_EQ(read(ib, s0_), pattern(1000, 3)) << "the exporter's bytes, read through the import";
    write(ib, pattern(1000, 77), s0_);
    EXPECT_EQ(read(b, s0_), pattern(1000, 77)) << "the importer's bytes, read through the export";
    cucore_memory_resource_t *owner = nullptr;
    cucore_buffer_memory_resource(ib, &owner);
    EXPECT_EQ(owner, imported) << "an import holds the imported pool";
    cucore_memory_resource_release(owner);
    cucore_stream_t *dealloc = nullptr;
    cucore_buffer_deallocation_stream(ib, &dealloc);
    EXPECT_EQ(dealloc, s0_) << "freed on the stream it was imported on";
    cucore_stream_release(dealloc);
    // Views of an import work as usual; views cannot be exported.
    cucore_buffer_t *view = nullptr;
    ASSERT_EQ(cucore_buffer_view(ib, 10, 20, &view), CUCORE_SUCCESS);
    std::vector<uint8_t> part(20);
    cucore_buffer_copy_to_host(view, 0, part.data(), 20, s0_);
    const std::vector<uint8_t> whole = pattern(1000, 77);
    EXPECT_EQ(part, std::vector<uint8_t>(whole.begin() + 10, whole.begin() + 30));
    BufferBytes vd{};
    EXPECT_EQ(cucore_ipc_export_buffer(view, vd.data()), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "is a view")) << message();
    cucore_buffer_release(view);
    // An import cannot be exported again (its pool is not IPC-enabled here).
    EXPECT_EQ(cucore_ipc_export_buffer(ib, vd.data()), CUCORE_ERROR_INVALID_ARGUMENT);

    // Release order: the import first (the exporter frees last, as required).
    fake::reset_calls();
    cucore_buffer_release(ib);
    EXPECT_EQ(count_calls("cuMemFreeAsync"), 1u) << "the import is unmapped with cuMemFreeAsync";
    cucore_buffer_release(b);
    cucore_memory_resource_release(imported);
    close(h.fd);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcTest, ASecondImportOfALiveBufferSharesTheFirst) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_ipc_pool_handle_t h = export_pool(mr);
    cucore_memory_resource_t *imported = import_pool(d0_, h);
    cucore_buffer_t *b = allocate(mr, 256, s0_);
    write(b, pattern(256, 1), s0_);
    BufferBytes d = export_buffer(b);
    BufferBytes d2 = export_buffer(b);
    EXPECT_EQ(d, d2) << "exporting is deterministic";

    fake::reset_calls();
    cucore_buffer_t *first = import_buffer(imported, d, s0_);
    cucore_buffer_t *second = import_buffer(imported, d, s0_);
    EXPECT_EQ(count_calls("cuMemPoolImportPointer"), 1u) << "the driver maps each pointer once";
    EXPECT_NE(first, second) << "two buffer handles";
    uint64_t a1 = 0, a2 = 0;
    cucore_buffer_address(first, &a1);
    cucore_buffer_address(second, &a2);
    EXPECT_EQ(a1, a2);
    EXPECT_EQ(fake::counters().imported_pointers, 1);
    // Closing one keeps the mapping for the other.
    EXPECT_EQ(cucore_buffer_close(first, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().imported_pointers, 1);
    EXPECT_EQ(read(second, s0_), pattern(256, 1));
    cucore_buffer_release(first);
    cucore_buffer_release(second);
    EXPECT_EQ(fake::counters().imported_pointers, 0) << "unmapped with the last holder";
    // Imported anew after that.
    fake::reset_calls();
    cucore_buffer_t *third = import_buffer(imported, d, s0_);
    EXPECT_EQ(count_calls("cuMemPoolImportPointer"), 1u);
    EXPECT_EQ(read(third, s0_), pattern(256, 1));
    cucore_buffer_release(third);
    cucore_buffer_release(b);
    cucore_memory_resource_release(imported);
    close(h.fd);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcTest, ConcurrentImportsOfOneBufferShareOneMapping) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_ipc_pool_handle_t h = export_pool(mr);
    cucore_buffer_t *b = allocate(mr, 128, s0_);
    BufferBytes d = export_buffer(b);
    constexpr int kThreads = 8;
    std::vector<cucore_memory_resource_t *> pools(kThreads);
    std::vector<cucore_buffer_t *> imports(kThreads);
    std::vector<uint64_t> addresses(kThreads);
    fake::reset_calls();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            cucore_ipc_import_memory_resource(d0_, &h, &pools[t]);
            cucore_ipc_import_buffer(pools[t], d.data(), d.size(), s0_, &imports[t]);
            cucore_buffer_address(imports[t], &addresses[t]);
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(count_calls("cuMemPoolImportFromShareableHandle"), 1u);
    EXPECT_EQ(count_calls("cuMemPoolImportPointer"), 1u);
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(pools[t], pools[0]);
        EXPECT_NE(imports[t], nullptr);
        EXPECT_EQ(addresses[t], addresses[0]);
    }
    for (int t = 0; t < kThreads; ++t) {
        cucore_buffer_release(imports[t]);
        cucore_memory_resource_release(pools[t]);
    }
    cucore_buffer_release(b);
    close(h.fd);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcTest, BufferExportNeedsAWholeOpenNonEmptyBuffer) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_buffer_t *empty = allocate(mr, 0, s0_), *closed = allocate(mr, 64, s0_);
    ASSERT_EQ(cucore_buffer_close(closed, nullptr), CUCORE_SUCCESS);
    BufferBytes d{};
    EXPECT_EQ(cucore_ipc_export_buffer(empty, d.data()), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "zero-size")) << message();
    EXPECT_EQ(cucore_ipc_export_buffer(closed, d.data()), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(message(), "closed")) << message();
    EXPECT_EQ(cucore_ipc_export_buffer(closed, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_release(closed);
    cucore_buffer_release(empty);
    cucore_memory_resource_release(mr);
}

class IpcDescriptorTest : public IpcTest {
  protected:
    void SetUp() override {
        IpcTest::SetUp();
        mr_ = ipc_pool(d0_);
        other_ = ipc_pool(d0_);
        h_ = export_pool(mr_);
        imported_ = import_pool(d0_, h_);
        b_ = allocate(mr_, 64, s0_);
        ob_ = allocate(other_, 64, s0_);
        good_ = export_buffer(b_);
        fake::reset_calls();
    }
    void TearDown() override {
        for (auto *b : {ob_, b_}) cucore_buffer_release(b);
        for (auto *r : {imported_, other_, mr_}) cucore_memory_resource_release(r);
        close(h_.fd);
        IpcTest::TearDown();
    }
    // Importing `size` bytes at `bytes` fails with INVALID_ARGUMENT, `expected` in
    // the message, before any driver call.
    void refuse(const uint8_t *bytes, uint64_t size, const std::string &expected,
                cucore_stream_t *stream = nullptr, cucore_memory_resource_t *into = nullptr) {
        SCOPED_TRACE(expected + " (" + std::to_string(size) + " bytes)");
        fake::reset_calls();
        cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
        EXPECT_EQ(cucore_ipc_import_buffer(into ? into : imported_, bytes, size, stream ? stream : s0_, &b),
                  CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(b, nullptr);
        EXPECT_TRUE(contains(message(), "cucore_ipc_import_buffer: argument '")) << message();
        EXPECT_TRUE(contains(message(), expected)) << message();
        EXPECT_EQ(fake::calls(), 0) << "nothing reaches the driver";
    }
    // `good_` re-encoded with one field changed (a valid checksum).
    BufferBytes crafted(void (*change)(cucore::core::ipc::BufferExport &)) {
        cucore::core::ipc::BufferExport e = cucore::core::ipc::decode_buffer(good_.data(), good_.size());
        change(e);
        return cucore::core::ipc::encode_buffer(e);
    }
    cucore_memory_resource_t *mr_ = nullptr, *other_ = nullptr, *imported_ = nullptr;
    cucore_ipc_pool_handle_t h_{};
    cucore_buffer_t *b_ = nullptr, *ob_ = nullptr;
    BufferBytes good_{};
};

TEST_F(IpcDescriptorTest, TruncatedAndOversizedDescriptorsAreRefused) {
    refuse(nullptr, good_.size(), "'descriptor' is NULL");
    refuse(good_.data(), 0, "truncated: 0 bytes");
    refuse(good_.data(), 64, "truncated: 64 bytes");
    refuse(good_.data(), good_.size() - 1, "truncated: 127 bytes");
    std::vector<uint8_t> longer(good_.begin(), good_.end());
    longer.resize(200);
    refuse(longer.data(), longer.size(), "has 200 bytes");
    // And the intact descriptor imports.
    cucore_buffer_t *b = import_buffer(imported_, good_, s0_);
    EXPECT_NE(b, nullptr);
    cucore_buffer_release(b);
}

TEST_F(IpcDescriptorTest, EveryCorruptedByteIsDetected) {
    for (size_t i = 0; i < good_.size(); ++i) {
        for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x40}, uint8_t{0xFF}}) {
            BufferBytes bad = good_;
            bad[i] ^= flip;
            refuse(bad.data(), bad.size(), i < 8 ? "bad magic" : i < 12 ? "format version" : "checksum mismatch");
        }
    }
}

TEST_F(IpcDescriptorTest, ImpossibleContentsAreRefusedEvenWithAValidChecksum) {
    BufferBytes kind = crafted([](cucore::core::ipc::BufferExport &e) { e.kind = CUCORE_MEMORY_RESOURCE_MANAGED; });
    refuse(kind.data(), kind.size(), "unknown pool kind 4");
    BufferBytes empty = crafted([](cucore::core::ipc::BufferExport &e) { e.size = 0; });
    refuse(empty.data(), empty.size(), "size 0");
    BufferBytes pinned = crafted([](cucore::core::ipc::BufferExport &e) { e.kind = CUCORE_MEMORY_RESOURCE_PINNED; });
    refuse(pinned.data(), pinned.size(), "describes pinned host memory");
}

// Issue 12: the checksum is no key, so a descriptor whose size was forged (and its checksum recomputed) imported
// 1 MiB over a 4 KiB allocation. The driver's range of the imported pointer decides; the import is undone.
TEST_F(IpcDescriptorTest, AForgedSizeLargerThanTheImportedRangeIsRefused) {
    cucore_buffer_t *small = allocate(mr_, 4096, s0_);
    const BufferBytes honest = export_buffer(small);
    cucore::core::ipc::BufferExport e = cucore::core::ipc::decode_buffer(honest.data(), honest.size());
    ASSERT_EQ(e.size, 4096u);
    e.size = uint64_t{1} << 20;
    const BufferBytes forged = cucore::core::ipc::encode_buffer(e);  // a valid checksum
    const int imports_before = fake::counters().imported_pointers;
    auto refused = [&](const char *when) {
        SCOPED_TRACE(when);
        cucore_buffer_t *b = reinterpret_cast<cucore_buffer_t *>(0x1);
        EXPECT_EQ(cucore_ipc_import_buffer(imported_, forged.data(), forged.size(), s0_, &b),
                  CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(b, nullptr);
        EXPECT_TRUE(contains(message(), "cucore_ipc_import_buffer: argument 'descriptor'")) << message();
        EXPECT_TRUE(contains(message(), "1048576 bytes")) << message();
        EXPECT_TRUE(contains(message(), "has 4096 bytes")) << message();
        EXPECT_TRUE(contains(message(), "cuMemGetAddressRange")) << message();
    };
    refused("first import");
    EXPECT_EQ(fake::counters().imported_pointers, imports_before) << "the refused import was unmapped";
    // The honest descriptor imports (the driver would refuse a pointer still mapped) with its own size.
    cucore_buffer_t *b = import_buffer(imported_, honest, s0_);
    ASSERT_NE(b, nullptr);
    uint64_t size = 0;
    EXPECT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
    EXPECT_EQ(size, 4096u);
    // While that import lives, a forged descriptor of the same pointer (which would share it) is refused too.
    refused("import sharing a live one");
    EXPECT_EQ(fake::counters().imported_pointers, imports_before + 1);
    cucore_buffer_release(b);
    cucore_buffer_release(small);
    EXPECT_EQ(fake::counters().imported_pointers, imports_before);
}

TEST_F(IpcDescriptorTest, ADescriptorOfAnotherPoolIsRefused) {
    BufferBytes foreign = export_buffer(ob_);
    refuse(foreign.data(), foreign.size(), "belongs to another pool");
    // A pool id that matches no pool at all.
    BufferBytes stray = crafted([](cucore::core::ipc::BufferExport &e) { e.pool_id[7] ^= 0x10; });
    refuse(stray.data(), stray.size(), "belongs to another pool");
}

TEST_F(IpcDescriptorTest, OnlyImportedPoolsImportAndOnTheirDevicesStreams) {
    refuse(good_.data(), good_.size(), "'resource' is not a pool imported from another process", nullptr, mr_);
    refuse(good_.data(), good_.size(), "'stream' belongs to device 1, the imported pool to device 0", s1_);
}

}  // namespace
