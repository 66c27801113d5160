//! CUDA graphs built node by node, their nodes, and executable graphs (`include/cucore/graph.h`;
//! cuda.core's `cuda.core.graph`).
//!
//! Three nouns, as in the C ABI and cuda.core:
//! - a [`GraphDefinition`] (a `CUgraph`): nodes and the dependencies between them, built here
//!   with the `add_*` methods or captured from a stream by a
//!   [`GraphBuilder`](crate::GraphBuilder);
//! - a [`GraphNode`] (a `CUgraphNode` of a definition), of a [`GraphNodeType`];
//! - a [`Graph`] (a `CUgraphExec`): a definition instantiated, to be launched on streams,
//!   uploaded and updated.
//!
//! ```no_run
//! use cucore::{Buffer, Device, GraphCompleteOptions, GraphDefinition, Kernel, LaunchConfig, MemcpyParams,
//!              MemsetParams, StreamOptions};
//!
//! # fn run(dev: &Device, kernel: &Kernel, a: &Buffer, b: &Buffer) -> cucore::Result<()> {
//! let stream = dev.create_stream(StreamOptions::default())?;
//! let def = GraphDefinition::create(dev)?;
//! let fill = def.add_memset(&[], &MemsetParams::new(a, 0, 4, 256))?;            // 256 zero u32s
//! let step = def.add_kernel(&[&fill], &LaunchConfig::new(1, 256), kernel, &[a, &256u32])?;
//! let copy = def.add_memcpy(&[&step], &MemcpyParams::new(b, a, 1024))?;
//! def.add_host_callback(&[&copy], || println!("the graph ran"))?;
//! let graph = def.instantiate(&GraphCompleteOptions::default())?;
//! graph.launch(&stream)?;                                                   // four nodes, one call
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```
//!
//! # Lifetimes
//!
//! Nodes name library objects, and a definition holds them: the kernels of kernel nodes (and
//! their code), the buffers of copy and fill nodes, events, child graphs, and the closures of
//! host callback nodes. Its clones, the definitions of child graph nodes made from it, every
//! [`Graph`] instantiated from them and every launch in flight hold them too; the last of these
//! to go releases them (on the library's release thread). Drop order never matters.
//!
//! Kernel arguments are bytes, copied when the node is made: a [`Buffer`](crate::Buffer) passed as a kernel
//! argument is its address, and a graph does not hold it. Keep such buffers alive (and not
//! closed) for as long as a graph that uses them may be launched, as with a launch on a stream
//! other than the buffer's deallocation stream. Memory made by allocation nodes
//! ([`GraphDefinition::add_alloc`]) is graph memory, whose address stays the same in every
//! launch: pass it to kernels as a [`DevicePointer`](crate::DevicePointer).
//!
//! # Host callbacks
//!
//! A host callback node runs a Rust closure (`FnMut() + Send + 'static`) on a driver thread each
//! time the node runs. It must not call CUDA (nor this library's functions that reach the
//! driver). The closure is dropped once, when nothing needs it any more. A panic inside it
//! cannot unwind into the driver: it is printed and the process aborts, as for
//! [`Stream::launch_host_func`](crate::Stream::launch_host_func).

use std::fmt;
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, path_c_string, Error, Result, Status};
use crate::copy_3d::{self, DstMemory, Extent3D, MemoryRegion, SrcMemory};
use crate::device::Device;
use crate::event::Event;
use crate::kernel::Kernel;
use crate::launch::{arg_arrays, with_packed_args, KernelArg, LaunchConfig};
use crate::stream::Stream;

mod host_callback;
mod node;
mod options;

pub(crate) use host_callback::hand_over;
pub use node::GraphNode;
pub(crate) use node::{array_ptr, node_ptrs};
pub(crate) use options::condition_flags;
pub use options::{
    GraphAllocInfo, GraphAllocOptions, GraphCompleteOptions, GraphCondition, GraphConditionalType,
    GraphDebugPrintOptions, GraphMemoryType, GraphNodeType, GraphUpdateError, GraphUpdateResult, MemcpyParams,
    MemsetParams, MAX_GRAPH_ALLOC_PEERS,
};

// ---- Listings ----------------------------------------------------------------------------------------

/// A wrapper of the handles that listing calls give out (+1 each).
pub(crate) trait Listed: Sized {
    /// The C handle type.
    type Raw;
    /// Takes over one handle of a successful call.
    fn wrap(raw: *mut Self::Raw) -> Result<Self>;
}

