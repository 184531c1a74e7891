//! Reads a kernel-style C header back into a [`Table`]: ours (from
//! [`crate::c_header`]) or the arrays of the kernel patches
//! (`canned_ll_iaa[]`, `canned_d_iaa[]`, `canned_header[]`,
//! `HEADER_SIZE_IN_BITS`; or `fixed_ll_sym[]`/`fixed_d_sym[]`).
//!
//! It understands just enough C for these files: comments, `#define NAME
//! <integer>`, and `NAME[...] = { <integer literals> }` initializers. The
//! literal/length array is the one whose name ends in `ll_iaa` or `ll_sym`,
//! the distance array `d_iaa`/`d_sym`, the optional header array `header`;
//! the bit count is a `#define` ending in `HEADER_SIZE_IN_BITS`, the optional
//! flags one ending in `GEN_DECOMP_TABLE_FLAGS`.
//!
//! Everything is cross-checked, and the first disagreement is an error that
//! names the symbol: entries fit in 19 bits; the lengths form a valid table;
//! each code is the canonical code of its length (uncoded symbols are 0); the
//! header (if any) parses as a dynamic block header, gives exactly the
//! arrays' lengths, has no repeat crossing from literal/length into distance
//! lengths, ends at the declared bit count and fills exactly its bytes; the
//! flags (if given) are what the driver would compute; a `Table id:` comment
//! (ours) matches the lengths. It does not evaluate C expressions or macros.

mod c_scan;

use c_scan::scan;

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN};
use cannery_codec::decode::read_block_header;
use cannery_codec::table::{Alphabet, BlockHeader};
use cannery_codec::{DecodeError, Table, TableError};

/// Why a header could not be imported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Text this parser does not understand where it expected an initializer.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// A required array is missing.
    #[error("no {what} array found (expected an array whose name ends in {suffixes})")]
    MissingArray {
        /// Which array.
        what: &'static str,
        /// Accepted name endings.
        suffixes: &'static str,
    },
    /// More than one array (or define) could be the one needed.
    #[error("more than one {what} candidate: {}", .names.join(", "))]
    Ambiguous {
        /// Which array or define.
        what: &'static str,
        /// The candidates.
        names: Vec<String>,
    },
    /// An array has the wrong number of entries.
    #[error("array {array} has {found} entries, expected {expected}")]
    WrongLength {
        /// Array name.
        array: String,
        /// Entries required.
        expected: usize,
        /// Entries found.
        found: usize,
    },
    /// An entry has bits above bit 18 set.
    #[error("{alphabet} symbol {symbol}: entry {value:#x} has bits above bit 18 set")]
    EntryTooWide {
        /// Alphabet.
        alphabet: Alphabet,
        /// Symbol.
        symbol: usize,
        /// The entry.
        value: u64,
    },
    /// The lengths are not a usable table.
    #[error("the arrays' code lengths are not a valid table: {0}")]
    Table(#[from] TableError),
    /// A code is not the canonical code for its length.
    #[error("{alphabet} symbol {symbol}: code {code:#x} but canonical code for length {length} is {canonical:#x}")]
    CodeMismatch {
        /// Alphabet.
        alphabet: Alphabet,
        /// Symbol.
        symbol: usize,
        /// Code in the array.
        code: u32,
        /// Its length.
        length: u8,
        /// The canonical code.
        canonical: u32,
    },
    /// An uncoded symbol (length 0) with a non-zero code.
    #[error("{alphabet} symbol {symbol}: length 0 (no code) but code bits {code:#x}")]
    UncodedWithCode {
        /// Alphabet.
        alphabet: Alphabet,
        /// Symbol.
        symbol: usize,
        /// The stray code bits.
        code: u32,
    },
    /// A header byte above 255.
    #[error("array {array}: element {index} ({value:#x}) is not a byte")]
    NotAByte {
        /// Array name.
        array: String,
        /// Index.
        index: usize,
        /// The value.
        value: u64,
    },
    /// The header does not parse.
    #[error("header array {array} is not a dynamic block header: {error}")]
    BadHeader {
        /// Array name.
        array: String,
        /// The parser's complaint.
        error: DecodeError,
    },
    /// The header's lengths differ from the arrays'.
    #[error(
        "header gives {alphabet} symbol {symbol} length {header} but the arrays give {arrays}"
    )]
    HeaderLengthMismatch {
        /// Alphabet.
        alphabet: Alphabet,
        /// Symbol.
        symbol: usize,
        /// Length from the header.
        header: u8,
        /// Length from the arrays.
        arrays: u8,
    },
    /// The header has a repeat code spanning both alphabets (IAA rejects it).
    #[error("header has a repeat code running from the literal/length into the distance lengths, which IAA rejects")]
    HeaderCrossesBoundary,
    /// The header ends elsewhere than declared.
    #[error("header ends at bit {parsed} but {define} is {declared}")]
    HeaderBits {
        /// The define's name.
        define: String,
        /// Declared bits.
        declared: u64,
        /// Where the header really ends.
        parsed: usize,
    },
    /// The header array's size does not match its bit count.
    #[error("header array {array} has {bytes} bytes but {bits} header bits need {}", .bits.div_ceil(8))]
    HeaderSize {
        /// Array name.
        array: String,
        /// Bytes in the array.
        bytes: usize,
        /// Header bits.
        bits: usize,
    },
    /// Non-zero bits after the header's end in its last byte.
    #[error("header array {array} has non-zero bits after the header's last bit")]
    HeaderPadding {
        /// Array name.
        array: String,
    },
    /// A bit count or flags define without a header array.
    #[error("{define} is defined but there is no header array")]
    DefineWithoutHeader {
        /// The define.
        define: String,
    },
    /// The flags differ from what the driver computes.
    #[error("{define} is {declared:#x} but the header needs {expected:#x} (0x1 | 1 << 9 | pad bits << 6)")]
    FlagsMismatch {
        /// The define.
        define: String,
        /// Declared.
        declared: u64,
        /// Computed from the header.
        expected: u16,
    },
    /// Our comment's table id does not match the arrays.
    #[error(
        "the comment says table id {stated} but the arrays hash to {computed}: the file was edited"
    )]
    IdMismatch {
        /// Id in the comment.
        stated: String,
        /// Id of the imported lengths.
        computed: String,
    },
}

