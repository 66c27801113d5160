// The GL tests' environment: a headless EGL context on the CUDA device, its
// renderer and version, and the CUDA devices of that GL context as the raw
// driver reports them (cuGLGetDevices). Every test skips with the reason where
// there is no CUDA driver or no NVIDIA GL (this build machine, CI, Mesa).
#include <gtest/gtest.h>

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "egl_context.hpp"
#include "raw_driver.hpp"

namespace {

// cuGLGetDevices (CUDA 6.5 ABI, cuGLGetDevices_v2), resolved at run time: the
// toolkit's stub libcuda exports no GL entry points (gl_interop.md).
using GLGetDevicesFn = CUresult (*)(unsigned int *count, CUdevice *devices, unsigned int capacity,
                                    unsigned int device_list);
constexpr unsigned int CU_GL_DEVICE_LIST_ALL_ = 1; // CUGLDeviceList's CU_GL_DEVICE_LIST_ALL

GLGetDevicesFn gl_get_devices() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib == nullptr) return nullptr;
    using GetProc = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) return nullptr;
    void *fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc("cuGLGetDevices", &fn, 6050, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS)
        return nullptr;
    return reinterpret_cast<GLGetDevicesFn>(fn);
}

class EglProbe : public ::testing::Test {
protected:
    void SetUp() override {
        const raw::Driver &d = raw::driver();
        if (!d.available) GTEST_SKIP() << "no CUDA: " << d.reason;
        ASSERT_EQ(d.DeviceGet(&device_, 0), CUDA_SUCCESS);
        ASSERT_EQ(d.DevicePrimaryCtxRetain(&ctx_, device_), CUDA_SUCCESS);
        ASSERT_EQ(d.CtxSetCurrent(ctx_), CUDA_SUCCESS);
        std::string reason;
        gl_ = gltest::EglContext::create(0, &reason);
        if (gl_ == nullptr) GTEST_SKIP() << "no NVIDIA GL context on CUDA device 0: " << reason;
    }
    void TearDown() override {
        gl_.reset();
        if (ctx_ != nullptr) {
            raw::driver().CtxSetCurrent(nullptr);
            raw::driver().DevicePrimaryCtxRelease(device_);
        }
    }
    CUdevice device_ = 0;
    CUcontext ctx_ = nullptr;
    std::unique_ptr<gltest::EglContext> gl_;
};

TEST_F(EglProbe, ContextIsNvidiaDesktopGl) {
    const std::string renderer = gl_->renderer(), version = gl_->version();
    std::printf("GL_VENDOR   = %s\nGL_RENDERER = %s\nGL_VERSION  = %s\nsurface     = %s\n", gl_->vendor().c_str(),
                renderer.c_str(), version.c_str(), gl_->has_pbuffer() ? "pbuffer" : "none (surfaceless)");
    EXPECT_TRUE(gl_->is_current());
    EXPECT_EQ(gl_->cuda_ordinal(), 0);
    EXPECT_NE(gl_->vendor().find("NVIDIA"), std::string::npos);
    EXPECT_FALSE(renderer.empty());
    // Desktop GL 4.x ("4.6.0 NVIDIA ..."), not OpenGL ES ("OpenGL ES ...").
    ASSERT_FALSE(version.empty());
    EXPECT_GE(version[0], '4') << version;
    EXPECT_EQ(gl_->gl().GetError(), gltest::GL_NO_ERROR);
}

TEST_F(EglProbe, GlDevicesIncludeTheCudaDevice) {
    GLGetDevicesFn get = gl_get_devices();
    ASSERT_NE(get, nullptr) << "the driver has no cuGLGetDevices";
    unsigned int count = 0;
    CUdevice devices[8] = {};
    const CUresult r = get(&count, devices, 8, CU_GL_DEVICE_LIST_ALL_);
    ASSERT_EQ(r, CUDA_SUCCESS) << raw::error_name(r);
    ASSERT_GE(count, 1u);
    ASSERT_LE(count, 8u);
    std::printf("cuGLGetDevices: %u device(s), first %d\n", count, static_cast<int>(devices[0]));
    EXPECT_NE(std::find(devices, devices + count, device_), devices + count)
        << "the GL context's CUDA devices do not include CUDA device 0";
}

