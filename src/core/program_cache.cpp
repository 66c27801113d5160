#include "core/program_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace cucore::core {
namespace {

// File layout (little-endian): magic, format version, code type, key, payload
// size and bytes, name-expression count and pairs (each length-prefixed), and
// a 64-bit FNV-1a checksum of everything before it.
constexpr char kMagic[8] = {'C', 'U', 'C', 'O', 'R', 'E', 'P', 'C'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 32;
constexpr size_t kChecksumBytes = 8;
constexpr off_t kMaxEntryBytes = off_t{1} << 30;

void put_u32(std::string &out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_u64(std::string &out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t get_le(const char *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
    return v;
}

// FNV-1a over 8-byte words (then the tail bytes): each step (xor, multiply by
// an odd prime) is a bijection of the running state, so any change confined to
// one word or byte always changes the result; 8 bytes per multiply keeps a
// disk hit of a large cubin in a few microseconds.
uint64_t checksum(const char *data, size_t size) {
    constexpr uint64_t kPrime = 0x100000001b3ull;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t word;
        std::memcpy(&word, data + i, 8);
        h = (h ^ word) * kPrime;
    }
    for (; i < size; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * kPrime;
    return h;
}

// Reads a length-checked field; false when it would run past `end`.
struct Reader {
    const char *at;
    const char *end;
    bool take(size_t n, const char *&p) {
        if (static_cast<size_t>(end - at) < n) return false;
        p = at;
        at += n;
        return true;
    }
    bool u32(uint32_t &v) {
        const char *p;
        if (!take(4, p)) return false;
        v = static_cast<uint32_t>(get_le(p, 4));
        return true;
    }
    bool u64(uint64_t &v) {
        const char *p;
        if (!take(8, p)) return false;
        v = get_le(p, 8);
        return true;
    }
    bool text(std::string &s) {
        uint32_t n;
        const char *p;
        if (!u32(n) || !take(n, p)) return false;
        s.assign(p, n);
        return true;
    }
};

bool is_entry_name(const char *name) {
    if (std::strlen(name) != 64) return false;
    for (const char *c = name; *c; ++c)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return false;
    return true;
}

bool is_temp_name(const char *name) { return std::strncmp(name, ".tmp-", 5) == 0; }

uint64_t image_bytes(const CodeImage &image) {
    uint64_t bytes = image.bytes.size();
    for (const auto &[expression, lowered] : image.names) bytes += expression.size() + lowered.size();
    return bytes;
}

struct FileInfo {
    std::string path;
    uint64_t size;
    struct timespec mtime;
};

std::vector<FileInfo> list_entries(const std::string &directory) {
    std::vector<FileInfo> files;
    DIR *dir = opendir(directory.c_str());
    if (!dir) return files;
    while (struct dirent *e = readdir(dir)) {
        if (!is_entry_name(e->d_name)) continue;
        std::string path = directory + "/" + e->d_name;
        struct stat st;
        if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
            files.push_back({std::move(path), static_cast<uint64_t>(st.st_size), st.st_mtim});
    }
    closedir(dir);
    return files;
}

bool read_all(int fd, std::string &out, struct timespec &mtime) {
    struct stat st;
    if (fstat(fd, &st) != 0) return false;
    mtime = st.st_mtim;
    // Only a regular file is an entry: anything else at an entry's path (a FIFO, a device, a directory) reads
    // nothing, so it counts as damaged and goes, like any other damaged entry.
    if (!S_ISREG(st.st_mode)) {
        out.clear();
        return true;
    }
    // No entry is this large: read nothing, so it counts as damaged and goes
    // (instead of exhausting memory on a stray file named like a key).
    if (st.st_size > kMaxEntryBytes) {
        out.clear();
        return true;
    }
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // shorter than fstat said: checked as a short file
        done += static_cast<size_t>(n);
    }
    out.resize(done);
    return true;
}

bool write_all(int fd, const std::string &data) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

std::string encode_cache_entry(const CacheKey &key, const CodeImage &image) {
    std::string out;
    out.reserve(kHeaderBytes + 8 + image.bytes.size() + 4 + kChecksumBytes + image.names.size() * 64);
    out.append(kMagic, sizeof kMagic);
    put_u32(out, kFormatVersion);
    put_u32(out, static_cast<uint32_t>(image.type));
    out.append(reinterpret_cast<const char *>(key.data()), key.size());
    put_u64(out, image.bytes.size());
    out += image.bytes;
    put_u32(out, static_cast<uint32_t>(image.names.size()));
    for (const auto &[expression, lowered] : image.names) {
        put_u32(out, static_cast<uint32_t>(expression.size()));
        out += expression;
        put_u32(out, static_cast<uint32_t>(lowered.size()));
        out += lowered;
    }
    put_u64(out, checksum(out.data(), out.size()));
    return out;
}

std::shared_ptr<const CodeImage> decode_cache_entry(const CacheKey &key, const std::string &file) {
    if (file.size() < kHeaderBytes + 8 + 4 + kChecksumBytes) return nullptr;
    const size_t body = file.size() - kChecksumBytes;
    if (std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return nullptr;
    if (get_le(file.data() + 8, 4) != kFormatVersion) return nullptr;
    if (std::memcmp(file.data() + 16, key.data(), key.size()) != 0) return nullptr;
    if (get_le(file.data() + body, 8) != checksum(file.data(), body)) return nullptr;
    Reader r{file.data() + kHeaderBytes, file.data() + body};
    auto image = std::make_shared<CodeImage>();
    const uint32_t type = static_cast<uint32_t>(get_le(file.data() + 12, 4));
    if (type < CUCORE_CODE_PTX || type > CUCORE_CODE_LIBRARY) return nullptr;
    image->type = static_cast<cucore_code_type_t>(type);
    uint64_t size;
    const char *payload;
    if (!r.u64(size) || size > static_cast<uint64_t>(r.end - r.at) || !r.take(static_cast<size_t>(size), payload))
        return nullptr;
    image->bytes.assign(payload, static_cast<size_t>(size));
    uint32_t count;
    if (!r.u32(count) || count > static_cast<size_t>(r.end - r.at) / 8) return nullptr;
    image->names.resize(count);
    for (auto &[expression, lowered] : image->names)
        if (!r.text(expression) || !r.text(lowered)) return nullptr;
    if (r.at != r.end) return nullptr;  // trailing bytes: not what this version writes
    return image;
}

// ---- in memory ----------------------------------------------------------------

std::shared_ptr<const CodeImage> InMemoryProgramCache::find(const CacheKey &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
        misses_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    hits_.fetch_add(1, std::memory_order_relaxed);
    return it->second->image;
}

void InMemoryProgramCache::store(const CacheKey &key, std::shared_ptr<const CodeImage> image) {
    const uint64_t bytes = image_bytes(*image);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
        bytes_ -= it->second->bytes;
        lru_.erase(it->second);
        index_.erase(it);
    }
    if (max_bytes_ && bytes > max_bytes_) {  // could never fit: not kept
        evictions_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    lru_.push_front(Entry{key, std::move(image), bytes});
    index_[key] = lru_.begin();
    bytes_ += bytes;
    while (max_bytes_ && bytes_ > max_bytes_) {
        Entry &oldest = lru_.back();
        bytes_ -= oldest.bytes;
        index_.erase(oldest.key);
        lru_.pop_back();
        evictions_.fetch_add(1, std::memory_order_relaxed);
    }
}

bool InMemoryProgramCache::remove(const CacheKey &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
    return true;
}

void InMemoryProgramCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    lru_.clear();
    index_.clear();
    bytes_ = 0;
    hits_ = misses_ = corrupt_ = evictions_ = 0;
}

cucore_program_cache_stats_t InMemoryProgramCache::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    cucore_program_cache_stats_t s = CUCORE_PROGRAM_CACHE_STATS_INIT;
    s.hits = hits_;
    s.misses = misses_;
    s.corrupt_entries = corrupt_;
    s.evictions = evictions_;
    s.entries = lru_.size();
    s.size_bytes = bytes_;
    return s;
}

// ---- on disk ------------------------------------------------------------------

Ref<OnDiskProgramCache> OnDiskProgramCache::open(const char *directory, uint64_t max_bytes) {
    std::string dir = directory;
    if (dir.empty()) throw_invalid_argument("argument 'directory' is empty");
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    // mkdir -p: each prefix in turn; EEXIST is fine (checked below).
    for (size_t at = 1; at <= dir.size(); ++at) {
        if (at != dir.size() && dir[at] != '/') continue;
        const std::string prefix = dir.substr(0, at);
        if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
            throw_invalid_argument("argument 'directory' (\"" + dir + "\"): cannot create \"" + prefix +
                                   "\": " + std::strerror(errno));
    }
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0)
        throw_invalid_argument("argument 'directory' (\"" + dir + "\"): " + std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) throw_invalid_argument("argument 'directory' (\"" + dir + "\") is not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw_invalid_argument("argument 'directory' (\"" + dir + "\") is not writable: " + std::strerror(errno));
    return make<OnDiskProgramCache>(std::move(dir), max_bytes);
}

std::string OnDiskProgramCache::path_of(const CacheKey &key) const {
    return directory_ + "/" + to_hex(key.data(), key.size());
}

std::shared_ptr<const CodeImage> OnDiskProgramCache::find(const CacheKey &key) {
    const std::string path = path_of(key);
    // O_NONBLOCK: opening a FIFO (or a device) put at an entry's path must not wait for a writer; read_all then
    // finds it is no regular file. O_NOFOLLOW: the library writes no links, so a link at an entry's path is
    // foreign, a damaged entry.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ELOOP) return miss_damaged(path);
        misses_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    std::string file;
    struct timespec mtime{};
    const bool read = read_all(fd, file, mtime);
    std::shared_ptr<const CodeImage> image = read ? decode_cache_entry(key, file) : nullptr;
    // A hit is a use: LRU by modification time. Touching costs a metadata
    // write (about 8 us on ext4, as much as the rest of a hit), so an entry
    // is touched at most once a second: LRU order to the second.
    struct timespec now{};
    if (image && ::clock_gettime(CLOCK_REALTIME, &now) == 0 && now.tv_sec - mtime.tv_sec >= 1)
        ::futimens(fd, nullptr);
    ::close(fd);
    if (!image) {
        if (read) return miss_damaged(path);
        misses_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    hits_.fetch_add(1, std::memory_order_relaxed);
    return image;
}

std::shared_ptr<const CodeImage> OnDiskProgramCache::miss_damaged(const std::string &path) {
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    ::unlink(path.c_str());
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

void OnDiskProgramCache::store(const CacheKey &key, std::shared_ptr<const CodeImage> image) {
    const std::string data = encode_cache_entry(key, *image);
    const std::string final_path = path_of(key);
    // Unique per process, thread and call: concurrent writers never share a temporary.
    const std::string temp = directory_ + "/.tmp-" + to_hex(key.data(), 8) + "-" + std::to_string(::getpid()) + "-" +
                             std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id())) + "-" +
                             std::to_string(temp_counter_.fetch_add(1));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const bool written = write_all(fd, data);
    const bool closed = ::close(fd) == 0;
    if (!written || !closed || ::rename(temp.c_str(), final_path.c_str()) != 0) {
        ::unlink(temp.c_str());
        return;
    }
    if (max_bytes_) evict(final_path);
}

void OnDiskProgramCache::evict(const std::string &keep) {
    std::vector<FileInfo> files = list_entries(directory_);
    uint64_t total = 0;
    for (const FileInfo &f : files) total += f.size;
    if (total <= max_bytes_) return;
    std::sort(files.begin(), files.end(), [](const FileInfo &a, const FileInfo &b) {
        return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    for (const FileInfo &f : files) {
        if (total <= max_bytes_) break;
        if (f.path == keep) continue;  // the entry just written is the newest
        if (::unlink(f.path.c_str()) == 0 || errno == ENOENT) {
            total -= f.size;
            evictions_.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

bool OnDiskProgramCache::remove(const CacheKey &key) {
    const std::string path = path_of(key);
    if (::unlink(path.c_str()) == 0) return true;
    if (errno == ENOENT) return false;
    throw Error(CUCORE_ERROR_INVALID_STATE, "cannot remove \"" + path + "\": " + std::strerror(errno));
}

void OnDiskProgramCache::clear() {
    DIR *dir = opendir(directory_.c_str());
    if (!dir) throw Error(CUCORE_ERROR_INVALID_STATE, "cannot list \"" + directory_ + "\": " + std::strerror(errno));
    std::string failed;
    while (struct dirent *e = readdir(dir)) {
        if (!is_entry_name(e->d_name) && !is_temp_name(e->d_name)) continue;
        const std::string path = directory_ + "/" + e->d_name;
        if (::unlink(path.c_str()) != 0 && errno != ENOENT && failed.empty())
            failed = "cannot remove \"" + path + "\": " + std::strerror(errno);
    }
    closedir(dir);
    hits_ = misses_ = corrupt_ = evictions_ = 0;
    if (!failed.empty()) throw Error(CUCORE_ERROR_INVALID_STATE, failed);
}

cucore_program_cache_stats_t OnDiskProgramCache::stats() const {
    cucore_program_cache_stats_t s = CUCORE_PROGRAM_CACHE_STATS_INIT;
    s.hits = hits_;
    s.misses = misses_;
    s.corrupt_entries = corrupt_;
    s.evictions = evictions_;
    for (const FileInfo &f : list_entries(directory_)) {
        ++s.entries;
        s.size_bytes += f.size;
    }
    return s;
}

}  // namespace cucore::core
