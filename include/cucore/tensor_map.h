/* libcucore: TensorMap (TMA) descriptors (cuda.core's TensorMapDescriptor).
 *
 * A descriptor tells the tensor memory accelerator of an sm_90 or newer GPU how
 * a tensor in global memory is laid out and which box of it one bulk copy
 * moves (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col,
 * cuTensorMapEncodeIm2colWide); kernels take it as a 128-byte, 64-byte aligned
 * `const __grid_constant__ CUtensorMap` parameter. A descriptor made over a
 * buffer holds that buffer's memory, so the buffer may be closed or released
 * first; one made over a raw address leaves the memory to its owner.
 *
 * Every rule the driver documents is checked before it is asked, and the
 * message names the rule: the rank (1..5; 3..5 with interleave and for
 * im2col), the global address alignment (16 bytes; 32 with interleave 32B or
 * the 16U4_ALIGN16B/16U6_ALIGN16B types), global dimensions (1..2^32; packed
 * types' multiples), global strides (multiples of 16, or 32 with interleave
 * 32B and the ALIGN16B types, below 2^40), box dimensions (1..256; the inner
 * box a multiple of 16 bytes without interleave; 128 for the ALIGN16B types;
 * within the swizzle span), element strides (1..8), interleave with swizzle,
 * the packed types' swizzles, NaN fill for float types only, and im2col's
 * pixel box corners, channels and pixels. A buffer's descriptor must also lie
 * within the buffer.
 *
 * One rule only the kernel can keep: the box's start coordinate in dimension 0
 * times the element size must be a multiple of 16 bytes. A bulk tensor copy
 * from another coordinate faults with CUDA_ERROR_ILLEGAL_INSTRUCTION, which
 * ends the context (measured on an H200, driver 580).
 */
#ifndef CUCORE_TENSOR_MAP_H
#define CUCORE_TENSOR_MAP_H

#include "common.h"

/* The most dimensions a tensor map describes. */
#define CUCORE_TENSOR_MAP_MAX_RANK 5
/* The size of a descriptor (a CUtensorMap) and the alignment it needs. */
#define CUCORE_TENSOR_MAP_SIZE 128
#define CUCORE_TENSOR_MAP_ALIGNMENT 64

/* The element type (CUtensorMapDataType; the value is the driver's + 1, since
 * 0 means unset here). */
