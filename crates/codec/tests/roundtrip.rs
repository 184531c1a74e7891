//! Round trips for every mode, format and level over generated pages and
//! random valid tables; standard-deflate outputs also inflate with
//! miniz_oxide and zlib (flate2).

mod common;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome, Table};
use proptest::prelude::*;

/// Compresses `page`; if compressible, checks it decodes back with our
/// decoder and (for standard deflate) with miniz_oxide and zlib.
fn check(
    mode: Mode,
    format: Format,
    level: Level,
    table: Option<&Table>,
    page: &[u8],
) -> Option<usize> {
    let mut enc = Encoder::new(mode, format, level, table).unwrap();
    let mut out = Vec::new();
    let n = match enc.compress(page, &mut out).unwrap() {
        Outcome::Compressed(n) => n,
        Outcome::Incompressible => return None,
    };
    assert_eq!(n, out.len());
    assert!(n < PAGE_SIZE);
    let dec = Decoder::new(mode, format, table).unwrap();
    let mut back = vec![0u8; PAGE_SIZE];
    let got = dec.decompress(&out, &mut back).unwrap();
    assert_eq!(&back[..got], page, "{mode}/{format}/{level}");
    let standard = !(mode == Mode::Canned && format == Format::Iaa);
    if standard {
        assert_eq!(
            miniz_oxide::inflate::decompress_to_vec(&out).unwrap(),
            page,
            "miniz {mode}/{format}/{level}"
        );
        assert_eq!(
            common::zlib_inflate(&out),
            page,
            "zlib {mode}/{format}/{level}"
        );
    }
    Some(n)
}

#[test]
fn sample_pages_round_trip_in_every_mode() {
    let tables = [Table::kernel_2024(), Table::fixed()];
    for page in common::sample_pages() {
        for level in Level::ALL {
            check(Mode::Fixed, Format::Deflate, level, None, &page);
            check(Mode::Dynamic, Format::Deflate, level, None, &page);
            for t in &tables {
                for format in [Format::Iaa, Format::Deflate] {
                    check(Mode::Canned, format, level, Some(t), &page);
                }
            }
        }
    }
}

#[test]
fn random_pages_are_incompressible_and_structured_ones_are_not() {
    let pages = common::sample_pages();
    let t = Table::kernel_2024();
    for mode in Mode::ALL {
        assert_eq!(
            check(mode, Format::Iaa, Level::Fast, Some(&t), &pages[4]),
            None,
            "{mode}"
        );
        assert!(
            check(mode, Format::Iaa, Level::Fast, Some(&t), &pages[1]).unwrap() < 2048,
            "{mode}"
        );
    }
}

#[test]
fn better_levels_do_not_lose_much() {
    // Best prices with the table in use; over the sample pages it should not
    // be worse than fast in total.
    let t = Table::kernel_2024();
    let total = |level| -> usize {
        common::sample_pages()[..4]
            .iter()
            .map(|p| check(Mode::Canned, Format::Iaa, level, Some(&t), p).unwrap())
            .sum()
    };
    assert!(total(Level::Best) <= total(Level::Fast));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn canned_round_trips_with_random_tables(page in common::page(), table in common::iaa_table(), level in prop_oneof![Just(Level::Fast), Just(Level::Default), Just(Level::Best)]) {
        check(Mode::Canned, Format::Iaa, level, Some(&table), &page);
        check(Mode::Canned, Format::Deflate, level, Some(&table), &page);
    }

    #[test]
    fn fixed_and_dynamic_round_trip(page in common::page(), level in prop_oneof![Just(Level::Fast), Just(Level::Default), Just(Level::Best)]) {
        check(Mode::Fixed, Format::Deflate, level, None, &page);
        check(Mode::Dynamic, Format::Deflate, level, None, &page);
    }

    #[test]
    fn iaa_and_deflate_formats_carry_the_same_body(page in common::page(), table in common::iaa_table()) {
        // deflate format = header bits then exactly the iaa body bits.
        let mut e1 = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&table)).unwrap().with_limit(usize::MAX);
        let mut e2 = Encoder::new(Mode::Canned, Format::Deflate, Level::Fast, Some(&table)).unwrap().with_limit(usize::MAX);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        e1.compress(&page, &mut a).unwrap();
        e2.compress(&page, &mut b).unwrap();
        let h = table.header();
        let mut spliced = Vec::new();
        let mut w = cannery_codec::bitio::BitWriter::new(&mut spliced);
        w.put_bytes_bits(&h.bytes, h.bits);
        w.put_bytes_bits(&a, a.len() * 8);
        w.finish();
        prop_assert_eq!(&spliced[..b.len()], &b[..]);
        prop_assert!(spliced[b.len()..].iter().all(|&x| x == 0));
    }
}
