//! One measurement of the real zswap, and the simulator's prediction for
//! the same pages.
//!
//! [`measure`]: with zswap enabled and a compressor chosen (the caller's
//! job), copy the pages into memory of our own ([`PageRegion`]), read
//! zswap's debugfs counters, push the pages out with `MADV_PAGEOUT` in
//! batches (timing each call), read the counters again, fault every
//! swapped page back in (timing each fault), compare every page with the
//! original byte for byte, and read the counters a last time. The
//! differences of the counters are what zswap did with these pages, so
//! nothing else may store or load meanwhile: [`measure`] first checks the
//! gauges stay still while idle and refuses otherwise.
//!
//! [`predict`]: the same pages through the simulator's model of that
//! compressor (`cannery_engines::peer::kernel`) and pool ([`Pool`]),
//! following the kernel's rules for zero-filled pages (kept in swap's zero
//! map since 6.12, never reaching zswap; before that, zswap kept
//! same-filled pages as a value) and incompressible ones (stored as they
//! are, 4096 bytes, since 6.18; rejected before).

use std::time::{Duration, Instant};

use cannery_capture::region::{PageRegion, Residence};
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::encode::Outcome;
use cannery_engines::batch::Bound;
use cannery_engines::peer::{Peer, PeerKind};
use cannery_engines::Engine;
use cannery_lab::figures::percentile;
use serde::{Deserialize, Serialize};

use super::KernelError;
use crate::zsmalloc::Pool;
use cannery_machine::{Counters, System};

/// How long the gauges must stay still before a measurement.
pub const IDLE_CHECK: Duration = Duration::from_millis(300);

/// How the measured kernel treats zero and same-filled pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SameFilledRule {
    /// Linux ≥ 6.12: zero-filled pages are marked in swap's zero map and
    /// never reach zswap; other same-filled pages are compressed.
    ZeroMap,
    /// Linux < 6.12: zswap keeps each same-filled page as one value (its
    /// debugfs has `same_filled_pages`), using no pool space.
    Zswap,
}

impl SameFilledRule {
    /// What the rule means, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            SameFilledRule::ZeroMap => {
                "zero pages kept in swap's zero map, not zswap (Linux 6.12 and later)"
            }
            SameFilledRule::Zswap => {
                "same-filled pages kept by zswap as a value (before Linux 6.12)"
            }
        }
    }

    /// The rule of the kernel whose counters these are.
    pub fn of(counters: &Counters) -> SameFilledRule {
        if counters.has("same_filled_pages") {
            SameFilledRule::Zswap
        } else {
            SameFilledRule::ZeroMap
        }
    }
}

/// What the kernel did with one set of pages under one compressor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Pages put in memory and paged out.
    pub pages: usize,
    /// Entries zswap held before (other processes' pages): ours may share
    /// their partly used zspages, so the pool can grow by less than a
    /// fresh pool would.
    pub stored_before: u64,
    /// `pool_total_size` before, bytes.
    pub pool_bytes_before: u64,
    /// Pages the page map showed swapped out after the page-out calls.
    pub swapped_out: usize,
    /// Pages still in memory after them (the kernel did not reclaim them).
    pub not_reclaimed: usize,
    /// Zero-filled pages among `pages` (with [`SameFilledRule::ZeroMap`]
    /// they are in swap's zero map, not in zswap).
    pub zero_pages: usize,
    /// Change of `stored_pages`: pages zswap took.
    pub stored: i64,
    /// Change of `same_filled_pages` (kernels before 6.12; else 0).
    pub same_filled: i64,
    /// Change of `stored_incompressible_pages`: stored as they are.
    pub incompressible: i64,
    /// Change of `reject_compress_poor`.
    pub rejected_poor: i64,
    /// Change of `reject_alloc_fail`.
    pub rejected_alloc: i64,
    /// Change of the other `reject_*` counters.
    pub rejected_other: i64,
    /// Change of `written_back_pages` (zswap's shrinker moving pages to disk).
    pub written_back: i64,
    /// Change of `pool_total_size`: the pool's growth in bytes.
    pub pool_bytes: i64,
    /// Pages in zswap (stored) times 4096 over `pool_bytes`.
    pub ratio: Option<f64>,
    /// Page-out time per page (call time / pages in the call), p50, ns.
    pub pageout_p50_ns: u64,
    /// Page-out time per page, p99, ns.
    pub pageout_p99_ns: u64,
    /// Fault time of one swapped-out page read back in, p50, ns.
    pub swapin_p50_ns: u64,
    /// Fault time, p99, ns.
    pub swapin_p99_ns: u64,
    /// Pages that came back different from what was put in (must be 0).
    pub mismatches: usize,
    /// Change of `stored_pages` once every page is back (0 when zswap let
    /// go of every entry on swap-in).
    pub stored_after_swapin: i64,
    /// Change of `decompress_fail` over the whole measurement.
    pub decompress_failed: i64,
}

