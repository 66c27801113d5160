//! The types and functions of `include/cucore/memory.h`: memory resources (device pools, legacy
//! pinned, pinned, managed, virtual and user resources) and buffers, managed-memory advice and
//! strided copies. Layouts are checked by the tests below against gcc's offsets on the 64-bit
//! targets the library supports.

use std::os::raw::{c_int, c_void};
use std::ptr;

use crate::{
    cucore_buffer_t, cucore_device_t, cucore_memory_resource_t, cucore_release_fn, cucore_status_t, cucore_stream_t,
};

// ---- Memory resources and buffers ---------------------------------------------------------------

/// `cucore_memory_resource_kind_t` (a 32-bit C enum).
pub type cucore_memory_resource_kind_t = c_int;
pub const CUCORE_MEMORY_RESOURCE_UNSET: cucore_memory_resource_kind_t = 0;
/// A stream-ordered device memory pool (`cuMemAllocFromPoolAsync`/`cuMemFreeAsync`).
pub const CUCORE_MEMORY_RESOURCE_DEVICE: cucore_memory_resource_kind_t = 1;
/// Page-locked host memory from `cuMemAllocHost`/`cuMemFreeHost` (synchronous).
pub const CUCORE_MEMORY_RESOURCE_LEGACY_PINNED: cucore_memory_resource_kind_t = 2;
/// A stream-ordered pool of page-locked host memory.
pub const CUCORE_MEMORY_RESOURCE_PINNED: cucore_memory_resource_kind_t = 3;
/// A stream-ordered pool of managed (unified) memory.
pub const CUCORE_MEMORY_RESOURCE_MANAGED: cucore_memory_resource_kind_t = 4;
/// Virtual memory management (synchronous); its buffers can grow.
pub const CUCORE_MEMORY_RESOURCE_VIRTUAL: cucore_memory_resource_kind_t = 5;
/// A resource whose allocate/deallocate are the user's callbacks.
pub const CUCORE_MEMORY_RESOURCE_USER: cucore_memory_resource_kind_t = 6;
/// A pool imported from another process (maps its exported buffers; cannot allocate).
pub const CUCORE_MEMORY_RESOURCE_IMPORTED: cucore_memory_resource_kind_t = 7;
/// The mapping of a graphics resource (owns the one mapped range; cannot allocate).
pub const CUCORE_MEMORY_RESOURCE_GRAPHICS: cucore_memory_resource_kind_t = 8;
pub const CUCORE_MEMORY_RESOURCE_KIND_FORCE_INT32: cucore_memory_resource_kind_t = 0x7fff_ffff;

/// `cucore_pool_attribute_t` (a 32-bit C enum; the driver's CUmemPool_attribute values).
pub type cucore_pool_attribute_t = c_int;
pub const CUCORE_POOL_ATTRIBUTE_UNSET: cucore_pool_attribute_t = 0;
pub const CUCORE_POOL_ATTRIBUTE_REUSE_FOLLOW_EVENT_DEPENDENCIES: cucore_pool_attribute_t = 1;
pub const CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_OPPORTUNISTIC: cucore_pool_attribute_t = 2;
pub const CUCORE_POOL_ATTRIBUTE_REUSE_ALLOW_INTERNAL_DEPENDENCIES: cucore_pool_attribute_t = 3;
pub const CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD: cucore_pool_attribute_t = 4;
pub const CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_CURRENT: cucore_pool_attribute_t = 5;
pub const CUCORE_POOL_ATTRIBUTE_RESERVED_MEM_HIGH: cucore_pool_attribute_t = 6;
pub const CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT: cucore_pool_attribute_t = 7;
pub const CUCORE_POOL_ATTRIBUTE_USED_MEM_HIGH: cucore_pool_attribute_t = 8;

/// `cucore_device_memory_resource_options_t`: options of a new device memory pool.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cucore_device_memory_resource_options_t {
    pub struct_size: u32,
    /// Must be 0.
    pub reserved0: u32,
    /// The most the pool may reserve, in bytes; 0: no limit.
    pub max_size: u64,
    /// Bytes the pool keeps reserved after a synchronization; 0: the driver's default (0).
    pub release_threshold: u64,
    /// 1: the pool can be shared with other processes (see ipc.h); 0: not shared.
    pub ipc_enabled: u32,
    /// Must be 0.
    pub reserved1: u32,
}

