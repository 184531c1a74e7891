//! Tables' headers are byte-aligned: for the kernel-2024 table, tables built
//! from random histograms and proptest-generated complete codes, the header
//! is a whole number of bytes, decodes (with the codec's header reader) to
//! exactly the table's lengths without a repeat crossing the two alphabets,
//! and header bytes ‖ canned page bytes — no bit shifting — inflate with zlib
//! (flate2) and miniz_oxide back to the page. It does not test the exact-bit
//! form beyond comparing sizes (see the unit tests in `table::header`).

mod common;

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN, PAGE_SIZE};
use cannery_codec::decode::read_block_header;
use cannery_codec::encode::encode_canned_tokens;
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::table::header::write_header_shortest;
use cannery_codec::{Encoder, Format, Level, Mode, Table, Token};
use proptest::prelude::*;

/// The header is whole bytes, at most 32 bits and four bytes longer than the
/// greedy exact-bit one (the search alternates two exact searches and is not
/// proven optimal: over several thousand proptest tables the worst seen was
/// 17 bits longer; it is often shorter, the greedy coding not being
/// optimal), and reads back to exactly the table's lengths.
fn check_header(t: &Table) {
    let h = t.header();
    assert!(h.is_byte_aligned(), "{}: {} bits", t.id(), h.bits);
    assert_eq!(h.bytes.len() * 8, h.bits);
    assert_eq!(h.gen_decomp_table_flags(), 0x201);
    let s = write_header_shortest(t.lengths());
    assert!(
        h.bits <= s.bits + 32 && h.bytes.len() <= s.bytes.len() + 4,
        "{}: aligned {} bits, shortest {}",
        t.id(),
        h.bits,
        s.bits
    );
    let p = read_block_header(&h.bytes).unwrap();
    assert_eq!(p.bits, h.bits);
    assert_eq!(p.litlen, t.lengths().litlen);
    assert_eq!(p.dist, t.lengths().dist);
    assert!(!p.crosses_boundary);
}

/// Header bytes then the page's canned (IAA format) body bytes, concatenated
/// as bytes, inflate to the page with zlib and miniz_oxide.
fn check_concatenation(t: &Table, page: &[u8]) {
    let mut enc = Encoder::new(Mode::Canned, Format::Iaa, Level::Default, Some(t))
        .unwrap()
        .with_limit(usize::MAX);
    let mut body = Vec::new();
    enc.compress(page, &mut body).unwrap();
    let stream = [&t.header().bytes[..], &body[..]].concat();
    assert_eq!(common::zlib_inflate(&stream), page, "table {}", t.id());
    assert_eq!(
        miniz_oxide::inflate::decompress_to_vec(&stream).unwrap(),
        page,
        "table {}",
        t.id()
    );
}

/// Complete codes over every symbol from skewed random histograms
/// (xorshift64), distance symbols 24..=29 sometimes uncoded.
fn histogram_tables() -> Vec<Table> {
    let mut rng = cannery_codec::rng::XorShift64::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next_u64();
    (0..24)
        .map(|k| {
            let ll: Vec<u64> = (0..NUM_LITLEN)
                .map(|_| (next() % 3000).pow(1 + k % 3) + 1)
                .collect();
            let d: Vec<u64> = (0..NUM_DIST)
                .map(|s| {
                    if s >= 24 && k % 2 == 0 {
                        0
                    } else {
                        (next() % 500).pow(2) + 1
                    }
                })
                .collect();
            Table::from_lengths(
                &limited_code_lengths(&ll, 15),
                &limited_code_lengths(&d, 15),
            )
            .unwrap()
        })
        .collect()
}

/// Pages like memory: the shared samples plus text and records.
fn pages() -> Vec<Vec<u8>> {
    let mut v = common::sample_pages();
    let text: Vec<u8> = include_str!("data/source-text.txt")
        .bytes()
        .cycle()
        .take(PAGE_SIZE)
        .collect();
    v.push(text);
    v.push(vec![0; PAGE_SIZE]);
    v.push(b"Join us now and share the software".to_vec());
    v.push(Vec::new());
    v
}

#[test]
fn kernel_2024_header_is_77_bytes_and_concatenates_with_pages() {
    let t = Table::kernel_2024();
    check_header(&t);
    // The greedy coding took 613 bits (not a whole byte); Intel's is 656.
    assert_eq!(write_header_shortest(t.lengths()).bits, 613);
    assert_eq!(t.header().bits, 616);
    for page in pages() {
        check_concatenation(&t, &page);
    }
    // The kernel patch's own test vectors, encoded by us.
    for (input, _, _) in common::vectors() {
        check_concatenation(&t, &input);
    }
}

#[test]
fn histogram_tables_have_aligned_headers_that_concatenate_with_pages() {
    let pages = pages();
    for t in histogram_tables() {
        check_header(&t);
        for page in &pages {
            check_concatenation(&t, page);
        }
    }
}

#[test]
fn the_fixed_code_has_an_aligned_header_too() {
    // zlib rejects its header (286 of 288 symbols, incomplete), but the
    // codec's reader takes it: it decodes to the same lengths.
    check_header(&Table::fixed());
}

/// Complete codes with uncoded symbols: counts zero with some probability,
/// so zero runs (17/18) and trimmed HLIT/HDIST occur; end-of-block and at
/// least two symbols of each alphabet coded.
fn complete_code() -> impl Strategy<Value = Table> {
    (
        proptest::collection::vec((0u64..4000, 0u8..100), NUM_LITLEN),
        proptest::collection::vec((0u64..4000, 0u8..100), NUM_DIST),
        0u8..95,
        1u32..4,
    )
        .prop_map(|(ll, d, zero_pct, power)| {
            let counts = |v: &[(u64, u8)], keep: &[usize]| -> Vec<u64> {
                v.iter()
                    .enumerate()
                    .map(|(s, &(c, z))| {
                        if z < zero_pct && !keep.contains(&s) {
                            0
                        } else {
                            c.pow(power) + 1
                        }
                    })
                    .collect()
            };
            Table::from_lengths(
                &limited_code_lengths(&counts(&ll, &[b'a' as usize, 256]), 15),
                &limited_code_lengths(&counts(&d, &[0, 1]), 15),
            )
            .unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn complete_codes_get_aligned_headers(t in complete_code()) {
        check_header(&t);
        // Literals the table codes, as a body, after the header bytes.
        let page: Vec<u8> = (0..=255u8)
            .filter(|&b| t.lengths().litlen[b as usize] != 0)
            .cycle()
            .take(300)
            .collect();
        let tokens: Vec<Token> = page.iter().map(|&b| Token::Literal(b)).collect();
        let body = encode_canned_tokens(&tokens, &t);
        let stream = [&t.header().bytes[..], &body[..]].concat();
        prop_assert_eq!(common::zlib_inflate(&stream), page);
    }

    #[test]
    fn iaa_tables_concatenate_with_generated_pages(t in common::iaa_table(), page in common::page()) {
        check_header(&t);
        check_concatenation(&t, &page);
    }
}
