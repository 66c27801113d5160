// Communicators when NCCL or the driver fails: each NCCL call of the create
// paths failing once (and each driver call), NCCL's results as statuses with
// its error text, a failing operation, group end and destroy, asynchronous
// errors (injected, and a mismatch the fake NCCL detects), and NCCL absent.
#include <functional>
#include <string>
#include <vector>

#include "communicator_support.hpp"

namespace {

namespace n = cucore::driver::nccl;

using CommunicatorFaults = CommunicatorTest;

struct CreatePath {
    const char *function;
    // Makes communicators into `out` (as many as the path makes); returns the status.
    std::function<cucore_status_t(cucore_communicator_t **out)> run;
    size_t made;
};

std::vector<CreatePath> create_paths(cucore_device_t *const *devices) {
    return {
        {"cucore_communicator_create_all",
         [devices](cucore_communicator_t **out) { return cucore_communicator_create_all(devices, 2, out); }, 2},
        {"cucore_communicator_create",
         [devices](cucore_communicator_t **out) {
             cucore_communicator_id_t id;
             const cucore_status_t s = cucore_communicator_id_create(&id);
             if (s != CUCORE_SUCCESS) {
                 out[0] = nullptr;
                 return s;
             }
             return cucore_communicator_create(devices[1], &id, 1, 0, out);
         },
         1},
    };
}

TEST_F(CommunicatorFaults, EachNcclCallOfTheCreatePathsFailingOnceLeavesNothing) {
    const struct {
        int result;
        cucore_status_t status;
        const char *name;
    } results[] = {{n::kInternalError, CUCORE_ERROR_CUDA, "ncclInternalError"},
                   {n::kInvalidArgument, CUCORE_ERROR_INVALID_ARGUMENT, "ncclInvalidArgument"},
                   {n::kInvalidUsage, CUCORE_ERROR_INVALID_STATE, "ncclInvalidUsage"},
                   {n::kSystemError, CUCORE_ERROR_CUDA, "ncclSystemError"}};
    for (const CreatePath &path : create_paths(d_)) {
        for (const auto &result : results) {
            SCOPED_TRACE(std::string(path.function) + " failing with " + result.name);
            long failures = 0;
            for (long i = 1; i < 20; ++i) {
                const size_t live_before = live(CUCORE_OBJECT_ANY);
                fake::nccl::reset_calls();
                fake::nccl::fail_call(i, result.result);
                cucore_communicator_t *out[2] = {reinterpret_cast<cucore_communicator_t *>(1),
                                                 reinterpret_cast<cucore_communicator_t *>(1)};
                const cucore_status_t status = path.run(out);
                fake::nccl::fail_call(0);
                const std::vector<std::string> log = fake::nccl::call_log();
                if (static_cast<long>(log.size()) < i) {  // every call has failed once
                    ASSERT_EQ(status, CUCORE_SUCCESS) << message();
                    for (size_t k = 0; k < path.made; ++k) EXPECT_EQ(cucore_communicator_release(out[k]), CUCORE_SUCCESS);
                    break;
                }
                ++failures;
                const std::string failed = log[static_cast<size_t>(i - 1)];
                SCOPED_TRACE("failing " + failed);
                EXPECT_EQ(status, result.status) << message();
                // "<function>: <entry> failed: ncclX (<NCCL's text>): fake NCCL: injected failure of <entry>"
                EXPECT_NE(message().find(failed + " failed: " + result.name + " ("), std::string::npos) << message();
                EXPECT_NE(message().find("injected failure of " + failed), std::string::npos) << message();
                for (size_t k = 0; k < path.made; ++k) EXPECT_EQ(out[k], nullptr) << "no handle";
                EXPECT_EQ(live(CUCORE_OBJECT_ANY), live_before) << "no half-made object";
                EXPECT_EQ(fake::nccl::live_comms(), 0) << "no leaked NCCL comm";
            }
            EXPECT_GE(failures, 1);
        }
    }
}

TEST_F(CommunicatorFaults, EachDriverCallOfTheCreatePathsFailingOnceLeavesNothing) {
    for (const CreatePath &path : create_paths(d_)) {
        SCOPED_TRACE(path.function);
        long failures = 0;
        for (long i = 1; i < 60; ++i) {
            const size_t live_before = live(CUCORE_OBJECT_ANY);
            const fake::Counters driver_before = driver_objects();
            fake::reset_calls();
            fake::fail_call(i, CUDA_ERROR_OUT_OF_MEMORY);
            cucore_communicator_t *out[2] = {};
            const cucore_status_t status = path.run(out);
            const long made = fake::calls();
            fake::fail_call(0);
            fake::set_current_context(nullptr);
            if (made < i) {
                ASSERT_EQ(status, CUCORE_SUCCESS) << message();
                for (size_t k = 0; k < path.made; ++k) cucore_communicator_release(out[k]);
                break;
            }
            if (status == CUCORE_SUCCESS) {  // a failed restore after the work: reported, not failed
                for (size_t k = 0; k < path.made; ++k) cucore_communicator_release(out[k]);
                continue;
            }
            ++failures;
            EXPECT_TRUE(status == CUCORE_ERROR_OUT_OF_MEMORY || status == CUCORE_ERROR_CUDA) << message();
            EXPECT_EQ(message().rfind(std::string(path.function) + ":", 0) == 0 ||
                          message().rfind("cucore_communicator_id_create:", 0) == 0,
                      true)
                << message();
            for (size_t k = 0; k < path.made; ++k) EXPECT_EQ(out[k], nullptr);
            EXPECT_EQ(live(CUCORE_OBJECT_ANY), live_before);
            EXPECT_EQ(fake::nccl::live_comms(), 0);
            const fake::Counters after = driver_objects();
            EXPECT_EQ(after.primary_retained, driver_before.primary_retained) << "no primary context retain left";
        }
        EXPECT_GE(failures, 1) << "the path calls the driver";
    }
    expects_release_errors_ = true;  // a failed context restore is reported, not failed
}

TEST_F(CommunicatorFaults, AFailingOperationHoldsNothingAndNamesNcclsError) {
    make_all();
    cucore_buffer_t *b = buffer(0, 16);
    const size_t buffers = live(CUCORE_OBJECT_BUFFER);
    const struct {
        int result;
        cucore_status_t status;
        const char *text;
    } rows[] = {{n::kInvalidUsage, CUCORE_ERROR_INVALID_STATE, "ncclAllReduce failed: ncclInvalidUsage (invalid usage"},
                {n::kInvalidArgument, CUCORE_ERROR_INVALID_ARGUMENT, "ncclAllReduce failed: ncclInvalidArgument"},
                {n::kUnhandledCudaError, CUCORE_ERROR_CUDA, "ncclAllReduce failed: ncclUnhandledCudaError"},
                {n::kRemoteError, CUCORE_ERROR_CUDA, "ncclAllReduce failed: ncclRemoteError"}};
    for (const auto &row : rows) {
        fake::nccl::fail_entry("ncclAllReduce", row.result);
        EXPECT_EQ(cucore_communicator_all_reduce(c_[0], b, b, 0, CUCORE_DATA_TYPE_INT32, CUCORE_REDUCE_SUM, s_[0]),
                  row.status);
        EXPECT_EQ(message().rfind("cucore_communicator_all_reduce: ", 0), 0u) << message();
        EXPECT_NE(message().find(row.text), std::string::npos) << message();
        EXPECT_NE(message().find("fake NCCL: injected failure of ncclAllReduce"), std::string::npos) << message();
    }
    fake::nccl::fail_entry("");
    cucore_buffer_release(b);
    cucore::core::drain_graph_releases();
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers - 1) << "a failed operation holds nothing";
    EXPECT_EQ(fake::nccl::pending_operations(), 0);
}

