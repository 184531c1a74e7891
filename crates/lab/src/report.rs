//! The training report of a corpus and what goes with it: per-workload
//! and fleet results, the cross-workload matrix, best-of-K, `best`
//! refinement steps and the smoothing comparison ([`TrainReport`]), the
//! workloads and options [`crate::fleet::train_corpus`] takes, and the
//! tables' file names. The training itself is [`crate::fleet`]; the text
//! form is [`crate::render`].
//!
//! JSON shape (`format: "cannery-train-report"`, `version: 1`):
//! `workloads[]` each with `name`, page counts, `table_id`, `modes` (a map
//! from mode name to `{ratio, effective_ratio, incompressible_pages, pages,
//! bytes_in, bytes_out}`), `ceiling` (fast-parse bits under fixed, the
//! table and the optimal code of the evaluated pages themselves, and the
//! two gains over fixed: see [`Ceiling`]), with `qpl_compatible` a
//! `qpl_constraint` ([`ConstraintCost`]), `refinement[]`, `smoothing[]`;
//! `fleet` with the same `modes`, `ceiling` and `qpl_constraint` summed over workloads; `cross` (`tables` × `workloads`
//! canned-fast ratios); `clusters` (or null); `smoothing` (fleet-wide).
//! Mode names: `canned-fast|default|best` (the workload's own table),
//! `canned:<table>` (another table at the fast parse: `fleet`,
//! `kernel-2024`, other workloads, `cluster-<i>`), `best-of-<K>`, `fixed`,
//! `dynamic-fast`, `dynamic-best`, and the peers (`zstd-1`, `zstd-3`,
//! `zstd-1-dict`, `lz4`, `libdeflate-1`, `libdeflate-6`).

use std::collections::BTreeMap;

use serde::Serialize;

use cannery_codec::Level;
use cannery_codec::Table;

use crate::evaluate::{Ceiling, ConstraintCost, ModeResult};
use crate::mode_key::ModeKey;
use cannery_trainer::refine::RefineStep;
use cannery_trainer::train::SmoothingResult;
use cannery_trainer::TrainOptions;

/// Format name of the report JSON.
pub const REPORT_FORMAT: &str = "cannery-train-report";

pub use cannery_trainer::options::DICTIONARY_SIZE;
pub use cannery_trainer::pages::{Chain, Workload};

/// Pages kept per corpus for clustering (their symbol counts only).
pub const CLUSTER_SAMPLE_PAGES: usize = 16_384;

/// Options for a corpus.
#[derive(Clone, Debug)]
pub struct CorpusOptions {
    /// Corpus name recorded in provenance and the report.
    pub corpus: String,
    /// Training options.
    pub train: TrainOptions,
    /// K for `--tables K` (1: no clustering).
    pub tables: usize,
    /// Also run the peer compressors.
    pub peers: bool,
    /// Held-out pages evaluated per workload at most: a larger test part
    /// is sampled by page hash ([`cannery_trainer::Split::test_sample`]), and with
    /// many workloads fewer ([`eval_pages_per_workload`]). `None`: all.
    pub eval_pages: Option<u64>,
    /// Also train a fleet table for every target this build can run and
    /// measure each under every target's compressor
    /// ([`TrainReport::target_matrix`]).
    pub target_matrix: bool,
    /// Train a dictionary per workload and one for the fleet
    /// ([`CorpusTraining::dictionaries`]), for zram's `algorithm_params`
    /// and `zstd -D`.
    pub dictionaries: bool,
}

/// Default of [`CorpusOptions::eval_pages`]: bounds the evaluation's time on
/// large corpora. Every evaluated page goes through 15 codecs, two of them
/// at the `best` level, so the evaluation, not the training, sets the time of
/// `cannery train` on big corpora. Measured on a 2-core machine, a 1 GiB
/// corpus (266,690 pages, 5 workloads) trained and reported in 7.8 s with
/// 1000 pages and 11.8 s with 2000. On the shipped corpus (841 to 1217
/// held-out pages per workload) a 1000-page sample moved each workload's
/// canned-vs-fixed gain by at most 0.52 percentage points.
pub const DEFAULT_EVAL_PAGES: u64 = 1000;

