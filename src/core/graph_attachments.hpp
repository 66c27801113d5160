// What graph nodes use, kept alive for as long as the graphs' work needs it.
//
// A graph's nodes name library objects by their driver handles (a kernel's
// CUfunction, a buffer's address, an event) and host callbacks carry user
// data. Each definition holds one GraphAttachments; clones and definitions
// that copied it as a child graph hold it too, and every executable graph made
// from it holds it (with what its updates brought in). An executable released
// while launches may be in flight does not drop these at once: an event
// recorded on each stream it was launched on tells the library's release
// thread when the stream has passed them (release_after), so they outlive the
// work, and release order never matters. (Driver user objects
// would do the same inside the driver, but measured on the H100 they made
// every graph launch about 2 us slower; see docs/performance.md.)
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

// Releases `held` once every stream in `streams` has reached this point (an
// event recorded on each, which the release thread polls before dropping the
// last copy; an event, unlike a host function, does not hold the stream up):
// what enqueued work used outlives its handles until the work is done (graph
// launches, collectives). Where no event can be recorded, waits for the stream.
void release_after(const std::vector<Ref<Stream>> &streams, std::shared_ptr<void> held) noexcept;

// Drops what release_after holds for work that is done (its events have
// completed) and waits for the release thread's drops in progress, so counts
// of live objects are exact. Never waits for work still running.
void drain_graph_releases() noexcept;

// Runs a closure's release now (a create path that failed before the closure was attached).
void release_closure(const HostClosure &closure) noexcept;

}  // namespace cucore::core
