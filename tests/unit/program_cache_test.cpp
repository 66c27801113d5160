// Program caches: the key (stable, and sensitive to every input), in-memory
// and on-disk hits, misses, counters and LRU eviction, every kind of damaged
// entry file, the decoder's bounds checks, and concurrent writers (threads and
// two processes). Compiles go through the fake NVRTC, which counts its calls,
// so a hit is seen to run no compiler.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "compile_support.hpp"
#include "core/program_cache.hpp"
#include "core/sha256.hpp"
#include "fake_compilers.hpp"

namespace {

using Key = std::array<uint8_t, 32>;

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_file(const std::string &path, const std::string &data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}
std::vector<std::string> files_in(const std::string &dir) {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            if (e->d_name[0] != '.' || std::string(e->d_name).rfind(".tmp-", 0) == 0) names.push_back(e->d_name);
        closedir(d);
    }
    return names;
}

class ProgramCacheTest : public CompileFixture {
  protected:
    void SetUp() override {
        CompileFixture::SetUp();
        compilers_ = std::make_unique<fake_compilers::Installed>();
        char tmpl[] = "/tmp/cucore-cache-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        compilers_.reset();
        std::system(("rm -rf " + dir_).c_str());
        CompileFixture::TearDown();
    }
    Key key(cucore_program_t *p, cucore_code_type_t target = CUCORE_CODE_CUBIN, std::vector<const char *> names = {}) {
        Key k{};
        EXPECT_EQ(cucore_program_cache_key(p, target, names.data(), names.size(), k.data()), CUCORE_SUCCESS)
            << message();
        return k;
    }
    Key key_of(const std::string &code, cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT,
               cucore_code_type_t target = CUCORE_CODE_CUBIN, std::vector<const char *> names = {}) {
        cucore_program_t *p = program(code, CUCORE_CODE_CXX, o);
        Key k = key(p, target, std::move(names));
        cucore_program_release(p);
        return k;
    }
    // Compiles through `cache`; returns the bytes ("" on failure).
    std::string compile(cucore_program_t *p, cucore_program_cache_t *cache, std::vector<const char *> names = {}) {
        cucore_object_code_t *o = nullptr;
        EXPECT_EQ(cucore_program_compile(p, CUCORE_CODE_CUBIN, names.data(), names.size(), cache, &o), CUCORE_SUCCESS)
            << message();
        if (!o) return "";
        std::string bytes = bytes_of(o);
        cucore_object_code_release(o);
        return bytes;
    }
    cucore_program_cache_stats_t stats(cucore_program_cache_t *cache) {
        cucore_program_cache_stats_t s = CUCORE_PROGRAM_CACHE_STATS_INIT;
        EXPECT_EQ(cucore_program_cache_stats(cache, &s), CUCORE_SUCCESS) << message();
        return s;
    }
    cucore_program_cache_t *disk(uint64_t max = 0, const std::string &where = "") {
        cucore_program_cache_t *c = nullptr;
        EXPECT_EQ(cucore_program_cache_create_on_disk((where.empty() ? dir_ : where).c_str(), max, &c), CUCORE_SUCCESS)
            << message();
        return c;
    }
    std::string entry_path(const Key &k) const { return dir_ + "/" + cucore::core::to_hex(k.data(), k.size()); }

    std::string dir_;
    std::unique_ptr<fake_compilers::Installed> compilers_;
};

