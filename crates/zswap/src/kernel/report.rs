//! The report of a `zswap-kernel` session: one [`KernelRow`] per compressor
//! and workload (what the kernel did, and the simulator's prediction with
//! its relative error), the settings that were changed and restored, and
//! the text table `cannery zswap-kernel` prints. Pure data and strings.

use std::fmt;

use serde::Serialize;

use super::measure::{Measurement, Prediction, SameFilledRule};

/// One compressor on one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelRow {
    /// The kernel compressor.
    pub compressor: String,
    /// The workload.
    pub workload: String,
    /// What the kernel did.
    pub measured: Measurement,
    /// The simulator's prediction (with `--compare-sim`, for compressors
    /// it models).
    pub predicted: Option<Prediction>,
    /// (predicted − measured pool bytes) / measured pool bytes.
    pub pool_error: Option<f64>,
    /// Predicted − measured stored pages.
    pub stored_error: Option<i64>,
    /// zswap held other processes' entries when the measurement began, so
    /// our objects could share their zspages and the pool could grow by
    /// less than the simulator's fresh pool: the row's error is not a
    /// clean test of the model.
    pub shared_pool: bool,
}

impl KernelRow {
    /// A row, with the errors worked out; `shared_pool` as the session
    /// found it (see [`KernelRow::shared_pool`]).
    pub fn new(
        compressor: &str,
        workload: &str,
        measured: Measurement,
        predicted: Option<Prediction>,
        shared_pool: bool,
    ) -> KernelRow {
        let pool_error = predicted.as_ref().and_then(|p| {
            (measured.pool_bytes > 0).then(|| {
                (p.pool_bytes as f64 - measured.pool_bytes as f64) / measured.pool_bytes as f64
            })
        });
        let stored_error = predicted
            .as_ref()
            .map(|p| p.stored as i64 - measured.stored);
        KernelRow {
            shared_pool,
            compressor: compressor.to_string(),
            workload: workload.to_string(),
            measured,
            predicted,
            pool_error,
            stored_error,
        }
    }
}

/// A whole session.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelReport {
    /// `uname -r` of the measured kernel.
    pub kernel_release: String,
    /// The corpus, as given.
    pub corpus: String,
    /// Pages per `MADV_PAGEOUT` call.
    pub batch: usize,
    /// `vm.page-cluster` during the measurement (0: one page per swap-in).
    pub page_cluster: String,
    /// How the kernel treats zero and same-filled pages.
    pub same_filled_rule: SameFilledRule,
    /// Settings the session changed, each put back.
    pub settings_restored: Vec<String>,
    /// Settings that could not be put back (must be empty).
    pub restore_failures: Vec<String>,
    /// One row per compressor and workload.
    pub rows: Vec<KernelRow>,
    /// Simulated only: each workload with its canned table in cannery's
    /// encoder (what IAA's canned mode would store), same pool model.
    pub canned: Vec<(String, Prediction)>,
}

impl KernelReport {
    /// Pages that came back different, over all rows.
    pub fn mismatches(&self) -> usize {
        self.rows.iter().map(|r| r.measured.mismatches).sum()
    }

    /// The largest |pool error| of the rows with a prediction, measured on
    /// a pool of our own (rows with [`KernelRow::shared_pool`] left out).
    pub fn worst_pool_error(&self) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| !r.shared_pool)
            .filter_map(|r| r.pool_error.map(f64::abs))
            .fold(None, |m, e| Some(m.map_or(e, |m: f64| m.max(e))))
    }
}

