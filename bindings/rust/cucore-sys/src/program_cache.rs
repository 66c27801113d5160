//! The declarations of `include/cucore/program_cache.h`: compiled code kept in memory or on
//! disk. The layout of the stats struct is checked by the tests below against gcc's offsets.

use std::os::raw::c_char;

use crate::{cucore_code_type_t, cucore_program_cache_t, cucore_program_t, cucore_status_t};

/// `cucore_program_cache_stats_t`: what a cache has seen since it was created or cleared.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct cucore_program_cache_stats_t {
    pub struct_size: u32,
    pub hits: u64,
    pub misses: u64,
    pub corrupt_entries: u64,
    pub evictions: u64,
    pub entries: u64,
    pub size_bytes: u64,
}

impl cucore_program_cache_stats_t {
    /// `CUCORE_PROGRAM_CACHE_STATS_INIT`.
    pub const INIT: cucore_program_cache_stats_t = cucore_program_cache_stats_t {
        struct_size: std::mem::size_of::<cucore_program_cache_stats_t>() as u32,
        hits: 0,
        misses: 0,
        corrupt_entries: 0,
        evictions: 0,
        entries: 0,
        size_bytes: 0,
    };
}

impl Default for cucore_program_cache_stats_t {
    fn default() -> Self {
        Self::INIT
    }
}

extern "C" {
    pub fn cucore_program_cache_create_in_memory(
        max_size_bytes: u64,
        cache: *mut *mut cucore_program_cache_t,
    ) -> cucore_status_t;
    pub fn cucore_program_cache_create_on_disk(
        directory: *const c_char,
        max_size_bytes: u64,
        cache: *mut *mut cucore_program_cache_t,
    ) -> cucore_status_t;
    pub fn cucore_program_cache_retain(cache: *mut cucore_program_cache_t) -> cucore_status_t;
    pub fn cucore_program_cache_release(cache: *mut cucore_program_cache_t) -> cucore_status_t;
    pub fn cucore_program_cache_clear(cache: *mut cucore_program_cache_t) -> cucore_status_t;
    pub fn cucore_program_cache_stats(
        cache: *const cucore_program_cache_t,
        stats: *mut cucore_program_cache_stats_t,
    ) -> cucore_status_t;
    pub fn cucore_program_cache_key(
        program: *const cucore_program_t,
        target: cucore_code_type_t,
        name_expressions: *const *const c_char,
        name_expression_count: usize,
        key: *mut u8,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of, MaybeUninit};
    use std::ptr;

    #[test]
    fn layout_program_cache_stats() {
        assert_eq!(size_of::<cucore_program_cache_stats_t>(), 56);
        assert_eq!(align_of::<cucore_program_cache_stats_t>(), 8);
        let u = MaybeUninit::<cucore_program_cache_stats_t>::uninit();
        let base = u.as_ptr();
        // SAFETY: addresses inside the allocation only; nothing is read.
        let (hits, size) =
            unsafe { (ptr::addr_of!((*base).hits) as usize, ptr::addr_of!((*base).size_bytes) as usize) };
        assert_eq!(hits - base as usize, 8);
        assert_eq!(size - base as usize, 48);
        assert_eq!(cucore_program_cache_stats_t::INIT.struct_size, 56);
    }
}
