//! `zram-kernel --compare` from its files: each workload's table (a `train`
//! output) and dictionary, a saved `zswap-kernel` report or else kernel
//! zswap measured now, the rows of [`super::compare`], and the report with
//! the comparison after it, as text, markdown or JSON.

use std::path::Path;

use cannery_files::input::{read_limited, read_text_limited, SMALL_FILE_LIMIT};
use cannery_lab::table_file::{self, TableFileError};
use cannery_lab::tabular::Style;

use super::compare::{self, CompareInputs, CompareRow};
use super::{ZramReport, ZramWorkload, LZ4_DICT_MAX};

/// Why the comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ComparisonError {
    /// A workload's table could not be loaded.
    #[error(transparent)]
    Table(#[from] TableFileError),
    /// A dictionary or the saved report could not be read.
    #[error(transparent)]
    File(#[from] cannery_files::Error),
    /// A row could not be computed, or the saved report is no report.
    #[error("{0}")]
    Rows(String),
}

/// Where the comparison's inputs are: the `train` output with each
/// workload's table file (named in the workloads' order), and a saved
/// `zswap-kernel --json` report.
pub struct ComparisonFiles<'a> {
    /// The `train` output directory, if tables are compared.
    pub tables: Option<&'a Path>,
    /// Each workload's table file name in it.
    pub table_files: &'a [String],
    /// A saved zswap-kernel report; without it kernel zswap is measured now.
    pub zswap_report: Option<&'a Path>,
}

/// Every row of the comparison for `workloads`, whose zram rows were
/// `measured`. Without a saved report kernel zswap is measured now on the
/// same pages; where it cannot be, `warn` says why and its rows are left
/// out. `progress` gets that measurement's status lines.
pub fn comparison(
    files: &ComparisonFiles<'_>,
    corpus: &str,
    workloads: &[ZramWorkload],
    measured: &[super::ZramRow],
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
    warn: &mut dyn FnMut(String),
) -> Result<Vec<CompareRow>, ComparisonError> {
    let mut tables = Vec::new();
    let mut dicts = Vec::new();
    for (w, file) in workloads.iter().zip(files.table_files) {
        let table = files
            .tables
            .map(|d| table_file::load(&d.join(file).display().to_string()));
        tables.push(table.transpose()?);
        let dict = w
            .dictionary
            .as_deref()
            .map(|d| read_limited(d, LZ4_DICT_MAX, "dictionary"));
        dicts.push(dict.transpose()?);
    }
    let inputs: Vec<CompareInputs<'_>> = workloads
        .iter()
        .zip(&tables)
        .zip(&dicts)
        .map(|((workload, t), d)| CompareInputs {
            workload,
            table: t.as_ref(),
            dictionary: d.as_deref(),
        })
        .collect();
    let zswap = files
        .zswap_report
        .map(|p| read_text_limited(p, SMALL_FILE_LIMIT, "zswap-kernel report"))
        .transpose()?;
    let mut rows =
        compare::compare(measured, &inputs, zswap.as_deref()).map_err(ComparisonError::Rows)?;
    if zswap.is_none() {
        let system = cannery_machine::System::default();
        let mut zswap_progress = |line: &str| progress(&format!("zswap {line}"));
        match compare::measure_zswap(&system, corpus, workloads, stop, &mut zswap_progress) {
            Ok(z) => rows.extend(z),
            Err(why) => warn(format!("kernel zswap not in the comparison: {why}")),
        }
    }
    Ok(rows)
}

/// The report as text or markdown, the comparison (if any) after it.
pub fn render(report: &ZramReport, compared: Option<&[CompareRow]>, markdown: bool) -> String {
    let (mut text, style) = if markdown {
        (report.render_markdown(), Style::Markdown)
    } else {
        (report.to_string(), Style::Text)
    };
    if let Some(c) = compared {
        text.push_str(
            "\none comparison on the same pages (simulated and software rows through zram's accounting; \
             kernel zswap rows: the same pages but the added zero pages, or a saved report's own):\n\n",
        );
        text.push_str(&compare::render(c, style));
    }
    text
}

/// The report as JSON, the comparison (if any) under `compare`.
pub fn to_json(report: &ZramReport, compared: Option<&[CompareRow]>) -> serde_json::Value {
    let mut v = serde_json::to_value(report).expect("a report serializes");
    if let Some(c) = compared {
        v["compare"] = serde_json::to_value(c).expect("rows serialize");
    }
    v
}
