//! SIGINT/SIGTERM handling for long captures: the handler only sets a flag;
//! the capture loop checks it, stops, and finalizes the snapshot so an
//! interrupted capture is still readable. Nothing else is done in the handler.
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
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signals [`install`] handles.
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

extern "C" fn on_signal(_sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
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
