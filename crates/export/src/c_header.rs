//! The C header for the Linux `iaa_crypto` driver (docs/canned-format.md §1–§2).
//!
//! For a table and a NAME it writes, in this order: a provenance comment;
//! `static const u32 NAME_ll_iaa[286]` and `NAME_d_iaa[30]` with entries
//! `(length << 15) | canonical code` (bits 18:15 length, 14:0 code, not
//! bit-reversed, 0 = no code); the implied dynamic block header as
//! `static const u8 NAME_header[]` with `NAME_HEADER_SIZE_IN_BITS` and
//! `NAME_GEN_DECOMP_TABLE_FLAGS` (upper-case NAME) — the table's byte-aligned
//! header (0 bits to ignore), or, where no encoding of its lengths is a whole
//! number of bytes, the exact-bit one, which the comment then says;
//! `_Static_assert` guards;
//! and `iaa_aecs_init_NAME()` / `iaa_aecs_cleanup_NAME()` for one [`Api`].
//!
//! The RFC 1951 fixed code gets no header array: a fixed block's header is
//! three bits the kernel's fixed mode writes through the compress AECS output
//! accumulator (`init_fixed_mode()`), and its streams need no decompressor
//! programming. Its arrays equal the kernel's `fixed_ll_sym`/`fixed_d_sym`.
//!
//! Tables that break an IAA rule ([`Table::check_iaa`]) are refused. This
//! module does not read headers back ([`crate::import`] does).

use std::fmt;
use std::str::FromStr;

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN};
use cannery_codec::Table;

use crate::comment::{block, code_summary_lines, provenance_lines};
use crate::error::ExportError;
use crate::hexfmt::rows;

/// Which `add_iaa_compression_mode()` the registration function calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Api {
    /// Current mainline: 7 arguments `(name, ll, ll_size, d, d_size, init,
    /// free)`. Mainline cannot take a header, so IAA cannot be programmed to
    /// decompress the mode's pages; the header is informational there.
    Mainline,
    /// The 10-argument form of the 2023/2024 canned patches: `(name, ll,
    /// ll_size, d, d_size, header, header_size, gen_decomp_table_flags, init,
    /// free)`. The only form in which a canned mode works end to end.
    #[default]
    HeaderTable,
    /// The zswap-batching-era driver, where `add_iaa_compression_mode()` is
    /// no longer exported: a static mode descriptor plus init/cleanup
    /// functions to be linked into `iaa_crypto` itself (7-argument call).
    Builtin,
}

impl Api {
    /// All forms, in CLI order.
    pub const ALL: [Api; 3] = [Api::Mainline, Api::HeaderTable, Api::Builtin];

    /// CLI name: `mainline`, `header-table` or `builtin`.
    pub fn name(self) -> &'static str {
        match self {
            Api::Mainline => "mainline",
            Api::HeaderTable => "header-table",
            Api::Builtin => "builtin",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Api {
    type Err = String;
    fn from_str(s: &str) -> Result<Api, String> {
        Api::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| {
            format!("unknown api {s:?} (expected mainline, header-table or builtin)")
        })
    }
}

/// What to call things and which registration form to emit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelOptions {
    /// Prefix of every C identifier and the mode's name in the driver.
    pub name: String,
    /// Registration form.
    pub api: Api,
    /// Generator named in the comment block (default `cannery <version>`).
    pub generator: String,
}

impl KernelOptions {
    /// Options for `name` with the default [`Api`] and generator.
    pub fn new(name: impl Into<String>) -> KernelOptions {
        KernelOptions {
            name: name.into(),
            api: Api::default(),
            generator: crate::default_generator(),
        }
    }

    /// The same options with another registration form.
    pub fn with_api(mut self, api: Api) -> KernelOptions {
        self.api = api;
        self
    }

    /// The same options with another generator string.
    pub fn with_generator(mut self, generator: impl Into<String>) -> KernelOptions {
        self.generator = generator.into();
        self
    }
}

