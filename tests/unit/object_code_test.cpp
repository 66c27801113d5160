// Object code on the fake driver: creation, lazy loading (data and file),
// unloading with the last reference (kernels keep it loaded), kernels by name
// and by name expression, module globals, and the errors of each.
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "compile_support.hpp"
#include "fake_compilers.hpp"

namespace {

class ObjectCodeTest : public CompileFixture {
  protected:
    cucore_object_code_t *make(const std::string &bytes, cucore_code_type_t type = CUCORE_CODE_CUBIN,
                               const char *name = "mod") {
        cucore_object_code_t *o = nullptr;
        EXPECT_EQ(cucore_object_code_create(bytes.data(), bytes.size(), type, name, &o), CUCORE_SUCCESS) << message();
        return o;
    }
};

TEST_F(ObjectCodeTest, CreateKeepsACopyAndLoadsLazily) {
    std::string image = fake::image({"k1", "k2"}, {{"counter", 4}});
    cucore_object_code_t *o = make(image);
    ASSERT_NE(o, nullptr);
    image[0] = 'X';  // the object code copied the bytes
    EXPECT_EQ(bytes_of(o), fake::image({"k1", "k2"}, {{"counter", 4}}));
    const char *name = nullptr;
    EXPECT_EQ(cucore_object_code_name(o, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "mod");
    const int base = fake::counters().libraries;
    EXPECT_EQ(fake::counters().libraries, base) << "nothing loaded at creation";
    fake::reset_calls();
    EXPECT_EQ(cucore_object_code_load(o), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_object_code_load(o), CUCORE_SUCCESS);
    EXPECT_EQ(fake::call_log(), std::vector<std::string>{"cuLibraryLoadData"}) << "loaded once";
    EXPECT_EQ(fake::counters().libraries, base + 1);
    size_t count = 0;
    EXPECT_EQ(cucore_object_code_kernel_count(o, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 2u);
    void *library = nullptr;
    EXPECT_EQ(cucore_object_code_handle(o, &library), CUCORE_SUCCESS);
    EXPECT_NE(library, nullptr);
    EXPECT_EQ(cucore_object_code_release(o), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().libraries, base) << "unloaded with the last reference";
}

TEST_F(ObjectCodeTest, ModuleNeedsACurrentContext) {
    cucore_object_code_t *o = make(fake::image({"k1"}));
    fake::set_current_context(nullptr);
    void *module = &module;
    EXPECT_EQ(cucore_object_code_module(o, &module), CUCORE_ERROR_CUDA);
    EXPECT_EQ(module, nullptr);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_CONTEXT);
    cucore_device_t *d = device(0);
    cucore_context_t *primary = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d, &primary), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_context_set_current(primary), CUCORE_SUCCESS);
    void *library = nullptr;
    ASSERT_EQ(cucore_object_code_module(o, &module), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_object_code_handle(o, &library), CUCORE_SUCCESS);
    EXPECT_NE(module, nullptr);
    EXPECT_EQ(module, library) << "the fake's module of a library is the library itself";
    fake::set_current_context(nullptr);
    EXPECT_EQ(cucore_context_release(primary), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_device_release(d), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_object_code_release(o), CUCORE_SUCCESS);
}

TEST_F(ObjectCodeTest, KernelsKeepTheLibraryLoaded) {
    const int base = fake::counters().libraries;
    cucore_object_code_t *o = make(fake::image({"saxpy", "_Z4fillIfEvPT_S0_"}));
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_object_code_get_kernel(o, "saxpy", &k), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().libraries, base + 1);
    cucore_object_code_release(o);
    EXPECT_EQ(fake::counters().libraries, base + 1) << "the kernel holds the object code";
    cucore_kernel_release(k);
    EXPECT_EQ(fake::counters().libraries, base);
}

