//! What `include/cucore/stream.h` holds: CUDA streams, and whether one is being captured into a
//! graph ([`Stream::capture_status`]; capture itself is [`GraphBuilder`](crate::GraphBuilder)'s).

use std::fmt;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{abort_on_panic, c_bool, check, owner_handoff, OwnerCallback, Result};
use crate::context::Context;
use crate::device::Device;
use crate::event::{Event, EventOptions};

/// How to create a stream (cuda.core's `StreamOptions(nonblocking=True, priority=None)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamOptions {
    /// Default true: the stream does not synchronize with the legacy default stream
    /// (`CU_STREAM_NON_BLOCKING`). False makes a blocking stream (`CUCORE_STREAM_BLOCKING`).
    pub nonblocking: bool,
    /// None: the default (lowest) priority. Lower numbers are higher priority, down to
    /// [`StreamPriorityRange::greatest`]; values outside the range are clamped by the driver.
    pub priority: Option<i32>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions { nonblocking: true, priority: None }
    }
}

impl StreamOptions {
    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_stream_options_t {
        let mut o = sys::cucore_stream_options_t::INIT;
        if !self.nonblocking {
            o.flags |= sys::CUCORE_STREAM_BLOCKING as u32;
        }
        o.priority = self.priority.unwrap_or(0);
        o
    }
}

/// A device's range of stream priorities: `least` (the default, 0) and `greatest` (the highest
/// priority, a negative number). Numerically `greatest <= least`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamPriorityRange {
    pub least: i32,
    pub greatest: i32,
}

/// Whether a stream is being captured into a graph (`cucore_capture_status_t`, the driver's
/// `CUstreamCaptureStatus`; [`Stream::capture_status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaptureStatus {
    /// Not capturing: work queued on the stream runs.
    None,
    /// Capturing: work queued on the stream becomes nodes of a graph.
    Active,
    /// Capturing, but a call that cannot be captured ended it: end the capture
    /// ([`GraphBuilder::end_building`](crate::GraphBuilder::end_building) then fails and leaves
    /// the stream usable).
    Invalidated,
    /// A value this binding does not know (a newer library).
    Unknown(i32),
}

impl CaptureStatus {
    /// The status of a raw `cucore_capture_status_t`.
    pub fn from_raw(raw: sys::cucore_capture_status_t) -> CaptureStatus {
        match raw {
            sys::CUCORE_CAPTURE_STATUS_NONE => CaptureStatus::None,
            sys::CUCORE_CAPTURE_STATUS_ACTIVE => CaptureStatus::Active,
            sys::CUCORE_CAPTURE_STATUS_INVALIDATED => CaptureStatus::Invalidated,
            other => CaptureStatus::Unknown(other),
        }
    }

    /// The raw `cucore_capture_status_t`.
    pub fn raw(self) -> sys::cucore_capture_status_t {
        match self {
            CaptureStatus::None => sys::CUCORE_CAPTURE_STATUS_NONE,
            CaptureStatus::Active => sys::CUCORE_CAPTURE_STATUS_ACTIVE,
            CaptureStatus::Invalidated => sys::CUCORE_CAPTURE_STATUS_INVALIDATED,
            CaptureStatus::Unknown(raw) => raw,
        }
    }
}

/// A CUDA stream (`cucore_stream_t`). It holds its context (and through it its device), so it
/// stays usable whatever else is dropped.
pub struct Stream {
    raw: NonNull<sys::cucore_stream_t>,
}

handle_type!(Stream, sys::cucore_stream_t);
identity_eq!(Stream);

/// Calls the boxed closure the library hands back, once, and frees it.
pub(crate) unsafe extern "C" fn host_fn_trampoline<F: FnOnce() + Send + 'static>(user_data: *mut c_void) {
    // SAFETY: made by Box::into_raw in launch_host_func and queued once; the driver runs a host
    // function exactly once, so this takes back the only owner.
    let f: Box<F> = unsafe { Box::from_raw(user_data as *mut F) };
    abort_on_panic("a stream host function", move || (*f)());
}

