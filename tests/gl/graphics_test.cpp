// GL interop through libcucore (graphics.h, graphics.hpp) on a real NVIDIA GL
// context: cuGLGetDevices, buffer and texture round trips in both directions,
// batch mapping, unmapping on another stream, a GL texture mapped as an array
// and sampled by a kernel through a texture object (which holds the mapping),
// every error with its message, registration and mapping from a second thread
// on a shared context, and 10,000 map/unmap cycles that leak nothing.
//
// Every test skips with the reason where there is no CUDA driver or device, no
// NVIDIA GL context (egl_context.hpp says why), or, for the kernel tests, no
// NVRTC. The fixture (GpuTest) checks at the end of each test that libcucore's
// live object counts are back to where they started.
#include <cucore.h>
#include <cucore.hpp>
#include <cucore/graphics.h>
#include <cucore/graphics.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "egl_context.hpp"
#include "kernel_gpu.hpp"

namespace {

using gpu::contains;
using gpu::last_message;
using gpu::Owned;

template <typename T>
struct Release;
template <>
struct Release<cucore_graphics_resource_t> {
    void operator()(cucore_graphics_resource_t *p) const { (void)cucore_graphics_resource_release(p); }
};
template <>
struct Release<cucore_opaque_array_t> {
    void operator()(cucore_opaque_array_t *p) const { (void)cucore_opaque_array_release(p); }
};
template <>
struct Release<cucore_mipmapped_array_t> {
    void operator()(cucore_mipmapped_array_t *p) const { (void)cucore_mipmapped_array_release(p); }
};
template <>
struct Release<cucore_texture_object_t> {
    void operator()(cucore_texture_object_t *p) const { (void)cucore_texture_object_release(p); }
};
using OwnedResource = std::unique_ptr<cucore_graphics_resource_t, Release<cucore_graphics_resource_t>>;
using OwnedArray = std::unique_ptr<cucore_opaque_array_t, Release<cucore_opaque_array_t>>;
using OwnedMipmapped = std::unique_ptr<cucore_mipmapped_array_t, Release<cucore_mipmapped_array_t>>;
using OwnedTexture = std::unique_ptr<cucore_texture_object_t, Release<cucore_texture_object_t>>;

// Host twins of float2 and float4.
struct F2 {
    float x, y;
};
struct alignas(16) F4 {
    float x, y, z, w;
};

// Kernels compiled with the library's Program.
const char *const kKernels = R"(
extern "C" __global__ void write_pattern(unsigned *p, unsigned n, unsigned seed) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i * 2654435761u + seed;
}
extern "C" __global__ void add_one(const unsigned *in, unsigned *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1u;
}
extern "C" __global__ void sample_rgba(cudaTextureObject_t t, const float2 *at, float4 *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}
)";

std::vector<std::uint32_t> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<std::uint32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i) * 2654435761u + seed;
    return v;
}

