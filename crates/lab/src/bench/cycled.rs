//! Per-page times as zswap sees them: every codec compresses, then
//! decompresses, each page of a working set larger than the last-level
//! cache once per pass, in a shuffled order, so the page, its stream and
//! the branch history are cold, as when zswap stores or faults back one
//! page among other work (the warm figures of [`super::bench_codec`] time a
//! page several times in a row and keep the fastest).
//!
//! The working set is the held-out pages of every workload benched, copied
//! into one buffer and repeated until it reaches [`CycledOptions::bytes`]:
//! what runs between two visits of a page is other real pages being
//! compressed, as under reclaim, rather than a synthetic eviction sweep
//! that would also flush the codec's own code and tables, which stay warm
//! in zswap too. Each workload's pages use that workload's codecs (its
//! table, its dictionary). One codec at a time holds its streams: memory is
//! at most three working sets (pages, streams, decoded pages), 192 MiB at
//! the default 64 MiB.

use std::time::Instant;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::rng::XorShift64Star;

use super::runner::{engine, Runner};
use super::{peer_row, relative_ns, BenchCodec, BenchError, BenchResult, BenchWorkload};
use crate::figures::percentile;
use crate::mode_key::ModeKey;
use crate::tabular::{Align, Grid, Style};
use crate::units::micros;
use cannery_engines::peer::PeerKind;

/// How large a working set to cycle through, and how many times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycledOptions {
    /// Working set, bytes (rounded up to whole pages; never fewer pages
    /// than the workloads hold).
    pub bytes: usize,
    /// Passes over the working set, each in its own order.
    pub passes: usize,
}

impl CycledOptions {
    /// The smallest default working set: 64 MiB.
    pub const MIN_BYTES: usize = 64 << 20;

    /// `mib` MiB over `passes` passes; without `mib`, the default for this
    /// machine: twice its last-level cache, at least [`Self::MIN_BYTES`].
    pub fn for_machine(mib: Option<usize>, passes: usize) -> CycledOptions {
        let llc = last_level_cache().unwrap_or(0);
        let bytes = mib.map_or(llc.saturating_mul(2).max(Self::MIN_BYTES), |m| {
            m.saturating_mul(1 << 20)
        });
        CycledOptions { bytes, passes }
    }
}

/// The size of CPU 0's last-level cache in bytes (sysfs), if the kernel
/// says.
pub fn last_level_cache() -> Option<usize> {
    let mut best: Option<(u32, usize)> = None;
    for i in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(size.trim())) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, size));
        }
    }
    best.map(|(_, size)| size)
}

/// `32768K`, `32M`, `512` as sysfs writes cache sizes.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// One codec's cycled figures on one workload (its keys join the warm ones
/// in `bench --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CycledFigures {
    /// Bytes of the working set cycled through.
    pub cycled_working_set_bytes: usize,
    /// Compressions timed on this workload's pages (every visit of every pass).
    pub cycled_pages: usize,
    /// Median compress time per page, ns.
    pub cycled_compress_ns_p50: u64,
    /// 99th percentile compress time per page, ns.
    pub cycled_compress_ns_p99: u64,
    /// Median decompress time per page, ns (compressible pages only).
    pub cycled_decompress_ns_p50: u64,
    /// 99th percentile decompress time per page, ns.
    pub cycled_decompress_ns_p99: u64,
}

/// What a cycled run went through, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycledRun {
    /// Distinct held-out pages, all workloads.
    pub pages: usize,
    /// Pages visited per pass (the working set in pages).
    pub visits: usize,
    /// Passes.
    pub passes: usize,
    /// The machine's last-level cache, bytes, if known.
    pub llc: Option<usize>,
}

/// The working set: every page in one buffer, and whose page each is
/// (workload, page of its held-out pages).
struct WorkingSet {
    pages: Vec<u8>,
    owner: Vec<(usize, usize)>,
}

impl WorkingSet {
    fn new(workloads: &[BenchWorkload], bytes: usize) -> Result<WorkingSet, BenchError> {
        let all: Vec<((usize, usize), &[u8])> = workloads
            .iter()
            .enumerate()
            .flat_map(|(i, w)| {
                w.test
                    .iter()
                    .enumerate()
                    .map(move |(j, p)| ((i, j), &p[..]))
            })
            .collect();
        if all.is_empty() {
            return Err(BenchError::Empty(
                "no held-out pages to cycle through".into(),
            ));
        }
        if let Some((i, p)) = all.iter().find(|(_, p)| p.len() != PAGE_SIZE) {
            return Err(BenchError::Empty(format!(
                "a page of {} has {} bytes, not {PAGE_SIZE}",
                workloads[i.0].name,
                p.len()
            )));
        }
        let n = all.len().max(bytes.div_ceil(PAGE_SIZE));
        let size = n
            .checked_mul(PAGE_SIZE)
            .ok_or_else(|| BenchError::Empty(format!("a working set of {n} pages")))?;
        let mut pages = Vec::with_capacity(size);
        let mut owner = Vec::with_capacity(n);
        for k in 0..n {
            let (i, p) = all[k % all.len()];
            pages.extend_from_slice(p);
            owner.push(i);
        }
        Ok(WorkingSet { pages, owner })
    }

