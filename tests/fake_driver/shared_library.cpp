// The fake as a libcuda.so.1 look-alike (libcucore_fake_cuda.so): libcucore
// loads it through CUCORE_CUDA_DRIVER_PATH and resolves every entry point with
// cuGetProcAddress_v2, as with the real driver; the Python tests' raw-driver
// helpers call the plain exported names, and read the fake through the
// fake_cuda_* functions below. Streams run on worker threads.
//
// Environment: FAKE_CUDA_DEVICES (default 2, at most 8) sets the number of
// devices; FAKE_CUDA_FAIL=<entry point>[:after] fails that entry point with
// CUDA_ERROR_UNKNOWN (read on every call: tests set and clear it), refusing
// the call, or after its work with ":after".
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "entry_points.hpp"
#include "state.hpp"
#include "table.hpp"

#define FAKE_CUDA_EXPORT __attribute__((visibility("default")))
// A C function exported as `symbol` (cuda.h renames several of the plain names by macro).
#define FAKE_CUDA_EXPORT_AS(symbol) __asm__(symbol) FAKE_CUDA_EXPORT

namespace {

using fake::table;

// Made when the library is loaded: a process has one fake driver.
const bool g_loaded = [] {
    const char *devices = std::getenv("FAKE_CUDA_DEVICES");
    const int n = devices ? std::atoi(devices) : 2;
    fake::detail::reset(std::clamp(n, 0, 8), /*worker_streams=*/true);
    return true;
}();

// What fake_cuda_last_launch() gives the Python tests (test_launch.py's FakeLaunch).
constexpr int kMaxAttributes = 8;
constexpr int kMaxParams = 32;
constexpr size_t kMaxParamBytes = 256;
struct LastLaunch {
    unsigned grid[3], block[3], shared_memory_bytes;
    void *stream;
    void *kernel;
    unsigned num_attrs;
    int attr_ids[kMaxAttributes];
    int attr_values[kMaxAttributes][3];  // a cluster's x, y, z; any other attribute's value in [0]
    size_t nparams;
    size_t sizes[kMaxParams];
    unsigned char args[kMaxParams][kMaxParamBytes];
    unsigned long long count;  // launches so far
};
LastLaunch g_last_launch;

// What fake_cuda_texture_object() gives the Python tests: the
// CUDA_RESOURCE_DESC and CUDA_TEXTURE_DESC a texture object was created with,
// flattened (fields of the resource's type set, the others zero).
struct TextureObject {
    int res_type;  // CUresourcetype
    int destroyed;
    void *array;      // ARRAY
    void *mipmapped;  // MIPMAPPED_ARRAY
    unsigned long long dev_ptr;  // LINEAR, PITCH2D
    int format;                  // LINEAR, PITCH2D (CUarray_format)
    unsigned num_channels;
    size_t size_in_bytes;             // LINEAR
    size_t width, height, pitch_in_bytes;  // PITCH2D
    int address_mode[3];
    int filter_mode;
    unsigned flags;  // CU_TRSF_*
    unsigned max_anisotropy;
    int mipmap_filter_mode;
    float mipmap_level_bias, min_mipmap_level_clamp, max_mipmap_level_clamp;
    float border_color[4];
};

void describe(const fake::TextureRecord &r, TextureObject &out) {
    out = TextureObject{};
    const CUDA_RESOURCE_DESC &res = r.resource;
    out.res_type = res.resType;
    out.destroyed = r.destroyed;
    if (res.resType == CU_RESOURCE_TYPE_ARRAY) {
        out.array = res.res.array.hArray;
    } else if (res.resType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) {
        out.mipmapped = res.res.mipmap.hMipmappedArray;
    } else if (res.resType == CU_RESOURCE_TYPE_LINEAR) {
        out.dev_ptr = res.res.linear.devPtr;
        out.format = res.res.linear.format;
        out.num_channels = res.res.linear.numChannels;
        out.size_in_bytes = res.res.linear.sizeInBytes;
    } else {
        out.dev_ptr = res.res.pitch2D.devPtr;
        out.format = res.res.pitch2D.format;
        out.num_channels = res.res.pitch2D.numChannels;
        out.width = res.res.pitch2D.width;
        out.height = res.res.pitch2D.height;
        out.pitch_in_bytes = res.res.pitch2D.pitchInBytes;
    }
    const CUDA_TEXTURE_DESC &t = r.texture;
    for (int i = 0; i < 3; ++i) out.address_mode[i] = t.addressMode[i];
    out.filter_mode = t.filterMode;
    out.flags = t.flags;
    out.max_anisotropy = t.maxAnisotropy;
    out.mipmap_filter_mode = t.mipmapFilterMode;
    out.mipmap_level_bias = t.mipmapLevelBias;
    out.min_mipmap_level_clamp = t.minMipmapLevelClamp;
    out.max_mipmap_level_clamp = t.maxMipmapLevelClamp;
    for (int i = 0; i < 4; ++i) out.border_color[i] = t.borderColor[i];
}

void describe(const fake::LaunchRecord &r, unsigned long long count, LastLaunch &out) {
    out = LastLaunch{};
    out.count = count;
    const CUlaunchConfig &c = r.config;
    out.grid[0] = c.gridDimX, out.grid[1] = c.gridDimY, out.grid[2] = c.gridDimZ;
    out.block[0] = c.blockDimX, out.block[1] = c.blockDimY, out.block[2] = c.blockDimZ;
    out.shared_memory_bytes = c.sharedMemBytes;
    out.stream = c.hStream;
    out.kernel = r.kernel;
    out.num_attrs = static_cast<unsigned>(std::min<size_t>(r.attributes.size(), kMaxAttributes));
    for (unsigned i = 0; i < out.num_attrs; ++i) {
        const CUlaunchAttribute &a = r.attributes[i];
        out.attr_ids[i] = a.id;
        if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            out.attr_values[i][0] = static_cast<int>(a.value.clusterDim.x);
            out.attr_values[i][1] = static_cast<int>(a.value.clusterDim.y);
            out.attr_values[i][2] = static_cast<int>(a.value.clusterDim.z);
        } else {
            std::memcpy(&out.attr_values[i][0], &a.value, sizeof(int));
        }
    }
    out.nparams = std::min<size_t>(r.args.size(), kMaxParams);
    for (size_t i = 0; i < out.nparams; ++i) {
        out.sizes[i] = r.args[i].size();
        std::memcpy(out.args[i], r.args[i].data(), std::min(r.args[i].size(), kMaxParamBytes));
    }
}

}  // namespace

