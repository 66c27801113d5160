// libcucore C++ façade: program caches (over cucore/program_cache.h).
//
//   auto cache = cucore::ProgramCache::on_disk("/tmp/kernels");
//   cucore::ObjectCode code = program.compile(CUCORE_CODE_CUBIN, {}, cache);
#ifndef CUCORE_PROGRAM_CACHE_HPP
#define CUCORE_PROGRAM_CACHE_HPP

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "program_cache.h"

namespace cucore {

class ObjectCode;
class Program;

using ProgramCacheStats = cucore_program_cache_stats_t;

// A cache of compiled programs (cuda.core: InMemoryProgramCache,
// FileStreamProgramCache). Pass it to Program::compile.
class ProgramCache : public Handle<ProgramCache, cucore_program_cache_t> {
public:
    ProgramCache() noexcept = default;

    // In memory, at most `max_size_bytes` of code (0: unlimited).
    static ProgramCache in_memory(std::uint64_t max_size_bytes = 0) {
        cucore_program_cache_t *raw = nullptr;
        detail::check(cucore_program_cache_create_in_memory(max_size_bytes, &raw));
        return adopt(raw);
    }
    // In `directory` (created if missing), shared by threads and processes.
    // Throws Error: INVALID_ARGUMENT (not a writable directory).
    static ProgramCache on_disk(const std::string &directory, std::uint64_t max_size_bytes = 0) {
        cucore_program_cache_t *raw = nullptr;
        detail::check(cucore_program_cache_create_on_disk(directory.c_str(), max_size_bytes, &raw));
        return adopt(raw);
    }

    // Removes every entry and resets the counters. Throws Error: INVALID_STATE.
    void clear() const { detail::check(cucore_program_cache_clear(handle_)); }

    ProgramCacheStats stats() const {
        ProgramCacheStats s = CUCORE_PROGRAM_CACHE_STATS_INIT;
        detail::check(cucore_program_cache_stats(handle_, &s));
        return s;
    }

    // The key a compile of `program` to `target` with these name expressions
    // is cached under (SHA-256). Defined in program.hpp. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT, NOT_SUPPORTED (no compiler).
    static std::array<std::uint8_t, 32> key(const Program &program, cucore_code_type_t target,
                                            const std::vector<std::string> &name_expressions = {});

    // The entry stored under `key` as a new ObjectCode, or an empty one (false)
    // when there is none (cucore_program_cache_get); storing a copy of `code`
    // under `key` (cucore_program_cache_put); removing the entry of `key`
    // (whether there was one). Defined in program.hpp. Throw Error:
    // INVALID_HANDLE; remove: INVALID_STATE (a disk entry that stays).
    ObjectCode find(const std::array<std::uint8_t, 32> &key) const;
    void store(const std::array<std::uint8_t, 32> &key, const ObjectCode &code) const;
    bool remove(const std::array<std::uint8_t, 32> &key) const;
};

} // namespace cucore

#endif // CUCORE_PROGRAM_CACHE_HPP
