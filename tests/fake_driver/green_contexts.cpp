// Green contexts: device resources, SM splits, green contexts and their streams.
//
// Each fake device has kSmCount SMs, a minimum partition of kMinPartition SMs
// and an alignment of kAlignment (1 and 1 with
// CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING). A resource the fake hands
// out carries, in the driver's opaque padding of CUdevResource, a mark, its
// device and the split it came from, so that the driver's rules are checked
// as the driver checks them: only a whole resource splits, several SM
// resources of one descriptor come from one split, all of one device.
// Workqueue configuration resources (CUDA 13.1's type 1000) exist only while
// the fake reports a 13.1 driver (set_driver_version); a 13.0 one answers
// CUDA_ERROR_INVALID_RESOURCE_TYPE, as driver 580 does.
// A green context converts to a context the rest of the fake accepts; its
// streams are made in it, non-blocking only. Green contexts, like the fake's
// contexts, are kept across installs (library objects may still name them).
#include <cstring>
#include <deque>
#include <memory>

#include "entry_points.hpp"
#include "state.hpp"

namespace fake {

namespace detail {
namespace {

constexpr unsigned kSmCount = 16;
constexpr unsigned kMinPartition = 2;
constexpr unsigned kAlignment = 2;
constexpr unsigned kWorkqueueLimit = 8;  // CUDA_DEVICE_MAX_CONNECTIONS' default
constexpr int kWorkqueueConfig = 1000;   // CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG (CUDA 13.1)
constexpr uint32_t kMark = 0x47524e52;   // "GRNR"
constexpr size_t kUnion = 96;            // the union's offset in CUdevResource

// What the fake keeps in _internal_padding.
struct Mark {
    uint32_t mark;
    int device;
    uint64_t split;  // 0: a whole resource; else the split it came out of
};
struct WorkqueueConfig {
    CUdevice device;
    unsigned limit;
    int scope;
};

struct Descriptor {
    int device;
    unsigned sm_count;
    bool has_workqueue;
    WorkqueueConfig workqueue;
};
struct Green {
    int device;
    unsigned sm_count;
    bool has_workqueue;
    WorkqueueConfig workqueue;
    Context *converted;
    bool destroyed = false;
};

std::deque<Descriptor> g_descriptors;
std::deque<std::unique_ptr<Green>> g_greens;
std::deque<std::unique_ptr<Context>> g_converted;
uint64_t g_next_split = 1;
int g_live_greens = 0;
int g_violations = 0;

Mark mark_of(const CUdevResource &r) {
    Mark m;
    std::memcpy(&m, r._internal_padding, sizeof m);
    return m;
}
void set_mark(CUdevResource &r, int device, uint64_t split) {
    const Mark m{kMark, device, split};
    std::memcpy(r._internal_padding, &m, sizeof m);
}
WorkqueueConfig workqueue_of(const CUdevResource &r) {
    WorkqueueConfig w;
    std::memcpy(&w, reinterpret_cast<const unsigned char *>(&r) + kUnion, sizeof w);
    return w;
}
bool workqueues_known() { return state().driver_version >= 13010; }

void fill_sm(CUdevResource &r, int device, uint64_t split, unsigned count, bool ignore_coscheduling) {
    std::memset(&r, 0, sizeof r);
    r.type = CU_DEV_RESOURCE_TYPE_SM;
    r.sm.smCount = count;
    r.sm.minSmPartitionSize = ignore_coscheduling ? 1 : kMinPartition;
    r.sm.smCoscheduledAlignment = ignore_coscheduling ? 1 : kAlignment;
    set_mark(r, device, split);
}
void fill_workqueue(CUdevResource &r, int device, const WorkqueueConfig &config) {
    std::memset(&r, 0, sizeof r);
    r.type = static_cast<CUdevResourceType>(kWorkqueueConfig);
    std::memcpy(reinterpret_cast<unsigned char *>(&r) + kUnion, &config, sizeof config);
    set_mark(r, device, 0);
}

// The resources of a device (green == nullptr) or of a green context.
CUresult resource_of(int device, const Green *green, CUdevResource *resource, int type) {
    if (!resource) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_DEV_RESOURCE_TYPE_SM) {
        fill_sm(*resource, device, 0, green ? green->sm_count : kSmCount, false);
        return CUDA_SUCCESS;
    }
    if (type == kWorkqueueConfig && workqueues_known()) {
        const WorkqueueConfig config =
            green && green->has_workqueue ? green->workqueue : WorkqueueConfig{device, kWorkqueueLimit, 0};
        fill_workqueue(*resource, device, config);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_RESOURCE_TYPE;
}

Green *as_green(CUgreenCtx g) {
    for (auto &green : g_greens)
        if (reinterpret_cast<CUgreenCtx>(green.get()) == g) return green->destroyed ? nullptr : green.get();
    return nullptr;
}
Green *green_of_context(CUcontext c) {
    for (auto &green : g_greens)
        if (!green->destroyed && reinterpret_cast<CUcontext>(green->converted) == c) return green.get();
    return nullptr;
}

}  // namespace

CUresult f_cuDeviceGetDevResource(CUdevice device, CUdevResource *resource, CUdevResourceType type) {
    Lock lock(state().mutex);
    if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
    return resource_of(device, nullptr, resource, value_of(type));
}

CUresult f_cuCtxGetDevResource(CUcontext context, CUdevResource *resource, CUdevResourceType type) {
    Lock lock(state().mutex);
    Context *c = as_context(context);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    return resource_of(c->device, green_of_context(context), resource, value_of(type));
}

CUresult f_cuGreenCtxGetDevResource(CUgreenCtx context, CUdevResource *resource, CUdevResourceType type) {
    Lock lock(state().mutex);
    Green *green = as_green(context);
    if (!green) return CUDA_ERROR_INVALID_CONTEXT;
    return resource_of(green->device, green, resource, value_of(type));
}

CUresult f_cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *groups, const CUdevResource *input,
                                       CUdevResource *remaining, unsigned int flags, unsigned int min_count) {
    Lock lock(state().mutex);
    if (!groups || !input) return CUDA_ERROR_INVALID_VALUE;
    const Mark mark = mark_of(*input);
    if (mark.mark != kMark || value_of(input->type) != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    if (mark.split != 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;  // a split's output does not split again
    if (flags & ~unsigned(CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
                          CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE))
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned have = input->sm.smCount;
    if (min_count > have) return CUDA_ERROR_INVALID_VALUE;
    const bool ignore = flags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING;
    const unsigned minimum = ignore ? 1 : kMinPartition, alignment = ignore ? 1 : kAlignment;
    unsigned per_group = min_count < minimum ? minimum : min_count;
    per_group = (per_group + alignment - 1) / alignment * alignment;  // the driver rounds up
    const unsigned fit = have / per_group;
    if (!result) {
        *groups = fit;
        return CUDA_SUCCESS;
    }
    const unsigned made = *groups < fit ? *groups : fit;
    const uint64_t split = g_next_split++;
    for (unsigned i = 0; i < made; ++i) fill_sm(result[i], mark.device, split, per_group, ignore);
    if (remaining) fill_sm(*remaining, mark.device, split, have - made * per_group, ignore);
    *groups = made;
    return CUDA_SUCCESS;
}

CUresult f_cuDevResourceGenerateDesc(CUdevResourceDesc *desc, CUdevResource *resources, unsigned int count) {
    Lock lock(state().mutex);
    if (!desc || !resources || count == 0) return CUDA_ERROR_INVALID_VALUE;
    Descriptor d{-1, 0, false, {}};
    uint64_t split = 0;
    unsigned sm_resources = 0;
    for (unsigned i = 0; i < count; ++i) {
        const CUdevResource &r = resources[i];
        const Mark mark = mark_of(r);
        const int type = value_of(r.type);
        if (mark.mark != kMark) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
        if (d.device >= 0 && mark.device != d.device) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
        d.device = mark.device;
        if (type == CU_DEV_RESOURCE_TYPE_SM) {
            if (sm_resources++ > 0 && (mark.split == 0 || mark.split != split))
                return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;  // several SM resources: one split's
            split = mark.split;
            d.sm_count += r.sm.smCount;
        } else if (type == kWorkqueueConfig && workqueues_known()) {
            if (d.has_workqueue) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
            d.has_workqueue = true;
            d.workqueue = workqueue_of(r);
        } else {
            return CUDA_ERROR_INVALID_RESOURCE_TYPE;
        }
    }
    if (sm_resources == 0) d.sm_count = kSmCount;  // workqueues only: every SM
    g_descriptors.push_back(d);
    *desc = reinterpret_cast<CUdevResourceDesc>(&g_descriptors.back());
    return CUDA_SUCCESS;
}

CUresult f_cuGreenCtxCreate(CUgreenCtx *context, CUdevResourceDesc desc, CUdevice device, unsigned int flags) {
    Lock lock(state().mutex);
    if (!context || flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
    if (device < 0 || device >= state().devices) return CUDA_ERROR_INVALID_DEVICE;
    const Descriptor *d = nullptr;
    for (const Descriptor &known : g_descriptors)
        if (reinterpret_cast<CUdevResourceDesc>(const_cast<Descriptor *>(&known)) == desc) d = &known;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (d->device != device) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    g_converted.push_back(std::make_unique<Context>(Context{device, false, nullptr, {}}));
    state().contexts.insert(g_converted.back().get());
    auto green = std::make_unique<Green>(Green{device, d->sm_count, d->has_workqueue, d->workqueue,
                                               g_converted.back().get()});
    ++state().primary_refs.at(device);  // the driver retains the primary context for it
    ++g_live_greens;
    *context = reinterpret_cast<CUgreenCtx>(green.get());
    g_greens.push_back(std::move(green));
    return CUDA_SUCCESS;
}

CUresult f_cuGreenCtxDestroy(CUgreenCtx context) {
    Lock lock(state().mutex);
    Green *green = as_green(context);
    if (!green) return CUDA_ERROR_INVALID_CONTEXT;
    // The driver leaks streams still alive in it (and they fail afterwards): count it as misuse.
    for (Stream *stream : state().streams)
        if (stream->context == reinterpret_cast<CUcontext>(green->converted)) ++g_violations;
    for (Event *event : state().events)
        if (event->context == reinterpret_cast<CUcontext>(green->converted)) ++g_violations;
    state().contexts.erase(green->converted);  // the converted context goes with it
    if (t_current == reinterpret_cast<CUcontext>(green->converted)) t_current = nullptr;
    green->destroyed = true;
    --state().primary_refs.at(green->device);
    --g_live_greens;
    return CUDA_SUCCESS;
}

CUresult f_cuCtxFromGreenCtx(CUcontext *context, CUgreenCtx green_context) {
    Lock lock(state().mutex);
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    Green *green = as_green(green_context);
    if (!green) return CUDA_ERROR_INVALID_CONTEXT;
    *context = reinterpret_cast<CUcontext>(green->converted);
    return CUDA_SUCCESS;
}

CUresult f_cuGreenCtxStreamCreate(CUstream *stream, CUgreenCtx green_context, unsigned int flags, int priority) {
    CUcontext converted = nullptr;
    {
        Lock lock(state().mutex);
        if (!stream) return CUDA_ERROR_INVALID_VALUE;
        Green *green = as_green(green_context);
        if (!green) return CUDA_ERROR_INVALID_CONTEXT;
        if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;  // required
        converted = reinterpret_cast<CUcontext>(green->converted);
    }
    // A stream of the converted context, made as cuStreamCreateWithPriority makes one in it.
    const CUcontext previous = t_current;
    t_current = converted;
    const CUresult result = f_cuStreamCreateWithPriority(stream, flags, priority);
    t_current = previous;
    return result;
}

CUresult f_cuStreamGetGreenCtx(CUstream stream, CUgreenCtx *context) {
    if (!context) return CUDA_ERROR_INVALID_VALUE;
    CUcontext owner = nullptr;
    if (is_builtin(stream)) {
        owner = t_current;
    } else {
        const CUresult result = f_cuStreamGetCtx(stream, &owner);
        if (result != CUDA_SUCCESS) return result;
    }
    Lock lock(state().mutex);
    Green *green = green_of_context(owner);
    *context = reinterpret_cast<CUgreenCtx>(green);
    return CUDA_SUCCESS;
}

// libcucore records and waits on a green context's streams, never on the green context itself.
CUresult f_cuGreenCtxRecordEvent(CUgreenCtx, CUevent) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxWaitEvent(CUgreenCtx, CUevent) { return CUDA_ERROR_NOT_SUPPORTED; }

}  // namespace detail

int green_contexts() {
    detail::Lock lock(detail::state().mutex);
    return detail::g_live_greens;
}

int green_context_violations() {
    detail::Lock lock(detail::state().mutex);
    return detail::g_violations;
}

}  // namespace fake

// For the Python tests (libcucore_fake_cuda.so exports fake_cuda_*).
extern "C" __attribute__((visibility("default"))) int fake_cuda_live_green_contexts(void) {
    return fake::green_contexts();
}
extern "C" __attribute__((visibility("default"))) int fake_cuda_green_context_violations(void) {
    return fake::green_context_violations();
}
// A CUDA 13.1 driver (1: workqueue resources exist) or back to 13.0 (0).
extern "C" __attribute__((visibility("default"))) void fake_cuda_set_workqueue_driver(int on) {
    fake::set_driver_version(on ? 13010 : 13000);
}
