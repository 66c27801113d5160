// Object code: from a cubin file on disk and from PTX in memory, kernels by
// name, module globals (__device__ and __constant__) read and written and seen
// by a kernel, compared with the raw driver's view of the same library.
#include <fstream>

#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::config;
using gpu::contains;
using gpu::cu;
using gpu::Owned;

class ObjectCodeTest : public CompileTest {};

TEST_F(ObjectCodeTest, FromACubinFileOnDisk) {
    Owned<cucore_object_code_t> compiled = compile(gpu::kSaxpySource);
    ASSERT_TRUE(compiled);
    const std::string bytes = gpu::code_bytes(compiled.get());
    gpu::TempDir dir;
    const std::string path = dir.path() + "/saxpy.cubin";
    {
        std::ofstream f(path, std::ios::binary);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        ASSERT_TRUE(f.good());
    }
    cucore_object_code_t *raw_code = nullptr;
    CUCORE_ASSERT_OK(cucore_object_code_create_from_file(path.c_str(), CUCORE_CODE_CUBIN, nullptr, &raw_code));
    Owned<cucore_object_code_t> code(raw_code);
    EXPECT_EQ(gpu::code_bytes(code.get()), bytes);
    const char *name = nullptr;
    CUCORE_ASSERT_OK(cucore_object_code_name(code.get(), &name));
    EXPECT_EQ(std::string(name), path); // NULL name: the path
    CUCORE_ASSERT_OK(cucore_object_code_load(code.get()));
    CUCORE_ASSERT_OK(cucore_object_code_load(code.get())); // twice: a no-op
    size_t kernels = 0;
    CUCORE_ASSERT_OK(cucore_object_code_kernel_count(code.get(), &kernels));
    EXPECT_EQ(kernels, 1u);
    check_saxpy(code.get());
}

TEST_F(ObjectCodeTest, AMissingFileIsNamed) {
    gpu::TempDir dir;
    const std::string path = dir.path() + "/does-not-exist.cubin";
    cucore_object_code_t *code = nullptr;
    CUCORE_EXPECT_STATUS(cucore_object_code_create_from_file(path.c_str(), CUCORE_CODE_CUBIN, nullptr, &code),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(code, nullptr);
    EXPECT_TRUE(contains(gpu::last_message(), path)) << gpu::last_message();
}

TEST_F(ObjectCodeTest, FromPtxInMemory) {
    Owned<cucore_object_code_t> compiled = compile(gpu::kSaxpySource, CUCORE_CODE_PTX);
    ASSERT_TRUE(compiled);
    const std::string ptx = gpu::code_bytes(compiled.get());
    cucore_object_code_t *raw_code = nullptr;
    CUCORE_ASSERT_OK(cucore_object_code_create(ptx.data(), ptx.size(), CUCORE_CODE_PTX, "saxpy.ptx", &raw_code));
    Owned<cucore_object_code_t> code(raw_code);
    const char *name = nullptr;
    CUCORE_ASSERT_OK(cucore_object_code_name(code.get(), &name));
    EXPECT_STREQ(name, "saxpy.ptx");
    check_saxpy(code.get());
}

TEST_F(ObjectCodeTest, GarbageFailsToLoadWithTheDriversError) {
    const std::string garbage(256, 'x');
    cucore_object_code_t *raw_code = nullptr;
    CUCORE_ASSERT_OK(cucore_object_code_create(garbage.data(), garbage.size(), CUCORE_CODE_CUBIN, "junk", &raw_code));
    Owned<cucore_object_code_t> code(raw_code);
    // With lazy module loading (the driver's default) the H100 server's driver
    // accepted this image at cuLibraryLoadData; it must fail by the time a
    // kernel of it is looked up or bound to a context, with the driver's error.
    cucore_status_t status = cucore_object_code_load(code.get());
    const char *step = "load";
    cucore_kernel_t *raw_kernel = nullptr;
    if (status == CUCORE_SUCCESS) {
        step = "get_kernel";
        status = cucore_object_code_get_kernel(code.get(), "saxpy", &raw_kernel);
    }
    Owned<cucore_kernel_t> kernel(raw_kernel);
    if (status == CUCORE_SUCCESS) {
        step = "function";
        void *function = nullptr;
        status = cucore_kernel_function(kernel.get(), dev_, &function);
    }
    EXPECT_EQ(status, CUCORE_ERROR_CUDA) << "at " << step << ": " << gpu::last_message();
    EXPECT_NE(cucore_last_cuda_result(), 0) << step;
    EXPECT_TRUE(contains(gpu::last_message(), "CUDA_ERROR_")) << step << ": " << gpu::last_message();
}

TEST_F(ObjectCodeTest, LtoIrIsNotLoadable) {
    Owned<cucore_object_code_t> lto = compile(gpu::kSaxpySource, CUCORE_CODE_LTOIR);
    ASSERT_TRUE(lto);
    CUCORE_EXPECT_STATUS(cucore_object_code_load(lto.get()), CUCORE_ERROR_INVALID_STATE);
    cucore_kernel_t *k = nullptr;
    CUCORE_EXPECT_STATUS(cucore_object_code_get_kernel(lto.get(), "saxpy", &k), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(k, nullptr);
}

TEST_F(ObjectCodeTest, KernelsOutliveTheirObjectCode) {
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
    Owned<cucore_kernel_t> k = kernel(code.get(), "saxpy");
    ASSERT_TRUE(k);
    code.reset(); // the kernel keeps the library loaded
    auto out = array<float>(4);
    auto x = array(std::vector<float>{1, 2, 3, 4});
    auto y = array(std::vector<float>{10, 20, 30, 40});
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(1, 32), k.get(), 2.0f, static_cast<const float *>(x.ptr()),
                                 static_cast<const float *>(y.ptr()), static_cast<float *>(out.ptr()), 4u));
    EXPECT_EQ(out.download(), (std::vector<float>{12, 24, 36, 48}));
}

