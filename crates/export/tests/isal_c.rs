//! The ISA-L export compiles against the `struct isal_hufftables` of the
//! installed ISA-L headers (Debian's libisal-dev, `<isa-l/igzip_lib.h>`), with
//! no `-D` options; every printed field is checked against the table
//! independently of the generator; the layout guards fire for a
//! `LONGER_HUFFTABLE` build and for a header whose arrays have other sizes
//! (a stand-in header placed first on the include path); and tables the
//! stock library could write corruptly are refused. Compressing with the
//! tables is tested in `isal_libisal.rs`.

mod common;

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::token::{dist_extra, dist_symbol, length_extra, length_symbol};
use cannery_codec::Table;
use cannery_export::isal::hufftables_c;
use cannery_export::ExportError;
use common::{compile_and_run, require_libisal, tables, CC_FLAGS};

/// Stand-in for ISA-L's igzip_lib.h with the stock field order and types;
/// `DCODES` sets the size of `dcodes` (30 in the real header).
fn stand_in_header(dcodes: usize) -> String {
    format!(
        r#"/* Stand-in for ISA-L's igzip_lib.h: the hufftables layout only. */
#include <stdint.h>
#define ISAL_DEF_MAX_HDR_SIZE 328
#ifdef LONGER_HUFFTABLE
enum {{ IGZIP_DIST_TABLE_SIZE = 8 * 1024 }};
#else
enum {{ IGZIP_DIST_TABLE_SIZE = 2 }};
#endif
struct isal_hufftables {{
	uint8_t deflate_hdr[ISAL_DEF_MAX_HDR_SIZE];
	uint32_t deflate_hdr_count;
	uint32_t deflate_hdr_extra_bits;
	uint32_t dist_table[IGZIP_DIST_TABLE_SIZE];
	uint32_t len_table[256];
	uint16_t lit_table[257];
	uint8_t lit_table_sizes[257];
	uint16_t dcodes[{dcodes}];
	uint8_t dcodes_sizes[{dcodes}];
}};
"#
    )
}

/// The exported tables: kernel-2024 is refused (distance symbols 24..=29
/// uncoded), so its code with every symbol coded stands in for it.
fn isal_tables() -> Vec<(&'static str, Table)> {
    let mut v: Vec<_> = tables()
        .into_iter()
        .filter(|(label, _)| *label != "kernel-2024")
        .collect();
    let k = Table::kernel_2024();
    let counts = |lens: &[u8]| -> Vec<u64> {
        lens.iter()
            .map(|&l| if l == 0 { 1 } else { 1u64 << (15 - l) })
            .collect()
    };
    v.push((
        "kernel-2024 all coded (13/12)",
        Table::from_lengths(
            &limited_code_lengths(&counts(&k.lengths().litlen), 13),
            &limited_code_lengths(&counts(&k.lengths().dist), 12),
        )
        .unwrap(),
    ));
    v
}

const MAIN_C: &str = r#"#include <stdio.h>
#include <isa-l/igzip_lib.h>

extern struct isal_hufftables tabs;

