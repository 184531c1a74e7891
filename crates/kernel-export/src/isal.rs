//! An ISA-L `struct isal_hufftables` initializer (C source) for a table,
//! for an igzip built with `IGZIP_HIST_SIZE=4096` and without
//! `LONGER_HUFFTABLE` (canned-format.md §4.2).
//!
//! Field encodings, from ISA-L `include/igzip_lib.h` and `igzip/huff_codes.c`
//! (read, not copied; this is an independent generator):
//! - `deflate_hdr[328]`: the block header (BFINAL=1), zero-filled;
//!   `deflate_hdr_count` whole bytes plus `deflate_hdr_extra_bits` bits. A
//!   dynamic table uses the table's implied header; the fixed code uses the
//!   3-bit static header `0x03` (count 0, 3 extra bits).
//! - `dist_table[IGZIP_DIST_TABLE_SIZE = 2]`: distances 1 and 2;
//!   `len_table[256]`: match lengths 3..=258 (index length − 3). Each u32 is
//!   `(extra value << (code length + 5)) | (reversed code << 5) | (code length
//!   + extra bit count)`.
//! - `lit_table[257]` / `lit_table_sizes[257]`: reversed codes and lengths
//!   of literals 0..=255 and end-of-block.
//! - `dcodes[30]` / `dcodes_sizes[30]` (`IGZIP_DECODE_OFFSET = 0`): reversed
//!   distance codes and lengths.
//!
//! `IGZIP_HIST_SIZE` does not change any size without `LONGER_HUFFTABLE`; the
//! guard exists because a 4 KiB table may leave distance symbols 24..=29
//! uncoded, which a larger window would need. Refused: every table but the
//! fixed code that breaks [`Rule::IsalStock`] (an uncoded symbol igzip may
//! need, an incomplete code, or igzip's 56-bit budget), since igzip would
//! write corrupt streams with it.

use cannery_codec::constants::NUM_DIST;
use cannery_codec::token::{DIST_BASE, DIST_EXTRA, LENGTH_BASE, LENGTH_EXTRA};
use cannery_codec::Table;

use crate::c_header::validate_c_identifier;
use crate::comment::{block, code_summary_lines, provenance_lines};
use crate::error::ExportError;
use crate::hexfmt::rows;
use cannery_codec::table::rules::Rule;

/// `ISAL_DEF_MAX_HDR_SIZE`.
pub const MAX_HDR_SIZE: usize = 328;
/// `IGZIP_DIST_TABLE_SIZE` without `LONGER_HUFFTABLE`.
pub const DIST_TABLE_SIZE: usize = 2;
/// `IGZIP_LEN_TABLE_SIZE`.
pub const LEN_TABLE_SIZE: usize = 256;
/// `IGZIP_LIT_TABLE_SIZE` (literals and end-of-block).
pub const LIT_TABLE_SIZE: usize = 257;
/// Entries of `dcodes` (`30 - IGZIP_DECODE_OFFSET`).
pub const DCODES_SIZE: usize = NUM_DIST;
/// `LENGTH_BITS`: the code-length field of packed entries.
const LENGTH_BITS: u32 = 5;

/// The field values of `struct isal_hufftables`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsalTables {
    /// `deflate_hdr[..]`: the header bytes (the rest of the 328 are zero).
    pub deflate_hdr: Vec<u8>,
    /// `deflate_hdr_count`: whole header bytes.
    pub deflate_hdr_count: u32,
    /// `deflate_hdr_extra_bits`: header bits in the partial last byte.
    pub deflate_hdr_extra_bits: u32,
    /// `dist_table[2]`.
    pub dist_table: [u32; DIST_TABLE_SIZE],
    /// `len_table[256]`.
    pub len_table: [u32; LEN_TABLE_SIZE],
    /// `lit_table[257]`.
    pub lit_table: [u16; LIT_TABLE_SIZE],
    /// `lit_table_sizes[257]`.
    pub lit_table_sizes: [u8; LIT_TABLE_SIZE],
    /// `dcodes[30]`.
    pub dcodes: [u16; DCODES_SIZE],
    /// `dcodes_sizes[30]`.
    pub dcodes_sizes: [u8; DCODES_SIZE],
}

/// One packed entry: `(extra << (len + 5)) | (rev_code << 5) | (len + extra_bits)`.
fn packed(rev_code: u16, len: u8, extra_bits: u8, extra: u32) -> u32 {
    (extra << (len as u32 + LENGTH_BITS))
        | (rev_code as u32) << LENGTH_BITS
        | (len + extra_bits) as u32
}