TEST(Sha256, KnownVectors) {
    auto hex = [](const std::string &text) {
        cucore::core::Sha256 h;
        h.update(text.data(), text.size());
        const auto d = h.finish();
        return cucore::core::to_hex(d.data(), d.size());
    };
    EXPECT_EQ(hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // Incremental updates in odd pieces give the same digest.
    cucore::core::Sha256 h;
    const std::string text(200, 'x');
    for (size_t at = 0; at < text.size(); at += 7) h.update(text.data() + at, std::min<size_t>(7, text.size() - at));
    const auto d = h.finish();
    EXPECT_EQ(cucore::core::to_hex(d.data(), d.size()), hex(text));
}

TEST_F(ProgramCacheTest, KeyIsStableAndSensitiveToEveryInput) {
    const std::string code = "kernel k\n";
    const Key base = key_of(code);
    EXPECT_EQ(key_of(code), base) << "the same inputs, the same key";
    std::set<Key> seen{base};
    auto differs = [&](const Key &k, const char *what) { EXPECT_TRUE(seen.insert(k).second) << what; };
    differs(key_of("kernel j\n"), "code");
    const char *defines[] = {"A"};
    const char *hn[] = {"h.cuh"}, *hs[] = {"1"}, *hn2[] = {"g.cuh"}, *hs2[] = {"2"};
    cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.defines = defines;
    o.define_count = 1;
    differs(key_of(code, o), "a define (a flag)");
    o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.ftz = CUCORE_TOGGLE_ON;
    differs(key_of(code, o), "a toggle");
    o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.header_names = hn;
    o.header_sources = hs;
    o.header_count = 1;
    differs(key_of(code, o), "a header");
    o.header_sources = hs2;
    differs(key_of(code, o), "a header's source");
    o.header_names = hn2;
    differs(key_of(code, o), "a header's name");
    o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.arch = "sm_80";
    differs(key_of(code, o), "the arch");
    o = CUCORE_PROGRAM_OPTIONS_INIT;
    o.name = "other";
    differs(key_of(code, o), "the program name");
    differs(key_of(code, CUCORE_PROGRAM_OPTIONS_INIT, CUCORE_CODE_PTX), "the target");
    differs(key_of(code, CUCORE_PROGRAM_OPTIONS_INIT, CUCORE_CODE_CUBIN, {"f<int>"}), "a name expression");
    differs(key_of(code, CUCORE_PROGRAM_OPTIONS_INIT, CUCORE_CODE_CUBIN, {"f<int>", "g"}), "two name expressions");
    differs(key_of(code, CUCORE_PROGRAM_OPTIONS_INIT, CUCORE_CODE_CUBIN, {"g", "f<int>"}), "their order");
    differs(key_of(code, CUCORE_PROGRAM_OPTIONS_INIT, CUCORE_CODE_CUBIN, {"f<int>g"}), "length prefixes");
    // The compiler's version.
    fake_compilers::set_nvrtc_version(13010);
    differs(key_of(code), "the compiler version");
    fake_compilers::set_nvrtc_version(13000);
    EXPECT_EQ(key_of(code), base);
    // Arguments.
    cucore_program_t *p = program(code);
    uint8_t k[32];
    EXPECT_EQ(cucore_program_cache_key(p, CUCORE_CODE_FATBIN, nullptr, 0, k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_cache_key(p, CUCORE_CODE_CUBIN, nullptr, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'key'"), std::string::npos);
    const char *null_name[] = {nullptr};
    EXPECT_EQ(cucore_program_cache_key(p, CUCORE_CODE_CUBIN, null_name, 1, k), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_cache_key(p, CUCORE_CODE_CUBIN, nullptr, 1, k), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_program_release(p);
}

TEST_F(ProgramCacheTest, InMemoryHitsRunNoCompiler) {
    cucore_program_cache_t *cache = nullptr;
    ASSERT_EQ(cucore_program_cache_create_in_memory(0, &cache), CUCORE_SUCCESS);
    cucore_program_t *p = program("kernel k\n");
    const std::string first = compile(p, cache, {"f<int>"});
    EXPECT_EQ(first, "FAKECUBIN\nkernel k\nkernel lowered_f_int_\n");
    EXPECT_EQ(log_of(p), "compiled default_program\n");
    cucore_program_cache_stats_t s = stats(cache);
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 0u);
    EXPECT_EQ(s.entries, 1u);
    EXPECT_EQ(s.size_bytes, first.size() + std::strlen("f<int>") + std::strlen("lowered_f_int_"));
    fake_compilers::fail_call(0);  // resets the count
    cucore_object_code_t *hit = nullptr;
    const char *names[] = {"f<int>"};
    ASSERT_EQ(cucore_program_compile(p, CUCORE_CODE_CUBIN, names, 1, cache, &hit), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake_compilers::calls(), 0) << "a hit runs no compiler";
    EXPECT_EQ(bytes_of(hit), first);
    EXPECT_EQ(log_of(p), "") << "no compile ran";
    const char *expression = nullptr, *lowered = nullptr;
    EXPECT_EQ(cucore_object_code_name_expression(hit, 0, &expression, &lowered), CUCORE_SUCCESS);
    EXPECT_STREQ(lowered, "lowered_f_int_");
    const char *name = nullptr;
    EXPECT_EQ(cucore_object_code_name(hit, &name), CUCORE_SUCCESS);
    EXPECT_STREQ(name, "default_program");
    cucore_object_code_release(hit);
    s = stats(cache);
    EXPECT_EQ(s.hits, 1u);
    // Another program with the same inputs hits too; another target misses.
    cucore_program_t *twin = program("kernel k\n");
    EXPECT_EQ(compile(twin, cache, {"f<int>"}), first);
    EXPECT_EQ(stats(cache).hits, 2u);
    EXPECT_EQ(compile(twin, cache), "FAKECUBIN\nkernel k\n");
    EXPECT_EQ(stats(cache).misses, 2u);
    EXPECT_EQ(cucore_program_cache_clear(cache), CUCORE_SUCCESS);
    s = stats(cache);
    EXPECT_EQ(s.hits + s.misses + s.entries + s.size_bytes, 0u);
    // Stats: struct_size checks; an older, smaller struct gets what fits.
    EXPECT_EQ(cucore_program_cache_stats(cache, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_program_cache_stats_t bad{};
    EXPECT_EQ(cucore_program_cache_stats(cache, &bad), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_program_cache_stats_t older = CUCORE_PROGRAM_CACHE_STATS_INIT;
    older.struct_size = offsetof(cucore_program_cache_stats_t, misses);
    older.misses = 77;
    compile(p, cache);
    EXPECT_EQ(cucore_program_cache_stats(cache, &older), CUCORE_SUCCESS);
    EXPECT_EQ(older.hits, 0u);
    EXPECT_EQ(older.misses, 77u) << "beyond the caller's struct_size: untouched";
    cucore_program_release(twin);
    cucore_program_release(p);
    cucore_program_cache_release(cache);
}

TEST_F(ProgramCacheTest, EntriesCanBeReadStoredAndRemovedByKey) {
    cucore_program_cache_t *memory = nullptr;
    ASSERT_EQ(cucore_program_cache_create_in_memory(0, &memory), CUCORE_SUCCESS);
    cucore_program_cache_t *on_disk = disk();
    const std::string bytes = fake::image({"k1"});
    cucore_object_code_t *code = nullptr;
    ASSERT_EQ(cucore_object_code_create(bytes.data(), bytes.size(), CUCORE_CODE_CUBIN, "named", &code), CUCORE_SUCCESS);
    Key k{};
    k[0] = 0xAB;
    k[31] = 0x01;
    for (cucore_program_cache_t *cache : {memory, on_disk}) {
        SCOPED_TRACE(cache == memory ? "in memory" : "on disk");
        cucore_object_code_t *got = code;
        ASSERT_EQ(cucore_program_cache_get(cache, k.data(), &got), CUCORE_SUCCESS) << message();
        EXPECT_EQ(got, nullptr) << "nothing stored yet";
        EXPECT_EQ(stats(cache).misses, 1u);
        ASSERT_EQ(cucore_program_cache_put(cache, k.data(), code), CUCORE_SUCCESS) << message();
        EXPECT_EQ(stats(cache).entries, 1u);
        ASSERT_EQ(cucore_program_cache_get(cache, k.data(), &got), CUCORE_SUCCESS) << message();
        ASSERT_NE(got, nullptr);
        EXPECT_EQ(bytes_of(got), bytes);
        cucore_code_type_t type = CUCORE_CODE_UNSET;
        EXPECT_EQ(cucore_object_code_code_type(got, &type), CUCORE_SUCCESS);
        EXPECT_EQ(type, CUCORE_CODE_CUBIN);
        EXPECT_EQ(stats(cache).hits, 1u);
        cucore_object_code_release(got);
        int removed = 7;
        ASSERT_EQ(cucore_program_cache_remove(cache, k.data(), &removed), CUCORE_SUCCESS) << message();
        EXPECT_EQ(removed, 1);
        EXPECT_EQ(stats(cache).entries, 0u);
        ASSERT_EQ(cucore_program_cache_remove(cache, k.data(), &removed), CUCORE_SUCCESS);
        EXPECT_EQ(removed, 0) << "already gone";
        ASSERT_EQ(cucore_program_cache_get(cache, k.data(), &got), CUCORE_SUCCESS);
        EXPECT_EQ(got, nullptr);
    }
    // A compile through the cache finds what was stored under its key.
    cucore_program_t *p = program("kernel k\n");
    const Key compiled_key = key(p);
    ASSERT_EQ(cucore_program_cache_put(memory, compiled_key.data(), code), CUCORE_SUCCESS);
    EXPECT_EQ(compile(p, memory), bytes) << "the stored entry, not a compile";
    cucore_program_release(p);
    cucore_object_code_release(code);
    cucore_program_cache_release(on_disk);
    cucore_program_cache_release(memory);
}

TEST_F(ProgramCacheTest, InMemoryLeastRecentlyUsedGoesFirst) {
    // Each entry is "FAKECUBIN\nkernel X\n" = 19 bytes; room for two.
    cucore_program_cache_t *cache = nullptr;
    ASSERT_EQ(cucore_program_cache_create_in_memory(40, &cache), CUCORE_SUCCESS);
    cucore_program_t *a = program("kernel a\n"), *b = program("kernel b\n"), *c = program("kernel c\n");
    compile(a, cache);
    compile(b, cache);
    compile(a, cache);  // a is now the most recent
    compile(c, cache);  // evicts b
    cucore_program_cache_stats_t s = stats(cache);
    EXPECT_EQ(s.entries, 2u);
    EXPECT_EQ(s.evictions, 1u);
    EXPECT_EQ(s.size_bytes, 38u);
    const uint64_t hits = s.hits;
    compile(a, cache);
    EXPECT_EQ(stats(cache).hits, hits + 1) << "a stayed";
    compile(b, cache);
    EXPECT_EQ(stats(cache).hits, hits + 1) << "b was evicted";
    // An entry larger than the whole cache is not kept.
    cucore_program_cache_t *tiny = nullptr;
    ASSERT_EQ(cucore_program_cache_create_in_memory(5, &tiny), CUCORE_SUCCESS);
    compile(a, tiny);
    EXPECT_EQ(stats(tiny).entries, 0u);
    for (cucore_program_t *p : {a, b, c}) cucore_program_release(p);
    cucore_program_cache_release(cache);
    cucore_program_cache_release(tiny);
}

TEST_F(ProgramCacheTest, OnDiskHitsPersistAcrossCacheObjects) {
    cucore_program_cache_t *cache = disk();
    cucore_program_t *p = program("kernel k\nglobal g 8\n");
    const std::string bytes = compile(p, cache, {"f<int>"});
    const Key k = key(p, CUCORE_CODE_CUBIN, {"f<int>"});
    EXPECT_EQ(files_in(dir_), std::vector<std::string>{cucore::core::to_hex(k.data(), k.size())})
        << "one file named by the key, no temporaries";
    cucore_program_cache_stats_t s = stats(cache);
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.entries, 1u);
    EXPECT_EQ(s.size_bytes, read_file(entry_path(k)).size());
    cucore_program_cache_release(cache);
    // A new cache object (another process would do the same) finds it.
    cache = disk();
    fake_compilers::fail_call(0);
    EXPECT_EQ(compile(p, cache, {"f<int>"}), bytes);
    EXPECT_EQ(fake_compilers::calls(), 0) << "a disk hit runs no compiler";
    EXPECT_EQ(stats(cache).hits, 1u);
    cucore_object_code_t *o = nullptr;
    const char *names[] = {"f<int>"};
    ASSERT_EQ(cucore_program_compile(p, CUCORE_CODE_CUBIN, names, 1, cache, &o), CUCORE_SUCCESS);
    cucore_kernel_t *kernel = nullptr;
    EXPECT_EQ(cucore_object_code_get_kernel(o, "f<int>", &kernel), CUCORE_SUCCESS) << "names survive the disk";
    cucore_kernel_release(kernel);
    cucore_object_code_release(o);
    EXPECT_EQ(cucore_program_cache_clear(cache), CUCORE_SUCCESS);
    EXPECT_TRUE(files_in(dir_).empty());
    EXPECT_EQ(stats(cache).hits, 0u);
    cucore_program_release(p);
    cucore_program_cache_release(cache);
}

TEST_F(ProgramCacheTest, DamagedEntriesAreMissesAndGetRewritten) {
    cucore_program_cache_t *cache = disk();
    cucore_program_t *p = program("kernel k\n"), *other = program("kernel other\n");
    const std::string good_bytes = compile(p, cache);
    compile(other, cache);
    const std::string path = entry_path(key(p));
    const std::string good = read_file(path);
    const std::string foreign_entry = read_file(entry_path(key(other)));
    std::vector<std::pair<std::string, std::string>> damage = {
        {"empty", ""},
        {"truncated to the header", good.substr(0, 20)},
        {"truncated by one byte", good.substr(0, good.size() - 1)},
        {"a byte appended", good + "x"},
        {"a foreign file", "#!/bin/sh\necho not a cache entry\n"},
        {"another key's entry", foreign_entry},
    };
    for (size_t at : {size_t{0}, size_t{9}, size_t{13}, size_t{20}, size_t{60}, good.size() / 2, good.size() - 1}) {
        std::string flipped = good;
        flipped[at] = static_cast<char>(flipped[at] ^ 0x40);
        damage.emplace_back("byte " + std::to_string(at) + " flipped", flipped);
    }
    uint64_t corrupt = 0;
    for (const auto &[what, content] : damage) {
        write_file(path, content);
        EXPECT_EQ(compile(p, cache), good_bytes) << what;
        EXPECT_EQ(stats(cache).corrupt_entries, ++corrupt) << what;
        EXPECT_EQ(read_file(path), good) << what << ": rewritten by the compile";
    }
    const uint64_t hits = stats(cache).hits;
    EXPECT_EQ(compile(p, cache), good_bytes);
    EXPECT_EQ(stats(cache).hits, hits + 1) << "whole again";
    cucore_program_release(p);
    cucore_program_release(other);
    cucore_program_cache_release(cache);
}

TEST_F(ProgramCacheTest, AnEntryPathThatIsADirectoryIsAMiss) {
    cucore_program_cache_t *cache = disk();
    cucore_program_t *p = program("kernel k\n");
    ASSERT_EQ(mkdir(entry_path(key(p)).c_str(), 0700), 0);
    EXPECT_EQ(compile(p, cache), "FAKECUBIN\nkernel k\n") << "the compile succeeds; the entry cannot be stored";
    EXPECT_EQ(compile(p, cache), "FAKECUBIN\nkernel k\n");
    const cucore_program_cache_stats_t s = stats(cache);
    EXPECT_EQ(s.hits, 0u);
    EXPECT_EQ(s.misses, 2u);
    EXPECT_EQ(s.entries, 0u) << "a directory is not an entry";
    std::vector<std::string> names = files_in(dir_);
    EXPECT_EQ(names.size(), 1u) << "no temporaries left behind";
    cucore_program_release(p);
    cucore_program_cache_release(cache);
}

// Issue 12: a FIFO at an entry's path made the lookup wait forever in open() for a writer. The lookup runs on a
// thread; should it block, a writer that opens and closes the FIFO releases it, so the test fails, never hangs.
TEST_F(ProgramCacheTest, AnEntryPathThatIsAFifoIsADamagedEntryNotAWait) {
    cucore_program_cache_t *cache = disk();
    cucore_program_t *p = program("kernel k\n");
    const std::string path = entry_path(key(p));
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
    std::promise<std::string> compiled;
    std::future<std::string> result = compiled.get_future();
    std::thread lookup([&] { compiled.set_value(compile(p, cache)); });
    const bool returned = result.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    while (result.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
        const int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);  // releases a reader blocked in open()
        if (writer >= 0) ::close(writer);
    }
    lookup.join();
    EXPECT_TRUE(returned) << "the lookup blocked on the FIFO at the entry's path";
    EXPECT_EQ(result.get(), "FAKECUBIN\nkernel k\n");
    const cucore_program_cache_stats_t s = stats(cache);
    EXPECT_EQ(s.hits, 0u);
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.corrupt_entries, 1u) << "a FIFO is a damaged entry";
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "replaced by the recompiled entry";

    // A symbolic link at an entry's path is foreign too: dropped, not followed.
    const std::string target = dir_ + "-link-target";
    write_file(target, read_file(path));
    ASSERT_EQ(::unlink(path.c_str()), 0);
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
    EXPECT_EQ(compile(p, cache), "FAKECUBIN\nkernel k\n");
    EXPECT_EQ(stats(cache).corrupt_entries, 2u) << "a link is a damaged entry";
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "the link was replaced by the recompiled entry";
    EXPECT_EQ(read_file(target).empty(), false) << "the link's target is untouched";
    ::unlink(target.c_str());
    cucore_program_release(p);
    cucore_program_cache_release(cache);
}

TEST_F(ProgramCacheTest, DecoderNeverReadsOutOfBounds) {
    cucore::core::CacheKey key{};
    key[0] = 1;
    cucore::core::CodeImage image;
    image.bytes = "FAKECUBIN\nkernel k\n";
    image.type = CUCORE_CODE_CUBIN;
    image.names = {{"f<int>", "lowered"}, {"", ""}};
    const std::string file = cucore::core::encode_cache_entry(key, image);
    auto decoded = cucore::core::decode_cache_entry(key, file);
    ASSERT_NE(decoded, nullptr);
    EXPECT_EQ(decoded->bytes, image.bytes);
    EXPECT_EQ(decoded->names, image.names);
    for (size_t n = 0; n < file.size(); ++n)
        EXPECT_EQ(cucore::core::decode_cache_entry(key, file.substr(0, n)), nullptr) << "truncated to " << n;
    for (size_t i = 0; i < file.size(); ++i) {  // every single byte changed is detected
        std::string changed = file;
        changed[i] = static_cast<char>(changed[i] + 1);
        EXPECT_EQ(cucore::core::decode_cache_entry(key, changed), nullptr) << "byte " << i;
    }
    std::mt19937 random(42);
    for (int round = 0; round < 2000; ++round) {  // garbage of every size, some with a valid header
        std::string junk(random() % 200, '\0');
        for (char &c : junk) c = static_cast<char>(random());
        if (round % 2 && junk.size() >= 48) junk.replace(0, 48, file.substr(0, 48));
        EXPECT_EQ(cucore::core::decode_cache_entry(key, junk), nullptr);
    }
}

TEST_F(ProgramCacheTest, OnDiskEvictsTheOldestBeyondMaxSize) {
    cucore_program_cache_t *unlimited = disk();
    cucore_program_t *a = program("kernel a\n"), *b = program("kernel b\n"), *c = program("kernel c\n");
    compile(a, unlimited);
    compile(b, unlimited);
    const uint64_t one = stats(unlimited).size_bytes / 2;
    // Make a older than b, then a hit on a makes it the newest.
    struct timespec old_times[2] = {{1000, 0}, {1000, 0}}, older_times[2] = {{500, 0}, {500, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, entry_path(key(a)).c_str(), older_times, 0), 0);
    ASSERT_EQ(utimensat(AT_FDCWD, entry_path(key(b)).c_str(), old_times, 0), 0);
    compile(a, unlimited);  // hit: touches a
    cucore_program_cache_t *bounded = disk(2 * one + one / 2);
    compile(c, bounded);  // three entries do not fit: b (the oldest) goes
    cucore_program_cache_stats_t s = stats(bounded);
    EXPECT_EQ(s.evictions, 1u);
    EXPECT_EQ(s.entries, 2u);
    struct stat st;
    EXPECT_NE(stat(entry_path(key(b)).c_str(), &st), 0) << "b evicted";
    EXPECT_EQ(stat(entry_path(key(a)).c_str(), &st), 0) << "a kept (recently hit)";
    EXPECT_EQ(stat(entry_path(key(c)).c_str(), &st), 0) << "c kept (just written)";
    for (cucore_program_t *p : {a, b, c}) cucore_program_release(p);
    cucore_program_cache_release(unlimited);
    cucore_program_cache_release(bounded);
}

TEST_F(ProgramCacheTest, ConcurrentWritersThreadsAndProcesses) {
    cucore_program_t *p = program("kernel k\nglobal g 4\n");
    const Key k = key(p);
    // Threads, each with its own cache object on the directory, all missing at once.
    std::vector<std::thread> threads;
    std::vector<std::string> results(8);
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            cucore_program_cache_t *c = nullptr;
            ASSERT_EQ(cucore_program_cache_create_on_disk(dir_.c_str(), 0, &c), CUCORE_SUCCESS);
            for (int round = 0; round < 20; ++round) {
                results[i] = compile(p, c);
                if (round % 5 == 0) unlink(entry_path(k).c_str());  // keep writers racing
            }
            cucore_program_cache_release(c);
        });
    for (std::thread &t : threads) t.join();
    for (const std::string &r : results) EXPECT_EQ(r, "FAKECUBIN\nkernel k\nglobal g 4\n");
    // Two processes writing the same entry.
    unlink(entry_path(k).c_str());
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        cucore_program_cache_t *c = nullptr;
        int failures = cucore_program_cache_create_on_disk(dir_.c_str(), 0, &c) != CUCORE_SUCCESS;
        for (int round = 0; round < 50; ++round) {
            cucore_object_code_t *o = nullptr;
            failures += cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, c, &o) != CUCORE_SUCCESS;
            cucore_object_code_release(o);
        }
        _exit(failures == 0 ? 0 : 1);
    }
    cucore_program_cache_t *c = disk();
    for (int round = 0; round < 50; ++round) EXPECT_EQ(compile(p, c), "FAKECUBIN\nkernel k\nglobal g 4\n");
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's compiles all succeeded";
    EXPECT_EQ(files_in(dir_), std::vector<std::string>{cucore::core::to_hex(k.data(), k.size())})
        << "one whole entry, no temporaries left";
    EXPECT_EQ(stats(c).corrupt_entries, 0u) << "readers never saw a partial file";
    const uint64_t hits = stats(c).hits;
    compile(p, c);
    EXPECT_EQ(stats(c).hits, hits + 1);
    cucore_program_cache_release(c);
    cucore_program_release(p);
}

