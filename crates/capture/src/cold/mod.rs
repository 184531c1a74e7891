//! Cold pages as the kernel's own reclaim picks them (`capture --cold
//! reclaim:AMOUNT`): the pages zswap really gets.
//!
//! Spawn mode starts the workload inside a temporary memory cgroup of its
//! own (it joins between fork and exec, so every page it allocates is
//! charged there), lets it run for the interval, then makes the kernel
//! reclaim AMOUNT of its anonymous memory ([`cannery_machine::reclaim`]:
//! v1 limit steps, v2 `memory.reclaim`). The limit is set back before
//! reading; the page map then names the pages that went to swap (bit 62,
//! bit 63 clear, with a type and offset of an active swap area), and
//! exactly those are read (each read brings the page back in) into the
//! snapshot. Pages swapped before the step (another reclaimer, such as a
//! DAMON scheme) are counted, not captured. `--keep-hot` also writes the
//! pages still resident after the step to a second snapshot, from the
//! same moment. With `count` > 1 the cycle repeats.
//!
//! Attach mode (`--pid`) reclaims in the cgroup the process lives in, on
//! v2 only and only when asked (`reclaim_own_cgroup`): it affects every
//! process there. On v1 it is refused: charges stay where they were made.
//!
//! Every machine change (the cgroup, the limit, the swap file and zswap of
//! `--setup`, the workload) goes through one [`Restore`] guard, undone on
//! success, error, panic, SIGINT and SIGTERM; its journal lets `cannery
//! restore` undo a run killed outright.

use std::path::PathBuf;

use cannery_machine::cgroup::{self, MemoryCgroup, Version};
use cannery_machine::reclaim::{self, CgroupKnobs, Outcome};
use cannery_machine::setup::{self, Need};
use cannery_machine::{Restore, System};

use crate::capture::{CaptureOptions, Capturer};
use crate::error::{Error, ErrorKind, Result};
use crate::maps::parse_maps;
use crate::pagemap::{is_capturable, zero_page_pfn, PageMap, PageSet, SwapAreas};
use crate::session::{Job, Schedule, SessionReport, WorkloadSpec};
use crate::snapshot::ColdPages;
use crate::target::{process_tree, Target};
use crate::PAGE_SIZE;

mod amount;
pub use amount::Amount;

/// The method name recorded in the snapshot.
pub const METHOD: &str = "reclaim";
/// Free swap a run needs without `--setup`.
pub const MIN_FREE_SWAP: u64 = 64 << 20;
/// The swap file `--setup` makes when swap is short: 1 GiB, at most half
/// the memory.
pub const SETUP_SWAP: u64 = 1 << 30;

/// What a cold capture does beyond a plain one.
#[derive(Clone, Debug)]
pub struct ColdOptions {
    /// How much to reclaim per cycle.
    pub amount: Amount,
    /// Provide swap (a temporary file) and enable zswap, undone afterwards.
    pub setup: bool,
    /// Where `setup` may make its swap file (must not exist).
    pub swap_file: PathBuf,
    /// Also write the pages still resident after each step here.
    pub keep_hot: Option<PathBuf>,
    /// Attach mode on v2: reclaim in the process's own cgroup.
    pub reclaim_own_cgroup: bool,
}

/// Where `--setup` makes its swap file when not told:
/// `/var/tmp/cannery-cold-PID.swap`.
pub fn default_swap_file() -> PathBuf {
    PathBuf::from(format!("/var/tmp/cannery-cold-{}.swap", std::process::id()))
}

/// What is missing for a cold capture (of process `pid` in attach mode),
/// each with its fix; empty when it can run.
pub fn preflight(system: &System, cold: &ColdOptions, pid: Option<u32>) -> Vec<Need> {
    let mut needs = Vec::new();
    needs.extend(setup::root_need(
        system,
        "cgroups, reclaim and other processes' page maps need it",
        "cannery capture --cold reclaim:50% …",
    ));
    match cgroup::find(system) {
        None => needs.push(Need {
            what: "a memory cgroup".into(),
            fix: cgroup::missing_reason(system),
        }),
        Some(Version::V1) if pid.is_some() => needs.push(Need {
            what: "attach mode on cgroup v1: a process's pages stay charged to the cgroup \
                   it allocated them in, so no new cgroup can reclaim them"
                .into(),
            fix: "start the workload with cannery instead: cannery capture --cold reclaim:50% \
                  -o OUT -- CMD …"
                .into(),
        }),
        Some(Version::V2) if pid.is_some() && !cold.reclaim_own_cgroup => needs.push(Need {
            what: "attach mode reclaims in the process's own cgroup, which affects every \
                   process in it"
                .into(),
            fix: "pass --reclaim-own-cgroup to accept that, or start the workload with cannery"
                .into(),
        }),
        Some(_) => {}
    }
    if !cold.setup {
        needs.extend(setup::swap_need(
            system,
            MIN_FREE_SWAP,
            "reclaim only takes anonymous pages when it can swap them",
        ));
    }
    needs
}

