// The substitute NCCL (fake_nccl.hpp has the model): cliques and comms, the
// calls' counting and failures, groups, and matching postings into operations.
// The arithmetic is in fake_nccl_compute.cpp.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "fake_nccl_state.hpp"

namespace fake::nccl::detail {

State &state() {
    static State *s = new State;  // never destroyed: host nodes may post during exit
    return *s;
}

namespace {

thread_local std::string t_last_error;
struct ThreadGroup {
    int depth = 0;
    unsigned long generation = 0;
    std::vector<Posting> postings;
};
thread_local ThreadGroup t_group;

constexpr char kMagic[8] = {'F', 'A', 'K', 'E', 'N', 'C', 'C', 'L'};

// Counts the call and answers an injected failure (kSuccess: none). Clears the thread's last error.
n::Result enter(const char *name) {
    t_last_error.clear();
    State &g = state();
    Lock lock(g.mutex);
    ++g.calls;
    g.log.emplace_back(name);
    n::Result result = n::kSuccess;
    if (const char *env = std::getenv("FAKE_NCCL_FAIL"); env && *env) {
        const char *colon = std::strchr(env, ':');
        const size_t length = colon ? static_cast<size_t>(colon - env) : std::strlen(env);
        if (std::strlen(name) == length && std::strncmp(env, name, length) == 0)
            result = colon ? std::atoi(colon + 1) : n::kInternalError;
    }
    if (g.fail_at > 0 && --g.fail_at == 0) result = g.fail_at_result;
    if (!g.fail_entry.empty() && g.fail_entry == name) result = g.fail_entry_result;
    if (result != n::kSuccess) t_last_error = std::string("fake NCCL: injected failure of ") + name;
    return result;
}

#define FAKE_NCCL_ENTER(name)                                       \
    if (const n::Result injected = enter(#name); injected != n::kSuccess) return injected

Comm *live_comm(n::Comm c) {
    auto *comm = reinterpret_cast<Comm *>(c);
    return state().live.count(comm) ? comm : nullptr;
}

const char *error_string(n::Result result) {
    switch (result) {
        case n::kSuccess: return "no error";
        case n::kUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
        case n::kSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
        case n::kInternalError: return "internal error - please report this issue to the NCCL developers";
        case n::kInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
        case n::kInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
        case n::kRemoteError: return "remote process exited or there was a network error";
        case n::kInProgress: return "NCCL operation in progress";
        default: return "unknown result code";
    }
}

// The new comm of rank `rank` of `clique` on `device` (under the lock).
Comm *new_comm(Clique &clique, int rank, int device) {
    State &g = state();
    g.comm_storage.push_back(std::make_unique<Comm>(Comm{&clique, rank, device, n::kSuccess, {}}));
    Comm *comm = g.comm_storage.back().get();
    clique.ranks[static_cast<size_t>(rank)] = comm;
    g.live.insert(comm);
    return comm;
}

Clique &new_clique(int rank_count) {
    State &g = state();
    const long long id = g.next_clique++;
    auto &slot = g.cliques[id];
    slot = std::make_unique<Clique>();
    slot->id = id;
    if (rank_count > 0) {
        slot->rank_count = rank_count;
        slot->ranks.assign(static_cast<size_t>(rank_count), nullptr);
        slot->collectives.resize(static_cast<size_t>(rank_count));
    }
    return *slot;
}

// Files a posting into its clique's queues and moves what it completes into `jobs` (under the lock).
void file(const Posting &p, std::vector<Job> &jobs) {
    Clique &c = *p.comm->clique;
    if (p.kind == Kind::send || p.kind == Kind::recv) {
        const std::pair<int, int> key = p.kind == Kind::send ? std::pair{p.comm->rank, p.root}
                                                              : std::pair{p.root, p.comm->rank};
        auto &mine = p.kind == Kind::send ? c.sends[key] : c.recvs[key];
        auto &theirs = p.kind == Kind::send ? c.recvs[key] : c.sends[key];
        mine.push_back(p);
        while (!mine.empty() && !theirs.empty()) {
            Job job;
            job.parts.push_back(p.kind == Kind::send ? mine.front() : theirs.front());
            job.parts.push_back(p.kind == Kind::send ? theirs.front() : mine.front());
            mine.pop_front();
            theirs.pop_front();
            jobs.push_back(std::move(job));
        }
        return;
    }
    c.collectives[static_cast<size_t>(p.comm->rank)].push_back(p);
    for (;;) {
        for (const auto &queue : c.collectives)
            if (queue.empty()) return;
        Job job;
        for (auto &queue : c.collectives) {
            job.parts.push_back(queue.front());
            queue.pop_front();
        }
        jobs.push_back(std::move(job));
    }
}

void run_jobs(std::vector<Job> &jobs) {
    for (Job &job : jobs) compute(job);
}

// A host node of a capture: posts its operation when the graph runs.
void CUDA_CB replay(void *data) {
    Posting p = *static_cast<const Posting *>(data);
    p.captured = false;
    p.replayed = true;
    std::vector<Job> jobs;
    {
        Lock lock(state().mutex);
        if (!state().live.count(p.comm)) {
            ++state().faults;
            state().last_fault = std::string("a captured ") + kind_name(p.kind) + " ran after its comm was destroyed";
            return;
        }
        file(p, jobs);
    }
    run_jobs(jobs);
}

// Posts now: files the posting (or, on a capturing stream, adds the host node
// that will), then computes what it completes.
n::Result post(const Posting &p) {
    State &g = state();
    if (p.captured) {
        static std::mutex storage_mutex;
        static std::vector<std::unique_ptr<Posting>> *storage = new std::vector<std::unique_ptr<Posting>>;
        Posting *saved;
        {
            std::lock_guard<std::mutex> lock(storage_mutex);
            storage->push_back(std::make_unique<Posting>(p));  // kept for the process: the graph may run any time
            saved = storage->back().get();
        }
        const CUresult r = g.driver.cuLaunchHostFunc(p.stream, replay, saved);
        if (r != CUDA_SUCCESS)
            return fail(n::kUnhandledCudaError, "cuLaunchHostFunc on the capturing stream failed: CUresult " +
                                                    std::to_string(static_cast<int>(r)));
        return n::kSuccess;
    }
    std::vector<Job> jobs;
    {
        Lock lock(g.mutex);
        file(p, jobs);
    }
    run_jobs(jobs);
    return n::kSuccess;
}

// Checks the stream and posts the operation, or holds it for the group's end.
n::Result submit(Posting p) {
    State &g = state();
    if (g.driver.cuStreamIsCapturing) {
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        if (const CUresult r = g.driver.cuStreamIsCapturing(p.stream, &status); r != CUDA_SUCCESS)
            return fail(n::kUnhandledCudaError,
                        "the stream is not usable (cuStreamIsCapturing: CUresult " + std::to_string(static_cast<int>(r)) + ")");
        if (status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
            return fail(n::kUnhandledCudaError, "the stream's capture was invalidated");
        p.captured = status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    }
    if (g.driver.cuCtxGetCurrent) g.driver.cuCtxGetCurrent(&p.context);
    if (t_group.depth > 0) {
        Lock lock(g.mutex);
        if (t_group.generation != g.generation) t_group.postings.clear();
        t_group.generation = g.generation;
        t_group.postings.push_back(p);
        ++g.grouped;
        return n::kSuccess;
    }
    return post(p);
}

// The argument checks every operation shares; kSuccess or the failure.
n::Result check_common(Comm *&comm, n::Comm c, n::DataType type) {
    {
        Lock lock(state().mutex);
        comm = live_comm(c);
    }
    if (!comm) return fail(n::kInvalidArgument, c ? "comm is not a live communicator" : "comm is NULL");
    const bool float8 = type == n::kFloat8e4m3 || type == n::kFloat8e5m2;
    if (!type_size(type) || (float8 && state().version < n::kFloat8Version))
        return fail(n::kInvalidArgument, "invalid type " + std::to_string(type));
    return n::kSuccess;
}

n::Result check_op(n::RedOp op) {
    return op >= n::kSum && op <= n::kAvg ? n::kSuccess : fail(n::kInvalidArgument, "invalid reduction operation " + std::to_string(op));
}

n::Result check_rank(int rank, const Comm &comm, const char *what) {
    const int count = comm.clique->rank_count;
    return rank >= 0 && rank < count
               ? n::kSuccess
               : fail(n::kInvalidArgument, std::string("invalid ") + what + " " + std::to_string(rank) + ", nranks " +
                                               std::to_string(count));
}

n::Result check_buffer(const void *buffer, size_t count, const char *what) {
    return buffer || count == 0 ? n::kSuccess : fail(n::kInvalidArgument, std::string(what) + " is NULL");
}

#define FAKE_NCCL_CHECK(call)                                   \
    if (const n::Result check = (call); check != n::kSuccess) return check

// ---- the entry points ----

const char *f_ncclGetErrorString(n::Result result) { return error_string(result); }
const char *f_ncclGetLastError(n::Comm c) {
    if (!t_last_error.empty()) return t_last_error.c_str();
    thread_local std::string text;
    Lock lock(state().mutex);
    Comm *comm = live_comm(c);
    text = comm ? comm->async_text : std::string();
    return text.c_str();
}

n::Result f_ncclGetVersion(int *version) {
    FAKE_NCCL_ENTER(ncclGetVersion);
    if (!version) return fail(n::kInvalidArgument, "version is NULL");
    *version = state().version;
    return n::kSuccess;
}

n::Result f_ncclGetUniqueId(n::UniqueId *id) {
    FAKE_NCCL_ENTER(ncclGetUniqueId);
    if (!id) return fail(n::kInvalidArgument, "uniqueId is NULL");
    long long number;
    {
        Lock lock(state().mutex);
        number = new_clique(0).id;
    }
    std::memset(id->internal, 0, sizeof id->internal);
    std::memcpy(id->internal, kMagic, sizeof kMagic);
    const long long pid = getpid();
    std::memcpy(id->internal + 8, &number, sizeof number);
    std::memcpy(id->internal + 16, &pid, sizeof pid);
    return n::kSuccess;
}

n::Result f_ncclCommInitRank(n::Comm *c, int rank_count, n::UniqueId id, int rank) {
    FAKE_NCCL_ENTER(ncclCommInitRank);
    if (!c) return fail(n::kInvalidArgument, "comm is NULL");
    if (rank_count < 1) return fail(n::kInvalidArgument, "invalid nranks " + std::to_string(rank_count));
    if (rank < 0 || rank >= rank_count)
        return fail(n::kInvalidArgument, "invalid rank " + std::to_string(rank) + ", nranks " + std::to_string(rank_count));
    long long number = 0, pid = 0;
    std::memcpy(&number, id.internal + 8, sizeof number);
    std::memcpy(&pid, id.internal + 16, sizeof pid);
    int device = 0;
    State &g = state();
    if (g.driver.cuCtxGetDevice) {
        CUdevice d = 0;
        if (const CUresult r = g.driver.cuCtxGetDevice(&d); r != CUDA_SUCCESS)
            return fail(n::kUnhandledCudaError,
                        "no current device (cuCtxGetDevice: CUresult " + std::to_string(static_cast<int>(r)) + ")");
        device = d;
    }
    Lock lock(g.mutex);
    auto it = g.cliques.find(number);
    if (std::memcmp(id.internal, kMagic, sizeof kMagic) != 0 || pid != getpid() || it == g.cliques.end())
        return fail(n::kSystemError, "the id names no clique of this process (the fake NCCL has no cross-process cliques)");
    Clique &clique = *it->second;
    if (clique.rank_count == 0) {
        clique.rank_count = rank_count;
        clique.ranks.assign(static_cast<size_t>(rank_count), nullptr);
        clique.collectives.resize(static_cast<size_t>(rank_count));
    } else if (clique.rank_count != rank_count) {
        return fail(n::kInvalidArgument, "nranks " + std::to_string(rank_count) + " differs from the clique's " +
                                             std::to_string(clique.rank_count));
    }
    if (clique.ranks[static_cast<size_t>(rank)])
        return fail(n::kInvalidArgument, "rank " + std::to_string(rank) + " joined the clique already");
    *c = reinterpret_cast<n::Comm>(new_comm(clique, rank, device));
    return n::kSuccess;
}

n::Result f_ncclCommInitAll(n::Comm *comms, int count, const int *devices) {
    FAKE_NCCL_ENTER(ncclCommInitAll);
    if (!comms) return fail(n::kInvalidArgument, "comms is NULL");
    if (count < 1) return fail(n::kInvalidArgument, "invalid ndev " + std::to_string(count));
    State &g = state();
    int available = 1 << 30;
    if (g.driver.cuDeviceGetCount && g.driver.cuDeviceGetCount(&available) != CUDA_SUCCESS)
        return fail(n::kUnhandledCudaError, "cuDeviceGetCount failed");
    std::vector<int> ordinals;
    for (int i = 0; i < count; ++i) {
        const int d = devices ? devices[i] : i;
        if (d < 0 || d >= available) return fail(n::kInvalidArgument, "invalid device " + std::to_string(d));
        for (int o : ordinals)
            if (o == d) return fail(n::kInvalidUsage, "Duplicate GPU detected : device " + std::to_string(d));
        ordinals.push_back(d);
    }
    Lock lock(g.mutex);
    Clique &clique = new_clique(count);
    for (int i = 0; i < count; ++i) comms[i] = reinterpret_cast<n::Comm>(new_comm(clique, i, ordinals[static_cast<size_t>(i)]));
    return n::kSuccess;
}

n::Result f_ncclCommDestroy(n::Comm c) {
    FAKE_NCCL_ENTER(ncclCommDestroy);
    if (!c) return n::kSuccess;
    Lock lock(state().mutex);
    Comm *comm = live_comm(c);
    if (!comm) return fail(n::kInvalidArgument, "comm is not a live communicator");
    state().live.erase(comm);
    return n::kSuccess;
}

n::Result f_ncclCommGetAsyncError(n::Comm c, n::Result *result) {
    FAKE_NCCL_ENTER(ncclCommGetAsyncError);
    Lock lock(state().mutex);
    Comm *comm = live_comm(c);
    if (!comm) return fail(n::kInvalidArgument, "comm is not a live communicator");
    if (!result) return fail(n::kInvalidArgument, "asyncError is NULL");
    *result = comm->async_error;
    return n::kSuccess;
}

// ncclCommCount, ncclCommCuDevice, ncclCommUserRank.
template <class Read>
n::Result query(n::Comm c, int *out, const char *what, Read read) {
    Lock lock(state().mutex);
    Comm *comm = live_comm(c);
    if (!comm) return fail(n::kInvalidArgument, "comm is not a live communicator");
    if (!out) return fail(n::kInvalidArgument, std::string(what) + " is NULL");
    *out = read(*comm);
    return n::kSuccess;
}
n::Result f_ncclCommCount(n::Comm c, int *count) {
    FAKE_NCCL_ENTER(ncclCommCount);
    return query(c, count, "count", [](const Comm &comm) { return comm.clique->rank_count; });
}
n::Result f_ncclCommCuDevice(n::Comm c, int *device) {
    FAKE_NCCL_ENTER(ncclCommCuDevice);
    return query(c, device, "device", [](const Comm &comm) { return comm.device; });
}
n::Result f_ncclCommUserRank(n::Comm c, int *rank) {
    FAKE_NCCL_ENTER(ncclCommUserRank);
    return query(c, rank, "rank", [](const Comm &comm) { return comm.rank; });
}

Posting posting(Kind kind, Comm *comm, const void *s, void *r, size_t count, n::DataType t, n::RedOp op, int root,
                CUstream stream) {
    return Posting{kind, comm, s, r, count, t, op, root, stream, nullptr, false, false};
}

n::Result f_ncclAllReduce(const void *s, void *r, size_t count, n::DataType t, n::RedOp op, n::Comm c, CUstream st) {
    FAKE_NCCL_ENTER(ncclAllReduce);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_op(op));
    FAKE_NCCL_CHECK(check_buffer(s, count, "sendbuff"));
    FAKE_NCCL_CHECK(check_buffer(r, count, "recvbuff"));
    return submit(posting(Kind::all_reduce, comm, s, r, count, t, op, 0, st));
}
n::Result f_ncclAllGather(const void *s, void *r, size_t count, n::DataType t, n::Comm c, CUstream st) {
    FAKE_NCCL_ENTER(ncclAllGather);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_buffer(s, count, "sendbuff"));
    FAKE_NCCL_CHECK(check_buffer(r, count, "recvbuff"));
    return submit(posting(Kind::all_gather, comm, s, r, count, t, n::kSum, 0, st));
}
n::Result f_ncclReduceScatter(const void *s, void *r, size_t count, n::DataType t, n::RedOp op, n::Comm c,
                              CUstream st) {
    FAKE_NCCL_ENTER(ncclReduceScatter);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_op(op));
    FAKE_NCCL_CHECK(check_buffer(s, count, "sendbuff"));
    FAKE_NCCL_CHECK(check_buffer(r, count, "recvbuff"));
    return submit(posting(Kind::reduce_scatter, comm, s, r, count, t, op, 0, st));
}
n::Result f_ncclBroadcast(const void *s, void *r, size_t count, n::DataType t, int root, n::Comm c, CUstream st) {
    FAKE_NCCL_ENTER(ncclBroadcast);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_rank(root, *comm, "root"));
    if (comm->rank == root) FAKE_NCCL_CHECK(check_buffer(s, count, "sendbuff"));
    FAKE_NCCL_CHECK(check_buffer(r, count, "recvbuff"));
    return submit(posting(Kind::broadcast, comm, s, r, count, t, n::kSum, root, st));
}
n::Result f_ncclReduce(const void *s, void *r, size_t count, n::DataType t, n::RedOp op, int root, n::Comm c,
                       CUstream st) {
    FAKE_NCCL_ENTER(ncclReduce);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_op(op));
    FAKE_NCCL_CHECK(check_rank(root, *comm, "root"));
    FAKE_NCCL_CHECK(check_buffer(s, count, "sendbuff"));
    if (comm->rank == root) FAKE_NCCL_CHECK(check_buffer(r, count, "recvbuff"));
    return submit(posting(Kind::reduce, comm, s, r, count, t, op, root, st));
}
n::Result f_ncclSend(const void *s, size_t count, n::DataType t, int peer, n::Comm c, CUstream st) {
    FAKE_NCCL_ENTER(ncclSend);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_rank(peer, *comm, "peer"));
    FAKE_NCCL_CHECK(check_buffer(s, count, "sendbuff"));
    return submit(posting(Kind::send, comm, s, nullptr, count, t, n::kSum, peer, st));
}
n::Result f_ncclRecv(void *r, size_t count, n::DataType t, int peer, n::Comm c, CUstream st) {
    FAKE_NCCL_ENTER(ncclRecv);
    Comm *comm = nullptr;
    FAKE_NCCL_CHECK(check_common(comm, c, t));
    FAKE_NCCL_CHECK(check_rank(peer, *comm, "peer"));
    FAKE_NCCL_CHECK(check_buffer(r, count, "recvbuff"));
    return submit(posting(Kind::recv, comm, nullptr, r, count, t, n::kSum, peer, st));
}

