// The context current on a thread, as a handle (cucore_context_get_current),
// on the fake driver: none, the primary one recognised, a foreign one wrapped.
#include "test_support.hpp"

namespace {

class ContextTest : public FakeDriverTest {
  protected:
    void TearDown() override {
        fake::set_current_context(nullptr);
        FakeDriverTest::TearDown();
    }
};

TEST_F(ContextTest, CurrentIsNullWhenNoneIsCurrent) {
    fake::set_current_context(nullptr);
    cucore_context_t *current = reinterpret_cast<cucore_context_t *>(&current);
    ASSERT_EQ(cucore_context_get_current(&current), CUCORE_SUCCESS) << message();
    EXPECT_EQ(current, nullptr);
}

TEST_F(ContextTest, CurrentRecognisesThePrimaryAndWrapsAnother) {
    cucore_device_t *d = device(0);
    cucore_context_t *primary = nullptr, *current = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d, &primary), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_context_set_current(primary), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_context_get_current(&current), CUCORE_SUCCESS) << message();
    EXPECT_EQ(current, primary) << "the primary context's own handle, while it lives";
    int is_primary = 0;
    EXPECT_EQ(cucore_context_is_primary(current, &is_primary), CUCORE_SUCCESS);
    EXPECT_EQ(is_primary, 1);
    EXPECT_EQ(cucore_context_release(current), CUCORE_SUCCESS);

    // Another driver context made current behind the library's back comes back wrapped, not owned.
    CUcontext other = fake::make_foreign_context(0);
    fake::set_current_context(other);
    ASSERT_EQ(cucore_context_get_current(&current), CUCORE_SUCCESS) << message();
    ASSERT_NE(current, nullptr);
    void *raw = nullptr;
    EXPECT_EQ(cucore_context_handle(current, &raw), CUCORE_SUCCESS);
    EXPECT_EQ(raw, other);
    EXPECT_EQ(cucore_context_is_primary(current, &is_primary), CUCORE_SUCCESS);
    EXPECT_EQ(is_primary, 0);
    EXPECT_EQ(cucore_context_release(current), CUCORE_SUCCESS);
    fake::set_current_context(nullptr);
    EXPECT_EQ(cucore_context_release(primary), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_device_release(d), CUCORE_SUCCESS);
}

}  // namespace