extern "C" {

FAKE_CUDA_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int, cuuint64_t,
                                              CUdriverProcAddressQueryResult *status) {
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = fake::detail::find_entry_point(symbol);
    if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// The names a program linking libcuda (or dlsym-ing it) uses: the tests' raw-driver helpers.
CUresult export_cuInit(unsigned flags) FAKE_CUDA_EXPORT_AS("cuInit");
CUresult export_cuDriverGetVersion(int *version) FAKE_CUDA_EXPORT_AS("cuDriverGetVersion");
CUresult export_cuDeviceGet(CUdevice *device, int ordinal) FAKE_CUDA_EXPORT_AS("cuDeviceGet");
CUresult export_cuDeviceGetCount(int *count) FAKE_CUDA_EXPORT_AS("cuDeviceGetCount");
CUresult export_cuDeviceGetName(char *name, int length, CUdevice device) FAKE_CUDA_EXPORT_AS("cuDeviceGetName");
CUresult export_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
    FAKE_CUDA_EXPORT_AS("cuDeviceGetAttribute");
CUresult export_cuDeviceTotalMem(size_t *bytes, CUdevice device) FAKE_CUDA_EXPORT_AS("cuDeviceTotalMem_v2");
CUresult export_cuDeviceGetUuid(CUuuid *uuid, CUdevice device) FAKE_CUDA_EXPORT_AS("cuDeviceGetUuid");
CUresult export_cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice device) FAKE_CUDA_EXPORT_AS("cuDeviceGetUuid_v2");
CUresult export_cuDeviceGetPCIBusId(char *bus, int length, CUdevice device) FAKE_CUDA_EXPORT_AS("cuDeviceGetPCIBusId");
CUresult export_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
    FAKE_CUDA_EXPORT_AS("cuDevicePrimaryCtxRetain");