class GlTest : public gpu::GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        std::string reason;
        gl_ = gltest::EglContext::create(0, &reason);
        if (gl_ == nullptr) GTEST_SKIP() << "no NVIDIA GL context on CUDA device 0: " << reason;
        cucore_stream_t *s = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s));
        stream_.reset(s);
    }
    void TearDown() override {
        if (stream_) (void)cucore_stream_synchronize(stream_.get());
        stream_.reset();
        write_pattern_.reset();
        add_one_.reset();
        sample_rgba_.reset();
        if (gl_ != nullptr) {
            if (!gl_->is_current()) gl_->make_current();
            const gltest::GlFunctions &gl = gl_->gl();
            if (!buffers_.empty()) gl.DeleteBuffers(static_cast<gltest::GLsizei>(buffers_.size()), buffers_.data());
            if (!textures_.empty())
                gl.DeleteTextures(static_cast<gltest::GLsizei>(textures_.size()), textures_.data());
            EXPECT_EQ(gl.GetError(), gltest::GL_NO_ERROR);
        }
        gl_.reset();
        // Leave no CUDA context current (EGL may have made one current).
        GpuTest::TearDown();
    }

    const gltest::GlFunctions &gl() const { return gl_->gl(); }

    // A GL buffer of `words` (deleted in TearDown).
    gltest::GLuint make_buffer(const std::vector<std::uint32_t> &words) {
        gltest::GLuint name = 0;
        gl().GenBuffers(1, &name);
        EXPECT_NE(name, 0u);
        gl().BindBuffer(gltest::GL_ARRAY_BUFFER, name);
        gl().BufferData(gltest::GL_ARRAY_BUFFER, static_cast<gltest::GLsizeiptr>(words.size() * 4), words.data(),
                        gltest::GL_DYNAMIC_DRAW);
        gl().BindBuffer(gltest::GL_ARRAY_BUFFER, 0);
        gl().Finish();
        EXPECT_EQ(gl().GetError(), gltest::GL_NO_ERROR);
        buffers_.push_back(name);
        return name;
    }
    std::vector<std::uint32_t> read_buffer(gltest::GLuint name, std::size_t words) {
        std::vector<std::uint32_t> out(words, 0);
        gl().BindBuffer(gltest::GL_ARRAY_BUFFER, name);
        gl().GetBufferSubData(gltest::GL_ARRAY_BUFFER, 0, static_cast<gltest::GLsizeiptr>(words * 4), out.data());
        gl().BindBuffer(gltest::GL_ARRAY_BUFFER, 0);
        EXPECT_EQ(gl().GetError(), gltest::GL_NO_ERROR);
        return out;
    }
    // A 2D texture of `internal` format, one level, initial texels `data` (may be null).
    gltest::GLuint make_texture(gltest::GLenum internal, gltest::GLenum type, int w, int h, const void *data) {
        gltest::GLuint name = 0;
        gl().GenTextures(1, &name);
        EXPECT_NE(name, 0u);
        gl().BindTexture(gltest::GL_TEXTURE_2D, name);
        gl().TexParameteri(gltest::GL_TEXTURE_2D, gltest::GL_TEXTURE_MIN_FILTER, gltest::GL_NEAREST);
        gl().TexParameteri(gltest::GL_TEXTURE_2D, gltest::GL_TEXTURE_MAG_FILTER, gltest::GL_NEAREST);
        gl().TexParameteri(gltest::GL_TEXTURE_2D, gltest::GL_TEXTURE_MAX_LEVEL, 0);
        gl().PixelStorei(gltest::GL_UNPACK_ALIGNMENT, 1);
        gl().PixelStorei(gltest::GL_PACK_ALIGNMENT, 1);
        gl().TexImage2D(gltest::GL_TEXTURE_2D, 0, static_cast<gltest::GLint>(internal), w, h, 0, gltest::GL_RGBA,
                        type, data);
        gl().BindTexture(gltest::GL_TEXTURE_2D, 0);
        gl().Finish();
        EXPECT_EQ(gl().GetError(), gltest::GL_NO_ERROR);
        textures_.push_back(name);
        return name;
    }

    OwnedResource register_buffer(gltest::GLuint name, std::uint32_t flags = CUCORE_GRAPHICS_REGISTER_NONE) {
        cucore_graphics_resource_t *r = nullptr;
        EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(dev_, name, flags, &r), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return OwnedResource(r);
    }
    OwnedResource register_texture(gltest::GLuint name, std::uint32_t flags = CUCORE_GRAPHICS_REGISTER_NONE) {
        cucore_graphics_resource_t *r = nullptr;
        EXPECT_EQ(cucore_graphics_resource_from_gl_image(dev_, name, gltest::GL_TEXTURE_2D, flags, &r),
                  CUCORE_SUCCESS)
            << cucore_last_error_message();
        return OwnedResource(r);
    }

    static std::uint64_t address(const cucore_buffer_t *b) {
        std::uint64_t a = 0;
        EXPECT_EQ(cucore_buffer_address(b, &a), CUCORE_SUCCESS) << cucore_last_error_message();
        return a;
    }
    static std::uint64_t size(const cucore_buffer_t *b) {
        std::uint64_t s = 0;
        EXPECT_EQ(cucore_buffer_size(b, &s), CUCORE_SUCCESS) << cucore_last_error_message();
        return s;
    }
    static bool mapped(const cucore_graphics_resource_t *r) {
        int m = -1;
        EXPECT_EQ(cucore_graphics_resource_is_mapped(r, &m), CUCORE_SUCCESS) << cucore_last_error_message();
        return m == 1;
    }

    // The two kernels, compiled for device 0 with the library's Program (skips without NVRTC).
    void compile_kernels() {
        int version = 0;
        const cucore_status_t s = cucore_compiler_version(CUCORE_BACKEND_NVRTC, &version);
        if (s == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "NVRTC is not installed: " << last_message();
        ASSERT_EQ(s, CUCORE_SUCCESS) << last_message();
        int major = 0, minor = 0;
        CUCORE_ASSERT_OK(cucore_device_compute_capability(dev_, &major, &minor));
        const std::string arch = "sm_" + std::to_string(major * 10 + minor);
        cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
        o.arch = arch.c_str();
        o.std = "c++17";
        cucore_program_t *p = nullptr;
        CUCORE_ASSERT_OK(cucore_program_create(kKernels, 0, CUCORE_CODE_CXX, &o, &p));
        Owned<cucore_program_t> program(p);
        cucore_object_code_t *code = nullptr;
        CUCORE_ASSERT_OK(cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr, &code));
        Owned<cucore_object_code_t> owned_code(code);
        cucore_kernel_t *k = nullptr;
        CUCORE_ASSERT_OK(cucore_object_code_get_kernel(code, "write_pattern", &k));
        write_pattern_.reset(k);
        k = nullptr;
        CUCORE_ASSERT_OK(cucore_object_code_get_kernel(code, "add_one", &k));
        add_one_.reset(k);
        k = nullptr;
        CUCORE_ASSERT_OK(cucore_object_code_get_kernel(code, "sample_rgba", &k));
        sample_rgba_.reset(k);
    }

    // Samples texture `tex` at `at` with the sample_rgba kernel.
    std::vector<F4> sample(std::uint64_t tex, const std::vector<F2> &at) {
        const auto n = static_cast<unsigned>(at.size());
        gpu::DeviceArray<F2> coords(dev_, stream_.get(), at);
        gpu::DeviceArray<F4> out(dev_, stream_.get(), n);
        EXPECT_EQ(gpu::launch(stream_.get(), gpu::config((n + 127) / 128, 128), sample_rgba_.get(), tex,
                              static_cast<const F2 *>(coords.ptr()), static_cast<F4 *>(out.ptr()), n),
                  CUCORE_SUCCESS)
            << last_message();
        return out.download();
    }

    std::unique_ptr<gltest::EglContext> gl_;
    Owned<cucore_stream_t> stream_;
    Owned<cucore_kernel_t> write_pattern_, add_one_, sample_rgba_;
    std::vector<gltest::GLuint> buffers_, textures_;
};

// ---- GL devices ----------------------------------------------------------------

