// Program caches: a miss then a hit (stats), a hit's code runs correctly, the
// key follows the options, a damaged disk entry (truncated, flipped) is
// detected, recompiled and the kernel still runs, and concurrent writers
// (threads, and a forked process) share one directory.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "kernel_gpu.hpp"

namespace {

using gpu::CompileTest;
using gpu::contains;
using gpu::Owned;

cucore_program_cache_stats_t stats_of(const cucore_program_cache_t *cache) {
    cucore_program_cache_stats_t s = CUCORE_PROGRAM_CACHE_STATS_INIT;
    EXPECT_EQ(cucore_program_cache_stats(cache, &s), CUCORE_SUCCESS) << cucore_last_error_message();
    return s;
}

// The regular files of `dir` (the cache's entries, and any temporary left behind).
std::vector<std::string> files_in(const std::string &dir) {
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent *e = readdir(d)) {
        const std::string path = dir + "/" + e->d_name;
        struct stat st {};
        if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(path);
    }
    closedir(d);
    return out;
}

std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const std::string &path, const std::string &bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class ProgramCacheTest : public CompileTest {
protected:
    Owned<cucore_program_cache_t> in_memory(uint64_t max = 0) {
        cucore_program_cache_t *c = nullptr;
        EXPECT_EQ(cucore_program_cache_create_in_memory(max, &c), CUCORE_SUCCESS) << cucore_last_error_message();
        return Owned<cucore_program_cache_t>(c);
    }
    Owned<cucore_program_cache_t> on_disk(const std::string &dir, uint64_t max = 0) {
        cucore_program_cache_t *c = nullptr;
        EXPECT_EQ(cucore_program_cache_create_on_disk(dir.c_str(), max, &c), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return Owned<cucore_program_cache_t>(c);
    }
    // Compiles saxpy through `cache` and checks the code runs.
    std::string compile_and_run(cucore_program_cache_t *cache) {
        Owned<cucore_object_code_t> code = compile(gpu::kSaxpySource, CUCORE_CODE_CUBIN, {}, nullptr, cache);
        if (!code) return {};
        check_saxpy(code.get());
        return gpu::code_bytes(code.get());
    }

    // Damages the one entry of `dir` with `damage` and checks that the next compile
    // detects it, recompiles, runs and rewrites a good entry.
    template <typename Damage>
    void damaged_entry_is_recompiled(const std::string &dir, Damage damage) {
        Owned<cucore_program_cache_t> cache = on_disk(dir);
        ASSERT_TRUE(cache);
        const std::string good = compile_and_run(cache.get());
        std::vector<std::string> files = files_in(dir);
        ASSERT_EQ(files.size(), 1u);
        const std::string entry = read_file(files[0]);
        write_file(files[0], damage(entry));

        Owned<cucore_program_cache_t> fresh = on_disk(dir);
        EXPECT_EQ(compile_and_run(fresh.get()), good);
        cucore_program_cache_stats_t s = stats_of(fresh.get());
        EXPECT_EQ(s.corrupt_entries, 1u);
        EXPECT_EQ(s.misses, 1u);
        EXPECT_EQ(s.hits, 0u);
        // The entry was replaced by a good one: the next compile hits.
        files = files_in(dir);
        ASSERT_EQ(files.size(), 1u);
        EXPECT_NE(read_file(files[0]), damage(entry));
        Owned<cucore_program_cache_t> third = on_disk(dir);
        EXPECT_EQ(compile_and_run(third.get()), good);
        s = stats_of(third.get());
        EXPECT_EQ(s.hits, 1u);
        EXPECT_EQ(s.corrupt_entries, 0u);
    }
};

TEST_F(ProgramCacheTest, InMemoryMissThenHit) {
    Owned<cucore_program_cache_t> cache = in_memory();
    ASSERT_TRUE(cache);
    const std::string first = compile_and_run(cache.get());
    cucore_program_cache_stats_t s = stats_of(cache.get());
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 0u);
    EXPECT_EQ(s.entries, 1u);
    EXPECT_GE(s.size_bytes, first.size());

    // A new program of the same source and options hits, runs no compiler
    // (its log stays empty) and gives the same code, which runs.
    Owned<cucore_program_t> p = program(gpu::kSaxpySource);
    ASSERT_TRUE(p);
    cucore_object_code_t *hit = nullptr;
    CUCORE_ASSERT_OK(cucore_program_compile(p.get(), CUCORE_CODE_CUBIN, nullptr, 0, cache.get(), &hit));
    Owned<cucore_object_code_t> hit_owned(hit);
    EXPECT_EQ(gpu::program_log(p.get()), "");
    EXPECT_EQ(gpu::code_bytes(hit), first);
    check_saxpy(hit);
    s = stats_of(cache.get());
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 1u);
    EXPECT_EQ(s.entries, 1u);

    CUCORE_ASSERT_OK(cucore_program_cache_clear(cache.get()));
    s = stats_of(cache.get());
    EXPECT_EQ(s.hits + s.misses + s.entries + s.size_bytes, 0u);
}

