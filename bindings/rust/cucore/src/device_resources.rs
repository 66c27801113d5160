//! What `include/cucore/device_resources.h` holds: the partitionable resources of a device and
//! green contexts (cuda.core's `DeviceResources`, `SMResource`, `WorkqueueResource`,
//! `ContextOptions`).
//!
//! ```no_run
//! # fn main() -> cucore::Result<()> {
//! use cucore::{ContextOptions, Device, SmResourceOptions, StreamOptions};
//! let dev = Device::get(0)?;
//! let sm = dev.resources().sm()?;                        // every SM of the device
//! let (groups, _rest) = sm.split(&SmResourceOptions::default().sm_count(8).group_count(2))?;
//! let green = dev.create_context(&ContextOptions::default().sm(groups[0].clone()))?;
//! assert!(green.is_green()?);
//! let stream = green.create_stream(StreamOptions::default())?; // runs on the group's 8 SMs only
//! # let _ = stream; Ok(()) }
//! ```
//!
//! An [`SmResource`] splits with `cuDevSmResourceSplitByCount` into groups of one size, at least
//! its `min_partition_size` and a multiple of its `coscheduled_alignment` (unless
//! [`SmResourceOptions::ignore_sm_coscheduling`]); a bad split is `Status::InvalidArgument` naming
//! the rule. A group does not split again; groups and the remainder of one split may make one
//! green context. [`WorkqueueResource`]s need a CUDA 13.1 driver (`Status::NotSupported`, with the
//! reason, before). Resources are plain descriptions: they hold nothing on the device.

use std::fmt;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{check, Result};
use crate::context::Context;
use crate::device::Device;
use crate::stream::Stream;

/// What an [`SmResource`] holds (`cucore_sm_resource_info_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmResourceInfo {
    /// Streaming multiprocessors in the resource.
    pub sm_count: u32,
    /// The fewest SMs a group split from it may have.
    pub min_partition_size: u32,
    /// A group's SM count is a multiple of this.
    pub coscheduled_alignment: u32,
    /// The driver's flags of the resource (0 before CUDA 13.1).
    pub flags: u32,
}

/// How [`SmResource::split`] divides SMs (`cucore_sm_resource_split_options_t`; cuda.core's
/// `SMResourceOptions`). The defaults: groups of the minimum partition size, as many as fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SmResourceOptions {
    /// SMs per group; 0: the smallest allowed (`min_partition_size` rounded up to the alignment).
    pub sm_count: u32,
    /// Groups to make (exactly); 0: as many as fit.
    pub group_count: u32,
    /// Ignore the GPU's processing clusters: any size from 1 SM (no minimum partition, no alignment).
    pub ignore_sm_coscheduling: bool,
    /// Compute capability 9.0+: groups that allow the largest thread clusters.
    pub max_potential_cluster_size: bool,
}

impl SmResourceOptions {
    setters! {
        /// SMs per group.
        sm_count: u32 => |v| v;
        /// Groups to make.
        group_count: u32 => |v| v;
        /// Ignore co-scheduling (cuda.core's `backfill`).
        ignore_sm_coscheduling: bool => |v| v;
        /// Groups for the largest thread clusters.
        max_potential_cluster_size: bool => |v| v;
    }

    fn to_raw(self) -> sys::cucore_sm_resource_split_options_t {
        let mut o = sys::cucore_sm_resource_split_options_t::INIT;
        o.sm_count = self.sm_count;
        o.group_count = self.group_count;
        if self.ignore_sm_coscheduling {
            o.flags |= sys::CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING as u32;
        }
        if self.max_potential_cluster_size {
            o.flags |= sys::CUCORE_SM_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE as u32;
        }
        o
    }
}

/// What a split would make ([`SmResource::dry_run`]): every group has the same SM count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmSplitInfo {
    /// Groups made.
    pub group_count: u32,
    /// SMs in each group.
    pub group_sm_count: u32,
    /// SMs left to the remainder.
    pub remainder_sm_count: u32,
}

