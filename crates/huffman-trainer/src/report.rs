//! A whole corpus → per-workload tables, a fleet table, optional K cluster
//! tables, and the report: held-out results per workload and mode, the
//! fleet totals, the cross-workload matrix, best-of-K gain, `best`
//! refinement steps and the smoothing comparison.
//!
//! A workload with too few pages for its own table is not fatal: it is
//! listed under `skipped` with the reason, evaluated with the fleet table,
//! and its pages still count for the fleet. The fleet as a whole must have
//! enough pages. This module computes; rendering text is the CLI's job.
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

use cannery_codec::{Level, Table};

use crate::cluster::{cluster, Clustering};
use crate::error::TrainError;
use crate::evaluate::{evaluate, Ceiling, ConstraintCost, EvalSpec, ModeResult, Tally};
use crate::histogram::Histogram;
use crate::mode_key::ModeKey;
use crate::pages::{PageSource, PageStream, SourceError};
use crate::train::{
    evaluate_smoothings, scan, train_from_scan, RefineStep, Scan, SmoothingResult, TrainOptions,
};
use cannery_codec::peer::train_zstd_dictionary;

/// Format name of the report JSON.
pub const REPORT_FORMAT: &str = "cannery-train-report";

/// Largest zstd dictionary trained for the `zstd-1-dict` peer.
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
    /// is sampled by page hash ([`crate::Split::test_sample`]). `None`: all.
    pub eval_pages: Option<u64>,
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
}

impl std::fmt::Display for Progress<'_> {
    /// `scanning W`, `training W`, `evaluating W`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Scanning(w) => write!(f, "scanning {w}"),
            Progress::Training(w) => write!(f, "training {w}"),
            Progress::Evaluating(w) => write!(f, "evaluating {w}"),
        }
    }
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
    /// With `qpl_compatible` (and a table of its own): what the constraint
    /// costs on the evaluated pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qpl_constraint: Option<ConstraintCost>,
    /// `best` refinement steps.
    pub refinement: Vec<RefineStep>,
    /// Held-out bits per page by smoothing.
    pub smoothing: Vec<SmoothingResult>,
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
    /// The report.
    pub report: TrainReport,
}

fn options_map(o: &CorpusOptions) -> serde_json::Map<String, serde_json::Value> {
    let mut m = o.train.table.provenance_map();
    m.insert("parse".into(), o.train.parse.name().into());
    m.insert("test_fraction".into(), o.train.split.test_fraction.into());
    m.insert("seed".into(), o.train.split.seed.into());
    m.insert("tables".into(), o.tables.into());
    m
}

fn merge_scans(name: &str, scans: &[Scan]) -> Result<Scan, TrainError> {
    let first = &scans[0];
    let mut s = Scan {
        name: name.into(),
        pages_read: 0,
        same_filled: 0,
        uncounted_same_filled: 0,
        train: Histogram::zero(first.train.settings().clone()),
        fit: Histogram::zero(first.fit.settings().clone()),
        test: Histogram::zero(first.test.settings().clone()),
        dictionary_samples: Vec::new(),
        page_counts: Vec::new(),
    };
    for x in scans {
        s.pages_read += x.pages_read;
        s.same_filled += x.same_filled;
        s.uncounted_same_filled += x.uncounted_same_filled;
        s.train.merge(&x.train)?;
        s.fit.merge(&x.fit)?;
        s.test.merge(&x.test)?;
        s.page_counts.extend(x.page_counts.iter().cloned());
    }
    Ok(s)
}

