//! QPL's canned decompression of tables it cannot build from a histogram
//! (kernel-2024: distance symbols 24..=29 uncoded), through the table's
//! deflate header; damaged streams; both directions with tables QPL loads
//! unchanged, through QPL's canned mode and through the header. Runs only
//! with the `qpl` feature (hardware path if an IAA work queue is usable,
//! else QPL's software path). Does not measure speed or ratio.

#![cfg(feature = "qpl")]

mod common;

use cannery_codec::decode::CannedDecoder;
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::{Mode, Outcome, Table};
use cannery_engines::backend::qpl::{qpl_loadable_default_table, Qpl};
use cannery_engines::backend::stress::{page, Kind, Rng};
use cannery_engines::backend::{software::Software, Engine, EngineError};

/// Synthetic pages: every generated stress kind from a few seeds, and the
/// shared sample pages (text, pointers, structs, small integers, random).
fn synthetic_pages() -> Vec<Vec<u8>> {
    let mut v = common::sample_pages();
    for seed in 0..4 {
        let mut rng = Rng::new(seed);
        for k in Kind::GENERATED {
            v.push(page(k, &mut rng, None));
        }
    }
    v.push(vec![0u8; 4096]);
    v.push(Vec::new());
    v.push(b"Join us now and share the software".to_vec());
    v
}

/// Our canned stream of `page`, or `None` if incompressible.
fn ours(sw: &mut Software, table: &Table, page: &[u8]) -> Option<Vec<u8>> {
    let mut s = Vec::new();
    match sw
        .compress(Mode::Canned, Some(table), page, &mut s)
        .unwrap()
    {
        Outcome::Compressed(n) => {
            s.truncate(n);
            Some(s)
        }
        Outcome::Incompressible => None,
    }
}

fn qpl_decompress(q: &mut Qpl, table: &Table, stream: &[u8]) -> Result<Vec<u8>, EngineError> {
    let mut out = [0u8; 4096];
    let n = q.decompress(Mode::Canned, Some(table), stream, &mut out)?;
    Ok(out[..n].to_vec())
}

#[test]
fn kernel_2024_pages_from_our_encoder_decode_with_qpl() {
    let k = Table::kernel_2024();
    let mut q = Qpl::open().unwrap();
    assert!(q.capabilities().canned_compress_check(&k).is_err());
    assert_eq!(q.capabilities().canned_decompress_check(&k), Ok(()));
    let mut sw = Software::new();
    let corpus = common::corpus_pages(60, 1);
    let mut checked = (0, 0);
    for (i, p) in synthetic_pages().iter().chain(&corpus).enumerate() {
        let Some(s) = ours(&mut sw, &k, p) else {
            continue;
        };
        let got = qpl_decompress(&mut q, &k, &s)
            .unwrap_or_else(|e| panic!("page {i} ({} bytes): {e}", s.len()));
        assert!(got == *p, "page {i}: qpl decoded other bytes");
        if i < synthetic_pages().len() {
            checked.0 += 1;
        } else {
            checked.1 += 1;
        }
    }
    eprintln!(
        "kernel-2024: {} synthetic and {} corpus pages decoded by qpl ({:?} path)",
        checked.0,
        checked.1,
        q.last_path()
    );
    assert!(checked.0 >= 15, "{checked:?}");
    // The fixed code as a canned table: its end-of-block is all zero bits, so
    // several framings are tried.
    let f = Table::fixed();
    for p in synthetic_pages() {
        if let Some(s) = ours(&mut sw, &f, &p) {
            assert_eq!(qpl_decompress(&mut q, &f, &s).unwrap(), p);
        }
    }
}

#[test]
fn the_kernel_patch_vectors_decode_with_qpl() {
    // IAA hardware's and zlib-canned's outputs from the 2024 patch.
    let k = Table::kernel_2024();
    let mut q = Qpl::open().unwrap();
    for (input, iaa, zlib) in common::vectors() {
        assert_eq!(qpl_decompress(&mut q, &k, &iaa).unwrap(), input);
        assert_eq!(qpl_decompress(&mut q, &k, &zlib).unwrap(), input);
    }
}

