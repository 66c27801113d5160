//! What `include/cucore/common.h` holds: statuses and errors, the version, diagnostics
//! (live objects, release-path failures), and the plumbing shared by the other modules.

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, Mutex};

use cucore_sys as sys;

/// The status of a failed call: `cucore_status_t`, less `CUCORE_SUCCESS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// `CUCORE_SUCCESS` (never inside an [`Error`] the library made).
    Success,
    /// An argument is out of range, NULL where it may not be, or inconsistent.
    InvalidArgument,
    /// A handle is NULL, released, of another type, or not a handle at all.
    InvalidHandle,
    /// The object is not in a state that allows the call.
    InvalidState,
    /// libcuda.so.1 could not be loaded or initialised.
    NoDriver,
    /// No CUDA device is present, or the ordinal names none.
    NoDevice,
    /// The driver (or NVRTC/nvJitLink) lacks the entry point or the feature.
    NotSupported,
    /// Host or device memory ran out.
    OutOfMemory,
    /// Any other driver failure; [`Error::cuda_result`] holds the `CUresult`.
    Cuda,
    /// Work the call asked about has not completed yet.
    NotReady,
    /// An unexpected failure inside the library (a bug).
    Internal,
    /// NVRTC, libNVVM or the linker rejected the input: the message carries the first lines of
    /// the log, the whole log stays on the [`Program`](crate::Program) or
    /// [`Linker`](crate::Linker).
    Compilation,
    /// A value this binding does not know (a newer library).
    Unknown(i32),
}

impl Status {
    /// The status of a raw `cucore_status_t`.
    pub fn from_raw(raw: sys::cucore_status_t) -> Status {
        match raw {
            sys::CUCORE_SUCCESS => Status::Success,
            sys::CUCORE_ERROR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::CUCORE_ERROR_INVALID_HANDLE => Status::InvalidHandle,
            sys::CUCORE_ERROR_INVALID_STATE => Status::InvalidState,
            sys::CUCORE_ERROR_NO_DRIVER => Status::NoDriver,
            sys::CUCORE_ERROR_NO_DEVICE => Status::NoDevice,
            sys::CUCORE_ERROR_NOT_SUPPORTED => Status::NotSupported,
            sys::CUCORE_ERROR_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::CUCORE_ERROR_CUDA => Status::Cuda,
            sys::CUCORE_ERROR_NOT_READY => Status::NotReady,
            sys::CUCORE_ERROR_INTERNAL => Status::Internal,
            sys::CUCORE_ERROR_COMPILATION => Status::Compilation,
            other => Status::Unknown(other),
        }
    }

    /// The raw `cucore_status_t`.
    pub fn raw(self) -> sys::cucore_status_t {
        match self {
            Status::Success => sys::CUCORE_SUCCESS,
            Status::InvalidArgument => sys::CUCORE_ERROR_INVALID_ARGUMENT,
            Status::InvalidHandle => sys::CUCORE_ERROR_INVALID_HANDLE,
            Status::InvalidState => sys::CUCORE_ERROR_INVALID_STATE,
            Status::NoDriver => sys::CUCORE_ERROR_NO_DRIVER,
            Status::NoDevice => sys::CUCORE_ERROR_NO_DEVICE,
            Status::NotSupported => sys::CUCORE_ERROR_NOT_SUPPORTED,
            Status::OutOfMemory => sys::CUCORE_ERROR_OUT_OF_MEMORY,
            Status::Cuda => sys::CUCORE_ERROR_CUDA,
            Status::NotReady => sys::CUCORE_ERROR_NOT_READY,
            Status::Internal => sys::CUCORE_ERROR_INTERNAL,
            Status::Compilation => sys::CUCORE_ERROR_COMPILATION,
            Status::Unknown(raw) => raw,
        }
    }

