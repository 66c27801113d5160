//! User-defined memory resources (`include/cucore/user_memory.h`: `cucore_user_memory_resource_create`;
//! cuda.core's `MemoryResource` subclasses): a Rust value implementing [`UserMemoryResource`]
//! hands out and takes back the memory of a [`MemoryResource`], whose buffers then behave like
//! any other.
//!
//! The value is boxed into the callbacks' `user_data`; the library calls it from any thread (so
//! it is `Send + Sync`) and drops the box when the resource's last reference goes, after every
//! buffer from it was deallocated. A panic inside a callback never unwinds into C: in
//! `allocate` it becomes a `Status::Internal` failure of the allocating call; in `deallocate` a
//! `Status::Internal` error status, which the library reports as a release error (as it does an
//! `Err` from `deallocate`); in `Drop` it is printed on stderr (by the panic hook) and swallowed,
//! since destroy cannot report failures.

use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::common::{check, Error, Result, Status};
use crate::memory_resource::{Accessibility, MemoryResource};
use crate::stream::Stream;

/// A stream lent to a callback for the duration of the call (the library's `stream` argument,
/// borrowed: no reference is added or dropped). It derefs to [`Stream`], so every stream method
/// works on it; [`StreamRef::to_stream`] gives an owned [`Stream`] (a new reference) to keep
/// beyond the call. (On a `&StreamRef`, `.clone()` only copies the reference.)
pub struct StreamRef {
    stream: ManuallyDrop<Stream>,
}

impl StreamRef {
    /// # Safety
    /// `raw` is NULL or a live stream handle that stays valid while the returned value is used.
    unsafe fn borrow(raw: *mut sys::cucore_stream_t) -> Option<StreamRef> {
        // SAFETY: the caller's contract; ManuallyDrop keeps the borrowed reference from being
        // released.
        NonNull::new(raw).map(|raw| StreamRef { stream: ManuallyDrop::new(unsafe { Stream::adopt(raw.as_ptr()) }) })
    }
}

impl StreamRef {
    /// An owned reference to the stream, valid after the call (`cucore_stream_retain`).
    pub fn to_stream(&self) -> Stream {
        Stream::clone(&self.stream)
    }
}

impl Deref for StreamRef {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        &self.stream
    }
}

impl std::fmt::Debug for StreamRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StreamRef({:p})", self.stream.as_raw())
    }
}

/// A memory resource written in Rust (cuda.core's `MemoryResource` subclass). Both callbacks
/// may be called from any thread, concurrently. `device_id`, `accessibility` and `is_managed`
/// are read once, when [`MemoryResource::user`] makes the resource.
pub trait UserMemoryResource: Send + Sync {
    /// Returns the address of `size` (> 0) new bytes, or an error whose status the allocating
    /// call returns (e.g. `Status::OutOfMemory`; its message is added to the call's message when
    /// the call was made from Rust). `stream` is the allocation stream (None when the caller gave
    /// none), lent for this call.
    fn allocate(&self, size: u64, stream: Option<&StreamRef>) -> Result<u64>;

    /// Frees what `allocate` returned (`address`, `size`), ordered on `stream` (the buffer's
    /// deallocation stream; None when it has none). An `Err` cannot reach the release that freed
    /// the buffer: its status is counted and passed to the release error handler
    /// ([`release_error_count`](crate::release_error_count),
    /// [`set_release_error_handler`](crate::set_release_error_handler)) with a message naming
    /// this callback (the error's own message stays on the Rust side). It is never retried.
    fn deallocate(&self, address: u64, size: u64, stream: Option<&StreamRef>) -> Result<()>;

    /// The ordinal of the device whose memory this is; None (the default) for host memory.
    fn device_id(&self) -> Option<i32> {
        None
    }

    /// Where the memory can be used from. By default: device memory from its device only, host
    /// memory from the host only.
    fn accessibility(&self) -> Accessibility {
        let on_device = self.device_id().is_some();
        Accessibility { device: on_device, host: !on_device }
    }

    /// Whether this is managed (unified) memory; default false.
    fn is_managed(&self) -> bool {
        false
    }
}

/// Shared resources: the caller keeps an `Arc` to look at the resource's state.
impl<T: UserMemoryResource + ?Sized> UserMemoryResource for std::sync::Arc<T> {
    fn allocate(&self, size: u64, stream: Option<&StreamRef>) -> Result<u64> {
        (**self).allocate(size, stream)
    }
    fn deallocate(&self, address: u64, size: u64, stream: Option<&StreamRef>) -> Result<()> {
        (**self).deallocate(address, size, stream)
    }
    fn device_id(&self) -> Option<i32> {
        (**self).device_id()
    }
    fn accessibility(&self) -> Accessibility {
        (**self).accessibility()
    }
    fn is_managed(&self) -> bool {
        (**self).is_managed()
    }
}

/// Boxed resources, e.g. `Box<dyn UserMemoryResource>` chosen at run time.
impl<T: UserMemoryResource + ?Sized> UserMemoryResource for Box<T> {
    fn allocate(&self, size: u64, stream: Option<&StreamRef>) -> Result<u64> {
        (**self).allocate(size, stream)
    }
    fn deallocate(&self, address: u64, size: u64, stream: Option<&StreamRef>) -> Result<()> {
        (**self).deallocate(address, size, stream)
    }
    fn device_id(&self) -> Option<i32> {
        (**self).device_id()
    }
    fn accessibility(&self) -> Accessibility {
        (**self).accessibility()
    }
    fn is_managed(&self) -> bool {
        (**self).is_managed()
    }
}