/// Trains and evaluates a corpus: see the module documentation.
pub fn train_corpus(
    workloads: &[Workload<'_>],
    opts: &CorpusOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<CorpusTraining, TrainError> {
    if opts.tables == 0 || opts.tables > crate::cluster::MAX_TABLES {
        return Err(TrainError::BadTableCount {
            found: opts.tables,
            max: crate::cluster::MAX_TABLES,
        });
    }
    let mut topts = opts.train.clone();
    if opts.tables > 1 {
        topts.cluster_samples = CLUSTER_SAMPLE_PAGES / workloads.len().max(1);
    }
    if !opts.peers {
        topts.dictionary_samples = 0;
    }
    let min = topts.table.min_pages;

    // Scan and train each workload.
    let mut scans = Vec::new();
    for w in workloads {
        progress(Progress::Scanning(&w.name));
        scans.push(scan(&w.name, w.source, &topts)?);
    }
    if scans.is_empty() {
        return Err(TrainError::Empty {
            what: opts.corpus.clone(),
            needed: min,
        });
    }
    let mut own: Vec<Option<Table>> = Vec::new();
    let mut skipped: Vec<Option<String>> = Vec::new();
    let mut refinements: Vec<Vec<RefineStep>> = Vec::new();
    for (w, s) in workloads.iter().zip(&scans) {
        match s.check_enough(min) {
            Ok(()) => {
                progress(Progress::Training(&w.name));
                let (mut t, steps) = train_from_scan(&w.name, w.source, s, &topts)?;
                t.provenance.corpus = Some(format!("{}/{}", opts.corpus, w.name));
                own.push(Some(t));
                skipped.push(None);
                refinements.push(steps);
            }
            Err(
                e @ (TrainError::TooFewPages { .. }
                | TrainError::Empty { .. }
                | TrainError::AllSameFilled { .. }),
            ) => {
                own.push(None);
                skipped.push(Some(e.to_string()));
                refinements.push(Vec::new());
            }
            Err(e) => return Err(e),
        }
    }

    // The fleet table over every workload's pages.
    let fleet_scan = merge_scans("fleet", &scans)?;
    fleet_scan.check_enough(min)?;
    progress(Progress::Training("fleet"));
    let chain = Chain(workloads.iter().map(|w| w.source).collect());
    let (mut fleet, fleet_steps) = train_from_scan("fleet", &chain, &fleet_scan, &topts)?;
    fleet.provenance.corpus = Some(opts.corpus.clone());

    // K tables.
    let clustering: Option<Clustering> = if opts.tables > 1 {
        progress(Progress::Training("clusters"));
        Some(cluster(
            &fleet_scan.page_counts,
            opts.tables,
            opts.train.split.seed,
            &topts.table,
            "cluster",
        )?)
    } else {
        None
    };
    let kernel = Table::kernel_2024();
    // zstd's dictionary trainer is single-threaded: train all workloads'
    // dictionaries at once.
    let dictionaries: Vec<Option<Vec<u8>>> = {
        use rayon::prelude::*;
        scans
            .par_iter()
            .map(|s| {
                if opts.peers && !s.dictionary_samples.is_empty() {
                    let refs: Vec<&[u8]> = s.dictionary_samples.iter().map(|p| &p[..]).collect();
                    train_zstd_dictionary(&refs, DICTIONARY_SIZE)
                } else {
                    None
                }
            })
            .collect()
    };

    // Evaluate each workload's held-out pages.
    let mut reports = Vec::new();
    let mut fleet_tallies: BTreeMap<ModeKey, Tally> = BTreeMap::new();
    let mut fleet_same = 0.0;
    let mut cross_cols: Vec<BTreeMap<ModeKey, ModeResult>> = Vec::new();
    for (i, (w, s)) in workloads.iter().zip(&scans).enumerate() {
        progress(Progress::Evaluating(&w.name));
        let main = own[i].as_ref().unwrap_or(&fleet);
        let dict = &dictionaries[i];
        let split = match opts.eval_pages {
            Some(n) => opts.train.split.test_sample(s.test.pages, n),
            None => opts.train.split,
        };
        let mut spec = EvalSpec::held_out(split, Some(main));
        if !opts.peers {
            spec.peers.clear();
        }
        spec.dictionary = dict.as_deref();
        spec.fast_tables.push(("fleet".into(), &fleet));
        spec.fast_tables.push(("kernel-2024".into(), &kernel));
        for (j, t) in own.iter().enumerate() {
            if let (Some(t), true) = (t, j != i) {
                spec.fast_tables.push((workloads[j].name.clone(), t));
            }
        }
        if let Some(c) = &clustering {
            let base = spec.fast_tables.len();
            for (j, t) in c.tables.iter().enumerate() {
                spec.fast_tables.push((format!("cluster-{j}"), t));
            }
            spec.best_of = Some((base..base + c.tables.len()).collect());
        }
        let ev = evaluate(w.source, &spec)?;
        let same = ev.same_filled_attributed();
        let mut modes = ev.results();
        fleet_same += same;
        // Fleet "canned-<level>" sums each workload's own table (the
        // fleet table for skipped workloads).
        for (k, t) in &ev.tallies {
            let e = fleet_tallies.entry(k.clone()).or_default();
            *e = e.plus(*t);
        }
        // The workload's own table on its own pages, for the cross matrix.
        if let Some(r) = modes.get(&ModeKey::Canned(Level::Fast)).copied() {
            modes.entry(ModeKey::table(w.name.clone())).or_insert(r);
        }
        cross_cols.push(modes.clone());
        reports.push(WorkloadReport {
            name: w.name.clone(),
            pages_read: s.pages_read,
            same_filled_pages: s.same_filled,
            train_pages: s.train.pages,
            test_pages: ev.pages,
            held_out_pages: s.test.pages,
            table_id: own[i].as_ref().map(|t| t.id()),
            skipped: skipped[i].clone(),
            modes,
            ceiling: Ceiling::of(main, &ev.counts, &topts.table),
            qpl_constraint: (topts.table.constraints.qpl_compatible && own[i].is_some())
                .then(|| ConstraintCost::of(&s.train, &ev.counts, &topts.table)),
            refinement: refinements[i].clone(),
            smoothing: evaluate_smoothings(&s.train, &s.test, &topts.table),
        });
    }
    // Only modes every workload measured are summed for the fleet.
    let n = workloads.len();
    let counts_per_key: BTreeMap<ModeKey, usize> = reports
        .iter()
        .flat_map(|r| r.modes.keys().cloned())
        .fold(BTreeMap::new(), |mut m, k| {
            *m.entry(k).or_insert(0) += 1;
            m
        });
    let fleet_modes: BTreeMap<ModeKey, ModeResult> = fleet_tallies
        .iter()
        .filter(|(k, _)| counts_per_key.get(*k) == Some(&n))
        .map(|(k, t)| (k.clone(), t.result(fleet_same)))
        .collect();
    let test_pages = reports.iter().map(|r| r.test_pages).sum();
    let fleet_ceiling = Ceiling::sum(&reports.iter().map(|r| r.ceiling).collect::<Vec<_>>());
    let fleet_constraint = topts.table.constraints.qpl_compatible.then(|| {
        ConstraintCost::sum(
            &reports
                .iter()
                .filter_map(|r| r.qpl_constraint)
                .collect::<Vec<_>>(),
        )
    });

    // Cross matrix: rows = tables, columns = workloads.
    let mut rows: Vec<String> = workloads
        .iter()
        .zip(&own)
        .filter(|(_, t)| t.is_some())
        .map(|(w, _)| w.name.clone())
        .collect();
    rows.push("fleet".into());
    rows.push("kernel-2024".into());
    let ratio = rows
        .iter()
        .map(|t| {
            cross_cols
                .iter()
                .map(|m| m.get(&ModeKey::table(t.clone())).map_or(0.0, |r| r.ratio))
                .collect()
        })
        .collect();
    let cross = CrossMatrix {
        tables: rows,
        workloads: workloads.iter().map(|w| w.name.clone()).collect(),
        ratio,
    };

    let clusters = clustering.as_ref().map(|c| {
        let key = ModeKey::BestOf(c.tables.len());
        let fleet_ratio = fleet_modes
            .get(&ModeKey::table("fleet"))
            .map_or(0.0, |r| r.ratio);
        let best = fleet_modes.get(&key).map_or(0.0, |r| r.ratio);
        ClusterReport {
            k: c.tables.len(),
            table_ids: c.tables.iter().map(|t| t.id()).collect(),
            train_pages_per_table: c.pages_per_table.clone(),
            iterations: c.iterations,
            fleet_ratio,
            best_of_k_ratio: best,
            gain_percent: if fleet_ratio > 0.0 {
                ((best / fleet_ratio - 1.0) * 10_000.0).round() / 100.0
            } else {
                0.0
            },
        }
    });

    // Fleet-wide smoothing comparison: total held-out bits with each
    // workload's own table per candidate.
    let smoothing = fleet_smoothing(&reports, &scans);

    // Provenance ratios.
    let mut workload_tables = Vec::new();
    for (i, t) in own.into_iter().enumerate() {
        if let Some(mut t) = t {
            for (k, r) in &reports[i].modes {
                if matches!(k, ModeKey::Canned(_) | ModeKey::Fixed | ModeKey::Dynamic(_)) {
                    t.provenance.ratios.insert(k.to_string(), r.ratio);
                }
            }
            t.provenance.training.insert(
                "test_fraction".into(),
                opts.train.split.test_fraction.into(),
            );
            t.provenance
                .training
                .insert("seed".into(), opts.train.split.seed.into());
            workload_tables.push(t);
        }
    }
    if let Some(r) = fleet_modes.get(&ModeKey::table("fleet")) {
        fleet
            .provenance
            .ratios
            .insert(ModeKey::Canned(Level::Fast).to_string(), r.ratio);
    }
    for k in [
        ModeKey::Fixed,
        ModeKey::Dynamic(Level::Fast),
        ModeKey::Dynamic(Level::Best),
    ] {
        if let Some(r) = fleet_modes.get(&k) {
            fleet.provenance.ratios.insert(k.to_string(), r.ratio);
        }
    }
    fleet.provenance.training.insert(
        "test_fraction".into(),
        opts.train.split.test_fraction.into(),
    );
    fleet
        .provenance
        .training
        .insert("seed".into(), opts.train.split.seed.into());
    let mut cluster_tables = clustering.map(|c| c.tables).unwrap_or_default();
    for t in &mut cluster_tables {
        t.provenance.corpus = Some(opts.corpus.clone());
    }

    let report = TrainReport {
        format: REPORT_FORMAT,
        version: 1,
        corpus: opts.corpus.clone(),
        options: options_map(opts),
        workloads: reports,
        fleet: FleetReport {
            table_id: fleet.id(),
            test_pages,
            modes: fleet_modes,
            ceiling: fleet_ceiling,
            qpl_constraint: fleet_constraint,
            refinement: fleet_steps,
        },
        cross,
        clusters,
        smoothing,
    };
    Ok(CorpusTraining {
        workload_tables,
        fleet_table: fleet,
        cluster_tables,
        report,
    })
}

fn fleet_smoothing(reports: &[WorkloadReport], scans: &[Scan]) -> Vec<SmoothingResult> {
    let mut total: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let mut order = Vec::new();
    for (r, s) in reports.iter().zip(scans) {
        for x in &r.smoothing {
            if !total.contains_key(&x.smoothing) {
                order.push(x.smoothing.clone());
            }
            let e = total.entry(x.smoothing.clone()).or_insert((0.0, 0));
            e.0 += x.bits_per_page * s.test.pages as f64;
            e.1 += s.test.pages;
        }
    }
    let mut out: Vec<SmoothingResult> = order
        .into_iter()
        .map(|k| {
            let (bits, pages) = total[&k];
            SmoothingResult {
                smoothing: k,
                bits_per_page: (bits / pages.max(1) as f64 * 100.0).round() / 100.0,
                excess_percent: 0.0,
            }
        })
        .collect();
    let best = out
        .iter()
        .map(|r| r.bits_per_page)
        .fold(f64::INFINITY, f64::min);
    for r in &mut out {
        r.excess_percent = ((r.bits_per_page / best - 1.0) * 10_000.0).round() / 100.0;
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{key, workload_pages};

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