TEST_F(ObjectCodeTest, UnknownKernelListsWhatWasTried) {
    cucore_object_code_t *o = make(fake::image({"a"}), CUCORE_CODE_CUBIN, "mine");
    cucore_kernel_t *k = reinterpret_cast<cucore_kernel_t *>(1);
    EXPECT_EQ(cucore_object_code_get_kernel(o, "b", &k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(k, nullptr);
    EXPECT_NE(message().find("no kernel named 'b' in object code 'mine'"), std::string::npos) << message();
    EXPECT_NE(message().find("the symbol 'b'"), std::string::npos) << message();
    EXPECT_EQ(cucore_object_code_get_kernel(o, nullptr, &k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'name'"), std::string::npos);
    cucore_object_code_release(o);
}

TEST_F(ObjectCodeTest, LoadFailuresAreRetried) {
    cucore_object_code_t *o = make(fake::image({"a"}));
    fake::fail_entry("cuLibraryLoadData", CUDA_ERROR_INVALID_IMAGE);
    EXPECT_EQ(cucore_object_code_load(o), CUCORE_ERROR_CUDA);
    EXPECT_EQ(cucore_last_cuda_result(), CUDA_ERROR_INVALID_IMAGE);
    EXPECT_NE(message().find("cuLibraryLoadData"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(cucore_object_code_load(o), CUCORE_SUCCESS) << "a failed load can be retried";
    cucore_object_code_release(o);
    // Not an image at all: the driver's error.
    o = make("garbage");
    EXPECT_EQ(cucore_object_code_load(o), CUCORE_ERROR_CUDA);
    cucore_object_code_release(o);
}

TEST_F(ObjectCodeTest, LinkerInputsCannotLoad) {
    for (cucore_code_type_t type : {CUCORE_CODE_LTOIR, CUCORE_CODE_OBJECT, CUCORE_CODE_LIBRARY}) {
        cucore_object_code_t *o = make("bytes", type);
        fake::reset_calls();
        cucore_kernel_t *k = nullptr;
        EXPECT_EQ(cucore_object_code_get_kernel(o, "a", &k), CUCORE_ERROR_INVALID_STATE);
        EXPECT_NE(message().find("link it first"), std::string::npos) << message();
        size_t count = 7;
        EXPECT_EQ(cucore_object_code_kernel_count(o, &count), CUCORE_ERROR_INVALID_STATE);
        EXPECT_EQ(count, 0u);
        EXPECT_EQ(fake::calls(), 0);
        cucore_object_code_release(o);
    }
}

TEST_F(ObjectCodeTest, CreateValidation) {
    cucore_object_code_t *o = nullptr;
    EXPECT_EQ(cucore_object_code_create("x", 0, CUCORE_CODE_CUBIN, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'size'"), std::string::npos);
    EXPECT_EQ(cucore_object_code_create(nullptr, 1, CUCORE_CODE_CUBIN, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'data'"), std::string::npos);
    for (cucore_code_type_t bad : {CUCORE_CODE_UNSET, CUCORE_CODE_CXX, CUCORE_CODE_NVVM, static_cast<cucore_code_type_t>(99)}) {
        EXPECT_EQ(cucore_object_code_create("x", 1, bad, nullptr, &o), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(message().find("code_type"), std::string::npos) << message();
    }
    EXPECT_EQ(cucore_object_code_create_from_file("/nonexistent/cucore/x.cubin", CUCORE_CODE_CUBIN, nullptr, &o),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("/nonexistent/cucore/x.cubin"), std::string::npos) << message();
    EXPECT_NE(message().find("No such file"), std::string::npos) << message();
    EXPECT_EQ(o, nullptr);
    const char *name = nullptr;
    o = make("x", CUCORE_CODE_PTX, nullptr);
    EXPECT_EQ(cucore_object_code_name(o, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "");
    cucore_object_code_release(o);
}

TEST_F(ObjectCodeTest, FromFileReadsNowAndLoadsFromThePath) {
    char path[] = "/tmp/cucore-object-code-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string image = fake::image({"from_file"});
    ASSERT_EQ(write(fd, image.data(), image.size()), static_cast<ssize_t>(image.size()));
    close(fd);
    cucore_object_code_t *o = nullptr;
    ASSERT_EQ(cucore_object_code_create_from_file(path, CUCORE_CODE_CUBIN, nullptr, &o), CUCORE_SUCCESS) << message();
    EXPECT_EQ(bytes_of(o), image);
    const char *name = nullptr;
    EXPECT_EQ(cucore_object_code_name(o, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, path);
    fake::reset_calls();
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_object_code_get_kernel(o, "from_file", &k), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::call_log().front(), "cuLibraryLoadFromFile");
    cucore_kernel_release(k);
    cucore_object_code_release(o);
    // An empty file.
    std::ofstream(path, std::ios::trunc).close();
    EXPECT_EQ(cucore_object_code_create_from_file(path, CUCORE_CODE_CUBIN, "n", &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("empty file"), std::string::npos) << message();
    unlink(path);
}

TEST_F(ObjectCodeTest, GlobalsReadAndWriteInThePrimaryContext) {
    cucore_device_t *d = device(0);
    cucore_object_code_t *o = make(fake::image({"k"}, {{"counter", 8}, {"flag", 4}}));
    uint64_t address = 0;
    size_t size = 0;
    ASSERT_EQ(cucore_object_code_get_global(o, d, "counter", &address, &size), CUCORE_SUCCESS) << message();
    EXPECT_NE(address, 0u);
    EXPECT_EQ(size, 8u);
    EXPECT_EQ(fake::current_context(), nullptr) << "the caller's (no) context is restored";
    const uint64_t value = 0x1122334455667788ull;
    EXPECT_EQ(cucore_object_code_write_global(o, d, "counter", &value, sizeof value), CUCORE_SUCCESS) << message();
    uint64_t back = 0;
    EXPECT_EQ(cucore_object_code_read_global(o, d, "counter", &back, sizeof back), CUCORE_SUCCESS) << message();
    EXPECT_EQ(back, value);
    EXPECT_EQ(*reinterpret_cast<const uint64_t *>(address), value) << "the fake's global memory";
    // Size must match; unknown names are INVALID_ARGUMENT.
    uint32_t small = 0;
    EXPECT_EQ(cucore_object_code_read_global(o, d, "counter", &small, sizeof small), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("8 bytes"), std::string::npos) << message();
    EXPECT_EQ(cucore_object_code_write_global(o, d, "counter", &small, sizeof small), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_object_code_get_global(o, d, "missing", &address, &size), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(address, 0u);
    EXPECT_EQ(size, 0u);
    EXPECT_NE(message().find("no global named 'missing'"), std::string::npos) << message();
    EXPECT_EQ(cucore_object_code_read_global(o, d, "flag", nullptr, 4), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_object_code_write_global(o, d, "flag", nullptr, 4), CUCORE_ERROR_INVALID_ARGUMENT);
    // A driver failure of the copy.
    fake::fail_entry("cuMemcpyDtoH", CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(cucore_object_code_read_global(o, d, "counter", &back, sizeof back), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    cucore_object_code_release(o);
    cucore_device_release(d);
}

TEST_F(ObjectCodeTest, NameExpressionsNameKernels) {
    fake_compilers::Installed compilers;
    cucore_program_t *p = program("kernel plain\nglobal g 4\n");
    ASSERT_NE(p, nullptr);
    const char *names[] = {"fill<float>", "fill<int>"};
    cucore_object_code_t *o = nullptr;
    ASSERT_EQ(cucore_program_compile(p, CUCORE_CODE_CUBIN, names, 2, nullptr, &o), CUCORE_SUCCESS) << message();
    cucore_kernel_t *k = nullptr;
    ASSERT_EQ(cucore_object_code_get_kernel(o, "fill<float>", &k), CUCORE_SUCCESS) << message();
    void *raw = nullptr;
    ASSERT_EQ(cucore_kernel_handle(k, &raw), CUCORE_SUCCESS);
    const fake::KernelRecord *record = fake::kernel_record(static_cast<CUkernel>(raw));
    ASSERT_NE(record, nullptr);
    EXPECT_EQ(record->name, fake_compilers::lowered("fill<float>")) << "found by its lowered name";
    cucore_kernel_release(k);
    ASSERT_EQ(cucore_object_code_get_kernel(o, "plain", &k), CUCORE_SUCCESS) << "a symbol name works too";
    cucore_kernel_release(k);
    EXPECT_EQ(cucore_object_code_get_kernel(o, "fill<double>", &k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("its name expressions: 'fill<float>', 'fill<int>'"), std::string::npos) << message();
    cucore_device_t *d = device(0);
    uint64_t address = 0;
    size_t size = 0;
    EXPECT_EQ(cucore_object_code_get_global(o, d, "g", &address, &size), CUCORE_SUCCESS) << message();
    EXPECT_EQ(size, 4u);
    cucore_device_release(d);
    // The linker carries its inputs' name expressions into the result.
    cucore_linker_options_t lo = CUCORE_LINKER_OPTIONS_INIT;
    lo.backend = CUCORE_BACKEND_DRIVER;
    cucore_linker_t *linker = nullptr;
    ASSERT_EQ(cucore_linker_create(&o, 1, &lo, &linker), CUCORE_SUCCESS) << message();
    cucore_object_code_t *linked = nullptr;
    ASSERT_EQ(cucore_linker_link(linker, CUCORE_CODE_CUBIN, &linked), CUCORE_SUCCESS) << message();
    size_t count = 0;
    EXPECT_EQ(cucore_object_code_name_expression_count(linked, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 2u);
    ASSERT_EQ(cucore_object_code_get_kernel(linked, "fill<int>", &k), CUCORE_SUCCESS) << message();
    cucore_kernel_release(k);
    cucore_object_code_release(linked);
    cucore_linker_release(linker);
    cucore_object_code_release(o);
    cucore_program_release(p);
}

}  // namespace
