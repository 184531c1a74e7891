//! An ISA-L `struct isal_hufftables` initializer (C source) for a table,
//! for ISA-L as distributions build and install it: the stock layout
//! (`LONGER_HUFFTABLE` off), any history size (the default 32 KiB), headers
//! at `<isa-l/igzip_lib.h>` or `<igzip_lib.h>` (docs/canned-format.md §4.2).
//!
//! Use: `isal_deflate_set_hufftables(stream, &NAME, IGZIP_HUFFTABLE_CUSTOM)`
//! on a level-0 stream (the default level; levels 1-3 build their own code
//! per block and ignore these tables), compile the file with the program and
//! link `-lisal`. No `-D` option is needed; the file refuses to compile
//! (`#error`/`_Static_assert`) against a header whose layout differs.
//!
//! Field encodings, from ISA-L `include/igzip_lib.h`, `igzip/huffman.h` and
//! `igzip/huff_codes.c` (read, not copied; this is an independent generator):
//! - `deflate_hdr[328]`: the block header (BFINAL=1), zero-filled;
//!   `deflate_hdr_count` whole bytes plus `deflate_hdr_extra_bits` bits. igzip
//!   writes the partial byte with an OR, so its unused high bits are zero. A
//!   dynamic table uses the table's implied header; the fixed code uses the
//!   3-bit static header `0x03` (count 0, 3 extra bits).
//! - `dist_table[IGZIP_DIST_TABLE_SIZE = 2]`: distances 1 and 2;
//!   `len_table[256]`: match lengths 3..=258 (index length − 3; 258 is symbol
//!   285). Each u32 is `(extra value << (code length + 5)) | (reversed code <<
//!   5) | (code length + extra bit count)`.
//! - `lit_table[257]` / `lit_table_sizes[257]`: reversed codes and lengths
//!   of literals 0..=255 and end-of-block (igzip writes EOB from entry 256).
//! - `dcodes[30]` / `dcodes_sizes[30]` (`IGZIP_DECODE_OFFSET = 0`): reversed
//!   distance codes and lengths, for distances 3..=32768.
//!
//! Refused: every table but the fixed code that breaks
//! [`Rule::IsalStock`]. igzip never checks a custom table; it writes an
//! uncoded symbol as zero bits, and with its 32 KiB window it can emit every
//! literal/length symbol and every distance symbol 0..=29, so all 286 + 30
//! need codes (a 4 KiB IAA table with distance symbols 24..=29 uncoded is
//! refused). Also refused: incomplete codes (inflaters reject the header)
//! and tables over igzip's 56-bit budget. This module does not check the
//! `hist_bits` a program may set on its stream.

use cannery_codec::constants::NUM_DIST;
use cannery_codec::table::header::write_header_as;
use cannery_codec::table::HeaderForm;
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
    /// Bits of the byte-aligned header for the same lengths (not written:
    /// ISA-L carries the extra bits, so the fewest-bits form is; reported
    /// so `export` can say what alignment would have cost).
    pub aligned_header_bits: u32,
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

/// Why stock igzip could write a corrupt or undecodable stream with
/// `table`, or `None`: [`Rule::IsalStock`], except that the fixed code is
/// always fine (igzip sends it as a BTYPE=01 block with its implied
/// symbols 286/287 and 30/31).
pub fn isal_stock_violation(table: &Table) -> Option<String> {
    if table.is_fixed_code() {
        None
    } else {
        Rule::IsalStock.check(table).err()
    }
}

