//! SIGINT/SIGTERM handling for long captures: the handler only sets a flag;
//! the capture loop checks it, stops, and finalizes the snapshot so an
//! interrupted capture is still readable. Nothing else is done in the handler.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Install the handler for SIGINT and SIGTERM (without `SA_RESTART`, so
/// waits return early).
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
        // the handler is async-signal-safe (one atomic store).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// True once SIGINT or SIGTERM arrived (after [`install`]), or after [`raise`].
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
