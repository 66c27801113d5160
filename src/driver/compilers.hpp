// Run-time loading of the compilers: NVRTC (CUDA C++), nvJitLink (the linker)
// and libNVVM (NVVM IR). Each is opened on first use, once, thread-safely,
// through driver::open_library with an environment override and a list of
// sonames and toolkit directories; libcucore never links them. A missing
// library or entry point is CUCORE_ERROR_NOT_SUPPORTED naming what was tried,
// raised by the call that needs the compiler (everything else still works).
//
// Like the driver table, each compiler table has a substitute seam so unit
// tests can install tables that fail or fake calls (fault injection).
#pragma once

#include <nvJitLink.h>
#include <nvrtc.h>
#include <nvvm.h>

#include <string>

namespace cucore::driver {

// Function pointers typed from the toolkit headers' prototypes.
struct NvrtcTable {
    decltype(&::nvrtcGetErrorString) nvrtcGetErrorString = nullptr;
    decltype(&::nvrtcVersion) nvrtcVersion = nullptr;
    decltype(&::nvrtcCreateProgram) nvrtcCreateProgram = nullptr;
    decltype(&::nvrtcDestroyProgram) nvrtcDestroyProgram = nullptr;
    decltype(&::nvrtcCompileProgram) nvrtcCompileProgram = nullptr;
    decltype(&::nvrtcGetProgramLogSize) nvrtcGetProgramLogSize = nullptr;
    decltype(&::nvrtcGetProgramLog) nvrtcGetProgramLog = nullptr;
    decltype(&::nvrtcGetPTXSize) nvrtcGetPTXSize = nullptr;
    decltype(&::nvrtcGetPTX) nvrtcGetPTX = nullptr;
    decltype(&::nvrtcGetCUBINSize) nvrtcGetCUBINSize = nullptr;
    decltype(&::nvrtcGetCUBIN) nvrtcGetCUBIN = nullptr;
    decltype(&::nvrtcGetLTOIRSize) nvrtcGetLTOIRSize = nullptr;
    decltype(&::nvrtcGetLTOIR) nvrtcGetLTOIR = nullptr;
    decltype(&::nvrtcAddNameExpression) nvrtcAddNameExpression = nullptr;
    decltype(&::nvrtcGetLoweredName) nvrtcGetLoweredName = nullptr;
    // Optional (CUDA 12.8+): the precompiled-header status and heap; absent -> no PCH status.
    decltype(&::nvrtcGetPCHCreateStatus) nvrtcGetPCHCreateStatus = nullptr;
    decltype(&::nvrtcGetPCHHeapSizeRequired) nvrtcGetPCHHeapSizeRequired = nullptr;
    decltype(&::nvrtcSetPCHHeapSize) nvrtcSetPCHHeapSize = nullptr;
};

struct NvJitLinkTable {
    decltype(&::nvJitLinkCreate) nvJitLinkCreate = nullptr;
    decltype(&::nvJitLinkDestroy) nvJitLinkDestroy = nullptr;
    decltype(&::nvJitLinkAddData) nvJitLinkAddData = nullptr;
    decltype(&::nvJitLinkComplete) nvJitLinkComplete = nullptr;
    decltype(&::nvJitLinkGetLinkedCubinSize) nvJitLinkGetLinkedCubinSize = nullptr;
    decltype(&::nvJitLinkGetLinkedCubin) nvJitLinkGetLinkedCubin = nullptr;
    decltype(&::nvJitLinkGetLinkedPtxSize) nvJitLinkGetLinkedPtxSize = nullptr;
    decltype(&::nvJitLinkGetLinkedPtx) nvJitLinkGetLinkedPtx = nullptr;
    decltype(&::nvJitLinkGetErrorLogSize) nvJitLinkGetErrorLogSize = nullptr;
    decltype(&::nvJitLinkGetErrorLog) nvJitLinkGetErrorLog = nullptr;
    decltype(&::nvJitLinkGetInfoLogSize) nvJitLinkGetInfoLogSize = nullptr;
    decltype(&::nvJitLinkGetInfoLog) nvJitLinkGetInfoLog = nullptr;
    decltype(&::nvJitLinkVersion) nvJitLinkVersion = nullptr;  // optional (12.3+): absent -> version from the soname
};

struct NvvmTable {
    decltype(&::nvvmGetErrorString) nvvmGetErrorString = nullptr;
    decltype(&::nvvmVersion) nvvmVersion = nullptr;
    decltype(&::nvvmIRVersion) nvvmIRVersion = nullptr;
    decltype(&::nvvmCreateProgram) nvvmCreateProgram = nullptr;
    decltype(&::nvvmDestroyProgram) nvvmDestroyProgram = nullptr;
    decltype(&::nvvmAddModuleToProgram) nvvmAddModuleToProgram = nullptr;
    decltype(&::nvvmCompileProgram) nvvmCompileProgram = nullptr;
    decltype(&::nvvmGetCompiledResultSize) nvvmGetCompiledResultSize = nullptr;
    decltype(&::nvvmGetCompiledResult) nvvmGetCompiledResult = nullptr;
    decltype(&::nvvmGetProgramLogSize) nvvmGetProgramLogSize = nullptr;
    decltype(&::nvvmGetProgramLog) nvvmGetProgramLog = nullptr;
};

// A loaded compiler: its table and its version (major * 1000 + minor * 10;
// libNVVM: its IR version), read once at load so cache keys never call it.
template <class Table>
struct Compiler {
    const Table *table = nullptr;
    int version = 0;
};

// The compiler, loaded on first call; throws driver::Error(NOT_SUPPORTED) naming
// the library and what was tried when it (or one of its entry points) is missing.
const Compiler<NvrtcTable> &nvrtc();
const Compiler<NvJitLinkTable> &nvjitlink();
const Compiler<NvvmTable> &nvvm();

// Whether nvJitLink loads (loads it if not yet tried). Never throws.
bool nvjitlink_available() noexcept;

// Substitute seams for tests: the table (and version) replace the real one
// until called again with nullptr. The table must outlive its installation.
// Not for use while other threads compile.
void install_nvrtc_substitute(const NvrtcTable *table, int version = 13000);
void install_nvjitlink_substitute(const NvJitLinkTable *table, int version = 13000);
void install_nvvm_substitute(const NvvmTable *table, int version = 2000);
// Makes the compiler read as not installed ("" message: a default one) until
// a substitute or nullptr is installed (tests of the NOT_SUPPORTED paths).
void mark_nvrtc_absent(const std::string &why);
void mark_nvjitlink_absent(const std::string &why);

// The real tables (loading them), or nullptr when absent; never throws. Tests
// build substitutes that forward to them.
const NvrtcTable *real_nvrtc() noexcept;
const NvJitLinkTable *real_nvjitlink() noexcept;
const NvvmTable *real_nvvm() noexcept;

}  // namespace cucore::driver
