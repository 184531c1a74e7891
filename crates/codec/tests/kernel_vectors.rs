//! The 2024 kernel canned patch's table, header and test vectors (IAA
//! hardware output and the kernel's software zlib-canned output) decode with
//! our canned decoder, and header ‖ body inflates with independent inflaters.

use cannery_codec::decode::{read_block_header, CannedDecoder};
use cannery_codec::table::builtin::{KERNEL_2024_HEADER, KERNEL_2024_HEADER_BITS};
use cannery_codec::Table;
use common::vectors;

mod common;

#[test]
fn kernel_header_parses_to_the_kernel_table() {
    let h = read_block_header(KERNEL_2024_HEADER).unwrap();
    let t = Table::kernel_2024();
    assert_eq!(h.bits, KERNEL_2024_HEADER_BITS);
    assert_eq!(h.litlen, t.lengths().litlen);
    assert_eq!(h.dist, t.lengths().dist);
    assert_eq!((h.hlit, h.hdist), (286, 30));
    assert!(!h.crosses_boundary);
}

#[test]
fn hardware_and_zlib_vectors_decode() {
    let dec = CannedDecoder::new(&Table::kernel_2024());
    for (input, iaa, zlib) in vectors() {
        for body in [&iaa, &zlib] {
            let mut out = vec![0u8; 4096];
            let n = dec.decompress(body, &mut out).unwrap();
            assert_eq!(&out[..n], &input[..]);
        }
    }
}

#[test]
fn header_plus_body_is_standard_deflate() {
    let t = Table::kernel_2024();
    for (input, iaa, _) in vectors() {
        // Splice the 656-bit header and the body at bit granularity.
        let mut stream = Vec::new();
        let mut w = cannery_codec::bitio::BitWriter::new(&mut stream);
        w.put_bytes_bits(&t.header().bytes, t.header().bits);
        w.put_bytes_bits(&iaa, iaa.len() * 8);
        w.finish();
        let out = miniz_oxide::inflate::decompress_to_vec(&stream).unwrap();
        assert_eq!(out, input);
        let mut d = libdeflater::Decompressor::new();
        let mut buf = vec![0u8; input.len()];
        assert_eq!(
            d.deflate_decompress(&stream, &mut buf).unwrap(),
            input.len()
        );
        assert_eq!(buf, input);
        // The kernel's own 656-bit header is byte-aligned, so plain
        // concatenation gives a stream with no trailing bits; our strict
        // inflater (which rejects trailing bytes) reads it too.
        assert_eq!(KERNEL_2024_HEADER_BITS % 8, 0);
        let stream = [KERNEL_2024_HEADER, &iaa[..]].concat();
        let mut out = vec![0u8; 4096];
        let n = cannery_codec::decode::inflate(&stream, &mut out).unwrap();
        assert_eq!(&out[..n], &input[..]);
        assert_eq!(
            miniz_oxide::inflate::decompress_to_vec(&stream).unwrap(),
            input
        );
    }
}

#[test]
fn reencoding_hardware_tokens_reproduces_hardware_bytes() {
    let t = Table::kernel_2024();
    let dec = CannedDecoder::new(&t);
    for (input, iaa, zlib) in vectors() {
        for body in [&iaa, &zlib] {
            let tokens = dec.tokens(body, 4096).unwrap();
            assert_eq!(
                &cannery_codec::encode::encode_canned_tokens(&tokens, &t),
                body
            );
            let mut expanded = Vec::new();
            cannery_codec::token::expand(&tokens, &mut expanded).unwrap();
            assert_eq!(expanded, input);
        }
    }
    // docs/canned-format.md §0: IAA chose (31, 35) + (3, 13) where zlib chose one (34, 35).
    let (_, iaa, zlib) = &vectors()[0];
    let hw = dec.tokens(iaa, 4096).unwrap();
    let sw = dec.tokens(zlib, 4096).unwrap();
    assert!(hw.contains(&cannery_codec::Token::Match {
        length: 31,
        distance: 35
    }));
    assert!(sw.contains(&cannery_codec::Token::Match {
        length: 34,
        distance: 35
    }));
}

#[test]
fn our_encoder_on_the_vector_inputs() {
    use cannery_codec::{Encoder, Format, Level, Mode, Outcome};
    let t = Table::kernel_2024();
    let dec = CannedDecoder::new(&t);
    for (input, iaa, _) in vectors() {
        for level in Level::ALL {
            let mut e = Encoder::new(Mode::Canned, Format::Iaa, level, Some(&t)).unwrap();
            let mut out = Vec::new();
            let Outcome::Compressed(n) = e.compress(&input, &mut out).unwrap() else {
                panic!("compressible")
            };
            let mut back = vec![0u8; 4096];
            let m = dec.decompress(&out, &mut back).unwrap();
            assert_eq!(&back[..m], &input[..]);
            // Never worse than the hardware by more than a couple of bytes.
            assert!(n <= iaa.len() + 2, "{level}: {n} vs IAA {}", iaa.len());
            eprintln!(
                "{level}: {n} bytes (IAA {}) equal to IAA: {}",
                iaa.len(),
                out == iaa
            );
        }
    }
}