TEST_F(GlTest, GlDevicesListDeviceZero) {
    std::uint32_t count = 0;
    CUCORE_ASSERT_OK(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, nullptr, 0, &count));
    ASSERT_GE(count, 1u);
    std::vector<int> ordinals(count, -1);
    std::uint32_t again = 0;
    CUCORE_ASSERT_OK(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, ordinals.data(), count, &again));
    EXPECT_EQ(again, count);
    EXPECT_NE(std::find(ordinals.begin(), ordinals.end(), 0), ordinals.end());
    // The façade gives the same list.
    EXPECT_EQ(cucore::gl_get_devices(), ordinals);
    // Argument errors.
    CUCORE_EXPECT_STATUS(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, nullptr, 0, nullptr),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(last_message().empty());
    CUCORE_EXPECT_STATUS(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, nullptr, 4, &count),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(last_message().empty());
    CUCORE_EXPECT_STATUS(cucore_gl_get_devices(77, ordinals.data(), count, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(last_message().empty());
}

// ---- Buffers ---------------------------------------------------------------------

// A kernel writes a pattern into a mapped GL buffer; GL reads it back.
TEST_F(GlTest, KernelWritesGlReads) {
    compile_kernels();
    if (IsSkipped() || HasFatalFailure()) return;
    constexpr unsigned n = 1u << 18; // 1 MiB
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(n, 0));
    OwnedResource res = register_buffer(vbo, CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD);
    ASSERT_TRUE(res);
    void *raw = nullptr;
    CUCORE_ASSERT_OK(cucore_graphics_resource_handle(res.get(), &raw));
    EXPECT_NE(raw, nullptr);
    {
        cucore_buffer_t *b = nullptr;
        CUCORE_ASSERT_OK(
            cucore_graphics_resource_map(res.get(), stream_.get(), CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD, &b));
        Owned<cucore_buffer_t> buf(b);
        EXPECT_TRUE(mapped(res.get()));
        EXPECT_EQ(size(b), std::uint64_t{n} * 4);
        auto *p = reinterpret_cast<unsigned *>(static_cast<std::uintptr_t>(address(b)));
        ASSERT_NE(p, nullptr);
        const unsigned seed = 12345;
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), gpu::config((n + 255) / 256, 256), write_pattern_.get(), p, n,
                                     seed));
    } // the last reference unmaps on stream_
    EXPECT_FALSE(mapped(res.get()));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    EXPECT_EQ(read_buffer(vbo, n), pattern(n, 12345));
}

// GL uploads data; a kernel reads the mapped buffer (into a device buffer checked on the host).
TEST_F(GlTest, GlWritesKernelReads) {
    compile_kernels();
    if (IsSkipped() || HasFatalFailure()) return;
    constexpr unsigned n = 100000;
    const std::vector<std::uint32_t> data = pattern(n, 777);
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(n, 0));
    gl().BindBuffer(gltest::GL_ARRAY_BUFFER, vbo);
    gl().BufferSubData(gltest::GL_ARRAY_BUFFER, 0, static_cast<gltest::GLsizeiptr>(n * 4), data.data());
    gl().BindBuffer(gltest::GL_ARRAY_BUFFER, 0);
    gl().Finish();
    OwnedResource res = register_buffer(vbo, CUCORE_GRAPHICS_REGISTER_READ_ONLY);
    ASSERT_TRUE(res);
    gpu::DeviceArray<std::uint32_t> out(dev_, stream_.get(), n);
    {
        cucore_buffer_t *b = nullptr;
        CUCORE_ASSERT_OK(
            cucore_graphics_resource_map(res.get(), stream_.get(), CUCORE_GRAPHICS_MAP_HINT_READ_ONLY, &b));
        Owned<cucore_buffer_t> buf(b);
        ASSERT_EQ(size(b), std::uint64_t{n} * 4);
        auto *in = reinterpret_cast<const unsigned *>(static_cast<std::uintptr_t>(address(b)));
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), gpu::config((n + 255) / 256, 256), add_one_.get(), in,
                                     static_cast<unsigned *>(out.ptr()), n));
        // Also straight to the host through the mapped buffer.
        std::vector<std::uint32_t> direct(n, 0);
        CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(b, 0, direct.data(), n * 4, stream_.get()));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
        EXPECT_EQ(direct, data);
    }
    const std::vector<std::uint32_t> got = out.download();
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(got[i], data[i] + 1u) << "element " << i;
}

// The façade: map in a scope, fill, GL sees it; close is idempotent and later calls throw.
TEST_F(GlTest, FacadeMapFillClose) {
    constexpr unsigned n = 4096;
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(n, 0));
    cucore::Device device = cucore::Device::get(0);
    cucore::Stream stream = device.create_stream();
    cucore::GraphicsResource res = cucore::GraphicsResource::from_gl_buffer(device, vbo);
    {
        cucore::Buffer buf = res.map(stream);
        EXPECT_TRUE(res.is_mapped());
        EXPECT_EQ(buf.size(), std::uint64_t{n} * 4);
        CUCORE_ASSERT_OK(cucore_buffer_fill(buf.get(), 0xA5A5F00Du, 4, stream.get()));
    }
    EXPECT_FALSE(res.is_mapped());
    stream.synchronize();
    EXPECT_EQ(read_buffer(vbo, n), std::vector<std::uint32_t>(n, 0xA5A5F00Du));
    EXPECT_NE(res.handle(), nullptr);
    res.close();
    res.close(); // idempotent
    CUCORE_EXPECT_THROW_STATUS(res.map(stream), CUCORE_ERROR_INVALID_STATE);
}

