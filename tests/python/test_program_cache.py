"""Program caches: hits, misses, stats, keys, corruption, eviction, and concurrent writers from several
processes (NVRTC with an explicit arch; no GPU needed)."""
import multiprocessing
import pathlib
import sys

import pytest

import cucore
from conftest import REPO

SRC = 'extern "C" __global__ void k(int *o) { *o = VALUE; }'


@pytest.fixture
def nvrtc(lib):
    try:
        cucore.compiler_version("nvrtc")
    except cucore.NotSupportedError as e:
        pytest.skip(f"NVRTC is not installed: {e}")


def program(value=1, **kw):
    return cucore.Program(SRC, "c++", cucore.ProgramOptions(arch="sm_90", define_macro=("VALUE", str(value)), **kw))


def test_max_size_is_validated(lib, tmp_path):
    for bad, exc in ((0, ValueError), (-1, ValueError), (1.5, TypeError)):
        with pytest.raises(exc):
            cucore.InMemoryProgramCache(max_size_bytes=bad)
    with pytest.raises(TypeError):
        cucore.FileStreamProgramCache(5)


def test_caches_have_no_raw_handle_and_equal_only_themselves(lib, tmp_path):
    # The kinds without a driver handle (Program, Linker, ProgramCache) answer `handle` and equality through
    # HandleObject, as one.
    for make in (cucore.InMemoryProgramCache, lambda: cucore.FileStreamProgramCache(str(tmp_path))):
        a, b = make(), make()
        with pytest.raises(AttributeError, match="has no raw handle"):
            a.handle
        assert not hasattr(a, "handle")
        assert a == a and a != b and hash(a) == hash(a) and len({a, b}) == 2
        a.close()
        assert a == a and a != b
        b.close()


@pytest.mark.parametrize("kind", ["memory", "disk"])
def test_hit_miss_and_stats(nvrtc, tmp_path, kind):
    cache = cucore.InMemoryProgramCache() if kind == "memory" else cucore.FileStreamProgramCache(tmp_path)
    first = program().compile("cubin", cache=cache)
    assert cache.stats.misses == 1 and cache.stats.hits == 0 and cache.stats.entries == 1
    second = program().compile("cubin", cache=cache)
    st = cache.stats
    assert st.hits == 1 and st.misses == 1 and second.code == first.code and st.size_bytes >= len(first.code)
    program(2).compile("cubin", cache=cache)       # another option: a miss
    program().compile("ptx", cache=cache)          # another target: a miss
    assert cache.stats.misses == 3 and len(cache) == 3
    cache.clear()
    assert cache.stats == cucore.ProgramCacheStats(0, 0, 0, 0, 0, 0)


def test_keys(nvrtc):
    k1 = cucore.make_program_cache_key(program(), "cubin")
    assert isinstance(k1, bytes) and len(k1) == 32
    assert cucore.make_program_cache_key(program(), "cubin") == k1
    assert cucore.make_program_cache_key(program(2), "cubin") != k1
    assert cucore.make_program_cache_key(program(), "ptx") != k1
    assert cucore.make_program_cache_key(program(), "cubin", ("k",)) != k1
    assert cucore.make_program_cache_key(program(debug=True), "cubin") != k1


def test_corrupted_entries_are_recompiled(nvrtc, tmp_path):
    cache = cucore.FileStreamProgramCache(tmp_path)
    good = program().compile("cubin", cache=cache).code
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for f in files:  # truncate every entry
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2])
    again = cucore.FileStreamProgramCache(tmp_path)
    assert program().compile("cubin", cache=again).code == good
    assert again.stats.corrupt_entries >= 1 and again.stats.misses == 1
    assert program().compile("cubin", cache=again).code == good and again.stats.hits == 1
    for f in [p for p in tmp_path.rglob("*") if p.is_file()]:  # flip a byte in the middle
        data = bytearray(f.read_bytes())
        data[len(data) // 2] ^= 0xFF
        f.write_bytes(bytes(data))
    third = cucore.FileStreamProgramCache(tmp_path)
    assert program().compile("cubin", cache=third).code == good and third.stats.corrupt_entries >= 1


@pytest.mark.parametrize("kind", ["memory", "disk"])
def test_eviction(nvrtc, tmp_path, kind):
    size = len(program().compile("cubin").code)
    limit = int(size * 2.5)
    cache = cucore.InMemoryProgramCache(max_size_bytes=limit) if kind == "memory" else \
        cucore.FileStreamProgramCache(tmp_path, max_size_bytes=limit)
    for v in range(4):
        program(v).compile("cubin", cache=cache)
    st = cache.stats
    assert st.evictions >= 2 and st.size_bytes <= limit and st.entries <= 2
    program(3).compile("cubin", cache=cache)  # the most recent is still there
    assert cache.stats.hits == 1


def _writer(path, value, out):
    sys.path.insert(0, str(REPO / "bindings" / "python"))
    import cucore as c
    cache = c.FileStreamProgramCache(path)
    codes = set()
    for _ in range(3):
        p = c.Program(SRC, "c++", c.ProgramOptions(arch="sm_90", define_macro=("VALUE", str(value))))
        codes.add(p.compile("cubin", cache=cache).code)
    out.put((value, len(codes)))


def test_concurrent_writers_in_several_processes(nvrtc, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), i % 2, q)) for i in range(4)]
    for p in procs:
        p.start()
    results = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert all(n == 1 for _, n in results)  # every process saw one code per source
    cache = cucore.FileStreamProgramCache(tmp_path)
    for v in (0, 1):
        program(v).compile("cubin", cache=cache)
    assert cache.stats.hits == 2 and cache.stats.corrupt_entries == 0
    assert not [p for p in pathlib.Path(tmp_path).rglob("*.tmp*")]


