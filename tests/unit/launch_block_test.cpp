// cucore_launch_block on the fake driver: a launch from one block (stream,
// config, kernel, argument arrays; the argument bytes right after it, as the
// Python binding lays it out) reaches the driver exactly as cucore_launch's,
// with cucore_launch's checks and messages, one driver call when warm, and the
// block's own struct_size checks.
#include <cstring>

#include "kernel_support.hpp"

namespace {

class LaunchBlockTest : public KernelFixture {
  protected:
    // Expects `status` INVALID_ARGUMENT (or `code`) with `text` in the message and no launch made.
    void expect_refused(cucore_status_t status, const std::string &text,
                        cucore_status_t code = CUCORE_ERROR_INVALID_ARGUMENT) {
        EXPECT_EQ(status, code) << message();
        EXPECT_NE(message().find(text), std::string::npos) << message();
        EXPECT_EQ(count_calls("cuLaunchKernelEx"), 0) << "nothing is launched";
    }
};

// The layout of the Python binding: the block, then the argument bytes (each on 8 bytes).
struct Packed {
    cucore_launch_block_t block;
    alignas(16) unsigned char bytes[64];
};

TEST_F(LaunchBlockTest, LaunchesAsCucoreLaunch) {
    CUkernel raw = nullptr;
    cucore_kernel_t *k = kernel(spec({8, 4, 2}), &raw);
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    c.grid[0] = 2;
    c.grid[1] = 3;
    c.block[0] = 32;
    c.shared_memory_bytes = 128;
    const double a = 2.5;
    const uint32_t b = 0xA1B2C3D4u;
    const uint16_t d = 0x5566;
    Packed p{};
    std::memcpy(p.bytes, &a, 8);
    std::memcpy(p.bytes + 8, &b, 4);
    std::memcpy(p.bytes + 16, &d, 2);
    const void *args[] = {p.bytes, p.bytes + 8, p.bytes + 16};
    const size_t sizes[] = {8, 4, 2};
    p.block = CUCORE_LAUNCH_BLOCK_INIT;
    p.block.arg_count = 3;
    p.block.args = args;
    p.block.arg_sizes = sizes;
    p.block.stream = s0_;
    p.block.config = &c;
    p.block.kernel = k;
    ASSERT_EQ(cucore_launch_block(&p.block), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_launch(s0_, &c, k, args, sizes, 3), CUCORE_SUCCESS) << message();
    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 2u);
    for (const fake::LaunchRecord &r : launches) {
        EXPECT_EQ(r.config.gridDimX, 2u);
        EXPECT_EQ(r.config.gridDimY, 3u);
        EXPECT_EQ(r.config.gridDimZ, 1u);
        EXPECT_EQ(r.config.blockDimX, 32u);
        EXPECT_EQ(r.config.sharedMemBytes, 128u);
        EXPECT_EQ(r.config.hStream, cu_s0_);
        EXPECT_EQ(r.function, fake::make_function(raw, cu_c0_));
        ASSERT_EQ(r.args.size(), 3u);
        EXPECT_EQ(std::memcmp(r.args[0].data(), &a, 8), 0);
        EXPECT_EQ(std::memcmp(r.args[1].data(), &b, 4), 0);
        EXPECT_EQ(std::memcmp(r.args[2].data(), &d, 2), 0);
    }
    // The block is only read: reused with other values, it launches those.
    const double a2 = -1.0;
    std::memcpy(p.bytes, &a2, 8);
    p.block.config = nullptr;  // one thread, as cucore_launch's NULL config
    ASSERT_EQ(cucore_launch_block(&p.block), CUCORE_SUCCESS) << message();
    const fake::LaunchRecord last = fake::launches().back();
    EXPECT_EQ(std::memcmp(last.args[0].data(), &a2, 8), 0);
    EXPECT_EQ(last.config.gridDimX * last.config.blockDimX, 1u);
}

TEST_F(LaunchBlockTest, WarmLaunchMakesOneDriverCall) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_launch_block_t block = CUCORE_LAUNCH_BLOCK_INIT;
    block.stream = s0_;
    block.kernel = k;
    ASSERT_EQ(cucore_launch_block(&block), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    for (int i = 0; i < 3; ++i) ASSERT_EQ(cucore_launch_block(&block), CUCORE_SUCCESS);
    EXPECT_EQ(fake::call_log(), (std::vector<std::string>{"cuLaunchKernelEx", "cuLaunchKernelEx", "cuLaunchKernelEx"}));
}

