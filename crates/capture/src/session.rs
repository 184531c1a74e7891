//! A capture session: repeated samples of one process tree into one
//! snapshot file, either attached to a running PID or around a workload this
//! crate starts itself (spawn mode). Handles timing, the sample budget,
//! the workload's life cycle and finalizing the file when the session ends
//! with at least one sample (last sample, workload exit, SIGINT/SIGTERM).
//! A session that fails or takes no sample writes nothing: the snapshot's
//! path, and any file already there, are left as they were.
//!
//! Spawn mode starts the command with an empty environment plus only the
//! variables given, stdin from /dev/null, in its own process group. The first
//! sample is taken one interval after the start. When the last sample is
//! taken and the workload is still running it is stopped: SIGTERM to its
//! process group, SIGKILL two seconds later (or, with `wait_exit`, it is left
//! to finish). If it exits earlier, the session ends with the samples taken.

use crate::capture::{CaptureOptions, Capturer, SampleReport};
use crate::error::{Error, ErrorKind, Result};
use crate::snapshot::writer::SnapshotWriter;
use crate::snapshot::{Metadata, SamplingParams, SnapshotHeader};
use crate::target::Target;
use cannery_codec::timestamp::{rfc3339, unix_now};
use cannery_files::output::Existing;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How often and how many times to sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Number of samples.
    pub count: u32,
    /// Time before the first sample and between samples.
    pub interval: Duration,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            count: 1,
            interval: Duration::from_secs(1),
        }
    }
}

/// Where and how one capture is written: the workload's label (default:
/// the process's or program's name), what is kept of each sample, when
/// samples are taken, and the snapshot file (kept if it exists unless
/// `existing` says replace) with its zstd level.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// Workload label stored in the snapshot.
    pub label: Option<&'a str>,
    /// What each sample keeps.
    pub opts: &'a CaptureOptions,
    /// How often and how many times to sample.
    pub sched: &'a Schedule,
    /// The snapshot file.
    pub out: &'a Path,
    /// Whether an existing file is replaced.
    pub existing: Existing,
    /// zstd level of the snapshot.
    pub level: i32,
}

impl Job<'_> {
    /// The snapshot's metadata for a process running `command`, labelled
    /// with this job's label, or with `command` without one.
    pub(crate) fn metadata(&self, command: &str) -> Metadata {
        let label = self.label.unwrap_or(command);
        base_metadata(label, command, self.opts, self.sched)
    }

    /// The snapshot's writer, with [`Job::metadata`] for `command`.
    fn writer(&self, command: &str) -> Result<SnapshotWriter> {
        SnapshotWriter::create(self.out, self.metadata(command), self.level, self.existing)
    }
}

/// A workload to start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadSpec {
    /// Program (looked up in the given `PATH`, else in ours).
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// The complete environment of the workload.
    pub env: Vec<(String, String)>,
    /// Working directory (default: ours).
    pub cwd: Option<PathBuf>,
    /// Where the workload's stdout and stderr go (default: our stderr).
    pub log: Option<PathBuf>,
    /// After the last sample, wait for the workload instead of stopping it.
    pub wait_exit: bool,
}

/// Outcome of a session.
#[derive(Debug, Clone)]
pub struct SessionReport {
    /// The final header written.
    pub header: SnapshotHeader,
    /// Per-sample reports.
    pub samples: Vec<SampleReport>,
    /// Why it ended.
    pub end_reason: String,
    /// The workload's exit status (spawn mode), if collected.
    pub exit_status: Option<ExitStatus>,
    /// True if the workload was stopped by the session after the last sample.
    pub killed: bool,
}