/// What a cold capture found, beside the session's report.
#[derive(Clone, Debug, Default)]
pub struct ColdReport {
    /// The counts recorded in the snapshot.
    pub cold: ColdPages,
    /// Each cycle's reclaim step.
    pub steps: Vec<Outcome>,
    /// zswap was on during the steps.
    pub zswap_enabled: bool,
    /// The machine changes made and undone, as lines.
    pub changed: Vec<String>,
    /// Changes that could not be undone (kept for `cannery restore`).
    pub restore_failures: Vec<String>,
    /// The hot snapshot's header (`keep_hot`).
    pub hot: Option<crate::snapshot::SnapshotHeader>,
}

impl ColdReport {
    /// What the CLI says of it on stderr: the reclaim, the hot snapshot
    /// written to `hot_path`, and each change not undone.
    pub fn status_lines(&self, hot_path: Option<&std::path::Path>) -> Vec<String> {
        let zswap = if self.zswap_enabled { "on" } else { "off" };
        let mut lines = vec![format!(
            "cold (zswap {zswap}): {}",
            self.cold.describe_reclaim()
        )];
        if let (Some(h), Some(path)) = (&self.hot, hot_path) {
            let n = h.counts.stored;
            lines.push(format!("hot: {n} resident pages -> {}", path.display()));
        }
        lines.extend(
            self.restore_failures
                .iter()
                .map(|f| format!("not restored: {f}")),
        );
        lines
    }
}

/// The workload's pages by state: swapped out to an active area, and
/// resident.
#[derive(Debug, Default)]
struct Scan {
    swapped: PageSet,
    resident: u64,
}

/// Reads the page maps of `pids` (the mappings a capture reads).
fn scan(pids: &[u32], areas: &SwapAreas, opts: &CaptureOptions) -> Scan {
    let mut out = Scan::default();
    let zero_pfn = zero_page_pfn();
    let mut entries = vec![0u64; 512];
    for &pid in pids {
        // A process gone or unreadable meanwhile has nothing to count.
        let Ok(target) = Target::attach(pid) else {
            continue;
        };
        let (Ok(pm), Ok(maps)) = (
            target.open_checked("pagemap"),
            target.read_to_string("maps"),
        ) else {
            continue;
        };
        let pm = PageMap::new(pm);
        for m in parse_maps(&maps).0 {
            if !matches!(
                m.select(opts.include_file_private),
                crate::maps::Selection::Take(_)
            ) {
                continue;
            }
            let mut addr = m.start;
            while addr < m.end {
                let n = (((m.end - addr) / PAGE_SIZE as u64) as usize).min(entries.len());
                let got = match pm.entries(addr, &mut entries[..n]) {
                    Ok(0) | Err(_) => break,
                    Ok(g) => g,
                };
                for (i, &e) in entries[..got].iter().enumerate() {
                    if areas.holds(e) {
                        out.swapped.insert((pid, addr + (i * PAGE_SIZE) as u64));
                    } else if is_capturable(e, zero_pfn) {
                        out.resident += 1;
                    }
                }
                addr += (got * PAGE_SIZE) as u64;
            }
        }
    }
    out
}

/// A `NAME value` line of a `/proc` file (`/proc/meminfo` in kB,
/// `/proc/vmstat` in pages), 0 when absent.
fn proc_value(system: &System, rel: &str, name: &str) -> u64 {
    system
        .read(rel)
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let rest = l.strip_prefix(name)?;
                let rest = rest.strip_prefix(':').unwrap_or(rest);
                rest.split_whitespace().next()?.parse().ok()
            })
        })
        .unwrap_or(0)
}

/// `mglru` when the multi-generational LRU is on, else `classic`.
pub fn lru_kind(system: &System) -> &'static str {
    let on = system
        .read("sys/kernel/mm/lru_gen/enabled")
        .ok()
        .and_then(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok())
        .is_some_and(|v| v != 0);
    if on {
        "mglru"
    } else {
        "classic"
    }
}

