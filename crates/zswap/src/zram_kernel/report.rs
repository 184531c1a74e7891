//! The report of a `zram-kernel` session: one [`ZramRow`] per workload,
//! compressor and dictionary (the device's `mm_stat`, ratios, per-page
//! write and read times through the block layer, pages compared), what was
//! restored, and its tables: the same columns as text and as markdown,
//! sizes in KiB, times in µs. Pure data and strings.

use std::fmt;

use cannery_lab::tabular::{Align, Grid, Style};
use cannery_lab::units::kib;
use cannery_machine::MmStat;
use serde::Serialize;

use super::model::ZramPrediction;
use crate::session_table::{session_grid, session_row, write_restored};

/// One workload under one compressor, with or without its dictionary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZramRow {
    /// The workload.
    pub workload: String,
    /// The compressor (`comp_algorithm`).
    pub compressor: String,
    /// The dictionary loaded (`algorithm_params dict=`), if any.
    pub dictionary: Option<String>,
    /// Pages written (same-filled ones included).
    pub pages: u64,
    /// Of those, zero pages standing for the ones the capture counted
    /// without storing.
    pub zero_pages_added: u64,
    /// The device's `mm_stat` once every page was written.
    pub mm_stat: MmStat,
    /// `orig_data_size / compr_data_size`.
    pub data_ratio: Option<f64>,
    /// `orig_data_size / mem_used_total` (what the memory saves).
    pub mem_ratio: Option<f64>,
    /// With a dictionary: (compr_data_size − the same compressor's without
    /// one) / that.
    pub dictionary_change: Option<f64>,
    /// Per-page O_DIRECT write time, block layer and syscall included.
    pub write_p50_ns: u64,
    /// 99th percentile of the same.
    pub write_p99_ns: u64,
    /// Per-page O_DIRECT read time, block layer and syscall included.
    pub read_p50_ns: u64,
    /// 99th percentile of the same.
    pub read_p99_ns: u64,
    /// The model's prediction for the same pages ([`super::model`]), for
    /// compressors it has.
    pub model: Option<ZramPrediction>,
    /// (model − kernel) / kernel `compr_data_size`.
    pub model_data_error: Option<f64>,
    /// (model − kernel) / kernel `mem_used_total`.
    pub model_mem_error: Option<f64>,
    /// Pages read back and compared.
    pub pages_compared: u64,
    /// Pages that came back different.
    pub mismatches: u64,
}

impl ZramRow {
    /// Sets [`ZramRow::dictionary_change`] on each row with a dictionary
    /// from the row of the same workload and compressor without one.
    pub fn set_dictionary_changes(rows: &mut [ZramRow]) {
        let base: Vec<(String, String, u64)> = rows
            .iter()
            .filter(|r| r.dictionary.is_none())
            .map(|r| {
                (
                    r.workload.clone(),
                    r.compressor.clone(),
                    r.mm_stat.compr_data_size,
                )
            })
            .collect();
        for r in rows.iter_mut().filter(|r| r.dictionary.is_some()) {
            r.dictionary_change = base
                .iter()
                .find(|(w, c, b)| *w == r.workload && *c == r.compressor && *b > 0)
                .map(|(_, _, b)| (r.mm_stat.compr_data_size as f64 - *b as f64) / *b as f64);
        }
    }

    /// Sets the model's prediction and its errors against the kernel.
    pub fn set_model(&mut self, p: ZramPrediction) {
        let err = |m: u64, k: u64| (k > 0).then(|| (m as f64 - k as f64) / k as f64);
        self.model_data_error = err(p.compr_data_size, self.mm_stat.compr_data_size);
        self.model_mem_error = err(p.mem_used_total, self.mm_stat.mem_used_total);
        self.model = Some(p);
    }

    /// The row's mode name: the compressor, `+dict` with a dictionary.
    pub fn mode(&self) -> String {
        match self.dictionary {
            Some(_) => format!("{}+dict", self.compressor),
            None => self.compressor.clone(),
        }
    }
}

/// A whole session.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZramReport {
    /// `uname -r` of the measured kernel.
    pub kernel_release: String,
    /// The corpus, as given.
    pub corpus: String,
    /// Which pages: `test` (train's held-out part) or `all`.
    pub part: String,
    /// The device number used (added and removed by the session).
    pub device: u32,
    /// `level=` given to `algorithm_params`, if any.
    pub level: Option<i32>,
    /// What the session changed, each undone.
    pub settings_restored: Vec<String>,
    /// What could not be undone (must be empty).
    pub restore_failures: Vec<String>,
    /// One row per workload, compressor and dictionary.
    pub rows: Vec<ZramRow>,
}

impl ZramReport {
    /// Pages that came back different, over all rows.
    pub fn mismatches(&self) -> u64 {
        self.rows.iter().map(|r| r.mismatches).sum()
    }

    /// The report as markdown (for BENCHMARKS.md).
    pub fn render_markdown(&self) -> String {
        let mut s = format!(
            "Linux {}, zram (a device of its own, O_DIRECT 4 KiB page writes), {} pages of {}{}. \
             Sizes from `mm_stat`: data = `compr_data_size`, memory = `mem_used_total`; \
             data ratio = `orig_data_size` / data, memory ratio = `orig_data_size` / memory; \
             dict Δ = data with the workload's dictionary against without; \
             model Δ = `cannery`'s zram model (same-filled count, huge pages whole, zsmalloc) against the kernel. \
             Per-page times include the block layer and the O_DIRECT system call: \
             they are not the compressor's own times.\n\n",
            self.kernel_release,
            self.part,
            self.corpus,
            self.level.map_or(String::new(), |l| format!(", level={l}")),
        );
        s += &self.rows_table().render(Style::Markdown);
        s
    }

