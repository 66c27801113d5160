// The fake driver's state, shared by the files of one concern each (devices,
// streams, memory, ...): one lock, the registries of every kind of object and
// the helpers more than one file uses. Internal to tests/fake_driver.
//
// Objects are never freed before the next install(): a destroyed one only
// leaves its registry, so a stale handle is rejected (not dereferenced) and
// freed memory is never handed out again, so a use after free is seen.
#pragma once

#include <cuda.h>

#include <pthread.h>
#include <sys/types.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fake_driver.hpp"

namespace fake::detail {

using Lock = std::unique_lock<std::mutex>;

// What each device has (cuDeviceTotalMem adds the ordinal); no allocation is larger.
constexpr size_t kDeviceMemory = size_t{80} << 30;

// A condition variable on the state's mutex. Not std::condition_variable,
// whose wait needs GLIBCXX_3.4.30 (GCC 12), more than libcucore itself: the
// shared library must load wherever libcucore does (the GPU servers).
class Signal {
  public:
    Signal() { pthread_cond_init(&cond_, nullptr); }
    ~Signal() { pthread_cond_destroy(&cond_); }
    Signal(const Signal &) = delete;
    Signal &operator=(const Signal &) = delete;
    template <class Done>
    void wait(Lock &lock, Done done) {
        while (!done()) pthread_cond_wait(&cond_, lock.mutex()->native_handle());
    }
    void notify_all() { pthread_cond_broadcast(&cond_); }

  private:
    pthread_cond_t cond_;
};

// ---- contexts, streams, events (devices.cpp, streams.cpp) ----

struct Stream;
struct Capture;  // graphs.hpp
struct Node;     // graphs.hpp
struct Context {
    int device;
    bool primary;
    Stream *default_stream = nullptr;  // what CU_STREAM_LEGACY / PER_THREAD / 0 name here
    std::set<CUcontext> peers;         // contexts cuCtxEnablePeerAccess granted it
};
// Shared by an event and the events opened from its IPC handle (one process:
// waiting on the opened one waits for the exporter's record).
struct Timeline {
    unsigned long long recorded = 0, completed = 0;
    double completed_ms = 0;
};
struct Event {
    CUcontext context;
    unsigned flags;
    std::shared_ptr<Timeline> timeline;
    // Last recorded on a capturing stream: that capture and the stream's
    // capture dependencies then (what a wait on it forks or joins to).
    Capture *captured_in = nullptr;
    std::vector<Node *> captured_dependencies;
};
// One step of a stream. `host` runs without the lock (it may call the driver);
// `work` runs with it held; `steps` (a graph launch) is called with it held
// and may release it (host nodes, event waits).
struct Operation {
    enum Kind { host, record, wait, work, steps } kind = work;
    CUhostFn fn = nullptr;
    void *data = nullptr;
    std::shared_ptr<Timeline> timeline;
    unsigned long long generation = 0;
    std::function<void()> run;
    std::function<void(Lock &)> run_steps;
};
struct Stream {
    CUcontext context;
    unsigned flags;
    int priority;
    std::deque<Operation> queue;  // the front one runs; it leaves when done
    bool destroyed = false;
    // Stream capture (capture.cpp): the capture it is in, or null, and where
    // its next captured node goes (with the edge data cuStreamGetCaptureInfo hands out).
    Capture *capture = nullptr;
    std::vector<Node *> capture_dependencies;
    std::vector<CUgraphEdgeData> capture_edges;
};

// ---- memory (memory.cpp, managed.cpp, virtual_memory.cpp, ipc.cpp) ----

struct Pool {
    int device = -1;  // -1: a host or managed pool without a device location
    bool is_default = false;
    CUmemPoolProps props{};
    uint64_t release_threshold = 0;
    int reuse[3] = {1, 1, 1};
    uint64_t used = 0, used_high = 0;
    std::map<int, CUmemAccess_flags> access;  // cuMemPoolSetAccess grants, by device
    Pool *imported_from = nullptr;            // IPC: the exporting pool of an imported one
};
enum class MemoryKind { device, pinned, managed, gl_buffer, module_global };
enum class AllocationState { live, free_pending, freed };
// What the driver keeps for managed memory.
struct Advice {
    int read_mostly = 0;
    CUmemLocation preferred{CU_MEM_LOCATION_TYPE_INVALID, 0};
    std::set<int> accessed_by;  // device ordinals; -1: the host
    CUmemLocation last_prefetch{CU_MEM_LOCATION_TYPE_INVALID, 0};
};
struct Allocation {
    size_t size = 0;
    MemoryKind kind = MemoryKind::device;
    AllocationState state = AllocationState::live;
    int device = -1;
    Pool *pool = nullptr;        // memory from a pool (cuMemAllocFromPoolAsync)
    unsigned attach_flags = 0;   // cuMemAllocManaged's flags (0: not from it)
    bool owns_storage = false;   // malloc'd here (else a GL buffer's or a global's storage)
    bool graph = false;          // an allocation node's: live from its node's run to its free
    Advice advice;               // managed memory only
};
struct Physical {
    int fd;
    size_t size;
    CUmemAllocationProp prop;
    int maps = 0;
    bool released = false;
};
struct Mapping {
    size_t size;
    CUmemGenericAllocationHandle handle;
    std::map<int, CUmemAccess_flags> access;  // by device
};

// ---- libraries, kernels (libraries.cpp, kernels.cpp) ----

struct Library {
    std::vector<std::unique_ptr<KernelRecord>> kernels;
    std::map<std::string, std::vector<unsigned char>> globals;  // registered as module_global memory
};
struct Link {
    std::string merged;         // kernel and global lines of every input
    char *error_log = nullptr;  // CU_JIT_ERROR_LOG_BUFFER given to cuLinkCreate
    size_t error_log_size = 0;
    std::string cubin;  // cuLinkComplete's result, owned by the state
};
struct Function {
    CUkernel kernel;
    CUcontext context;
};

// ---- arrays, textures, surfaces (arrays.cpp) ----

struct GraphicsResource;
struct MipmappedArray;
// A CUDA array: made by cuArray3DCreate, a level of a mipmapped array (made by
// cuMipmappedArrayCreate or a GL image's), or both for a GL image's level.
// Its bytes are its packed layout (layout_of), allocated on first use.
struct Array {
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    int device = -1;
    bool created = false;                  // by cuArray3DCreate (cuArrayDestroy destroys it)
    bool destroyed = false;
    MipmappedArray *mipmapped = nullptr;   // a level: its mipmapped array
    std::vector<unsigned char> data;
};
struct MipmappedArray {
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};  // level 0's
    int device = -1;
    bool destroyed = false;
    GraphicsResource *graphics = nullptr;  // a GL image's: usable while its resource is mapped
    std::vector<Array *> levels;
};
// An array's packed layout: rows of row_bytes (BC: rows of 4x4 blocks),
// `rows` per slice, `slices` slices (depth, layers, faces).
struct Layout {
    size_t element_size = 0;  // bytes per element (BC: per block)
    bool blocks = false;      // a BC format
    size_t row_bytes = 0, rows = 0, slices = 0;
    size_t size() const { return row_bytes * rows * slices; }
};