fn pct(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    percentile(v, p)
}

/// How long [`wait_idle`] waits for a quiet moment.
pub const IDLE_WAIT: Duration = Duration::from_secs(20);

/// Waits (up to [`IDLE_WAIT`]) until zswap's gauges stay still for
/// [`IDLE_CHECK`] while we do nothing, and returns the counters then.
/// Refuses when they never do: someone else is storing or loading, and
/// the counters could not be attributed.
pub fn wait_idle(system: &System) -> Result<Counters, KernelError> {
    let start = Instant::now();
    let mut a = system
        .counters()
        .map_err(KernelError::io("reading zswap's counters"))?;
    loop {
        std::thread::sleep(IDLE_CHECK);
        let b = system
            .counters()
            .map_err(KernelError::io("reading zswap's counters"))?;
        if a.gauges() == b.gauges() {
            return Ok(b);
        }
        if start.elapsed() >= IDLE_WAIT {
            return Err(KernelError::Busy(format!(
                "zswap's gauges kept moving for {} s while cannery did nothing (stored_pages {} → {}, \
                 pool_total_size {} → {}): another process is swapping, so the counters could not be \
                 attributed{}; try again when the machine is quiet",
                IDLE_WAIT.as_secs(),
                a.get("stored_pages"),
                b.get("stored_pages"),
                a.get("pool_total_size"),
                b.get("pool_total_size"),
                cannery_machine::zswap::damon_pageout_hint(system),
            )));
        }
        a = b;
    }
}

