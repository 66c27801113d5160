//! The nodes of a graph definition (`cucore_graph_node_t`; cuda.core's `GraphNode`): their
//! kind, edges, parameters (read and replaced), bodies, and removal. Part of [`graph`](super),
//! which exports every name.

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{check, Result};
use crate::event::Event;
use crate::kernel::Kernel;
use crate::launch::{arg_arrays, with_packed_args, KernelArg, LaunchConfig};

use super::host_callback::hand_over;
use super::options::{GraphAllocInfo, GraphNodeType, MemcpyParams, MemsetParams};
use super::{read_handles, GraphDefinition};

/// A node of a [`GraphDefinition`] (`cucore_graph_node_t`; cuda.core's `GraphNode`). It holds
/// its definition. The definition's listings ([`GraphDefinition::nodes`],
/// [`GraphNode::dependencies`], ...) give new values each time: two values are equal (`==`,
/// and hash alike) when they name the same driver node ([`GraphNode::handle`]). After
/// [`GraphNode::destroy`] every value naming the node fails with `Status::InvalidState` (and
/// equals only its own clones).
pub struct GraphNode {
    raw: NonNull<sys::cucore_graph_node_t>,
}

handle_type!(GraphNode, sys::cucore_graph_node_t);

impl PartialEq for GraphNode {
    /// The same driver node (or the same library handle, for destroyed nodes).
    fn eq(&self, other: &Self) -> bool {
        if self.raw == other.raw {
            return true;
        }
        match (self.handle(), other.handle()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for GraphNode {}

impl std::hash::Hash for GraphNode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Destroyed nodes all hash alike; they equal only values of the same library handle.
        (self.handle().unwrap_or(ptr::null_mut()) as usize).hash(state)
    }
}

/// Raw handles of `nodes` for a C call's `(dependencies, dependency_count)`.
pub(crate) fn node_ptrs(nodes: &[&GraphNode]) -> Vec<*mut sys::cucore_graph_node_t> {
    nodes.iter().map(|n| n.as_raw()).collect()
}

/// The array a C call takes for a possibly empty list (NULL when empty).
pub(crate) fn array_ptr<T>(items: &[*mut T]) -> *const *mut T {
    if items.is_empty() {
        ptr::null()
    } else {
        items.as_ptr()
    }
}

impl GraphNode {
    /// The raw `CUgraphNode` (cuda.core's `GraphNode.handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_node_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// The node's kind (cuda.core's `GraphNode.type`).
    pub fn node_type(&self) -> Result<GraphNodeType> {
        let mut t: sys::cucore_graph_node_type_t = sys::CUCORE_GRAPH_NODE_UNSET;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_node_type(self.as_raw(), &mut t) })?;
        Ok(GraphNodeType::from_raw(t))
    }

    /// The definition the node belongs to (cuda.core's `GraphNode.graph`).
    pub fn definition(&self) -> Result<GraphDefinition> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_node_definition(self.as_raw(), &mut raw) })?;
        GraphDefinition::from_out(raw)
    }

    /// The nodes this node depends on (cuda.core's `GraphNode.pred`).
    pub fn dependencies(&self) -> Result<Vec<GraphNode>> {
        // SAFETY: a live handle; read_handles passes a valid array of `capacity` slots.
        read_handles(|nodes, capacity, count| unsafe {
            sys::cucore_graph_node_dependencies(self.as_raw(), nodes, capacity, count)
        })
    }

    /// The nodes that depend on this node (cuda.core's `GraphNode.succ`).
    pub fn dependents(&self) -> Result<Vec<GraphNode>> {
        // SAFETY: as in `dependencies`.
        read_handles(|nodes, capacity, count| unsafe {
            sys::cucore_graph_node_dependents(self.as_raw(), nodes, capacity, count)
        })
    }

    /// Makes `to` depend on this node (`cucore_graph_node_add_dependent`). Both must be of one
    /// definition (else `Status::InvalidArgument`); an edge that exists already is a driver
    /// error (`Status::Cuda`).
    pub fn add_dependent(&self, to: &GraphNode) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_node_add_dependent(self.as_raw(), to.as_raw()) })
    }

    /// Removes the edge that makes `to` depend on this node
    /// (`cucore_graph_node_remove_dependent`); one that does not exist is `Status::Cuda`.
    pub fn remove_dependent(&self, to: &GraphNode) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_node_remove_dependent(self.as_raw(), to.as_raw()) })
    }

    /// Removes the node and its edges from its definition (`cucore_graph_node_destroy`;
    /// cuda.core's `GraphNode.destroy()`). Every value naming the node then fails with
    /// `Status::InvalidState` (dropping them is fine); destroying it again too.
    pub fn destroy(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_graph_node_destroy(self.as_raw()) })
    }

    /// The node of `clone` (made by [`GraphDefinition::clone_definition`] of this node's
    /// definition) that was made from this node (`cucore_graph_node_find_in_clone`).
    pub fn find_in_clone(&self, clone: &GraphDefinition) -> Result<GraphNode> {
        let mut raw = ptr::null_mut();
        // SAFETY: live handles and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_node_find_in_clone(self.as_raw(), clone.as_raw(), &mut raw) })?;
        GraphNode::from_out(raw)
    }

    /// A kernel node's launch configuration and kernel (None for nodes of foreign code)
    /// (`cucore_graph_node_kernel_config`; cuda.core's `KernelNode.config` and `.kernel`).
    /// `Status::InvalidArgument` for other kinds of nodes.
    pub fn kernel_config(&self) -> Result<(LaunchConfig, Option<Kernel>)> {
        let mut config = sys::cucore_launch_config_t::INIT;
        let mut kernel = ptr::null_mut();
        // SAFETY: a live handle and valid out-pointers; we own the kernel reference it gives.
        check(unsafe { sys::cucore_graph_node_kernel_config(self.as_raw(), &mut config, &mut kernel) })?;
        // SAFETY: a live kernel handle whose reference the call gave us, if any.
        let kernel = NonNull::new(kernel).map(|k| unsafe { Kernel::adopt(k.as_ptr()) });
        Ok((LaunchConfig::from_raw(&config), kernel))
    }

    /// Replaces a kernel node's kernel (None: keeps it), configuration and arguments
    /// (`cucore_graph_node_set_kernel`), checked as
    /// [`GraphDefinition::add_kernel`] checks them. Graphs instantiated before are unchanged:
    /// [`Graph::update`](crate::Graph::update) or [`Graph::set_kernel_node`](crate::Graph::set_kernel_node)
    /// carry the change to them.
    pub fn set_kernel(&self, config: &LaunchConfig, kernel: Option<&Kernel>, args: &[&dyn KernelArg]) -> Result<()> {
        let raw = config.to_raw();
        let kernel = kernel.map_or(ptr::null_mut(), |k| k.as_raw());
        with_packed_args(args, |pointers, sizes| {
            let (a, s) = arg_arrays(pointers, sizes);
            // SAFETY: live handles, a valid config; the argument bytes live for the call, which
            // copies them.
            check(unsafe { sys::cucore_graph_node_set_kernel(self.as_raw(), &raw, kernel, a, s, pointers.len()) })
        })
    }

    /// Replaces a copy node's copy (`cucore_graph_node_set_memcpy`), checked as
    /// [`GraphDefinition::add_memcpy`] checks it.
    pub fn set_memcpy(&self, params: &MemcpyParams<'_>) -> Result<()> {
        // SAFETY: live handles; the library checks the ranges against the buffers.
        check(unsafe {
            sys::cucore_graph_node_set_memcpy(
                self.as_raw(),
                params.dst.as_raw(),
                params.dst_offset,
                params.src.as_raw(),
                params.src_offset,
                params.size,
            )
        })
    }

    /// Replaces a fill node's fill (`cucore_graph_node_set_memset`), checked as
    /// [`GraphDefinition::add_memset`] checks it.
    pub fn set_memset(&self, params: &MemsetParams<'_>) -> Result<()> {
        // SAFETY: a live handle; the library checks the range against the buffer.
        check(unsafe {
            sys::cucore_graph_node_set_memset(
                self.as_raw(),
                params.buffer.as_raw(),
                params.offset,
                params.value,
                params.element_size,
                params.width,
                params.height,
                params.pitch,
            )
        })
    }

    /// Replaces a host callback node's closure (`cucore_graph_node_set_host_callback`), as
    /// [`GraphDefinition::add_host_callback`] takes it; the previous closure is dropped once
    /// nothing needs it any more.
    pub fn set_host_callback<F>(&self, callback: F) -> Result<()>
    where
        F: FnMut() + Send + 'static,
    {
        hand_over(callback, |f, data, release| {
            // SAFETY: a live handle; hand_over's trampolines fit its user data.
            unsafe { sys::cucore_graph_node_set_host_callback(self.as_raw(), f, data, release) }
        })
    }

    /// Makes an event record (wait) node record (wait for) `event` instead
    /// (`cucore_graph_node_set_event`; cuda.core's `EventRecordNode.update` and
    /// `EventWaitNode.update`). The definition holds `event` from here; other kinds of node are
    /// `Status::InvalidArgument`.
    pub fn set_event(&self, event: &Event) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_node_set_event(self.as_raw(), event.as_raw()) })
    }

    /// Replaces a child graph node's graph with a copy of `child`
    /// (`cucore_graph_node_set_child_graph`; cuda.core's `ChildGraphNode.update`). `child` must
    /// be of another graph hierarchy than the node (a clone, say): the node's own definition or
    /// graph is `Status::InvalidArgument`, as is another kind of node. The node's old graph goes:
    /// definitions of it from [`bodies`](Self::bodies) and its nodes are `Status::InvalidState`
    /// afterwards.
    pub fn set_child_graph(&self, child: &GraphDefinition) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_node_set_child_graph(self.as_raw(), child.as_raw()) })
    }

    /// An allocation node's memory: its address in every launch and its size
    /// (`cucore_graph_node_alloc_info`; cuda.core's `AllocNode.dptr` and `.bytesize`).
    pub fn alloc_info(&self) -> Result<GraphAllocInfo> {
        let (mut address, mut size) = (0u64, 0u64);
        // SAFETY: a live handle and valid out-pointers.
        check(unsafe { sys::cucore_graph_node_alloc_info(self.as_raw(), &mut address, &mut size) })?;
        Ok(GraphAllocInfo { address, size })
    }

    /// A conditional node's bodies (then and else, the loop's body, the switch's cases), or a
    /// child graph node's graph (one body) (`cucore_graph_node_bodies`; cuda.core's
    /// `ConditionalNode.branches` and `ChildGraphNode.child_graph`). Each belongs to the node:
    /// add nodes to it as to any definition.
    pub fn bodies(&self) -> Result<Vec<GraphDefinition>> {
        // SAFETY: a live handle; read_handles passes a valid array of `capacity` slots.
        read_handles(|bodies, capacity, count| unsafe {
            sys::cucore_graph_node_bodies(self.as_raw(), bodies, capacity, count)
        })
    }
}

impl fmt::Debug for GraphNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.node_type(), self.handle()) {
            (Ok(t), Ok(h)) => write!(f, "GraphNode({:?}, {:p})", t, h),
            _ => write!(f, "GraphNode(<library handle {:p}>)", self.as_raw()),
        }
    }
}
