//! `capture(pid, out, ...)`: snapshot the anonymous memory of a running
//! process into a `.cansnap` file, through `cannery_capture::session`.
//!
//! The capture crate installs SIGINT/SIGTERM handlers for the duration of
//! a capture (so an interrupted capture still finalizes its snapshot) and
//! puts the previous ones — here the interpreter's — back when it ends, so
//! Ctrl-C keeps raising KeyboardInterrupt afterwards; this file only raises
//! KeyboardInterrupt if the capture was interrupted. Reading memory,
//! filtering, writing snapshots and signal handling all happen in the crate.

use std::path::PathBuf;
use std::time::Duration;

use cannery_capture::capture::DEFAULT_SEED;
use cannery_capture::session::{capture_pid, Job, Schedule};
use cannery_capture::snapshot::writer::DEFAULT_LEVEL;
use cannery_capture::{CaptureOptions, ErrorKind};
use cannery_files::output::Existing;
use pyo3::exceptions::{PyFileExistsError, PyFileNotFoundError, PyKeyboardInterrupt, PyOSError};
use pyo3::prelude::*;

use crate::errors::{error, invalid, Kind};

// The signature spells the crate's defaults as literals so Python's
// `inspect.signature` (and stubtest) can see them; these keep them in step.
const _: () = assert!(DEFAULT_SEED == 828927532781);
const _: () = assert!(DEFAULT_LEVEL == 9);

fn capture_error(e: cannery_capture::Error) -> PyErr {
    match e.kind() {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(e.to_string()),
        ErrorKind::AlreadyExists => PyFileExistsError::new_err(e.to_string()),
        ErrorKind::Io => PyOSError::new_err(e.to_string()),
        ErrorKind::InvalidInput => invalid(e),
        _ => error(Kind::Capture, e),
    }
}

/// Captures the resident anonymous pages of process `pid` into the
/// snapshot file `out` and returns its report (path, end reason, the final
/// header with page counts, per-sample counts).
///
/// Pages are taken `samples` times, `interval` seconds apart (the first
/// after one interval). Options mirror `cannery capture`: `children` (also
/// every descendant), `freeze` (stop each process with ptrace while reading
/// it, at most `max_pause` seconds), `dedup`, `max_pages`, `sample_rate`,
/// `seed`, `redact_secrets` (drop pages that look like secrets),
/// `file_private` (also copy-on-write pages of private file mappings) and
/// the zstd `level`; `progress`, a callable `progress(step, done, total)`,
/// hears each sample taken. An existing file at `out` is kept (FileExistsError)
/// unless `force`; a capture that fails or takes no sample writes nothing.
/// Snapshots contain raw memory: whatever secrets the
/// process held. Needs ptrace access to `pid` (same user and a permissive
/// `kernel.yama.ptrace_scope`, or CAP_SYS_PTRACE); raises CaptureError
/// otherwise, or if the process is gone.
///
/// `cold="reclaim:50%"` (or `"reclaim:256M"`) captures instead the pages
/// the kernel's own reclaim swaps out of the process's memory cgroup, as
/// `cannery capture --cold … --pid` does: cgroup v2 only, and only with
/// `reclaim_own_cgroup=True` (it reclaims from every process in that
/// cgroup); on cgroup v1 it is refused (charges stay where they were
/// made). `setup` adds a temporary swap file and enables zswap, undone
/// afterwards; `keep_hot` names a second snapshot for the pages still
/// resident. Missing prerequisites raise CaptureError naming each fix.
#[pyfunction]
#[pyo3(signature = (pid, out, *, samples=1, interval=1.0, label=None, children=false,
    freeze=false, max_pause=0.5, dedup=false, max_pages=None, sample_rate=1.0,
    seed=828927532781, redact_secrets=false, file_private=false, level=9, force=false,
    progress=None, cold=None, reclaim_own_cgroup=false, setup=false, keep_hot=None))]
#[allow(clippy::too_many_arguments)]
pub fn capture<'py>(
    py: Python<'py>,
    pid: u32,
    out: PathBuf,
    samples: u32,
    interval: f64,
    label: Option<String>,
    children: bool,
    freeze: bool,
    max_pause: f64,
    dedup: bool,
    max_pages: Option<u64>,
    sample_rate: f64,
    seed: u64,
    redact_secrets: bool,
    file_private: bool,
    level: i32,
    force: bool,
    progress: Option<PyObject>,
    cold: Option<String>,
    reclaim_own_cgroup: bool,
    setup: bool,
    keep_hot: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let cold = cold
        .map(|c| cannery_capture::cold::Amount::parse(&c))
        .transpose()
        .map_err(invalid)?;
    let seconds = |what: &str, v: f64| {
        if v.is_finite() && v >= 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(invalid(format!(
                "{what} must be a number of seconds >= 0, not {v}"
            )))
        }
    };
    if samples == 0 {
        return Err(invalid("samples must be at least 1"));
    }
    if !(0.0..=1.0).contains(&sample_rate) {
        return Err(invalid(format!(
            "sample_rate must be in 0..=1, not {sample_rate}"
        )));
    }
    let opts = CaptureOptions {
        include_file_private: file_private,
        include_children: children,
        freeze,
        max_pause: seconds("max_pause", max_pause)?,
        dedup,
        sample_rate,
        max_pages,
        seed,
        redact_secrets,
        address_range: None,
        cold_after: None,
    };
    let sched = Schedule {
        count: samples,
        interval: seconds("interval", interval)?,
    };
    let job = Job {
        label: label.as_deref(),
        opts: &opts,
        sched: &sched,
        out: &out,
        existing: Existing::replace_if(force),
        level,
    };
    let mut bar = crate::progress::Progress::new(progress, u64::from(samples));
    let (result, interrupted) = py.allow_threads(|| {
        cannery_files::interrupt::reset();
        // Restores the interpreter's handlers before returning.
        let r = match cold {
            Some(amount) => {
                let cold_opts = cannery_capture::cold::ColdOptions {
                    amount,
                    setup,
                    swap_file: cannery_capture::cold::default_swap_file(),
                    keep_hot,
                    reclaim_own_cgroup,
                };
                let mut cycles = 0u32;
                cannery_capture::cold::capture_cold(
                    None,
                    Some(pid),
                    &job,
                    &cold_opts,
                    &mut |line| {
                        if line.starts_with("cycle ") {
                            cycles += 1;
                            bar.step(&format!("sample {cycles} of {samples}"));
                        }
                    },
                )
                .map(|(report, _)| report)
            }
            None => capture_pid(pid, &job, &mut |done, of| {
                bar.step(&format!("sample {done} of {of}"))
            }),
        };
        let interrupted = cannery_files::interrupt::interrupted();
        cannery_files::interrupt::reset();
        (r, interrupted)
    });
    let report = result.map_err(capture_error)?;
    bar.finish()?;
    if interrupted {
        return Err(PyKeyboardInterrupt::new_err(format!(
            "capture interrupted; the snapshot written so far is finalized at {}",
            out.display()
        )));
    }
    let per_sample: Vec<serde_json::Value> = report
        .samples
        .iter()
        .map(|s| {
            serde_json::json!({
                "processes": s.processes,
                "exited": s.exited,
                "skipped": s.skipped,
                "pause_max_seconds": s.pause_max.as_secs_f64(),
                "pause_limited": s.pause_limited,
                "counts": s.counts,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "path": out.display().to_string(),
        "end_reason": report.end_reason,
        "header": report.header,
        "samples": per_sample,
    });
    py.import("json")?.call_method1("loads", (doc.to_string(),))
}
