// C ABI: program caches.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_program_cache_create_in_memory(uint64_t max_size_bytes, cucore_program_cache_t **cache) {
    return capi::guarded(__func__, [&] {
        cucore_program_cache_t *&result = capi::out(cache, "cache");
        result = capi::give<cucore_program_cache_t>(core::make<core::InMemoryProgramCache>(max_size_bytes));
    });
}

cucore_status_t cucore_program_cache_create_on_disk(const char *directory, uint64_t max_size_bytes,
                                                    cucore_program_cache_t **cache) {
    return capi::guarded(__func__, [&] {
        cucore_program_cache_t *&result = capi::out(cache, "cache");
        capi::require(directory, "directory");
        result = capi::give<cucore_program_cache_t>(core::OnDiskProgramCache::open(directory, max_size_bytes));
    });
}

cucore_status_t cucore_program_cache_clear(cucore_program_cache_t *cache) {
    return capi::guarded(__func__, [&] { capi::get(cache, "cache").clear(); });
}

cucore_status_t cucore_program_cache_stats(const cucore_program_cache_t *cache, cucore_program_cache_stats_t *stats) {
    return capi::guarded(__func__, [&] {
        const core::ProgramCache &object = capi::get(cache, "cache");
        capi::write_versioned(stats, object.stats(), "stats", "CUCORE_PROGRAM_CACHE_STATS_INIT");
    });
}

cucore_status_t cucore_program_cache_key(const cucore_program_t *program, cucore_code_type_t target,
                                         const char *const *name_expressions, size_t name_expression_count,
                                         uint8_t key[32]) {
    return capi::guarded(__func__, [&] {
        uint8_t *result = capi::out_bytes(key, 32, "key");
        const core::Program &object = capi::get(program, "program");
        const std::vector<std::string> names =
            capi::string_list(name_expressions, name_expression_count, "name_expressions");
        const core::CacheKey digest = object.cache_key(capi::check_compile_target(target, "target"), names);
        std::memcpy(result, digest.data(), digest.size());
    });
}

}  // extern "C"
