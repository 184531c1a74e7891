//! The 2024 kernel canned patch's table, header and test vectors (IAA
//! hardware output and the kernel's software zlib-canned output) decode with
//! our canned decoder, and header ‖ body inflates with independent inflaters.

use cannery_codec::decode::{read_block_header, CannedDecoder};
use cannery_codec::table::builtin::{KERNEL_2024_HEADER, KERNEL_2024_HEADER_BITS};
use cannery_codec::Table;

pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// (input, iaa_out, zlib_out) of each vector.
pub fn vectors() -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let v: serde_json::Value =
        serde_json::from_str(include_str!("data/kernel-canned-2024.json")).unwrap();
    v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                hex(x["input_hex"].as_str().unwrap()),
                hex(x["iaa_out_hex"].as_str().unwrap()),
                hex(x["zlib_out_hex"].as_str().unwrap()),
            )
        })
        .collect()
}

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
