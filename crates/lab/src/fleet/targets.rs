//! The steps of [`super::train_corpus`] for training targets: with a
//! library target, each workload's table against the library's own under
//! the library's compressor (step 6b); with `target_matrix`, every
//! target's fleet table under every target's compressor (step 6c). The
//! gathering and measuring are [`cannery_trainer::target`]'s.

use cannery_codec::Table;

use super::{merge_scans, HeldOut, OwnTables};
use crate::report::{Chain, CorpusOptions, Progress, Workload};
use cannery_trainer::error::TrainError;
use cannery_trainer::refine::train_from_scan;
use cannery_trainer::target::{compare_under_target, Sizes, TargetComparison, TargetMatrix};
use cannery_trainer::TrainOptions;

/// Each workload's and the fleet's tables against the library's own tables,
/// under a library target's compressor.
pub(super) struct UnderTarget {
    pub(super) workloads: Vec<Option<TargetComparison>>,
    pub(super) fleet: Option<TargetComparison>,
}

/// Step 6b (library targets only): each workload's held-out pages (the same
/// sample as step 6) through the library's compressor with the workload's
/// table and with the table the library's own workflow makes from the same
/// training pages; the fleet row sums them.
pub(super) fn compare_under_target_all(
    workloads: &[Workload<'_>],
    own: &OwnTables,
    held_out: &HeldOut,
    topts: &TrainOptions,
) -> Result<UnderTarget, TrainError> {
    let model = topts.parse;
    let mut out = UnderTarget {
        workloads: Vec::new(),
        fleet: None,
    };
    if model.feature().is_none() {
        out.workloads = vec![None; workloads.len()];
        return Ok(out);
    }
    for (i, w) in workloads.iter().enumerate() {
        let c = match &own.tables[i] {
            Some(t) => Some(compare_under_target(
                w.source,
                topts.split,
                held_out.splits[i],
                model,
                t,
            )?),
            None => None,
        };
        if let Some(c) = &c {
            let f = out.fleet.get_or_insert(TargetComparison {
                target: c.target,
                compressor: c.compressor,
                cannery: Sizes::ZERO,
                library: Sizes::ZERO,
            });
            f.cannery = f.cannery.plus(c.cannery);
            f.library = f.library.plus(c.library);
        }
        out.workloads.push(c);
    }
    Ok(out)
}

/// Step 6c (`target_matrix` only): a fleet table for every target this
/// build can run, each under every such target's compressor.
pub(super) fn target_matrix(
    workloads: &[Workload<'_>],
    splits: &[cannery_trainer::Split],
    opts: &CorpusOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<TargetMatrix, TrainError> {
    let targets = cannery_trainer::target::available_targets();
    let mut tables = Vec::new();
    for &model in &targets {
        let mut topts = opts.train;
        topts.parse = model;
        // Every row's table must load into every column's compressor.
        topts = topts.for_parse(model);
        topts.qpl_compatible = true;
        topts.dictionary_samples = 0;
        topts.cluster_samples = 0;
        let mut scans = Vec::new();
        for w in workloads {
            progress(Progress::Scanning(&w.name));
            scans.push(cannery_trainer::scan::scan(&w.name, w.source, &topts)?);
        }
        let fleet_scan = merge_scans("fleet", &scans)?;
        fleet_scan.check_enough(topts.min_pages)?;
        progress(Progress::Training("fleet"));
        let chain = Chain(workloads.iter().map(|w| w.source).collect());
        tables.push(train_from_scan("fleet", &chain, &fleet_scan, &topts)?.0);
    }
    let rows: Vec<&Table> = tables.iter().collect();
    let mut sizes = vec![vec![Sizes::ZERO; targets.len()]; targets.len()];
    for (col, &model) in targets.iter().enumerate() {
        for (w, &split) in workloads.iter().zip(splits) {
            progress(Progress::Evaluating(&w.name));
            let got = cannery_trainer::target::compress_sizes(w.source, split, model, &rows)?;
            for (row, s) in got.into_iter().enumerate() {
                sizes[row][col] = sizes[row][col].plus(s);
            }
        }
    }
    Ok(TargetMatrix {
        targets: targets
            .iter()
            .map(|&m| cannery_trainer::target::target_name(m).expect("a target"))
            .collect(),
        sizes,
    })
}
