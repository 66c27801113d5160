//! The values graphs are described with: node kinds, conditions and conditional kinds, the
//! options of instantiation, allocation nodes and DOT output, the parameters of copy and fill
//! nodes, and the outcome of a whole-graph update (`cucore_graph_node_type_t`,
//! `cucore_graph_conditional_type_t`, `cucore_graph_complete_options_t`,
//! `cucore_graph_alloc_options_t`, `cucore_graph_dot_flag_t`, `cucore_graph_update_result_t`).
//! Part of [`graph`](super), which exports every name.

use std::fmt;

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{Error, Result, Status};
use crate::launch::DeviceRepr;
use crate::stream::Stream;

// ---- Node kinds ------------------------------------------------------------------------------------

/// A node's kind (`cucore_graph_node_type_t`, the driver's `CUgraphNodeType`; cuda.core's
/// `GraphNode` subclasses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphNodeType {
    /// Runs a kernel ([`GraphDefinition::add_kernel`](crate::GraphDefinition::add_kernel)).
    Kernel,
    /// Copies memory (1D or 3D).
    Memcpy,
    /// Fills memory.
    Memset,
    /// Runs a host callback.
    HostCallback,
    /// Runs a copy of another graph.
    ChildGraph,
    /// Does nothing (a join point).
    Empty,
    /// Waits for an event.
    EventWait,
    /// Records an event.
    EventRecord,
    /// Signals external semaphores (made by foreign code).
    ExternalSemaphoreSignal,
    /// Waits for external semaphores (made by foreign code).
    ExternalSemaphoreWait,
    /// Allocates graph memory.
    Alloc,
    /// Frees graph memory.
    Free,
    /// A batch of memory operations (made by foreign code).
    BatchMemOp,
    /// Runs its bodies on a [`GraphCondition`]: if, while or switch.
    Conditional,
    /// A value this binding does not know (a newer library), or `CUCORE_GRAPH_NODE_UNSET`.
    Unknown(i32),
}

impl GraphNodeType {
    /// The kind of a raw `cucore_graph_node_type_t`.
    pub fn from_raw(raw: sys::cucore_graph_node_type_t) -> GraphNodeType {
        match raw {
            sys::CUCORE_GRAPH_NODE_KERNEL => GraphNodeType::Kernel,
            sys::CUCORE_GRAPH_NODE_MEMCPY => GraphNodeType::Memcpy,
            sys::CUCORE_GRAPH_NODE_MEMSET => GraphNodeType::Memset,
            sys::CUCORE_GRAPH_NODE_HOST_CALLBACK => GraphNodeType::HostCallback,
            sys::CUCORE_GRAPH_NODE_CHILD_GRAPH => GraphNodeType::ChildGraph,
            sys::CUCORE_GRAPH_NODE_EMPTY => GraphNodeType::Empty,
            sys::CUCORE_GRAPH_NODE_EVENT_WAIT => GraphNodeType::EventWait,
            sys::CUCORE_GRAPH_NODE_EVENT_RECORD => GraphNodeType::EventRecord,
            sys::CUCORE_GRAPH_NODE_EXTERNAL_SEMAPHORE_SIGNAL => GraphNodeType::ExternalSemaphoreSignal,
            sys::CUCORE_GRAPH_NODE_EXTERNAL_SEMAPHORE_WAIT => GraphNodeType::ExternalSemaphoreWait,
            sys::CUCORE_GRAPH_NODE_ALLOC => GraphNodeType::Alloc,
            sys::CUCORE_GRAPH_NODE_FREE => GraphNodeType::Free,
            sys::CUCORE_GRAPH_NODE_BATCH_MEM_OP => GraphNodeType::BatchMemOp,
            sys::CUCORE_GRAPH_NODE_CONDITIONAL => GraphNodeType::Conditional,
            other => GraphNodeType::Unknown(other),
        }
    }

