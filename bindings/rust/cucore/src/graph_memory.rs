//! The memory of graph allocations (`include/cucore/graph_memory.h`; cuda.core's
//! `GraphMemoryResource`).
//!
//! Graph allocations come from a reserve the driver keeps for graphs on each device. A
//! [`GraphMemoryResource`] allocates from it while a stream is being captured: each
//! [`allocate`](crate::MemoryResource::allocate) on a [`GraphBuilder`](crate::GraphBuilder)'s
//! stream becomes an allocation node, and the buffer's release on a capturing stream a free
//! node. Outside a capture it cannot allocate (`Status::InvalidState`). It reports the reserve
//! ([`GraphMemoryResource::attribute`]) and gives unused memory back
//! ([`GraphMemoryResource::trim`]).
//!
//! A `GraphMemoryResource` is a [`MemoryResource`] of kind
//! [`MemoryResourceKind::Graph`]: it derefs to one, converts
//! into one (`.into()`), and one of that kind converts back (`try_from`).

use std::fmt;
use std::ops::Deref;
use std::ptr;

use cucore_sys as sys;

use crate::common::{check, Error, Result, Status};
use crate::device::Device;
use crate::memory_resource::{MemoryResource, MemoryResourceKind};

/// The attributes of a device's graph memory (`cucore_graph_memory_attribute_t`, the driver's
/// `CUgraphMem_attribute`; cuda.core's `GraphMemoryResource.attributes`), in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphMemoryAttribute {
    /// Memory graphs use now.
    UsedCurrent,
    /// The most graphs used since the last reset.
    UsedHigh,
    /// Memory reserved for graphs now.
    ReservedCurrent,
    /// The most reserved since the last reset.
    ReservedHigh,
}

impl GraphMemoryAttribute {
    /// The raw `cucore_graph_memory_attribute_t`.
    pub fn raw(self) -> sys::cucore_graph_memory_attribute_t {
        match self {
            GraphMemoryAttribute::UsedCurrent => sys::CUCORE_GRAPH_MEMORY_USED_CURRENT,
            GraphMemoryAttribute::UsedHigh => sys::CUCORE_GRAPH_MEMORY_USED_HIGH,
            GraphMemoryAttribute::ReservedCurrent => sys::CUCORE_GRAPH_MEMORY_RESERVED_CURRENT,
            GraphMemoryAttribute::ReservedHigh => sys::CUCORE_GRAPH_MEMORY_RESERVED_HIGH,
        }
    }
}

/// A memory resource for allocations inside graphs (a [`MemoryResource`] of kind
/// [`MemoryResourceKind::Graph`]; cuda.core's `GraphMemoryResource`). `Clone` adds a reference.
/// See the [module documentation](self).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GraphMemoryResource {
    resource: MemoryResource,
}

impl GraphMemoryResource {
    /// The graph memory resource of `device` (`cucore_graph_memory_resource_create`;
    /// cuda.core's `GraphMemoryResource(device)`).
    pub fn create(device: &Device) -> Result<GraphMemoryResource> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_memory_resource_create(device.as_raw(), &mut raw) })?;
        Ok(GraphMemoryResource { resource: MemoryResource::from_out(raw)? })
    }

    /// An attribute of the graph memory of the resource's device, in bytes
    /// (`cucore_graph_memory_resource_attribute`).
    pub fn attribute(&self, attribute: GraphMemoryAttribute) -> Result<u64> {
        let mut value: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_memory_resource_attribute(self.as_raw(), attribute.raw(), &mut value) })?;
        Ok(value)
    }

    /// Resets a high-water mark ([`GraphMemoryAttribute::UsedHigh`] or
    /// [`GraphMemoryAttribute::ReservedHigh`]) to the current value
    /// (`cucore_graph_memory_resource_reset_attribute`); the others are
    /// `Status::InvalidArgument`.
    pub fn reset_attribute(&self, attribute: GraphMemoryAttribute) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_graph_memory_resource_reset_attribute(self.as_raw(), attribute.raw()) })
    }

    /// Gives the device's unused graph memory back to the system (`cucore_memory_resource_trim`,
    /// `cuDeviceGraphMemTrim`; cuda.core's `trim()`).
    pub fn trim(&self) -> Result<()> {
        self.resource.trim(0)
    }

    /// The resource as a [`MemoryResource`], borrowed.
    pub fn as_memory_resource(&self) -> &MemoryResource {
        &self.resource
    }

    /// The resource as a [`MemoryResource`] (the same reference).
    pub fn into_memory_resource(self) -> MemoryResource {
        self.resource
    }
}

impl Deref for GraphMemoryResource {
    type Target = MemoryResource;
    fn deref(&self) -> &MemoryResource {
        &self.resource
    }
}

impl From<GraphMemoryResource> for MemoryResource {
    fn from(resource: GraphMemoryResource) -> MemoryResource {
        resource.resource
    }
}

impl TryFrom<MemoryResource> for GraphMemoryResource {
    type Error = Error;

    /// The resource, when it is of kind [`MemoryResourceKind::Graph`]; else
    /// `Status::InvalidArgument` naming its kind.
    fn try_from(resource: MemoryResource) -> Result<GraphMemoryResource> {
        match resource.kind()? {
            MemoryResourceKind::Graph => Ok(GraphMemoryResource { resource }),
            other => Err(Error::binding(
                Status::InvalidArgument,
                format!("GraphMemoryResource: the resource is of kind {:?}, not Graph", other),
            )),
        }
    }
}

impl fmt::Debug for GraphMemoryResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.resource.device_id() {
            Ok(Some(id)) => write!(f, "GraphMemoryResource(device {})", id),
            _ => write!(f, "GraphMemoryResource(<library handle {:p}>)", self.resource.as_raw()),
        }
    }
}
