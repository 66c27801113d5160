/* libcucore: graphics interop (OpenGL).
 *
 * A graphics resource is a registration of a GL buffer, texture or renderbuffer
 * with CUDA (cuGraphicsGLRegisterBuffer / cuGraphicsGLRegisterImage). It owns the
 * registration: its last release (or cucore_graphics_resource_close) unregisters.
 * A mapping is an object: mapping a buffer gives a cucore_buffer_t, mapping an
 * image gives an opaque array or a mipmapped array (cucore/opaque_array.h), the
 * same types the library creates. The mapped object holds the resource, and
 * its last release unmaps on the stream it was mapped on, so unregistration can
 * only follow the unmap whatever order things are released in. A mapped buffer is
 * memory of no memory resource (cucore_buffer_memory_resource gives NULL, as for
 * foreign memory): its release, not a resource, ends the mapping.
 *
 * The library never links GL: GL objects are passed by name (GLuint) and target
 * (GLenum) as unsigned integers. A GL context must be current on the calling
 * thread to register (and, by the driver's documentation, to map, unmap and
 * unregister); it must be an NVIDIA GL context on the device's GPU.
 */
#ifndef CUCORE_GRAPHICS_H
#define CUCORE_GRAPHICS_H

#include "opaque_array.h"

/* Registration flags (bits; cuGraphicsRegisterFlags). An unknown bit is
 * CUCORE_ERROR_INVALID_ARGUMENT. */
