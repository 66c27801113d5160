/* compile_and_launch: CUDA C++ compiled at run time with NVRTC, launched and
 * checked against the host. Plain C over the C ABI (cucore.h).
 *
 *   program  = cucore_program_create(source, CXX, options)
 *   code     = cucore_program_compile(program, CUBIN)
 *   kernel   = cucore_object_code_get_kernel(code, "saxpy")
 *   cucore_launch(stream, &config, kernel, args, sizes, 5)
 *
 * Without a GPU it still compiles the kernel (to PTX for sm_90) and shows what
 * it got; without NVRTC it says so. Both exit 0. */
#include <cucore.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const saxpy_source =
    "extern \"C\" __global__ void saxpy(float a, const float *x, const float *y, float *out, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = a * x[i] + y[i];\n"
    "}\n";

/* Prints the library's message if `status` is a failure; returns 1 then. */
static int failed(cucore_status_t status, const char *what) {
    if (status == CUCORE_SUCCESS) return 0;
    fprintf(stderr, "%s failed: %s (%s)\n", what, cucore_last_error_message(), cucore_status_string(status));
    return 1;
}

/* No GPU: compile for sm_90 to PTX (NVRTC needs no driver) and show the result. */
static int compile_only(void) {
    cucore_program_options_t options = CUCORE_PROGRAM_OPTIONS_INIT;
    cucore_program_t *program = NULL;
    cucore_object_code_t *ptx = NULL;
    const void *data = NULL;
    size_t size = 0;
    int ok = 0;

    options.arch = "sm_90";
    if (!failed(cucore_program_create(saxpy_source, 0, CUCORE_CODE_CXX, &options, &program), "cucore_program_create") &&
        !failed(cucore_program_compile(program, CUCORE_CODE_PTX, NULL, 0, NULL, &ptx), "cucore_program_compile") &&
        !failed(cucore_object_code_data(ptx, &data, &size), "cucore_object_code_data")) {
        const char *entry = strstr((const char *)data, ".entry saxpy");
        printf("Compiled saxpy to PTX for sm_90: %zu bytes%s\n", size,
               entry != NULL ? ", with the entry point '.entry saxpy'" : "");
        printf("Run this on a machine with an NVIDIA GPU to launch it and check the result.\n");
        ok = entry != NULL;
    }
    cucore_object_code_release(ptx);
    cucore_program_release(program);
    return ok;
}

