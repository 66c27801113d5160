// Counting every driver call and failing the ones a test names: the wrapper
// every entry point of the table goes through (table.cpp).
#include "calls.hpp"

#include <cstdlib>
#include <cstring>

#include "state.hpp"

namespace fake {
namespace detail {
namespace {

thread_local int t_uncounted = 0;

// FAKE_CUDA_FAIL=<entry point>[:after] (read on each call: tests set and clear
// it) fails that entry point with CUDA_ERROR_UNKNOWN, before or after its work.
Injection from_environment(const char *name) {
    const char *fail = std::getenv("FAKE_CUDA_FAIL");
    if (!fail) return {};
    const char *colon = std::strchr(fail, ':');
    const size_t length = colon ? static_cast<size_t>(colon - fail) : std::strlen(fail);
    if (std::strlen(name) != length || std::strncmp(fail, name, length) != 0) return {};
    const bool after = colon && std::strcmp(colon + 1, "after") == 0;
    return {CUDA_ERROR_UNKNOWN, after ? Failure::after_work : Failure::refuse};
}

}  // namespace

Injection enter(const char *name, bool needs_init) {
    State &g = state();
    Lock lock(g.mutex);
    if (needs_init && !g.initialized) return {CUDA_ERROR_NOT_INITIALIZED, Failure::refuse};
    if (t_uncounted) return {};
    const long n = ++g.calls;
    if (g.recording) g.log.push_back(name);
    if (g.fail_at != 0 && n == g.fail_at) return {g.fail_at_result, g.fail_at_how};
    if (!g.fail_entry.empty() && g.fail_entry == name) return {g.fail_entry_result, g.fail_entry_how};
    return from_environment(name);
}

}  // namespace detail

using detail::Lock;
using detail::state;

void fail_call(long n, CUresult result, Failure how) {
    Lock lock(state().mutex);
    state().fail_at = n == 0 ? 0 : state().calls + n;
    state().fail_at_result = result;
    state().fail_at_how = how;
}

void fail_entry(const std::string &name, CUresult result, Failure how) {
    Lock lock(state().mutex);
    state().fail_entry = name;
    state().fail_entry_result = result;
    state().fail_entry_how = how;
}

Uncounted::Uncounted() { ++detail::t_uncounted; }
Uncounted::~Uncounted() { --detail::t_uncounted; }

long calls() {
    Lock lock(state().mutex);
    return state().calls;
}

void reset_calls() {
    Lock lock(state().mutex);
    state().calls = 0;
    state().log.clear();
}

std::vector<std::string> call_log() {
    Lock lock(state().mutex);
    return {state().log.begin(), state().log.end()};
}

}  // namespace fake
