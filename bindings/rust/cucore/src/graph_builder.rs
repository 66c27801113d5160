//! Graphs made by capturing the work of a stream (`include/cucore/graph_builder.h`; cuda.core's
//! `GraphBuilder`).
//!
//! A [`GraphBuilder`] owns a stream ([`GraphBuilder::stream`]: its own, from
//! [`Device::create_graph_builder`], or the one it was made from, with
//! [`Stream::create_graph_builder`]). Between [`GraphBuilder::begin_building`] and
//! [`GraphBuilder::end_building`], everything this library enqueues on that stream becomes a
//! node of the builder's graph instead of running: kernel launches, buffer copies and fills, 3D
//! and array copies, host functions, event records and waits, and allocations and frees of
//! stream-ordered memory resources (a [`GraphMemoryResource`](crate::GraphMemoryResource)'s
//! among them). The graph holds the library objects that work uses, as a
//! [`GraphDefinition`] does.
//!
//! ```no_run
//! use cucore::{launch, Buffer, CaptureMode, Device, GraphCompleteOptions, Kernel, LaunchConfig};
//!
//! # fn run(dev: &Device, kernel: &Kernel, data: &Buffer) -> cucore::Result<()> {
//! let builder = dev.create_graph_builder()?;
//! builder.begin_building(CaptureMode::Relaxed)?;
//! let s = builder.stream()?;
//! data.fill(0, 4, &s)?;                                            // captured, not run
//! launch(&s, &LaunchConfig::new(4, 256), kernel, &[data, &1024u32])?;
//! builder.callback(|| println!("done"))?;
//! builder.end_building()?;
//! let graph = builder.complete(&GraphCompleteOptions::default())?;
//! let stream = dev.create_stream(Default::default())?;
//! graph.launch(&stream)?;
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```
//!
//! Calls that cannot be captured fail with `Status::InvalidState` naming the call. Those the
//! library knows ([`Stream::synchronize`] on the capturing stream, copies to or from host
//! slices, which wait for the stream) leave the capture going; those only the driver detects
//! invalidate it ([`Stream::capture_status`] says
//! [`CaptureStatus::Invalidated`](crate::CaptureStatus::Invalidated)), and the next
//! [`GraphBuilder::end_building`] fails with `Status::InvalidState` and leaves the stream usable.
//!
//! Forks and joins: [`GraphBuilder::split`] makes builders on new streams that continue from
//! the builder's current point; [`GraphBuilder::join`] makes a builder wait for others, which
//! are then done. Conditional bodies ([`GraphBuilder::if_then`], [`GraphBuilder::if_else`],
//! [`GraphBuilder::while_loop`], [`GraphBuilder::switch`]) are builders capturing into the bodies
//! of a conditional node: capture each body's work on its stream, then end it before ending its
//! parent.

use std::fmt;
use std::os::raw::c_int;
use std::path::Path;
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, path_c_string, Error, Result, Status};
use crate::device::Device;
use crate::graph::{
    condition_flags, hand_over, Graph, GraphCompleteOptions, GraphCondition, GraphConditionalType,
    GraphDebugPrintOptions, GraphDefinition,
};
use crate::stream::Stream;

/// How strictly the driver refuses other threads' calls that are unsafe during a capture
/// (`cucore_capture_mode_t`, the driver's `CUstreamCaptureMode`; cuda.core's
/// `begin_building(mode)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CaptureMode {
    /// Unsafe calls are refused on every thread while any thread captures in this mode.
    Global,
    /// Unsafe calls are refused on the capturing thread only.
    ThreadLocal,
    /// Nothing is refused for capture's sake: the default, as cuda.core's.
    #[default]
    Relaxed,
}

impl CaptureMode {
    /// The raw `cucore_capture_mode_t`.
    pub fn raw(self) -> sys::cucore_capture_mode_t {
        match self {
            CaptureMode::Global => sys::CUCORE_CAPTURE_MODE_GLOBAL,
            CaptureMode::ThreadLocal => sys::CUCORE_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Relaxed => sys::CUCORE_CAPTURE_MODE_RELAXED,
        }
    }
}