TEST_F(CommunicatorFaults, AFailingGroupEndStillClosesTheGroupAndLetsGo) {
    make_all();
    cucore_buffer_t *b[2] = {buffer(0, 16), buffer(1, 16)};
    fake::nccl::fail_entry("ncclGroupStart");
    EXPECT_EQ(cucore_communicator_group_start(), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("ncclGroupStart failed: ncclInternalError"), std::string::npos) << message();
    EXPECT_EQ(cucore_communicator_group_depth(), 0) << "no group was opened";
    fake::nccl::fail_entry("");
    ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS);
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(cucore_communicator_all_reduce(c_[r], b[r], b[r], 0, CUCORE_DATA_TYPE_UINT8, CUCORE_REDUCE_MAX, s_[r]),
                  CUCORE_SUCCESS);
    fake::nccl::fail_entry("ncclGroupEnd", n::kSystemError);
    EXPECT_EQ(cucore_communicator_group_end(), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("ncclGroupEnd failed: ncclSystemError"), std::string::npos) << message();
    EXPECT_EQ(cucore_communicator_group_depth(), 0) << "the group is closed all the same";
    fake::nccl::fail_entry("");
    // The fake refused the end, so its group is still open on this thread: end it as NCCL would have.
    ASSERT_EQ(fake::nccl::current_table().ncclGroupEnd(), n::kSuccess);
    EXPECT_EQ(fake::nccl::completed_operations(), 1);
    for (cucore_buffer_t *x : b) cucore_buffer_release(x);
}

TEST_F(CommunicatorFaults, AFailingDestroyIsAReleaseError) {
    make_all();
    expects_release_errors_ = true;
    const uint64_t before = release_errors();
    fake::nccl::fail_entry("ncclCommDestroy", n::kInternalError);
    EXPECT_EQ(cucore_communicator_release(c_[0]), CUCORE_SUCCESS) << "a release reports, it does not fail";
    c_[0] = nullptr;
    fake::nccl::fail_entry("");
    EXPECT_EQ(release_errors(), before + 1);
    EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), 1u) << "the library object is gone all the same";
    EXPECT_EQ(fake::nccl::live_comms(), 2) << "NCCL kept the comm it refused to destroy";
    EXPECT_EQ(cucore_communicator_release(c_[1]), CUCORE_SUCCESS);
    c_[1] = nullptr;
    fake::nccl::install();  // forget the comm NCCL kept
}