impl Stream {
    /// A new stream in `device`'s primary context (`cucore_stream_create`).
    pub fn create(device: &Device, options: StreamOptions) -> Result<Stream> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_stream_create(device.as_raw(), &o, &mut raw) })?;
        Stream::from_out(raw)
    }

    /// A new stream in `context` (`cucore_stream_create_in_context`).
    pub fn create_in_context(context: &Context, options: StreamOptions) -> Result<Stream> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: as in `create`.
        check(unsafe { sys::cucore_stream_create_in_context(context.as_raw(), &o, &mut raw) })?;
        Stream::from_out(raw)
    }

    /// The legacy default stream (`CU_STREAM_LEGACY`) bound to `device`'s primary context
    /// (cuda.core's `LEGACY_DEFAULT_STREAM`). Dropping it destroys nothing.
    pub fn legacy_default(device: &Device) -> Result<Stream> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_get_legacy_default(device.as_raw(), &mut raw) })?;
        Stream::from_out(raw)
    }

    /// The per-thread default stream (`CU_STREAM_PER_THREAD`) bound to `device`'s primary
    /// context (cuda.core's `PER_THREAD_DEFAULT_STREAM`).
    pub fn per_thread_default(device: &Device) -> Result<Stream> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_get_per_thread_default(device.as_raw(), &mut raw) })?;
        Stream::from_out(raw)
    }

    /// Wraps a foreign `CUstream` without owning it (`cucore_stream_from_handle`; cuda.core's
    /// `Stream.from_handle`); its context is asked from the driver and retained.
    /// `CU_STREAM_LEGACY` (1) and `CU_STREAM_PER_THREAD` (2) are accepted and bound to the current
    /// context. When the last reference goes, `owner` is called (on the releasing thread); if the
    /// call fails, `owner` is never called afterwards (see [`OwnerCallback`]).
    ///
    /// # Safety
    /// `cu_stream` is a valid `CUstream` that stays alive until `owner` is called (or, without
    /// an owner, until the last clone of the returned value is dropped).
    pub unsafe fn from_handle(cu_stream: *mut c_void, owner: Option<OwnerCallback>) -> Result<Stream> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for cu_stream; the handoff's user_data fits its on_release.
        let status =
            unsafe { sys::cucore_stream_from_handle(cu_stream, handoff.on_release, handoff.user_data, &mut raw) };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        Stream::from_out(raw)
    }

    /// Waits until all work queued on the stream has completed (cuda.core's `Stream.sync()`).
    /// A stream being captured by a [`GraphBuilder`](crate::GraphBuilder) refuses it with
    /// `Status::InvalidState`, and the capture goes on.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_stream_synchronize(self.as_raw()) })
    }

    /// Whether all queued work has completed (`cucore_stream_query`).
    pub fn is_done(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_query(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// Makes future work on this stream wait for `event`'s last recorded work.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_stream_wait_event(self.as_raw(), event.as_raw()) })
    }

    /// Makes future work on this stream wait for all work queued on `other` so far (works
    /// across devices).
    pub fn wait_stream(&self, other: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_stream_wait_stream(self.as_raw(), other.as_raw()) })
    }

    /// Creates an event with `options` in the stream's context and records it here
    /// (`cucore_stream_record`; cuda.core's `Stream.record()`). To record an existing event, use
    /// [`Stream::record_event`] or [`Event::record`].
    pub fn record(&self, options: EventOptions) -> Result<Event> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_stream_record(self.as_raw(), &o, &mut raw) })?;
        Event::from_out(raw)
    }

    /// Records the existing `event` on this stream (cuda.core's `Stream.record(event)`).
    pub fn record_event(&self, event: &Event) -> Result<()> {
        event.record(self)
    }

    /// Queues `f` on the stream (`cuLaunchHostFunc`): it runs once on a driver thread after all
    /// earlier work, and later work waits until it returns. `f` must not call CUDA (nor this
    /// library's functions that reach the driver). The closure is boxed and freed right after it
    /// ran (or at once, when queuing fails). A panic inside `f` cannot unwind into the driver:
    /// it is printed and the process aborts.
    pub fn launch_host_func<F>(&self, f: F) -> Result<()>
    where
        F: FnOnce() + Send + 'static,
    {
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: a live handle; the trampoline matches F and takes the box back exactly once.
        let status =
            unsafe { sys::cucore_stream_launch_host_func(self.as_raw(), Some(host_fn_trampoline::<F>), user_data) };
        if let Err(e) = check(status) {
            // SAFETY: not queued, so the trampoline will never run: free the closure here.
            drop(unsafe { Box::from_raw(user_data as *mut F) });
            return Err(e);
        }
        Ok(())
    }

    /// Whether the stream is being captured into a graph, by a
    /// [`GraphBuilder`](crate::GraphBuilder) or by foreign code, as the driver says
    /// (`cucore_stream_capture_status`).
    pub fn capture_status(&self) -> Result<CaptureStatus> {
        let mut v: sys::cucore_capture_status_t = sys::CUCORE_CAPTURE_STATUS_NONE;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_capture_status(self.as_raw(), &mut v) })?;
        Ok(CaptureStatus::from_raw(v))
    }

    /// The stream's device.
    pub fn device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_stream_device(self.as_raw(), &mut raw) })?;
        Device::from_out(raw)
    }

    /// The stream's context.
    pub fn context(&self) -> Result<Context> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `device`.
        check(unsafe { sys::cucore_stream_context(self.as_raw(), &mut raw) })?;
        Context::from_out(raw)
    }

    /// The stream's priority.
    pub fn priority(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_priority(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The raw `cucore_stream_flag_t` bits.
    pub fn flags(&self) -> Result<u32> {
        let mut v: u32 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_flags(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Whether the stream does not synchronize with the legacy default stream.
    pub fn is_nonblocking(&self) -> Result<bool> {
        Ok(self.flags()? & sys::CUCORE_STREAM_BLOCKING as u32 == 0)
    }

    /// Whether the library created the stream (true) or wraps a foreign one (false).
    pub fn is_owned(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_is_owned(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// The raw `CUstream` (cuda.core's `Stream.handle`; `CU_STREAM_LEGACY` is 1 and
    /// `CU_STREAM_PER_THREAD` 2).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_stream_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "Stream({:p})", h),
            Err(_) => write!(f, "Stream(<library handle {:p}>)", self.as_raw()),
        }
    }
}