/// The single item whose name ends in one of `suffixes`, if any.
fn pick<'a, T>(
    items: impl Iterator<Item = (&'a str, T)>,
    suffixes: &[&str],
    what: &'static str,
) -> Result<Option<(&'a str, T)>, ImportError> {
    let mut found: Vec<(&'a str, T)> = items
        .filter(|(n, _)| suffixes.iter().any(|s| n.ends_with(s)))
        .collect();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(ImportError::Ambiguous {
            what,
            names: found.iter().map(|(n, _)| n.to_string()).collect(),
        }),
    }
}

/// Lengths and codes of one alphabet from kernel entries.
fn split_entries(alphabet: Alphabet, values: &[u64]) -> Result<(Vec<u8>, Vec<u32>), ImportError> {
    let mut lens = Vec::with_capacity(values.len());
    let mut codes = Vec::with_capacity(values.len());
    for (symbol, &value) in values.iter().enumerate() {
        if value >> 19 != 0 {
            return Err(ImportError::EntryTooWide {
                alphabet,
                symbol,
                value,
            });
        }
        lens.push((value >> 15) as u8);
        codes.push((value & 0x7fff) as u32);
    }
    Ok((lens, codes))
}

fn check_codes(
    alphabet: Alphabet,
    lens: &[u8],
    codes: &[u32],
    canonical: &[u16],
) -> Result<(), ImportError> {
    for symbol in 0..lens.len() {
        let (length, code) = (lens[symbol], codes[symbol]);
        if length == 0 {
            if code != 0 {
                return Err(ImportError::UncodedWithCode {
                    alphabet,
                    symbol,
                    code,
                });
            }
        } else if code != canonical[symbol] as u32 {
            return Err(ImportError::CodeMismatch {
                alphabet,
                symbol,
                code,
                length,
                canonical: canonical[symbol] as u32,
            });
        }
    }
    Ok(())
}

/// The 16-hex-digit id after `Table id:` in the text, if any.
fn stated_id(text: &str) -> Option<String> {
    let at = text.find("Table id:")?;
    let rest = text[at + "Table id:".len()..].trim_start();
    let id: String = rest.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    (id.len() == 16).then_some(id)
}

