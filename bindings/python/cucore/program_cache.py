"""Program caches: compiled code kept in memory or on disk (include/cucore/program_cache.h).

    cache = cucore.FileStreamProgramCache("~/.cache/myapp")      # or InMemoryProgramCache()
    code = cucore.Program(src, "c++", opts).compile("cubin", cache=cache)   # a hit skips NVRTC

Named as cuda.core 1.2's caches (cuda.core.utils), but passed to Program.compile(cache=...) and kept
by libcucore, so C, C++, Rust and Python share one format and one directory. The key covers the code,
its type, every option, the target, the name expressions, the compiler's version and the architecture.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
from typing import Any, NamedTuple, Optional, Sequence, Union

from . import _lib
from ._handle import HandleObject
from .common import raise_error
from .object_code import ObjectCode
from .program import Program, _TARGETS, _name_array, code_type_id

_wrap_object_code = ObjectCode._wrap

(_cucore_program_cache_create_in_memory, _cucore_program_cache_create_on_disk, _cucore_program_cache_clear,
 _cucore_program_cache_stats, _cucore_program_cache_key, _cucore_program_cache_get, _cucore_program_cache_put,
 _cucore_program_cache_remove) = _lib.bind(
    globals(), "cucore_program_cache_create_in_memory", "cucore_program_cache_create_on_disk",
    "cucore_program_cache_clear", "cucore_program_cache_stats", "cucore_program_cache_key", "cucore_program_cache_get",
    "cucore_program_cache_put", "cucore_program_cache_remove")
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


def _key_bytes(key) -> Any:
    """A cache key (bytes or str) as the 32 bytes libcucore indexes entries by."""
    if isinstance(key, str):
        key = key.encode()
    elif isinstance(key, (bytearray, memoryview)):
        key = bytes(key)
    elif not isinstance(key, bytes):
        raise TypeError(f"cache keys must be bytes or str, not {type(key).__name__}")
    if len(key) != 32:
        key = hashlib.sha256(key).digest()
    return (ctypes.c_uint8 * 32).from_buffer_copy(key)


def _max_size(max_size_bytes):
    if max_size_bytes is None:
        return 0
    if isinstance(max_size_bytes, bool) or not isinstance(max_size_bytes, int):
        raise TypeError(f"max_size_bytes must be an int or None, not {type(max_size_bytes).__name__}")
    if not 0 < max_size_bytes < 2**64:
        raise ValueError(f"max_size_bytes must be positive (None: unlimited), not {max_size_bytes}")
    return max_size_bytes


class ProgramCache(HandleObject):
    """What both caches share: `stats`, `clear()`, close(), and cuda.core's mapping of keys to compiled code
    (`cache[key]`, `cache[key] = code`, `del cache[key]`, `get`, `update`, `len`, `in`)."""

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

    # ---- entries by key, as cuda.core's ProgramCacheResource (a mapping of keys to compiled code) ------------
    # Keys are bytes or str: a 32-byte key (make_program_cache_key's) is used as it is, any other is hashed to 32
    # bytes (SHA-256), so compiles through the cache and these methods meet on make_program_cache_key's keys.

    def __getitem__(self, key: Union[bytes, str]) -> bytes:
        """The compiled code stored under `key`; KeyError when there is none."""
        code = self._get(key)
        if code is None:
            raise KeyError(key)
        return code.code

    def get(self, key: Union[bytes, str], default: Any = None) -> Any:
        """self[key], or `default` when there is no entry."""
        code = self._get(key)
        return default if code is None else code.code

    def __contains__(self, key: object) -> bool:
        return isinstance(key, (bytes, str)) and self._get(key) is not None

    def __setitem__(self, key: Union[bytes, str], value: Union[bytes, bytearray, memoryview, ObjectCode]) -> None:
        """Store `value` (compiled code as bytes, or an ObjectCode: its bytes, code type and name expressions)
        under `key`, replacing an entry of that key."""
        if isinstance(value, (bytes, bytearray, memoryview)):
            value = ObjectCode.from_cubin(bytes(value))
        elif not isinstance(value, ObjectCode):
            raise TypeError(f"cache values must be bytes-like or ObjectCode, not {type(value).__name__}")
        st = _cucore_program_cache_put(self._h, _key_bytes(key), value._h)
        if st:
            raise_error(st, self, value)

    def __delitem__(self, key: Union[bytes, str]) -> None:
        removed = ctypes.c_int()
        st = _cucore_program_cache_remove(self._h, _key_bytes(key), _byref(removed))
        if st:
            raise_error(st, self)
        if not removed.value:
            raise KeyError(key)

    def update(self, items: Any) -> None:
        """self[key] = value for every pair of a mapping or of an iterable of (key, value) pairs."""
        for key, value in (items.items() if hasattr(items, "items") else items):
            self[key] = value

    def _get(self, key):
        out = ctypes.c_void_p()
        st = _cucore_program_cache_get(self._h, _key_bytes(key), _byref(out))
        if st:
            raise_error(st, self)
        return _wrap_object_code(out.value) if out.value else None


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