impl Listed for GraphNode {
    type Raw = sys::cucore_graph_node_t;
    fn wrap(raw: *mut sys::cucore_graph_node_t) -> Result<GraphNode> {
        GraphNode::from_out(raw)
    }
}

impl Listed for GraphDefinition {
    type Raw = sys::cucore_graph_definition_t;
    fn wrap(raw: *mut sys::cucore_graph_definition_t) -> Result<GraphDefinition> {
        GraphDefinition::from_out(raw)
    }
}

/// Wraps the first `filled` handles of `raw`; every non-NULL one is released if another fails.
fn wrap_all<W: Listed>(raw: &[*mut W::Raw]) -> Result<Vec<W>> {
    let wrapped: Vec<Result<W>> = raw.iter().map(|&r| W::wrap(r)).collect();
    wrapped.into_iter().collect()
}

/// Reads handles that a C function copies out as `(array, capacity, count)`: asks for the
/// count, then for the handles; asks again if the list grew meanwhile (another thread added
/// nodes), releasing what the short read gave.
pub(crate) fn read_handles<W, F>(mut call: F) -> Result<Vec<W>>
where
    W: Listed,
    F: FnMut(*mut *mut W::Raw, usize, *mut usize) -> sys::cucore_status_t,
{
    let mut count: usize = 0;
    check(call(ptr::null_mut(), 0, &mut count))?;
    loop {
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut raw: Vec<*mut W::Raw> = vec![ptr::null_mut(); count];
        let mut now: usize = 0;
        check(call(raw.as_mut_ptr(), count, &mut now))?;
        // Up to `count` handles are ours now, also when the list grew: wrap them to own them.
        let items = wrap_all::<W>(&raw[..now.min(count)])?;
        if now <= count {
            return Ok(items);
        }
        drop(items);
        count = now;
    }
}

// ---- GraphDefinition ---------------------------------------------------------------------------------

/// A graph definition (`cucore_graph_definition_t`, a `CUgraph`; cuda.core's
/// `GraphDefinition`): nodes and their dependencies. `Clone` adds a reference to the same
/// definition; [`GraphDefinition::clone_definition`] copies it. Two values are equal when they
/// name the same `CUgraph` ([`GraphDefinition::handle`]). See the [module documentation](self).
pub struct GraphDefinition {
    raw: NonNull<sys::cucore_graph_definition_t>,
}

handle_type!(GraphDefinition, sys::cucore_graph_definition_t);

impl PartialEq for GraphDefinition {
    /// The same `CUgraph` (a body listed twice gives two values of one definition).
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
impl Eq for GraphDefinition {}

impl std::hash::Hash for GraphDefinition {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.handle().unwrap_or(ptr::null_mut()) as usize).hash(state)
    }
}