/// C11 keywords (and the GNU spellings a kernel build knows), which cannot be names.
const C_KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "asm",
    "typeof",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
];

/// `Ok` if `name` can prefix C identifiers: ASCII letters, digits and `_`,
/// not starting with a digit, not a keyword, not reserved (`_` + upper case
/// or `__`), at most 48 characters.
pub fn validate_c_identifier(name: &str) -> Result<(), ExportError> {
    let bad = |reason| {
        Err(ExportError::InvalidName {
            name: name.into(),
            reason,
        })
    };
    let Some(first) = name.chars().next() else {
        return bad("it is empty");
    };
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return bad("only ASCII letters, digits and '_' are allowed");
    }
    if first.is_ascii_digit() {
        return bad("it starts with a digit");
    }
    if name.starts_with("__")
        || (first == '_' && name[1..].starts_with(|c: char| c.is_ascii_uppercase()))
    {
        return bad("names starting with '__' or '_' and an upper-case letter are reserved");
    }
    if C_KEYWORDS.contains(&name) {
        return bad("it is a C keyword");
    }
    if name.len() > 48 {
        return bad("it is longer than 48 characters");
    }
    Ok(())
}

/// The kernel's `ll_sym[286]` and `d_sym[30]` values for `table`:
/// `(length << 15) | canonical code`, 0 for uncoded symbols.
pub fn kernel_entries(table: &Table) -> ([u32; NUM_LITLEN], [u32; NUM_DIST]) {
    let l = table.lengths();
    let mut ll = [0u32; NUM_LITLEN];
    let mut d = [0u32; NUM_DIST];
    for (s, e) in ll.iter_mut().enumerate() {
        if l.litlen[s] > 0 {
            *e = (l.litlen[s] as u32) << 15 | table.litlen_codes()[s] as u32;
        }
    }
    for (s, e) in d.iter_mut().enumerate() {
        if l.dist[s] > 0 {
            *e = (l.dist[s] as u32) << 15 | table.dist_codes()[s] as u32;
        }
    }
    (ll, d)
}

/// What a user must know about exporting `table` for `api`, if anything:
/// mainline `add_iaa_compression_mode()` takes no header, so IAA cannot be
/// programmed to decompress a canned mode's pages.
pub fn api_note(table: &Table, api: Api) -> Option<&'static str> {
    (api == Api::Mainline && !table.is_fixed_code()).then_some(
        "mainline add_iaa_compression_mode() takes no header, so IAA cannot be programmed to \
         decompress this mode's pages; the header in the file is informational (use --api \
         header-table for the canned patches)",
    )
}

