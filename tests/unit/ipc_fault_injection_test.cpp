// Every driver call of every IPC export and import path fails in turn: the
// call fails with a clear message and leaves nothing behind (library objects,
// driver pools, events and mappings, file descriptors, context retains), or,
// when the failing call was restoring the caller's context after the work was
// done, succeeds and reports the failure as a release error.
#include <functional>

#include "ipc_fixture.hpp"

namespace {

class IpcFaultInjectionTest : public IpcTest {
  protected:
    void SetUp() override {
        IpcTest::SetUp();
        expects_release_errors_ = true;
    }

    // `run` makes the object and returns the status; `undo` releases what a
    // successful run made.
    void each_call_fails(const char *function, const std::function<cucore_status_t()> &run,
                         const std::function<void()> &undo, int minimum_driver_calls) {
        SCOPED_TRACE(function);
        int failures = 0;
        for (long i = 1; i < 100; ++i) {
            const size_t live_before = live(CUCORE_OBJECT_ANY);
            const fake::Counters before = fake::counters();
            const int fds_before = open_fds();
            const uint64_t release_errors_before = release_errors();
            fake::reset_calls();
            fake::fail_call(i, CUDA_ERROR_OUT_OF_MEMORY);
            const cucore_status_t status = run();
            const long made = fake::calls();
            fake::fail_call(0);
            const std::vector<std::string> log = fake::call_log();
            const std::string failed = i <= static_cast<long>(log.size()) ? log[i - 1] : "";
            SCOPED_TRACE("failing call " + std::to_string(i) + ": " + failed);
            fake::set_current_context(nullptr);
            if (made < i) {  // every call of the path has failed once
                ASSERT_EQ(status, CUCORE_SUCCESS) << message();
                undo();
                EXPECT_GE(failures, minimum_driver_calls);
                return;
            }
            ++failures;
            if (status == CUCORE_SUCCESS) {
                EXPECT_EQ(failed, "cuCtxSetCurrent") << "only restoring the context may fail late";
                EXPECT_EQ(release_errors(), release_errors_before + 1) << "a late failure is reported";
                undo();
            } else {
                EXPECT_EQ(status, CUCORE_ERROR_OUT_OF_MEMORY) << message();
                EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
                EXPECT_NE(message().find(failed), std::string::npos) << message();
            }
            EXPECT_EQ(live(CUCORE_OBJECT_ANY), live_before) << "no half-made object";
            const fake::Counters after = fake::counters();
            EXPECT_EQ(after.pools, before.pools);
            EXPECT_EQ(after.events, before.events);
            EXPECT_EQ(after.imported_pointers, before.imported_pointers);
            EXPECT_EQ(after.allocations, before.allocations);
            EXPECT_EQ(after.primary_retained, before.primary_retained);
            EXPECT_EQ(open_fds(), fds_before) << "no file descriptor left open";
        }
        FAIL() << "the path never completed";
    }
};

TEST_F(IpcFaultInjectionTest, ExportingAPool) {
    for (bool pinned : {false, true}) {
        cucore_memory_resource_t *mr = ipc_pool(d0_, pinned);
        cucore_ipc_pool_handle_t h{};
        each_call_fails(
            "cucore_ipc_export_memory_resource", [&] { return cucore_ipc_export_memory_resource(mr, &h); },
            [&] { close(h.fd); }, 1);
        cucore_memory_resource_release(mr);
    }
}

TEST_F(IpcFaultInjectionTest, ImportingAPool) {
    for (bool pinned : {false, true}) {
        cucore_memory_resource_t *mr = ipc_pool(d0_, pinned);
        cucore_ipc_pool_handle_t h = export_pool(mr);
        cucore_memory_resource_t *imported = nullptr;
        // Each run starts with no import alive (the undo releases it), so the
        // driver import runs every time.
        each_call_fails(
            "cucore_ipc_import_memory_resource",
            [&] { return cucore_ipc_import_memory_resource(d1_, &h, &imported); },
            [&] { cucore_memory_resource_release(imported); }, pinned ? 2 : 1);
        close(h.fd);
        cucore_memory_resource_release(mr);
    }
}

TEST_F(IpcFaultInjectionTest, ExportingABuffer) {
    cucore_memory_resource_t *mr = ipc_pool(d0_);
    cucore_buffer_t *b = allocate(mr, 64, s0_);
    BufferBytes d{};
    each_call_fails(
        "cucore_ipc_export_buffer", [&] { return cucore_ipc_export_buffer(b, d.data()); }, [] {}, 1);
    cucore_buffer_release(b);
    cucore_memory_resource_release(mr);
}

TEST_F(IpcFaultInjectionTest, ImportingABuffer) {
    for (bool pinned : {false, true}) {
        cucore_memory_resource_t *mr = ipc_pool(d0_, pinned);
        cucore_ipc_pool_handle_t h = export_pool(mr);
        cucore_memory_resource_t *imported = import_pool(d0_, h);
        cucore_buffer_t *b = allocate(mr, 64, s0_);
        BufferBytes d = export_buffer(b);
        cucore_buffer_t *ib = nullptr;
        each_call_fails(
            "cucore_ipc_import_buffer", [&] { return cucore_ipc_import_buffer(imported, d.data(), d.size(), s0_, &ib); },
            [&] { cucore_buffer_release(ib); }, 1);
        cucore_buffer_release(b);
        cucore_memory_resource_release(imported);
        close(h.fd);
        cucore_memory_resource_release(mr);
    }
}

TEST_F(IpcFaultInjectionTest, ExportingAndImportingAnEvent) {
    cucore_event_options_t o = CUCORE_EVENT_OPTIONS_INIT;
    o.flags = CUCORE_EVENT_INTERPROCESS;
    cucore_event_t *e = nullptr;
    ASSERT_EQ(cucore_event_create(d0_, &o, &e), CUCORE_SUCCESS);
    EventBytes d{};
    each_call_fails(
        "cucore_ipc_export_event", [&] { return cucore_ipc_export_event(e, d.data()); }, [] {}, 1);
    cucore_event_t *imported = nullptr;
    each_call_fails(
        "cucore_ipc_import_event", [&] { return cucore_ipc_import_event(d1_, d.data(), d.size(), &imported); },
        [&] { cucore_event_release(imported); }, 1);
    cucore_event_release(e);
}

}  // namespace
