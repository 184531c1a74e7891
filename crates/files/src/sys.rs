//! The system calls of the files crate behind safe wrappers, the only
//! module allowed `unsafe`: `sigaction` (installing, saving and restoring
//! signal dispositions) and the async-signal-safe `unlink` and `_exit` of
//! [`crate::interrupt`]'s handler. Each unsafe block carries a `// SAFETY:`
//! note; decides nothing.

use std::io;

/// `-1` from a libc call becomes the `errno` error.
fn check(r: libc::c_long) -> io::Result<libc::c_long> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `kill(pid, sig)` (only the tests signal themselves).
#[cfg(test)]
pub(crate) fn kill(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: kill reads and writes no memory of ours; any pid and signal
    // number is allowed (bad ones give an error).
    check(unsafe { libc::kill(pid, sig) }.into()).map(|_| ())
}

/// A signal's disposition as `sigaction` reported it, to reinstall later.
#[derive(Clone, Copy)]
pub(crate) struct SignalAction(libc::sigaction);

impl SignalAction {
    /// The handler field: a function address, or `SIG_DFL` / `SIG_IGN`
    /// (only the tests look at it).
    #[cfg(test)]
    pub(crate) fn handler(&self) -> usize {
        self.0.sa_sigaction
    }
}

impl std::fmt::Debug for SignalAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignalAction")
            .field("handler", &format_args!("{:#x}", self.0.sa_sigaction))
            .field("flags", &format_args!("{:#x}", self.0.sa_flags))
            .finish()
    }
}

/// `sigaction(sig, new, &old)`; returns the old disposition.
fn sigaction(sig: libc::c_int, new: Option<&libc::sigaction>) -> io::Result<SignalAction> {
    // SAFETY: a zeroed sigaction is a valid value (no handler, no flags,
    // empty mask) and is only used as an out-parameter here.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    let new = new.map_or(std::ptr::null(), |n| n as *const libc::sigaction);
    // SAFETY: `new` is null or points to a valid sigaction borrowed for the
    // call; `old` is a valid, exclusively borrowed out-parameter.
    check(unsafe { libc::sigaction(sig, new, &mut old) }.into())?;
    Ok(SignalAction(old))
}

/// The disposition of `sig` in force now (`sigaction(sig, NULL, &old)`;
/// only the tests ask).
#[cfg(test)]
pub(crate) fn signal_action(sig: libc::c_int) -> io::Result<SignalAction> {
    sigaction(sig, None)
}

/// Make `handler` the handler of `sig` (empty mask, no flags, so no
/// `SA_RESTART`: blocking calls return early with `EINTR`); returns the
/// disposition it replaced.
///
/// `handler` runs in signal context, so it must be async-signal-safe (the
/// callers in this crate only store to an atomic).
pub(crate) fn set_signal_handler(
    sig: libc::c_int,
    handler: extern "C" fn(libc::c_int),
) -> io::Result<SignalAction> {
    // SAFETY: as in `sigaction`, a zeroed sigaction is a valid value.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler as usize;
    // SAFETY: `sa.sa_mask` is a valid sigset_t to initialise.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    sigaction(sig, Some(&sa))
}

/// `unlink(path)`, async-signal-safe: for the SIGINT/SIGTERM handler that
/// removes partial files. Errors are ignored (nothing to do about them there).
pub(crate) fn unlink_in_handler(path: *const libc::c_char) {
    // SAFETY: `path` is a NUL-terminated string that is never freed (see
    // `interrupt::register_partial`); unlink is async-signal-safe.
    unsafe { libc::unlink(path) };
}

/// The bytes of a string registered by `interrupt::register_partial`.
pub(crate) fn leaked_c_str(p: *const libc::c_char) -> &'static [u8] {
    // SAFETY: the caller passes a non-null pointer from `CString::into_raw`
    // that is never freed, so it is valid and NUL-terminated forever.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes()
}

/// `_exit(code)`: ends the process at once, without running destructors or
/// atexit handlers (async-signal-safe).
pub(crate) fn exit_in_handler(code: libc::c_int) -> ! {
    // SAFETY: _exit is async-signal-safe and takes any status.
    unsafe { libc::_exit(code) }
}

/// Make `sig`'s disposition the default one (`SIG_DFL`); returns the
/// disposition it replaced.
pub(crate) fn set_default_disposition(sig: libc::c_int) -> io::Result<SignalAction> {
    // SAFETY: as in `sigaction`, a zeroed sigaction is a valid value; its
    // handler field zero is SIG_DFL.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = libc::SIG_DFL;
    // SAFETY: `sa.sa_mask` is a valid sigset_t to initialise.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    sigaction(sig, Some(&sa))
}

/// Reinstall a disposition saved by [`set_signal_handler`] or
/// [`signal_action`] for the same signal.
pub(crate) fn restore_signal_action(sig: libc::c_int, action: &SignalAction) -> io::Result<()> {
    sigaction(sig, Some(&action.0)).map(|_| ())
}