/// The header text for `table` (see the module documentation).
pub fn kernel_header(table: &Table, opts: &KernelOptions) -> Result<String, ExportError> {
    validate_c_identifier(&opts.name)?;
    table.check_iaa().map_err(|rule| ExportError::NotIaaSafe {
        id: table.id(),
        rule,
    })?;
    let n = opts.name.as_str();
    let up = n.to_ascii_uppercase();
    let fixed = table.is_fixed_code();
    let hdr = table.header();
    let (ll, d) = kernel_entries(table);
    let mut s = String::with_capacity(16 * 1024);

    // Provenance and format.
    let mut lines = vec![format!(
        "IAA canned Huffman table \"{n}\" for the Linux iaa_crypto driver."
    )];
    lines.push(String::new());
    lines.extend(provenance_lines(
        table,
        &opts.generator,
        &format!("cannery export kernel --name {n} --api {}", opts.api),
    ));
    lines.push(String::new());
    lines.extend(code_summary_lines(table));
    if fixed {
        lines
            .push("No header array: a fixed block's header is 3 bits (BFINAL=1, BTYPE=01).".into());
    } else {
        lines.push(format!(
            "Implied header: {} bits in {} bytes; BFINAL=1, BTYPE=2, literal/length and",
            hdr.bits,
            hdr.bytes.len()
        ));
        lines.push("distance lengths run-length coded separately (no repeat crosses them).".into());
        if hdr.is_byte_aligned() {
            lines.push(
                "Byte-aligned (no bits to ignore): header bytes followed by a canned page's".into(),
            );
            lines.push("bytes are a raw deflate stream as they are.".into());
        } else {
            lines.push(
                "NOT byte-aligned (no aligned encoding of these lengths was found, or the table"
                    .into(),
            );
            lines.push(format!(
                "asked for the exact-bit form): its last {} bit(s) are padding to ignore, and a",
                hdr.pad_bits()
            ));
            lines.push("canned page must be shifted to follow the header's last bit.".into());
        }
    }
    lines.push(String::new());
    lines.push(format!(
        "{n}_ll_iaa[] / {n}_d_iaa[] entries: bits 18:15 code length, bits 14:0 the"
    ));
    lines.push("canonical code (RFC 1951 3.2.2), not bit-reversed; 0 = symbol has no code.".into());
    lines.push(
        "Include after \"iaa_crypto.h\" (u8/u16/u32, add_iaa_compression_mode()), from one".into(),
    );
    lines.push(format!(
        ".c file only: it defines iaa_aecs_init_{n}() and iaa_aecs_cleanup_{n}()."
    ));
    s.push_str(&block(&lines));
    s.push_str(&format!(
        "\n#ifndef CANNERY_IAA_{up}_H\n#define CANNERY_IAA_{up}_H\n\n"
    ));
    s.push_str(&format!("#define {up}_MODE_NAME \"{n}\"\n"));
    s.push_str(&format!("#define {up}_TABLE_ID \"{}\"\n\n", table.id()));

    // Arrays.
    let ll64: Vec<u64> = ll.iter().map(|&v| v as u64).collect();
    let d64: Vec<u64> = d.iter().map(|&v| v as u64).collect();
    s.push_str(&format!("static const u32 {n}_ll_iaa[{NUM_LITLEN}] = {{\n"));
    rows(&mut s, &ll64, 5, 8, Some(3));
    s.push_str("};\n\n");
    s.push_str(&format!("static const u32 {n}_d_iaa[{NUM_DIST}] = {{\n"));
    rows(&mut s, &d64, 5, 8, Some(3));
    s.push_str("};\n\n");

    if !fixed {
        let pad = if hdr.is_byte_aligned() {
            "no pad bits: gen_decomp_table_flags bits 8:6 are 0); prepended to a".to_string()
        } else {
            format!(
                "{} pad bits ignored through gen_decomp_table_flags bits 8:6); prepended to a",
                hdr.pad_bits()
            )
        };
        s.push_str(&block(&[
            "The implied dynamic block header. The 10-argument driver programs IAA's".into(),
            "decompressor with it (one decompress descriptor, output suppressed,".into(),
            pad,
            "canned page at bit granularity it makes a standard raw deflate stream.".into(),
        ]));
        s.push_str(&format!("#define {up}_HEADER_SIZE_IN_BITS {}\n", hdr.bits));
        s.push_str(&format!(
            "#define {up}_GEN_DECOMP_TABLE_FLAGS 0x{:04x} /* 0x1 | 1 << 9 | {} << 6 */\n",
            hdr.gen_decomp_table_flags(),
            hdr.pad_bits()
        ));
        s.push_str(&format!(
            "static const u8 {n}_header[{}] = {{\n",
            hdr.bytes.len()
        ));
        let b64: Vec<u64> = hdr.bytes.iter().map(|&v| v as u64).collect();
        rows(&mut s, &b64, 2, 12, None);
        s.push_str("};\n\n");
    }

    // Guards.
    s.push_str("_Static_assert(sizeof(u8) == 1 && sizeof(u16) == 2 && sizeof(u32) == 4,\n");
    s.push_str(&format!(
        "\t       \"{n}: u8/u16/u32 must be 1, 2 and 4 bytes\");\n"
    ));
    s.push_str(&format!(
        "_Static_assert(sizeof({n}_ll_iaa) == {NUM_LITLEN} * 4, \"{n}_ll_iaa must fill the AECS ll_sym[{NUM_LITLEN}]\");\n"
    ));
    s.push_str(&format!(
        "_Static_assert(sizeof({n}_d_iaa) == {NUM_DIST} * 4, \"{n}_d_iaa must fill the AECS d_sym[{NUM_DIST}]\");\n"
    ));
    if !fixed {
        s.push_str(&format!(
            "_Static_assert(sizeof({n}_header) == ({up}_HEADER_SIZE_IN_BITS + 7) / 8,\n\t       \"{n}_header must hold exactly {up}_HEADER_SIZE_IN_BITS bits\");\n"
        ));
        s.push_str(&format!(
            "_Static_assert({up}_GEN_DECOMP_TABLE_FLAGS ==\n\t       (0x1 | 1 << 9 | (sizeof({n}_header) * 8 - {up}_HEADER_SIZE_IN_BITS) << 6),\n\t       \"{up}_GEN_DECOMP_TABLE_FLAGS must ignore exactly the header's pad bits\");\n"
        ));
    }
    s.push('\n');

    // Registration.
    s.push_str(&registration(opts, fixed));
    s.push_str(&format!("\n#endif /* CANNERY_IAA_{up}_H */\n"));
    Ok(s)
}

