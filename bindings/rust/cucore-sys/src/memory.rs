//! The types of `include/cucore/memory.h` that came with pinned, managed, virtual and user
//! memory resources, managed-memory advice and strided copies (the functions are declared in
//! `lib.rs`, where the binding check reads them). Layouts are checked by the tests below against
//! gcc's offsets on the 64-bit targets the library supports.

use std::os::raw::{c_int, c_void};
use std::ptr;

use crate::{cucore_buffer_t, cucore_status_t, cucore_stream_t};

// ---- Locations ----------------------------------------------------------------------------------

/// `cucore_location_type_t` (a 32-bit C enum): where memory lives or is wanted.
pub type cucore_location_type_t = c_int;
/// No location (e.g. no preferred location).
pub const CUCORE_LOCATION_NONE: cucore_location_type_t = 0;
/// `id`: a device ordinal.
pub const CUCORE_LOCATION_DEVICE: cucore_location_type_t = 1;
/// `id` ignored.
pub const CUCORE_LOCATION_HOST: cucore_location_type_t = 2;
/// `id`: a host NUMA node.
pub const CUCORE_LOCATION_HOST_NUMA: cucore_location_type_t = 3;
/// The calling thread's NUMA node; `id` ignored.
pub const CUCORE_LOCATION_HOST_NUMA_CURRENT: cucore_location_type_t = 4;
pub const CUCORE_LOCATION_TYPE_FORCE_INT32: cucore_location_type_t = 0x7fff_ffff;

/// `cucore_location_t` (the driver's `CUmemLocation`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct cucore_location_t {
    /// `type` in C.
    pub type_: cucore_location_type_t,
    pub id: i32,
}

// ---- Access -------------------------------------------------------------------------------------

/// `cucore_access_t` (a 32-bit C enum): access a device (or the host) is granted to memory.
pub type cucore_access_t = c_int;
pub const CUCORE_ACCESS_NONE: cucore_access_t = 0;
pub const CUCORE_ACCESS_READ: cucore_access_t = 1;
pub const CUCORE_ACCESS_READ_WRITE: cucore_access_t = 3;
pub const CUCORE_ACCESS_FORCE_INT32: cucore_access_t = 0x7fff_ffff;

// ---- Options of the new resources ---------------------------------------------------------------

/// `cucore_pinned_memory_resource_options_t`: options of a pinned (page-locked host) pool. All
/// zeros but `struct_size` is the default (`INIT`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_pinned_memory_resource_options_t {
    pub struct_size: u32,
    /// 1: shareable with other processes.
    pub ipc_enabled: u32,
    /// 0: no limit.
    pub max_size: u64,
    /// 0: the driver's default.
    pub release_threshold: u64,
    /// The host NUMA node the memory comes from (>= 0); read only when `use_numa_id` is 1.
    pub numa_id: i32,
    /// 0 (default): any host memory; 1: the node `numa_id`.
    pub use_numa_id: u32,
}

impl cucore_pinned_memory_resource_options_t {
    /// `CUCORE_PINNED_MEMORY_RESOURCE_OPTIONS_INIT`.
    pub const INIT: cucore_pinned_memory_resource_options_t = cucore_pinned_memory_resource_options_t {
        struct_size: std::mem::size_of::<cucore_pinned_memory_resource_options_t>() as u32,
        ipc_enabled: 0,
        max_size: 0,
        release_threshold: 0,
        numa_id: 0,
        use_numa_id: 0,
    };
}

impl Default for cucore_pinned_memory_resource_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

/// `cucore_managed_memory_resource_options_t`: options of a managed memory resource.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_managed_memory_resource_options_t {
    pub struct_size: u32,
    /// 0 (the default): `cuMemAllocManaged` / `cuMemFree` (synchronous; every advice works).
    /// 1: a managed memory pool (stream-ordered, CUDA 13 drivers; drivers may refuse advice on
    /// its memory).
    pub use_pool: u32,
    /// NONE (the default), DEVICE (id: ordinal), HOST or HOST_NUMA: the pool's, or advised on
    /// each allocation.
    pub preferred_location: cucore_location_t,
    /// Pools only; 0: no limit.
    pub max_size: u64,
    /// Pools only; 0: the driver's default.
    pub release_threshold: u64,
}