// Several buffers mapped in one call; each mapping is its own buffer and unmaps on its own.
TEST_F(GlTest, BatchMap) {
    constexpr unsigned kCount = 5, n = 2048;
    std::vector<OwnedResource> owned;
    std::vector<cucore_graphics_resource_t *> resources;
    for (unsigned i = 0; i < kCount; ++i) {
        const gltest::GLuint vbo = make_buffer(pattern(n + i * 64, 1000 * i));
        owned.push_back(register_buffer(vbo));
        ASSERT_TRUE(owned.back());
        resources.push_back(owned.back().get());
    }
    std::vector<cucore_buffer_t *> mapped_buffers(kCount, nullptr);
    CUCORE_ASSERT_OK(cucore_graphics_resources_map(resources.data(), kCount, stream_.get(), mapped_buffers.data()));
    std::vector<Owned<cucore_buffer_t>> bufs;
    for (cucore_buffer_t *b : mapped_buffers) bufs.emplace_back(b);
    for (unsigned i = 0; i < kCount; ++i) {
        ASSERT_NE(mapped_buffers[i], nullptr);
        EXPECT_TRUE(mapped(resources[i]));
        const std::size_t words = n + i * 64;
        ASSERT_EQ(size(mapped_buffers[i]), words * 4);
        std::vector<std::uint32_t> got(words, 0);
        CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(mapped_buffers[i], 0, got.data(), words * 4, stream_.get()));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
        EXPECT_EQ(got, pattern(words, 1000 * i)) << "buffer " << i;
    }
    // Mapping any of them again fails, and the batch as a whole too; nothing changes.
    cucore_buffer_t *extra = nullptr;
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_map(resources[2], stream_.get(), 0, &extra),
                         CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(extra, nullptr);
    std::vector<cucore_buffer_t *> again(kCount, nullptr);
    CUCORE_EXPECT_STATUS(cucore_graphics_resources_map(resources.data(), kCount, stream_.get(), again.data()),
                         CUCORE_ERROR_INVALID_STATE);
    for (cucore_buffer_t *b : again) EXPECT_EQ(b, nullptr);
    // Releasing one mapping unmaps that resource only.
    bufs[1].reset();
    EXPECT_FALSE(mapped(resources[1]));
    EXPECT_TRUE(mapped(resources[0]));
    bufs.clear();
    for (cucore_graphics_resource_t *r : resources) EXPECT_FALSE(mapped(r));
    // Argument errors: a resource twice, count 0.
    cucore_graphics_resource_t *twice[2] = {resources[0], resources[0]};
    cucore_buffer_t *out2[2] = {nullptr, nullptr};
    CUCORE_EXPECT_STATUS(cucore_graphics_resources_map(twice, 2, stream_.get(), out2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "twice")) << last_message();
    CUCORE_EXPECT_STATUS(cucore_graphics_resources_map(resources.data(), 0, stream_.get(), out2),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(mapped(resources[0]));
    // The façade's map_all.
    cucore::Stream stream = cucore::Device::get(0).create_stream();
    std::vector<cucore::GraphicsResource> cpp;
    for (cucore_graphics_resource_t *r : resources) {
        CUCORE_ASSERT_OK(cucore_graphics_resource_retain(r));
        cpp.push_back(cucore::GraphicsResource::adopt(r));
    }
    {
        cucore::MappedBuffers all = cucore::GraphicsResource::map_all(cpp, stream);
        ASSERT_EQ(all.size(), kCount);
        for (unsigned i = 0; i < kCount; ++i) EXPECT_EQ(all[i].size(), (n + i * 64) * 4ull);
        for (const cucore::GraphicsResource &r : cpp) EXPECT_TRUE(r.is_mapped());
    }  // one batch unmap
    for (const cucore::GraphicsResource &r : cpp) EXPECT_FALSE(r.is_mapped());
    stream.synchronize();
}

// A batch mapped and unmapped in one call each: CUDA fills every buffer, GL reads each fill back.
TEST_F(GlTest, BatchUnmapHandsEveryBufferBackToGl) {
    constexpr unsigned kCount = 4, n = 4096;
    std::vector<OwnedResource> owned;
    std::vector<cucore_graphics_resource_t *> resources;
    std::vector<gltest::GLuint> names;
    for (unsigned i = 0; i < kCount; ++i) {
        names.push_back(make_buffer(pattern(n, 7 * i)));
        owned.push_back(register_buffer(names.back()));
        ASSERT_TRUE(owned.back());
        resources.push_back(owned.back().get());
    }
    std::vector<cucore_buffer_t *> mapped_buffers(kCount, nullptr);
    CUCORE_ASSERT_OK(cucore_graphics_resources_map(resources.data(), kCount, stream_.get(), mapped_buffers.data()));
    std::vector<Owned<cucore_buffer_t>> bufs;
    for (cucore_buffer_t *b : mapped_buffers) bufs.emplace_back(b);
    for (unsigned i = 0; i < kCount; ++i)
        CUCORE_ASSERT_OK(cucore_buffer_fill(mapped_buffers[i], 0xC0DE0000u + i, 4, stream_.get()));
    CUCORE_ASSERT_OK(cucore_graphics_resources_unmap(resources.data(), kCount, nullptr));
    for (unsigned i = 0; i < kCount; ++i) {
        EXPECT_FALSE(mapped(resources[i]));
        EXPECT_EQ(size(mapped_buffers[i]), 0u) << "the mapped buffer reads as closed";
    }
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    for (unsigned i = 0; i < kCount; ++i)
        EXPECT_EQ(read_buffer(names[i], n), std::vector<std::uint32_t>(n, 0xC0DE0000u + i)) << "buffer " << i;
    CUCORE_EXPECT_STATUS(cucore_graphics_resources_unmap(resources.data(), kCount, nullptr),
                         CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(last_message(), "resources[0] is not mapped")) << last_message();
    bufs.clear();  // their release unmaps nothing more
    for (cucore_graphics_resource_t *r : resources) EXPECT_FALSE(mapped(r));
}

// Unmap on another stream than the mapping's: the buffer is closed, GL sees the data.
TEST_F(GlTest, UnmapOnStreamOverride) {
    constexpr unsigned n = 8192;
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(n, 0));
    OwnedResource res = register_buffer(vbo);
    ASSERT_TRUE(res);
    cucore_stream_t *other_raw = nullptr;
    CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &other_raw));
    Owned<cucore_stream_t> other(other_raw);
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_graphics_resource_map(res.get(), stream_.get(), 0, &b));
    Owned<cucore_buffer_t> buf(b);
    CUCORE_ASSERT_OK(cucore_buffer_fill(b, 0x01020304u, 4, stream_.get()));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    CUCORE_ASSERT_OK(cucore_graphics_resource_unmap(res.get(), other.get()));
    EXPECT_FALSE(mapped(res.get()));
    EXPECT_EQ(size(b), 0u) << "the mapped buffer is closed by unmap";
    CUCORE_ASSERT_OK(cucore_stream_synchronize(other.get()));
    buf.reset(); // its release does nothing more
    EXPECT_FALSE(mapped(res.get()));
    EXPECT_EQ(read_buffer(vbo, n), std::vector<std::uint32_t>(n, 0x01020304u));
    // The façade's unmap(stream) too.
    const cucore::Device device = cucore::Device::get(0);
    cucore::Stream cpp_stream = device.create_stream(), cpp_other = device.create_stream();
    CUCORE_ASSERT_OK(cucore_graphics_resource_retain(res.get()));
    cucore::GraphicsResource cpp = cucore::GraphicsResource::adopt(res.get());
    cucore::Buffer mapped_buf = cpp.map(cpp_stream);
    mapped_buf.fill(std::uint32_t{0x0A0B0C0Du}, cpp_stream);
    cpp_stream.synchronize();
    EXPECT_TRUE(cpp.is_mapped());
    cpp.unmap(cpp_other);
    EXPECT_FALSE(cpp.is_mapped());
    EXPECT_EQ(mapped_buf.size(), 0u);
    cpp_other.synchronize();
    EXPECT_EQ(read_buffer(vbo, n), std::vector<std::uint32_t>(n, 0x0A0B0C0Du));
}

