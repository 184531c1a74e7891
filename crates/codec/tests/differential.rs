//! Differential checks against independent deflate implementations:
//! our inflater decodes what miniz_oxide, zlib (flate2) and libdeflate write
//! for the same pages, and re-encoding the tokens of their blocks with our
//! bit writer reproduces their bytes exactly.

mod common;

use cannery_codec::bitio::BitWriter;
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::decode::{inflate, inflate_blocks, BlockKind};
use cannery_codec::encode::write_tokens;
use cannery_codec::Table;
use proptest::prelude::*;

fn peers(page: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for level in [1u8, 6, 9] {
        v.push((
            format!("miniz-{level}"),
            miniz_oxide::deflate::compress_to_vec(page, level),
        ));
    }
    for level in [1u32, 6, 9] {
        let mut c = flate2::Compress::new(flate2::Compression::new(level), false);
        let mut out = Vec::with_capacity(page.len() + 64);
        c.compress_vec(page, &mut out, flate2::FlushCompress::Finish)
            .unwrap();
        v.push((format!("zlib-{level}"), out));
    }
    for level in [1, 6, 12] {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
        let mut out = vec![0u8; c.deflate_compress_bound(page.len())];
        let n = c.deflate_compress(page, &mut out).unwrap();
        out.truncate(n);
        v.push((format!("libdeflate-{level}"), out));
    }
    v
}

/// Copies bits `start..end` of `src` into `w`.
fn copy_bits(src: &[u8], start: usize, end: usize, w: &mut BitWriter<'_>) {
    for bit in start..end {
        w.put(((src[bit / 8] >> (bit % 8)) & 1) as u32, 1);
    }
}

/// Rebuilds a stream block by block: headers copied, bodies re-encoded from
/// their tokens with our Huffman stage.
fn reencode(stream: &[u8]) -> Vec<u8> {
    let blocks = inflate_blocks(stream, PAGE_SIZE).unwrap();
    let mut out = Vec::new();
    let mut w = BitWriter::new(&mut out);
    for b in &blocks {
        match &b.kind {
            BlockKind::Stored => copy_bits(stream, b.start_bit, b.end_bit, &mut w),
            BlockKind::Fixed => {
                copy_bits(stream, b.start_bit, b.start_bit + 3, &mut w);
                write_tokens(&mut w, &b.tokens, &Table::fixed(), usize::MAX);
            }
            BlockKind::Dynamic(h) => {
                copy_bits(stream, b.start_bit, b.start_bit + h.bits, &mut w);
                let t = Table::from_lengths(&h.litlen, &h.dist).unwrap();
                write_tokens(&mut w, &b.tokens, &t, usize::MAX);
            }
        }
        assert_eq!(
            w.bit_len(),
            b.end_bit,
            "block re-encodes to the same length"
        );
    }
    w.finish();
    out
}

fn check(page: &[u8]) {
    for (name, stream) in peers(page) {
        let mut out = vec![0u8; PAGE_SIZE];
        let n = inflate(&stream, &mut out).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&out[..n], page, "{name}");
        assert_eq!(reencode(&stream), stream, "{name}: re-encoded bytes differ");
    }
}

#[test]
fn sample_pages() {
    for page in common::sample_pages() {
        check(&page);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    #[test]
    fn generated_pages(page in common::page()) {
        check(&page);
    }
}
