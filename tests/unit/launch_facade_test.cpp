// The C++ façade of kernels and launches on the fake driver: launch() packs
// scalars, pointers, Buffers and structs by value (the sizes and bytes the
// driver receives), LaunchConfig's conversion, and Kernel's members throwing
// cucore::Error.
#include <cucore.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_support.hpp"

namespace {

struct Struct64 {  // a 64-byte struct passed by value
    std::uint64_t words[8];
};
static_assert(sizeof(Struct64) == 64);

enum class Mode : std::int32_t { off = 0, on = 0x1234 };

class LaunchFacadeTest : public KernelFixture {};

template <typename T>
void expect_bytes(const std::vector<unsigned char> &received, const T &expected, const char *what) {
    ASSERT_EQ(received.size(), sizeof(T)) << what;
    EXPECT_EQ(std::memcmp(received.data(), &expected, sizeof(T)), 0) << what;
}

TEST_F(LaunchFacadeTest, LaunchPacksEachKindOfArgument) {
    using namespace cucore;
    Device dev = Device::adopt(d0_);
    d0_ = nullptr;  // the Device owns it now
    Stream s = dev.create_stream();
    Buffer buffer = dev.allocate(256, s);
    // int, float, double, uint8_t, bool, pointer, Buffer, nullptr, enum, 64-byte struct
    CUkernel raw = fake::make_kernel(spec({4, 4, 8, 1, 1, 8, 8, 8, 4, 64}, "packed"));
    Kernel k = Kernel::from_handle(raw);
    Struct64 big{};
    for (std::uint64_t i = 0; i < 8; ++i) big.words[i] = 0x0101010101010101ull * (i + 1);
    const float *pointer = reinterpret_cast<const float *>(std::uintptr_t{0xABCDEF00});
    const std::uint8_t byte = 0xE7;
    LaunchConfig config(Dim3(3, 2), 64, 512);
    launch(s, config, k, 42, 1.5f, -2.25, byte, true, pointer, buffer, nullptr, Mode::on, big);

    const std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 1u);
    const fake::LaunchRecord &r = launches[0];
    EXPECT_EQ(r.config.gridDimX, 3u);
    EXPECT_EQ(r.config.gridDimY, 2u);
    EXPECT_EQ(r.config.blockDimX, 64u);
    EXPECT_EQ(r.config.sharedMemBytes, 512u);
    EXPECT_EQ(r.config.hStream, s.handle());
    ASSERT_EQ(r.args.size(), 10u);
    expect_bytes(r.args[0], 42, "int");
    expect_bytes(r.args[1], 1.5f, "float");
    expect_bytes(r.args[2], -2.25, "double");
    expect_bytes(r.args[3], byte, "uint8_t");
    expect_bytes(r.args[4], true, "bool");
    expect_bytes(r.args[5], pointer, "pointer");
    expect_bytes(r.args[6], reinterpret_cast<void *>(static_cast<std::uintptr_t>(buffer.address())), "Buffer");
    expect_bytes(r.args[7], static_cast<void *>(nullptr), "nullptr");
    expect_bytes(r.args[8], Mode::on, "enum");
    expect_bytes(r.args[9], big, "64-byte struct");
}

TEST_F(LaunchFacadeTest, SizesTheKernelDisagreesWithThrow) {
    using namespace cucore;
    Stream s = Stream::borrow(s0_);
    Kernel k = Kernel::from_handle(fake::make_kernel(spec({8}, "wide")));
    try {
        launch(s, LaunchConfig(), k, 1);  // an int: 4 bytes
        FAIL() << "expected cucore::Error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("'arg_sizes[0]' is 4 bytes, but parameter 0 of kernel 'wide' is 8 bytes"),
                  std::string::npos)
            << e.what();
    }
    launch(s, LaunchConfig(), k, std::int64_t{1});
    launch(s, LaunchConfig(), k, 1.0);
    EXPECT_EQ(fake::launches().size(), 2u);
    Kernel none = Kernel::from_handle(fake::make_kernel(spec({})));
    launch(s, LaunchConfig(), none);
    EXPECT_EQ(fake::launches().back().args.size(), 0u);
}

