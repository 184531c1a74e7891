//! Tables trained for another library's compressor (`--target`), judged
//! under that compressor on the shipped corpus's held-out pages against the
//! table the library's own workflow makes from the same training pages:
//! cannery's table (default smoothing for library targets: add-one) must
//! compress at least as well on every workload.
//! - ISA-L (feature `isal`, Debian's libisal-dev; scripts/test runs it):
//!   `cargo test -p cannery-trainer --features isal --test library_targets`.
//!   ISA-L writes the table's header into every stream, so both sides count
//!   every byte `isal_deflate_stateless` writes, header included, and
//!   cannery's table minimises header plus body (crate::header_aware).
//! - QPL (feature `qpl`, QPL built by hand, README "QPL"):
//!   `QPL_DIR=/opt/qpl cargo test --release -p cannery-trainer --features qpl --test library_targets`
//!
//! Without either feature this file checks that a library target is refused
//! with the feature it needs.

use std::path::Path;

use cannery_lab::fleet::train_corpus;
use cannery_lab::report::CorpusOptions;
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::{ParseModel, TrainOptions};

fn train(model: ParseModel) -> Result<cannery_lab::report::TrainReport, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fleet-snapshots");
    let corpus = CorpusSource::open(&dir).expect("the shipped corpus");
    let opts = CorpusOptions {
        corpus: "fleet-snapshots".into(),
        train: TrainOptions {
            parse: model,
            ..TrainOptions::default()
        },
        tables: 1,
        peers: false,
        // Every held-out page, not `train`'s default 1000-page sample: at
        // QPL's high level the two tables differ by a few bytes in 800 KB,
        // below what a sample can resolve.
        eval_pages: None,
        target_matrix: false,
        dictionaries: false,
    };
    train_corpus(&corpus.workloads(), &opts, &mut |_| {})
        .map(|t| t.report)
        .map_err(|e| e.to_string())
}

/// Every workload's table beats (or ties) the library's own, and the fleet too.
#[allow(dead_code)]
fn check_beats_library(model: ParseModel) {
    let r = train(model).unwrap();
    assert_eq!(r.options["parse"], model.name());
    assert_eq!(
        r.options["qpl_compatible"], true,
        "library targets imply it"
    );
    for w in &r.workloads {
        let c = w.under_target.as_ref().expect("a comparison per workload");
        eprintln!(
            "{} {}: cannery {:.4} vs library {:.4} ({:+.3} %)",
            model,
            w.name,
            c.cannery.ratio(),
            c.library.ratio(),
            100.0 * c.gain()
        );
        assert!(
            c.cannery.pages > 500,
            "{}: {} pages",
            w.name,
            c.cannery.pages
        );
        if cannery_trainer::header_aware::header_per_stream(model) {
            // The same header in every stream, on both sides, counted.
            for s in [&c.cannery, &c.library] {
                assert!(s.header_bits > 0, "{}: headers not counted", w.name);
                assert_eq!(s.header_bits % s.pages, 0, "{}", w.name);
            }
        } else {
            assert_eq!(c.cannery.header_bits + c.library.header_bits, 0);
        }
        assert!(
            c.cannery.bytes <= c.library.bytes,
            "{}: cannery's table {} bytes, the library's own {} bytes",
            w.name,
            c.cannery.bytes,
            c.library.bytes
        );
    }
    assert!(r.under_target.as_ref().unwrap().gain() >= 0.0);
}

#[cfg(feature = "isal")]
#[test]
fn isal_tables_beat_isal_own_tables_under_isal() {
    check_beats_library(ParseModel::Isal);
}

#[cfg(feature = "qpl")]
#[test]
fn qpl_default_tables_beat_qpl_own_tables_under_qpl() {
    check_beats_library(ParseModel::QplDefault);
}

#[cfg(feature = "qpl")]
#[test]
#[ignore = "3 minutes: QPL's high-level statistics function takes about 6 ms a page"]
fn qpl_high_tables_beat_qpl_own_tables_under_qpl() {
    check_beats_library(ParseModel::QplHigh);
}

#[test]
fn library_targets_are_refused_without_their_feature() {
    for (model, built) in [
        (ParseModel::QplDefault, cfg!(feature = "qpl")),
        (ParseModel::Isal, cfg!(feature = "isal")),
    ] {
        if !built {
            let e = train(model).unwrap_err();
            assert!(
                e.contains(&format!("--features {}", model.feature().unwrap())),
                "{e}"
            );
        }
    }
}
