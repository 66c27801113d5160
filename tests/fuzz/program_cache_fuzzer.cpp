// Fuzzes on-disk program cache entries (cucore/program_cache.h): the input is
// written as the entry file of a real program's key in a temporary cache
// directory, then the program is compiled through the cache.
//
// Input: byte 0 chooses the mode, the rest is the file:
//   bit 0  repair: write magic, format version and the right key over the
//          header, and recompute the checksum, so the input reaches the
//          payload and name parsing
// Oracles (against a decoder written here from the format's description in
// src/core/program_cache.cpp): the compile always succeeds; a well-formed
// entry is a hit returning exactly its payload, type and names; anything else
// is a miss counted as corrupt, returns what the compiler makes, and leaves a
// well-formed entry of it in the file's place. Nothing outlives an input.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fake_compilers.hpp"
#include "fuzz_support.hpp"

namespace {

struct Entry {
    uint32_t type = 0;
    std::string payload;
    std::vector<std::pair<std::string, std::string>> names;
};

uint8_t g_key[32];
std::string g_dir, g_path;
cucore_program_t *g_program = nullptr;
cucore_program_cache_t *g_cache = nullptr;
const char *g_names[] = {"f<int>", "g"};
Entry g_fresh;  // what the compiler makes
fuzz::Balance g_baseline;

// The checksum: FNV-1a over 8-byte little-endian words, then the tail bytes.
uint64_t checksum(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) h = (h ^ fuzz::get_le(p + i, 8)) * 0x100000001b3ull;
    for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

// magic "CUCOREPC", u32 version 1, u32 type (PTX..LIBRARY), 32-byte key, u64
// payload size, payload, u32 name count, per name u32+bytes twice, u64 checksum.
bool decode(const std::string &file, Entry &e) {
    const auto *p = reinterpret_cast<const uint8_t *>(file.data());
    const size_t n = file.size();
    if (n < 48 + 8 + 4 + 8) return false;
    const size_t body = n - 8;
    if (std::memcmp(p, "CUCOREPC", 8) != 0 || fuzz::get_le(p + 8, 4) != 1) return false;
    if (std::memcmp(p + 16, g_key, 32) != 0) return false;
    if (fuzz::get_le(p + body, 8) != checksum(p, body)) return false;
    e.type = static_cast<uint32_t>(fuzz::get_le(p + 12, 4));
    if (e.type < CUCORE_CODE_PTX || e.type > CUCORE_CODE_LIBRARY) return false;
    size_t at = 48;
    auto take = [&](size_t k, std::string *out) {
        if (body - at < k) return false;
        if (out) out->assign(file, at, k);
        at += k;
        return true;
    };
    if (body - at < 8) return false;
    const uint64_t size = fuzz::get_le(p + at, 8);
    at += 8;
    if (size > body - at || !take(static_cast<size_t>(size), &e.payload)) return false;
    if (body - at < 4) return false;
    const uint32_t count = static_cast<uint32_t>(fuzz::get_le(p + at, 4));
    at += 4;
    e.names.clear();
    for (uint32_t i = 0; i < count; ++i) {
        std::string pair[2];
        for (std::string &s : pair) {
            if (body - at < 4) return false;
            const uint32_t len = static_cast<uint32_t>(fuzz::get_le(p + at, 4));
            at += 4;
            if (!take(len, &s)) return false;
        }
        // The C API hands names out as C strings: an entry's name with a NUL
        // in it (which no compiler writes) reads up to the NUL.
        for (std::string &text : pair) text.resize(std::strlen(text.c_str()));
        e.names.emplace_back(std::move(pair[0]), std::move(pair[1]));
    }
    return at == body;
}

std::string read_file(const std::string &path) {
    std::string out;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(k));
    close(fd);
    return out;
}

void write_file(const std::string &path, const uint8_t *data, size_t size) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FUZZ_CHECK(fd >= 0, "cannot write %s", path.c_str());
    FUZZ_CHECK(write(fd, data, size) == static_cast<ssize_t>(size), "short write to %s", path.c_str());
    close(fd);
}

Entry compiled(cucore_object_code_t *oc) {
    Entry e;
    cucore_code_type_t type{};
    FUZZ_OK(cucore_object_code_code_type(oc, &type));
    e.type = static_cast<uint32_t>(type);
    const void *bytes = nullptr;
    size_t size = 0;
    FUZZ_OK(cucore_object_code_data(oc, &bytes, &size));
    e.payload.assign(static_cast<const char *>(bytes), size);
    size_t count = 0;
    FUZZ_OK(cucore_object_code_name_expression_count(oc, &count));
    for (size_t i = 0; i < count; ++i) {
        const char *expression = nullptr, *lowered = nullptr;
        FUZZ_OK(cucore_object_code_name_expression(oc, i, &expression, &lowered));
        e.names.emplace_back(expression, lowered);
    }
    return e;
}

