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
use crate::pages::{PageSource, PageStream, SourceError};
use crate::refine::RefineStep;
use crate::scan::TrainOptions;
use crate::train::SmoothingResult;

/// Format name of the report JSON.
pub const REPORT_FORMAT: &str = "cannery-train-report";

/// Largest dictionary trained (for the `zstd-1-dict` and `lz4-dict`
/// peers, and written by `train` for zram): at most 64 KiB, the most the
/// kernel's lz4 backend loads (zstd's trainer defaults to 110 KiB).
pub const DICTIONARY_SIZE: usize = 32 * 1024;

/// Pages kept per corpus for clustering (their symbol counts only).
pub const CLUSTER_SAMPLE_PAGES: usize = 16_384;

/// One workload of a corpus.
pub struct Workload<'a> {
    /// Its name (file names and reports use it).
    pub name: String,
    /// Its pages.
    pub source: &'a dyn PageSource,
}

/// Several sources streamed one after the other.
pub struct Chain<'a>(pub Vec<&'a dyn PageSource>);

impl PageSource for Chain<'_> {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        let mut streams = Vec::new();
        for s in &self.0 {
            streams.push(s.stream()?);
        }
        Ok(Box::new(streams.into_iter().flatten()))
    }
    fn uncounted_same_filled(&self) -> u64 {
        self.0.iter().map(|s| s.uncounted_same_filled()).sum()
    }
}

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
    /// is sampled by page hash ([`crate::Split::test_sample`]), and with
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
    pub under_target: Option<crate::target::TargetComparison>,
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
    pub under_target: Option<crate::target::TargetComparison>,
    /// With `target_matrix`: tables trained for each target, under each
    /// target's compressor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_matrix: Option<crate::target::TargetMatrix>,
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
mod tests {
    use super::*;
    use crate::evaluate::{evaluate, EvalSpec};
    use crate::fleet::train_corpus;
    use crate::testutil::{key, workload_pages};
    use crate::TrainError;

