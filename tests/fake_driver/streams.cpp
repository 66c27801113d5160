// Streams and events. A stream is a queue of operations that run in order:
// on a worker thread of its own when the state says so (the shared library, so
// ordering, completion and timing behave as on a device), else at once on the
// calling thread (in-process, so each call's effects are there when it returns).
// Each context has a default stream, which the built-in handles name.
#include <thread>

#include "entry_points.hpp"
#include "graphs.hpp"
#include "state.hpp"

namespace fake::detail {

bool is_builtin(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

Event *as_event(CUevent e) {
    auto *event = reinterpret_cast<Event *>(e);
    return state().events.count(event) ? event : nullptr;
}

namespace {

Stream *as_stream(CUstream s) {
    auto *stream = reinterpret_cast<Stream *>(s);
    return state().streams.count(stream) ? stream : nullptr;
}

// Runs one operation; the lock is held on entry and on return.
void run(Lock &lock, Operation &op) {
    State &g = state();
    switch (op.kind) {
        case Operation::host:
            lock.unlock();
            op.fn(op.data);
            lock.lock();
            break;
        case Operation::record:
            if (op.timeline->completed < op.generation) {
                op.timeline->completed = op.generation;
                op.timeline->completed_ms = now_ms();
            }
            break;
        case Operation::wait:
            // At once, every record has completed already: nothing to wait for.
            if (g.worker_streams) g.changed.wait(lock, [&] { return op.timeline->completed >= op.generation; });
            break;
        case Operation::work: op.run(); break;
        case Operation::steps: op.run_steps(lock); break;
    }
}

void worker(Stream *stream) {
    State &g = state();
    Lock lock(g.mutex);
    for (;;) {
        g.changed.wait(lock, [&] { return !stream->queue.empty() || stream->destroyed; });
        if (stream->queue.empty()) break;
        run(lock, stream->queue.front());
        stream->queue.pop_front();
        g.changed.notify_all();
    }
    --g.live_workers;
    g.changed.notify_all();
}

Stream *new_stream(CUcontext context, unsigned flags, int priority) {
    State &g = state();
    g.stream_storage.push_back(std::make_unique<Stream>());
    Stream *stream = g.stream_storage.back().get();
    stream->context = context;
    stream->flags = flags;
    stream->priority = priority;
    if (g.worker_streams) {
        std::thread(worker, stream).detach();  // it ends once the stream is destroyed and drained
        ++g.live_workers;
    }
    return stream;
}

bool busy(CUcontext context) {
    for (auto &stream : state().stream_storage)
        if (!stream->queue.empty() && (!context || stream->context == context)) return true;
    return false;
}

}  // namespace

bool valid_stream_handle(CUstream s) { return is_builtin(s) || as_stream(s); }

Stream *resolve_stream(CUstream s, CUresult &error) {
    if (is_builtin(s)) {
        Context *context = as_context(t_current);
        if (!context) {
            error = CUDA_ERROR_INVALID_CONTEXT;
            return nullptr;
        }
        if (!context->default_stream) context->default_stream = new_stream(t_current, CU_STREAM_DEFAULT, 0);
        return context->default_stream;
    }
    Stream *stream = as_stream(s);
    if (!stream) error = CUDA_ERROR_INVALID_HANDLE;
    return stream;
}

void enqueue(Lock &lock, Stream &stream, Operation op) {
    State &g = state();
    if (!g.worker_streams) {
        run(lock, op);
        return;
    }
    stream.queue.push_back(std::move(op));
    g.changed.notify_all();
}

void enqueue_work(Lock &lock, Stream &stream, std::function<void()> work) {
    Operation op;
    op.kind = Operation::work;
    op.run = std::move(work);
    enqueue(lock, stream, std::move(op));
}

void wait_all_streams(Lock &lock) {
    state().changed.wait(lock, [] { return !busy(nullptr); });
}

CUresult f_cuCtxSynchronize() {
    Lock lock(state().mutex);
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    // It would wait for the context's capturing streams: their captures are invalidated.
    if (invalidate_captures_in(t_current) || unsafe_call_prohibited()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    const CUcontext context = t_current;
    state().changed.wait(lock, [&] { return !busy(context); });
    return CUDA_SUCCESS;
}

CUresult f_cuStreamCreateWithPriority(CUstream *stream, unsigned flags, int priority) {
    if (!stream || flags > CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    priority = priority < -5 ? -5 : (priority > 0 ? 0 : priority);
    Stream *created = new_stream(t_current, flags, priority);
    state().streams.insert(created);
    *stream = reinterpret_cast<CUstream>(created);
    return CUDA_SUCCESS;
}
CUresult f_cuStreamDestroy(CUstream stream) {
    Lock lock(state().mutex);
    Stream *s = as_stream(stream);
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    state().streams.erase(s);
    s->destroyed = true;  // its queued work still runs, as on a device
    state().changed.notify_all();
    return CUDA_SUCCESS;
}
CUresult f_cuStreamSynchronize(CUstream stream) {
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s && capture_of(*s)) return refuse_in_capture(*s);  // a capture cannot wait for itself
    if (s) state().changed.wait(lock, [&] { return s->queue.empty(); });
    return error;
}
CUresult f_cuStreamQuery(CUstream stream) {
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s && capture_of(*s)) return refuse_in_capture(*s);
    if (s && !s->queue.empty()) return CUDA_ERROR_NOT_READY;
    return error;
}
CUresult f_cuStreamWaitEvent(CUstream stream, CUevent event, unsigned) {
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    Event *e = as_event(event);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    // In a capture: a fork (an idle stream joins the capture) or a join.
    if (capture_of(*s) || captured_event(*e)) return capture_wait(*s, *e);
    if (e->timeline->recorded > e->timeline->completed) {
        Operation op;
        op.kind = Operation::wait;
        op.timeline = e->timeline;
        op.generation = e->timeline->recorded;
        enqueue(lock, *s, std::move(op));
    }
    return CUDA_SUCCESS;
}
CUresult f_cuStreamGetCtx(CUstream stream, CUcontext *context) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s) *context = s->context;
    return error;
}
CUresult f_cuStreamGetPriority(CUstream stream, int *priority) {
    if (!priority) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s) *priority = s->priority;
    return error;
}
CUresult f_cuStreamGetFlags(CUstream stream, unsigned *flags) {
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (s) *flags = s->flags;
    return error;
}
CUresult f_cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *data) {
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) {
        NodeParams params;
        params.type = CU_GRAPH_NODE_TYPE_HOST;
        params.host = {fn, data};
        return capture_node(*s, std::move(params));
    }
    Operation op;
    op.kind = Operation::host;
    op.fn = fn;
    op.data = data;
    enqueue(lock, *s, std::move(op));
    return CUDA_SUCCESS;
}