// ---- graphics (graphics.cpp) ----

struct GraphicsResource {
    unsigned id;  // in registration order, for the text log
    CUcontext context;
    unsigned gl_name;
    bool image;
    unsigned flags;
    unsigned map_flags = 0;
    bool mapped = false;
    std::vector<unsigned char> memory;   // a buffer's bytes (registered device memory)
    MipmappedArray *arrays = nullptr;    // an image's levels
};
// One registration, map-flag change, map, unmap or unregister call.
struct GraphicsLogEntry {
    std::string entry;  // the entry point
    std::vector<CUgraphicsResource> resources;
    CUstream stream = nullptr;
    unsigned flags = 0;   // register and set-map-flags calls
    bool while_mapped = false;  // an unregister of a mapped resource
};

// ---- the whole state ----

struct State {
    std::mutex mutex;
    Signal changed;  // a stream advanced, an event completed
    bool initialized = false;         // cuInit was called
    bool worker_streams = false;      // streams run on worker threads (else at once)
    int live_workers = 0;
    int devices = 2;

    // Calls and injected failures (calls.cpp).
    bool recording = false;  // keep call_log (in-process only: nobody reads the shared library's)
    long calls = 0;
    long fail_at = 0;
    CUresult fail_at_result = CUDA_ERROR_UNKNOWN;
    Failure fail_at_how = Failure::refuse;
    std::string fail_entry;
    CUresult fail_entry_result = CUDA_ERROR_UNKNOWN;
    Failure fail_entry_how = Failure::refuse;
    std::vector<const char *> log;