/// A graph builder (`cucore_graph_builder_t`; cuda.core's `GraphBuilder`): a stream whose work
/// is captured into a graph between [`begin_building`](GraphBuilder::begin_building) and
/// [`end_building`](GraphBuilder::end_building). It holds its stream; `Clone` adds a reference
/// to the same builder. Dropping the last reference while building ends the capture and
/// discards it. See the [module documentation](self).
pub struct GraphBuilder {
    raw: NonNull<sys::cucore_graph_builder_t>,
}

handle_type!(GraphBuilder, sys::cucore_graph_builder_t);
identity_eq!(GraphBuilder);

/// Wraps `count` builders a successful call gave; every non-NULL one is released if another
/// fails.
fn wrap_builders(raw: &[*mut sys::cucore_graph_builder_t]) -> Result<Vec<GraphBuilder>> {
    let wrapped: Vec<Result<GraphBuilder>> = raw.iter().map(|&r| GraphBuilder::from_out(r)).collect();
    wrapped.into_iter().collect()
}

/// The one builder of a result that must hold exactly one.
fn single(mut builders: Vec<GraphBuilder>, what: &str) -> Result<GraphBuilder> {
    match builders.pop() {
        Some(b) if builders.is_empty() => Ok(b),
        _ => Err(Error::binding(Status::Internal, format!("{}: the library returned no single body", what))),
    }
}

