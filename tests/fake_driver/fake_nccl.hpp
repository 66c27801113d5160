// The substitute NCCL of the tests (src/driver/nccl.hpp's table), on the fake
// CUDA driver (fake_driver.hpp). One implementation (fake_nccl*.cpp), built
// twice: into cucore_fake_driver, which the unit tests install in-process
// (install() below), and as libcucore_fake_nccl.so (tests/fake_nccl/), a
// libnccl.so.2 look-alike the Python and Rust tests load through
// CUCORE_NCCL_PATH; it reaches the fake driver already loaded in the process
// (CUCORE_CUDA_DRIVER_PATH, through cuGetProcAddress_v2) and exports the
// fake_nccl_* controls (tests/fake_nccl/exports.cpp).
//
// The model:
//  - Cliques live in one process. ncclGetUniqueId makes an id naming a new
//    clique (magic "FAKENCCL", the clique's number, the pid); ncclCommInitRank
//    joins it as one rank at once (it never blocks: the other ranks may join
//    later, from any thread, inside a group or not). An id of another process
//    or one the fake never made is ncclSystemError (real cross-process cliques
//    are not faked). The first joiner fixes the rank count; a different count,
//    a rank outside it or a rank joined twice is ncclInvalidArgument.
//    ncclCommInitAll makes a clique of n comms (devices NULL: 0..n-1; a device
//    the driver does not have is ncclInvalidArgument, one named twice
//    ncclInvalidUsage). A comm's device is the current context's device at
//    ncclCommInitRank (cuCtxGetDevice), devices[i] for ncclCommInitAll.
//  - Every entry point but ncclGetErrorString and ncclGetLastError is
//    counted, logged and can be made to fail (fail_call, fail_entry, or the
//    environment's FAKE_NCCL_FAIL=<entry point>[:<ncclResult_t>], read on each
//    call); a failed call changes nothing and leaves "fake NCCL: injected
//    failure of <name>" as the thread's last error (ncclGetLastError).
//  - Collectives check their arguments as NCCL does, at the call (inside a
//    group too): a null or unknown comm, a null buffer with a count above 0
//    (broadcast: send only on the root; reduce: recv only on the root), a data
//    type outside ncclDataType_t (the 8-bit floats need version >= 22400), an
//    op outside ncclRedOp_t, a root or peer outside [0, rank count) answer
//    ncclInvalidArgument with a last error naming the argument; a stream the
//    driver does not know (cuStreamIsCapturing fails) ncclUnhandledCudaError.
//  - Posting: outside a group an operation is posted at its call; inside one
//    (ncclGroupStart/End nest per thread) at the outermost ncclGroupEnd, in
//    call order. Collectives of a clique are matched in posting order: the
//    k-th posted by each rank form one operation, computed when the last rank
//    posts its k-th (so a group of every rank computes at its group end, and
//    ranks on several threads compute on the thread that posts last). Sends
//    and receives are matched per (sender, receiver) pair in posting order,
//    computed when both are there. Posting never blocks.
//  - Computing: every participant's input is read with cuMemcpyAsync into
//    host memory on its own stream (which waits for that stream's earlier
//    work: the fake driver's copy to pageable memory does), the result is
//    computed on the host, and written back with cuMemcpyAsync on each
//    participant's stream (in stream order: at once in-process, where streams
//    run synchronously; queued on the stream's worker in the shared library).
//    Known gap: work a rank enqueues on its stream after its operation and
//    before the last rank posts runs before the operation.
//    Integer types wrap; float16, bfloat16 and the 8-bit floats are computed
//    in float and rounded to the type after each step (rank order); AVG is a
//    sum divided by the rank count for integers, a sum of x * (1 / n) for
//    floats (NCCL's pre-multiplied sum). In place (send == recv, or all-gather's
//    send inside recv) works: every input is read before anything is written.
//  - A mismatch (operations of different kinds, counts, types, ops or roots
//    matched together; a send and receive of different sizes) or a driver
//    copy that fails (memory freed or too small) computes nothing: it sets
//    the async error of the comms involved (ncclInvalidUsage, or
//    ncclUnhandledCudaError for a copy) and counts a fault (faults()).
//  - A stream being captured: the operation becomes a host node of the
//    capture (cuLaunchHostFunc), which posts it when the graph runs; matched
//    operations with such a participant read and write memory directly (the
//    fake's device memory is host memory) rather than through stream copies.
//  - ncclCommDestroy (NULL: ncclSuccess; unknown: ncclInvalidArgument) frees
//    the comm; its unmatched operations stay posted (counted in
//    pending_operations()). live_comms() counts comms made and not destroyed.
//  - ncclCommGetAsyncError answers the comm's async error (set_async_error
//    injects one); ncclCommCount/CuDevice/UserRank answer the comm's.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "driver/nccl.hpp"
#include "fake_driver.hpp"

