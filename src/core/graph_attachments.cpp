#include "core/graph_attachments.hpp"

#include <condition_variable>
#include <deque>
#include <thread>

#include "core/buffer.hpp"
#include "core/stream.hpp"
#include "core/error.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "driver/driver.hpp"

namespace cucore::core {

void release_closure(const HostClosure &closure) noexcept {
    if (closure.release) closure.release(closure.user_data);
}

GraphAttachments::~GraphAttachments() {
    for (const HostClosure &closure : closures_) release_closure(closure);
    // objects_ go with the vector, each released in its own context by its destructor.
}

void GraphAttachments::keep(Ref<Object> object) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!objects_.empty() && objects_.back().get() == object.get()) return;  // a loop over one buffer
    objects_.push_back(std::move(object));
}

void GraphAttachments::keep_buffer(Buffer &buffer) {
    if (buffer.in_graph()) return;
    keep(Ref<Object>(&buffer));
}

void GraphAttachments::keep_closure(const HostClosure &closure) {
    if (!closure.release) return;
    std::lock_guard<std::mutex> lock(mutex_);
    closures_.push_back(closure);
}

void GraphAttachments::keep_attachments(std::shared_ptr<GraphAttachments> other) {
    if (!other || other.get() == this) return;
    std::lock_guard<std::mutex> lock(mutex_);
    others_.push_back(std::move(other));
}

void GraphAttachments::keep_kernel_node(CUgraphNode node, Ref<Object> kernel) {
    std::lock_guard<std::mutex> lock(mutex_);
    kernel_nodes_[node] = std::move(kernel);
}

Ref<Object> GraphAttachments::kernel_of(CUgraphNode node) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernel_nodes_.find(node);
    return it == kernel_nodes_.end() ? Ref<Object>() : it->second;
}

void GraphAttachments::forget_node(CUgraphNode node) {
    std::lock_guard<std::mutex> lock(mutex_);
    kernel_nodes_.erase(node);
}

std::vector<std::pair<CUgraphNode, Ref<Object>>> GraphAttachments::kernel_nodes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {kernel_nodes_.begin(), kernel_nodes_.end()};
}

void hold_kernel_for_capture(Stream &stream, Object &kernel) {
    GraphAttachments *sink = stream.capture_sink();
    if (__builtin_expect(sink == nullptr, 1)) return;
    sink->keep(Ref<Object>(&kernel));
    // The launch is the stream's only capture dependency now: that is its node.
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    CUgraph graph = nullptr;
    const CUgraphNode *dependencies = nullptr;
    const CUgraphEdgeData *edges = nullptr;
    size_t count = 0;
    ScopedContext bind(stream.cu_context(), stream.is_builtin());
    CUCORE_CALL(cuStreamGetCaptureInfo, stream.cu(), &status, &id, &graph, &dependencies, &edges, &count);
    if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE && count == 1)
        sink->keep_kernel_node(dependencies[0], Ref<Object>(&kernel));
}

namespace {

// The references the driver gave back (user objects' destructors), dropped on
// the library's release thread. Leaked on purpose: the driver may call the
// destructors while the process exits, after static destructors.
class ReleaseQueue {
  public:
    void push(std::shared_ptr<GraphAttachments> *held) noexcept {
        bool queued = false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            try {
                if (!started_) {
                    std::thread(&ReleaseQueue::run, this).detach();
                    started_ = true;
                }
                queue_.push_back(held);
                ++pending_;
                queued = true;
            } catch (...) {
            }
        }
        if (queued) {
            ready_.notify_all();
        } else {
            // No memory or no thread: drop it here (user object destructors run
            // outside the driver's API calls, where releasing works).
            delete held;
        }
    }

    // Drops what is queued on the calling thread, then waits for the release thread's work in progress.
    void drain() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!queue_.empty()) {
            std::shared_ptr<GraphAttachments> *held = queue_.front();
            queue_.pop_front();
            lock.unlock();
            delete held;
            lock.lock();
            if (--pending_ == 0) idle_.notify_all();
        }
        idle_.wait(lock, [this] { return pending_ == 0; });
    }

  private:
    void run() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            ready_.wait(lock, [this] { return !queue_.empty(); });
            std::shared_ptr<GraphAttachments> *held = queue_.front();
            queue_.pop_front();
            lock.unlock();
            delete held;  // releases kernels, buffers, events and closures' data
            lock.lock();
            if (--pending_ == 0) idle_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_, idle_;
    std::deque<std::shared_ptr<GraphAttachments> *> queue_;
    size_t pending_ = 0;  // queued or being dropped
    bool started_ = false;
};

ReleaseQueue &release_queue() {
    static ReleaseQueue *queue = new ReleaseQueue;
    return *queue;
}

void CUDA_CB destroy_user_object(void *held) {
    release_queue().push(static_cast<std::shared_ptr<GraphAttachments> *>(held));
}

}  // namespace

void attach_to_graph(CUgraph graph, const std::shared_ptr<GraphAttachments> &attachments) {
    auto *held = new std::shared_ptr<GraphAttachments>(attachments);
    auto owned_held = own(held, [](std::shared_ptr<GraphAttachments> *unused) noexcept { delete unused; });
    CUuserObject object = nullptr;
    CUCORE_CALL(cuUserObjectCreate, &object, held, &destroy_user_object, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
    owned_held.release();  // the user object's destructor deletes it from here
    // Moved into the graph: the graph's reference is then the only one.
    const CUresult result = CUCORE_DRIVER(cuGraphRetainUserObject)(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
    if (result != CUDA_SUCCESS) {
        release_reported("cuUserObjectRelease", "releasing a graph's user object that could not be attached",
                         [object](const driver::Table &api) { return api.cuUserObjectRelease(object, 1); });
        throw_cuda(result, "cuGraphRetainUserObject");
    }
}

void drain_graph_releases() noexcept { release_queue().drain(); }

}  // namespace cucore::core