CUresult export_cuDevicePrimaryCtxRelease(CUdevice device) FAKE_CUDA_EXPORT_AS("cuDevicePrimaryCtxRelease_v2");
CUresult export_cuCtxGetCurrent(CUcontext *context) FAKE_CUDA_EXPORT_AS("cuCtxGetCurrent");
CUresult export_cuCtxSetCurrent(CUcontext context) FAKE_CUDA_EXPORT_AS("cuCtxSetCurrent");
CUresult export_cuCtxSynchronize() FAKE_CUDA_EXPORT_AS("cuCtxSynchronize");
CUresult export_cuStreamCreate(CUstream *stream, unsigned flags) FAKE_CUDA_EXPORT_AS("cuStreamCreate");
CUresult export_cuStreamDestroy(CUstream stream) FAKE_CUDA_EXPORT_AS("cuStreamDestroy_v2");
CUresult export_cuStreamSynchronize(CUstream stream) FAKE_CUDA_EXPORT_AS("cuStreamSynchronize");
CUresult export_cuStreamQuery(CUstream stream) FAKE_CUDA_EXPORT_AS("cuStreamQuery");
CUresult export_cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *data) FAKE_CUDA_EXPORT_AS("cuLaunchHostFunc");
CUresult export_cuEventCreate(CUevent *event, unsigned flags) FAKE_CUDA_EXPORT_AS("cuEventCreate");
CUresult export_cuEventDestroy(CUevent event) FAKE_CUDA_EXPORT_AS("cuEventDestroy_v2");
CUresult export_cuEventRecord(CUevent event, CUstream stream) FAKE_CUDA_EXPORT_AS("cuEventRecord");
CUresult export_cuEventQuery(CUevent event) FAKE_CUDA_EXPORT_AS("cuEventQuery");
CUresult export_cuEventSynchronize(CUevent event) FAKE_CUDA_EXPORT_AS("cuEventSynchronize");
CUresult export_cuEventElapsedTime(float *ms, CUevent start, CUevent end) FAKE_CUDA_EXPORT_AS("cuEventElapsedTime");
CUresult export_cuMemAlloc(CUdeviceptr *address, size_t size) FAKE_CUDA_EXPORT_AS("cuMemAlloc_v2");
CUresult export_cuMemFree(CUdeviceptr address) FAKE_CUDA_EXPORT_AS("cuMemFree_v2");
CUresult export_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t size) FAKE_CUDA_EXPORT_AS("cuMemcpyHtoD_v2");
CUresult export_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t size) FAKE_CUDA_EXPORT_AS("cuMemcpyDtoH_v2");
// Graphs and stream capture, under the names cuda.h gives them.
CUresult export_cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode)
    FAKE_CUDA_EXPORT_AS("cuStreamBeginCapture_v2");
CUresult export_cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                            const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                            CUstreamCaptureMode mode)
    FAKE_CUDA_EXPORT_AS("cuStreamBeginCaptureToGraph");
CUresult export_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) FAKE_CUDA_EXPORT_AS("cuStreamEndCapture");
CUresult export_cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
    FAKE_CUDA_EXPORT_AS("cuStreamIsCapturing");
CUresult export_cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                       CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                       const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
    FAKE_CUDA_EXPORT_AS("cuStreamGetCaptureInfo_v3");
CUresult export_cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                                  unsigned int flags)
    FAKE_CUDA_EXPORT_AS("cuStreamUpdateCaptureDependencies_v2");
CUresult export_cuGraphCreate(CUgraph *phGraph, unsigned int flags) FAKE_CUDA_EXPORT_AS("cuGraphCreate");
CUresult export_cuGraphDestroy(CUgraph hGraph) FAKE_CUDA_EXPORT_AS("cuGraphDestroy");
CUresult export_cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph) FAKE_CUDA_EXPORT_AS("cuGraphClone");
CUresult export_cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                               const CUgraphEdgeData *dependencyData, size_t numDependencies,
                               CUgraphNodeParams *nodeParams) FAKE_CUDA_EXPORT_AS("cuGraphAddNode_v2");
CUresult export_cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphAddKernelNode_v2");
CUresult export_cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_MEMCPY3D_v2 *copyParams, CUcontext ctx)
    FAKE_CUDA_EXPORT_AS("cuGraphAddMemcpyNode");
CUresult export_cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS_v1 *memsetParams,
                                     CUcontext ctx) FAKE_CUDA_EXPORT_AS("cuGraphAddMemsetNode");
CUresult export_cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   size_t numDependencies, const CUDA_HOST_NODE_PARAMS_v1 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphAddHostNode");
CUresult export_cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                         size_t numDependencies, CUgraph childGraph)
    FAKE_CUDA_EXPORT_AS("cuGraphAddChildGraphNode");
CUresult export_cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                    size_t numDependencies) FAKE_CUDA_EXPORT_AS("cuGraphAddEmptyNode");
CUresult export_cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                          size_t numDependencies, CUevent event)
    FAKE_CUDA_EXPORT_AS("cuGraphAddEventRecordNode");
