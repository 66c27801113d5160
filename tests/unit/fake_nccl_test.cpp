// The fake NCCL itself (tests/fake_driver/fake_nccl.hpp), called through its
// table as libcucore would, on the fake driver: the argument checks NCCL makes
// (which libcucore's own checks keep it from reaching), cliques, groups,
// counting and injected failures, and rounding of the small float types.
#include <cstring>
#include <string>
#include <vector>

#include "fake_nccl.hpp"
#include "test_support.hpp"

namespace {

namespace n = cucore::driver::nccl;

class FakeNcclTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        t_ = &fake::nccl::table(fake::nccl::in_process_driver());
        ASSERT_EQ(fake::table().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
        fake::set_current_context(context_);
        ASSERT_EQ(t_->ncclCommInitAll(comms_, 2, nullptr), n::kSuccess);
        ASSERT_EQ(fake::table().cuMemAllocManaged(&memory_, 64, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    }
    void TearDown() override {
        for (n::Comm c : comms_) EXPECT_EQ(t_->ncclCommDestroy(c), n::kSuccess);
        EXPECT_EQ(fake::nccl::live_comms(), 0);
        EXPECT_EQ(fake::table().cuMemFree(memory_), CUDA_SUCCESS);
        fake::set_current_context(nullptr);
        EXPECT_EQ(fake::table().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
        FakeDriverTest::TearDown();
    }
    // Expects `result` with a last error containing `text`.
    void expect(n::Result result, n::Result expected, const std::string &text) {
        SCOPED_TRACE(text);
        EXPECT_EQ(result, expected);
        const std::string last = t_->ncclGetLastError(nullptr);
        EXPECT_NE(last.find(text), std::string::npos) << last;
    }
    void *mem(size_t offset = 0) { return reinterpret_cast<void *>(memory_ + offset); }

    const cucore::driver::NcclTable *t_ = nullptr;
    CUcontext context_ = nullptr;
    n::Comm comms_[2] = {};
    CUdeviceptr memory_ = 0;
};

TEST_F(FakeNcclTest, CollectivesCheckTheirArgumentsAsNcclDoes) {
    n::Comm c = comms_[0];
    expect(t_->ncclAllReduce(nullptr, mem(), 4, n::kFloat32, n::kSum, c, nullptr), n::kInvalidArgument, "sendbuff is NULL");
    expect(t_->ncclAllReduce(mem(), nullptr, 4, n::kFloat32, n::kSum, c, nullptr), n::kInvalidArgument, "recvbuff is NULL");
    expect(t_->ncclAllReduce(mem(), mem(), 4, 12, n::kSum, c, nullptr), n::kInvalidArgument, "invalid type 12");
    expect(t_->ncclAllReduce(mem(), mem(), 4, n::kFloat32, 5, c, nullptr), n::kInvalidArgument,
           "invalid reduction operation 5");
    expect(t_->ncclAllReduce(mem(), mem(), 4, n::kFloat32, n::kSum, nullptr, nullptr), n::kInvalidArgument,
           "comm is NULL");
    expect(t_->ncclBroadcast(mem(), mem(), 4, n::kInt8, 2, c, nullptr), n::kInvalidArgument, "invalid root 2, nranks 2");
    expect(t_->ncclReduce(mem(), mem(), 4, n::kInt8, n::kSum, -1, c, nullptr), n::kInvalidArgument, "invalid root -1");
    expect(t_->ncclSend(mem(), 4, n::kInt8, 2, c, nullptr), n::kInvalidArgument, "invalid peer 2");
    expect(t_->ncclRecv(mem(), 4, n::kInt8, -1, c, nullptr), n::kInvalidArgument, "invalid peer -1");
    expect(t_->ncclAllGather(mem(), mem(), 4, n::kInt8, c, reinterpret_cast<CUstream>(0x1234)),
           n::kUnhandledCudaError, "the stream is not usable");
    // Non-roots may pass NULL where NCCL does not read; a count of 0 needs no buffer.
    EXPECT_EQ(t_->ncclGroupStart(), n::kSuccess);
    EXPECT_EQ(t_->ncclBroadcast(nullptr, mem(), 4, n::kInt8, 1, comms_[0], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclBroadcast(mem(), mem(), 4, n::kInt8, 1, comms_[1], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclReduce(mem(), nullptr, 0, n::kInt8, n::kSum, 0, comms_[1], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclReduce(nullptr, nullptr, 0, n::kInt8, n::kSum, 0, comms_[0], nullptr), n::kSuccess);
    EXPECT_EQ(fake::nccl::pending_operations(), 4) << "held by the group";
    EXPECT_EQ(t_->ncclGroupEnd(), n::kSuccess);
    EXPECT_EQ(fake::nccl::completed_operations(), 2);
    EXPECT_EQ(fake::nccl::pending_operations(), 0);
    expect(t_->ncclGroupEnd(), n::kInvalidUsage, "not in a group call");
    // The 8-bit floats need NCCL 2.24.
    fake::nccl::set_version(22304);
    expect(t_->ncclAllReduce(mem(), mem(), 4, n::kFloat8e4m3, n::kSum, c, nullptr), n::kInvalidArgument,
           "invalid type 10");
}

TEST_F(FakeNcclTest, CliquesCountsAndInjectedFailures) {
    int value = -1;
    EXPECT_EQ(t_->ncclCommCount(comms_[1], &value), n::kSuccess);
    EXPECT_EQ(value, 2);
    EXPECT_EQ(t_->ncclCommUserRank(comms_[1], &value), n::kSuccess);
    EXPECT_EQ(value, 1);
    EXPECT_EQ(t_->ncclCommCuDevice(comms_[1], &value), n::kSuccess);
    EXPECT_EQ(value, 1) << "ncclCommInitAll with no devices: 0..n-1";
    EXPECT_EQ(t_->ncclCommDestroy(nullptr), n::kSuccess) << "NULL is a no-op, as in NCCL";
    expect(t_->ncclCommCount(reinterpret_cast<n::Comm>(memory_), &value), n::kInvalidArgument, "not a live communicator");
    const int twice[2] = {1, 1};
    n::Comm more[2] = {};
    expect(t_->ncclCommInitAll(more, 2, twice), n::kInvalidUsage, "Duplicate GPU detected");
    const int missing[1] = {2};
    expect(t_->ncclCommInitAll(more, 1, missing), n::kInvalidArgument, "invalid device 2");
    // An id joins ranks one at a time, on the current context's device.
    n::UniqueId id;
    ASSERT_EQ(t_->ncclGetUniqueId(&id), n::kSuccess);
    n::Comm a = nullptr, b = nullptr;
    ASSERT_EQ(t_->ncclCommInitRank(&a, 2, id, 1), n::kSuccess);
    expect(t_->ncclCommInitRank(&b, 2, id, 1), n::kInvalidArgument, "rank 1 joined the clique already");
    expect(t_->ncclCommInitRank(&b, 3, id, 0), n::kInvalidArgument, "nranks 3 differs from the clique's 2");
    n::UniqueId foreign = id;
    foreign.internal[0] = 'X';
    expect(t_->ncclCommInitRank(&b, 2, foreign, 0), n::kSystemError, "names no clique of this process");
    ASSERT_EQ(t_->ncclCommInitRank(&b, 2, id, 0), n::kSuccess);
    EXPECT_EQ(fake::nccl::clique_of(a), fake::nccl::clique_of(b));
    EXPECT_NE(fake::nccl::clique_of(a), fake::nccl::clique_of(comms_[0]));
    EXPECT_EQ(t_->ncclCommCuDevice(a, &value), n::kSuccess);
    EXPECT_EQ(value, 0) << "the current context's device";
    // Counting and failures: the n-th call, every call of one entry point, the environment.
    fake::nccl::reset_calls();
    fake::nccl::fail_call(2, n::kRemoteError);
    EXPECT_EQ(t_->ncclCommCount(a, &value), n::kSuccess);
    expect(t_->ncclCommCount(a, &value), n::kRemoteError, "injected failure of ncclCommCount");
    EXPECT_EQ(t_->ncclCommCount(a, &value), n::kSuccess);
    fake::nccl::fail_entry("ncclCommDestroy");
    expect(t_->ncclCommDestroy(a), n::kInternalError, "injected failure of ncclCommDestroy");
    fake::nccl::fail_entry("");
    EXPECT_EQ(fake::nccl::calls(), 4);
    EXPECT_EQ(fake::nccl::call_log(), (std::vector<std::string>{"ncclCommCount", "ncclCommCount", "ncclCommCount",
                                                                 "ncclCommDestroy"}));
    EXPECT_EQ(t_->ncclCommDestroy(a), n::kSuccess);
    EXPECT_EQ(t_->ncclCommDestroy(b), n::kSuccess);
    expect(t_->ncclCommDestroy(b), n::kInvalidArgument, "not a live communicator");
    EXPECT_STREQ(t_->ncclGetErrorString(n::kInvalidUsage), "invalid usage (run with NCCL_DEBUG=WARN for details)");
}

TEST_F(FakeNcclTest, SmallFloatsRoundToNearestEvenAfterEachStep) {
    // float16: 2048 + 1 is not a float16 (spacing 2 there): it rounds to even, 2048; 2048 + 3 -> 2052.
    const uint16_t h2048 = 0x6800, h1 = 0x3C00, h3 = 0x4200;
    uint16_t in[2][2] = {{h2048, h2048}, {h1, h3}};
    ASSERT_EQ(fake::table().cuMemcpyHtoD(memory_, in[0], 4), CUDA_SUCCESS);
    ASSERT_EQ(fake::table().cuMemcpyHtoD(memory_ + 16, in[1], 4), CUDA_SUCCESS);
    EXPECT_EQ(t_->ncclGroupStart(), n::kSuccess);
    EXPECT_EQ(t_->ncclAllReduce(mem(0), mem(32), 2, n::kFloat16, n::kSum, comms_[0], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclAllReduce(mem(16), mem(48), 2, n::kFloat16, n::kSum, comms_[1], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclGroupEnd(), n::kSuccess);
    uint16_t out[2] = {};
    ASSERT_EQ(fake::table().cuMemcpyDtoH(out, memory_ + 48, 4), CUDA_SUCCESS);
    EXPECT_EQ(out[0], 0x6800) << "2049 -> 2048";
    EXPECT_EQ(out[1], 0x6802) << "2051 -> 2052";
    // bfloat16 maximum of a NaN-free pair, and float8 e4m3's largest finite value 448 doubled: NaN (no infinity).
    const uint8_t e448 = 0x7E;
    uint8_t bytes[2] = {e448, e448};
    ASSERT_EQ(fake::table().cuMemcpyHtoD(memory_, bytes, 1), CUDA_SUCCESS);
    ASSERT_EQ(fake::table().cuMemcpyHtoD(memory_ + 16, bytes + 1, 1), CUDA_SUCCESS);
    EXPECT_EQ(t_->ncclGroupStart(), n::kSuccess);
    EXPECT_EQ(t_->ncclAllReduce(mem(0), mem(32), 1, n::kFloat8e4m3, n::kSum, comms_[0], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclAllReduce(mem(16), mem(48), 1, n::kFloat8e4m3, n::kSum, comms_[1], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclGroupEnd(), n::kSuccess);
    uint8_t sum = 0;
    ASSERT_EQ(fake::table().cuMemcpyDtoH(&sum, memory_ + 48, 1), CUDA_SUCCESS);
    EXPECT_EQ(sum & 0x7F, 0x7F) << "896 is past e4m3's range: NaN";
    EXPECT_EQ(fake::nccl::faults(), 0);
}

TEST_F(FakeNcclTest, MismatchedOperationsAndFreedMemoryAreFaults) {
    EXPECT_EQ(t_->ncclGroupStart(), n::kSuccess);
    EXPECT_EQ(t_->ncclAllReduce(mem(), mem(), 4, n::kInt32, n::kSum, comms_[0], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclAllGather(mem(), mem(), 4, n::kInt32, comms_[1], nullptr), n::kSuccess);
    EXPECT_EQ(t_->ncclGroupEnd(), n::kSuccess);
    EXPECT_EQ(fake::nccl::faults(), 1);
    EXPECT_NE(fake::nccl::last_fault().find("a all-gather matched a all-reduce"), std::string::npos)
        << fake::nccl::last_fault();
    n::Result async = n::kSuccess;
    EXPECT_EQ(t_->ncclCommGetAsyncError(comms_[1], &async), n::kSuccess);
    EXPECT_EQ(async, n::kInvalidUsage);
    EXPECT_NE(std::string(t_->ncclGetLastError(comms_[1])).find("matched"), std::string::npos);
    // A send whose memory is freed before its receive arrives: the copy fails.
    CUdeviceptr gone = 0;
    ASSERT_EQ(fake::table().cuMemAllocManaged(&gone, 16, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    EXPECT_EQ(t_->ncclSend(reinterpret_cast<void *>(gone), 4, n::kInt32, 0, comms_[1], nullptr), n::kSuccess);
    ASSERT_EQ(fake::table().cuMemFree(gone), CUDA_SUCCESS);
    EXPECT_EQ(t_->ncclRecv(mem(), 4, n::kInt32, 1, comms_[0], nullptr), n::kSuccess);
    EXPECT_EQ(fake::nccl::faults(), 2);
    EXPECT_NE(fake::nccl::last_fault().find("failed (memory freed or too small?)"), std::string::npos)
        << fake::nccl::last_fault();
    EXPECT_EQ(t_->ncclCommGetAsyncError(comms_[0], &async), n::kSuccess);
    EXPECT_EQ(async, n::kUnhandledCudaError);
}

}  // namespace
