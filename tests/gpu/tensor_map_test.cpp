// TensorMap (TMA) descriptors (tensor_map.h, tensor_map.hpp) on a real GPU of
// compute capability 9.0 or newer (skipped below it, with the reason): a
// kernel compiled with NVRTC for the device's arch takes the descriptor as a
// `const __grid_constant__` parameter, loads one 32 x 8 box of a 100 x 50
// float tensor into shared memory with cp.async.bulk.tensor (completion
// tracked by an mbarrier) and writes the box out. The box is compared with the
// source tensor computed on the host: inside, at the right and bottom edges
// and at negative coordinates, where out-of-bounds elements read zero (fill
// NONE) or NaN (fill NAN_REQUEST_ZERO_FMA); after replace_address, from the
// second buffer; after the buffer's handle is released, from the memory the
// descriptor holds; through the C ABI and through the C++ façade's launch().
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_gpu.hpp"

namespace gpu {
template <>
struct Releaser<cucore_tensor_map_descriptor_t> {
    void operator()(cucore_tensor_map_descriptor_t *d) const { (void)cucore_tensor_map_descriptor_release(d); }
};
} // namespace gpu

namespace {

using gpu::last_message;
using gpu::Owned;

constexpr int kWidth = 100, kHeight = 50;  // the tensor: rows of 100 floats (400 bytes, a multiple of 16)
constexpr int kBoxW = 32, kBoxH = 8;        // the box: 32 x 8 floats, 1024 bytes

// The kernel declares the descriptor itself (cuda.h is not NVRTC's): 128 bytes, 64-byte aligned.
const char *const kSource = R"(
struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned shared_address(const void *p) {
    unsigned long long a;
    asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return static_cast<unsigned>(a);
}

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Loads the 32 x 8 box at coordinates (x, y) (x the inner dimension; x * 4 bytes must be a multiple of 16, or the
// copy faults with an illegal instruction: measured on an H200) with one bulk tensor copy and writes its
// 256 floats to out, row by row. status[0]: 1 once the copy completed, 2 if it did not within 5 s.
extern "C" __global__ void load_tile(const __grid_constant__ CUtensorMap_st tmap, int x, int y, float *out,
                                     unsigned *status) {
    __shared__ alignas(128) float tile[8 * 32];
    __shared__ alignas(8) unsigned long long barrier;
    const unsigned bar = shared_address(&barrier);
    if (threadIdx.x == 0) {
        // One arrival (this thread's expect_tx) completes the phase once the copy's bytes have landed.
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(1u) : "memory");
        // Make the initialised barrier visible to the other threads and to the async proxy (the TMA unit).
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(8u * 32u * 4u)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
            ::"r"(shared_address(tile)), "l"(reinterpret_cast<unsigned long long>(&tmap)), "r"(x), "r"(y), "r"(bar)
            : "memory");
    }
    unsigned done = 0;
    const unsigned long long start = now_ns();
    while (!done) {
        asm volatile(
            "{\n\t.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(bar), "r"(0u)
            : "memory");
        if (!done && now_ns() - start > 5000000000ull) break;
    }
    if (!done) {
        status[0] = 2;
        return;
    }
    for (unsigned i = threadIdx.x; i < 8 * 32; i += blockDim.x) out[i] = tile[i];
    if (threadIdx.x == 0) atomicCAS(status, 0u, 1u);
}
)";

std::uint64_t address_of(const cucore_buffer_t *b) {
    std::uint64_t a = 0;
    EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS) << last_message();
    return a;
}

// The source tensor's element (x, y): never zero, so a zero read is the out-of-bounds fill.
float source(int x, int y, float sign) { return sign * static_cast<float>(y * 1000 + x + 1); }

class TensorMapGpuTest : public gpu::CompileTest {
protected:
    void SetUp() override {
        CompileTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        if (cc_major_ < 9)
            GTEST_SKIP() << "TensorMap descriptors (TMA) need compute capability 9.0; device 0 is " << cc_major_ << "."
                         << cc_minor_;
        code_ = compile(kSource);
        ASSERT_TRUE(code_);
        kernel_ = kernel(code_.get(), "load_tile");
        ASSERT_TRUE(kernel_);
        s_ = stream_.get();
    }
    void TearDown() override {
        kernel_.reset();
        code_.reset();
        CompileTest::TearDown();
    }

