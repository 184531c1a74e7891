//! Proptest versions of the cargo-fuzz targets in `fuzz/` (FUZZING.md), so
//! the same properties run in the normal test suite: decoding arbitrary
//! bytes with a valid table, canned round trip with bit-exact re-encoding,
//! canned-with-header vs miniz_oxide, table-from-lengths validation and
//! table deserialization.

use cannery_codec::decode::{inflate, read_block_header};
use cannery_codec::huffman::{kraft_sum, limited_code_lengths};
use cannery_codec::table::Alphabet;
use cannery_codec::{CannedDecoder, Encoder, Format, Level, Mode, Outcome, Table, TableError};
use cannery_engines::backend::canned_to_deflate;
use cannery_engines::backend::check::{reencode_canned, Reencode};
use proptest::prelude::*;

/// A valid table from symbol counts (as the fuzz targets build them).
fn table_from(counts: &[u8], allow_uncoded: bool, limit: u8) -> Table {
    let floor = u64::from(!allow_uncoded);
    let mut ll: Vec<u64> = counts[..286].iter().map(|&b| b as u64 + floor).collect();
    let mut d: Vec<u64> = counts[286..316].iter().map(|&b| b as u64 + floor).collect();
    ll[256] = ll[256].max(1);
    if ll.iter().filter(|&&c| c > 0).count() < 2 {
        ll[0] = ll[0].max(1);
    }
    if d.iter().filter(|&&c| c > 0).count() < 2 {
        d[0] = d[0].max(1);
        d[1] = d[1].max(1);
    }
    Table::from_lengths(
        &limited_code_lengths(&ll, limit),
        &limited_code_lengths(&d, limit),
    )
    .expect("package-merge lengths are valid")
}

fn counts() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 316)
}

/// Page-like data: runs and repeats as well as noise.
fn page() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..4096),
        prop::collection::vec(0u8..4, 0..4096),
        (prop::collection::vec(any::<u8>(), 1..64), 1usize..200).prop_map(|(p, n)| p
            .repeat(n)
            .into_iter()
            .take(4096)
            .collect()),
    ]
}

fn cases() -> u32 {
    if cfg!(miri) {
        2
    } else {
        256
    }
}

