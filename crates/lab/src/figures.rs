//! The figures every cannery report gives, defined once: `train`, `eval`,
//! `bench`, `zswap-sim` and the Python package all compute them here, so the
//! same pages and table give the same figures everywhere: the two
//! compression ratios and latency percentiles.
//!
//! - **ratio** = measured pages × 4096 / Σ stored bytes, a page whose output
//!   would be 4096 bytes or more counting 4096 (zswap stores it raw).
//! - **effective ratio** = (measured pages + the zero and same-filled pages
//!   attributed to them) × 4096 / the same Σ stored bytes: zswap keeps only
//!   the fill value of a same-filled page, so those pages cost ~0 bytes.
//!   This is what the pool actually saves on the workload.
//!
//! Same-filled pages are not compressed, so a measured sample holds none;
//! they are *attributed* to it in the workload's proportion
//! ([`SameFilledShare`]): a workload with `s` same-filled pages among `s + n`
//! pages gives a sample of `m` of its other pages `s × m / n` of them. The
//! workload's `s` counts both the same-filled pages seen among the pages read
//! and those a capture counted without storing, scaled by the share of
//! candidate pages it stored (`cannery_capture`'s `PageCounts`), so sampling
//! at capture, at evaluation or in `bench --max-pages` leaves the figure
//! unchanged.
//!
//! - **p50/p99** ([`percentile`]): nearest rank over the sorted per-page
//!   times.
//!
//! This module only does arithmetic; it does not read pages or time
//! anything, and it does not model the allocator overhead of a real zswap
//! pool (that is `cannery_zswap`'s pool ratio).

use cannery_codec::constants::PAGE_SIZE;

/// Σ page bytes / Σ stored bytes for `pages` measured pages whose outputs
/// total `bytes_out` bytes (incompressible pages at 4096); 0 when nothing
/// was stored.
pub fn ratio(pages: u64, bytes_out: u64) -> f64 {
    effective_ratio(pages, 0.0, bytes_out)
}

/// [`ratio`] with `same_filled` zero/same-filled pages attributed to the
/// measured pages (see the module doc); 0 when nothing was stored.
pub fn effective_ratio(pages: u64, same_filled: f64, bytes_out: u64) -> f64 {
    if bytes_out == 0 {
        return 0.0;
    }
    (pages as f64 + same_filled) * PAGE_SIZE as f64 / bytes_out as f64
}

/// A workload's zero and same-filled pages per page of its other pages: how
/// many same-filled pages a sample of its other pages stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SameFilledShare {
    /// Same-filled pages of the workload (seen, plus counted by the capture).
    pub same_filled: f64,
    /// The workload's other pages read (the population samples come from).
    pub other_pages: u64,
}

impl SameFilledShare {
    /// `same_filled` same-filled pages beside `other_pages` other pages.
    pub fn new(same_filled: f64, other_pages: u64) -> SameFilledShare {
        SameFilledShare {
            same_filled,
            other_pages,
        }
    }

    /// Same-filled pages attributed to a sample of `sample_pages` of the
    /// other pages: `same_filled × sample_pages / other_pages` (all of them
    /// when the sample is the whole workload; none when there are no other
    /// pages to attribute them to).
    pub fn attributed(&self, sample_pages: u64) -> f64 {
        match self.other_pages {
            0 => 0.0,
            n if n == sample_pages => self.same_filled,
            n => self.same_filled * sample_pages as f64 / n as f64,
        }
    }

    /// The sum of two workloads' shares (a fleet).
    pub fn plus(self, o: SameFilledShare) -> SameFilledShare {
        SameFilledShare {
            same_filled: self.same_filled + o.same_filled,
            other_pages: self.other_pages + o.other_pages,
        }
    }
}

/// The nearest-rank `p`-th percentile (0 < p ≤ 100) of `sorted` (ascending):
/// the smallest value with at least p % of the values at or below it; 0 for
/// no values.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_count_pages_at_4096_bytes() {
        assert_eq!(ratio(4, 4096), 4.0);
        assert_eq!(ratio(4, 0), 0.0);
        // Two same-filled pages beside 4 measured ones, stored in 4096 bytes.
        assert_eq!(effective_ratio(4, 2.0, 4096), 6.0);
    }

    #[test]
    fn a_sample_gets_its_share_of_same_filled_pages() {
        let s = SameFilledShare::new(30.0, 100);
        assert_eq!(s.attributed(100), 30.0);
        assert_eq!(s.attributed(10), 3.0);
        assert_eq!(SameFilledShare::new(5.0, 0).attributed(0), 0.0);
        // A sample's effective ratio equals the whole workload's when its
        // pages compress alike.
        let whole = effective_ratio(100, s.attributed(100), 100 * 1024);
        let part = effective_ratio(10, s.attributed(10), 10 * 1024);
        assert!((whole - part).abs() < 1e-12);
        assert_eq!(s.plus(SameFilledShare::new(2.0, 10)).attributed(110), 32.0);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[1, 2, 3, 4], 50.0), 2);
        assert_eq!(percentile(&[], 50.0), 0);
    }
}
