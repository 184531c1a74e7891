//! Histograms → tables: smoothing → code lengths → a validated IAA-safe
//! [`Table`] with provenance, the held-out comparison of smoothings, and
//! the fallback table. The statistics come from [`crate::scan`]; the
//! `best` refinement is [`crate::refine`].
//!
//! Deterministic: a table depends only on the histogram and the options
//! (integer sums, a stable package-merge), so the same pages in any order on
//! any number of threads give identical table bytes. No creation time is
//! written (it would break that); callers may add one. Evaluation against
//! other codecs is `cannery_lab::evaluate`; clustering is [`crate::cluster`].

use cannery_codec::table::rules::Rule;
use cannery_codec::table::HeaderForm;
use cannery_codec::Table;

use crate::code_lengths::build_lengths;
use crate::error::TrainError;
use crate::histogram::{Histogram, SymbolCounts};
use crate::options::TrainOptions;

/// Name and version written into every table's provenance.
pub const GENERATOR: &str = concat!("cannery-trainer ", env!("CARGO_PKG_VERSION"));

/// Code lengths for symbol counts (no page-count check).
pub fn lengths_from_counts(
    counts: &SymbolCounts,
    opts: &TrainOptions,
) -> cannery_codec::CodeLengths {
    let (ll, d) = opts.smoothing().weights(counts, opts.codes_all_distances());
    build_lengths(&ll, &d, opts.max_len, opts.qpl_compatible)
}

/// A table from a histogram: smoothing, optimal limited code lengths, IAA
/// checks, provenance (parse model, pages, options). `what` names the data
/// in errors. A histogram of another library's parse (`--target qpl-*`,
/// `isal`) always gives a QPL-compatible table: that library must load it
/// unchanged.
pub fn table_from_histogram(
    h: &Histogram,
    opts: &TrainOptions,
    what: &str,
) -> Result<Table, TrainError> {
    let opts = &opts.for_parse(h.settings().parse);
    if h.pages == 0 {
        return Err(if h.same_filled_pages > 0 {
            TrainError::AllSameFilled {
                what: what.into(),
                same_filled: h.same_filled_pages,
                needed: opts.min_pages,
            }
        } else {
            TrainError::Empty {
                what: what.into(),
                needed: opts.min_pages,
            }
        });
    }
    if h.pages < opts.min_pages {
        return Err(TrainError::TooFewPages {
            what: what.into(),
            found: h.pages,
            total: h.pages + h.same_filled_pages,
            same_filled: h.same_filled_pages,
            held_out: 0,
            needed: opts.min_pages,
        });
    }
    let mut l = lengths_from_counts(&h.counts, opts);
    let mut header_aware = None;
    if crate::header_aware::header_per_stream(h.settings().parse) {
        // One header per stream, one stream per training page.
        let (ll, d) = opts
            .smoothing()
            .weights(&h.counts, opts.codes_all_distances());
        let (r, report) = crate::header_aware::refine_reported(
            &ll,
            &d,
            &l,
            h.pages,
            crate::smoothing::SCALE,
            opts.qpl_compatible,
        );
        l = r;
        header_aware = Some(report);
    }
    let form = if header_aware.is_some() {
        HeaderForm::Fewest
    } else {
        HeaderForm::Aligned
    };
    let mut t = Table::from_lengths_with_header(&l.litlen, &l.dist, form)?;
    // Smoothing codes every required symbol and package-merge makes
    // complete codes, so this only fails if those guarantees break.
    t.check_iaa().map_err(TrainError::NotIaaSafe)?;
    if opts.qpl_compatible {
        Rule::QplLoadable
            .check(&t)
            .map_err(TrainError::NotQplLoadable)?;
    }
    t.name = Some(what.into());
    t.provenance.source = Some("trained".into());
    t.provenance.generator = Some(GENERATOR.into());
    let mut m = opts.provenance_map();
    m.insert("parse".into(), h.settings().parse.name().into());
    m.insert("window".into(), h.settings().window.into());
    m.insert("pages".into(), h.pages.into());
    if let Some(id) = &h.settings().cost_table {
        m.insert("pricing_table".into(), id.clone().into());
    }
    if let Some(r) = header_aware {
        // Both parts of the objective, and the header as written.
        let mut v = serde_json::to_value(r).expect("plain numbers");
        v["written_header_bits"] = t.header().bits.into();
        v["written_header_form"] = form.name().into();
        m.insert("header_aware".into(), v);
    }
    t.provenance.training = m;
    Ok(t)
}

