/* libcucore: CUDA arrays (opaque arrays) and mipmapped arrays, and the copies
 * in and out of them.
 *
 * An opaque array is a hardware-laid-out allocation (CUarray) that kernels reach
 * only through texture and surface objects (cucore/texture.h); it has no device
 * address, so data moves in and out by copies: whole-array copies with buffers,
 * host memory and other arrays, and region copies (cucore_opaque_array_copy).
 * A mipmapped array (CUmipmappedArray) holds a chain of levels; each level is
 * an opaque array that keeps its mipmapped array alive.
 *
 * Arrays come from four places, and are the same type whatever their origin:
 * created by the library (destroyed when the last reference and every texture
 * or surface object over it are gone), a level of a mipmapped array, a foreign
 * CUarray wrapped without owning it, and the mapping of a GL image
 * (cucore_graphics_resource_map_array), which the array keeps mapped.
 *
 * Shapes are in elements. A BC (block-compressed) element is a texel; its data
 * moves in 4x4 blocks, so a packed BC row is a row of blocks and x, y and
 * extents of region copies are multiples of 4 (an extent may end at the
 * array's edge).
 */
#ifndef CUCORE_OPAQUE_ARRAY_H
#define CUCORE_OPAQUE_ARRAY_H

#include "copy_3d.h"

/* An array's element format. The values are the driver's CUarray_format
 * values. Planar and packed YUV formats (NV12, P010, ...) are not offered: the
 * driver refuses them for these arrays. */
typedef enum cucore_array_format {
    CUCORE_ARRAY_FORMAT_UNSET = 0, /* not a format: options must name one */
    CUCORE_ARRAY_FORMAT_UINT8 = 0x01,
    CUCORE_ARRAY_FORMAT_UINT16 = 0x02,
    CUCORE_ARRAY_FORMAT_UINT32 = 0x03,
    CUCORE_ARRAY_FORMAT_INT8 = 0x08,
    CUCORE_ARRAY_FORMAT_INT16 = 0x09,
    CUCORE_ARRAY_FORMAT_INT32 = 0x0a,
    CUCORE_ARRAY_FORMAT_FLOAT16 = 0x10,
    CUCORE_ARRAY_FORMAT_FLOAT32 = 0x20,
    /* 4 channels, R10G10B10A2 packed in 4 bytes, read normalized. */
    CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2 = 0x50,
    /* Block-compressed (4x4 texel blocks of 8 bytes: BC1, BC4; of 16 bytes: the
     * others); 2D, 3D and layered only, never surface load/store. The _SRGB
     * formats are sampled only by texture objects with srgb set. */
    CUCORE_ARRAY_FORMAT_BC1_UNORM = 0x91,      /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB = 0x92, /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC2_UNORM = 0x93,      /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC2_UNORM_SRGB = 0x94, /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC3_UNORM = 0x95,      /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC3_UNORM_SRGB = 0x96, /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC4_UNORM = 0x97,      /* 1 channel */
    CUCORE_ARRAY_FORMAT_BC4_SNORM = 0x98,      /* 1 channel */
    CUCORE_ARRAY_FORMAT_BC5_UNORM = 0x99,      /* 2 channels */
    CUCORE_ARRAY_FORMAT_BC5_SNORM = 0x9a,      /* 2 channels */
    CUCORE_ARRAY_FORMAT_BC6H_UF16 = 0x9b,      /* 3 channels */
    CUCORE_ARRAY_FORMAT_BC6H_SF16 = 0x9c,      /* 3 channels */
    CUCORE_ARRAY_FORMAT_BC7_UNORM = 0x9d,      /* 4 channels */
    CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB = 0x9e, /* 4 channels */
    /* Normalized integers with the channel count in the format. */
    CUCORE_ARRAY_FORMAT_UNORM_INT8X1 = 0xc0,
    CUCORE_ARRAY_FORMAT_UNORM_INT8X2 = 0xc1,
    CUCORE_ARRAY_FORMAT_UNORM_INT8X4 = 0xc2,
    CUCORE_ARRAY_FORMAT_UNORM_INT16X1 = 0xc3,
    CUCORE_ARRAY_FORMAT_UNORM_INT16X2 = 0xc4,
    CUCORE_ARRAY_FORMAT_UNORM_INT16X4 = 0xc5,
    CUCORE_ARRAY_FORMAT_SNORM_INT8X1 = 0xc6,
    CUCORE_ARRAY_FORMAT_SNORM_INT8X2 = 0xc7,
    CUCORE_ARRAY_FORMAT_SNORM_INT8X4 = 0xc8,
    CUCORE_ARRAY_FORMAT_SNORM_INT16X1 = 0xc9,
    CUCORE_ARRAY_FORMAT_SNORM_INT16X2 = 0xca,
    CUCORE_ARRAY_FORMAT_SNORM_INT16X4 = 0xcb,
    CUCORE_ARRAY_FORMAT_FORCE_INT32 = 0x7fffffff
} cucore_array_format_t;

