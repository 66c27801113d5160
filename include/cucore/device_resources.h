/* libcucore: the partitionable resources of a device and green contexts
 * (cuda.core's DeviceResources, SMResource, WorkqueueResource).
 *
 * A device, context or stream reports its SM and workqueue resources; SM
 * resources split into groups, and a context made from a set of resources (a
 * green context, context.h) runs its work only on them.
 *
 * Resources are plain descriptions: reading and splitting them allocates
 * nothing on the device. SM resources come from cuDeviceGetDevResource,
 * cuCtxGetDevResource or cuGreenCtxGetDevResource and split with
 * cuDevSmResourceSplitByCount. Workqueue resources (CUDA 13.1 drivers) are
 * answered NOT_SUPPORTED, with the reason, by older drivers.
 */
#ifndef CUCORE_DEVICE_RESOURCES_H
#define CUCORE_DEVICE_RESOURCES_H

#include "common.h"

/* What an SM resource holds (cuda.core's SMResource properties). */
typedef struct cucore_sm_resource_info {
    uint32_t struct_size;           /* set by CUCORE_SM_RESOURCE_INFO_INIT */
    uint32_t sm_count;              /* streaming multiprocessors in the resource */
    uint32_t min_partition_size;    /* the fewest SMs a group split from it may have */
    uint32_t coscheduled_alignment; /* a group's SM count is a multiple of this */
    uint32_t flags;                 /* the driver's flags of the resource (0 before CUDA 13.1) */
} cucore_sm_resource_info_t;

#define CUCORE_SM_RESOURCE_INFO_INIT {(uint32_t)sizeof(cucore_sm_resource_info_t), 0, 0, 0, 0}

/* Flags for cucore_sm_resource_split_options_t.flags (the driver's CUdevSmResourceSplit_flags). */
typedef enum cucore_sm_split_flag {
    CUCORE_SM_SPLIT_DEFAULT = 0,
    /* Treat every SM on its own, ignoring the GPU's processing clusters: smaller
     * groups (the minimum partition size and alignment no longer apply), at the
     * cost of large thread clusters. */
    CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING = 1,
    /* Compute capability 9.0+: groups that allow the largest thread clusters. */
    CUCORE_SM_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE = 2,
    CUCORE_SM_SPLIT_FLAG_FORCE_INT32 = 0x7fffffff
} cucore_sm_split_flag_t;

/* How cucore_sm_resource_split divides an SM resource: `group_count` groups of
 * `sm_count` SMs each, the rest going to the remainder. */
typedef struct cucore_sm_resource_split_options {
    uint32_t struct_size;
    /* SMs in each group; 0: the smallest group allowed (min_partition_size
     * rounded up to coscheduled_alignment). It must be at
     * least min_partition_size and a multiple of coscheduled_alignment (unless
     * CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING), and no more than the resource has. */
    uint32_t sm_count;
    /* Groups to make; 0: as many as fit (up to the caller's capacity). */
    uint32_t group_count;
    uint32_t flags; /* cucore_sm_split_flag_t bits */
} cucore_sm_resource_split_options_t;

#define CUCORE_SM_RESOURCE_SPLIT_OPTIONS_INIT {(uint32_t)sizeof(cucore_sm_resource_split_options_t), 0, 0, 0}

/* What a split makes (cucore_sm_resource_split_dry_run): every group has the same SM count. */
typedef struct cucore_sm_resource_split_info {
    uint32_t struct_size; /* set by CUCORE_SM_RESOURCE_SPLIT_INFO_INIT */
    uint32_t group_count;
    uint32_t group_sm_count;     /* SMs in each group */
    uint32_t remainder_sm_count; /* SMs left to the remainder */
} cucore_sm_resource_split_info_t;

#define CUCORE_SM_RESOURCE_SPLIT_INFO_INIT {(uint32_t)sizeof(cucore_sm_resource_split_info_t), 0, 0, 0}

/* How the workqueues of a green context are shared (the driver's
 * CUdevWorkqueueConfigScope; cuda.core's WorkqueueSharingScopeType). */
typedef enum cucore_workqueue_sharing_scope {
    CUCORE_WORKQUEUE_SHARING_SCOPE_UNSET = 0, /* options: leave it as it is */
    /* All contexts of the device share the workqueues (the driver's default). */
    CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX = 1,
    /* Where possible, workqueues not shared with other balanced green contexts. */
    CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED = 2,
    CUCORE_WORKQUEUE_SHARING_SCOPE_FORCE_INT32 = 0x7fffffff
} cucore_workqueue_sharing_scope_t;

/* What a workqueue resource holds (cuda.core's WorkqueueResource properties). */
typedef struct cucore_workqueue_resource_info {
    uint32_t struct_size; /* set by CUCORE_WORKQUEUE_RESOURCE_INFO_INIT */
    cucore_workqueue_sharing_scope_t sharing_scope;
    /* The expected most stream-ordered workloads at once (the driver's cap is
     * CUDA_DEVICE_MAX_CONNECTIONS). */
    uint32_t concurrency_limit;
} cucore_workqueue_resource_info_t;

#define CUCORE_WORKQUEUE_RESOURCE_INFO_INIT \
    {(uint32_t)sizeof(cucore_workqueue_resource_info_t), CUCORE_WORKQUEUE_SHARING_SCOPE_UNSET, 0}

/* What cucore_workqueue_resource_configure changes; a zero field leaves its value. */
typedef struct cucore_workqueue_resource_options {
    uint32_t struct_size;
    cucore_workqueue_sharing_scope_t sharing_scope;
    uint32_t concurrency_limit; /* at least 1 when set */
} cucore_workqueue_resource_options_t;

