/* libcucore: the CUDA driver API made safe and pleasant, as a C ABI.
 *
 * The umbrella header: include this, or the capability headers under cucore/.
 * No CUDA header is needed to use it. Conventions: cucore/common.h and
 * docs/c_abi.md.
 */
#ifndef CUCORE_H
#define CUCORE_H

#include "cucore/common.h"
#include "cucore/device.h"
#include "cucore/context.h"
#include "cucore/device_resources.h"
#include "cucore/event.h"
#include "cucore/stream.h"
#include "cucore/memory_resource.h"
#include "cucore/buffer.h"
#include "cucore/memory_pool.h"
#include "cucore/managed_memory.h"
#include "cucore/virtual_memory.h"
#include "cucore/user_memory.h"
#include "cucore/copy_3d.h"
#include "cucore/memory_operations.h"
#include "cucore/ipc.h"
#include "cucore/dlpack.h"
#include "cucore/program.h"
#include "cucore/object_code.h"
#include "cucore/linker.h"
#include "cucore/program_cache.h"
#include "cucore/kernel.h"
#include "cucore/launch.h"
#include "cucore/opaque_array.h"
#include "cucore/texture.h"
#include "cucore/graph.h"
#include "cucore/graph_builder.h"
#include "cucore/graph_memory.h"
#include "cucore/graphics.h"
#include "cucore/tensor_map.h"
#include "cucore/system.h"
#include "cucore/checkpoint.h"
#include "cucore/communicator.h"

#endif /* CUCORE_H */
