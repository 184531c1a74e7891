//! Every available (compressor, decompressor) pair on stress pages, in every
//! mode both can speak: decompressed bytes must equal the page, and canned
//! streams must re-encode bit-exactly with our Huffman stage. With the `qpl`
//! feature the QPL backend (hardware or software path) joins the matrix.

mod common;

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::{Mode, Table};
use cannery_engines::backend::check::{check_pair, check_stream, PairOutcome, Reencode};
use cannery_engines::backend::stress::{page, Kind, Rng};
use cannery_engines::backend::{
    self, canned_bits_to_deflate, canned_to_deflate, Engine, EngineError,
};

fn available() -> Vec<Box<dyn Engine>> {
    backend::NAMES
        .iter()
        .filter_map(|n| backend::open(n).ok())
        .collect()
}

/// A table every backend can load unchanged: all 316 symbols coded,
/// complete, within QPL's 56-bit rule (lengths from skewed counts).
fn all_coded_table() -> Table {
    let ll: Vec<u64> = (0..286u64)
        .map(|s| if s < 256 { 1000 / (1 + s % 37) } else { 50 })
        .collect();
    let d: Vec<u64> = (0..30u64).map(|s| 400 / (1 + s)).collect();
    let t = Table::from_lengths(
        &limited_code_lengths(&ll, 12),
        &limited_code_lengths(&d, 10),
    )
    .unwrap();
    assert!(t.lengths().litlen.iter().all(|&l| l > 0) && t.lengths().dist.iter().all(|&l| l > 0));
    t
}

fn pages() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(2024);
    let mut v: Vec<Vec<u8>> = Kind::GENERATED
        .iter()
        .map(|&k| page(k, &mut rng, None))
        .collect();
    let base = v[5].clone();
    v.push(page(Kind::Mutated, &mut rng, Some(&base)));
    v.push(vec![0u8; 4096]);
    v.push(
        b"Join us now and share the software; You'll be free, hackers, you'll be free.".to_vec(),
    );
    v
}

#[test]
fn every_pair_round_trips_every_mode() {
    let tables = [Table::kernel_2024(), all_coded_table(), Table::fixed()];
    let mut comps = available();
    let mut decomps = available();
    let mut checked = 0;
    for table in &tables {
        for mode in Mode::ALL {
            for c in comps.iter_mut() {
                if !c.capabilities().can_compress(mode) {
                    continue;
                }
                if mode == Mode::Canned && c.capabilities().canned_compress_check(table).is_err() {
                    continue;
                }
                for d in decomps.iter_mut() {
                    if !d.capabilities().can_decompress(mode) {
                        continue;
                    }
                    if mode == Mode::Canned
                        && d.capabilities().canned_decompress_check(table).is_err()
                    {
                        continue;
                    }
                    for p in pages() {
                        let r = check_pair(c.as_mut(), d.as_mut(), mode, Some(table), &p);
                        match &r.outcome {
                            PairOutcome::Fail { stage, detail } => panic!(
                                "{} -> {} {mode} table {}: {stage}: {detail}",
                                c.name(),
                                d.name(),
                                table.id()
                            ),
                            PairOutcome::Pass { reencode, .. } => {
                                if mode == Mode::Canned {
                                    let want = if c.name() == "qpl"
                                        && c.last_path() == backend::ExecPath::Software
                                    {
                                        Reencode::ExactWithQplTail
                                    } else {
                                        Reencode::Exact
                                    };
                                    assert_eq!(*reencode, Some(want), "{} canned", c.name());
                                }
                                checked += 1;
                            }
                            PairOutcome::Incompressible => {}
                        }
                    }
                }
            }
        }
    }
    // software alone gives 3 modes x 4 decompressors x several pages.
    assert!(checked > 100, "only {checked} pairs checked");
}

#[test]
fn incompressible_pages_are_reported_not_stored() {
    let mut sw = backend::open("software").unwrap();
    let p = page(Kind::Random, &mut Rng::new(1), None);
    let mut out = Vec::new();
    for mode in Mode::ALL {
        let o = sw
            .compress(mode, Some(&Table::kernel_2024()), &p, &mut out)
            .unwrap();
        assert_eq!(o, cannery_codec::Outcome::Incompressible, "{mode}");
    }
}

