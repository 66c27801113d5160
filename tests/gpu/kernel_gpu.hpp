// Helpers of the GPU tests of compile and launch (program, object_code, linker,
// program_cache, kernel and launch tests): owning wrappers for the C handles,
// a fixture that compiles CUDA C++ with NVRTC through libcucore for the arch of
// device 0, device arrays read and written through libcucore, and a launch
// helper that packs typed arguments into the C ABI's pointer/size arrays.
//
// The fixture skips (with the reason) where NVRTC is missing, as the GPU
// fixture does without a driver or device.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test.hpp"

namespace gpu {

// ---- Owning wrappers: a failed assertion never leaks a handle (the fixture's
// live-object check would then report the leak instead of the real failure).
template <typename T>
struct Releaser;
#define CUCORE_GPU_RELEASER(type, fn)                        \
    template <>                                              \
    struct Releaser<type> {                                  \
        void operator()(type *p) const { (void)fn(p); }      \
    };
CUCORE_GPU_RELEASER(cucore_program_t, cucore_program_release)
CUCORE_GPU_RELEASER(cucore_object_code_t, cucore_object_code_release)
CUCORE_GPU_RELEASER(cucore_linker_t, cucore_linker_release)
CUCORE_GPU_RELEASER(cucore_program_cache_t, cucore_program_cache_release)
CUCORE_GPU_RELEASER(cucore_kernel_t, cucore_kernel_release)
CUCORE_GPU_RELEASER(cucore_stream_t, cucore_stream_release)
CUCORE_GPU_RELEASER(cucore_buffer_t, cucore_buffer_release)
CUCORE_GPU_RELEASER(cucore_device_t, cucore_device_release)
#undef CUCORE_GPU_RELEASER

template <typename T>
using Owned = std::unique_ptr<T, Releaser<T>>;

// The library's last error message as a std::string (for substring checks).
inline std::string last_message() { return cucore_last_error_message(); }

inline bool contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

// The program's whole compile log.
inline std::string program_log(const cucore_program_t *program) {
    std::size_t n = 0;
    EXPECT_EQ(cucore_program_log(program, nullptr, 0, &n), CUCORE_SUCCESS) << cucore_last_error_message();
    std::string log(n + 1, '\0');
    EXPECT_EQ(cucore_program_log(program, &log[0], log.size(), &n), CUCORE_SUCCESS) << cucore_last_error_message();
    log.resize(n);
    return log;
}

// The bytes of an object code.
inline std::string code_bytes(const cucore_object_code_t *code) {
    const void *data = nullptr;
    std::size_t size = 0;
    EXPECT_EQ(cucore_object_code_data(code, &data, &size), CUCORE_SUCCESS) << cucore_last_error_message();
    return data != nullptr ? std::string(static_cast<const char *>(data), size) : std::string();
}

// A temporary directory, removed with its contents at scope exit.
class TempDir {
public:
    TempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/cucore-gpu-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
        EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
    }
    ~TempDir() {
        if (!path_.empty()) (void)std::system(("rm -rf '" + path_ + "'").c_str());
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }

private:
    std::string path_;
};

// Launch configuration with grid, block (x only or 3-D) and dynamic shared memory.
inline cucore_launch_config_t config(std::uint32_t grid, std::uint32_t block, std::uint32_t shared = 0) {
    cucore_launch_config_t c = CUCORE_LAUNCH_CONFIG_INIT;
    c.grid[0] = grid;
    c.block[0] = block;
    c.shared_memory_bytes = shared;
    return c;
}

// Packs typed arguments (each by its address and sizeof) and launches through the C ABI.
template <typename... Args>
cucore_status_t launch(cucore_stream_t *stream, const cucore_launch_config_t &cfg, cucore_kernel_t *kernel,
                       const Args &...args) {
    static_assert((std::is_trivially_copyable_v<Args> && ...), "kernel arguments are copied bytewise");
    if constexpr (sizeof...(Args) == 0) {
        return cucore_launch(stream, &cfg, kernel, nullptr, nullptr, 0);
    } else {
        const void *ptrs[] = {static_cast<const void *>(&args)...};
        const std::size_t sizes[] = {sizeof(Args)...};
        return cucore_launch(stream, &cfg, kernel, ptrs, sizes, sizeof...(Args));
    }
}

// A device array of T on device 0, ordered on the fixture's stream.
template <typename T>
class DeviceArray {
public:
    DeviceArray(cucore_device_t *dev, cucore_stream_t *stream, std::size_t n) : stream_(stream), n_(n) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(dev, n * sizeof(T), stream, &b), CUCORE_SUCCESS) << cucore_last_error_message();
        buffer_.reset(b);
    }
    DeviceArray(cucore_device_t *dev, cucore_stream_t *stream, const std::vector<T> &init)
        : DeviceArray(dev, stream, init.size()) {
        upload(init);
    }
    void upload(const std::vector<T> &v) {
        EXPECT_EQ(v.size(), n_);
        EXPECT_EQ(cucore_buffer_copy_from_host(buffer_.get(), 0, v.data(), v.size() * sizeof(T), stream_),
                  CUCORE_SUCCESS)
            << cucore_last_error_message();
    }
    void fill_zero() {
        EXPECT_EQ(cucore_buffer_fill(buffer_.get(), 0, 1, stream_), CUCORE_SUCCESS) << cucore_last_error_message();
    }
    // Waits for the stream, then copies the whole array back.
    std::vector<T> download() const {
        std::vector<T> v(n_);
        EXPECT_EQ(cucore_stream_synchronize(stream_), CUCORE_SUCCESS) << cucore_last_error_message();
        EXPECT_EQ(cucore_buffer_copy_to_host(buffer_.get(), 0, v.data(), n_ * sizeof(T), stream_), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(stream_), CUCORE_SUCCESS) << cucore_last_error_message();
        return v;
    }
    // The device address, as a kernel's pointer argument.
    void *ptr() const {
        std::uint64_t a = 0;
        EXPECT_EQ(cucore_buffer_address(buffer_.get(), &a), CUCORE_SUCCESS) << cucore_last_error_message();
        return reinterpret_cast<void *>(static_cast<std::uintptr_t>(a));
    }
    std::size_t size() const { return n_; }