/* How an array's extents are read. */
typedef enum cucore_array_kind {
    /* A 1D (height 0), 2D (depth 0) or 3D array: the default. */
    CUCORE_ARRAY_KIND_PLAIN = 0,
    /* `layers` layers of 1D (height 0) or 2D arrays; depth must be 0. */
    CUCORE_ARRAY_KIND_LAYERED = 1,
    /* Six square 2D faces (width == height; depth and layers 0), in the
     * driver's face order (+X, -X, +Y, -Y, +Z, -Z). */
    CUCORE_ARRAY_KIND_CUBEMAP = 2,
    /* `layers` cubemaps of six faces each (width == height; depth 0). */
    CUCORE_ARRAY_KIND_LAYERED_CUBEMAP = 3,
    CUCORE_ARRAY_KIND_FORCE_INT32 = 0x7fffffff
} cucore_array_kind_t;

/* What an array may be used for (bits). An unknown bit is INVALID_ARGUMENT. */
typedef enum cucore_array_flag {
    CUCORE_ARRAY_FLAG_NONE = 0,
    /* May back a surface object (kernel-side loads and stores). */
    CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE = 1,
    /* May be read with texture gather (2D arrays only). */
    CUCORE_ARRAY_FLAG_TEXTURE_GATHER = 2,
    /* A depth texture (the driver decides which formats and kinds it takes). */
    CUCORE_ARRAY_FLAG_DEPTH_TEXTURE = 4,
    /* A sparse array, whose tiles are backed by memory mapped later;
     * NOT_SUPPORTED where the device has no sparse arrays. */
    CUCORE_ARRAY_FLAG_SPARSE = 8,
    CUCORE_ARRAY_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_array_flag_t;

/* The description of an array to create. */
typedef struct cucore_opaque_array_options {
    uint32_t struct_size;
    cucore_array_format_t format; /* required */
    /* Channels per element: 1, 2 or 4 (3 only for BC6H). 0: the count the format
     * names (normalized, BC and 101010_2 formats), else 1. */
    uint32_t num_channels;
    cucore_array_kind_t kind;
    uint32_t flags;   /* cucore_array_flag_t bits */
    uint32_t reserved0; /* must be 0 */
    uint64_t width;   /* elements, >= 1 */
    uint64_t height;  /* elements; 0 for a 1D array (or 1D layers) */
    uint64_t depth;   /* elements; 0 unless the array is 3D */
    uint64_t layers;  /* LAYERED: layers; LAYERED_CUBEMAP: cubemaps; else 0 */
} cucore_opaque_array_options_t;

#define CUCORE_OPAQUE_ARRAY_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_opaque_array_options_t), CUCORE_ARRAY_FORMAT_UNSET, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 0, 0, 0, 0, 0}

/* What an array (or a mipmapped array: its level 0) is. */
typedef struct cucore_opaque_array_info {
    uint32_t struct_size;
    cucore_array_format_t format;
    uint32_t num_channels;
    /* Bytes per element (format size x channels); for a BC format, bytes per
     * 4x4 block. */
    uint32_t element_size;
    cucore_array_kind_t kind;
    uint32_t flags; /* cucore_array_flag_t bits */
    uint64_t width;  /* elements */
    uint64_t height; /* 0 for 1D */
    uint64_t depth;  /* 0 unless 3D */
    uint64_t layers; /* layers (LAYERED), cubemaps (LAYERED_CUBEMAP), else 0 */
    /* The array tightly packed, as whole-array copies read and write it: rows
     * of row_bytes (BC: rows of blocks), row_count rows per slice, slice_count
     * slices (3D depth, layers, 6 faces per cubemap; 1 otherwise). */
    uint64_t row_bytes;
    uint64_t row_count;
    uint64_t slice_count;
    uint64_t size_bytes; /* row_bytes x row_count x slice_count */
    int32_t device_ordinal;
    /* 1: created by the library, destroyed once unused; 0: a level of a
     * mipmapped array, a wrapped foreign array or a mapped GL image. */
    uint32_t is_owned;
    uint32_t num_levels; /* a mipmapped array's levels; 1 for an array */
    uint32_t reserved0;
} cucore_opaque_array_info_t;

#define CUCORE_OPAQUE_ARRAY_INFO_INIT \
    {(uint32_t)sizeof(cucore_opaque_array_info_t), CUCORE_ARRAY_FORMAT_UNSET, 0, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 0, 0, 0, 0, \
     0, 0, 0, 0, 0, 0, 0, 0}

/* Where in an array a region copy starts, in elements (BC: texels, multiples
 * of 4). `z` is the slice of a 3D array, the layer of a layered array, the
 * face of a cubemap, 6 x cubemap + face of a layered cubemap. */
typedef struct cucore_array_region {
    cucore_opaque_array_t *array;
    uint64_t x;
    uint64_t y;
    uint64_t z;
} cucore_array_region_t;

#define CUCORE_ARRAY_REGION_INIT {NULL, 0, 0, 0}

/* A region copy of width x height x depth elements. Each side is an array
 * region (when its *_array.array is set) or linear memory (its *_memory: a
 * buffer or host memory, laid out as in cucore_copy_3d, where a pitch of 0
 * means the row copied packed and a height of 0 the rows copied); at least one
 * side is an array. Between two arrays the element sizes must agree. */
typedef struct cucore_opaque_array_copy {
    uint32_t struct_size;
    uint32_t reserved0; /* must be 0 */
    cucore_array_region_t src_array;
    cucore_memory_region_t src_memory;
    cucore_array_region_t dst_array;
    cucore_memory_region_t dst_memory;
    uint64_t width;  /* elements per row (BC: texels) */
    uint64_t height; /* rows, >= 1 (1 for a 1D array) */
    uint64_t depth;  /* slices, layers or faces, >= 1 */
} cucore_opaque_array_copy_t;

#define CUCORE_OPAQUE_ARRAY_COPY_INIT                                                                             \
    {(uint32_t)sizeof(cucore_opaque_array_copy_t), 0, CUCORE_ARRAY_REGION_INIT, CUCORE_MEMORY_REGION_INIT,      \
     CUCORE_ARRAY_REGION_INIT, CUCORE_MEMORY_REGION_INIT, 0, 1, 1}

CUCORE_EXTERN_C_BEGIN

/* ---- Opaque arrays ---------------------------------------------------------- */

/* Creates an array (cuArray3DCreate) on `device` (+1 reference), in its primary
 * context. The shape is checked against the kind and format and against the
 * device's limits (maximum 1D/2D/3D/layered/cubemap extents, gather and surface
 * extents where those flags are set) before the driver is asked; the message
 * names the limit a shape exceeds.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL options or out, bad
 * struct_size, unset or unknown format, unknown kind or flag bits, a channel
 * count the format does not take, a shape the kind does not take, a limit
 * exceeded, a BC format in 1D or with SURFACE_LOAD_STORE), NOT_SUPPORTED
 * (SPARSE on a device without sparse arrays), OUT_OF_MEMORY, CUDA (the driver
 * refused the description: the message says which). */
CUCORE_API cucore_status_t cucore_opaque_array_create(cucore_device_t *device,
                                                      const cucore_opaque_array_options_t *options,
                                                      cucore_opaque_array_t **array);

/* Wraps a foreign CUarray of `device` without owning it (+1 reference); its
 * description is read from the driver. When the last reference (and every
 * texture or surface object over it) is gone, `on_release(user_data)` is called
 * if given (never when this call fails).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL cu_array or out), CUDA (not an
 * array), NOT_SUPPORTED (a format this library does not offer). */
CUCORE_API cucore_status_t cucore_opaque_array_from_handle(cucore_device_t *device, void *cu_array,
                                                           cucore_release_fn on_release, void *user_data,
                                                           cucore_opaque_array_t **array);

/* Reference counting. An array the library created is destroyed when its last
 * reference and every texture and surface object over it are gone; a level
 * holds its mipmapped array, a mapped GL image its mapping (the last holder
 * unmaps). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_opaque_array_retain(cucore_opaque_array_t *array);
CUCORE_API cucore_status_t cucore_opaque_array_release(cucore_opaque_array_t *array);

/* Lets go of the array now: it is destroyed at once unless texture or surface
 * objects still use it (then with the last of them). Idempotent; the handle
 * stays valid until released and every other call on it is INVALID_STATE.
 * Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_opaque_array_close(cucore_opaque_array_t *array);

/* The array's description. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, bad
 * struct_size), INVALID_STATE (closed, or a GL image that was unmapped). */
CUCORE_API cucore_status_t cucore_opaque_array_info(const cucore_opaque_array_t *array,
                                                    cucore_opaque_array_info_t *info);

/* The raw CUarray (borrowed; valid while the array is open).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), INVALID_STATE (as info). */
CUCORE_API cucore_status_t cucore_opaque_array_handle(const cucore_opaque_array_t *array, void **cu_array);

/* Whole-array copies, ordered on `stream`: the array's size_bytes (its packed
 * layout, cucore_opaque_array_info_t) from or to host memory of `size` bytes,
 * which must be at least size_bytes (host memory must stay valid until the
 * stream reaches the copy; pageable memory is copied as cuMemcpy3DAsync does).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL pointer, `size` below
 * size_bytes: the message names both), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_opaque_array_copy_from_host(cucore_opaque_array_t *array, const void *src,
                                                              uint64_t size, cucore_stream_t *stream);
CUCORE_API cucore_status_t cucore_opaque_array_copy_to_host(cucore_opaque_array_t *array, void *dst, uint64_t size,
                                                            cucore_stream_t *stream);

/* As above with a buffer, from its start, which must hold at least size_bytes.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (a buffer smaller than size_bytes:
 * the message names both), INVALID_STATE (closed array or buffer), CUDA. */
CUCORE_API cucore_status_t cucore_opaque_array_copy_from_buffer(cucore_opaque_array_t *array, cucore_buffer_t *buffer,
                                                                cucore_stream_t *stream);
CUCORE_API cucore_status_t cucore_opaque_array_copy_to_buffer(cucore_opaque_array_t *array, cucore_buffer_t *buffer,
                                                              cucore_stream_t *stream);

/* Copies all of `src` into `array`; both must have the same packed layout
 * (extents, slices and element size). Errors: INVALID_HANDLE, INVALID_ARGUMENT
 * (layouts differ: the message names both), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_opaque_array_copy_from_array(cucore_opaque_array_t *array,
                                                               cucore_opaque_array_t *src, cucore_stream_t *stream);

/* A region copy (cuMemcpy3DAsync) ordered on `stream`; every side is checked
 * against its array's extents or its buffer's size (host memory is the
 * caller's to vouch for).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL copy, bad struct_size, no
 * array side, both or neither of buffer and host on a memory side, a region
 * outside its array or buffer, BC offsets or extents off the 4x4 grid, element
 * sizes that differ, height above 1 for a 1D array, a zero extent, overflow),
 * INVALID_STATE (a closed array or buffer), CUDA. */
CUCORE_API cucore_status_t cucore_opaque_array_copy(const cucore_opaque_array_copy_t *copy, cucore_stream_t *stream);

/* ---- Mipmapped arrays -------------------------------------------------------- */

/* Creates a mipmapped array of `num_levels` levels (cuMipmappedArrayCreate) on
 * `device` (+1 reference); `options` describe level 0, as for
 * cucore_opaque_array_create. `num_levels` is 1 to 1 + floor(log2(largest
 * extent)). Errors: as cucore_opaque_array_create, and INVALID_ARGUMENT
 * (num_levels 0 or above the maximum, which the message names). */
CUCORE_API cucore_status_t cucore_mipmapped_array_create(cucore_device_t *device,
                                                         const cucore_opaque_array_options_t *options,
                                                         uint32_t num_levels,
                                                         cucore_mipmapped_array_t **mipmapped_array);

/* Wraps a foreign CUmipmappedArray of `device` without owning it (+1
 * reference), as cucore_opaque_array_from_handle; its level count is found by
 * asking the driver for levels until it refuses one.
 * Errors: as cucore_opaque_array_from_handle. */
CUCORE_API cucore_status_t cucore_mipmapped_array_from_handle(cucore_device_t *device, void *cu_mipmapped_array,
                                                              cucore_release_fn on_release, void *user_data,
                                                              cucore_mipmapped_array_t **mipmapped_array);

/* Reference counting; as for opaque arrays (levels and texture objects hold
 * the mipmapped array). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_mipmapped_array_retain(cucore_mipmapped_array_t *mipmapped_array);
CUCORE_API cucore_status_t cucore_mipmapped_array_release(cucore_mipmapped_array_t *mipmapped_array);

/* As cucore_opaque_array_close: destroyed now unless levels or texture objects
 * still use it. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_mipmapped_array_close(cucore_mipmapped_array_t *mipmapped_array);

/* Level 0's description with num_levels set. Errors: as cucore_opaque_array_info. */
CUCORE_API cucore_status_t cucore_mipmapped_array_info(const cucore_mipmapped_array_t *mipmapped_array,
                                                       cucore_opaque_array_info_t *info);

/* The raw CUmipmappedArray (borrowed). Errors: as cucore_opaque_array_handle. */
CUCORE_API cucore_status_t cucore_mipmapped_array_handle(const cucore_mipmapped_array_t *mipmapped_array,
                                                         void **cu_mipmapped_array);

/* Level `level` as an array (+1 reference) that is not owned and keeps the
 * mipmapped array alive (and, for a mapped GL image, its mapping).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, level >= num_levels: the
 * message names the count), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_mipmapped_array_level(cucore_mipmapped_array_t *mipmapped_array, uint32_t level,
                                                        cucore_opaque_array_t **array);

CUCORE_EXTERN_C_END

#endif /* CUCORE_OPAQUE_ARRAY_H */