fn machine_error(what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::new(ErrorKind::Io, format!("{what}: {e}"))
}

/// One cycle's state for [`cycle`].
struct Cycle<'a> {
    system: &'a System,
    cgroup: &'a MemoryCgroup,
    amount: Amount,
    opts: &'a CaptureOptions,
}

/// One reclaim step on the pages of `pid` (and its descendants with
/// `include_children`): returns the pages it swapped out, and adds the
/// counts to `cold`.
fn cycle(
    c: &Cycle<'_>,
    guard: &mut Restore,
    pid: u32,
    cold: &mut ColdPages,
    report: &mut ColdReport,
) -> Result<PageSet> {
    let pids = if c.opts.include_children {
        process_tree(pid)
    } else {
        vec![pid]
    };
    let areas = SwapAreas::from_sizes(
        c.system
            .swaps()
            .map_err(machine_error("reading /proc/swaps"))?
            .iter()
            .map(|a| a.size),
    );
    let before = scan(&pids, &areas, c.opts);
    let anon = c
        .cgroup
        .anon(c.system)
        .map_err(machine_error("reading the cgroup's memory.stat"))?;
    let target = c.amount.pages(anon);
    let zswapped = proc_value(c.system, "proc/meminfo", "Zswapped");
    let pswpout = proc_value(c.system, "proc/vmstat", "pswpout");
    let limit = c.cgroup.limit_file();
    let original = match c.cgroup.version {
        Version::V1 => Some(
            c.system
                .read(&limit)
                .map_err(machine_error("reading the cgroup's limit"))?,
        ),
        Version::V2 => None,
    };
    let mut count = || {
        let now = scan(&pids, &areas, c.opts);
        Ok(now.swapped.difference(&before.swapped).count() as u64)
    };
    let interrupted = cannery_files::interrupt::interrupted;
    let mut knobs = CgroupKnobs {
        guard,
        cgroup: c.cgroup,
        swapped: &mut count,
        interrupted: &interrupted,
        request: None,
    };
    let outcome = match c.cgroup.version {
        Version::V1 => reclaim::squeeze_v1(&mut knobs, target),
        Version::V2 => reclaim::reclaim_v2(&mut knobs, target),
    };
    // The limit goes back before any page is read: reading brings pages
    // back in, which the lowered limit would push out again.
    if let Some(original) = &original {
        guard
            .set(&limit, original)
            .map_err(machine_error("setting the cgroup's limit back"))?;
    }
    let outcome = outcome.map_err(machine_error("reclaiming"))?;
    let after = scan(&pids, &areas, c.opts);
    let taken: PageSet = after.swapped.difference(&before.swapped).copied().collect();
    cold.reclaimed_pages += taken.len() as u64;
    cold.swapped_before += before.swapped.len() as u64;
    cold.resident_after += after.resident;
    cold.zswap_stored +=
        proc_value(c.system, "proc/meminfo", "Zswapped").saturating_sub(zswapped) / 4;
    cold.swap_written += proc_value(c.system, "proc/vmstat", "pswpout").saturating_sub(pswpout);
    cold.stopped = outcome.stopped.chars().take(120).collect();
    report.steps.push(outcome);
    Ok(taken)
}