private:
    cucore_stream_t *stream_;
    std::size_t n_;
    Owned<cucore_buffer_t> buffer_;
};

// Kernels shared by several test files.
inline const char *const kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
)";

// The fixture of the compile and launch tests: device 0, its arch ("sm_XY"), a
// stream on it, and NVRTC (skips without it).
class CompileTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        const cucore_status_t s = cucore_compiler_version(CUCORE_BACKEND_NVRTC, &nvrtc_version_);
        if (s == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "NVRTC is not installed: " << cucore_last_error_message();
        ASSERT_EQ(s, CUCORE_SUCCESS) << cucore_last_error_message();
        CUCORE_ASSERT_OK(cucore_device_compute_capability(dev_, &cc_major_, &cc_minor_));
        arch_ = "sm_" + std::to_string(cc_major_ * 10 + cc_minor_);
        cucore_stream_t *s0 = nullptr;
        CUCORE_ASSERT_OK(cucore_stream_create(dev_, nullptr, &s0));
        stream_.reset(s0);
    }
    void TearDown() override {
        if (stream_) (void)cucore_stream_synchronize(stream_.get());
        stream_.reset();
        GpuTest::TearDown();
    }

    // Options for the device's arch, C++17.
    cucore_program_options_t options() const {
        cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
        o.arch = arch_.c_str();
        o.std = "c++17";
        return o;
    }

    Owned<cucore_program_t> program(const std::string &source, const cucore_program_options_t *o = nullptr,
                                    cucore_code_type_t type = CUCORE_CODE_CXX) {
        cucore_program_options_t def = options();
        if (type != CUCORE_CODE_CXX) def.std = nullptr;  // a C++ option: refused for PTX and NVVM
        cucore_program_t *p = nullptr;
        EXPECT_EQ(cucore_program_create(source.c_str(), 0, type, o != nullptr ? o : &def, &p), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return Owned<cucore_program_t>(p);
    }

    // Compiles `source` to `target`; a failure is a test failure with the log.
    Owned<cucore_object_code_t> compile(const std::string &source, cucore_code_type_t target = CUCORE_CODE_CUBIN,
                                        const std::vector<const char *> &expressions = {},
                                        const cucore_program_options_t *o = nullptr,
                                        cucore_program_cache_t *cache = nullptr) {
        Owned<cucore_program_t> p = program(source, o);
        if (!p) return nullptr;
        cucore_object_code_t *code = nullptr;
        const cucore_status_t s = cucore_program_compile(p.get(), target, expressions.data(), expressions.size(),
                                                         cache, &code);
        EXPECT_EQ(s, CUCORE_SUCCESS) << cucore_last_error_message() << "\nlog:\n" << program_log(p.get());
        return Owned<cucore_object_code_t>(code);
    }

    Owned<cucore_kernel_t> kernel(cucore_object_code_t *code, const char *name) {
        cucore_kernel_t *k = nullptr;
        if (code == nullptr) return nullptr;
        EXPECT_EQ(cucore_object_code_get_kernel(code, name, &k), CUCORE_SUCCESS) << cucore_last_error_message();
        return Owned<cucore_kernel_t>(k);
    }

    template <typename T>
    DeviceArray<T> array(std::size_t n) {
        return DeviceArray<T>(dev_, stream_.get(), n);
    }
    template <typename T>
    DeviceArray<T> array(const std::vector<T> &init) {
        return DeviceArray<T>(dev_, stream_.get(), init);
    }

    // Runs saxpy from `code` on n elements and checks the result against the host.
    void check_saxpy(cucore_object_code_t *code, const char *name = "saxpy", unsigned n = 1000) {
        Owned<cucore_kernel_t> k = kernel(code, name);
        ASSERT_TRUE(k);
        std::vector<float> x(n), y(n);
        for (unsigned i = 0; i < n; ++i) {
            x[i] = static_cast<float>(i) * 0.5f;
            y[i] = 100.0f - static_cast<float>(i);
        }
        auto dx = array(x), dy = array(y);
        auto dout = array<float>(n);
        const float a = 3.0f;
        CUCORE_ASSERT_OK(launch(stream_.get(), config((n + 127) / 128, 128), k.get(), a,
                                static_cast<const float *>(dx.ptr()), static_cast<const float *>(dy.ptr()),
                                static_cast<float *>(dout.ptr()), n));
        const std::vector<float> out = dout.download();
        for (unsigned i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], a * x[i] + y[i]) << "element " << i;
    }

    int nvrtc_version_ = 0;
    int cc_major_ = 0, cc_minor_ = 0;
    std::string arch_;
    Owned<cucore_stream_t> stream_;
};

} // namespace gpu