    /// The raw `cucore_graph_node_type_t`.
    pub fn raw(self) -> sys::cucore_graph_node_type_t {
        match self {
            GraphNodeType::Kernel => sys::CUCORE_GRAPH_NODE_KERNEL,
            GraphNodeType::Memcpy => sys::CUCORE_GRAPH_NODE_MEMCPY,
            GraphNodeType::Memset => sys::CUCORE_GRAPH_NODE_MEMSET,
            GraphNodeType::HostCallback => sys::CUCORE_GRAPH_NODE_HOST_CALLBACK,
            GraphNodeType::ChildGraph => sys::CUCORE_GRAPH_NODE_CHILD_GRAPH,
            GraphNodeType::Empty => sys::CUCORE_GRAPH_NODE_EMPTY,
            GraphNodeType::EventWait => sys::CUCORE_GRAPH_NODE_EVENT_WAIT,
            GraphNodeType::EventRecord => sys::CUCORE_GRAPH_NODE_EVENT_RECORD,
            GraphNodeType::ExternalSemaphoreSignal => sys::CUCORE_GRAPH_NODE_EXTERNAL_SEMAPHORE_SIGNAL,
            GraphNodeType::ExternalSemaphoreWait => sys::CUCORE_GRAPH_NODE_EXTERNAL_SEMAPHORE_WAIT,
            GraphNodeType::Alloc => sys::CUCORE_GRAPH_NODE_ALLOC,
            GraphNodeType::Free => sys::CUCORE_GRAPH_NODE_FREE,
            GraphNodeType::BatchMemOp => sys::CUCORE_GRAPH_NODE_BATCH_MEM_OP,
            GraphNodeType::Conditional => sys::CUCORE_GRAPH_NODE_CONDITIONAL,
            GraphNodeType::Unknown(raw) => raw,
        }
    }
}

// ---- Conditions ------------------------------------------------------------------------------------

/// A condition of a graph (cuda.core's `GraphCondition`; a `CUgraphConditionalHandle`), made by
/// [`GraphDefinition::create_condition`](crate::GraphDefinition::create_condition) or
/// [`GraphBuilder::create_condition`](crate::GraphBuilder::create_condition). Conditional nodes
/// of that graph run their bodies on its value, which kernels of the graph set with
/// `cudaGraphSetConditional(handle, value)`: pass the condition to them as a kernel argument
/// (`cudaGraphConditionalHandle`, 8 bytes), `&condition` among [`launch`](crate::launch())'s
/// arguments or a kernel node's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct GraphCondition(u64);

impl GraphCondition {
    /// The condition with this raw handle (as the C ABI gives it).
    pub const fn from_raw(handle: u64) -> GraphCondition {
        GraphCondition(handle)
    }

    /// The raw `CUgraphConditionalHandle`.
    pub const fn handle(self) -> u64 {
        self.0
    }
}

// SAFETY: repr(transparent) over a u64, the layout of a `cudaGraphConditionalHandle` parameter.
// A kernel can only use it to set a conditional value through the driver, which checks it.
unsafe impl DeviceRepr for GraphCondition {}

/// The kind of a conditional node (`cucore_graph_conditional_type_t`; cuda.core's
/// `if_then`/`if_else`, `while_loop` and `switch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphConditionalType {
    /// One body, run when the condition is non-zero; or two bodies, the second (else) run when
    /// it is zero (drivers from CUDA 12.8).
    If,
    /// One body, run again and again while the condition is non-zero (checked before each run).
    While,
    /// Bodies numbered from 0: body n runs when the condition is n, none when it is out of range
    /// (drivers from CUDA 12.8).
    Switch,
}

impl GraphConditionalType {
    /// The raw `cucore_graph_conditional_type_t`.
    pub fn raw(self) -> sys::cucore_graph_conditional_type_t {
        match self {
            GraphConditionalType::If => sys::CUCORE_GRAPH_CONDITIONAL_IF,
            GraphConditionalType::While => sys::CUCORE_GRAPH_CONDITIONAL_WHILE,
            GraphConditionalType::Switch => sys::CUCORE_GRAPH_CONDITIONAL_SWITCH,
        }
    }
}

/// The flags of a new condition: `Some(value)` sets it to `value` at the start of every launch
/// (`CUCORE_GRAPH_CONDITION_SET_DEFAULT`); None leaves it at the value of the last launch
/// (initially 0), as cuda.core's `create_condition(default_value=None)`.
pub(crate) fn condition_flags(default_value: Option<u32>) -> (u32, u32) {
    match default_value {
        Some(value) => (value, sys::CUCORE_GRAPH_CONDITION_SET_DEFAULT as u32),
        None => (0, sys::CUCORE_GRAPH_CONDITION_DEFAULT as u32),
    }
}

// ---- Instantiation ---------------------------------------------------------------------------------

