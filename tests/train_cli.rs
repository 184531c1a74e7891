//! End-to-end tests of `cannery train`, `stats`, `merge` and `eval` on a
//! small corpus of raw `.pages` files made from synthetic pages: files
//! written, JSON shapes, the fleet flow through histograms, and the error
//! messages for too few pages and bad histogram files.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use cannery_trainer::testutil::workload_pages;

fn cannery(args: &[&str], dir: &Path) -> Output {
    // A fixed creation time, so two runs write the same table bytes.
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .current_dir(dir)
        .output()
        .expect("cannery runs")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn corpus(dir: &Path) {
    for (name, style, seed) in [("records", 0, 1), ("text", 1, 2)] {
        let d = dir.join("corpora/mini").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("a.pages"), workload_pages(120, style, seed).concat()).unwrap();
    }
}

#[test]
fn train_writes_tables_and_a_json_report_by_corpus_name() {
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path());
    let out = ok(&cannery(
        &[
            "train",
            "--corpus",
            "mini",
            "--out",
            "t",
            "--json",
            "--no-peers",
            "--tables",
            "2",
        ],
        tmp.path(),
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let header = ok(&cannery(
        &[
            "export",
            "kernel",
            "--table",
            "t/fleet.table.json",
            "--name",
            "fleet",
        ],
        tmp.path(),
    ));
    assert!(
        header.contains("Created:      2023-11-14T22:13:20Z"),
        "{header}"
    );
    for f in ["records", "text", "fleet", "cluster-0", "cluster-1"] {
        let p = tmp.path().join("t").join(format!("{f}.table.json"));
        let t = cannery_codec::Table::from_bytes(&std::fs::read(&p).unwrap()).unwrap();
        // Made at SOURCE_DATE_EPOCH (see `cannery` above); the export says so.
        assert_eq!(
            t.provenance.created.as_deref(),
            Some("2023-11-14T22:13:20Z"),
            "{f}"
        );
        assert_eq!(t.check_iaa(), Ok(()), "{f}");
    }
    for w in v["workloads"].as_array().unwrap() {
        for m in [
            "fixed",
            "canned-fast",
            "canned-best",
            "dynamic-best",
            "canned:kernel-2024",
        ] {
            let r = &w["modes"][m];
            assert!(r["ratio"].as_f64().unwrap() > 1.0, "{m}");
            assert!(r["effective_ratio"].as_f64().unwrap() >= r["ratio"].as_f64().unwrap());
            assert!(r["incompressible_pages"].is_u64());
        }
    }
    assert!(v["clusters"]["best_of_k_ratio"].as_f64().unwrap() > 0.0);
    // Same corpus and settings: identical table bytes. The text report
    // states each comparison with the single-table ceiling under it.
    let text = ok(&cannery(
        &[
            "train",
            "--corpus",
            "mini",
            "--out",
            "t2",
            "--no-peers",
            "--tables",
            "2",
        ],
        tmp.path(),
    ));
    for w in ["workload records", "workload text", "fleet (all workloads"] {
        let at = text.find(w).unwrap_or_else(|| panic!("{w} in {text}"));
        let rest = &text[at..];
        let vs = rest.find("canned-fast vs fixed:").unwrap();
        let ceiling = rest
            .find("single-table ceiling at the fast parse: +")
            .unwrap();
        assert!(vs < ceiling, "{rest}");
    }
    // An evaluation sample measures fewer held-out pages and trains the
    // same tables (their provenance records the sampled ratios).
    let sampled = ok(&cannery(
        &[
            "train",
            "--corpus",
            "mini",
            "--out",
            "t3",
            "--no-peers",
            "--eval-pages",
            "5",
            "--json",
        ],
        tmp.path(),
    ));
    let s: serde_json::Value = serde_json::from_str(&sampled).unwrap();
    for (a, b) in v["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .zip(s["workloads"].as_array().unwrap())
    {
        let (all, some) = (
            a["test_pages"].as_u64().unwrap(),
            b["test_pages"].as_u64().unwrap(),
        );
        assert!(
            all > 10 && (1..=12).contains(&some),
            "{all} held out, {some} sampled"
        );
        let id = |dir: &str| {
            let p = tmp
                .path()
                .join(dir)
                .join(format!("{}.table.json", a["name"].as_str().unwrap()));
            cannery_codec::Table::from_bytes(&std::fs::read(p).unwrap())
                .unwrap()
                .id()
        };
        assert_eq!(id("t"), id("t3"));
    }
    for f in ["records", "fleet", "cluster-1"] {
        let a = std::fs::read(tmp.path().join("t").join(format!("{f}.table.json"))).unwrap();
        let b = std::fs::read(tmp.path().join("t2").join(format!("{f}.table.json"))).unwrap();
        assert_eq!(a, b, "{f}");
    }
}

#[test]
fn fleet_flow_through_histograms_and_eval() {
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path());
    let c = tmp.path().join("corpora/mini");
    let c = c.to_str().unwrap();
    for w in ["records", "text"] {
        ok(&cannery(
            &[
                "stats",
                "--corpus",
                c,
                "--workload",
                w,
                "--out",
                &format!("{w}.hist"),
            ],
            tmp.path(),
        ));
    }
    ok(&cannery(
        &["merge", "records.hist", "text.hist", "--out", "all.hist"],
        tmp.path(),
    ));
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("all.hist")).unwrap())
            .unwrap();
    assert_eq!(all["format"], "cannery-histogram");
    assert_eq!(
        all["pages"].as_u64().unwrap() + all["same_filled_pages"].as_u64().unwrap(),
        240
    );
    let out = ok(&cannery(
        &[
            "train",
            "--histograms",
            "records.hist",
            "text.hist",
            "--out",
            "h",
            "--json",
        ],
        tmp.path(),
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let via_merge = ok(&cannery(
        &["train", "--histograms", "all.hist", "--out", "h2", "--json"],
        tmp.path(),
    ));
    let w: serde_json::Value = serde_json::from_str(&via_merge).unwrap();
    assert_eq!(
        v["table_id"], w["table_id"],
        "merging first changes nothing"
    );
    let e = ok(&cannery(
        &[
            "eval",
            "--table",
            "h/fleet.table.json",
            "--corpus",
            c,
            "--json",
            "--no-peers",
        ],
        tmp.path(),
    ));
    let e: serde_json::Value = serde_json::from_str(&e).unwrap();
    assert_eq!(e["table_id"], v["table_id"]);
    assert!(e["drift"]["drift_percent"].as_f64().unwrap() >= 0.0);
    assert!(
        e["workloads"][0]["modes"]["canned-fast"]["ratio"]
            .as_f64()
            .unwrap()
            > 1.0
    );
    // --eval-pages samples each workload and says from how many.
    let s = ok(&cannery(
        &[
            "eval",
            "--table",
            "h/fleet.table.json",
            "--corpus",
            c,
            "--json",
            "--no-peers",
            "--eval-pages",
            "20",
        ],
        tmp.path(),
    ));
    let s: serde_json::Value = serde_json::from_str(&s).unwrap();
    for (w, all) in s["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .zip(e["workloads"].as_array().unwrap())
    {
        let (n, of) = (
            w["pages"].as_u64().unwrap(),
            w["sampled_from"].as_u64().unwrap(),
        );
        assert!(
            n > 0 && n < all["pages"].as_u64().unwrap() && n <= 45,
            "{n} of {of}"
        );
    }
    // --histograms: the drift with no pages, each and together; the
    // fleet table is closest to the statistics it was trained from.
    let h = ok(&cannery(
        &[
            "eval",
            "--table",
            "h/fleet.table.json",
            "--histograms",
            "records.hist",
            "text.hist",
            "--json",
        ],
        tmp.path(),
    ));
    let h: serde_json::Value = serde_json::from_str(&h).unwrap();
    assert_eq!(h["format"], "cannery-eval-histograms");
    assert_eq!(h["histograms"].as_array().unwrap().len(), 2);
    assert!(h["drift"]["drift_percent"].as_f64().unwrap() >= 0.0);
    let o = cannery(
        &[
            "eval",
            "--table",
            "kernel-2024",
            "--histograms",
            "records.hist",
            "--corpus",
            c,
        ],
        tmp.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "--histograms or --corpus, not both"
    );
}

#[test]
fn errors_say_what_was_found_and_what_is_needed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("small/w");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("a.pages"), workload_pages(10, 0, 3).concat()).unwrap();
    let o = cannery(&["train", "--corpus", "small", "--no-peers"], tmp.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("found") && err.contains("need at least 32"),
        "{err}"
    );

    std::fs::write(
        tmp.path().join("bad.hist"),
        "{\"format\": \"cannery-histogram\"}",
    )
    .unwrap();
    let o = cannery(&["merge", "bad.hist", "--out", "x.hist"], tmp.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.hist") && err.contains("histogram"),
        "{err}"
    );

    corpus(tmp.path());
    let c = tmp.path().join("corpora/mini");
    let c = c.to_str().unwrap();
    ok(&cannery(
        &["stats", "--corpus", c, "--out", "f.hist"],
        tmp.path(),
    ));
    ok(&cannery(
        &[
            "stats", "--corpus", c, "--level", "default", "--out", "d.hist",
        ],
        tmp.path(),
    ));
    let o = cannery(
        &["merge", "f.hist", "d.hist", "--out", "x.hist"],
        tmp.path(),
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("different parse models"), "{err}");

    let o = cannery(&["train", "--corpus", "nowhere"], tmp.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("corpus \"nowhere\" not found"), "{err}");
}

