// See egl_context.hpp. The EGL sequence is that of gl_interop.md, step by step.
#include "egl_context.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <vector>

namespace gltest {
namespace {

// EGL types and constants (values from the Khronos registry).
using EGLBoolean = unsigned int;
using EGLint = std::int32_t;
using EGLenum = unsigned int;
using EGLAttrib = std::intptr_t;
using EGLDisplay = void *;
using EGLConfig = void *;
using EGLContext = void *;
using EGLSurface = void *;
using EGLDeviceEXT = void *;

constexpr EGLint EGL_SUCCESS = 0x3000;
constexpr EGLint EGL_NONE = 0x3038;
constexpr EGLint EGL_VENDOR = 0x3053;
constexpr EGLint EGL_VERSION = 0x3054;
constexpr EGLint EGL_EXTENSIONS = 0x3055;
constexpr EGLint EGL_SURFACE_TYPE = 0x3033;
constexpr EGLint EGL_PBUFFER_BIT = 0x0001;
constexpr EGLint EGL_RENDERABLE_TYPE = 0x3040;
constexpr EGLint EGL_OPENGL_BIT = 0x0008;
constexpr EGLint EGL_RED_SIZE = 0x3024;
constexpr EGLint EGL_GREEN_SIZE = 0x3023;
constexpr EGLint EGL_BLUE_SIZE = 0x3022;
constexpr EGLint EGL_ALPHA_SIZE = 0x3021;
constexpr EGLint EGL_WIDTH = 0x3057;
constexpr EGLint EGL_HEIGHT = 0x3056;
constexpr EGLenum EGL_OPENGL_API = 0x30A2;
constexpr EGLenum EGL_PLATFORM_DEVICE_EXT = 0x313F;
constexpr EGLint EGL_CUDA_DEVICE_NV = 0x323A;
constexpr EGLint EGL_DRM_DEVICE_FILE_EXT = 0x3233;
constexpr EGLBoolean EGL_TRUE = 1;

std::string hex(long value) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%lX", value);
    return text;
}

bool has_word(const char *list, const char *word) {
    if (list == nullptr) return false;
    const std::size_t n = std::strlen(word);
    for (const char *p = std::strstr(list, word); p != nullptr; p = std::strstr(p + 1, word)) {
        const bool starts = p == list || p[-1] == ' ';
        const bool ends = p[n] == '\0' || p[n] == ' ';
        if (starts && ends) return true;
    }
    return false;
}

} // namespace

struct EglContext::Egl {
    std::string error; // why EGL cannot be used; empty when every entry point below is there

    void *(*GetProcAddress)(const char *) = nullptr;
    EGLint (*GetError)() = nullptr;
    const char *(*QueryString)(EGLDisplay, EGLint) = nullptr;
    EGLBoolean (*Initialize)(EGLDisplay, EGLint *, EGLint *) = nullptr;
    EGLBoolean (*ChooseConfig)(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *) = nullptr;
    EGLSurface (*CreatePbufferSurface)(EGLDisplay, EGLConfig, const EGLint *) = nullptr;
    EGLBoolean (*DestroySurface)(EGLDisplay, EGLSurface) = nullptr;
    EGLBoolean (*BindAPI)(EGLenum) = nullptr;
    EGLContext (*CreateContext)(EGLDisplay, EGLConfig, EGLContext, const EGLint *) = nullptr;
    EGLBoolean (*DestroyContext)(EGLDisplay, EGLContext) = nullptr;
    EGLBoolean (*MakeCurrent)(EGLDisplay, EGLSurface, EGLSurface, EGLContext) = nullptr;
    EGLContext (*GetCurrentContext)() = nullptr;
    // EGL_EXT_device_enumeration / _query, EGL_EXT_platform_base
    EGLBoolean (*QueryDevicesEXT)(EGLint, EGLDeviceEXT *, EGLint *) = nullptr;
    EGLBoolean (*QueryDeviceAttribEXT)(EGLDeviceEXT, EGLint, EGLAttrib *) = nullptr;
    const char *(*QueryDeviceStringEXT)(EGLDeviceEXT, EGLint) = nullptr;
    EGLDisplay (*GetPlatformDisplayEXT)(EGLenum, void *, const EGLint *) = nullptr;

