//! The user-defined memory resource of `include/cucore/memory.h`
//! (`cucore_memory_resource_callbacks_t`, `cucore_user_memory_resource_create`). Layouts are
//! checked by the tests below against gcc's offsets on the 64-bit targets the library supports.

use std::os::raw::c_void;
use std::ptr;

use crate::{cucore_memory_resource_t, cucore_status_t, cucore_stream_t};

/// `allocate` of `cucore_memory_resource_callbacks_t`: writes the address of `size` new bytes to
/// `*address` and returns `CUCORE_SUCCESS`, or returns an error status. `stream` is borrowed and
/// may be NULL.
pub type cucore_memory_resource_allocate_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        size: u64,
        stream: *mut cucore_stream_t,
        address: *mut u64,
    ) -> cucore_status_t,
>;

/// `deallocate` of `cucore_memory_resource_callbacks_t`: frees what `allocate` gave and returns
/// `CUCORE_SUCCESS`, or an error status, which the library reports as a release error (counted,
/// passed to the release error handler); it never retries.
pub type cucore_memory_resource_deallocate_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        address: u64,
        size: u64,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t,
>;

/// `destroy` of `cucore_memory_resource_callbacks_t`: called once when the resource goes.
pub type cucore_memory_resource_destroy_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// `cucore_memory_resource_callbacks_t`: a user-defined memory resource. (No `PartialEq`:
/// function pointers do not compare meaningfully.)
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cucore_memory_resource_callbacks_t {
    pub struct_size: u32,
    /// Must be 0.
    pub reserved0: u32,
    /// Required.
    pub allocate: cucore_memory_resource_allocate_fn,
    /// Required.
    pub deallocate: cucore_memory_resource_deallocate_fn,
    /// May be None.
    pub destroy: cucore_memory_resource_destroy_fn,
    pub user_data: *mut c_void,
    /// The device ordinal of the memory; -1: host memory.
    pub device_id: i32,
    /// 0/1.
    pub device_accessible: u32,
    /// 0/1.
    pub host_accessible: u32,
    /// 0/1.
    pub managed: u32,
}

impl cucore_memory_resource_callbacks_t {
    /// `struct_size` set, no callbacks, host memory (`device_id` -1) reachable from nowhere: the
    /// caller fills in the rest (the header has no INIT macro for this struct).
    pub const INIT: cucore_memory_resource_callbacks_t = cucore_memory_resource_callbacks_t {
        struct_size: std::mem::size_of::<cucore_memory_resource_callbacks_t>() as u32,
        reserved0: 0,
        allocate: None,
        deallocate: None,
        destroy: None,
        user_data: ptr::null_mut(),
        device_id: -1,
        device_accessible: 0,
        host_accessible: 0,
        managed: 0,
    };
}

impl Default for cucore_memory_resource_callbacks_t {
    fn default() -> Self {
        Self::INIT
    }
}

extern "C" {
    pub fn cucore_user_memory_resource_create(
        callbacks: *const cucore_memory_resource_callbacks_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};


    #[test]
    fn layout_callbacks() {
        type T = cucore_memory_resource_callbacks_t;
        assert_eq!((size_of::<T>(), align_of::<T>()), (56, 8));
        assert_eq!(offset!(T, struct_size), 0);
        assert_eq!(offset!(T, reserved0), 4);
        assert_eq!(offset!(T, allocate), 8);
        assert_eq!(offset!(T, deallocate), 16);
        assert_eq!(offset!(T, destroy), 24);
        assert_eq!(offset!(T, user_data), 32);
        assert_eq!(offset!(T, device_id), 40);
        assert_eq!(offset!(T, device_accessible), 44);
        assert_eq!(offset!(T, host_accessible), 48);
        assert_eq!(offset!(T, managed), 52);
        assert_eq!(T::INIT.struct_size, 56);
        assert_eq!(size_of::<cucore_memory_resource_allocate_fn>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<cucore_memory_resource_deallocate_fn>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<cucore_memory_resource_destroy_fn>(), size_of::<*mut c_void>());
    }
}
