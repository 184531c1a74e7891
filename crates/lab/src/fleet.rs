//! A whole corpus trained and evaluated, [`train_corpus`], as a short
//! sequence of named steps: the options for the corpus, scan each workload,
//! train each workload's table, the fleet table, the K cluster tables and
//! the zstd dictionaries, evaluate every workload's held-out pages (for a
//! library target also under the library's compressor against its own
//! tables; with `target_matrix` every target's fleet table under every
//! target's compressor), sum the fleet, build the cross-workload matrix and
//! the best-of-K result, compare smoothings fleet-wide, and stamp the
//! tables' provenance. The report
//! types are [`crate::report`]'s; this module computes and prints nothing.
//!
//! A workload with too few pages for its own table is not fatal: it is
//! listed under `skipped` with the reason, evaluated with the fleet table,
//! and its pages still count for the fleet. The fleet as a whole must have
//! enough pages.

use std::collections::BTreeMap;

use cannery_codec::{Level, Table};
use cannery_engines::peer::train_zstd_dictionary;

use crate::evaluate::{evaluate, Ceiling, ConstraintCost, EvalSpec, ModeResult, Tally};
use crate::mode_key::ModeKey;
use crate::report::{
    Chain, ClusterReport, CorpusOptions, CorpusTraining, CrossMatrix, FleetReport, Progress,
    TrainReport, Workload, WorkloadReport, CLUSTER_SAMPLE_PAGES, REPORT_FORMAT,
};
use cannery_trainer::cluster::{cluster, Clustering};
use cannery_trainer::error::TrainError;
use cannery_trainer::histogram::Histogram;
use cannery_trainer::refine::{train_from_scan, RefineStep};
use cannery_trainer::scan::{scan, Scan};
use cannery_trainer::train::{evaluate_smoothings, mark_excess, SmoothingResult};
use cannery_trainer::TrainOptions;

mod targets;
use targets::{compare_under_target_all, target_matrix};