/// How to make an executable [`Graph`](crate::Graph) of a definition
/// (`cucore_graph_complete_options_t`; cuda.core's `GraphCompleteOptions`). The default sets
/// nothing. Build with `GraphCompleteOptions::default().auto_free_on_launch(true)`, or set the
/// fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct GraphCompleteOptions<'a> {
    /// Memory the graph allocated and did not free is freed before its next launch
    /// (`CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH`).
    pub auto_free_on_launch: bool,
    /// Upload the graph on this stream as part of instantiation (borrowed for the call).
    pub upload_stream: Option<&'a Stream>,
    /// The graph can be launched from the device (`CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH`).
    pub device_launch: bool,
    /// Kernel nodes run with their own priority attribute
    /// (`CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY`).
    pub use_node_priority: bool,
}

impl<'a> GraphCompleteOptions<'a> {
    setters! {
        /// Sets `auto_free_on_launch`.
        auto_free_on_launch: bool => |on: bool| on;
        /// Sets `upload_stream`.
        upload_stream: &'a Stream => |stream: &'a Stream| Some(stream);
        /// Sets `device_launch`.
        device_launch: bool => |on: bool| on;
        /// Sets `use_node_priority`.
        use_node_priority: bool => |on: bool| on;
    }

    /// The C struct; its stream is borrowed, valid while `upload_stream` lives.
    pub fn to_raw(&self) -> sys::cucore_graph_complete_options_t {
        let mut o = sys::cucore_graph_complete_options_t::INIT;
        if self.auto_free_on_launch {
            o.flags |= sys::CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH as u32;
        }
        if self.device_launch {
            o.flags |= sys::CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH as u32;
        }
        if self.use_node_priority {
            o.flags |= sys::CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY as u32;
        }
        o.upload_stream = self.upload_stream.map_or(std::ptr::null_mut(), |s| s.as_raw());
        o
    }
}

// ---- Allocation nodes ------------------------------------------------------------------------------

/// Where an allocation node's memory lives (`cucore_graph_memory_type_t`; cuda.core's
/// `GraphMemoryType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GraphMemoryType {
    /// Device memory of the definition's device: the default.
    #[default]
    Device,
    /// Page-locked host memory (where the driver can).
    Host,
}

impl GraphMemoryType {
    /// The raw `cucore_graph_memory_type_t`.
    pub fn raw(self) -> sys::cucore_graph_memory_type_t {
        match self {
            GraphMemoryType::Device => sys::CUCORE_GRAPH_MEMORY_DEVICE,
            GraphMemoryType::Host => sys::CUCORE_GRAPH_MEMORY_HOST,
        }
    }
}

/// The most peers an allocation node can give access to (`cucore_graph_alloc_options_t`'s
/// `peer_access` array).
pub const MAX_GRAPH_ALLOC_PEERS: usize = 8;

/// How an allocation node allocates (`cucore_graph_alloc_options_t`; cuda.core's
/// `GraphAllocOptions`). The default: device memory of the definition's device, no peers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GraphAllocOptions {
    /// Device or host memory.
    pub memory_type: GraphMemoryType,
    /// Ordinals of other devices given read-write access, at most [`MAX_GRAPH_ALLOC_PEERS`].
    pub peer_access: Vec<i32>,
}

impl GraphAllocOptions {
    setters! {
        /// Sets `memory_type`.
        memory_type: GraphMemoryType => |memory_type: GraphMemoryType| memory_type;
        /// Sets `peer_access` (device ordinals).
        peer_access: &[i32] => |ordinals: &[i32]| ordinals.to_vec();
    }

    /// The C struct; `Status::InvalidArgument` for more than [`MAX_GRAPH_ALLOC_PEERS`] peers,
    /// which the C struct cannot hold.
    pub fn to_raw(&self) -> Result<sys::cucore_graph_alloc_options_t> {
        let mut o = sys::cucore_graph_alloc_options_t::INIT;
        o.memory_type = self.memory_type.raw();
        if self.peer_access.len() > MAX_GRAPH_ALLOC_PEERS {
            return Err(Error::binding(
                Status::InvalidArgument,
                format!(
                    "GraphAllocOptions: {} peers in 'peer_access', at most {} allowed",
                    self.peer_access.len(),
                    MAX_GRAPH_ALLOC_PEERS
                ),
            ));
        }
        o.peer_access_count = self.peer_access.len() as u32;
        o.peer_access[..self.peer_access.len()].copy_from_slice(&self.peer_access);
        Ok(o)
    }
}

/// An allocation node's memory ([`GraphNode::alloc_info`](crate::GraphNode::alloc_info)): the
/// address it has in every launch, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GraphAllocInfo {
    /// The `CUdeviceptr`.
    pub address: u64,
    /// Bytes.
    pub size: u64,
}

