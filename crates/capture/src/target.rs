//! The process being captured: attach to a PID without ever reading a
//! different process that later reuses the number, and explain permission
//! failures in one sentence.
//!
//! Identity: the start time in `/proc/PID/stat` is read, a pidfd is opened
//! (`pidfd_open`), then `/proc/PID` is opened as a directory and its start
//! time read again through that directory. If both agree, the directory handle
//! is bound to that process for good (procfs ties it to the task, so a later
//! process with the same number is not reachable through it), and every
//! further file (`maps`, `smaps`, `pagemap`, `mem`) is opened through it. The
//! pidfd tells whether the process has exited. This module does not read page
//! contents; see [`crate::read`].

use crate::error::{Error, ErrorKind, Result};
use crate::sys;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// An attached process: a pidfd and a `/proc/PID` directory handle.
#[derive(Debug)]
pub struct Target {
    pid: u32,
    pidfd: Option<OwnedFd>,
    dir: File,
    start_time: u64,
    comm: String,
}

impl Target {
    /// Attach to `pid`. Fails with [`ErrorKind::NoSuchProcess`] if it does
    /// not exist and [`ErrorKind::PidReused`] if the number changed owner
    /// while attaching.
    pub fn attach(pid: u32) -> Result<Target> {
        if pid == 0 {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "pid 0 is not a process",
            ));
        }
        let stat_path = PathBuf::from(format!("/proc/{pid}/stat"));
        let (start0, _) =
            read_stat(&stat_path, File::open(&stat_path)).map_err(|e| no_such_process(pid, e))?;
        let pidfd = pidfd_open(pid).map_err(|e| no_such_process(pid, e))?;
        let dir_path = PathBuf::from(format!("/proc/{pid}"));
        let dir = File::open(&dir_path)
            .map_err(|e| no_such_process(pid, Error::io(&dir_path, "cannot open", e)))?;
        let target = Target {
            pid,
            pidfd,
            dir,
            start_time: start0,
            comm: String::new(),
        };
        let (start1, comm) =
            read_stat(&stat_path, target.open("stat")).map_err(|e| no_such_process(pid, e))?;
        if start1 != start0 {
            return Err(Error::new(
                ErrorKind::PidReused,
                format!(
                    "process {pid} exited and its pid was reused while attaching; not capturing"
                ),
            ));
        }
        Ok(Target { comm, ..target })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The process name (`comm`) at attach time.
    pub fn comm(&self) -> &str {
        &self.comm
    }

    /// Start time in clock ticks since boot (field 22 of `/proc/PID/stat`).
    pub fn start_time(&self) -> u64 {
        self.start_time
    }

    /// The `/proc/PID/NAME` path, for messages.
    pub fn proc_path(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/{}/{name}", self.pid))
    }

    /// Open `/proc/PID/NAME` through the attached directory handle.
    pub fn open(&self, name: &str) -> std::io::Result<File> {
        // Opening through /proc/self/fd/N follows the magic link to the very
        // /proc/PID directory we hold, not a path lookup by number.
        File::open(format!("/proc/self/fd/{}/{name}", self.dir.as_raw_fd()))
    }

    /// Read `/proc/PID/NAME` to a string, with permission errors explained.
    pub fn read_to_string(&self, name: &str) -> Result<String> {
        let path = self.proc_path(name);
        let mut s = String::new();
        self.open(name)
            .and_then(|mut f| f.read_to_string(&mut s))
            .map_err(|e| self.explain(&path, "cannot read", e))?;
        Ok(s)
    }

    /// Open `/proc/PID/NAME` with permission errors explained.
    pub fn open_checked(&self, name: &str) -> Result<File> {
        let path = self.proc_path(name);
        self.open(name)
            .map_err(|e| self.explain(&path, "cannot open", e))
    }

    /// True while the process has not exited (it may be a zombie once it has).
    pub fn is_alive(&self) -> bool {
        match &self.pidfd {
            Some(fd) => {
                // A poll error counts as "not readable", i.e. alive.
                !sys::poll_readable(fd.as_fd(), 0).unwrap_or(false)
            }
            None => matches!(
                read_stat(&self.proc_path("stat"), self.open("stat")),
                Ok((t, _)) if t == self.start_time
            ),
        }
    }

    /// Wait up to `ms` milliseconds for the process to exit; true if it has.
    /// Returns early (false) when a signal arrives.
    pub fn wait_exit(&self, ms: i32) -> bool {
        let Some(fd) = &self.pidfd else {
            std::thread::sleep(std::time::Duration::from_millis(ms.max(0) as u64));
            return !self.is_alive();
        };
        // A signal (EINTR) or other poll error: not exited (yet).
        sys::poll_readable(fd.as_fd(), ms).unwrap_or(false)
    }

    /// Turn an I/O error on a /proc file of this process into a clear error:
    /// gone processes become [`ErrorKind::NoSuchProcess`], and permission
    /// problems one message saying what to do.
    pub fn explain(&self, path: &Path, what: &str, err: std::io::Error) -> Error {
        let e = Error::io(path, what, err);
        // An exited process (zombie) also refuses access: report the exit.
        if !self.is_alive() {
            let msg = format!("process {} exited ({e})", self.pid);
            return e.with_kind(ErrorKind::NoSuchProcess).with_message(msg);
        }
        match e.kind() {
            ErrorKind::PermissionDenied => {
                let msg = permission_advice(self.pid, &e.to_string());
                e.with_message(msg)
            }
            _ => e,
        }
    }
}

