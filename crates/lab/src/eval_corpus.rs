//! One table evaluated on a corpus: what `cannery eval` prints and Python's
//! `cannery.evaluate` returns. For each workload, the table's ratios in
//! every mode beside the peers (and kernel-2024 at the fast parse), and its
//! drift against the workload's own optimal table; overall drift on all
//! workloads' counts merged ([`merge_all`]).
//!
//! It reads pages through [`PageSource`]s and returns a report; it trains
//! no table that it returns, writes nothing and prints nothing.

use std::collections::BTreeMap;

use serde::Serialize;

use cannery_codec::Table;

use crate::evaluate::{default_peers, drift, evaluate, Drift, EvalSpec, ModeResult};
use crate::mode_key::ModeKey;
use crate::report::Workload;
use cannery_trainer::error::TrainError;
use cannery_trainer::histogram::{Histogram, HistogramError};
use cannery_trainer::pages::{same_filled, PageSource, Part, Split};
use cannery_trainer::TrainOptions;

/// How [`eval_corpus`] evaluates.
#[derive(Clone, Copy, Debug)]
pub struct EvalOptions {
    /// Training's options: the train/test split (for `part`) and how the
    /// drift's reference table is built.
    pub train: TrainOptions,
    /// Which part of each workload to evaluate (`None`: every page).
    pub part: Option<Part>,
    /// Compare with the peer compressors (zstd, lz4, libdeflate, …).
    pub peers: bool,
    /// Pages evaluated per workload at most: a larger part is sampled by
    /// page hash (deterministic, as `train` samples its held-out pages).
    /// `None`: every page of the part.
    pub eval_pages: Option<u64>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            train: TrainOptions::default(),
            part: None,
            peers: true,
            eval_pages: None,
        }
    }
}

/// Seed offset of the evaluation sample, so it is independent of the split.
const SAMPLE_SEED: u64 = 0x5341_4d50_4c45; // "SAMPLE"

/// Pages of `source` in `part` of `split` (every page for `None`), not
/// counting zero and same-filled pages (zswap stores them without
/// compressing; `train` counts its held-out pages the same way).
fn pages_in_part(
    source: &dyn PageSource,
    split: Split,
    part: Option<Part>,
) -> Result<u64, TrainError> {
    let mut n = 0u64;
    for p in source.stream().map_err(TrainError::Source)? {
        let p = p.map_err(TrainError::Source)?;
        if same_filled(&p).is_none() && part.is_none_or(|part| split.part(&p) == part) {
            n += 1;
        }
    }
    Ok(n)
}

/// The sample that keeps about `want` of `have` pages, independent of
/// `split`'s parts: the test part of a split that starts with every page
/// and is cut down as `train` cuts its held-out pages.
fn sample_of(split: Split, have: u64, want: u64) -> Split {
    Split {
        test_fraction: 1.0,
        seed: split.seed ^ SAMPLE_SEED,
    }
    .test_sample(have, want)
}

/// One workload's results.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadEval {
    /// Workload name.
    pub name: String,
    /// Pages evaluated (not same-filled).
    pub pages: u64,
    /// With `eval_pages`: the pages of the part the evaluated ones were
    /// sampled from (zero and same-filled pages not counted); `None` when
    /// every page was evaluated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled_from: Option<u64>,
    /// Same-filled pages attributed to the evaluated pages (their share of
    /// the workload's, `crate::figures`).
    pub same_filled_pages: f64,
    /// Results by mode name.
    pub modes: BTreeMap<ModeKey, ModeResult>,
    /// Drift of the table against the workload's own table (`None` if no
    /// page was evaluated).
    pub drift: Option<Drift>,
}

/// The report (`format: "cannery-eval-report"`, `version: 1`).
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// Always "cannery-eval-report".
    pub format: &'static str,
    /// Format version.
    pub version: u32,
    /// The table's id.
    pub table_id: String,
    /// The table's name.
    pub table_name: Option<String>,
    /// The table's provenance.
    pub provenance: cannery_codec::table::Provenance,
    /// The corpus' name.
    pub corpus: String,
    /// Per workload.
    pub workloads: Vec<WorkloadEval>,
    /// Drift on every workload's pages together.
    pub drift: Option<Drift>,
}

/// The evaluation spec of one table: every level of `table`, kernel-2024 at
/// the fast parse (unless `table` is it), the baselines, and the peers
/// unless `opts.peers` is false (a zstd dictionary needs training pages, so
/// it is left out).
pub fn eval_spec<'a>(table: &'a Table, kernel: &'a Table, opts: &EvalOptions) -> EvalSpec<'a> {
    let mut spec = EvalSpec::held_out(opts.train.split, Some(table));
    spec.part = opts.part;
    spec.peers = if opts.peers {
        default_peers()
            .into_iter()
            .filter(|p| !p.needs_dictionary())
            .collect()
    } else {
        Vec::new()
    };
    if table != kernel {
        spec.fast_tables.push(("kernel-2024".into(), kernel));
    }
    spec
}