CUresult export_cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                        size_t numDependencies, CUevent event)
    FAKE_CUDA_EXPORT_AS("cuGraphAddEventWaitNode");
CUresult export_cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphAddMemAllocNode");
CUresult export_cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, CUdeviceptr dptr)
    FAKE_CUDA_EXPORT_AS("cuGraphAddMemFreeNode");
CUresult export_cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out, CUgraph hGraph, CUcontext ctx,
                                               unsigned int defaultLaunchValue, unsigned int flags)
    FAKE_CUDA_EXPORT_AS("cuGraphConditionalHandleCreate");
CUresult export_cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type) FAKE_CUDA_EXPORT_AS("cuGraphNodeGetType");
CUresult export_cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
    FAKE_CUDA_EXPORT_AS("cuGraphGetNodes");
CUresult export_cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData,
                                size_t *numEdges) FAKE_CUDA_EXPORT_AS("cuGraphGetEdges_v2");
CUresult export_cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData,
                                           size_t *numDependencies)
    FAKE_CUDA_EXPORT_AS("cuGraphNodeGetDependencies_v2");
CUresult export_cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes, CUgraphEdgeData *edgeData,
                                             size_t *numDependentNodes)
    FAKE_CUDA_EXPORT_AS("cuGraphNodeGetDependentNodes_v2");
CUresult export_cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                       const CUgraphEdgeData *edgeData, size_t numDependencies)
    FAKE_CUDA_EXPORT_AS("cuGraphAddDependencies_v2");
CUresult export_cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                          const CUgraphEdgeData *edgeData, size_t numDependencies)
    FAKE_CUDA_EXPORT_AS("cuGraphRemoveDependencies_v2");
CUresult export_cuGraphDestroyNode(CUgraphNode hNode) FAKE_CUDA_EXPORT_AS("cuGraphDestroyNode");
CUresult export_cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
    FAKE_CUDA_EXPORT_AS("cuGraphNodeFindInClone");
CUresult export_cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags)
    FAKE_CUDA_EXPORT_AS("cuGraphDebugDotPrint");
CUresult export_cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphKernelNodeGetParams_v2");
CUresult export_cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphKernelNodeSetParams_v2");
CUresult export_cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D_v2 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphMemcpyNodeSetParams");
CUresult export_cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS_v1 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphMemsetNodeSetParams");
CUresult export_cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS_v1 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphHostNodeSetParams");
CUresult export_cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
    FAKE_CUDA_EXPORT_AS("cuGraphMemAllocNodeGetParams");
CUresult export_cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
    FAKE_CUDA_EXPORT_AS("cuGraphChildGraphNodeGetGraph");
CUresult export_cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
    FAKE_CUDA_EXPORT_AS("cuGraphInstantiateWithParams");
CUresult export_cuGraphExecDestroy(CUgraphExec hGraphExec) FAKE_CUDA_EXPORT_AS("cuGraphExecDestroy");
CUresult export_cuGraphLaunch(CUgraphExec hGraph, CUstream hStream) FAKE_CUDA_EXPORT_AS("cuGraphLaunch");
CUresult export_cuGraphUpload(CUgraphExec hGraph, CUstream hStream) FAKE_CUDA_EXPORT_AS("cuGraphUpload");
CUresult export_cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
    FAKE_CUDA_EXPORT_AS("cuGraphExecUpdate_v2");
CUresult export_cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphExecKernelNodeSetParams_v2");
CUresult export_cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               const CUDA_MEMCPY3D_v2 *copyParams, CUcontext ctx)
    FAKE_CUDA_EXPORT_AS("cuGraphExecMemcpyNodeSetParams");
CUresult export_cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               const CUDA_MEMSET_NODE_PARAMS_v1 *memsetParams, CUcontext ctx)
    FAKE_CUDA_EXPORT_AS("cuGraphExecMemsetNodeSetParams");
CUresult export_cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                             const CUDA_HOST_NODE_PARAMS_v1 *nodeParams)
    FAKE_CUDA_EXPORT_AS("cuGraphExecHostNodeSetParams");
CUresult export_cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
    FAKE_CUDA_EXPORT_AS("cuGraphNodeSetEnabled");
CUresult export_cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled)
    FAKE_CUDA_EXPORT_AS("cuGraphNodeGetEnabled");
CUresult export_cuUserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy, unsigned int initialRefcount,
                                   unsigned int flags) FAKE_CUDA_EXPORT_AS("cuUserObjectCreate");