impl GraphDefinition {
    /// An empty definition whose nodes run on `device`, in its primary context
    /// (`cucore_graph_definition_create`; cuda.core's `GraphDefinition()`).
    pub fn create(device: &Device) -> Result<GraphDefinition> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_definition_create(device.as_raw(), &mut raw) })?;
        GraphDefinition::from_out(raw)
    }

    /// The raw `CUgraph`, still owned by the definition (cuda.core's `handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_definition_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// The device whose primary context the definition's nodes run in
    /// (`cucore_graph_definition_device`).
    pub fn device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_definition_device(self.as_raw(), &mut raw) })?;
        Device::from_out(raw)
    }

    /// Whether the `CUgraph` is the definition's own (true) or a body or child graph that
    /// belongs to a node of another definition (false) (`cucore_graph_definition_is_owned`).
    pub fn is_owned(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_definition_is_owned(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// A new definition with the same nodes and dependencies (`cucore_graph_definition_clone`,
    /// `cuGraphClone`); it holds the same library objects.
    /// [`GraphNode::find_in_clone`] finds a node's copy in it. (`Clone::clone` adds a reference
    /// to this definition instead.)
    pub fn clone_definition(&self) -> Result<GraphDefinition> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_definition_clone(self.as_raw(), &mut raw) })?;
        GraphDefinition::from_out(raw)
    }

    /// Writes the definition as a Graphviz DOT file at `path`, showing what `options` ask for
    /// (`cucore_graph_definition_debug_dot_print`; cuda.core's `debug_dot_print`). A file the
    /// driver cannot write is `Status::Cuda`.
    pub fn debug_dot_print(&self, path: impl AsRef<Path>, options: &GraphDebugPrintOptions) -> Result<()> {
        let path = path_c_string(path.as_ref(), "debug_dot_print: path")?;
        // SAFETY: a live handle and a NUL-terminated path.
        check(unsafe { sys::cucore_graph_definition_debug_dot_print(self.as_raw(), path.as_ptr(), options.flags()) })
    }

    /// The definition's nodes (cuda.core's `nodes()`), in the driver's order.
    pub fn nodes(&self) -> Result<Vec<GraphNode>> {
        // SAFETY: a live handle; read_handles passes a valid array of `capacity` slots.
        read_handles(|nodes, capacity, count| unsafe {
            sys::cucore_graph_definition_nodes(self.as_raw(), nodes, capacity, count)
        })
    }

    /// The definition's edges as `(from, to)` pairs, `to` depending on `from` (cuda.core's
    /// `edges()`).
    pub fn edges(&self) -> Result<Vec<(GraphNode, GraphNode)>> {
        let call = |from: *mut *mut sys::cucore_graph_node_t,
                    to: *mut *mut sys::cucore_graph_node_t,
                    capacity: usize,
                    count: &mut usize| {
            // SAFETY: a live handle; both arrays have `capacity` slots (NULL when 0).
            unsafe { sys::cucore_graph_definition_edges(self.as_raw(), from, to, capacity, count) }
        };
        let mut count: usize = 0;
        check(call(ptr::null_mut(), ptr::null_mut(), 0, &mut count))?;
        loop {
            if count == 0 {
                return Ok(Vec::new());
            }
            let mut from = vec![ptr::null_mut(); count];
            let mut to = vec![ptr::null_mut(); count];
            let mut now: usize = 0;
            check(call(from.as_mut_ptr(), to.as_mut_ptr(), count, &mut now))?;
            let filled = now.min(count);
            // Both halves are ours: wrap both before failing on either.
            let (from, to) = (wrap_all::<GraphNode>(&from[..filled]), wrap_all::<GraphNode>(&to[..filled]));
            let edges: Vec<(GraphNode, GraphNode)> = from?.into_iter().zip(to?).collect();
            if now <= count {
                return Ok(edges);
            }
            drop(edges);
            count = now;
        }
    }

    /// Makes an executable graph of the definition with `options`
    /// (`cucore_graph_definition_instantiate`; cuda.core's `instantiate`). The graph holds what
    /// the definition holds; later changes to the definition do not reach it
    /// ([`Graph::update`] carries them).
    pub fn instantiate(&self, options: &GraphCompleteOptions<'_>) -> Result<Graph> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options (their stream borrowed for the call) and
        // out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_definition_instantiate(self.as_raw(), &o, &mut raw) })?;
        Graph::from_out(raw)
    }

    /// A condition of this definition for its conditional nodes
    /// (`cucore_graph_definition_create_condition`; cuda.core's `create_condition`):
    /// `Some(value)` sets it to `value` at the start of every launch, None keeps the value of
    /// the last launch (initially 0). `Status::NotSupported` before CUDA 12.3.
    pub fn create_condition(&self, default_value: Option<u32>) -> Result<GraphCondition> {
        let (value, flags) = condition_flags(default_value);
        let mut handle: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_definition_create_condition(self.as_raw(), value, flags, &mut handle) })?;
        Ok(GraphCondition::from_raw(handle))
    }

    /// Wraps the node of a successful add call.
    fn added(status: sys::cucore_status_t, raw: *mut sys::cucore_graph_node_t) -> Result<GraphNode> {
        check(status)?;
        GraphNode::from_out(raw)
    }

    /// A node that does nothing, after `dependencies` (a join point; cuda.core's `empty()` and
    /// `join(*nodes)`). Every `add_*` method takes the nodes the new node depends on, all of
    /// this definition (`&[]`: a root node).
    pub fn add_empty(&self, dependencies: &[&GraphNode]) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer.
        let status =
            unsafe { sys::cucore_graph_definition_add_empty(self.as_raw(), array_ptr(&deps), deps.len(), &mut raw) };
        GraphDefinition::added(status, raw)
    }

    /// A kernel node: `kernel` with `config` and `args` (cuda.core's `launch(config, kernel,
    /// *args)`). The arguments are copied now and checked as [`launch`](crate::launch()) checks
    /// them; cooperative and cluster configurations become the node's attributes. A
    /// [`GraphCondition`] is an argument like any other. Buffers among the arguments are
    /// addresses the graph does not hold (see [Lifetimes](self#lifetimes)).
    pub fn add_kernel(
        &self,
        dependencies: &[&GraphNode],
        config: &LaunchConfig,
        kernel: &Kernel,
        args: &[&dyn KernelArg],
    ) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let raw_config = config.to_raw();
        with_packed_args(args, |pointers, sizes| {
            let (a, s) = arg_arrays(pointers, sizes);
            let mut raw = ptr::null_mut();
            // SAFETY: live handles, a valid config, arrays of their stated lengths; the argument
            // bytes live for the call, which copies them.
            let status = unsafe {
                sys::cucore_graph_definition_add_kernel(
                    self.as_raw(),
                    array_ptr(&deps),
                    deps.len(),
                    &raw_config,
                    kernel.as_raw(),
                    a,
                    s,
                    pointers.len(),
                    &mut raw,
                )
            };
            GraphDefinition::added(status, raw)
        })
    }

    /// A copy node (cuda.core's `memcpy(dst, src, size)`); the definition holds both buffers.
    /// A range outside a buffer is `Status::InvalidArgument`, a closed buffer
    /// `Status::InvalidState`.
    pub fn add_memcpy(&self, dependencies: &[&GraphNode], params: &MemcpyParams<'_>) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer; the
        // library checks the ranges against the buffers.
        let status = unsafe {
            sys::cucore_graph_definition_add_memcpy(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                params.dst.as_raw(),
                params.dst_offset,
                params.src.as_raw(),
                params.src_offset,
                params.size,
                &mut raw,
            )
        };
        GraphDefinition::added(status, raw)
    }

    /// A strided 2D/3D copy node between buffers, described as for
    /// [`copy_3d`](crate::copy_3d()); the definition holds the buffers. Host sides are refused
    /// (`Status::InvalidArgument`): the graph would read or write them at every launch, long
    /// after this borrow ends; [`GraphDefinition::add_memcpy_3d_host`] takes them, `unsafe`.
    pub fn add_memcpy_3d(
        &self,
        dependencies: &[&GraphNode],
        dst: MemoryRegion<DstMemory<'_>>,
        src: MemoryRegion<SrcMemory<'_>>,
        extent: Extent3D,
    ) -> Result<GraphNode> {
        let host_side = matches!(dst.memory, DstMemory::Host(_)) || matches!(src.memory, SrcMemory::Host(_));
        if host_side {
            return Err(Error::binding(
                Status::InvalidArgument,
                "add_memcpy_3d: a host side would be used at every launch of the graph, after this borrow \
                 ends; use the unsafe add_memcpy_3d_host"
                    .to_string(),
            ));
        }
        // SAFETY: buffer sides only, which the library checks and the definition holds.
        unsafe { self.add_memcpy_3d_host(dependencies, dst, src, extent) }
    }

    /// [`GraphDefinition::add_memcpy_3d`] with host sides allowed (each checked against its
    /// slice, as [`copy_3d`](crate::copy_3d()) does).
    ///
    /// # Safety
    /// Every launch of a graph made from this definition (or its clones, or a definition that
    /// embeds it) reads a host source and writes a host destination: their memory must stay
    /// allocated until the last such graph is gone, a source unchanged and a destination
    /// untouched by anything else while a launch may run.
    pub unsafe fn add_memcpy_3d_host(
        &self,
        dependencies: &[&GraphNode],
        mut dst: MemoryRegion<DstMemory<'_>>,
        src: MemoryRegion<SrcMemory<'_>>,
        extent: Extent3D,
    ) -> Result<GraphNode> {
        let (copy, _) = copy_3d::prepare(&mut dst, &src, extent)?;
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, a valid copy description whose host sides were checked and
        // are the caller's to keep alive, a valid out-pointer.
        let status = unsafe {
            sys::cucore_graph_definition_add_memcpy_3d(self.as_raw(), array_ptr(&deps), deps.len(), &copy, &mut raw)
        };
        GraphDefinition::added(status, raw)
    }

    /// A fill node (cuda.core's `memset(dst, value, width, height, pitch)`); the definition
    /// holds the buffer. A bad element size, a value wider than the element, a pitch below the
    /// row and a range outside the buffer are `Status::InvalidArgument`.
    pub fn add_memset(&self, dependencies: &[&GraphNode], params: &MemsetParams<'_>) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer; the
        // library checks the range against the buffer.
        let status = unsafe {
            sys::cucore_graph_definition_add_memset(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                params.buffer.as_raw(),
                params.offset,
                params.value,
                params.element_size,
                params.width,
                params.height,
                params.pitch,
                &mut raw,
            )
        };
        GraphDefinition::added(status, raw)
    }

    /// A host callback node running `callback` each time the node runs (cuda.core's
    /// `callback(fn)`), on a driver thread; see [Host callbacks](self#host-callbacks). The
    /// closure is dropped once, when the definition, its copies and graphs no longer need it
    /// (at once when this fails).
    pub fn add_host_callback<F>(&self, dependencies: &[&GraphNode], callback: F) -> Result<GraphNode>
    where
        F: FnMut() + Send + 'static,
    {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        hand_over(callback, |f, data, release| {
            // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer;
            // hand_over's trampolines fit its user data.
            unsafe {
                sys::cucore_graph_definition_add_host_callback(
                    self.as_raw(),
                    array_ptr(&deps),
                    deps.len(),
                    f,
                    data,
                    release,
                    &mut raw,
                )
            }
        })?;
        GraphNode::from_out(raw)
    }

    /// A node that records `event` (cuda.core's `record(event)`); the definition holds it.
    pub fn add_event_record(&self, dependencies: &[&GraphNode], event: &Event) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer.
        let status = unsafe {
            sys::cucore_graph_definition_add_event_record(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                event.as_raw(),
                &mut raw,
            )
        };
        GraphDefinition::added(status, raw)
    }

    /// A node that waits for `event` (cuda.core's `wait(event)`); the definition holds it.
    pub fn add_event_wait(&self, dependencies: &[&GraphNode], event: &Event) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer.
        let status = unsafe {
            sys::cucore_graph_definition_add_event_wait(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                event.as_raw(),
                &mut raw,
            )
        };
        GraphDefinition::added(status, raw)
    }

    /// A node that runs a copy of `child`, taken now (cuda.core's `embed(child)`): later changes
    /// to `child` do not reach it; [`GraphNode::bodies`] gives the copy. It holds what `child`
    /// holds. The definition itself is `Status::InvalidArgument`; a child with allocation nodes
    /// is refused by the driver (`Status::Cuda`).
    pub fn add_child_graph(&self, dependencies: &[&GraphNode], child: &GraphDefinition) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer.
        let status = unsafe {
            sys::cucore_graph_definition_add_child_graph(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                child.as_raw(),
                &mut raw,
            )
        };
        GraphDefinition::added(status, raw)
    }

    /// An allocation node of `size` bytes (> 0) with `options` (cuda.core's `allocate`), and the
    /// address its memory has in every launch. The memory lives from this node until a free
    /// node frees it ([`GraphDefinition::add_free`], in this graph or a later one), or until the
    /// graph's next launch with [`GraphCompleteOptions::auto_free_on_launch`].
    pub fn add_alloc(
        &self,
        dependencies: &[&GraphNode],
        size: u64,
        options: &GraphAllocOptions,
    ) -> Result<(GraphNode, u64)> {
        let o = options.to_raw()?;
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        let mut address: u64 = 0;
        // SAFETY: live handles, an array of `deps.len()` handles, valid options and
        // out-pointers.
        let status = unsafe {
            sys::cucore_graph_definition_add_alloc(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                size,
                &o,
                &mut raw,
                &mut address,
            )
        };
        Ok((GraphDefinition::added(status, raw)?, address))
    }

    /// A node that frees `address`, graph memory of an allocation node (of this definition or
    /// of a graph launched before) (cuda.core's `deallocate`). Address 0 is
    /// `Status::InvalidArgument`; memory that is not graph memory is refused by the driver.
    pub fn add_free(&self, dependencies: &[&GraphNode], address: u64) -> Result<GraphNode> {
        let deps = node_ptrs(dependencies);
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, a valid out-pointer; the
        // driver checks that the address is graph memory.
        let status = unsafe {
            sys::cucore_graph_definition_add_free(self.as_raw(), array_ptr(&deps), deps.len(), address, &mut raw)
        };
        GraphDefinition::added(status, raw)
    }

    /// A conditional node of `conditional_type` on `condition` (made by this definition's
    /// [`create_condition`](GraphDefinition::create_condition)) with `body_count` bodies: `If`
    /// 1 (then) or 2 (then, else), `While` 1, `Switch` at least 1 (cuda.core's `if_then`,
    /// `if_else`, `while_loop`, `switch`). Each body is an empty definition that belongs to the
    /// node: add its nodes with these same methods. A count the type does not allow is
    /// `Status::InvalidArgument`; a driver without conditional nodes (or, before CUDA 12.8,
    /// without else branches and switches) `Status::NotSupported`.
    pub fn add_conditional(
        &self,
        dependencies: &[&GraphNode],
        condition: GraphCondition,
        conditional_type: GraphConditionalType,
        body_count: usize,
    ) -> Result<(GraphNode, Vec<GraphDefinition>)> {
        let deps = node_ptrs(dependencies);
        let mut bodies: Vec<*mut sys::cucore_graph_definition_t> = vec![ptr::null_mut(); body_count];
        let mut raw = ptr::null_mut();
        // SAFETY: live handles, an array of `deps.len()` handles, an array of `body_count`
        // slots (NULL when 0), a valid out-pointer; we own the references they get.
        let status = unsafe {
            sys::cucore_graph_definition_add_conditional(
                self.as_raw(),
                array_ptr(&deps),
                deps.len(),
                condition.handle(),
                conditional_type.raw(),
                body_count,
                if body_count == 0 { ptr::null_mut() } else { bodies.as_mut_ptr() },
                &mut raw,
            )
        };
        check(status)?;
        let bodies = wrap_all::<GraphDefinition>(&bodies);
        let node = GraphNode::from_out(raw)?;
        Ok((node, bodies?))
    }
}