/// `--parse` (old names `--target`, `--level`): a library parse this build
/// lacks is refused with the feature to build (exit 2, nothing written); an
/// unknown parse and two of the names at once are usage errors; the old
/// names give what `--parse` gives.
#[test]
fn targets_need_their_library_and_exclude_level() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let out = out.to_str().unwrap();
    if !cfg!(feature = "qpl") {
        let o = common::cannery(&[
            "train",
            "--corpus",
            "fleet-snapshots",
            "--target",
            "qpl-high",
            "-o",
            out,
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            common::stderr(&o).contains("--features qpl"),
            "{}",
            common::stderr(&o)
        );
        assert!(!dir.path().join("t").exists());
        let h = dir.path().join("h.json");
        let o = common::cannery(&[
            "stats",
            "--corpus",
            "fleet-snapshots",
            "--target",
            "qpl-default",
            "-o",
            h.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(!h.exists());
    }
    let o = common::cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "--target",
        "zstd",
        "-o",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("qpl-default"),
        "{}",
        common::stderr(&o)
    );
    let o = common::cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "--target",
        "iaa",
        "--level",
        "best",
        "-o",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("cannot be used multiple times"),
        "{}",
        common::stderr(&o)
    );
    let stats = |flag: &str, file: &str| {
        let h = dir.path().join(file);
        let o = common::cannery(&[
            "stats",
            "--corpus",
            "fleet-snapshots",
            flag,
            "default",
            "-o",
            h.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", common::stderr(&o));
        std::fs::read_to_string(h).unwrap()
    };
    let parse = stats("--parse", "p.json");
    assert!(parse.contains("\"default\""), "{parse}");
    assert_eq!(parse, stats("--level", "l.json"));
}
