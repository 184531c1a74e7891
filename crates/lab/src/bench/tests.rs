//! Unit tests of `bench.rs` (a file of their own to keep both under 650 lines).

use super::*;
use crate::tabular::cells;

fn pages() -> Vec<Vec<u8>> {
    (0..8u32)
        .map(|k| {
            (0..PAGE_SIZE as u32)
                .map(|i| {
                    if i % 97 < 60 {
                        (i / 97 + k) as u8
                    } else {
                        (i * 31 + k) as u8
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn every_standard_codec_round_trips_and_reports() {
    let p = pages();
    let refs: Vec<&[u8]> = p.iter().map(|x| &x[..]).collect();
    let dict = cannery_engines::peer::train_zstd_dictionary(&refs, 2048);
    for c in standard_codecs(&Table::kernel_2024(), dict) {
        // A workload of 80 other pages and 20 same-filled ones: the 8
        // measured pages stand for 2 same-filled pages.
        let share = SameFilledShare::new(20.0, 80);
        let r = bench_codec("w", &c, &p, share, 1).unwrap();
        assert_eq!(r.pages, 8);
        assert!(r.ratio > 1.0, "{}: {}", r.codec, r.ratio);
        assert!((r.effective_ratio / r.ratio - 10.0 / 8.0).abs() < 1e-9);
        assert!(r.compress_ns_p50 <= r.compress_ns_p99);
    }
}

#[test]
fn qpl_rows_are_there_exactly_when_built_with_qpl() {
    let w = BenchWorkload {
        name: "w".into(),
        train: cannery_trainer::testutil::workload_pages(120, 0, 5),
        test: cannery_trainer::testutil::workload_pages(12, 0, 6),
        same_filled: SameFilledShare::new(0.0, 12),
    };
    let rs = bench_workload(&w, None, 1, &mut |_| {}).unwrap();
    let qpl: Vec<&BenchResult> = rs
        .iter()
        .filter(|r| matches!(r.codec, ModeKey::Qpl(_)))
        .collect();
    if !cfg!(feature = "qpl") {
        assert!(qpl.is_empty());
        let e = bench_codec(
            "w",
            &BenchCodec::Qpl(QplMode::Fixed, None),
            &w.test,
            w.same_filled,
            1,
        )
        .unwrap_err();
        assert!(e.to_string().contains("`qpl` feature"), "{e}");
        return;
    }
    assert_eq!(qpl.len(), QplMode::ALL.len());
    for r in qpl {
        // Every page round-tripped through QPL (bench_codec checks it).
        assert_eq!(r.pages, 12);
        assert!(r.ratio > 1.5, "{}: {}", r.codec, r.ratio);
    }
}

#[test]
fn a_broken_codec_is_reported_not_hidden() {
    // A canned table that cannot code every literal is refused up front.
    let mut l = *Table::kernel_2024().lengths();
    l.litlen[9] = 0;
    let t = Table::from_lengths(&l.litlen, &l.dist).unwrap();
    let c = standard_codecs(&t, None).remove(0);
    assert!(matches!(
        bench_codec("w", &c, &pages(), SameFilledShare::default(), 1),
        Err(BenchError::Setup { .. })
    ));
}

fn result(codec: &str, compress_ns: u64, decompress_ns: u64) -> BenchResult {
    BenchResult {
        workload: "w".into(),
        codec: codec.parse().unwrap(),
        pages: 8,
        ratio: 3.0,
        effective_ratio: 3.5,
        incompressible_pages: 0,
        compress_ns_p50: compress_ns,
        compress_ns_p99: compress_ns * 2,
        decompress_ns_p50: decompress_ns,
        decompress_ns_p99: decompress_ns * 2,
        compress_mb_s: 400.0,
        decompress_mb_s: 2000.0,
        cycled: None,
        batches: Vec::new(),
    }
}

#[test]
fn a_workload_table_has_one_unit_per_column_and_the_same_columns_both_ways() {
    let rs = [
        result("canned-fast", 20_000, 7_090),
        result("libdeflate-1", 40_000, 950),
        result("lz4", 8_000, 500),
    ];
    let refs: Vec<&BenchResult> = rs.iter().collect();
    let g = workload_table(&refs);
    let text = g.render(Style::Text);
    let w = BenchWorkload {
        name: "w".into(),
        train: vec![vec![0; PAGE_SIZE]],
        test: vec![vec![0; PAGE_SIZE]; 8],
        same_filled: SameFilledShare::default(),
    };
    let md = markdown("t", "m", &[w], &rs, None);
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    let header = cells(lines[0], Style::Markdown);
    assert_eq!(
        cells(text.lines().next().unwrap(), Style::Text),
        header,
        "{md}"
    );
    assert!(lines[1].starts_with("|---"), "{md}");
    assert!(lines[1].ends_with(":|"), "numbers right-aligned: {md}");
    assert_eq!(lines.len(), 2 + 3, "{md}");
    for l in &lines {
        assert_eq!(cells(l, Style::Markdown).len(), header.len(), "{l}");
    }
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let canned = cells(lines[2], Style::Markdown);
    assert_eq!(canned[col("comp p50 µs")], "20.00");
    assert_eq!(canned[col("decomp p50 µs")], "7.09");
    assert_eq!(canned[col("decomp p99 µs")], "14.18");
    assert_eq!(canned[col("comp time /ld1")], "0.50");
    // Every time column holds bare numbers in µs, whatever the size.
    for name in [
        "comp p50 µs",
        "comp p99 µs",
        "decomp p50 µs",
        "decomp p99 µs",
    ] {
        for l in &lines[2..] {
            let cell = cells(l, Style::Markdown)[col(name)];
            assert!(cell.parse::<f64>().is_ok(), "{name}: {cell:?}");
        }
    }
}

#[test]
fn a_workload_is_split_and_its_same_filled_share_kept() {
    let mut all: Vec<Result<Vec<u8>, ()>> = pages().into_iter().map(Ok).collect();
    all.extend((0..30).map(|_| Ok(vec![0u8; PAGE_SIZE])));
    let w = BenchWorkload::read("w", all, 10, Split::new(0.5, 3).unwrap(), 2)
        .unwrap()
        .expect("both parts have pages");
    assert!(w.test.len() <= 2 && !w.train.is_empty());
    // 30 zero pages read plus 10 counted at capture, beside 8 others.
    assert_eq!(w.same_filled, SameFilledShare::new(40.0, 8));
    let none = BenchWorkload::read::<()>("w", vec![], 0, Split::default(), 2).unwrap();
    assert!(none.is_none());
}

fn two_workloads() -> Vec<BenchWorkload> {
    (0..2u64)
        .map(|i| BenchWorkload {
            name: format!("w{i}"),
            train: cannery_trainer::testutil::workload_pages(120, i, 5 + i),
            test: cannery_trainer::testutil::workload_pages(12 + i as usize, i, 7 + i),
            same_filled: SameFilledShare::new(0.0, 12),
        })
        .collect()
}

#[test]
fn every_codec_row_gets_cycled_figures_over_the_asked_working_set() {
    let ws = two_workloads();
    let codecs: Vec<Vec<BenchCodec>> = ws
        .iter()
        .map(|w| workload_codecs(w, None).unwrap())
        .collect();
    let mut rs = Vec::new();
    for (w, c) in ws.iter().zip(&codecs) {
        rs.extend(bench_codecs(w, c, 1, &mut |_| {}).unwrap());
    }
    let opts = CycledOptions {
        bytes: (1 << 20) + 1,
        passes: 2,
    };
    let mut heard = Vec::new();
    let run = bench_cycled(&ws, &codecs, &opts, &mut rs, &mut |k| heard.push(k.clone())).unwrap();
    assert_eq!(heard.len(), codecs[0].len());
    // 1 MiB and a byte: 257 pages, the 25 held-out pages repeated.
    assert_eq!((run.pages, run.visits, run.passes), (25, 257, 2));
    for key in &heard {
        let rows: Vec<&BenchResult> = rs.iter().filter(|r| r.codec == *key).collect();
        assert_eq!(rows.len(), 2, "{key}");
        let visits: usize = rows
            .iter()
            .map(|r| r.cycled.as_ref().unwrap().cycled_pages)
            .sum();
        assert_eq!(
            visits,
            2 * 257,
            "{key}: every page of every pass timed once"
        );
    }
    for r in &rs {
        let c = r
            .cycled
            .as_ref()
            .unwrap_or_else(|| panic!("{} {}: no cycled figures", r.workload, r.codec));
        assert_eq!(c.cycled_working_set_bytes, 257 * PAGE_SIZE);
        assert!(c.cycled_compress_ns_p50 > 0, "{}", r.codec);
        assert!(c.cycled_decompress_ns_p50 > 0, "{}", r.codec);
        assert!(
            c.cycled_compress_ns_p99 >= c.cycled_compress_ns_p50,
            "{}",
            r.codec
        );
        assert!(
            c.cycled_decompress_ns_p99 >= c.cycled_decompress_ns_p50,
            "{}",
            r.codec
        );
    }
    // JSON gains the cycled keys beside the warm ones.
    let json = serde_json::to_value(&rs[0]).unwrap();
    for k in [
        "compress_ns_p50",
        "cycled_compress_ns_p50",
        "cycled_decompress_ns_p99",
        "cycled_pages",
    ] {
        assert!(json.get(k).is_some(), "{k}: {json}");
    }
    // The report leads with them: one cycled table per workload, a row per codec.
    let md = markdown("t", "m", &ws, &rs, Some(&run));
    let cycled = md.find("## Cycled").unwrap();
    assert!(cycled < md.find("\n## w0 (").unwrap(), "{md}");
    let section = &md[md.find("### w1 (cycled)").unwrap()..md.find("\n## w0 (").unwrap()];
    let rows = section.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(rows, 1 + codecs[1].len(), "{section}");
}

#[test]
fn a_cycled_run_without_pages_or_passes_is_an_error() {
    let mut ws = two_workloads();
    let codecs = vec![standard_codecs(&Table::kernel_2024(), None); 2];
    let none = CycledOptions {
        bytes: 1 << 16,
        passes: 0,
    };
    let e = bench_cycled(&ws, &codecs, &none, &mut [], &mut |_| {}).unwrap_err();
    assert!(matches!(e, BenchError::Empty(_)), "{e}");
    for w in &mut ws {
        w.test.clear();
    }
    let opts = CycledOptions {
        bytes: 1 << 16,
        passes: 1,
    };
    let e = bench_cycled(&ws, &codecs, &opts, &mut [], &mut |_| {}).unwrap_err();
    assert!(matches!(e, BenchError::Empty(_)), "{e}");
    let e = bench_cycled(&[], &[], &opts, &mut [], &mut |_| {}).unwrap_err();
    assert!(matches!(e, BenchError::Empty(_)), "{e}");
}

#[test]
fn batches_time_canned_fast_lz4_and_zstd1_in_whole_batches_of_1_8_and_16() {
    let p: Vec<Vec<u8>> = (0..3).flat_map(|_| pages()).collect();
    let codecs = standard_codecs(&Table::kernel_2024(), None);
    let batched: Vec<String> = codecs
        .iter()
        .filter(|c| in_batches(c))
        .map(|c| c.key().to_string())
        .collect();
    assert_eq!(batched, ["canned-fast", "zstd-1", "lz4"]);
    for c in codecs.iter().filter(|c| in_batches(c)) {
        let f = bench_batches("w", c, &p, 2).unwrap();
        // 24 pages: 24 in batches of 1 and of 8, 16 in one batch of 16.
        let shape: Vec<(usize, usize)> = f.iter().map(|b| (b.batch, b.pages)).collect();
        assert_eq!(shape, [(1, 24), (8, 24), (16, 16)], "{}", c.key());
        for b in &f {
            assert!(b.compress_ns_p50 > 0 && b.decompress_ns_p50 > 0, "{b:?}");
            assert!(b.compress_ns_p50 <= b.compress_ns_p99, "{b:?}");
            assert!(b.decompress_ns_p50 <= b.decompress_ns_p99, "{b:?}");
            assert!(b.sequential_compress_ns_p50 > 0, "{b:?}");
            assert!(b.sequential_decompress_ns_p50 > 0, "{b:?}");
        }
    }
    let e = bench_batches("w", &codecs[0], &[], 1).unwrap_err();
    assert!(matches!(e, BenchError::Empty(_)), "{e}");
}

#[test]
fn batch_figures_join_their_rows_in_json_and_the_report() {
    let ws = two_workloads();
    let mut rs = Vec::new();
    for w in &ws {
        let codecs = workload_codecs(w, None).unwrap();
        let start = rs.len();
        rs.extend(bench_codecs(w, &codecs, 1, &mut |_| {}).unwrap());
        let mut heard = Vec::new();
        bench_workload_batches(w, &codecs, 1, &mut rs[start..], &mut |k| {
            heard.push(k.to_string())
        })
        .unwrap();
        assert_eq!(heard, ["canned-fast", "zstd-1", "lz4"]);
    }
    for r in &rs {
        let json = serde_json::to_value(r).unwrap();
        let batched = ["canned-fast", "zstd-1", "lz4"].contains(&r.codec.to_string().as_str());
        assert_eq!(json.get("batches").is_some(), batched, "{}", r.codec);
        // 12 and 13 held-out pages: no whole batch of 16.
        assert_eq!(r.batches.len(), if batched { 2 } else { 0 }, "{}", r.codec);
    }
    let md = markdown("t", "m", &ws, &rs, None);
    let section = &md[md.find("### w1 (batches)").unwrap()..];
    let rows = section.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(rows, 1 + 3 * 2, "{section}");
    assert!(md.find("## Batches").unwrap() > md.find("\n## w1 (").unwrap());
    // Without batch figures, no batch section.
    let plain: Vec<BenchResult> = rs
        .iter()
        .cloned()
        .map(|mut r| {
            r.batches.clear();
            r
        })
        .collect();
    assert!(!markdown("t", "m", &ws, &plain, None).contains("## Batches"));
}
