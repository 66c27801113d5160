// Counting and failing driver calls (calls.cpp), for the table's wrapper.
#pragma once

#include <cuda.h>

#include "fake_driver.hpp"

namespace fake::detail {

// What an entry point is to answer instead of its own result.
struct Injection {
    CUresult result = CUDA_SUCCESS;  // CUDA_SUCCESS: nothing injected
    Failure how = Failure::refuse;
};

// Counts a call of entry point `name` (static storage) and says whether it is
// to fail; CUDA_ERROR_NOT_INITIALIZED before cuInit when `needs_init`.
Injection enter(const char *name, bool needs_init);

}  // namespace fake::detail