typedef enum cucore_graphics_register_flag {
    CUCORE_GRAPHICS_REGISTER_NONE = 0,
    /* CUDA only reads the resource. */
    CUCORE_GRAPHICS_REGISTER_READ_ONLY = 1,
    /* CUDA overwrites every byte it maps; previous contents are undefined. */
    CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD = 2,
    /* Images only: the arrays may be bound as surfaces (surface load/store). */
    CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE = 4,
    /* Images only: texture gather on the mapped arrays. */
    CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER = 8,
    CUCORE_GRAPHICS_REGISTER_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_graphics_register_flag_t;

/* How CUDA will use one mapping (cuGraphicsResourceSetMapFlags, applied before
 * the map when it differs from the previous mapping's). */
typedef enum cucore_graphics_map_hint {
    CUCORE_GRAPHICS_MAP_HINT_NONE = 0,
    CUCORE_GRAPHICS_MAP_HINT_READ_ONLY = 1,
    CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD = 2,
    CUCORE_GRAPHICS_MAP_HINT_FORCE_INT32 = 0x7fffffff
} cucore_graphics_map_hint_t;

/* Which devices cucore_gl_get_devices lists (CUGLDeviceList). */
typedef enum cucore_gl_device_list {
    CUCORE_GL_DEVICES_ALL = 1,           /* every device of the current GL context */
    CUCORE_GL_DEVICES_CURRENT_FRAME = 2, /* the devices rendering the current frame (SLI) */
    CUCORE_GL_DEVICES_NEXT_FRAME = 3,    /* the devices rendering the next frame (SLI) */
    CUCORE_GL_DEVICE_LIST_FORCE_INT32 = 0x7fffffff
} cucore_gl_device_list_t;

CUCORE_EXTERN_C_BEGIN

/* ---- Registration ----------------------------------------------------------- */

/* Registers the GL buffer object `gl_name` (+1 reference to a new resource) in
 * `device`'s primary context, which the library binds for the call. `flags`:
 * cucore_graphics_register_flag_t bits (SURFACE_LOAD_STORE and TEXTURE_GATHER are
 * for images and refused here). The resource keeps a reference to the context.
 * Errors: INVALID_HANDLE (device), INVALID_ARGUMENT (NULL out, unknown bits,
 * READ_ONLY with WRITE_DISCARD, image-only flags), CUDA with a message saying which: not a buffer of the current GL context
 * or no GL context current, a GL context of another GPU, a GL context that is not
 * NVIDIA's. */
CUCORE_API cucore_status_t cucore_graphics_resource_from_gl_buffer(cucore_device_t *device, uint32_t gl_name,
                                                                   uint32_t flags,
                                                                   cucore_graphics_resource_t **resource);

/* Registers the GL texture or renderbuffer `gl_name` of target `gl_target`
 * (GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, GL_TEXTURE_3D,
 * GL_TEXTURE_2D_ARRAY, GL_RENDERBUFFER) as for cucore_graphics_resource_from_gl_buffer.
 * Its mappings are arrays (cucore_graphics_resource_map_array), never pointers.
 * Errors: as cucore_graphics_resource_from_gl_buffer; an unsupported format or
 * target is CUDA with the driver's code in the message. */
CUCORE_API cucore_status_t cucore_graphics_resource_from_gl_image(cucore_device_t *device, uint32_t gl_name,
                                                                  uint32_t gl_target, uint32_t flags,
                                                                  cucore_graphics_resource_t **resource);

/* Reference counting. The last release unregisters (errors reported through the
 * release-error handler). A live mapping holds its own reference, so the
 * registration outlives it. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_graphics_resource_retain(cucore_graphics_resource_t *resource);
CUCORE_API cucore_status_t cucore_graphics_resource_release(cucore_graphics_resource_t *resource);

/* ---- Mapping ------------------------------------------------------------------ */

/* Maps a registered GL buffer on `stream` and returns its memory as a buffer (+1
 * reference) of no memory resource (cucore_buffer_memory_resource gives NULL). The
 * buffer (and its views) hold the mapping and the resource: the last of them
 * released unmaps on `stream` (or on the buffer's deallocation stream if it was
 * changed), then the resource may unregister. `hint`:
 * cucore_graphics_map_hint_t. One mapping at a time.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, unknown hint),
 * INVALID_STATE (already mapped, closed, an image: use map_array), CUDA. */
CUCORE_API cucore_status_t cucore_graphics_resource_map(cucore_graphics_resource_t *resource,
                                                        cucore_stream_t *stream, uint32_t hint,
                                                        cucore_buffer_t **buffer);

/* Maps several registered GL buffers in one driver call (cuGraphicsMapResources
 * with a count) on `stream`; buffers[i] (+1 reference each) is resources[i]'s
 * mapping, which behaves as one from cucore_graphics_resource_map (hint NONE): its
 * release unmaps it alone; cucore_graphics_resources_unmap unmaps them all in one
 * call. All resources must belong to one context and appear once.
 * On failure nothing stays mapped and every buffers[i] is NULL.
 * Errors: INVALID_HANDLE (any resource, stream), INVALID_ARGUMENT (NULL arrays,
 * count 0, a resource twice, resources of two contexts), INVALID_STATE (as map),
 * CUDA. */
CUCORE_API cucore_status_t cucore_graphics_resources_map(cucore_graphics_resource_t *const *resources,
                                                         uint32_t count, cucore_stream_t *stream,
                                                         cucore_buffer_t **buffers);

/* Unmaps several mapped resources (buffers or images) in one driver call
 * (cuGraphicsUnmapResources with a count) on `stream`, or, when `stream` is NULL,
 * on the stream they were all mapped on. Their mapped buffers are closed (size 0)
 * and their mapped arrays become unusable, as after cucore_graphics_resource_unmap;
 * later releases of them do nothing more. The batch counterpart of
 * cucore_graphics_resources_map: releasing the buffers of a batch one by one
 * unmaps them one call each. Nothing is unmapped when a check fails.
 * Errors: INVALID_HANDLE (any resource, stream), INVALID_ARGUMENT (NULL array,
 * count 0, a resource twice, resources of two contexts, NULL stream for resources
 * mapped on different streams), INVALID_STATE (resources[i] not mapped or closed:
 * the message names i), CUDA (the resources count as unmapped anyway). */
CUCORE_API cucore_status_t cucore_graphics_resources_unmap(cucore_graphics_resource_t *const *resources,
                                                           uint32_t count, cucore_stream_t *stream);

/* Maps a registered GL image on `stream` and returns the CUDA array of one of its
 * sub-resources (`array_index`: the cube face or layer, `mip_level`) as an
 * opaque array (+1 reference) that holds the mapping; the last holder of the
 * mapping (the array, its texture and surface objects) unmaps on `stream`. The
 * array is not owned (the driver frees it with the mapping) and is usable
 * everywhere an array is until the resource is unmapped or closed, after which
 * calls on it are INVALID_STATE.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out, unknown hint), INVALID_STATE
 * (already mapped, closed, a buffer: use map), CUDA (no such sub-resource),
 * NOT_SUPPORTED (a format this library does not offer). */
CUCORE_API cucore_status_t cucore_graphics_resource_map_array(cucore_graphics_resource_t *resource,
                                                              cucore_stream_t *stream, uint32_t hint,
                                                              uint32_t array_index, uint32_t mip_level,
                                                              cucore_opaque_array_t **array);

/* As cucore_graphics_resource_map_array for the whole image as a mipmapped array
 * (cuGraphicsResourceGetMappedMipmappedArray) that holds the mapping; its
 * levels (cucore_mipmapped_array_level) hold it too. Errors: as map_array. */
CUCORE_API cucore_status_t cucore_graphics_resource_map_mipmapped_array(cucore_graphics_resource_t *resource,
                                                                        cucore_stream_t *stream, uint32_t hint,
                                                                        cucore_mipmapped_array_t **mipmapped_array);

/* Unmaps now, on `stream` when given (the override), else on the mapping's
 * stream. The mapped buffer is closed (size 0); views of it and mapped arrays must
 * not be used afterwards (their later release does nothing more).
 * Errors: INVALID_HANDLE, INVALID_STATE (not mapped, closed), CUDA (the resource
 * is considered unmapped anyway). */
CUCORE_API cucore_status_t cucore_graphics_resource_unmap(cucore_graphics_resource_t *resource,
                                                          cucore_stream_t *stream);

/* Whether the resource is mapped now (1) or not (0, also after close).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out). */
CUCORE_API cucore_status_t cucore_graphics_resource_is_mapped(const cucore_graphics_resource_t *resource,
                                                              int *is_mapped);

/* Unmaps if mapped (on `stream`, or the mapping's stream when NULL), then
 * unregisters now. Idempotent; the handle stays valid until released, and every
 * other call on it then fails with INVALID_STATE.
 * Errors: INVALID_HANDLE, CUDA (the driver refused the unregistration: the
 * registration is gone anyway). When the resource's context cannot be made
 * current, nothing is unregistered and the resource stays open: the error is
 * returned and a later close (or the last release) unregisters. */
CUCORE_API cucore_status_t cucore_graphics_resource_close(cucore_graphics_resource_t *resource,
                                                          cucore_stream_t *stream);

/* The raw CUgraphicsResource (borrowed; NULL after close).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out). */
CUCORE_API cucore_status_t cucore_graphics_resource_handle(const cucore_graphics_resource_t *resource,
                                                           void **cu_graphics_resource);

/* ---- GL devices --------------------------------------------------------------- */

/* The CUDA device ordinals of the GL context current on this thread
 * (cuGLGetDevices): `*count` receives how many there are; up to `capacity` of
 * them are written to `ordinals` (which may be NULL when capacity is 0).
 * Errors: INVALID_ARGUMENT (NULL count, NULL ordinals with capacity > 0, unknown
 * list), CUDA (no current GL context, or one that is not NVIDIA's: the message
 * says so). */
CUCORE_API cucore_status_t cucore_gl_get_devices(uint32_t device_list, int *ordinals, uint32_t capacity,
                                                 uint32_t *count);

CUCORE_EXTERN_C_END

#endif /* CUCORE_GRAPHICS_H */
