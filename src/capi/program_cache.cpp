// C ABI: program caches.
#include "capi/capi.hpp"
#include "capi/text_out.hpp"
#include "core/object_code.hpp"

#include <cstring>

using namespace cucore;

namespace {
// A 32-byte key as the caches index entries.
core::CacheKey key_of(const uint8_t *key) {
    capi::require(key, "key");
    core::CacheKey digest;
    std::memcpy(digest.data(), key, digest.size());
    return digest;
}
}  // namespace

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

cucore_status_t cucore_program_cache_get(cucore_program_cache_t *cache, const uint8_t key[32],
                                         cucore_object_code_t **object_code) {
    return capi::guarded(__func__, [&] {
        cucore_object_code_t *&result = capi::out(object_code, "object_code");
        core::ProgramCache &object = capi::get(cache, "cache");
        if (std::shared_ptr<const core::CodeImage> image = object.find(key_of(key)))
            result = capi::give<cucore_object_code_t>(core::ObjectCode::create(std::move(image), ""));
    });
}

cucore_status_t cucore_program_cache_put(cucore_program_cache_t *cache, const uint8_t key[32],
                                         const cucore_object_code_t *object_code) {
    return capi::guarded(__func__, [&] {
        core::ProgramCache &object = capi::get(cache, "cache");
        const core::CacheKey digest = key_of(key);
        object.store(digest, capi::get(object_code, "object_code").image());
    });
}

cucore_status_t cucore_program_cache_remove(cucore_program_cache_t *cache, const uint8_t key[32], int *removed) {
    return capi::guarded(__func__, [&] {
        if (removed) *removed = 0;
        core::ProgramCache &object = capi::get(cache, "cache");
        const bool gone = object.remove(key_of(key));
        if (removed) *removed = gone ? 1 : 0;
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
