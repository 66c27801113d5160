"""Program caches: compiled code kept in memory or on disk (include/cucore/program_cache.h).

    cache = cucore.FileStreamProgramCache("~/.cache/myapp")      # or InMemoryProgramCache()
    code = cucore.Program(src, "c++", opts).compile("cubin", cache=cache)   # a hit skips NVRTC

Named as cuda.core 1.2's caches (cuda.core.utils), but passed to Program.compile(cache=...) and kept
by libcucore, so C, C++, Rust and Python share one format and one directory. The key covers the code,
its type, every option, the target, the name expressions, the compiler's version and the architecture.
"""
from __future__ import annotations

import ctypes
import os
from typing import NamedTuple, Optional, Sequence, Union

from . import _lib
from ._handle import HandleObject
from .common import raise_error
from .program import Program, _TARGETS, _name_array, code_type_id

(_cucore_program_cache_create_in_memory, _cucore_program_cache_create_on_disk, _cucore_program_cache_clear,
 _cucore_program_cache_stats, _cucore_program_cache_key) = _lib.bind(
    globals(), "cucore_program_cache_create_in_memory", "cucore_program_cache_create_on_disk",
    "cucore_program_cache_clear", "cucore_program_cache_stats", "cucore_program_cache_key")
(_cucore_program_cache_retain, _cucore_program_cache_release) = _lib.bind(
    globals(), "cucore_program_cache_retain", "cucore_program_cache_release")
(_fast_program_cache_release,) = _lib.bind_unchecked(globals(), "cucore_program_cache_release")

_byref = ctypes.byref


class ProgramCacheStats(NamedTuple):
    """A program cache's counters: hits, misses, corrupt entries dropped, evictions, entries and bytes."""
    hits: int
    misses: int
    corrupt_entries: int
    evictions: int
    entries: int
    size_bytes: int


def _max_size(max_size_bytes):
    if max_size_bytes is None:
        return 0
    if isinstance(max_size_bytes, bool) or not isinstance(max_size_bytes, int):
        raise TypeError(f"max_size_bytes must be an int or None, not {type(max_size_bytes).__name__}")
    if not 0 < max_size_bytes < 2**64:
        raise ValueError(f"max_size_bytes must be positive (None: unlimited), not {max_size_bytes}")
    return max_size_bytes


class ProgramCache(HandleObject):
    """What both caches share: `stats`, `clear()`, close()."""

    __slots__ = ()
    _release = staticmethod(_fast_program_cache_release)

    def __new__(cls, *args, **kwargs):
        if cls is ProgramCache:
            raise TypeError("use InMemoryProgramCache or FileStreamProgramCache")
        return super().__new__(cls)

    @property
    def stats(self) -> ProgramCacheStats:
        """ProgramCacheStats(hits, misses, corrupt_entries, evictions, entries, size_bytes) since creation or
        clear()."""
        S = _lib.STRUCTS["cucore_program_cache_stats_t"]
        s = S()
        s.struct_size = ctypes.sizeof(S)
        st = _cucore_program_cache_stats(self._h, _byref(s))
        if st:
            raise_error(st, self)
        return ProgramCacheStats(s.hits, s.misses, s.corrupt_entries, s.evictions, s.entries, s.size_bytes)

    def clear(self) -> None:
        """Remove every entry (on disk: every entry file of the directory) and reset the counters."""
        st = _cucore_program_cache_clear(self._h)
        if st:
            raise_error(st, self)

    def __len__(self) -> int:
        return self.stats.entries


class InMemoryProgramCache(ProgramCache):
    """A thread-safe least-recently-used cache in this process, holding at most `max_size_bytes` of code
    (None: unlimited)."""

    __slots__ = ()

    def __init__(self, *, max_size_bytes: Optional[int] = None) -> None:
        self._h = None
        self._raw = None
        h = ctypes.c_void_p()
        st = _cucore_program_cache_create_in_memory(_max_size(max_size_bytes), _byref(h))
        if st:
            raise_error(st)
        self._h = _lib.handle_arg(h.value)

    def __repr__(self):
        return "<InMemoryProgramCache (closed)>" if self._h is None else f"<InMemoryProgramCache {self.stats}>"


def _default_directory() -> str:
    """$XDG_CACHE_HOME/cucore/program-cache (~/.cache/cucore/program-cache): cuda.core's default place with
    cucore's leaf, so the two libraries' entry files never share a directory."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "cucore", "program-cache")


class FileStreamProgramCache(ProgramCache):
    """A cache in the directory `path` (created if missing; None: $XDG_CACHE_HOME/cucore/program-cache,
    by default ~/.cache/cucore/program-cache), one atomically written file per entry, safe to share between
    threads and processes; the least recently used entries beyond `max_size_bytes` (None: unlimited) are
    evicted. Damaged entries count as misses and are replaced."""

    __slots__ = ("_path",)

    def __init__(self, path: Union[str, os.PathLike, None] = None, *, max_size_bytes: Optional[int] = None) -> None:
        self._h = None
        self._raw = None
        if path is None:
            path = _default_directory()
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path must be a str or PathLike, not {type(path).__name__}")
        self._path = os.path.expanduser(os.fsdecode(path))
        h = ctypes.c_void_p()
        st = _cucore_program_cache_create_on_disk(os.fsencode(self._path), _max_size(max_size_bytes), _byref(h))
        if st:
            raise_error(st)
        self._h = _lib.handle_arg(h.value)

    @property
    def path(self) -> str:
        """The directory the cache keeps its entries in."""
        return self._path

    def __repr__(self):
        return "<FileStreamProgramCache (closed)>" if self._h is None else \
            f"<FileStreamProgramCache {self._path!r}>"


def make_program_cache_key(program: Program, target_type: str = "cubin", name_expressions: Sequence[Union[str, bytes]] = ()) -> bytes:
    """The 32-byte key (bytes) a compile of `program` to `target_type` with these name expressions
    uses in a cache."""
    if not isinstance(program, Program):
        raise TypeError(f"program must be a Program, not {type(program).__name__}")
    target = _TARGETS.get(target_type) or code_type_id(target_type, ("ptx", "cubin", "ltoir"), "target_type")
    names, n = _name_array(name_expressions) if name_expressions else (None, 0)
    key = (ctypes.c_uint8 * 32)()
    st = _cucore_program_cache_key(program._h, target, names, n, key)
    if st:
        raise_error(st, program)
    return bytes(key)
