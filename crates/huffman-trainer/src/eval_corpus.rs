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

use crate::error::TrainError;
use crate::evaluate::{default_peers, drift, evaluate, Drift, EvalSpec, ModeResult};
use crate::histogram::{Histogram, HistogramError};
use crate::mode_key::ModeKey;
use crate::pages::{Part, Split};
use crate::report::Workload;
use crate::train::TableOptions;
use cannery_codec::peer::PeerKind;

/// How [`eval_corpus`] evaluates.
#[derive(Clone, Copy, Debug)]
pub struct EvalOptions {
    /// The train/test split, for `part`.
    pub split: Split,
    /// Which part of each workload to evaluate (`None`: every page).
    pub part: Option<Part>,
    /// Compare with the peer compressors (zstd, lz4, libdeflate, …).
    pub peers: bool,
    /// How the drift's reference table is built.
    pub table: TableOptions,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            split: Split::default(),
            part: None,
            peers: true,
            table: TableOptions::default(),
        }
    }
}

/// One workload's results.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadEval {
    /// Workload name.
    pub name: String,
    /// Pages evaluated (not same-filled).
    pub pages: u64,
    /// Same-filled pages attributed to the evaluated pages (their share of
    /// the workload's, `cannery_codec::figures`).
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
    let mut spec = EvalSpec::held_out(opts.split, Some(table));
    spec.part = opts.part;
    spec.peers = if opts.peers {
        default_peers()
            .into_iter()
            .filter(|p| !matches!(p, PeerKind::ZstdDict(_)))
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
    let spec = eval_spec(table, &kernel, opts);
    let mut results = Vec::new();
    let mut counts = Vec::new();
    for w in workloads {
        progress(&w.name);
        let ev = evaluate(w.source, &spec)?;
        let same = ev.same_filled_attributed();
        let d = if ev.counts.pages > 0 {
            Some(drift(table, &ev.counts, &opts.table)?)
        } else {
            None
        };
        results.push(WorkloadEval {
            name: w.name.clone(),
            pages: ev.pages,
            same_filled_pages: same,
            modes: ev.results(),
            drift: d,
        });
        counts.push(ev.counts);
    }
    let overall = match merge_all(&counts)? {
        Some(h) if h.pages > 0 => Some(drift(table, &h, &opts.table)?),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{key, workload_pages};

    #[test]
    fn merge_all_sums_and_refuses_mixed_settings() {
        assert!(merge_all(std::iter::empty()).unwrap().is_none());
        let h = |n, style, seed| {
            let pages = workload_pages(n, style, seed);
            crate::gather::gather_pages(&pages, crate::ParseModel::Fast, None, &|_| true)
        };
        let (a, b) = (h(10, 0, 1), h(12, 1, 2));
        let m = merge_all([&a, &b]).unwrap().unwrap();
        assert_eq!(m.pages, a.pages + b.pages);
        assert_eq!(m, a.clone().merged(&b).unwrap());
        let pages = workload_pages(5, 0, 3);
        let other =
            crate::gather::gather_pages(&pages, crate::ParseModel::Default, None, &|_| true);
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
}