    fn rows_table(&self) -> Grid {
        let mut g = session_grid(
            &[
                ("workload", Align::Left),
                ("compressor", Align::Left),
                ("pages", Align::Right),
                ("same", Align::Right),
                ("huge", Align::Right),
                ("data KiB", Align::Right),
                ("memory KiB", Align::Right),
                ("data ratio", Align::Right),
                ("memory ratio", Align::Right),
                ("dict Δ %", Align::Right),
                ("model data Δ %", Align::Right),
                ("model memory Δ %", Align::Right),
            ],
            "write",
            "read",
        );
        for r in &self.rows {
            let m = &r.mm_stat;
            let leading = vec![
                r.workload.clone(),
                r.mode(),
                r.pages.to_string(),
                m.same_pages.to_string(),
                m.huge_pages.to_string(),
                kib(m.compr_data_size as i64),
                kib(m.mem_used_total as i64),
                fmt_ratio(r.data_ratio),
                fmt_ratio(r.mem_ratio),
                r.dictionary_change
                    .map_or("-".into(), |c| format!("{:+.2}", c * 100.0)),
                pct(r.model_data_error),
                pct(r.model_mem_error),
            ];
            let times = [r.write_p50_ns, r.write_p99_ns, r.read_p50_ns, r.read_p99_ns];
            session_row(&mut g, leading, times, r.mismatches);
        }
        g
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{:+.2}", c * 100.0))
}

fn fmt_ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

impl fmt::Display for ZramReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "real zram, Linux {}, corpus {} ({} pages){}, device zram{} (added and removed); \
             times per page include the block layer and O_DIRECT syscalls",
            self.kernel_release,
            self.corpus,
            self.part,
            self.level.map_or(String::new(), |l| format!(", level={l}")),
            self.device
        )?;
        f.write_str(&self.rows_table().render(Style::Text))?;
        let compared: u64 = self.rows.iter().map(|r| r.pages_compared).sum();
        writeln!(
            f,
            "{compared} pages read back and compared, {} different",
            self.mismatches()
        )?;
        write_restored(f, &self.settings_restored, &self.restore_failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_lab::tabular::cells;

    fn row(compressor: &str, dict: bool, data: u64) -> ZramRow {
        ZramRow {
            workload: "redis".into(),
            compressor: compressor.into(),
            dictionary: dict.then(|| "t/redis.zram.dict".into()),
            pages: 10,
            zero_pages_added: 2,
            mm_stat: MmStat {
                orig_data_size: 40960,
                compr_data_size: data,
                mem_used_total: 16384,
                same_pages: 2,
                ..MmStat::default()
            },
            data_ratio: Some(40960.0 / data as f64),
            mem_ratio: Some(2.5),
            dictionary_change: None,
            model: None,
            model_data_error: None,
            model_mem_error: None,
            write_p50_ns: 2500,
            write_p99_ns: 9000,
            read_p50_ns: 1200,
            read_p99_ns: 3000,
            pages_compared: 10,
            mismatches: 0,
        }
    }

    #[test]
    fn the_dictionary_change_is_against_the_same_compressor() {
        let mut rows = vec![
            row("lzo-rle", false, 9000),
            row("lz4", false, 10000),
            row("lz4", true, 9500),
        ];
        ZramRow::set_dictionary_changes(&mut rows);
        assert_eq!(rows[0].dictionary_change, None);
        assert!((rows[2].dictionary_change.unwrap() + 0.05).abs() < 1e-12);
        let mut report = ZramReport {
            kernel_release: "6.18".into(),
            corpus: "c".into(),
            part: "test".into(),
            device: 1,
            level: None,
            settings_restored: vec!["zram1 reset and removed".into()],
            restore_failures: vec![],
            rows,
        };
        let text = report.to_string();
        assert!(
            text.contains("30 pages read back and compared, 0 different"),
            "{text}"
        );
        assert!(text.contains("restored: zram1"), "{text}");
        let md = report.render_markdown();
        let header = md.lines().find(|l| l.starts_with("| workload")).unwrap();
        let text_header = text.lines().find(|l| l.starts_with("workload")).unwrap();
        assert_eq!(
            cells(header, Style::Markdown),
            cells(text_header, Style::Text)
        );
        let lz4d = md.lines().find(|l| l.contains("lz4+dict")).unwrap();
        let c = cells(lz4d, Style::Markdown);
        assert_eq!(c[9], "-5.00", "{lz4d}");
        assert_eq!(c[12], "2.50", "{lz4d}");
        assert_eq!(c[10], "-", "no model: {lz4d}");
        report.rows[2].set_model(ZramPrediction {
            compr_data_size: 9690,
            mem_used_total: 16384,
            same_pages: 2,
            huge_pages: 0,
        });
        let md = report.render_markdown();
        let c = cells(
            md.lines().find(|l| l.contains("lz4+dict")).unwrap(),
            Style::Markdown,
        )
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
        assert_eq!((c[10].as_str(), c[11].as_str()), ("+2.00", "+0.00"));
        report.rows[1].mismatches = 3;
        assert_eq!(report.mismatches(), 3);
    }
}
