/* libcucore: strided (2D/3D) copies between buffers and host memory (cuMemcpy3DAsync).
 */
#ifndef CUCORE_COPY_3D_H
#define CUCORE_COPY_3D_H

#include "buffer.h"

/* One side of a strided (2D/3D) copy: `buffer` (then `host` must be NULL) or host
 * memory at `host` (then `buffer` must be NULL), laid out as rows of `pitch`
 * bytes and slices of `height` rows starting at byte `offset`; the copy starts
 * at byte x, row y, slice z of that layout. */
typedef struct cucore_memory_region {
    cucore_buffer_t *buffer;
    void *host;
    uint64_t offset;
    uint64_t pitch;   /* bytes per row; must be >= x + width */
    uint64_t height;  /* rows per slice; must be >= y + rows (3D copies) */
    uint64_t x;       /* bytes */
    uint64_t y;       /* rows */
    uint64_t z;       /* slices */
} cucore_memory_region_t;

/* A strided copy of `depth` slices of `rows` rows of `width` bytes. */
typedef struct cucore_copy_3d {
    uint32_t struct_size;
    uint32_t reserved0;      /* must be 0 */
    cucore_memory_region_t src;
    cucore_memory_region_t dst;
    uint64_t width;          /* bytes per row copied */
    uint64_t rows;           /* rows per slice copied (>= 1) */
    uint64_t depth;          /* slices copied (>= 1; 1 for a 2D copy) */
} cucore_copy_3d_t;

#define CUCORE_MEMORY_REGION_INIT {NULL, NULL, 0, 0, 0, 0, 0, 0}
#define CUCORE_COPY_3D_INIT \
    {(uint32_t)sizeof(cucore_copy_3d_t), 0, CUCORE_MEMORY_REGION_INIT, CUCORE_MEMORY_REGION_INIT, 0, 1, 1}

CUCORE_EXTERN_C_BEGIN

/* A 2D/3D strided copy (cuMemcpy3DAsync) ordered on `stream`; each side is a
 * buffer (the region is checked against its size) or host memory (not
 * checkable: the caller vouches for it). Pageable host memory behaves as in
 * cucore_buffer_copy_from_host.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, both or neither of buffer and
 * host on a side, x + width above pitch, y + rows above height for depth > 1,
 * a region outside its buffer, arithmetic overflow), INVALID_STATE (closed), CUDA. */
CUCORE_API cucore_status_t cucore_copy_3d(const cucore_copy_3d_t *copy, cucore_stream_t *stream);

CUCORE_EXTERN_C_END

#endif /* CUCORE_COPY_3D_H */