impl IsalTables {
    /// The fields for `table`, or why igzip cannot use it.
    pub fn new(table: &Table) -> Result<IsalTables, ExportError> {
        if let Some(reason) = isal_stock_violation(table) {
            return Err(ExportError::BreaksRule {
                id: table.id(),
                consumer: "ISA-L (stock build, 32 KiB history)",
                rule: Rule::IsalStock,
                reason,
            });
        }
        // igzip writes `deflate_hdr_count` bytes and `deflate_hdr_extra_bits`
        // bits of header before every stream's body: the fewest bits win,
        // whatever the table carries (its default header is byte-aligned,
        // for consumers that need whole bytes).
        let (mut deflate_hdr, bits, aligned_bits) = if table.is_fixed_code() {
            (vec![0x03], 3, 3)
        } else {
            let h = write_header_as(table.lengths(), HeaderForm::Fewest);
            let aligned = write_header_as(table.lengths(), HeaderForm::Aligned).bits;
            (h.bytes, h.bits, aligned)
        };
        if deflate_hdr.len() > MAX_HDR_SIZE {
            return Err(ExportError::IsalHeaderTooLong {
                bytes: deflate_hdr.len(),
            });
        }
        // igzip ORs the partial byte into its bit buffer: bits past the
        // header must be zero.
        if bits % 8 != 0 {
            deflate_hdr[bits / 8] &= (1u8 << (bits % 8)) - 1;
        }
        deflate_hdr.truncate(bits.div_ceil(8));
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
            aligned_header_bits: aligned_bits as u32,
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

impl IsalTables {
    /// Which header form these fields hold and why, for `export isal`.
    pub fn header_form_lines(&self) -> Vec<String> {
        let bits = self.deflate_hdr_count * 8 + self.deflate_hdr_extra_bits;
        if bits == 3 {
            return vec!["Form: the fixed code's 3-bit static-block header.".into()];
        }
        vec![
            format!(
                "Form: the fewest-bits header ({bits} bits), not the byte-aligned one ({} bits):",
                self.aligned_header_bits
            ),
            "igzip writes this header into every stream and carries the".into(),
            "partial byte (deflate_hdr_extra_bits), so aligning it would add".into(),
            match self.aligned_header_bits.saturating_sub(bits) {
                1 => "1 bit to every stream.".to_string(),
                n => format!("{n} bits to every stream."),
            },
        ]
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
    lines.extend(t.header_form_lines());
    lines.push(String::new());
    lines.push("Use with ISA-L as distributions install it (-lisal; headers".into());
    lines.push("<isa-l/igzip_lib.h> or <igzip_lib.h>), any IGZIP_HIST_SIZE (no -D".into());
    lines.push("option needed: every literal/length and distance symbol has a code):".into());
    lines.push(format!(
        "  isal_deflate_set_hufftables(stream, &{name}, IGZIP_HUFFTABLE_CUSTOM);"
    ));
    lines.push("on a level-0 stream (the default; levels 1-3 build their own code),".into());
    lines.push("then isal_deflate_stateless() or isal_deflate(). The guards below".into());
    lines.push("stop the build if the header's struct layout is not the stock one.".into());
    let mut s = block(&lines);
    s.push_str(
        "\n#include <stdint.h>\n\
         #if defined(__has_include)\n\
         #if __has_include(<isa-l/igzip_lib.h>)\n\
         #include <isa-l/igzip_lib.h>\n\
         #else\n\
         #include <igzip_lib.h>\n\
         #endif\n\
         #else\n\
         #include <igzip_lib.h>\n\
         #endif\n\n",
    );
    s.push_str(
        "#ifdef LONGER_HUFFTABLE\n\
         #error \"these tables are for ISA-L's stock struct isal_hufftables (LONGER_HUFFTABLE off)\"\n\
         #endif\n",
    );
    let field_size = |f: &str, n: usize, elem: &str| {
        format!(
            "_Static_assert(sizeof(((struct isal_hufftables *)0)->{f}) == {n} * sizeof({elem}),\n\
             \t       \"struct isal_hufftables.{f} is not {elem}[{n}] (not the stock ISA-L layout)\");\n"
        )
    };
    s.push_str(&field_size("deflate_hdr", MAX_HDR_SIZE, "uint8_t"));
    s.push_str(&field_size("dist_table", DIST_TABLE_SIZE, "uint32_t"));
    s.push_str(&field_size("len_table", LEN_TABLE_SIZE, "uint32_t"));
    s.push_str(&field_size("lit_table", LIT_TABLE_SIZE, "uint16_t"));
    s.push_str(&field_size("lit_table_sizes", LIT_TABLE_SIZE, "uint8_t"));
    s.push_str(&field_size("dcodes", DCODES_SIZE, "uint16_t"));
    s.push_str(&field_size("dcodes_sizes", DCODES_SIZE, "uint8_t"));
    s.push('\n');
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
    use cannery_codec::huffman::limited_code_lengths;
    use cannery_codec::table::rules::BitBudget;

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

    /// kernel-2024's code with every symbol coded: package-merge over counts
    /// 2^(15 - length), and 1 for the uncoded distance symbols 24..=29, with
    /// ISA-L's fallback limits 13 (literal/length) and 12 (distance): with 15
    /// the new 12-bit distance 29 code (13 extra bits) breaks the 56-bit rule.
    fn kernel_2024_all_coded() -> Table {
        let k = Table::kernel_2024();
        let counts = |lens: &[u8]| -> Vec<u64> {
            lens.iter()
                .map(|&l| if l == 0 { 1 } else { 1u64 << (15 - l) })
                .collect()
        };
        let l = k.lengths();
        Table::from_lengths(
            &limited_code_lengths(&counts(&l.litlen), 13),
            &limited_code_lengths(&counts(&l.dist), 12),
        )
        .unwrap()
    }

    #[test]
    fn kernel_2024_is_refused_for_its_uncoded_distance_symbols() {
        let reason = isal_stock_violation(&Table::kernel_2024()).unwrap();
        assert!(
            reason.starts_with("distance symbols 24..=29 have no code"),
            "{reason}"
        );
        let err = IsalTables::new(&Table::kernel_2024()).unwrap_err();
        assert!(matches!(
            err,
            ExportError::BreaksRule {
                rule: Rule::IsalStock,
                ..
            }
        ));
        let msg = err.to_string();
        assert!(msg.contains("stock build, 32 KiB history"), "{msg}");
        assert!(msg.contains("distance symbols 24..=29"), "{msg}");
        assert!(hufftables_c(&Table::kernel_2024(), "k", "test").is_err());
        // Coded, complete and within the bit budget: accepted.
        assert_eq!(isal_stock_violation(&kernel_2024_all_coded()), None);
        assert_eq!(isal_stock_violation(&Table::fixed()), None);
    }

    #[test]
    fn uncoded_literals_incomplete_codes_and_the_bit_budget_are_refused() {
        let f = Table::fixed();
        let mut ll = f.lengths().litlen;
        ll[7] = 0;
        ll[8] = 0;
        ll[9] = 0;
        ll[285] = 0;
        let t = Table::from_lengths(&ll, &[5; 30]).unwrap();
        let r = isal_stock_violation(&t).unwrap();
        assert!(
            r.starts_with("literal/length symbols 7..=9, 285 have no code"),
            "{r}"
        );

        // Every symbol coded but the distance code incomplete (Kraft 30/32).
        let t = Table::from_lengths(&kernel_2024_all_coded().lengths().litlen, &[5; 30]).unwrap();
        let r = isal_stock_violation(&t).unwrap();
        assert!(
            r.contains("distance code is incomplete (Kraft sum 30720/32768)"),
            "{r}"
        );

        // Complete, every symbol coded, but 15 + 20 + 28 bits.
        let t = Table::from_lengths(
            &Table::kernel_2024().lengths().litlen,
            &limited_code_lengths(&(0..30).map(|i| 1u64 << (29 - i)).collect::<Vec<_>>(), 15),
        )
        .unwrap();
        let b = BitBudget::of(t.lengths());
        assert!(!b.fits(), "{b:?}");
        let r = isal_stock_violation(&t).unwrap();
        assert!(r.contains("above the limit of 56"), "{r}");
    }

    #[test]
    fn header_bytes_end_with_zero_padding() {
        let table = kernel_2024_all_coded();
        let t = IsalTables::new(&table).unwrap();
        let bits = table.header().bits;
        assert_eq!(t.deflate_hdr.len(), bits.div_ceil(8));
        if bits % 8 != 0 {
            assert_eq!(t.deflate_hdr[bits / 8] >> (bits % 8), 0);
        }
    }

    #[test]
    fn len_table_covers_3_to_258_with_extra_bits() {
        let table = kernel_2024_all_coded();
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