/// Parses `text` (a C header) into a table; see the module documentation.
///
/// The table is named after the arrays' prefix (`canned` for
/// `canned_ll_iaa`) and its provenance source names the arrays read.
pub fn table_from_kernel_header(text: &str) -> Result<Table, ImportError> {
    let parsed = scan(text)?;
    let arrays = || parsed.arrays.iter().map(|a| (a.name.as_str(), &a.values));
    let (ll_name, ll_vals) = pick(arrays(), &["ll_iaa", "ll_sym"], "literal/length array")?.ok_or(
        ImportError::MissingArray {
            what: "literal/length",
            suffixes: "ll_iaa or ll_sym",
        },
    )?;
    let (d_name, d_vals) = pick(arrays(), &["d_iaa", "d_sym"], "distance array")?.ok_or(
        ImportError::MissingArray {
            what: "distance",
            suffixes: "d_iaa or d_sym",
        },
    )?;
    let header = pick(arrays(), &["header"], "header array")?;
    let defines = || parsed.defines.iter().map(|(n, &v)| (n.as_str(), v));
    let bits_define = pick(
        defines(),
        &["HEADER_SIZE_IN_BITS"],
        "header bit count define",
    )?;
    let flags_define = pick(defines(), &["GEN_DECOMP_TABLE_FLAGS"], "flags define")?;

    for (name, vals, expected) in [(ll_name, ll_vals, NUM_LITLEN), (d_name, d_vals, NUM_DIST)] {
        if vals.len() != expected {
            return Err(ImportError::WrongLength {
                array: name.into(),
                expected,
                found: vals.len(),
            });
        }
    }
    let (ll_lens, ll_codes) = split_entries(Alphabet::LitLen, ll_vals)?;
    let (d_lens, d_codes) = split_entries(Alphabet::Dist, d_vals)?;
    let mut table = Table::from_lengths(&ll_lens, &d_lens)?;
    check_codes(Alphabet::LitLen, &ll_lens, &ll_codes, table.litlen_codes())?;
    check_codes(Alphabet::Dist, &d_lens, &d_codes, table.dist_codes())?;

    match header {
        None => {
            if let Some((define, _)) = bits_define.or(flags_define) {
                return Err(ImportError::DefineWithoutHeader {
                    define: define.into(),
                });
            }
        }
        Some((h_name, h_vals)) => {
            check_header(&table, h_name, h_vals, bits_define, flags_define)?;
        }
    }
    if let Some(stated) = stated_id(text) {
        if stated != table.id() {
            return Err(ImportError::IdMismatch {
                stated,
                computed: table.id(),
            });
        }
    }

    let prefix = ll_name
        .trim_end_matches("ll_iaa")
        .trim_end_matches("ll_sym")
        .trim_end_matches('_');
    table.name = (!prefix.is_empty()).then(|| prefix.to_string());
    let mut arrays_read = vec![ll_name, d_name];
    if let Some((h, _)) = header {
        arrays_read.push(h);
    }
    table.provenance.source = Some(format!(
        "imported from a kernel header (arrays {})",
        arrays_read.join(", ")
    ));
    Ok(table)
}

fn check_header(
    table: &Table,
    name: &str,
    vals: &[u64],
    bits_define: Option<(&str, u64)>,
    flags_define: Option<(&str, u64)>,
) -> Result<(), ImportError> {
    let mut bytes = Vec::with_capacity(vals.len());
    for (index, &value) in vals.iter().enumerate() {
        if value > 0xff {
            return Err(ImportError::NotAByte {
                array: name.into(),
                index,
                value,
            });
        }
        bytes.push(value as u8);
    }
    let parsed = read_block_header(&bytes).map_err(|error| ImportError::BadHeader {
        array: name.into(),
        error,
    })?;
    let l = table.lengths();
    for (alphabet, from_header, from_arrays) in [
        (Alphabet::LitLen, &parsed.litlen[..], &l.litlen[..]),
        (Alphabet::Dist, &parsed.dist[..], &l.dist[..]),
    ] {
        if let Some(symbol) = (0..from_arrays.len()).find(|&s| from_header[s] != from_arrays[s]) {
            return Err(ImportError::HeaderLengthMismatch {
                alphabet,
                symbol,
                header: from_header[symbol],
                arrays: from_arrays[symbol],
            });
        }
    }
    if parsed.crosses_boundary {
        return Err(ImportError::HeaderCrossesBoundary);
    }
    if let Some((define, declared)) = bits_define {
        if declared != parsed.bits as u64 {
            return Err(ImportError::HeaderBits {
                define: define.into(),
                declared,
                parsed: parsed.bits,
            });
        }
    }
    if bytes.len() != parsed.bits.div_ceil(8) {
        return Err(ImportError::HeaderSize {
            array: name.into(),
            bytes: bytes.len(),
            bits: parsed.bits,
        });
    }
    if parsed.bits % 8 != 0 && bytes[bytes.len() - 1] >> (parsed.bits % 8) != 0 {
        return Err(ImportError::HeaderPadding { array: name.into() });
    }
    if let Some((define, declared)) = flags_define {
        let expected = BlockHeader {
            bytes: bytes.clone(),
            bits: parsed.bits,
        }
        .gen_decomp_table_flags();
        if declared != expected as u64 {
            return Err(ImportError::FlagsMismatch {
                define: define.into(),
                declared,
                expected,
            });
        }
    }
    Ok(())
}