CUresult export_cuUserObjectRelease(CUuserObject object, unsigned int count) FAKE_CUDA_EXPORT_AS("cuUserObjectRelease");
CUresult export_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count, unsigned int flags)
    FAKE_CUDA_EXPORT_AS("cuGraphRetainUserObject");
CUresult export_cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
    FAKE_CUDA_EXPORT_AS("cuDeviceGetGraphMemAttribute");
CUresult export_cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
    FAKE_CUDA_EXPORT_AS("cuDeviceSetGraphMemAttribute");
CUresult export_cuDeviceGraphMemTrim(CUdevice device) FAKE_CUDA_EXPORT_AS("cuDeviceGraphMemTrim");
CUresult export_cuMemAllocAsync(CUdeviceptr_v2 *dptr, size_t bytesize, CUstream hStream)
    FAKE_CUDA_EXPORT_AS("cuMemAllocAsync");

CUresult export_cuInit(unsigned flags) { return table().cuInit(flags); }
CUresult export_cuDriverGetVersion(int *version) { return table().cuDriverGetVersion(version); }
CUresult export_cuDeviceGet(CUdevice *device, int ordinal) { return table().cuDeviceGet(device, ordinal); }
CUresult export_cuDeviceGetCount(int *count) { return table().cuDeviceGetCount(count); }
CUresult export_cuDeviceGetName(char *name, int length, CUdevice device) {
    return table().cuDeviceGetName(name, length, device);
}
CUresult export_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
    return table().cuDeviceGetAttribute(value, attribute, device);
}
CUresult export_cuDeviceTotalMem(size_t *bytes, CUdevice device) { return table().cuDeviceTotalMem(bytes, device); }
CUresult export_cuDeviceGetUuid(CUuuid *uuid, CUdevice device) { return table().cuDeviceGetUuid(uuid, device); }
CUresult export_cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice device) { return table().cuDeviceGetUuid(uuid, device); }
CUresult export_cuDeviceGetPCIBusId(char *bus, int length, CUdevice device) {
    return table().cuDeviceGetPCIBusId(bus, length, device);
}
CUresult export_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
    return table().cuDevicePrimaryCtxRetain(context, device);
}
CUresult export_cuDevicePrimaryCtxRelease(CUdevice device) { return table().cuDevicePrimaryCtxRelease(device); }
CUresult export_cuCtxGetCurrent(CUcontext *context) { return table().cuCtxGetCurrent(context); }
CUresult export_cuCtxSetCurrent(CUcontext context) { return table().cuCtxSetCurrent(context); }
CUresult export_cuCtxSynchronize() { return table().cuCtxSynchronize(); }
CUresult export_cuStreamCreate(CUstream *stream, unsigned flags) {
    return table().cuStreamCreateWithPriority(stream, flags, 0);
}
CUresult export_cuStreamDestroy(CUstream stream) { return table().cuStreamDestroy(stream); }
CUresult export_cuStreamSynchronize(CUstream stream) { return table().cuStreamSynchronize(stream); }
CUresult export_cuStreamQuery(CUstream stream) { return table().cuStreamQuery(stream); }
CUresult export_cuLaunchHostFunc(CUstream stream, CUhostFn fn, void *data) {
    return table().cuLaunchHostFunc(stream, fn, data);
}
CUresult export_cuEventCreate(CUevent *event, unsigned flags) { return table().cuEventCreate(event, flags); }
CUresult export_cuEventDestroy(CUevent event) { return table().cuEventDestroy(event); }
CUresult export_cuEventRecord(CUevent event, CUstream stream) { return table().cuEventRecord(event, stream); }
CUresult export_cuEventQuery(CUevent event) { return table().cuEventQuery(event); }
CUresult export_cuEventSynchronize(CUevent event) { return table().cuEventSynchronize(event); }
CUresult export_cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
    return table().cuEventElapsedTime(ms, start, end);
}
CUresult export_cuMemAlloc(CUdeviceptr *address, size_t size) { return fake::detail::f_cuMemAlloc(address, size); }
CUresult export_cuMemFree(CUdeviceptr address) { return table().cuMemFree(address); }
CUresult export_cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t size) {
    return table().cuMemcpyHtoD(dst, src, size);
}
CUresult export_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t size) { return table().cuMemcpyDtoH(dst, src, size); }
CUresult export_cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode) {
    return table().cuStreamBeginCapture(hStream, mode);
}
CUresult export_cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                            const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                            CUstreamCaptureMode mode) {
    return table().cuStreamBeginCaptureToGraph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode);
}
CUresult export_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
    return table().cuStreamEndCapture(hStream, phGraph);
}
CUresult export_cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
    return table().cuStreamIsCapturing(hStream, captureStatus);
}
CUresult export_cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                       CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                       const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out) {
    return table().cuStreamGetCaptureInfo(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                                          numDependencies_out);
}
CUresult export_cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                                  unsigned int flags) {
    return table().cuStreamUpdateCaptureDependencies(hStream, dependencies, dependencyData, numDependencies, flags);
}
CUresult export_cuGraphCreate(CUgraph *phGraph, unsigned int flags) { return table().cuGraphCreate(phGraph, flags); }
CUresult export_cuGraphDestroy(CUgraph hGraph) { return table().cuGraphDestroy(hGraph); }
CUresult export_cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph) {
    return table().cuGraphClone(phGraphClone, originalGraph);
}
CUresult export_cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                               const CUgraphEdgeData *dependencyData, size_t numDependencies,
                               CUgraphNodeParams *nodeParams) {
    return table().cuGraphAddNode(phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams);
}
CUresult export_cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams) {
    return table().cuGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}
