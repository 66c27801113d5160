// The substitute CUDA driver of the tests: one implementation of every entry
// point libcucore uses, built twice (tests/fake_driver/CMakeLists.txt):
//  - cucore_fake_driver, a static library the unit tests install in-process
//    through the driver function table (fake::install below);
//  - libcucore_fake_cuda.so, a libcuda.so.1 look-alike the Python tests load
//    through CUCORE_CUDA_DRIVER_PATH (cuGetProcAddress_v2, the plain names the
//    tests' raw-driver helpers use, and the fake_cuda_* control functions of
//    shared_library.cpp).
// Every call is counted and can be made to fail; device memory is host memory
// in a registry that checks every pointer an operation names; streams are
// queues whose operations run in stream order (at once on the calling thread
// when installed in-process, on a worker thread per stream in the shared
// library: see docs/architecture.md, "Test doubles").
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "driver/driver.hpp"

namespace fake {

struct Counters {
    int primary_retained = 0;  // primary-context retains not yet released, all devices
    int streams = 0;           // streams created and not destroyed
    int events = 0;            // events created (or opened through IPC) and not destroyed
    int pools = 0;             // memory pools created (or imported) and not destroyed
    int allocations = 0;       // cuMemAlloc, pool, pinned host and cuMemAllocManaged allocations not freed
    int vmm_handles = 0;       // cuMemCreate handles not released
    int reservations = 0;      // cuMemAddressReserve ranges not freed
    int mappings = 0;          // cuMemMap mappings not unmapped
    int imported_pointers = 0;  // IPC: cuMemPoolImportPointer mappings not freed
    int libraries = 0;          // cuLibraryLoad* libraries not unloaded
    int link_states = 0;        // cuLinkCreate states not destroyed
    int graphics_resources = 0;  // cuGraphicsGLRegister* registrations not unregistered
    int graphics_mapped = 0;     // registrations mapped now
    int arrays = 0;              // cuArray3DCreate arrays not destroyed
    int mipmapped_arrays = 0;    // cuMipmappedArrayCreate arrays not destroyed
    int texture_objects = 0;     // cuTexObjectCreate objects not destroyed
    int surface_objects = 0;     // cuSurfObjectCreate objects not destroyed
    int graphs = 0;              // graphs made by cuGraphCreate, cuGraphClone or a capture, not destroyed
    int graph_execs = 0;         // cuGraphInstantiateWithParams executables not destroyed
    int user_objects = 0;        // cuUserObjectCreate objects whose destructor has not run
};

// How stream operations run: at once on the calling thread (each call's
// effects are there when it returns), or in order on a worker thread per
// stream, as on a device (the shared library's way).
enum class Streams { synchronous, worker_threads };
// Installs the fake driver in-process with `devices` devices (forgets every
// object of the previous installation, after its streams' work has run).
void install(int devices = 2, Streams streams = Streams::synchronous);
// Restores the real driver table (loaded on next use).
void uninstall();

// How an injected failure behaves: the call changes nothing (what most driver
// failures do), or it does its work and still answers the failure (a release
// the driver carried out but reported, e.g. an unmap).
enum class Failure { refuse, after_work };
// Fails the `n`-th driver call from now (1-based) with `result` (`how`: before or after its work); 0 disables.
void fail_call(long n, CUresult result = CUDA_ERROR_UNKNOWN, Failure how = Failure::refuse);
// Makes every call of entry point `name` fail with `result` ("" clears).
// FAKE_CUDA_FAIL=<entry point>[:after] in the environment (read on each call;
// the Python tests use it) does the same with CUDA_ERROR_UNKNOWN.
void fail_entry(const std::string &name, CUresult result = CUDA_ERROR_UNKNOWN, Failure how = Failure::refuse);
// Number of driver calls since install() or reset_calls() (cuGetErrorName,
// cuGetErrorString and cuInit are not counted: error paths ask for names).
long calls();
void reset_calls();
// Names of the calls made since reset_calls(), in order.
std::vector<std::string> call_log();

// While one lives, this thread's driver calls are neither counted nor failed
// (for test set-up inside a fault-injection window).
struct Uncounted {
    Uncounted();
    ~Uncounted();
};

Counters counters();
// Frees and forgets every allocation (after a test made the fake refuse a free).
void forget_allocations();
// The fake table itself (tests may null entries to simulate an old driver).
cucore::driver::Table &table();
// Re-installs table() after a test edited it.
void reinstall();

// Devices. Each answers cuDeviceGetAttribute with attribute * 10 + ordinal
// (so a test sees which attribute of which device was asked), except the
// answers that must agree with others or that launches are checked against:
// the PCI ids (bus id "0000:<ordinal + 1>:00.0"), the block and grid limits
// and the threads per block, which are an H100's.
// The texture and surface attributes (extents, alignments, sparse arrays)
// answer an H100's values instead, since arrays are checked against them (by
// libcucore first and by the fake's cuArray3DCreate as the driver does).
// Overrides what cuDeviceGetAttribute answers (cleared by install()); the
// fake's own checks read the overridden values too (a test switches sparse
// arrays off with CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 0).
void set_attribute(CUdevice_attribute attribute, int device, int value);
// An H100's TEXTURE_ALIGNMENT and TEXTURE_PITCH_ALIGNMENT (what the fake answers).
constexpr size_t kTextureAlignment = 512;
constexpr size_t kTexturePitchAlignment = 32;
// Overrides what cuDriverGetVersion answers (13000 after install()).
void set_driver_version(int version);

// Memory. New memory is filled with kFreshByte (never zero, so no test passes
// on zeroed memory by chance); freed memory stays reserved until install(), so
// an operation on it is CUDA_ERROR_INVALID_VALUE, never a crash.
constexpr unsigned char kFreshByte = 0xA5;
// VMM memory is real shared memory (memfd) mapped into reserved host address
// ranges, so data survives a remap and a grow by relocation.
// Granularity: 64 KiB minimum, 128 KiB recommended. A new reservation is
// followed by a free gap of its size (so it can be extended in place) unless a
// test reserves that gap itself (cuMemAddressReserve with it as the hint).
constexpr size_t kVmmMinimumGranularity = size_t{64} << 10;
constexpr size_t kVmmRecommendedGranularity = size_t{128} << 10;
// The access flags `device` has to the VMM mapping holding `address` (-1: no mapping there).
int vmm_access(CUdeviceptr address, int device);
// The props of the physical memory mapped at `address` (zeroed if none).
CUmemAllocationProp vmm_prop(CUdeviceptr address);
// The access granted by cuMemPoolSetAccess (owning device of a device pool: read-write).
CUmemAccess_flags pool_access(CUmemoryPool pool, int device);
// The attach flags cuMemAllocManaged gave the allocation at `address` (0: none from it).
unsigned managed_attach_flags(CUdeviceptr address);
// The props a pool was created with.
CUmemPoolProps pool_props(CUmemoryPool pool);
// The byte a discard leaves in managed memory (its contents are unspecified).
constexpr unsigned char kDiscardedByte = 0xDD;

// Graphics interop. The fake has no GL: every GL name but 0 exists in "the
// current GL context", which lives on device gl_device (0 after install(); -1:
// no NVIDIA GL context, registration fails with CUDA_ERROR_OPERATING_SYSTEM;
// another device: CUDA_ERROR_INVALID_DEVICE). A buffer is kGlBufferSize bytes
// of device memory; an image is a kGlImageWidth x kGlImageHeight RGBA8 texture
// with two mip levels and one layer (fake arrays, see Arrays: usable while
// the resource is mapped; SURFACE_LDST and TEXTURE_GATHER registrations give
// them those flags). Unregistering a mapped resource fails with
// CUDA_ERROR_ALREADY_MAPPED and counts in graphics_order_violations().
constexpr size_t kGlBufferSize = 4096;
constexpr size_t kGlImageWidth = 16;
constexpr size_t kGlImageHeight = 8;
void set_gl_device(int device);
// Map, unmap and unregister calls since install(), one per resource, in order
// (stream: NULL for unregister).
struct GraphicsCall {
    std::string name;
    CUgraphicsResource resource;
    CUstream stream;
};
std::vector<GraphicsCall> graphics_calls();
int graphics_order_violations();
// The flags a registration was made with, and its current map flags (-1: unknown resource).
int graphics_register_flags(CUgraphicsResource resource);
int graphics_map_flags(CUgraphicsResource resource);
// The bytes of a registered resource's buffer or of its image's level `level`.
std::vector<unsigned char> *graphics_bytes(CUgraphicsResource resource, unsigned level = 0);

// Arrays (arrays.cpp). cuArray3DCreate and cuMipmappedArrayCreate check a
// description as driver 580 does on an H100: 1, 2 or 4 channels of the eight
// plain formats, the normalized, BC and 101010_2 formats with their own
// channel count, YUV formats refused; cubemaps square with Depth 6 (6 x
// layers when layered); TEXTURE_GATHER for 2D only; BC neither 1D nor with
// SURFACE_LDST; DEPTH_TEXTURE refused for float, uint8 and uint16 (the
// formats measured; others are taken); SPARSE where the device's
// SPARSE_CUDA_ARRAY_SUPPORTED attribute says so (else CUDA_ERROR_NOT_SUPPORTED);
// extents within the device's texture limits (and surface limits with
// SURFACE_LDST), else CUDA_ERROR_INVALID_VALUE. cuMipmappedArrayCreate
// clamps the level count to 1 + floor(log2(largest extent)) as the driver
// does (0 levels: CUDA_ERROR_INVALID_VALUE). Every array, a level of a
// mipmapped array and a mapped GL image's level alike, is host bytes in the
// packed layout: rows of Width x element bytes (BC: rows of 4x4 blocks of 8
// or 16 bytes), Height (or 1) rows per slice (BC: ceil(Height / 4)), Depth
// (or 1) slices; new arrays read kFreshByte. cuMemcpy3DAsync copies into and
// out of them region by region (x in bytes, y rows, z slices: BC in block
// rows), bounds-checked. cuArrayDestroy takes created arrays only (a level or
// a GL image's array: CUDA_ERROR_INVALID_HANDLE), cuMipmappedArrayDestroy
// created mipmapped arrays only; a destroyed or unmapped one is refused
// everywhere (CUDA_ERROR_INVALID_HANDLE). Destroying an array (or freeing
// memory, or unmapping a GL image) that a live texture or surface object
// reads succeeds, as with the driver, and counts in resource_violations().
// The description an array was created with (also after it was destroyed);
// Width 0 for an unknown array.
CUDA_ARRAY3D_DESCRIPTOR array_descriptor(CUarray array);
// The description given to the last cuArray3DCreate or cuMipmappedArrayCreate
// that ran (refused ones too), and the level count given to the latter.
CUDA_ARRAY3D_DESCRIPTOR last_array_descriptor();
unsigned last_mipmap_levels();
// The packed bytes of an array (allocated on first use), or null for an unknown one.
std::vector<unsigned char> *array_bytes(CUarray array);
// The levels of a mipmapped array (0: unknown).
unsigned mipmapped_levels(CUmipmappedArray mipmapped);
// What a texture or surface object was created with. Handles are numbers
// never handed out twice in a process (textures and surfaces share them).
struct TextureRecord {
    CUDA_RESOURCE_DESC resource{};
    CUDA_TEXTURE_DESC texture{};
    bool has_view = false;  // a CUDA_RESOURCE_VIEW_DESC was given
    CUDA_RESOURCE_VIEW_DESC view{};
    CUcontext context = nullptr;  // current at creation
    bool destroyed = false;
};
struct SurfaceRecord {
    CUDA_RESOURCE_DESC resource{};
    CUcontext context = nullptr;
    bool destroyed = false;
};
// The record of a texture or surface object made since install(); false for an unknown handle.
bool texture_record(CUtexObject texture, TextureRecord &record);
bool surface_record(CUsurfObject surface, SurfaceRecord &record);
// Destroys (arrays, mipmapped arrays, memory, GL mappings) of what a live
// texture or surface object still read, since install().
int resource_violations();

// Contexts: one primary context per device, and foreign ones for wrapping tests.
CUcontext make_foreign_context(int device);
CUcontext current_context();  // this thread's current context in the fake
void set_current_context(CUcontext context);

// Libraries: cuLibraryLoadData/FromFile accept fake images, text made by
// image(): "FAKECUBIN", then "kernel NAME [SIZE,SIZE,...]" (a kernel and its
// parameters' sizes) and "global NAME SIZE" lines; anything else is
// CUDA_ERROR_INVALID_IMAGE. Globals are device memory of `size` zero bytes.
// The driver's linker (cuLink*) merges fake images; any other input fails
// with CUDA_ERROR_INVALID_PTX and two lines in the error log buffer.
std::string image(const std::vector<std::string> &kernels,
                  const std::vector<std::pair<std::string, size_t>> &globals = {});
// What a fake CUkernel (from cuLibraryGetKernel) is.
struct KernelRecord {
    std::string name;
    std::vector<size_t> param_sizes;  // from the image
    void *library;                    // the fake library it belongs to
};
// The record of a kernel of a loaded library, or nullptr.
const KernelRecord *kernel_record(CUkernel kernel);
// The (option, value) pairs of the last cuLinkCreate.
std::vector<std::pair<int, uintptr_t>> last_link_options();

// Kernels and launches. Any CUkernel of a fake library, or one made by
// make_kernel, works with cuKernel*/cuFunc*/cuLaunchKernelEx/cuOccupancy*; its
// KernelSpec says what the driver answers (library kernels: the defaults, with
// their own name and parameters, until set_kernel_spec). Attributes not in the
// spec read attribute * 100 + device, unless set through
// cuKernelSetAttribute/cuFuncSetAttribute. Launches are recorded, not run.
struct KernelSpec {
    std::string name = "fake_kernel";
    std::vector<size_t> param_sizes;    // offsets: packed with natural alignment (up to 8)
    bool param_info_supported = true;   // false: cu*GetParamInfo answer CUDA_ERROR_NOT_SUPPORTED
    int max_threads_per_block = 1024;
    int max_dynamic_shared_bytes = 48 << 10;  // settable up to kMaxDynamicSharedBytes
    int max_active_blocks_per_multiprocessor = 4;
    int max_potential_cluster_size = 8;
    int max_active_clusters = 16;
};
// The most dynamic shared memory a kernel may be allowed (an H100's 227 KiB).
constexpr int kMaxDynamicSharedBytes = 227 << 10;
// Shared memory per multiprocessor, which cuOccupancyAvailableDynamicSMemPerBlock divides.
constexpr size_t kSharedBytesPerMultiprocessor = size_t{228} << 10;
// Multiprocessors of the occupancy answers (cuOccupancyMaxPotentialBlockSize's grid).
constexpr int kOccupancyMultiprocessors = 132;
// A foreign CUkernel (valid until the next install()).
CUkernel make_kernel(const KernelSpec &spec = {});
// Replaces the spec of `kernel` (e.g. of a library kernel).
void set_kernel_spec(CUkernel kernel, const KernelSpec &spec);
// The CUfunction of `kernel` in `context`, as cuKernelGetFunction would hand it out there.
CUfunction make_function(CUkernel kernel, CUcontext context);
// Kernel behaviours. Kernels are recorded, not run, except those named below
// (KernelSpec::name, or an image's "kernel NAME" line) with exactly these
// parameter sizes, which do this when they run: in stream order after a
// cuLaunchKernelEx, and when their node runs in a graph.
//  kSetConditionKernel (CUgraphConditionalHandle handle, unsigned value): sets
//    the condition's value, as cudaGraphSetConditional does on a device;
//  kCountConditionKernel (CUgraphConditionalHandle handle, int *counter, int limit):
//    adds 1 to the int at `counter` (device memory) and sets the condition to
//    1 while it is below `limit`, else 0 (a while node's body counting to limit).
constexpr const char *kSetConditionKernel = "fake_set_condition";
constexpr const char *kCountConditionKernel = "fake_count_condition";
// What one cuLaunchKernelEx received (attrs copied out; the arguments' bytes per the spec's sizes).
struct LaunchRecord {
    CUlaunchConfig config{};
    std::vector<CUlaunchAttribute> attributes;
    CUfunction function = nullptr;
    CUkernel kernel = nullptr;
    CUcontext function_context = nullptr;
    CUcontext current = nullptr;  // the thread's current context during the call
    std::vector<std::vector<unsigned char>> args;
};
std::vector<LaunchRecord> launches();  // since install()
// The arguments of the last occupancy call.
struct OccupancyCall {
    std::string entry;
    CUfunction function = nullptr;
    int block_size = 0;
    size_t dynamic_shared_bytes = 0;
    unsigned flags = 0;
    int block_size_limit = 0;
    int num_blocks = 0;
    CUlaunchConfig config{};  // cluster queries (attrs copied out)
    std::vector<CUlaunchAttribute> attributes;
    CUcontext current = nullptr;
};
OccupancyCall last_occupancy();
// The value set for (kernel, attribute, device), or INT32_MIN if none was.
int kernel_attribute_set(CUkernel kernel, CUfunction_attribute attribute, int device);

// Graphs (graphs.cpp, graph_exec.cpp, capture.cpp). A graph is nodes (their
// type and a copy of their parameters) and edges; clones, child graph nodes
// and executables are deep copies. cuGraphLaunch runs the executable as one
// operation of the stream, in a topological order (the earliest created node
// first among those ready), each node doing what the matching stream
// operation does (kernels as above, copies and fills on the fake's memory,
// host functions, event records and waits); disabled nodes are skipped.
// The driver's restrictions are kept: conditional bodies take kernel, copy,
// fill, empty, child, conditional and host nodes only (the H100 server's
// CUDA 13 driver takes host nodes there); a graph with conditional
// nodes cannot be cloned or copied into a child node, and has one executable
// at a time; a copied child graph holds no memory nodes; an executable for
// device launch has no host, event or memory nodes; every condition of a
// graph must be used by one of its conditional nodes.
// Conditional nodes read their condition when they run (its default first
// at each launch with CU_GRAPH_COND_ASSIGN_DEFAULT); a while node stops after
// 1,000,000 iterations and counts a run error. An allocation node's address
// is reserved when the node is made; the memory is usable from the node's run
// to its free (a free node, cuMemFreeAsync or cuMemFree). Graph memory
// attributes count what executables took through their allocation nodes: it
// stays with the executable after a free (for its next launch, as the driver
// keeps it) until the executable is destroyed; a trim gives back the reserved
// memory no executable holds. The DOT output labels each node with its index and type
// in lower case ("kernel", "memcpy", "memset", "host", "graph", "empty",
// "event_wait", "event_record", "mem_alloc", "mem_free", "conditional"),
// kernels with their name, conditionals with "if", "while" or "switch".
// While a stream captures, cuLaunchKernelEx, cuMemcpyAsync, cuMemcpyPeerAsync,
// cuMemcpy3DAsync, cuMemsetD*Async, cuLaunchHostFunc, cuMemAllocAsync,
// cuMemAllocFromPoolAsync, cuMemFreeAsync and cuGraphLaunch on it add nodes;
// cuEventRecord marks a point a wait forks from or joins to; a prefetch or
// discard, cuStreamSynchronize and cuStreamQuery on it (and cuEventQuery or
// cuEventSynchronize of an event recorded in it) fail with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate the capture. While a
// global capture goes on (or a thread-local one of the calling thread),
// cuMemAlloc, cuMemFree, cuMemcpyHtoD/DtoH and cuCtxSynchronize fail with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate those captures; so
// does cuCtxSynchronize while a stream of the context captures, in any mode.
// Sets a condition's value now (what a kernel's cudaGraphSetConditional does;
// a test may call it from a host function); false for an unknown handle.
bool set_condition(CUgraphConditionalHandle handle, unsigned value);
// A condition's value, or -1 for an unknown handle.
long long condition_value(CUgraphConditionalHandle handle);
// Graph nodes that could not run since install() (memory freed or outside its
// allocation, a while node past its cap): where a device would fault.
long graph_run_errors();
// The event of an event record or wait node of a definition, and of its copy in
// an executable made from that definition (graph_updates.cpp); null for another node.
CUevent graph_node_event(CUgraphNode node);
CUevent graph_exec_node_event(CUgraphExec exec, CUgraphNode node);

// Green contexts (green_contexts.cpp): each device has 16 SMs, a minimum
// partition of 2 and an alignment of 2; workqueue resources exist while the
// driver version is 13010 or more (set_driver_version). Green contexts made and
// not destroyed, and the streams and events a green context still had when it
// was destroyed (the driver leaks them; never expected).
int green_contexts();
int green_context_violations();

}  // namespace fake
