//! Golden vectors that freeze the wire and table formats byte for byte.
//!
//! Some anchors are independent of this crate: zlib's raw deflate of "a",
//! and the IAA hardware bytes for the 2024 kernel patch's RFC-text vector,
//! which our `fast` level reproduces exactly. The rest are frozen outputs
//! under tests/golden/; regenerate them deliberately with
//! `CANNERY_BLESS=1 cargo test -p cannery-codec --test golden`.

mod common;

use std::path::PathBuf;

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};

fn golden(name: &str, actual: &[u8]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("CANNERY_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with CANNERY_BLESS=1)", path.display()));
    assert!(
        expected == actual,
        "{name} differs from its golden file {}",
        path.display()
    );
}

fn compress(
    mode: Mode,
    format: Format,
    level: Level,
    table: Option<&Table>,
    input: &[u8],
) -> Vec<u8> {
    let mut e = Encoder::new(mode, format, level, table).unwrap();
    let mut out = Vec::new();
    assert!(matches!(
        e.compress(input, &mut out).unwrap(),
        Outcome::Compressed(_)
    ));
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join("")
}

#[test]
fn fixed_block_of_one_literal_matches_zlib() {
    assert_eq!(
        compress(Mode::Fixed, Format::Deflate, Level::Fast, None, b"a"),
        [0x4b, 0x04, 0x00]
    );
    assert_eq!(
        compress(Mode::Fixed, Format::Deflate, Level::Fast, None, b""),
        [0x03, 0x00]
    );
}

#[test]
fn fast_level_reproduces_iaa_hardware_bytes_for_the_rfc_vector() {
    let (input, iaa, _) = &common::vectors()[1];
    let t = Table::kernel_2024();
    assert_eq!(
        &compress(Mode::Canned, Format::Iaa, Level::Fast, Some(&t), input),
        iaa
    );
}

/// A small trained-looking table: optimal lengths for the symbol counts of
/// one text page, every symbol given at least one count.
fn small_table() -> Table {
    let page: Vec<u8> = include_bytes!("data/text-page.txt").to_vec();
    let mut mf = cannery_codec::lz77::MatchFinder::new();
    let mut tokens = Vec::new();
    mf.parse(&page, Level::Fast, None, &mut tokens);
    let mut ll = [1u64; 286];
    let mut d = [1u64; 30];
    cannery_codec::encode::count_symbols(&tokens, &mut ll, &mut d);
    Table::from_lengths(
        &limited_code_lengths(&ll, 15),
        &limited_code_lengths(&d[..24], 15)
            .iter()
            .copied()
            .chain([0; 6])
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

#[test]
fn streams_are_frozen() {
    let (input, _, _) = &common::vectors()[0];
    let k = Table::kernel_2024();
    let s = small_table();
    let mut text = String::new();
    for (name, mode, format, table) in [
        ("fixed", Mode::Fixed, Format::Deflate, None),
        ("dynamic", Mode::Dynamic, Format::Deflate, None),
        ("canned-kernel-iaa", Mode::Canned, Format::Iaa, Some(&k)),
        (
            "canned-kernel-deflate",
            Mode::Canned,
            Format::Deflate,
            Some(&k),
        ),
        ("canned-small-iaa", Mode::Canned, Format::Iaa, Some(&s)),
        (
            "canned-small-deflate",
            Mode::Canned,
            Format::Deflate,
            Some(&s),
        ),
    ] {
        for level in Level::ALL {
            text += &format!(
                "{name} {level} {}\n",
                hex(&compress(mode, format, level, table, input))
            );
        }
    }
    golden("streams.txt", text.as_bytes());
}

#[test]
fn headers_and_table_forms_are_frozen() {
    let k = Table::kernel_2024();
    let s = small_table();
    let text = format!(
        "kernel-2024 {} bits {}\nsmall {} bits {}\n",
        k.header().bits,
        hex(&k.header().bytes),
        s.header().bits,
        hex(&s.header().bytes)
    );
    golden("headers.txt", text.as_bytes());
    golden("kernel-2024.table.json", k.to_json().as_bytes());
    golden("kernel-2024.table.bin", &k.to_binary());
    golden("small.table.bin", &s.to_binary());
    // Frozen forms read back to the same tables.
    assert_eq!(Table::from_bytes(k.to_json().as_bytes()).unwrap(), k);
}

#[test]
fn our_header_for_the_kernel_table_is_valid_and_no_longer_than_the_kernels() {
    let k = Table::kernel_2024();
    let h = cannery_codec::decode::read_block_header(&k.header().bytes).unwrap();
    assert_eq!(h.bits, k.header().bits);
    assert_eq!(h.litlen, k.lengths().litlen);
    assert!(!h.crosses_boundary);
    // Ours trims HDIST to 24 (symbols 24..29 are uncoded).
    assert_eq!(h.hdist, 24);
    assert!(k.header().bits <= cannery_codec::table::builtin::KERNEL_2024_HEADER_BITS);
}

/// The header every form writes for 300 seeded code-length sets (each
/// limit 9..=15, some with uncoded symbols), frozen as bits and an FNV-1a
/// hash of the bytes per line: a faster header search must write the same.
#[test]
fn seeded_headers_are_frozen() {
    use cannery_codec::rng::XorShift64;
    use cannery_codec::table::HeaderForm;
    let mut rng = XorShift64::new(0x6865_6164);
    let mut text = String::new();
    for i in 0..300u64 {
        let shift = rng.next_u64() % 8;
        let floor = u64::from(i % 3 != 0);
        let mut counts: Vec<u64> = (0..316)
            .map(|_| (rng.next_u64() >> (56 + shift)) + floor)
            .collect();
        counts[256] = counts[256].max(1);
        for s in [0, 1, 286, 287] {
            counts[s] = counts[s].max(1);
        }
        let limit = 9 + (i % 7) as u8;
        let ll = limited_code_lengths(&counts[..286], limit);
        let d = limited_code_lengths(&counts[286..], limit);
        text += &format!("{i}");
        for form in [
            HeaderForm::Aligned,
            HeaderForm::Shortest,
            HeaderForm::Fewest,
        ] {
            let h = Table::from_lengths_with_header(&ll, &d, form).unwrap();
            let fnv = h
                .header()
                .bytes
                .iter()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
            text += &format!(" {} {fnv:016x}", h.header().bits);
        }
        text += "\n";
    }
    golden("seeded-headers.txt", text.as_bytes());
}