    // A kWidth x kHeight float tensor of source(x, y, sign).
    Owned<cucore_buffer_t> tensor(float sign) {
        std::vector<float> host(kWidth * kHeight);
        for (int y = 0; y < kHeight; ++y)
            for (int x = 0; x < kWidth; ++x) host[y * kWidth + x] = source(x, y, sign);
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(dev_, host.size() * sizeof(float), s_, &b), CUCORE_SUCCESS) << last_message();
        EXPECT_EQ(cucore_buffer_copy_from_host(b, 0, host.data(), host.size() * sizeof(float), s_), CUCORE_SUCCESS)
            << last_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << last_message();
        return Owned<cucore_buffer_t>(b);
    }

    static cucore_tensor_map_layout_t layout() {
        cucore_tensor_map_layout_t l = CUCORE_TENSOR_MAP_LAYOUT_INIT;
        l.data_type = CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32;
        l.rank = 2;
        l.global_dim[0] = kWidth;
        l.global_dim[1] = kHeight;
        l.global_strides[0] = kWidth * sizeof(float);
        return l;
    }

    Owned<cucore_tensor_map_descriptor_t> descriptor(cucore_buffer_t *b,
                                                     cucore_tensor_map_oob_fill_t fill = CUCORE_TENSOR_MAP_OOB_FILL_NONE) {
        const cucore_tensor_map_layout_t l = layout();
        const uint32_t box[2] = {kBoxW, kBoxH};
        cucore_tensor_map_descriptor_options_t o = CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT;
        o.oob_fill = fill;
        o.l2_promotion = CUCORE_TENSOR_MAP_L2_PROMOTION_L2_128B;
        cucore_tensor_map_descriptor_t *d = nullptr;
        EXPECT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, &o, &d), CUCORE_SUCCESS) << last_message();
        return Owned<cucore_tensor_map_descriptor_t>(d);
    }

    // Runs load_tile through the C ABI (the descriptor's bytes as the first argument) and returns the box.
    std::vector<float> load(const cucore_tensor_map_descriptor_t *d, int x, int y) {
        const void *bytes = nullptr;
        EXPECT_EQ(cucore_tensor_map_descriptor_data(d, &bytes), CUCORE_SUCCESS) << last_message();
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes) % CUCORE_TENSOR_MAP_ALIGNMENT, 0u);
        auto out = array<float>(kBoxW * kBoxH);
        auto status = array<std::uint32_t>(std::vector<std::uint32_t>{0});
        float *out_ptr = static_cast<float *>(out.ptr());
        std::uint32_t *status_ptr = static_cast<std::uint32_t *>(status.ptr());
        const void *args[] = {bytes, &x, &y, &out_ptr, &status_ptr};
        const std::size_t sizes[] = {CUCORE_TENSOR_MAP_SIZE, sizeof x, sizeof y, sizeof out_ptr, sizeof status_ptr};
        const cucore_launch_config_t c = gpu::config(1, 128);
        EXPECT_EQ(cucore_launch(s_, &c, kernel_.get(), args, sizes, 5), CUCORE_SUCCESS) << last_message();
        EXPECT_EQ(status.download().at(0), 1u) << "the bulk tensor copy did not complete";
        return out.download();
    }

    // Checks a box loaded at (x0, y0) against source(., ., sign); out-of-bounds elements must be the fill.
    static void expect_box(const std::vector<float> &box, int x0, int y0, float sign, bool nan_fill = false) {
        ASSERT_EQ(box.size(), static_cast<std::size_t>(kBoxW * kBoxH));
        int outside = 0;
        for (int j = 0; j < kBoxH; ++j) {
            for (int i = 0; i < kBoxW; ++i) {
                const int x = x0 + i, y = y0 + j;
                const float got = box[j * kBoxW + i];
                const bool inside = x >= 0 && x < kWidth && y >= 0 && y < kHeight;
                if (inside) {
                    ASSERT_EQ(got, source(x, y, sign)) << "element (" << x << ", " << y << ")";
                } else if (nan_fill) {
                    ++outside;
                    ASSERT_TRUE(std::isnan(got)) << "out-of-bounds element (" << x << ", " << y << ") read " << got;
                } else {
                    ++outside;
                    ASSERT_EQ(got, 0.0f) << "out-of-bounds element (" << x << ", " << y << ")";
                }
            }
        }
        (void)outside;
    }

    Owned<cucore_object_code_t> code_;
    Owned<cucore_kernel_t> kernel_;
    cucore_stream_t *s_ = nullptr;
};