TEST_F(LaunchFacadeTest, LaunchConfigConvertsEveryField) {
    cucore::LaunchConfig config;
    cucore_launch_config_t c = config.to_c();
    const cucore_launch_config_t defaults = CUCORE_LAUNCH_CONFIG_INIT;
    EXPECT_EQ(std::memcmp(&c, &defaults, sizeof c), 0) << "the defaults are CUCORE_LAUNCH_CONFIG_INIT's";
    config.grid = {4, 5, 6};
    config.block = 128;
    config.cluster = 2;
    config.shared_memory_bytes = 4096;
    config.cooperative = true;
    config.programmatic_stream_serialization = true;
    config.priority = -2;
    c = config.to_c();
    EXPECT_EQ(c.struct_size, sizeof c);
    EXPECT_EQ(c.grid[0], 4u);
    EXPECT_EQ(c.grid[1], 5u);
    EXPECT_EQ(c.grid[2], 6u);
    EXPECT_EQ(c.block[0], 128u);
    EXPECT_EQ(c.block[1], 1u);
    EXPECT_EQ(c.cluster[0], 2u);
    EXPECT_EQ(c.cluster[1], 1u);
    EXPECT_EQ(c.shared_memory_bytes, 4096u);
    EXPECT_EQ(c.flags, static_cast<uint32_t>(CUCORE_LAUNCH_COOPERATIVE | CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION |
                                             CUCORE_LAUNCH_PRIORITY));
    EXPECT_EQ(c.priority, -2);
}

TEST_F(LaunchFacadeTest, KernelMembersForwardAndThrow) {
    using namespace cucore;
    Device dev = Device::borrow(d1_);
    fake::KernelSpec sp = spec({8, 4}, "facade");
    sp.max_threads_per_block = 512;
    int released = 0;
    CUkernel raw = fake::make_kernel(sp);
    {
        Kernel k = Kernel::from_handle(raw, [](void *n) { ++*static_cast<int *>(n); }, &released);
        EXPECT_STREQ(k.name(), "facade");
        EXPECT_EQ(k.handle(), static_cast<void *>(raw));
        EXPECT_EQ(k.attributes(dev).max_threads_per_block(), 512);
        EXPECT_EQ(k.attributes(dev).num_regs(), CU_FUNC_ATTRIBUTE_NUM_REGS * 100 + 1);
        k.set_attribute(dev, CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2);
        EXPECT_EQ(k.attributes(dev).required_cluster_width(), 2);
        EXPECT_EQ(k.param_count(), 2u);
        const std::vector<ParamInfo> info = k.param_info();
        ASSERT_EQ(info.size(), 2u);
        EXPECT_EQ(info[1].offset, 8u);
        EXPECT_EQ(info[1].size, 4u);
        EXPECT_EQ(k.max_active_blocks_per_multiprocessor(dev, 128), 4);
        const PotentialBlockSize best = k.max_potential_block_size(dev, 0, 256);
        EXPECT_EQ(best.block_size, 256);
        EXPECT_EQ(best.min_grid_size, 4 * 132);
        EXPECT_EQ(k.available_dynamic_shared_memory(dev, 2, 64), (std::size_t{228} << 10) / 2);
        LaunchConfig config(2, 16);
        config.cluster = 2;
        EXPECT_EQ(k.max_potential_cluster_size(config, dev), 8);
        EXPECT_EQ(k.max_active_clusters(config, dev), 16);
        EXPECT_NE(k.function(dev), nullptr);
        fake::set_attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1, 21);
        fake::set_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 1, 51);
        config.validate(k, dev);  // device 1's limits: block 21, grid 51
        config.block = 22;
        try {
            config.validate(k, dev);
            FAIL() << "expected cucore::Error";
        } catch (const Error &e) {
            EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(e.what()).find("block.x is 22, above device 1's limit of 21"), std::string::npos)
                << e.what();
        }
        try {
            (void)k.param_info(2);
            FAIL() << "expected cucore::Error";
        } catch (const Error &e) {
            EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        }
        Kernel copy = k;
        EXPECT_TRUE(copy == k);
    }
    EXPECT_EQ(released, 1);
    try {
        (void)Kernel::from_handle(nullptr);
        FAIL() << "expected cucore::Error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
    }
}

}  // namespace