CUresult export_cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_MEMCPY3D_v2 *copyParams, CUcontext ctx) {
    return table().cuGraphAddMemcpyNode(phGraphNode, hGraph, dependencies, numDependencies, copyParams, ctx);
}
CUresult export_cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS_v1 *memsetParams,
                                     CUcontext ctx) {
    return table().cuGraphAddMemsetNode(phGraphNode, hGraph, dependencies, numDependencies, memsetParams, ctx);
}
CUresult export_cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   size_t numDependencies, const CUDA_HOST_NODE_PARAMS_v1 *nodeParams) {
    return table().cuGraphAddHostNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}
CUresult export_cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                         size_t numDependencies, CUgraph childGraph) {
    return table().cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies, childGraph);
}
CUresult export_cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                    size_t numDependencies) {
    return table().cuGraphAddEmptyNode(phGraphNode, hGraph, dependencies, numDependencies);
}
CUresult export_cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                          size_t numDependencies, CUevent event) {
    return table().cuGraphAddEventRecordNode(phGraphNode, hGraph, dependencies, numDependencies, event);
}
CUresult export_cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                        size_t numDependencies, CUevent event) {
    return table().cuGraphAddEventWaitNode(phGraphNode, hGraph, dependencies, numDependencies, event);
}
CUresult export_cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams) {
    return table().cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}
