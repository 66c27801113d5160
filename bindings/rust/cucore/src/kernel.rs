//! What `include/cucore/kernel.h` holds: kernels, their attributes, parameters and occupancy
//! (cuda.core's `Kernel`, `KernelAttributes` and `KernelOccupancy`).
//!
//! A kernel from [`ObjectCode::get_kernel`](crate::ObjectCode::get_kernel) is context
//! independent: per-device queries take the device whose primary context is meant. A wrapped
//! `CUfunction` ([`Kernel::from_function`]) belongs to one context, and the device of the
//! queries must be that context's device. The cluster occupancy queries, which take a launch
//! configuration, are in [`launch`](mod@crate::launch).

use std::fmt;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{check, owned_str, owner_handoff, OwnerCallback, Result};
use crate::device::Device;

/// A kernel attribute (`cucore_kernel_attribute_t`: the driver's `CU_FUNC_ATTRIBUTE_*` plus one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum KernelAttribute {
    /// The most threads a block of this kernel can have.
    MaxThreadsPerBlock = sys::CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
    /// Static shared memory per block, in bytes.
    SharedSizeBytes = sys::CUCORE_KERNEL_ATTRIBUTE_SHARED_SIZE_BYTES,
    /// Constant memory, in bytes.
    ConstSizeBytes = sys::CUCORE_KERNEL_ATTRIBUTE_CONST_SIZE_BYTES,
    /// Local memory per thread, in bytes.
    LocalSizeBytes = sys::CUCORE_KERNEL_ATTRIBUTE_LOCAL_SIZE_BYTES,
    /// Registers per thread.
    NumRegs = sys::CUCORE_KERNEL_ATTRIBUTE_NUM_REGS,
    /// PTX version, `major * 10 + minor`.
    PtxVersion = sys::CUCORE_KERNEL_ATTRIBUTE_PTX_VERSION,
    /// Binary version, `major * 10 + minor`.
    BinaryVersion = sys::CUCORE_KERNEL_ATTRIBUTE_BINARY_VERSION,
    /// Compiled with `-Xptxas --dlcm=ca`.
    CacheModeCa = sys::CUCORE_KERNEL_ATTRIBUTE_CACHE_MODE_CA,
    /// The most dynamic shared memory per block; settable.
    MaxDynamicSharedSizeBytes = sys::CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
    /// Preferred shared memory carve-out, percent of L1 (or -1); settable.
    PreferredSharedMemoryCarveout = sys::CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
    /// Whether a cluster size must be set at launch.
    ClusterSizeMustBeSet = sys::CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET,
    /// Required cluster width; settable.
    RequiredClusterWidth = sys::CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
    /// Required cluster height; settable.
    RequiredClusterHeight = sys::CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
    /// Required cluster depth; settable.
    RequiredClusterDepth = sys::CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
    /// Whether non-portable cluster sizes are allowed; settable.
    NonPortableClusterSizeAllowed = sys::CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
    /// Cluster scheduling policy preference; settable.
    ClusterSchedulingPolicyPreference = sys::CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
}

impl KernelAttribute {
    /// Every attribute, in header order.
    pub const ALL: [KernelAttribute; 16] = [
        KernelAttribute::MaxThreadsPerBlock,
        KernelAttribute::SharedSizeBytes,
        KernelAttribute::ConstSizeBytes,
        KernelAttribute::LocalSizeBytes,
        KernelAttribute::NumRegs,
        KernelAttribute::PtxVersion,
        KernelAttribute::BinaryVersion,
        KernelAttribute::CacheModeCa,
        KernelAttribute::MaxDynamicSharedSizeBytes,
        KernelAttribute::PreferredSharedMemoryCarveout,
        KernelAttribute::ClusterSizeMustBeSet,
        KernelAttribute::RequiredClusterWidth,
        KernelAttribute::RequiredClusterHeight,
        KernelAttribute::RequiredClusterDepth,
        KernelAttribute::NonPortableClusterSizeAllowed,
        KernelAttribute::ClusterSchedulingPolicyPreference,
    ];

    /// The raw `cucore_kernel_attribute_t`.
    pub fn raw(self) -> sys::cucore_kernel_attribute_t {
        self as i32
    }
}

/// Where a kernel parameter sits in the parameter buffer (cuda.core's `ParamInfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamInfo {
    /// Offset in bytes.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// The answer of [`Kernel::max_potential_block_size`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PotentialBlockSize {
    /// The least grid size that fills the device with blocks of `block_size`.
    pub min_grid_size: i32,
    /// The block size that reaches the highest occupancy.
    pub block_size: i32,
}

/// A kernel (`cucore_kernel_t`; cuda.core's `Kernel`). It keeps its object code loaded.
pub struct Kernel {
    raw: NonNull<sys::cucore_kernel_t>,
}

handle_type!(Kernel, sys::cucore_kernel_t);
identity_eq!(Kernel);