impl cucore_managed_memory_resource_options_t {
    /// `CUCORE_MANAGED_MEMORY_RESOURCE_OPTIONS_INIT`.
    pub const INIT: cucore_managed_memory_resource_options_t = cucore_managed_memory_resource_options_t {
        struct_size: std::mem::size_of::<cucore_managed_memory_resource_options_t>() as u32,
        use_pool: 0,
        preferred_location: cucore_location_t { type_: CUCORE_LOCATION_NONE, id: 0 },
        max_size: 0,
        release_threshold: 0,
    };
}

impl Default for cucore_managed_memory_resource_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

/// `cucore_virtual_memory_resource_options_t`: options of a virtual memory resource. All zeros
/// but `struct_size` is the default (`INIT`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_virtual_memory_resource_options_t {
    pub struct_size: u32,
    /// Must be 0.
    pub reserved0: u32,
    /// NONE (0, the default) or DEVICE: the resource's device (id ignored); HOST_NUMA (id: node);
    /// HOST.
    pub location_type: cucore_location_type_t,
    pub location_id: i32,
    /// 0 (default): the driver's recommended granularity; 1: its minimum.
    pub minimum_granularity: u32,
    /// 1: physical memory exportable as a POSIX file descriptor.
    pub posix_fd_shareable: u32,
    /// Address space reserved per buffer (a buffer grows in place up to it); 0: its size.
    pub reserve_size: u64,
    /// Access granted to the resource's device: NONE (0, the default) or READ_WRITE: read-write;
    /// READ: read-only.
    pub self_access: cucore_access_t,
    /// Must be 0.
    pub reserved1: u32,
}

impl cucore_virtual_memory_resource_options_t {
    /// `CUCORE_VIRTUAL_MEMORY_RESOURCE_OPTIONS_INIT`.
    pub const INIT: cucore_virtual_memory_resource_options_t = cucore_virtual_memory_resource_options_t {
        struct_size: std::mem::size_of::<cucore_virtual_memory_resource_options_t>() as u32,
        reserved0: 0,
        location_type: CUCORE_LOCATION_NONE,
        location_id: 0,
        minimum_granularity: 0,
        posix_fd_shareable: 0,
        reserve_size: 0,
        self_access: CUCORE_ACCESS_NONE,
        reserved1: 0,
    };
}

impl Default for cucore_virtual_memory_resource_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

// ---- User-defined resources ---------------------------------------------------------------------

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

// ---- Managed-memory advice ----------------------------------------------------------------------

/// `cucore_memory_advice_t` (a 32-bit C enum).
pub type cucore_memory_advice_t = c_int;
pub const CUCORE_ADVICE_UNSET: cucore_memory_advice_t = 0;
pub const CUCORE_ADVICE_SET_READ_MOSTLY: cucore_memory_advice_t = 1;
pub const CUCORE_ADVICE_UNSET_READ_MOSTLY: cucore_memory_advice_t = 2;
pub const CUCORE_ADVICE_SET_PREFERRED_LOCATION: cucore_memory_advice_t = 3;
pub const CUCORE_ADVICE_UNSET_PREFERRED_LOCATION: cucore_memory_advice_t = 4;
pub const CUCORE_ADVICE_SET_ACCESSED_BY: cucore_memory_advice_t = 5;
pub const CUCORE_ADVICE_UNSET_ACCESSED_BY: cucore_memory_advice_t = 6;
pub const CUCORE_ADVICE_FORCE_INT32: cucore_memory_advice_t = 0x7fff_ffff;

// ---- Strided copies -----------------------------------------------------------------------------

/// `cucore_memory_region_t`: one side of a strided copy, a buffer (`host` NULL) or host memory
/// (`buffer` NULL).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_memory_region_t {
    pub buffer: *mut cucore_buffer_t,
    pub host: *mut c_void,
    pub offset: u64,
    /// Bytes per row; must be >= x + width.
    pub pitch: u64,
    /// Rows per slice; must be >= y + rows (3D copies).
    pub height: u64,
    /// Bytes.
    pub x: u64,
    /// Rows.
    pub y: u64,
    /// Slices.
    pub z: u64,
}

