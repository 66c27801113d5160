// Shared by the IPC unit tests: IPC-enabled pools through the fake driver
// (which exports pools as memfd file descriptors and "maps" an imported pointer
// at the exporter's address, so both handles see the same bytes), and a check
// that no file descriptor or imported mapping outlives a test.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.hpp"

class IpcTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fds_before_ = open_fds();
        imports_before_ = fake::counters().imported_pointers;
        d0_ = device(0);
        d1_ = device(1);
        ASSERT_EQ(cucore_stream_create(d0_, nullptr, &s0_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_create(d1_, nullptr, &s1_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        cucore_stream_release(s1_);
        cucore_stream_release(s0_);
        cucore_device_release(d1_);
        cucore_device_release(d0_);
        EXPECT_EQ(open_fds(), fds_before_) << "file descriptors leaked";
        EXPECT_EQ(fake::counters().imported_pointers, imports_before_) << "imported mappings leaked";
        FakeDriverTest::TearDown();
    }

    // The number of open file descriptors of this process.
    static int open_fds() {
        int count = 0;
        if (DIR *dir = opendir("/proc/self/fd")) {
            while (readdir(dir)) ++count;
            closedir(dir);
        }
        return count;
    }

    // A new IPC-enabled pool: a device pool of `d`, or (pinned) a host pool made for `d`.
    static cucore_memory_resource_t *ipc_pool(cucore_device_t *d, bool pinned = false) {
        cucore_memory_resource_t *mr = nullptr;
        if (pinned) {
            cucore_pinned_memory_resource_options_t o = CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT;
            o.ipc_enabled = 1;
            EXPECT_EQ(cucore_pinned_memory_resource_create(d, &o, &mr), CUCORE_SUCCESS) << message();
        } else {
            cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
            o.ipc_enabled = 1;
            EXPECT_EQ(cucore_device_memory_resource_create(d, &o, &mr), CUCORE_SUCCESS) << message();
        }
        return mr;
    }

    static cucore_ipc_pool_handle_t export_pool(cucore_memory_resource_t *mr) {
        cucore_ipc_pool_handle_t h{};
        EXPECT_EQ(cucore_ipc_export_memory_resource(mr, &h), CUCORE_SUCCESS) << message();
        return h;
    }

    static cucore_memory_resource_t *import_pool(cucore_device_t *d, const cucore_ipc_pool_handle_t &h) {
        cucore_memory_resource_t *mr = nullptr;
        EXPECT_EQ(cucore_ipc_import_memory_resource(d, &h, &mr), CUCORE_SUCCESS) << message();
        return mr;
    }

    static cucore_buffer_t *allocate(cucore_memory_resource_t *mr, uint64_t size, cucore_stream_t *s) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(mr, size, s, &b), CUCORE_SUCCESS) << message();
        return b;
    }

    using BufferBytes = std::array<uint8_t, CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE>;
    using EventBytes = std::array<uint8_t, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE>;

    static BufferBytes export_buffer(cucore_buffer_t *b) {
        BufferBytes d{};
        EXPECT_EQ(cucore_ipc_export_buffer(b, d.data()), CUCORE_SUCCESS) << message();
        return d;
    }

    static cucore_buffer_t *import_buffer(cucore_memory_resource_t *mr, const BufferBytes &d, cucore_stream_t *s) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_ipc_import_buffer(mr, d.data(), d.size(), s, &b), CUCORE_SUCCESS) << message();
        return b;
    }

    static std::vector<uint8_t> read(cucore_buffer_t *b, cucore_stream_t *s) {
        uint64_t size = 0;
        EXPECT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
        std::vector<uint8_t> out(size);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, out.data(), size, s), CUCORE_SUCCESS) << message();
        return out;
    }

    static void write(cucore_buffer_t *b, const std::vector<uint8_t> &data, cucore_stream_t *s) {
        EXPECT_EQ(cucore_buffer_copy_from_host(b, 0, data.data(), data.size(), s), CUCORE_SUCCESS) << message();
    }

    static std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
        std::vector<uint8_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
        return v;
    }

    static size_t count_calls(const std::string &name) {
        size_t n = 0;
        for (const std::string &call : fake::call_log()) n += call == name;
        return n;
    }

    cucore_device_t *d0_ = nullptr, *d1_ = nullptr;
    cucore_stream_t *s0_ = nullptr, *s1_ = nullptr;

  private:
    int fds_before_ = 0;
    int imports_before_ = 0;
};
