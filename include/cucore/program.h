/* libcucore: programs (run-time compilation with NVRTC, libNVVM or the linker).
 *
 * A program holds source code and the options to compile it; cucore_program_compile
 * turns it into an object code (cucore/object_code.h) for a target (PTX, cubin or
 * LTO-IR). NVRTC, libNVVM and nvJitLink are loaded at run time (override the
 * search with CUCORE_NVRTC_PATH, CUCORE_NVVM_PATH, CUCORE_NVJITLINK_PATH); where
 * one is missing, the calls that need it return CUCORE_ERROR_NOT_SUPPORTED and
 * everything else still works. A failed compile returns CUCORE_ERROR_COMPILATION:
 * its message carries the first lines of the log, the whole log stays on the
 * program (cucore_program_log).
 */
#ifndef CUCORE_PROGRAM_H
#define CUCORE_PROGRAM_H

#include "common.h"

/* What code is: the input of a program, the target of a compile or link, or
 * the contents of an object code. */
typedef enum cucore_code_type {
    CUCORE_CODE_UNSET = 0,
    CUCORE_CODE_CXX = 1,     /* CUDA C++ source (program input; NVRTC) */
    CUCORE_CODE_PTX = 2,     /* PTX text (program input through the linker; target; object code) */
    CUCORE_CODE_NVVM = 3,    /* NVVM IR, text or bitcode (program input; libNVVM) */
    CUCORE_CODE_CUBIN = 4,   /* device binary (target; object code) */
    CUCORE_CODE_LTOIR = 5,   /* link-time-optimisation IR (target; object code, linker input) */
    CUCORE_CODE_FATBIN = 6,  /* fat binary (object code, linker input) */
    CUCORE_CODE_OBJECT = 7,  /* relocatable host object with device code (linker input only) */
    CUCORE_CODE_LIBRARY = 8, /* archive of such objects (linker input only) */
    CUCORE_CODE_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_code_type_t;

/* Which tool compiles or links. */
typedef enum cucore_compiler_backend {
    CUCORE_BACKEND_DEFAULT = 0,   /* in options: choose automatically */
    CUCORE_BACKEND_NVRTC = 1,     /* CUDA C++ */
    CUCORE_BACKEND_NVVM = 2,      /* NVVM IR through libNVVM */
    CUCORE_BACKEND_NVJITLINK = 3, /* the nvJitLink library */
    CUCORE_BACKEND_DRIVER = 4,    /* the driver's cuLink* (when nvJitLink is absent) */
    CUCORE_BACKEND_FORCE_INT32 = 0x7fffffff
} cucore_compiler_backend_t;

/* What became of the precompiled header the last NVRTC compile was asked to
 * create (cuda.core's Program.pch_status). */
typedef enum cucore_pch_status {
    CUCORE_PCH_STATUS_NONE = 0,          /* no PCH asked for, no NVRTC compile yet, another backend, or an
                                            NVRTC that cannot say (before CUDA 12.8) */
    CUCORE_PCH_STATUS_CREATED = 1,       /* the PCH was written */
    CUCORE_PCH_STATUS_NOT_ATTEMPTED = 2, /* NVRTC chose not to create one */
    CUCORE_PCH_STATUS_FAILED = 3,        /* an error prevented it (after one retry with the heap NVRTC asked for) */
    CUCORE_PCH_STATUS_FORCE_32BIT = 0x7fffffff
} cucore_pch_status_t;

/* Compile options. Zero fields leave NVRTC's/libNVVM's defaults. String
 * arrays are (pointer, count) pairs; the strings are copied by
 * cucore_program_create. Every option takes part in the program cache key. */
typedef struct cucore_program_options {
    uint32_t struct_size;
    const char *name;      /* program name in logs; NULL: "default_program" */
    const char *arch;      /* "sm_90", "compute_90", "90"; NULL: the device of the
                              calling thread's current context, else device 0 */
    const char *std;       /* language dialect, e.g. "c++17"; NULL: NVRTC's default */
    const char *const *defines;       size_t define_count;       /* "NAME" or "NAME=VALUE" (-D) */
    const char *const *undefines;     size_t undefine_count;     /* -U */
    const char *const *include_paths; size_t include_path_count; /* -I */
    const char *const *pre_includes;  size_t pre_include_count;  /* --pre-include */
    /* In-memory headers: names as #include spells them, and their contents. */
    const char *const *header_names;  const char *const *header_sources; size_t header_count;
    uint32_t debug;                      /* 1: -G */
    uint32_t lineinfo;                   /* 1: -lineinfo */
    cucore_toggle_t device_code_optimize; /* -dopt on/off */
    uint32_t use_fast_math;              /* 1: --use_fast_math */
    cucore_toggle_t ftz;                 /* --ftz */
    cucore_toggle_t prec_sqrt;           /* --prec-sqrt */
    cucore_toggle_t prec_div;            /* --prec-div */
    cucore_toggle_t fma;                 /* --fmad */
    uint32_t extra_device_vectorization; /* 1: --extra-device-vectorization */
    uint32_t max_register_count;         /* 0: no limit; else --maxrregcount */
    uint32_t relocatable_device_code;    /* 1: -rdc=true */
    uint32_t extensible_whole_program;   /* 1: -ewp */
    uint32_t link_time_optimization;     /* 1: -dlto (implied by an LTO-IR target) */
    uint32_t device_as_default_execution_space; /* 1: -default-device */
    uint32_t disable_warnings;           /* 1: -w */
    uint32_t brief_diagnostics;          /* 1: --brief-diagnostics */
    uint32_t no_display_error_number;    /* 1: --no-display-error-number */
    const uint32_t *diag_error;    size_t diag_error_count;    /* --diag-error=N */
    const uint32_t *diag_suppress; size_t diag_suppress_count; /* --diag-suppress=N */
    const uint32_t *diag_warn;     size_t diag_warn_count;     /* --diag-warn=N */
    uint32_t pch;                        /* 1: -pch (automatic precompiled headers) */
    const char *create_pch;              /* --create-pch=FILE */
    const char *use_pch;                 /* --use-pch=FILE */
    const char *pch_dir;                 /* --pch-dir=DIR */
    const char *const *ptxas_options;  size_t ptxas_option_count;  /* each as -Xptxas=OPT */
    /* Further flags passed as written (after the ones above), for NVRTC or
     * libNVVM options this struct does not name. */
    const char *const *extra_options;  size_t extra_option_count;
} cucore_program_options_t;

#define CUCORE_PROGRAM_OPTIONS_INIT                                                                  \
    {(uint32_t)sizeof(cucore_program_options_t), NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, 0, NULL, 0, \
     NULL, NULL, 0, 0, 0, CUCORE_TOGGLE_DEFAULT, 0, CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_DEFAULT,     \
     CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_DEFAULT, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, \
     0, 0, NULL, NULL, NULL, NULL, 0, NULL, 0}

CUCORE_EXTERN_C_BEGIN

/* Creates a program from `code` (+1 reference). `code_type` is CXX (compiled by
 * NVRTC), PTX (assembled through the linker: nvJitLink, else the driver) or NVVM
 * (libNVVM). `code_size` 0 means `code` is a NUL-terminated string (NVVM
 * bitcode needs its size). The code and options are copied. No compiler runs
 * yet: NVRTC is first called by a compile that misses the cache.
 * Errors: INVALID_ARGUMENT (NULL code or out, unknown code type, bad
 * struct_size, a NULL string inside an array with a non-zero count, an option
 * that does not apply to the code type), NOT_SUPPORTED (the compiler for
 * `code_type` is not installed), NO_DRIVER/NO_DEVICE (arch NULL and no device
 * to take it from), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_program_create(const void *code, size_t code_size,
                                                 cucore_code_type_t code_type,
                                                 const cucore_program_options_t *options,
                                                 cucore_program_t **program);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_program_retain(cucore_program_t *program);

/* Drops a reference; the last one frees the program (object codes it produced
 * live on). NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_program_release(cucore_program_t *program);

/* Compiles the program to `target` and returns the result (+1 reference).
 * Targets: PTX, CUBIN or LTOIR for CXX; PTX or LTOIR for NVVM (CUBIN by
 * linking the PTX); CUBIN for PTX. `name_expressions` (may be NULL when
 * `name_expression_count` is 0) are C++ names such as "saxpy<float>" whose
 * lowered (mangled) names the object code keeps, so cucore_object_code_get_kernel
 * finds them by the expression. With `cache` (may be NULL), a hit returns the
 * cached code without running a compiler and a miss stores the result.
 * Compiles of one program are serialised; different programs compile in
 * parallel. The log of the last compile that ran is kept (cucore_program_log).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, a target the code type
 * cannot produce, a NULL name expression), COMPILATION (the message carries the
 * first lines of the log), NOT_SUPPORTED (compiler missing), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_program_compile(cucore_program_t *program, cucore_code_type_t target,
                                                  const char *const *name_expressions,
                                                  size_t name_expression_count,
                                                  cucore_program_cache_t *cache,
                                                  cucore_object_code_t **object_code);

/* Copies the log of the last compile that ran ("" before one, or after a cache
 * hit) into `buffer` (NUL-terminated, truncated to `capacity` - 1 characters;
 * `buffer` may be NULL when `capacity` is 0) and stores the whole log's length
 * (without the NUL) in `length` (may be NULL).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL buffer with capacity > 0). */
CUCORE_API cucore_status_t cucore_program_log(const cucore_program_t *program, char *buffer,
                                              size_t capacity, size_t *length);

/* What became of the precompiled header of the program's last NVRTC compile
 * (the `pch` or `create_pch` options): CREATED, NOT_ATTEMPTED, FAILED, or NONE
 * when no PCH was asked for, nothing was compiled yet (a cache hit compiles
 * nothing), the code is not C++, or NVRTC cannot report it. When NVRTC's PCH
 * heap is too small, the compile is retried once with the heap it asks for.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out). */
CUCORE_API cucore_status_t cucore_program_pch_status(const cucore_program_t *program, cucore_pch_status_t *status);

/* The program's code type. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_program_code_type(const cucore_program_t *program,
                                                    cucore_code_type_t *code_type);

/* The tool that compiles this program: NVRTC, NVVM, NVJITLINK or DRIVER.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_program_backend(const cucore_program_t *program,
                                                  cucore_compiler_backend_t *backend);

/* The architecture the program compiles for, e.g. "sm_90". Valid while the
 * program lives. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_program_arch(const cucore_program_t *program, const char **arch);

/* The NVRTC command line the options translate to, one flag per line
 * (NUL-terminated, truncated like cucore_program_log), for logs and tests.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL buffer with capacity > 0). */
CUCORE_API cucore_status_t cucore_program_flags(const cucore_program_t *program, char *buffer,
                                                size_t capacity, size_t *length);

/* The version of the installed compiler for `backend` (NVRTC, NVVM or
 * NVJITLINK) as major * 1000 + minor * 10, like CUDA_VERSION (NVVM: its IR
 * version major * 1000 + minor * 10).
 * Errors: INVALID_ARGUMENT (NULL, other backend), NOT_SUPPORTED (not installed). */
CUCORE_API cucore_status_t cucore_compiler_version(cucore_compiler_backend_t backend, int *version);

CUCORE_EXTERN_C_END

#endif /* CUCORE_PROGRAM_H */