/// Bits the symbols take under a table's lengths (Fast parse: exact up to
/// per-page byte padding).
pub fn bits_under(counts: &SymbolCounts, t: &Table) -> u64 {
    counts.bits(&t.lengths().litlen, &t.lengths().dist)
}

/// Held-out bits per page of one smoothing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SmoothingResult {
    /// The smoothing, by name.
    pub smoothing: String,
    /// Bits per held-out page of its table (extra bits included).
    pub bits_per_page: f64,
    /// Relative to the best candidate, in percent (0 for the best).
    pub excess_percent: f64,
}

/// Trains one table per smoothing candidate on `train` and measures the
/// held-out bits per page on `test` (both gathered with the same parse).
pub fn evaluate_smoothings(
    train: &Histogram,
    test: &Histogram,
    opts: &TrainOptions,
) -> Vec<SmoothingResult> {
    if test.pages == 0 || train.pages == 0 {
        return Vec::new();
    }
    let mut out: Vec<SmoothingResult> = crate::smoothing::Smoothing::CANDIDATES
        .iter()
        .map(|&s| {
            let o = TrainOptions {
                smoothing: Some(s),
                ..*opts
            };
            let l = lengths_from_counts(&train.counts, &o);
            SmoothingResult {
                smoothing: s.to_string(),
                bits_per_page: test.counts.bits(&l.litlen, &l.dist) as f64 / test.pages as f64,
                excess_percent: 0.0,
            }
        })
        .collect();
    mark_excess(&mut out);
    out
}

/// Sets each result's `excess_percent` over the best (fewest bits) one.
pub fn mark_excess(results: &mut [SmoothingResult]) {
    let best = results
        .iter()
        .map(|r| r.bits_per_page)
        .fold(f64::INFINITY, f64::min);
    for r in results {
        r.excess_percent = 100.0 * (r.bits_per_page / best - 1.0);
    }
}