CUresult f_cuEventCreate(CUevent *event, unsigned flags) {
    if (!event || flags > (CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    if (!as_context(t_current)) return CUDA_ERROR_INVALID_CONTEXT;
    State &g = state();
    g.event_storage.push_back(std::make_unique<Event>());
    g.event_storage.back()->context = t_current;
    g.event_storage.back()->flags = flags;
    g.event_storage.back()->timeline = std::make_shared<Timeline>();
    g.events.insert(g.event_storage.back().get());
    *event = reinterpret_cast<CUevent>(g.event_storage.back().get());
    return CUDA_SUCCESS;
}
CUresult f_cuEventDestroy(CUevent event) {
    Lock lock(state().mutex);
    Event *e = as_event(event);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    state().events.erase(e);  // queued operations keep its timeline
    return CUDA_SUCCESS;
}
CUresult f_cuEventRecord(CUevent event, CUstream stream) {
    Lock lock(state().mutex);
    Event *e = as_event(event);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    CUresult error = CUDA_SUCCESS;
    Stream *s = resolve_stream(stream, error);
    if (!s) return error;
    if (capture_of(*s)) return capture_record(*s, *e);  // marks a point of the capture, runs nothing
    e->captured_in = nullptr;
    Operation op;
    op.kind = Operation::record;
    op.timeline = e->timeline;
    op.generation = ++e->timeline->recorded;
    enqueue(lock, *s, std::move(op));
    return CUDA_SUCCESS;
}
CUresult f_cuEventSynchronize(CUevent event) {
    Lock lock(state().mutex);
    Event *e = as_event(event);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if (captured_event(*e)) return refuse_captured_event(*e);
    const std::shared_ptr<Timeline> timeline = e->timeline;
    state().changed.wait(lock, [&] { return timeline->completed >= timeline->recorded; });
    return CUDA_SUCCESS;
}
CUresult f_cuEventQuery(CUevent event) {
    Lock lock(state().mutex);
    Event *e = as_event(event);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if (captured_event(*e)) return refuse_captured_event(*e);
    return e->timeline->completed < e->timeline->recorded ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
CUresult f_cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    Lock lock(state().mutex);
    Event *a = as_event(start);
    Event *b = as_event(end);
    if (!a || !b) return CUDA_ERROR_INVALID_HANDLE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->timeline->recorded || !b->timeline->recorded) return CUDA_ERROR_INVALID_HANDLE;
    if (a->timeline->completed < a->timeline->recorded || b->timeline->completed < b->timeline->recorded)
        return CUDA_ERROR_NOT_READY;
    *ms = static_cast<float>(b->timeline->completed_ms - a->timeline->completed_ms);
    return CUDA_SUCCESS;
}

}  // namespace fake::detail