impl Kernel {
    /// Wraps a foreign `CUkernel` without owning its library (`cucore_kernel_from_handle`;
    /// cuda.core's `Kernel.from_handle`). When the last reference goes, `owner` is called; if
    /// the call fails it is never called afterwards (see [`OwnerCallback`]).
    ///
    /// # Safety
    /// `cu_kernel` is a valid `CUkernel` whose library stays loaded until `owner` is called (or,
    /// without an owner, until the last clone of the returned value is dropped).
    pub unsafe fn from_handle(cu_kernel: *mut c_void, owner: Option<OwnerCallback>) -> Result<Kernel> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for cu_kernel; the handoff's user_data fits its on_release.
        let status =
            unsafe { sys::cucore_kernel_from_handle(cu_kernel, handoff.on_release, handoff.user_data, &mut raw) };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        Kernel::from_out(raw)
    }

    /// Wraps a foreign `CUfunction` of the calling thread's current context (which the kernel
    /// retains) (`cucore_kernel_from_function`). It launches only into streams of that context.
    ///
    /// # Safety
    /// `cu_function` is a valid `CUfunction` of the current context whose module stays loaded
    /// until `owner` is called (or, without an owner, until the last clone is dropped).
    pub unsafe fn from_function(cu_function: *mut c_void, owner: Option<OwnerCallback>) -> Result<Kernel> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: as in `from_handle`.
        let status =
            unsafe { sys::cucore_kernel_from_function(cu_function, handoff.on_release, handoff.user_data, &mut raw) };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        Kernel::from_out(raw)
    }

    /// The kernel's symbol name (lowered for C++).
    pub fn name(&self) -> Result<String> {
        let mut p: *const c_char = ptr::null();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_kernel_name(self.as_raw(), &mut p) })?;
        // SAFETY: NUL-terminated, valid while `self` lives.
        Ok(unsafe { owned_str(p) })
    }

    /// Reads `attribute` of the kernel on `device` (cuda.core's `kernel.attributes[dev]`).
    pub fn attribute(&self, device: &Device, attribute: KernelAttribute) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_kernel_attribute(self.as_raw(), device.as_raw(), attribute.raw(), &mut v) })?;
        Ok(v)
    }

    /// Sets a settable `attribute` on `device` (e.g. allowing more than 48 KiB of dynamic
    /// shared memory with `MaxDynamicSharedSizeBytes`).
    pub fn set_attribute(&self, device: &Device, attribute: KernelAttribute, value: i32) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_kernel_set_attribute(self.as_raw(), device.as_raw(), attribute.raw(), value) })
    }

    /// The number of the kernel's parameters (cuda.core's `num_arguments`;
    /// `Status::NotSupported` on drivers older than 12.4).
    pub fn param_count(&self) -> Result<usize> {
        let mut n: usize = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_kernel_param_count(self.as_raw(), &mut n) })?;
        Ok(n)
    }

    /// The offset and size of parameter `index`.
    pub fn param_info(&self, index: usize) -> Result<ParamInfo> {
        let (mut offset, mut size): (usize, usize) = (0, 0);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_kernel_param_info(self.as_raw(), index, &mut offset, &mut size) })?;
        Ok(ParamInfo { offset, size })
    }

    /// Every parameter's offset and size (cuda.core's `arguments_info`).
    pub fn params_info(&self) -> Result<Vec<ParamInfo>> {
        (0..self.param_count()?).map(|i| self.param_info(i)).collect()
    }

    /// How many blocks of `block_size` threads with `dynamic_shared_bytes` of dynamic shared
    /// memory can be resident on one multiprocessor of `device`.
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        device: &Device,
        block_size: u32,
        dynamic_shared_bytes: usize,
    ) -> Result<i32> {
        let mut blocks: c_int = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe {
            sys::cucore_kernel_max_active_blocks_per_multiprocessor(
                self.as_raw(),
                device.as_raw(),
                block_size,
                dynamic_shared_bytes,
                &mut blocks,
            )
        })?;
        Ok(blocks)
    }

    /// The block size of the highest occupancy on `device` and the least grid size that fills
    /// the device with it, for `dynamic_shared_bytes` per block; `block_size_limit` 0: no limit.
    pub fn max_potential_block_size(
        &self,
        device: &Device,
        dynamic_shared_bytes: usize,
        block_size_limit: u32,
    ) -> Result<PotentialBlockSize> {
        let (mut min_grid_size, mut block_size): (c_int, c_int) = (0, 0);
        // SAFETY: live handles and valid out-pointers.
        check(unsafe {
            sys::cucore_kernel_max_potential_block_size(
                self.as_raw(),
                device.as_raw(),
                dynamic_shared_bytes,
                block_size_limit,
                &mut min_grid_size,
                &mut block_size,
            )
        })?;
        Ok(PotentialBlockSize { min_grid_size, block_size })
    }

    /// The most dynamic shared memory per block available when `num_blocks` blocks of
    /// `block_size` threads are resident on one multiprocessor of `device`.
    pub fn available_dynamic_shared_memory(&self, device: &Device, num_blocks: u32, block_size: u32) -> Result<usize> {
        let mut bytes: usize = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe {
            sys::cucore_kernel_available_dynamic_shared_memory(
                self.as_raw(),
                device.as_raw(),
                num_blocks,
                block_size,
                &mut bytes,
            )
        })?;
        Ok(bytes)
    }

    /// The raw `CUkernel` (NULL for a wrapped `CUfunction`) (cuda.core's `Kernel.handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_kernel_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// The raw `CUfunction` of the kernel in `device`'s primary context (a wrapped
    /// `CUfunction`: itself).
    pub fn function(&self, device: &Device) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_kernel_function(self.as_raw(), device.as_raw(), &mut h) })?;
        Ok(h)
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Ok(n) => write!(f, "Kernel({})", n),
            Err(_) => write!(f, "Kernel(<library handle {:p}>)", self.as_raw()),
        }
    }
}
