//! The `qat` backend through QATzip itself (libqatzip and qatlib, built as
//! README's "QAT" section says): session setup and teardown, pages at and
//! around 4096 bytes, incompressible pages, canned mode refused, damaged
//! streams and short output buffers, and QATzip's streams checked by zlib
//! and cannery's inflater (and cannery's by QATzip) on the shipped corpus;
//! canned streams in QPL's software form; the session after damaged streams.
//! Runs only with the `qat` feature; on a machine without a QAT device it
//! exercises QATzip's software fallback, and checks the backend says so.
//! Does not measure speed or ratio.

#![cfg(feature = "qat")]

mod common;

use std::path::Path;

use cannery_codec::{Mode, Outcome, Table};
use cannery_engines::backend::qat::Qat;
use cannery_engines::backend::stress::{page, Kind, Rng};
use cannery_engines::backend::{software::Software, Engine, EngineError, ExecPath};

/// QATzip's raw deflate stream of `page`.
fn qat_compress(q: &mut Qat, page: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match q.compress(Mode::Dynamic, None, page, &mut out).unwrap() {
        Outcome::Compressed(n) => assert_eq!(n, out.len()),
        Outcome::Incompressible => assert!(out.len() >= 4096),
    }
    out
}

fn qat_decompress(q: &mut Qat, mode: Mode, table: Option<&Table>, s: &[u8]) -> Vec<u8> {
    let mut out = [0u8; 4096];
    let n = q.decompress(mode, table, s, &mut out).unwrap();
    out[..n].to_vec()
}

#[test]
fn the_path_is_hardware_only_with_a_device() {
    let q = Qat::open().unwrap();
    let caps = q.capabilities();
    let device = Path::new("/dev/qat_adf_ctl").exists();
    if !device {
        assert_eq!(caps.path, ExecPath::Software);
        let note = caps.path_note.as_deref().unwrap();
        assert!(
            note.contains("QZ_NO_HW") && note.contains("not the accelerator"),
            "{note}"
        );
    }
    assert!(caps
        .path_note
        .as_deref()
        .unwrap()
        .contains("built against QATzip"));
}

#[test]
fn sessions_open_and_close_repeatedly_and_side_by_side() {
    let p = common::sample_pages().remove(0);
    for _ in 0..20 {
        let mut a = Qat::open().unwrap();
        let mut b = Qat::open().unwrap();
        let s = qat_compress(&mut a, &p);
        assert_eq!(qat_decompress(&mut b, Mode::Dynamic, None, &s), p);
        assert_eq!(common::zlib_inflate(&s), p);
    }
}

#[test]
fn sizes_at_and_around_a_page() {
    let mut q = Qat::open().unwrap();
    let mut rng = Rng::new(7);
    let text = page(Kind::Words, &mut rng, None);
    for len in [0usize, 1, 2, 255, 4095, 4096] {
        let p = &text[..len];
        let s = qat_compress(&mut q, p);
        assert_eq!(common::zlib_inflate(&s), p, "len {len}");
        assert_eq!(
            qat_decompress(&mut q, Mode::Dynamic, None, &s),
            p,
            "len {len}"
        );
    }
    let mut big = text.clone();
    big.push(0);
    assert!(matches!(
        q.compress(Mode::Dynamic, None, &big, &mut Vec::new()),
        Err(EngineError::InputTooLarge { len: 4097 })
    ));
    // A page's stream into a buffer one byte short is refused, not cut.
    let s = qat_compress(&mut q, &text);
    let mut short = [0u8; 4095];
    assert!(
        matches!(
            q.decompress(Mode::Dynamic, None, &s, &mut short),
            Err(EngineError::OutputLimit { limit: 4095, .. })
        ),
        "4096 bytes do not fit in 4095"
    );
}

#[test]
fn incompressible_pages_round_trip() {
    let mut q = Qat::open().unwrap();
    let mut rng = Rng::new(3);
    let random = page(Kind::Random, &mut rng, None);
    let mut out = Vec::new();
    let outcome = q.compress(Mode::Dynamic, None, &random, &mut out).unwrap();
    assert_eq!(outcome, Outcome::Incompressible, "{} bytes", out.len());
    assert_eq!(common::zlib_inflate(&out), random);
    assert_eq!(qat_decompress(&mut q, Mode::Dynamic, None, &out), random);
}

#[test]
fn canned_compression_is_a_reported_limit() {
    let mut q = Qat::open().unwrap();
    let k = Table::kernel_2024();
    assert!(!q.capabilities().compress.contains(&Mode::Canned));
    let err = q
        .compress(Mode::Canned, Some(&k), &[1u8; 4096], &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, EngineError::Unsupported { .. }), "{err}");
}