impl SessionReport {
    /// The status lines a command prints about the capture of `out` (the
    /// counts, freeze pauses, warnings, the workload's end), one per line.
    pub fn status_lines(&self, out: &Path) -> Vec<String> {
        let h = &self.header;
        let c = &h.counts;
        let mut v = vec![format!(
            "{} sample(s) -> {}: {} pages stored, {} scanned, {} zero, {} same-filled, {} \
             duplicate, {} unreadable, {} sampled out, {} redacted ({})",
            h.samples,
            out.display(),
            c.stored,
            c.scanned,
            c.zero,
            c.same_filled,
            c.duplicate,
            c.unreadable,
            c.sampled_out,
            c.redacted,
            self.end_reason
        )];
        if h.meta.freeze {
            v.push(format!(
                "freeze pause: longest {:.2} ms, total {:.2} ms (stated maximum {} ms)",
                h.pause_max_ns as f64 / 1e6,
                h.pause_total_ns as f64 / 1e6,
                h.meta.max_pause_ms
            ));
        }
        for s in &self.samples {
            if s.pause_limited {
                v.push(
                    "warning: a process was released at the --max-pause limit before it was \
                     fully read"
                        .into(),
                );
            }
            for (pid, why) in &s.skipped {
                v.push(format!("warning: skipped process {pid}: {why}"));
            }
        }
        if let Some(st) = &self.exit_status {
            let how = if self.killed {
                " (stopped after the last sample)"
            } else {
                ""
            };
            v.push(format!("workload {}{how}", describe_status(st)));
        }
        v
    }
}

/// Metadata common to both modes.
pub fn base_metadata(
    label: &str,
    command: &str,
    opts: &CaptureOptions,
    sched: &Schedule,
) -> Metadata {
    let now = unix_now();
    Metadata {
        label: label.to_string(),
        command: command.to_string(),
        capture_time_unix: now,
        capture_time: rfc3339(now),
        kernel_release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        tool_version: format!("cannery-capture {}", env!("CARGO_PKG_VERSION")),
        sampling: SamplingParams {
            rate: opts.sample_rate,
            max_pages: opts.max_pages,
            seed: opts.seed,
            dedup: opts.dedup,
        },
        count: sched.count as u64,
        interval_ms: sched.interval.as_millis() as u64,
        include_file_private: opts.include_file_private,
        include_children: opts.include_children,
        freeze: opts.freeze,
        max_pause_ms: if opts.freeze {
            opts.max_pause.as_millis() as u64
        } else {
            0
        },
        redact_secrets: opts.redact_secrets,
        // Counts are filled in at the end; the zeros reserve their place.
        cold: opts.cold_after.map(|d| crate::snapshot::ColdPages {
            method: crate::idle::METHOD.into(),
            after_ms: d.as_millis() as u64,
            hot: 0,
            cold: 0,
            ..Default::default()
        }),
        end_reason: String::new(),
    }
}

/// The even share of `max` pages for sample `i` of `count` (the shares add
/// up to `max`). Sessions give each sample its share plus whatever earlier
/// samples left unused.
pub fn sample_budget(max: Option<u64>, i: u32, count: u32) -> Option<u64> {
    let max = max?;
    let count = count.max(1) as u128;
    let share = |k: u128| (max as u128 * k / count) as u64;
    Some(share(i as u128 + 1) - share(i as u128))
}

/// What sample `i` of `count` may still store of `max` pages, when
/// `stored` are stored: its even share plus what earlier samples left.
pub fn budget_left(max: Option<u64>, i: u32, count: u32, stored: u64) -> Option<u64> {
    max.map(|max| {
        let due = max as u128 * (i as u128 + 1) / count.max(1) as u128;
        (due as u64).saturating_sub(stored)
    })
}

struct Loop<'a> {
    capturer: Capturer,
    writer: SnapshotWriter,
    sched: &'a Schedule,
    reports: Vec<SampleReport>,
    progress: &'a mut dyn FnMut(u32, u32),
}