    // Devices and contexts: kept across installs (library objects of an
    // earlier test may still name them).
    std::vector<std::unique_ptr<Context>> primary;  // one per device
    std::vector<int> primary_refs;
    std::vector<std::unique_ptr<Context>> foreign;
    std::set<Context *> contexts;
    std::map<std::pair<int, int>, int> attributes;  // (attribute, device) -> value overrides
    int driver_version = 13000;

    std::vector<std::unique_ptr<Stream>> stream_storage;
    std::set<Stream *> streams;  // created and not destroyed (default streams are not here)
    std::vector<std::unique_ptr<Event>> event_storage;
    std::set<Event *> events;

    std::vector<std::unique_ptr<Pool>> default_pools;  // one per device, kept across installs
    std::unique_ptr<Pool> host_default_pool, managed_default_pool;  // made on first ask, kept across installs
    std::vector<std::unique_ptr<Pool>> pool_storage;
    std::set<Pool *> pools;      // created or imported, not destroyed
    std::set<Pool *> all_pools;  // every pool the fake knows (late frees may name a destroyed one)
    std::map<CUdeviceptr, Allocation> allocations;  // by base; freed ones stay until install()

    std::map<CUmemGenericAllocationHandle, Physical> physical;
    CUmemGenericAllocationHandle next_physical = 0x1000;
    std::map<CUdeviceptr, size_t> reservations;  // start -> size
    std::map<CUdeviceptr, Mapping> mappings;     // start -> mapping
    uintptr_t arena = 0, arena_next = 0;         // where reservations are placed
    size_t arena_size = 0;                       // the arena's bytes (address space only)

    std::map<std::pair<dev_t, ino_t>, Pool *> exported_pools;    // by the exported memfd's identity
    std::multimap<CUdeviceptr, Pool *> imported_pointers;  // address -> the imported pool it was mapped into

    std::vector<std::unique_ptr<Library>> library_storage;
    std::set<Library *> libraries;
    std::vector<std::unique_ptr<Link>> link_storage;
    std::set<Link *> links;
    std::vector<std::pair<int, uintptr_t>> link_options;  // of the last cuLinkCreate

    std::map<CUkernel, KernelSpec> kernel_specs;  // foreign kernels and overrides for library ones
    std::vector<std::unique_ptr<char>> foreign_kernel_storage;  // behind make_kernel's handles, kept for the process
    std::set<CUkernel> foreign_kernels;                         // made since install()
    std::map<std::pair<CUkernel, CUcontext>, std::unique_ptr<Function>> function_storage;  // kept for the process
    std::set<Function *> functions;  // handed out since install()
    std::map<std::tuple<CUkernel, int, int>, int> kernel_attributes;  // (kernel, attribute, device) set values
    std::vector<LaunchRecord> launches;
    unsigned long long launch_count = 0;
    OccupancyCall last_occupancy;

    std::vector<std::unique_ptr<Array>> array_storage;  // every array since install(), destroyed ones too
    std::set<Array *> arrays;                           // the same, for validating handles
    std::vector<std::unique_ptr<MipmappedArray>> mipmapped_storage;
    std::set<MipmappedArray *> mipmapped_arrays;
    std::map<unsigned long long, TextureRecord> textures;  // by CUtexObject, destroyed ones too
    std::map<unsigned long long, SurfaceRecord> surfaces;  // by CUsurfObject, destroyed ones too
    std::set<unsigned long long> live_textures, live_surfaces;  // not destroyed (what destroys check against)
    int live_arrays = 0, live_mipmapped_arrays = 0;             // created by cuArray3DCreate/cuMipmappedArrayCreate
    CUDA_ARRAY3D_DESCRIPTOR last_array_descriptor{};       // of the last cuArray3DCreate/cuMipmappedArrayCreate
    unsigned last_mipmap_levels = 0;
    int resource_violations = 0;

    std::vector<std::unique_ptr<GraphicsResource>> graphics_storage;
    std::set<GraphicsResource *> graphics;
    std::vector<GraphicsLogEntry> graphics_log;
    unsigned next_graphics_id = 1;
    int graphics_violations = 0;
    int gl_device = 0;
};

// The one state of the process (never destroyed: worker threads may outlive main).
State &state();
extern thread_local CUcontext t_current;

// Forgets every object of the previous installation (waits for the streams
// first) and makes `devices` devices; streams run on workers or at once.
void reset(int devices, bool worker_streams);

// ---- helpers (caller holds the lock unless said otherwise) ----