/// SMs of a device, context or stream (`cucore_sm_resource_t`; cuda.core's `SMResource`).
/// `Clone` adds a reference.
pub struct SmResource {
    raw: NonNull<sys::cucore_sm_resource_t>,
}

handle_type!(SmResource, sys::cucore_sm_resource_t);
identity_eq!(SmResource);

impl SmResource {
    /// Every SM of `device` (`cuDeviceGetDevResource`).
    pub fn of_device(device: &Device) -> Result<SmResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_sm_resource_of_device(device.as_raw(), &mut raw) })?;
        SmResource::from_out(raw)
    }

    /// The SMs of `context` (a green context's own).
    pub fn of_context(context: &Context) -> Result<SmResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `of_device`.
        check(unsafe { sys::cucore_sm_resource_of_context(context.as_raw(), &mut raw) })?;
        SmResource::from_out(raw)
    }

    /// The SMs of `stream`'s context.
    pub fn of_stream(stream: &Stream) -> Result<SmResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `of_device`.
        check(unsafe { sys::cucore_sm_resource_of_stream(stream.as_raw(), &mut raw) })?;
        SmResource::from_out(raw)
    }

    /// Its SM count, minimum partition size, alignment and flags.
    pub fn info(&self) -> Result<SmResourceInfo> {
        let mut i = sys::cucore_sm_resource_info_t::INIT;
        // SAFETY: a live handle and a valid out-struct with its struct_size set.
        check(unsafe { sys::cucore_sm_resource_info(self.as_raw(), &mut i) })?;
        Ok(SmResourceInfo {
            sm_count: i.sm_count,
            min_partition_size: i.min_partition_size,
            coscheduled_alignment: i.coscheduled_alignment,
            flags: i.flags,
        })
    }

    /// The SMs in the resource.
    pub fn sm_count(&self) -> Result<u32> {
        Ok(self.info()?.sm_count)
    }

    /// What [`split`](Self::split) would make, without making it.
    pub fn dry_run(&self, options: &SmResourceOptions) -> Result<SmSplitInfo> {
        let o = options.to_raw();
        let mut i = sys::cucore_sm_resource_split_info_t::INIT;
        // SAFETY: a live handle, valid options and out-struct.
        check(unsafe { sys::cucore_sm_resource_split_dry_run(self.as_raw(), &o, &mut i) })?;
        Ok(SmSplitInfo {
            group_count: i.group_count,
            group_sm_count: i.group_sm_count,
            remainder_sm_count: i.remainder_sm_count,
        })
    }

    /// Splits into disjoint groups and the SMs left over (`cuDevSmResourceSplitByCount`):
    /// `(groups, remainder)`, the remainder possibly of 0 SMs.
    pub fn split(&self, options: &SmResourceOptions) -> Result<(Vec<SmResource>, SmResource)> {
        let capacity = if options.group_count != 0 { options.group_count } else { self.dry_run(options)?.group_count };
        let mut groups: Vec<*mut sys::cucore_sm_resource_t> = vec![ptr::null_mut(); capacity.max(1) as usize];
        let o = options.to_raw();
        let mut made: u32 = 0;
        let mut rest = ptr::null_mut();
        // SAFETY: `groups` has room for `capacity` handles; we own every reference written.
        check(unsafe {
            sys::cucore_sm_resource_split(self.as_raw(), &o, groups.as_mut_ptr(), capacity.max(1), &mut made, &mut rest)
        })?;
        let remainder = SmResource::from_out(rest);
        let made: Vec<Result<SmResource>> = groups[..made as usize].iter().map(|&g| SmResource::from_out(g)).collect();
        let groups = made.into_iter().collect::<Result<Vec<_>>>()?;
        Ok((groups, remainder?))
    }
}

impl fmt::Debug for SmResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.info() {
            Ok(i) => write!(f, "SmResource({} SMs)", i.sm_count),
            Err(_) => write!(f, "SmResource(<library handle {:p}>)", self.as_raw()),
        }
    }
}