impl<'a> Loop<'a> {
    /// A loop writing `job`'s samples into `writer`.
    fn new(
        job: &Job<'a>,
        writer: SnapshotWriter,
        progress: &'a mut dyn FnMut(u32, u32),
    ) -> Loop<'a> {
        Loop {
            capturer: Capturer::new(job.opts.clone()),
            writer,
            sched: job.sched,
            reports: Vec::new(),
            progress,
        }
    }

    /// Sample `target` on schedule; returns the end reason.
    /// With `immediate`, the first sample is taken at once; otherwise one
    /// interval after the start.
    fn run(&mut self, target: &Target, immediate: bool) -> Result<String> {
        let started = Instant::now();
        for i in 0..self.sched.count {
            // Wait until the sample is due, waking early if the target exits
            // or a signal arrives.
            let due = started + self.sched.interval * (i + u32::from(!immediate));
            loop {
                if cannery_files::interrupt::interrupted() {
                    return Ok("interrupted".into());
                }
                let now = Instant::now();
                if now >= due {
                    break;
                }
                let ms = (due - now).as_millis().min(200) as i32;
                if target.wait_exit(ms.max(1)) {
                    return Ok(format!("target exited after {i} samples"));
                }
            }
            if !target.is_alive() {
                return Ok(format!("target exited after {i} samples"));
            }
            // Budget left unused by earlier samples (fewer candidates than
            // their share) carries over, so the file can still reach max_pages.
            let budget = budget_left(
                self.capturer.options().max_pages,
                i,
                self.sched.count,
                self.capturer.counts().stored,
            );
            match self.capturer.sample(target.pid(), budget, &mut self.writer) {
                Ok(r) => {
                    let interrupted = r.interrupted;
                    let exited = !target.is_alive();
                    self.reports.push(r);
                    self.writer.flush()?;
                    (self.progress)(i + 1, self.sched.count);
                    if interrupted {
                        return Ok("interrupted".into());
                    }
                    if exited {
                        return Ok(format!("target exited during sample {}", i + 1));
                    }
                }
                Err(e) if e.kind() == ErrorKind::NoSuchProcess => {
                    return Ok(format!("target exited after {i} samples"));
                }
                Err(e) => return Err(e),
            }
        }
        Ok("completed".into())
    }

    /// Finalizes the snapshot and puts it at its path, unless the capture
    /// failed or took no sample: then nothing is written (the writer's
    /// temporary file is removed and an existing file at the path is kept).
    fn finish(
        mut self,
        outcome: Result<String>,
        out: &Path,
    ) -> Result<(SnapshotHeader, Vec<SampleReport>, String)> {
        let reason = outcome?;
        if self.capturer.samples() == 0 {
            return Err(Error::new(
                ErrorKind::NoSample,
                format!(
                    "no sample was taken ({reason}); nothing written to {}",
                    out.display()
                ),
            ));
        }
        self.writer.set_counts(self.capturer.counts());
        let (pmax, ptotal) = self.capturer.pauses();
        self.writer.set_samples(
            self.capturer.samples() as u64,
            pmax.as_nanos() as u64,
            ptotal.as_nanos() as u64,
        );
        self.writer.set_end_reason(&reason);
        let (hot, cold) = self.capturer.hot_cold();
        self.writer.set_hot_cold(hot, cold);
        let h = self.writer.finish()?;
        Ok((h, self.reports, reason))
    }
}

/// Sample a running process `pid` into `out`: the first sample at once,
/// then one every interval. `progress` hears (samples taken, of how many)
/// after each sample.
pub fn capture_pid(
    pid: u32,
    job: &Job<'_>,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<SessionReport> {
    // Restores the previous SIGINT/SIGTERM handlers when the session ends.
    let _handlers = cannery_files::interrupt::install();
    let target = Target::attach(pid)?;
    // Fail on permissions before creating the output file.
    target.open_checked("mem")?;
    let mut lp = Loop::new(job, job.writer(target.comm())?, progress);
    let outcome = lp.run(&target, true);
    let (header, samples, reason) = lp.finish(outcome, job.out)?;
    Ok(SessionReport {
        header,
        samples,
        end_reason: reason,
        exit_status: None,
        killed: false,
    })
}

/// Find `program` in the `PATH` of `env` (or ours if it has none).
pub fn find_program(program: &str, env: &[(String, String)]) -> Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    for dir in path.split(':').filter(|d| !d.is_empty()) {
        let cand = Path::new(dir).join(program);
        if let Ok(m) = std::fs::metadata(&cand) {
            use std::os::unix::fs::PermissionsExt;
            if m.is_file() && m.permissions().mode() & 0o111 != 0 {
                return Ok(cand);
            }
        }
    }
    Err(Error::new(
        ErrorKind::Spawn,
        format!("cannot find program {program:?} in PATH {path:?}"),
    ))
}

/// Parse "250ms", "2s", "1.5s", "3m", or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?} (try 500ms, 2s, 1m)"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" | "min" => v * 60.0,
        _ => return Err(format!("bad duration unit in {s:?} (ms, s, m)")),
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("bad duration {s:?}"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The command that starts `spec` (clean environment, stdin from
/// /dev/null, its own process group; [`attach_log`] adds its output),
/// the program's path and its name.
pub(crate) fn workload_command(spec: &WorkloadSpec) -> Result<(Command, PathBuf, String)> {
    let program = find_program(&spec.program, &spec.env)?;
    let command_name = program
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(&spec.program)
        .to_string();
    let mut cmd = Command::new(&program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .process_group(0);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    if let Some(dir) = &spec.cwd {
        if !dir.is_dir() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("--cwd {}: no such directory", dir.display()),
            ));
        }
    }
    Ok((cmd, program, command_name))
}

