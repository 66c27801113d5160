// cucore_launch_block on a GPU: a kernel launched from one block (the argument
// bytes right after it, laid out as the Python binding lays them out) writes
// the values it was given, read back; the block reused with new values and a
// new grid launches those; its checks refuse a wrong argument size.
#include <cstring>

#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::Owned;

const char *const kWriteSource = R"(
// Each thread writes its global index times `scale` plus `offset` (a 4-byte and an 8-byte argument).
extern "C" __global__ void write(unsigned long long *out, int scale, long long offset, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned long long)((long long)i * scale + offset);
}
)";

// The block, then the arguments on 8 bytes each (the Python binding's layout).
struct Packed {
    cucore_launch_block_t block;
    alignas(16) unsigned char bytes[32];
    const void *args[4];
    size_t sizes[4];
};

void set_args(Packed &p, unsigned long long *out, int scale, long long offset, unsigned n) {
    std::memcpy(p.bytes, &out, 8);
    std::memcpy(p.bytes + 8, &scale, 4);
    std::memcpy(p.bytes + 16, &offset, 8);
    std::memcpy(p.bytes + 24, &n, 4);
}

class LaunchBlockTest : public CompileTest {};

TEST_F(LaunchBlockTest, KernelWritesTheValuesOfTheBlock) {
    Owned<cucore_object_code_t> code = compile(kWriteSource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "write");
    ASSERT_TRUE(k);
    const unsigned n = 1000;
    auto out = array<unsigned long long>(n);
    out.fill_zero();
    auto *ptr = static_cast<unsigned long long *>(out.ptr());
    Packed p{};
    const size_t sizes[4] = {8, 4, 8, 4};
    for (int i = 0; i < 4; ++i) {
        p.args[i] = p.bytes + 8 * i;
        p.sizes[i] = sizes[i];
    }
    cucore_launch_config_t c = config((n + 127) / 128, 128);
    p.block = CUCORE_LAUNCH_BLOCK_INIT;
    p.block.arg_count = 4;
    p.block.args = p.args;
    p.block.arg_sizes = p.sizes;
    p.block.stream = stream_.get();
    p.block.config = &c;
    p.block.kernel = k.get();
    set_args(p, ptr, 3, -(1ll << 40), n);
    CUCORE_ASSERT_OK(cucore_launch_block(&p.block));
    std::vector<unsigned long long> got = out.download();
    for (unsigned i = 0; i < n; ++i)
        ASSERT_EQ(got[i], static_cast<unsigned long long>(static_cast<long long>(i) * 3 - (1ll << 40))) << i;
    // The same block, new values and a grid covering half: the driver copied the first launch's arguments.
    set_args(p, ptr, -7, 11, n / 2);
    c = config(n / 2 / 100, 100);
    CUCORE_ASSERT_OK(cucore_launch_block(&p.block));
    got = out.download();
    for (unsigned i = 0; i < n; ++i) {
        const long long want = i < n / 2 ? static_cast<long long>(i) * -7 + 11 : static_cast<long long>(i) * 3 - (1ll << 40);
        ASSERT_EQ(got[i], static_cast<unsigned long long>(want)) << i;
    }
}

TEST_F(LaunchBlockTest, AWrongArgumentSizeIsRefused) {
    Owned<cucore_object_code_t> code = compile(kWriteSource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "write");
    ASSERT_TRUE(k);
    size_t count = 0;
    if (cucore_kernel_param_count(k.get(), &count) == CUCORE_ERROR_NOT_SUPPORTED)
        GTEST_SKIP() << "driver without parameter info: launches are not checked";
    Packed p{};
    const size_t sizes[4] = {8, 8, 8, 4};  // `scale` is an int: 4 bytes
    for (int i = 0; i < 4; ++i) {
        p.args[i] = p.bytes + 8 * i;
        p.sizes[i] = sizes[i];
    }
    p.block = CUCORE_LAUNCH_BLOCK_INIT;
    p.block.arg_count = 4;
    p.block.args = p.args;
    p.block.arg_sizes = p.sizes;
    p.block.stream = stream_.get();
    p.block.kernel = k.get();
    EXPECT_EQ(cucore_launch_block(&p.block), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(cucore_last_error_message()).find("arg_sizes[1]"), std::string::npos)
        << cucore_last_error_message();
}

}  // namespace