const char *const kGlobalsSource = R"(
__device__ int table[4] = {1, 2, 3, 4};
__constant__ float coefficient = 0.5f;
namespace ns { __device__ unsigned long long counter = 7; }
extern "C" __global__ void use_globals(float *out) {
    unsigned i = threadIdx.x;
    if (i < 4) {
        out[i] = coefficient * table[i];
        table[i] = table[i] * 10;
    }
    if (i == 0) ns::counter += 1;
}
)";

TEST_F(ObjectCodeTest, ModuleGlobalsAreReadWrittenAndSeenByKernels) {
    Owned<cucore_object_code_t> code =
        compile(kGlobalsSource, CUCORE_CODE_CUBIN, {"&ns::counter"}); // the others by symbol name
    ASSERT_TRUE(code);
    // Address and size equal the raw driver's for the same library.
    uint64_t address = 0;
    size_t size = 0;
    CUCORE_ASSERT_OK(cucore_object_code_get_global(code.get(), dev_, "table", &address, &size));
    EXPECT_EQ(size, 4 * sizeof(int));
    void *library = nullptr;
    CUCORE_ASSERT_OK(cucore_object_code_handle(code.get(), &library));
    ASSERT_NE(library, nullptr);
    {
        gpu::ScopedContext scope(primary_);
        CUdeviceptr raw_address = 0;
        size_t raw_size = 0;
        CU_ASSERT_OK(cu().LibraryGetGlobal(&raw_address, &raw_size, static_cast<CUlibrary>(library), "table"));
        EXPECT_EQ(address, static_cast<uint64_t>(raw_address));
        EXPECT_EQ(size, raw_size);
    }

    int table[4] = {};
    CUCORE_ASSERT_OK(cucore_object_code_read_global(code.get(), dev_, "table", table, sizeof table));
    EXPECT_EQ(std::vector<int>(table, table + 4), (std::vector<int>{1, 2, 3, 4}));
    const int written[4] = {5, -6, 7, -8};
    CUCORE_ASSERT_OK(cucore_object_code_write_global(code.get(), dev_, "table", written, sizeof written));
    const float coefficient = 2.0f;
    CUCORE_ASSERT_OK(cucore_object_code_write_global(code.get(), dev_, "coefficient", &coefficient, sizeof coefficient));
    // A size other than the global's is refused.
    double wrong = 0;
    CUCORE_EXPECT_STATUS(cucore_object_code_write_global(code.get(), dev_, "coefficient", &wrong, sizeof wrong),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_object_code_get_global(code.get(), dev_, "no_such_global", &address, &size),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gpu::last_message(), "no_such_global")) << gpu::last_message();

    Owned<cucore_kernel_t> k = kernel(code.get(), "use_globals");
    ASSERT_TRUE(k);
    auto out = array<float>(4);
    CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(1, 32), k.get(), static_cast<float *>(out.ptr())));
    EXPECT_EQ(out.download(), (std::vector<float>{10, -12, 14, -16}));
    // The kernel's writes are visible to read_global.
    CUCORE_ASSERT_OK(cucore_object_code_read_global(code.get(), dev_, "table", table, sizeof table));
    EXPECT_EQ(std::vector<int>(table, table + 4), (std::vector<int>{50, -60, 70, -80}));
    // A global in a namespace by its name expression.
    unsigned long long counter = 0;
    CUCORE_ASSERT_OK(cucore_object_code_read_global(code.get(), dev_, "&ns::counter", &counter, sizeof counter));
    EXPECT_EQ(counter, 8u);
}

TEST_F(ObjectCodeTest, TheRawDriverRunsTheSameCubin) {
    // Code from libcucore is ordinary driver code: cuLibraryLoadData takes its bytes.
    Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource);
    ASSERT_TRUE(code);
    const std::string bytes = gpu::code_bytes(code.get());
    CUlibrary lib = nullptr;
    CU_ASSERT_OK(cu().LibraryLoadData(&lib, bytes.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel raw_kernel = nullptr;
    CU_EXPECT_OK(cu().LibraryGetKernel(&raw_kernel, lib, "saxpy"));
    // Wrapped through cucore_kernel_from_handle it launches like any kernel,
    // and its owner's callback runs once, with the last reference.
    gpu::ReleaseCounter released;
    cucore_kernel_t *wrapped = nullptr;
    CUCORE_ASSERT_OK(cucore_kernel_from_handle(raw_kernel, gpu::ReleaseCounter::callback, &released, &wrapped));
    {
        Owned<cucore_kernel_t> k(wrapped);
        void *handle = nullptr;
        CUCORE_ASSERT_OK(cucore_kernel_handle(k.get(), &handle));
        EXPECT_EQ(handle, static_cast<void *>(raw_kernel));
        auto out = array<float>(2);
        auto x = array(std::vector<float>{1, 2});
        auto y = array(std::vector<float>{3, 4});
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), config(1, 32), k.get(), -1.0f,
                                     static_cast<const float *>(x.ptr()), static_cast<const float *>(y.ptr()),
                                     static_cast<float *>(out.ptr()), 2u));
        EXPECT_EQ(out.download(), (std::vector<float>{2, 2}));
        EXPECT_EQ(released.calls.load(), 0);
    }
    EXPECT_EQ(released.calls.load(), 1);
    CU_EXPECT_OK(cu().LibraryUnload(lib));
}

} // namespace