impl fmt::Debug for GraphDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "GraphDefinition({:p})", h),
            Err(_) => write!(f, "GraphDefinition(<library handle {:p}>)", self.as_raw()),
        }
    }
}

impl Device {
    /// An empty graph definition whose nodes run on this device ([`GraphDefinition::create`]).
    pub fn create_graph_definition(&self) -> Result<GraphDefinition> {
        GraphDefinition::create(self)
    }
}

// ---- Graph -------------------------------------------------------------------------------------------

/// An executable graph (`cucore_graph_t`, a `CUgraphExec`; cuda.core's `Graph`): a definition
/// instantiated ([`GraphDefinition::instantiate`], [`GraphBuilder::complete`](crate::GraphBuilder::complete)),
/// launched on streams. It holds what its definition held; dropping it while launches run is
/// fine (they finish first, holding what they use). `Clone` adds a reference.
pub struct Graph {
    raw: NonNull<sys::cucore_graph_t>,
}

handle_type!(Graph, sys::cucore_graph_t);
identity_eq!(Graph);

impl Graph {
    /// The raw `CUgraphExec` (cuda.core's `Graph.handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// Launches the graph on `stream`, after the work queued there (`cucore_graph_launch`,
    /// one `cuGraphLaunch`; cuda.core's `Graph.launch`). A stream of another device is
    /// `Status::InvalidArgument`.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_launch(self.as_raw(), stream.as_raw()) })
    }

    /// Uploads the graph's device work on `stream` ahead of a launch (`cucore_graph_upload`;
    /// cuda.core's `Graph.upload`).
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_upload(self.as_raw(), stream.as_raw()) })
    }

    /// Updates the graph in place from `definition`, which must have the graph's topology
    /// (`cucore_graph_update`, `cuGraphExecUpdate`; cuda.core's `Graph.update`): the next
    /// launch runs the definition's parameters. A refusal is a [`GraphUpdateError`] with
    /// `Status::InvalidState` and the driver's [`GraphUpdateResult`] (e.g. `TopologyChanged`);
    /// its message names the result and the failing node's kind. On success the graph holds
    /// what `definition` holds.
    pub fn update(&self, definition: &GraphDefinition) -> std::result::Result<(), GraphUpdateError> {
        let mut result: sys::cucore_graph_update_result_t = sys::CUCORE_GRAPH_UPDATE_ERROR;
        // SAFETY: live handles and a valid out-pointer.
        let status = unsafe { sys::cucore_graph_update(self.as_raw(), definition.as_raw(), &mut result) };
        check(status).map_err(|error| GraphUpdateError { error, result: GraphUpdateResult::from_raw(result) })
    }

    /// Replaces the kernel (None: keeps it), configuration and arguments of `node` (a kernel
    /// node of the definition the graph was made from) in this graph only
    /// (`cucore_graph_set_kernel_node`); the definition is not changed. Checked as
    /// [`GraphNode::set_kernel`]; a change the driver cannot make in place is `Status::Cuda`.
    pub fn set_kernel_node(
        &self,
        node: &GraphNode,
        config: &LaunchConfig,
        kernel: Option<&Kernel>,
        args: &[&dyn KernelArg],
    ) -> Result<()> {
        let raw = config.to_raw();
        let kernel = kernel.map_or(ptr::null_mut(), |k| k.as_raw());
        with_packed_args(args, |pointers, sizes| {
            let (a, s) = arg_arrays(pointers, sizes);
            // SAFETY: live handles, a valid config; the argument bytes live for the call, which
            // copies them.
            check(unsafe {
                sys::cucore_graph_set_kernel_node(self.as_raw(), node.as_raw(), &raw, kernel, a, s, pointers.len())
            })
        })
    }

    /// Replaces the copy of `node` (a copy node of the definition) in this graph only
    /// (`cucore_graph_set_memcpy_node`).
    pub fn set_memcpy_node(&self, node: &GraphNode, params: &MemcpyParams<'_>) -> Result<()> {
        // SAFETY: live handles; the library checks the ranges against the buffers.
        check(unsafe {
            sys::cucore_graph_set_memcpy_node(
                self.as_raw(),
                node.as_raw(),
                params.dst.as_raw(),
                params.dst_offset,
                params.src.as_raw(),
                params.src_offset,
                params.size,
            )
        })
    }

    /// Replaces the fill of `node` (a fill node of the definition) in this graph only
    /// (`cucore_graph_set_memset_node`).
    pub fn set_memset_node(&self, node: &GraphNode, params: &MemsetParams<'_>) -> Result<()> {
        // SAFETY: live handles; the library checks the range against the buffer.
        check(unsafe {
            sys::cucore_graph_set_memset_node(
                self.as_raw(),
                node.as_raw(),
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

    /// Replaces the closure of `node` (a host callback node of the definition) in this graph
    /// only (`cucore_graph_set_host_callback_node`), as
    /// [`GraphDefinition::add_host_callback`] takes it.
    pub fn set_host_callback_node<F>(&self, node: &GraphNode, callback: F) -> Result<()>
    where
        F: FnMut() + Send + 'static,
    {
        hand_over(callback, |f, data, release| {
            // SAFETY: live handles; hand_over's trampolines fit its user data.
            unsafe { sys::cucore_graph_set_host_callback_node(self.as_raw(), node.as_raw(), f, data, release) }
        })
    }

    /// Makes `node` (an event record or wait node of the definition) record (wait for) `event`
    /// in this graph's later launches only (`cucore_graph_set_event_node`; cuda.core's
    /// `graph[node].update(event)`). The graph holds `event` from here.
    pub fn set_event_node(&self, node: &GraphNode, event: &Event) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_set_event_node(self.as_raw(), node.as_raw(), event.as_raw()) })
    }

    /// Gives the nodes of `node` (a child graph node of the definition) the parameters of
    /// `child`'s nodes in this graph's later launches (`cucore_graph_set_child_graph_node`;
    /// cuda.core's `graph[node].update(child)`). `child` must have the topology of the node's
    /// graph (the driver refuses another: `Status::Cuda`); the graph holds what it holds.
    pub fn set_child_graph_node(&self, node: &GraphNode, child: &GraphDefinition) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_set_child_graph_node(self.as_raw(), node.as_raw(), child.as_raw()) })
    }

    /// Enables or disables `node` (a kernel, copy or fill node of the definition) in this graph
    /// (`cucore_graph_set_node_enabled`): a disabled node does nothing when the graph runs, and
    /// its dependents still wait for it. Other kinds are `Status::InvalidArgument`.
    pub fn set_node_enabled(&self, node: &GraphNode, enabled: bool) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_set_node_enabled(self.as_raw(), node.as_raw(), enabled as c_int) })
    }

    /// Whether `node` is enabled in this graph (`cucore_graph_node_enabled`).
    pub fn node_enabled(&self, node: &GraphNode) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_graph_node_enabled(self.as_raw(), node.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "Graph({:p})", h),
            Err(_) => write!(f, "Graph(<library handle {:p}>)", self.as_raw()),
        }
    }
}
