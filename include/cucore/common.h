/* libcucore: common definitions of the C ABI.
 *
 * Conventions shared by every capability header (see docs/c_abi.md):
 * - Every fallible function returns cucore_status_t; CUCORE_SUCCESS is 0.
 *   Results come back through out-pointers, which are set to NULL/0 when the
 *   call fails. The detail of the last failure on the calling thread is in
 *   cucore_last_error_message() and cucore_last_cuda_result().
 * - Handles are opaque, reference-counted pointers. Every handle an
 *   out-parameter gives you carries one reference that you own until you pass
 *   it to the matching cucore_<noun>_release() (NULL is a no-op);
 *   cucore_<noun>_retain() adds one. A handle that was released, belongs to
 *   another type or is garbage is answered with CUCORE_ERROR_INVALID_HANDLE,
 *   never a crash. Objects hold references to what they depend on, so the
 *   order in which you release handles never matters; those references keep
 *   the object alive, never your handle valid: a handle is valid exactly while
 *   your references to it last, so a release too many is INVALID_HANDLE even
 *   while a child still uses the object. A handle the library gives you again
 *   for such an object (cucore_buffer_memory_resource(), say) is a new value.
 *   A released handle never validates again.
 * - A call holds what it uses until it returns: releasing your last reference
 *   on another thread during a call cannot free the object under it (the call
 *   completes; later calls with the handle are INVALID_HANDLE).
 * - Options structs begin with struct_size and have a *_OPTIONS_INIT macro; a
 *   zero field means "default" and a NULL options pointer means all defaults.
 * - Enums are 4 bytes (each has a FORCE_INT32 member). Any int32 value may be
 *   passed for an enum parameter or field, a negative one included: a value no
 *   enumerator of the accepted set names is refused with
 *   CUCORE_ERROR_INVALID_ARGUMENT, the message naming the argument and value.
 * - Every function may be called from any thread. A call on an object makes
 *   that object's CUDA context current for its duration and then restores the
 *   caller's current context.
 * - No CUDA header is needed: raw driver handles are passed as void* (CUcontext,
 *   CUstream, CUevent) or int (CUdevice).
 */
#ifndef CUCORE_COMMON_H
#define CUCORE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  define CUCORE_API
#elif defined(__GNUC__)
#  define CUCORE_API __attribute__((visibility("default")))
#else
#  define CUCORE_API
#endif

#ifdef __cplusplus
#  define CUCORE_EXTERN_C_BEGIN extern "C" {
#  define CUCORE_EXTERN_C_END }
#else
#  define CUCORE_EXTERN_C_BEGIN
#  define CUCORE_EXTERN_C_END
#endif

/* ---- Version ------------------------------------------------------------ */

#define CUCORE_VERSION_MAJOR 0
#define CUCORE_VERSION_MINOR 1
#define CUCORE_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, the same encoding as cucore_version(). */
#define CUCORE_VERSION \
    (CUCORE_VERSION_MAJOR * 10000 + CUCORE_VERSION_MINOR * 100 + CUCORE_VERSION_PATCH)

/* ---- Status ------------------------------------------------------------- */

typedef enum cucore_status {
    CUCORE_SUCCESS = 0,
    /* An argument is out of range, NULL where it may not be, or inconsistent. */
    CUCORE_ERROR_INVALID_ARGUMENT = 1,
    /* A handle is NULL, released, of another type, or not a handle at all. */
    CUCORE_ERROR_INVALID_HANDLE = 2,
    /* The object is not in a state that allows the call (e.g. elapsed time of an
     * event that was never recorded). */
    CUCORE_ERROR_INVALID_STATE = 3,
    /* libcuda.so.1 could not be loaded or initialised. */
    CUCORE_ERROR_NO_DRIVER = 4,
    /* No CUDA device is present, or the ordinal names none. */
    CUCORE_ERROR_NO_DEVICE = 5,
    /* The driver (or NVRTC/nvJitLink) lacks the entry point or the feature. */
    CUCORE_ERROR_NOT_SUPPORTED = 6,
    /* Host or device memory ran out. */
    CUCORE_ERROR_OUT_OF_MEMORY = 7,
    /* Any other driver failure; cucore_last_cuda_result() holds the CUresult. */
    CUCORE_ERROR_CUDA = 8,
    /* Work the call asked about has not completed yet (e.g. elapsed time between
     * events that have not both completed). */
    CUCORE_ERROR_NOT_READY = 9,
    /* An unexpected failure inside the library (a bug: please report it). */
    CUCORE_ERROR_INTERNAL = 10,
    /* NVRTC, libNVVM or the linker rejected the input; the message carries the
     * first lines of the log and the whole log stays on the program or linker. */
    CUCORE_ERROR_COMPILATION = 11,
    CUCORE_STATUS_FORCE_INT32 = 0x7fffffff
} cucore_status_t;

