/* libcucore: texture and surface objects.
 *
 * A texture object (CUtexObject) reads a resource through the texture units:
 * an opaque array, a mipmapped array, linear memory (a buffer read as typed
 * elements) or pitched 2D memory (a buffer read as rows), with the sampling a
 * cucore_texture_object_options_t describes. A surface object (CUsurfObject)
 * loads and stores the elements of an opaque array created with
 * CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE. Both are kernel arguments by their
 * 64-bit handle (cucore_texture_object_handle, cucore_surface_object_handle),
 * and both keep their resource alive: an array closed or released, or a
 * buffer closed or released, lives on until the last object over it is gone.
 */
#ifndef CUCORE_TEXTURE_H
#define CUCORE_TEXTURE_H

#include "opaque_array.h"

/* What a resource descriptor describes. */
typedef enum cucore_resource_kind {
    CUCORE_RESOURCE_KIND_UNSET = 0, /* not a kind: a descriptor must name one */
    CUCORE_RESOURCE_KIND_OPAQUE_ARRAY = 1,
    CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY = 2,
    /* `size_bytes` of `buffer` read as 1D elements of `format` x `num_channels`
     * (tex1Dfetch: no filtering, no normalized coordinates). */
    CUCORE_RESOURCE_KIND_LINEAR = 3,
    /* `height` rows of `width` elements, `pitch_bytes` apart, in `buffer`. */
    CUCORE_RESOURCE_KIND_PITCH_2D = 4,
    CUCORE_RESOURCE_KIND_FORCE_INT32 = 0x7fffffff
} cucore_resource_kind_t;

/* The memory a texture or surface object reads: the fields of `kind` are used,
 * the others must be zero/NULL. A buffer's address must meet the device's
 * texture alignment, a pitch its texture pitch alignment (both checked before
 * the driver is asked). */
typedef struct cucore_resource_descriptor {
    uint32_t struct_size;
    cucore_resource_kind_t kind;
    cucore_opaque_array_t *array;                       /* OPAQUE_ARRAY */
    cucore_mipmapped_array_t *mipmapped_array;          /* MIPMAPPED_ARRAY */
    cucore_buffer_t *buffer;                            /* LINEAR, PITCH_2D */
    cucore_array_format_t format;                       /* LINEAR, PITCH_2D (not BC) */
    uint32_t num_channels;                              /* LINEAR, PITCH_2D; 0: as for arrays */
    uint64_t size_bytes; /* LINEAR: bytes read, a multiple of the element size; 0: the whole buffer */
    uint64_t width;      /* PITCH_2D: elements per row */
    uint64_t height;     /* PITCH_2D: rows */
    uint64_t pitch_bytes; /* PITCH_2D: bytes from a row to the next, >= width x element size */
} cucore_resource_descriptor_t;

#define CUCORE_RESOURCE_DESCRIPTOR_INIT \
    {(uint32_t)sizeof(cucore_resource_descriptor_t), CUCORE_RESOURCE_KIND_UNSET, NULL, NULL, NULL, CUCORE_ARRAY_FORMAT_UNSET, 0, 0, 0, 0, 0}

/* What a coordinate outside [0, extent) reads. */
typedef enum cucore_address_mode {
    CUCORE_ADDRESS_MODE_CLAMP = 0, /* the edge element: the default */
    CUCORE_ADDRESS_MODE_WRAP = 1,  /* repeats (normalized coordinates only) */
    CUCORE_ADDRESS_MODE_MIRROR = 2, /* repeats mirrored (normalized coordinates only) */
    CUCORE_ADDRESS_MODE_BORDER = 3, /* border_color */
    CUCORE_ADDRESS_MODE_FORCE_INT32 = 0x7fffffff
} cucore_address_mode_t;

/* How elements are combined at a coordinate (and between mipmap levels). */
typedef enum cucore_filter_mode {
    CUCORE_FILTER_MODE_POINT = 0,  /* the nearest element: the default */
    CUCORE_FILTER_MODE_LINEAR = 1, /* linear interpolation (float results only) */
    CUCORE_FILTER_MODE_FORCE_INT32 = 0x7fffffff
} cucore_filter_mode_t;

/* What a read returns for integer formats. */
typedef enum cucore_read_mode {
    CUCORE_READ_MODE_ELEMENT_TYPE = 0,     /* the element as stored: the default */
    CUCORE_READ_MODE_NORMALIZED_FLOAT = 1, /* 8- and 16-bit integers as floats in [0, 1] or [-1, 1] */
    CUCORE_READ_MODE_FORCE_INT32 = 0x7fffffff
} cucore_read_mode_t;

/* How a texture object samples (CUDA_TEXTURE_DESC). Zero is the default of
 * every field. */