/// How a green context's work queues are shared (`cucore_workqueue_sharing_scope_t`; cuda.core's
/// `WorkqueueSharingScopeType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkqueueSharingScope {
    /// Every context of the device shares them (the driver's default).
    DeviceCtx,
    /// Where possible, not shared with other balanced green contexts.
    GreenCtxBalanced,
}

impl WorkqueueSharingScope {
    fn raw(self) -> sys::cucore_workqueue_sharing_scope_t {
        match self {
            WorkqueueSharingScope::DeviceCtx => sys::CUCORE_WORKQUEUE_SHARING_SCOPE_DEVICE_CTX,
            WorkqueueSharingScope::GreenCtxBalanced => sys::CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED,
        }
    }
}

/// What [`WorkqueueResource::configure`] changes (cuda.core's `WorkqueueResourceOptions`); `None`
/// and 0 leave a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WorkqueueResourceOptions {
    /// The sharing scope.
    pub sharing_scope: Option<WorkqueueSharingScope>,
    /// The expected most stream-ordered workloads at once (at least 1 when set).
    pub concurrency_limit: u32,
}

impl WorkqueueResourceOptions {
    setters! {
        /// The sharing scope.
        sharing_scope: WorkqueueSharingScope => Some;
        /// The concurrency limit.
        concurrency_limit: u32 => |v| v;
    }
}

/// How a green context's work queues are shared (`cucore_workqueue_resource_t`; cuda.core's
/// `WorkqueueResource`; CUDA 13.1 drivers). `Clone` adds a reference.
pub struct WorkqueueResource {
    raw: NonNull<sys::cucore_workqueue_resource_t>,
}

handle_type!(WorkqueueResource, sys::cucore_workqueue_resource_t);
identity_eq!(WorkqueueResource);

impl WorkqueueResource {
    /// The workqueue configuration of `device` (`Status::NotSupported` before CUDA 13.1).
    pub fn of_device(device: &Device) -> Result<WorkqueueResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_workqueue_resource_of_device(device.as_raw(), &mut raw) })?;
        WorkqueueResource::from_out(raw)
    }

    /// The workqueue configuration of `context` (a green context's own).
    pub fn of_context(context: &Context) -> Result<WorkqueueResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `of_device`.
        check(unsafe { sys::cucore_workqueue_resource_of_context(context.as_raw(), &mut raw) })?;
        WorkqueueResource::from_out(raw)
    }

    /// The workqueue configuration of `stream`'s context.
    pub fn of_stream(stream: &Stream) -> Result<WorkqueueResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `of_device`.
        check(unsafe { sys::cucore_workqueue_resource_of_stream(stream.as_raw(), &mut raw) })?;
        WorkqueueResource::from_out(raw)
    }

    fn info(&self) -> Result<sys::cucore_workqueue_resource_info_t> {
        let mut i = sys::cucore_workqueue_resource_info_t::INIT;
        // SAFETY: a live handle and a valid out-struct with its struct_size set.
        check(unsafe { sys::cucore_workqueue_resource_info(self.as_raw(), &mut i) })?;
        Ok(i)
    }

    /// The sharing scope now.
    pub fn sharing_scope(&self) -> Result<WorkqueueSharingScope> {
        Ok(if self.info()?.sharing_scope == sys::CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED {
            WorkqueueSharingScope::GreenCtxBalanced
        } else {
            WorkqueueSharingScope::DeviceCtx
        })
    }

    /// The expected most stream-ordered workloads at once.
    pub fn concurrency_limit(&self) -> Result<u32> {
        Ok(self.info()?.concurrency_limit)
    }

    /// Changes it in place (for green contexts made afterwards).
    pub fn configure(&self, options: &WorkqueueResourceOptions) -> Result<()> {
        let mut o = sys::cucore_workqueue_resource_options_t::INIT;
        o.sharing_scope = options.sharing_scope.map_or(sys::CUCORE_WORKQUEUE_SHARING_SCOPE_UNSET, |s| s.raw());
        o.concurrency_limit = options.concurrency_limit;
        // SAFETY: a live handle and valid options.
        check(unsafe { sys::cucore_workqueue_resource_configure(self.as_raw(), &o) })
    }

    /// The device it is of.
    pub fn device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_workqueue_resource_device(self.as_raw(), &mut raw) })?;
        Device::from_out(raw)
    }
}

