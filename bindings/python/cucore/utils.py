"""cucore.utils: the utilities of cuda.core.utils, under their names.

- The batched copies (copy_batch with CopyOptions, MemcpySrcAccessOrder, MemcpyOverlapMode; and
  copy_3d_batch, libcucore's) and the batched prefetches and discards of managed buffers (prefetch_batch,
  discard_batch, discard_prefetch_batch), implemented in cucore.memory_operations.
- StridedMemoryView and args_viewable_as_strided_memory (cucore.strided_memory_view): typed, strided
  views of DLPack, CUDA Array Interface and NumPy memory and of Buffers.
- The program caches: InMemoryProgramCache and FileStreamProgramCache are cucore.program_cache's classes
  (kept by libcucore, shared with C, C++ and Rust); ProgramCacheResource is cuda.core's name for what they
  are: an abstract base class they are registered with, so isinstance(cache, ProgramCacheResource) holds.
  make_program_cache_key here takes cuda.core's keyword arguments (code, code_type, options, target_type,
  ...); cucore.make_program_cache_key takes a Program.
"""
from __future__ import annotations

import abc
import collections.abc
import hashlib
from typing import Any, Optional, Sequence, Union

from .memory_operations import (
    CopyOptions, MemcpyOverlapMode, MemcpySrcAccessOrder, copy_3d_batch, copy_batch, discard_batch,
    discard_prefetch_batch, prefetch_batch,
)
from .program import Program, ProgramOptions
from .program_cache import FileStreamProgramCache, InMemoryProgramCache, ProgramCache
from .program_cache import make_program_cache_key as _program_key
from .strided_memory_view import StridedMemoryView, args_viewable_as_strided_memory


class ProgramCacheResource(abc.ABC):
    """cuda.core's abstract base class of compiled-program caches: a mapping of keys (bytes, or str as UTF-8;
    see make_program_cache_key) to compiled code (bytes). A subclass implements __getitem__, __setitem__,
    __delitem__, __len__ and clear; get, update, close and the `with` block come with it.

    cucore's caches (cucore.ProgramCache: InMemoryProgramCache, FileStreamProgramCache) are registered with
    it (isinstance() and issubclass() answer True): they are kept by libcucore and filled through
    Program.compile(cache=...), and offer __len__, clear, close and `with`; reading and writing entries by
    key from Python is not in libcucore's C ABI yet."""

    @abc.abstractmethod
    def __getitem__(self, key: Union[bytes, str]) -> bytes:
        """The code stored under `key`; KeyError if there is none."""

    @abc.abstractmethod
    def __setitem__(self, key: Union[bytes, str], value: Any) -> None:
        """Store `value` (bytes-like, or an ObjectCode's code) under `key`."""

    @abc.abstractmethod
    def __delitem__(self, key: Union[bytes, str]) -> None:
        """Remove the entry of `key`; KeyError if there is none."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of entries."""

    @abc.abstractmethod
    def clear(self) -> None:
        """Remove every entry."""

    def get(self, key: Union[bytes, str], default: Optional[bytes] = None) -> Optional[bytes]:
        """self[key], or `default` where there is no entry."""
        try:
            return self[key]
        except KeyError:
            return default

    def update(self, items: Any, /) -> None:
        """self[key] = value for each pair of a mapping or an iterable of (key, value) pairs (not atomic)."""
        if isinstance(items, collections.abc.Mapping):
            items = items.items()
        for key, value in items:
            self[key] = value

    def close(self) -> None:  # noqa: B027  (a no-op a subclass holding resources overrides)
        """Release what the cache holds (nothing here)."""

    def __enter__(self) -> ProgramCacheResource:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.close()


ProgramCacheResource.register(ProgramCache)

# Options whose effect on the compile depends on files the key cannot read (the caller fingerprints them
# into extra_digest), and options with a side effect a cache hit would skip (as cuda.core refuses them).
_EXTERNAL_CONTENT_OPTIONS = ("include_path", "pre_include", "pch", "use_pch", "pch_dir")
_SIDE_EFFECT_OPTIONS = ("create_pch",)


def make_program_cache_key(*, code: Union[str, bytes], code_type: str, options: Optional[ProgramOptions],
                           target_type: str, name_expressions: Sequence[Union[str, bytes]] = (),
                           extra_digest: Optional[bytes] = None) -> bytes:
    """The cache key (bytes) of compiling `code` of `code_type` ("c++", "ptx", "nvvm") with `options` (a
    ProgramOptions) to `target_type` ("ptx", "cubin", "ltoir") with `name_expressions`, as cuda.core's:
    without `extra_digest` it is the key Program.compile(cache=...) uses (libcucore's SHA-256 over the code,
    its type, every option, the target, the names, the compiler's version and the architecture); with it,
    that key and the digest hashed together. `extra_digest` is required (ValueError) when the options read
    files the key cannot see (include_path, pre_include, pch, use_pch, pch_dir); options with a side effect
    a hit would skip (create_pch) are refused (ValueError)."""
    for name in _SIDE_EFFECT_OPTIONS:
        if getattr(options, name, None):
            raise ValueError(f"ProgramOptions.{name} has a side effect a cache hit would skip: it cannot be cached")
    if extra_digest is None:
        for name in _EXTERNAL_CONTENT_OPTIONS:
            if getattr(options, name, None):
                raise ValueError(f"ProgramOptions.{name} makes the compile depend on files the key cannot read: "
                                 f"pass extra_digest (a fingerprint of their content)")
    elif not isinstance(extra_digest, (bytes, bytearray, memoryview)):
        raise TypeError(f"extra_digest must be bytes, not {type(extra_digest).__name__}")
    names = tuple(name_expressions)
    for n in names:
        if not isinstance(n, (str, bytes)):
            raise TypeError(f"name_expressions must be str or bytes, not {type(n).__name__}")
    program = Program(code, code_type, options)
    try:
        key = _program_key(program, target_type, names)
    finally:
        program.close()
    if extra_digest is None:
        return key
    h = hashlib.sha256(b"cucore program cache key + extra digest\0")
    h.update(key)
    h.update(bytes(extra_digest))
    return h.digest()


__all__ = ["CopyOptions", "FileStreamProgramCache", "InMemoryProgramCache", "MemcpyOverlapMode", "MemcpySrcAccessOrder",
           "ProgramCacheResource", "StridedMemoryView", "args_viewable_as_strided_memory", "copy_3d_batch",
           "copy_batch", "discard_batch", "discard_prefetch_batch", "make_program_cache_key", "prefetch_batch"]
