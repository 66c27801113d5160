/* libcucore: the memory of graph allocation nodes (cuda.core's GraphMemoryResource).
 *
 * Graph allocations come from a per-device reserve the driver keeps for graphs;
 * a graph memory resource allocates from it while a stream is being captured
 * (graph_builder.h) and reports and trims that reserve.
 */
#ifndef CUCORE_GRAPH_MEMORY_H
#define CUCORE_GRAPH_MEMORY_H

#include "memory_resource.h"

/* Attributes of the graph memory of a device (the driver's CUgraphMem_attribute). */
typedef enum cucore_graph_memory_attribute {
    CUCORE_GRAPH_MEMORY_ATTRIBUTE_UNSET = 0,
    /* Memory graphs use now, and the most since the last reset. */
    CUCORE_GRAPH_MEMORY_USED_CURRENT = 1,
    CUCORE_GRAPH_MEMORY_USED_HIGH = 2,
    /* Memory reserved for graphs now, and the most since the last reset. */
    CUCORE_GRAPH_MEMORY_RESERVED_CURRENT = 3,
    CUCORE_GRAPH_MEMORY_RESERVED_HIGH = 4,
    CUCORE_GRAPH_MEMORY_ATTRIBUTE_FORCE_INT32 = 0x7fffffff
} cucore_graph_memory_attribute_t;

CUCORE_EXTERN_C_BEGIN

/* A memory resource for allocations inside graphs on `device` (+1 reference;
 * kind CUCORE_MEMORY_RESOURCE_GRAPH): it allocates only on a stream being
 * captured, each allocation becoming an allocation node and the buffer's
 * release (on a capturing stream) a free node. cucore_memory_resource_trim
 * gives unused graph memory of the device back to the system.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_graph_memory_resource_create(cucore_device_t *device,
                                                               cucore_memory_resource_t **resource);

/* An attribute of the graph memory of the resource's device, in bytes.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, unknown attribute, a
 * resource of another kind), CUDA. */
CUCORE_API cucore_status_t cucore_graph_memory_resource_attribute(const cucore_memory_resource_t *resource,
                                                                  cucore_graph_memory_attribute_t attribute,
                                                                  uint64_t *value);

/* Resets a high-water mark (USED_HIGH or RESERVED_HIGH) to the current value.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (another attribute or resource kind), CUDA. */
CUCORE_API cucore_status_t cucore_graph_memory_resource_reset_attribute(cucore_memory_resource_t *resource,
                                                                        cucore_graph_memory_attribute_t attribute);

CUCORE_EXTERN_C_END

#endif /* CUCORE_GRAPH_MEMORY_H */