/// Regression (cargo-fuzz `table_from_lengths`, first smoke run): an
/// over-subscribed literal/length code is reported even when a distance
/// length is out of range, because literal/length lengths are checked
/// first. The harness had assumed every length was ≤ 15.
#[test]
fn oversubscribed_litlen_is_reported_before_bad_distance_lengths() {
    let ll = [1u8; 286];
    let mut d = [5u8; 30];
    d[28] = 0xff;
    assert!(matches!(
        Table::from_lengths(&ll, &d),
        Err(TableError::OverSubscribed {
            alphabet: Alphabet::LitLen,
            ..
        })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn decode_canned_arbitrary_bytes(c in counts(), uncoded in any::<bool>(), limit in 9u8..=15,
                                     stream in prop::collection::vec(any::<u8>(), 0..2048),
                                     out_len in 1usize..=4096) {
        let t = table_from(&c, uncoded, limit);
        let d = CannedDecoder::new(&t);
        let mut out = vec![0u8; out_len];
        if let Ok(n) = d.decompress(&stream, &mut out) {
            prop_assert!(n <= out_len);
            let toks = d.tokens(&stream, out_len).unwrap();
            prop_assert_eq!(toks.iter().map(|t| t.len()).sum::<usize>(), n);
        }
        if let Ok(n) = inflate(&stream, &mut out) {
            prop_assert!(n <= out_len);
        }
    }

    #[test]
    fn canned_round_trip(c in counts(), limit in 9u8..=15, lvl in 0usize..3, p in page()) {
        let t = table_from(&c, false, limit);
        let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::ALL[lvl], Some(&t)).unwrap();
        let mut out = Vec::new();
        if let Outcome::Compressed(n) = e.compress(&p, &mut out).unwrap() {
            let mut back = vec![0u8; 4096];
            let m = CannedDecoder::new(&t).decompress(&out[..n], &mut back).unwrap();
            prop_assert_eq!(&back[..m], &p[..]);
            prop_assert_eq!(reencode_canned(&t, &out[..n]).unwrap(), Ok(Reencode::Exact));
        }
    }

    #[test]
    fn canned_with_header_matches_miniz(c in counts(), limit in 9u8..=15, p in page(),
                                        stream in prop::collection::vec(any::<u8>(), 0..512)) {
        let t = table_from(&c, false, limit);
        let mut ours = vec![0u8; 4096];
        if let Ok(n) = CannedDecoder::new(&t).decompress(&stream, &mut ours) {
            let theirs = miniz_oxide::inflate::decompress_to_vec_with_limit(
                &canned_to_deflate(&t, &stream).unwrap(), 4096).unwrap();
            prop_assert_eq!(&theirs[..], &ours[..n]);
        }
        let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&t)).unwrap();
        let mut out = Vec::new();
        if let Outcome::Compressed(n) = e.compress(&p, &mut out).unwrap() {
            let theirs = miniz_oxide::inflate::decompress_to_vec_with_limit(
                &canned_to_deflate(&t, &out[..n]).unwrap(), 4096).unwrap();
            prop_assert_eq!(theirs, p);
        }
    }

    #[test]
    fn table_from_lengths_validation(raw in prop::collection::vec(any::<u8>(), 316)) {
        let lens: Vec<u8> = raw.iter().map(|&b| if b >= 0xf0 { b } else { b % 16 }).collect();
        let (ll, d) = lens.split_at(286);
        match Table::from_lengths(ll, d) {
            Err(TableError::LengthTooLong { alphabet, symbol, length }) => {
                let l = if alphabet == Alphabet::LitLen { ll } else { d };
                prop_assert!(length > 15 && l[symbol] == length);
                prop_assert!(l[..symbol].iter().all(|&x| x <= 15));
            }
            Err(TableError::OverSubscribed { alphabet, kraft }) => {
                let l = if alphabet == Alphabet::LitLen { ll } else { d };
                prop_assert!(l.iter().all(|&x| x <= 15));
                prop_assert_eq!(kraft, kraft_sum(l));
                prop_assert!(kraft > 1 << 15);
            }
            Err(TableError::NoEndOfBlock) => prop_assert_eq!(ll[256], 0),
            Err(e) => prop_assert!(false, "unexpected error {}", e),
            Ok(t) => {
                if t.is_standard() {
                    let h = read_block_header(&t.header().bytes).unwrap();
                    prop_assert_eq!(&h.litlen[..286], ll);
                    prop_assert_eq!(&h.dist[..30], d);
                }
                prop_assert_eq!(t.check_iaa().is_ok(), t.iaa_violations().is_empty());
            }
        }
    }

    #[test]
    fn valid_lengths_always_make_tables(c in counts(), uncoded in any::<bool>(), limit in 9u8..=15) {
        let t = table_from(&c, uncoded, limit);
        let h = read_block_header(&t.header().bytes);
        if t.is_standard() {
            prop_assert!(h.is_ok());
        }
    }

    #[test]
    fn table_deserialization(bytes in prop::collection::vec(any::<u8>(), 0..400), c in counts()) {
        if let Ok(t) = Table::from_bytes(&bytes) {
            prop_assert_eq!(Table::from_json(&t.to_json()).unwrap(), t.clone());
            prop_assert_eq!(Table::from_binary(&t.to_binary()).unwrap(), t);
        }
        // A valid binary form, then one damaged byte: loads the same table or fails, never panics.
        let t = table_from(&c, true, 15);
        let mut b = t.to_binary();
        prop_assert_eq!(Table::from_bytes(&b).unwrap(), t.clone());
        let i = c[0] as usize % b.len();
        b[i] ^= 1 + c[1] % 255;
        let _ = Table::from_bytes(&b);
    }
}