TEST_F(ProgramCacheTest, DirectoryValidation) {
    cucore_program_cache_t *c = nullptr;
    // Missing parents are created.
    c = disk(0, dir_ + "/a/b/c");
    ASSERT_NE(c, nullptr);
    struct stat st;
    EXPECT_EQ(stat((dir_ + "/a/b/c").c_str(), &st), 0);
    cucore_program_cache_release(c);
    write_file(dir_ + "/file", "x");
    EXPECT_EQ(cucore_program_cache_create_on_disk((dir_ + "/file").c_str(), 0, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("is not a directory"), std::string::npos) << message();
    EXPECT_NE(message().find(dir_ + "/file"), std::string::npos) << message();
    EXPECT_EQ(cucore_program_cache_create_on_disk((dir_ + "/file/sub").c_str(), 0, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_cache_create_on_disk(nullptr, 0, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_cache_create_on_disk("", 0, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_cache_create_on_disk(dir_.c_str(), 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_program_cache_create_in_memory(0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    if (geteuid() != 0) {  // root writes anywhere
        const std::string locked = dir_ + "/locked";
        ASSERT_EQ(mkdir(locked.c_str(), 0500), 0);
        EXPECT_EQ(cucore_program_cache_create_on_disk(locked.c_str(), 0, &c), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(message().find("not writable"), std::string::npos) << message();
        chmod(locked.c_str(), 0700);
    }
    EXPECT_EQ(c, nullptr);
}

}  // namespace
