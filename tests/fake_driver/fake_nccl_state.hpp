// The substitute NCCL's state (fake_nccl.hpp has the model): cliques, comms,
// postings and the calls' bookkeeping. Internal to fake_nccl*.cpp.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fake_nccl.hpp"

namespace fake::nccl::detail {

namespace n = cucore::driver::nccl;
using Lock = std::unique_lock<std::mutex>;

enum class Kind { all_reduce, all_gather, reduce_scatter, broadcast, reduce, send, recv };
const char *kind_name(Kind kind);

struct Clique;
struct Comm {
    Clique *clique;
    int rank;
    int device;
    int async_error = n::kSuccess;
    std::string async_text;  // what ncclGetLastError(comm) answers after an async error
};

// One rank's part of an operation, as posted.
struct Posting {
    Kind kind;
    Comm *comm;
    const void *send;
    void *recv;
    size_t count;
    n::DataType type;
    n::RedOp op;
    int root;  // broadcast and reduce: the root; send and recv: the peer
    CUstream stream;
    CUcontext context;      // current at the call (a built-in stream handle names its default stream)
    bool captured = false;  // the stream was capturing at the call: a host node posts it
    bool replayed = false;  // posted by that host node: memory is read and written directly
};

struct Clique {
    long long id;
    int rank_count = 0;            // 0 until the first rank joins
    std::vector<Comm *> ranks;     // joined (destroyed ones stay)
    std::vector<std::deque<Posting>> collectives;  // per rank, in posting order
    std::map<std::pair<int, int>, std::deque<Posting>> sends, recvs;  // by (sender, receiver)
};

// Postings matched into one operation: collectives by rank, a send and its receive.
struct Job {
    std::vector<Posting> parts;
};

struct State {
    std::mutex mutex;
    Driver driver;
    int version = kDefaultVersion;
    long calls = 0;
    long fail_at = 0;
    int fail_at_result = n::kInternalError;
    std::string fail_entry;
    int fail_entry_result = n::kInternalError;
    std::vector<std::string> log;
    long long next_clique = 1;
    unsigned long generation = 1;  // bumped by a reset: groups of other threads from before it are dropped
    std::map<long long, std::unique_ptr<Clique>> cliques;
    // Comms and cliques are kept for the process (a late host node may name one); `live` is what counts.
    std::vector<std::unique_ptr<Comm>> comm_storage;
    std::vector<std::unique_ptr<Clique>> clique_graveyard;
    std::set<Comm *> live;
    int grouped = 0;  // postings held by open groups of every thread
    long completed = 0;
    long faults = 0;
    std::string last_fault;
};
State &state();

// Sets the calling thread's last error (ncclGetLastError) and answers `result`.
n::Result fail(n::Result result, const std::string &text);
// The size of an element of `type`, 0 for a type the fake does not know.
size_t type_size(n::DataType type);

// Computes a matched job (without the state's lock): reads every input,
// computes, writes every output; a mismatch or a failed copy is a fault.
void compute(Job &job);
// Counts a fault: sets the async error of the comms of `job` (under the lock).
void fault(Job &job, n::Result result, const std::string &text);

}  // namespace fake::nccl::detail
