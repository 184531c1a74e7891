//! Training and evaluation: `train`, `train_with_report`,
//! `train_from_histogram`, `_evaluate` and `_cross_evaluate` (the public
//! `evaluate` / `cross_evaluate` in `cannery/__init__.py` wrap the last two
//! into pandas DataFrames), all calling `cannery_trainer` with the GIL
//! released. Options and defaults are those of `cannery train` / `cannery
//! eval`; no training or evaluation logic lives here.

use cannery_lab::eval_corpus::{eval_corpus, EvalOptions};
use cannery_lab::evaluate::{evaluate, EvalSpec, ModeResult};
use cannery_lab::fleet::train_corpus;
use cannery_lab::report::{CorpusOptions, Workload};
use cannery_lab::ModeKey;
use cannery_trainer::pages::{Part, Split};
use cannery_trainer::train::table_from_histogram;
use cannery_trainer::TrainOptions;
use cannery_trainer::{ParseModel, TrainError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{error, invalid, Kind};
use crate::histogram::{parse_model, table_options, train_error, PyHistogram};
use crate::progress::Progress;
use crate::sources::{corpus_arg, Source};
use crate::table::PyTable;

fn split(test_fraction: f64, seed: u64) -> PyResult<Split> {
    Split::new(test_fraction, seed).map_err(train_error)
}

fn json_to_py<'py>(py: Python<'py>, v: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| error(Kind::Cannery, e))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// What [`run_training`] gives: the tables by name, the report, and the
/// dictionaries (with `dictionaries`).
type Trained<'py> = (
    Bound<'py, PyDict>,
    cannery_lab::report::TrainReport,
    Vec<(String, Vec<u8>)>,
);

#[allow(clippy::too_many_arguments)]
fn run_training<'py>(
    py: Python<'py>,
    corpus: &Bound<'py, PyAny>,
    test_fraction: f64,
    seed: u64,
    parse: &str,
    tables: usize,
    peers: bool,
    smoothing: Option<&str>,
    qpl_compatible: bool,
    all_distances: bool,
    eval_pages: Option<u64>,
    progress: Option<PyObject>,
    dictionaries: bool,
) -> PyResult<Trained<'py>> {
    let topts = TrainOptions {
        parse: parse_model(parse)?,
        split: split(test_fraction, seed)?,
        ..table_options(smoothing, qpl_compatible, all_distances)?
    };
    let arg = corpus_arg(corpus)?;
    let sources = arg.sources()?;
    let workloads: Vec<Workload<'_>> = sources
        .iter()
        .map(|(name, s)| Workload {
            name: name.clone(),
            source: s,
        })
        .collect();
    let opts = CorpusOptions {
        corpus: arg.name.clone(),
        train: topts,
        tables,
        peers,
        eval_pages,
        target_matrix: false,
        dictionaries,
    };
    let mut bar = Progress::new(
        progress,
        cannery_lab::report::Progress::steps(workloads.len(), tables),
    );
    let out = py
        .allow_threads(|| train_corpus(&workloads, &opts, &mut |p| bar.step(&p.to_string())))
        .map_err(train_error)?;
    bar.finish()?;
    let dicts = out.dictionaries;
    let d = PyDict::new(py);
    for t in out
        .workload_tables
        .into_iter()
        .chain(std::iter::once(out.fleet_table))
        .chain(out.cluster_tables)
    {
        let name = t.name.clone().unwrap_or_else(|| t.id());
        d.set_item(name, PyTable::new(t))?;
    }
    Ok((d, out.report, dicts))
}

/// Trains one table per workload of `corpus` plus a `"fleet"` table over
/// all of them, and returns them by name (workloads with too few pages get
/// no table of their own; `tables=K > 1` adds `"cluster-0"` ...).
///
/// `corpus` is a corpus directory or page file (a bare name is looked up
/// under `corpora/`), or a dict of workload name -> path, list of paths, or
/// pages. Options are those of `cannery train`: `test_fraction` of pages
/// held out by content hash (`seed`), `parse` model ("fast", "default",
/// "best"), `tables` (K), `peers` (also measure zstd/lz4/libdeflate in the
/// report: `train_with_report` only, as `train` returns no report),
/// `smoothing` ("add-one", "uniform:M", "prior:M"; None = the parse's
/// default: prior:0.005, add-one for a library target), `qpl_compatible`, `all_distances`, `eval_pages` (held-out
/// pages evaluated per workload at most, a hash-chosen sample; None = all)
/// and `progress`, a callable `progress(step, done, total)` called as each
/// step begins (`"scanning redis"`, `"training fleet"`, …; `done` counts
/// the steps begun), e.g. `lambda step, done, total: print(done, total,
/// step)`, or a tqdm bar's `bar.total = total; bar.update(done - bar.n)`.
#[pyfunction]
#[pyo3(signature = (corpus, *, test_fraction=0.2, seed=0, parse="fast", tables=1, peers=true,
    smoothing=None, qpl_compatible=false, all_distances=false,
    eval_pages=Some(cannery_lab::report::DEFAULT_EVAL_PAGES), progress=None),
    text_signature = "(corpus, *, test_fraction=0.2, seed=0, parse='fast', tables=1, peers=True, \
        smoothing=None, qpl_compatible=False, all_distances=False, eval_pages=1000, progress=None)")]
