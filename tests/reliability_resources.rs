//! The reliability harness's resource cases (issue #33): small or sparse
//! inputs that once took gigabytes or minutes, each under the ceilings of
//! `tests/common/measure.rs` (256 MiB peak RSS, 5 s CPU). The cells of
//! input class × command are in `tests/reliability.rs`.

mod common;

use common::measure::{run, CPU_CEILING_S, RSS_CEILING_KIB};
use std::process::Stdio;

/// Resource cases: small or sparse inputs that once took gigabytes or
/// minutes, each under the RSS and CPU ceilings with exit status 2 or 0.
#[test]
fn resource_cases_stay_under_the_ceilings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Just under the 2 MiB header cap, and over it.
    std::fs::write(d.join("commas.h"), ",".repeat((2 << 20) - 1)).unwrap();
    std::fs::write(d.join("zeros.h"), "0,".repeat((1 << 20) - 1)).unwrap();
    std::fs::write(d.join("big.h"), ",".repeat(64 << 20)).unwrap();
    let akia = "AKIA".repeat(1 << 18);
    std::fs::write(d.join("akia.pages"), &akia).unwrap();
    std::fs::write(d.join("akia.bin"), &akia).unwrap();
    std::fs::create_dir(d.join("sparse")).unwrap();
    let sparse = std::fs::File::create(d.join("sparse/sparse.pages")).unwrap();
    sparse.set_len(8 << 30).unwrap();
    // 100 GiB, holes but for 40 pages of text spread over it: the holes
    // are zero pages, never read.
    let mut big = std::fs::File::create(d.join("big.pages")).unwrap();
    big.set_len(100 << 30).unwrap();
    for k in 0..40u64 {
        use std::io::{Seek, SeekFrom, Write};
        big.seek(SeekFrom::Start((k * 997 + 5) << 20)).unwrap();
        let text = format!("row {k} of the sparse corpus; ").repeat(200);
        big.write_all(&text.as_bytes()[..4096]).unwrap();
    }
    drop(big);
    let cases: &[(&[&str], &[i32])] = &[
        (
            &[
                "table",
                "import",
                "--from",
                "kernel-header",
                "commas.h",
                "-o",
                "t.json",
            ],
            &[2],
        ),
        (
            &[
                "train",
                "--corpus",
                "sparse.pages",
                "--tables",
                "18446744073709551615",
                "-o",
                "t",
            ],
            &[2],
        ),
        (
            &[
                "train",
                "--corpus",
                "sparse.pages",
                "--tables",
                "100000000",
                "-o",
                "t",
            ],
            &[2],
        ),
        (&["corpus", "scan-secrets", "akia.pages"], &[0, 1]),
        (&["corpus", "info", "big.pages"], &[0]),
        (&["corpus", "scan-secrets", "big.pages"], &[0]),
        (&["corpus", "export", "big.pages", "-o", "e.pages"], &[0]),
        (&["stats", "--corpus", "big.pages", "-o", "h.json"], &[0]),
        (
            &["train", "--corpus", "big.pages", "--tables", "1", "-o", "t"],
            &[0, 2],
        ),
        (
            &[
                "zswap-sim",
                "--mode",
                "fixed",
                "--max-pages",
                "2",
                "--corpus",
                "big.pages",
            ],
            &[0],
        ),
        (&["corpus", "scan-secrets", "--json", "akia.bin"], &[2]),
        (
            &["capture", "--level", "0", "-o", "x.cansnap", "--", "true"],
            &[2],
        ),
        (
            &["capture", "--level", "23", "-o", "x.cansnap", "--", "true"],
            &[2],
        ),
    ];
    let mut failures = Vec::new();
    for (args, want) in cases {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let r = run(d, &args, Stdio::null(), false);
        let ok = r.code.is_some_and(|c| want.contains(&c))
            && r.rss_kib <= RSS_CEILING_KIB
            && r.cpu_s <= CPU_CEILING_S;
        if !ok {
            failures.push(format!(
                "{args:?}: exit {:?}, {} KiB, {:.1} s: {}",
                r.code, r.rss_kib, r.cpu_s, r.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The holes were counted as zero pages, and only the data exported.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(["corpus", "info", "--json", "big.pages"])
        .current_dir(d)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pages"], 40, "{v}");
    assert_eq!(v["zero_pages"], (100u64 << 18) - 40, "{v}");
    assert_eq!(
        std::fs::metadata(d.join("e.pages")).unwrap().len(),
        40 * 4096
    );
}
