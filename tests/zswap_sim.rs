//! `cannery zswap-sim` end to end on tiny hand-made corpora: exact pool
//! accounting under the documented zsmalloc model (same-filled pages take
//! nothing, raw pages the 4096 class, a small compressed page its 16-byte
//! class after the 8-byte handle), both incompressible-page policies, the
//! batch-size sweep, every compressor, the text table's units (µs, KiB)
//! against the JSON's bytes, and clear errors on bad input.

use std::path::Path;
use std::process::Command;

use cannery_codec::{Encoder, Format, Level, Mode, Outcome};
use serde_json::Value;

const PAGE: usize = 4096;

fn noise(seed: u64, len: usize) -> Vec<u8> {
    cannery_codec::rng::XorShift64Star::from_state(seed | 1).bytes(len)
}

/// Same-filled (an 8-byte word repeated), random, and "abc" repeated.
fn three_pages() -> [Vec<u8>; 3] {
    let same: Vec<u8> = (0..PAGE).map(|i| [1, 2, 3, 4, 5, 6, 7, 8][i % 8]).collect();
    let random = noise(42, PAGE);
    let abc: Vec<u8> = (0..PAGE).map(|i| b"abc"[i % 3]).collect();
    [same, random, abc]
}

fn write_corpus(dir: &Path, pages: &[Vec<u8>]) -> std::path::PathBuf {
    let path = dir.join("tiny.pages");
    std::fs::write(&path, pages.concat()).unwrap();
    path
}