#[allow(clippy::too_many_arguments)]
pub fn train<'py>(
    py: Python<'py>,
    corpus: &Bound<'py, PyAny>,
    test_fraction: f64,
    seed: u64,
    parse: &str,
    tables: usize,
    peers: bool,
    smoothing: Option<&str>,
    qpl_compatible: bool,
    all_distances: bool,
    eval_pages: Option<u64>,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    // The tables do not depend on `peers` (the report does, and is dropped).
    let _ = peers;
    let (d, _, _) = run_training(
        py,
        corpus,
        test_fraction,
        seed,
        parse,
        tables,
        false,
        smoothing,
        qpl_compatible,
        all_distances,
        eval_pages,
        progress,
        false,
    )?;
    Ok(d)
}

/// The dictionaries `cannery train` writes (`NAME.dict`, `fleet.dict`), by
/// workload name plus `"fleet"`, as bytes: zstd's trainer on the same
/// training pages (the same `test_fraction` and `seed` split) as `train`'s
/// tables, at most 32 KiB each, in the form zram's `algorithm_params
/// dict=` and `zstd -D` load (and the `zstd-1-dict` and `lz4-dict` peers
/// use). A workload zstd's trainer cannot learn from has none.
#[pyfunction]
#[pyo3(signature = (corpus, *, test_fraction=0.2, seed=0, progress=None),
    text_signature = "(corpus, *, test_fraction=0.2, seed=0, progress=None)")]
pub fn train_dictionaries<'py>(
    py: Python<'py>,
    corpus: &Bound<'py, PyAny>,
    test_fraction: f64,
    seed: u64,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let (_, _, dicts) = run_training(
        py,
        corpus,
        test_fraction,
        seed,
        "fast",
        1,
        false,
        None,
        false,
        false,
        Some(1),
        progress,
        true,
    )?;
    let d = PyDict::new(py);
    for (name, bytes) in dicts {
        d.set_item(name, pyo3::types::PyBytes::new(py, &bytes))?;
    }
    Ok(d)
}

/// Like `train`, also returning the training report as a dict (held-out
/// results per workload and mode, fleet totals, the cross-workload matrix,
/// refinement steps, smoothing comparison, targets met or missed) in the
/// `cannery train --json` shape. Same arguments and defaults as `train`.
#[pyfunction]
#[pyo3(signature = (corpus, *, test_fraction=0.2, seed=0, parse="fast", tables=1, peers=true,
    smoothing=None, qpl_compatible=false, all_distances=false,
    eval_pages=Some(cannery_lab::report::DEFAULT_EVAL_PAGES), progress=None),
    text_signature = "(corpus, *, test_fraction=0.2, seed=0, parse='fast', tables=1, peers=True, \
        smoothing=None, qpl_compatible=False, all_distances=False, eval_pages=1000, progress=None)")]
#[allow(clippy::too_many_arguments)]
pub fn train_with_report<'py>(
    py: Python<'py>,
    corpus: &Bound<'py, PyAny>,
    test_fraction: f64,
    seed: u64,
    parse: &str,
    tables: usize,
    peers: bool,
    smoothing: Option<&str>,
    qpl_compatible: bool,
    all_distances: bool,
    eval_pages: Option<u64>,
    progress: Option<PyObject>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyAny>)> {
    let (d, report, _) = run_training(
        py,
        corpus,
        test_fraction,
        seed,
        parse,
        tables,
        peers,
        smoothing,
        qpl_compatible,
        all_distances,
        eval_pages,
        progress,
        false,
    )?;
    Ok((d, json_to_py(py, &report)?))
}

/// A table from a histogram (for example the sum of histograms gathered
/// on many hosts): the trainer's smoothing, optimal length-limited codes
/// and IAA checks. Raises TrainError if it holds too few pages.
#[pyfunction]
#[pyo3(signature = (histogram, *, name="fleet", smoothing=None, qpl_compatible=false,
    all_distances=false))]
pub fn train_from_histogram(
    py: Python<'_>,
    histogram: PyRef<'_, PyHistogram>,
    name: &str,
    smoothing: Option<&str>,
    qpl_compatible: bool,
    all_distances: bool,
) -> PyResult<PyTable> {
    let opts = table_options(smoothing, qpl_compatible, all_distances)?;
    let h = &histogram.inner;
    py.allow_threads(|| table_from_histogram(h, &opts, name))
        .map(PyTable::new)
        .map_err(train_error)
}

