// Statuses, versions, the thread's last error and diagnostics: no driver needed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "cucore.h"

TEST(Status, EveryStatusHasItsName) {
    const struct { cucore_status_t status; const char *name; } expected[] = {
        {CUCORE_SUCCESS, "CUCORE_SUCCESS"},
        {CUCORE_ERROR_INVALID_ARGUMENT, "CUCORE_ERROR_INVALID_ARGUMENT"},
        {CUCORE_ERROR_INVALID_HANDLE, "CUCORE_ERROR_INVALID_HANDLE"},
        {CUCORE_ERROR_INVALID_STATE, "CUCORE_ERROR_INVALID_STATE"},
        {CUCORE_ERROR_NO_DRIVER, "CUCORE_ERROR_NO_DRIVER"},
        {CUCORE_ERROR_NO_DEVICE, "CUCORE_ERROR_NO_DEVICE"},
        {CUCORE_ERROR_NOT_SUPPORTED, "CUCORE_ERROR_NOT_SUPPORTED"},
        {CUCORE_ERROR_OUT_OF_MEMORY, "CUCORE_ERROR_OUT_OF_MEMORY"},
        {CUCORE_ERROR_CUDA, "CUCORE_ERROR_CUDA"},
        {CUCORE_ERROR_NOT_READY, "CUCORE_ERROR_NOT_READY"},
        {CUCORE_ERROR_INTERNAL, "CUCORE_ERROR_INTERNAL"},
        {CUCORE_ERROR_COMPILATION, "CUCORE_ERROR_COMPILATION"},
    };
    for (const auto &row : expected) EXPECT_STREQ(cucore_status_string(row.status), row.name);
    EXPECT_STREQ(cucore_status_string(static_cast<cucore_status_t>(12345)), "CUCORE_STATUS_UNKNOWN");
    EXPECT_STREQ(cucore_status_string(static_cast<cucore_status_t>(-1)), "CUCORE_STATUS_UNKNOWN");
}

TEST(Status, VersionMatchesMacros) {
    EXPECT_EQ(cucore_version(), static_cast<uint32_t>(CUCORE_VERSION));
    std::string expected = std::to_string(CUCORE_VERSION_MAJOR) + "." + std::to_string(CUCORE_VERSION_MINOR) + "." +
                           std::to_string(CUCORE_VERSION_PATCH);
    EXPECT_EQ(expected, cucore_version_string());
}

TEST(Status, LastErrorIsPerThreadAndNamesFunctionAndArgument) {
    cucore_clear_last_error();
    EXPECT_STREQ(cucore_last_error_message(), "");
    EXPECT_EQ(cucore_last_error_status(), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_stream_synchronize(nullptr), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_last_error_status(), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_last_cuda_result(), 0);
    std::string message = cucore_last_error_message();
    EXPECT_NE(message.find("cucore_stream_synchronize"), std::string::npos) << message;
    EXPECT_NE(message.find("'stream'"), std::string::npos) << message;
    EXPECT_NE(message.find("NULL"), std::string::npos) << message;

    std::string other_thread;
    std::thread([&] { other_thread = cucore_last_error_message(); }).join();
    EXPECT_EQ(other_thread, "") << "another thread must not see this thread's error";

    // A successful call leaves the last error alone.
    size_t count = 0;
    EXPECT_EQ(cucore_live_object_count(CUCORE_OBJECT_ANY, &count), CUCORE_SUCCESS);
    EXPECT_EQ(message, cucore_last_error_message());
    cucore_clear_last_error();
    EXPECT_STREQ(cucore_last_error_message(), "");
}

TEST(Status, ObjectTypeNames) {
    EXPECT_STREQ(cucore_object_type_name(CUCORE_OBJECT_DEVICE), "device");
    EXPECT_STREQ(cucore_object_type_name(CUCORE_OBJECT_CONTEXT), "context");
    EXPECT_STREQ(cucore_object_type_name(CUCORE_OBJECT_STREAM), "stream");
    EXPECT_STREQ(cucore_object_type_name(CUCORE_OBJECT_EVENT), "event");
    EXPECT_STREQ(cucore_object_type_name(static_cast<cucore_object_type_t>(99)), "unknown object type");
}

TEST(Status, DiagnosticsValidateArguments) {
    EXPECT_EQ(cucore_live_object_count(CUCORE_OBJECT_ANY, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    size_t count = 7;
    EXPECT_EQ(cucore_live_object_count(CUCORE_OBJECT_TYPE_COUNT, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(count, 0u) << "out-pointer cleared on failure";
    EXPECT_NE(std::string(cucore_last_error_message()).find("'type'"), std::string::npos);
    EXPECT_EQ(cucore_release_error_count(nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}
