//! The `cannery` binary: table, compress and decompress commands end to end,
//! including their error messages and exit status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cannery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .output()
        .expect("runs")
}

fn ok(args: &[&str]) -> String {
    let o = cannery(args);
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn fails(args: &[&str]) -> String {
    let o = cannery(args);
    assert!(!o.status.success(), "{args:?} unexpectedly succeeded");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one-line reason expected: {err}"
    );
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// 24 pages: text, structured binary, zeros and random bytes. The text is
/// Rust source frozen as test data, so editing the code does not change it.
fn pages_file(dir: &Path) -> PathBuf {
    let mut data: Vec<u8> = Vec::new();
    let src = include_str!("../crates/codec/tests/data/source-text.txt").as_bytes();
    while data.len() < 8 * 4096 {
        data.extend_from_slice(src);
    }
    data.truncate(8 * 4096);
    for i in 0..8 * 512u64 {
        data.extend_from_slice(&(0x5555_0000_1000u64 + i * 24).to_le_bytes());
    }
    data.extend(std::iter::repeat_n(0u8, 4 * 4096));
    let mut x = cannery_codec::rng::XorShift64::new(88172645463325252);
    for _ in 0..4 * 4096 {
        data.push(x.next_u64() as u8);
    }
    let p = dir.join("in.pages");
    std::fs::write(&p, &data).unwrap();
    p
}

#[test]
fn compress_decompress_round_trip_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let input = pages_file(dir.path());
    let rec = dir.path().join("out.records");
    let back = dir.path().join("back.pages");
    let table = dir.path().join("k.table.json");
    ok(&["table", "builtin", "kernel-2024", "-o", s(&table)]);
    for (mode, format) in [
        ("fixed", "deflate"),
        ("dynamic", "deflate"),
        ("canned", "iaa"),
        ("canned", "deflate"),
    ] {
        for level in ["fast", "default", "best"] {
            // A table is for canned mode only (others refuse one).
            let table_args: &[&str] = if mode == "canned" {
                &["--table", s(&table)]
            } else {
                &[]
            };
            let mut args = vec!["compress"];
            args.extend_from_slice(table_args);
            args.extend_from_slice(&[
                "--mode",
                mode,
                "--format",
                format,
                "--level",
                level,
                "--in",
                s(&input),
                "--emit",
                "records",
                "--out",
                s(&rec),
                "--force",
                "--json",
            ]);
            let out = ok(&args);
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["pages"], 24);
            assert_eq!(
                v["incompressible_pages"], 4,
                "{mode} {level}: the random pages"
            );
            assert!(v["ratio"].as_f64().unwrap() > 1.5);
            ok(&[
                "decompress",
                "--table",
                s(&table),
                "--mode",
                mode,
                "--format",
                format,
                "--in",
                s(&rec),
                "--out",
                s(&back),
                "-f",
            ]);
            assert_eq!(
                std::fs::read(&back).unwrap(),
                std::fs::read(&input).unwrap(),
                "{mode}/{format}/{level}"
            );
        }
    }
    // Records: u32 LE length then bytes; the random pages are stored raw (4096).
    let bytes = std::fs::read(&rec).unwrap();
    let mut off = 0;
    let mut lens = Vec::new();
    while off < bytes.len() {
        let l = u32::from_le_bytes(bytes[off..off + 4].try_into().unwrap()) as usize;
        lens.push(l);
        off += 4 + l;
    }
    assert_eq!(off, bytes.len());
    assert_eq!(lens.len(), 24);
    assert!(lens[20..].iter().all(|&l| l == 4096));
}