/// Points the workload's output at its log, or at our stderr. Called last,
/// once nothing can refuse the capture: the log is opened for appending
/// (an existing log is never truncated), 0600 when new.
pub(crate) fn attach_log(cmd: &mut Command, spec: &WorkloadSpec) -> Result<()> {
    match &spec.log {
        Some(log) => {
            let f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .open(log)
                .map_err(|e| Error::io(log, "cannot open log", e))?;
            let f2 = f
                .try_clone()
                .map_err(|e| Error::io(log, "cannot open log", e))?;
            cmd.stdout(f).stderr(f2);
        }
        None => {
            let err = std::io::stderr();
            use std::os::fd::AsFd;
            if let Ok(fd) = err.as_fd().try_clone_to_owned() {
                cmd.stdout(Stdio::from(fd));
            }
        }
    }
    Ok(())
}

/// Start `spec` with a clean environment, sample it into `out`, and stop it.
/// `label` defaults to the program's file name. `progress` hears (samples
/// taken, of how many) after each sample.
pub fn run_workload(
    spec: &WorkloadSpec,
    job: &Job<'_>,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<SessionReport> {
    // Restores the previous SIGINT/SIGTERM handlers when the session ends.
    let _handlers = cannery_files::interrupt::install();
    let (mut cmd, program, command_name) = workload_command(spec)?;
    let writer = job.writer(&command_name)?;
    attach_log(&mut cmd, spec)?;
    let mut child = cmd.spawn().map_err(|e| {
        Error::new(
            ErrorKind::Spawn,
            format!("cannot start {}: {e}", program.display()),
        )
    })?;
    let pid = child.id();
    let mut lp = Loop::new(job, writer, progress);
    let outcome = match Target::attach(pid) {
        Ok(target) => lp.run(&target, false),
        Err(e) if e.kind() == ErrorKind::NoSuchProcess => {
            Ok("target exited after 0 samples".into())
        }
        Err(e) => Err(e),
    };
    // Stop or collect the workload whatever happened.
    let (exit_status, killed) = stop_workload(
        &mut child,
        spec.wait_exit && outcome.as_ref().is_ok_and(|r| r == "completed"),
    );
    let (header, samples, reason) = lp.finish(outcome, job.out)?;
    Ok(SessionReport {
        header,
        samples,
        end_reason: reason,
        exit_status,
        killed,
    })
}

fn signal_group(pgid: u32, sig: libc::c_int) {
    // A negative pid addresses the process group the workload was started
    // in (its own, via process_group(0)). A group already gone is fine.
    let _ = crate::sys::kill(-(pgid as libc::pid_t), sig);
}

/// Wait for or stop the workload; returns its status and whether we stopped it.
pub(crate) fn stop_workload(child: &mut Child, wait: bool) -> (Option<ExitStatus>, bool) {
    let pgid = child.id();
    if wait {
        let st = child.wait().ok();
        signal_group(pgid, libc::SIGKILL);
        return (st, false);
    }
    if let Ok(Some(st)) = child.try_wait() {
        // Leave nothing of the workload behind.
        signal_group(pgid, libc::SIGKILL);
        return (Some(st), false);
    }
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(st)) => {
                signal_group(pgid, libc::SIGKILL);
                return (Some(st), true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return (None, true),
        }
    }
    signal_group(pgid, libc::SIGKILL);
    let st = child.wait().ok();
    (st, true)
}

/// A short description of an exit status.
pub fn describe_status(st: &ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("3m"), Ok(Duration::from_secs(180)));
        for bad in ["", "x", "2h", "-1s", "NaNs"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn budgets_split_evenly() {
        let b: Vec<u64> = (0..3)
            .map(|i| sample_budget(Some(10), i, 3).unwrap())
            .collect();
        assert_eq!(b.iter().sum::<u64>(), 10);
        assert_eq!(b, vec![3, 3, 4]);
        assert_eq!(sample_budget(None, 0, 3), None);
    }
}