TEST_F(ProgramCacheTest, NameExpressionsSurviveAHit) {
    Owned<cucore_program_cache_t> cache = in_memory();
    const char *src = "template <int N> __global__ void put(int *o) { o[0] = N; }\n";
    for (int round = 0; round < 2; ++round) {
        Owned<cucore_object_code_t> code = compile(src, CUCORE_CODE_CUBIN, {"put<7>"}, nullptr, cache.get());
        Owned<cucore_kernel_t> k = kernel(code.get(), "put<7>");
        ASSERT_TRUE(k) << "round " << round;
        auto out = array<int>(1);
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), gpu::config(1, 1), k.get(), static_cast<int *>(out.ptr())));
        EXPECT_EQ(out.download()[0], 7) << "round " << round;
    }
    const cucore_program_cache_stats_t s = stats_of(cache.get());
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 1u);
}

TEST_F(ProgramCacheTest, TheKeyFollowsOptionsTargetAndExpressions) {
    Owned<cucore_program_t> a = program(gpu::kSaxpySource);
    cucore_program_options_t o = options();
    const char *defines[] = {"UNUSED=1"};
    o.defines = defines;
    o.define_count = 1;
    Owned<cucore_program_t> b = program(gpu::kSaxpySource, &o);
    ASSERT_TRUE(a && b);
    uint8_t ka[32], ka2[32], kb[32], kptx[32], kexpr[32];
    const char *expr[] = {"saxpy"};
    CUCORE_ASSERT_OK(cucore_program_cache_key(a.get(), CUCORE_CODE_CUBIN, nullptr, 0, ka));
    CUCORE_ASSERT_OK(cucore_program_cache_key(a.get(), CUCORE_CODE_CUBIN, nullptr, 0, ka2));
    CUCORE_ASSERT_OK(cucore_program_cache_key(b.get(), CUCORE_CODE_CUBIN, nullptr, 0, kb));
    CUCORE_ASSERT_OK(cucore_program_cache_key(a.get(), CUCORE_CODE_PTX, nullptr, 0, kptx));
    CUCORE_ASSERT_OK(cucore_program_cache_key(a.get(), CUCORE_CODE_CUBIN, expr, 1, kexpr));
    EXPECT_EQ(std::memcmp(ka, ka2, 32), 0);
    EXPECT_NE(std::memcmp(ka, kb, 32), 0);
    EXPECT_NE(std::memcmp(ka, kptx, 32), 0);
    EXPECT_NE(std::memcmp(ka, kexpr, 32), 0);

    // A changed option is a miss, not a wrong hit.
    Owned<cucore_program_cache_t> cache = in_memory();
    cucore_object_code_t *c1 = nullptr, *c2 = nullptr;
    CUCORE_ASSERT_OK(cucore_program_compile(a.get(), CUCORE_CODE_CUBIN, nullptr, 0, cache.get(), &c1));
    CUCORE_ASSERT_OK(cucore_program_compile(b.get(), CUCORE_CODE_CUBIN, nullptr, 0, cache.get(), &c2));
    cucore_object_code_release(c1);
    cucore_object_code_release(c2);
    const cucore_program_cache_stats_t s = stats_of(cache.get());
    EXPECT_EQ(s.misses, 2u);
    EXPECT_EQ(s.hits, 0u);
}

