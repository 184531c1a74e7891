//! `cannery validate` and `cannery fuzz` count what they ran, and never pass
//! when a requested check did not run (unless `--allow-skips`).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use cannery_codec::Table;
use common::{cannery, stderr};

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every literal/length symbol 9 bits, every distance 5 bits: our encoder
/// can use it, but the codes are incomplete, so standard inflaters cannot
/// read header + body.
fn incomplete_table(dir: &Path) -> String {
    let t = Table::from_lengths(&[9u8; 286], &[5u8; 30]).unwrap();
    let p = dir.join("incomplete.table.json");
    std::fs::write(&p, t.to_json()).unwrap();
    s(&p).to_string()
}

const CORPUS: &str = "corpora/fleet-snapshots";

#[test]
fn validate_counts_every_cell_and_passes_when_all_ran() {
    let o = cannery(&[
        "validate",
        "--table",
        "kernel-2024",
        "--corpus",
        CORPUS,
        "--backends",
        "software,zlib,libdeflate",
        "--max-pages",
        "12",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let c = &v["counts"];
    // canned: software -> 3 decoders; fixed: software -> 3; dynamic: 3 compressors × 3.
    assert_eq!(c["cells_run"], 15, "{c}");
    assert_eq!(c["cells_skipped"], 0);
    assert_eq!(c["pages_skipped"], 0);
    // --max-pages 12 is 12 pages of each of the corpus' 6 workloads.
    assert_eq!(v["pages"], 6 * 12);
    assert_eq!(c["pages_run"], 15 * 6 * 12);
    assert_eq!(
        c["pages_passed"].as_u64().unwrap() + c["pages_incompressible"].as_u64().unwrap(),
        15 * 6 * 12
    );
    assert_eq!(v["ok"], true);
    // The rules each backend states for canned mode are listed.
    let rules = v["rules"].as_array().unwrap();
    assert!(rules
        .iter()
        .any(|r| r["backend"] == "zlib" && r["rule"] == "standard" && r["ok"] == true));
}

/// Corpus names follow one rule everywhere: `validate`, `zswap-sim` and
/// `bench` find `corpora/NAME` from a subdirectory, as `train` does.
#[test]
fn a_bare_corpus_name_is_found_from_a_subdirectory() {
    let sub = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for args in [
        &[
            "validate",
            "--table",
            "kernel-2024",
            "--corpus",
            "fleet-snapshots",
            "--backends",
            "software",
            "--modes",
            "canned",
            "--max-pages",
            "3",
        ][..],
        &[
            "zswap-sim",
            "--corpus",
            "fleet-snapshots",
            "--table",
            "kernel-2024",
            "--mode",
            "canned",
            "--max-pages",
            "20",
        ][..],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_cannery"))
            .args(args)
            .current_dir(&sub)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}: {}", args[0], stderr(&o));
    }
    let o = cannery(&[
        "validate",
        "--table",
        "kernel-2024",
        "--corpus",
        "no-such-corpus",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a missing corpus is an input error"
    );
    assert!(
        stderr(&o).contains("no corpora/no-such-corpus in the current directory or any parent"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn validate_fails_when_a_backend_cannot_use_the_table_unless_skips_are_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let t = incomplete_table(dir.path());
    let args = [
        "validate",
        "--table",
        &t,
        "--corpus",
        CORPUS,
        "--backends",
        "software,zlib",
        "--modes",
        "canned",
        "--max-pages",
        "5",
    ];
    let o = cannery(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("1 of 2 cells did not run"), "{err}");
    assert!(err.contains("--allow-skips"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("zlib cannot decompress with the table: standard"),
        "{out}"
    );
    assert!(
        out.contains("cells: 1 run (1 passed, 0 failed), 1 skipped"),
        "{out}"
    );
    assert!(!out.contains("every pair passed"), "{out}");

    let mut allowed = args.to_vec();
    allowed.extend(["--allow-skips", "--json"]);
    let o = cannery(&allowed);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["counts"]["cells_skipped"], 1);
    // 5 pages of each of the 6 workloads.
    assert_eq!(v["counts"]["pages_skipped"], 30);
    assert_eq!(v["ok"], true);
}

#[test]
fn validate_fails_when_no_pair_speaks_a_requested_mode_or_no_page_is_asked_for() {
    // Neither zlib nor libdeflate compresses fixed-code streams.
    let o = cannery(&[
        "validate",
        "--table",
        "kernel-2024",
        "--corpus",
        CORPUS,
        "--backends",
        "zlib,libdeflate",
        "--modes",
        "fixed",
        "--max-pages",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nothing was checked"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("no pair of the chosen backends compresses and decompresses fixed streams"));

    let o = cannery(&[
        "validate",
        "--table",
        "kernel-2024",
        "--corpus",
        CORPUS,
        "--max-pages",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", stderr(&o));
    assert!(stderr(&o).contains("--max-pages"), "{}", stderr(&o));
}

#[test]
fn fuzz_refuses_to_compare_a_backend_with_itself_and_counts_what_it_ran() {
    let o = cannery(&[
        "fuzz",
        "--backend",
        "software",
        "--against",
        "software",
        "--iterations",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    assert!(
        stderr(&o).contains("nothing to compare software with"),
        "{}",
        stderr(&o)
    );

    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().join("repro");
    let o = cannery(&[
        "fuzz",
        "--backend",
        "software",
        "--against",
        "zlib,miniz_oxide",
        "--iterations",
        "16",
        "--repro-dir",
        s(&repro),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let c = &v["counts"];
    assert_eq!(c["cells_skipped"], 0, "{c}");
    assert_eq!(c["pages_failed"], 0);
    assert!(c["pages_run"].as_u64().unwrap() >= 16 * 5, "{c}");
    assert_eq!(v["table"], Table::kernel_2024().id());

    let o = cannery(&["fuzz", "--backend", "software", "--iterations", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn fuzz_with_a_table_the_others_cannot_read_fails_unless_skips_are_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let t = incomplete_table(dir.path());
    let repro = dir.path().join("repro");
    let args = [
        "fuzz",
        "--backend",
        "software",
        "--against",
        "zlib",
        "--modes",
        "canned",
        "--table",
        &t,
        "--iterations",
        "4",
        "--repro-dir",
        s(&repro),
    ];
    let o = cannery(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not run"), "{}", stderr(&o));
    let mut allowed = args.to_vec();
    allowed.push("--allow-skips");
    let o = cannery(&allowed);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `train --qpl-compatible` on the shipped corpus (real pages, whose
/// longest codes sit on length symbols 280..=284): every table it writes,
/// per workload, fleet and clusters, is QPL-loadable under the exact rule,
/// and `export qpl` / `export isal` take it without a warning.
#[test]
fn qpl_compatible_training_writes_only_tables_qpl_and_isal_load_unchanged() {
    use cannery_codec::table::rules::{BitBudget, Rule};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let o = cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "--out",
        s(&out),
        "--qpl-compatible",
        "--tables",
        "2",
        "--no-peers",
        "--eval-pages",
        "40",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = json(&o);
    let cost = &report["fleet"]["qpl_constraint"]["cost_percent"];
    assert!(cost.as_f64().unwrap().abs() < 1.0, "{cost}");
    let mut n = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let p = entry.unwrap().path();
        if !s(&p).ends_with(".table.json") {
            continue;
        }
        n += 1;
        let t = Table::from_bytes(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(Rule::QplLoadable.check(&t), Ok(()), "{}", p.display());
        assert_eq!(Rule::IsalStock.check(&t), Ok(()), "{}", p.display());
        assert!(BitBudget::of(t.lengths()).total() <= 56);
        let q = dir.path().join("t.qpl");
        let e = cannery(&["export", "qpl", "--table", s(&p), "-o", s(&q), "--force"]);
        assert!(e.status.success(), "{}: {}", p.display(), stderr(&e));
        assert!(!stderr(&e).contains("warning"), "{}", stderr(&e));
        let e = cannery(&["export", "isal", "--table", s(&p), "--name", "t"]);
        assert!(e.status.success(), "{}: {}", p.display(), stderr(&e));
    }
    // Six workloads, the fleet table and two cluster tables.
    assert_eq!(n, 9, "tables written");
}