impl KernelReport {
    /// The report as markdown (for BENCHMARKS.md): the settings, one table
    /// row per compressor and workload, then the simulated canned rows.
    pub fn render_markdown(&self) -> String {
        let mut s = format!(
            "Linux {}, {} pages per `MADV_PAGEOUT`, `vm.page-cluster` {} (one page per swap-in at 0), \
             {}. Pool = growth of zswap's `pool_total_size`; ratio = pages stored × 4096 / pool. \
             Times are per page: a page-out call's time over its pages, and one fault each on swap-in. \
             `sim` is `cannery zswap-sim`'s model for the same pages (fresh zsmalloc pool); `*` marks rows that \
             began with other processes' pages in zswap.\n\n",
            self.kernel_release, self.batch, self.page_cluster, self.same_filled_rule.describe()
        );
        s.push_str("| compressor | workload | pages | stored | stored raw | rejected | pool KiB | ratio | sim pool KiB | sim error | page-out µs p50 | p99 | swap-in µs p50 | p99 | differing pages |\n");
        s.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in &self.rows {
            let m = &r.measured;
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.compressor,
                r.workload,
                m.pages,
                m.stored,
                m.incompressible,
                m.rejected_poor + m.rejected_alloc + m.rejected_other,
                kib(m.pool_bytes),
                m.ratio.map_or("-".into(), |v| format!("{v:.2}")),
                r.predicted
                    .as_ref()
                    .map_or("-".into(), |p| kib(p.pool_bytes as i64)),
                r.pool_error.map_or("-".into(), |e| {
                    format!("{:+.2}%{}", e * 100.0, if r.shared_pool { "*" } else { "" })
                }),
                us(m.pageout_p50_ns),
                us(m.pageout_p99_ns),
                us(m.swapin_p50_ns),
                us(m.swapin_p99_ns),
                m.mismatches,
            ));
        }
        if !self.canned.is_empty() {
            s.push_str("\nIAA canned mode with each workload's own table (cannery's encoder, `fast` parse, IAA format), simulated with the same pool model:\n\n");
            s.push_str(
                "| workload | mode | pool KiB | ratio | stored raw |\n|---|---|---:|---:|---:|\n",
            );
            for (w, p) in &self.canned {
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    w,
                    p.model,
                    kib(p.pool_bytes as i64),
                    p.ratio.map_or("-".into(), |v| format!("{v:.2}")),
                    p.incompressible
                ));
            }
        }
        s
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn kib(bytes: i64) -> String {
    format!("{:.0}", bytes as f64 / 1024.0)
}

