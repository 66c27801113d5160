// Fake NVRTC and nvJitLink tables for unit tests, installed through the
// compilers' substitute seams. Like the fake driver they count calls, can fail
// the N-th one, and count live handles, so every compile and link path can be
// fault-injected and checked for leaks without the real libraries.
//
// Fake NVRTC "compiles" a source into a fake driver image (fake::image): each
// source line "kernel NAME" or "global NAME SIZE" is copied, and each name
// expression E becomes the kernel "lowered_E" (non-alphanumerics as '_'). A
// source containing "#error" fails with NVRTC_ERROR_COMPILATION and a
// 12-line log. Fake nvJitLink links fake images the same way; an input that
// is not one is refused with NVJITLINK_ERROR_INVALID_INPUT and an error log.
#pragma once

#include <string>
#include <vector>

#include "driver/compilers.hpp"

namespace fake_compilers {

// Installs both fakes (resetting counters); uninstall restores the real ones.
void install();
void uninstall();
// Installs them for its lifetime (also when an assertion leaves a test early).
struct Installed {
    Installed() { install(); }
    ~Installed() { uninstall(); }
    Installed(const Installed &) = delete;
    Installed &operator=(const Installed &) = delete;
};

// Re-installs the fake NVRTC reporting `version` (cache keys change with it).
void set_nvrtc_version(int version);

// Fails the n-th compiler call from now (1-based, NVRTC and nvJitLink
// counted together); 0 disables.
void fail_call(long n);
long calls();
// NVRTC programs and nvJitLink handles created and not destroyed.
int live_programs();
int live_links();
// The flags the last nvrtcCompileProgram / nvJitLinkCreate got.
std::vector<std::string> last_compile_flags();
std::vector<std::string> last_link_flags();
// The lowered name fake NVRTC gives a name expression.
std::string lowered(const std::string &expression);

}  // namespace fake_compilers