/// Held-out pages the whole fleet evaluates at most when sampling: with
/// many workloads each evaluates this shared out (but at least
/// [`MIN_EVAL_PAGES`]), so evaluation stops growing with the number of
/// workloads. Up to 5 workloads keep [`DEFAULT_EVAL_PAGES`] each.
pub const FLEET_EVAL_PAGES: u64 = 5000;

/// The fewest held-out pages a sampled workload evaluates (fewer only if
/// it has fewer or `eval_pages` asks for fewer).
pub const MIN_EVAL_PAGES: u64 = 100;

/// Pages sampled for the zstd dictionaries of all workloads together
/// (shared out, between 128 and 1024 per workload): zstd's dictionary
/// trainer costs as much as the rest of a 50-workload training otherwise.
pub const FLEET_DICTIONARY_SAMPLES: usize = 5120;

/// Held-out pages each of `workloads` workloads evaluates when sampling at
/// most `eval_pages` per workload: see [`FLEET_EVAL_PAGES`].
pub fn eval_pages_per_workload(eval_pages: u64, workloads: usize) -> u64 {
    let share = (FLEET_EVAL_PAGES / workloads.max(1) as u64).max(MIN_EVAL_PAGES);
    eval_pages.min(share)
}

/// Progress events for callers that show progress.
#[derive(Debug)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// Scanning a workload.
    Scanning(&'a str),
    /// Training a table.
    Training(&'a str),
    /// Evaluating a workload's held-out pages.
    Evaluating(&'a str),
    /// A workload too small for a table of its own (it gets none).
    Skipped(&'a str),
}

impl Progress<'_> {
    /// How many events [`crate::fleet::train_corpus`] sends for `workloads`
    /// workloads and `tables` tables (`--tables`): scanning, training (or
    /// skipping) and evaluating each workload, the fleet table, and the
    /// clustered tables when `tables > 1`.
    pub fn steps(workloads: usize, tables: usize) -> u64 {
        3 * workloads as u64 + 1 + u64::from(tables > 1)
    }

    /// The events `target_matrix` adds for `targets` targets: scanning
    /// every workload and training a fleet table per target, then
    /// evaluating every workload under each target's compressor.
    pub fn matrix_steps(workloads: usize, targets: usize) -> u64 {
        (targets * (2 * workloads + 1)) as u64
    }
}

impl std::fmt::Display for Progress<'_> {
    /// `scanning W`, `training W`, `evaluating W`, `no table of its own for W …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Scanning(w) => write!(f, "scanning {w}"),
            Progress::Training(w) => write!(f, "training {w}"),
            Progress::Evaluating(w) => write!(f, "evaluating {w}"),
            Progress::Skipped(w) => write!(f, "no table of its own for {w} (too few pages)"),
        }
    }
}

/// The trainer's target for canned (fast) over fixed, in percent of ratio.
pub const TARGET_CANNED_VS_FIXED: f64 = 12.0;
/// The trainer's target for canned (best) against dynamic (best), in
/// percent of ratio (at most this much worse).
pub const TARGET_CANNED_VS_DYNAMIC: f64 = -3.0;

/// One of the trainer's targets, checked on held-out pages.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TargetCheck {
    /// What is compared: `canned-fast vs fixed`, `canned-best vs dynamic-best`.
    pub name: String,
    /// The first mode's ratio over the second's, in percent.
    pub gain_percent: f64,
    /// The target: the gain must be at least this.
    pub target_percent: f64,
    /// Whether it is.
    pub met: bool,
    /// For a miss the measurements explain: why no table could meet it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The targets `modes` meet or miss; `ceiling` explains a canned-vs-fixed