    /// The library's name of the status, e.g. `"CUCORE_ERROR_INVALID_HANDLE"`
    /// (`cucore_status_string`; `"CUCORE_STATUS_UNKNOWN"` for values it does not define).
    pub fn name(self) -> &'static str {
        // SAFETY: the library returns static storage, never NULL.
        unsafe { static_str(sys::cucore_status_string(self.raw())) }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: the status, the driver's `CUresult` when the driver caused it (else 0), and
/// the library's message (`cucore_last_error_message()`: the function, the offending argument
/// or object, and the driver's error name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub status: Status,
    /// The driver's `CUresult`, or 0 when the driver did not cause the failure.
    pub cuda_result: i32,
    /// The library's description of the failure.
    pub message: String,
}

impl Error {
    /// The error of the last failed call on this thread (status `status`). Call it right after
    /// the failing call, on the same thread.
    pub(crate) fn last(status: sys::cucore_status_t) -> Error {
        // SAFETY: both calls only read this thread's error slot; the message is never NULL.
        let (message, cuda_result) =
            unsafe { (owned_str(sys::cucore_last_error_message()), sys::cucore_last_cuda_result()) };
        Error { status: Status::from_raw(status), cuda_result, message }
    }

    /// An error made by the caller, e.g. for a [`UserMemoryResource`](crate::UserMemoryResource)
    /// callback to return (no driver result).
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, cuda_result: 0, message: message.into() }
    }

    /// An error made by the binding itself (no library call failed).
    pub(crate) fn binding(status: Status, message: String) -> Error {
        Error { status, cuda_result: 0, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status.name())?;
        if self.cuda_result != 0 {
            write!(f, " (CUresult {})", self.cuda_result)?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// `std::result::Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Turns a status into a `Result`, reading the message on failure.
#[inline]
pub(crate) fn check(status: sys::cucore_status_t) -> Result<()> {
    if status == sys::CUCORE_SUCCESS {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string in static storage.
pub(crate) unsafe fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("<non-UTF-8>")
}

/// # Safety
/// `p` is NULL or a NUL-terminated string valid for the call.
pub(crate) unsafe fn owned_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

// ---- Version --------------------------------------------------------------------------------------

/// The version of the headers this binding was written against, encoded like
/// [`version()`]: `MAJOR * 10000 + MINOR * 100 + PATCH`.
pub const BINDING_VERSION: u32 = sys::CUCORE_VERSION;

/// The loaded library's version, `MAJOR * 10000 + MINOR * 100 + PATCH` (`cucore_version`).
pub fn version() -> u32 {
    // SAFETY: no arguments; never fails.
    unsafe { sys::cucore_version() }
}

/// The loaded library's version as `"MAJOR.MINOR.PATCH"` (`cucore_version_string`).
pub fn version_string() -> &'static str {
    // SAFETY: static storage, never NULL.
    unsafe { static_str(sys::cucore_version_string()) }
}

// ---- Diagnostics ----------------------------------------------------------------------------------

pub use crate::object_type::ObjectType;

impl ObjectType {
    /// The library's name of the type, e.g. `"stream"` (`cucore_object_type_name`).
    pub fn name(self) -> &'static str {
        // SAFETY: static storage, never NULL.
        unsafe { static_str(sys::cucore_object_type_name(self.raw())) }
    }
}

/// The number of live objects of `kind` ([`ObjectType::Any`]: all kinds) in the process, for
/// leak tests (`cucore_live_object_count`). Devices live until the process ends.
pub fn live_object_count(kind: ObjectType) -> Result<usize> {
    let mut count: usize = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_live_object_count(kind.raw(), &mut count) })?;
    Ok(count)
}

/// How many failures happened inside release paths (which cannot return them) since the
/// process started (`cucore_release_error_count`).
pub fn release_error_count() -> Result<u64> {
    let mut count: u64 = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_release_error_count(&mut count) })?;
    Ok(count)
}

/// A release-error handler: called with each failure inside a release path, on the thread that
/// released.
pub type ReleaseErrorHandler = dyn Fn(&Error) + Send + Sync + 'static;

static RELEASE_ERROR_HANDLER: Mutex<Option<Arc<ReleaseErrorHandler>>> = Mutex::new(None);

