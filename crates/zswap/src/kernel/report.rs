//! The report of a `zswap-kernel` session: one [`KernelRow`] per compressor
//! and workload (what the kernel did, and the simulator's prediction with
//! its relative error), the settings that were changed and restored, and
//! its tables, the same columns as text (`cannery zswap-kernel`) and as
//! markdown (`--markdown`): times in µs, pools in KiB. Pure data and strings.

use std::fmt;

use cannery_lab::tabular::{Align, Grid, Style};
use cannery_lab::units::kib;
use serde::Serialize;

use super::measure::{Measurement, Prediction, SameFilledRule};
use crate::session_table::{session_grid, session_row, write_restored};

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
    /// The report as markdown (for BENCHMARKS.md): the settings, the table
    /// of rows, then the simulated canned rows.
    pub fn render_markdown(&self) -> String {
        let mut s = format!(
            "Linux {}, {} pages per `MADV_PAGEOUT`, `vm.page-cluster` {} (one page per swap-in at 0), \
             {}. Pool = growth of zswap's `pool_total_size`; ratio = pages stored × 4096 / pool. \
             Times are per page: a page-out call's time over its pages, and one fault each on swap-in. \
             `sim` is `cannery zswap-sim`'s model for the same pages (fresh zsmalloc pool); `*` marks rows that \
             began with other processes' pages in zswap.\n\n",
            self.kernel_release, self.batch, self.page_cluster, self.same_filled_rule.describe()
        );
        s += &self.rows_table().render(Style::Markdown);
        if !self.canned.is_empty() {
            s += "\nIAA canned mode with each workload's own table (cannery's encoder, `fast` parse, IAA format), simulated with the same pool model:\n\n";
            s += &self.canned_table().render(Style::Markdown);
        }
        s
    }

    /// One row per compressor and workload, the same columns in text and
    /// markdown: page counts, the pool (KiB) and ratio, the simulator's pool
    /// and its error (`*`: the row began on a shared pool), per-page times
    /// (µs) and the pages that came back different.
    fn rows_table(&self) -> Grid {
        let mut g = session_grid(
            &[
                ("compressor", Align::Left),
                ("workload", Align::Left),
                ("pages", Align::Right),
                ("stored", Align::Right),
                ("stored raw", Align::Right),
                ("rejected", Align::Right),
                ("pool KiB", Align::Right),
                ("ratio", Align::Right),
                ("sim pool KiB", Align::Right),
                ("sim error %", Align::Right),
            ],
            "page-out",
            "swap-in",
        );
        for r in &self.rows {
            let m = &r.measured;
            let leading = vec![
                r.compressor.clone(),
                r.workload.clone(),
                m.pages.to_string(),
                m.stored.to_string(),
                m.incompressible.to_string(),
                (m.rejected_poor + m.rejected_alloc + m.rejected_other).to_string(),
                kib(m.pool_bytes),
                ratio(m.ratio),
                r.predicted
                    .as_ref()
                    .map_or("-".into(), |p| kib(p.pool_bytes as i64)),
                r.pool_error.map_or("-".into(), |e| {
                    format!("{:+.2}{}", e * 100.0, if r.shared_pool { "*" } else { "" })
                }),
            ];
            let times = [
                m.pageout_p50_ns,
                m.pageout_p99_ns,
                m.swapin_p50_ns,
                m.swapin_p99_ns,
            ];
            session_row(&mut g, leading, times, m.mismatches);
        }
        g
    }

    /// The simulated canned rows: workload, mode, pool (KiB), ratio and
    /// pages stored raw.
    fn canned_table(&self) -> Grid {
        let mut g = Grid::new(&[
            ("workload", Align::Left),
            ("mode", Align::Left),
            ("pool KiB", Align::Right),
            ("ratio", Align::Right),
            ("stored raw", Align::Right),
        ]);
        for (w, p) in &self.canned {
            g.row(vec![
                w.clone(),
                p.model.clone(),
                kib(p.pool_bytes as i64),
                ratio(p.ratio),
                p.incompressible.to_string(),
            ]);
        }
        g
    }
}

fn ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

impl fmt::Display for KernelReport {
    /// The settings line, the table of rows and the simulated canned rows
    /// (the markdown's columns), the simulator's worst error and the
    /// settings restored.
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
        f.write_str(&self.rows_table().render(Style::Text))?;
        if !self.canned.is_empty() {
            writeln!(
                f,
                "simulated canned mode (IAA format, fast parse), same pool model:"
            )?;
            f.write_str(&self.canned_table().render(Style::Text))?;
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
        write_restored(f, &self.settings_restored, &self.restore_failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_lab::tabular::cells;

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
        assert!(text.contains("+2.50 "), "{text}");
        assert!(text.contains("restored: /x back to N"));
        assert!(text.contains("simulated canned mode"), "{text}");
        assert!(
            text.contains("+100.00*") && text.contains("1 rows began"),
            "{text}"
        );
        let md = report.render_markdown();
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| deflate")).count(),
            2,
            "{md}"
        );
        // Text and markdown: the same columns, in the same order, in both
        // tables; every markdown row has a cell per column.
        let text_tables: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| l.starts_with("compressor") || l.starts_with("workload"))
            .map(|l| cells(l, Style::Text))
            .collect();
        let md_tables: Vec<(usize, Vec<&str>)> = md
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("| compressor") || l.starts_with("| workload"))
            .map(|(i, l)| (i, cells(l, Style::Markdown)))
            .collect();
        assert_eq!(text_tables.len(), 2, "{text}");
        assert_eq!(md_tables.len(), 2, "{md}");
        let lines: Vec<&str> = md.lines().collect();
        for (t, (at, m)) in text_tables.iter().zip(&md_tables) {
            assert_eq!(t, m, "{text}\n{md}");
            assert!(lines[at + 1].starts_with("|---"), "{md}");
            for row in lines[at + 1..].iter().take_while(|l| l.starts_with('|')) {
                assert_eq!(cells(row, Style::Markdown).len(), m.len(), "{row}");
            }
        }
        // Times in µs (the header says so, the cells are bare numbers in
        // it: 7090 ns is 7.09, 20000 ns 20.00); pools in KiB.
        let header = &text_tables[0];
        let row = text
            .lines()
            .find(|l| l.starts_with("deflate   "))
            .map(|l| cells(l, Style::Text))
            .unwrap();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        assert_eq!(row[col("page-out p99 µs")], "20.00", "{text}");
        assert_eq!(row[col("swap-in p99 µs")], "7.09", "{text}");
        assert_eq!(row[col("swap-in p50 µs")], "0.90", "{text}");
        assert_eq!(row[col("pool KiB")], "40", "{text}");
        assert!(
            md.lines()
                .any(|l| cells(l, Style::Markdown) == ["w", "kernel-deflate", "20", "-", "0"]),
            "{md}"
        );
    }
}