TEST_F(CommunicatorFaults, AsynchronousErrorsAreReportedByCheck) {
    make_all();
    EXPECT_EQ(cucore_communicator_check(c_[0]), CUCORE_SUCCESS) << message();
    void *handle = nullptr;
    ASSERT_EQ(cucore_communicator_handle(c_[0], &handle), CUCORE_SUCCESS);
    ASSERT_TRUE(fake::nccl::set_async_error(static_cast<n::Comm>(handle), n::kRemoteError));
    EXPECT_EQ(cucore_communicator_check(c_[0]), CUCORE_ERROR_CUDA);
    EXPECT_EQ(message().rfind("cucore_communicator_check: ", 0), 0u) << message();
    EXPECT_NE(message().find("ncclRemoteError"), std::string::npos) << message();
    EXPECT_NE(message().find("injected asynchronous error"), std::string::npos) << message();
    EXPECT_EQ(cucore_communicator_check(c_[1]), CUCORE_SUCCESS) << "the other rank's comm is fine";
    ASSERT_TRUE(fake::nccl::set_async_error(static_cast<n::Comm>(handle), n::kInProgress));
    EXPECT_EQ(cucore_communicator_check(c_[0]), CUCORE_SUCCESS) << "in progress is not a failure";
    ASSERT_TRUE(fake::nccl::set_async_error(static_cast<n::Comm>(handle), n::kSuccess));
    // Ranks that disagree on the count: NCCL cannot tell at the call, only later (the fake, at matching).
    expects_faults_ = true;
    cucore_buffer_t *b[2] = {buffer(0, 16), buffer(1, 16)};
    ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_all_reduce(c_[0], b[0], b[0], 2, CUCORE_DATA_TYPE_INT32, CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_all_reduce(c_[1], b[1], b[1], 4, CUCORE_DATA_TYPE_INT32, CUCORE_REDUCE_SUM, s_[1]),
              CUCORE_SUCCESS);
    ASSERT_EQ(cucore_communicator_group_end(), CUCORE_SUCCESS) << "the calls succeed";
    EXPECT_EQ(fake::nccl::faults(), 1);
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(cucore_communicator_check(c_[r]), CUCORE_ERROR_INVALID_STATE) << "rank " << r;
        EXPECT_NE(message().find("ncclInvalidUsage"), std::string::npos) << message();
        EXPECT_NE(message().find("count 4 matched count 2"), std::string::npos) << message();
    }
    for (cucore_buffer_t *x : b) cucore_buffer_release(x);
}

TEST_F(CommunicatorFaults, NcclAbsentIsNotSupportedWithAMessage) {
    make_all();  // made before: still usable for what needs no NCCL call
    const std::string why = "libnccl.so.2 could not be loaded (set CUCORE_NCCL_PATH to its path): libnccl.so.2: cannot "
                            "open shared object file";
    cucore::driver::mark_nccl_absent(why);
    int version = 7;
    EXPECT_EQ(cucore_communicator_library_version(&version), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(message(), "cucore_communicator_library_version: " + why);
    cucore_communicator_id_t id;
    EXPECT_EQ(cucore_communicator_id_create(&id), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("libnccl.so.2 could not be loaded"), std::string::npos) << message();
    cucore_communicator_t *c = reinterpret_cast<cucore_communicator_t *>(1);
    std::memset(id.internal, 0, sizeof id.internal);
    EXPECT_EQ(cucore_communicator_create(d_[0], &id, 1, 0, &c), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(c, nullptr);
    cucore_communicator_t *all[2] = {reinterpret_cast<cucore_communicator_t *>(1)};
    EXPECT_EQ(cucore_communicator_create_all(d_, 2, all), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(all[0] == nullptr && all[1] == nullptr);
    EXPECT_EQ(cucore_communicator_group_start(), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_communicator_group_depth(), 0);
    EXPECT_EQ(cucore_communicator_group_end(), CUCORE_ERROR_INVALID_STATE);
    uint32_t size = 0;
    EXPECT_EQ(cucore_data_type_size(CUCORE_DATA_TYPE_BFLOAT16, &size), CUCORE_SUCCESS) << "needs no NCCL";
    EXPECT_EQ(size, 2u);
    int rank = -1;
    EXPECT_EQ(cucore_communicator_rank(c_[1], &rank), CUCORE_SUCCESS) << "answered by the library";
    EXPECT_EQ(rank, 1);
    // Back to the fake, which destroys the comms at the fixture's end.
    cucore::driver::install_nccl_substitute(&fake::nccl::current_table(), fake::nccl::kDefaultVersion);
}

}  // namespace
