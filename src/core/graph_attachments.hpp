// What graph nodes use, kept alive for as long as the driver needs it.
//
// A graph's nodes name library objects by their driver handles (a kernel's
// CUfunction, a buffer's address, an event) and host callbacks carry user
// data. The graph, its clones and child copies, the executable graphs made
// from it and their launches in flight all need those to live. The driver
// tracks exactly that set with user objects (cuUserObjectCreate +
// cuGraphRetainUserObject): clones, child copies and instantiations retain the
// user objects of their source, and a launch holds them until it completes.
// So each graph gets one user object owning a reference to its
// GraphAttachments; the driver's last release runs the user object's
// destructor, which may be on a driver thread where CUDA must not be called,
// so it only queues the reference, and the library's release thread drops it
// (and with it the kernels, buffers and callbacks' data, each released in its
// own context as usual).
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/handle.hpp"
#include "cucore/common.h"
#include "cucore/stream.h"

namespace cucore::core {

class Buffer;
class Stream;

// User data of a host callback and the function that releases it.
struct HostClosure {
    cucore_host_fn fn = nullptr;
    void *user_data = nullptr;
    cucore_release_fn release = nullptr;
};

class GraphAttachments {
  public:
    GraphAttachments() = default;
    ~GraphAttachments();  // releases the objects and runs the closures' release functions
    GraphAttachments(const GraphAttachments &) = delete;
    GraphAttachments &operator=(const GraphAttachments &) = delete;

    // Holds `object` (a second keep of the same object is not stored twice in a row).
    void keep(Ref<Object> object);
    // Holds the buffer, unless its memory is graph memory allocated on a
    // capturing stream (holding it would keep its free out of the graph).
    void keep_buffer(Buffer &buffer);
    // Takes over a closure's release (run when the attachments go).
    void keep_closure(const HostClosure &closure);
    // Holds another graph's attachments (a child graph copied into this one).
    void keep_attachments(std::shared_ptr<GraphAttachments> other);
    // Kernel nodes: the kernel object behind each (added or captured by the library).
    void keep_kernel_node(CUgraphNode node, Ref<Object> kernel);
    Ref<Object> kernel_of(CUgraphNode node);
    void forget_node(CUgraphNode node);
    std::vector<std::pair<CUgraphNode, Ref<Object>>> kernel_nodes();

  private:
    std::mutex mutex_;
    std::vector<Ref<Object>> objects_;
    std::vector<HostClosure> closures_;
    std::vector<std::shared_ptr<GraphAttachments>> others_;
    std::unordered_map<CUgraphNode, Ref<Object>> kernel_nodes_;
};

// A launch of `kernel` just enqueued on `stream`: while a graph builder
// captures it, the graph holds the kernel and knows it as its node's kernel.
void hold_kernel_for_capture(Stream &stream, Object &kernel);

// Makes a user object owning a reference to `attachments` and moves it into
// `graph` (which then keeps the attachments for itself and everything made
// from it).
void attach_to_graph(CUgraph graph, const std::shared_ptr<GraphAttachments> &attachments);

// Waits until every attachment reference the driver has given back so far is
// dropped (the release thread's queue is empty), so counts of live objects are
// exact. Cheap when nothing is queued.
void drain_graph_releases() noexcept;

// Runs a closure's release now (a create path that failed before the closure was attached).
void release_closure(const HostClosure &closure) noexcept;

}  // namespace cucore::core