// An enum argument's value, read without reading it as the enum type: a
// caller across the C ABI may pass any int, which as the enum would be out of
// its range (undefined behaviour; UBSan says so).
template <class Enum>
int value_of(const Enum &argument) {
    static_assert(sizeof(Enum) == sizeof(int), "a C enum");
    int value;
    std::memcpy(&value, &argument, sizeof value);
    return value;
}

Context *as_context(CUcontext c);
Event *as_event(CUevent e);
bool is_builtin(CUstream s);  // 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
// A live stream handle or a built-in one (no context needed).
bool valid_stream_handle(CUstream s);
// The stream an operation goes to: a created one, or the current context's
// default stream for a built-in handle. Null with `error` set when there is none.
Stream *resolve_stream(CUstream s, CUresult &error);
// Runs `op` in `stream`'s order: at once (in-process) or queued for its worker.
void enqueue(Lock &lock, Stream &stream, Operation op);
// A `work` operation.
void enqueue_work(Lock &lock, Stream &stream, std::function<void()> run);
// Waits until no stream has queued work.
void wait_all_streams(Lock &lock);

// Where [p, p + n) lies: 1 inside one live allocation or a run of accessible
// mappings (*found: that allocation, when it is one), 0 outside everything the
// fake knows (pageable host memory), -1 in freed, inaccessible or unmapped
// memory or across an allocation's end.
int classify(CUdeviceptr p, size_t n, Allocation **found = nullptr);
// Registers `size` bytes of new memory (filled with kFreshByte); 0 when out of
// memory (more than a device has, or more than malloc gives).
CUdeviceptr new_allocation(size_t size, MemoryKind kind, int device, Pool *pool);
// Registers memory whose storage lives elsewhere (a GL buffer, a global).
void register_storage(void *storage, size_t size, MemoryKind kind, int device);
// Marks the allocation at `base` freed (its pool's usage drops); `checked`:
// counts a resource violation if a live texture object reads it.
void free_allocation(CUdeviceptr base, bool checked = true);
// A copy of n bytes in `stream`'s order; INVALID_VALUE when a side is freed or
// ends outside its allocation. Pageable (unknown) memory behaves as with the
// real driver: a source is staged at the call, a destination is written after
// the stream's earlier work, before the call returns.
CUresult copy_in_order(Lock &lock, Stream &stream, CUdeviceptr dst, CUdeviceptr src, size_t n);
bool valid_device_location(const CUmemLocation &l);
bool is_reserved(CUdeviceptr address, size_t size);
void forget_virtual_memory();  // at reset
// The value cuDeviceGetAttribute answers (overrides included) for a valid device.
int attribute_value(int attribute, int device);
// Arrays (arrays.cpp). An array or mipmapped array the driver would take now
// (created and not destroyed; a GL image's while mapped), or null.
Array *as_array(CUarray a);
MipmappedArray *as_mipmapped(CUmipmappedArray m);
Layout layout_of(const CUDA_ARRAY3D_DESCRIPTOR &d);
// A new mipmapped array of `levels` levels of `level0` (registered; levels halve).
MipmappedArray *new_mipmapped(const CUDA_ARRAY3D_DESCRIPTOR &level0, unsigned levels, int device);
// An array's bytes, allocated (filled with kFreshByte) on first use; null when too large for the fake.
std::vector<unsigned char> *array_data(Array &a);
// One side of a cuMemcpy3DAsync that is an array, made a host side: its bytes,
// pitch (row bytes) and height (rows), checked against its extent (x in bytes,
// y rows, z slices; BC: block rows). CUDA_SUCCESS or why not.
CUresult array_as_host(CUmemorytype &type, const void *&host, CUarray array, size_t x, size_t y, size_t z,
                       size_t width, size_t height, size_t depth, size_t &pitch, size_t &rows);
// Counts a resource violation when memory [base, base + size) or a GL image's
// arrays go while a live texture or surface object reads them.
void note_memory_gone(CUdeviceptr base, size_t size);
void note_mipmapped_gone(const MipmappedArray &m);
void forget_arrays();  // at reset
void forget_graphs();  // at reset (graphs.cpp)
int device_of(CUcontext context);
// The graphics log as text, one line per call (graphics.cpp says how).
std::string graphics_log_text();
// The record of a kernel of a loaded library, or null.
const KernelRecord *find_kernel_record(CUkernel kernel);
double now_ms();

}  // namespace fake::detail