/// Waits until `due`, returning early (false) when the target exits or a
/// signal arrives.
fn wait_until(target: &Target, due: std::time::Instant) -> bool {
    loop {
        if cannery_files::interrupt::interrupted() {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= due {
            return target.is_alive();
        }
        let ms = (due - now).as_millis().min(200) as i32;
        if target.wait_exit(ms.max(1)) {
            return false;
        }
    }
}

/// The cycles of one run, into `writer` (and `hot`): the end reason.
#[allow(clippy::too_many_arguments)]
fn run_cycles(
    c: &Cycle<'_>,
    guard: &mut Restore,
    target: &Target,
    sched: &Schedule,
    capturer: &mut Capturer,
    writer: &mut crate::snapshot::writer::SnapshotWriter,
    hot: &mut Option<(Capturer, crate::snapshot::writer::SnapshotWriter)>,
    cold: &mut ColdPages,
    report: &mut ColdReport,
    samples: &mut Vec<crate::capture::SampleReport>,
    progress: &mut dyn FnMut(&str),
) -> Result<String> {
    let started = std::time::Instant::now();
    for i in 0..sched.count {
        if !wait_until(target, started + sched.interval * (i + 1)) {
            return Ok(if cannery_files::interrupt::interrupted() {
                "interrupted".into()
            } else {
                format!("target exited after {i} cycles")
            });
        }
        if !target.is_alive() {
            return Ok(format!("target exited after {i} cycles"));
        }
        let taken = cycle(c, guard, target.pid(), cold, report)?;
        let last = report.steps.last().map(|o| o.stopped.clone());
        progress(&format!(
            "cycle {}: {} pages reclaimed ({})",
            i + 1,
            taken.len(),
            last.unwrap_or_default()
        ));
        // Budget left unused by earlier cycles carries over, as in a plain
        // capture.
        let budget = |c: &Capturer| {
            crate::session::budget_left(c.options().max_pages, i, sched.count, c.counts().stored)
        };
        let exited = || format!("target exited during cycle {}", i + 1);
        if let Some((hc, hw)) = hot {
            match hc.sample(target.pid(), budget(hc), hw) {
                Err(e) if e.kind() == ErrorKind::NoSuchProcess => return Ok(exited()),
                r => r?,
            };
            hw.flush()?;
        }
        capturer.set_only(Some(taken));
        let r = match capturer.sample(target.pid(), budget(capturer), writer) {
            Err(e) if e.kind() == ErrorKind::NoSuchProcess => return Ok(exited()),
            r => r?,
        };
        cold.captured_pages += r.counts.scanned;
        let interrupted = r.interrupted;
        samples.push(r);
        writer.flush()?;
        if interrupted || cannery_files::interrupt::interrupted() {
            return Ok("interrupted".into());
        }
    }
    Ok("completed".into())
}

/// Runs a cold capture: spawn mode when `spec` is given, else attach to
/// `pid`. `progress` hears one line per step. The machine is restored
/// before this returns (what could not be is in the report's
/// `restore_failures`, and stays in the journal).
pub fn capture_cold(
    spec: Option<&WorkloadSpec>,
    pid: Option<u32>,
    job: &Job<'_>,
    cold_opts: &ColdOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(SessionReport, ColdReport)> {
    if job.opts.cold_after.is_some() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "--cold reclaim:… and --cold-after cannot be combined",
        ));
    }
    let _handlers = cannery_files::interrupt::install();
    let system = System::default();
    let needs = preflight(&system, cold_opts, pid);
    if !needs.is_empty() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            setup::render_needs("cannot capture cold pages here:", &needs),
        ));
    }
    let version = cgroup::find(&system).expect("checked by the preflight");
    let mut guard = Restore::begin(&system, "capture")
        .map_err(|e| Error::new(ErrorKind::Unsupported, e.to_string()))?;
    if cold_opts.setup {
        let size = SETUP_SWAP.min(system.mem_total().unwrap_or(SETUP_SWAP * 2) / 2);
        let needed = if setup::free_swap(&system) >= MIN_FREE_SWAP {
            0
        } else {
            size
        };
        setup::swap_and_zswap(&mut guard, needed, &cold_opts.swap_file, false, progress)
            .map_err(machine_error("--setup"))?;
    }
    let (cgroup, mut child, pid, name) = match (spec, pid) {
        (Some(spec), _) => {
            let cg = MemoryCgroup::create(
                &mut guard,
                version,
                &format!("cannery-{}", std::process::id()),
            )
            .map_err(machine_error("making the memory cgroup"))?;
            let (mut cmd, program, name) = crate::session::workload_command(spec)?;
            crate::session::attach_log(&mut cmd, spec)?;
            crate::sys::join_cgroup_before_exec(&mut cmd, &system.path(&cg.procs_file()))
                .map_err(machine_error("joining the cgroup"))?;
            let child = cmd.spawn().map_err(|e| {
                Error::new(
                    ErrorKind::Spawn,
                    format!("cannot start {} in /{}: {e}", program.display(), cg.rel),
                )
            })?;
            let id = child.id();
            guard
                .add_process(id)
                .map_err(machine_error("recording the workload"))?;
            (cg, Some(child), id, name)
        }
        (None, Some(pid)) => {
            let cg = MemoryCgroup::of_process(&system, version, pid)
                .map_err(machine_error("finding the process's cgroup"))?;
            let t = Target::attach(pid)?;
            (cg, None, pid, t.comm().to_string())
        }
        (None, None) => {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "nothing to capture: give a process or a command",
            ))
        }
    };
    progress(&format!(
        "cgroup {} /{}: reclaim {} of the anonymous memory per cycle",
        version.name(),
        cgroup.rel,
        cold_opts.amount.label()
    ));
    let mut cold = ColdPages {
        method: METHOD.into(),
        cgroup: version.name().into(),
        amount: cold_opts.amount.label(),
        lru: lru_kind(&system).into(),
        ..ColdPages::default()
    };
    let mut meta = job.metadata(&name);
    meta.cold = Some(cold.clone());
    let mut report = ColdReport {
        zswap_enabled: system.zswap_enabled().unwrap_or(false),
        ..ColdReport::default()
    };
    let mut samples = Vec::new();
    let outcome = (|| {
        let mut writer = crate::snapshot::writer::SnapshotWriter::create(
            job.out,
            meta.clone(),
            job.level,
            job.existing,
        )?;
        let mut hot = match &cold_opts.keep_hot {
            Some(path) => {
                let mut m = meta.clone();
                m.label = format!("{}.hot", meta.label);
                m.cold = None;
                let w = crate::snapshot::writer::SnapshotWriter::create(
                    path,
                    m,
                    job.level,
                    job.existing,
                )?;
                Some((Capturer::new(job.opts.clone()), w))
            }
            None => None,
        };
        let mut capturer = Capturer::new(job.opts.clone());
        let target = Target::attach(pid)?;
        let c = Cycle {
            system: &system,
            cgroup: &cgroup,
            amount: cold_opts.amount,
            opts: job.opts,
        };
        let reason = run_cycles(
            &c,
            &mut guard,
            &target,
            job.sched,
            &mut capturer,
            &mut writer,
            &mut hot,
            &mut cold,
            &mut report,
            &mut samples,
            progress,
        )?;
        Ok::<_, Error>((capturer, writer, hot, reason))
    })();
    let completed = matches!(&outcome, Ok((_, _, _, r)) if r == "completed");
    let (exit_status, killed) = match &mut child {
        Some(ch) => {
            let (st, k) =
                crate::session::stop_workload(ch, spec.is_some_and(|s| s.wait_exit) && completed);
            (st, k)
        }
        None => (None, false),
    };
    report.changed = guard.describe();
    report.restore_failures = guard.restore();
    let (capturer, mut writer, hot, reason) = outcome?;
    if cold.captured_pages == 0 {
        return Err(Error::new(
            ErrorKind::NoSample,
            format!(
                "no page was reclaimed and captured ({reason}; {}); nothing written to {}",
                report
                    .steps
                    .last()
                    .map_or("no reclaim step ran", |o| o.stopped.as_str()),
                job.out.display()
            ),
        ));
    }
    if let Some((hc, mut hw)) = hot {
        hw.set_counts(hc.counts());
        let (pmax, ptotal) = hc.pauses();
        hw.set_samples(
            hc.samples() as u64,
            pmax.as_nanos() as u64,
            ptotal.as_nanos() as u64,
        );
        hw.set_end_reason(&reason);
        report.hot = Some(hw.finish()?);
    }
    writer.set_counts(capturer.counts());
    let (pmax, ptotal) = capturer.pauses();
    writer.set_samples(
        capturer.samples() as u64,
        pmax.as_nanos() as u64,
        ptotal.as_nanos() as u64,
    );
    writer.set_end_reason(&reason);
    writer.set_cold(cold.clone());
    let header = writer.finish()?;
    report.cold = cold;
    Ok((
        SessionReport {
            header,
            samples,
            end_reason: reason,
            exit_status,
            killed,
        },
        report,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_values_and_lru_are_read() {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        std::fs::create_dir_all(s.path("proc")).unwrap();
        std::fs::write(
            s.path("proc/meminfo"),
            "MemTotal: 100 kB\nZswap:  12 kB\nZswapped:  4096 kB\n",
        )
        .unwrap();
        std::fs::write(s.path("proc/vmstat"), "pswpin 3\npswpout 77\n").unwrap();
        assert_eq!(proc_value(&s, "proc/meminfo", "Zswapped"), 4096);
        assert_eq!(proc_value(&s, "proc/meminfo", "Zswap"), 12);
        assert_eq!(proc_value(&s, "proc/vmstat", "pswpout"), 77);
        assert_eq!(proc_value(&s, "proc/vmstat", "nope"), 0);
        assert_eq!(lru_kind(&s), "classic");
        std::fs::create_dir_all(s.path("sys/kernel/mm/lru_gen")).unwrap();
        std::fs::write(s.path("sys/kernel/mm/lru_gen/enabled"), "0x0007\n").unwrap();
        assert_eq!(lru_kind(&s), "mglru");
    }
}