thread_local! {
    /// The error the last failing `allocate` callback returned on this thread, so that the
    /// allocating call made from Rust can add its message (the C ABI carries only the status).
    static CALLBACK_ERROR: RefCell<Option<Error>> = const { RefCell::new(None) };
}

fn remember(error: Error) {
    // try_with: never panic here, even while the thread is being torn down.
    let _ = CALLBACK_ERROR.try_with(|slot| *slot.borrow_mut() = Some(error));
}

/// Forgets a callback error left from an earlier call; call right before an allocating call.
pub(crate) fn forget_callback_error() {
    let _ = CALLBACK_ERROR.try_with(|slot| slot.borrow_mut().take());
}

/// Adds the message of the callback error behind `error`, if this thread's last allocating call
/// failed in a Rust `allocate` callback with the same status.
pub(crate) fn explain(mut error: Error) -> Error {
    let cause = CALLBACK_ERROR.try_with(|slot| slot.borrow_mut().take()).ok().flatten();
    if let Some(cause) = cause {
        if cause.status == error.status && !cause.message.is_empty() {
            error.message = format!("{}: {}", error.message, cause.message);
        }
    }
    error
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

unsafe extern "C" fn allocate_trampoline<R: UserMemoryResource>(
    user_data: *mut c_void,
    size: u64,
    stream: *mut sys::cucore_stream_t,
    address: *mut u64,
) -> sys::cucore_status_t {
    if user_data.is_null() || address.is_null() {
        return sys::CUCORE_ERROR_INTERNAL;
    }
    // SAFETY: user_data is the Box<R> made by MemoryResource::user, alive until destroy; the
    // library passes a stream valid for the call (or NULL).
    let (resource, stream) = unsafe { (&*(user_data as *const R), StreamRef::borrow(stream)) };
    let outcome = catch_unwind(AssertUnwindSafe(|| resource.allocate(size, stream.as_ref())));
    let error = match outcome {
        Ok(Ok(addr)) => {
            // SAFETY: a valid out-pointer for the call.
            unsafe { *address = addr };
            return sys::CUCORE_SUCCESS;
        }
        Ok(Err(e)) if e.status == Status::Success => Error::binding(
            Status::Internal,
            format!("the user memory resource's allocate returned an error with status Success: {}", e.message),
        ),
        Ok(Err(e)) => e,
        Err(payload) => Error::binding(
            Status::Internal,
            format!("the user memory resource's allocate panicked: {}", panic_text(&*payload)),
        ),
    };
    let status = error.status.raw();
    remember(error);
    status
}

unsafe extern "C" fn deallocate_trampoline<R: UserMemoryResource>(
    user_data: *mut c_void,
    address: u64,
    size: u64,
    stream: *mut sys::cucore_stream_t,
) -> sys::cucore_status_t {
    if user_data.is_null() {
        return sys::CUCORE_ERROR_INTERNAL;
    }
    // SAFETY: as in allocate_trampoline.
    let (resource, stream) = unsafe { (&*(user_data as *const R), StreamRef::borrow(stream)) };
    // The library reports a failing status as a release error; a panic (also printed by the panic
    // hook) must not unwind into C and becomes Status::Internal.
    match catch_unwind(AssertUnwindSafe(|| resource.deallocate(address, size, stream.as_ref()))) {
        Ok(Ok(())) => sys::CUCORE_SUCCESS,
        Ok(Err(e)) if e.status == Status::Success => sys::CUCORE_ERROR_INTERNAL,
        Ok(Err(e)) => e.status.raw(),
        Err(_) => sys::CUCORE_ERROR_INTERNAL,
    }
}

unsafe extern "C" fn destroy_trampoline<R: UserMemoryResource>(user_data: *mut c_void) {
    if user_data.is_null() {
        return;
    }
    // SAFETY: the Box<R> made by MemoryResource::user; the library calls destroy exactly once,
    // after the last use of the callbacks.
    let resource = unsafe { Box::from_raw(user_data as *mut R) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(resource)));
}

impl MemoryResource {
    /// A resource whose memory comes from `resource` (`cucore_user_memory_resource_create`).
    /// The library owns `resource` from now on and drops it when the last reference to the
    /// returned resource goes, after every buffer from it was deallocated; if this call fails,
    /// `resource` is dropped before it returns. Allocating from it takes an optional stream,
    /// which is passed on to `allocate`.
    pub fn user<R: UserMemoryResource + 'static>(resource: R) -> Result<MemoryResource> {
        let device_id = resource.device_id().unwrap_or(-1);
        let accessibility = resource.accessibility();
        let managed = resource.is_managed();
        let boxed = Box::into_raw(Box::new(resource));
        let mut callbacks = sys::cucore_memory_resource_callbacks_t::INIT;
        callbacks.allocate = Some(allocate_trampoline::<R>);
        callbacks.deallocate = Some(deallocate_trampoline::<R>);
        callbacks.destroy = Some(destroy_trampoline::<R>);
        callbacks.user_data = boxed as *mut c_void;
        callbacks.device_id = device_id;
        callbacks.device_accessible = accessibility.device as u32;
        callbacks.host_accessible = accessibility.host as u32;
        callbacks.managed = managed as u32;
        let mut raw = ptr::null_mut();
        // SAFETY: valid callbacks (the trampolines fit user_data) and out-pointer; the library
        // copies the struct.
        let result = check(unsafe { sys::cucore_user_memory_resource_create(&callbacks, &mut raw) });
        if result.is_err() {
            // The library never calls destroy when the call fails: the box is still ours. The
            // error was read above, before R's Drop could make library calls of its own.
            // SAFETY: made by Box::into_raw above and not handed over.
            drop(unsafe { Box::from_raw(boxed) });
        }
        result?;
        MemoryResource::from_out(raw)
    }
}