#[test]
fn reference_inflaters_reject_corrupt_streams_and_respect_limits() {
    let t = Table::kernel_2024();
    let p = page(Kind::Words, &mut Rng::new(5), None);
    let mut sw = backend::open("software").unwrap();
    let mut s = Vec::new();
    sw.compress(Mode::Canned, Some(&t), &p, &mut s).unwrap();
    for name in ["software", "miniz_oxide", "zlib", "libdeflate"] {
        let mut b = backend::open(name).unwrap();
        // Output limit below the page size.
        let mut small = [0u8; 100];
        let e = b
            .decompress(Mode::Canned, Some(&t), &s, &mut small)
            .unwrap_err();
        assert!(
            matches!(e, EngineError::OutputLimit { .. } | EngineError::Decode(_)),
            "{name}: {e}"
        );
        // Truncated stream.
        let r = check_stream(b.as_mut(), Mode::Canned, Some(&t), &p, &s[..s.len() / 2]);
        assert!(
            matches!(r, PairOutcome::Fail { .. }),
            "{name} accepted a truncated stream"
        );
        // Canned without a table.
        let mut out = [0u8; 4096];
        assert_eq!(
            b.decompress(Mode::Canned, None, &s, &mut out),
            Err(EngineError::TableRequired)
        );
    }
}

#[test]
fn canned_with_header_is_what_reference_inflaters_read() {
    let t = Table::kernel_2024();
    let p = page(Kind::Words, &mut Rng::new(9), None);
    let mut sw = backend::open("software").unwrap();
    let mut s = Vec::new();
    sw.compress(Mode::Canned, Some(&t), &p, &mut s).unwrap();
    let d = canned_to_deflate(&t, &s).unwrap();
    let v = miniz_oxide::inflate::decompress_to_vec(&d).unwrap();
    assert_eq!(v, p);
}

/// A canned stream of `page` in QPL's software form, and its body's length
/// in bits (see [`common::qpl_form`]).
fn qpl_form(t: &Table, page: &[u8]) -> (Vec<u8>, usize) {
    let mut sw = backend::open("software").unwrap();
    let mut s = Vec::new();
    sw.compress(Mode::Canned, Some(t), page, &mut s).unwrap();
    let tokens = cannery_codec::decode::CannedDecoder::new(t)
        .tokens(&s, 4096)
        .unwrap();
    common::qpl_form(&tokens, t)
}