namespace fake::nccl {

// The version the fake answers unless told otherwise (NCCL 2.28.9).
constexpr int kDefaultVersion = 22809;

// What the fake needs of the CUDA driver (the fake driver's entry points).
struct Driver {
    CUresult (*cuCtxGetCurrent)(CUcontext *) = nullptr;
    CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxGetDevice)(CUdevice *) = nullptr;
    CUresult (*cuDeviceGetCount)(int *) = nullptr;
    CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *) = nullptr;
    CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
    CUresult (*cuLaunchHostFunc)(CUstream, CUhostFn, void *) = nullptr;
};

// Resets the fake (forgets every clique, comm, posting, counter and injected
// failure; the version is `version`) and returns its table. `driver` (copied)
// is the driver it works through; with null members it reads and writes
// memory directly and ignores streams.
const cucore::driver::NcclTable &table(const Driver &driver, int version = kDefaultVersion);
// The fake's table as it is.
const cucore::driver::NcclTable &current_table();
// Replaces the driver the fake works through (the shared library resolves the
// fake driver once it is loaded), keeping everything else.
void set_driver(const Driver &driver);
// The fake driver's entry points, as the in-process installation passes them.
inline Driver in_process_driver() {
    const cucore::driver::Table &t = fake::table();
    Driver d;
    d.cuCtxGetCurrent = t.cuCtxGetCurrent;
    d.cuCtxSetCurrent = t.cuCtxSetCurrent;
    d.cuCtxGetDevice = t.cuCtxGetDevice;
    d.cuDeviceGetCount = t.cuDeviceGetCount;
    d.cuStreamIsCapturing = t.cuStreamIsCapturing;
    d.cuMemcpyAsync = t.cuMemcpyAsync;
    d.cuLaunchHostFunc = t.cuLaunchHostFunc;
    return d;
}
// In-process (unit tests, after fake::install): resets the fake and installs it
// as libcucore's NCCL. Inline, so that fake_nccl*.cpp need nothing of libcucore.
inline void install(int version = kDefaultVersion) {
    cucore::driver::install_nccl_substitute(&table(in_process_driver(), version), version);
}
// Back to the real NCCL (loaded on next use).
inline void uninstall() { cucore::driver::install_nccl_substitute(nullptr); }

// Fails the `n`-th counted call from now (1-based) with `result`; 0 disables.
void fail_call(long n, int result = cucore::driver::nccl::kInternalError);
// Makes every call of `name` fail with `result` ("" clears).
void fail_entry(const std::string &name, int result = cucore::driver::nccl::kInternalError);
long calls();
void reset_calls();
std::vector<std::string> call_log();  // since the reset or reset_calls()
// What ncclGetVersion answers from now on.
void set_version(int version);

// Comms made and not destroyed.
int live_comms();
// Operations posted and not yet matched (and grouped ones not yet posted, of every thread).
int pending_operations();
// Operations computed since the reset (a matched collective counts once, a send/receive pair once).
long completed_operations();
// Mismatches and failed copies since the reset (see the model above).
long faults();
// The text of the last fault ("" if none).
std::string last_fault();
// Sets what ncclCommGetAsyncError answers for `comm` (false: not a live comm).
bool set_async_error(cucore::driver::nccl::Comm comm, int result);
// The clique number of a live comm (comms of one clique share it; -1 if not live).
long long clique_of(cucore::driver::nccl::Comm comm);

}  // namespace fake::nccl