unsafe extern "C" fn release_error_trampoline(
    status: sys::cucore_status_t,
    cuda_result: c_int,
    message: *const c_char,
    _user_data: *mut c_void,
) {
    let handler = match RELEASE_ERROR_HANDLER.lock() {
        Ok(guard) => guard.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    if let Some(handler) = handler {
        // SAFETY: the library passes a NUL-terminated message valid during the call.
        let message = unsafe { owned_str(message) };
        let error = Error { status: Status::from_raw(status), cuda_result, message };
        abort_on_panic("the release-error handler", move || handler(&error));
    }
}

/// Installs `handler` (None: none) to be called for each failure inside a release path
/// (`cucore_set_release_error_handler`). Process-wide; replaces the previous handler. A panic
/// inside the handler cannot unwind into C: it aborts the process, after printing the panic.
pub fn set_release_error_handler(handler: Option<Box<ReleaseErrorHandler>>) {
    let handler: Option<Arc<ReleaseErrorHandler>> = handler.map(Arc::from);
    let install = handler.is_some();
    {
        let mut slot = match RELEASE_ERROR_HANDLER.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *slot = handler;
    }
    // The trampoline reads the slot on every call, so a handler being replaced while another
    // thread runs the old one is harmless (that thread holds its own Arc).
    // SAFETY: the trampoline is a valid function for the life of the process.
    unsafe {
        if install {
            sys::cucore_set_release_error_handler(Some(release_error_trampoline), std::ptr::null_mut());
        } else {
            sys::cucore_set_release_error_handler(None, std::ptr::null_mut());
        }
    }
}

// ---- Callbacks into Rust ----------------------------------------------------------------------------

/// Runs `f`; a panic cannot cross into C (that would be undefined behaviour), so it is reported
/// on stderr and the process aborts, as Rust does for a panic in an `extern "C"` function.
pub(crate) fn abort_on_panic<F: FnOnce()>(what: &str, f: F) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        let text = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "<non-string panic payload>".to_string()
        };
        eprintln!("cucore: panic in {} (called from C): {}; aborting", what, text);
        std::process::abort();
    }
}

/// The owner of a wrapped foreign object (`Context/Stream/Event::from_handle`): called once, on
/// the releasing thread, when the last reference to the wrapper goes. When the wrapping call
/// fails, the callback is never called afterwards: normally it is dropped uncalled; only where
/// the library itself gives up the half-made wrapper inside the failing call (it could not
/// register the object) has it already run, once. A panic inside it aborts the process.
pub type OwnerCallback = Box<dyn FnOnce() + Send + 'static>;

/// The heap cell behind an owner callback's `user_data`. Two references: one is the library's
/// (taken back by the trampoline), one stays with the `*_from_handle` caller until the call has
/// returned, so that whichever way the call ends, the callback runs at most once and the cell
/// is freed exactly once, even where the library calls `on_release` inside a failing call
/// (which it does when it cannot register the new object).
pub(crate) struct OwnerSlot {
    callback: Mutex<Option<OwnerCallback>>,
}

impl OwnerSlot {
    fn take(&self) -> Option<OwnerCallback> {
        match self.callback.lock() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }
}

pub(crate) unsafe extern "C" fn owner_trampoline(user_data: *mut c_void) {
    if user_data.is_null() {
        return;
    }
    // SAFETY: made by `owner_handoff` from Arc::into_raw; this takes back the library's
    // reference, which the library uses once.
    let slot: Arc<OwnerSlot> = unsafe { Arc::from_raw(user_data as *const OwnerSlot) };
    let callback = slot.take();
    drop(slot);
    if let Some(callback) = callback {
        abort_on_panic("an owner's release callback", callback);
    }
}

/// An owner callback on its way into a `*_from_handle` call: pass `on_release` and `user_data`
/// to the call, then `finish` with its status.
pub(crate) struct OwnerHandoff {
    pub(crate) on_release: sys::cucore_release_fn,
    pub(crate) user_data: *mut c_void,
    kept: Option<Arc<OwnerSlot>>,
}

