//! Virtual memory (`include/cucore/virtual_memory.h`): the virtual memory resource and its
//! options (cuda.core's `VirtualMemoryResource` and `VirtualMemoryResourceOptions`, with
//! [`Granularity`]). Each buffer of such a resource is physical memory mapped into an address
//! range reserved for it, so it can grow ([`Buffer::grow`](crate::Buffer::grow)); the access
//! other devices get is set with
//! [`MemoryResource::set_peer_access`](crate::MemoryResource::set_peer_access).

use std::ptr;

use cucore_sys as sys;

use crate::common::{check, Result};
use crate::device::Device;
use crate::memory_resource::{Access, Location, MemoryResource};

/// How a virtual memory resource rounds sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// The driver's recommended granularity (the default; faster).
    #[default]
    Recommended,
    /// The driver's minimum granularity (less memory wasted).
    Minimum,
}

/// Options of a virtual memory resource (`cucore_virtual_memory_resource_options_t`; cuda.core's
/// `VirtualMemoryResourceOptions`). The default is the C struct's all-zero default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct VirtualMemoryResourceOptions {
    /// Where the physical memory lives: None (the default) or `Location::Device(_)` for the
    /// resource's own device (the ordinal is not used), `Location::Host` or
    /// `Location::HostNuma(node)` for host memory.
    pub location: Option<Location>,
    /// How sizes are rounded.
    pub granularity: Granularity,
    /// The physical memory can be exported as a POSIX file descriptor.
    pub posix_fd_shareable: bool,
    /// Address space reserved per buffer, in bytes (rounded up to the granularity): a buffer
    /// grows in place up to it. 0: just the buffer's size.
    pub reserve_size: u64,
    /// Access granted to the resource's own device: None (the default) for `Access::ReadWrite`,
    /// or `Access::Read` (`Access::None` stands for the default too: the own device cannot be
    /// left without access). Other devices get none until [`MemoryResource::set_peer_access`]
    /// grants it.
    pub self_access: Option<Access>,
    /// Memory usable by GPUDirect RDMA, where the device supports it (a hint).
    pub gpu_direct_rdma: bool,
    /// The physical memory can be exported as a fabric handle.
    pub fabric_shareable: bool,
    /// Where each buffer's address range should start if that range is free (0: the driver chooses).
    pub address_hint: u64,
    /// Alignment of each buffer's address range, a power of two (0: the allocation granularity).
    pub address_alignment: u64,
}

impl VirtualMemoryResourceOptions {
    setters! {
        /// Sets `location`.
        location: Location => |location: Location| Some(location);
        /// Sets `granularity`.
        granularity: Granularity => |granularity: Granularity| granularity;
        /// Sets `posix_fd_shareable`.
        posix_fd_shareable: bool => |shareable: bool| shareable;
        /// Sets `reserve_size`.
        reserve_size: u64 => |bytes: u64| bytes;
        /// Sets `self_access`.
        self_access: Access => |access: Access| Some(access);
        /// Sets `gpu_direct_rdma`.
        gpu_direct_rdma: bool => |rdma: bool| rdma;
        /// Sets `fabric_shareable`.
        fabric_shareable: bool => |shareable: bool| shareable;
        /// Sets `address_hint`.
        address_hint: u64 => |address: u64| address;
        /// Sets `address_alignment`.
        address_alignment: u64 => |alignment: u64| alignment;
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_virtual_memory_resource_options_t {
        let mut o = sys::cucore_virtual_memory_resource_options_t::INIT;
        if let Some(location) = self.location {
            let raw = location.to_raw();
            o.location_type = raw.type_;
            o.location_id = raw.id;
        }
        o.minimum_granularity = (self.granularity == Granularity::Minimum) as u32;
        o.posix_fd_shareable = self.posix_fd_shareable as u32;
        o.reserve_size = self.reserve_size;
        o.self_access = self.self_access.map_or(sys::CUCORE_ACCESS_NONE, Access::raw);
        o.gpu_direct_rdma = self.gpu_direct_rdma as u32;
        o.fabric_shareable = self.fabric_shareable as u32;
        o.address_hint = self.address_hint;
        o.address_alignment = self.address_alignment;
        o
    }
}

impl MemoryResource {
    /// A virtual memory resource on `device` (`cucore_virtual_memory_resource_create`; cuda.core's
    /// `VirtualMemoryResource`): each buffer is physical memory mapped into an address range
    /// reserved for it, which it can [grow](crate::Buffer::grow) into. Allocation and release
    /// are synchronous (no stream needed). Sizes round up to the allocation granularity.
    pub fn virtual_memory(device: &Device, options: VirtualMemoryResourceOptions) -> Result<MemoryResource> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_virtual_memory_resource_create(device.as_raw(), &o, &mut raw) })?;
        MemoryResource::from_out(raw)
    }
}