impl cucore_memory_region_t {
    /// All zero (`{0}` in C): no memory yet.
    pub const ZERO: cucore_memory_region_t = cucore_memory_region_t {
        buffer: ptr::null_mut(),
        host: ptr::null_mut(),
        offset: 0,
        pitch: 0,
        height: 0,
        x: 0,
        y: 0,
        z: 0,
    };
}

impl Default for cucore_memory_region_t {
    fn default() -> Self {
        Self::ZERO
    }
}

/// `cucore_copy_3d_t`: a strided copy of `depth` slices of `rows` rows of `width` bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_copy_3d_t {
    pub struct_size: u32,
    /// Must be 0.
    pub reserved0: u32,
    pub src: cucore_memory_region_t,
    pub dst: cucore_memory_region_t,
    /// Bytes per row copied.
    pub width: u64,
    /// Rows per slice copied (>= 1).
    pub rows: u64,
    /// Slices copied (>= 1; 1 for a 2D copy).
    pub depth: u64,
}

impl cucore_copy_3d_t {
    /// `CUCORE_COPY_3D_INIT`.
    pub const INIT: cucore_copy_3d_t = cucore_copy_3d_t {
        struct_size: std::mem::size_of::<cucore_copy_3d_t>() as u32,
        reserved0: 0,
        src: cucore_memory_region_t::ZERO,
        dst: cucore_memory_region_t::ZERO,
        width: 0,
        rows: 1,
        depth: 1,
    };
}