    fn page(&self, k: usize) -> &[u8] {
        &self.pages[k * PAGE_SIZE..(k + 1) * PAGE_SIZE]
    }
}

/// `0..n` shuffled (Fisher-Yates on the workspace's xorshift64* from
/// `seed`): the same order for the same seed, a new one for each pass.
fn order(n: usize, seed: u64) -> Vec<usize> {
    // Seeds 0 and 1 would give the same state (zero is made one).
    let mut rng = XorShift64Star::from_state(seed.wrapping_add(1));
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
    v
}

/// Each workload's compress and decompress times, ns, unsorted.
type Samples = Vec<(Vec<u64>, Vec<u64>)>;

/// Cycles one codec (`runners[i]` for workload `i`'s pages) through `set`
/// `passes` times compressing, keeping pass 0's streams, then `passes`
/// times decompressing into `back` (a buffer the size of `set`), every
/// decoded page compared with its original.
fn cycle(
    set: &WorkingSet,
    back: &mut [u8],
    runners: &mut [Runner],
    passes: usize,
    fail: &dyn Fn(usize, String) -> BenchError,
) -> Result<Samples, BenchError> {
    let n = set.owner.len();
    let mut times: Samples = vec![(Vec::new(), Vec::new()); runners.len()];
    let mut streams: Vec<u8> = Vec::new();
    let mut at: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut out = Vec::with_capacity(2 * PAGE_SIZE);
    for pass in 0..passes {
        for k in order(n, pass as u64) {
            let w = set.owner[k].0;
            let t = Instant::now();
            let got = runners[w].compress(set.page(k), &mut out);
            let ns = t.elapsed().as_nanos() as u64;
            let size = got.map_err(|e| fail(k, e))?;
            times[w].0.push(ns);
            if let (0, Some(m)) = (pass, size) {
                at[k] = Some((streams.len(), m));
                streams.extend_from_slice(&out[..m]);
            }
        }
    }
    for pass in 0..passes {
        for k in order(n, (passes + pass) as u64) {
            let Some((start, len)) = at[k] else { continue };
            let w = set.owner[k].0;
            let dst = &mut back[k * PAGE_SIZE..(k + 1) * PAGE_SIZE];
            let t = Instant::now();
            let got = runners[w].decompress(&streams[start..start + len], dst);
            let ns = t.elapsed().as_nanos() as u64;
            match got {
                Ok(m) if m == PAGE_SIZE && *dst == *set.page(k) => {}
                Ok(m) => {
                    return Err(fail(
                        k,
                        format!("decoded {m} bytes that differ from the page"),
                    ))
                }
                Err(e) => return Err(fail(k, e)),
            }
            // A later pass must decode the page again to match it.
            dst[0] = !dst[0];
            times[w].1.push(ns);
        }
    }
    Ok(times)
}

