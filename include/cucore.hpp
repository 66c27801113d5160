// libcucore: the C++ façade (header-only, C++17) over the C ABI of cucore.h.
//
//   #include <cucore.hpp>
//   cucore::Device dev(0);
//   cucore::Stream s = dev.create_stream();
//   s.launch_host_func([&] { done = true; });
//   cucore::Event e = s.record({/*timing_enabled=*/true});
//   e.synchronize();
//   cucore::Buffer buf = dev.allocate(4096, s);   // the device's memory pool
//   buf.fill(std::uint32_t{0xdeadbeef}, s);
//   std::vector<std::uint32_t> host(1024);
//   buf.copy_to_host(host, s);
//   s.synchronize();
//
// Each class is exactly one C handle: copy = retain, move = steal, destructor =
// release (never throws); adopt()/release()/get() pass ownership to and from C.
// Failures throw cucore::Error (status(), cuda_result(), what()).
#ifndef CUCORE_HPP
#define CUCORE_HPP

#include "cucore.h"
// In dependency order: each header includes only those above it (docs/architecture.md).
#include "cucore/common.hpp"
#include "cucore/device.hpp"
#include "cucore/context.hpp"
#include "cucore/event.hpp"
#include "cucore/stream.hpp"
#include "cucore/device_resources.hpp"
#include "cucore/memory_resource.hpp"
#include "cucore/buffer.hpp"
#include "cucore/memory_pool.hpp"
#include "cucore/managed_memory.hpp"
#include "cucore/virtual_memory.hpp"
#include "cucore/user_memory.hpp"
#include "cucore/copy_3d.hpp"
#include "cucore/memory_operations.hpp"
#include "cucore/opaque_array.hpp"
#include "cucore/texture.hpp"
#include "cucore/tensor_map.hpp"
#include "cucore/ipc.hpp"
#include "cucore/dlpack.hpp"
#include "cucore/kernel.hpp"
#include "cucore/launch.hpp"
#include "cucore/graph_options.hpp"
#include "cucore/graph.hpp"
#include "cucore/graph_builder.hpp"
#include "cucore/graph_memory.hpp"
#include "cucore/program_cache.hpp"
#include "cucore/object_code.hpp"
#include "cucore/program.hpp"
#include "cucore/linker.hpp"
#include "cucore/graphics.hpp"
#include "cucore/system.hpp"
#include "cucore/checkpoint.hpp"
#include "cucore/communicator.hpp"

#endif // CUCORE_HPP
