//! One capture sample of a process (and optionally its descendants): the
//! pipeline maps → page map → read → filter → sample → sink, with page
//! accounting. Snapshot files and timing of repeated samples are in
//! [`crate::session`]; this module only moves pages of live processes into
//! a [`PageSink`].
//!
//! Guarantees: only pages the page map reports resident and private are
//! read, so never-touched and swapped-out pages are not faulted in (a page
//! swapped out between the page-map read and the content read could be
//! swapped back in; with `freeze` the window is only reclaim by the kernel).
//! A process that exits mid-sample ends its part of the sample with what was
//! read. Unreadable pages are counted and skipped.

#![forbid(unsafe_code)]

use crate::error::{ErrorKind, Result};
use crate::filter::{Filter, Verdict};
use crate::idle::{IdleBitmap, PAGE_IDLE_BITMAP};
use crate::maps::{apply_smaps_flags, parse_maps, Mapping, RegionKind, Selection};
use crate::pagemap::{listed_runs, resident_runs, PageMap, PageSet};
use crate::read::{MemReader, PageRead};
use crate::sample::{Offer, Sampler, SplitMix64};
use crate::snapshot::writer::SnapshotWriter;
use crate::snapshot::PageCounts;
use crate::target::{process_tree, Target};
use crate::PAGE_SIZE;
use std::path::Path;
use std::time::Duration;

/// The default sampling seed.
pub const DEFAULT_SEED: u64 = 0x00C0_FFEE_5EED;

/// Pages looked up in the page map per step.
const CHUNK: usize = 512;

/// What to capture and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureOptions {
    /// Also take copy-on-write pages of private file mappings.
    pub include_file_private: bool,
    /// Also capture every descendant process of the target.
    pub include_children: bool,
    /// Stop each process (ptrace) while it is captured.
    pub freeze: bool,
    /// With `freeze`, stop reading a process once it has been paused this
    /// long (the pause then ends within one more 2 MiB read).
    pub max_pause: Duration,
    /// Count identical pages once.
    pub dedup: bool,
    /// Keep each candidate page with this probability.
    pub sample_rate: f64,
    /// At most this many stored pages per file, split evenly over samples
    /// (a sample that finds fewer candidates than its share passes the rest on).
    pub max_pages: Option<u64>,
    /// Seed for sampling.
    pub seed: u64,
    /// Drop pages that look like they hold secrets.
    pub redact_secrets: bool,
    /// Only capture pages in `[start, end)` (mainly for tests and debugging).
    pub address_range: Option<(u64, u64)>,
    /// Cold pages only: before each sample, mark the target's pages idle
    /// ([`crate::idle`]), wait this long, and take only the pages nothing
    /// touched meanwhile. Needs root and idle page tracking.
    pub cold_after: Option<Duration>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            include_file_private: false,
            include_children: false,
            freeze: false,
            max_pause: Duration::from_millis(500),
            dedup: false,
            sample_rate: 1.0,
            max_pages: None,
            seed: DEFAULT_SEED,
            redact_secrets: false,
            address_range: None,
            cold_after: None,
        }
    }
}

/// Receives captured pages.
pub trait PageSink {
    /// Following pages come from process `pid` named `comm`, in sample `sample`.
    fn begin_process(&mut self, sample: u32, pid: u32, comm: &str) -> Result<()>;
    /// One stored page at virtual address `addr`.
    fn page(&mut self, addr: u64, region: RegionKind, data: &[u8]) -> Result<()>;
}

impl PageSink for SnapshotWriter {
    fn begin_process(&mut self, sample: u32, pid: u32, comm: &str) -> Result<()> {
        SnapshotWriter::begin_process(self, sample, pid, comm)
    }
    fn page(&mut self, _addr: u64, region: RegionKind, data: &[u8]) -> Result<()> {
        self.write_page(region, data)
    }
}

/// Progress events, for callers that want to report or (in tests) act.
#[derive(Debug)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// A mapping of process `pid` has been read.
    MappingDone {
        /// Process.
        pid: u32,
        /// The mapping.
        mapping: &'a Mapping,
        /// Counts so far in this capture.
        counts: &'a PageCounts,
    },
}

