// cucore_abi_layout: the struct layouts the library was compiled with, which the
// bindings compare with their own declarations at load.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cucore.h"

TEST(AbiLayout, SizesAndOffsetsAreTheCompilers) {
    size_t value = 99;
    ASSERT_EQ(cucore_abi_layout("cucore_stream_options_t", nullptr, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, sizeof(cucore_stream_options_t));
    ASSERT_EQ(cucore_abi_layout("cucore_stream_options_t", "priority", &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, offsetof(cucore_stream_options_t, priority));
    ASSERT_EQ(cucore_abi_layout("cucore_copy_3d_t", "dst", &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, offsetof(cucore_copy_3d_t, dst));
    ASSERT_EQ(cucore_abi_layout("DLManagedTensorVersioned", "dl_tensor", &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, offsetof(DLManagedTensorVersioned, dl_tensor));
    ASSERT_EQ(cucore_abi_layout("cucore_launch_config_t", nullptr, &value), CUCORE_SUCCESS);
    EXPECT_EQ(value, sizeof(cucore_launch_config_t));
}

TEST(AbiLayout, UnknownNamesAreInvalidArgumentsNamingThem) {
    size_t value = 99;
    EXPECT_EQ(cucore_abi_layout("cucore_no_such_t", nullptr, &value), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(value, 0u) << "the out-value is cleared on failure";
    EXPECT_NE(std::string(cucore_last_error_message()).find("cucore_no_such_t"), std::string::npos);
    EXPECT_EQ(cucore_abi_layout("cucore_stream_options_t", "no_field", &value), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(cucore_last_error_message()).find("no_field"), std::string::npos);
    EXPECT_EQ(cucore_abi_layout(nullptr, nullptr, &value), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_abi_layout("cucore_stream_options_t", nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
}