/// Measures every codec cycled: each page of a working set of the
/// held-out pages of all `workloads` (repeated to [`CycledOptions::bytes`])
/// compressed, then decompressed, once per pass in a shuffled order, as
/// zswap sees pages (the warm figures time a page several times in a row);
/// one codec at a time, so memory stays within three working sets (pages,
/// streams, decoded pages). `codecs[i]` are workload `i`'s (as
/// [`super::workload_codecs`] gives them: the same keys in the same order
/// for every workload). Each row of `results` with the
/// same workload and codec gets its [`CycledFigures`]; `progress` hears
/// each codec before it runs. No pages or no passes is an error, and so is
/// a page that does not round-trip.
pub fn bench_cycled(
    workloads: &[BenchWorkload],
    codecs: &[Vec<BenchCodec>],
    opts: &CycledOptions,
    results: &mut [BenchResult],
    progress: &mut dyn FnMut(&ModeKey),
) -> Result<CycledRun, BenchError> {
    if opts.passes == 0 {
        return Err(BenchError::Empty("no cycled pass".into()));
    }
    if codecs.len() != workloads.len() {
        return Err(BenchError::Empty(format!(
            "{} workloads but codecs for {}",
            workloads.len(),
            codecs.len()
        )));
    }
    let set = WorkingSet::new(workloads, opts.bytes)?;
    // Written, so decoding never meets a page fault of its own buffer.
    let mut back = vec![0xA5u8; set.pages.len()];
    let first = codecs.first().map_or(&[][..], |c| &c[..]);
    for (c, codec) in first.iter().enumerate() {
        let key = codec.key();
        progress(&key);
        let mut runners = Vec::with_capacity(codecs.len());
        for (w, cs) in codecs.iter().enumerate() {
            match cs.get(c) {
                Some(codec) if codec.key() == key => runners.push(engine(codec)?),
                _ => {
                    return Err(BenchError::Setup {
                        codec: key.to_string(),
                        message: format!("workload {} has other codecs", workloads[w].name),
                    })
                }
            }
        }
        let fail = |k: usize, message: String| {
            let (w, page) = set.owner[k];
            BenchError::RoundTrip {
                codec: key.to_string(),
                workload: workloads[w].name.clone(),
                page,
                message: format!("cycled: {message}"),
            }
        };
        let times = cycle(&set, &mut back, &mut runners, opts.passes, &fail)?;
        for (w, (mut ct, mut dt)) in workloads.iter().zip(times) {
            ct.sort_unstable();
            dt.sort_unstable();
            let figures = CycledFigures {
                cycled_working_set_bytes: set.pages.len(),
                cycled_pages: ct.len(),
                cycled_compress_ns_p50: percentile(&ct, 50.0),
                cycled_compress_ns_p99: percentile(&ct, 99.0),
                cycled_decompress_ns_p50: percentile(&dt, 50.0),
                cycled_decompress_ns_p99: percentile(&dt, 99.0),
            };
            for r in results.iter_mut() {
                if r.workload == w.name && r.codec == key {
                    r.cycled = Some(figures.clone());
                }
            }
        }
    }
    Ok(CycledRun {
        pages: workloads.iter().map(|w| w.test.len()).sum(),
        visits: set.owner.len(),
        passes: opts.passes,
        llc: last_level_cache(),
    })
}

/// One workload's cycled figures: a row per codec with its times (µs), its
/// p50s divided by libdeflate -1's, -6's and lz4's cycled p50s, and its
/// cycled decompress p50 divided by its warm one.
pub(super) fn cycled_table(rs: &[&BenchResult]) -> Grid {
    let mut g = Grid::new(&[
        ("codec", Align::Left),
        ("comp p50 µs", Align::Right),
        ("comp p99 µs", Align::Right),
        ("decomp p50 µs", Align::Right),
        ("decomp p99 µs", Align::Right),
        ("comp time /ld1", Align::Right),
        ("decomp time /ld1", Align::Right),
        ("comp time /ld6", Align::Right),
        ("decomp time /ld6", Align::Right),
        ("comp time /lz4", Align::Right),
        ("decomp time /lz4", Align::Right),
        ("decomp cycled /warm", Align::Right),
    ]);
    let find = |k| peer_row(rs, k).and_then(|r| r.cycled.as_ref());
    let peers = [
        find(PeerKind::Libdeflate(1)),
        find(PeerKind::Libdeflate(6)),
        find(PeerKind::Lz4),
    ];
    for r in rs {
        let Some(c) = &r.cycled else { continue };
        let mut row = vec![
            r.codec.to_string(),
            micros(c.cycled_compress_ns_p50),
            micros(c.cycled_compress_ns_p99),
            micros(c.cycled_decompress_ns_p50),
            micros(c.cycled_decompress_ns_p99),
        ];
        for p in peers {
            row.push(relative_ns(
                c.cycled_compress_ns_p50,
                p.map(|p| p.cycled_compress_ns_p50),
            ));
            row.push(relative_ns(
                c.cycled_decompress_ns_p50,
                p.map(|p| p.cycled_decompress_ns_p50),
            ));
        }
        row.push(relative_ns(
            c.cycled_decompress_ns_p50,
            Some(r.decompress_ns_p50),
        ));
        g.row(row);
    }
    g
}

