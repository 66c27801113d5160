// Checkpointing on the real driver: this process is RUNNING, its restore
// thread is one of its threads, it may not lock itself, and a pid that is no
// process is refused. (The whole cycle on a child process is in
// tests/python/test_checkpoint.py, which bounds it in time and kills the child.)
#include <unistd.h>

#include <string>

#include "gpu_test.hpp"

namespace {

using gpu::GpuTest;

class CheckpointTest : public GpuTest {
protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        cucore_process_state_t state = CUCORE_PROCESS_STATE_UNSET;
        const cucore_status_t s = cucore_process_get_state(static_cast<int>(getpid()), &state);
        if (s == CUCORE_ERROR_NOT_SUPPORTED)
            GTEST_SKIP() << "the driver does not support checkpointing: " << cucore_last_error_message();
        ASSERT_EQ(s, CUCORE_SUCCESS) << cucore_last_error_message();
        state_ = state;
    }
    cucore_process_state_t state_ = CUCORE_PROCESS_STATE_UNSET;
};

TEST_F(CheckpointTest, ThisProcessIsRunning) {
    EXPECT_EQ(state_, CUCORE_PROCESS_STATE_RUNNING);
    EXPECT_EQ(cucore::Process(static_cast<int>(getpid())).state(), CUCORE_PROCESS_STATE_RUNNING);
}

TEST_F(CheckpointTest, TheRestoreThreadIsOneOfThisProcesssThreads) {
    int tid = 0;
    CUCORE_ASSERT_OK(cucore_process_restore_thread_id(static_cast<int>(getpid()), &tid));
    ASSERT_GT(tid, 0);
    EXPECT_EQ(access(("/proc/self/task/" + std::to_string(tid)).c_str(), F_OK), 0)
        << "thread " << tid << " is not a thread of this process";
}

TEST_F(CheckpointTest, AProcessDoesNotLockItself) {
    cucore_process_lock_options_t o = CUCORE_PROCESS_LOCK_OPTIONS_INIT;
    o.timeout_ms = 1000;
    CUCORE_EXPECT_STATUS(cucore_process_lock(static_cast<int>(getpid()), &o), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_process_state_t state = CUCORE_PROCESS_STATE_UNSET;
    CUCORE_EXPECT_OK(cucore_process_get_state(static_cast<int>(getpid()), &state));
    EXPECT_EQ(state, CUCORE_PROCESS_STATE_RUNNING);
}

TEST_F(CheckpointTest, APidThatIsNoProcessIsRefusedWithTheDriversReason) {
    cucore_process_state_t state = CUCORE_PROCESS_STATE_RUNNING;
    const cucore_status_t s = cucore_process_get_state(0x3ffffff0, &state);  // above any pid_max
    EXPECT_NE(s, CUCORE_SUCCESS);
    EXPECT_EQ(state, CUCORE_PROCESS_STATE_UNSET);
    EXPECT_NE(std::string(cucore_last_error_message()).find("cuCheckpointProcessGetState failed for process"),
              std::string::npos)
        << cucore_last_error_message();
}

}  // namespace