#[test]
fn kernel_vectors_decode_with_max_output() {
    let dir = tempfile::tempdir().unwrap();
    let v: serde_json::Value = serde_json::from_str(include_str!(
        "../crates/codec/tests/data/kernel-canned-2024.json"
    ))
    .unwrap();
    let hex = |s: &str| {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect::<Vec<u8>>()
    };
    let mut rec = Vec::new();
    let mut expected = Vec::new();
    for vec in v["vectors"].as_array().unwrap() {
        let body = hex(vec["iaa_out_hex"].as_str().unwrap());
        rec.extend_from_slice(&(body.len() as u32).to_le_bytes());
        rec.extend_from_slice(&body);
        expected.extend(hex(vec["input_hex"].as_str().unwrap()));
    }
    let rp = dir.path().join("hw.records");
    std::fs::write(&rp, &rec).unwrap();
    let out = dir.path().join("hw.out");
    ok(&[
        "decompress",
        "--table",
        "kernel-2024",
        "--mode",
        "canned",
        "--format",
        "iaa",
        "--in",
        s(&rp),
        "--max-output",
        "4096",
        "--out",
        s(&out),
    ]);
    assert_eq!(std::fs::read(&out).unwrap(), expected);
    // Without --max-output every record must be a whole page; the output
    // from before stays as it was.
    let err = fails(&[
        "decompress",
        "--table",
        "kernel-2024",
        "--mode",
        "canned",
        "--in",
        s(&rp),
        "--out",
        s(&out),
        "--force",
    ]);
    assert_eq!(std::fs::read(&out).unwrap(), expected);
    assert!(
        err.contains("record 0") && err.contains("not a 4096-byte page"),
        "{err}"
    );
}

#[test]
fn errors_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.pages");
    std::fs::write(&odd, vec![1u8; 5000]).unwrap();
    let out = dir.path().join("o");
    let err = fails(&[
        "compress",
        "--mode",
        "fixed",
        "--in",
        s(&odd),
        "--out",
        s(&out),
    ]);
    assert!(err.contains("page 1 has 904 bytes"), "{err}");
    assert!(!out.exists(), "nothing written on failure");
    let input = pages_file(dir.path());
    let err = fails(&[
        "compress",
        "--mode",
        "canned",
        "--in",
        s(&input),
        "--out",
        s(&out),
    ]);
    assert!(err.contains("needs --table"), "{err}");
    let err = fails(&[
        "compress",
        "--mode",
        "canned",
        "--table",
        "nope",
        "--in",
        s(&input),
        "--out",
        s(&out),
    ]);
    assert!(err.contains("not a built-in table"), "{err}");
    // A damaged records file names the record and offset.
    ok(&[
        "compress",
        "-f",
        "--mode",
        "canned",
        "--table",
        "kernel-2024",
        "--in",
        s(&input),
        "--out",
        s(&out),
    ]);
    let mut bytes = std::fs::read(&out).unwrap();
    bytes[10] ^= 0x55;
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&out, &bytes).unwrap();
    let err = fails(&[
        "decompress",
        "--mode",
        "canned",
        "--table",
        "kernel-2024",
        "--in",
        s(&out),
        "--out",
        s(&dir.path().join("b")),
    ]);
    assert!(
        err.contains("record 0 (byte offset 0)") || err.contains("truncated"),
        "{err}"
    );
    // A table file that is not a table.
    let err = fails(&["table", "show", s(&odd)]);
    assert!(err.contains("not a cannery table"), "{err}");
}

#[test]
fn table_commands() {
    let dir = tempfile::tempdir().unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["table", "show", "kernel-2024", "--json"])).unwrap();
    assert_eq!(v["litlen_lengths"].as_array().unwrap().len(), 286);
    assert_eq!(v["dist_lengths"].as_array().unwrap().len(), 30);
    assert_eq!(v["iaa_compatible"], true);
    let id = v["id"].as_str().unwrap().to_string();
    // Import the same lengths from a raw 316-byte file: same id.
    let mut raw: Vec<u8> = v["litlen_lengths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u8)
        .collect();
    raw.extend(
        v["dist_lengths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u8),
    );
    let rawp = dir.path().join("k.lengths");
    std::fs::write(&rawp, &raw).unwrap();
    let tp = dir.path().join("k.table");
    ok(&[
        "table",
        "import",
        "--from",
        "lengths",
        s(&rawp),
        "-o",
        s(&tp),
    ]);
    let v2: serde_json::Value =
        serde_json::from_str(&ok(&["table", "show", s(&tp), "--json"])).unwrap();
    assert_eq!(v2["id"], id);
    // Over-subscribed lengths are refused with the reason.
    std::fs::write(&rawp, vec![1u8; 316]).unwrap();
    let err = fails(&[
        "table",
        "import",
        "--from",
        "lengths",
        s(&rawp),
        "-o",
        s(&tp),
    ]);
    assert!(err.contains("over-subscribed"), "{err}");
    let text = ok(&["table", "show", "fixed"]);
    assert!(text.contains("IAA       ok"), "{text}");
}