impl fmt::Display for KernelReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "real zswap, Linux {}, corpus {}, {} pages per MADV_PAGEOUT, vm.page-cluster {}; {}",
            self.kernel_release,
            self.corpus,
            self.batch,
            self.page_cluster,
            self.same_filled_rule.describe()
        )?;
        writeln!(
            f,
            "{:<10} {:<20} {:>7} {:>7} {:>6} {:>6} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7} {:>5}",
            "compressor", "workload", "pages", "stored", "raw", "rej.", "pool KiB", "ratio",
            "out p50", "out p99", "in p50", "in p99", "sim KiB", "sim err", "bad"
        )?;
        writeln!(
            f,
            "{:<10} {:<20} {:>7} {:>7} {:>6} {:>6} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7} {:>5}",
            "", "", "", "", "", "", "", "", "µs/page", "µs/page", "µs/page", "µs/page", "", "", ""
        )?;
        for r in &self.rows {
            let m = &r.measured;
            let rejected = m.rejected_poor + m.rejected_alloc + m.rejected_other;
            writeln!(
                f,
                "{:<10} {:<20} {:>7} {:>7} {:>6} {:>6} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7} {:>5}",
                r.compressor,
                r.workload,
                m.pages,
                m.stored,
                m.incompressible,
                rejected,
                kib(m.pool_bytes),
                m.ratio.map_or("-".into(), |v| format!("{v:.2}")),
                us(m.pageout_p50_ns),
                us(m.pageout_p99_ns),
                us(m.swapin_p50_ns),
                us(m.swapin_p99_ns),
                r.predicted.as_ref().map_or("-".into(), |p| kib(p.pool_bytes as i64)),
                r.pool_error.map_or("-".into(), |e| {
                    format!("{:+.2}%{}", e * 100.0, if r.shared_pool { "*" } else { "" })
                }),
                m.mismatches,
            )?;
        }
        if !self.canned.is_empty() {
            writeln!(
                f,
                "simulated canned mode (IAA format, fast parse), same pool model:"
            )?;
            writeln!(
                f,
                "{:<20} {:<32} {:>9} {:>6} {:>6}",
                "workload", "table", "pool KiB", "ratio", "raw"
            )?;
            for (w, p) in &self.canned {
                writeln!(
                    f,
                    "{:<20} {:<32} {:>9} {:>6} {:>6}",
                    w,
                    p.model,
                    kib(p.pool_bytes as i64),
                    p.ratio.map_or("-".into(), |v| format!("{v:.2}")),
                    p.incompressible
                )?;
            }
        }
        if let Some(e) = self.worst_pool_error() {
            writeln!(
                f,
                "simulator pool error: worst |{:.2}%| over rows measured on a pool of their own",
                e * 100.0
            )?;
        }
        let shared = self
            .rows
            .iter()
            .filter(|r| r.shared_pool && r.pool_error.is_some())
            .count();
        if shared > 0 {
            writeln!(
                f,
                "* {shared} rows began with other processes' pages in zswap (their zspages can take ours): left out of the worst error"
            )?;
        }
        for s in &self.settings_restored {
            writeln!(f, "restored: {s}")?;
        }
        for s in &self.restore_failures {
            writeln!(f, "NOT RESTORED: {s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pool: i64, stored: i64) -> Measurement {
        Measurement {
            pages: 10,
            stored_before: 0,
            pool_bytes_before: 0,
            swapped_out: 10,
            not_reclaimed: 0,
            zero_pages: 0,
            stored,
            same_filled: 0,
            incompressible: 0,
            rejected_poor: 0,
            rejected_alloc: 0,
            rejected_other: 0,
            written_back: 0,
            pool_bytes: pool,
            ratio: None,
            pageout_p50_ns: 1500,
            pageout_p99_ns: 20000,
            swapin_p50_ns: 900,
            swapin_p99_ns: 7090,
            mismatches: 0,
            stored_after_swapin: 0,
            decompress_failed: 0,
        }
    }

    fn p(pool: usize, stored: usize) -> Prediction {
        Prediction {
            model: "kernel-deflate".into(),
            stored,
            incompressible: 0,
            same_filled: 0,
            zero_pages: 0,
            pool_bytes: pool,
            ratio: None,
        }
    }

    #[test]
    fn errors_are_relative_to_the_kernel() {
        let r = KernelRow::new("deflate", "w", m(40960, 10), Some(p(41984, 10)), false);
        assert!((r.pool_error.unwrap() - 0.025).abs() < 1e-12);
        assert_eq!(r.stored_error, Some(0));
        let none = KernelRow::new("lzo-rle", "w", m(40960, 10), None, false);
        let shared = KernelRow::new("deflate", "v", m(40960, 10), Some(p(81920, 10)), true);
        assert!(shared.shared_pool);
        assert_eq!((none.pool_error, none.stored_error), (None, None));
        let report = KernelReport {
            kernel_release: "6.18".into(),
            corpus: "c".into(),
            batch: 32,
            page_cluster: "0".into(),
            same_filled_rule: SameFilledRule::ZeroMap,
            settings_restored: vec!["/x back to N".into()],
            restore_failures: vec![],
            rows: vec![r, none, shared],
            canned: vec![("w".into(), p(20480, 10))],
        };
        // The shared row's +100 % is not a test of the model.
        assert!((report.worst_pool_error().unwrap() - 0.025).abs() < 1e-12);
        let text = report.to_string();
        assert!(text.contains("+2.50%"), "{text}");
        assert!(text.contains("7.1"), "one unit (µs) per column: {text}");
        assert!(text.contains("restored: /x back to N"));
        assert!(text.contains("simulated canned mode"), "{text}");
        assert!(
            text.contains("+100.00%*") && text.contains("1 rows began"),
            "{text}"
        );
        let md = report.render_markdown();
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| deflate")).count(),
            2,
            "{md}"
        );
        assert!(md.contains("| w | kernel-deflate | 20 |"), "{md}");
    }
}