// ---- Textures ----------------------------------------------------------------------

// RGBA8: copy into the mapped array, GL reads it back; GL uploads, copy out.
TEST_F(GlTest, Rgba8TextureBothWays) {
    constexpr int w = 256, h = 128;
    const std::size_t bytes = static_cast<std::size_t>(w) * h * 4;
    const gltest::GLuint tex = make_texture(gltest::GL_RGBA8, gltest::GL_UNSIGNED_BYTE, w, h, nullptr);
    OwnedResource res = register_texture(tex, CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE);
    ASSERT_TRUE(res);
    std::vector<std::uint8_t> in(bytes);
    for (std::size_t i = 0; i < bytes; ++i) in[i] = static_cast<std::uint8_t>(i * 7 + (i >> 10));
    {
        cucore_opaque_array_t *a = nullptr;
        CUCORE_ASSERT_OK(cucore_graphics_resource_map_array(res.get(), stream_.get(), 0, 0, 0, &a));
        OwnedArray arr(a);
        EXPECT_TRUE(mapped(res.get()));
        cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        CUCORE_ASSERT_OK(cucore_opaque_array_info(a, &info));
        EXPECT_EQ(info.format, CUCORE_ARRAY_FORMAT_UINT8);
        EXPECT_EQ(info.num_channels, 4u);
        EXPECT_EQ(info.element_size, 4u);
        EXPECT_EQ(info.kind, CUCORE_ARRAY_KIND_PLAIN);
        EXPECT_EQ(info.width, static_cast<std::uint64_t>(w));
        EXPECT_EQ(info.height, static_cast<std::uint64_t>(h));
        EXPECT_EQ(info.depth, 0u);
        EXPECT_EQ(info.size_bytes, static_cast<std::uint64_t>(bytes));
        EXPECT_EQ(info.is_owned, 0u) << "the driver owns a mapped image's array";
        void *cu_array = nullptr;
        CUCORE_ASSERT_OK(cucore_opaque_array_handle(a, &cu_array));
        EXPECT_NE(cu_array, nullptr);
        // A short source is refused.
        CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_host(a, in.data(), bytes - 4, stream_.get()),
                             CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_FALSE(last_message().empty());
        CUCORE_ASSERT_OK(cucore_opaque_array_copy_from_host(a, in.data(), bytes, stream_.get()));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    } // unmaps
    EXPECT_FALSE(mapped(res.get()));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    std::vector<std::uint8_t> back(bytes, 0);
    gl().BindTexture(gltest::GL_TEXTURE_2D, tex);
    gl().GetTexImage(gltest::GL_TEXTURE_2D, 0, gltest::GL_RGBA, gltest::GL_UNSIGNED_BYTE, back.data());
    EXPECT_EQ(gl().GetError(), gltest::GL_NO_ERROR);
    EXPECT_TRUE(back == in) << "GL did not read back the texels CUDA wrote";

    // GL uploads other texels; copy them out through the C++ façade.
    std::vector<std::uint8_t> up(bytes);
    for (std::size_t i = 0; i < bytes; ++i) up[i] = static_cast<std::uint8_t>(255 - (i * 13) % 251);
    gl().TexSubImage2D(gltest::GL_TEXTURE_2D, 0, 0, 0, w, h, gltest::GL_RGBA, gltest::GL_UNSIGNED_BYTE, up.data());
    gl().BindTexture(gltest::GL_TEXTURE_2D, 0);
    gl().Finish();
    ASSERT_EQ(gl().GetError(), gltest::GL_NO_ERROR);
    CUCORE_ASSERT_OK(cucore_graphics_resource_retain(res.get()));
    cucore::GraphicsResource cpp = cucore::GraphicsResource::adopt(res.get());
    cucore::Stream stream = cucore::Device::get(0).create_stream();
    std::vector<std::uint8_t> out(bytes, 0);
    {
        cucore::OpaqueArray arr = cpp.map_array(stream, 0, 0, cucore::GraphicsMapHint::read_only);
        EXPECT_EQ(arr.info().width, static_cast<std::uint64_t>(w));
        arr.copy_to(out, stream);
        stream.synchronize();
    }
    EXPECT_FALSE(cpp.is_mapped());
    EXPECT_TRUE(out == up) << "CUDA did not read the texels GL uploaded";
    // A texture maps as an array, never as a pointer.
    cucore_buffer_t *b = nullptr;
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_map(res.get(), stream_.get(), 0, &b), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(b, nullptr);
    EXPECT_FALSE(last_message().empty());
    EXPECT_FALSE(mapped(res.get()));
}