// The helper's GL entry points work: a buffer and an RGBA8 texture round trip
// through GL alone.
TEST_F(EglProbe, BufferAndTextureRoundTripInGl) {
    const gltest::GlFunctions &gl = gl_->gl();
    std::vector<std::uint32_t> words(1024);
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761u);
    gltest::GLuint vbo = 0;
    gl.GenBuffers(1, &vbo);
    ASSERT_NE(vbo, 0u);
    gl.BindBuffer(gltest::GL_ARRAY_BUFFER, vbo);
    gl.BufferData(gltest::GL_ARRAY_BUFFER, static_cast<gltest::GLsizeiptr>(words.size() * 4), words.data(),
                  gltest::GL_DYNAMIC_DRAW);
    std::vector<std::uint32_t> back(words.size(), 0);
    gl.GetBufferSubData(gltest::GL_ARRAY_BUFFER, 0, static_cast<gltest::GLsizeiptr>(back.size() * 4), back.data());
    EXPECT_EQ(back, words);
    gl.DeleteBuffers(1, &vbo);

    const int w = 16, h = 8;
    std::vector<std::uint8_t> texels(static_cast<std::size_t>(w * h * 4));
    for (std::size_t i = 0; i < texels.size(); ++i) texels[i] = static_cast<std::uint8_t>(i * 7 + 3);
    gltest::GLuint tex = 0;
    gl.GenTextures(1, &tex);
    gl.BindTexture(gltest::GL_TEXTURE_2D, tex);
    gl.PixelStorei(gltest::GL_UNPACK_ALIGNMENT, 1);
    gl.PixelStorei(gltest::GL_PACK_ALIGNMENT, 1);
    gl.TexImage2D(gltest::GL_TEXTURE_2D, 0, static_cast<gltest::GLint>(gltest::GL_RGBA8), w, h, 0, gltest::GL_RGBA,
                  gltest::GL_UNSIGNED_BYTE, texels.data());
    std::vector<std::uint8_t> texels_back(texels.size(), 0);
    gl.GetTexImage(gltest::GL_TEXTURE_2D, 0, gltest::GL_RGBA, gltest::GL_UNSIGNED_BYTE, texels_back.data());
    EXPECT_EQ(texels_back, texels);
    gl.DeleteTextures(1, &tex);
    EXPECT_EQ(gl.GetError(), gltest::GL_NO_ERROR);
}

// A context sharing objects with the first, current on another thread, sees
// the first context's buffer (the second-thread tests build on this).
TEST_F(EglProbe, SharedContextOnAnotherThread) {
    const gltest::GlFunctions &gl = gl_->gl();
    const std::uint32_t words[4] = {1, 2, 3, 0xDEADBEEF};
    gltest::GLuint vbo = 0;
    gl.GenBuffers(1, &vbo);
    gl.BindBuffer(gltest::GL_ARRAY_BUFFER, vbo);
    gl.BufferData(gltest::GL_ARRAY_BUFFER, sizeof words, words, gltest::GL_STATIC_DRAW);
    gl.Finish();
    std::string reason;
    std::uint32_t back[4] = {};
    bool made = false;
    std::thread([&] {
        std::unique_ptr<gltest::EglContext> second = gltest::EglContext::create(0, &reason, gl_.get());
        if (second == nullptr) return;
        made = second->is_current();
        second->gl().BindBuffer(gltest::GL_ARRAY_BUFFER, vbo);
        second->gl().GetBufferSubData(gltest::GL_ARRAY_BUFFER, 0, sizeof back, back);
    }).join();
    ASSERT_TRUE(made) << reason;
    EXPECT_TRUE(std::equal(std::begin(words), std::end(words), std::begin(back)));
    EXPECT_TRUE(gl_->is_current()); // the other thread's context did not take this thread's
    gl.DeleteBuffers(1, &vbo);
}

// The helper's failure path: an EGL device of a CUDA ordinal that cannot exist is
// never found, with a reason. Where no GL context can be made at all, it checks
// that reason too and then skips (so a machine without GL shows the GL suite as
// skipped, not passed).
TEST(EglContextHelper, ReasonWhenUnavailable) {
    std::string reason_far;
    EXPECT_EQ(gltest::EglContext::create(1 << 20, &reason_far), nullptr);
    EXPECT_FALSE(reason_far.empty());
    std::string reason;
    std::unique_ptr<gltest::EglContext> gl = gltest::EglContext::create(0, &reason);
    if (gl == nullptr) {
        EXPECT_FALSE(reason.empty());
        GTEST_SKIP() << "no NVIDIA GL context: " << reason;
    }
    EXPECT_TRUE(reason.empty());
    EXPECT_TRUE(gl->is_current());
    std::printf("an impossible CUDA ordinal: %s\n", reason_far.c_str());
    EXPECT_NE(reason_far.find("1048576"), std::string::npos) << "names the ordinal: " << reason_far;
}

} // namespace