fn part_arg(part: &str) -> PyResult<Option<Part>> {
    Part::selection(part).map_err(invalid)
}

fn row<'py>(
    py: Python<'py>,
    keys: &[(&str, &str)],
    r: &ModeResult,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in keys {
        d.set_item(*k, *v)?;
    }
    d.set_item("ratio", r.ratio)?;
    d.set_item("effective_ratio", r.effective_ratio)?;
    d.set_item("incompressible_pages", r.incompressible_pages)?;
    d.set_item("pages", r.pages)?;
    d.set_item("bytes_in", r.bytes_in)?;
    d.set_item("bytes_out", r.bytes_out)?;
    Ok(d)
}

/// Rows (one per workload and mode) of evaluating `table` on `corpus`, as
/// `cannery eval` does; see `cannery.evaluate`.
#[pyfunction]
#[pyo3(signature = (table, corpus, *, peers=true, part="all", test_fraction=0.2, seed=0,
    eval_pages=Some(cannery_lab::report::DEFAULT_EVAL_PAGES), progress=None),
    text_signature = "(table, corpus, *, peers=True, part='all', test_fraction=0.2, seed=0, \
        eval_pages=1000, progress=None)")]
#[allow(clippy::too_many_arguments)]
pub fn _evaluate<'py>(
    py: Python<'py>,
    table: PyRef<'py, PyTable>,
    corpus: &Bound<'py, PyAny>,
    peers: bool,
    part: &str,
    test_fraction: f64,
    seed: u64,
    eval_pages: Option<u64>,
    progress: Option<PyObject>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let part = part_arg(part)?;
    let split = split(test_fraction, seed)?;
    let arg = corpus_arg(corpus)?;
    let sources = arg.sources()?;
    let table = table.inner.clone();
    let mut bar = Progress::new(progress, sources.len() as u64);
    let results = py
        .allow_threads(|| {
            let workloads: Vec<Workload<'_>> = sources
                .iter()
                .map(|(name, s): &(String, Source<'_>)| Workload {
                    name: name.clone(),
                    source: s,
                })
                .collect();
            let opts = EvalOptions {
                train: cannery_trainer::TrainOptions {
                    split,
                    ..Default::default()
                },
                part,
                peers,
                eval_pages,
            };
            eval_corpus(&table, "", &workloads, &opts, &mut |name| {
                bar.step(&format!("evaluating {name}"))
            })
            .map(|r| {
                r.workloads
                    .into_iter()
                    .map(|w| (w.name, w.modes))
                    .collect::<Vec<_>>()
            })
        })
        .map_err(train_error)?;
    bar.finish()?;
    let mut rows = Vec::new();
    for (workload, modes) in &results {
        for (mode, r) in modes {
            let mode = mode.to_string();
            rows.push(row(py, &[("workload", workload), ("mode", &mode)], r)?);
        }
    }
    Ok(rows)
}

/// Rows (one per table and workload) of the canned ratio at the fast parse
/// of every table on every workload; see `cannery.cross_evaluate`.
#[pyfunction]
#[pyo3(signature = (tables, corpus, *, part="all", test_fraction=0.2, seed=0))]
pub fn _cross_evaluate<'py>(
    py: Python<'py>,
    tables: &Bound<'py, PyDict>,
    corpus: &Bound<'py, PyAny>,
    part: &str,
    test_fraction: f64,
    seed: u64,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let part = part_arg(part)?;
    let split = split(test_fraction, seed)?;
    let mut named: Vec<(String, cannery_codec::Table)> = Vec::new();
    for (k, v) in tables.iter() {
        let t: PyRef<'_, PyTable> = v.extract()?;
        named.push((k.extract()?, t.inner.clone()));
    }
    let arg = corpus_arg(corpus)?;
    let sources = arg.sources()?;
    let results = py
        .allow_threads(|| {
            let mut spec = EvalSpec::held_out(split, None);
            spec.part = part;
            spec.levels = Vec::new();
            spec.baselines = false;
            spec.peers = Vec::new();
            spec.verify = false;
            spec.fast_tables = named.iter().map(|(n, t)| (n.clone(), t)).collect();
            sources
                .iter()
                .map(|(name, s)| {
                    let ev = evaluate(s, &spec)?;
                    Ok((name.clone(), ev.results()))
                })
                .collect::<Result<Vec<_>, TrainError>>()
        })
        .map_err(train_error)?;
    let mut rows = Vec::new();
    for (tname, _) in &named {
        for (workload, modes) in &results {
            if let Some(r) = modes.get(&ModeKey::table(tname.clone())) {
                rows.push(row(py, &[("table", tname), ("workload", workload)], r)?);
            }
        }
    }
    Ok(rows)
}

/// Parse model names accepted everywhere: the CLI's level and target names.
pub fn parse_name(model: ParseModel) -> &'static str {
    model.name()
}