impl IsalTables {
    /// The fields for `table`, or why igzip cannot use it.
    pub fn new(table: &Table) -> Result<IsalTables, ExportError> {
        if !table.is_fixed_code() {
            Rule::IsalStock
                .check(table)
                .map_err(|reason| ExportError::BreaksRule {
                    id: table.id(),
                    consumer: "ISA-L",
                    rule: Rule::IsalStock,
                    reason,
                })?;
        }
        let (deflate_hdr, bits) = if table.is_fixed_code() {
            (vec![0x03], 3)
        } else {
            (table.header().bytes.clone(), table.header().bits)
        };
        if deflate_hdr.len() > MAX_HDR_SIZE {
            return Err(ExportError::IsalHeaderTooLong {
                bytes: deflate_hdr.len(),
            });
        }
        let l = table.lengths();
        let ll_rev = table.litlen_codes_reversed();
        let d_rev = table.dist_codes_reversed();

        let mut len_table = [0u32; LEN_TABLE_SIZE];
        for (i, e) in len_table.iter_mut().enumerate() {
            let length = i + 3;
            // Length 258 has its own symbol (285) with no extra bits.
            let idx = if length == 258 {
                28
            } else {
                (0..28)
                    .rev()
                    .find(|&k| LENGTH_BASE[k] as usize <= length)
                    .expect("length ≥ 3")
            };
            let extra_bits = if idx == 28 { 0 } else { LENGTH_EXTRA[idx] };
            let extra = (length - LENGTH_BASE[idx] as usize) as u32;
            *e = packed(ll_rev[257 + idx], l.litlen[257 + idx], extra_bits, extra);
        }
        let mut dist_table = [0u32; DIST_TABLE_SIZE];
        for (i, e) in dist_table.iter_mut().enumerate() {
            let distance = i + 1;
            let sym = (0..NUM_DIST)
                .rev()
                .find(|&k| DIST_BASE[k] as usize <= distance)
                .expect("distance ≥ 1");
            let extra = (distance - DIST_BASE[sym] as usize) as u32;
            *e = packed(d_rev[sym], l.dist[sym], DIST_EXTRA[sym], extra);
        }
        let mut lit_table = [0u16; LIT_TABLE_SIZE];
        let mut lit_table_sizes = [0u8; LIT_TABLE_SIZE];
        lit_table.copy_from_slice(&ll_rev[..LIT_TABLE_SIZE]);
        lit_table_sizes.copy_from_slice(&l.litlen[..LIT_TABLE_SIZE]);
        Ok(IsalTables {
            deflate_hdr_count: (bits / 8) as u32,
            deflate_hdr_extra_bits: (bits % 8) as u32,
            deflate_hdr,
            dist_table,
            len_table,
            lit_table,
            lit_table_sizes,
            dcodes: *d_rev,
            dcodes_sizes: l.dist,
        })
    }
}