#[test]
fn canned_body_as_deflate_ends_at_its_final_block() {
    let t = Table::kernel_2024();
    let dec = cannery_codec::decode::CannedDecoder::new(&t);
    for seed in 0..8 {
        let p = page(Kind::Words, &mut Rng::new(seed), None);
        let (s, bits) = qpl_form(&t, &p);
        assert_eq!(dec.body_bits(&s, 4096), Ok(bits));
        let mut inflater = miniz_oxide::inflate::core::DecompressorOxide::new();
        let mut out = vec![0u8; 4096];
        // Every bit: the tail follows the final block.
        let whole = canned_to_deflate(&t, &s).unwrap();
        let (_, read, _) = miniz_oxide::inflate::core::decompress(
            &mut inflater,
            &whole,
            &mut out,
            0,
            miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        assert!(read < whole.len(), "seed {seed}: the tail is read");
        // The body's bits: the stream ends in its last byte.
        let exact = canned_bits_to_deflate(&t, &s, bits).unwrap();
        inflater.init();
        let (status, read, n) = miniz_oxide::inflate::core::decompress(
            &mut inflater,
            &exact,
            &mut out,
            0,
            miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        assert_eq!(
            status,
            miniz_oxide::inflate::TINFLStatus::Done,
            "seed {seed}"
        );
        assert_eq!((read, n), (exact.len(), 4096), "seed {seed}");
        assert_eq!(out, p, "seed {seed}");
    }
}

#[test]
fn software_backend_keeps_no_state_between_pages() {
    // One backend object over many pages: compressing a page again after
    // all the others gives the same result and bytes, and every compressed
    // page decodes back to itself.
    let t = Table::kernel_2024();
    let ps = pages();
    let mut sw = backend::open("software").unwrap();
    let mut outs = vec![Vec::new(); ps.len()];
    let rs: Vec<_> = ps
        .iter()
        .zip(outs.iter_mut())
        .map(|(p, o)| sw.compress(Mode::Canned, Some(&t), p, o))
        .collect();
    for (i, p) in ps.iter().enumerate() {
        let mut one = Vec::new();
        assert_eq!(rs[i], sw.compress(Mode::Canned, Some(&t), p, &mut one));
        if let Ok(cannery_codec::Outcome::Compressed(_)) = rs[i] {
            assert_eq!(outs[i], one);
            let mut page_out = [0u8; 4096];
            let n = sw
                .decompress(Mode::Canned, Some(&t), &outs[i], &mut page_out)
                .unwrap();
            assert_eq!(&page_out[..n], &p[..]);
        }
    }
}

#[test]
fn reference_backends_run_as_batch_lanes() {
    use cannery_engines::backend::reference::Reference;
    use cannery_engines::batch::{BatchDecompressor, Bound};
    let t = Table::kernel_2024();
    let ps = pages();
    let mut sw = backend::open("software").unwrap();
    let mut streams = Vec::new();
    let mut originals = Vec::new();
    for p in &ps {
        let mut s = Vec::new();
        if let Ok(cannery_codec::Outcome::Compressed(n)) =
            sw.compress(Mode::Canned, Some(&t), p, &mut s)
        {
            s.truncate(n);
            streams.push(s);
            originals.push(p.clone());
        }
    }
    let lanes = (0..2)
        .map(|_| Bound::new(Reference::zlib(6), Mode::Canned, Some(&t)))
        .collect();
    let mut batch = BatchDecompressor::new(8, lanes).unwrap();
    let mut out = vec![0u8; 8 * 4096];
    let d = batch
        .decompress(streams.iter().map(|s| &s[..]), &mut out)
        .unwrap();
    assert_eq!(d.len(), streams.len());
    for (i, p) in originals.iter().enumerate() {
        assert_eq!(d.status(i), Ok(p.len()));
        assert_eq!(&out[i * 4096..i * 4096 + p.len()], &p[..]);
    }
}

#[cfg(feature = "qpl")]
#[test]
fn qpl_refuses_tables_it_would_change() {
    let mut q = backend::open("qpl").unwrap();
    let mut out = Vec::new();
    // Kernel 2024 leaves distance symbols 24..=29 uncoded; QPL codes them.
    let e = q
        .compress(
            Mode::Canned,
            Some(&Table::kernel_2024()),
            b"abcabcabc",
            &mut out,
        )
        .unwrap_err();
    assert!(matches!(e, EngineError::QplTableChanged { .. }), "{e}");
    // An all-coded table within the 56-bit rule loads unchanged.
    let t = all_coded_table();
    q.compress(Mode::Canned, Some(&t), b"abcabcabcabc", &mut out)
        .unwrap();
}

/// The page-size check is the trait's, made before any engine's own code
/// runs: every backend and peer refuses a page one byte too long.
#[test]
#[cfg(feature = "reference")]
fn an_oversized_page_is_refused_by_every_engine() {
    use cannery_engines::peer::{Peer, PeerKind};
    let mut engines = available();
    for kind in [
        "zstd-1",
        "lz4",
        "lz4-flex",
        "libdeflate-1",
        "zlib-6",
        "miniz-1",
    ] {
        engines.push(Box::new(
            Peer::new(kind.parse::<PeerKind>().unwrap(), None).unwrap(),
        ));
    }
    assert!(engines.len() >= 10, "{} engines", engines.len());
    let page = vec![7u8; 4097];
    let k = Table::kernel_2024();
    for mut e in engines {
        let mode = e.capabilities().compress[0];
        let mut out = Vec::new();
        match e.compress(mode, Some(&k), &page, &mut out) {
            Err(EngineError::InputTooLarge { len: 4097 }) => {}
            other => panic!("{} in {mode}: {other:?}", e.name()),
        }
    }
}

#[test]
fn a_mode_outside_a_backends_capabilities_is_refused_by_name() {
    let page = vec![7u8; 4096];
    let k = Table::kernel_2024();
    for mut b in available() {
        for mode in [Mode::Fixed, Mode::Dynamic, Mode::Canned] {
            if b.capabilities().can_compress(mode) {
                continue;
            }
            let mut out = Vec::new();
            match b.compress(mode, Some(&k), &page, &mut out) {
                Err(EngineError::Unsupported {
                    backend,
                    direction,
                    mode: m,
                }) => {
                    assert_eq!(backend, b.name());
                    assert_eq!(direction, backend::Direction::Compress);
                    assert_eq!(m, mode);
                }
                other => panic!("{} in {mode}: {other:?}", b.name()),
            }
        }
    }
}
