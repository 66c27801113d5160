//! Rust closures as the host callbacks of graph nodes: the `(fn, user_data, release)` triple
//! that `cucore_graph_definition_add_host_callback`, `cucore_graph_node_set_host_callback`,
//! `cucore_graph_set_host_callback_node` and `cucore_graph_builder_callback` take. Part of
//! [`graph`](super).
//!
//! A node's callback runs every time the node runs, on a driver thread, and may run on several
//! threads at once (two graphs instantiated from one definition, launched on two streams), so
//! the closure sits behind a mutex: `FnMut + Send` is enough. The library owns the closure from
//! the call on and releases it once, when the definition, its clones and every graph made from
//! them no longer need it (on its own release thread): the release function drops it there.

use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cucore_sys as sys;

use crate::common::{abort_on_panic, check, Result};

/// The heap cell behind a callback's `user_data`. Two references while the call runs: the
/// library's (taken back by [`release_trampoline`]) and the caller's, kept until the call has
/// returned, so that whichever way the call ends the closure is dropped exactly once, also
/// where the library runs the release function inside a failing call (which it does: the
/// contract says `release` runs when the call fails).
struct HostCallback<F> {
    f: Mutex<F>,
    released: AtomicBool,
}

unsafe extern "C" fn call_trampoline<F: FnMut() + Send + 'static>(user_data: *mut c_void) {
    // SAFETY: user_data is the library's reference to a HostCallback<F> (from Arc::into_raw in
    // `hand_over`), alive until the release function runs, which the library does only after
    // the last run of the node.
    let cell = unsafe { &*(user_data as *const HostCallback<F>) };
    abort_on_panic("a graph host callback", || {
        // A panic aborts before the lock could be poisoned; into_inner is for form's sake.
        let mut f = match cell.f.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        (*f)();
    });
}

unsafe extern "C" fn release_trampoline<F: FnMut() + Send + 'static>(user_data: *mut c_void) {
    // SAFETY: takes back the library's reference (from Arc::into_raw in `hand_over`), which the
    // library gives up once.
    let cell: Arc<HostCallback<F>> = unsafe { Arc::from_raw(user_data as *const HostCallback<F>) };
    cell.released.store(true, Ordering::SeqCst);
    // Dropping the closure runs its captures' destructors, which could panic.
    abort_on_panic("dropping a graph host callback", move || drop(cell));
}

/// Hands `f` to a C call that takes `(fn, user_data, release)`: `call` makes the call with the
/// three and returns its status. On success the library owns the closure; on failure it was
/// dropped (by the library's release inside the call, or here when the library never took it).
pub(crate) fn hand_over<F, C>(f: F, call: C) -> Result<()>
where
    F: FnMut() + Send + 'static,
    C: FnOnce(sys::cucore_host_fn, *mut c_void, sys::cucore_release_fn) -> sys::cucore_status_t,
{
    let kept = Arc::new(HostCallback { f: Mutex::new(f), released: AtomicBool::new(false) });
    let user_data = Arc::into_raw(kept.clone()) as *mut c_void;
    let result = check(call(Some(call_trampoline::<F>), user_data, Some(release_trampoline::<F>)));
    if result.is_err() && !kept.released.load(Ordering::SeqCst) {
        // SAFETY: the call failed without releasing, so the library holds nothing: its
        // reference is still ours to free.
        drop(unsafe { Arc::from_raw(user_data as *const HostCallback<F>) });
    }
    drop(kept);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A stand-in for the library: runs the callback `runs` times, then releases it (or, with
    /// `release` false, fails without taking it).
    fn fake_call(
        runs: usize,
        release: bool,
        status: sys::cucore_status_t,
    ) -> impl FnOnce(sys::cucore_host_fn, *mut c_void, sys::cucore_release_fn) -> sys::cucore_status_t {
        move |f, data, r| {
            // SAFETY: the trampolines and data hand_over made, used as the library would.
            unsafe {
                for _ in 0..runs {
                    f.unwrap()(data);
                }
                if release {
                    r.unwrap()(data);
                }
            }
            status
        }
    }

    #[test]
    fn the_closure_runs_each_time_and_is_dropped_once() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        hand_over(
            move || {
                c.fetch_add(1, Ordering::SeqCst);
            },
            fake_call(3, true, sys::CUCORE_SUCCESS),
        )
        .unwrap();
        assert_eq!(count.load(Ordering::SeqCst), 3);
        assert_eq!(Arc::strong_count(&count), 1, "released: the closure and its capture are gone");
    }

    #[test]
    fn a_failed_call_that_releases_drops_the_closure_once() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let e = hand_over(
            move || {
                c.fetch_add(1, Ordering::SeqCst);
            },
            fake_call(0, true, sys::CUCORE_ERROR_INVALID_ARGUMENT),
        );
        assert!(e.is_err());
        assert_eq!(count.load(Ordering::SeqCst), 0);
        assert_eq!(Arc::strong_count(&count), 1);
    }

    #[test]
    fn a_failed_call_that_keeps_nothing_drops_the_closure_here() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let e = hand_over(
            move || {
                c.fetch_add(1, Ordering::SeqCst);
            },
            fake_call(0, false, sys::CUCORE_ERROR_INVALID_HANDLE),
        );
        assert!(e.is_err());
        assert_eq!(Arc::strong_count(&count), 1);
    }

    #[test]
    fn a_successful_call_keeps_the_closure_until_release() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let mut kept: Option<(sys::cucore_host_fn, *mut c_void, sys::cucore_release_fn)> = None;
        hand_over(
            move || {
                c.fetch_add(1, Ordering::SeqCst);
            },
            |f, d, r| {
                kept = Some((f, d, r));
                sys::CUCORE_SUCCESS
            },
        )
        .unwrap();
        assert_eq!(Arc::strong_count(&count), 2, "the library holds the closure");
        let (f, d, r) = kept.unwrap();
        // SAFETY: as the library would: run, then release once.
        unsafe {
            f.unwrap()(d);
            r.unwrap()(d);
        }
        assert_eq!(count.load(Ordering::SeqCst), 1);
        assert_eq!(Arc::strong_count(&count), 1);
    }
}