// ---- Copy and fill nodes ---------------------------------------------------------------------------

/// What a copy node copies (the arguments of `cucore_graph_definition_add_memcpy`): `size`
/// bytes from `src` at `src_offset` to `dst` at `dst_offset`. The graph holds both buffers.
/// Build with `MemcpyParams::new(&dst, &src, size).dst_offset(..).src_offset(..)`.
#[derive(Clone, Copy, Debug)]
pub struct MemcpyParams<'a> {
    /// The buffer written.
    pub dst: &'a Buffer,
    /// The first byte of `dst` written.
    pub dst_offset: u64,
    /// The buffer read.
    pub src: &'a Buffer,
    /// The first byte of `src` read.
    pub src_offset: u64,
    /// Bytes copied.
    pub size: u64,
}

impl<'a> MemcpyParams<'a> {
    /// `size` bytes from the start of `src` to the start of `dst`.
    pub fn new(dst: &'a Buffer, src: &'a Buffer, size: u64) -> MemcpyParams<'a> {
        MemcpyParams { dst, dst_offset: 0, src, src_offset: 0, size }
    }
    /// Sets `dst_offset`.
    pub fn dst_offset(mut self, offset: u64) -> Self {
        self.dst_offset = offset;
        self
    }
    /// Sets `src_offset`.
    pub fn src_offset(mut self, offset: u64) -> Self {
        self.src_offset = offset;
        self
    }
}

/// What a fill node fills (the arguments of `cucore_graph_definition_add_memset`): `height`
/// rows of `width` elements of `element_size` bytes (1, 2 or 4) set to `value`, rows `pitch`
/// bytes apart (0: packed), from byte `offset` of `buffer`, which the graph holds. The value is
/// stored in the host's byte order, as [`Buffer::fill`] stores it. Build with
/// `MemsetParams::new(&buffer, value, element_size, width).offset(..).rows(height, pitch)`.
#[derive(Clone, Copy, Debug)]
pub struct MemsetParams<'a> {
    /// The buffer filled.
    pub buffer: &'a Buffer,
    /// The first byte filled.
    pub offset: u64,
    /// The element value (no wider than the element).
    pub value: u32,
    /// Bytes per element: 1, 2 or 4.
    pub element_size: u32,
    /// Elements per row.
    pub width: u64,
    /// Rows (at least 1).
    pub height: u64,
    /// Bytes from a row to the next; 0: `width * element_size`.
    pub pitch: u64,
}

impl<'a> MemsetParams<'a> {
    /// One row of `width` elements of `element_size` bytes set to `value`, from the start of
    /// `buffer`.
    pub fn new(buffer: &'a Buffer, value: u32, element_size: u32, width: u64) -> MemsetParams<'a> {
        MemsetParams { buffer, offset: 0, value, element_size, width, height: 1, pitch: 0 }
    }
    /// Sets `offset`.
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }
    /// Sets `height` rows `pitch` bytes apart (0: packed).
    pub fn rows(mut self, height: u64, pitch: u64) -> Self {
        self.height = height;
        self.pitch = pitch;
        self
    }
}

// ---- DOT output ------------------------------------------------------------------------------------

/// What the DOT description of a graph shows (`cucore_graph_dot_flag_t`, the driver's
/// `CU_GRAPH_DEBUG_DOT_FLAGS_*`; cuda.core's `GraphDebugPrintOptions`). All false (the
/// default): the driver's default description. Build with
/// `GraphDebugPrintOptions::default().verbose(true)`, or set the fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GraphDebugPrintOptions {
    /// Everything below (`CUCORE_GRAPH_DOT_VERBOSE`).
    pub verbose: bool,
    /// The CUDA runtime's type and value names instead of the driver's.
    pub runtime_types: bool,
    /// Kernel nodes' parameters.
    pub kernel_node_params: bool,
    /// Copy nodes' parameters.
    pub memcpy_node_params: bool,
    /// Fill nodes' parameters.
    pub memset_node_params: bool,
    /// Host callback nodes' parameters.
    pub host_node_params: bool,
    /// Event nodes' parameters.
    pub event_node_params: bool,
    /// External semaphore signal nodes' parameters.
    pub ext_semas_signal_node_params: bool,
    /// External semaphore wait nodes' parameters.
    pub ext_semas_wait_node_params: bool,
    /// Kernel nodes' attributes.
    pub kernel_node_attributes: bool,
    /// Node handles.
    pub handles: bool,
    /// Allocation nodes' parameters.
    pub mem_alloc_node_params: bool,
    /// Free nodes' parameters.
    pub mem_free_node_params: bool,
    /// Batch memory operation nodes' parameters.
    pub batch_mem_op_node_params: bool,
    /// More topology information.
    pub extra_topo_info: bool,
    /// Conditional nodes' parameters.
    pub conditional_node_params: bool,
}

