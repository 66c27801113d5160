// Graph builders: graphs captured from the work enqueued on a stream.
//
// One capture spans the builder that began it (the root), the builders forked
// from it (each on its own stream, joined back before the root ends) and the
// builders of conditional bodies (capturing into a body graph of a conditional
// node, ended before the root ends). They share a CaptureState: the capture
// mode, the attachments the captured graph will hold (every builder's stream
// points at them while it captures, see Stream::capture_sink) and the count of
// forks and bodies still open.
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/graph.hpp"
#include "core/handle.hpp"
#include "core/stream.hpp"
#include "core/thread_cache.hpp"
#include "cucore/graph_builder.h"

namespace cucore::core {

class Device;

struct CaptureState {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    std::shared_ptr<GraphAttachments> attachments;
    std::shared_ptr<GraphHierarchy> hierarchy;
    std::mutex mutex;
    size_t open_forks = 0;
    size_t open_bodies = 0;
};

class GraphBuilder final : public Object, public Pooled<GraphBuilder> {
  public:
    enum class Role { root, fork, body };
    enum class State { idle, building, built, joined };

    static Ref<GraphBuilder> create(Ref<Stream> stream);
    static Ref<GraphBuilder> create_on_device(Device &device);

    GraphBuilder(Ref<Stream> stream, Role role) noexcept;
    ~GraphBuilder() override;  // a capture still going is ended and discarded

    Stream &stream() const noexcept { return *stream_; }
    const Ref<Stream> &stream_ref() const noexcept { return stream_; }
    bool building() const;

    void begin(cucore_capture_mode_t mode);
    void end();
    Ref<GraphDefinition> definition() const;
    std::vector<Ref<GraphBuilder>> split(size_t count);
    void join(const std::vector<GraphBuilder *> &others);
    uint64_t create_condition(uint32_t default_value, uint32_t flags);
    std::vector<Ref<GraphBuilder>> add_conditional(uint64_t condition, cucore_graph_conditional_type_t type,
                                                   size_t body_count);
    void embed(GraphBuilder &child);
    void callback(const HostClosure &closure);

  private:
    // The graph being captured and the nodes new work depends on (cuStreamGetCaptureInfo).
    struct CapturePoint {
        CUgraph graph = nullptr;
        const CUgraphNode *dependencies = nullptr;
        const CUgraphEdgeData *edges = nullptr;
        size_t count = 0;
    };
    CapturePoint capture_point() const;
    // After adding `node` to the capture by hand: new work on the stream depends on it.
    void advance_to(CUgraphNode node) const;
    void require_building(const char *what) const;
    void stop_capture() noexcept;  // the stream's sink cleared, a running capture ended and dropped

    Ref<Stream> stream_;
    Role role_;
    mutable std::mutex mutex_;
    State state_ = State::idle;
    std::shared_ptr<CaptureState> capture_;
    Ref<GraphBuilder> parent_;             // forks and bodies: the builder they came from
    Ref<GraphDefinition> definition_;      // once built (root only)
    CUgraph body_graph_ = nullptr;         // bodies: the graph they capture into
};

}  // namespace cucore::core