// RGBA32F through a device buffer: GL uploads, copy to a buffer; a buffer copied in, GL reads.
TEST_F(GlTest, Rgba32fTextureBothWays) {
    constexpr int w = 64, h = 48;
    const std::size_t count = static_cast<std::size_t>(w) * h * 4, bytes = count * sizeof(float);
    std::vector<float> up(count);
    for (std::size_t i = 0; i < count; ++i) up[i] = static_cast<float>(i) * 0.25f - 100.0f;
    const gltest::GLuint tex = make_texture(gltest::GL_RGBA32F, gltest::GL_FLOAT, w, h, up.data());
    OwnedResource res = register_texture(tex);
    ASSERT_TRUE(res);
    {
        cucore_opaque_array_t *a = nullptr;
        CUCORE_ASSERT_OK(cucore_graphics_resource_map_array(res.get(), stream_.get(),
                                                            CUCORE_GRAPHICS_MAP_HINT_READ_ONLY, 0, 0, &a));
        OwnedArray arr(a);
        cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        CUCORE_ASSERT_OK(cucore_opaque_array_info(a, &info));
        EXPECT_EQ(info.format, CUCORE_ARRAY_FORMAT_FLOAT32);
        EXPECT_EQ(info.num_channels, 4u);
        EXPECT_EQ(info.element_size, 16u);
        EXPECT_EQ(info.width, static_cast<std::uint64_t>(w));
        EXPECT_EQ(info.height, static_cast<std::uint64_t>(h));
        cucore_buffer_t *sb = nullptr;
        CUCORE_ASSERT_OK(cucore_device_allocate(dev_, bytes, stream_.get(), &sb));
        Owned<cucore_buffer_t> staged(sb);
        CUCORE_ASSERT_OK(cucore_opaque_array_copy_to_buffer(a, sb, stream_.get()));
        std::vector<float> got(count, 0.0f);
        CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(sb, 0, got.data(), bytes, stream_.get()));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
        EXPECT_TRUE(got == up) << "CUDA did not read the floats GL uploaded";
    }
    // Now the other way: a device buffer of new values copied into the array.
    std::vector<float> in(count);
    for (std::size_t i = 0; i < count; ++i) in[i] = 1.0f / static_cast<float>(i + 1);
    {
        cucore_opaque_array_t *a = nullptr;
        CUCORE_ASSERT_OK(cucore_graphics_resource_map_array(res.get(), stream_.get(),
                                                            CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD, 0, 0, &a));
        OwnedArray arr(a);
        cucore_buffer_t *sb = nullptr;
        CUCORE_ASSERT_OK(cucore_device_allocate(dev_, bytes, stream_.get(), &sb));
        Owned<cucore_buffer_t> staged(sb);
        CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(sb, 0, in.data(), bytes, stream_.get()));
        CUCORE_ASSERT_OK(cucore_opaque_array_copy_from_buffer(a, sb, stream_.get()));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    }
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    std::vector<float> back(count, 0.0f);
    gl().BindTexture(gltest::GL_TEXTURE_2D, tex);
    gl().GetTexImage(gltest::GL_TEXTURE_2D, 0, gltest::GL_RGBA, gltest::GL_FLOAT, back.data());
    gl().BindTexture(gltest::GL_TEXTURE_2D, 0);
    EXPECT_EQ(gl().GetError(), gltest::GL_NO_ERROR);
    EXPECT_TRUE(back == in) << "GL did not read back the floats CUDA wrote";
}

// A GL texture mapped as an array is an array like any other: a texture object
// over it is sampled by a kernel (RGBA8 read as normalized floats), and it holds
// the mapping, so the resource stays mapped until the texture object goes too.
// After an explicit unmap the array refuses every call.
TEST_F(GlTest, GlTextureSampledThroughATextureObject) {
    compile_kernels();
    if (IsSkipped() || HasFatalFailure()) return;
    constexpr int w = 64, h = 32;
    std::vector<std::uint8_t> texels(static_cast<std::size_t>(w) * h * 4);
    for (std::size_t i = 0; i < texels.size(); ++i) texels[i] = static_cast<std::uint8_t>((i * 37 + (i >> 8)) & 0xFF);
    const gltest::GLuint tex = make_texture(gltest::GL_RGBA8, gltest::GL_UNSIGNED_BYTE, w, h, texels.data());
    OwnedResource res = register_texture(tex, CUCORE_GRAPHICS_REGISTER_READ_ONLY);
    ASSERT_TRUE(res);
    std::vector<F2> at;
    std::vector<std::size_t> texel_of;
    for (int y : {0, 1, 17, 31})
        for (int x : {0, 5, 40, 63}) {
            at.push_back({static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f});
            texel_of.push_back(static_cast<std::size_t>(y) * w + static_cast<std::size_t>(x));
        }
    auto check = [&](const std::vector<F4> &got, const char *what) {
        ASSERT_EQ(got.size(), at.size()) << what;
        for (std::size_t i = 0; i < at.size(); ++i) {
            const float *c = &got[i].x;
            for (std::size_t ch = 0; ch < 4; ++ch)
                EXPECT_FLOAT_EQ(c[ch], static_cast<float>(texels[texel_of[i] * 4 + ch] / 255.0))
                    << what << ": texel (" << at[i].x << ", " << at[i].y << ") channel " << ch;
        }
    };
    cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    {
        cucore_opaque_array_t *a = nullptr;
        CUCORE_ASSERT_OK(
            cucore_graphics_resource_map_array(res.get(), stream_.get(), CUCORE_GRAPHICS_MAP_HINT_READ_ONLY, 0, 0, &a));
        OwnedArray arr(a);
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
        r.array = a;
        cucore_texture_object_t *t = nullptr;
        CUCORE_ASSERT_OK(cucore_texture_object_create(nullptr, &r, &o, &t));
        OwnedTexture texture(t);
        arr.reset(); // the texture object holds the mapping now
        EXPECT_TRUE(mapped(res.get()));
        std::uint64_t handle = 0;
        CUCORE_ASSERT_OK(cucore_texture_object_handle(t, &handle));
        check(sample(handle, at), "C ABI");
        texture.reset(); // the last holder of the mapping: unmaps
        EXPECT_FALSE(mapped(res.get()));
    }
    // The façade, and an explicit unmap under a live array.
    CUCORE_ASSERT_OK(cucore_graphics_resource_retain(res.get()));
    const cucore::GraphicsResource cpp = cucore::GraphicsResource::adopt(res.get());
    const cucore::Device dev = cucore::Device::get(0);
    cucore::Stream stream = cucore::Stream::borrow(stream_.get());
    {
        const cucore::OpaqueArray arr = cpp.map_array(stream, 0, 0, cucore::GraphicsMapHint::read_only);
        EXPECT_EQ(arr.format(), CUCORE_ARRAY_FORMAT_UINT8);
        EXPECT_EQ(arr.num_channels(), 4u);
        cucore::TextureObjectOptions to;
        to.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
        const cucore::TextureObject texture =
            dev.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(arr), to);
        check(sample(texture.handle(), at), "C++");
        stream.synchronize();
        cpp.unmap();
        EXPECT_FALSE(cpp.is_mapped());
        CUCORE_EXPECT_THROW_STATUS(arr.info(), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_THROW_STATUS(arr.handle(), CUCORE_ERROR_INVALID_STATE);
        std::vector<std::uint8_t> out(texels.size());
        CUCORE_EXPECT_THROW_STATUS(arr.copy_to(out, stream), CUCORE_ERROR_INVALID_STATE);
        CUCORE_EXPECT_THROW_STATUS(dev.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(arr), to),
                                   CUCORE_ERROR_INVALID_STATE);
    } // releasing the array and the texture object after the unmap unmaps nothing more
    EXPECT_FALSE(cpp.is_mapped());
    // The whole image as a mipmapped array of one level.
    {
        const cucore::MipmappedArray m = cpp.map_mipmapped_array(stream, cucore::GraphicsMapHint::read_only);
        EXPECT_TRUE(cpp.is_mapped());
        EXPECT_EQ(m.num_levels(), 1u);
        const cucore::OpaqueArray level = m.level(0);
        EXPECT_EQ(level.info().width, static_cast<std::uint64_t>(w));
        std::vector<std::uint8_t> out(texels.size());
        level.copy_to(out, stream);
        stream.synchronize();
        EXPECT_TRUE(out == texels) << "level 0 of the mapped mipmapped array";
    }
    EXPECT_FALSE(cpp.is_mapped());
    stream.synchronize();
}