/// What one sample did.
#[derive(Debug, Clone, Default)]
pub struct SampleReport {
    /// Processes captured (fully or partly).
    pub processes: u32,
    /// Processes that exited during the sample.
    pub exited: u32,
    /// Processes skipped, with the reason (e.g. a child of another user).
    pub skipped: Vec<(u32, String)>,
    /// Longest pause of a frozen process in this sample.
    pub pause_max: Duration,
    /// True if some process was released early because of `max_pause`.
    pub pause_limited: bool,
    /// True if the capture stopped because of SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Page accounting of this sample.
    pub counts: PageCounts,
    /// With `cold_after`: resident pages touched during the wait (not read).
    pub hot: u64,
    /// With `cold_after`: resident pages left untouched (read, and counted
    /// in `counts`).
    pub cold: u64,
}

type Held = (usize, u64, RegionKind, Vec<u8>);

/// A progress callback.
pub type ProgressFn = Box<dyn FnMut(&Progress<'_>)>;

/// Pages copied while a process is frozen: contents back to back, and
/// (address, region) per page.
type FrozenPages = (Vec<u8>, Vec<(u64, RegionKind)>);

/// Runs capture samples and keeps the state shared between them (dedup set,
/// generator, totals).
pub struct Capturer {
    opts: CaptureOptions,
    filter: Filter,
    rng: Option<SplitMix64>,
    counts: PageCounts,
    samples: u32,
    pause_max: Duration,
    pause_total: Duration,
    progress: Option<ProgressFn>,
    hot: u64,
    cold: u64,
    only: Option<PageSet>,
}

impl std::fmt::Debug for Capturer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capturer")
            .field("opts", &self.opts)
            .field("counts", &self.counts)
            .field("samples", &self.samples)
            .finish()
    }
}

struct ProcState<'s> {
    sample: u32,
    procs: Vec<(u32, String)>,
    announced: Option<usize>,
    sink: &'s mut dyn PageSink,
}

impl ProcState<'_> {
    fn emit(&mut self, proc_idx: usize, addr: u64, region: RegionKind, data: &[u8]) -> Result<()> {
        if self.announced != Some(proc_idx) {
            let (pid, comm) = &self.procs[proc_idx];
            self.sink.begin_process(self.sample, *pid, comm)?;
            self.announced = Some(proc_idx);
        }
        self.sink.page(addr, region, data)
    }
}

/// The parts of `runs` (first index, length) whose page frames are still
/// idle; the other pages are counted hot in `report`, these cold.
fn cold_runs(
    entries: &[u64],
    runs: &[(usize, usize)],
    bitmap: &IdleBitmap,
    report: &mut SampleReport,
) -> Result<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for &(first, len) in runs {
        let pfns: Vec<u64> = entries[first..first + len]
            .iter()
            .map(|e| e & crate::pagemap::PM_PFN_MASK)
            .collect();
        let idle = bitmap.idle(&pfns)?;
        let mut start = None;
        for (i, &is_idle) in idle.iter().enumerate() {
            if is_idle {
                report.cold += 1;
                start.get_or_insert(first + i);
            } else {
                report.hot += 1;
                if let Some(s) = start.take() {
                    out.push((s, first + i - s));
                }
            }
        }
        if let Some(s) = start {
            out.push((s, first + len - s));
        }
    }
    Ok(out)
}

/// Store one chosen page, unless secret redaction drops it.
fn store(
    opts: &CaptureOptions,
    st: &mut ProcState<'_>,
    c: &mut PageCounts,
    proc_idx: usize,
    addr: u64,
    region: RegionKind,
    page: &[u8],
) -> Result<()> {
    if opts.redact_secrets && !crate::secrets::scan_bytes(page).is_empty() {
        c.redacted += 1;
        return Ok(());
    }
    st.emit(proc_idx, addr, region, page)?;
    c.stored += 1;
    Ok(())
}

impl Capturer {
    /// A capturer with these options.
    pub fn new(opts: CaptureOptions) -> Capturer {
        Capturer {
            filter: Filter::new(opts.dedup),
            rng: Some(SplitMix64::new(opts.seed)),
            opts,
            counts: PageCounts::default(),
            samples: 0,
            pause_max: Duration::ZERO,
            pause_total: Duration::ZERO,
            progress: None,
            hot: 0,
            cold: 0,
            only: None,
        }
    }

