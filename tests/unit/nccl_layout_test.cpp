// src/driver/nccl.hpp declares NCCL's few types and values itself, so that
// libcucore builds without nccl.h; here they are compared with nccl.h (built
// only where CMake found one: tests/unit/CMakeLists.txt). A mismatch fails to compile.
#include <nccl.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "cucore/communicator.h"
#include "driver/nccl.hpp"

namespace {

namespace n = cucore::driver::nccl;

static_assert(n::kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES, "ncclUniqueId size");
static_assert(sizeof(n::UniqueId) == sizeof(ncclUniqueId), "ncclUniqueId size");
static_assert(alignof(n::UniqueId) == alignof(ncclUniqueId), "ncclUniqueId alignment");
static_assert(sizeof(cucore_communicator_id_t) == sizeof(ncclUniqueId), "cucore_communicator_id_t is an ncclUniqueId");
static_assert(sizeof(n::Result) == sizeof(ncclResult_t), "ncclResult_t is an int");
static_assert(sizeof(n::DataType) == sizeof(ncclDataType_t), "ncclDataType_t is an int");
static_assert(sizeof(n::RedOp) == sizeof(ncclRedOp_t), "ncclRedOp_t is an int");
static_assert(sizeof(n::Comm) == sizeof(ncclComm_t), "ncclComm_t is a pointer");
static_assert(std::is_pointer<ncclComm_t>::value, "ncclComm_t is a pointer");

static_assert(n::kSuccess == ncclSuccess && n::kUnhandledCudaError == ncclUnhandledCudaError &&
                  n::kSystemError == ncclSystemError && n::kInternalError == ncclInternalError &&
                  n::kInvalidArgument == ncclInvalidArgument && n::kInvalidUsage == ncclInvalidUsage &&
                  n::kRemoteError == ncclRemoteError && n::kInProgress == ncclInProgress,
              "ncclResult_t values");
static_assert(n::kInt8 == ncclInt8 && n::kUint8 == ncclUint8 && n::kInt32 == ncclInt32 && n::kUint32 == ncclUint32 &&
                  n::kInt64 == ncclInt64 && n::kUint64 == ncclUint64 && n::kFloat16 == ncclFloat16 &&
                  n::kFloat32 == ncclFloat32 && n::kFloat64 == ncclFloat64,
              "ncclDataType_t values");
#if NCCL_VERSION_CODE >= 21000
static_assert(n::kBfloat16 == ncclBfloat16, "ncclBfloat16");
#endif
#if NCCL_VERSION_CODE >= 22400
static_assert(n::kFloat8e4m3 == ncclFloat8e4m3 && n::kFloat8e5m2 == ncclFloat8e5m2, "ncclFloat8 values");
static_assert(n::kFloat8Version == 22400, "the 8-bit floats came with NCCL 2.24");
#endif
static_assert(n::kSum == ncclSum && n::kProd == ncclProd && n::kMax == ncclMax && n::kMin == ncclMin &&
                  n::kAvg == ncclAvg,
              "ncclRedOp_t values");

// Each entry point takes parameters of the sizes nccl.h declares, in its order
// (the types differ by name only: an enum for an int, ncclComm_t for an opaque
// pointer; cudaStream_t and CUstream are one type), and returns ncclResult_t.
template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R (*)(A...)> {
    using Sizes = std::integer_sequence<size_t, sizeof(R), sizeof(A)...>;
};
#define CUCORE_NCCL_SAME_SIGNATURE(name, params, args)                                               \
    static_assert(std::is_same<Signature<decltype(&::name)>::Sizes,                                  \
                               Signature<decltype(cucore::driver::NcclTable::name)>::Sizes>::value, \
                  #name " parameters");
CUCORE_NCCL_ENTRY_POINTS(CUCORE_NCCL_SAME_SIGNATURE)
#undef CUCORE_NCCL_SAME_SIGNATURE
static_assert(std::is_same<cudaStream_t, CUstream>::value, "cudaStream_t is CUstream");

TEST(NcclLayout, MatchesTheToolkitsNcclHeader) {
    EXPECT_EQ(sizeof(ncclUniqueId), size_t{CUCORE_COMMUNICATOR_ID_BYTES});
    EXPECT_GE(NCCL_VERSION_CODE, 20700) << "nccl.h of NCCL 2.7 or later";
}

}  // namespace
