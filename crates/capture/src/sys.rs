//! Every system call the capture library makes, behind safe wrappers: the
//! only module of the crate allowed `unsafe` (the crate root denies it
//! elsewhere). Each wrapper is a thin translation of one libc call into
//! `io::Result` (errors from `errno`), with a `SAFETY:` note on its unsafe
//! block saying why no caller can misuse it. Decides nothing: which process
//! to read, when to stop or what a result means is up to the callers
//! ([`crate::target`], [`crate::read`], [`crate::pagemap`],
//! [`crate::freeze`], [`crate::session`]).
//!
//! Only requests that take no pointers from the caller are exposed (ptrace
//! SEIZE/INTERRUPT/DETACH, not PEEK/POKE), so the wrappers stay sound
//! whatever their arguments.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// `-1` from a libc call becomes the `errno` error.
fn check(r: libc::c_long) -> io::Result<libc::c_long> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The effective user id of this process (`geteuid`).
pub(crate) fn geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Where the next data of `file` at or after `offset` starts
/// (`lseek(SEEK_DATA)`), or `None` when only a hole follows (`ENXIO`).
/// Moves the file's offset.
pub(crate) fn seek_data(file: &std::fs::File, offset: u64) -> io::Result<Option<u64>> {
    seek_whence(file, offset, libc::SEEK_DATA)
}

/// Where the hole of `file` at or after `offset` starts (`lseek(SEEK_HOLE)`;
/// the end of the file counts as a hole). Moves the file's offset.
pub(crate) fn seek_hole(file: &std::fs::File, offset: u64) -> io::Result<Option<u64>> {
    seek_whence(file, offset, libc::SEEK_HOLE)
}

fn seek_whence(file: &std::fs::File, offset: u64, whence: libc::c_int) -> io::Result<Option<u64>> {
    let off = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset out of range"))?;
    // SAFETY: lseek takes a descriptor we own (borrowed from `file` for the
    // call), an offset and a whence value; it reads no memory of ours.
    let r = unsafe { libc::lseek(file.as_raw_fd(), off, whence) };
    if r == -1 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ENXIO) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    Ok(Some(r as u64))
}

/// A pidfd for `pid` (`pidfd_open(pid, 0)`), owned by the caller. `ENOSYS`
/// before Linux 5.3, `ESRCH` when there is no such process.
pub(crate) fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes (pid_t, unsigned int), reads no memory of
    // ours, and returns a new descriptor or -1.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0u32) })?;
    // SAFETY: `fd` is a fresh descriptor returned by the kernel and owned by
    // nobody else; the OwnedFd becomes its only owner.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `poll` one descriptor for `POLLIN`, waiting up to `timeout_ms`
/// milliseconds (0: do not wait; negative: wait forever). True when it is
/// readable (for a pidfd: the process has exited); false on timeout. An
/// interrupting signal gives `Err` (`EINTR`).
pub(crate) fn poll_readable(fd: BorrowedFd<'_>, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid, exclusively borrowed pollfd for the duration
    // of the call, and nfds is 1; the descriptor is kept open by the borrow.
    let n = check(unsafe { libc::poll(&mut p, 1, timeout_ms) }.into())?;
    Ok(n > 0 && p.revents & libc::POLLIN != 0)
}

/// Copy `buf.len()` bytes at virtual address `remote` of process `pid` into
/// `buf` with one `process_vm_readv`. Returns the bytes read, which may be
/// fewer when part of the range is unmapped; `EPERM`/`ENOSYS` where the call
/// is not allowed, `ESRCH` when the process has gone.
pub(crate) fn process_vm_readv(pid: u32, remote: u64, buf: &mut [u8]) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: remote as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` describes `buf`, which is valid for writes of
    // `buf.len()` bytes and exclusively borrowed for the whole call; `remote`
    // is only interpreted by the kernel, in the target's address space.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    Ok(check(n as libc::c_long)? as usize)
}

/// A ptrace request that passes no pointer to the kernel.
fn ptrace_plain(req: libc::c_uint, tid: i32, data: usize) -> io::Result<()> {
    // SAFETY: only called below with SEIZE, INTERRUPT and DETACH, which take
    // no pointer arguments: addr is null and data is an integer (options or
    // a signal number) passed in the pointer slot as the kernel expects.
    let r = unsafe {
        libc::ptrace(
            req,
            tid as libc::pid_t,
            std::ptr::null_mut::<libc::c_void>(),
            data as *mut libc::c_void,
        )
    };
    check(r).map(|_| ())
}

/// `PTRACE_SEIZE` thread `tid` (no options): trace it without stopping it.
pub(crate) fn ptrace_seize(tid: i32) -> io::Result<()> {
    ptrace_plain(libc::PTRACE_SEIZE, tid, 0)
}

/// `PTRACE_INTERRUPT` a seized thread: stop it (reported through
/// [`waitpid_all`]).
pub(crate) fn ptrace_interrupt(tid: i32) -> io::Result<()> {
    ptrace_plain(libc::PTRACE_INTERRUPT, tid, 0)
}

/// `PTRACE_DETACH` a stopped thread, delivering signal `sig` (0: none).
pub(crate) fn ptrace_detach(tid: i32, sig: i32) -> io::Result<()> {
    ptrace_plain(libc::PTRACE_DETACH, tid, sig as usize)
}

/// `waitpid(tid, &status, __WALL)`: wait for a state change of a (traced)
/// thread. Returns the id that changed and its raw status word.
pub(crate) fn waitpid_all(tid: i32) -> io::Result<(i32, i32)> {
    let mut status = 0;
    // SAFETY: `status` is a valid, exclusively borrowed out-pointer for the
    // duration of the call.
    let r = unsafe { libc::waitpid(tid, &mut status, libc::__WALL) };
    check(r.into())?;
    Ok((r, status))
}

/// `kill(pid, sig)`; a negative `pid` addresses a process group.
pub(crate) fn kill(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: kill reads and writes no memory of ours; any pid and signal
    // number is allowed (bad ones give an error).
    check(unsafe { libc::kill(pid, sig) }.into()).map(|_| ())
}

/// A fresh private anonymous read-only mapping, unmapped on drop. Used to
/// make the kernel map its shared zero page at a known address of ours.
#[derive(Debug)]
pub(crate) struct AnonMapping {
    ptr: *mut libc::c_void,
    len: usize,
}

impl AnonMapping {
    /// `mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)`.
    pub(crate) fn new_read_only(len: usize) -> io::Result<AnonMapping> {
        // SAFETY: no address hint and no file, so no existing memory of
        // ours is replaced; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(AnonMapping { ptr: p, len })
    }

    /// Read the first byte (volatile, so it happens): a read fault maps the
    /// shared zero page there.
    pub(crate) fn touch(&self) {
        // SAFETY: `ptr` is a live readable mapping of `len` > 0 bytes (mmap
        // refuses length 0), unmapped only on drop.
        unsafe { std::ptr::read_volatile(self.ptr as *const u8) };
    }

    /// The virtual address of the mapping.
    pub(crate) fn addr(&self) -> u64 {
        self.ptr as u64
    }
}

impl Drop for AnonMapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new_read_only`; no
        // reference into it outlives `self`.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// A private anonymous read-write mapping of whole 4 KiB pages, unmapped on