impl fmt::Debug for WorkqueueResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WorkqueueResource(<library handle {:p}>)", self.as_raw())
    }
}

/// The resources of a device, context or stream (cuda.core's `DeviceResources`): asked for each
/// time `sm()` or `workqueue()` is called.
#[derive(Clone, Debug)]
pub enum DeviceResources {
    /// A device's.
    Device(Device),
    /// A context's (a green context's own).
    Context(Context),
    /// A stream's context's.
    Stream(Stream),
}

impl DeviceResources {
    /// The SMs.
    pub fn sm(&self) -> Result<SmResource> {
        match self {
            DeviceResources::Device(d) => SmResource::of_device(d),
            DeviceResources::Context(c) => SmResource::of_context(c),
            DeviceResources::Stream(s) => SmResource::of_stream(s),
        }
    }

    /// The workqueue configuration (`Status::NotSupported` before CUDA 13.1).
    pub fn workqueue(&self) -> Result<WorkqueueResource> {
        match self {
            DeviceResources::Device(d) => WorkqueueResource::of_device(d),
            DeviceResources::Context(c) => WorkqueueResource::of_context(c),
            DeviceResources::Stream(s) => WorkqueueResource::of_stream(s),
        }
    }
}

/// What a green context is made of (cuda.core's `ContextOptions`): groups and the remainder of
/// one split (or one whole SM resource) and at most one workqueue resource, of one device.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// The SM resources.
    pub sm_resources: Vec<SmResource>,
    /// The workqueue resources (at most one).
    pub workqueue_resources: Vec<WorkqueueResource>,
}

impl ContextOptions {
    /// Adds an SM resource.
    pub fn sm(mut self, resource: SmResource) -> Self {
        self.sm_resources.push(resource);
        self
    }

    /// Adds a workqueue resource.
    pub fn workqueue(mut self, resource: WorkqueueResource) -> Self {
        self.workqueue_resources.push(resource);
        self
    }
}

impl Context {
    /// A green context of `device` made of `options`' resources (`cucore_context_create`): its
    /// streams, events, buffers and launches run on those SMs only; it lives until it and
    /// everything made on it are dropped.
    pub fn create(device: &Device, options: &ContextOptions) -> Result<Context> {
        let sm: Vec<*mut sys::cucore_sm_resource_t> = options.sm_resources.iter().map(|r| r.as_raw()).collect();
        let wq: Vec<*mut sys::cucore_workqueue_resource_t> =
            options.workqueue_resources.iter().map(|r| r.as_raw()).collect();
        let mut o = sys::cucore_context_options_t::INIT;
        o.sm_resource_count = sm.len() as u32;
        o.sm_resources = if sm.is_empty() { ptr::null() } else { sm.as_ptr() };
        o.workqueue_resource_count = wq.len() as u32;
        o.workqueue_resources = if wq.is_empty() { ptr::null() } else { wq.as_ptr() };
        let mut raw = ptr::null_mut();
        // SAFETY: live handles in arrays that outlive the call, a valid out-pointer; we own the
        // reference it gives.
        check(unsafe { sys::cucore_context_create(device.as_raw(), &o, &mut raw) })?;
        Context::from_out(raw)
    }

    /// Its SM and workqueue resources (a green context's own).
    pub fn resources(&self) -> DeviceResources {
        DeviceResources::Context(self.clone())
    }
}

impl Device {
    /// The device's SM and workqueue resources (cuda.core's `Device.resources`).
    pub fn resources(&self) -> DeviceResources {
        DeviceResources::Device(self.clone())
    }

    /// A green context made of `options`' resources (cuda.core's `Device.create_context`).
    pub fn create_context(&self, options: &ContextOptions) -> Result<Context> {
        Context::create(self, options)
    }
}

impl Stream {
    /// The resources of the stream's context (cuda.core's `Stream.resources`).
    pub fn resources(&self) -> DeviceResources {
        DeviceResources::Stream(self.clone())
    }
}