/// Merges histograms in order; `None` for none. Every one must have the
/// same settings.
pub fn merge_all<'a>(
    histograms: impl IntoIterator<Item = &'a Histogram>,
) -> Result<Option<Histogram>, HistogramError> {
    let mut merged: Option<Histogram> = None;
    for h in histograms {
        merged = Some(match merged {
            None => h.clone(),
            Some(m) => m.merged(h)?,
        });
    }
    Ok(merged)
}

/// Evaluates `table` on every workload; `progress` hears each workload's
/// name before it is evaluated.
pub fn eval_corpus(
    table: &Table,
    corpus: &str,
    workloads: &[Workload<'_>],
    opts: &EvalOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<EvalReport, TrainError> {
    let kernel = Table::kernel_2024();
    let base = eval_spec(table, &kernel, opts);
    let mut results = Vec::new();
    let mut counts = Vec::new();
    for w in workloads {
        progress(&w.name);
        let mut spec = base.clone();
        let mut sampled_from = None;
        if let Some(want) = opts.eval_pages {
            let have = pages_in_part(w.source, opts.train.split, opts.part)?;
            if want < have {
                sampled_from = Some(have);
                match opts.part {
                    // The held-out sample `train` evaluates, page for page.
                    Some(Part::Test) => spec.split = opts.train.split.test_sample(have, want),
                    _ => spec.sample = Some(sample_of(opts.train.split, have, want)),
                }
            }
        }
        let ev = evaluate(w.source, &spec)?;
        let same = ev.same_filled_attributed();
        let d = if ev.counts.pages > 0 {
            Some(drift(table, &ev.counts, &opts.train)?)
        } else {
            None
        };
        results.push(WorkloadEval {
            name: w.name.clone(),
            pages: ev.pages,
            sampled_from,
            same_filled_pages: same,
            modes: ev.results(),
            drift: d,
        });
        counts.push(ev.counts);
    }
    if results.iter().all(|w| w.pages == 0) {
        return Err(TrainError::NothingMeasured {
            what: corpus.into(),
            same_filled: results.iter().map(|w| w.same_filled_pages).sum(),
        });
    }
    let overall = match merge_all(&counts)? {
        Some(h) if h.pages > 0 => Some(drift(table, &h, &opts.train)?),
        _ => None,
    };
    Ok(EvalReport {
        format: "cannery-eval-report",
        version: 1,
        table_id: table.id(),
        table_name: table.name.clone(),
        provenance: table.provenance.clone(),
        corpus: corpus.into(),
        workloads: results,
        drift: overall,
    })
}

/// The drift of a table against one histogram file.
#[derive(Clone, Debug, Serialize)]
pub struct HistogramDrift {
    /// The histogram's name (its file).
    pub name: String,
    /// Pages it counts.
    pub pages: u64,
    /// The drift (`None` for a histogram of no pages).
    pub drift: Option<Drift>,
}

/// `cannery eval --histograms`: a table's drift against fleet histograms,
/// each and all together (`format: "cannery-eval-histograms"`, `version: 1`).
#[derive(Clone, Debug, Serialize)]
pub struct HistogramEvalReport {
    /// Always "cannery-eval-histograms".
    pub format: &'static str,
    /// Format version.
    pub version: u32,
    /// The table's id.
    pub table_id: String,
    /// The table's name.
    pub table_name: Option<String>,
    /// Per histogram, in the order given.
    pub histograms: Vec<HistogramDrift>,
    /// Drift against all of them merged (they must share their settings).
    pub drift: Option<Drift>,
}

/// The drift of `table` against each histogram of `named` and against all
/// of them merged: the bits per page the table costs above each one's own
/// optimal table, no pages needed.
pub fn eval_histograms(
    table: &Table,
    named: &[(String, Histogram)],
    opts: &TrainOptions,
) -> Result<HistogramEvalReport, TrainError> {
    let mut histograms = Vec::new();
    for (name, h) in named {
        histograms.push(HistogramDrift {
            name: name.clone(),
            pages: h.pages,
            drift: if h.pages > 0 {
                Some(drift(table, h, opts)?)
            } else {
                None
            },
        });
    }
    let overall = match merge_all(named.iter().map(|(_, h)| h))? {
        Some(h) if h.pages > 0 => Some(drift(table, &h, opts)?),
        _ => None,
    };
    Ok(HistogramEvalReport {
        format: "cannery-eval-histograms",
        version: 1,
        table_id: table.id(),
        table_name: table.name.clone(),
        histograms,
        drift: overall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode_key::key;
    use cannery_trainer::testutil::workload_pages;

    #[test]
    fn merge_all_sums_and_refuses_mixed_settings() {
        assert!(merge_all(std::iter::empty()).unwrap().is_none());
        let h = |n, style, seed| {
            let pages = workload_pages(n, style, seed);
            cannery_trainer::gather::gather_pages(
                &pages,
                cannery_trainer::ParseModel::Fast,
                None,
                &|_| true,
            )
            .unwrap()
        };
        let (a, b) = (h(10, 0, 1), h(12, 1, 2));
        let m = merge_all([&a, &b]).unwrap().unwrap();
        assert_eq!(m.pages, a.pages + b.pages);
        assert_eq!(m, a.clone().merged(&b).unwrap());
        let pages = workload_pages(5, 0, 3);
        let other = cannery_trainer::gather::gather_pages(
            &pages,
            cannery_trainer::ParseModel::Default,
            None,
            &|_| true,
        )
        .unwrap();
        assert!(merge_all([&a, &other]).is_err());
    }

    #[test]
    fn every_workload_is_reported_with_drift_and_the_overall_drift_covers_all() {
        let pages_a = workload_pages(40, 0, 1);
        let pages_b = workload_pages(40, 1, 2);
        let workloads = [
            Workload {
                name: "a".into(),
                source: &pages_a,
            },
            Workload {
                name: "b".into(),
                source: &pages_b,
            },
        ];
        let t = Table::kernel_2024();
        let opts = EvalOptions {
            peers: false,
            ..EvalOptions::default()
        };
        let mut heard = Vec::new();
        let r = eval_corpus(&t, "mini", &workloads, &opts, &mut |n| {
            heard.push(n.to_string())
        })
        .unwrap();
        assert_eq!(heard, ["a", "b"]);
        assert_eq!(r.workloads.len(), 2);
        for w in &r.workloads {
            assert_eq!(w.pages, 40);
            assert!(
                w.modes.contains_key(&key("canned-fast")),
                "{:?}",
                w.modes.keys()
            );
            assert!(w.drift.is_some());
        }
        assert_eq!(r.drift.as_ref().unwrap().pages, 80);
        // kernel-2024 evaluated with itself is not listed twice.
        assert!(!r.workloads[0]
            .modes
            .contains_key(&key("canned:kernel-2024")));
    }

    #[test]
    fn eval_pages_samples_each_workload_deterministically() {
        let pages = workload_pages(400, 0, 5);
        let workloads = [Workload {
            name: "a".into(),
            source: &pages,
        }];
        let t = Table::kernel_2024();
        let opts = |eval_pages| EvalOptions {
            peers: false,
            eval_pages,
            ..EvalOptions::default()
        };
        let run = |o: &EvalOptions| eval_corpus(&t, "m", &workloads, o, &mut |_| {}).unwrap();
        let r = run(&opts(Some(50)));
        let w = &r.workloads[0];
        assert_eq!(w.sampled_from, Some(400));
        assert!((25..=80).contains(&w.pages), "{} pages", w.pages);
        // The same sample every time.
        assert_eq!(run(&opts(Some(50))).workloads[0].pages, w.pages);
        // A sample no smaller than the workload is every page.
        let all = run(&opts(Some(400)));
        assert_eq!(all.workloads[0].sampled_from, None);
        assert_eq!(all.workloads[0].pages, 400);
        assert_eq!(run(&opts(None)).workloads[0].pages, 400);
    }

    #[test]
    fn histogram_drift_is_small_against_the_tables_own_statistics() {
        let gather = |n, style, seed| {
            let pages = workload_pages(n, style, seed);
            cannery_trainer::gather::gather_pages(
                &pages,
                cannery_trainer::ParseModel::Fast,
                None,
                &|_| true,
            )
            .unwrap()
        };
        let (a, b) = (gather(200, 0, 1), gather(200, 1, 2));
        let opts = TrainOptions::default();
        let own = cannery_trainer::train::table_from_histogram(&a, &opts, "a").unwrap();
        let named = vec![("a.json".to_string(), a.clone()), ("b.json".to_string(), b)];
        let r = eval_histograms(&own, &named, &opts).unwrap();
        assert_eq!(r.histograms.len(), 2);
        let da = r.histograms[0].drift.as_ref().unwrap();
        let db = r.histograms[1].drift.as_ref().unwrap();
        assert!(da.drift_percent < 0.5, "{}", da.drift_percent);
        assert!(
            db.drift_percent > da.drift_percent + 1.0,
            "{} vs {}",
            db.drift_percent,
            da.drift_percent
        );
        assert!(r.drift.is_some());
        let text = crate::render::histogram_eval_report(&r);
        assert!(
            text.contains("a.json (200 pages):") && text.contains("overall:"),
            "{text}"
        );
        // Histograms of different parses do not merge.
        let pages = workload_pages(20, 0, 3);
        let other = cannery_trainer::gather::gather_pages(
            &pages,
            cannery_trainer::ParseModel::Default,
            None,
            &|_| true,
        )
        .unwrap();
        let mixed = vec![("a".to_string(), a), ("o".to_string(), other)];
        assert!(eval_histograms(&own, &mixed, &opts).is_err());
    }
}