TEST_F(TensorMapGpuTest, LoadsABoxInsideTheTensor) {
    Owned<cucore_buffer_t> b = tensor(1.0f);
    Owned<cucore_tensor_map_descriptor_t> d = descriptor(b.get());
    ASSERT_TRUE(d);
    expect_box(load(d.get(), 0, 0), 0, 0, 1.0f);
    expect_box(load(d.get(), 36, 21), 36, 21, 1.0f);
}

TEST_F(TensorMapGpuTest, OutOfBoundsElementsAtAnEdgeReadZero) {
    Owned<cucore_buffer_t> b = tensor(1.0f);
    Owned<cucore_tensor_map_descriptor_t> d = descriptor(b.get());
    ASSERT_TRUE(d);
    // Right and bottom edges: columns 100..111 and rows 50..55 are outside.
    const std::vector<float> corner = load(d.get(), 80, 46);
    expect_box(corner, 80, 46, 1.0f);
    EXPECT_EQ(corner[7 * kBoxW + 31], 0.0f);   // (111, 53)
    EXPECT_EQ(corner[0], source(80, 46, 1.0f));
    // Negative coordinates: the left columns and top rows are outside.
    expect_box(load(d.get(), -8, -3), -8, -3, 1.0f);
}

TEST_F(TensorMapGpuTest, NanFillReadsNanOutsideFloatTensors) {
    Owned<cucore_buffer_t> b = tensor(1.0f);
    Owned<cucore_tensor_map_descriptor_t> d = descriptor(b.get(), CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    ASSERT_TRUE(d);
    expect_box(load(d.get(), 88, 45), 88, 45, 1.0f, true);
}

TEST_F(TensorMapGpuTest, ReplaceAddressLoadsFromTheSecondBuffer) {
    Owned<cucore_buffer_t> first = tensor(1.0f), second = tensor(-1.0f);
    Owned<cucore_tensor_map_descriptor_t> d = descriptor(first.get());
    ASSERT_TRUE(d);
    expect_box(load(d.get(), 12, 5), 12, 5, 1.0f);
    CUCORE_ASSERT_OK(cucore_tensor_map_descriptor_replace_address(d.get(), second.get(), 0));
    std::uint64_t address = 0;
    CUCORE_ASSERT_OK(cucore_tensor_map_descriptor_address(d.get(), &address));
    EXPECT_EQ(address, address_of(second.get()));
    expect_box(load(d.get(), 12, 5), 12, 5, -1.0f);
    expect_box(load(d.get(), 88, 48), 88, 48, -1.0f);
}

TEST_F(TensorMapGpuTest, TheDescriptorHoldsItsBufferAfterTheHandleIsReleased) {
    Owned<cucore_buffer_t> b = tensor(1.0f);
    Owned<cucore_tensor_map_descriptor_t> d = descriptor(b.get());
    ASSERT_TRUE(d);
    b.reset();  // the memory lives on in the descriptor
    expect_box(load(d.get(), 64, 16), 64, 16, 1.0f);
}

TEST_F(TensorMapGpuTest, TheFacadeLaunchPassesTheDescriptorByValue) {
    Owned<cucore_buffer_t> b = tensor(1.0f);
    cucore_buffer_retain(b.get());
    const cucore::Buffer buffer = cucore::Buffer::adopt(b.get());
    const cucore::TensorMapLayout l(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32, {kWidth, kHeight}, {kWidth * sizeof(float)});
    const cucore::TensorMapDescriptor d = cucore::TensorMapDescriptor::tiled(buffer, l, {kBoxW, kBoxH});
    EXPECT_EQ(d.kind(), CUCORE_TENSOR_MAP_KIND_TILED);
    EXPECT_EQ(d.address(), address_of(b.get()));
    cucore_stream_retain(s_);
    const cucore::Stream stream = cucore::Stream::adopt(s_);
    cucore_kernel_retain(kernel_.get());
    const cucore::Kernel k = cucore::Kernel::adopt(kernel_.get());
    auto out = array<float>(kBoxW * kBoxH);
    auto status = array<std::uint32_t>(std::vector<std::uint32_t>{0});
    cucore::LaunchConfig config(1, 128);
    cucore::launch(stream, config, k, d, 68, 44, static_cast<float *>(out.ptr()),
                   static_cast<std::uint32_t *>(status.ptr()));
    EXPECT_EQ(status.download().at(0), 1u);
    expect_box(out.download(), 68, 44, 1.0f);
}

} // namespace