/// QATzip reads on past a deflate stream's final block (taking what follows
/// for another stream), so a canned stream in QPL's software form (the
/// table's block, then an empty final fixed block and padding) must reach
/// it as the body alone: its pages come back whole, not as an output limit
/// or a data error.
#[test]
fn canned_streams_in_qpls_form_decode() {
    let t = Table::kernel_2024();
    let mut q = Qat::open().unwrap();
    let mut sw = Software::new();
    let dec = cannery_codec::decode::CannedDecoder::new(&t);
    for p in common::sample_pages() {
        let mut s = Vec::new();
        if sw.compress(Mode::Canned, Some(&t), &p, &mut s).unwrap() == Outcome::Incompressible {
            continue;
        }
        let (tailed, _) = common::qpl_form(&dec.tokens(&s, 4096).unwrap(), &t);
        assert_eq!(qat_decompress(&mut q, Mode::Canned, Some(&t), &tailed), p);
        assert_eq!(qat_decompress(&mut q, Mode::Canned, Some(&t), &s), p);
    }
}

/// A stream cut short is an error, not a short page, in every mode; and
/// whatever went wrong, the next stream decodes (QATzip's software path
/// would otherwise read it as the damaged one's continuation, or fail it).
#[test]
fn after_a_damaged_stream_the_next_page_decodes() {
    let t = Table::kernel_2024();
    let mut q = Qat::open().unwrap();
    let mut sw = Software::new();
    let p = common::sample_pages().remove(1);
    let dynamic = qat_compress(&mut q, &p);
    let mut canned = Vec::new();
    sw.compress(Mode::Canned, Some(&t), &p, &mut canned)
        .unwrap();
    let mut reserved = dynamic.clone();
    reserved[0] |= 0b110;
    let mut out = [0u8; 4096];
    let damaged: [(Mode, &[u8]); 5] = [
        (Mode::Canned, &canned[..canned.len() / 2]),
        (Mode::Canned, &canned[..canned.len() - 1]),
        (Mode::Dynamic, &dynamic[..dynamic.len() / 2]),
        (Mode::Dynamic, &reserved),
        (Mode::Dynamic, &dynamic[..dynamic.len() - 1]),
    ];
    for (i, (mode, bad)) in damaged.into_iter().enumerate() {
        let r = q.decompress(mode, Some(&t), bad, &mut out);
        assert!(r.is_err(), "damaged stream {i}: {r:?}");
        assert_eq!(
            qat_decompress(&mut q, Mode::Dynamic, None, &dynamic),
            p,
            "after {i}"
        );
        assert_eq!(
            qat_decompress(&mut q, Mode::Canned, Some(&t), &canned),
            p,
            "after {i}"
        );
    }
    // An output limit leaves the session usable too.
    let mut short = [0u8; 4095];
    assert!(q
        .decompress(Mode::Dynamic, None, &dynamic, &mut short)
        .is_err());
    assert_eq!(qat_decompress(&mut q, Mode::Dynamic, None, &dynamic), p);
}

#[test]
fn damaged_streams_are_errors_not_pages() {
    let mut q = Qat::open().unwrap();
    let p = common::sample_pages().remove(0);
    let s = qat_compress(&mut q, &p);
    let mut out = [0u8; 4096];
    // Block type 3 is reserved: no decoder may accept it.
    let mut reserved = s.clone();
    reserved[0] |= 0b110;
    assert!(q
        .decompress(Mode::Dynamic, None, &reserved, &mut out)
        .is_err());
    // A stream cut short, or no stream at all, is an error.
    for cut in [1, s.len() / 2, s.len() - 1, 0] {
        let r = q.decompress(Mode::Dynamic, None, &s[..cut], &mut out);
        assert!(r.is_err(), "cut at {cut} of {}: {r:?}", s.len());
    }
}

#[test]
fn qatzip_and_cannery_read_each_others_streams_on_the_shipped_corpus() {
    let mut q = Qat::open().unwrap();
    let mut sw = Software::new();
    let k = Table::kernel_2024();
    let pages = common::corpus_pages(40, 1);
    assert!(pages.len() >= 200, "{} pages", pages.len());
    let mut checked = 0;
    for p in &pages {
        // QATzip's stream: zlib, cannery and QATzip read it back.
        let s = qat_compress(&mut q, p);
        assert_eq!(common::zlib_inflate(&s), *p);
        let mut out = [0u8; 4096];
        let n = sw.decompress(Mode::Dynamic, None, &s, &mut out).unwrap();
        assert_eq!(&out[..n], &p[..]);
        // cannery's fixed, dynamic and canned (header in front) streams:
        // QATzip reads them back.
        for (mode, table) in [
            (Mode::Fixed, None),
            (Mode::Dynamic, None),
            (Mode::Canned, Some(&k)),
        ] {
            let mut s = Vec::new();
            if let Outcome::Compressed(n) = sw.compress(mode, table, p, &mut s).unwrap() {
                s.truncate(n);
                assert_eq!(qat_decompress(&mut q, mode, table, &s), *p, "{mode:?}");
                checked += 1;
            }
        }
    }
    assert!(checked >= pages.len() * 2, "{checked} streams checked");
}