impl GraphBuilder {
    /// A builder capturing on `stream`, which it holds (`cucore_graph_builder_create`;
    /// cuda.core's `Stream.create_graph_builder()`). The legacy default stream cannot capture
    /// (`Status::InvalidArgument`).
    pub fn create(stream: &Stream) -> Result<GraphBuilder> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_builder_create(stream.as_raw(), &mut raw) })?;
        GraphBuilder::from_out(raw)
    }

    /// A builder on a new non-blocking stream of `device`'s primary context
    /// (`cucore_graph_builder_create_on_device`; cuda.core's `Device.create_graph_builder()`).
    pub fn create_on_device(device: &Device) -> Result<GraphBuilder> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_builder_create_on_device(device.as_raw(), &mut raw) })?;
        GraphBuilder::from_out(raw)
    }

    /// The builder's stream (cuda.core's `GraphBuilder.stream`): enqueue work on it (launches,
    /// copies, fills, allocations, event records) to capture it.
    pub fn stream(&self) -> Result<Stream> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_builder_stream(self.as_raw(), &mut raw) })?;
        Stream::from_out(raw)
    }

    /// Starts capturing the builder's stream in `mode` (`cucore_graph_builder_begin_building`).
    /// A builder that is building or built already, or a stream someone else captures, is
    /// `Status::InvalidState`.
    pub fn begin_building(&self, mode: CaptureMode) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_graph_builder_begin_building(self.as_raw(), mode.raw()) })
    }

    /// Ends the capture; the builder then holds the captured definition
    /// (`cucore_graph_builder_end_building`). `Status::InvalidState` when not building, when
    /// forked builders were not joined or conditional bodies are still building, and when a
    /// call the driver could not capture invalidated the capture (the stream is usable again
    /// and the builder is not built).
    pub fn end_building(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_graph_builder_end_building(self.as_raw()) })
    }

    /// Whether the builder is capturing (cuda.core's `is_building`).
    pub fn is_building(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_builder_is_building(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// The captured definition (cuda.core's `graph_definition`): change, clone or instantiate it
    /// like any other. `Status::InvalidState` before the builder is built.
    pub fn definition(&self) -> Result<GraphDefinition> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_builder_definition(self.as_raw(), &mut raw) })?;
        GraphDefinition::from_out(raw)
    }

    /// Instantiates the captured definition with `options` (`cucore_graph_builder_complete`;
    /// cuda.core's `complete`), as [`GraphDefinition::instantiate`] does.
    /// `Status::InvalidState` before the builder is built.
    pub fn complete(&self, options: &GraphCompleteOptions<'_>) -> Result<Graph> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options (their stream borrowed for the call) and
        // out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_graph_builder_complete(self.as_raw(), &o, &mut raw) })?;
        Graph::from_out(raw)
    }

    /// Writes the captured definition as a DOT file at `path`
    /// (`cucore_graph_builder_debug_dot_print`), as [`GraphDefinition::debug_dot_print`] does.
    pub fn debug_dot_print(&self, path: impl AsRef<Path>, options: &GraphDebugPrintOptions) -> Result<()> {
        let path = path_c_string(path.as_ref(), "debug_dot_print: path")?;
        // SAFETY: a live handle and a NUL-terminated path.
        check(unsafe { sys::cucore_graph_builder_debug_dot_print(self.as_raw(), path.as_ptr(), options.flags()) })
    }

    /// Forks the capture into `count` (>= 1) builders (`cucore_graph_builder_split`; cuda.core's
    /// `split`): the first is this builder, the others capture on new streams of its context
    /// from this builder's current point. [`join`](GraphBuilder::join) them back before ending.
    pub fn split(&self, count: usize) -> Result<Vec<GraphBuilder>> {
        let mut raw: Vec<*mut sys::cucore_graph_builder_t> = vec![ptr::null_mut(); count];
        let out = if count == 0 { ptr::null_mut() } else { raw.as_mut_ptr() };
        // SAFETY: a live handle and an array of `count` slots; we own the references it gives.
        check(unsafe { sys::cucore_graph_builder_split(self.as_raw(), count, out) })?;
        wrap_builders(&raw)
    }

    /// Makes this builder wait for the work captured so far on each of `others` (builders of
    /// the same capture; cuda.core's `GraphBuilder.join`), whose captures are then finished:
    /// they are no longer building and cannot be used again. This builder among `others` is
    /// `Status::InvalidArgument`.
    pub fn join(&self, others: &[&GraphBuilder]) -> Result<()> {
        let raw: Vec<*mut sys::cucore_graph_builder_t> = others.iter().map(|b| b.as_raw()).collect();
        let p = if raw.is_empty() { ptr::null() } else { raw.as_ptr() };
        // SAFETY: live handles and an array of `raw.len()` of them.
        check(unsafe { sys::cucore_graph_builder_join(self.as_raw(), p, raw.len()) })
    }

    /// A condition of the graph being captured (`cucore_graph_builder_create_condition`;
    /// cuda.core's `create_condition`), as [`GraphDefinition::create_condition`] makes one.
    /// `Status::InvalidState` when not building.
    pub fn create_condition(&self, default_value: Option<u32>) -> Result<GraphCondition> {
        let (value, flags) = condition_flags(default_value);
        let mut handle: u64 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_graph_builder_create_condition(self.as_raw(), value, flags, &mut handle) })?;
        Ok(GraphCondition::from_raw(handle))
    }

    /// Adds a conditional node on `condition` after the work captured so far
    /// (`cucore_graph_builder_add_conditional`), with `body_count` bodies as
    /// [`GraphDefinition::add_conditional`] describes them, and gives one builder per body,
    /// already building into it on a new stream: capture the body's work on its
    /// [`stream`](GraphBuilder::stream), then [`end_building`](GraphBuilder::end_building) it.
    /// Work captured on this builder afterwards runs after the conditional node.
    pub fn add_conditional(
        &self,
        condition: GraphCondition,
        conditional_type: GraphConditionalType,
        body_count: usize,
    ) -> Result<Vec<GraphBuilder>> {
        let mut raw: Vec<*mut sys::cucore_graph_builder_t> = vec![ptr::null_mut(); body_count];
        let out = if body_count == 0 { ptr::null_mut() } else { raw.as_mut_ptr() };
        // SAFETY: a live handle and an array of `body_count` slots; we own the references it
        // gives.
        check(unsafe {
            sys::cucore_graph_builder_add_conditional(
                self.as_raw(),
                condition.handle(),
                conditional_type.raw(),
                body_count,
                out,
            )
        })?;
        wrap_builders(&raw)
    }

    /// An if node: the body builder runs when `condition` is non-zero (cuda.core's `if_then`).
    pub fn if_then(&self, condition: GraphCondition) -> Result<GraphBuilder> {
        single(self.add_conditional(condition, GraphConditionalType::If, 1)?, "if_then")
    }

    /// An if node with an else branch: `(then, else)` builders, the first run when `condition`
    /// is non-zero, the second when it is zero (cuda.core's `if_else`; CUDA 12.8 drivers and
    /// newer, else `Status::NotSupported`).
    pub fn if_else(&self, condition: GraphCondition) -> Result<(GraphBuilder, GraphBuilder)> {
        let mut bodies = self.add_conditional(condition, GraphConditionalType::If, 2)?.into_iter();
        match (bodies.next(), bodies.next(), bodies.next()) {
            (Some(then), Some(otherwise), None) => Ok((then, otherwise)),
            _ => Err(Error::binding(Status::Internal, "if_else: the library did not return two bodies".to_string())),
        }
    }

    /// A while node: the body builder runs again and again while `condition` is non-zero,
    /// checked before each run (cuda.core's `while_loop`). A kernel in the body sets the
    /// condition to end the loop.
    pub fn while_loop(&self, condition: GraphCondition) -> Result<GraphBuilder> {
        single(self.add_conditional(condition, GraphConditionalType::While, 1)?, "while_loop")
    }

    /// A switch node with `count` case builders: case n runs when `condition` is n, none when it
    /// is out of range (cuda.core's `switch`; CUDA 12.8 drivers and newer, else
    /// `Status::NotSupported`).
    pub fn switch(&self, condition: GraphCondition, count: usize) -> Result<Vec<GraphBuilder>> {
        self.add_conditional(condition, GraphConditionalType::Switch, count)
    }

    /// Adds a child graph node running a copy of what `child` (a built builder) captured, after
    /// the work captured so far (`cucore_graph_builder_embed`; cuda.core's `embed`).
    pub fn embed(&self, child: &GraphBuilder) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_graph_builder_embed(self.as_raw(), child.as_raw()) })
    }

    /// Adds a host callback node running `callback` after the work captured so far
    /// (`cucore_graph_builder_callback`; cuda.core's `callback`), each time the graph runs, on a
    /// driver thread. As for [`GraphDefinition::add_host_callback`], the closure is dropped
    /// once, when nothing needs it any more (at once when this fails), and must not call CUDA.
    pub fn callback<F>(&self, callback: F) -> Result<()>
    where
        F: FnMut() + Send + 'static,
    {
        hand_over(callback, |f, data, release| {
            // SAFETY: a live handle; hand_over's trampolines fit its user data.
            unsafe { sys::cucore_graph_builder_callback(self.as_raw(), f, data, release) }
        })
    }
}

impl fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.is_building() {
            Ok(building) => write!(f, "GraphBuilder({:p}, building: {})", self.as_raw(), building),
            Err(_) => write!(f, "GraphBuilder(<library handle {:p}>)", self.as_raw()),
        }
    }
}

impl Stream {
    /// A graph builder capturing on this stream ([`GraphBuilder::create`]; cuda.core's
    /// `Stream.create_graph_builder()`).
    pub fn create_graph_builder(&self) -> Result<GraphBuilder> {
        GraphBuilder::create(self)
    }
}

impl Device {
    /// A graph builder on a new stream of this device ([`GraphBuilder::create_on_device`];
    /// cuda.core's `Device.create_graph_builder()`).
    pub fn create_graph_builder(&self) -> Result<GraphBuilder> {
        GraphBuilder::create_on_device(self)
    }
}
