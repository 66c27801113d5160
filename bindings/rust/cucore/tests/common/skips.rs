//! Skips that cargo shows. libtest has no dynamic skip: a test that cannot run here (no driver,
//! no device, no NVRTC, a feature the device lacks) returns early and counts as passed, and what
//! it prints is captured. So a skipping test calls [`skip`], which prints
//! `skipped: <test>: <reason>` on stderr (seen with `--nocapture`, as before) and records it; when
//! the test binary exits, one summary goes to stdout, after libtest's `test result` line, where
//! `cargo test` shows it:
//!
//! ```text
//! test result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
//!
//! skipped: 12 of the tests above (libtest counts them as passed):
//!     12: no usable CUDA driver (CUCORE_ERROR_NO_DRIVER: ...): buffer_views, buffer_fill, ...
//! ```
//!
//! The first line's number is what `scripts/gpu_suite.sh` counts (`^skipped: [0-9]+ of the tests`):
//! one summary per binary, however the per-test lines interleave. Used by every test binary of
//! the `cucore` crate, the unit tests of `src/tests.rs` included (through `#[path]`).
#![allow(dead_code)]

use std::os::raw::{c_int, c_void};
use std::sync::{Mutex, Once};

static SKIPS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
static SUMMARY_AT_EXIT: Once = Once::new();

extern "C" {
    fn atexit(callback: extern "C" fn()) -> c_int;
    fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
}

/// Records that `test` is skipped for `reason` and prints it; the caller then returns.
pub fn skip(test: &str, reason: &str) {
    eprintln!("skipped: {}: {}", test, reason);
    SKIPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((test.to_string(), reason.to_string()));
    SUMMARY_AT_EXIT.call_once(|| {
        // SAFETY: registers a plain function that never unwinds.
        unsafe {
            atexit(print_summary);
        }
    });
}

/// The summary of `skips`, grouped by reason in the order reasons first came.
pub fn summary(skips: &[(String, String)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (test, reason) in skips {
        match groups.iter_mut().find(|(r, _)| *r == reason.as_str()) {
            Some((_, tests)) => tests.push(test),
            None => groups.push((reason, vec![test])),
        }
    }
    let mut text = format!("\nskipped: {} of the tests above (libtest counts them as passed):\n", skips.len());
    for (reason, tests) in groups {
        text.push_str(&format!("    {}: {}: {}\n", tests.len(), reason, tests.join(", ")));
    }
    text
}

/// At exit, after libtest has printed its result: the summary, written to stdout's descriptor
/// directly (Rust's stdout is flushed by then, and may be locked by a test thread that is still
/// running). Never panics.
extern "C" fn print_summary() {
    let skips = match SKIPS.try_lock() {
        Ok(skips) => skips,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    if skips.is_empty() {
        return;
    }
    let text = summary(&skips);
    let mut bytes = text.as_bytes();
    while !bytes.is_empty() {
        // SAFETY: a valid buffer of `bytes.len()` bytes.
        let n = unsafe { write(1, bytes.as_ptr() as *const c_void, bytes.len()) };
        if n <= 0 {
            break;
        }
        bytes = &bytes[n as usize..];
    }
}
