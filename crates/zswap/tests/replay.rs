//! The replay engine end to end with the software canned codec
//! (kernel-2024, IAA format) on a few synthetic pages: the pool holds
//! exactly the zsmalloc class sizes of what was stored, page counts add up,
//! both incompressible-page policies, and the report serializes.

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::Bound;
use cannery_zswap::{run, FolioSize, Policy, Pool, Report, RunConfig, Zsmalloc};

/// An incompressible page (the codec's seeded stress generator).
fn noise(seed: u64) -> Vec<u8> {
    use cannery_engines::backend::stress::{page, Kind, Rng};
    page(Kind::Random, &mut Rng::new(seed), None)
}

/// Eight pages, two 16 KiB folios: text-like and counters, one same-filled
/// page per folio (zero, then a repeated 8-byte pattern), and one random
/// page in the second folio.
fn pages() -> Vec<Vec<u8>> {
    let text = |s: &[u8]| (0..PAGE_SIZE).map(|i| s[i % s.len()]).collect::<Vec<u8>>();
    vec![
        text(b"the quick brown fox jumps over the lazy dog. "),
        (0..PAGE_SIZE).map(|i| (i / 16) as u8).collect(),
        vec![0; PAGE_SIZE],
        text(b"0123456789abcdef"),
        (0..PAGE_SIZE).map(|i| (i % 8) as u8 * 3).collect(),
        noise(7),
        (0..PAGE_SIZE).map(|i| (i * 7 / 5) as u8).collect(),
        text(b"zswap stores cold pages; "),
    ]
}

fn table() -> Table {
    Table::builtin("kernel-2024").expect("built-in table")
}

/// Cannery's software engine, canned with `t` at the fast level, for
/// each worker: the compressing and the decompressing lanes.
fn codecs(t: &Table, workers: usize) -> (Vec<Bound<Software>>, Vec<Bound<Software>>) {
    let lanes = || {
        (0..workers)
            .map(|_| Software::bound(Mode::Canned, Format::Iaa, Level::Fast, Some(t)).unwrap())
            .collect()
    };
    (lanes(), lanes())
}

/// What one page should cost, by an independent encoder: `None` when
/// same-filled, else its object length (4096 when stored raw).
fn object_len(t: &Table, page: &[u8]) -> Option<usize> {
    let word = &page[..8];
    if page.chunks_exact(8).all(|w| w == word) {
        return None;
    }
    let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(t)).unwrap();
    let mut out = Vec::new();
    Some(match e.compress(page, &mut out).unwrap() {
        Outcome::Compressed(n) => n,
        Outcome::Incompressible => PAGE_SIZE,
    })
}

fn config(batch: usize, policy: Policy) -> RunConfig {
    RunConfig {
        compress_batch: batch,
        decompress_batch: 3,
        folio: FolioSize::K16,
        policy,
        unstored_same_filled: 0.0,
    }
}

#[test]
fn pool_bytes_are_the_class_sizes_of_the_stored_objects() {
    let t = table();
    let pages = pages();
    let corpus = pages.concat();
    let lens: Vec<Option<usize>> = pages.iter().map(|p| object_len(&t, p)).collect();
    assert_eq!(
        lens[5],
        Some(PAGE_SIZE),
        "the random page is incompressible"
    );
    let z = Zsmalloc::new();
    let mut pool = Pool::new();
    for len in lens.iter().flatten() {
        pool.add(*len);
    }
    let expected_bytes: usize = lens.iter().flatten().map(|&l| z.class_size(l)).sum();
    assert_eq!(pool.bytes, expected_bytes);

    for batch in [1, 2, 4] {
        let (enc, dec) = codecs(&t, 2);
        let r = run(&corpus, config(batch, Policy::StoreRaw), enc, dec).unwrap();
        assert_eq!(r.pages, 8);
        assert_eq!(r.same_filled_pages, 2, "batch {batch}");
        assert_eq!(r.compressed_pages, 5, "batch {batch}");
        assert_eq!(r.incompressible_pages, 1);
        assert_eq!(r.raw_pages, 1);
        assert_eq!(r.failed_pages + r.rejected_pages + r.mismatches, 0);
        // Each 16 KiB folio has one same-filled page, so at most 3 units.
        assert_eq!(r.max_units_per_store_call, batch.min(3));
        assert_eq!(r.pool_bytes, expected_bytes, "batch {batch}");
        assert_eq!(r.payload_bytes, lens.iter().flatten().sum::<usize>());
        assert_eq!(r.zspage_bytes, pool.zspage_bytes());
        let ratio = r.pool_ratio.expect("pool is not empty");
        assert_eq!(ratio, (8 * PAGE_SIZE) as f64 / expected_bytes as f64);
        // The effective ratio leaves the allocator out: 6 stored pages and
        // the 2 same-filled ones over the payload.
        let eff = r.effective_ratio.expect("pages were stored");
        assert_eq!(eff, (8 * PAGE_SIZE) as f64 / r.payload_bytes as f64);
    }
}

#[test]
fn rejecting_policy_drops_the_whole_folio_of_an_incompressible_page() {
    let t = table();
    let pages = pages();
    let corpus = pages.concat();
    let (enc, dec) = codecs(&t, 1);
    let r = run(&corpus, config(2, Policy::Reject), enc, dec).unwrap();
    // Pages 4..8 are the second folio; the random page rejects all four.
    assert_eq!(r.rejected_pages, 4);
    assert_eq!(r.incompressible_pages, 1);
    assert_eq!(r.raw_pages, 0);
    assert_eq!(r.same_filled_pages, 1);
    assert_eq!(r.compressed_pages, 3);
    let z = Zsmalloc::new();
    let first: usize = pages[..4]
        .iter()
        .filter_map(|p| object_len(&t, p))
        .map(|l| z.class_size(l))
        .sum();
    assert_eq!(r.pool_bytes, first);
    assert_eq!(r.mismatches, 0);
}

#[test]
fn the_report_round_trips_through_json_and_renders_one_row_per_run() {
    let t = table();
    let corpus = pages().concat();
    let (enc, dec) = codecs(&t, 1);
    let run1 = run(&corpus, config(4, Policy::StoreRaw), enc, dec).unwrap();
    let report = Report {
        corpus: "synthetic".into(),
        workloads: vec!["w".into()],
        files: 1,
        pages: 8,
        omitted_same_filled_pages: 0,
        mode: "canned:kernel-2024".into(),
        table: Some("kernel-2024".into()),
        format: Some("iaa".into()),
        level: Some("fast".into()),
        folio: FolioSize::K16.name().into(),
        workers: 1,
        policy: Policy::StoreRaw.name().into(),
        pool_model: cannery_zswap::report::POOL_MODEL.into(),
        latency: cannery_zswap::report::LATENCY.into(),
        runs: vec![run1],
        beside: vec![],
    };
    let json = serde_json::to_string(&report).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, report);
    let text = report.to_string();
    assert!(text.starts_with("corpus synthetic (1 workloads, 1 files, 8 pages; "));
    assert!(
        text.contains(", mode canned:kernel-2024 format iaa, folio 16k,"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 5 + 1);
    assert_eq!(report.mismatches(), 0);
}
