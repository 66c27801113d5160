/* libcucore: program caches (compiled code kept in memory or on disk).
 *
 * Pass a cache to cucore_program_compile: a hit returns the stored code without
 * running a compiler, a miss compiles and stores. The key is a SHA-256 over the
 * code, its type, every option (as the compiler flags they become), the target,
 * the name expressions, the compiler's version and the architecture, so a
 * change to any of them is a miss.
 *
 * On disk, each entry is one file in the cache directory, written to a
 * temporary name and renamed into place (atomic; several processes may share a
 * directory). Each file carries a magic, a format version, its key and a
 * checksum; a truncated, corrupted or foreign file, and anything at an entry's
 * path that is not a regular file (a FIFO, a device, a symbolic link), counts
 * as a damaged entry: a miss, dropped and replaced by the recompiled entry; a
 * lookup never blocks on it and never crashes. Both kinds evict the
 * least recently used entries beyond max_size_bytes.
 */
#ifndef CUCORE_PROGRAM_CACHE_H
#define CUCORE_PROGRAM_CACHE_H

#include "common.h"
#include "program.h"

/* What a cache has seen since it was created (or cleared). */
typedef struct cucore_program_cache_stats {
    uint32_t struct_size;
    uint64_t hits;
    uint64_t misses;
    uint64_t corrupt_entries; /* entries found damaged and dropped (disk only) */
    uint64_t evictions;
    uint64_t entries;         /* entries now held */
    uint64_t size_bytes;      /* bytes now held */
} cucore_program_cache_stats_t;

#define CUCORE_PROGRAM_CACHE_STATS_INIT {(uint32_t)sizeof(cucore_program_cache_stats_t), 0, 0, 0, 0, 0, 0}

CUCORE_EXTERN_C_BEGIN

/* Creates an in-memory cache holding at most `max_size_bytes` of code
 * (0: unlimited) (+1 reference). Thread-safe.
 * Errors: INVALID_ARGUMENT (NULL out), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_program_cache_create_in_memory(uint64_t max_size_bytes,
                                                                 cucore_program_cache_t **cache);

/* Creates a cache in `directory` (created with its parents if missing),
 * holding at most `max_size_bytes` (0: unlimited) (+1 reference). Safe across
 * threads and processes.
 * Errors: INVALID_ARGUMENT (NULL; a path that is not a writable directory: the
 * message names it and the reason), OUT_OF_MEMORY. */
CUCORE_API cucore_status_t cucore_program_cache_create_on_disk(const char *directory,
                                                               uint64_t max_size_bytes,
                                                               cucore_program_cache_t **cache);

/* Adds a reference. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_program_cache_retain(cucore_program_cache_t *cache);

/* Drops a reference (entries on disk stay). NULL is a no-op. Errors: INVALID_HANDLE. */
CUCORE_API cucore_status_t cucore_program_cache_release(cucore_program_cache_t *cache);

/* Removes every entry (on disk: every entry file of the directory) and resets
 * the counters. Errors: INVALID_HANDLE, INVALID_STATE (a file could not be
 * removed: the message names it). */
CUCORE_API cucore_status_t cucore_program_cache_clear(cucore_program_cache_t *cache);

/* The cache's counters (stats->struct_size must be set, e.g. with
 * CUCORE_PROGRAM_CACHE_STATS_INIT). Errors: INVALID_HANDLE, INVALID_ARGUMENT. */
CUCORE_API cucore_status_t cucore_program_cache_stats(const cucore_program_cache_t *cache,
                                                      cucore_program_cache_stats_t *stats);

/* The entry stored under `key` (32 bytes, as cucore_program_cache_key gives or
 * any digest a caller chooses) as a new object code (+1 reference; its name is
 * empty), or NULL when there is none (not an error). Counted as a hit or a
 * miss. Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL key or out). */
CUCORE_API cucore_status_t cucore_program_cache_get(cucore_program_cache_t *cache, const uint8_t key[32],
                                                    cucore_object_code_t **object_code);

/* Stores `object_code`'s code (its bytes, code type and name expressions) under
 * `key` (32 bytes), replacing an entry of that key; compiles through the cache
 * then find it. The cache keeps a copy: the object code stays the caller's. An
 * entry larger than the cache's limit is not kept (counted as an eviction); a
 * disk cache that cannot write keeps nothing, as for compiles.
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL key). */
CUCORE_API cucore_status_t cucore_program_cache_put(cucore_program_cache_t *cache, const uint8_t key[32],
                                                    const cucore_object_code_t *object_code);

/* Removes the entry stored under `key` (32 bytes): `removed` (may be NULL) is
 * 1 when there was one, 0 when not. Errors: INVALID_HANDLE, INVALID_ARGUMENT
 * (NULL key), INVALID_STATE (a disk entry that could not be removed: the
 * message names it). */
CUCORE_API cucore_status_t cucore_program_cache_remove(cucore_program_cache_t *cache, const uint8_t key[32],
                                                       int *removed);

/* The 32-byte key a compile of `program` to `target` with these name
 * expressions would use (for tools and tests).
 * Errors: INVALID_HANDLE, INVALID_ARGUMENT (NULL, bad target), NOT_SUPPORTED
 * (the program's compiler is missing: its version is part of the key). */
CUCORE_API cucore_status_t cucore_program_cache_key(const cucore_program_t *program,
                                                    cucore_code_type_t target,
                                                    const char *const *name_expressions,
                                                    size_t name_expression_count, uint8_t key[32]);

CUCORE_EXTERN_C_END

#endif /* CUCORE_PROGRAM_CACHE_H */