/// Measures the pages (`pages.len()` a multiple of 4096) through the zswap
/// configured now, `batch` pages per `MADV_PAGEOUT` call. `stop` is polled
/// between calls; when it says so the measurement ends with
/// [`KernelError::Interrupted`] (the memory is freed on the way out).
pub fn measure(
    system: &System,
    pages: &[u8],
    batch: usize,
    stop: &dyn Fn() -> bool,
) -> Result<Measurement, KernelError> {
    let n = pages.len() / PAGE_SIZE;
    let batch = batch.max(1);
    wait_idle(system)?;
    let region = PageRegion::new(pages).map_err(KernelError::io("mapping the pages"))?;
    let c0 = system
        .counters()
        .map_err(KernelError::io("reading zswap's counters"))?;

    let mut pageout = Vec::with_capacity(n);
    let mut first = 0;
    while first < n {
        if stop() {
            return Err(KernelError::Interrupted);
        }
        let count = batch.min(n - first);
        let t = Instant::now();
        region
            .page_out(first, count)
            .map_err(KernelError::io("MADV_PAGEOUT"))?;
        let per_page = t.elapsed().as_nanos() as u64 / count as u64;
        pageout.extend(std::iter::repeat_n(per_page, count));
        first += count;
    }
    let residence = region
        .residence()
        .map_err(KernelError::io("reading our page map"))?;
    let c1 = system
        .counters()
        .map_err(KernelError::io("reading zswap's counters"))?;

    let mut swapin = Vec::with_capacity(n);
    for (i, r) in residence.iter().enumerate() {
        if *r == Residence::Swapped {
            if i % 1024 == 0 && stop() {
                return Err(KernelError::Interrupted);
            }
            let t = Instant::now();
            std::hint::black_box(region.touch(i));
            swapin.push(t.elapsed().as_nanos() as u64);
        }
    }
    let mismatches = region
        .bytes()
        .chunks_exact(PAGE_SIZE)
        .zip(pages.chunks_exact(PAGE_SIZE))
        .filter(|(a, b)| a != b)
        .count();
    let c2 = system
        .counters()
        .map_err(KernelError::io("reading zswap's counters"))?;
    drop(region);

    let d = |name: &str| c0.delta(&c1, name);
    let stored = d("stored_pages");
    let pool_bytes = d("pool_total_size");
    let swapped_out = residence
        .iter()
        .filter(|r| **r == Residence::Swapped)
        .count();
    let zero_pages = pages.chunks_exact(PAGE_SIZE).filter(|p| is_zero(p)).count();
    // Every page zswap took must be one of ours, and zswap must have let go
    // of all of them once they are back; anything else is someone else's
    // swapping mixed into the counters.
    let ours = match SameFilledRule::of(&c0) {
        SameFilledRule::ZeroMap => swapped_out as i64 - zero_pages as i64,
        SameFilledRule::Zswap => swapped_out as i64,
    };
    let ours_rejected = d("reject_compress_poor")
        + d("reject_alloc_fail")
        + d("reject_compress_fail")
        + d("reject_kmemcache_fail")
        + d("reject_reclaim_fail");
    let ours_stored = stored + d("same_filled_pages");
    if ours_stored + ours_rejected != ours || c0.delta(&c2, "stored_pages") != 0 {
        return Err(KernelError::Busy(format!(
            "zswap's counters moved by more than our pages ({} swapped out, {zero_pages} zero; \
             stored_pages +{stored} during page-out, {:+} after swap-in): another process swapped \
             meanwhile{}",
            swapped_out,
            c0.delta(&c2, "stored_pages"),
            cannery_machine::zswap::damon_pageout_hint(system),
        )));
    }
    Ok(Measurement {
        pages: n,
        stored_before: c0.get("stored_pages"),
        pool_bytes_before: c0.get("pool_total_size"),
        swapped_out,
        not_reclaimed: residence
            .iter()
            .filter(|r| **r == Residence::Present)
            .count(),
        zero_pages,
        stored,
        same_filled: d("same_filled_pages"),
        incompressible: d("stored_incompressible_pages"),
        rejected_poor: d("reject_compress_poor"),
        rejected_alloc: d("reject_alloc_fail"),
        rejected_other: d("reject_compress_fail")
            + d("reject_kmemcache_fail")
            + d("reject_reclaim_fail"),
        written_back: d("written_back_pages"),
        pool_bytes,
        ratio: (pool_bytes > 0)
            .then(|| (stored.max(0) as f64) * PAGE_SIZE as f64 / pool_bytes as f64),
        pageout_p50_ns: pct(&mut pageout, 50.0),
        pageout_p99_ns: pct(&mut pageout, 99.0),
        swapin_p50_ns: pct(&mut swapin, 50.0),
        swapin_p99_ns: pct(&mut swapin, 99.0),
        mismatches,
        stored_after_swapin: c0.delta(&c2, "stored_pages"),
        decompress_failed: c0.delta(&c2, "decompress_fail"),
    })
}

fn is_zero(page: &[u8]) -> bool {
    page.iter().all(|&b| b == 0)
}

/// The simulator's prediction for the same pages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The compressor model (a peer name, e.g. `kernel-deflate`).
    pub model: String,
    /// Pages zswap would hold as entries.
    pub stored: usize,
    /// Pages stored as they are (output of 4096 bytes or more).
    pub incompressible: usize,
    /// Same-filled pages kept as a value (kernels before 6.12).
    pub same_filled: usize,
    /// Zero-filled pages left to swap's zero map (6.12 and later).
    pub zero_pages: usize,
    /// Pool memory: whole zspages of each size class, as a fresh pool
    /// allocates them.
    pub pool_bytes: usize,
    /// Pages stored over `pool_bytes`, as [`Measurement::ratio`].
    pub ratio: Option<f64>,
}

/// The peer that models the kernel compressor `name` (`deflate`, `lzo`),
/// if the simulator has one.
pub fn model_of(name: &str) -> Option<PeerKind> {
    match name {
        "deflate" => Some(PeerKind::KernelDeflate),
        "lzo" => Some(PeerKind::KernelLzo),
        _ => None,
    }
}

/// Predicts what zswap stores for `pages` with the kernel compressor
/// modelled by `model`.
pub fn predict(pages: &[u8], model: &PeerKind, rule: SameFilledRule) -> Result<Prediction, String> {
    let peer = Peer::new(model.clone(), None).map_err(|e| e.to_string())?;
    predict_with(pages, &model.to_string(), rule, &mut peer.bound())
}