n::Result f_ncclGroupStart() {
    FAKE_NCCL_ENTER(ncclGroupStart);
    if (t_group.depth == 0) {
        Lock lock(state().mutex);
        if (t_group.generation != state().generation) t_group.postings.clear();
        t_group.generation = state().generation;
    }
    ++t_group.depth;
    return n::kSuccess;
}
n::Result f_ncclGroupEnd() {
    FAKE_NCCL_ENTER(ncclGroupEnd);
    if (t_group.depth == 0) return fail(n::kInvalidUsage, "ncclGroupEnd: not in a group call");
    if (--t_group.depth > 0) return n::kSuccess;
    std::vector<Posting> postings;
    {
        Lock lock(state().mutex);
        if (t_group.generation == state().generation) state().grouped -= static_cast<int>(t_group.postings.size());
        postings.swap(t_group.postings);
    }
    n::Result result = n::kSuccess;
    std::string text;
    for (const Posting &p : postings)
        if (const n::Result r = post(p); r != n::kSuccess && result == n::kSuccess) {
            result = r;
            text = t_last_error;
        }
    t_last_error = text;
    return result;
}

cucore::driver::NcclTable g_table = [] {
    cucore::driver::NcclTable t;
    t.ncclGetErrorString = f_ncclGetErrorString;
    t.ncclGetLastError = f_ncclGetLastError;
#define FAKE_NCCL_ENTRY(name, params, args) t.name = f_##name;
    CUCORE_NCCL_ENTRY_POINTS(FAKE_NCCL_ENTRY)
#undef FAKE_NCCL_ENTRY
    return t;
}();

}  // namespace