TEST_F(ProgramCacheTest, OnDiskHitFromAnotherCacheObject) {
    gpu::TempDir dir;
    std::string first;
    {
        Owned<cucore_program_cache_t> cache = on_disk(dir.path());
        ASSERT_TRUE(cache);
        first = compile_and_run(cache.get());
        const cucore_program_cache_stats_t s = stats_of(cache.get());
        EXPECT_EQ(s.misses, 1u);
        EXPECT_EQ(s.hits, 0u);
    }
    EXPECT_EQ(files_in(dir.path()).size(), 1u); // one entry, no temporary left
    // A new cache object on the directory (as another process would) hits.
    Owned<cucore_program_cache_t> cache = on_disk(dir.path());
    ASSERT_TRUE(cache);
    EXPECT_EQ(compile_and_run(cache.get()), first);
    const cucore_program_cache_stats_t s = stats_of(cache.get());
    EXPECT_EQ(s.hits, 1u);
    EXPECT_EQ(s.misses, 0u);
}

TEST_F(ProgramCacheTest, TruncatedEntryIsRecompiled) {
    gpu::TempDir dir;
    damaged_entry_is_recompiled(dir.path(), [](const std::string &e) { return e.substr(0, e.size() / 2); });
}

TEST_F(ProgramCacheTest, FlippedByteIsRecompiled) {
    gpu::TempDir dir;
    damaged_entry_is_recompiled(dir.path(), [](std::string e) {
                                    e[e.size() * 3 / 4] ^= 0x5a; // inside the code, past the header
                                    return e;
                                });
}

TEST_F(ProgramCacheTest, EmptyAndForeignEntriesAreRecompiled) {
    gpu::TempDir dir;
    damaged_entry_is_recompiled(dir.path(), [](const std::string &) { return std::string(); });
    gpu::TempDir dir2;
    damaged_entry_is_recompiled(dir2.path(), [](const std::string &e) { return std::string(e.size(), 'Z'); });
}

TEST_F(ProgramCacheTest, ConcurrentWritersOneDirectory) {
    // Eight threads, each with its own cache object on one directory, compile
    // the same program at once: every one gets working code and the directory
    // ends with exactly one entry and no temporaries.
    gpu::TempDir dir;
    constexpr int kThreads = 8;
    std::vector<std::thread> threads;
    std::vector<std::string> codes(kThreads), errors(kThreads);
    std::atomic<int> ready{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            cucore_program_cache_t *cache = nullptr;
            cucore_program_t *p = nullptr;
            cucore_object_code_t *code = nullptr;
            const cucore_program_options_t o = options();
            if (cucore_program_cache_create_on_disk(dir.path().c_str(), 0, &cache) != CUCORE_SUCCESS ||
                cucore_program_create(gpu::kSaxpySource, 0, CUCORE_CODE_CXX, &o, &p) != CUCORE_SUCCESS) {
                errors[t] = cucore_last_error_message();
            } else {
                ready.fetch_add(1);
                while (ready.load() < kThreads) std::this_thread::yield();
                if (cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, cache, &code) != CUCORE_SUCCESS)
                    errors[t] = cucore_last_error_message();
                else
                    codes[t] = gpu::code_bytes(code);
            }
            if (!errors[t].empty()) ready.fetch_add(1); // never leave the others spinning
            cucore_object_code_release(code);
            cucore_program_release(p);
            cucore_program_cache_release(cache);
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(errors[t], "") << "thread " << t;
        EXPECT_EQ(codes[t], codes[0]) << "thread " << t;
    }
    EXPECT_EQ(files_in(dir.path()).size(), 1u);
    Owned<cucore_program_cache_t> cache = on_disk(dir.path());
    EXPECT_EQ(compile_and_run(cache.get()), codes[0]);
    EXPECT_EQ(stats_of(cache.get()).hits, 1u);
}

