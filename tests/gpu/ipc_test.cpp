// IPC between real processes: this test exports an IPC-enabled pool (device,
// then pinned), two buffers and two interprocess events, and starts
// cucore_ipc_child (tests/gpu/ipc_child.c) with fork+exec, handing it the
// pool's file descriptor by inheritance and the rest as hex on the command
// line. The parent writes buffer A behind a delay and records event 1; the
// child waits on event 1 and must read the parent's bytes. The child writes
// buffer B behind a delay, records event 2 and says so at once; the parent
// waits on event 2 and must read the child's bytes (so each direction fails
// without the event ordering). The child also checks the refusals of bad input
// in a process that really imports, releases everything and reports its live
// object count. Every wait has a deadline: a hung child is killed and the test
// fails.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace {

using gpu::GpuTest;
using Clock = std::chrono::steady_clock;

using gpu::Child;
using gpu::kChildInheritedFd;
constexpr std::size_t kSize = std::size_t{1} << 20;

std::uint8_t pattern_byte(std::size_t i, unsigned seed) {  // as in ipc_child.c
    return static_cast<std::uint8_t>(i * 31u + seed * 7u + (i >> 8));
}

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(i, seed);
    return v;
}

std::string hex(const std::uint8_t *bytes, std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        s += digits[bytes[i] >> 4];
        s += digits[bytes[i] & 15];
    }
    return s;
}

int open_fds() {
    int count = 0;
    if (DIR *dir = opendir("/proc/self/fd")) {
        while (readdir(dir)) ++count;
        closedir(dir);
    }
    return count;
}

// What each open descriptor points at ("fd -> target"), to name a leak.
std::set<std::string> fd_targets() {
    std::set<std::string> targets;
    if (DIR *dir = opendir("/proc/self/fd")) {
        while (dirent *entry = readdir(dir)) {
            char target[512] = {0};
            const std::string path = std::string("/proc/self/fd/") + entry->d_name;
            const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
            if (n > 0) targets.insert(std::string(entry->d_name) + " -> " + std::string(target, static_cast<size_t>(n)));
        }
        closedir(dir);
    }
    return targets;
}

std::string new_fds(const std::set<std::string> &before) {
    std::string listed;
    for (const std::string &fd : fd_targets())
        if (!before.count(fd)) listed += "\n  " + fd;
    return listed;
}

std::string child_path() { return gpu::helper_path("cucore_ipc_child"); }

// Host functions must not call CUDA: this one only delays its stream.
void delay_stream(void *) { gpu::sleep_ms(200); }

class IpcGpuTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        if (access(child_path().c_str(), X_OK) != 0)
            FAIL() << "the helper " << child_path() << " is missing (it is built beside this binary)";
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s_));
    }
    void TearDown() override {
        cucore_stream_release(s_);
        GpuTest::TearDown();
    }

    // A new IPC-enabled pool, or nullptr after GTEST_SKIP-worthy NOT_SUPPORTED (reason in `why`).
    cucore_memory_resource_t *ipc_pool(bool pinned, std::string &why) {
        cucore_memory_resource_t *mr = nullptr;
        cucore_status_t st;
        if (pinned) {
            cucore_pinned_memory_resource_options_t o = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
            o.ipc_enabled = 1;
            st = cucore_pinned_memory_resource_create(dev_, &o, &mr);
        } else {
            cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
            o.ipc_enabled = 1;
            st = cucore_device_memory_resource_create(dev_, &o, &mr);
        }
        if (st == CUCORE_ERROR_NOT_SUPPORTED) why = cucore_last_error_message();
        else EXPECT_EQ(st, CUCORE_SUCCESS) << cucore_last_error_message();
        return mr;
    }

    // Once per process: whatever the driver opens on its first IPC exports of a
    // pool, a pointer and an event (kept for the process; seen on an H100: one
    // more descriptor after the first round trip) is open before the descriptor
    // count is taken.
    void warm_up_ipc() {
        static bool done = false;
        if (done) return;
        done = true;
        std::string why;
        cucore_memory_resource_t *mr = ipc_pool(false, why);
        cucore_ipc_pool_handle_t h{};
        if (mr && cucore_ipc_export_memory_resource(mr, &h) == CUCORE_SUCCESS) close(h.fd);
        cucore_buffer_t *b = nullptr;
        if (mr && cucore_memory_resource_allocate(mr, 4096, s_, &b) == CUCORE_SUCCESS) {
            std::uint8_t d[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
            cucore_ipc_export_buffer(b, d);
            cucore_buffer_release(b);
            cucore_stream_synchronize(s_);
        }
        cucore_memory_resource_release(mr);
        cucore_event_options_t eo = CUCORE_EVENT_OPTIONS_INIT;
        eo.flags = CUCORE_EVENT_INTERPROCESS;
        cucore_event_t *e = nullptr;
        if (cucore_event_create(dev_, &eo, &e) == CUCORE_SUCCESS) {
            std::uint8_t d[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
            cucore_ipc_export_event(e, d);
            cucore_event_release(e);
        }
        cucore_clear_last_error();
    }

    void round_trip(bool pinned);

    cucore_stream_t *s_ = nullptr;
};

void IpcGpuTest::round_trip(bool pinned) {
    warm_up_ipc();
    const int fds_before = open_fds();
    const std::set<std::string> fd_before = fd_targets();
    std::string why;
    cucore_memory_resource_t *mr = ipc_pool(pinned, why);
    if (!mr) {
        if (!why.empty()) GTEST_SKIP() << "no IPC-enabled " << (pinned ? "pinned" : "device") << " pool: " << why;
        return;
    }
    cucore_memory_resource_t *other = ipc_pool(false, why);
    ASSERT_NE(other, nullptr) << why;
    cucore_buffer_t *a = nullptr, *b = nullptr, *c = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, kSize, s_, &a));
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, kSize, s_, &b));
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(other, 4096, s_, &c));
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0, 1, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    cucore_event_options_t eo = CUCORE_EVENT_OPTIONS_INIT;
    eo.flags = CUCORE_EVENT_INTERPROCESS;
    cucore_event_t *e1 = nullptr, *e2 = nullptr;
    CUCORE_ASSERT_OK(cucore_event_create(dev_, &eo, &e1));
    CUCORE_ASSERT_OK(cucore_event_create(dev_, &eo, &e2));

    cucore_ipc_pool_handle_t h{};
    CUCORE_ASSERT_OK(cucore_ipc_export_memory_resource(mr, &h));
    ASSERT_GE(h.fd, 0);
    EXPECT_EQ(h.kind, static_cast<std::uint32_t>(pinned ? CUCORE_MEMORY_RESOURCE_PINNED : CUCORE_MEMORY_RESOURCE_DEVICE));
    std::uint8_t da[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE], db[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE],
        dc[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE], d1[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE],
        d2[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    CUCORE_ASSERT_OK(cucore_ipc_export_buffer(a, da));
    CUCORE_ASSERT_OK(cucore_ipc_export_buffer(b, db));
    CUCORE_ASSERT_OK(cucore_ipc_export_buffer(c, dc));
    CUCORE_ASSERT_OK(cucore_ipc_export_event(e1, d1));
    CUCORE_ASSERT_OK(cucore_ipc_export_event(e2, d2));

    // Parent -> child: the write lands 200 ms from now; event 1 follows it.
    const unsigned seed_a = pinned ? 11 : 5, seed_b = pinned ? 12 : 6;
    const std::vector<std::uint8_t> written = pattern(kSize, seed_a);
    CUCORE_ASSERT_OK(cucore_stream_launch_host_func(s_, delay_stream, nullptr));
    CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(a, 0, written.data(), kSize, s_));
    CUCORE_ASSERT_OK(cucore_event_record(e1, s_));

    Child child;
    const std::string started =
        child.start(child_path(),
                    {"0", std::to_string(kChildInheritedFd), std::to_string(h.kind), hex(h.pool_id, sizeof h.pool_id),
                     hex(da, sizeof da), hex(db, sizeof db), hex(d1, sizeof d1), hex(d2, sizeof d2),
                     std::to_string(kSize), std::to_string(seed_a), std::to_string(seed_b), hex(dc, sizeof dc)},
                    h.fd);
    ASSERT_EQ(started, "");

    // Child -> parent: once the child has recorded event 2 (behind its own
    // delayed write), wait on it and read.
    std::string line;
    bool recorded = false;
    while (!recorded && child.next_line(line)) recorded = line == "recorded";
    if (recorded) {
        std::vector<std::uint8_t> got(kSize, 0xEE);
        CUCORE_EXPECT_OK(cucore_stream_wait_event(s_, e2));
        CUCORE_EXPECT_OK(cucore_buffer_copy_to_host(b, 0, got.data(), kSize, s_));
        CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
        std::size_t bad = kSize;
        for (std::size_t i = 0; i < kSize && bad == kSize; ++i)
            if (got[i] != pattern_byte(i, seed_b)) bad = i;
        EXPECT_EQ(bad, kSize) << "the child's bytes, read after waiting on its event: byte " << bad << " is "
                              << (bad < kSize ? int(got[bad]) : 0);
    }
    const int exit_status = child.finish();
    EXPECT_FALSE(child.timed_out()) << "the child hung and was killed\n" << child.transcript();
    EXPECT_TRUE(recorded) << "the child never recorded event 2\n" << child.transcript();
    EXPECT_EQ(exit_status, 0) << child.transcript();
    for (const std::string &l : child.lines()) EXPECT_NE(l.rfind("fail", 0), 0u) << l;
    for (const char *step :
         {"ok import_pool", "ok describe_pool", "ok import_pool_twice", "ok corrupted_buffer_descriptor",
          "ok truncated_buffer_descriptor", "ok other_pools_descriptor", "ok corrupted_event_descriptor",
          "ok closed_fd", "ok imported_pool_cannot_allocate", "ok import_buffers_and_events", "ok import_twice",
          "ok read_parent_data", "done 0"})
        EXPECT_TRUE(child.said(step)) << "missing \"" << step << "\"\n" << child.transcript();

    // The child has released its imports: the exporter may free now.
    cucore_buffer_release(a);
    cucore_buffer_release(b);
    cucore_buffer_release(c);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    cucore_event_release(e1);
    cucore_event_release(e2);
    close(h.fd);
    cucore_memory_resource_release(other);
    cucore_memory_resource_release(mr);
    EXPECT_EQ(open_fds(), fds_before) << "file descriptors left open in the parent:" << new_fds(fd_before);
}