typedef enum cucore_tensor_map_data_type {
    CUCORE_TENSOR_MAP_DATA_TYPE_UNSET = 0, /* not a type: a descriptor must name one */
    CUCORE_TENSOR_MAP_DATA_TYPE_UINT8 = 1,
    CUCORE_TENSOR_MAP_DATA_TYPE_UINT16 = 2,
    CUCORE_TENSOR_MAP_DATA_TYPE_UINT32 = 3,
    CUCORE_TENSOR_MAP_DATA_TYPE_INT32 = 4,
    CUCORE_TENSOR_MAP_DATA_TYPE_UINT64 = 5,
    CUCORE_TENSOR_MAP_DATA_TYPE_INT64 = 6,
    CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT16 = 7,
    CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32 = 8,
    CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT64 = 9,
    CUCORE_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 10,
    CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 11,
    CUCORE_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 12,
    CUCORE_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 13,
    /* Packed 4- and 6-bit values, 16 to a group; dimensions count values. */
    CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 14,  /* 16 x 4 bits in 8 bytes */
    CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 15, /* 16 x 4 bits in 16 bytes (8-byte gaps) */
    CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 16, /* 16 x 6 bits in 16 bytes (4-byte gaps) */
    CUCORE_TENSOR_MAP_DATA_TYPE_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_data_type_t;

/* Interleaved layouts (NC/8HWC8: 16 bytes, NC/16HWC16: 32 bytes). */
typedef enum cucore_tensor_map_interleave {
    CUCORE_TENSOR_MAP_INTERLEAVE_NONE = 0, /* the default */
    CUCORE_TENSOR_MAP_INTERLEAVE_16B = 1,
    CUCORE_TENSOR_MAP_INTERLEAVE_32B = 2,
    CUCORE_TENSOR_MAP_INTERLEAVE_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_interleave_t;

/* Shared-memory bank swizzling of the box. */
typedef enum cucore_tensor_map_swizzle {
    CUCORE_TENSOR_MAP_SWIZZLE_NONE = 0, /* the default */
    CUCORE_TENSOR_MAP_SWIZZLE_32B = 1,  /* 16-byte chunks within a 32-byte span */
    CUCORE_TENSOR_MAP_SWIZZLE_64B = 2,  /* 16-byte chunks within a 64-byte span */
    CUCORE_TENSOR_MAP_SWIZZLE_128B = 3, /* 16-byte chunks within a 128-byte span */
    CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4,         /* 32-byte chunks within 128 bytes */
    CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5, /* as ATOM_32B, 8-byte halves swapped every other row */
    CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6,         /* 64-byte chunks within 128 bytes */
    CUCORE_TENSOR_MAP_SWIZZLE_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_swizzle_t;

/* The granularity at which L2 fills requests from DRAM. */
typedef enum cucore_tensor_map_l2_promotion {
    CUCORE_TENSOR_MAP_L2_PROMOTION_NONE = 0, /* the default */
    CUCORE_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
    CUCORE_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
    CUCORE_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
    CUCORE_TENSOR_MAP_L2_PROMOTION_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_l2_promotion_t;

/* What an element outside the tensor reads. */
typedef enum cucore_tensor_map_oob_fill {
    CUCORE_TENSOR_MAP_OOB_FILL_NONE = 0, /* zero: the default */
    /* A NaN that FMA instructions treat as zero (floating-point types only, not the packed ones). */
    CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
    CUCORE_TENSOR_MAP_OOB_FILL_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_oob_fill_t;

/* How an im2col-wide descriptor loads along W. */
typedef enum cucore_tensor_map_im2col_wide_mode {
    CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W = 0,    /* pixels_per_column elements: the default */
    CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W128 = 1, /* 128 elements (pixels_per_column ignored) */
    CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_im2col_wide_mode_t;

/* The kind of a descriptor (which encode made it). */
typedef enum cucore_tensor_map_kind {
    CUCORE_TENSOR_MAP_KIND_TILED = 1,
    CUCORE_TENSOR_MAP_KIND_IM2COL = 2,
    CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE = 3,
    CUCORE_TENSOR_MAP_KIND_FORCE_INT32 = 0x7fffffff
} cucore_tensor_map_kind_t;

/* What a tensor is: its element type and shape. Required (no defaults but
 * where a field says so). Dimension 0 is the innermost (contiguous) one. */
typedef struct cucore_tensor_map_layout {
    uint32_t struct_size;
    cucore_tensor_map_data_type_t data_type;
    uint32_t rank;                                      /* 1..5 (3..5 for im2col) */
    uint64_t global_dim[CUCORE_TENSOR_MAP_MAX_RANK];    /* elements per dimension, 1..2^32 */
    uint64_t global_strides[4]; /* bytes from one index of dimension i+1 to the next (rank - 1 of them) */
} cucore_tensor_map_layout_t;

#define CUCORE_TENSOR_MAP_LAYOUT_INIT \
    {(uint32_t)sizeof(cucore_tensor_map_layout_t), CUCORE_TENSOR_MAP_DATA_TYPE_UNSET, 0, {0, 0, 0, 0, 0}, {0, 0, 0, 0}}

/* How a descriptor traverses and lays out what it copies. Zero is the default
 * of every field. */
typedef struct cucore_tensor_map_descriptor_options {
    uint32_t struct_size;
    uint32_t element_strides[CUCORE_TENSOR_MAP_MAX_RANK]; /* traversal step per dimension, 1..8; 0: 1 */
    cucore_tensor_map_interleave_t interleave;
    cucore_tensor_map_swizzle_t swizzle;
    cucore_tensor_map_l2_promotion_t l2_promotion;
    cucore_tensor_map_oob_fill_t oob_fill;
    cucore_tensor_map_im2col_wide_mode_t im2col_wide_mode; /* im2col-wide only */
} cucore_tensor_map_descriptor_options_t;

#define CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT                                                              \
    {(uint32_t)sizeof(cucore_tensor_map_descriptor_options_t), {0, 0, 0, 0, 0}, CUCORE_TENSOR_MAP_INTERLEAVE_NONE, \
     CUCORE_TENSOR_MAP_SWIZZLE_NONE, CUCORE_TENSOR_MAP_L2_PROMOTION_NONE, CUCORE_TENSOR_MAP_OOB_FILL_NONE,      \
     CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W}

CUCORE_EXTERN_C_BEGIN

/* Where every create takes the tensor: `buffer` (may be NULL) and `address`.
 * With a buffer, `address` 0 is the buffer's start, and any other address must
 * lie within the buffer; the descriptor holds the buffer's memory (+1 on its
 * allocation, not on the handle) and the tensor must end within it. Without a
 * buffer, `address` is a device address the caller keeps valid while the
 * descriptor is used. */

/* Creates a tiled descriptor (cuTensorMapEncodeTiled): boxes of `box_dim`
 * elements (`layout->rank` of them, each 1..256) of the tensor `layout`
 * describes, at `buffer`/`address` (above). NULL options: defaults. The result
 * is yours (+1).
 * Errors: INVALID_HANDLE (buffer), INVALID_ARGUMENT (NULL layout, box_dim or
 * out, bad struct_size, unknown enum values, each rule of this file's header
 * naming it, an address outside the buffer), INVALID_STATE (a closed buffer),
 * CUDA (the driver refused). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_create_tiled(
    cucore_buffer_t *buffer, uint64_t address, const cucore_tensor_map_layout_t *layout, const uint32_t *box_dim,
    const cucore_tensor_map_descriptor_options_t *options, cucore_tensor_map_descriptor_t **descriptor);

/* Creates an im2col descriptor (cuTensorMapEncodeIm2col) over an NWC, NHWC or
 * NDHWC tensor (rank 3, 4 or 5; dimension 0 is C). The pixel box corners are
 * `rank - 2` offsets each, in {D, H, W} order (the outermost spatial
 * dimension first): within [-32768, 32767] for rank 3, [-128, 127] for rank 4,
 * [-16, 15] for rank 5, and the box they bound must not be empty.
 * `channels_per_pixel` is 1..256 (128 for the ALIGN16B types),
 * `pixels_per_column` 1..1024. The result is yours (+1).
 * Errors: as cucore_tensor_map_descriptor_create_tiled (NULL corners too). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_create_im2col(
    cucore_buffer_t *buffer, uint64_t address, const cucore_tensor_map_layout_t *layout,
    const int32_t *pixel_box_lower_corner, const int32_t *pixel_box_upper_corner, uint32_t channels_per_pixel,
    uint32_t pixels_per_column, const cucore_tensor_map_descriptor_options_t *options,
    cucore_tensor_map_descriptor_t **descriptor);

/* Creates an im2col-wide descriptor (cuTensorMapEncodeIm2colWide, compute
 * capability 10.0; CUDA 12.8 drivers): as im2col, with the box bounded along
 * W only (offsets within [-32768, 32767]), options->im2col_wide_mode, and a
 * swizzle of 64B, 128B or 128B_ATOM_32B. The result is yours (+1).
 * Errors: as cucore_tensor_map_descriptor_create_im2col; NOT_SUPPORTED (a
 * driver without cuTensorMapEncodeIm2colWide). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_create_im2col_wide(
    cucore_buffer_t *buffer, uint64_t address, const cucore_tensor_map_layout_t *layout,
    int32_t pixel_box_lower_corner_width, int32_t pixel_box_upper_corner_width, uint32_t channels_per_pixel,
    uint32_t pixels_per_column, const cucore_tensor_map_descriptor_options_t *options,
    cucore_tensor_map_descriptor_t **descriptor);

/* Adds a reference to a descriptor. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_retain(cucore_tensor_map_descriptor_t *descriptor);

/* Drops a reference (NULL is a no-op); the last one lets go of the buffer's
 * memory. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_release(cucore_tensor_map_descriptor_t *descriptor);

/* Points the descriptor at another global address (cuTensorMapReplaceAddress),
 * `buffer`/`address` as at create, under the same alignment rule and, with a
 * buffer, the same fit; the descriptor then holds the new buffer (or none) and
 * lets go of the old. Do not replace while another thread launches with the
 * descriptor: the launch copies its bytes. `buffer` is borrowed.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (alignment, outside the buffer, a
 * tensor that does not fit), INVALID_STATE (a closed buffer), CUDA. */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_replace_address(cucore_tensor_map_descriptor_t *descriptor,
                                                                        cucore_buffer_t *buffer, uint64_t address);

/* The descriptor's 128 bytes, 64-byte aligned (CUCORE_TENSOR_MAP_SIZE,
 * CUCORE_TENSOR_MAP_ALIGNMENT): the kernel argument, passed to cucore_launch
 * as args[i] = *data, arg_sizes[i] = 128. Valid while the descriptor lives;
 * replace_address rewrites them in place.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_data(const cucore_tensor_map_descriptor_t *descriptor,
                                                             const void **data);

/* Copies the descriptor's 128 bytes into `bytes` (`size` must be at least
 * 128; any alignment). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, size
 * below 128). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_copy(const cucore_tensor_map_descriptor_t *descriptor,
                                                             void *bytes, size_t size);

/* The global address the descriptor reads and writes now.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_address(const cucore_tensor_map_descriptor_t *descriptor,
                                                                uint64_t *address);

/* Which encode made the descriptor. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out). */
CUCORE_API cucore_status_t cucore_tensor_map_descriptor_kind(const cucore_tensor_map_descriptor_t *descriptor,
                                                             cucore_tensor_map_kind_t *kind);

CUCORE_EXTERN_C_END

#endif /* CUCORE_TENSOR_MAP_H */