    // "EGL_BAD_xxx (0x300n)" for the last EGL error of this thread.
    std::string last_error() const {
        const EGLint e = GetError();
        static const char *const names[] = {"EGL_SUCCESS", "EGL_NOT_INITIALIZED", "EGL_BAD_ACCESS",
                                            "EGL_BAD_ALLOC", "EGL_BAD_ATTRIBUTE", "EGL_BAD_CONFIG",
                                            "EGL_BAD_CONTEXT", "EGL_BAD_CURRENT_SURFACE",
                                            "EGL_BAD_DISPLAY", "EGL_BAD_MATCH", "EGL_BAD_NATIVE_PIXMAP",
                                            "EGL_BAD_NATIVE_WINDOW", "EGL_BAD_PARAMETER",
                                            "EGL_BAD_SURFACE", "EGL_CONTEXT_LOST"};
        const int i = e - EGL_SUCCESS;
        return std::string(i >= 0 && i < 15 ? names[i] : "EGL error") + " (" + hex(e) + ")";
    }
};

namespace {

// The process's EGL, loaded once and never unloaded (vendor libraries do not
// like being unloaded while their threads or contexts live).
std::shared_ptr<const EglContext::Egl> load_egl() {
    static std::once_flag once;
    static std::shared_ptr<EglContext::Egl> egl;
    std::call_once(once, [] {
        egl = std::make_shared<EglContext::Egl>();
        void *lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            const char *why = dlerror();
            egl->error = std::string("libEGL.so.1 could not be loaded (") + (why != nullptr ? why : "?") +
                         "); a GPU server without the glvnd loader needs scripts/fetch_gl_libs.sh and "
                         "LD_LIBRARY_PATH=.gl/root/usr/lib/x86_64-linux-gnu (scripts/gpu_suite.sh, part gl)";
            return;
        }
        std::string missing;
        auto core = [&](auto &fn, const char *name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
            if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
        };
        core(egl->GetProcAddress, "eglGetProcAddress");
        core(egl->GetError, "eglGetError");
        core(egl->QueryString, "eglQueryString");
        core(egl->Initialize, "eglInitialize");
        core(egl->ChooseConfig, "eglChooseConfig");
        core(egl->CreatePbufferSurface, "eglCreatePbufferSurface");
        core(egl->DestroySurface, "eglDestroySurface");
        core(egl->BindAPI, "eglBindAPI");
        core(egl->CreateContext, "eglCreateContext");
        core(egl->DestroyContext, "eglDestroyContext");
        core(egl->MakeCurrent, "eglMakeCurrent");
        core(egl->GetCurrentContext, "eglGetCurrentContext");
        if (!missing.empty()) {
            egl->error = "libEGL.so.1 lacks " + missing;
            return;
        }
        auto ext = [&](auto &fn, const char *name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(egl->GetProcAddress(name));
            if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
        };
        ext(egl->QueryDevicesEXT, "eglQueryDevicesEXT");
        ext(egl->QueryDeviceAttribEXT, "eglQueryDeviceAttribEXT");
        ext(egl->QueryDeviceStringEXT, "eglQueryDeviceStringEXT");
        ext(egl->GetPlatformDisplayEXT, "eglGetPlatformDisplayEXT");
        if (!missing.empty()) {
            const char *exts = egl->QueryString(nullptr, EGL_EXTENSIONS);
            egl->error = "EGL has no device enumeration (missing " + missing + "; client extensions: " +
                         (exts != nullptr ? exts : "none") + ")";
        }
    });
    return egl;
}

// The hint for an EGL without NVIDIA's vendor library.
std::string vendor_hint() {
    std::string hint = "no NVIDIA EGL vendor for the glvnd loader (Mesa only, or the driver's vendor file is "
                       "not where the loader looks)";
    const char *set = std::getenv("__EGL_VENDOR_LIBRARY_FILENAMES");
    if (set != nullptr && *set != '\0') return hint + "; __EGL_VENDOR_LIBRARY_FILENAMES=" + set;
    const std::string file = nvidia_egl_vendor_file();
    if (!file.empty()) return hint + "; try __EGL_VENDOR_LIBRARY_FILENAMES=" + file;
    return hint + "; no 10_nvidia.json found on this machine";
}

} // namespace

std::string nvidia_egl_vendor_file() {
    static const char *const candidates[] = {
        "/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json", // driver mounted into a container
        "/usr/share/glvnd/egl_vendor.d/10_nvidia.json",
        "/etc/glvnd/egl_vendor.d/10_nvidia.json",
        "/usr/local/share/glvnd/egl_vendor.d/10_nvidia.json",
    };
    for (const char *path : candidates) {
        if (FILE *f = std::fopen(path, "r")) {
            std::fclose(f);
            return path;
        }
    }
    return {};
}

