// Checkpointing processes against the fake driver's state machine
// (tests/fake_driver/checkpoint.hpp): the whole cycle on another live process
// (this test's parent), the driver's refusals as statuses with its reason, this
// process refusing to lock itself, a GPU remapping passed through, a driver
// without the entry points, and each call failing.
#include <sys/types.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "checkpoint.hpp"
#include "cucore.hpp"
#include "cucore/checkpoint.hpp"
#include "test_support.hpp"

namespace {

class CheckpointTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::reset_checkpoints();
        other_ = static_cast<int>(getppid());  // a live process that is not this one
    }
    void TearDown() override {
        fake::reset_checkpoints();
        FakeDriverTest::TearDown();
    }
    cucore_process_state_t state(int pid) {
        cucore_process_state_t s = CUCORE_PROCESS_STATE_UNSET;
        EXPECT_EQ(cucore_process_get_state(pid, &s), CUCORE_SUCCESS) << message();
        return s;
    }
    int other_ = 0;
};

TEST_F(CheckpointTest, TheWholeCycle) {
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_RUNNING);
    cucore_process_lock_options_t o = CUCORE_PROCESS_LOCK_OPTIONS_INIT;
    o.timeout_ms = 2500;
    ASSERT_EQ(cucore_process_lock(other_, &o), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::last_lock_timeout(), 2500u) << "the timeout reaches the driver";
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_LOCKED);
    ASSERT_EQ(cucore_process_checkpoint(other_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_CHECKPOINTED);
    ASSERT_EQ(cucore_process_restore(other_, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(fake::last_restore_pairs().empty());
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_LOCKED);
    ASSERT_EQ(cucore_process_unlock(other_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_RUNNING);
    int tid = 0;
    ASSERT_EQ(cucore_process_restore_thread_id(other_, &tid), CUCORE_SUCCESS);
    EXPECT_EQ(tid, other_ + 1) << "the fake's restore thread";
    EXPECT_EQ(state(static_cast<int>(getpid())), CUCORE_PROCESS_STATE_RUNNING) << "this process's own state";
}

TEST_F(CheckpointTest, ARestoreCarriesItsGpuMapping) {
    ASSERT_EQ(cucore_process_lock(other_, nullptr), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::last_lock_timeout(), 0u) << "NULL options: no timeout";
    ASSERT_EQ(cucore_process_checkpoint(other_), CUCORE_SUCCESS);
    cucore_uuid_t zero{}, one{};
    cucore_device_t *d0 = device(0);
    ASSERT_EQ(cucore_device_uuid(d0, &zero), CUCORE_SUCCESS);
    cucore_device_release(d0);
    for (int i = 0; i < 16; ++i) one.bytes[i] = static_cast<unsigned char>(16 + i);
    cucore_gpu_mapping_t bad{one, one};  // device 1 was not checkpointed
    EXPECT_EQ(cucore_process_restore(other_, &bad, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("cuCheckpointProcessRestore failed for process " + std::to_string(other_) +
                             ": CUDA_ERROR_INVALID_VALUE"),
              std::string::npos)
        << message();
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_CHECKPOINTED) << "a refused restore changes nothing";
    cucore_gpu_mapping_t mapping{zero, one};
    ASSERT_EQ(cucore_process_restore(other_, &mapping, 1), CUCORE_SUCCESS) << message();
    const std::vector<CUcheckpointGpuPair> pairs = fake::last_restore_pairs();
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_EQ(std::memcmp(pairs[0].oldUuid.bytes, zero.bytes, 16), 0);
    EXPECT_EQ(std::memcmp(pairs[0].newUuid.bytes, one.bytes, 16), 0);
    ASSERT_EQ(cucore_process_unlock(other_), CUCORE_SUCCESS);
}

TEST_F(CheckpointTest, StepsOutOfOrderAreInvalidStateWithTheReason) {
    EXPECT_EQ(cucore_process_checkpoint(other_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(message().rfind("cucore_process_checkpoint: cuCheckpointProcessCheckpoint failed for process " +
                                  std::to_string(other_) + ": ",
                              0),
              0u)
        << message();
    EXPECT_NE(message().find("(process " + std::to_string(other_) +
                             " is not in the state this step needs: lock needs RUNNING, checkpoint LOCKED, restore "
                             "CHECKPOINTED, unlock LOCKED)"),
              std::string::npos)
        << message();
    EXPECT_EQ(cucore_last_cuda_result(), static_cast<int>(CUDA_ERROR_ILLEGAL_STATE));
    EXPECT_EQ(cucore_process_unlock(other_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_process_restore(other_, nullptr, 0), CUCORE_ERROR_INVALID_STATE);
    ASSERT_EQ(cucore_process_lock(other_, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_process_lock(other_, nullptr), CUCORE_ERROR_INVALID_STATE) << "locked twice";
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_LOCKED);
    ASSERT_EQ(cucore_process_unlock(other_), CUCORE_SUCCESS);
}

TEST_F(CheckpointTest, AProcessDoesNotLockItself) {
    fake::reset_calls();
    EXPECT_EQ(cucore_process_lock(static_cast<int>(getpid()), nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("is this process"), std::string::npos) << message();
    EXPECT_EQ(fake::calls(), 0) << "refused before the driver is asked";
    EXPECT_EQ(state(static_cast<int>(getpid())), CUCORE_PROCESS_STATE_RUNNING);
}

TEST_F(CheckpointTest, AProcessThatIsNotThereIsAnInvalidArgument) {
    const int gone = 0x3ffffff0;  // above any pid_max
    cucore_process_state_t s = CUCORE_PROCESS_STATE_RUNNING;
    EXPECT_EQ(cucore_process_get_state(gone, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(s, CUCORE_PROCESS_STATE_UNSET);
    EXPECT_NE(message().find("is not a CUDA process this driver can checkpoint"), std::string::npos) << message();
    int tid = 5;
    EXPECT_EQ(cucore_process_restore_thread_id(gone, &tid), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tid, 0);
    EXPECT_EQ(cucore_process_lock(gone, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}

TEST_F(CheckpointTest, ArgumentsAreCheckedBeforeTheDriver) {
    fake::reset_calls();
    cucore_process_state_t s;
    int tid;
    EXPECT_EQ(cucore_process_get_state(0, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'pid' (0) must be positive"), std::string::npos) << message();
    EXPECT_EQ(cucore_process_get_state(other_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'state'"), std::string::npos) << message();
    EXPECT_EQ(cucore_process_restore_thread_id(-3, &tid), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_process_restore_thread_id(other_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_process_lock(-1, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_process_lock_options_t o = CUCORE_PROCESS_LOCK_OPTIONS_INIT;
    o.struct_size = 2;
    EXPECT_EQ(cucore_process_lock(other_, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("struct_size 2; initialise it with its _OPTIONS_INIT macro"), std::string::npos) << message();
    EXPECT_EQ(cucore_process_checkpoint(0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_process_restore(0, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_process_restore(other_, nullptr, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'mappings' is NULL with a count of 1"), std::string::npos) << message();
    EXPECT_EQ(cucore_process_unlock(0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fake::calls(), 0);
}

TEST_F(CheckpointTest, ADriverWithoutCheckpointingSaysSo) {
    fake::table().cuCheckpointProcessGetState = nullptr;
    fake::table().cuCheckpointProcessLock = nullptr;
    fake::reinstall();
    cucore_process_state_t s;
    EXPECT_EQ(cucore_process_get_state(other_, &s), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cuCheckpointProcessGetState"), std::string::npos) << message();
    EXPECT_EQ(cucore_process_lock(other_, nullptr), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("cuCheckpointProcessLock"), std::string::npos) << message();
}

// Each call with the driver refusing: the platform's NOT_SUPPORTED (with its
// reason) and a lock's timeout (NOT_READY), the state unchanged.
TEST_F(CheckpointTest, TheDriversRefusalsReachTheCaller) {
    fake::fail_entry("cuCheckpointProcessCheckpoint", CUDA_ERROR_NOT_SUPPORTED);
    ASSERT_EQ(cucore_process_lock(other_, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_process_checkpoint(other_), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("CUDA_ERROR_NOT_SUPPORTED"), std::string::npos) << message();
    EXPECT_NE(message().find("does not support checkpointing here"), std::string::npos) << message();
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_LOCKED);
    fake::fail_entry("");
    ASSERT_EQ(cucore_process_unlock(other_), CUCORE_SUCCESS);
    fake::fail_entry("cuCheckpointProcessLock", CUDA_ERROR_NOT_READY);
    EXPECT_EQ(cucore_process_lock(other_, nullptr), CUCORE_ERROR_NOT_READY);
    EXPECT_NE(message().find("timeout passed"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(state(other_), CUCORE_PROCESS_STATE_RUNNING);
    const char *entries[] = {"cuCheckpointProcessGetState", "cuCheckpointProcessGetRestoreThreadId",
                             "cuCheckpointProcessLock", "cuCheckpointProcessUnlock", "cuCheckpointProcessRestore"};
    for (const char *entry : entries) {
        SCOPED_TRACE(entry);
        fake::fail_entry(entry, CUDA_ERROR_UNKNOWN);
        cucore_process_state_t s;
        int tid;
        cucore_status_t status = CUCORE_SUCCESS;
        if (std::string(entry) == "cuCheckpointProcessGetState") status = cucore_process_get_state(other_, &s);
        if (std::string(entry) == "cuCheckpointProcessGetRestoreThreadId")
            status = cucore_process_restore_thread_id(other_, &tid);
        if (std::string(entry) == "cuCheckpointProcessLock") status = cucore_process_lock(other_, nullptr);
        if (std::string(entry) == "cuCheckpointProcessUnlock") status = cucore_process_unlock(other_);
        if (std::string(entry) == "cuCheckpointProcessRestore") status = cucore_process_restore(other_, nullptr, 0);
        EXPECT_EQ(status, CUCORE_ERROR_CUDA);
        EXPECT_NE(message().find(std::string(entry) + " failed for process"), std::string::npos) << message();
        fake::fail_entry("");
    }
}

TEST_F(CheckpointTest, Facade) {
    cucore::Process process(other_);
    EXPECT_EQ(process.pid(), other_);
    EXPECT_EQ(process.state(), CUCORE_PROCESS_STATE_RUNNING);
    EXPECT_EQ(process.restore_thread_id(), other_ + 1);
    process.lock(1000);
    process.checkpoint();
    EXPECT_EQ(process.state(), CUCORE_PROCESS_STATE_CHECKPOINTED);
    cucore::Device d0(0), d1(1);
    process.restore({cucore::gpu_mapping(d0.uuid(), d1.uuid())});
    EXPECT_EQ(fake::last_restore_pairs().size(), 1u);
    process.unlock();
    try {
        process.unlock();
        FAIL() << "unlocking a running process";
    } catch (const cucore::Error &error) {
        EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_STATE);
    }
}

}  // namespace
