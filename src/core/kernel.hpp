// Kernels: a CUkernel of a loaded library (or a wrapped foreign CUkernel or
// CUfunction), with per-context CUfunction and attribute caches for launches.
// (Contract stub written by the lead; the kernel helper owns and completes it.)
#pragma once

#include <cuda.h>

#include "core/handle.hpp"

namespace cucore::core {

class Kernel;

// Creates the kernel object for `kernel`, a CUkernel of the library that
// `library_owner` (the ObjectCode) keeps loaded; the kernel holds a reference
// to the owner. `name` is the symbol name it was looked up by.
Ref<Kernel> make_library_kernel(Ref<Object> library_owner, CUkernel kernel, const char *name);

}  // namespace cucore::core