#define CUCORE_WORKQUEUE_RESOURCE_OPTIONS_INIT \
    {(uint32_t)sizeof(cucore_workqueue_resource_options_t), CUCORE_WORKQUEUE_SHARING_SCOPE_UNSET, 0}

CUCORE_EXTERN_C_BEGIN

/* The SM resource of `device`: all its SMs (cuDeviceGetDevResource; +1
 * reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL out),
 * NOT_SUPPORTED (a driver before CUDA 12.4), CUDA. */
CUCORE_API cucore_status_t cucore_sm_resource_of_device(cucore_device_t *device, cucore_sm_resource_t **resource);

/* The SM resource of `context`: its green context's SMs for a green context
 * (cuGreenCtxGetDevResource), else the device's (cuCtxGetDevResource; +1
 * reference). Errors: as cucore_sm_resource_of_device. */
CUCORE_API cucore_status_t cucore_sm_resource_of_context(cucore_context_t *context,
                                                         cucore_sm_resource_t **resource);

/* The SM resource of `stream`'s context (+1 reference). Errors: as cucore_sm_resource_of_device. */
CUCORE_API cucore_status_t cucore_sm_resource_of_stream(cucore_stream_t *stream, cucore_sm_resource_t **resource);

/* Fills `info` (whose struct_size the caller sets with
 * CUCORE_SM_RESOURCE_INFO_INIT; an older, smaller struct gets the fields it
 * has). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, bad struct_size). */
CUCORE_API cucore_status_t cucore_sm_resource_info(const cucore_sm_resource_t *resource,
                                                   cucore_sm_resource_info_t *info);

/* Splits `resource` into disjoint groups of options->sm_count SMs
 * (cuDevSmResourceSplitByCount). Writes up to `capacity` new group handles to
 * `groups` (each +1 reference) and their number to `group_count`; the SMs left
 * over go to `*remainder` (+1 reference, possibly of 0 SMs; NULL: not wanted).
 * With options->group_count set, exactly that many groups are made (it must not
 * exceed `capacity`), else as many as fit, up to `capacity`. Groups and a
 * remainder of one split may make one green context together; a group cannot
 * be split again (make a green context of it and split its resources).
 * On failure nothing is made and the outs read NULL/0.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, bad options, capacity 0, a
 * group count that does not fit in `capacity`, a group or remainder of an
 * earlier split, SM counts below the minimum partition size, not a multiple of
 * the alignment or more than the resource has, the rule named), CUDA. */
CUCORE_API cucore_status_t cucore_sm_resource_split(const cucore_sm_resource_t *resource,
                                                    const cucore_sm_resource_split_options_t *options,
                                                    cucore_sm_resource_t **groups, uint32_t capacity,
                                                    uint32_t *group_count, cucore_sm_resource_t **remainder);

/* What cucore_sm_resource_split would make with `options` (without limit of
 * capacity when options->group_count is 0), without making any handle.
 * Errors: as cucore_sm_resource_split. */
CUCORE_API cucore_status_t cucore_sm_resource_split_dry_run(const cucore_sm_resource_t *resource,
                                                            const cucore_sm_resource_split_options_t *options,
                                                            cucore_sm_resource_split_info_t *info);

/* Adds a reference to an SM resource. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_sm_resource_retain(cucore_sm_resource_t *resource);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_sm_resource_release(cucore_sm_resource_t *resource);

/* The workqueue configuration resource of `device` (cuDeviceGetDevResource with
 * CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG; +1 reference). Errors: INVALID_HANDLE,
 * INVALID_ARGUMENT (NULL out), NOT_SUPPORTED (a driver before CUDA 13.1, the
 * reason said), CUDA. */
CUCORE_API cucore_status_t cucore_workqueue_resource_of_device(cucore_device_t *device,
                                                               cucore_workqueue_resource_t **resource);

/* The workqueue configuration resource of `context` (its green context's for a
 * green context; +1 reference). Errors: as cucore_workqueue_resource_of_device. */
CUCORE_API cucore_status_t cucore_workqueue_resource_of_context(cucore_context_t *context,
                                                                cucore_workqueue_resource_t **resource);

/* The workqueue configuration resource of `stream`'s context (+1 reference).
 * Errors: as cucore_workqueue_resource_of_device. */
CUCORE_API cucore_status_t cucore_workqueue_resource_of_stream(cucore_stream_t *stream,
                                                               cucore_workqueue_resource_t **resource);

/* Fills `info` (struct_size set with CUCORE_WORKQUEUE_RESOURCE_INFO_INIT).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, bad struct_size). */
CUCORE_API cucore_status_t cucore_workqueue_resource_info(const cucore_workqueue_resource_t *resource,
                                                          cucore_workqueue_resource_info_t *info);

/* Changes the resource's sharing scope and concurrency limit in place (what a
 * green context made from it afterwards gets; contexts made before keep
 * theirs). NULL options change nothing. Errors: INVALID_HANDLE,
 * INVALID_ARGUMENT (bad struct_size, unknown scope). */
CUCORE_API cucore_status_t cucore_workqueue_resource_configure(cucore_workqueue_resource_t *resource,
                                                               const cucore_workqueue_resource_options_t *options);

/* The device the resource is of (+1 reference). Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL). */
CUCORE_API cucore_status_t cucore_workqueue_resource_device(const cucore_workqueue_resource_t *resource,
                                                            cucore_device_t **device);

/* Adds a reference to a workqueue resource. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_workqueue_resource_retain(cucore_workqueue_resource_t *resource);

/* Drops a reference (NULL is a no-op). Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_workqueue_resource_release(cucore_workqueue_resource_t *resource);

CUCORE_EXTERN_C_END

#endif /* CUCORE_DEVICE_RESOURCES_H */
