//! What `include/cucore/program_cache.h` holds: compiled code kept in memory or on disk
//! (cuda.core's `InMemoryProgramCache` and `FileStreamProgramCache`).
//!
//! Pass a cache to [`Program::compile`](crate::Program::compile): a hit returns the stored
//! code without running a compiler, a miss compiles and stores. The key is a SHA-256 over the
//! code, its type, every option, the target, the name expressions, the compiler's version and
//! the architecture ([`ProgramCache::key`]). On disk each entry is one file, written atomically;
//! several processes may share a directory, and a damaged entry counts as a miss and is
//! replaced. Both kinds evict the least recently used entries beyond their size limit.

use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{check, path_c_string, CStringArray, Result};
use crate::object_code::ObjectCode;
use crate::program::{CodeType, Program};

/// What a cache has seen since it was created or cleared (`cucore_program_cache_stats_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProgramCacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Entries found damaged and dropped (disk only).
    pub corrupt_entries: u64,
    pub evictions: u64,
    /// Entries held now.
    pub entries: u64,
    /// Bytes held now.
    pub size_bytes: u64,
}

/// A program cache (`cucore_program_cache_t`), in memory or in a directory. Thread safe; an
/// on-disk cache is also safe across processes.
pub struct ProgramCache {
    raw: NonNull<sys::cucore_program_cache_t>,
}

handle_type!(ProgramCache, sys::cucore_program_cache_t);
identity_eq!(ProgramCache);

impl ProgramCache {
    /// A cache in memory holding at most `max_size_bytes` of code (0: unlimited)
    /// (`cucore_program_cache_create_in_memory`).
    pub fn in_memory(max_size_bytes: u64) -> Result<ProgramCache> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_program_cache_create_in_memory(max_size_bytes, &mut raw) })?;
        ProgramCache::from_out(raw)
    }

    /// A cache in `directory` (created with its parents if missing) holding at most
    /// `max_size_bytes` (0: unlimited) (`cucore_program_cache_create_on_disk`). Entries stay on
    /// disk when the cache is dropped.
    pub fn on_disk(directory: impl AsRef<Path>, max_size_bytes: u64) -> Result<ProgramCache> {
        let dir = path_c_string(directory.as_ref(), "the cache directory")?;
        let mut raw = ptr::null_mut();
        // SAFETY: a NUL-terminated path and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_program_cache_create_on_disk(dir.as_ptr(), max_size_bytes, &mut raw) })?;
        ProgramCache::from_out(raw)
    }

    /// Removes every entry (on disk: every entry file of the directory) and resets the counters.
    pub fn clear(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_program_cache_clear(self.as_raw()) })
    }

    /// The cache's counters.
    pub fn stats(&self) -> Result<ProgramCacheStats> {
        let mut s = sys::cucore_program_cache_stats_t::INIT;
        // SAFETY: a live handle and a valid, sized out-struct.
        check(unsafe { sys::cucore_program_cache_stats(self.as_raw(), &mut s) })?;
        Ok(ProgramCacheStats {
            hits: s.hits,
            misses: s.misses,
            corrupt_entries: s.corrupt_entries,
            evictions: s.evictions,
            entries: s.entries,
            size_bytes: s.size_bytes,
        })
    }

    /// The 32-byte key a compile of `program` to `target` with `name_expressions` would use
    /// (`cucore_program_cache_key`; cuda.core's `make_program_cache_key`).
    /// `Status::NotSupported` when the program's compiler is missing (its version is part of
    /// the key).
    pub fn key(program: &Program, target: CodeType, name_expressions: &[&str]) -> Result<[u8; 32]> {
        let names = CStringArray::new(name_expressions, "a name expression")?;
        let mut key = [0u8; 32];
        // SAFETY: a live handle, valid C strings for the call, 32 writable bytes.
        check(unsafe {
            sys::cucore_program_cache_key(program.as_raw(), target.raw(), names.as_ptr(), names.len(), key.as_mut_ptr())
        })?;
        Ok(key)
    }

    /// The entry stored under `key` as a new [`ObjectCode`] (with an empty name), or `None`
    /// (`cucore_program_cache_get`; cuda.core's `cache[key]`). Counted as a hit or a miss.
    pub fn get(&self, key: &[u8; 32]) -> Result<Option<ObjectCode>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, 32 readable bytes and a valid out-pointer; we own what it gives.
        check(unsafe { sys::cucore_program_cache_get(self.as_raw(), key.as_ptr(), &mut raw) })?;
        if raw.is_null() {
            return Ok(None);
        }
        ObjectCode::from_out(raw).map(Some)
    }

    /// Stores a copy of `code` (its bytes, code type and name expressions) under `key`,
    /// replacing the entry of that key (`cucore_program_cache_put`; cuda.core's `cache[key] = code`).
    pub fn put(&self, key: &[u8; 32], code: &ObjectCode) -> Result<()> {
        // SAFETY: live handles and 32 readable bytes.
        check(unsafe { sys::cucore_program_cache_put(self.as_raw(), key.as_ptr(), code.as_raw()) })
    }

    /// Removes the entry of `key`; whether there was one (`cucore_program_cache_remove`; cuda.core's
    /// `del cache[key]`).
    pub fn remove(&self, key: &[u8; 32]) -> Result<bool> {
        let mut removed = 0;
        // SAFETY: a live handle, 32 readable bytes and a valid out-pointer.
        check(unsafe { sys::cucore_program_cache_remove(self.as_raw(), key.as_ptr(), &mut removed) })?;
        Ok(removed != 0)
    }
}

impl fmt::Debug for ProgramCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stats() {
            Ok(s) => write!(f, "ProgramCache({} entries, {} bytes)", s.entries, s.size_bytes),
            Err(_) => write!(f, "ProgramCache(<library handle {:p}>)", self.as_raw()),
        }
    }
}