pub(crate) fn owner_handoff(owner: Option<OwnerCallback>) -> OwnerHandoff {
    match owner {
        Some(callback) => {
            let kept = Arc::new(OwnerSlot { callback: Mutex::new(Some(callback)) });
            let user_data = Arc::into_raw(kept.clone()) as *mut c_void;
            OwnerHandoff { on_release: Some(owner_trampoline), user_data, kept: Some(kept) }
        }
        None => OwnerHandoff { on_release: None, user_data: std::ptr::null_mut(), kept: None },
    }
}

impl OwnerHandoff {
    /// Ends the handoff once the call has returned. On success the library keeps its
    /// reference (the trampoline frees it). On failure the library holds nothing any more:
    /// either it already called the trampoline during the call, or it never will, and then the
    /// callback is dropped without being called and the library's reference is freed here.
    pub(crate) fn finish(self, succeeded: bool) {
        let kept = match self.kept {
            Some(kept) => kept,
            None => return,
        };
        if succeeded {
            return;
        }
        if let Some(callback) = kept.take() {
            drop(callback);
            // SAFETY: the trampoline did not run (the callback was still there) and never will
            // (the call failed), so the library's reference is still ours to free.
            drop(unsafe { Arc::from_raw(self.user_data as *const OwnerSlot) });
        }
    }
}

/// Reads a C boolean (`int` 0/1).
#[inline]
pub(crate) fn c_bool(v: c_int) -> bool {
    v != 0
}

// ---- Strings into and out of C ---------------------------------------------------------------------

/// `s` as a C string; an interior NUL is `Status::InvalidArgument` naming `what`.
pub(crate) fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::binding(Status::InvalidArgument, format!("{} contains a NUL byte: {:?}", what, s)))
}

/// A path as a C string (its bytes on Unix; it must be UTF-8 elsewhere).
pub(crate) fn path_c_string(path: &Path, what: &str) -> Result<CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        CString::new(path.as_os_str().as_bytes()).map_err(|_| {
            Error::binding(Status::InvalidArgument, format!("{} contains a NUL byte: {}", what, path.display()))
        })
    }
    #[cfg(not(unix))]
    {
        match path.to_str() {
            Some(s) => c_string(s, what),
            None => Err(Error::binding(Status::InvalidArgument, format!("{} is not UTF-8: {}", what, path.display()))),
        }
    }
}

/// C strings and the array of pointers to them that a C call takes as `(const char *const *,
/// count)`. The pointers stay valid while this value lives (the strings' bytes are on the heap,
/// so moving the value moves nothing they point at).
#[derive(Default)]
pub(crate) struct CStringArray {
    strings: Vec<CString>,
    pointers: Vec<*const c_char>,
}

impl CStringArray {
    pub(crate) fn new<S: AsRef<str>>(items: &[S], what: &str) -> Result<CStringArray> {
        let strings = items.iter().map(|s| c_string(s.as_ref(), what)).collect::<Result<Vec<_>>>()?;
        let pointers = strings.iter().map(|s| s.as_ptr()).collect();
        Ok(CStringArray { strings, pointers })
    }

    /// The array (NULL when empty, as the C ABI allows for a zero count).
    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        if self.pointers.is_empty() {
            std::ptr::null()
        } else {
            self.pointers.as_ptr()
        }
    }

    pub(crate) fn len(&self) -> usize {
        debug_assert_eq!(self.strings.len(), self.pointers.len());
        self.pointers.len()
    }
}

/// Reads text that a C function copies out as `(char *buffer, size_t capacity, size_t *length)`
/// (a log, a flag list): asks for the length, then copies; asks again if the text grew meanwhile
/// (another thread's compile replaced a log).
pub(crate) fn read_text<F>(mut call: F) -> Result<String>
where
    F: FnMut(*mut c_char, usize, *mut usize) -> sys::cucore_status_t,
{
    let mut length: usize = 0;
    check(call(std::ptr::null_mut(), 0, &mut length))?;
    loop {
        let mut buffer = vec![0u8; length + 1];
        let mut now: usize = 0;
        check(call(buffer.as_mut_ptr() as *mut c_char, buffer.len(), &mut now))?;
        if now <= length {
            buffer.truncate(now);
            return Ok(String::from_utf8_lossy(&buffer).into_owned());
        }
        length = now;
    }
}