TEST_F(LaunchBlockTest, ChecksAndMessagesAreCucoreLaunchs) {
    cucore_kernel_t *k = kernel(spec({8, 4}, "saxpy"));
    const double a = 1;
    const float b = 2;
    const void *args[] = {&a, &b};
    const size_t sizes[] = {8, 4};
    cucore_launch_block_t block = CUCORE_LAUNCH_BLOCK_INIT;
    block.stream = s0_;
    block.kernel = k;
    block.arg_count = 2;
    block.arg_sizes = sizes;
    fake::reset_calls();
    expect_refused(cucore_launch_block(nullptr), "argument 'block' is NULL");
    expect_refused(cucore_launch_block(&block), "argument 'args' is NULL with a non-zero arg_count");
    block.args = args;
    block.arg_sizes = nullptr;
    expect_refused(cucore_launch_block(&block), "argument 'arg_sizes' is NULL with a non-zero arg_count");
    block.arg_sizes = sizes;
    const void *with_null[] = {&a, nullptr};
    block.args = with_null;
    expect_refused(cucore_launch_block(&block), "argument 'args[1]' is NULL");
    block.args = args;
    block.stream = nullptr;
    expect_refused(cucore_launch_block(&block), "argument 'stream' is NULL", CUCORE_ERROR_INVALID_HANDLE);
    block.stream = s0_;
    block.kernel = nullptr;
    expect_refused(cucore_launch_block(&block), "argument 'kernel' is NULL", CUCORE_ERROR_INVALID_HANDLE);
    block.kernel = k;
    EXPECT_EQ(fake::calls(), 0) << "NULL checks come before any driver call";
    block.arg_count = 1;
    expect_refused(cucore_launch_block(&block), "argument 'arg_count' is 1, but kernel 'saxpy' has 2 parameters");
    block.arg_count = 2;
    const size_t wrong[] = {8, 8};
    block.arg_sizes = wrong;
    expect_refused(cucore_launch_block(&block),
                   "argument 'arg_sizes[1]' is 8 bytes, but parameter 1 of kernel 'saxpy' is 4 bytes");
    block.arg_sizes = sizes;
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    c.flags = 8;
    block.config = &c;
    expect_refused(cucore_launch_block(&block), "'config.flags'");
    c = CUCORE_LAUNCH_CONFIG_INIT;
    c.block[0] = 1u << 20;
    expect_refused(cucore_launch_block(&block), "argument 'config': block");
    block.config = nullptr;
    ASSERT_EQ(cucore_launch_block(&block), CUCORE_SUCCESS) << message();
}

TEST_F(LaunchBlockTest, StructSizeIsCheckedAsAnOptionsStructs) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_launch_block_t block = CUCORE_LAUNCH_BLOCK_INIT;
    block.stream = s0_;
    block.kernel = k;
    block.struct_size = 0;
    fake::reset_calls();
    expect_refused(cucore_launch_block(&block), "'block' has struct_size 0");
    block.struct_size = 6;  // ends inside arg_count
    expect_refused(cucore_launch_block(&block), "'block' has struct_size 6, which ends inside its field 'arg_count'");
    struct Newer {
        cucore_launch_block_t known;
        uint64_t future;
    } newer{};
    newer.known = block;
    newer.known.struct_size = sizeof newer;
    newer.future = 1;
    expect_refused(cucore_launch_block(&newer.known), "'block' sets fields", CUCORE_ERROR_NOT_SUPPORTED);
    newer.future = 0;  // a newer caller's zeroed fields are accepted
    ASSERT_EQ(cucore_launch_block(&newer.known), CUCORE_SUCCESS) << message();
}

TEST_F(LaunchBlockTest, ReleasedHandlesAreRefused) {
    cucore_kernel_t *k = kernel(spec({}));
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d0_, nullptr, &s), CUCORE_SUCCESS);
    cucore_launch_block_t block = CUCORE_LAUNCH_BLOCK_INIT;
    block.stream = s;
    block.kernel = k;
    ASSERT_EQ(cucore_launch_block(&block), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_release(s), CUCORE_SUCCESS);
    fake::reset_calls();
    EXPECT_EQ(cucore_launch_block(&block), CUCORE_ERROR_INVALID_HANDLE) << message();
    EXPECT_EQ(count_calls("cuLaunchKernelEx"), 0);
}

}  // namespace
