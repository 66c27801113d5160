// The C++ façade of TensorMap descriptors on the fake driver: the named
// constructors pass what they are given (the fake's record), errors throw
// cucore::Error naming the rule, and launch() and graph kernel nodes pass a
// descriptor as its 128 bytes by value.
#include <cucore.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_support.hpp"
#include "tensor_maps.hpp"

namespace {

class TensorMapFacadeTest : public KernelFixture {};

fake::TensorMapRecord record_of(const cucore::TensorMapDescriptor &d) {
    const std::array<unsigned char, CUCORE_TENSOR_MAP_SIZE> bytes = d.bytes();
    return fake::tensor_map_record(bytes.data());
}

TEST_F(TensorMapFacadeTest, NamedConstructorsAndMembers) {
    using namespace cucore;
    Device dev = Device::adopt(d0_);
    d0_ = nullptr;
    Stream s = dev.create_stream();
    Buffer buffer = dev.allocate(1 << 16, s);
    const TensorMapLayout layout(CUCORE_TENSOR_MAP_DATA_TYPE_BFLOAT16, {128, 64}, {256});
    TensorMapDescriptorOptions o;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_64B;
    o.element_strides = {1, 2};
    const TensorMapDescriptor tiled = TensorMapDescriptor::tiled(buffer, layout, {32, 16}, o);
    EXPECT_EQ(tiled.kind(), CUCORE_TENSOR_MAP_KIND_TILED);
    EXPECT_EQ(tiled.address(), buffer.address());
    const fake::TensorMapRecord r = record_of(tiled);
    EXPECT_EQ(r.data_type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    EXPECT_EQ(r.rank, 2);
    EXPECT_EQ(r.box_dim[0], 32u);
    EXPECT_EQ(r.box_dim[1], 16u);
    EXPECT_EQ(r.element_strides[1], 2u);
    EXPECT_EQ(r.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tiled.data()) % CUCORE_TENSOR_MAP_ALIGNMENT, 0u);

    const TensorMapDescriptor raw = TensorMapDescriptor::tiled(buffer.address() + 256, layout, {8, 8});
    EXPECT_EQ(raw.address(), buffer.address() + 256);
    raw.replace_address(buffer);
    EXPECT_EQ(raw.address(), buffer.address());
    raw.replace_address(buffer.address() + 512);
    EXPECT_EQ(record_of(raw).address, buffer.address() + 512);

    const TensorMapLayout nhwc(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16, {64, 8, 8, 2}, {128, 1024, 8192});
    const TensorMapDescriptor im2col = TensorMapDescriptor::im2col(buffer, nhwc, {-1, -1}, {-1, -1}, 64, 32);
    EXPECT_EQ(im2col.kind(), CUCORE_TENSOR_MAP_KIND_IM2COL);
    EXPECT_EQ(record_of(im2col).lower_corner[1], -1);
    TensorMapDescriptorOptions wide;
    wide.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    const TensorMapDescriptor w = TensorMapDescriptor::im2col_wide(buffer, nhwc, 0, 0, 64, 16, wide);
    EXPECT_EQ(w.kind(), CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE);

    // Errors throw with the rule named.
    try {
        (void)TensorMapDescriptor::tiled(buffer, layout, {300, 8});
        ADD_FAILURE() << "did not throw";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("boxDim[i] must be in 1..256"), std::string::npos) << e.what();
    }
    try {
        raw.replace_address(buffer.address() + 8);
        ADD_FAILURE() << "did not throw";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
    }
    // Copies share the descriptor.
    const TensorMapDescriptor copy = tiled;
    EXPECT_EQ(copy, tiled);
    EXPECT_EQ(copy.data(), tiled.data());
}

TEST_F(TensorMapFacadeTest, LaunchAndGraphKernelNodesPassThe128Bytes) {
    using namespace cucore;
    Device dev = Device::adopt(d0_);
    d0_ = nullptr;
    Stream s = dev.create_stream();
    Buffer buffer = dev.allocate(1 << 16, s);
    const TensorMapDescriptor d =
        TensorMapDescriptor::tiled(buffer, TensorMapLayout(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32, {64, 64}, {256}), {16, 16});
    Kernel k = Kernel::from_handle(fake::make_kernel(spec({128, 4, 8}, "tma")));
    launch(s, LaunchConfig(1, 128), k, d, 7, buffer);
    s.synchronize();
    std::vector<fake::LaunchRecord> launches = fake::launches();
    ASSERT_EQ(launches.size(), 1u);
    ASSERT_EQ(launches[0].args.size(), 3u);
    ASSERT_EQ(launches[0].args[0].size(), std::size_t{CUCORE_TENSOR_MAP_SIZE});
    EXPECT_EQ(std::memcmp(launches[0].args[0].data(), d.data(), CUCORE_TENSOR_MAP_SIZE), 0);
    EXPECT_EQ(fake::tensor_map_record(launches[0].args[0].data()).address, buffer.address());

    // A graph kernel node packs it the same way.
    const GraphDefinition def = GraphDefinition::create(dev);
    def.add_kernel({}, LaunchConfig(1, 128), k, d, 9, buffer);
    const Graph graph = def.instantiate();
    graph.launch(s);
    s.synchronize();
    launches = fake::launches();
    ASSERT_EQ(launches.size(), 2u);
    ASSERT_EQ(launches[1].args.size(), 3u);
    EXPECT_EQ(std::memcmp(launches[1].args[0].data(), d.data(), CUCORE_TENSOR_MAP_SIZE), 0);
}

}  // namespace