/* ---- Object types (for diagnostics) ------------------------------------- */

typedef enum cucore_object_type {
    CUCORE_OBJECT_ANY = 0, /* every type, in queries */
    CUCORE_OBJECT_DEVICE = 1,
    CUCORE_OBJECT_CONTEXT = 2,
    CUCORE_OBJECT_STREAM = 3,
    CUCORE_OBJECT_EVENT = 4,
    CUCORE_OBJECT_MEMORY_RESOURCE = 5,
    CUCORE_OBJECT_BUFFER = 6,
    CUCORE_OBJECT_PROGRAM = 7,
    CUCORE_OBJECT_OBJECT_CODE = 8,
    CUCORE_OBJECT_LINKER = 9,
    CUCORE_OBJECT_KERNEL = 10,
    CUCORE_OBJECT_PROGRAM_CACHE = 11,
    CUCORE_OBJECT_GRAPHICS_RESOURCE = 12,
    CUCORE_OBJECT_OPAQUE_ARRAY = 13,
    CUCORE_OBJECT_MIPMAPPED_ARRAY = 14,
    CUCORE_OBJECT_TEXTURE_OBJECT = 15,
    CUCORE_OBJECT_SURFACE_OBJECT = 16,
    CUCORE_OBJECT_GRAPH_DEFINITION = 17,
    CUCORE_OBJECT_GRAPH_NODE = 18,
    CUCORE_OBJECT_GRAPH = 19,
    CUCORE_OBJECT_GRAPH_BUILDER = 20,
    CUCORE_OBJECT_SM_RESOURCE = 21,
    CUCORE_OBJECT_WORKQUEUE_RESOURCE = 22,
    CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR = 23,
    CUCORE_OBJECT_SYSTEM_DEVICE = 24,
    CUCORE_OBJECT_SYSTEM_EVENT_SET = 25,
    CUCORE_OBJECT_COMMUNICATOR = 26,
    CUCORE_OBJECT_TYPE_COUNT = 27, /* one past the last type; grows with the library */
    CUCORE_OBJECT_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_object_type_t;

/* ---- Handle types --------------------------------------------------------- */

typedef struct cucore_device cucore_device_t;
typedef struct cucore_context cucore_context_t;
typedef struct cucore_stream cucore_stream_t;
typedef struct cucore_event cucore_event_t;
typedef struct cucore_memory_resource cucore_memory_resource_t;
typedef struct cucore_buffer cucore_buffer_t;
typedef struct cucore_program cucore_program_t;
typedef struct cucore_object_code cucore_object_code_t;
typedef struct cucore_linker cucore_linker_t;
typedef struct cucore_kernel cucore_kernel_t;
typedef struct cucore_program_cache cucore_program_cache_t;
typedef struct cucore_graphics_resource cucore_graphics_resource_t;
typedef struct cucore_opaque_array cucore_opaque_array_t;
typedef struct cucore_mipmapped_array cucore_mipmapped_array_t;
typedef struct cucore_texture_object cucore_texture_object_t;
typedef struct cucore_surface_object cucore_surface_object_t;
typedef struct cucore_graph_definition cucore_graph_definition_t;
typedef struct cucore_graph_node cucore_graph_node_t;
typedef struct cucore_graph cucore_graph_t;
typedef struct cucore_graph_builder cucore_graph_builder_t;
typedef struct cucore_sm_resource cucore_sm_resource_t;
typedef struct cucore_workqueue_resource cucore_workqueue_resource_t;
typedef struct cucore_tensor_map_descriptor cucore_tensor_map_descriptor_t;
typedef struct cucore_system_device cucore_system_device_t;
typedef struct cucore_system_event_set cucore_system_event_set_t;
typedef struct cucore_communicator cucore_communicator_t;

/* A switch whose default belongs to the tool (NVRTC, the linker): 0 leaves it
 * to the tool, ON and OFF set it either way. */
typedef enum cucore_toggle {
    CUCORE_TOGGLE_DEFAULT = 0,
    CUCORE_TOGGLE_ON = 1,
    CUCORE_TOGGLE_OFF = 2,
    CUCORE_TOGGLE_FORCE_INT32 = 0x7fffffff
} cucore_toggle_t;

/* Called once when the last reference to a wrapped foreign object is released,
 * so that its owner can free it. Runs on the releasing thread. */
typedef void (*cucore_release_fn)(void *user_data);

/* Called for every failure inside a release path (which cannot return it), on
 * the thread that released. `message` is valid only during the call. */
typedef void (*cucore_release_error_fn)(cucore_status_t status, int cuda_result,
                                        const char *message, void *user_data);

CUCORE_EXTERN_C_BEGIN

/* The library's version, encoded like CUCORE_VERSION. Never fails. */
CUCORE_API uint32_t cucore_version(void);

/* The library's version as "MAJOR.MINOR.PATCH". Static storage; never NULL. */
CUCORE_API const char *cucore_version_string(void);

/* The name of a status, e.g. "CUCORE_ERROR_INVALID_HANDLE". Static storage;
 * never NULL ("CUCORE_STATUS_UNKNOWN" for values the library does not define). */
CUCORE_API const char *cucore_status_string(cucore_status_t status);

/* The message of the last failed call on this thread: the function, the
 * offending argument or object, and the driver's error name where the driver
 * failed. "" before any failure. Never NULL; valid until the next failing call
 * on this thread. Successful calls leave it unchanged. */
CUCORE_API const char *cucore_last_error_message(void);

/* The CUresult of the last failed call on this thread if the driver caused it,
 * else 0 (CUDA_SUCCESS). */
CUCORE_API int cucore_last_cuda_result(void);

/* The status of the last failed call on this thread (CUCORE_SUCCESS if none). */
CUCORE_API cucore_status_t cucore_last_error_status(void);

/* Forgets the last error of this thread. Never fails. */
CUCORE_API void cucore_clear_last_error(void);

/* ---- Diagnostics ----------------------------------------------------------- */

/* The name of an object type, e.g. "stream". Static storage; never NULL. */
CUCORE_API const char *cucore_object_type_name(cucore_object_type_t type);

/* The number of live objects of `type` (CUCORE_OBJECT_ANY: all types) in the
 * process, for leak tests and leak hunting. Devices are created once per
 * ordinal and live until the process ends.
 * Errors: INVALID_ARGUMENT (NULL count, unknown type). */
CUCORE_API cucore_status_t cucore_live_object_count(cucore_object_type_t type, size_t *count);

/* How many failures happened inside release paths (destroying a stream,
 * releasing a context, an owner's release callback...) since the process
 * started. Errors: INVALID_ARGUMENT (NULL count). */
CUCORE_API cucore_status_t cucore_release_error_count(uint64_t *count);

/* Installs `handler` (NULL: none) to be called for each release-path failure,
 * with `user_data`. Process-wide; replaces the previous handler. Never fails. */
CUCORE_API void cucore_set_release_error_handler(cucore_release_error_fn handler,
                                                 void *user_data);

/* Hands a failure to the release-error path (counted by
 * cucore_release_error_count, given to the handler) as if a release had met it.
 * For bindings whose scoped objects end with a call that can fail but cannot
 * return it (a C++ destructor, a Rust Drop). `message` may be NULL. Never fails. */
CUCORE_API void cucore_report_release_error(cucore_status_t status, int cuda_result, const char *message);

/* ---- For bindings ------------------------------------------------------------ */

/* The layout of a struct of this C ABI as the library was compiled: with
 * `field` NULL, the size of struct `struct_name` (its typedef name, e.g.
 * "cucore_stream_options_t"); else the offset of that field. For bindings that
 * declare the structs themselves and check them against the library at load.
 * Errors: INVALID_ARGUMENT (NULL struct_name or value, a struct or field the ABI
 * does not have). */
CUCORE_API cucore_status_t cucore_abi_layout(const char *struct_name, const char *field, size_t *value);

CUCORE_EXTERN_C_END

#endif /* CUCORE_COMMON_H */