bool same_names(const Entry &a, const Entry &b) {
    // Name order is the library's business: compare as sets of pairs.
    if (a.names.size() != b.names.size()) return false;
    for (const auto &n : a.names) {
        bool found = false;
        for (const auto &m : b.names) found = found || n == m;
        if (!found) return false;
    }
    return true;
}

cucore_program_cache_stats_t stats() {
    cucore_program_cache_stats_t s = CUCORE_PROGRAM_CACHE_STATS_INIT;
    FUZZ_OK(cucore_program_cache_stats(g_cache, &s));
    return s;
}

// The temporary directory goes with the process (scripts/fuzz.sh also runs
// each target in a TMPDIR of its own that it removes, for crashes).
void remove_directory() {
    cucore_program_cache_release(g_cache);
    unlink(g_path.c_str());
    rmdir(g_dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fake::install(2);
    fake_compilers::install();
    const char *tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/cucore-fuzz-cache-XXXXXX";
    FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    g_dir = tmpl;
    std::atexit(remove_directory);
    const char *source = "kernel k\nglobal counter 8\n";
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.arch = "sm_90";
    FUZZ_OK(cucore_program_create(source, 0, CUCORE_CODE_CXX, &o, &g_program));
    FUZZ_OK(cucore_program_cache_key(g_program, CUCORE_CODE_CUBIN, g_names, 2, g_key));
    static const char hex[] = "0123456789abcdef";
    g_path = g_dir + "/";
    for (uint8_t b : g_key) g_path += {hex[b >> 4], hex[b & 15]};
    cucore_object_code_t *oc = nullptr;
    FUZZ_OK(cucore_program_compile(g_program, CUCORE_CODE_CUBIN, g_names, 2, nullptr, &oc));
    g_fresh = compiled(oc);
    FUZZ_OK(cucore_object_code_release(oc));
    FUZZ_OK(cucore_program_cache_create_on_disk(g_dir.c_str(), 0, &g_cache));
    g_baseline = fuzz::Balance::now();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    std::vector<uint8_t> file(data + 1, data + size);
    if ((data[0] & 1) && file.size() >= 48 + 8) {
        std::memcpy(file.data(), "CUCOREPC", 8);
        fuzz::put_le(file.data() + 8, 1, 4);
        std::memcpy(file.data() + 16, g_key, 32);
        fuzz::put_le(file.data() + file.size() - 8, checksum(file.data(), file.size() - 8), 8);
    }
    write_file(g_path, file.data(), file.size());
    Entry expected;
    const bool valid = decode(std::string(file.begin(), file.end()), expected);
    const cucore_program_cache_stats_t before = stats();
    cucore_object_code_t *oc = nullptr;
    FUZZ_OK(cucore_program_compile(g_program, CUCORE_CODE_CUBIN, g_names, 2, g_cache, &oc));
    const Entry got = compiled(oc);
    FUZZ_OK(cucore_object_code_release(oc));
    const cucore_program_cache_stats_t after = stats();
    if (valid) {
        FUZZ_CHECK(after.hits == before.hits + 1 && after.corrupt_entries == before.corrupt_entries,
                   "a well-formed entry was not a hit");
        FUZZ_CHECK(got.type == expected.type, "hit of type %u, entry says %u", got.type, expected.type);
        FUZZ_CHECK(got.payload == expected.payload, "hit returned other bytes than the entry's");
        FUZZ_CHECK(same_names(got, expected), "hit returned other names than the entry's");
    } else {
        FUZZ_CHECK(after.misses == before.misses + 1 && after.corrupt_entries == before.corrupt_entries + 1,
                   "a damaged entry was not a corrupt miss (hits %llu->%llu, corrupt %llu->%llu)",
                   (unsigned long long)before.hits, (unsigned long long)after.hits,
                   (unsigned long long)before.corrupt_entries, (unsigned long long)after.corrupt_entries);
        FUZZ_CHECK(got.type == g_fresh.type && got.payload == g_fresh.payload && same_names(got, g_fresh),
                   "a damaged entry changed the compile's result");
        Entry rewritten;
        FUZZ_CHECK(decode(read_file(g_path), rewritten) && rewritten.payload == g_fresh.payload &&
                       rewritten.type == g_fresh.type && same_names(rewritten, g_fresh),
                   "the damaged entry was not replaced by the compiled one");
    }
    fuzz::Balance::now().expect_equal(g_baseline);
    return 0;
}
