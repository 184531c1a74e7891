//! Tests of the corpus report: file names, the train report's modes,
//! targets, the target matrix and evaluation samples.

use super::*;
use crate::evaluate::{evaluate, EvalSpec};
use crate::fleet::train_corpus;
use crate::mode_key::key;
use cannery_trainer::testutil::workload_pages;
use cannery_trainer::TrainError;

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
    let n = cannery_trainer::target::available_targets().len();
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