TEST_F(ProgramCacheTest, ConcurrentWriterInAForkedProcess) {
    // A forked child compiles the same programs into the same directory while
    // the parent does (both released by one pipe write). The child only runs
    // NVRTC and file I/O (no driver call after fork, which CUDA forbids) and
    // reports through its exit status.
    gpu::TempDir dir;
    constexpr int kPrograms = 6;
    auto source = [](int i) {
        return "extern \"C\" __global__ void k(int *o) { o[0] = " + std::to_string(1000 + i) + "; }\n";
    };
    const cucore_program_options_t o = options(); // explicit arch: no driver needed
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(go[1]);
        char c;
        if (read(go[0], &c, 1) != 1) _exit(3);
        cucore_program_cache_t *cache = nullptr;
        if (cucore_program_cache_create_on_disk(dir.path().c_str(), 0, &cache) != CUCORE_SUCCESS) _exit(4);
        for (int i = 0; i < kPrograms; ++i) {
            const std::string src = source(i);
            cucore_program_t *p = nullptr;
            cucore_object_code_t *code = nullptr;
            if (cucore_program_create(src.c_str(), 0, CUCORE_CODE_CXX, &o, &p) != CUCORE_SUCCESS) _exit(5);
            if (cucore_program_compile(p, CUCORE_CODE_CUBIN, nullptr, 0, cache, &code) != CUCORE_SUCCESS) _exit(6);
            cucore_object_code_release(code);
            cucore_program_release(p);
        }
        cucore_program_cache_release(cache);
        _exit(0);
    }
    close(go[0]);
    Owned<cucore_program_cache_t> cache = on_disk(dir.path());
    ASSERT_TRUE(cache);
    ASSERT_EQ(write(go[1], "x", 1), 1);
    close(go[1]);
    // The parent writes in the opposite order, so the two meet in the middle.
    for (int i = kPrograms - 1; i >= 0; --i) {
        Owned<cucore_object_code_t> code = compile(source(i), CUCORE_CODE_CUBIN, {}, nullptr, cache.get());
        ASSERT_TRUE(code);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child failed at step " << WEXITSTATUS(status);
    EXPECT_EQ(files_in(dir.path()).size(), static_cast<size_t>(kPrograms));
    // Every entry is good: a fresh cache hits each one, and each kernel runs.
    Owned<cucore_program_cache_t> fresh = on_disk(dir.path());
    for (int i = 0; i < kPrograms; ++i) {
        Owned<cucore_object_code_t> code = compile(source(i), CUCORE_CODE_CUBIN, {}, nullptr, fresh.get());
        Owned<cucore_kernel_t> k = kernel(code.get(), "k");
        ASSERT_TRUE(k);
        auto out = array<int>(1);
        CUCORE_ASSERT_OK(gpu::launch(stream_.get(), gpu::config(1, 1), k.get(), static_cast<int *>(out.ptr())));
        EXPECT_EQ(out.download()[0], 1000 + i);
    }
    const cucore_program_cache_stats_t s = stats_of(fresh.get());
    EXPECT_EQ(s.hits, static_cast<uint64_t>(kPrograms));
    EXPECT_EQ(s.corrupt_entries, 0u);
}

TEST_F(ProgramCacheTest, ABadDirectoryIsNamed) {
    gpu::TempDir dir;
    const std::string file = dir.path() + "/a-file";
    write_file(file, "not a directory");
    cucore_program_cache_t *cache = nullptr;
    CUCORE_EXPECT_STATUS(cucore_program_cache_create_on_disk(file.c_str(), 0, &cache), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cache, nullptr);
    EXPECT_TRUE(contains(gpu::last_message(), file)) << gpu::last_message();
}

} // namespace