impl cucore_device_memory_resource_options_t {
    /// `CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT`.
    pub const INIT: cucore_device_memory_resource_options_t = cucore_device_memory_resource_options_t {
        struct_size: std::mem::size_of::<cucore_device_memory_resource_options_t>() as u32,
        reserved0: 0,
        max_size: 0,
        release_threshold: 0,
        ipc_enabled: 0,
        reserved1: 0,
    };
}

impl Default for cucore_device_memory_resource_options_t {
    fn default() -> Self {
        Self::INIT
    }
}

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

// ---- Functions ----------------------------------------------------------------------------------

extern "C" {
    // memory.h: memory resources
    pub fn cucore_device_memory_resource_get_default(
        device: *mut cucore_device_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_device_memory_resource_create(
        device: *mut cucore_device_t,
        options: *const cucore_device_memory_resource_options_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_legacy_pinned_memory_resource_create(
        device: *mut cucore_device_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_retain(resource: *mut cucore_memory_resource_t) -> cucore_status_t;
    pub fn cucore_memory_resource_release(resource: *mut cucore_memory_resource_t) -> cucore_status_t;
    pub fn cucore_memory_resource_allocate(
        resource: *mut cucore_memory_resource_t,
        size: u64,
        stream: *mut cucore_stream_t,
        buffer: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_handle(
        resource: *const cucore_memory_resource_t,
        cu_memory_pool: *mut *mut c_void,
    ) -> cucore_status_t;
    pub fn cucore_device_memory_resource(
        device: *mut cucore_device_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_device_set_memory_resource(
        device: *mut cucore_device_t,
        resource: *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_device_allocate(
        device: *mut cucore_device_t,
        size: u64,
        stream: *mut cucore_stream_t,
        buffer: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_pool_attribute(
        resource: *const cucore_memory_resource_t,
        attribute: cucore_pool_attribute_t,
        value: *mut u64,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_set_pool_attribute(
        resource: *mut cucore_memory_resource_t,
        attribute: cucore_pool_attribute_t,
        value: u64,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_trim(resource: *mut cucore_memory_resource_t, min_bytes_to_keep: u64) -> cucore_status_t;
    pub fn cucore_memory_resource_kind(
        resource: *const cucore_memory_resource_t,
        kind: *mut cucore_memory_resource_kind_t,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_device_id(
        resource: *const cucore_memory_resource_t,
        device_id: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_accessibility(
        resource: *const cucore_memory_resource_t,
        device_accessible: *mut c_int,
        host_accessible: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_is_managed(
        resource: *const cucore_memory_resource_t,
        managed: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_is_stream_ordered(
        resource: *const cucore_memory_resource_t,
        stream_ordered: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_pinned_memory_resource_create(
        device: *mut cucore_device_t,
        options: *const cucore_pinned_memory_resource_options_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_managed_memory_resource_create(
        device: *mut cucore_device_t,
        options: *const cucore_managed_memory_resource_options_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_virtual_memory_resource_create(
        device: *mut cucore_device_t,
        options: *const cucore_virtual_memory_resource_options_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_set_peer_access(
        resource: *mut cucore_memory_resource_t,
        peer: *mut cucore_device_t,
        access: cucore_access_t,
    ) -> cucore_status_t;
    pub fn cucore_memory_resource_peer_access(
        resource: *const cucore_memory_resource_t,
        peer: *mut cucore_device_t,
        access: *mut cucore_access_t,
    ) -> cucore_status_t;

    // memory.h: buffers
    pub fn cucore_buffer_from_handle(
        address: u64,
        size: u64,
        device: *mut cucore_device_t,
        on_release: cucore_release_fn,
        user_data: *mut c_void,
        buffer: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_retain(buffer: *mut cucore_buffer_t) -> cucore_status_t;
    pub fn cucore_buffer_release(buffer: *mut cucore_buffer_t) -> cucore_status_t;
    pub fn cucore_buffer_close(buffer: *mut cucore_buffer_t, stream: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_buffer_set_deallocation_stream(
        buffer: *mut cucore_buffer_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_size(buffer: *const cucore_buffer_t, size: *mut u64) -> cucore_status_t;
    pub fn cucore_buffer_address(buffer: *const cucore_buffer_t, address: *mut u64) -> cucore_status_t;
    pub fn cucore_buffer_device_id(buffer: *const cucore_buffer_t, device_id: *mut c_int) -> cucore_status_t;
    pub fn cucore_buffer_memory_resource(
        buffer: *const cucore_buffer_t,
        resource: *mut *mut cucore_memory_resource_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_view(
        buffer: *mut cucore_buffer_t,
        offset: u64,
        size: u64,
        view: *mut *mut cucore_buffer_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_copy(
        dst: *mut cucore_buffer_t,
        src: *mut cucore_buffer_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_copy_from_host(
        buffer: *mut cucore_buffer_t,
        offset: u64,
        src: *const c_void,
        size: u64,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_copy_to_host(
        buffer: *mut cucore_buffer_t,
        offset: u64,
        dst: *mut c_void,
        size: u64,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_fill(
        buffer: *mut cucore_buffer_t,
        value: u32,
        value_size: u32,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_accessibility(
        buffer: *const cucore_buffer_t,
        device_accessible: *mut c_int,
        host_accessible: *mut c_int,
        managed: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_buffer_deallocation_stream(
        buffer: *const cucore_buffer_t,
        stream: *mut *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_grow(buffer: *mut cucore_buffer_t, new_size: u64) -> cucore_status_t;
    pub fn cucore_copy_3d(copy: *const cucore_copy_3d_t, stream: *mut cucore_stream_t) -> cucore_status_t;
    pub fn cucore_buffer_advise(
        buffer: *mut cucore_buffer_t,
        advice: cucore_memory_advice_t,
        location: cucore_location_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_advice(
        buffer: *const cucore_buffer_t,
        read_mostly: *mut c_int,
        preferred_location: *mut cucore_location_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_is_accessed_by(
        buffer: *const cucore_buffer_t,
        location: cucore_location_t,
        accessed_by: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_buffer_last_prefetch_location(
        buffer: *const cucore_buffer_t,
        location: *mut cucore_location_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_prefetch(
        buffer: *mut cucore_buffer_t,
        location: cucore_location_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
    pub fn cucore_buffer_discard(
        buffer: *mut cucore_buffer_t,
        prefetch_location: *const cucore_location_t,
        stream: *mut cucore_stream_t,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;
    use std::ffi::CStr;
    use std::mem::{align_of, size_of, MaybeUninit};
    use std::os::raw::c_char;


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
                CUCORE_MEMORY_RESOURCE_GRAPHICS,
            ],
            [3, 4, 5, 6, 7, 8]
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

    #[test]
    fn layout_device_memory_resource_options() {
        assert_eq!(size_of::<cucore_device_memory_resource_options_t>(), 32);
        assert_eq!(align_of::<cucore_device_memory_resource_options_t>(), 8);
        assert_eq!(offset!(cucore_device_memory_resource_options_t, struct_size), 0);
        assert_eq!(offset!(cucore_device_memory_resource_options_t, reserved0), 4);
        assert_eq!(offset!(cucore_device_memory_resource_options_t, max_size), 8);
        assert_eq!(offset!(cucore_device_memory_resource_options_t, release_threshold), 16);
        assert_eq!(offset!(cucore_device_memory_resource_options_t, ipc_enabled), 24);
        assert_eq!(offset!(cucore_device_memory_resource_options_t, reserved1), 28);
        let init = cucore_device_memory_resource_options_t::INIT;
        assert_eq!(init.struct_size, 32);
        assert_eq!((init.reserved0, init.max_size, init.release_threshold), (0, 0, 0));
        assert_eq!((init.ipc_enabled, init.reserved1), (0, 0));
        assert_eq!(cucore_device_memory_resource_options_t::default(), init);
    }

    #[test]
    fn memory_resource_enum_values_match_header() {
        assert_eq!(CUCORE_MEMORY_RESOURCE_UNSET, 0);
        assert_eq!(CUCORE_MEMORY_RESOURCE_DEVICE, 1);
        assert_eq!(CUCORE_MEMORY_RESOURCE_LEGACY_PINNED, 2);
        assert_eq!(CUCORE_OBJECT_MEMORY_RESOURCE, 5);
        assert_eq!(CUCORE_OBJECT_BUFFER, 6);
        assert_eq!(CUCORE_OBJECT_PROGRAM_CACHE, 11);
        assert_eq!(CUCORE_OBJECT_TYPE_COUNT, 14);
        assert_eq!(size_of::<cucore_memory_resource_kind_t>(), 4);
    }

    #[test]
    fn buffer_from_handle_validates_arguments() {
        unsafe {
            // NULL out-pointer.
            assert_eq!(
                cucore_buffer_from_handle(0x1000, 16, ptr::null_mut(), None, ptr::null_mut(), ptr::null_mut()),
                CUCORE_ERROR_INVALID_ARGUMENT
            );
            // Address 0 with a non-zero size.
            let mut buf: *mut cucore_buffer_t = 1 as *mut _;
            assert_eq!(
                cucore_buffer_from_handle(0, 16, ptr::null_mut(), None, ptr::null_mut(), &mut buf),
                CUCORE_ERROR_INVALID_ARGUMENT
            );
            assert!(buf.is_null());
            assert!(!cstr(cucore_last_error_message()).is_empty());
        }
    }

    fn cstr(p: *const c_char) -> String {
        assert!(!p.is_null());
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// A pointer that is no handle at all: the address of a local filled with junk.
    fn garbage<T>(junk: &mut [u64; 8]) -> *mut T {
        junk.as_mut_ptr() as *mut T
    }

    #[test]
    fn garbage_handles_are_invalid_handle() {
        let mut junk = [0xdead_beef_dead_beef_u64; 8];
        unsafe {
            assert_eq!(cucore_memory_resource_retain(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_memory_resource_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_retain(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_release(garbage(&mut junk)), CUCORE_ERROR_INVALID_HANDLE);
            let (mut dev_ok, mut host_ok): (c_int, c_int) = (7, 7);
            assert_eq!(
                cucore_memory_resource_accessibility(garbage(&mut junk), &mut dev_ok, &mut host_ok),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert_eq!((dev_ok, host_ok), (0, 0));
            let mut id: c_int = 7;
            assert_eq!(cucore_memory_resource_device_id(garbage(&mut junk), &mut id), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(cucore_buffer_device_id(garbage(&mut junk), &mut id), CUCORE_ERROR_INVALID_HANDLE);
            let mut addr: u64 = 7;
            assert_eq!(cucore_buffer_address(garbage(&mut junk), &mut addr), CUCORE_ERROR_INVALID_HANDLE);
            assert_eq!(addr, 0);
            let mut mr: *mut cucore_memory_resource_t = 1 as *mut _;
            assert_eq!(cucore_buffer_memory_resource(garbage(&mut junk), &mut mr), CUCORE_ERROR_INVALID_HANDLE);
            assert!(mr.is_null());
            let mut view: *mut cucore_buffer_t = 1 as *mut _;
            assert_eq!(cucore_buffer_view(garbage(&mut junk), 0, 0, &mut view), CUCORE_ERROR_INVALID_HANDLE);
            assert!(view.is_null());
            assert_eq!(cucore_buffer_close(garbage(&mut junk), ptr::null_mut()), CUCORE_ERROR_INVALID_HANDLE);
            let bytes = [0u8; 4];
            assert_eq!(
                cucore_buffer_copy_from_host(
                    garbage(&mut junk),
                    0,
                    bytes.as_ptr() as *const c_void,
                    4,
                    garbage(&mut junk)
                ),
                CUCORE_ERROR_INVALID_HANDLE
            );
            assert!(!cstr(cucore_last_error_message()).is_empty());
        }
    }
}
