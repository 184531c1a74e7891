//! The generated kernel header compiles under `cc -Wall -Wextra -Werror
//! -std=gnu11` in a harness that stands in for iaa_crypto (kernel types, a
//! stub `add_iaa_compression_mode()` of the right arity that prints what it
//! is given), for every table and every registration form; the printed
//! values are compared with the table, and the header bytes are decoded with
//! the codec's header parser.

mod common;

use std::collections::BTreeMap;

use cannery_codec::decode::read_block_header;
use cannery_codec::Table;
use cannery_export::c_header::kernel_header;
use cannery_export::{Api, KernelOptions};
use common::{compile_and_run, tables};

/// The harness: kernel basic types, stub registration functions, the header,
/// and a main() that registers, prints the header macros/array and unregisters.
fn harness(name: &str, api: Api) -> String {
    let up = name.to_ascii_uppercase();
    let ten = api == Api::HeaderTable;
    let header_params = if ten {
        "const u8 *header_table, int header_table_size, u16 gen_decomp_table_flags,"
    } else {
        ""
    };
    let header_body = if ten {
        "\tprintf(\"reg_header_size %d\\n\", header_table_size);\n\
         \tfor (i = 0; header_table && i < header_table_size; i++)\n\
         \t\tprintf(\"reg_header %d 0x%x\\n\", i, (unsigned)header_table[i]);\n\
         \tprintf(\"reg_header_null %d\\n\", header_table == NULL);\n\
         \tprintf(\"reg_flags 0x%x\\n\", (unsigned)gen_decomp_table_flags);\n"
    } else {
        ""
    };
    format!(
        r#"#include <stdio.h>
#include <stddef.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;

struct iaa_device_compression_mode;
typedef int (*iaa_dev_comp_init_fn_t)(struct iaa_device_compression_mode *mode);
typedef int (*iaa_dev_comp_free_fn_t)(struct iaa_device_compression_mode *mode);

int add_iaa_compression_mode(const char *name, const u32 *ll_table, int ll_table_size,
			     const u32 *d_table, int d_table_size, {header_params}
			     iaa_dev_comp_init_fn_t init, iaa_dev_comp_free_fn_t free);
void remove_iaa_compression_mode(const char *name);

int add_iaa_compression_mode(const char *name, const u32 *ll_table, int ll_table_size,
			     const u32 *d_table, int d_table_size, {header_params}
			     iaa_dev_comp_init_fn_t init, iaa_dev_comp_free_fn_t free)
{{
	int i;

	printf("reg_name %s\n", name);
	printf("reg_ll_size %d\n", ll_table_size);
	for (i = 0; i < ll_table_size / 4; i++)
		printf("ll %d 0x%x\n", i, ll_table[i]);
	printf("reg_d_size %d\n", d_table_size);
	for (i = 0; i < d_table_size / 4; i++)
		printf("d %d 0x%x\n", i, d_table[i]);
{header_body}	printf("reg_init_null %d\n", init == NULL);
	printf("reg_free_null %d\n", free == NULL);
	return 0;
}}

void remove_iaa_compression_mode(const char *name)
{{
	printf("removed %s\n", name);
}}

#include "table.h"

int main(void)
{{
	int ret = iaa_aecs_init_{name}();

	printf("ret %d\n", ret);
#ifdef {up}_HEADER_SIZE_IN_BITS
	{{
		size_t i;

		printf("header_bits %d\n", {up}_HEADER_SIZE_IN_BITS);
		printf("flags 0x%x\n", (unsigned){up}_GEN_DECOMP_TABLE_FLAGS);
		printf("header_size %u\n", (unsigned)sizeof({name}_header));
		for (i = 0; i < sizeof({name}_header); i++)
			printf("hb %u 0x%x\n", (unsigned)i, (unsigned){name}_header[i]);
	}}
#endif
	printf("mode_name %s\n", {up}_MODE_NAME);
	printf("table_id %s\n", {up}_TABLE_ID);
	iaa_aecs_cleanup_{name}();
	return 0;
}}
"#
    )
}

/// Output lines as key → values (a key may repeat: `ll 3 0x40033`).
fn parse(out: &str) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut m: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for line in out.lines() {
        let mut parts = line.split(' ').map(String::from);
        let key = parts.next().unwrap();
        m.entry(key).or_default().push(parts.collect());
    }
    m
}

