//! Running `cannery` for the reliability harness (`tests/reliability.rs`):
//! with its peak RSS and CPU time (wait4), optionally as `nobody`, with a
//! closed stdout; and the list of its leaf subcommands from `--help`.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

/// Peak RSS (KiB) every resource case stays under.
pub const RSS_CEILING_KIB: i64 = 256 * 1024;
/// CPU seconds every resource case stays under.
pub const CPU_CEILING_S: f64 = 5.0;

/// The result of one run.
pub struct Run {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stderr: String,
    pub rss_kib: i64,
    pub cpu_s: f64,
}

/// Runs `cannery ARGS` in `dir` (as `nobody` if `drop_root` and we are
/// root), stdout as given, and measures it with wait4.
pub fn run(dir: &Path, args: &[String], stdout: Stdio, drop_root: bool) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cannery"));
    cmd.arg("-q")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    let as_nobody = drop_root && is_root();
    // SAFETY: the closure only calls async-signal-safe functions
    // (setrlimit, setgid, setgroups, setuid) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // A runaway case ends instead of hanging the suite.
            let cpu = libc::rlimit {
                rlim_cur: 30,
                rlim_max: 30,
            };
            libc::setrlimit(libc::RLIMIT_CPU, &cpu);
            // Far above the RSS ceiling, below what would wake the OOM killer.
            let mem = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &mem);
            if as_nobody
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(65534) != 0
                    || libc::setuid(65534) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Waited for with wait4 below (for its rusage), not Child::wait.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("spawn cannery");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut { stderr }, &mut s).ok();
        s
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; both pointers are
    // valid for the call.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let stderr = reader.join().unwrap();
    let status = std::process::ExitStatus::from_raw(status);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Run {
        code: status.code(),
        signal: status.signal(),
        stderr,
        rss_kib: usage.ru_maxrss,
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
pub fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect()
}

/// Runs with stdout a pipe whose reading end is closed at once.
pub fn closed_stdout_run(dir: &Path, args: &[String]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    Run {
        code: o.status.code(),
        signal: o.status.signal(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        rss_kib: 0,
        cpu_s: 0.0,
    }
}

/// Every leaf subcommand, from `--help` (clap's own list), as "a b".
pub fn subcommands(prefix: &[&str]) -> Vec<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(prefix)
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let Some(list) = text.split("Commands:\n").nth(1) else {
        return vec![prefix.join(" ")];
    };
    let names: Vec<String> = list
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|n| n != "help")
        .collect();
    let mut out = Vec::new();
    for n in names {
        let mut p: Vec<&str> = prefix.to_vec();
        p.push(&n);
        out.extend(subcommands(&p));
    }
    out
}