// ---- Errors, each with its message ---------------------------------------------------

TEST_F(GlTest, ErrorsHaveMessages) {
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(1024, 0));
    OwnedResource res = register_buffer(vbo);
    ASSERT_TRUE(res);

    // Double map.
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_graphics_resource_map(res.get(), stream_.get(), 0, &b));
    Owned<cucore_buffer_t> buf(b);
    cucore_buffer_t *b2 = nullptr;
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_map(res.get(), stream_.get(), 0, &b2), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(b2, nullptr);
    EXPECT_TRUE(contains(last_message(), "already mapped")) << last_message();
    EXPECT_TRUE(mapped(res.get()));
    CUCORE_ASSERT_OK(cucore_graphics_resource_unmap(res.get(), nullptr));
    buf.reset();

    // Unmap when not mapped.
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_unmap(res.get(), nullptr), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(last_message(), "not mapped")) << last_message();

    // Unknown map hint, unknown registration flag, image-only flag on a buffer.
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_map(res.get(), stream_.get(), 7, &b2),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "hint")) << last_message();
    EXPECT_FALSE(mapped(res.get()));
    cucore_graphics_resource_t *r2 = nullptr;
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_from_gl_buffer(dev_, vbo, 0x100, &r2),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r2, nullptr);
    EXPECT_TRUE(contains(last_message(), "flags")) << last_message();
    CUCORE_EXPECT_STATUS(
        cucore_graphics_resource_from_gl_buffer(dev_, vbo, CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE, &r2),
        CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "flags")) << last_message();
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_from_gl_buffer(dev_, vbo, 0, nullptr),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(last_message().empty());

    // Bad GL name.
    const gltest::GLuint bad = 0x7fff0001u;
    const cucore_status_t s = cucore_graphics_resource_from_gl_buffer(dev_, bad, 0, &r2);
    EXPECT_NE(s, CUCORE_SUCCESS);
    EXPECT_EQ(r2, nullptr);
    EXPECT_TRUE(contains(last_message(), std::to_string(bad))) << last_message();
    EXPECT_TRUE(contains(last_message(), "cuGraphicsGLRegisterBuffer")) << last_message();

    // After close.
    CUCORE_ASSERT_OK(cucore_graphics_resource_close(res.get(), nullptr));
    CUCORE_ASSERT_OK(cucore_graphics_resource_close(res.get(), nullptr)); // idempotent
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_map(res.get(), stream_.get(), 0, &b2), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(last_message(), "closed")) << last_message();
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_unmap(res.get(), nullptr), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(last_message(), "closed")) << last_message();
    EXPECT_FALSE(mapped(res.get()));
    void *raw = reinterpret_cast<void *>(1);
    CUCORE_ASSERT_OK(cucore_graphics_resource_handle(res.get(), &raw));
    EXPECT_EQ(raw, nullptr);

    // A null handle.
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_map(nullptr, stream_.get(), 0, &b2), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_FALSE(last_message().empty());
}

TEST_F(GlTest, NoCurrentGlContextFails) {
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(256, 0));
    gl_->release_current();
    ASSERT_FALSE(gl_->is_current());
    // The driver's code for "no GL context" is not pinned down (gl_interop.md): the
    // status is CUDA and the message must say what to look at.
    std::uint32_t count = 0;
    CUCORE_EXPECT_STATUS(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, nullptr, 0, &count), CUCORE_ERROR_CUDA);
    std::printf("no GL context, cucore_gl_get_devices: %s\n", last_message().c_str());
    EXPECT_TRUE(contains(last_message(), "GL context")) << last_message();
    cucore_graphics_resource_t *r = nullptr;
    CUCORE_EXPECT_STATUS(cucore_graphics_resource_from_gl_buffer(dev_, vbo, 0, &r), CUCORE_ERROR_CUDA);
    EXPECT_EQ(r, nullptr);
    std::printf("no GL context, register: %s\n", last_message().c_str());
    EXPECT_TRUE(contains(last_message(), "cuGraphicsGLRegisterBuffer")) << last_message();
    EXPECT_TRUE(contains(last_message(), "GL context")) << last_message();
    if (r != nullptr) cucore_graphics_resource_release(r);
    ASSERT_TRUE(gl_->make_current());
}