fn one(m: &BTreeMap<String, Vec<Vec<String>>>, key: &str) -> String {
    let v = m
        .get(key)
        .unwrap_or_else(|| panic!("harness printed no {key}"));
    assert_eq!(v.len(), 1, "{key} printed {} times", v.len());
    v[0].join(" ")
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// Indexed hex values printed under `key`, checked to be 0..n in order.
fn indexed(m: &BTreeMap<String, Vec<Vec<String>>>, key: &str) -> Vec<u64> {
    let v = m.get(key).map(|v| v.as_slice()).unwrap_or(&[]);
    v.iter()
        .enumerate()
        .map(|(i, kv)| {
            assert_eq!(kv[0], i.to_string());
            hex(&kv[1])
        })
        .collect()
}

fn check(table: &Table, label: &str, api: Api) {
    let name = "cantab";
    let header = kernel_header(table, &KernelOptions::new(name).with_api(api)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.h"), &header).unwrap();
    std::fs::write(dir.path().join("main.c"), harness(name, api)).unwrap();
    let out = parse(&compile_and_run(dir.path(), "main.c", &[]));
    let ctx = format!("{label} / {api}");

    assert_eq!(one(&out, "ret"), "0", "{ctx}");
    assert_eq!(one(&out, "reg_name"), name, "{ctx}");
    assert_eq!(one(&out, "mode_name"), name, "{ctx}");
    assert_eq!(one(&out, "removed"), name, "{ctx}");
    assert_eq!(one(&out, "table_id"), table.id(), "{ctx}");
    assert_eq!(one(&out, "reg_ll_size"), "1144", "{ctx}");
    assert_eq!(one(&out, "reg_d_size"), "120", "{ctx}");
    assert_eq!(one(&out, "reg_init_null"), "1", "{ctx}");
    assert_eq!(one(&out, "reg_free_null"), "1", "{ctx}");

    // Every entry the driver would memcpy into the AECS: length in 18:15,
    // canonical code (not reversed) in 14:0, nothing above.
    let ll = indexed(&out, "ll");
    let d = indexed(&out, "d");
    assert_eq!((ll.len(), d.len()), (286, 30), "{ctx}");
    let l = table.lengths();
    for (s, &v) in ll.iter().enumerate() {
        assert_eq!(v >> 19, 0, "{ctx} ll {s}");
        assert_eq!((v >> 15) as u8, l.litlen[s], "{ctx} ll {s}");
        let code = match l.litlen[s] {
            0 => 0,
            _ => table.litlen_codes()[s],
        };
        assert_eq!(v & 0x7fff, code as u64, "{ctx} ll {s}");
    }
    for (s, &v) in d.iter().enumerate() {
        assert_eq!(v >> 19, 0, "{ctx} d {s}");
        assert_eq!((v >> 15) as u8, l.dist[s], "{ctx} d {s}");
        let code = match l.dist[s] {
            0 => 0,
            _ => table.dist_codes()[s],
        };
        assert_eq!(v & 0x7fff, code as u64, "{ctx} d {s}");
    }

    if table.is_fixed_code() {
        assert!(
            !out.contains_key("header_bits"),
            "{ctx}: fixed code has no header"
        );
        if api == Api::HeaderTable {
            assert_eq!(one(&out, "reg_header_null"), "1", "{ctx}");
            assert_eq!(one(&out, "reg_header_size"), "0", "{ctx}");
            assert_eq!(one(&out, "reg_flags"), "0x0", "{ctx}");
        }
        return;
    }
    // The header: bytes as the table's, decoding to exactly its lengths and
    // ending at the declared bit count; flags as the driver computes them.
    let bits: usize = one(&out, "header_bits").parse().unwrap();
    let bytes: Vec<u8> = indexed(&out, "hb").into_iter().map(|b| b as u8).collect();
    assert_eq!(bytes, table.header().bytes, "{ctx}");
    assert_eq!(bits, table.header().bits, "{ctx}");
    assert_eq!(bytes.len(), bits.div_ceil(8), "{ctx}");
    let parsed = read_block_header(&bytes).unwrap();
    assert_eq!(parsed.litlen, l.litlen.to_vec(), "{ctx}");
    assert_eq!(parsed.dist, l.dist.to_vec(), "{ctx}");
    assert_eq!(parsed.bits, bits, "{ctx}");
    assert!(!parsed.crosses_boundary, "{ctx}");
    let pad = bytes.len() * 8 - bits;
    assert_eq!(
        hex(&one(&out, "flags")),
        (0x1 | 1 << 9 | pad << 6) as u64,
        "{ctx}"
    );
    if api == Api::HeaderTable {
        let reg: Vec<u8> = indexed(&out, "reg_header")
            .into_iter()
            .map(|b| b as u8)
            .collect();
        assert_eq!(reg, bytes, "{ctx}: registered header");
        assert_eq!(
            one(&out, "reg_header_size"),
            bytes.len().to_string(),
            "{ctx}"
        );
        assert_eq!(one(&out, "reg_flags"), one(&out, "flags"), "{ctx}");
    }
}

#[test]
fn every_table_and_api_compiles_and_prints_the_table() {
    for (label, table) in tables() {
        for api in Api::ALL {
            check(&table, label, api);
        }
    }
}

#[test]
fn our_2024_header_decodes_like_the_patch_header() {
    // Our header writer need not reproduce Intel's bytes (docs/canned-format.md
    // §1.4), but it must decode to the same lengths; record what it does.
    let t = Table::kernel_2024();
    let ours = read_block_header(&t.header().bytes).unwrap();
    let theirs = read_block_header(cannery_codec::table::builtin::KERNEL_2024_HEADER).unwrap();
    assert_eq!(
        theirs.bits,
        cannery_codec::table::builtin::KERNEL_2024_HEADER_BITS
    );
    assert_eq!((ours.litlen, ours.dist), (theirs.litlen, theirs.dist));
}

#[test]
fn static_asserts_reject_a_tampered_header() {
    // Shrinking the declared bit count by 8 makes the size guard fire: the
    // guards are real, not decoration.
    let t = Table::kernel_2024();
    let h = kernel_header(&t, &KernelOptions::new("cantab")).unwrap();
    let bits = t.header().bits;
    let tampered = h.replace(
        &format!("#define CANTAB_HEADER_SIZE_IN_BITS {bits}\n"),
        &format!("#define CANTAB_HEADER_SIZE_IN_BITS {}\n", bits - 8),
    );
    assert_ne!(tampered, h);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.h"), &tampered).unwrap();
    std::fs::write(
        dir.path().join("main.c"),
        harness("cantab", Api::HeaderTable),
    )
    .unwrap();
    let out = std::process::Command::new("cc")
        .args(common::CC_FLAGS)
        .args(["-fsyntax-only", "-I"])
        .arg(dir.path())
        .arg(dir.path().join("main.c"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("must hold exactly"));
}
