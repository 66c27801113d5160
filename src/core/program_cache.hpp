// Program caches: compiled code by key (a SHA-256 over everything that
// decides a compile's result; see Program::cache_key). Two kinds: in memory
// (a thread-safe LRU by bytes) and on disk (one file per entry, written to a
// unique temporary name and renamed into place, so readers in any process see
// a whole entry or none; LRU by file modification time).
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/handle.hpp"
#include "core/object_code.hpp"
#include "core/sha256.hpp"
#include "cucore/program_cache.h"

namespace cucore::core {

using CacheKey = Sha256::Digest;

class ProgramCache : public Object {
  public:
    ProgramCache() noexcept : Object(CUCORE_OBJECT_PROGRAM_CACHE) {}
    // The entry for `key` (counted as a hit), or nullptr (a miss).
    virtual std::shared_ptr<const CodeImage> find(const CacheKey &key) = 0;
    // Stores an entry (replacing one of the same key). A disk write that fails
    // (full disk, permissions changed) leaves the cache without the entry: the
    // compile that produced it still succeeds.
    virtual void store(const CacheKey &key, std::shared_ptr<const CodeImage> image) = 0;
    // Removes the entry of `key`; whether there was one.
    virtual bool remove(const CacheKey &key) = 0;
    virtual void clear() = 0;
    virtual cucore_program_cache_stats_t stats() const = 0;

  protected:
    std::atomic<uint64_t> hits_{0}, misses_{0}, corrupt_{0}, evictions_{0};
};

class InMemoryProgramCache final : public ProgramCache {
  public:
    explicit InMemoryProgramCache(uint64_t max_bytes) noexcept : max_bytes_(max_bytes) {}
    std::shared_ptr<const CodeImage> find(const CacheKey &key) override;
    void store(const CacheKey &key, std::shared_ptr<const CodeImage> image) override;
    bool remove(const CacheKey &key) override;
    void clear() override;
    cucore_program_cache_stats_t stats() const override;

  private:
    struct Entry {
        CacheKey key;
        std::shared_ptr<const CodeImage> image;
        uint64_t bytes;
    };
    struct KeyHash {
        size_t operator()(const CacheKey &key) const noexcept {
            size_t h;
            static_assert(sizeof h <= sizeof(CacheKey));
            __builtin_memcpy(&h, key.data(), sizeof h);  // a SHA-256 is uniform already
            return h;
        }
    };
    const uint64_t max_bytes_;
    mutable std::mutex mutex_;
    std::list<Entry> lru_;  // most recent first
    std::unordered_map<CacheKey, std::list<Entry>::iterator, KeyHash> index_;
    uint64_t bytes_ = 0;
};

class OnDiskProgramCache final : public ProgramCache {
  public:
    // Creates `directory` (and its parents) when missing; INVALID_ARGUMENT
    // when it is not a writable directory.
    static Ref<OnDiskProgramCache> open(const char *directory, uint64_t max_bytes);
    OnDiskProgramCache(std::string directory, uint64_t max_bytes) noexcept
        : directory_(std::move(directory)), max_bytes_(max_bytes) {}
    std::shared_ptr<const CodeImage> find(const CacheKey &key) override;
    void store(const CacheKey &key, std::shared_ptr<const CodeImage> image) override;
    bool remove(const CacheKey &key) override;
    void clear() override;
    cucore_program_cache_stats_t stats() const override;

    const std::string &directory() const noexcept { return directory_; }

  private:
    std::string path_of(const CacheKey &key) const;
    // A miss on a damaged, truncated or foreign entry, or on something at its path that is no entry (a link, a
    // FIFO): counted as corrupt and removed; the compile that follows rewrites it.
    std::shared_ptr<const CodeImage> miss_damaged(const std::string &path);
    void evict(const std::string &keep);

    const std::string directory_;
    const uint64_t max_bytes_;
    std::atomic<uint64_t> temp_counter_{0};
};

// The on-disk entry format (exposed for tests): encode an entry, and decode
// one, answering nullptr for anything malformed (never reading out of bounds).
std::string encode_cache_entry(const CacheKey &key, const CodeImage &image);
std::shared_ptr<const CodeImage> decode_cache_entry(const CacheKey &key, const std::string &file);

}  // namespace cucore::core