/// The report's cycled section: why it leads, how it was measured, and a
/// table per workload.
pub(super) fn markdown_section(
    run: &CycledRun,
    workloads: &[BenchWorkload],
    results: &[BenchResult],
) -> String {
    let mib = |b: usize| format!("{:.0} MiB", b as f64 / (1 << 20) as f64);
    let llc = run.llc.map_or("not known".into(), mib);
    let mut s = String::from("## Cycled: per-page times as zswap sees pages\n\n");
    s += &format!(
        "These figures lead because they are the ones zswap gets: it compresses a page once \
         when it stores it and decompresses it once when it faults back, cold, among other \
         work, while the warm tables further down time each page several times in a row and \
         keep the fastest, after the branch predictor and the caches have learned it. Here \
         every codec compresses, then decompresses, each page of a working set of {} ({} \
         pages: the {} held-out pages of all workloads, repeated; the last-level cache is {}) \
         once per pass, in a new shuffled order each pass, {} passes, each workload's pages \
         with that workload's table and dictionary. Streams are decoded into a second buffer \
         of the same size and every round trip is verified. p50/p99 are over every timed \
         visit of a workload's pages, in µs. `/ld1`, `/ld6`, `/lz4`: this codec's cycled p50 \
         divided by libdeflate -1's, libdeflate -6's (the peer of the `*-default` rows) or \
         lz4's cycled p50 on the same pages in the same run; `decomp cycled /warm`: its \
         cycled decompress p50 divided by its warm one. The warm figures follow, with what \
         the codecs are.\n\n",
        mib(run.visits * PAGE_SIZE),
        run.visits,
        run.pages,
        llc,
        run.passes
    );
    for w in workloads {
        s += &format!("### {} (cycled)\n\n", w.name);
        let rs: Vec<&BenchResult> = results.iter().filter(|r| r.workload == w.name).collect();
        s += &cycled_table(&rs).render(Style::Markdown);
        s += "\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn each_pass_visits_every_page_once_in_its_own_order() {
        let a = order(1000, 0);
        let b = order(1000, 1);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        assert_ne!(a, b);
        assert_eq!(a, order(1000, 0));
    }

    /// A working set of 12 pages of one workload, repeated to 64 pages.
    fn set() -> (Vec<BenchWorkload>, WorkingSet) {
        let w = BenchWorkload {
            name: "w".into(),
            train: vec![],
            test: cannery_trainer::testutil::workload_pages(12, 0, 6),
            same_filled: Default::default(),
        };
        let set = WorkingSet::new(std::slice::from_ref(&w), 64 * PAGE_SIZE).unwrap();
        (vec![w], set)
    }

    /// Fixed-Huffman software deflate whose `tamper` sees every step.
    fn tampered(tamper: impl FnMut(Step<'_>) -> Result<(), EngineError> + 'static) -> Runner {
        use cannery_codec::{Format, Level, Mode};
        Runner::Engine {
            engine: Box::new(Tampered::new(
                Software::with_format(Level::Fast, Format::Iaa),
                "tampered",
                tamper,
            )),
            mode: Mode::Fixed,
            table: None,
        }
    }

    use cannery_engines::backend::software::Software;
    use cannery_engines::backend::tampered::{flip_middle_bit, Step, Tampered};
    use cannery_engines::backend::EngineError;

    #[test]
    fn the_working_set_repeats_the_pages_and_every_visit_is_timed() {
        let (w, set) = set();
        assert_eq!(set.owner.len(), 64);
        for k in 0..64 {
            assert_eq!(set.page(k), &w[0].test[k % 12][..]);
        }
        let mut back = vec![0u8; set.pages.len()];
        let fail = |k: usize, m: String| BenchError::Empty(format!("{k}: {m}"));
        let times = cycle(&set, &mut back, &mut [tampered(|_| Ok(()))], 3, &fail).unwrap();
        assert_eq!(times[0].0.len(), 3 * 64);
        assert_eq!(times[0].1.len(), 3 * 64, "every page compresses");
        assert!(times[0].0.iter().chain(&times[0].1).all(|&ns| ns > 0));
    }

    #[test]
    fn a_tampered_codec_fails_the_cycled_run() {
        let (_, set) = set();
        let mut back = vec![0u8; set.pages.len()];
        let fail = |k: usize, m: String| BenchError::RoundTrip {
            codec: "tampered".into(),
            workload: "w".into(),
            page: k,
            message: m,
        };
        // A bit flipped in each page given back, then in each stream.
        let decoded = tampered(|s| {
            if let Step::Decompressed(b) = s {
                flip_middle_bit(b, 2);
            }
            Ok(())
        });
        let stream = tampered(|s| {
            if let Step::Compressed(b) = s {
                flip_middle_bit(b, 2);
            }
            Ok(())
        });
        for runner in [decoded, stream] {
            let e = cycle(&set, &mut back, &mut [runner], 1, &fail).unwrap_err();
            assert!(matches!(e, BenchError::RoundTrip { .. }), "{e}");
        }
    }
}
