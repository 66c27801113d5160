// A headless OpenGL context on a given CUDA device, for the GL tests.
//
// Made the way docs/testing.md ("GL tests: a headless OpenGL context on the CUDA
// device") describes: libEGL.so.1 is dlopened (nothing links EGL or GL), the EGL device
// whose EGL_CUDA_DEVICE_NV equals the CUDA ordinal is picked (EGL's order is
// not CUDA's), a display on it is initialised, and a desktop OpenGL context is
// made current with a small pbuffer (or with no surface where the display has
// only EGL_KHR_surfaceless_context). GL entry points come from
// eglGetProcAddress, so no EGL or GL header is needed: the few constants the
// tests use are defined below.
//
// Where this cannot work (no libEGL.so.1, Mesa only, no NVIDIA EGL vendor for
// the glvnd loader, no EGL device of that CUDA ordinal) create() returns null
// with the reason, for GTEST_SKIP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gltest {

// GL types and constants (values from the Khronos registry).
using GLenum = unsigned int;
using GLuint = unsigned int;
using GLint = int;
using GLsizei = int;
using GLboolean = unsigned char;
using GLbitfield = unsigned int;
using GLfloat = float;
using GLintptr = std::ptrdiff_t;
using GLsizeiptr = std::ptrdiff_t;

constexpr GLenum GL_NO_ERROR = 0;
constexpr GLenum GL_VENDOR = 0x1F00;
constexpr GLenum GL_RENDERER = 0x1F01;
constexpr GLenum GL_VERSION = 0x1F02;
constexpr GLenum GL_ARRAY_BUFFER = 0x8892;
constexpr GLenum GL_PIXEL_UNPACK_BUFFER = 0x88EC;
constexpr GLenum GL_STATIC_DRAW = 0x88E4;
constexpr GLenum GL_DYNAMIC_DRAW = 0x88E8;
constexpr GLenum GL_TEXTURE_2D = 0x0DE1;
constexpr GLenum GL_RENDERBUFFER = 0x8D41;
constexpr GLenum GL_RGBA = 0x1908;
constexpr GLenum GL_RGB = 0x1907;
constexpr GLenum GL_RGBA8 = 0x8058;
constexpr GLenum GL_RGB8 = 0x8051;
constexpr GLenum GL_RGBA32F = 0x8814;
constexpr GLenum GL_UNSIGNED_BYTE = 0x1401;
constexpr GLenum GL_FLOAT = 0x1406;
constexpr GLenum GL_TEXTURE_MIN_FILTER = 0x2801;
constexpr GLenum GL_TEXTURE_MAG_FILTER = 0x2800;
constexpr GLenum GL_TEXTURE_MAX_LEVEL = 0x813D;
constexpr GLenum GL_NEAREST = 0x2600;
constexpr GLenum GL_PACK_ALIGNMENT = 0x0D05;
constexpr GLenum GL_UNPACK_ALIGNMENT = 0x0CF5;

// The GL entry points the tests use, resolved with eglGetProcAddress. Every one
// is non-null in a context that create() returned.
struct GlFunctions {
    const unsigned char *(*GetString)(GLenum name) = nullptr;
    GLenum (*GetError)() = nullptr;
    void (*Finish)() = nullptr;
    void (*Flush)() = nullptr;
    void (*PixelStorei)(GLenum pname, GLint param) = nullptr;
    void (*GenBuffers)(GLsizei n, GLuint *buffers) = nullptr;
    void (*DeleteBuffers)(GLsizei n, const GLuint *buffers) = nullptr;
    void (*BindBuffer)(GLenum target, GLuint buffer) = nullptr;
    void (*BufferData)(GLenum target, GLsizeiptr size, const void *data, GLenum usage) = nullptr;
    void (*BufferSubData)(GLenum target, GLintptr offset, GLsizeiptr size, const void *data) = nullptr;
    void (*GetBufferSubData)(GLenum target, GLintptr offset, GLsizeiptr size, void *data) = nullptr;
    void (*GenTextures)(GLsizei n, GLuint *textures) = nullptr;
    void (*DeleteTextures)(GLsizei n, const GLuint *textures) = nullptr;
    void (*BindTexture)(GLenum target, GLuint texture) = nullptr;
    void (*TexParameteri)(GLenum target, GLenum pname, GLint param) = nullptr;
    void (*TexImage2D)(GLenum target, GLint level, GLint internalformat, GLsizei width, GLsizei height,
                       GLint border, GLenum format, GLenum type, const void *pixels) = nullptr;
    void (*TexSubImage2D)(GLenum target, GLint level, GLint xoffset, GLint yoffset, GLsizei width,
                          GLsizei height, GLenum format, GLenum type, const void *pixels) = nullptr;
    void (*GetTexImage)(GLenum target, GLint level, GLenum format, GLenum type, void *pixels) = nullptr;
    void (*GenRenderbuffers)(GLsizei n, GLuint *renderbuffers) = nullptr;
    void (*DeleteRenderbuffers)(GLsizei n, const GLuint *renderbuffers) = nullptr;
    void (*BindRenderbuffer)(GLenum target, GLuint renderbuffer) = nullptr;
    void (*RenderbufferStorage)(GLenum target, GLenum internalformat, GLsizei width, GLsizei height) = nullptr;
};

class EglContext {
public:
    // A desktop GL context on the EGL device of CUDA device `cuda_ordinal`,
    // current on the calling thread; null with `*reason` set when there is none.
    // `share` (optional) shares its objects (buffers, textures) with the new
    // context, for a second thread.
    static std::unique_ptr<EglContext> create(int cuda_ordinal, std::string *reason,
                                              const EglContext *share = nullptr);
    ~EglContext(); // releases it from the calling thread if current there, then destroys it

    EglContext(const EglContext &) = delete;
    EglContext &operator=(const EglContext &) = delete;

    // Makes the context current on the calling thread (binding the desktop GL
    // API, which EGL keeps per thread); false with `*reason` on failure.
    bool make_current(std::string *reason = nullptr) const;
    // Leaves the calling thread with no current context.
    void release_current() const;
    bool is_current() const;

    const GlFunctions &gl() const { return gl_; }
    // Any other GL or EGL entry point by name (eglGetProcAddress), or null.
    void *proc(const char *name) const;

    std::string vendor() const;   // GL_VENDOR
    std::string renderer() const; // GL_RENDERER
    std::string version() const;  // GL_VERSION
    int cuda_ordinal() const { return cuda_ordinal_; }
    bool has_pbuffer() const { return surface_ != nullptr; }

    // Raw EGL handles (EGLDisplay, EGLContext, EGLSurface or null).
    void *display() const { return display_; }
    void *context() const { return context_; }
    void *surface() const { return surface_; }

    struct Egl; // the EGL entry points (egl_context.cpp)

private:
    EglContext() = default;

    std::shared_ptr<const Egl> egl_;
    void *display_ = nullptr;
    void *context_ = nullptr;
    void *surface_ = nullptr;
    int cuda_ordinal_ = -1;
    GlFunctions gl_;
};

// Where the EGL vendor of NVIDIA's driver is missing, the reason create() gives
// names __EGL_VENDOR_LIBRARY_FILENAMES and the vendor file found on this
// machine, if any (the driver's 10_nvidia.json).
std::string nvidia_egl_vendor_file();

} // namespace gltest
