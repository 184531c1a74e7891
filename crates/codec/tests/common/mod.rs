//! Shared test helpers: page generators (proptest strategies and fixed
//! samples) and random valid tables.

#![allow(dead_code)]

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN, PAGE_SIZE};
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::Table;
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// Pages of many shapes: random, runs, short periods, periods near 4096,
/// small alphabets, sparse noise over zeros; lengths 0..=4096.
pub fn page() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..=PAGE_SIZE),
        (any::<u8>(), 0..=PAGE_SIZE).prop_map(|(b, n)| vec![b; n]),
        (proptest::collection::vec(any::<u8>(), 1..64), 0..=PAGE_SIZE).prop_map(|(pat, n)| pat
            .iter()
            .cycle()
            .take(n)
            .copied()
            .collect()),
        (
            proptest::collection::vec(any::<u8>(), 2040..2100),
            any::<u8>()
        )
            .prop_map(|(pat, x)| {
                let mut v: Vec<u8> = pat.iter().cycle().take(PAGE_SIZE).copied().collect();
                v[PAGE_SIZE - 1] ^= x;
                v
            }),
        proptest::collection::vec(0u8..4, 0..=PAGE_SIZE),
        proptest::collection::vec((0u32..100, any::<u8>()), 0..200).prop_map(|noise| {
            let mut v = vec![0u8; PAGE_SIZE];
            for (i, (pos, b)) in noise.iter().enumerate() {
                v[(*pos as usize * 41 + i * 13) % PAGE_SIZE] = *b;
            }
            v
        }),
    ]
}

/// A random table IAA can compress with: every literal/length symbol and
/// distance symbols 0..=23 coded, complete codes, skewed counts so long codes
/// (up to 15 bits) occur.
pub fn iaa_table() -> impl Strategy<Value = Table> {
    (
        proptest::collection::vec(1u64..2000, NUM_LITLEN),
        proptest::collection::vec(1u64..2000, 24),
        any::<bool>(),
    )
        .prop_map(|(ll, d, all_dist)| {
            let ll: Vec<u64> = ll.iter().map(|x| x * x * x).collect();
            let mut dc: Vec<u64> = d.iter().map(|x| x * x).collect();
            dc.resize(NUM_DIST, if all_dist { 1 } else { 0 });
            let t = Table::from_lengths(
                &limited_code_lengths(&ll, 15),
                &limited_code_lengths(&dc, 15),
            )
            .unwrap();
            assert_eq!(t.check_iaa(), Ok(()));
            t
        })
}

/// Deterministic sample pages resembling memory: text, a pointer table,
/// a struct array, small integers, and random bytes. The text is Rust
/// source frozen in `tests/data/source-text.txt` (the match finder as it
/// was before `lz77` became a directory), so editing the code does not
/// change the test pages.
pub fn sample_pages() -> Vec<Vec<u8>> {
    let text: Vec<u8> = include_str!("../data/source-text.txt")
        .bytes()
        .take(PAGE_SIZE)
        .collect();
    let pointers: Vec<u8> = (0..512u64)
        .flat_map(|i| (0x7f3a_5c00_0000u64 + i * 48).to_le_bytes())
        .collect();
    let structs: Vec<u8> = (0..256u32)
        .flat_map(|i| {
            [
                i.to_le_bytes(),
                (i * 3).to_le_bytes(),
                0u32.to_le_bytes(),
                0xdead_beefu32.to_le_bytes(),
            ]
            .concat()
        })
        .collect();
    let ints: Vec<u8> = (0..1024u32)
        .flat_map(|i| ((i * 7919) % 300).to_le_bytes())
        .collect();
    let mut x = cannery_codec::rng::XorShift64::new(0x9e37_79b9_7f4a_7c15);
    let random: Vec<u8> = (0..PAGE_SIZE).map(|_| x.next_u64() as u8).collect();
    vec![text, pointers, structs, ints, random]
}

/// Hex string to bytes.
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// (input, iaa_out, zlib_out) of each test vector of the 2024 kernel canned patch.
pub fn vectors() -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let v: serde_json::Value =
        serde_json::from_str(include_str!("../data/kernel-canned-2024.json")).unwrap();
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

/// Raw deflate through zlib (flate2): the stream must end its final block
/// and be consumed whole.
pub fn zlib_inflate(stream: &[u8]) -> Vec<u8> {
    let mut d = flate2::Decompress::new(false);
    let mut out = vec![0u8; cannery_codec::constants::PAGE_SIZE + 1];
    let status = d
        .decompress(stream, &mut out, flate2::FlushDecompress::Finish)
        .expect("zlib inflates it");
    assert_eq!(status, flate2::Status::StreamEnd);
    assert_eq!(
        d.total_in() as usize,
        stream.len(),
        "zlib consumed the whole stream"
    );
    out.truncate(d.total_out() as usize);
    out
}

/// Every `step`-th page of each workload of the shipped corpus
/// (corpora/fleet-snapshots), the first `per_workload` of them.
pub fn corpus_pages(per_workload: usize, step: usize) -> Vec<Vec<u8>> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fleet-snapshots");
    let corpus = cannery_capture::Corpus::open(&dir).expect("the shipped corpus");
    let (pages, _) = corpus
        .read_pages_every(step, Some(per_workload))
        .expect("workload pages");
    pages
}

/// Canned stream of `tokens` with table `t` in QPL's software form: the
/// tokens, end-of-block, QPL's empty final fixed block (1, 01, 0000000) and
/// zero padding; and the body's length in bits (tokens and end-of-block).
pub fn qpl_form(tokens: &[cannery_codec::Token], t: &Table) -> (Vec<u8>, usize) {
    let (tail, tail_bits) = cannery_codec::constants::QPL_SW_TAIL;
    let mut stream = Vec::new();
    let mut w = cannery_codec::bitio::BitWriter::new(&mut stream);
    cannery_codec::encode::write_tokens(&mut w, tokens, t, usize::MAX);
    let body = w.bit_len();
    w.put(tail, tail_bits);
    w.finish();
    (stream, body)
}

/// True on a batch worker thread (worker 0 is the caller's thread).
pub fn on_worker() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|n| n.starts_with("cannery-batch-"))
}

/// Waits (polling) until `done` holds; panics after 10 s instead of hanging.
pub fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}
