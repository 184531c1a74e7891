//! `cannery bench` adds its cycled figures (each page timed once while
//! cycling through a working set) to every row, as new JSON keys beside
//! the warm ones, which stay as they were; `--no-cycled` leaves them out.
//! Batch figures join the rows of canned-fast, lz4 and zstd -1;
//! `--no-batches` leaves them out.

mod common;

use common::{cannery, stderr};
use serde_json::Value;

fn bench(extra: &[&str]) -> Vec<Value> {
    bench_pages("4", extra)
}

fn bench_pages(pages: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "bench",
        "--corpus",
        "fleet-snapshots",
        "--max-pages",
        pages,
        "--reps",
        "1",
        "--json",
    ];
    args.extend(extra);
    let o = cannery(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array().unwrap().clone()
}

/// A row without its times, rates and cycled keys (and its batch figures
/// without their times): what must not change.
fn untimed(row: &Value) -> Value {
    let mut m = row.as_object().unwrap().clone();
    m.retain(|k, _| !(k.contains("_ns_") || k.ends_with("_mb_s") || k.starts_with("cycled_")));
    if let Some(Value::Array(batches)) = m.get_mut("batches") {
        for b in batches.iter_mut() {
            *b = untimed(b);
        }
    }
    Value::Object(m)
}

#[test]
fn every_row_gets_cycled_figures_and_the_warm_keys_stay() {
    let cycled = bench(&["--cycled-mib", "1", "--cycled-passes", "2"]);
    let warm = bench(&["--no-cycled"]);
    assert_eq!(cycled.len(), warm.len());
    assert!(!cycled.is_empty());
    let mut visits = std::collections::BTreeMap::<String, u64>::new();
    for (c, w) in cycled.iter().zip(&warm) {
        assert_eq!(untimed(c), untimed(w));
        assert!(w.get("cycled_pages").is_none(), "{w}");
        let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k}: {c}"));
        // 6 workloads of 4 held-out pages, repeated to 1 MiB: 256 pages.
        assert_eq!(n("cycled_working_set_bytes"), 1 << 20);
        for dir in ["compress", "decompress"] {
            let p50 = n(&format!("cycled_{dir}_ns_p50"));
            assert!(p50 > 0, "{c}");
            assert!(n(&format!("cycled_{dir}_ns_p99")) >= p50, "{c}");
        }
        *visits.entry(c["codec"].to_string()).or_default() += n("cycled_pages");
    }
    for (codec, v) in visits {
        assert_eq!(v, 2 * 256, "{codec}: every page of both passes timed once");
    }
}

#[test]
fn canned_fast_lz4_and_zstd1_rows_get_batch_figures_unless_told_not_to() {
    let rows = bench_pages("8", &["--no-cycled"]);
    let mut batched = 0;
    for r in &rows {
        let codec = r["codec"].as_str().unwrap();
        match r.get("batches") {
            Some(b) => {
                assert!(["canned-fast", "lz4", "zstd-1"].contains(&codec), "{r}");
                // 8 held-out pages: whole batches of 1 and of 8, none of 16.
                let shape: Vec<(u64, u64)> = b
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| (x["batch"].as_u64().unwrap(), x["pages"].as_u64().unwrap()))
                    .collect();
                assert_eq!(shape, [(1, 8), (8, 8)], "{r}");
                batched += 1;
            }
            None => assert!(!["canned-fast", "lz4", "zstd-1"].contains(&codec), "{r}"),
        }
    }
    assert_eq!(batched, 3 * 6, "three codecs on six workloads");
    let plain = bench_pages("8", &["--no-cycled", "--no-batches"]);
    assert!(plain.iter().all(|r| r.get("batches").is_none()));
}