/// miss when even the best single table could not reach the target.
pub fn check_targets(modes: &BTreeMap<ModeKey, ModeResult>, ceiling: &Ceiling) -> Vec<TargetCheck> {
    let pct = |a: f64, b: f64| if b > 0.0 { (a / b - 1.0) * 100.0 } else { 0.0 };
    let mut out = Vec::new();
    let get = |k: ModeKey| modes.get(&k);
    if let (Some(c), Some(f)) = (get(ModeKey::Canned(Level::Fast)), get(ModeKey::Fixed)) {
        let gain = pct(c.ratio, f.ratio);
        let met = gain >= TARGET_CANNED_VS_FIXED;
        let why = (!met && ceiling.pages > 0 && ceiling.ceiling_gain_percent < TARGET_CANNED_VS_FIXED)
            .then(|| {
                format!(
                    "no single table can: the ceiling at the fast parse is {:+.1} % over fixed in bits",
                    ceiling.ceiling_gain_percent
                )
            });
        out.push(TargetCheck {
            name: "canned-fast vs fixed".into(),
            gain_percent: gain,
            target_percent: TARGET_CANNED_VS_FIXED,
            met,
            why,
        });
    }
    if let (Some(c), Some(d)) = (
        get(ModeKey::Canned(Level::Best)),
        get(ModeKey::Dynamic(Level::Best)),
    ) {
        let gain = pct(c.ratio, d.ratio);
        out.push(TargetCheck {
            name: "canned-best vs dynamic-best".into(),
            gain_percent: gain,
            target_percent: TARGET_CANNED_VS_DYNAMIC,
            met: gain >= TARGET_CANNED_VS_DYNAMIC,
            why: None,
        });
    }
    out
}

/// Report of one workload.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadReport {
    /// Name.
    pub name: String,
    /// Pages read (same-filled included).
    pub pages_read: u64,
    /// Zero/same-filled pages (read or counted at capture).
    pub same_filled_pages: u64,
    /// Training pages.
    pub train_pages: u64,
    /// Held-out pages evaluated (a sample of them with `eval_pages`).
    pub test_pages: u64,
    /// Held-out pages (not same-filled) in all.
    pub held_out_pages: u64,
    /// Its table's id (null if skipped).
    pub table_id: Option<String>,
    /// Why it got no table of its own.
    pub skipped: Option<String>,
    /// Results by mode.
    pub modes: BTreeMap<ModeKey, ModeResult>,
    /// Fast-parse gain over fixed of the table used for `canned-*`, against
    /// the most any single table could gain on the evaluated pages.
    pub ceiling: Ceiling,
    /// The trainer's targets, met or missed ([`check_targets`]).
    pub targets: Vec<TargetCheck>,
    /// With `qpl_compatible` (and a table of its own): what the constraint
    /// costs on the evaluated pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qpl_constraint: Option<ConstraintCost>,
    /// `best` refinement steps.
    pub refinement: Vec<RefineStep>,
    /// Held-out bits per page by smoothing.
    pub smoothing: Vec<SmoothingResult>,
    /// With a library target: this workload's held-out pages through the
    /// library's compressor with its table and with the library's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under_target: Option<cannery_trainer::target::TargetComparison>,
}

/// The fleet part of the report.
#[derive(Clone, Debug, Serialize)]
pub struct FleetReport {
    /// The fleet table's id.
    pub table_id: String,
    /// Held-out pages over all workloads.
    pub test_pages: u64,
    /// Results by mode, summed over workloads.
    pub modes: BTreeMap<ModeKey, ModeResult>,
    /// The workloads' ceilings summed (each workload with its own table).
    pub ceiling: Ceiling,
    /// The trainer's targets on the fleet's figures.
    pub targets: Vec<TargetCheck>,
    /// With `qpl_compatible`: the workloads' constraint costs summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qpl_constraint: Option<ConstraintCost>,
    /// `best` refinement steps of the fleet table.
    pub refinement: Vec<RefineStep>,
}

/// Canned-fast ratio of each table (rows) on each workload's held-out pages (columns).
#[derive(Clone, Debug, Serialize)]
pub struct CrossMatrix {
    /// Row names: workload tables, then `fleet` and `kernel-2024`.
    pub tables: Vec<String>,
    /// Column names.
    pub workloads: Vec<String>,
    /// `ratio[table][workload]`.
    pub ratio: Vec<Vec<f64>>,
}