/// drop: the memory `cannery zswap-kernel` fills with a corpus's pages and
/// pushes out through swap. Only this process's own memory.
#[derive(Debug)]
pub(crate) struct RwMapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned memory like a Box<[u8]>; nothing in it is
// tied to the thread that made it.
unsafe impl Send for RwMapping {}

impl RwMapping {
    /// `mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS)`
    /// then `madvise(MADV_NOHUGEPAGE)` so the kernel keeps 4 KiB pages.
    pub(crate) fn new(len: usize) -> io::Result<RwMapping> {
        if len == 0 || len % crate::PAGE_SIZE != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "length must be whole pages",
            ));
        }
        // SAFETY: no address hint and no file, so no existing memory of
        // ours is replaced; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let m = RwMapping {
            ptr: p as *mut u8,
            len,
        };
        m.advise(0, len, libc::MADV_NOHUGEPAGE)?;
        Ok(m)
    }

    /// The mapping as bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is a live readable mapping of `len` bytes owned by
        // `self`; a swapped-out page is faulted back in on access.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The mapping as mutable bytes.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// `madvise(ptr + offset, len, advice)` on a page-aligned part of the
    /// mapping.
    pub(crate) fn advise(&self, offset: usize, len: usize, advice: libc::c_int) -> io::Result<()> {
        if offset % crate::PAGE_SIZE != 0 || offset.checked_add(len).is_none_or(|e| e > self.len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "range outside the mapping",
            ));
        }
        // SAFETY: the range lies inside our own mapping (checked above); the
        // advice values used (NOHUGEPAGE, PAGEOUT) keep the contents.
        check(
            unsafe { libc::madvise(self.ptr.add(offset) as *mut libc::c_void, len, advice) }.into(),
        )
        .map(|_| ())
    }

    /// One volatile read of the byte at `offset`: faults the page in if it
    /// was swapped out.
    pub(crate) fn touch(&self, offset: usize) -> u8 {
        assert!(offset < self.len, "offset outside the mapping");
        // SAFETY: `offset < len`, inside the live mapping.
        unsafe { std::ptr::read_volatile(self.ptr.add(offset)) }
    }

    /// The virtual address of the mapping.
    pub(crate) fn addr(&self) -> u64 {
        self.ptr as u64
    }
}

impl Drop for RwMapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`; no reference
        // into it outlives `self` (slices borrow `self`).
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Makes `cmd`'s child write `0` (itself) to the cgroup file `procs`
/// between fork and exec, so everything it allocates is charged to that
/// cgroup from the start (charges never move with a process later). The
/// spawn fails with the write's error when the child cannot join.
pub(crate) fn join_cgroup_before_exec(
    cmd: &mut std::process::Command,
    procs: &std::path::Path,
) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let path = std::ffi::CString::new(procs.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a cgroup path"))?;
    let hook = move || {
        // Only async-signal-safe calls here (open, write, close): the
        // child of a fork must not allocate or take locks.
        // SAFETY: `path` is a NUL-terminated string owned by the closure.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is open; the buffer is a static one-byte string.
        let n = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        let err = io::Error::last_os_error();
        // SAFETY: `fd` is ours and closed once.
        unsafe { libc::close(fd) };
        if n != 1 {
            return Err(err);
        }
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe system calls on memory
    // it owns (see above), as pre_exec requires.
    unsafe { cmd.pre_exec(hook) };
    Ok(())
}