impl GraphDebugPrintOptions {
    setters! {
        /// Sets `verbose`.
        verbose: bool => |on: bool| on;
        /// Sets `runtime_types`.
        runtime_types: bool => |on: bool| on;
        /// Sets `kernel_node_params`.
        kernel_node_params: bool => |on: bool| on;
        /// Sets `memcpy_node_params`.
        memcpy_node_params: bool => |on: bool| on;
        /// Sets `memset_node_params`.
        memset_node_params: bool => |on: bool| on;
        /// Sets `host_node_params`.
        host_node_params: bool => |on: bool| on;
        /// Sets `event_node_params`.
        event_node_params: bool => |on: bool| on;
        /// Sets `ext_semas_signal_node_params`.
        ext_semas_signal_node_params: bool => |on: bool| on;
        /// Sets `ext_semas_wait_node_params`.
        ext_semas_wait_node_params: bool => |on: bool| on;
        /// Sets `kernel_node_attributes`.
        kernel_node_attributes: bool => |on: bool| on;
        /// Sets `handles`.
        handles: bool => |on: bool| on;
        /// Sets `mem_alloc_node_params`.
        mem_alloc_node_params: bool => |on: bool| on;
        /// Sets `mem_free_node_params`.
        mem_free_node_params: bool => |on: bool| on;
        /// Sets `batch_mem_op_node_params`.
        batch_mem_op_node_params: bool => |on: bool| on;
        /// Sets `extra_topo_info`.
        extra_topo_info: bool => |on: bool| on;
        /// Sets `conditional_node_params`.
        conditional_node_params: bool => |on: bool| on;
    }

    /// The `cucore_graph_dot_flag_t` bits.
    pub fn flags(&self) -> u32 {
        [
            (self.verbose, sys::CUCORE_GRAPH_DOT_VERBOSE),
            (self.runtime_types, sys::CUCORE_GRAPH_DOT_RUNTIME_TYPES),
            (self.kernel_node_params, sys::CUCORE_GRAPH_DOT_KERNEL_NODE_PARAMS),
            (self.memcpy_node_params, sys::CUCORE_GRAPH_DOT_MEMCPY_NODE_PARAMS),
            (self.memset_node_params, sys::CUCORE_GRAPH_DOT_MEMSET_NODE_PARAMS),
            (self.host_node_params, sys::CUCORE_GRAPH_DOT_HOST_NODE_PARAMS),
            (self.event_node_params, sys::CUCORE_GRAPH_DOT_EVENT_NODE_PARAMS),
            (self.ext_semas_signal_node_params, sys::CUCORE_GRAPH_DOT_EXT_SEMAS_SIGNAL_NODE_PARAMS),
            (self.ext_semas_wait_node_params, sys::CUCORE_GRAPH_DOT_EXT_SEMAS_WAIT_NODE_PARAMS),
            (self.kernel_node_attributes, sys::CUCORE_GRAPH_DOT_KERNEL_NODE_ATTRIBUTES),
            (self.handles, sys::CUCORE_GRAPH_DOT_HANDLES),
            (self.mem_alloc_node_params, sys::CUCORE_GRAPH_DOT_MEM_ALLOC_NODE_PARAMS),
            (self.mem_free_node_params, sys::CUCORE_GRAPH_DOT_MEM_FREE_NODE_PARAMS),
            (self.batch_mem_op_node_params, sys::CUCORE_GRAPH_DOT_BATCH_MEM_OP_NODE_PARAMS),
            (self.extra_topo_info, sys::CUCORE_GRAPH_DOT_EXTRA_TOPO_INFO),
            (self.conditional_node_params, sys::CUCORE_GRAPH_DOT_CONDITIONAL_NODE_PARAMS),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0u32, |bits, (_, flag)| bits | *flag as u32)
    }
}

// ---- Whole-graph updates ---------------------------------------------------------------------------