    #[test]
    fn table_files_never_share_a_name() {
        let names: Vec<String> = ["w space", "w_space", "fleet", "a/b", "cluster-0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let files = table_file_names(&names, 2);
        assert_eq!(files.len(), 5 + 1 + 2);
        let unique: std::collections::BTreeSet<_> = files.iter().collect();
        assert_eq!(unique.len(), files.len(), "{files:?}");
        assert_eq!(files[0], "w_space.table.json");
        assert!(
            files[1].starts_with("w_space-") && files[2].starts_with("fleet-"),
            "{files:?}"
        );
        assert_eq!(files[3], "a_b.table.json");
        assert_eq!(
            &files[5..],
            [
                "fleet.table.json",
                "cluster-0.table.json",
                "cluster-1.table.json"
            ]
        );
        // Deterministic.
        assert_eq!(table_file_names(&names, 2), files);
    }

    #[test]
    fn progress_hears_exactly_the_steps_it_announces() {
        let (a, b) = (workload_pages(300, 0, 61), workload_pages(300, 1, 62));
        let tiny = workload_pages(3, 0, 63);
        let ws = [
            Workload {
                name: "a".into(),
                source: &a,
            },
            Workload {
                name: "b".into(),
                source: &b,
            },
            Workload {
                name: "tiny".into(),
                source: &tiny,
            },
        ];
        for tables in [1, 2] {
            let opts = CorpusOptions {
                corpus: "synthetic".into(),
                train: TrainOptions::default(),
                tables,
                peers: false,
                eval_pages: Some(20),
                target_matrix: false,
                dictionaries: false,
            };
            let mut heard = Vec::new();
            train_corpus(&ws, &opts, &mut |p| heard.push(p.to_string())).unwrap();
            assert_eq!(heard.len() as u64, Progress::steps(3, tables), "{heard:?}");
            assert!(heard.contains(&"no table of its own for tiny (too few pages)".to_string()));
        }
    }

    #[test]
    fn the_evaluation_sample_is_shared_out_over_many_workloads() {
        assert_eq!(eval_pages_per_workload(DEFAULT_EVAL_PAGES, 1), 1000);
        assert_eq!(eval_pages_per_workload(DEFAULT_EVAL_PAGES, 5), 1000);
        assert_eq!(eval_pages_per_workload(DEFAULT_EVAL_PAGES, 10), 500);
        assert_eq!(eval_pages_per_workload(DEFAULT_EVAL_PAGES, 50), 100);
        assert_eq!(
            eval_pages_per_workload(DEFAULT_EVAL_PAGES, 5000),
            MIN_EVAL_PAGES
        );
        assert_eq!(eval_pages_per_workload(40, 50), 40);
    }

    #[test]
    fn the_target_matrix_has_a_row_and_column_per_available_target() {
        let a = workload_pages(200, 0, 71);
        let ws = [Workload {
            name: "records".into(),
            source: &a,
        }];
        let opts = CorpusOptions {
            corpus: "synthetic".into(),
            train: TrainOptions::default(),
            tables: 1,
            peers: false,
            eval_pages: None,
            target_matrix: true,
            dictionaries: false,
        };
        let mut heard = 0;
        let r = train_corpus(&ws, &opts, &mut |_| heard += 1)
            .unwrap()
            .report;
        let n = crate::target::available_targets().len();
        assert_eq!(heard, Progress::steps(1, 1) + Progress::matrix_steps(1, n));
        let m = r.target_matrix.expect("asked for");
        assert_eq!(m.targets.len(), n);
        assert_eq!(m.targets[0], "iaa");
        assert_eq!(m.sizes.len(), n);
        for (row, sizes) in m.sizes.iter().enumerate() {
            assert_eq!(sizes.len(), n);
            assert_eq!(m.loss(row, row), 0.0);
            assert!(sizes.iter().all(|s| s.pages == r.workloads[0].test_pages));
        }
        // The iaa row's table under cannery's fast encoder is the workload's
        // own QPL-compatible fast table: a real ratio.
        assert!(m.sizes[0][0].ratio() > 1.5, "{:?}", m.sizes[0][0]);
        assert!(r.under_target.is_none(), "iaa is no library target");
    }

    #[test]
    fn an_evaluation_sample_measures_fewer_pages_and_trains_the_same_tables() {
        let a = workload_pages(300, 0, 61);
        let ws = [Workload {
            name: "records".into(),
            source: &a,
        }];
        let mut opts = CorpusOptions {
            corpus: "synthetic".into(),
            train: TrainOptions::default(),
            tables: 1,
            peers: false,
            eval_pages: None,
            target_matrix: false,
            dictionaries: false,
        };
        let all = train_corpus(&ws, &opts, &mut |_| {}).unwrap();
        opts.eval_pages = Some(12);
        let some = train_corpus(&ws, &opts, &mut |_| {}).unwrap();
        let (n_all, n_some) = (
            all.report.workloads[0].test_pages,
            some.report.workloads[0].test_pages,
        );
        assert!(n_all > 40, "{n_all} held-out pages");
        assert!(
            (1..=30).contains(&n_some),
            "{n_some} pages sampled for 12 of {n_all}"
        );
        assert_eq!(
            all.workload_tables[0].id(),
            some.workload_tables[0].id(),
            "sampling the evaluation must not change training"
        );
        assert_eq!(
            some.report.workloads[0].modes[&key("canned-fast")].pages,
            n_some
        );
        assert_eq!(all.report.workloads[0].held_out_pages, n_all);
        assert_eq!(some.report.workloads[0].held_out_pages, n_all);
    }

    #[test]
    fn a_corpus_gets_workload_fleet_and_cluster_tables_and_a_full_report() {
        let a = workload_pages(160, 0, 51);
        let b = workload_pages(160, 1, 52);
        let tiny = workload_pages(8, 2, 53);
        let ws = [
            Workload {
                name: "records".into(),
                source: &a,
            },
            Workload {
                name: "text".into(),
                source: &b,
            },
            Workload {
                name: "tiny".into(),
                source: &tiny,
            },
        ];
        let opts = CorpusOptions {
            corpus: "synthetic".into(),
            train: TrainOptions::default(),
            tables: 2,
            peers: true,
            eval_pages: None,
            target_matrix: false,
            dictionaries: false,
        };
        let out = train_corpus(&ws, &opts, &mut |_| {}).unwrap();
        assert_eq!(out.workload_tables.len(), 2);
        assert_eq!(out.cluster_tables.len(), 2);
        let r = &out.report;
        assert!(r.workloads[2]
            .skipped
            .as_deref()
            .unwrap()
            .contains("need at least 32"));
        for w in &r.workloads[..2] {
            for m in [
                "canned-fast",
                "canned-default",
                "canned-best",
                "fixed",
                "dynamic-fast",
                "dynamic-best",
                "canned:kernel-2024",
                "canned:fleet",
                "zstd-1",
                "zstd-3",
                "zstd-1-dict",
                "lz4",
                "lz4-dict",
                "libdeflate-1",
                "libdeflate-6",
                "best-of-2",
            ] {
                assert!(w.modes.contains_key(&key(m)), "{} lacks {m}", w.name);
            }
            // The own table beats the other workload's table on its own pages.
            let other = if w.name == "records" {
                "text"
            } else {
                "records"
            };
            assert!(
                w.modes[&key("canned-fast")].ratio > w.modes[&ModeKey::table(other)].ratio,
                "{}",
                w.name
            );
            // The ceiling measures the same pages and the same table as
            // canned-fast vs fixed, in bits instead of padded bytes.
            let c = &w.ceiling;
            assert_eq!(c.pages, w.test_pages);
            assert!(c.optimal_bits <= c.table_bits, "{c:?}");
            let bytes = |m: &str| w.modes[&key(m)].bytes_out as f64;
            let ratio_gain = 100.0 * (bytes("fixed") / bytes("canned-fast") - 1.0);
            assert!(
                (ratio_gain - c.table_gain_percent).abs() < 1.5,
                "{ratio_gain} vs {c:?}"
            );
        }
        let sum: u64 = r.workloads.iter().map(|w| w.ceiling.optimal_bits).sum();
        assert_eq!(r.fleet.ceiling.optimal_bits, sum);
        assert_eq!(
            r.cross.tables,
            vec!["records", "text", "fleet", "kernel-2024"]
        );
        assert_eq!(r.cross.ratio.len(), 4);
        assert!(r.cross.ratio[0][0] > r.cross.ratio[0][1]);
        let c = r.clusters.as_ref().unwrap();
        assert!(c.best_of_k_ratio >= c.fleet_ratio, "{c:?}");
        assert!(r.fleet.modes.contains_key(&key("canned:fleet")));
        let v = serde_json::to_value(r).unwrap();
        assert_eq!(
            v["workloads"][0]["modes"]["fixed"]["incompressible_pages"],
            0
        );
        assert!(v["fleet"]["modes"]["canned-fast"]["effective_ratio"].is_number());
        // The fleet and cluster tables round-trip every held-out page too.
        for t in out.cluster_tables.iter().chain([&out.fleet_table]) {
            for src in [&a, &b] {
                let mut spec = EvalSpec::held_out(opts.train.split, Some(t));
                spec.levels = vec![cannery_codec::Level::Fast, cannery_codec::Level::Best];
                spec.peers.clear();
                spec.baselines = false;
                let ev = evaluate(src, &spec).unwrap();
                assert!(ev.pages > 10);
            }
        }
        // Provenance carries the measured ratios.
        assert!(out.workload_tables[0].provenance.ratios["canned-fast"] > 1.0);
        assert_eq!(
            out.workload_tables[0].provenance.corpus.as_deref(),
            Some("synthetic/records")
        );
    }

    #[test]
    fn a_corpus_with_no_usable_pages_fails_with_what_was_found() {
        let zeros = vec![vec![0u8; 4096]; 50];
        let ws = [Workload {
            name: "idle".into(),
            source: &zeros,
        }];
        let opts = CorpusOptions {
            corpus: "z".into(),
            train: TrainOptions::default(),
            tables: 1,
            peers: false,
            eval_pages: None,
            target_matrix: false,
            dictionaries: false,
        };
        let e = train_corpus(&ws, &opts, &mut |_| {}).unwrap_err();
        assert!(
            matches!(
                e,
                TrainError::AllSameFilled {
                    same_filled: 50,
                    ..
                }
            ),
            "{e}"
        );
    }
}