std::unique_ptr<EglContext> EglContext::create(int cuda_ordinal, std::string *reason, const EglContext *share) {
    std::string scratch;
    std::string &why = reason != nullptr ? *reason : scratch;
    why.clear();
    std::shared_ptr<const Egl> egl = load_egl();
    if (!egl->error.empty()) {
        why = egl->error;
        return nullptr;
    }
    if (share != nullptr && share->cuda_ordinal_ != cuda_ordinal) {
        why = "a shared context must be on the same device (" + std::to_string(share->cuda_ordinal_) + " vs " +
              std::to_string(cuda_ordinal) + ")";
        return nullptr;
    }

    std::unique_ptr<EglContext> self(new EglContext());
    self->egl_ = egl;
    self->cuda_ordinal_ = cuda_ordinal;

    EGLDisplay display = nullptr;
    if (share != nullptr) {
        display = share->display_;
    } else {
        // Step 2: the EGL device of this CUDA ordinal.
        EGLint count = 0;
        if (egl->QueryDevicesEXT(0, nullptr, &count) != EGL_TRUE) {
            why = "eglQueryDevicesEXT failed: " + egl->last_error() + "; " + vendor_hint();
            return nullptr;
        }
        std::vector<EGLDeviceEXT> devices(static_cast<std::size_t>(count > 0 ? count : 0));
        if (count > 0 && egl->QueryDevicesEXT(count, devices.data(), &count) != EGL_TRUE) {
            why = "eglQueryDevicesEXT failed: " + egl->last_error();
            return nullptr;
        }
        if (count <= 0) {
            why = "EGL lists no device; " + vendor_hint();
            return nullptr;
        }
        EGLDeviceEXT chosen = nullptr;
        std::ostringstream seen;
        for (EGLint i = 0; i < count; ++i) {
            const char *exts = egl->QueryDeviceStringEXT(devices[i], EGL_EXTENSIONS);
            const char *drm = has_word(exts, "EGL_EXT_device_drm")
                                  ? egl->QueryDeviceStringEXT(devices[i], EGL_DRM_DEVICE_FILE_EXT)
                                  : nullptr;
            seen << (i == 0 ? "" : "; ") << "EGL device " << i;
            if (drm != nullptr) seen << " (" << drm << ")";
            EGLAttrib cuda = -1;
            if (has_word(exts, "EGL_NV_device_cuda") &&
                egl->QueryDeviceAttribEXT(devices[i], EGL_CUDA_DEVICE_NV, &cuda) == EGL_TRUE) {
                seen << " is CUDA device " << cuda;
                if (cuda == cuda_ordinal && chosen == nullptr) chosen = devices[i];
            } else {
                seen << " is not a CUDA device (no EGL_NV_device_cuda)";
            }
        }
        if (chosen == nullptr) {
            why = "no EGL device is CUDA device " + std::to_string(cuda_ordinal) + " (" + seen.str() + "); " +
                  vendor_hint();
            return nullptr;
        }
        // Step 3: a display on it.
        display = egl->GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, chosen, nullptr);
        if (display == nullptr) {
            why = "eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT) failed: " + egl->last_error();
            return nullptr;
        }
        // A display is initialised once per process however often this runs,
        // and never terminated: other contexts of this helper may use it.
        EGLint major = 0, minor = 0;
        if (egl->Initialize(display, &major, &minor) != EGL_TRUE) {
            why = "eglInitialize failed: " + egl->last_error();
            return nullptr;
        }
    }
    self->display_ = display;

    // A config for desktop GL with a pbuffer; else any desktop GL config, used
    // surfaceless (the tests render into FBOs when they render at all).
    const EGLint pbuffer_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                      EGL_RED_SIZE,     8,               EGL_GREEN_SIZE,      8,
                                      EGL_BLUE_SIZE,    8,               EGL_ALPHA_SIZE,      8,
                                      EGL_NONE};
    const EGLint any_attribs[] = {EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    bool pbuffer = egl->ChooseConfig(display, pbuffer_attribs, &config, 1, &configs) == EGL_TRUE && configs > 0;
    if (!pbuffer) {
        const char *exts = egl->QueryString(display, EGL_EXTENSIONS);
        if (!has_word(exts, "EGL_KHR_surfaceless_context") ||
            egl->ChooseConfig(display, any_attribs, &config, 1, &configs) != EGL_TRUE || configs == 0) {
            const char *vendor = egl->QueryString(display, EGL_VENDOR);
            why = std::string("the EGL display (vendor ") + (vendor != nullptr ? vendor : "?") +
                  ") has no desktop OpenGL config with a pbuffer, nor a surfaceless one";
            return nullptr;
        }
    }
    if (pbuffer) {
        const EGLint surface_attribs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
        self->surface_ = egl->CreatePbufferSurface(display, config, surface_attribs);
        if (self->surface_ == nullptr) {
            why = "eglCreatePbufferSurface failed: " + egl->last_error();
            return nullptr;
        }
    }
    // eglBindAPI is per thread and the default is OpenGL ES.
    if (egl->BindAPI(EGL_OPENGL_API) != EGL_TRUE) {
        why = "eglBindAPI(EGL_OPENGL_API) failed: " + egl->last_error() + " (the EGL has no desktop OpenGL)";
        return nullptr;
    }
    const EGLint context_attribs[] = {EGL_NONE};
    self->context_ = egl->CreateContext(display, config, share != nullptr ? share->context_ : nullptr,
                                        context_attribs);
    if (self->context_ == nullptr) {
        why = "eglCreateContext failed: " + egl->last_error();
        return nullptr;
    }
    if (!self->make_current(&why)) return nullptr;

    // Step 4: GL through eglGetProcAddress.
    std::string missing;
    auto gl = [&](auto &fn, const char *name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(egl->GetProcAddress(name));
        if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    GlFunctions &f = self->gl_;
    gl(f.GetString, "glGetString");
    gl(f.GetError, "glGetError");
    gl(f.Finish, "glFinish");
    gl(f.Flush, "glFlush");
    gl(f.PixelStorei, "glPixelStorei");
    gl(f.GenBuffers, "glGenBuffers");
    gl(f.DeleteBuffers, "glDeleteBuffers");
    gl(f.BindBuffer, "glBindBuffer");
    gl(f.BufferData, "glBufferData");
    gl(f.BufferSubData, "glBufferSubData");
    gl(f.GetBufferSubData, "glGetBufferSubData");
    gl(f.GenTextures, "glGenTextures");
    gl(f.DeleteTextures, "glDeleteTextures");
    gl(f.BindTexture, "glBindTexture");
    gl(f.TexParameteri, "glTexParameteri");
    gl(f.TexImage2D, "glTexImage2D");
    gl(f.TexSubImage2D, "glTexSubImage2D");
    gl(f.GetTexImage, "glGetTexImage");
    gl(f.GenRenderbuffers, "glGenRenderbuffers");
    gl(f.DeleteRenderbuffers, "glDeleteRenderbuffers");
    gl(f.BindRenderbuffer, "glBindRenderbuffer");
    gl(f.RenderbufferStorage, "glRenderbufferStorage");
    if (!missing.empty()) {
        why = "eglGetProcAddress finds no " + missing;
        return nullptr;
    }
    const std::string vendor = self->vendor();
    if (vendor.find("NVIDIA") == std::string::npos) {
        why = "the GL context is not NVIDIA's (GL_VENDOR \"" + vendor + "\", GL_RENDERER \"" + self->renderer() +
              "\"): CUDA cannot register its objects";
        return nullptr;
    }
    return self;
}

EglContext::~EglContext() {
    if (context_ == nullptr) {
        if (surface_ != nullptr) egl_->DestroySurface(display_, surface_);
        return;
    }
    if (is_current()) release_current();
    egl_->DestroyContext(display_, context_);
    if (surface_ != nullptr) egl_->DestroySurface(display_, surface_);
}

bool EglContext::make_current(std::string *reason) const {
    if (egl_->BindAPI(EGL_OPENGL_API) != EGL_TRUE) {
        if (reason != nullptr) *reason = "eglBindAPI(EGL_OPENGL_API) failed: " + egl_->last_error();
        return false;
    }
    if (egl_->MakeCurrent(display_, surface_, surface_, context_) != EGL_TRUE) {
        if (reason != nullptr) {
            *reason = "eglMakeCurrent failed: " + egl_->last_error() +
                      " (a context is current on one thread at a time)";
        }
        return false;
    }
    return true;
}

void EglContext::release_current() const {
    egl_->BindAPI(EGL_OPENGL_API);
    egl_->MakeCurrent(display_, nullptr, nullptr, nullptr);
}

bool EglContext::is_current() const {
    return context_ != nullptr && egl_->GetCurrentContext() == context_;
}

void *EglContext::proc(const char *name) const { return egl_->GetProcAddress(name); }

namespace {
std::string gl_string(const GlFunctions &gl, GLenum name) {
    const unsigned char *s = gl.GetString != nullptr ? gl.GetString(name) : nullptr;
    return s != nullptr ? reinterpret_cast<const char *>(s) : std::string();
}
} // namespace

std::string EglContext::vendor() const { return gl_string(gl_, GL_VENDOR); }
std::string EglContext::renderer() const { return gl_string(gl_, GL_RENDERER); }
std::string EglContext::version() const { return gl_string(gl_, GL_VERSION); }

} // namespace gltest