/// The driver's verdict on a whole-graph update (`cucore_graph_update_result_t`, the driver's
/// `CUgraphExecUpdateResult`), carried by a [`GraphUpdateError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphUpdateResult {
    /// Updated.
    Success,
    /// Refused for a reason not listed below.
    Error,
    /// The definition's nodes or edges differ from the graph's.
    TopologyChanged,
    /// A node's kind differs.
    NodeTypeChanged,
    /// A kernel node's function differs in a way an update cannot take.
    FunctionChanged,
    /// A node's parameters differ in a way an update cannot take.
    ParametersChanged,
    /// The update is not supported for some node.
    NotSupported,
    /// A kernel node's function changed to one that cannot replace it.
    UnsupportedFunctionChange,
    /// A node's attributes differ in a way an update cannot take.
    AttributesChanged,
    /// A value this binding does not know (a newer library).
    Unknown(i32),
}

impl GraphUpdateResult {
    /// The result of a raw `cucore_graph_update_result_t`.
    pub fn from_raw(raw: sys::cucore_graph_update_result_t) -> GraphUpdateResult {
        match raw {
            sys::CUCORE_GRAPH_UPDATE_SUCCESS => GraphUpdateResult::Success,
            sys::CUCORE_GRAPH_UPDATE_ERROR => GraphUpdateResult::Error,
            sys::CUCORE_GRAPH_UPDATE_TOPOLOGY_CHANGED => GraphUpdateResult::TopologyChanged,
            sys::CUCORE_GRAPH_UPDATE_NODE_TYPE_CHANGED => GraphUpdateResult::NodeTypeChanged,
            sys::CUCORE_GRAPH_UPDATE_FUNCTION_CHANGED => GraphUpdateResult::FunctionChanged,
            sys::CUCORE_GRAPH_UPDATE_PARAMETERS_CHANGED => GraphUpdateResult::ParametersChanged,
            sys::CUCORE_GRAPH_UPDATE_NOT_SUPPORTED => GraphUpdateResult::NotSupported,
            sys::CUCORE_GRAPH_UPDATE_UNSUPPORTED_FUNCTION_CHANGE => GraphUpdateResult::UnsupportedFunctionChange,
            sys::CUCORE_GRAPH_UPDATE_ATTRIBUTES_CHANGED => GraphUpdateResult::AttributesChanged,
            other => GraphUpdateResult::Unknown(other),
        }
    }

    /// The raw `cucore_graph_update_result_t`.
    pub fn raw(self) -> sys::cucore_graph_update_result_t {
        match self {
            GraphUpdateResult::Success => sys::CUCORE_GRAPH_UPDATE_SUCCESS,
            GraphUpdateResult::Error => sys::CUCORE_GRAPH_UPDATE_ERROR,
            GraphUpdateResult::TopologyChanged => sys::CUCORE_GRAPH_UPDATE_TOPOLOGY_CHANGED,
            GraphUpdateResult::NodeTypeChanged => sys::CUCORE_GRAPH_UPDATE_NODE_TYPE_CHANGED,
            GraphUpdateResult::FunctionChanged => sys::CUCORE_GRAPH_UPDATE_FUNCTION_CHANGED,
            GraphUpdateResult::ParametersChanged => sys::CUCORE_GRAPH_UPDATE_PARAMETERS_CHANGED,
            GraphUpdateResult::NotSupported => sys::CUCORE_GRAPH_UPDATE_NOT_SUPPORTED,
            GraphUpdateResult::UnsupportedFunctionChange => sys::CUCORE_GRAPH_UPDATE_UNSUPPORTED_FUNCTION_CHANGE,
            GraphUpdateResult::AttributesChanged => sys::CUCORE_GRAPH_UPDATE_ATTRIBUTES_CHANGED,
            GraphUpdateResult::Unknown(raw) => raw,
        }
    }
}

/// A failed [`Graph::update`](crate::Graph::update): the error, and the driver's verdict. A
/// refused update is `Status::InvalidState` with `result` saying why (the message names it and
/// the failing node's kind); other failures (a released handle, a driver error) carry the
/// status that says so and the result the library reported (`Error` when it reported none).
/// Converts into an [`Error`] for `?` in functions returning [`Result`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphUpdateError {
    /// The library's error.
    pub error: Error,
    /// The driver's verdict.
    pub result: GraphUpdateResult,
}

impl fmt::Display for GraphUpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (update result {:?})", self.error, self.result)
    }
}

impl std::error::Error for GraphUpdateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<GraphUpdateError> for Error {
    fn from(e: GraphUpdateError) -> Error {
        e.error
    }
}