/// Best-of-K results.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterReport {
    /// K.
    pub k: usize,
    /// The tables' ids.
    pub table_ids: Vec<String>,
    /// Training pages per table.
    pub train_pages_per_table: Vec<u64>,
    /// Lloyd iterations.
    pub iterations: usize,
    /// Held-out canned-fast ratio of the fleet table.
    pub fleet_ratio: f64,
    /// Held-out ratio when each page uses the best of the K tables.
    pub best_of_k_ratio: f64,
    /// Gain of best-of-K over the fleet table, in percent.
    pub gain_percent: f64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct TrainReport {
    /// `cannery-train-report`.
    pub format: &'static str,
    /// 1.
    pub version: u32,
    /// Corpus name.
    pub corpus: String,
    /// Options, as recorded in provenance.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Per workload.
    pub workloads: Vec<WorkloadReport>,
    /// Fleet.
    pub fleet: FleetReport,
    /// Cross-workload matrix.
    pub cross: CrossMatrix,
    /// Best-of-K, if asked for.
    pub clusters: Option<ClusterReport>,
    /// Smoothing comparison over all workloads (bits per held-out page with
    /// each workload's own table).
    pub smoothing: Vec<SmoothingResult>,
    /// With a library target (`qpl-*`, `isal`): the held-out pages of all
    /// workloads through the library's compressor, with each workload's
    /// table and with the table the library builds from the same counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under_target: Option<cannery_trainer::target::TargetComparison>,
    /// With `target_matrix`: tables trained for each target, under each
    /// target's compressor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_matrix: Option<cannery_trainer::target::TargetMatrix>,
}

/// Everything training a corpus produces.
#[derive(Clone, Debug)]
pub struct CorpusTraining {
    /// Tables of workloads that had enough pages.
    pub workload_tables: Vec<Table>,
    /// The fleet table.
    pub fleet_table: Table,
    /// Cluster tables (empty unless K > 1).
    pub cluster_tables: Vec<Table>,
    /// With [`CorpusOptions::dictionaries`]: `(name, dictionary)` for each
    /// workload zstd's trainer could learn from, then `fleet` (at most
    /// [`DICTIONARY_SIZE`] bytes each, so every zram backend loads them).
    pub dictionaries: Vec<(String, Vec<u8>)>,
    /// The report.
    pub report: TrainReport,
}

/// The table file of each workload (in order), then `fleet` and the
/// `cluster-<i>` ones: the name with anything but `[A-Za-z0-9._-]` made
/// `_`, and where two would be the same file (`w space` and `w_space`, a
/// workload named `fleet`), the later ones get a hash of their full name.
pub fn table_file_names(workloads: &[String], clusters: usize) -> Vec<String> {
    let safe = |name: &str| -> String {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let fnv = |name: &str| {
        name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let mut taken: std::collections::BTreeSet<String> = std::iter::once("fleet".to_string())
        .chain((0..clusters.max(1)).map(|i| format!("cluster-{i}")))
        .collect();
    let mut names: Vec<String> = workloads
        .iter()
        .map(|w| {
            let mut n = safe(w);
            if !taken.insert(n.clone()) {
                n = format!("{n}-{:08x}", fnv(w) as u32);
                taken.insert(n.clone());
            }
            n
        })
        .collect();
    names.push("fleet".into());
    names.extend((0..clusters).map(|i| format!("cluster-{i}")));
    names
        .into_iter()
        .map(|n| format!("{n}.table.json"))
        .collect()
}

/// The dictionary file beside a table file of [`table_file_names`]:
/// `redis.table.json` → `redis.dict` (what zram's `algorithm_params
/// dict=` and `zstd -D` load).
pub fn dictionary_file_name(table_file: &str) -> String {
    let stem = table_file.strip_suffix(".table.json").unwrap_or(table_file);
    format!("{stem}.dict")
}

#[cfg(test)]
mod tests;
