#include "core/graph_attachments.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>
#include <vector>

#include "core/buffer.hpp"
#include "core/context.hpp"
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

// What enqueued work no longer needs once its streams have passed it (a graph's launches, a collective's
// buffers), dropped on the library's release thread. Each entry waits on an event recorded on its stream
// behind that work: an event costs the stream nothing, where a host function held it up until a host thread
// had run (measured on an H200 pair: +3.5% on a 1 GiB all-reduce, see docs/performance.md). The thread polls
// the entries' events, backing off while none is done. Leaked on purpose: entries may outlive static
// destructors at process exit.
// Puts the calling thread in the relaxed capture interaction mode for its scope (cuThreadExchangeStreamCaptureMode),
// so its driver calls never invalidate another thread's capture.
class RelaxedCapture {
  public:
    explicit RelaxedCapture(const driver::Table *api) noexcept : api_(api) {
        if (api_ && api_->cuThreadExchangeStreamCaptureMode &&
            api_->cuThreadExchangeStreamCaptureMode(&mode_) == CUDA_SUCCESS)
            exchanged_ = true;
    }
    ~RelaxedCapture() {
        if (exchanged_) api_->cuThreadExchangeStreamCaptureMode(&mode_);  // back to the caller's mode
    }
    RelaxedCapture(const RelaxedCapture &) = delete;
    RelaxedCapture &operator=(const RelaxedCapture &) = delete;

  private:
    const driver::Table *api_;
    CUstreamCaptureMode mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
    bool exchanged_ = false;
};

class ReleaseQueue {
  public:
    struct Entry {
        std::shared_ptr<void> *held;
        CUevent event;       // recorded behind the work; null: nothing to wait for
        CUcontext context;   // the event's
    };

    void push(const Entry &entry) noexcept {
        bool queued = false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            try {
                if (!started_) {
                    std::thread(&ReleaseQueue::run, this).detach();
                    started_ = true;
                }
                queue_.push_back(entry);
                queued = true;
            } catch (...) {
            }
        }
        if (queued) {
            ready_.notify_all();
        } else {
            // No memory or no thread: wait for the work here, the one place it can go.
            finish(entry, true);
        }
    }

    // Drops every entry whose work is done (without waiting for work still running), then waits for the
    // release thread's drops in progress, so counts of live objects are exact.
    void drain() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        std::vector<Entry> done = take_done(lock);
        dropping_ += done.size();
        lock.unlock();
        for (const Entry &entry : done) finish(entry, false);
        lock.lock();
        dropping_ -= done.size();
        idle_.notify_all();
        idle_.wait(lock, [this] { return dropping_ == 0; });
    }

  private:
    void run() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        std::chrono::microseconds backoff{20};
        for (;;) {
            ready_.wait(lock, [this] { return !queue_.empty(); });
            std::vector<Entry> done = take_done(lock);
            if (done.empty()) {
                ready_.wait_for(lock, backoff);  // nothing finished yet: look again soon, then less often
                backoff = std::min(backoff * 2, std::chrono::microseconds{2000});
                continue;
            }
            backoff = std::chrono::microseconds{20};
            dropping_ += done.size();
            lock.unlock();
            for (const Entry &entry : done) finish(entry, false);
            lock.lock();
            dropping_ -= done.size();
            idle_.notify_all();
        }
    }

    // The entries whose events have completed (or failed: the work is gone either way), out of the queue.
    // Called with the lock held; queries the driver (cheap, never blocking). The queries run in the relaxed
    // capture mode: in the default (global) mode an event query while another thread captures a stream would
    // invalidate that capture (seen on an H200: a graph builder's join failed with CAPTURE_INVALIDATED).
    std::vector<Entry> take_done(std::unique_lock<std::mutex> &) noexcept {
        std::vector<Entry> done;
        const driver::Table *api = driver::peek();
        if (queue_.empty()) return done;
        RelaxedCapture relaxed(api);
        for (auto it = queue_.begin(); it != queue_.end();) {
            bool finished = it->event == nullptr || api == nullptr || api->cuEventQuery == nullptr;
            if (!finished) {
                ScopedContext bind(it->context, ScopedContext::ReleasePath{"checking enqueued work's release event"});
                finished = api->cuEventQuery(it->event) != CUDA_ERROR_NOT_READY;
            }
            if (finished) {
                try {
                    done.push_back(*it);
                } catch (...) {
                    break;  // no memory: the rest waits for the next round
                }
                it = queue_.erase(it);
            } else {
                ++it;
            }
        }
        return done;
    }

    // Destroys the entry's event (after waiting for it when `wait`) and drops what it held.
    static void finish(const Entry &entry, bool wait) noexcept {
        if (entry.event) {
            RelaxedCapture relaxed(driver::peek());
            ScopedContext bind(entry.context, ScopedContext::ReleasePath{"releasing what enqueued work used"});
            if (wait)
                release_reported("cuEventSynchronize", "waiting for enqueued work before releasing what it used",
                                 [&entry](const driver::Table &api) { return api.cuEventSynchronize(entry.event); });
            release_reported("cuEventDestroy", "destroying a release event",
                             [&entry](const driver::Table &api) { return api.cuEventDestroy(entry.event); });
        }
        delete entry.held;  // releases kernels, buffers, events and closures' data
    }

    std::mutex mutex_;
    std::condition_variable ready_, idle_;
    std::deque<Entry> queue_;
    size_t dropping_ = 0;  // taken from the queue, being dropped
    bool started_ = false;
};

ReleaseQueue &release_queue() {
    static ReleaseQueue *queue = new ReleaseQueue;
    return *queue;
}

}  // namespace

void release_after(const std::vector<Ref<Stream>> &streams, std::shared_ptr<void> held) noexcept {
    for (const Ref<Stream> &stream : streams) {
        auto *copy = new (std::nothrow) std::shared_ptr<void>(held);
        if (!copy) {
            // No memory for the entry: wait for the stream instead, so nothing goes while its work may still run.
            release_reported("cuStreamSynchronize", "waiting for enqueued work before releasing what it used",
                             [&stream](const driver::Table &api) { return api.cuStreamSynchronize(stream->cu()); });
            continue;
        }
        CUevent event = nullptr;
        {
            ScopedContext bind(stream->cu_context(), ScopedContext::ReleasePath{"releasing what enqueued work used"});
            const driver::Table *api = driver::peek();
            // (Each entry point may be missing from an old driver: then no event, as when recording fails.)
            const bool recorded = api && api->cuEventCreate && api->cuEventRecord && api->cuEventQuery &&
                                  api->cuEventDestroy &&
                                  api->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
                                  api->cuEventRecord(event, stream->cu()) == CUDA_SUCCESS;
            if (!recorded) {
                // No event: wait for the stream instead, then let the entry go at once.
                if (event) api->cuEventDestroy(event);
                event = nullptr;
                release_reported("cuStreamSynchronize", "waiting for enqueued work before releasing what it used",
                                 [&stream](const driver::Table &a) { return a.cuStreamSynchronize(stream->cu()); });
            }
        }
        release_queue().push({copy, event, stream->cu_context()});
    }
    // `held` goes here: the last of its copies (here or on the release thread) releases it.
}

void drain_graph_releases() noexcept { release_queue().drain(); }

}  // namespace cucore::core
