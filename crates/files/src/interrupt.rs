//! The one owner of SIGINT/SIGTERM. Two handlers, one registry:
//!
//! - [`install_cleanup`] (the CLI, at start-up): a signal removes every
//!   partial file registered with [`register_partial`] (each
//!   [`crate::output::AtomicFile`] registers its temporary name) and ends
//!   the process with status 128 + the signal (130 for Ctrl-C). Only
//!   `unlink` and `_exit` run in the handler, both async-signal-safe.
//! - [`install`] (long jobs that stop cleanly: captures, jobs that change
//!   the machine and must undo it): the first signal only sets a flag, which
//!   the job polls ([`interrupted`], usable as a `stop: &dyn Fn() -> bool`
//!   callback), then stops, finalizes and undoes what it did; a second
//!   signal while it does so removes the partial files and exits at once.
//!
//! [`default_sigpipe`] is for command-line programs: the Rust runtime
//! ignores SIGPIPE, so a write to a closed pipe (`cannery ... | head -1`)
//! fails and `println!` panics; with the default disposition the process
//! ends quietly instead, as `cat` or `zstd` do.
//!
//! [`install`] returns a guard, [`Handlers`], whose drop puts back the
//! handlers that were in force before (the default ones in the CLI, the
//! interpreter's in the Python binding), so a capture leaves the process's
//! signal handling as it found it. Does not clear the flag on drop: callers
//! read [`interrupted`] after the capture and [`reset`] it themselves.

use crate::sys;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Partial files to remove on a signal: NUL-terminated paths, never freed
/// (a handler on another thread may be reading one), null when free.
const SLOTS: usize = 256;
static PARTIALS: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// True once a handler that removes partial files was installed
/// ([`install_cleanup`] or [`install`]): only then are they remembered.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Remembers `path` as a partial file the signal handlers remove, in a
/// process that installed them (a library user without our handlers, such
/// as a fuzz target writing files in a loop, keeps nothing). Beyond 256
/// files open at once the rest are not remembered (they are still removed
/// on drop, as without a signal). Each remembered path keeps its few bytes
/// for the life of the process: a command writes a bounded set of files.
pub fn register_partial(path: &Path) {
    if !ARMED.load(Ordering::SeqCst) {
        return;
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    let ptr = c.into_raw();
    for slot in &PARTIALS {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                ptr,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            return;
        }
    }
}

/// Forgets `path` (committed or removed by its writer).
pub fn unregister_partial(path: &Path) {
    let bytes = path.as_os_str().as_bytes();
    for slot in &PARTIALS {
        let p = slot.load(Ordering::SeqCst);
        if p.is_null() {
            continue;
        }
        if sys::leaked_c_str(p) == bytes {
            let _ =
                slot.compare_exchange(p, std::ptr::null_mut(), Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}

/// Removes every registered partial file (async-signal-safe).
fn remove_partials() {
    for slot in &PARTIALS {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            sys::unlink_in_handler(p);
        }
    }
}

extern "C" fn on_signal_cleanup(sig: libc::c_int) {
    remove_partials();
    sys::exit_in_handler(128 + sig);
}

/// Makes SIGINT and SIGTERM remove the registered partial files and end
/// the process (status 128 + signal). For command-line programs, at
/// start-up; [`install`] takes over while a job that stops cleanly runs.
pub fn install_cleanup() {
    ARMED.store(true, Ordering::SeqCst);
    for sig in SIGNALS {
        // A signal whose handler cannot be set keeps its default action:
        // the process ends, leaving partial files under hidden names.
        let _ = sys::set_signal_handler(sig, on_signal_cleanup);
    }
}

/// The signals [`install`] handles.
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

extern "C" fn on_signal(sig: libc::c_int) {
    // A second signal while the job stops: give up at once.
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        on_signal_cleanup(sig);
    }
}

/// The handlers [`install`] replaced; dropping it reinstalls them, for
/// every signal whose handler it changed, in reverse order.
#[derive(Debug)]
#[must_use = "dropping the guard at once restores the previous handlers"]
pub struct Handlers {
    saved: Vec<(libc::c_int, sys::SignalAction)>,
}

/// Install the handler for SIGINT and SIGTERM (without `SA_RESTART`, so
/// waits return early) until the returned guard is dropped. A signal whose
/// handler cannot be set is left as it was (and is not restored).
pub fn install() -> Handlers {
    ARMED.store(true, Ordering::SeqCst);
    let saved = SIGNALS
        .iter()
        .filter_map(|&sig| {
            sys::set_signal_handler(sig, on_signal)
                .ok()
                .map(|old| (sig, old))
        })
        .collect();
    Handlers { saved }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        for (sig, old) in self.saved.iter().rev() {
            // Nothing useful to do if the kernel refuses a disposition it
            // handed out itself.
            let _ = sys::restore_signal_action(*sig, old);
        }
    }
}

/// True once SIGINT or SIGTERM arrived (while a [`Handlers`] guard was
/// alive), or after [`raise`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Request an interruption, as if SIGINT arrived.
pub fn raise() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Clear the flag.
pub fn reset() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// Gives SIGPIPE its default disposition (end the process), for a command
/// line program whose output may go to a pipe that closes early. Call once
/// at start-up; not for libraries or the Python binding.
pub fn default_sigpipe() {
    // A failure leaves SIGPIPE ignored: writes then fail with EPIPE, which
    // is loud but loses nothing.
    let _ = sys::set_default_disposition(libc::SIGPIPE);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    extern "C" fn known_handler(_sig: libc::c_int) {}

    // The only unit test that touches signal dispositions or the flag, so
    // it cannot race another test of this binary.
    #[test]
    fn guard_restores_the_previous_handlers() {
        let originals: Vec<_> = SIGNALS
            .iter()
            .map(|&s| (s, sys::signal_action(s).unwrap()))
            .collect();
        for &s in &SIGNALS {
            sys::set_signal_handler(s, known_handler).unwrap();
        }
        let known = known_handler as extern "C" fn(libc::c_int) as usize;
        let ours = on_signal as extern "C" fn(libc::c_int) as usize;
        {
            let _guard = install();
            for &s in &SIGNALS {
                assert_eq!(sys::signal_action(s).unwrap().handler(), ours);
            }
            // While installed, SIGINT sets the flag instead of running
            // the previous handler.
            reset();
            sys::kill(std::process::id() as i32, libc::SIGINT).unwrap();
            let deadline = Instant::now() + Duration::from_secs(5);
            while !interrupted() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(interrupted());
            reset();
        }
        for &s in &SIGNALS {
            assert_eq!(
                sys::signal_action(s).unwrap().handler(),
                known,
                "signal {s}"
            );
        }
        for (s, a) in &originals {
            sys::restore_signal_action(*s, a).unwrap();
            assert_eq!(sys::signal_action(*s).unwrap().handler(), a.handler());
        }
    }
}