// ---- Threads -------------------------------------------------------------------------

// A second thread with a context sharing the first's objects registers, maps and
// fills a buffer the first thread made; the first thread's GL reads the result.
TEST_F(GlTest, SecondThreadSharedContext) {
    constexpr unsigned n = 16384;
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(n, 0));
    const gltest::GLuint vbo2 = make_buffer(pattern(n, 99));
    // Registered here, mapped on the other thread.
    OwnedResource here = register_buffer(vbo2);
    ASSERT_TRUE(here);
    std::string failure;
    std::vector<std::uint32_t> seen;
    std::thread worker([&] {
        std::string reason;
        std::unique_ptr<gltest::EglContext> shared = gltest::EglContext::create(0, &reason, gl_.get());
        if (shared == nullptr) {
            failure = "no shared context: " + reason;
            return;
        }
        auto fail = [&](const char *what) { failure = std::string(what) + ": " + cucore_last_error_message(); };
        cucore_stream_t *st = nullptr;
        if (cucore_stream_create(dev_, nullptr, &st) != CUCORE_SUCCESS) return fail("stream");
        Owned<cucore_stream_t> stream(st);
        cucore_graphics_resource_t *r = nullptr;
        if (cucore_graphics_resource_from_gl_buffer(dev_, vbo, 0, &r) != CUCORE_SUCCESS) return fail("register");
        OwnedResource res(r);
        cucore_buffer_t *b = nullptr;
        if (cucore_graphics_resource_map(r, st, 0, &b) != CUCORE_SUCCESS) return fail("map");
        {
            Owned<cucore_buffer_t> buf(b);
            if (cucore_buffer_fill(b, 0xC0FFEEu, 4, st) != CUCORE_SUCCESS) return fail("fill");
        }
        if (cucore_graphics_resource_map(here.get(), st, 0, &b) != CUCORE_SUCCESS) return fail("map (other's)");
        {
            Owned<cucore_buffer_t> buf(b);
            seen.assign(n, 0);
            if (cucore_buffer_copy_to_host(b, 0, seen.data(), n * 4, st) != CUCORE_SUCCESS) return fail("copy");
            if (cucore_stream_synchronize(st) != CUCORE_SUCCESS) return fail("synchronize");
        }
        if (cucore_stream_synchronize(st) != CUCORE_SUCCESS) return fail("synchronize");
        if (cucore_graphics_resource_close(r, nullptr) != CUCORE_SUCCESS) return fail("close");
        shared->gl().Finish();
    });
    worker.join();
    if (contains(failure, "no shared context")) GTEST_SKIP() << failure;
    ASSERT_TRUE(failure.empty()) << failure;
    EXPECT_EQ(seen, pattern(n, 99));
    EXPECT_EQ(read_buffer(vbo, n), std::vector<std::uint32_t>(n, 0xC0FFEEu));
}

// ---- Leaks ----------------------------------------------------------------------------

TEST_F(GlTest, TenThousandMapUnmapCyclesLeakNothing) {
    const gltest::GLuint vbo = make_buffer(std::vector<std::uint32_t>(1024, 0));
    const gltest::GLuint tex = make_texture(gltest::GL_RGBA8, gltest::GL_UNSIGNED_BYTE, 16, 16, nullptr);
    OwnedResource res = register_buffer(vbo);
    OwnedResource image = register_texture(tex);
    ASSERT_TRUE(res);
    ASSERT_TRUE(image);
    const std::size_t buffers = gpu::live(CUCORE_OBJECT_BUFFER), resources = gpu::live(CUCORE_OBJECT_GRAPHICS_RESOURCE),
                      arrays = gpu::live(CUCORE_OBJECT_OPAQUE_ARRAY), all = gpu::live(CUCORE_OBJECT_ANY);
    constexpr int kCycles = 10000;
    for (int i = 0; i < kCycles; ++i) {
        cucore_buffer_t *b = nullptr;
        CUCORE_ASSERT_OK(cucore_graphics_resource_map(res.get(), stream_.get(), 0, &b));
        if (i % 2 == 0) {
            CUCORE_ASSERT_OK(cucore_buffer_release(b)); // unmaps with the last reference
        } else {
            CUCORE_ASSERT_OK(cucore_graphics_resource_unmap(res.get(), nullptr)); // explicit unmap, then release
            CUCORE_ASSERT_OK(cucore_buffer_release(b));
        }
    }
    for (int i = 0; i < kCycles / 10; ++i) {
        cucore_opaque_array_t *a = nullptr;
        CUCORE_ASSERT_OK(cucore_graphics_resource_map_array(image.get(), stream_.get(), 0, 0, 0, &a));
        CUCORE_ASSERT_OK(cucore_opaque_array_release(a));
    }
    CUCORE_ASSERT_OK(cucore_stream_synchronize(stream_.get()));
    EXPECT_FALSE(mapped(res.get()));
    EXPECT_FALSE(mapped(image.get()));
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_BUFFER), buffers);
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_GRAPHICS_RESOURCE), resources);
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_OPAQUE_ARRAY), arrays);
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_ANY), all);
    // Register + unregister cycles too.
    for (int i = 0; i < 1000; ++i) {
        cucore_graphics_resource_t *r = nullptr;
        CUCORE_ASSERT_OK(cucore_graphics_resource_from_gl_buffer(dev_, vbo, 0, &r));
        CUCORE_ASSERT_OK(cucore_graphics_resource_release(r));
    }
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_GRAPHICS_RESOURCE), resources);
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_ANY), all);
}

} // namespace
