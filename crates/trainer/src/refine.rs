//! A scanned workload's table, and the `best` refinement loop: parse the
//! fit pages with the current table's costs, rebuild the table from those
//! statistics, keep it while the canned `best` size of the validation pages
//! improves ([`refine_best`]). [`train_workload`] is scan + table +
//! refinement for one workload. The statistics are [`crate::scan`]'s; the
//! table construction [`crate::train`]'s.

use rayon::prelude::*;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};

use crate::error::TrainError;
use crate::gather::gather;
use crate::histogram::ParseModel;
use crate::options::TrainOptions;
use crate::pages::{for_each_chunk, same_filled, PageSource, Part, Split};
use crate::scan::{scan, Scan};
use crate::train::table_from_histogram;

/// One step of the `best` refinement loop.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RefineStep {
    /// 0 = the starting table (lazy parse statistics).
    pub iteration: usize,
    /// Id of the table of this step.
    pub table_id: String,
    /// Canned `best` bytes of the validation pages with this table.
    pub validation_bytes: u64,
    /// Whether the step's table was kept.
    pub accepted: bool,
}

/// Canned `best` size of the pages in `part` (same-filled skipped,
/// incompressible pages counted as 4096), in parallel.
pub fn canned_size<S: PageSource + ?Sized>(
    source: &S,
    split: &Split,
    part: Part,
    table: &Table,
    level: Level,
) -> Result<(u64, u64), TrainError> {
    // Fail early (and typed) if the table cannot be used.
    Encoder::new(Mode::Canned, Format::Iaa, level, Some(table))?;
    let mut total = (0u64, 0u64);
    for_each_chunk(source, |chunk| {
        let sizes: Vec<(u64, u64)> = chunk
            .par_chunks(16)
            .map(|task| {
                let mut e = Encoder::new(Mode::Canned, Format::Iaa, level, Some(table))
                    .expect("checked above");
                let mut out = Vec::with_capacity(PAGE_SIZE);
                let mut acc = (0u64, 0u64);
                for p in task {
                    if same_filled(p).is_some() || split.part(p) != part {
                        continue;
                    }
                    acc.0 += 1;
                    acc.1 += match e.compress(p, &mut out).expect("a page of 4096 bytes") {
                        Outcome::Compressed(n) => n as u64,
                        Outcome::Incompressible => PAGE_SIZE as u64,
                    };
                }
                acc
            })
            .collect();
        for s in sizes {
            total.0 += s.0;
            total.1 += s.1;
        }
        Ok(())
    })?;
    Ok(total)
}

/// The `best` refinement: parse the fit pages with the current table's
/// costs, rebuild the table from those statistics, and keep it while the
/// canned `best` size of the validation pages (training pages held back,
/// never the test pages) improves; at most `max_iterations` rounds. Without
/// validation pages the training pages' own size is the criterion.
pub fn refine_best<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    start: Table,
    opts: &TrainOptions,
) -> Result<(Table, Vec<RefineStep>), TrainError> {
    let (n_val, _) = canned_size(source, &opts.split, Part::Validation, &start, Level::Fast)?;
    let measure_on = if n_val > 0 {
        Part::Validation
    } else {
        Part::Train
    };
    let size = |t: &Table| -> Result<u64, TrainError> {
        Ok(canned_size(source, &opts.split, measure_on, t, Level::Best)?.1)
    };
    let mut best = start;
    let mut best_bytes = size(&best)?;
    let mut steps = vec![RefineStep {
        iteration: 0,
        table_id: best.id(),
        validation_bytes: best_bytes,
        accepted: true,
    }];
    let split = opts.split;
    for iteration in 1..=opts.max_refinements {
        let keep = move |p: &[u8]| split.part(p) == Part::Train;
        let h = gather(source, ParseModel::Best, Some(&best), &keep)?;
        let cand = table_from_histogram(&h, opts, name)?;
        if cand == best {
            break;
        }
        let bytes = size(&cand)?;
        let accepted = bytes < best_bytes;
        steps.push(RefineStep {
            iteration,
            table_id: cand.id(),
            validation_bytes: bytes,
            accepted,
        });
        if !accepted {
            break;
        }
        let gain = (best_bytes - bytes) as f64 / best_bytes as f64;
        best = cand;
        best_bytes = bytes;
        if gain < 0.001 {
            break;
        }
    }
    Ok((best, steps))
}

/// A workload's trained table and how it was made.
#[derive(Clone, Debug)]
pub struct Trained {
    /// The table (provenance filled with training parameters).
    pub table: Table,
    /// The scan.
    pub scan: Scan,
    /// `best` refinement steps (empty for other parse models).
    pub refinement: Vec<RefineStep>,
}

/// Scans a workload and trains its table (with refinement for `best`).
pub fn train_workload<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    opts: &TrainOptions,
) -> Result<Trained, TrainError> {
    let scan = scan(name, source, opts)?;
    scan.check_enough(opts.min_pages)?;
    let (table, refinement) = train_from_scan(name, source, &scan, opts)?;
    Ok(Trained {
        table,
        scan,
        refinement,
    })
}

/// The table of a scanned workload (or several, with `source` chaining them).
pub fn train_from_scan<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    scan: &Scan,
    opts: &TrainOptions,
) -> Result<(Table, Vec<RefineStep>), TrainError> {
    let mut table_opts = *opts;
    if opts.parse == ParseModel::Best {
        // The fit set may be a little under the minimum when training is just enough.
        table_opts.min_pages = table_opts.min_pages.min(scan.fit.pages.max(1));
        let start = table_from_histogram(&scan.fit, &table_opts, name)?;
        let (mut t, steps) = refine_best(name, source, start, &table_opts)?;
        t.provenance
            .training
            .insert("parse".into(), ParseModel::Best.name().into());
        Ok((t, steps))
    } else {
        Ok((
            table_from_histogram(&scan.train, &table_opts, name)?,
            Vec::new(),
        ))
    }
}