impl Default for cucore_copy_3d_t {
    fn default() -> Self {
        Self::INIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;
    use std::mem::{align_of, size_of, MaybeUninit};

    /// Byte offset of a field, without `offset_of!` (Rust 1.77) so old compilers build this.
    macro_rules! offset {
        ($ty:ty, $field:ident) => {{
            let u = MaybeUninit::<$ty>::uninit();
            let base = u.as_ptr();
            // SAFETY: only computes an address inside the allocation; nothing is read.
            let field = unsafe { ptr::addr_of!((*base).$field) };
            field as usize - base as usize
        }};
    }

    /// A `T` of zero bytes but its leading `struct_size` (the "zero means default" struct).
    fn zeroed_but_size<T: Copy>() -> T {
        // SAFETY: every options struct is plain integers, for which all-zero bytes are valid; the
        // first field is the u32 struct_size.
        unsafe {
            let mut value = MaybeUninit::<T>::zeroed().assume_init();
            *(&mut value as *mut T as *mut u32) = size_of::<T>() as u32;
            value
        }
    }

    #[test]
    fn layout_location() {
        assert_eq!(size_of::<cucore_location_t>(), 8);
        assert_eq!(align_of::<cucore_location_t>(), 4);
        assert_eq!(offset!(cucore_location_t, type_), 0);
        assert_eq!(offset!(cucore_location_t, id), 4);
        assert_eq!(size_of::<cucore_location_type_t>(), 4);
        assert_eq!(size_of::<cucore_access_t>(), 4);
        assert_eq!(size_of::<cucore_memory_advice_t>(), 4);
    }

    #[test]
    fn layout_pinned_options() {
        type T = cucore_pinned_memory_resource_options_t;
        assert_eq!((size_of::<T>(), align_of::<T>()), (32, 8));
        assert_eq!(offset!(T, struct_size), 0);
        assert_eq!(offset!(T, ipc_enabled), 4);
        assert_eq!(offset!(T, max_size), 8);
        assert_eq!(offset!(T, release_threshold), 16);
        assert_eq!(offset!(T, numa_id), 24);
        assert_eq!(offset!(T, use_numa_id), 28);
        let init = T::INIT;
        assert_eq!(init.struct_size, 32);
        assert_eq!((init.ipc_enabled, init.max_size, init.release_threshold), (0, 0, 0));
        assert_eq!((init.numa_id, init.use_numa_id), (0, 0), "use_numa_id 0: any host memory");
        assert_eq!(T::default(), init);
        assert_eq!(init, zeroed_but_size::<T>(), "zero means default");
    }

    #[test]
    fn layout_managed_options() {
        type T = cucore_managed_memory_resource_options_t;
        assert_eq!((size_of::<T>(), align_of::<T>()), (32, 8));
        assert_eq!(offset!(T, struct_size), 0);
        assert_eq!(offset!(T, use_pool), 4);
        assert_eq!(offset!(T, preferred_location), 8);
        assert_eq!(offset!(T, max_size), 16);
        assert_eq!(offset!(T, release_threshold), 24);
        let init = T::INIT;
        assert_eq!(init.struct_size, 32);
        assert_eq!(init.preferred_location, cucore_location_t { type_: CUCORE_LOCATION_NONE, id: 0 });
        assert_eq!(init.use_pool, 0, "the default: cuMemAllocManaged");
        assert_eq!((init.max_size, init.release_threshold), (0, 0));
        assert_eq!(T::default(), init);
        assert_eq!(init, zeroed_but_size::<T>(), "zero means default");
    }

    #[test]
    fn layout_virtual_options() {
        type T = cucore_virtual_memory_resource_options_t;
        assert_eq!((size_of::<T>(), align_of::<T>()), (40, 8));
        assert_eq!(offset!(T, struct_size), 0);
        assert_eq!(offset!(T, reserved0), 4);
        assert_eq!(offset!(T, location_type), 8);
        assert_eq!(offset!(T, location_id), 12);
        assert_eq!(offset!(T, minimum_granularity), 16);
        assert_eq!(offset!(T, posix_fd_shareable), 20);
        assert_eq!(offset!(T, reserve_size), 24);
        assert_eq!(offset!(T, self_access), 32);
        assert_eq!(offset!(T, reserved1), 36);
        let init = T::INIT;
        assert_eq!(init.struct_size, 40);
        assert_eq!((init.location_type, init.location_id), (CUCORE_LOCATION_NONE, 0), "NONE: the device");
        assert_eq!((init.minimum_granularity, init.posix_fd_shareable, init.reserve_size), (0, 0, 0));
        assert_eq!((init.self_access, init.reserved0, init.reserved1), (CUCORE_ACCESS_NONE, 0, 0), "NONE: READ_WRITE");
        assert_eq!(init, zeroed_but_size::<T>(), "zero means default");
    }

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

    #[test]
    fn layout_copy_3d() {
        type R = cucore_memory_region_t;
        assert_eq!((size_of::<R>(), align_of::<R>()), (64, 8));
        assert_eq!(offset!(R, buffer), 0);
        assert_eq!(offset!(R, host), 8);
        assert_eq!(offset!(R, offset), 16);
        assert_eq!(offset!(R, pitch), 24);
        assert_eq!(offset!(R, height), 32);
        assert_eq!(offset!(R, x), 40);
        assert_eq!(offset!(R, y), 48);
        assert_eq!(offset!(R, z), 56);
        type C = cucore_copy_3d_t;
        assert_eq!((size_of::<C>(), align_of::<C>()), (160, 8));
        assert_eq!(offset!(C, struct_size), 0);
        assert_eq!(offset!(C, reserved0), 4);
        assert_eq!(offset!(C, src), 8);
        assert_eq!(offset!(C, dst), 72);
        assert_eq!(offset!(C, width), 136);
        assert_eq!(offset!(C, rows), 144);
        assert_eq!(offset!(C, depth), 152);
        let init = C::INIT;
        assert_eq!(init.struct_size, 160);
        assert_eq!((init.width, init.rows, init.depth), (0, 1, 1));
        assert_eq!((init.src, init.dst), (R::ZERO, R::ZERO));
    }

    #[test]
    fn memory_enum_values_match_header() {
        assert_eq!([CUCORE_LOCATION_NONE, CUCORE_LOCATION_DEVICE, CUCORE_LOCATION_HOST], [0, 1, 2]);
        assert_eq!([CUCORE_LOCATION_HOST_NUMA, CUCORE_LOCATION_HOST_NUMA_CURRENT], [3, 4]);
        assert_eq!([CUCORE_ACCESS_NONE, CUCORE_ACCESS_READ, CUCORE_ACCESS_READ_WRITE], [0, 1, 3]);
        assert_eq!(
            [
                CUCORE_ADVICE_UNSET,
                CUCORE_ADVICE_SET_READ_MOSTLY,
                CUCORE_ADVICE_UNSET_READ_MOSTLY,
                CUCORE_ADVICE_SET_PREFERRED_LOCATION,
                CUCORE_ADVICE_UNSET_PREFERRED_LOCATION,
                CUCORE_ADVICE_SET_ACCESSED_BY,
                CUCORE_ADVICE_UNSET_ACCESSED_BY,
            ],
            [0, 1, 2, 3, 4, 5, 6]
        );
        assert_eq!(
            [
                CUCORE_MEMORY_RESOURCE_PINNED,
                CUCORE_MEMORY_RESOURCE_MANAGED,
                CUCORE_MEMORY_RESOURCE_VIRTUAL,
                CUCORE_MEMORY_RESOURCE_USER,
                CUCORE_MEMORY_RESOURCE_IMPORTED,
            ],
            [3, 4, 5, 6, 7]
        );
    }

    #[test]
    fn new_functions_reject_bad_handles_and_arguments() {
        let mut junk = [0xdead_beef_dead_beef_u64; 8];
        let garbage = junk.as_mut_ptr() as *mut c_void;
        unsafe {
            // A user resource without callbacks, or with a device_id below -1.
            let mut mr: *mut cucore_memory_resource_t = 1 as *mut _;
            let callbacks = cucore_memory_resource_callbacks_t::INIT;
            assert_eq!(cucore_user_memory_resource_create(&callbacks, &mut mr), CUCORE_ERROR_INVALID_ARGUMENT);
            assert!(mr.is_null(), "out-pointers are NULL on failure");
            assert_eq!(cucore_user_memory_resource_create(ptr::null(), &mut mr), CUCORE_ERROR_INVALID_ARGUMENT);
            let mut o = cucore_pinned_memory_resource_options_t::INIT;
            o.use_numa_id = 1;
            assert_eq!(cucore_pinned_memory_resource_create(ptr::null_mut(), &o, &mut mr), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(
                cucore_managed_memory_resource_create(garbage as *mut _, ptr::null(), &mut mr),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert_eq!(
                cucore_virtual_memory_resource_create(garbage as *mut _, ptr::null(), &mut mr),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert!(mr.is_null());
            let mut access: cucore_access_t = 7;
            assert_eq!(
                cucore_memory_resource_peer_access(garbage as *mut _, garbage as *mut _, &mut access),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert_eq!(access, CUCORE_ACCESS_NONE);
            assert_eq!(
                cucore_memory_resource_set_peer_access(garbage as *mut _, garbage as *mut _, CUCORE_ACCESS_NONE),
                CUCORE_ERROR_INVALID_HANDLE
            );

            let b = garbage as *mut cucore_buffer_t;
            let (mut d, mut h, mut m): (c_int, c_int, c_int) = (7, 7, 7);
            assert_eq!(cucore_buffer_accessibility(b, &mut d, &mut h, &mut m), CUCORE_ERROR_INVALID_HANDLE);
            let mut s: *mut cucore_stream_t = 1 as *mut _;
            assert_eq!(cucore_buffer_deallocation_stream(b, &mut s), CUCORE_ERROR_INVALID_HANDLE);
            assert!(s.is_null());
            assert_eq!(cucore_buffer_grow(b, 4096), CUCORE_ERROR_INVALID_HANDLE);
            let here = cucore_location_t { type_: CUCORE_LOCATION_HOST, id: 0 };
            assert_eq!(cucore_buffer_advise(b, CUCORE_ADVICE_SET_READ_MOSTLY, here), CUCORE_ERROR_INVALID_HANDLE);
            let mut loc = cucore_location_t { type_: 9, id: 9 };
            assert_eq!(cucore_buffer_advice(b, &mut m, &mut loc), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_is_accessed_by(b, here, &mut m), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_last_prefetch_location(b, &mut loc), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_prefetch(b, here, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_discard(b, &here, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_copy_3d(ptr::null(), ptr::null_mut()), CUCORE_ERROR_INVALID_ARGUMENT);
            let mut copy = cucore_copy_3d_t::INIT;
            copy.src.buffer = b;
            copy.dst.buffer = b;
            copy.width = 1;
            copy.src.pitch = 1;
            copy.dst.pitch = 1;
            assert_eq!(cucore_copy_3d(&copy, ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
        }
    }
}
