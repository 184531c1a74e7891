//! The ISA-L export compiles against a `struct isal_hufftables` written
//! here from ISA-L's documented layout (`include/igzip_lib.h`: field order,
//! types and sizes without LONGER_HUFFTABLE), with `IGZIP_HIST_SIZE=4096`;
//! every printed field is checked against the table independently of the
//! generator; and the history-size guard fires for other builds.

mod common;

use cannery_codec::token::{dist_extra, dist_symbol, length_extra, length_symbol};
use cannery_codec::Table;
use cannery_export::isal::hufftables_c;
use common::{compile_and_run, tables, CC_FLAGS};

const IGZIP_LIB_H: &str = r#"/* Minimal stand-in for ISA-L's igzip_lib.h: the hufftables layout only. */
#include <stdint.h>
#ifndef IGZIP_HIST_SIZE
#define IGZIP_HIST_SIZE (32 * 1024)
#endif
#define ISAL_DEF_MAX_HDR_SIZE 328
#ifdef LONGER_HUFFTABLE
enum { IGZIP_DIST_TABLE_SIZE = 8 * 1024 };
enum { IGZIP_DECODE_OFFSET = 26 };
#else
enum { IGZIP_DIST_TABLE_SIZE = 2 };
enum { IGZIP_DECODE_OFFSET = 0 };
#endif
enum { IGZIP_LEN_TABLE_SIZE = 256 };
enum { IGZIP_LIT_TABLE_SIZE = 257 };
struct isal_hufftables {
	uint8_t deflate_hdr[ISAL_DEF_MAX_HDR_SIZE];
	uint32_t deflate_hdr_count;
	uint32_t deflate_hdr_extra_bits;
	uint32_t dist_table[IGZIP_DIST_TABLE_SIZE];
	uint32_t len_table[IGZIP_LEN_TABLE_SIZE];
	uint16_t lit_table[IGZIP_LIT_TABLE_SIZE];
	uint8_t lit_table_sizes[IGZIP_LIT_TABLE_SIZE];
	uint16_t dcodes[30 - IGZIP_DECODE_OFFSET];
	uint8_t dcodes_sizes[30 - IGZIP_DECODE_OFFSET];
};
"#;

const MAIN_C: &str = r#"#include <stdio.h>
#include <igzip_lib.h>

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
    std::fs::write(dir.path().join("igzip_lib.h"), IGZIP_LIB_H).unwrap();
    std::fs::write(dir.path().join("main.c"), MAIN_C).unwrap();
    let c = hufftables_c(table, "tabs", "test").unwrap();
    std::fs::write(dir.path().join("tabs.c"), &c).unwrap();
    let tabs = dir.path().join("tabs.c");
    let out = compile_and_run(
        dir.path(),
        "main.c",
        &["-DIGZIP_HIST_SIZE=4096", tabs.to_str().unwrap()],
    );

    let l = table.lengths();
    // Header: the table's implied header (the fixed code: 3-bit static header).
    let (hdr, bits) = if table.is_fixed_code() {
        (vec![3u8], 3)
    } else {
        (table.header().bytes.clone(), table.header().bits)
    };
    let mut want_hdr: Vec<u64> = hdr.iter().map(|&b| b as u64).collect();
    want_hdr.resize(328, 0);
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
fn isal_tables_compile_and_hold_the_codes() {
    for (label, table) in tables() {
        check(&table, label);
    }
}

#[test]
fn history_size_guard_fires_for_a_32k_build() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("igzip_lib.h"), IGZIP_LIB_H).unwrap();
    let c = hufftables_c(&Table::kernel_2024(), "tabs", "test").unwrap();
    std::fs::write(dir.path().join("tabs.c"), &c).unwrap();
    for extra in [
        &[][..],
        &["-DIGZIP_HIST_SIZE=4096", "-DLONGER_HUFFTABLE"][..],
    ] {
        let out = std::process::Command::new("cc")
            .args(CC_FLAGS)
            .args(extra)
            .arg("-fsyntax-only")
            .arg("-I")
            .arg(dir.path())
            .arg(dir.path().join("tabs.c"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{extra:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("these tables are for igzip built"));
    }
}
