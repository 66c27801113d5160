/* libcucore: linking device code (nvJitLink, or the driver's cuLink*).
 *
 * A linker takes object codes (PTX, CUBIN, LTOIR, FATBIN, OBJECT, LIBRARY) and
 * links them into one CUBIN (or PTX, with link-time optimisation). nvJitLink is
 * used where it is installed (CUCORE_NVJITLINK_PATH overrides the search);
 * otherwise the driver's cuLink* (which cannot link LTO-IR).
 */
#ifndef CUCORE_LINKER_H
#define CUCORE_LINKER_H

#include "common.h"
#include "program.h"

/* optimization_level of cucore_linker_options_t: 0 keeps the default (3);
 * CUCORE_OPTIMIZATION_LEVEL(n) asks for -On, n in 0..3 with the driver
 * backend, 0 or 3 with nvJitLink (which refuses 1 and 2). */
#define CUCORE_OPTIMIZATION_LEVEL(n) ((uint32_t)(n) + 1u)

typedef struct cucore_linker_options {
    uint32_t struct_size;
    const char *name;                  /* for messages; NULL: "linker" */
    const char *arch;                  /* "sm_90"; NULL: the current context's device, else device 0 */
    cucore_compiler_backend_t backend; /* DEFAULT (nvJitLink if installed, else DRIVER), NVJITLINK or DRIVER */
    uint32_t max_register_count;       /* 0: no limit */
    uint32_t optimization_level;       /* see CUCORE_OPTIMIZATION_LEVEL */
    uint32_t debug;                    /* 1: -g */
    uint32_t lineinfo;                 /* 1: -lineinfo */
    uint32_t link_time_optimization;   /* 1: -lto (nvJitLink only) */
    cucore_toggle_t ftz;               /* -ftz (nvJitLink only) */
    cucore_toggle_t prec_div;          /* -prec-div (nvJitLink only) */
    cucore_toggle_t prec_sqrt;         /* -prec-sqrt (nvJitLink only) */
    cucore_toggle_t fma;               /* -fma (nvJitLink only) */
    uint32_t verbose;                  /* 1: -verbose (more in the info log) */
    const char *const *ptxas_options;  size_t ptxas_option_count; /* -Xptxas=OPT (nvJitLink only) */
    const char *const *extra_options;  size_t extra_option_count; /* further nvJitLink flags as written */
} cucore_linker_options_t;

#define CUCORE_LINKER_OPTIONS_INIT                                                           \
    {(uint32_t)sizeof(cucore_linker_options_t), NULL, NULL, CUCORE_BACKEND_DEFAULT, 0, 0, 0, 0, 0, \
     CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_DEFAULT, 0, \
     NULL, 0, NULL, 0}

CUCORE_EXTERN_C_BEGIN

/* Creates a linker over `inputs` (`input_count` >= 1 object codes, each
 * retained by the linker until it is released) (+1 reference). The backend
 * starts at once, so option errors surface here.
 * Errors: INVALID_HANDLE (an input), INVALID_ARGUMENT (NULL, no inputs, bad
 * struct_size, an option the backend cannot honour, an input kind the backend
 * cannot link, e.g. LTOIR with the driver), NOT_SUPPORTED (backend NVJITLINK
 * asked for and not installed), COMPILATION (an input was refused; the
 * message carries the first lines of the error log), CUDA. */
CUCORE_API cucore_status_t cucore_linker_create(cucore_object_code_t *const *inputs, size_t input_count,
                                                const cucore_linker_options_t *options,
                                                cucore_linker_t **linker);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_linker_retain(cucore_linker_t *linker);

/* Drops a reference; NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_linker_release(cucore_linker_t *linker);

/* Links the inputs into `target` (CUBIN, or PTX with link_time_optimization on
 * nvJitLink) and returns the result (+1 reference). A linker links once; later
 * calls return the same object code (+1 reference) for the same target.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, other target), INVALID_STATE
 * (already linked to another target), COMPILATION (the message carries the
 * first lines of the error log), CUDA. */
CUCORE_API cucore_status_t cucore_linker_link(cucore_linker_t *linker, cucore_code_type_t target,
                                              cucore_object_code_t **object_code);

/* Copies the linker's error log (NUL-terminated, truncated to capacity - 1;
 * `buffer` may be NULL when capacity is 0) and stores its whole length in
 * `length` (may be NULL). Errors: INVALID_HANDLE, INVALID_ARGUMENT. */
CUCORE_API cucore_status_t cucore_linker_error_log(const cucore_linker_t *linker, char *buffer,
                                                   size_t capacity, size_t *length);

/* The linker's info log, like cucore_linker_error_log. */
CUCORE_API cucore_status_t cucore_linker_info_log(const cucore_linker_t *linker, char *buffer,
                                                  size_t capacity, size_t *length);

/* The backend this linker uses (NVJITLINK or DRIVER).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_linker_backend(const cucore_linker_t *linker,
                                                 cucore_compiler_backend_t *backend);

/* The backend a linker with default options would use now: NVJITLINK where it
 * loads, else DRIVER. Never loads the CUDA driver.
 * Errors: INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_linker_default_backend(cucore_compiler_backend_t *backend);

CUCORE_EXTERN_C_END

#endif /* CUCORE_LINKER_H */
