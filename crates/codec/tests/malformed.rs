//! Malformed input: every truncation, bit flip and garbage stream gives `Ok`
//! with bounded output or a typed error, never a panic; specific defects give
//! the specific error.

mod common;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::decode::{inflate, CannedDecoder, DecodeError};
use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};
use proptest::prelude::*;

fn canned(page: &[u8], t: &Table) -> Vec<u8> {
    let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(t)).unwrap();
    let mut out = Vec::new();
    assert!(matches!(
        e.compress(page, &mut out).unwrap(),
        Outcome::Compressed(_)
    ));
    out
}

fn fixed(page: &[u8]) -> Vec<u8> {
    let mut e = Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap();
    let mut out = Vec::new();
    e.compress(page, &mut out).unwrap();
    out
}

#[test]
fn every_truncation_of_a_canned_stream_is_an_error() {
    let t = Table::kernel_2024();
    let dec = CannedDecoder::new(&t);
    for page in &common::sample_pages()[..4] {
        let s = canned(page, &t);
        for cut in 0..s.len() {
            let mut out = vec![0u8; PAGE_SIZE];
            let r = dec.decompress(&s[..cut], &mut out);
            assert!(r.is_err(), "cut at {cut} of {} decoded", s.len());
        }
    }
}

#[test]
fn every_truncation_of_a_deflate_stream_is_an_error() {
    for page in &common::sample_pages()[..4] {
        for s in [fixed(page), miniz_oxide::deflate::compress_to_vec(page, 6)] {
            for cut in 0..s.len() {
                let mut out = vec![0u8; PAGE_SIZE];
                assert!(
                    inflate(&s[..cut], &mut out).is_err(),
                    "cut at {cut} of {}",
                    s.len()
                );
            }
        }
    }
}

#[test]
fn specific_defects_give_specific_errors() {
    let t = Table::kernel_2024();
    let dec = CannedDecoder::new(&t);
    let page = &common::sample_pages()[1];
    let s = canned(page, &t);
    let mut out = vec![0u8; PAGE_SIZE];

    // Trailing garbage.
    let mut long = s.clone();
    long.extend_from_slice(&[0, 0]);
    assert_eq!(
        dec.decompress(&long, &mut out),
        Err(DecodeError::TrailingData { bytes: 2 })
    );

    // Output limit.
    let mut small = vec![0u8; 100];
    assert_eq!(
        dec.decompress(&s, &mut small),
        Err(DecodeError::OutputLimit { limit: 100 })
    );

    // A first token that is a match: the distance reaches before the output.
    let mut w_out = Vec::new();
    let mut w = cannery_codec::bitio::BitWriter::new(&mut w_out);
    cannery_codec::encode::write_tokens(
        &mut w,
        &[cannery_codec::Token::Match {
            length: 3,
            distance: 1,
        }],
        &t,
        usize::MAX,
    );
    w.finish();
    assert_eq!(
        dec.decompress(&w_out, &mut out),
        Err(DecodeError::DistanceTooFar {
            distance: 1,
            available: 0
        })
    );

    // Stored block with a bad complement; reserved block type.
    assert!(matches!(
        inflate(&[0x01, 0x05, 0x00, 0x00, 0x00], &mut out),
        Err(DecodeError::StoredLength { .. })
    ));
    assert!(matches!(
        inflate(&[0x07], &mut out),
        Err(DecodeError::ReservedBlockType { bit: 0 })
    ));
    // A fixed block using literal/length symbol 286 (code 11000110).
    let mut bad = Vec::new();
    let mut w = cannery_codec::bitio::BitWriter::new(&mut bad);
    w.put(1, 1);
    w.put(1, 2);
    w.put(
        cannery_codec::huffman::reverse_bits(0b1100_0110, 8) as u32,
        8,
    );
    w.finish();
    assert!(matches!(
        inflate(&bad, &mut out),
        Err(DecodeError::InvalidCode { .. })
    ));
    // Header announcing 287 literal/length codes.
    assert!(matches!(
        inflate(&[0x05 | (30 << 3), 0, 0], &mut out),
        Err(DecodeError::BadHeader(_))
    ));
}

