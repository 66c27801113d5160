// compile_and_launch (C++ façade, cucore.hpp): a template kernel compiled at
// run time with NVRTC, its instantiations found through name expressions, a
// struct passed by value, and the compiled code kept in an on-disk cache (a
// temporary directory) so that the second compile is a cache hit.
//
//   cucore::Program p = cucore::Program::create(source, CUCORE_CODE_CXX, options);
//   cucore::ObjectCode code = p.compile(CUCORE_CODE_CUBIN, {"affine<float>", "affine<int>"}, cache);
//   cucore::launch(stream, {grid, block}, code.get_kernel("affine<float>"), params, x, n);
//
// Without a GPU it compiles for sm_90 to PTX and prints the lowered names;
// without NVRTC it says so. Both exit 0.
#include <cucore.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char *const kSource = R"(
template <typename T> struct Affine { T scale; T offset; int stride; };
// x[i] = x[i] * p.scale + p.offset, for every p.stride-th element.
template <typename T>
__global__ void affine(Affine<T> p, T *x, unsigned n) {
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * p.stride;
    if (i < n) x[i] = x[i] * p.scale + p.offset;
}
)";

// The same layout as the kernel's Affine<T>, passed by value.
template <typename T>
struct Affine {
    T scale;
    T offset;
    int stride;
};

const std::vector<std::string> kExpressions = {"affine<float>", "affine<int>"};

// A temporary directory for the cache, removed at exit.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/cucore-example-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path = tmpl;
    }
    ~TempDir() {
        if (!path.empty()) (void)std::system(("rm -rf '" + path + "'").c_str());
    }
};

// Runs affine<T> on n elements and compares with the host.
template <typename T>
bool run(const cucore::Device &dev, const cucore::Stream &stream, const cucore::ObjectCode &code,
         const char *expression, Affine<T> params) {
    const unsigned n = 4096;
    std::vector<T> host(n), back(n);
    for (unsigned i = 0; i < n; ++i) host[i] = static_cast<T>(i % 100);
    const cucore::Buffer x = dev.allocate(n * sizeof(T), stream);
    x.copy_from_host(host, stream);
    const cucore::Kernel kernel = code.get_kernel(expression);
    const unsigned threads = (n + params.stride - 1) / params.stride;
    cucore::launch(stream, cucore::LaunchConfig((threads + 255) / 256, 256), kernel, params, x, n);
    x.copy_to_host(back, stream);
    stream.synchronize();
    for (unsigned i = 0; i < n; ++i) {
        const T want = i % params.stride == 0 ? host[i] * params.scale + params.offset : host[i];
        if (back[i] != want) {
            std::printf("%s WRONG at element %u\n", expression, i);
            return false;
        }
    }
    std::printf("%s OK (%u elements, every %d-th transformed, equal to the host's result)\n", expression, n,
                params.stride);
    return true;
}

// No GPU: compile for sm_90 to PTX and show the lowered names.
int compile_only() {
    cucore::ProgramOptions options;
    options.arch = "sm_90";
    options.std = "c++17";
    const cucore::Program program = cucore::Program::create(kSource, CUCORE_CODE_CXX, options);
    const cucore::ObjectCode ptx = program.compile(CUCORE_CODE_PTX, kExpressions);
    std::printf("Compiled affine<T> to PTX for sm_90: %zu bytes\n", ptx.size());
    for (const auto &[expression, lowered] : ptx.name_expressions())
        std::printf("  %-14s -> %s\n", expression.c_str(), lowered.c_str());
    std::printf("Run this on a machine with an NVIDIA GPU to launch it and check the result.\n");
    return 0;
}

} // namespace

int main() {
    std::printf("libcucore %s\n", cucore::version_string());
    try {
        int nvrtc = 0;
        try {
            nvrtc = cucore::compiler_version(CUCORE_BACKEND_NVRTC);
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
            std::printf("NVRTC is not installed, so nothing can be compiled here.\n  %s\n", e.what());
            return 0;
        }
        std::printf("NVRTC %d.%d\n", nvrtc / 1000, nvrtc % 1000 / 10);
        int count = 0;
        try {
            count = cucore::Device::count();
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NO_DRIVER) throw;
        }
        if (count == 0) {
            std::printf("No GPU here: compiling only.\n");
            return compile_only();
        }

        const cucore::Device dev(0);
        const cucore::Stream stream = dev.create_stream();
        const TempDir dir;
        const cucore::ProgramCache cache = cucore::ProgramCache::on_disk(dir.path);
        cucore::ProgramOptions options; // arch: device 0's
        options.std = "c++17";
        bool ok = true;
        // The first round compiles (a miss) and stores the cubin; the second
        // finds it on disk (a hit), with its name expressions.
        for (int round = 0; round < 2; ++round) {
            const cucore::Program program = cucore::Program::create(kSource, CUCORE_CODE_CXX, options);
            const cucore::ObjectCode code = program.compile(CUCORE_CODE_CUBIN, kExpressions, cache);
            const cucore::ProgramCacheStats s = cache.stats();
            std::printf("Round %d for %s: cache hits %llu, misses %llu\n", round + 1, program.arch().c_str(),
                        static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses));
            ok = run<float>(dev, stream, code, "affine<float>", {2.5f, -1.0f, 1}) && ok;
            ok = run<int>(dev, stream, code, "affine<int>", {-3, 7, 3}) && ok;
        }
        const cucore::ProgramCacheStats s = cache.stats();
        ok = ok && s.hits == 1 && s.misses == 1;
        std::printf(ok ? "compile and launch OK\n" : "compile and launch FAILED\n");
        return ok ? 0 : 1;
    } catch (const cucore::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
