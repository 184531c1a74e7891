//! Optional consistency (`--freeze`): stop every thread of a process with
//! ptrace (`PTRACE_SEIZE` + `PTRACE_INTERRUPT`) for the duration of one
//! process's capture, then detach, re-delivering any signal that arrived
//! meanwhile. The pause is measured from the first interrupt to the last
//! detach. Without `--freeze` targets are never stopped. This module does not
//! read memory.

use crate::error::{Error, ErrorKind, Result};
use crate::sys;
use std::time::{Duration, Instant};

/// A process whose threads are all stopped; thawed on [`Frozen::thaw`] or drop.
#[derive(Debug)]
pub struct Frozen {
    pid: u32,
    /// (thread id, signal to re-deliver on detach)
    tids: Vec<(i32, i32)>,
    started: Instant,
    thawed: bool,
}

fn list_tasks(pid: u32) -> Vec<i32> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// Stop all threads of `pid`.
pub fn freeze(pid: u32) -> Result<Frozen> {
    let started = Instant::now();
    let mut frozen = Frozen {
        pid,
        tids: Vec::new(),
        started,
        thawed: false,
    };
    let mut seized: Vec<i32> = Vec::new();
    // Repeat until no new threads appear (a running thread may clone).
    for _round in 0..16 {
        let tasks = list_tasks(pid);
        let new: Vec<i32> = tasks.into_iter().filter(|t| !seized.contains(t)).collect();
        if new.is_empty() {
            break;
        }
        for tid in new {
            match sys::ptrace_seize(tid) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                Err(e) => {
                    let advice =
                        crate::target::permission_advice(pid, &format!("ptrace seize: {e}"));
                    let kind = if e.raw_os_error() == Some(libc::EPERM) {
                        ErrorKind::PermissionDenied
                    } else {
                        ErrorKind::Ptrace
                    };
                    let msg = if kind == ErrorKind::PermissionDenied {
                        format!("{advice} (is another debugger attached?)")
                    } else {
                        format!("cannot freeze process {pid}: ptrace seize of thread {tid}: {e}")
                    };
                    return Err(Error::new(kind, msg));
                }
            }
            seized.push(tid);
            if sys::ptrace_interrupt(tid).is_err() {
                continue;
            }
            frozen.tids.push((tid, 0));
        }
    }
    // Wait for each thread to report its stop.
    let mut live = Vec::new();
    for &(tid, _) in &frozen.tids {
        let status = match sys::waitpid_all(tid) {
            Ok((r, status)) if r == tid => status,
            _ => continue,
        };
        if libc::WIFSTOPPED(status) {
            let event = (status >> 16) & 0xff;
            let sig = libc::WSTOPSIG(status);
            // An event stop (our interrupt) carries no signal to pass on.
            let pending = if event == 0 && sig != libc::SIGTRAP && sig != libc::SIGSTOP {
                sig
            } else {
                0
            };
            live.push((tid, pending));
        }
        // Exited or killed: nothing to detach.
    }
    frozen.tids = live;
    if frozen.tids.is_empty() {
        frozen.thawed = true;
        return Err(Error::new(
            ErrorKind::NoSuchProcess,
            format!("process {pid} exited while being frozen"),
        ));
    }
    Ok(frozen)
}

impl Frozen {
    /// Time since the freeze began.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The frozen process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Let the process run again; returns the total pause.
    pub fn thaw(mut self) -> Duration {
        self.detach_all();
        self.started.elapsed()
    }

    fn detach_all(&mut self) {
        if self.thawed {
            return;
        }
        self.thawed = true;
        for &(tid, sig) in &self.tids {
            // A thread that died meanwhile gives ESRCH; nothing to do.
            let _ = sys::ptrace_detach(tid, sig);
        }
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        self.detach_all();
    }
}
