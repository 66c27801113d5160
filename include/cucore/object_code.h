/* libcucore: object code (cubin, PTX, LTO-IR, fatbin, objects, libraries).
 *
 * An object code holds compiled device code. Loadable kinds (CUBIN, PTX,
 * FATBIN) are loaded into the driver through its library API
 * (cuLibraryLoadData / cuLibraryLoadFromFile) on first use, once for every
 * device, and unloaded when the last reference goes (kernels taken from it hold
 * one). LTOIR, OBJECT and LIBRARY are inputs of the linker (cucore/linker.h).
 */
#ifndef CUCORE_OBJECT_CODE_H
#define CUCORE_OBJECT_CODE_H

#include "common.h"
#include "program.h"

CUCORE_EXTERN_C_BEGIN

/* Creates an object code from `size` bytes at `data` (copied) of kind
 * `code_type` (CUBIN, PTX, LTOIR, FATBIN, OBJECT or LIBRARY) (+1 reference).
 * `name` (may be NULL) names it in messages and linker logs. Nothing is loaded
 * yet. Errors: INVALID_ARGUMENT (NULL data or out, size 0, a code type that is
 * not an object code kind), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_object_code_create(const void *data, size_t size,
                                                     cucore_code_type_t code_type, const char *name,
                                                     cucore_object_code_t **object_code);

/* Creates an object code from the file at `path` of kind `code_type`
 * (+1 reference). The file is read at once (so its bytes and the cache key are
 * known); loadable kinds are still loaded on first use. `name` NULL: the path.
 * Errors: INVALID_ARGUMENT (NULL path or out, bad code type, an empty file, a
 * file that cannot be read: the message names the path and the reason),
 * OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_object_code_create_from_file(const char *path,
                                                               cucore_code_type_t code_type,
                                                               const char *name,
                                                               cucore_object_code_t **object_code);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_object_code_retain(cucore_object_code_t *object_code);

/* Drops a reference; the last one unloads the code from the driver (kernels
 * keep it loaded while they live). NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_object_code_release(cucore_object_code_t *object_code);

/* Loads the code into the driver now (otherwise the first get_kernel or global
 * query does), so load errors surface here. Loading twice is a no-op. With the
 * driver's lazy module loading (CUDA_MODULE_LOADING=LAZY, its default) some
 * image errors surface only when a kernel is first looked up or used.
 * Errors: INVALID_HANDLE, INVALID_STATE (LTOIR, OBJECT or LIBRARY: link first),
 * NO_DRIVER, CUDA (e.g. CUDA_ERROR_INVALID_IMAGE or NO_BINARY_FOR_GPU). */
CUCORE_API cucore_status_t cucore_object_code_load(cucore_object_code_t *object_code);

/* The kind of code. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_object_code_code_type(const cucore_object_code_t *object_code,
                                                        cucore_code_type_t *code_type);

/* The code's bytes and their count. The bytes are valid while the object code
 * lives and never change. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_object_code_data(const cucore_object_code_t *object_code,
                                                   const void **data, size_t *size);

/* The code's name ("" when none). Valid while the object code lives.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_object_code_name(const cucore_object_code_t *object_code,
                                                   const char **name);

/* The number of name expressions the code knows (those given to the compile
 * that produced it). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_object_code_name_expression_count(
    const cucore_object_code_t *object_code, size_t *count);

/* The `index`th name expression and its lowered (mangled) name. Both strings
 * are valid while the object code lives.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, index out of range). */
CUCORE_API cucore_status_t cucore_object_code_name_expression(const cucore_object_code_t *object_code,
                                                              size_t index, const char **expression,
                                                              const char **lowered_name);

/* The kernel named `name` (+1 reference): a name expression given to the
 * compile (translated to its lowered name) or the symbol name itself. Loads
 * the code first if needed. The kernel keeps the code loaded.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL; no kernel of that name, the
 * message lists what was tried), INVALID_STATE (not loadable), CUDA. */
CUCORE_API cucore_status_t cucore_object_code_get_kernel(cucore_object_code_t *object_code,
                                                         const char *name, cucore_kernel_t **kernel);

/* The number of kernels in the loaded code (loads it first).
 * Errors: as cucore_object_code_load, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_object_code_kernel_count(cucore_object_code_t *object_code,
                                                           size_t *count);

/* The device address and size in bytes of the module global (a __device__ or
 * __constant__ variable) named `name` (a name expression or the symbol name)
 * as seen by `device`. Loads the code first if needed.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL; no global of that name),
 * INVALID_STATE (not loadable), CUDA. */
CUCORE_API cucore_status_t cucore_object_code_get_global(cucore_object_code_t *object_code,
                                                         cucore_device_t *device, const char *name,
                                                         uint64_t *address, size_t *size);

/* Copies `size` bytes of the global `name` on `device` to host memory at `dst`
 * (synchronously). `size` must equal the global's size.
 * Errors: as cucore_object_code_get_global, INVALID_ARGUMENT (size mismatch). */
CUCORE_API cucore_status_t cucore_object_code_read_global(cucore_object_code_t *object_code,
                                                          cucore_device_t *device, const char *name,
                                                          void *dst, size_t size);

/* Copies `size` bytes from host memory at `src` into the global `name` on
 * `device` (synchronously, ordered after all work of the device's primary
 * context). `size` must equal the global's size.
 * Errors: as cucore_object_code_read_global. */
CUCORE_API cucore_status_t cucore_object_code_write_global(cucore_object_code_t *object_code,
                                                           cucore_device_t *device, const char *name,
                                                           const void *src, size_t size);

/* The raw CUlibrary (loads the code first if needed).
 * Errors: as cucore_object_code_load, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_object_code_handle(cucore_object_code_t *object_code,
                                                     void **cu_library);

/* The raw CUmodule of the code in the context current on the calling thread
 * (cuLibraryGetModule; loads the code first if needed), for driver APIs that
 * take a module. It is the driver's and lives as long as the object code.
 * Errors: as cucore_object_code_load, INVALID_ARGUMENT (NULL), CUDA (no
 * current context: CUDA_ERROR_INVALID_CONTEXT). */
CUCORE_API cucore_status_t cucore_object_code_module(cucore_object_code_t *object_code, void **cu_module);

CUCORE_EXTERN_C_END

#endif /* CUCORE_OBJECT_CODE_H */