CUresult export_cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, CUdeviceptr dptr) {
    return table().cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies, dptr);
}
CUresult export_cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out, CUgraph hGraph, CUcontext ctx,
                                               unsigned int defaultLaunchValue, unsigned int flags) {
    return table().cuGraphConditionalHandleCreate(pHandle_out, hGraph, ctx, defaultLaunchValue, flags);
}
CUresult export_cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type) {
    return table().cuGraphNodeGetType(hNode, type);
}
CUresult export_cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes) {
    return table().cuGraphGetNodes(hGraph, nodes, numNodes);
}
CUresult export_cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData,
                                size_t *numEdges) {
    return table().cuGraphGetEdges(hGraph, from, to, edgeData, numEdges);
}
CUresult export_cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData,
                                           size_t *numDependencies) {
    return table().cuGraphNodeGetDependencies(hNode, dependencies, edgeData, numDependencies);
}
CUresult export_cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes, CUgraphEdgeData *edgeData,
                                             size_t *numDependentNodes) {
    return table().cuGraphNodeGetDependentNodes(hNode, dependentNodes, edgeData, numDependentNodes);
}
CUresult export_cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                       const CUgraphEdgeData *edgeData, size_t numDependencies) {
    return table().cuGraphAddDependencies(hGraph, from, to, edgeData, numDependencies);
}
CUresult export_cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                          const CUgraphEdgeData *edgeData, size_t numDependencies) {
    return table().cuGraphRemoveDependencies(hGraph, from, to, edgeData, numDependencies);
}
CUresult export_cuGraphDestroyNode(CUgraphNode hNode) { return table().cuGraphDestroyNode(hNode); }
CUresult export_cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph) {
    return table().cuGraphNodeFindInClone(phNode, hOriginalNode, hClonedGraph);
}
CUresult export_cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags) {
    return table().cuGraphDebugDotPrint(hGraph, path, flags);
}
CUresult export_cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams) {
    return table().cuGraphKernelNodeGetParams(hNode, nodeParams);
}
CUresult export_cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams) {
    return table().cuGraphKernelNodeSetParams(hNode, nodeParams);
}
CUresult export_cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D_v2 *nodeParams) {
    return table().cuGraphMemcpyNodeSetParams(hNode, nodeParams);
}
CUresult export_cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS_v1 *nodeParams) {
    return table().cuGraphMemsetNodeSetParams(hNode, nodeParams);
}
CUresult export_cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS_v1 *nodeParams) {
    return table().cuGraphHostNodeSetParams(hNode, nodeParams);
}
CUresult export_cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out) {
    return table().cuGraphMemAllocNodeGetParams(hNode, params_out);
}
CUresult export_cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph) {
    return table().cuGraphChildGraphNodeGetGraph(hNode, phGraph);
}
CUresult export_cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams) {
    return table().cuGraphInstantiateWithParams(phGraphExec, hGraph, instantiateParams);
}
CUresult export_cuGraphExecDestroy(CUgraphExec hGraphExec) { return table().cuGraphExecDestroy(hGraphExec); }
CUresult export_cuGraphLaunch(CUgraphExec hGraph, CUstream hStream) { return table().cuGraphLaunch(hGraph, hStream); }
CUresult export_cuGraphUpload(CUgraphExec hGraph, CUstream hStream) { return table().cuGraphUpload(hGraph, hStream); }
CUresult export_cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo) {
    return table().cuGraphExecUpdate(hGraphExec, hGraph, resultInfo);
}
CUresult export_cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams) {
    return table().cuGraphExecKernelNodeSetParams(hGraphExec, hNode, nodeParams);
}
CUresult export_cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               const CUDA_MEMCPY3D_v2 *copyParams, CUcontext ctx) {
    return table().cuGraphExecMemcpyNodeSetParams(hGraphExec, hNode, copyParams, ctx);
}
CUresult export_cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                               const CUDA_MEMSET_NODE_PARAMS_v1 *memsetParams, CUcontext ctx) {
    return table().cuGraphExecMemsetNodeSetParams(hGraphExec, hNode, memsetParams, ctx);
}
CUresult export_cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                             const CUDA_HOST_NODE_PARAMS_v1 *nodeParams) {
    return table().cuGraphExecHostNodeSetParams(hGraphExec, hNode, nodeParams);
}
CUresult export_cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled) {
    return table().cuGraphNodeSetEnabled(hGraphExec, hNode, isEnabled);
}
CUresult export_cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled) {
    return table().cuGraphNodeGetEnabled(hGraphExec, hNode, isEnabled);
}
CUresult export_cuUserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy, unsigned int initialRefcount,
                                   unsigned int flags) {
    return table().cuUserObjectCreate(object_out, ptr, destroy, initialRefcount, flags);
}
CUresult export_cuUserObjectRelease(CUuserObject object, unsigned int count) {
    return table().cuUserObjectRelease(object, count);
}
CUresult export_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count, unsigned int flags) {
    return table().cuGraphRetainUserObject(graph, object, count, flags);
}
CUresult export_cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value) {
    return table().cuDeviceGetGraphMemAttribute(device, attr, value);
}
CUresult export_cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value) {
    return table().cuDeviceSetGraphMemAttribute(device, attr, value);
}
CUresult export_cuDeviceGraphMemTrim(CUdevice device) { return table().cuDeviceGraphMemTrim(device); }
CUresult export_cuMemAllocAsync(CUdeviceptr_v2 *dptr, size_t bytesize, CUstream hStream) {
    return table().cuMemAllocAsync(dptr, bytesize, hStream);
}

// ---- what the Python tests read (ctypes) ----

