//! What `include/cucore/context.h` holds: CUDA contexts (primary, green ones made of device
//! resources: see [`crate::device_resources`], or foreign ones wrapped).

use std::fmt;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{c_bool, check, owner_handoff, OwnerCallback, Result};
use crate::device::Device;
use crate::event::{Event, EventOptions};
use crate::stream::{Stream, StreamOptions};

/// A CUDA context (`cucore_context_t`): a device's primary context, a green context
/// ([`Context::create`]), or a foreign `CUcontext` wrapped without taking ownership.
pub struct Context {
    raw: NonNull<sys::cucore_context_t>,
}

handle_type!(Context, sys::cucore_context_t);
identity_eq!(Context);

impl Context {
    /// The primary context of `device`, retained (`cuDevicePrimaryCtxRetain`) while the returned
    /// value or anything made in it lives (`cucore_context_get_primary`).
    pub fn primary(device: &Device) -> Result<Context> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_context_get_primary(device.as_raw(), &mut raw) })?;
        Context::from_out(raw)
    }

    /// The context current on the calling thread, or `None` when none is
    /// (`cucore_context_get_current`; cuda.core's `Device.set_current` returns the one it replaces).
    /// A device's primary context comes back as the primary [`Context`] while one lives.
    pub fn current() -> Result<Option<Context>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; we own the reference it gives (NULL: none current).
        check(unsafe { sys::cucore_context_get_current(&mut raw) })?;
        if raw.is_null() {
            return Ok(None);
        }
        Context::from_out(raw).map(Some)
    }

    /// Wraps a foreign `CUcontext` without owning it (`cucore_context_from_handle`). When the
    /// last reference goes, `owner` is called (on the releasing thread) and nothing else is done
    /// to the context. If the call fails, `owner` is never called afterwards (see [`OwnerCallback`]).
    ///
    /// # Safety
    /// `cu_context` is a valid `CUcontext` that stays alive until `owner` is called (or, without
    /// an owner, until the last clone of the returned value and of every object made in it is
    /// dropped).
    pub unsafe fn from_handle(cu_context: *mut c_void, owner: Option<OwnerCallback>) -> Result<Context> {
        let handoff = owner_handoff(owner);
        let mut raw = ptr::null_mut();
        // SAFETY: the caller vouches for cu_context; the handoff's user_data fits its on_release.
        let status =
            unsafe { sys::cucore_context_from_handle(cu_context, handoff.on_release, handoff.user_data, &mut raw) };
        let result = check(status);
        handoff.finish(result.is_ok());
        result?;
        Context::from_out(raw)
    }

    /// The raw `CUcontext` (cuda.core's `Context.handle`).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_context_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// The context's device.
    pub fn device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer; we own the reference it gives.
        check(unsafe { sys::cucore_context_device(self.as_raw(), &mut raw) })?;
        Device::from_out(raw)
    }

    /// Whether this is the device's primary context (false for a wrapped foreign one).
    pub fn is_primary(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_context_is_primary(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// Whether this is a green context.
    pub fn is_green(&self) -> Result<bool> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_context_is_green(self.as_raw(), &mut v) })?;
        Ok(c_bool(v))
    }

    /// The raw `CUgreenCtx` of a green context (NULL for other contexts).
    pub fn green_handle(&self) -> Result<*mut c_void> {
        let mut h = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_context_green_handle(self.as_raw(), &mut h) })?;
        Ok(h)
    }

    /// Makes the context current on the calling thread (`cuCtxSetCurrent`); what is current
    /// afterwards is the caller's business.
    pub fn set_current(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_context_set_current(self.as_raw()) })
    }

    /// Waits for all work in the context.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_context_synchronize(self.as_raw()) })
    }

    /// A new stream in this context.
    pub fn create_stream(&self, options: StreamOptions) -> Result<Stream> {
        Stream::create_in_context(self, options)
    }

    /// A new event in this context.
    pub fn create_event(&self, options: EventOptions) -> Result<Event> {
        Event::create_in_context(self, options)
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.handle() {
            Ok(h) => write!(f, "Context({:p})", h),
            Err(_) => write!(f, "Context(<library handle {:p}>)", self.as_raw()),
        }
    }
}