/// The C source defining `struct isal_hufftables NAME` for `table`.
pub fn hufftables_c(table: &Table, name: &str, generator: &str) -> Result<String, ExportError> {
    validate_c_identifier(name)?;
    let t = IsalTables::new(table)?;
    let mut lines = vec![
        format!("ISA-L igzip Huffman tables \"{name}\" (struct isal_hufftables)."),
        String::new(),
    ];
    lines.extend(provenance_lines(
        table,
        generator,
        &format!("cannery export isal --name {name}"),
    ));
    lines.push(String::new());
    lines.extend(code_summary_lines(table));
    lines.push(format!(
        "Header: {} whole bytes + {} bits (BFINAL=1).",
        t.deflate_hdr_count, t.deflate_hdr_extra_bits
    ));
    lines.push(String::new());
    lines.push("Build igzip with IGZIP_HIST_SIZE=4096 and without LONGER_HUFFTABLE, and".into());
    lines.push(format!(
        "select the tables with isal_deflate_set_hufftables(stream, &{name},"
    ));
    lines.push("IGZIP_HUFFTABLE_CUSTOM).".into());
    let mut s = block(&lines);
    s.push_str("\n#include <stdint.h>\n#include <igzip_lib.h>\n\n");
    s.push_str("#if IGZIP_HIST_SIZE != 4096\n#error \"these tables are for igzip built with IGZIP_HIST_SIZE=4096\"\n#endif\n");
    s.push_str("#ifdef LONGER_HUFFTABLE\n#error \"these tables are for igzip built without LONGER_HUFFTABLE\"\n#endif\n\n");
    s.push_str(&format!("extern struct isal_hufftables {name};\n\n"));
    s.push_str(&format!("struct isal_hufftables {name} = {{\n"));
    let field = |s: &mut String, f: &str, vals: Vec<u64>, digits: usize, per_row: usize| {
        s.push_str(&format!("\t.{f} = {{\n"));
        let mut body = String::new();
        rows(&mut body, &vals, digits, per_row, Some(3));
        for line in body.lines() {
            s.push('\t');
            s.push_str(line);
            s.push('\n');
        }
        s.push_str("\t},\n");
    };
    let u = |v: &[u8]| v.iter().map(|&x| x as u64).collect::<Vec<_>>();
    field(&mut s, "deflate_hdr", u(&t.deflate_hdr), 2, 12);
    s.push_str(&format!(
        "\t.deflate_hdr_count = {},\n",
        t.deflate_hdr_count
    ));
    s.push_str(&format!(
        "\t.deflate_hdr_extra_bits = {},\n",
        t.deflate_hdr_extra_bits
    ));
    field(
        &mut s,
        "dist_table",
        t.dist_table.iter().map(|&x| x as u64).collect(),
        8,
        6,
    );
    field(
        &mut s,
        "len_table",
        t.len_table.iter().map(|&x| x as u64).collect(),
        8,
        6,
    );
    field(
        &mut s,
        "lit_table",
        t.lit_table.iter().map(|&x| x as u64).collect(),
        4,
        8,
    );
    field(&mut s, "lit_table_sizes", u(&t.lit_table_sizes), 2, 12);
    field(
        &mut s,
        "dcodes",
        t.dcodes.iter().map(|&x| x as u64).collect(),
        4,
        8,
    );
    field(&mut s, "dcodes_sizes", u(&t.dcodes_sizes), 2, 12);
    s.push_str("};\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of ISA-L's own `hufftables_static` (the RFC 1951 fixed code),
    /// from intel/isa-l `igzip/hufftables_c.c` @8b7e3b2 (the
    /// `#ifndef LONGER_HUFFTABLE` variant): our generator must agree.
    #[test]
    fn fixed_code_matches_isal_hufftables_static() {
        let t = IsalTables::new(&Table::fixed()).unwrap();
        assert_eq!(t.deflate_hdr, vec![0x03]);
        assert_eq!((t.deflate_hdr_count, t.deflate_hdr_extra_bits), (0, 3));
        assert_eq!(t.dist_table, [0x00000005, 0x00000205]);
        assert_eq!(
            t.len_table[..20],
            [
                0x00000807, 0x00000407, 0x00000c07, 0x00000207, 0x00000a07, 0x00000607, 0x00000e07,
                0x00000107, 0x00000908, 0x00001908, 0x00000508, 0x00001508, 0x00000d08, 0x00001d08,
                0x00000308, 0x00001308, 0x00000b09, 0x00001b09, 0x00002b09, 0x00003b09
            ]
        );
        assert_eq!(
            t.lit_table[..8],
            [0x000c, 0x008c, 0x004c, 0x00cc, 0x002c, 0x00ac, 0x006c, 0x00ec]
        );
        assert_eq!(
            t.lit_table[16..24],
            [0x0002, 0x0082, 0x0042, 0x00c2, 0x0022, 0x00a2, 0x0062, 0x00e2]
        );
        assert!(t.lit_table_sizes[..144].iter().all(|&x| x == 8));
        assert_eq!(
            t.dcodes,
            [
                0x0000, 0x0010, 0x0008, 0x0018, 0x0004, 0x0014, 0x000c, 0x001c, 0x0002, 0x0012,
                0x000a, 0x001a, 0x0006, 0x0016, 0x000e, 0x001e, 0x0001, 0x0011, 0x0009, 0x0019,
                0x0005, 0x0015, 0x000d, 0x001d, 0x0003, 0x0013, 0x000b, 0x001b, 0x0007, 0x0017
            ]
        );
        assert!(t.dcodes_sizes.iter().all(|&x| x == 5));
    }

    #[test]
    fn len_table_covers_3_to_258_with_extra_bits() {
        let table = Table::kernel_2024();
        let t = IsalTables::new(&table).unwrap();
        let l = table.lengths();
        let rev = table.litlen_codes_reversed();
        // Length 258: symbol 285, no extra bits.
        assert_eq!(
            t.len_table[255],
            (rev[285] as u32) << 5 | l.litlen[285] as u32
        );
        // Length 257: symbol 284 (base 227, 5 extra bits), extra value 30.
        let len = l.litlen[284] as u32;
        assert_eq!(
            t.len_table[254],
            30 << (len + 5) | (rev[284] as u32) << 5 | (len + 5)
        );
        // Header of a dynamic table: its implied header, bit-exact.
        let h = table.header();
        assert_eq!(t.deflate_hdr, h.bytes);
        assert_eq!(
            t.deflate_hdr_count as usize * 8 + t.deflate_hdr_extra_bits as usize,
            h.bits
        );
    }
}
