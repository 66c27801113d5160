// Run-time loading of NCCL (libnccl.so.2), the collective communication
// library behind include/cucore/communicator.h. Opened on first use, once,
// thread-safely, through driver::open_library with the override
// CUCORE_NCCL_PATH; libcucore never links it. Absent: CUCORE_ERROR_NOT_SUPPORTED
// ("libnccl.so.2 could not be loaded: ...") from the call that needs it;
// everything else still works.
//
// No NCCL header is needed to build: the few types used are declared below,
// mirroring NCCL's C ABI (nccl.h of NCCL 2.x; tests/unit/nccl_layout_test.cpp
// compares them with nccl.h where the toolkit has one). Like the driver table,
// the NCCL table has a substitute seam so unit tests install a fake (fault
// injection, and collectives run on the fake driver's host memory).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

#include "cucore/common.h"

namespace cucore::driver {

namespace nccl {
using Result = int;            // ncclResult_t
struct CommOpaque;             // struct ncclComm
using Comm = CommOpaque *;     // ncclComm_t
using DataType = int;          // ncclDataType_t
using RedOp = int;             // ncclRedOp_t
constexpr size_t kUniqueIdBytes = 128;
struct UniqueId {              // ncclUniqueId
    char internal[kUniqueIdBytes];
};

// ncclResult_t values.
constexpr Result kSuccess = 0;
constexpr Result kUnhandledCudaError = 1;
constexpr Result kSystemError = 2;
constexpr Result kInternalError = 3;
constexpr Result kInvalidArgument = 4;
constexpr Result kInvalidUsage = 5;
constexpr Result kRemoteError = 6;
constexpr Result kInProgress = 7;

// ncclDataType_t values.
constexpr DataType kInt8 = 0, kUint8 = 1, kInt32 = 2, kUint32 = 3, kInt64 = 4, kUint64 = 5, kFloat16 = 6,
                   kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9, kFloat8e4m3 = 10, kFloat8e5m2 = 11;
// ncclRedOp_t values.
constexpr RedOp kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4;
// The first NCCL with the 8-bit float types (NCCL_VERSION_CODE).
constexpr int kFloat8Version = 22400;
}  // namespace nccl

// Every NCCL entry point libcucore uses that returns ncclResult_t:
// X(name, parameters, arguments), with NCCL's prototypes (cudaStream_t is
// CUstream). One list makes the table, its loader and the fake library's exports.
#define CUCORE_NCCL_ENTRY_POINTS(X) \
    X(ncclGetVersion, (int *v), (v)) \
    X(ncclGetUniqueId, (nccl::UniqueId * id), (id)) \
    X(ncclCommInitRank, (nccl::Comm * c, int n, nccl::UniqueId id, int r), (c, n, id, r)) \
    X(ncclCommInitAll, (nccl::Comm * c, int n, const int *devices), (c, n, devices)) \
    X(ncclCommDestroy, (nccl::Comm c), (c)) \
    X(ncclCommGetAsyncError, (nccl::Comm c, nccl::Result * r), (c, r)) \
    X(ncclCommCount, (nccl::Comm c, int *n), (c, n)) \
    X(ncclCommCuDevice, (nccl::Comm c, int *d), (c, d)) \
    X(ncclCommUserRank, (nccl::Comm c, int *r), (c, r)) \
    X(ncclAllReduce, (const void *s, void *r, size_t n, nccl::DataType t, nccl::RedOp op, nccl::Comm c, CUstream st), \
      (s, r, n, t, op, c, st)) \
    X(ncclAllGather, (const void *s, void *r, size_t n, nccl::DataType t, nccl::Comm c, CUstream st), \
      (s, r, n, t, c, st)) \
    X(ncclReduceScatter, \
      (const void *s, void *r, size_t n, nccl::DataType t, nccl::RedOp op, nccl::Comm c, CUstream st), \
      (s, r, n, t, op, c, st)) \
    X(ncclBroadcast, (const void *s, void *r, size_t n, nccl::DataType t, int root, nccl::Comm c, CUstream st), \
      (s, r, n, t, root, c, st)) \
    X(ncclReduce, \
      (const void *s, void *r, size_t n, nccl::DataType t, nccl::RedOp op, int root, nccl::Comm c, CUstream st), \
      (s, r, n, t, op, root, c, st)) \
    X(ncclSend, (const void *s, size_t n, nccl::DataType t, int peer, nccl::Comm c, CUstream st), \
      (s, n, t, peer, c, st)) \
    X(ncclRecv, (void *r, size_t n, nccl::DataType t, int peer, nccl::Comm c, CUstream st), (r, n, t, peer, c, st)) \
    X(ncclGroupStart, (), ()) \
    X(ncclGroupEnd, (), ())

// The entry points libcucore uses, with NCCL's prototypes.
struct NcclTable {
    const char *(*ncclGetErrorString)(nccl::Result) = nullptr;
    const char *(*ncclGetLastError)(nccl::Comm) = nullptr;  // optional (2.13+)
#define CUCORE_NCCL_MEMBER(name, params, args) nccl::Result(*name) params = nullptr;
    CUCORE_NCCL_ENTRY_POINTS(CUCORE_NCCL_MEMBER)
#undef CUCORE_NCCL_MEMBER
};

// A loaded NCCL: its table and its version (NCCL_VERSION_CODE).
struct Nccl {
    const NcclTable *table = nullptr;
    int version = 0;
};

// NCCL, loaded on first call; throws driver::Error(NOT_SUPPORTED) naming what
// was tried when the library (or one of its required entry points) is missing.
const Nccl &nccl_api();

// Throws the error of a failed NCCL call: "<function> failed: ncclX (<ncclGetErrorString>)[: <last error>]",
// with the status of nccl_status. `comm` (may be null) supplies ncclGetLastError's text.
[[noreturn]] void throw_nccl(nccl::Result result, const char *function, nccl::Comm comm);
inline void check_nccl(nccl::Result result, const char *function, nccl::Comm comm = nullptr) {
    if (__builtin_expect(result != nccl::kSuccess, 0)) throw_nccl(result, function, comm);
}
// The status an NCCL result maps to: invalid argument -> INVALID_ARGUMENT,
// invalid usage -> INVALID_STATE, the rest -> CUDA.
cucore_status_t nccl_status(nccl::Result result) noexcept;
// "ncclInvalidArgument" for a result ("NCCL error <n>" for one it does not know).
std::string nccl_error_name(nccl::Result result);

// Substitute seam for tests: `table` (and version) replace the real NCCL until
// called again with nullptr. The table must outlive its installation. Not for
// use while other threads call NCCL.
void install_nccl_substitute(const NcclTable *table, int version = 22809);
// Makes NCCL read as not installed ("" message: a default one) until a
// substitute or nullptr is installed (tests of the NOT_SUPPORTED paths).
void mark_nccl_absent(const std::string &why);

}  // namespace cucore::driver

// Calls NCCL entry point `name` through the loaded table; throws on failure.
// CUCORE_NCCL_COMM(comm, name, ...) also reads the communicator's last error text.
#define CUCORE_NCCL(name, ...) ::cucore::driver::check_nccl(::cucore::driver::nccl_api().table->name(__VA_ARGS__), #name)
#define CUCORE_NCCL_COMM(comm, name, ...) \
    ::cucore::driver::check_nccl(::cucore::driver::nccl_api().table->name(__VA_ARGS__), #name, comm)