    /// From the next sample on, take exactly the pages of `pages` (process,
    /// address) that the page map still names, resident or swapped out,
    /// instead of the resident pages; `None` goes back to resident pages.
    /// Reading a swapped-out page brings it back in (the cold capture of
    /// [`crate::cold`] counts that).
    pub fn set_only(&mut self, pages: Option<PageSet>) {
        self.only = pages;
    }

    /// Pages found hot and cold over all samples (with `cold_after`).
    pub fn hot_cold(&self) -> (u64, u64) {
        (self.hot, self.cold)
    }

    /// Call `f` after each mapping is read.
    pub fn set_progress(&mut self, f: ProgressFn) {
        self.progress = Some(f);
    }

    /// The options.
    pub fn options(&self) -> &CaptureOptions {
        &self.opts
    }

    /// Totals over all samples so far.
    pub fn counts(&self) -> PageCounts {
        self.counts
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u32 {
        self.samples
    }

    /// Longest and total pause over all samples.
    pub fn pauses(&self) -> (Duration, Duration) {
        (self.pause_max, self.pause_total)
    }

    /// Take one sample of `pid` (and its descendants if asked), storing at
    /// most `budget` pages (uniformly sampled) if given. Fails only if `pid`
    /// itself cannot be attached or read at all (gone, no permission);
    /// descendants that fail are skipped and reported.
    pub fn sample(
        &mut self,
        pid: u32,
        budget: Option<u64>,
        sink: &mut dyn PageSink,
    ) -> Result<SampleReport> {
        let sample_idx = self.samples;
        let pids = if self.opts.include_children {
            process_tree(pid)
        } else {
            vec![pid]
        };
        let mut report = SampleReport::default();
        let idle = match self.opts.cold_after {
            Some(wait) => {
                let bitmap = IdleBitmap::open(Path::new(PAGE_IDLE_BITMAP))?;
                for &p in &pids {
                    match self.mark_idle(p, &bitmap) {
                        Ok(()) => {}
                        Err(e) if p == pid => return Err(e),
                        Err(_) => {} // a descendant gone or unreadable: found again below
                    }
                }
                let until = std::time::Instant::now() + wait;
                while std::time::Instant::now() < until && !cannery_files::interrupt::interrupted()
                {
                    std::thread::sleep(
                        Duration::from_millis(50).min(until - std::time::Instant::now()),
                    );
                }
                Some(bitmap)
            }
            None => None,
        };
        let rng = self
            .rng
            .take()
            .unwrap_or_else(|| SplitMix64::new(self.opts.seed));
        let mut sampler: Sampler<Held> = Sampler::new(rng, self.opts.sample_rate, budget);
        let mut st = ProcState {
            sample: sample_idx,
            procs: Vec::new(),
            announced: None,
            sink,
        };
        let mut result = Ok(());
        for (i, &p) in pids.iter().enumerate() {
            if cannery_files::interrupt::interrupted() {
                report.interrupted = true;
                break;
            }
            match self.capture_process(p, idle.as_ref(), &mut sampler, &mut st, &mut report) {
                Ok(()) => report.processes += 1,
                Err(e) if i == 0 => {
                    result = Err(e);
                    break;
                }
                Err(e) if e.kind() == ErrorKind::NoSuchProcess => report.exited += 1,
                Err(e) => report.skipped.push((p, e.to_string())),
            }
        }
        let evicted = sampler.evicted();
        let (held, rng) = sampler.finish();
        self.rng = Some(rng);
        report.counts.sampled_out += evicted;
        for (proc_idx, addr, region, data) in held {
            store(
                &self.opts,
                &mut st,
                &mut report.counts,
                proc_idx,
                addr,
                region,
                &data,
            )?;
        }
        self.counts.add(&report.counts);
        self.hot += report.hot;
        self.cold += report.cold;
        self.samples += 1;
        self.pause_max = self.pause_max.max(report.pause_max);
        result.map(|()| report)
    }

    /// The part of mapping `m` a capture reads, with its region kind: none
    /// for a mapping capture skips; else the mapping clipped to
    /// `address_range`.
    fn span(&self, m: &Mapping) -> Option<(RegionKind, u64, u64)> {
        let Selection::Take(region) = m.select(self.opts.include_file_private) else {
            return None;
        };
        let (mut start, mut end) = (m.start, m.end);
        if let Some((lo, hi)) = self.opts.address_range {
            start = start.max(lo & !(PAGE_SIZE as u64 - 1));
            end = end.min(hi);
        }
        Some((region, start, end))
    }

    /// Marks every capturable page of `pid` idle (the mappings capture
    /// would read, the frames its page map names).
    fn mark_idle(&self, pid: u32, bitmap: &IdleBitmap) -> Result<()> {
        let target = Target::attach(pid)?;
        let pagemap = PageMap::new(target.open_checked("pagemap")?);
        let (maps, _bad) = parse_maps(&target.read_to_string("maps")?);
        let zero_pfn = crate::pagemap::zero_page_pfn();
        let mut entries = vec![0u64; CHUNK];
        for m in &maps {
            let Some((_, mut addr, end)) = self.span(m) else {
                continue;
            };
            while addr < end {
                let n = (((end - addr) / PAGE_SIZE as u64) as usize).min(CHUNK);
                let got = match pagemap.entries(addr, &mut entries[..n]) {
                    Ok(0) | Err(_) => break,
                    Ok(got) => got,
                };
                let pfns: Vec<u64> = entries[..got]
                    .iter()
                    .filter(|&&e| crate::pagemap::is_capturable(e, zero_pfn))
                    .map(|&e| e & crate::pagemap::PM_PFN_MASK)
                    .filter(|&pfn| pfn != 0)
                    .collect();
                bitmap.mark(&pfns)?;
                addr += (got * PAGE_SIZE) as u64;
            }
        }
        Ok(())
    }

    fn capture_process(
        &mut self,
        pid: u32,
        idle: Option<&IdleBitmap>,
        sampler: &mut Sampler<Held>,
        st: &mut ProcState<'_>,
        report: &mut SampleReport,
    ) -> Result<()> {
        let target = Target::attach(pid)?;
        // Open everything first so permission problems surface before any stop.
        let maps_file = target.open_checked("maps")?;
        drop(maps_file);
        let pagemap = PageMap::new(target.open_checked("pagemap")?);
        let mem = MemReader::new(target.open_checked("mem")?, &target);
        let frozen = if self.opts.freeze {
            Some(crate::freeze::freeze(pid)?)
        } else {
            None
        };
        let maps_text = target.read_to_string("maps")?;
        let (mut maps, _bad) = parse_maps(&maps_text);
        if let Ok(smaps) = target.read_to_string("smaps") {
            apply_smaps_flags(&mut maps, &smaps);
        }
        let proc_idx = st.procs.len();
        st.procs.push((pid, target.comm().to_string()));
        let mut entries = vec![0u64; CHUNK];
        let mut buf = vec![0u8; CHUNK * PAGE_SIZE];
        let mut status = Vec::with_capacity(CHUNK);
        let mut gone = false;
        let zero_pfn = crate::pagemap::zero_page_pfn();
        // With freeze, pages are copied while the process is stopped and
        // processed (hashed, compressed) after it runs again, so the pause
        // covers reading only. Memory: the process's resident private pages.
        let mut frozen_pages: Option<FrozenPages> =
            frozen.as_ref().map(|_| (Vec::new(), Vec::new()));
        'maps: for m in &maps {
            let Some((region, mut addr, end)) = self.span(m) else {
                continue;
            };
            while addr < end {
                if cannery_files::interrupt::interrupted() {
                    report.interrupted = true;
                    break 'maps;
                }
                if let Some(f) = &frozen {
                    if f.elapsed() > self.opts.max_pause {
                        report.pause_limited = true;
                        break 'maps;
                    }
                }
                let n = (((end - addr) / PAGE_SIZE as u64) as usize).min(CHUNK);
                let got = match pagemap.entries(addr, &mut entries[..n]) {
                    Ok(0) => {
                        gone = true;
                        break 'maps;
                    }
                    Ok(got) => got,
                    Err(_) if !target.is_alive() => {
                        gone = true;
                        break 'maps;
                    }
                    // Mapping vanished or unreadable page map: skip the rest of it.
                    Err(_) => break,
                };
                let mut runs = match &self.only {
                    Some(only) => listed_runs(pid, addr, &entries[..got], only),
                    None => resident_runs(&entries[..got], zero_pfn),
                };
                if let Some(bitmap) = idle {
                    runs = cold_runs(&entries[..got], &runs, bitmap, report)?;
                }
                for (first, len) in runs {
                    let run_addr = addr + (first * PAGE_SIZE) as u64;
                    let bytes = &mut buf[..len * PAGE_SIZE];
                    mem.read_pages(run_addr, bytes, &mut status);
                    for (i, s) in status.iter().enumerate() {
                        let page_addr = run_addr + (i * PAGE_SIZE) as u64;
                        match s {
                            PageRead::Gone => {
                                gone = true;
                                break 'maps;
                            }
                            PageRead::Unreadable => {
                                report.counts.scanned += 1;
                                report.counts.unreadable += 1;
                            }
                            PageRead::Ok => {
                                report.counts.scanned += 1;
                                let page = &bytes[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
                                if let Some((data, index)) = &mut frozen_pages {
                                    // Frozen: only copy now, filter after thawing.
                                    data.extend_from_slice(page);
                                    index.push((page_addr, region));
                                } else {
                                    self.route(
                                        proc_idx, page_addr, region, page, sampler, st, report,
                                    )?;
                                }
                            }
                        }
                    }
                }
                addr += (got * PAGE_SIZE) as u64;
            }
            if let Some(f) = &mut self.progress {
                f(&Progress::MappingDone {
                    pid,
                    mapping: m,
                    counts: &report.counts,
                });
            }
        }
        if let Some(f) = frozen {
            let pause = f.thaw();
            report.pause_max = report.pause_max.max(pause);
            self.pause_total += pause;
        }
        if let Some((data, index)) = frozen_pages {
            for (i, (addr, region)) in index.into_iter().enumerate() {
                let page = &data[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
                self.route(proc_idx, addr, region, page, sampler, st, report)?;
            }
        }
        if gone || !target.is_alive() {
            report.exited += 1;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn route(
        &mut self,
        proc_idx: usize,
        addr: u64,
        region: RegionKind,
        page: &[u8],
        sampler: &mut Sampler<Held>,
        st: &mut ProcState<'_>,
        report: &mut SampleReport,
    ) -> Result<()> {
        let c = &mut report.counts;
        match self.filter.check(page) {
            Verdict::Zero => c.zero += 1,
            Verdict::SameFilled(_) => c.same_filled += 1,
            Verdict::Duplicate => c.duplicate += 1,
            Verdict::Keep => {
                // Copy the page only if the sampler holds it.
                let hold = sampler.has_budget();
                let make = || {
                    let data = if hold { page.to_vec() } else { Vec::new() };
                    (proc_idx, addr, region, data)
                };
                match sampler.offer_with(make) {
                    Offer::Keep(_) => store(&self.opts, st, c, proc_idx, addr, region, page)?,
                    Offer::Held => {}
                    Offer::Dropped => c.sampled_out += 1,
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pagemap::PM_PRESENT;

    #[test]
    fn only_idle_frames_are_kept_and_the_rest_counted_hot() {
        // A plain file stands in for the idle bitmap: frames 10, 11, 13 and
        // 20 are idle, 12 and 21 were touched.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bitmap");
        std::fs::write(&path, vec![0u8; 8]).unwrap();
        let bitmap = IdleBitmap::open(&path).unwrap();
        bitmap.mark(&[10, 11, 13, 20]).unwrap();
        let entries: Vec<u64> = [10u64, 11, 12, 13, 0, 20, 21]
            .iter()
            .map(|&pfn| PM_PRESENT | pfn)
            .collect();
        // Two resident runs: pages 0..4 and 5..7.
        let mut report = SampleReport::default();
        let runs = cold_runs(&entries, &[(0, 4), (5, 2)], &bitmap, &mut report).unwrap();
        assert_eq!(runs, [(0, 2), (3, 1), (5, 1)]);
        assert_eq!((report.hot, report.cold), (2, 4));
    }
}