/// The registration part for `opts.api`.
fn registration(opts: &KernelOptions, fixed: bool) -> String {
    let n = opts.name.as_str();
    let up = n.to_ascii_uppercase();
    let mut s = String::new();
    let mut intro: Vec<String> = match opts.api {
        Api::Mainline if fixed => vec![
            "Registration for mainline iaa_crypto: add_iaa_compression_mode() with 7".into(),
            "arguments (since \"crypto: iaa - Remove header table code\", Jan 2024).".into(),
            "Call iaa_aecs_init_{n}() before any IAA device is probed (the driver".into(),
            "returns -EBUSY otherwise).".into(),
        ],
        Api::Mainline => vec![
            "Registration for mainline iaa_crypto: add_iaa_compression_mode() with 7".into(),
            "arguments (since \"crypto: iaa - Remove header table code\", Jan 2024).".into(),
            "Mainline has no way to pass a header, so it cannot program IAA to".into(),
            "decompress this mode's header-less pages: the header above is".into(),
            "informational here. Call iaa_aecs_init_{n}() before any IAA device is".into(),
            "probed (the driver returns -EBUSY otherwise).".into(),
        ],
        Api::HeaderTable if fixed => vec![
            "Registration for the iaa_crypto of the canned patch series (\"crypto: Add".into(),
            "new compression modes for zlib and IAA\", 2024): add_iaa_compression_mode()".into(),
            "with 10 arguments; the fixed code passes no header (NULL, 0, 0), as the".into(),
            "kernel's fixed mode does. Call iaa_aecs_init_{n}() before any IAA device".into(),
            "is probed.".into(),
        ],
        Api::HeaderTable => vec![
            "Registration for the iaa_crypto of the canned patch series (\"crypto: Add".into(),
            "new compression modes for zlib and IAA\", 2024): add_iaa_compression_mode()".into(),
            "with 10 arguments, passing the header and gen_decomp_table_flags. Call".into(),
            "iaa_aecs_init_{n}() before any IAA device is probed.".into(),
        ],
        Api::Builtin => vec![
            "Built-in mode for the zswap-batching-era iaa_crypto, where".into(),
            "add_iaa_compression_mode() is no longer exported: put this file in".into(),
            "drivers/crypto/intel/iaa/ (included from a new iaa_crypto_comp_{n}.c), add".into(),
            "the two prototypes below to iaa_crypto.h, call iaa_aecs_init_{n}() from".into(),
            "the module init next to iaa_aecs_init_fixed() and iaa_aecs_cleanup_{n}()".into(),
            "from the module exit. The descriptor keeps the header for drivers that".into(),
            "carry the canned patches' header support; the 7-argument call of that".into(),
            "driver does not take it.".into(),
        ],
    };
    for l in &mut intro {
        *l = l.replace("{n}", n);
    }
    intro.push(String::new());
    intro.push(format!(
        "init/free callbacks default to NULL; define {up}_INIT_FN / {up}_FREE_FN"
    ));
    intro.push("before including this file to pass others.".into());
    if fixed {
        intro.push("The kernel's own fixed mode passes init_fixed_mode(), which writes".into());
        intro.push("BFINAL=1, BTYPE=01 into the compress AECS output accumulator so that".into());
        intro.push("its output is standard deflate.".into());
    }
    s.push_str(&block(&intro));
    s.push_str(&format!(
        "#ifndef {up}_INIT_FN\n#define {up}_INIT_FN NULL\n#endif\n#ifndef {up}_FREE_FN\n#define {up}_FREE_FN NULL\n#endif\n\n"
    ));
    s.push_str(&format!(
        "int iaa_aecs_init_{n}(void);\nvoid iaa_aecs_cleanup_{n}(void);\n\n"
    ));
    let (hdr, hdr_size, flags) = if fixed {
        ("NULL".to_string(), "0".to_string(), "0".to_string())
    } else {
        (
            format!("{n}_header"),
            format!("sizeof({n}_header)"),
            format!("{up}_GEN_DECOMP_TABLE_FLAGS"),
        )
    };
    match opts.api {
        Api::Mainline | Api::HeaderTable => {
            let header_args = if opts.api == Api::HeaderTable {
                format!("\t\t\t\t\t{hdr}, {hdr_size},\n\t\t\t\t\t{flags},\n")
            } else {
                String::new()
            };
            s.push_str(&format!(
                "int iaa_aecs_init_{n}(void)\n{{\n\treturn add_iaa_compression_mode({up}_MODE_NAME,\n\t\t\t\t\t{n}_ll_iaa, sizeof({n}_ll_iaa),\n\t\t\t\t\t{n}_d_iaa, sizeof({n}_d_iaa),\n{header_args}\t\t\t\t\t{up}_INIT_FN, {up}_FREE_FN);\n}}\n\n"
            ));
        }
        Api::Builtin => {
            s.push_str(&format!(
                "static const struct {n}_iaa_mode {{\n\tconst char *name;\n\tconst u32 *ll_table;\n\tint ll_table_size;\n\tconst u32 *d_table;\n\tint d_table_size;\n\tconst u8 *header_table;\n\tint header_table_size;\n\tu16 gen_decomp_table_flags;\n}} {n}_iaa_mode = {{\n\t.name = {up}_MODE_NAME,\n\t.ll_table = {n}_ll_iaa,\n\t.ll_table_size = sizeof({n}_ll_iaa),\n\t.d_table = {n}_d_iaa,\n\t.d_table_size = sizeof({n}_d_iaa),\n\t.header_table = {hdr},\n\t.header_table_size = {hdr_size},\n\t.gen_decomp_table_flags = {flags},\n}};\n\n"
            ));
            s.push_str(&format!(
                "int iaa_aecs_init_{n}(void)\n{{\n\treturn add_iaa_compression_mode({n}_iaa_mode.name,\n\t\t\t\t\t{n}_iaa_mode.ll_table, {n}_iaa_mode.ll_table_size,\n\t\t\t\t\t{n}_iaa_mode.d_table, {n}_iaa_mode.d_table_size,\n\t\t\t\t\t{up}_INIT_FN, {up}_FREE_FN);\n}}\n\n"
            ));
        }
    }
    s.push_str(&format!(
        "void iaa_aecs_cleanup_{n}(void)\n{{\n\tremove_iaa_compression_mode({up}_MODE_NAME);\n}}\n"
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::table::{HeaderForm, IaaRule};

    #[test]
    fn names_are_checked() {
        for ok in ["canned", "py_2024", "_x", "A1"] {
            assert_eq!(validate_c_identifier(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "it is empty"),
            ("9lives", "it starts with a digit"),
            ("my-table", "only ASCII letters, digits and '_' are allowed"),
            ("café", "only ASCII letters, digits and '_' are allowed"),
            ("static", "it is a C keyword"),
            (
                "__x",
                "names starting with '__' or '_' and an upper-case letter are reserved",
            ),
            (
                "_X",
                "names starting with '__' or '_' and an upper-case letter are reserved",
            ),
        ] {
            assert_eq!(
                validate_c_identifier(bad),
                Err(ExportError::InvalidName {
                    name: bad.into(),
                    reason: why
                }),
                "{bad}"
            );
        }
        let e = validate_c_identifier("my-table").unwrap_err().to_string();
        assert_eq!(
            e,
            "\"my-table\" is not a valid C identifier: only ASCII letters, digits and '_' are allowed"
        );
    }

    #[test]
    fn entries_pack_length_and_unreversed_code() {
        let (ll, d) = kernel_entries(&Table::kernel_2024());
        // docs/canned-format.md §2.2: EOB is 10 bits 0x3fe, literal 0 is 5 bits 0x2,
        // symbol 257 is 4 bits 0x0; distance 24..29 uncoded.
        assert_eq!(ll[256], 10 << 15 | 0x3fe);
        assert_eq!(ll[0], 0x28002);
        assert_eq!(ll[257], 0x20000);
        assert_eq!(ll[285], 0x73ffa);
        assert_eq!(d[0], 0x3807e);
        assert!(d[24..].iter().all(|&v| v == 0));
    }

    #[test]
    fn refuses_tables_iaa_cannot_use() {
        let (mut ll, d) = cannery_codec::table::builtin::kernel_2024_lengths();
        ll[285] = 0;
        let t = Table::from_lengths(&ll, &d).unwrap();
        let e = kernel_header(&t, &KernelOptions::new("x")).unwrap_err();
        assert_eq!(
            e,
            ExportError::NotIaaSafe {
                id: t.id(),
                rule: IaaRule::UncodedLitLen { symbol: 285 }
            }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "table {} cannot be used by IAA: literal/length symbol 285 has no code; IAA needs all of 0..=285 coded",
                t.id()
            )
        );
    }

    #[test]
    fn header_is_aligned_or_says_it_is_not() {
        let aligned = Table::kernel_2024();
        let h = kernel_header(&aligned, &KernelOptions::new("k")).unwrap();
        assert!(h.contains("#define K_HEADER_SIZE_IN_BITS 616\n"));
        assert!(h.contains("#define K_GEN_DECOMP_TABLE_FLAGS 0x0201 /* 0x1 | 1 << 9 | 0 << 6 */"));
        assert!(h.contains("Byte-aligned (no bits to ignore)"));
        assert!(!h.contains("NOT byte-aligned"));
        // A table carrying the exact-bit header keeps it, with its pad bits,
        // and the comment says so; it imports back to the same table.
        let (ll, d) = cannery_codec::table::builtin::kernel_2024_lengths();
        let exact = Table::from_lengths_with_header(&ll, &d, HeaderForm::Shortest).unwrap();
        let h = kernel_header(&exact, &KernelOptions::new("k")).unwrap();
        assert!(h.contains("#define K_HEADER_SIZE_IN_BITS 613\n"));
        assert!(h.contains("#define K_GEN_DECOMP_TABLE_FLAGS 0x02c1 /* 0x1 | 1 << 9 | 3 << 6 */"));
        assert!(h.contains("NOT byte-aligned"));
        assert!(h.contains("its last 3 bit(s) are padding to ignore"));
        assert_eq!(crate::table_from_kernel_header(&h).unwrap(), aligned);
    }

    #[test]
    fn api_names_round_trip() {
        for a in Api::ALL {
            assert_eq!(a.name().parse::<Api>(), Ok(a));
        }
        assert!("7arg".parse::<Api>().is_err());
    }
}