TEST_F(IpcGpuTest, DevicePoolBuffersAndEventsCrossProcesses) { round_trip(false); }

TEST_F(IpcGpuTest, PinnedPoolBuffersAndEventsCrossProcesses) { round_trip(true); }

// What the exporting process refuses without another process.
TEST_F(IpcGpuTest, ExportAndImportRefusalsInOneProcess) {
    cucore_memory_resource_t *plain = nullptr;
    CUCORE_ASSERT_OK(cucore_device_memory_resource_create(dev_, nullptr, &plain));
    cucore_ipc_pool_handle_t h{};
    CUCORE_EXPECT_STATUS(cucore_ipc_export_memory_resource(plain, &h), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(h.fd, -1);
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(plain, 64, s_, &b));
    std::uint8_t d[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    CUCORE_EXPECT_STATUS(cucore_ipc_export_buffer(b, d), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_event_t *e = nullptr;
    CUCORE_ASSERT_OK(cucore_event_create(dev_, nullptr, &e));
    std::uint8_t ed[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE];
    CUCORE_EXPECT_STATUS(cucore_ipc_export_event(e, ed), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(cucore_last_error_message()).find("CUCORE_EVENT_INTERPROCESS"), std::string::npos);
    // A closed descriptor is refused before the driver sees it.
    std::string why;
    cucore_memory_resource_t *mr = ipc_pool(false, why);
    if (mr) {
        cucore_ipc_pool_handle_t shared{};
        CUCORE_ASSERT_OK(cucore_ipc_export_memory_resource(mr, &shared));
        close(shared.fd);
        cucore_memory_resource_t *imported = nullptr;
        CUCORE_EXPECT_STATUS(cucore_ipc_import_memory_resource(dev_, &shared, &imported), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(cucore_last_error_message()).find("not an open file descriptor"), std::string::npos)
            << cucore_last_error_message();
        EXPECT_EQ(imported, nullptr);
        // The C++ façade: an owning descriptor, closed by its destructor.
        const int fds = open_fds();
        {
            cucore::ipc::PoolHandle owned = cucore::ipc::export_memory_resource(cucore::MemoryResource::borrow(mr));
            EXPECT_GE(owned.fd(), 0);
            EXPECT_NE(fcntl(owned.fd(), F_GETFD), -1);
            EXPECT_EQ(owned.pool_id(), cucore::ipc::pool_id(cucore::MemoryResource::borrow(mr)));
        }
        EXPECT_EQ(open_fds(), fds) << "PoolHandle closes its descriptor";
        cucore_memory_resource_release(mr);
    }
    cucore_event_release(e);
    cucore_buffer_release(b);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(s_));
    cucore_memory_resource_release(plain);
}

}  // namespace