#[test]
fn padding_rules_for_canned_streams() {
    let t = Table::kernel_2024();
    let dec = CannedDecoder::new(&t);
    // A page whose body does not end on a byte boundary, so it has padding.
    let (page, tokens) = common::sample_pages()[..4]
        .iter()
        .map(|p| (p.clone(), dec.tokens(&canned(p, &t), PAGE_SIZE).unwrap()))
        .find(|(_, toks)| {
            let mut v = Vec::new();
            let mut w = cannery_codec::bitio::BitWriter::new(&mut v);
            cannery_codec::encode::write_tokens(&mut w, toks, &t, usize::MAX);
            w.bit_len() % 8 != 0
        })
        .expect("some sample page has padding");
    let page = &page;
    // QPL software form: EOB, an empty final fixed block (1, 01, 0000000), zero pad.
    let (body, end) = common::qpl_form(&tokens, &t);
    let mut out = vec![0u8; PAGE_SIZE];
    assert_eq!(dec.decompress(&body, &mut out).unwrap(), PAGE_SIZE);
    assert_eq!(&out, page);
    // Either way the body ends with the end-of-block code.
    assert_eq!(dec.body_bits(&body, PAGE_SIZE), Ok(end));
    assert_eq!(dec.body_bits(&canned(page, &t), PAGE_SIZE), Ok(end));
    assert_eq!(
        dec.body_bits(&body, PAGE_SIZE - 1),
        Err(DecodeError::OutputLimit {
            limit: PAGE_SIZE - 1
        })
    );
    // A set bit in the padding after EOB is rejected (when there is padding).
    assert_ne!(end % 8, 0);
    let mut bad = canned(page, &t);
    *bad.last_mut().unwrap() |= 0x80;
    assert_eq!(
        dec.decompress(&bad, &mut out),
        Err(DecodeError::NonZeroPadding)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600), limit in 0usize..5000) {
        let mut out = vec![0u8; limit];
        let t = Table::kernel_2024();
        if let Ok(n) = CannedDecoder::new(&t).decompress(&data, &mut out) { prop_assert!(n <= limit) }
        if let Ok(n) = inflate(&data, &mut out) { prop_assert!(n <= limit) }
        let _ = CannedDecoder::new(&t).tokens(&data, limit);
        let _ = cannery_codec::decode::inflate_blocks(&data, limit);
        let _ = cannery_codec::decode::read_block_header(&data);
    }

    #[test]
    fn bit_flips_never_panic(page in common::page(), table in common::iaa_table(), flips in proptest::collection::vec(any::<u32>(), 1..4)) {
        let mut e = Encoder::new(Mode::Canned, Format::Deflate, Level::Fast, Some(&table)).unwrap().with_limit(usize::MAX);
        let mut s = Vec::new();
        e.compress(&page, &mut s).unwrap();
        let mut iaa = Vec::new();
        Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&table)).unwrap().with_limit(usize::MAX).compress(&page, &mut iaa).unwrap();
        for f in &flips {
            let i = (*f as usize / 8) % s.len();
            s[i] ^= 1 << (f % 8);
            let j = (*f as usize / 8) % iaa.len();
            iaa[j] ^= 1 << (f % 8);
        }
        let mut out = vec![0u8; PAGE_SIZE];
        let _ = inflate(&s, &mut out);
        let _ = CannedDecoder::new(&table).decompress(&iaa, &mut out);
    }
}

/// The highest byte of `out` a decode wrote, found with two sentinels.
fn written_end(decode: impl Fn(&mut [u8]) -> Result<usize, DecodeError>, room: usize) -> usize {
    let mut a = vec![0xa5u8; room];
    let mut b = vec![0x5au8; room];
    assert_eq!(decode(&mut a).err(), Some(DecodeError::Truncated));
    assert_eq!(decode(&mut b).err(), Some(DecodeError::Truncated));
    (0..room)
        .rev()
        .find(|&i| a[i] != 0xa5 || b[i] != 0x5a)
        .map_or(0, |i| i + 1)
}

#[test]
fn a_truncated_stream_stops_where_its_input_ends() {
    // Past its end a stream reads as zero bits, which decode as some code;
    // the decoders stop there instead of decoding zeros up to the limit.
    let t = Table::kernel_2024();
    let dec = CannedDecoder::new(&t);
    let room = 16 * PAGE_SIZE;
    for page in &common::sample_pages()[..4] {
        let streams = [
            (canned(page, &t), true),
            (miniz_oxide::deflate::compress_to_vec(page, 6), false),
        ];
        for (s, is_canned) in streams {
            for cut in [s.len() / 2, s.len() - 2] {
                let s = &s[..cut];
                let end = if is_canned {
                    let fast = written_end(|o| dec.decompress(s, o), room);
                    let reference = written_end(|o| dec.decompress_reference(s, o), room);
                    fast.max(reference)
                } else {
                    written_end(|o| inflate(s, o), room)
                };
                // The zero bits already loaded (under 64) may give a few
                // tokens (a match copies at most 258 bytes, and the fast
                // loop's copies overshoot by less than 16) before the check.
                assert!(
                    end <= PAGE_SIZE + 1024,
                    "cut at {cut}: wrote up to byte {end}"
                );
            }
        }
    }
}