/// Predicts what zswap would store for `pages` if its compressor were
/// `compressor` (named `model` in the prediction): e.g. cannery's canned
/// encoder, for what IAA's canned mode would do with the workload.
pub fn predict_with<E: Engine>(
    pages: &[u8],
    model: &str,
    rule: SameFilledRule,
    compressor: &mut Bound<E>,
) -> Result<Prediction, String> {
    let mut pool = Pool::new();
    let mut out = Vec::new();
    let (mut stored, mut incompressible, mut same_filled, mut zero) = (0, 0, 0, 0);
    for page in pages.chunks_exact(PAGE_SIZE) {
        match rule {
            SameFilledRule::ZeroMap if is_zero(page) => {
                zero += 1;
                continue;
            }
            SameFilledRule::Zswap if cannery_capture::same_filled(page).is_some() => {
                same_filled += 1;
                continue;
            }
            _ => {}
        }
        stored += 1;
        match compressor
            .compress_page(page, &mut out)
            .map_err(|e| e.to_string())?
        {
            Outcome::Compressed(len) if len < PAGE_SIZE => pool.add(len),
            _ => {
                incompressible += 1;
                pool.add(PAGE_SIZE);
            }
        }
    }
    let pool_bytes = pool.zspage_bytes();
    Ok(Prediction {
        model: model.to_string(),
        stored,
        incompressible,
        same_filled,
        zero_pages: zero,
        pool_bytes,
        ratio: (pool_bytes > 0).then(|| stored as f64 * PAGE_SIZE as f64 / pool_bytes as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages() -> Vec<u8> {
        let mut v = vec![0u8; PAGE_SIZE]; // zero page
        v.extend(std::iter::repeat_n(7u8, PAGE_SIZE)); // same-filled
        v.extend((0..PAGE_SIZE).map(|i| (i % 61) as u8)); // compressible
        let mut x = 88172645463325252u64;
        v.extend((0..PAGE_SIZE).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })); // incompressible
        v
    }

    #[test]
    fn prediction_follows_each_kernels_same_filled_rule() {
        let now = predict(&pages(), &PeerKind::KernelDeflate, SameFilledRule::ZeroMap).unwrap();
        assert_eq!(
            (
                now.zero_pages,
                now.same_filled,
                now.stored,
                now.incompressible
            ),
            (1, 0, 3, 1)
        );
        let old = predict(&pages(), &PeerKind::KernelDeflate, SameFilledRule::Zswap).unwrap();
        assert_eq!(
            (
                old.zero_pages,
                old.same_filled,
                old.stored,
                old.incompressible
            ),
            (0, 2, 2, 1)
        );
        // The raw page alone takes a whole 4 KiB zspage; the others share
        // the small classes' zspages.
        assert!(now.pool_bytes > old.pool_bytes);
        assert!(old.pool_bytes >= PAGE_SIZE);
    }

    #[test]
    fn a_canned_prediction_uses_cannerys_encoder() {
        use cannery_codec::{Format, Level, Mode, Table};
        use cannery_engines::backend::software::Software;
        let table = Table::builtin("kernel-2024").unwrap();
        let mut enc =
            Software::bound(Mode::Canned, Format::Iaa, Level::Fast, Some(&table)).unwrap();
        let p = predict_with(&pages(), "canned", SameFilledRule::ZeroMap, &mut enc).unwrap();
        assert_eq!(
            (p.model.as_str(), p.stored, p.incompressible),
            ("canned", 3, 1)
        );
    }

    #[test]
    fn the_rule_comes_from_the_counters() {
        let mut c = Counters::default();
        assert_eq!(SameFilledRule::of(&c), SameFilledRule::ZeroMap);
        c.0.insert("same_filled_pages".into(), 0);
        assert_eq!(SameFilledRule::of(&c), SameFilledRule::Zswap);
    }

    #[test]
    fn models_exist_for_deflate_and_lzo_only() {
        assert_eq!(model_of("deflate"), Some(PeerKind::KernelDeflate));
        assert_eq!(model_of("lzo"), Some(PeerKind::KernelLzo));
        assert_eq!(model_of("lzo-rle"), None);
    }
}