#define DUMP(field) do { size_t i; for (i = 0; i < sizeof(tabs.field) / sizeof(tabs.field[0]); i++) \
	printf(#field " %u 0x%x\n", (unsigned)i, (unsigned)tabs.field[i]); } while (0)

int main(void)
{
	DUMP(deflate_hdr);
	printf("deflate_hdr_count %u\n", (unsigned)tabs.deflate_hdr_count);
	printf("deflate_hdr_extra_bits %u\n", (unsigned)tabs.deflate_hdr_extra_bits);
	DUMP(dist_table);
	DUMP(len_table);
	DUMP(lit_table);
	DUMP(lit_table_sizes);
	DUMP(dcodes);
	DUMP(dcodes_sizes);
	return 0;
}
"#;

fn field(out: &str, name: &str) -> Vec<u64> {
    let prefix = format!("{name} ");
    out.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .enumerate()
        .map(|(i, rest)| {
            let (idx, v) = rest.split_once(' ').unwrap();
            assert_eq!(idx, i.to_string());
            u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
        })
        .collect()
}

fn scalar(out: &str, name: &str) -> u64 {
    let prefix = format!("{name} ");
    out.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap()
        .parse()
        .unwrap()
}

/// Expected packed entry: code bits LSB-first (reversed code), then extra bits.
fn packed(table: &Table, sym: usize, dist: bool, extra_bits: u8, extra: u16) -> u64 {
    let (len, rev) = if dist {
        (table.lengths().dist[sym], table.dist_codes_reversed()[sym])
    } else {
        (
            table.lengths().litlen[sym],
            table.litlen_codes_reversed()[sym],
        )
    };
    ((extra as u64) << (len as u64 + 5)) | (rev as u64) << 5 | (len + extra_bits) as u64
}

fn check(table: &Table, label: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.c"), MAIN_C).unwrap();
    let c = hufftables_c(table, "tabs", "test").unwrap();
    std::fs::write(dir.path().join("tabs.c"), &c).unwrap();
    let tabs = dir.path().join("tabs.c");
    let out = compile_and_run(dir.path(), "main.c", &[tabs.to_str().unwrap()]);

    let l = table.lengths();
    // Header: the fewest-bits encoding of the table's lengths, never longer
    // than the byte-aligned one it carries (the fixed code: 3-bit static
    // header).
    let (hdr, bits) = if table.is_fixed_code() {
        (vec![3u8], 3)
    } else {
        let h = cannery_codec::table::header::write_header_as(
            table.lengths(),
            cannery_codec::table::HeaderForm::Fewest,
        );
        assert!(h.bits <= table.header().bits, "{label}");
        (h.bytes, h.bits)
    };
    let mut want_hdr: Vec<u64> = hdr.iter().map(|&b| b as u64).collect();
    want_hdr.resize(328, 0);
    // Bits past the header are zero (igzip ORs the partial byte in).
    if bits % 8 != 0 {
        want_hdr[bits / 8] &= (1 << (bits % 8)) - 1;
    }
    assert_eq!(field(&out, "deflate_hdr"), want_hdr, "{label}");
    assert_eq!(
        scalar(&out, "deflate_hdr_count"),
        (bits / 8) as u64,
        "{label}"
    );
    assert_eq!(
        scalar(&out, "deflate_hdr_extra_bits"),
        (bits % 8) as u64,
        "{label}"
    );
    // Lengths 3..=258 through the codec's own length → symbol/extra mapping.
    let want_len: Vec<u64> = (3u16..=258)
        .map(|n| {
            let (eb, ev) = length_extra(n);
            packed(table, length_symbol(n) as usize, false, eb, ev)
        })
        .collect();
    assert_eq!(field(&out, "len_table"), want_len, "{label}");
    let want_dist: Vec<u64> = (1u16..=2)
        .map(|n| {
            let (eb, ev) = dist_extra(n);
            packed(table, dist_symbol(n) as usize, true, eb, ev)
        })
        .collect();
    assert_eq!(field(&out, "dist_table"), want_dist, "{label}");
    let lit: Vec<u64> = (0..257)
        .map(|s| table.litlen_codes_reversed()[s] as u64)
        .collect();
    assert_eq!(field(&out, "lit_table"), lit, "{label}");
    let lit_sizes: Vec<u64> = l.litlen[..257].iter().map(|&x| x as u64).collect();
    assert_eq!(field(&out, "lit_table_sizes"), lit_sizes, "{label}");
    let dc: Vec<u64> = table
        .dist_codes_reversed()
        .iter()
        .map(|&x| x as u64)
        .collect();
    assert_eq!(field(&out, "dcodes"), dc, "{label}");
    let ds: Vec<u64> = l.dist.iter().map(|&x| x as u64).collect();
    assert_eq!(field(&out, "dcodes_sizes"), ds, "{label}");
}

#[test]
fn isal_tables_compile_against_the_installed_header_and_hold_the_codes() {
    require_libisal();
    for (label, table) in isal_tables() {
        check(&table, label);
    }
}

#[test]
fn layout_guards_fire_for_other_layouts() {
    let c = hufftables_c(&Table::fixed(), "tabs", "test").unwrap();
    for (dcodes, extra, want) in [
        (30, None, None),
        (30, Some("-DLONGER_HUFFTABLE"), Some("LONGER_HUFFTABLE off")),
        (
            4,
            None,
            Some("struct isal_hufftables.dcodes is not uint16_t[30]"),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        // Found before the system's <isa-l/igzip_lib.h>: -I comes first.
        std::fs::create_dir(dir.path().join("isa-l")).unwrap();
        std::fs::write(
            dir.path().join("isa-l/igzip_lib.h"),
            stand_in_header(dcodes),
        )
        .unwrap();
        std::fs::write(dir.path().join("tabs.c"), &c).unwrap();
        let out = std::process::Command::new("cc")
            .args(CC_FLAGS)
            .args(extra)
            .arg("-fsyntax-only")
            .arg("-I")
            .arg(dir.path())
            .arg(dir.path().join("tabs.c"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match want {
            None => assert!(out.status.success(), "{stderr}"),
            Some(w) => {
                assert!(!out.status.success(), "{extra:?} {dcodes}");
                assert!(stderr.contains(w), "{stderr}");
            }
        }
    }
}

#[test]
fn the_file_needs_no_history_size_and_prefers_the_distribution_path() {
    let c = hufftables_c(&Table::fixed(), "tabs", "test").unwrap();
    assert!(!c.contains("IGZIP_HIST_SIZE !="), "{c}");
    let isal = c.find("#include <isa-l/igzip_lib.h>").unwrap();
    let plain = c.find("#include <igzip_lib.h>").unwrap();
    assert!(c.find("__has_include(<isa-l/igzip_lib.h>)").unwrap() < isal);
    assert!(isal < plain);
    assert!(c.contains("isal_deflate_set_hufftables(stream, &tabs, IGZIP_HUFFTABLE_CUSTOM)"));
    assert!(c.contains("-lisal"));
}

#[test]
fn tables_the_stock_library_would_corrupt_are_refused() {
    let err = hufftables_c(&Table::kernel_2024(), "tabs", "test").unwrap_err();
    assert!(matches!(err, ExportError::BreaksRule { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("distance symbols 24..=29 have no code"),
        "{err}"
    );
}