fn no_such_process(pid: u32, e: Error) -> Error {
    if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NoSuchProcess {
        Error::new(
            ErrorKind::NoSuchProcess,
            format!("no process with pid {pid}"),
        )
    } else {
        e
    }
}

fn pidfd_open(pid: u32) -> Result<Option<OwnedFd>> {
    match sys::pidfd_open(pid) {
        Ok(fd) => Ok(Some(fd)),
        Err(err) => match err.raw_os_error() {
            Some(libc::ESRCH) => Err(Error::new(
                ErrorKind::NoSuchProcess,
                format!("no process with pid {pid}"),
            )),
            // Kernels before 5.3: fall back to start-time checks alone.
            Some(libc::ENOSYS) => Ok(None),
            _ => Err(Error::io(Path::new("pidfd_open"), "failed:", err)),
        },
    }
}

/// Parse `/proc/PID/stat`: (start time, comm).
fn read_stat(path: &Path, file: std::io::Result<File>) -> Result<(u64, String)> {
    let mut s = String::new();
    file.and_then(|mut f| f.read_to_string(&mut s))
        .map_err(|e| Error::io(path, "cannot read", e))?;
    parse_stat(&s).ok_or_else(|| {
        Error::new(
            ErrorKind::Corrupt,
            format!("{}: unexpected format", path.display()),
        )
    })
}

/// Parse the text of `/proc/PID/stat` into (start time, comm).
pub(crate) fn parse_stat(s: &str) -> Option<(u64, String)> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s.get(open + 1..close)?.to_string();
    // Fields after ")" start at field 3 (state); starttime is field 22.
    let start = s
        .get(close + 1..)?
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    Some((start, comm))
}

/// Parent pid from the text of `/proc/PID/stat`.
fn parse_ppid(s: &str) -> Option<u32> {
    let close = s.rfind(')')?;
    s.get(close + 1..)?.split_whitespace().nth(1)?.parse().ok()
}

/// `root` and all its descendants (found by scanning `/proc/*/stat`),
/// parents before children.
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for ent in rd.flatten() {
            let Some(pid) = ent.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                if let Some(pp) = parse_ppid(&s) {
                    parent_of.push((pid, pp));
                }
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        let mut kids: Vec<u32> = parent_of
            .iter()
            .filter(|(_, pp)| *pp == p)
            .map(|(c, _)| *c)
            .collect();
        kids.sort_unstable();
        out.extend(kids);
        i += 1;
    }
    out
}

/// One message explaining a permission failure and what to do about it.
pub fn permission_advice(pid: u32, detail: &str) -> String {
    let me = sys::geteuid();
    let owner = std::fs::metadata(format!("/proc/{pid}")).ok().map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    let what = match (owner, yama) {
        (Some(o), _) if o != me && me != 0 => format!(
            "process {pid} belongs to uid {o} and you are uid {me}; run cannery as that user or as root (or give the binary CAP_SYS_PTRACE: sudo setcap cap_sys_ptrace+ep $(command -v cannery))"
        ),
        (_, Some(3)) => "kernel.yama.ptrace_scope is 3 (no process may be inspected until reboot); capture is impossible on this boot".to_string(),
        _ if me == 0 => format!(
            "cannery runs as root, yet the kernel refused ptrace access to process {pid}: the process may be protected from this root (another user namespace, such as a container's init seen from inside; a kernel thread), the capability CAP_SYS_PTRACE may be dropped (a container: run it with --cap-add SYS_PTRACE), or a security module (SELinux, AppArmor, kernel lockdown) forbids it"
        ),
        (_, Some(s)) if s > 0 => format!(
            "kernel.yama.ptrace_scope is {s}; run cannery as root, give it CAP_SYS_PTRACE (sudo setcap cap_sys_ptrace+ep $(command -v cannery)), use spawn mode (cannery capture ... -- CMD) which captures its own child, or set sudo sysctl kernel.yama.ptrace_scope=0"
        ),
        _ => "reading another process's memory needs ptrace access; run cannery as root or give it CAP_SYS_PTRACE (sudo setcap cap_sys_ptrace+ep $(command -v cannery))".to_string(),
    };
    format!("permission denied capturing process {pid}: {what} [{detail}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_in_comm() {
        let s = "1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(parse_stat(s), Some((98765, "my (odd) proc".to_string())));
        assert_eq!(parse_ppid(s), Some(1));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn attach_self() {
        let t = Target::attach(std::process::id()).unwrap();
        assert!(t.is_alive());
        assert!(t.read_to_string("maps").unwrap().contains("[stack]"));
        let err = Target::attach(u32::MAX - 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NoSuchProcess);
    }
}