/// How QPL's header route answered one damaged stream.
#[derive(Debug, Default)]
struct Tally {
    qpl_errors: std::collections::BTreeMap<&'static str, usize>,
    no_end: usize,
    wrong_bytes: usize,
    still_the_page: usize,
}

#[test]
fn damaged_bodies_do_not_decode_to_the_page() {
    let k = Table::kernel_2024();
    let mut q = Qpl::open().unwrap();
    let mut sw = Software::new();
    let ours_dec = CannedDecoder::new(&k);
    let p = page(Kind::Words, &mut Rng::new(11), None);
    let s = ours(&mut sw, &k, &p).unwrap();
    let mut variants: Vec<Vec<u8>> = Vec::new();
    for bit in (0..s.len() * 8).step_by(3) {
        let mut v = s.clone();
        v[bit / 8] ^= 1 << (bit % 8);
        variants.push(v);
    }
    for n in 0..s.len() {
        variants.push(s[..n].to_vec());
    }
    for extra in [&[0u8][..], &[0xff], &[0, 0, 0, 0x80]] {
        variants.push([&s[..], extra].concat());
    }
    let mut t = Tally::default();
    for v in &variants {
        match qpl_decompress(&mut q, &k, v) {
            Err(EngineError::Qpl { name, .. }) => *t.qpl_errors.entry(name).or_default() += 1,
            Err(EngineError::Rejected { .. }) => t.no_end += 1,
            Err(EngineError::OutputLimit { .. }) => {
                *t.qpl_errors.entry("output limit").or_default() += 1
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(out) if out != p => t.wrong_bytes += 1,
            Ok(_) => {
                // Only acceptable if the damaged stream is itself a valid
                // canned stream of the same page (our decoder agrees).
                let mut o = [0u8; 4096];
                let n = ours_dec.decompress(v, &mut o);
                assert_eq!(n, Ok(p.len()), "qpl returned the page for a damaged stream");
                assert_eq!(o[..p.len()], p[..]);
                t.still_the_page += 1;
            }
        }
    }
    eprintln!(
        "{} damaged kernel-2024 streams through qpl: {t:?}",
        variants.len()
    );
    // Bit flips that keep a valid stream of the same page are rare.
    assert!(t.still_the_page * 50 < variants.len(), "{t:?}");
    // Every truncation is refused (the end-of-block is checked).
    for n in 0..s.len() {
        assert!(
            qpl_decompress(&mut q, &k, &s[..n]).is_err(),
            "truncated to {n}"
        );
    }
}

/// A trained-looking table QPL loads unchanged (skewed counts, lengths up
/// to 12, every symbol coded).
fn all_coded_table() -> Table {
    let ll: Vec<u64> = (0..286u64)
        .map(|s| if s < 256 { 1000 / (1 + s % 37) } else { 50 })
        .collect();
    let d: Vec<u64> = (0..30u64).map(|s| 400 / (1 + s)).collect();
    Table::from_lengths(
        &limited_code_lengths(&ll, 12),
        &limited_code_lengths(&d, 10),
    )
    .unwrap()
}

#[test]
fn loadable_tables_round_trip_both_ways() {
    let mut q = Qpl::open().unwrap();
    let mut sw = Software::new();
    let mut pages = synthetic_pages();
    pages.extend(common::corpus_pages(20, 1));
    for table in [qpl_loadable_default_table(), all_coded_table()] {
        assert_eq!(q.capabilities().canned_compress_check(&table), Ok(()));
        assert_eq!(q.capabilities().canned_decompress_check(&table), Ok(()));
        q.load_unchanged(&table).unwrap();
        let mut both = (0, 0);
        for (i, p) in pages.iter().enumerate() {
            // QPL canned compression -> our decoder, QPL's canned mode, QPL
            // through the header. (QPL refuses an empty input with
            // QPL_STS_SIZE_ERR.)
            let mut s = Vec::new();
            if p.is_empty() {
                continue;
            }
            if let Outcome::Compressed(n) =
                q.compress(Mode::Canned, Some(&table), p, &mut s).unwrap()
            {
                s.truncate(n);
                let mut out = [0u8; 4096];
                let n = sw
                    .decompress(Mode::Canned, Some(&table), &s, &mut out)
                    .unwrap();
                assert!(out[..n] == p[..], "page {i}: ours on qpl's stream");
                let n = q.decompress_with_qpl_table(&table, &s, &mut out).unwrap();
                assert!(
                    out[..n] == p[..],
                    "page {i}: qpl canned mode on qpl's stream"
                );
                assert!(
                    qpl_decompress(&mut q, &table, &s).unwrap() == *p,
                    "page {i}"
                );
                both.0 += 1;
            }
            // Our canned compression -> QPL's canned mode and the header route.
            if let Some(s) = ours(&mut sw, &table, p) {
                let mut out = [0u8; 4096];
                let n = q.decompress_with_qpl_table(&table, &s, &mut out).unwrap();
                assert!(out[..n] == p[..], "page {i}: qpl canned mode on our stream");
                assert!(
                    qpl_decompress(&mut q, &table, &s).unwrap() == *p,
                    "page {i}"
                );
                both.1 += 1;
            }
        }
        eprintln!(
            "table {}: {} qpl-compressed and {} cannery-compressed pages checked",
            table.id(),
            both.0,
            both.1
        );
        assert!(both.0 >= 15 && both.1 >= 15, "{both:?}");
    }
}

#[test]
fn the_default_table_is_what_qpl_loads() {
    let d = qpl_loadable_default_table();
    let mut q = Qpl::open().unwrap();
    // Loading reads QPL's lengths back (from a static-mode header) and
    // compares them with ours.
    q.load_unchanged(&d).unwrap();
    // And QPL's canned output with it re-encodes exactly with our Huffman stage.
    let p = page(Kind::Words, &mut Rng::new(3), None);
    let mut s = Vec::new();
    let Outcome::Compressed(n) = q.compress(Mode::Canned, Some(&d), &p, &mut s).unwrap() else {
        panic!("a text page is compressible")
    };
    s.truncate(n);
    let r = cannery_engines::backend::check::reencode_canned(&d, &s).unwrap();
    assert!(r.is_ok(), "{r:?}");
}

/// The 56-bit budget of `table::rules` against QPL itself: among complete,
/// all-coded tables built with every pair of per-alphabet limits from
/// geometric weights (longest codes on length and far distance symbols),
/// QPL loads unchanged exactly those within the budget, and rebuilds the
/// others (their lengths come back different). Covers totals 56 and 57.
#[test]
fn qpl_loads_exactly_the_tables_within_the_56_bit_budget() {
    use cannery_codec::table::rules::{BitBudget, Rule};
    let ll_w: Vec<u64> = (0..286u64).map(|i| 1 + (1u64 << (40 - i % 40))).collect();
    let d_w: Vec<u64> = (0..30u64).map(|i| 1 + (1u64 << (40 - i))).collect();
    let mut q = Qpl::open().unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for a in 9..=15u8 {
        for b in 5..=15u8 {
            let t = Table::from_lengths(
                &limited_code_lengths(&ll_w, a),
                &limited_code_lengths(&d_w, b),
            )
            .unwrap();
            let total = BitBudget::of(t.lengths()).total();
            let predicted = Rule::QplLoadable.check(&t).is_ok();
            assert_eq!(predicted, total <= 56, "all coded and complete: {total}");
            let loaded = q.load_unchanged(&t);
            assert_eq!(
                loaded.is_ok(),
                predicted,
                "limits {a}/{b}, budget {total}: qpl says {loaded:?}"
            );
            *seen.entry(total).or_insert(0) += 1;
        }
    }
    assert!(seen.contains_key(&56) && seen.contains_key(&57), "{seen:?}");
}