typedef struct cucore_texture_object_options {
    uint32_t struct_size;
    cucore_address_mode_t address_mode[3]; /* per dimension (x, y, z) */
    cucore_filter_mode_t filter_mode;
    cucore_read_mode_t read_mode;
    uint32_t normalized_coords;              /* 0/1: coordinates in [0, 1) */
    uint32_t srgb;                           /* 0/1: sRGB to linear on read (required by the *_SRGB formats) */
    uint32_t disable_trilinear_optimization; /* 0/1 */
    uint32_t seamless_cubemap;               /* 0/1: cubemap resources only */
    uint32_t max_anisotropy;                 /* 0..16 */
    cucore_filter_mode_t mipmap_filter_mode;
    float mipmap_level_bias;
    float min_mipmap_level_clamp;
    float max_mipmap_level_clamp;
    float border_color[4]; /* what BORDER reads, per channel */
} cucore_texture_object_options_t;

#define CUCORE_TEXTURE_OBJECT_OPTIONS_INIT                                                                        \
    {(uint32_t)sizeof(cucore_texture_object_options_t),                                                           \
     {CUCORE_ADDRESS_MODE_CLAMP, CUCORE_ADDRESS_MODE_CLAMP, CUCORE_ADDRESS_MODE_CLAMP},                           \
     CUCORE_FILTER_MODE_POINT, CUCORE_READ_MODE_ELEMENT_TYPE, 0, 0, 0, 0, 0, CUCORE_FILTER_MODE_POINT, 0.0f, 0.0f, \
     0.0f, {0.0f, 0.0f, 0.0f, 0.0f}}

CUCORE_EXTERN_C_BEGIN

/* ---- Texture objects ---------------------------------------------------------- */

/* Creates a texture object (cuTexObjectCreate) over `resource` (+1 reference),
 * in the resource's device's primary context; it holds the resource's array,
 * mipmapped array or buffer memory until it is gone. `device` may be NULL (the
 * resource's device); given, it must be the resource's. NULL options: defaults.
 * Checked before the driver: the descriptor's fields for its kind, a linear
 * size within the buffer and a multiple of the element size, a pitched region
 * within the buffer, alignments, linear filtering of integer elements read as
 * ELEMENT_TYPE (integers cannot be interpolated), a *_SRGB format without
 * srgb, seamless_cubemap over a resource that is not a cubemap, anisotropy
 * above 16, mipmap fields that are not finite.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL resource or out, bad
 * struct_size, the checks above, a device that is not the resource's),
 * INVALID_STATE (a closed array or buffer), CUDA. */
CUCORE_API cucore_status_t cucore_texture_object_create(cucore_device_t *device,
                                                        const cucore_resource_descriptor_t *resource,
                                                        const cucore_texture_object_options_t *options,
                                                        cucore_texture_object_t **texture);

/* Reference counting; the last release destroys the texture object (then its
 * resource may go). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_texture_object_retain(cucore_texture_object_t *texture);
CUCORE_API cucore_status_t cucore_texture_object_release(cucore_texture_object_t *texture);

/* Destroys the texture object now and lets go of its resource. Idempotent;
 * the handle stays valid until released, and cucore_texture_object_handle is
 * then INVALID_STATE. Errors: INVALID_HANDLE, CUDA (the object is gone anyway). */
CUCORE_API cucore_status_t cucore_texture_object_close(cucore_texture_object_t *texture);

/* The CUtexObject, the kernel argument (an unsigned 64-bit value).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), INVALID_STATE (closed). */
CUCORE_API cucore_status_t cucore_texture_object_handle(const cucore_texture_object_t *texture, uint64_t *handle);

/* ---- Surface objects ---------------------------------------------------------- */

/* Creates a surface object (cuSurfObjectCreate) over an OPAQUE_ARRAY resource
 * whose array was created with CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE (+1
 * reference); it holds the array until it is gone. `device` as for textures.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, bad struct_size, another
 * resource kind, an array without SURFACE_LOAD_STORE: the message names the
 * flag), INVALID_STATE (a closed array), CUDA. */
CUCORE_API cucore_status_t cucore_surface_object_create(cucore_device_t *device,
                                                        const cucore_resource_descriptor_t *resource,
                                                        cucore_surface_object_t **surface);

/* Reference counting, as for texture objects. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_surface_object_retain(cucore_surface_object_t *surface);
CUCORE_API cucore_status_t cucore_surface_object_release(cucore_surface_object_t *surface);

/* As cucore_texture_object_close. */
CUCORE_API cucore_status_t cucore_surface_object_close(cucore_surface_object_t *surface);

/* The CUsurfObject, the kernel argument (an unsigned 64-bit value).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), INVALID_STATE (closed). */
CUCORE_API cucore_status_t cucore_surface_object_handle(const cucore_surface_object_t *surface, uint64_t *handle);

CUCORE_EXTERN_C_END

#endif /* CUCORE_TEXTURE_H */
