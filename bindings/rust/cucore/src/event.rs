//! What `include/cucore/event.h` holds: CUDA events.

use std::fmt;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, owner_handoff, OwnerCallback, Result};
use crate::context::Context;
use crate::device::Device;
use crate::stream::Stream;

/// How to create an event (cuda.core's `EventOptions`). The default: no timing, and a
/// synchronize spins rather than blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EventOptions {
    /// Record timestamps, so that [`Event::elapsed_time`] works (`CUCORE_EVENT_TIMING`).
    pub timing_enabled: bool,
    /// [`Event::synchronize`] blocks the thread instead of spinning
    /// (`CUCORE_EVENT_BLOCKING_SYNC`).
    pub blocking_sync: bool,
    /// Shareable with other processes ([`crate::ipc::export_event`]; `CUCORE_EVENT_INTERPROCESS`).
    /// Not together with `timing_enabled` (the driver shares only events without timing).
    pub ipc_enabled: bool,
}

impl EventOptions {
    /// Options with timing enabled.
    pub fn timing() -> EventOptions {
        EventOptions { timing_enabled: true, ..Default::default() }
    }

    /// Options of an event other processes can open ([`crate::ipc`]).
    pub fn ipc() -> EventOptions {
        EventOptions { ipc_enabled: true, ..Default::default() }
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_event_options_t {
        let mut o = sys::cucore_event_options_t::INIT;
        if self.timing_enabled {
            o.flags |= sys::CUCORE_EVENT_TIMING as u32;
        }
        if self.blocking_sync {
            o.flags |= sys::CUCORE_EVENT_BLOCKING_SYNC as u32;
        }
        if self.ipc_enabled {
            o.flags |= sys::CUCORE_EVENT_INTERPROCESS as u32;
        }
        o
    }
}

/// A CUDA event (`cucore_event_t`).
pub struct Event {
    raw: NonNull<sys::cucore_event_t>,
}

handle_type!(Event, sys::cucore_event_t);
identity_eq!(Event);

impl Event {
    /// A new event in `device`'s primary context (`cucore_event_create`).
    pub fn create(device: &Device, options: EventOptions) -> Result<Event> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle, valid options and out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_event_create(device.as_raw(), &o, &mut raw) })?;
        Event::from_out(raw)
    }

    /// A new event in `context` (`cucore_event_create_in_context`).
    pub fn create_in_context(context: &Context, options: EventOptions) -> Result<Event> {
        let o = options.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: as in `create`.
        check(unsafe { sys::cucore_event_create_in_context(context.as_raw(), &o, &mut raw) })?;
        Event::from_out(raw)
    }

    /// Wraps a foreign `CUevent` without owning it, in the calling thread's current context
    /// (`cucore_event_from_handle`; fails with `Status::InvalidState` when none is current). Its
    /// flags read as 0. When the last reference goes, `owner` is called; if the call fails,
    /// `owner` is never called afterwards (see [`OwnerCallback`]).
    ///
    /// # Safety
    /// `cu_event` is a valid `CUevent` of the current context that stays alive until `owner` is
    /// called (or, without an owner, until the last clone of the returned value is dropped).
    pub unsafe fn from_handle(cu_event: *mut c_void, owner: Option<OwnerCallback>) -> Result<Event> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for cu_event; the handoff's user_data fits its on_release.
        let status =
            unsafe { sys::cucore_event_from_handle(cu_event, handoff.on_release, handoff.user_data, &mut raw) };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        Event::from_out(raw)
    }

    /// Records the event on `stream`: it captures the work queued there so far
    /// (`cucore_event_record`). [`Stream::record`] creates and records a new one.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe { sys::cucore_event_record(self.as_raw(), stream.as_raw()) })
    }

    /// Waits until the recorded work has completed (an event never recorded is complete)
    /// (cuda.core's `Event.sync()`).
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_event_synchronize(self.as_raw()) })
    }

    /// Whether the recorded work has completed (`cucore_event_query`).
    pub fn is_done(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_event_query(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// Milliseconds from `start` to `end` (`cucore_event_elapsed_time`). Both need
    /// [`EventOptions::timing_enabled`], must have been recorded (else `Status::InvalidState`)
    /// and completed (else `Status::NotReady`).
    pub fn elapsed_time(start: &Event, end: &Event) -> Result<f32> {
        let mut ms: f32 = 0.0;
        // SAFETY: live handles and a valid out-pointer.
        check(unsafe { sys::cucore_event_elapsed_time(start.as_raw(), end.as_raw(), &mut ms) })?;
        Ok(ms)
    }

    /// Milliseconds since `start` (cuda.core's `end - start`); `&end - &start` does the same.
    pub fn elapsed_since(&self, start: &Event) -> Result<f32> {
        Event::elapsed_time(start, self)
    }

    /// The raw `cucore_event_flag_t` bits (0 for wrapped events).
    pub fn flags(&self) -> Result<u32> {
        let mut v: u32 = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_event_flags(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// Whether the event records timestamps.
    pub fn is_timing_enabled(&self) -> Result<bool> {
        Ok(self.flags()? & sys::CUCORE_EVENT_TIMING as u32 != 0)
    }

    /// Whether synchronizing blocks rather than spins.
    pub fn is_blocking_sync(&self) -> Result<bool> {
        Ok(self.flags()? & sys::CUCORE_EVENT_BLOCKING_SYNC as u32 != 0)
    }

    /// Whether other processes can open the event ([`EventOptions::ipc`]).
    pub fn is_ipc_enabled(&self) -> Result<bool> {
        Ok(self.flags()? & sys::CUCORE_EVENT_INTERPROCESS as u32 != 0)
    }

    /// The event's device.
    pub fn device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_event_device(self.as_raw(), &mut raw) })?;
        Device::from_out(raw)
    }

    /// The event's context.
    pub fn context(&self) -> Result<Context> {
        let mut raw = ptr::null_mut();
        // SAFETY: as in `device`.
        check(unsafe { sys::cucore_event_context(self.as_raw(), &mut raw) })?;
        Context::from_out(raw)
    }

    /// The raw `CUevent` (cuda.core's `Event.handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_event_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }
}

impl<'b> std::ops::Sub<&'b Event> for &Event {
    type Output = Result<f32>;

    /// `&end - &start`: milliseconds between the two, as cuda.core's `end - start`.
    fn sub(self, start: &'b Event) -> Result<f32> {
        Event::elapsed_time(start, self)
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "Event({:p})", h),
            Err(_) => write!(f, "Event(<library handle {:p}>)", self.as_raw()),
        }
    }
}
