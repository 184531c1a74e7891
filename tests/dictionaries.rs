//! The dictionaries `cannery train` writes (`NAME.dict`, `fleet.dict`):
//! in the form zstd's own tools and zram's `algorithm_params dict=` load,
//! at most 64 KiB (the kernel's lz4 backend refuses more), none with
//! `--no-dicts`. Needs the `zstd` command (scripts/test installs it); a
//! machine without it fails the test, it is not skipped.

mod common;

use common::cannery;
use std::fs;
use std::path::Path;
use std::process::Command;

/// A page of the corpus's redis workload.
fn redis_pages(dir: &Path) -> Vec<u8> {
    let out = dir.join("redis.pages");
    let o = cannery(&[
        "corpus",
        "export",
        "fleet-snapshots",
        "--workload",
        "redis",
        "--sample",
        "8",
        "--seed",
        "3",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    fs::read(out).unwrap()
}

#[test]
fn a_train_dictionary_decodes_what_zstd_made_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let o = cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "--no-peers",
        "--eval-pages",
        "50",
        "-q",
        "-o",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in [
        "gcc-build",
        "jvm-index",
        "node-service",
        "python-etl",
        "redis",
        "fleet",
    ] {
        let d = fs::read(t.join(format!("{name}.dict"))).unwrap();
        assert!(d.len() <= 64 * 1024, "{name}: {} bytes", d.len());
        // zstd's dictionary format (magic 0xEC30A437), not raw content.
        assert_eq!(d[..4], [0x37, 0xA4, 0x30, 0xEC], "{name}");
    }
    let pages = redis_pages(dir.path());
    let input = dir.path().join("pages.bin");
    fs::write(&input, &pages).unwrap();
    let dict = t.join("redis.dict");
    let frame = dir.path().join("pages.zst");
    let made = Command::new("zstd")
        .args(["-q", "-1", "-D"])
        .arg(&dict)
        .arg(&input)
        .arg("-o")
        .arg(&frame)
        .status()
        .unwrap_or_else(|e| {
            panic!("this test needs the zstd command (apt-get install zstd; scripts/test installs it): {e}")
        });
    assert!(made.success());
    let frame = fs::read(&frame).unwrap();
    let d = fs::read(&dict).unwrap();
    let mut with = zstd::bulk::Decompressor::with_dictionary(&d).unwrap();
    assert_eq!(with.decompress(&frame, pages.len()).unwrap(), pages);
    // The frame needs that dictionary: without it zstd refuses.
    let mut without = zstd::bulk::Decompressor::new().unwrap();
    assert!(without.decompress(&frame, pages.len()).is_err());
    // And the other way: zstd's CLI reads a frame the library made with it.
    let ours = zstd::bulk::Compressor::with_dictionary(1, &d)
        .unwrap()
        .compress(&pages)
        .unwrap();
    let ours_path = dir.path().join("ours.zst");
    fs::write(&ours_path, ours).unwrap();
    let back = Command::new("zstd")
        .args(["-q", "-d", "-c", "-D"])
        .arg(&dict)
        .arg(&ours_path)
        .output()
        .unwrap();
    assert!(back.status.success());
    assert_eq!(back.stdout, pages);

    // --no-dicts writes none.
    let t2 = dir.path().join("t2");
    let o = cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "--no-peers",
        "--no-dicts",
        "--eval-pages",
        "50",
        "-q",
        "-o",
        t2.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(fs::read_dir(&t2)
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().ends_with(".dict")));
}