/// Trains and evaluates a corpus: see the module documentation.
pub fn train_corpus(
    workloads: &[Workload<'_>],
    opts: &CorpusOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<CorpusTraining, TrainError> {
    let topts = corpus_train_options(opts, workloads.len())?;
    let scans = scan_workloads(workloads, opts, &topts, progress)?;
    let own = train_workload_tables(workloads, &scans, opts, &topts, progress)?;
    let (fleet_scan, mut fleet, fleet_steps) =
        train_fleet_table(workloads, &scans, opts, &topts, progress)?;
    let clustering = train_clusters(&fleet_scan, opts, &topts, progress)?;
    let dictionaries = train_dictionaries(&scans, opts, topts.dictionary_size);
    let dictionary_files = dictionary_files(&scans, &dictionaries, opts, topts.dictionary_size);
    let mut held_out = evaluate_held_out(
        workloads,
        &scans,
        &own,
        &fleet,
        clustering.as_ref(),
        &dictionaries,
        opts,
        &topts,
        progress,
    )?;
    let under_target = compare_under_target_all(workloads, &own, &held_out, &topts)?;
    let target_matrix = if opts.target_matrix {
        Some(target_matrix(workloads, &held_out.splits, opts, progress)?)
    } else {
        None
    };
    for (r, c) in held_out.reports.iter_mut().zip(&under_target.workloads) {
        r.under_target = c.clone();
    }
    let fleet_modes = fleet_modes(&held_out, workloads.len());
    let cross = cross_matrix(workloads, &own.tables, &held_out.cross_cols);
    let clusters = clustering.as_ref().map(|c| cluster_report(c, &fleet_modes));
    let smoothing = fleet_smoothing(&held_out.reports, &scans);
    let reports = held_out.reports;
    let workload_tables = stamp_workload_tables(own.tables, &reports, opts);
    stamp_fleet_table(&mut fleet, &fleet_modes, opts);
    let mut cluster_tables = clustering.map(|c| c.tables).unwrap_or_default();
    for t in &mut cluster_tables {
        t.provenance.corpus = Some(opts.corpus.clone());
    }
    let fleet_ceiling = Ceiling::sum(&reports.iter().map(|r| r.ceiling).collect::<Vec<_>>());
    let fleet_report = FleetReport {
        table_id: fleet.id(),
        test_pages: reports.iter().map(|r| r.test_pages).sum(),
        targets: crate::report::check_targets(&fleet_modes, &fleet_ceiling),
        ceiling: fleet_ceiling,
        qpl_constraint: topts.qpl_compatible.then(|| {
            ConstraintCost::sum(
                &reports
                    .iter()
                    .filter_map(|r| r.qpl_constraint)
                    .collect::<Vec<_>>(),
            )
        }),
        modes: fleet_modes,
        refinement: fleet_steps,
    };
    let report = TrainReport {
        format: REPORT_FORMAT,
        version: 1,
        corpus: opts.corpus.clone(),
        options: options_map(opts, &topts),
        workloads: reports,
        fleet: fleet_report,
        cross,
        clusters,
        smoothing,
        under_target: under_target.fleet,
        target_matrix,
    };
    Ok(CorpusTraining {
        workload_tables,
        fleet_table: fleet,
        cluster_tables,
        dictionaries: dictionary_files,
        report,
    })
}

/// The training options for this corpus: cluster samples shared out over
/// the workloads, no dictionary samples without peers.
fn corpus_train_options(
    opts: &CorpusOptions,
    workloads: usize,
) -> Result<TrainOptions, TrainError> {
    if opts.tables == 0 || opts.tables > cannery_trainer::cluster::MAX_TABLES {
        return Err(TrainError::BadTableCount {
            found: opts.tables,
            max: cannery_trainer::cluster::MAX_TABLES,
        });
    }
    let mut topts = opts.train;
    if opts.tables > 1 {
        topts.cluster_samples = CLUSTER_SAMPLE_PAGES / workloads.max(1);
    }
    if !opts.peers && !opts.dictionaries {
        topts.dictionary_samples = 0;
    } else {
        let share = crate::report::FLEET_DICTIONARY_SAMPLES / workloads.max(1);
        topts.dictionary_samples = topts.dictionary_samples.min(share.max(128));
    }
    // The parse's smoothing; a table for another library must load into it unchanged.
    topts = topts.for_parse(topts.parse);
    Ok(topts)
}

/// Step 1: every workload's pages split and counted.
fn scan_workloads(
    workloads: &[Workload<'_>],
    opts: &CorpusOptions,
    topts: &TrainOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<Scan>, TrainError> {
    let mut scans = Vec::new();
    for w in workloads {
        progress(Progress::Scanning(&w.name));
        scans.push(scan(&w.name, w.source, topts)?);
    }
    if scans.is_empty() {
        return Err(TrainError::Empty {
            what: opts.corpus.clone(),
            needed: topts.min_pages,
        });
    }
    Ok(scans)
}

/// Each workload's own table, or why it has none.
struct OwnTables {
    tables: Vec<Option<Table>>,
    skipped: Vec<Option<String>>,
    refinements: Vec<Vec<RefineStep>>,
}

/// Step 2: a table per workload with enough pages.
fn train_workload_tables(
    workloads: &[Workload<'_>],
    scans: &[Scan],
    opts: &CorpusOptions,
    topts: &TrainOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<OwnTables, TrainError> {
    let mut own = OwnTables {
        tables: Vec::new(),
        skipped: Vec::new(),
        refinements: Vec::new(),
    };
    for (w, s) in workloads.iter().zip(scans) {
        match s.check_enough(topts.min_pages) {
            Ok(()) => {
                progress(Progress::Training(&w.name));
                let (mut t, steps) = train_from_scan(&w.name, w.source, s, topts)?;
                t.provenance.corpus = Some(format!("{}/{}", opts.corpus, w.name));
                own.tables.push(Some(t));
                own.skipped.push(None);
                own.refinements.push(steps);
            }
            Err(
                e @ (TrainError::TooFewPages { .. }
                | TrainError::Empty { .. }
                | TrainError::AllSameFilled { .. }),
            ) => {
                progress(Progress::Skipped(&w.name));
                own.tables.push(None);
                own.skipped.push(Some(e.to_string()));
                own.refinements.push(Vec::new());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(own)
}

/// Step 3: the fleet table over every workload's pages (with its scan).
fn train_fleet_table(
    workloads: &[Workload<'_>],
    scans: &[Scan],
    opts: &CorpusOptions,
    topts: &TrainOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(Scan, Table, Vec<RefineStep>), TrainError> {
    let fleet_scan = merge_scans("fleet", scans)?;
    fleet_scan.check_enough(topts.min_pages)?;
    progress(Progress::Training("fleet"));
    let chain = Chain(workloads.iter().map(|w| w.source).collect());
    let (mut fleet, steps) = train_from_scan("fleet", &chain, &fleet_scan, topts)?;
    fleet.provenance.corpus = Some(opts.corpus.clone());
    Ok((fleet_scan, fleet, steps))
}

/// Step 4: K tables by clustering the fleet's sampled pages (K > 1 only).
fn train_clusters(
    fleet_scan: &Scan,
    opts: &CorpusOptions,
    topts: &TrainOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Option<Clustering>, TrainError> {
    if opts.tables <= 1 {
        return Ok(None);
    }
    progress(Progress::Training("clusters"));
    Ok(Some(cluster(
        &fleet_scan.page_counts,
        opts.tables,
        opts.train.split.seed,
        topts,
        "cluster",
    )?))
}

/// Step 5: each workload's zstd dictionary (zstd's trainer is
/// single-threaded, so all workloads train at once).
fn train_dictionaries(scans: &[Scan], opts: &CorpusOptions, size: usize) -> Vec<Option<Vec<u8>>> {
    use rayon::prelude::*;
    scans
        .par_iter()
        .map(|s| {
            if (opts.peers || opts.dictionaries) && !s.dictionary_samples.is_empty() {
                let refs: Vec<&[u8]> = s.dictionary_samples.iter().map(|p| &p[..]).collect();
                train_zstd_dictionary(&refs, size)
            } else {
                None
            }
        })
        .collect()
}

/// The dictionaries `train` writes: each workload's (where zstd's trainer
/// made one), then the fleet's, trained on every workload's samples (their
/// per-workload share keeps the fleet's samples bounded).
fn dictionary_files(
    scans: &[Scan],
    dictionaries: &[Option<Vec<u8>>],
    opts: &CorpusOptions,
    size: usize,
) -> Vec<(String, Vec<u8>)> {
    if !opts.dictionaries {
        return Vec::new();
    }
    let mut out: Vec<(String, Vec<u8>)> = scans
        .iter()
        .zip(dictionaries)
        .filter_map(|(s, d)| Some((s.name.clone(), d.clone()?)))
        .collect();
    let refs: Vec<&[u8]> = scans
        .iter()
        .flat_map(|s| s.dictionary_samples.iter().map(|p| &p[..]))
        .collect();
    if let Some(d) = train_zstd_dictionary(&refs, size) {
        out.push(("fleet".into(), d));
    }
    out
}

/// What the held-out evaluation gives.
struct HeldOut {
    reports: Vec<WorkloadReport>,
    /// Every mode's tally summed over workloads.
    fleet_tallies: BTreeMap<ModeKey, Tally>,
    /// Same-filled pages attributed over all workloads.
    fleet_same: f64,
    /// Each workload's results, its own table as `canned:<name>` too.
    cross_cols: Vec<BTreeMap<ModeKey, ModeResult>>,
    /// Each workload's split of the pages evaluated (sampled or not).
    splits: Vec<cannery_trainer::Split>,
}

/// Step 6: every workload's held-out pages with its own table (the fleet
/// table if it has none), every other table at the fast parse, the
/// baselines and the peers.
#[allow(clippy::too_many_arguments)]
fn evaluate_held_out(
    workloads: &[Workload<'_>],
    scans: &[Scan],
    own: &OwnTables,
    fleet: &Table,
    clustering: Option<&Clustering>,
    dictionaries: &[Option<Vec<u8>>],
    opts: &CorpusOptions,
    topts: &TrainOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<HeldOut, TrainError> {
    let kernel = Table::kernel_2024();
    let mut out = HeldOut {
        reports: Vec::new(),
        fleet_tallies: BTreeMap::new(),
        fleet_same: 0.0,
        cross_cols: Vec::new(),
        splits: Vec::new(),
    };
    for (i, (w, s)) in workloads.iter().zip(scans).enumerate() {
        progress(Progress::Evaluating(&w.name));
        let main = own.tables[i].as_ref().unwrap_or(fleet);
        let split = match opts.eval_pages {
            Some(n) => opts.train.split.test_sample(
                s.test.pages,
                crate::report::eval_pages_per_workload(n, workloads.len()),
            ),
            None => opts.train.split,
        };
        out.splits.push(split);
        let mut spec = EvalSpec::held_out(split, Some(main));
        if !opts.peers {
            spec.peers.clear();
        }
        spec.dictionary = dictionaries[i].as_deref();
        spec.fast_tables.push(("fleet".into(), fleet));
        spec.fast_tables.push(("kernel-2024".into(), &kernel));
        for (j, t) in own.tables.iter().enumerate() {
            if let (Some(t), true) = (t, j != i) {
                spec.fast_tables.push((workloads[j].name.clone(), t));
            }
        }
        if let Some(c) = clustering {
            let base = spec.fast_tables.len();
            for (j, t) in c.tables.iter().enumerate() {
                spec.fast_tables.push((format!("cluster-{j}"), t));
            }
            spec.best_of = Some((base..base + c.tables.len()).collect());
        }
        let ev = evaluate(w.source, &spec)?;
        out.fleet_same += ev.same_filled_attributed();
        let mut modes = ev.results();
        // Fleet "canned-<level>" sums each workload's own table (the
        // fleet table for skipped workloads).
        for (k, t) in &ev.tallies {
            let e = out.fleet_tallies.entry(k.clone()).or_default();
            *e = e.plus(*t);
        }
        // The workload's own table on its own pages, for the cross matrix.
        if let Some(r) = modes.get(&ModeKey::Canned(Level::Fast)).copied() {
            modes.entry(ModeKey::table(w.name.clone())).or_insert(r);
        }
        out.cross_cols.push(modes.clone());
        let ceiling = Ceiling::of(main, &ev.counts, topts);
        out.reports.push(WorkloadReport {
            name: w.name.clone(),
            pages_read: s.pages_read,
            same_filled_pages: s.same_filled,
            train_pages: s.train.pages,
            test_pages: ev.pages,
            held_out_pages: s.test.pages,
            table_id: own.tables[i].as_ref().map(|t| t.id()),
            skipped: own.skipped[i].clone(),
            targets: crate::report::check_targets(&modes, &ceiling),
            modes,
            ceiling,
            qpl_constraint: (topts.qpl_compatible && own.tables[i].is_some())
                .then(|| ConstraintCost::of(&s.train, &ev.counts, topts)),
            refinement: own.refinements[i].clone(),
            smoothing: evaluate_smoothings(&s.train, &s.test, topts),
            under_target: None,
        });
    }
    Ok(out)
}

/// Step 7: the fleet's results, summed over workloads, for the modes every
/// workload measured.
fn fleet_modes(held_out: &HeldOut, workloads: usize) -> BTreeMap<ModeKey, ModeResult> {
    let mut counts: BTreeMap<&ModeKey, usize> = BTreeMap::new();
    for r in &held_out.reports {
        for k in r.modes.keys() {
            *counts.entry(k).or_insert(0) += 1;
        }
    }
    held_out
        .fleet_tallies
        .iter()
        .filter(|(k, _)| counts.get(k) == Some(&workloads))
        .map(|(k, t)| (k.clone(), t.result(held_out.fleet_same)))
        .collect()
}

/// Step 8: canned-fast ratio of each table (rows: the workloads' own, then
/// fleet and kernel-2024) on each workload's held-out pages (columns).
fn cross_matrix(
    workloads: &[Workload<'_>],
    own: &[Option<Table>],
    cols: &[BTreeMap<ModeKey, ModeResult>],
) -> CrossMatrix {
    let mut rows: Vec<String> = workloads
        .iter()
        .zip(own)
        .filter(|(_, t)| t.is_some())
        .map(|(w, _)| w.name.clone())
        .collect();
    rows.push("fleet".into());
    rows.push("kernel-2024".into());
    let ratio = rows
        .iter()
        .map(|t| {
            cols.iter()
                .map(|m| m.get(&ModeKey::table(t.clone())).map_or(0.0, |r| r.ratio))
                .collect()
        })
        .collect();
    CrossMatrix {
        tables: rows,
        workloads: workloads.iter().map(|w| w.name.clone()).collect(),
        ratio,
    }
}

/// Step 9: best-of-K against the fleet table.
fn cluster_report(c: &Clustering, fleet_modes: &BTreeMap<ModeKey, ModeResult>) -> ClusterReport {
    let fleet_ratio = fleet_modes
        .get(&ModeKey::table("fleet"))
        .map_or(0.0, |r| r.ratio);
    let best = fleet_modes
        .get(&ModeKey::BestOf(c.tables.len()))
        .map_or(0.0, |r| r.ratio);
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
}

/// Step 10: total held-out bits with each workload's own table, per
/// smoothing candidate, and each candidate's excess over the best.
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
    mark_excess(&mut out);
    for r in &mut out {
        r.excess_percent = (r.excess_percent * 100.0).round() / 100.0;
    }
    out
}

/// The split a table was evaluated with, in its provenance.
fn stamp_split(t: &mut Table, opts: &CorpusOptions) {
    let training = &mut t.provenance.training;
    training.insert(
        "test_fraction".into(),
        opts.train.split.test_fraction.into(),
    );
    training.insert("seed".into(), opts.train.split.seed.into());
}

/// Step 11: each workload table with its held-out ratios and split.
fn stamp_workload_tables(
    own: Vec<Option<Table>>,
    reports: &[WorkloadReport],
    opts: &CorpusOptions,
) -> Vec<Table> {
    own.into_iter()
        .zip(reports)
        .filter_map(|(t, r)| {
            let mut t = t?;
            for (k, m) in &r.modes {
                if matches!(k, ModeKey::Canned(_) | ModeKey::Fixed | ModeKey::Dynamic(_)) {
                    t.provenance.ratios.insert(k.to_string(), m.ratio);
                }
            }
            stamp_split(&mut t, opts);
            Some(t)
        })
        .collect()
}

/// Step 12: the fleet table with its fleet-wide ratios and split.
fn stamp_fleet_table(
    fleet: &mut Table,
    modes: &BTreeMap<ModeKey, ModeResult>,
    opts: &CorpusOptions,
) {
    if let Some(r) = modes.get(&ModeKey::table("fleet")) {
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
        if let Some(r) = modes.get(&k) {
            fleet.provenance.ratios.insert(k.to_string(), r.ratio);
        }
    }
    stamp_split(fleet, opts);
}

/// The options as the report states them (`topts`: as used for this corpus).
fn options_map(
    o: &CorpusOptions,
    topts: &TrainOptions,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = topts.provenance_map();
    m.insert("parse".into(), o.train.parse.name().into());
    m.insert("test_fraction".into(), o.train.split.test_fraction.into());
    m.insert("seed".into(), o.train.split.seed.into());
    m.insert("tables".into(), o.tables.into());
    m
}

/// Several workloads' scans as one (the fleet's).
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