// Allocations not freed (as fake::Counters::allocations; a stream-ordered free counts once queued).
FAKE_CUDA_EXPORT int fake_cuda_live_allocations(void) { return fake::counters().allocations; }
// Libraries loaded and not unloaded.
FAKE_CUDA_EXPORT int fake_cuda_live_libraries(void) { return fake::counters().libraries; }
// Graphics registrations not unregistered.
FAKE_CUDA_EXPORT int fake_cuda_live_graphics_resources(void) { return fake::counters().graphics_resources; }
// Graphs (made by cuGraphCreate, cuGraphClone or a capture), executables and user objects not destroyed.
FAKE_CUDA_EXPORT int fake_cuda_live_graphs(void) { return fake::counters().graphs; }
FAKE_CUDA_EXPORT int fake_cuda_live_graph_execs(void) { return fake::counters().graph_execs; }
FAKE_CUDA_EXPORT int fake_cuda_live_user_objects(void) { return fake::counters().user_objects; }
// Sets a graph condition's value (what a kernel's cudaGraphSetConditional does); 0 for an unknown handle.
FAKE_CUDA_EXPORT int fake_cuda_set_condition(unsigned long long handle, unsigned value) {
    return fake::set_condition(handle, value);
}
// A graph condition's value, or -1 for an unknown handle.
FAKE_CUDA_EXPORT long long fake_cuda_condition_value(unsigned long long handle) { return fake::condition_value(handle); }
// Graph nodes that could not run (where a device would fault), since the library was loaded.
FAKE_CUDA_EXPORT long fake_cuda_graph_run_errors(void) { return fake::graph_run_errors(); }
// Arrays (cuArray3DCreate), mipmapped arrays, texture and surface objects not destroyed.
FAKE_CUDA_EXPORT int fake_cuda_live_arrays(void) { return fake::counters().arrays; }
FAKE_CUDA_EXPORT int fake_cuda_live_mipmapped_arrays(void) { return fake::counters().mipmapped_arrays; }
FAKE_CUDA_EXPORT int fake_cuda_live_texture_objects(void) { return fake::counters().texture_objects; }
FAKE_CUDA_EXPORT int fake_cuda_live_surface_objects(void) { return fake::counters().surface_objects; }
// Arrays, mipmapped arrays, memory or GL mappings destroyed while a live texture or surface object read them.
FAKE_CUDA_EXPORT int fake_cuda_resource_violations(void) { return fake::resource_violations(); }
// What cuDeviceGetAttribute answers for (attribute, device) from now on (e.g.
// CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 0: no sparse arrays).
FAKE_CUDA_EXPORT void fake_cuda_set_attribute(int attribute, int device, int value) {
    fake::set_attribute(static_cast<CUdevice_attribute>(attribute), device, value);
}
// The description an array was created with; 0 for an unknown array.
FAKE_CUDA_EXPORT int fake_cuda_array_descriptor(void *array, CUDA_ARRAY3D_DESCRIPTOR *out) {
    const CUDA_ARRAY3D_DESCRIPTOR d = fake::array_descriptor(static_cast<CUarray>(array));
    if (out) *out = d;
    return d.Width != 0;
}
// What a texture object was created with (TextureObject above); 0 for an unknown handle.
FAKE_CUDA_EXPORT int fake_cuda_texture_object(unsigned long long texture, TextureObject *out) {
    fake::TextureRecord record;
    if (!fake::texture_record(texture, record)) return 0;
    if (out) describe(record, *out);
    return 1;
}
// The array a surface object was created over, and whether it was destroyed; 0 for an unknown handle.
FAKE_CUDA_EXPORT int fake_cuda_surface_object(unsigned long long surface, void **array, int *destroyed) {
    fake::SurfaceRecord record;
    if (!fake::surface_record(surface, record)) return 0;
    if (array) *array = record.resource.res.array.hArray;
    if (destroyed) *destroyed = record.destroyed;
    return 1;
}
// The last kernel launch (for the tests' packing checks); all zero before the first.
FAKE_CUDA_EXPORT const LastLaunch *fake_cuda_last_launch(void) {
    fake::detail::Lock lock(fake::detail::state().mutex);
    const auto &g = fake::detail::state();
    if (g.launches.empty()) g_last_launch = LastLaunch{};
    else describe(g.launches.back(), g.launch_count, g_last_launch);
    return &g_last_launch;
}
// The graphics log (one line per call, see graphics.cpp): copies up to cap - 1
// bytes and a NUL; returns the whole log's length.
FAKE_CUDA_EXPORT size_t fake_cuda_graphics_log(char *out, size_t cap) {
    fake::detail::Lock lock(fake::detail::state().mutex);
    const std::string text = fake::detail::graphics_log_text();
    if (out && cap) {
        const size_t n = std::min(text.size(), cap - 1);
        std::memcpy(out, text.data(), n);
        out[n] = 0;
    }
    return text.size();
}
FAKE_CUDA_EXPORT void fake_cuda_graphics_clear_log(void) {
    fake::detail::Lock lock(fake::detail::state().mutex);
    fake::detail::state().graphics_log.clear();
}

}  // extern "C"
