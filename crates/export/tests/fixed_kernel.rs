//! The fixed-code export reproduces the kernel's `fixed_ll_sym[286]` and
//! `fixed_d_sym[30]` exactly, and the kernel's own file imports back to the
//! fixed table.
//!
//! Reference: torvalds/linux `drivers/crypto/intel/iaa/iaa_crypto_comp_fixed.c`
//! (stored version at commit 06d07429858317ded2db7986113a9e0129cd599b, read
//! for this test). The rows below are copied from that file as test data.

mod common;

use cannery_codec::Table;
use cannery_export::c_header::{kernel_entries, kernel_header};
use cannery_export::{table_from_kernel_header, KernelOptions};

/// Rows of `fixed_ll_sym` as printed in the kernel file: (first symbol, values).
const KERNEL_LL_ROWS: &[(usize, [u32; 8])] = &[
    (
        0,
        [
            0x40030, 0x40031, 0x40032, 0x40033, 0x40034, 0x40035, 0x40036, 0x40037,
        ],
    ),
    (
        136,
        [
            0x400B8, 0x400B9, 0x400BA, 0x400BB, 0x400BC, 0x400BD, 0x400BE, 0x400BF,
        ],
    ),
    (
        144,
        [
            0x48190, 0x48191, 0x48192, 0x48193, 0x48194, 0x48195, 0x48196, 0x48197,
        ],
    ),
    (
        248,
        [
            0x481F8, 0x481F9, 0x481FA, 0x481FB, 0x481FC, 0x481FD, 0x481FE, 0x481FF,
        ],
    ),
    (
        256,
        [
            0x38000, 0x38001, 0x38002, 0x38003, 0x38004, 0x38005, 0x38006, 0x38007,
        ],
    ),
    (
        272,
        [
            0x38010, 0x38011, 0x38012, 0x38013, 0x38014, 0x38015, 0x38016, 0x38017,
        ],
    ),
];
/// The last row of `fixed_ll_sym` (symbols 280..=285).
const KERNEL_LL_LAST: [u32; 6] = [0x400C0, 0x400C1, 0x400C2, 0x400C3, 0x400C4, 0x400C5];
/// Rows of `fixed_d_sym`.
const KERNEL_D_ROWS: &[(usize, [u32; 8])] = &[
    (
        0,
        [
            0x28000, 0x28001, 0x28002, 0x28003, 0x28004, 0x28005, 0x28006, 0x28007,
        ],
    ),
    (
        16,
        [
            0x28010, 0x28011, 0x28012, 0x28013, 0x28014, 0x28015, 0x28016, 0x28017,
        ],
    ),
];
const KERNEL_D_LAST: [u32; 6] = [0x28018, 0x28019, 0x2801A, 0x2801B, 0x2801C, 0x2801D];

/// The whole kernel arrays as the file's pattern gives them: literals 0..=143
/// 0x40030 + i, 144..=255 0x48190 + (i − 144), 256..=279 0x38000 + (i − 256),
/// 280..=285 0x400C0 + (i − 280); distances 0x28000 + i.
fn kernel_fixed_arrays() -> ([u32; 286], [u32; 30]) {
    let mut ll = [0u32; 286];
    for (i, v) in ll.iter_mut().enumerate() {
        let i = i as u32;
        *v = match i {
            0..=143 => 0x40030 + i,
            144..=255 => 0x48190 + (i - 144),
            256..=279 => 0x38000 + (i - 256),
            _ => 0x400C0 + (i - 280),
        };
    }
    let mut d = [0u32; 30];
    for (i, v) in d.iter_mut().enumerate() {
        *v = 0x28000 + i as u32;
    }
    (ll, d)
}

#[test]
fn fixed_entries_equal_the_kernel_arrays() {
    let (ll, d) = kernel_entries(&Table::fixed());
    let (kll, kd) = kernel_fixed_arrays();
    for &(first, row) in KERNEL_LL_ROWS {
        assert_eq!(ll[first..first + 8], row, "fixed_ll_sym row at {first}");
        assert_eq!(kll[first..first + 8], row, "pattern row at {first}");
    }
    assert_eq!(ll[280..], KERNEL_LL_LAST);
    for &(first, row) in KERNEL_D_ROWS {
        assert_eq!(d[first..first + 8], row, "fixed_d_sym row at {first}");
    }
    assert_eq!(d[24..], KERNEL_D_LAST);
    assert_eq!(ll, kll);
    assert_eq!(d, kd);
    // docs/canned-format.md §1.1 facts.
    assert_eq!(ll[0], 0x40030);
    assert_eq!(d[7], 0x28007);
}

#[test]
fn fixed_header_text_holds_the_kernel_values() {
    let h = kernel_header(&Table::fixed(), &KernelOptions::new("fixed")).unwrap();
    assert!(h.contains("static const u32 fixed_ll_iaa[286] = {\n\t/*   0 */ 0x40030, 0x40031,"));
    assert!(h.contains("\t/* 280 */ 0x400c0, 0x400c1, 0x400c2, 0x400c3, 0x400c4, 0x400c5,\n};"));
    assert!(
        !h.contains("fixed_header"),
        "the fixed code has no header array"
    );
}

/// The kernel's file, rebuilt in its own style (tab indent, upper-case hex,
/// 8 per row), imports to exactly the fixed table.
#[test]
fn the_kernel_fixed_file_imports_to_the_fixed_table() {
    let (ll, d) = kernel_fixed_arrays();
    let rows = |v: &[u32]| {
        v.chunks(8)
            .map(|c| {
                format!(
                    "\t{}",
                    c.iter()
                        .map(|x| format!("0x{x:05X}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join(",\n")
    };
    let text = format!(
        "/*\n * Fixed Huffman tables the IAA hardware requires to implement RFC-1951.\n */\n\
         static const u32 fixed_ll_sym[286] = {{\n{}\n}};\n\n\
         static const u32 fixed_d_sym[30] = {{\n{}\n}};\n\n\
         int iaa_aecs_init_fixed(void)\n{{\n\treturn add_iaa_compression_mode(\"fixed\", \
         fixed_ll_sym, sizeof(fixed_ll_sym), fixed_d_sym, sizeof(fixed_d_sym), NULL, 0, 0, \
         init_fixed_mode, NULL);\n}}\n",
        rows(&ll),
        rows(&d)
    );
    assert!(text
        .contains("\t0x40030, 0x40031, 0x40032, 0x40033, 0x40034, 0x40035, 0x40036, 0x40037,\n"));
    let t = table_from_kernel_header(&text).unwrap();
    assert_eq!(t, Table::fixed());
    assert!(t.is_fixed_code());
    assert_eq!(t.name.as_deref(), Some("fixed"));
}