n::Result fail(n::Result result, const std::string &text) {
    t_last_error = text;
    return result;
}

const char *kind_name(Kind kind) {
    switch (kind) {
        case Kind::all_reduce: return "all-reduce";
        case Kind::all_gather: return "all-gather";
        case Kind::reduce_scatter: return "reduce-scatter";
        case Kind::broadcast: return "broadcast";
        case Kind::reduce: return "reduce";
        case Kind::send: return "send";
        default: return "recv";
    }
}

void fault(Job &job, n::Result result, const std::string &text) {
    State &g = state();
    Lock lock(g.mutex);
    ++g.faults;
    g.last_fault = text;
    for (Posting &p : job.parts) {
        p.comm->async_error = result;
        p.comm->async_text = "fake NCCL: " + text;
    }
}

}  // namespace fake::nccl::detail

namespace fake::nccl {

using namespace detail;

const cucore::driver::NcclTable &table(const Driver &driver, int version) {
    State &g = state();
    Lock lock(g.mutex);
    g.driver = driver;
    g.version = version;
    g.calls = 0;
    g.fail_at = 0;
    g.fail_entry.clear();
    g.log.clear();
    for (auto &entry : g.cliques) g.clique_graveyard.push_back(std::move(entry.second));
    g.cliques.clear();
    g.live.clear();
    ++g.generation;
    g.grouped = 0;
    g.completed = 0;
    g.faults = 0;
    g.last_fault.clear();
    return g_table;
}

const cucore::driver::NcclTable &current_table() { return g_table; }

void set_driver(const Driver &driver) {
    Lock lock(state().mutex);
    state().driver = driver;
}

void fail_call(long n, int result) {
    Lock lock(state().mutex);
    state().fail_at = n;
    state().fail_at_result = result;
}

void fail_entry(const std::string &name, int result) {
    Lock lock(state().mutex);
    state().fail_entry = name;
    state().fail_entry_result = result;
}

long calls() {
    Lock lock(state().mutex);
    return state().calls;
}

void reset_calls() {
    Lock lock(state().mutex);
    state().calls = 0;
    state().log.clear();
}

std::vector<std::string> call_log() {
    Lock lock(state().mutex);
    return state().log;
}

void set_version(int version) {
    Lock lock(state().mutex);
    state().version = version;
}

int live_comms() {
    Lock lock(state().mutex);
    return static_cast<int>(state().live.size());
}

int pending_operations() {
    Lock lock(state().mutex);
    size_t count = static_cast<size_t>(state().grouped);
    for (const auto &entry : state().cliques) {
        const Clique &c = *entry.second;
        for (const auto &queue : c.collectives) count += queue.size();
        for (const auto &pair : c.sends) count += pair.second.size();
        for (const auto &pair : c.recvs) count += pair.second.size();
    }
    return static_cast<int>(count);
}

long completed_operations() {
    Lock lock(state().mutex);
    return state().completed;
}

long faults() {
    Lock lock(state().mutex);
    return state().faults;
}

std::string last_fault() {
    Lock lock(state().mutex);
    return state().last_fault;
}

bool set_async_error(n::Comm comm, int result) {
    Lock lock(state().mutex);
    auto *c = reinterpret_cast<Comm *>(comm);
    if (!state().live.count(c)) return false;
    c->async_error = result;
    c->async_text = result == n::kSuccess ? std::string() : "fake NCCL: injected asynchronous error";
    return true;
}

long long clique_of(n::Comm comm) {
    Lock lock(state().mutex);
    auto *c = reinterpret_cast<Comm *>(comm);
    return state().live.count(c) ? c->clique->id : -1;
}

}  // namespace fake::nccl