/* Compiles saxpy for device 0, runs it on n elements and compares with the host. */
static int compile_and_run(void) {
    enum { N = 1 << 20 };
    cucore_device_t *dev = NULL;
    cucore_stream_t *stream = NULL;
    cucore_program_t *program = NULL;
    cucore_object_code_t *cubin = NULL;
    cucore_kernel_t *kernel = NULL;
    cucore_buffer_t *x = NULL, *y = NULL, *out = NULL;
    const char *arch = NULL;
    float *hx = malloc(N * sizeof(float)), *hy = malloc(N * sizeof(float)), *hout = malloc(N * sizeof(float));
    int ok = 0;

    if (hx == NULL || hy == NULL || hout == NULL) {
        fprintf(stderr, "out of host memory\n");
        goto done;
    }
    for (unsigned i = 0; i < N; ++i) {
        hx[i] = (float)i * 0.5f;
        hy[i] = 1000.0f - (float)i;
    }
    /* NULL options: the arch of device 0 (no context is current here). */
    if (failed(cucore_device_get(0, &dev), "cucore_device_get") ||
        failed(cucore_stream_create(dev, NULL, &stream), "cucore_stream_create") ||
        failed(cucore_program_create(saxpy_source, 0, CUCORE_CODE_CXX, NULL, &program), "cucore_program_create") ||
        failed(cucore_program_arch(program, &arch), "cucore_program_arch") ||
        failed(cucore_program_compile(program, CUCORE_CODE_CUBIN, NULL, 0, NULL, &cubin), "cucore_program_compile") ||
        failed(cucore_object_code_get_kernel(cubin, "saxpy", &kernel), "cucore_object_code_get_kernel") ||
        failed(cucore_device_allocate(dev, N * sizeof(float), stream, &x), "cucore_device_allocate") ||
        failed(cucore_device_allocate(dev, N * sizeof(float), stream, &y), "cucore_device_allocate") ||
        failed(cucore_device_allocate(dev, N * sizeof(float), stream, &out), "cucore_device_allocate") ||
        failed(cucore_buffer_copy_from_host(x, 0, hx, N * sizeof(float), stream), "cucore_buffer_copy_from_host") ||
        failed(cucore_buffer_copy_from_host(y, 0, hy, N * sizeof(float), stream), "cucore_buffer_copy_from_host"))
        goto done;
    printf("Compiled saxpy with NVRTC for %s\n", arch);
    {
        /* Each argument is passed by its address and size, as the kernel declares it. */
        float a = 2.5f;
        uint64_t px = 0, py = 0, pout = 0;
        unsigned n = N;
        const void *args[5] = {&a, &px, &py, &pout, &n};
        const size_t sizes[5] = {sizeof a, sizeof px, sizeof py, sizeof pout, sizeof n};
        cucore_launch_config_t config = CUCORE_LAUNCH_CONFIG_INIT;
        float worst = 0.0f;
        config.grid[0] = (N + 255) / 256;
        config.block[0] = 256;
        cucore_buffer_address(x, &px);
        cucore_buffer_address(y, &py);
        cucore_buffer_address(out, &pout);
        if (failed(cucore_launch(stream, &config, kernel, args, sizes, 5), "cucore_launch") ||
            failed(cucore_buffer_copy_to_host(out, 0, hout, N * sizeof(float), stream), "cucore_buffer_copy_to_host") ||
            failed(cucore_stream_synchronize(stream), "cucore_stream_synchronize"))
            goto done;
        for (unsigned i = 0; i < N; ++i) {
            const float err = fabsf(hout[i] - (a * hx[i] + hy[i]));
            if (err > worst) worst = err;
        }
        if (worst == 0.0f) {
            printf("saxpy OK (%d elements, equal to the host's result)\n", N);
            ok = 1;
        } else {
            printf("saxpy WRONG: largest difference from the host %g\n", (double)worst);
        }
    }
done:
    /* Release in any order: each object holds what it needs. */
    cucore_buffer_release(out);
    cucore_buffer_release(y);
    cucore_buffer_release(x);
    cucore_kernel_release(kernel);
    cucore_object_code_release(cubin);
    cucore_program_release(program);
    cucore_stream_release(stream);
    cucore_device_release(dev);
    free(hout);
    free(hy);
    free(hx);
    return ok;
}

int main(void) {
    int nvrtc = 0, count = 0;
    cucore_status_t status;

    printf("libcucore %s\n", cucore_version_string());
    status = cucore_compiler_version(CUCORE_BACKEND_NVRTC, &nvrtc);
    if (status == CUCORE_ERROR_NOT_SUPPORTED) {
        printf("NVRTC is not installed, so nothing can be compiled here.\n  %s\n", cucore_last_error_message());
        return 0;
    }
    if (failed(status, "cucore_compiler_version")) return 1;
    printf("NVRTC %d.%d\n", nvrtc / 1000, nvrtc % 1000 / 10);

    status = cucore_device_count(&count);
    if (status == CUCORE_ERROR_NO_DRIVER || (status == CUCORE_SUCCESS && count == 0)) {
        printf("No GPU here (%s): compiling only.\n",
               status == CUCORE_ERROR_NO_DRIVER ? "no CUDA driver" : "the driver sees no device");
        return compile_only() ? 0 : 1;
    }
    if (failed(status, "cucore_device_count")) return 1;
    return compile_and_run() ? 0 : 1;
}