/// The kernel's 2024 table standing in for one that could not be trained
/// (`--fallback`): its provenance says why and, if given, for which corpus.
pub fn fallback_table(reason: &str, corpus: Option<String>) -> Table {
    let mut k = Table::kernel_2024();
    k.provenance.corpus = corpus;
    k.provenance
        .training
        .insert("fallback".into(), reason.to_string().into());
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::ParseModel;
    use crate::refine::*;
    use crate::scan::*;
    use crate::smoothing::Smoothing;
    use crate::testutil::{synthetic_pages, workload_pages};

    #[test]
    fn tables_are_iaa_safe_and_carry_provenance() {
        let pages = synthetic_pages(200, 11);
        let t = train_workload("mixed", &pages, &TrainOptions::default())
            .unwrap()
            .table;
        assert_eq!(t.check_iaa(), Ok(()));
        assert_eq!(t.name.as_deref(), Some("mixed"));
        assert_eq!(t.provenance.training["parse"], "fast");
        assert_eq!(t.provenance.generator.as_deref(), Some(GENERATOR));
        assert!(t.provenance.created.is_none());
    }

    #[test]
    fn library_targets_default_to_add_one_and_an_asked_smoothing_stays() {
        // A fast-parse histogram relabelled as another parse: table making
        // needs only counts, not the library that gathered them.
        let pages = synthetic_pages(200, 13);
        let fast = scan("w", &pages, &TrainOptions::default()).unwrap().train;
        let relabel = |parse: ParseModel| {
            let mut h = Histogram::zero(crate::histogram::Settings::new(parse));
            h.pages = fast.pages;
            h.counts = fast.counts.clone();
            h
        };
        let with = |s: Smoothing| TrainOptions {
            smoothing: Some(s),
            ..TrainOptions::default()
        };
        for (parse, default) in [
            (ParseModel::Fast, Smoothing::DEFAULT),
            (ParseModel::Default, Smoothing::DEFAULT),
            (ParseModel::QplDefault, Smoothing::AddOne),
            (ParseModel::QplHigh, Smoothing::AddOne),
            (ParseModel::Isal, Smoothing::AddOne),
        ] {
            let h = relabel(parse);
            let t = table_from_histogram(&h, &TrainOptions::default(), "w").unwrap();
            let library = parse.feature().is_some();
            assert_eq!(t.provenance.training["smoothing"], default.to_string());
            assert_eq!(t.provenance.training["qpl_compatible"], library);
            // The same lengths as asking for that smoothing outright.
            let asked = table_from_histogram(&h, &with(default), "w").unwrap();
            assert_eq!(t.lengths(), asked.lengths(), "{parse}");
            // An asked-for smoothing is kept whatever the parse.
            let other = Smoothing::Uniform { mass: 0.02 };
            let t = table_from_histogram(&h, &with(other), "w").unwrap();
            assert_eq!(t.provenance.training["smoothing"], other.to_string());
        }
        // The two defaults really differ on these counts.
        let fast_t =
            table_from_histogram(&relabel(ParseModel::Fast), &TrainOptions::default(), "w");
        let add_one =
            table_from_histogram(&relabel(ParseModel::Fast), &with(Smoothing::AddOne), "w");
        assert_ne!(fast_t.unwrap().lengths(), add_one.unwrap().lengths());
    }

    #[test]
    fn same_pages_any_order_any_threads_give_identical_table_bytes() {
        let pages = synthetic_pages(300, 12);
        let opts = TrainOptions::default();
        let a = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| train_workload("w", &pages, &opts).unwrap().table);
        let mut shuffled = pages.clone();
        shuffled.reverse();
        shuffled.rotate_left(77);
        let b = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap()
            .install(|| train_workload("w", &shuffled, &opts).unwrap().table);
        assert_eq!(a.to_json(), b.to_json());
        assert_eq!(a.to_binary(), b.to_binary());
    }

    #[test]
    fn merge_order_does_not_change_the_table() {
        let parts: Vec<Vec<Vec<u8>>> = (0..4).map(|i| synthetic_pages(60, 20 + i)).collect();
        let hists: Vec<Histogram> = parts
            .iter()
            .map(|p| histogram_of(p, ParseModel::Fast).unwrap())
            .collect();
        let opts = TrainOptions::default();
        let fwd = hists[1..]
            .iter()
            .fold(hists[0].clone(), |a, b| a.merged(b).unwrap());
        let pairs = hists[3]
            .clone()
            .merged(&hists[2])
            .unwrap()
            .merged(&hists[1].clone().merged(&hists[0]).unwrap())
            .unwrap();
        let all: Vec<Vec<u8>> = parts.concat();
        let whole = histogram_of(&all, ParseModel::Fast).unwrap();
        let t1 = table_from_histogram(&fwd, &opts, "x").unwrap();
        let t2 = table_from_histogram(&pairs, &opts, "x").unwrap();
        let t3 = table_from_histogram(&whole, &opts, "x").unwrap();
        assert_eq!(t1.to_json(), t2.to_json());
        assert_eq!(t1.to_json(), t3.to_json());
    }

    #[test]
    fn too_few_empty_and_all_zero_inputs_say_what_was_found() {
        let opts = TrainOptions::default();
        let few = synthetic_pages(10, 13);
        let e = train_workload("tiny", &few, &opts).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, TrainError::TooFewPages { needed: 32, .. }),
            "{msg}"
        );
        assert!(
            msg.contains("tiny") && msg.contains("need at least 32"),
            "{msg}"
        );
        let none: Vec<Vec<u8>> = Vec::new();
        let e = train_workload("void", &none, &opts).unwrap_err();
        assert!(matches!(e, TrainError::Empty { .. }), "{e}");
        assert!(e.to_string().contains("no pages found"));
        let zeros = vec![vec![0u8; 4096]; 100];
        let e = train_workload("zeros", &zeros, &opts).unwrap_err();
        assert!(
            matches!(
                e,
                TrainError::AllSameFilled {
                    same_filled: 100,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_workload_table_beats_the_kernel_table_on_its_own_held_out_pages() {
        let pages = workload_pages(400, 0, 14);
        let opts = TrainOptions::default();
        let tr = train_workload("records", &pages, &opts).unwrap();
        let own = bits_under(&tr.scan.test.counts, &tr.table);
        let kernel = bits_under(&tr.scan.test.counts, &Table::kernel_2024());
        assert!(tr.scan.test.pages > 40);
        assert!(own < kernel, "own {own} vs kernel {kernel}");
    }

    #[test]
    fn best_refinement_never_ends_worse_than_it_starts() {
        let pages = synthetic_pages(160, 15);
        let opts = TrainOptions {
            parse: ParseModel::Best,
            max_refinements: 2,
            ..TrainOptions::default()
        };
        let tr = train_workload("best", &pages, &opts).unwrap();
        let steps = &tr.refinement;
        assert!(!steps.is_empty());
        let kept: Vec<&RefineStep> = steps.iter().filter(|s| s.accepted).collect();
        let last = kept.last().unwrap();
        assert_eq!(last.table_id, tr.table.id());
        assert!(last.validation_bytes <= steps[0].validation_bytes);
        assert_eq!(tr.table.provenance.training["parse"], "best");
        assert_eq!(tr.table.check_iaa(), Ok(()));
    }

    proptest::proptest! {
        /// Any statistics (zeros, one symbol, huge skew) give an IAA-safe
        /// table with complete codes, within the QPL rule when asked.
        #[test]
        fn any_histogram_gives_an_iaa_safe_table(
            ll in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(0u64), 0u64..10, 0u64..1_000_000_000_000], 286),
            d in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(0u64), 0u64..1_000_000], 24),
            qpl in proptest::bool::ANY,
            all_d in proptest::bool::ANY,
            smoothing in proptest::sample::select(crate::smoothing::Smoothing::CANDIDATES.to_vec()),
        ) {
            let mut c = SymbolCounts::default();
            c.litlen.copy_from_slice(&ll);
            c.dist[..24].copy_from_slice(&d);
            let mut opts = TrainOptions { smoothing: Some(smoothing), all_distances: all_d, ..TrainOptions::default() };
            opts.qpl_compatible = qpl;
            let l = lengths_from_counts(&c, &opts);
            let t = Table::from_lengths(&l.litlen, &l.dist).unwrap();
            proptest::prop_assert_eq!(t.check_iaa(), Ok(()));
            proptest::prop_assert_eq!(t.kraft(), (32768, 32768));
            if all_d || qpl {
                proptest::prop_assert!(l.dist.iter().all(|&x| x > 0));
            }
            if qpl {
                proptest::prop_assert!(cannery_codec::table::rules::BitBudget::of(&l).fits());
                proptest::prop_assert_eq!(Rule::QplLoadable.check(&t), Ok(()));
            }
        }
    }

    #[test]
    fn smoothing_comparison_covers_every_candidate() {
        let pages = synthetic_pages(300, 16);
        let tr = train_workload("s", &pages, &TrainOptions::default()).unwrap();
        let r = evaluate_smoothings(&tr.scan.train, &tr.scan.test, &TrainOptions::default());
        assert_eq!(r.len(), crate::smoothing::Smoothing::CANDIDATES.len());
        assert!(r.iter().any(|x| x.excess_percent == 0.0));
        assert!(r
            .iter()
            .all(|x| x.bits_per_page > 0.0 && x.excess_percent >= 0.0));
    }
}