fn sim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .arg("zswap-sim")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sim_json(args: &[&str]) -> Value {
    let (ok, stdout, stderr) = sim(args);
    assert!(ok, "zswap-sim failed: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// The small zsmalloc classes by hand: object + 8-byte handle rounded up to
/// 32 + 16k; (class, pages per zspage). 32 and 64 divide 4096; 48 fills 3
/// pages exactly. None of these is merged.
fn small_class(len: usize) -> (u64, u64) {
    match len + 8 {
        0..=32 => (32, 1),
        33..=48 => (48, 3),
        49..=64 => (64, 1),
        n => panic!("test page compressed to {n} bytes with handle; pick a smaller page"),
    }
}

fn fixed_len(page: &[u8]) -> usize {
    let mut e = Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap();
    let mut out = Vec::new();
    match e.compress(page, &mut out).unwrap() {
        Outcome::Compressed(n) => n,
        Outcome::Incompressible => panic!("abc page should compress"),
    }
}

#[test]
fn three_page_corpus_exact_pool_accounting() {
    let dir = tempfile::tempdir().unwrap();
    let pages = three_pages();
    let corpus = write_corpus(dir.path(), &pages);
    let (class, zspage_pages) = small_class(fixed_len(&pages[2]));

    let v = sim_json(&[
        "--corpus",
        corpus.to_str().unwrap(),
        "--mode",
        "fixed",
        "--folio",
        "4k",
        "--compress-batch",
        "2",
        "--engines",
        "2",
        "--json",
    ]);
    assert_eq!(v["pages"], 3);
    assert_eq!(v["policy"], "store-raw");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(r["compress_batch"], 2);
    assert_eq!(r["decompress_batch"], 2);
    assert_eq!(r["same_filled_pages"], 1);
    assert_eq!(r["compressed_pages"], 1);
    assert_eq!(r["incompressible_pages"], 1);
    assert_eq!(r["raw_pages"], 1);
    assert_eq!(r["rejected_pages"], 0);
    assert_eq!(r["mismatches"], 0);
    // The raw page: 4096 + 8 clamps to the 4096 class, one page per zspage.
    assert_eq!(r["pool_bytes"], 4096 + class);
    assert_eq!(r["zspage_bytes"], 4096 + zspage_pages * 4096);
    let ratio = r["pool_ratio"].as_f64().unwrap();
    assert!((ratio - 3.0 * 4096.0 / (4096 + class) as f64).abs() < 1e-9);
    // The effective ratio (one definition for every command): the stored
    // pages and the same-filled one over the payload, no allocator.
    let eff = r["effective_ratio"].as_f64().unwrap();
    let payload = r["payload_bytes"].as_f64().unwrap();
    assert!((eff - 3.0 * 4096.0 / payload).abs() < 1e-9);
    for key in ["store_p50_ns", "store_p99_ns", "load_p50_ns", "load_p99_ns"] {
        assert!(r[key].as_u64().unwrap() > 0, "{key}");
    }
    assert!(r["store_p99_ns"].as_u64() >= r["store_p50_ns"].as_u64());
}

#[test]
fn reject_policy_rejects_pages_or_whole_folios() {
    let dir = tempfile::tempdir().unwrap();
    let pages = three_pages();
    let corpus = write_corpus(dir.path(), &pages);
    let (class, _) = small_class(fixed_len(&pages[2]));
    let base = [
        "--corpus",
        corpus.to_str().unwrap(),
        "--mode",
        "fixed",
        "--compress-batch",
        "4",
        "--reject-incompressible",
        "--json",
    ];

    // 4 KiB folios: only the random page is rejected.
    let mut args = base.to_vec();
    args.extend(["--folio", "4k"]);
    let v = sim_json(&args);
    assert_eq!(v["policy"], "reject-folio");
    let r = &v["runs"][0];
    assert_eq!(r["rejected_pages"], 1);
    assert_eq!(r["raw_pages"], 0);
    assert_eq!(r["pool_bytes"], class);
    let ratio = r["pool_ratio"].as_f64().unwrap();
    assert!((ratio - 2.0 * 4096.0 / class as f64).abs() < 1e-9);

    // One 16 KiB folio holds all three pages: its store fails as a whole.
    let mut args = base.to_vec();
    args.extend(["--folio", "16k"]);
    let v = sim_json(&args);
    let r = &v["runs"][0];
    assert_eq!(r["rejected_pages"], 3);
    assert_eq!(r["same_filled_pages"], 0);
    assert_eq!(r["pool_bytes"], 0);
    assert!(r["effective_ratio"].is_null());
    assert_eq!(r["mismatches"], 0);
}

#[test]
fn sweep_runs_every_batch_size_and_every_compressor_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    // A directory corpus: two files in a sub-directory, 40 pages in all.
    let sub = dir.path().join("workload");
    std::fs::create_dir(&sub).unwrap();
    let mut all = Vec::new();
    for i in 0..40u64 {
        let p = match i % 4 {
            0 => vec![0u8; PAGE],
            1 => noise(i, PAGE),
            _ => {
                let mut p = noise(i, PAGE);
                for (k, b) in p.iter_mut().enumerate() {
                    if k % 64 < 48 {
                        *b = (k / 64) as u8;
                    }
                }
                p
            }
        };
        all.push(p);
    }
    std::fs::write(sub.join("a.pages"), all[..24].concat()).unwrap();
    std::fs::write(sub.join("b.pages"), all[24..].concat()).unwrap();
    let corpus = dir.path().to_str().unwrap();

    let mut pools = Vec::new();
    for (mode, table, name) in [
        ("canned", Some("kernel-2024"), "canned:kernel-2024"),
        ("fixed", None, "fixed"),
        ("dynamic", None, "dynamic-fast"),
        ("zstd", None, "zstd-3"),
        ("lz4", None, "lz4"),
    ] {
        let mut args = vec![
            "--corpus", corpus, "--mode", mode, "--folio", "mixed", "--json",
        ];
        if let Some(t) = table {
            args.extend(["--table", t]);
        }
        let v = sim_json(&args);
        // The mode is named as in every other report (README, "Mode names").
        assert_eq!(v["mode"], name);
        assert_eq!(v["files"], 2);
        assert_eq!(v["pages"], 40);
        let runs = v["runs"].as_array().unwrap();
        let sizes: Vec<u64> = runs
            .iter()
            .map(|r| r["compress_batch"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, [1, 2, 4, 8, 16, 32], "{mode}");
        for r in runs {
            assert_eq!(r["mismatches"], 0, "{mode}");
            assert_eq!(r["same_filled_pages"], 10, "{mode}");
            // Output does not depend on the batch size.
            assert_eq!(r["pool_bytes"], runs[0]["pool_bytes"], "{mode}");
            // Mixed folios hold at most 16 pages, so no store call has more.
            assert!(r["max_units_per_store_call"].as_u64().unwrap() <= 16);
        }
        pools.push(runs[0]["pool_bytes"].as_u64().unwrap());
    }
    assert!(pools.iter().all(|&p| p > 0 && p < 30 * 4096));
}

#[test]
fn peers_beside_replay_the_same_plan_as_their_own_mode_would() {
    let dir = tempfile::tempdir().unwrap();
    let pages: Vec<Vec<u8>> = (0..12u64)
        .map(|i| {
            let mut p = noise(i, PAGE);
            p[..3000].fill(i as u8);
            p
        })
        .collect();
    let corpus = write_corpus(dir.path(), &pages);
    let corpus = corpus.to_str().unwrap();
    let common = ["--corpus", corpus, "--folio", "64k", "--json"];
    let batches = ["--compress-batch", "8"];
    let mut args = vec!["--mode", "canned", "--table", "kernel-2024"];
    args.extend(common);
    args.extend(batches);
    args.extend(["--beside", "lz4", "zstd-1"]);
    let v = sim_json(&args);
    assert_eq!(v["mode"], "canned:kernel-2024");
    let beside = v["beside"].as_array().unwrap();
    let names: Vec<&str> = beside.iter().map(|b| b["mode"].as_str().unwrap()).collect();
    assert_eq!(names, ["lz4", "zstd-1"]);
    for (b, (mode, level)) in beside.iter().zip([("lz4", "3"), ("zstd", "1")]) {
        let runs = b["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0]["compress_batch"], 8);
        assert_eq!(runs[0]["mismatches"], 0);
        // The same pool as the peer's own run in its own mode.
        let mut own = vec!["--mode", mode, "--zstd-level", level];
        own.extend(common);
        own.extend(batches);
        let alone = sim_json(&own);
        assert_eq!(
            runs[0]["pool_bytes"], alone["runs"][0]["pool_bytes"],
            "{mode}"
        );
    }
    // Text: a table per peer after the codec's.
    let (ok, text, err) = sim(&[
        "--corpus",
        corpus,
        "--mode",
        "fixed",
        "--compress-batch",
        "1",
        "--beside",
        "lz4",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("cbatch")).count(),
        2,
        "{text}"
    );
    assert!(text.contains("\nbeside: lz4\n"), "{text}");
    // A name that is no peer is a usage error naming the flag.
    let (ok, _, err) = sim(&["--corpus", corpus, "--mode", "fixed", "--beside", "lz5"]);
    assert!(!ok);
    assert!(err.contains("--beside") && err.contains("lz5"), "{err}");
    // Without --beside the JSON has no such key.
    let mut plain = vec!["--mode", "fixed"];
    plain.extend(common);
    plain.extend(batches);
    assert!(sim_json(&plain).get("beside").is_none());
}

#[test]
fn the_text_table_has_one_unit_per_column_and_the_json_figures() {
    use cannery_lab::tabular::{cells, Style};
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_corpus(dir.path(), &three_pages());
    let args = ["--corpus", corpus.to_str().unwrap(), "--mode", "fixed"];
    let v = sim_json(&[&args[..], &["--json"]].concat());
    let (ok, text, err) = sim(&args);
    assert!(ok, "{err}");
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("cbatch"))
        .collect();
    let header = cells(lines[0], Style::Text);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(lines.len(), 1 + runs.len(), "{text}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for (line, run) in lines[1..].iter().zip(runs) {
        let row = cells(line, Style::Text);
        assert_eq!(row.len(), header.len(), "{text}");
        // Times: bare numbers in the header's µs, two decimals each.
        for (h, c) in header.iter().zip(&row) {
            if h.ends_with(" µs") {
                assert!(c.parse::<f64>().is_ok(), "{h}: {c:?}");
                assert_eq!(c.split('.').nth(1).map(str::len), Some(2), "{h}: {c:?}");
            }
        }
        // Pools in KiB; JSON keeps bytes.
        let kib = |key: &str| format!("{:.0}", run[key].as_u64().unwrap() as f64 / 1024.0);
        assert_eq!(row[col("pool KiB")], kib("pool_bytes"), "{text}");
        assert_eq!(row[col("zspage KiB")], kib("zspage_bytes"), "{text}");
        assert_eq!(row[col("cbatch")], run["compress_batch"].to_string());
    }
}

#[test]
fn bad_input_gives_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.pages");
    std::fs::write(&odd, vec![0u8; PAGE + 1]).unwrap();
    let (ok, _, err) = sim(&["--corpus", odd.to_str().unwrap(), "--mode", "fixed"]);
    assert!(!ok);
    assert!(err.contains("not a multiple of 4096"), "{err}");

    let good = write_corpus(dir.path(), &three_pages());
    let (ok, _, err) = sim(&["--corpus", good.to_str().unwrap(), "--mode", "canned"]);
    assert!(!ok);
    assert!(err.contains("canned mode needs --table"), "{err}");

    let (ok, _, err) = sim(&[
        "--corpus",
        good.to_str().unwrap(),
        "--mode",
        "fixed",
        "--compress-batch",
        "33",
    ]);
    assert!(!ok);
    assert!(err.contains("33"), "{err}");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (ok, _, err) = sim(&["--corpus", empty.to_str().unwrap(), "--mode", "lz4"]);
    assert!(!ok);
    assert!(err.contains("no snapshot or .pages files"), "{err}");
}