@pytest.mark.gpu
def test_cache_hit_returns_working_code(gpu, tmp_path):
    from conftest import FAKE_DRIVER
    if FAKE_DRIVER:
        pytest.skip("needs a real GPU to run device code (this is the fake driver)")
    import struct
    dev = gpu
    cc = dev.compute_capability
    opts = cucore.ProgramOptions(arch=f"sm_{cc.major}{cc.minor}", define_macro=("VALUE", "77"))
    cache = cucore.FileStreamProgramCache(tmp_path)
    cucore.Program(SRC, "c++", opts).compile("cubin", cache=cache)
    code = cucore.Program(SRC, "c++", opts).compile("cubin", cache=cache)
    assert cache.stats.hits == 1
    s = dev.create_stream()
    out = dev.allocate(4, stream=s)
    cucore.launch(s, cucore.LaunchConfig(), code.get_kernel("k"), out)
    assert struct.unpack("<i", out.to_bytes(stream=s))[0] == 77


def test_constructors_take_cuda_core_arguments(lib, tmp_path, monkeypatch):
    # As cuda.core.utils': max_size_bytes is keyword-only, and FileStreamProgramCache's path has a default.
    with pytest.raises(TypeError):
        cucore.InMemoryProgramCache(1 << 20)
    with pytest.raises(TypeError):
        cucore.FileStreamProgramCache(tmp_path, 1 << 20)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with cucore.FileStreamProgramCache(max_size_bytes=1 << 20) as cache:
        assert cache.path == str(tmp_path / "xdg" / "cucore" / "program-cache")
        assert pathlib.Path(cache.path).is_dir() and len(cache) == 0
    import cucore.utils as utils
    assert isinstance(cache, utils.ProgramCacheResource) and issubclass(cucore.InMemoryProgramCache,
                                                                       utils.ProgramCacheResource)


def test_cuda_core_style_key(nvrtc):
    from cucore.utils import make_program_cache_key
    opts = cucore.ProgramOptions(arch="sm_90", define_macro=("VALUE", "1"))
    key = make_program_cache_key(code=SRC, code_type="c++", options=opts, target_type="cubin")
    assert key == cucore.make_program_cache_key(program(), "cubin"), "the key Program.compile(cache=) uses"
    assert make_program_cache_key(code=SRC, code_type="c++", options=opts, target_type="cubin",
                                  name_expressions=("k",)) == cucore.make_program_cache_key(program(), "cubin", ("k",))
    salted = make_program_cache_key(code=SRC, code_type="c++", options=opts, target_type="cubin", extra_digest=b"v2")
    assert len(salted) == 32 and salted not in (key, make_program_cache_key(
        code=SRC, code_type="c++", options=opts, target_type="cubin", extra_digest=b"v3"))
    with pytest.raises(ValueError, match="extra_digest"):
        make_program_cache_key(code=SRC, code_type="c++", options=cucore.ProgramOptions(arch="sm_90", include_path="/x"),
                               target_type="cubin")
    with pytest.raises(ValueError, match="side effect"):
        make_program_cache_key(code=SRC, code_type="c++", options=cucore.ProgramOptions(arch="sm_90", create_pch="p"),
                               target_type="cubin", extra_digest=b"x")
    with pytest.raises(TypeError):
        make_program_cache_key(code=SRC, code_type="c++", options=opts, target_type="cubin", name_expressions=(1,))


@pytest.mark.parametrize("kind", ["memory", "disk"])
def test_entries_by_key_as_cuda_cores_mapping(lib, tmp_path, kind):
    cache = cucore.InMemoryProgramCache() if kind == "memory" else cucore.FileStreamProgramCache(tmp_path / "c")
    assert len(cache) == 0 and "k" not in cache and cache.get("k", 5) == 5
    with pytest.raises(KeyError):
        cache["k"]
    cache["k"] = b"raw code"
    cache[b"k2"] = cucore.ObjectCode.from_cubin(b"object code", name="n")
    assert cache["k"] == b"raw code" and cache[b"k2"] == b"object code" and len(cache) == 2
    assert "k" in cache and b"k" in cache, "a str key is its UTF-8 bytes"
    cache.update({"a": b"1", "b": bytearray(b"2")})
    cache.update([("c", b"3")])
    assert len(cache) == 5 and cache.get("b") == b"2"
    del cache["a"]
    assert "a" not in cache and len(cache) == 4
    with pytest.raises(KeyError):
        del cache["a"]
    for bad_key in (1, None):
        with pytest.raises(TypeError, match="keys"):
            cache[bad_key] = b"x"
    with pytest.raises(TypeError, match="values"):
        cache["x"] = "text"
    cache.clear()
    assert len(cache) == 0
    cache.close()
