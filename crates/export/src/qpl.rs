//! The histogram route for Intel QPL (docs/canned-format.md §3.3, §7): QPL cannot
//! build a deflate table from code lengths, but
//! `qpl_huffman_table_init_with_histogram()` builds the optimal code of a
//! histogram, and the optimal code of the counts `2^(15 − length)` is the
//! table itself (the counts are dyadic, so only those lengths reach the
//! entropy bound; Gibbs' inequality).
//!
//! **Counts file**: 316 little-endian u32, no header: literal/length symbols
//! 0..=285, then distance symbols 0..=29, each `2^(15 − length)` (1..=16384).
//! Load it into `qpl_histogram.literal_lengths[0..286]` and
//! `qpl_histogram.distances[0..30]` (the reserved entries stay 0).
//!
//! **Sidecar** (`<counts file>.json`): format name and version, the layout
//! above, the table id, name and provenance, the code lengths, and the
//! 56-bit budget's terms ([`BitBudget`]).
//!
//! Refused: every table that is not [`Rule::QplLoadable`], because QPL
//! would load another table: an uncoded symbol (QPL raises zero counts to
//! 1; e.g. the 2024 kernel table, whose distance symbols 24..=29 are
//! uncoded), an incomplete code (never optimal; this includes the fixed code
//! over 286 + 30 symbols), or a code over the 56-bit budget (QPL rebuilds it
//! with limits 13/12). `cannery train --qpl-compatible` writes only tables
//! this accepts.

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN};
use cannery_codec::table::rules::{BitBudget, Rule, BITBUF_LIMIT};
use cannery_codec::table::Alphabet;
use cannery_codec::{Table, TableError};
use serde_json::json;

use crate::error::ExportError;

/// Format name in the sidecar.
pub const SIDECAR_FORMAT: &str = "cannery-qpl-histogram";
/// Sidecar and counts-file version.
pub const VERSION: u32 = 1;
/// Size of the counts file.
pub const COUNTS_LEN: usize = 4 * (NUM_LITLEN + NUM_DIST);

/// A table in QPL's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QplExport {
    /// `2^(15 − length)` per literal/length symbol.
    pub litlen: [u32; NUM_LITLEN],
    /// `2^(15 − length)` per distance symbol.
    pub dist: [u32; NUM_DIST],
    /// The 56-bit-rule terms of the table.
    pub budget: BitBudget,
}

impl QplExport {
    /// The counts for `table`, or why QPL cannot reproduce it.
    pub fn new(table: &Table) -> Result<QplExport, ExportError> {
        Rule::QplLoadable
            .check(table)
            .map_err(|reason| ExportError::BreaksRule {
                id: table.id(),
                consumer: "QPL",
                rule: Rule::QplLoadable,
                reason,
            })?;
        let l = table.lengths();
        let count = |len: u8| 1u32 << (15 - len as u32);
        Ok(QplExport {
            litlen: l.litlen.map(count),
            dist: l.dist.map(count),
            budget: BitBudget::of(l),
        })
    }

    /// The counts file: 316 little-endian u32.
    pub fn counts_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(COUNTS_LEN);
        for c in self.litlen.iter().chain(&self.dist) {
            b.extend_from_slice(&c.to_le_bytes());
        }
        b
    }

    /// Where the sidecar of counts file `out` goes: `OUT.json` beside it.
    pub fn sidecar_path(out: &std::path::Path) -> std::path::PathBuf {
        let mut s = out.as_os_str().to_owned();
        s.push(".json");
        std::path::PathBuf::from(s)
    }

    /// The JSON sidecar for `table`, pretty-printed, ending in a newline.
    pub fn sidecar_json(&self, table: &Table, generator: &str) -> String {
        let v = json!({
            "format": SIDECAR_FORMAT,
            "version": VERSION,
            "generator": generator,
            "layout": "316 little-endian u32 counts: literal/length symbols 0..=285, then distance \
                       symbols 0..=29; count = 2^(15 - code length). Load into \
                       qpl_histogram.literal_lengths[0..286] and .distances[0..30] and call \
                       qpl_huffman_table_init_with_histogram().",
            "table": {
                "id": table.id(),
                "name": table.name,
                "litlen_lengths": table.lengths().litlen.to_vec(),
                "dist_lengths": table.lengths().dist.to_vec(),
                "provenance": table.provenance,
            },
            "bit_budget": {
                "longest_litlen": self.budget.lit,
                "longest_length_with_extra": self.budget.len,
                "longest_dist_with_extra": self.budget.dist,
                "total": self.budget.total(),
                "limit": BITBUF_LIMIT,
            },
        });
        let mut s = serde_json::to_string_pretty(&v).expect("JSON values always serialize");
        s.push('\n');
        s
    }
}

/// Why a counts file could not be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CountsError {
    /// The file is not 316 little-endian u32.
    #[error(
        "a QPL counts file has {COUNTS_LEN} bytes (316 little-endian u32), this one has {found}"
    )]
    Length {
        /// Bytes found.
        found: usize,
    },
    /// A count that no code length gives.
    #[error(
        "{alphabet} symbol {symbol} (byte offset {offset}): count {count} is not 2^(15 - length) \
         for a code length 1..=15"
    )]
    NotALength {
        /// Which alphabet.
        alphabet: Alphabet,
        /// The symbol.
        symbol: usize,
        /// Byte offset of its count in the file.
        offset: usize,
        /// The count read.
        count: u32,
    },
    /// The lengths the counts give do not form a valid table.
    #[error("the counts give no valid table: {0}")]
    Table(#[from] TableError),
}

/// Reads a counts file back into (literal/length, distance) counts; every
/// count must be `2^(15 − length)` for a length 1..=15 (what
/// [`QplExport::counts_bytes`] writes), else the error names the symbol.
pub fn parse_counts(bytes: &[u8]) -> Result<(Vec<u64>, Vec<u64>), CountsError> {
    if bytes.len() != COUNTS_LEN {
        return Err(CountsError::Length { found: bytes.len() });
    }
    let mut all = Vec::with_capacity(NUM_LITLEN + NUM_DIST);
    for (i, c) in bytes.chunks_exact(4).enumerate() {
        let count = u32::from_le_bytes(c.try_into().expect("4 bytes"));
        if !count.is_power_of_two() || count > 1 << 14 {
            let (alphabet, symbol) = if i < NUM_LITLEN {
                (Alphabet::LitLen, i)
            } else {
                (Alphabet::Dist, i - NUM_LITLEN)
            };
            return Err(CountsError::NotALength {
                alphabet,
                symbol,
                offset: 4 * i,
                count,
            });
        }
        all.push(count as u64);
    }
    Ok((all[..NUM_LITLEN].to_vec(), all[NUM_LITLEN..].to_vec()))
}

/// The table a counts file stands for: each count's length
/// `15 − log2(count)`, checked by [`Table::from_lengths`].
pub fn table_from_counts(bytes: &[u8]) -> Result<Table, CountsError> {
    let (ll, d) = parse_counts(bytes)?;
    let length = |c: &u64| 15 - c.trailing_zeros() as u8;
    let ll: Vec<u8> = ll.iter().map(length).collect();
    let d: Vec<u8> = d.iter().map(length).collect();
    Ok(Table::from_lengths(&ll, &d)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::huffman::limited_code_lengths;

    /// A complete IAA-safe table with all 316 symbols coded.
    fn complete_table() -> Table {
        let mut ll = [0u64; NUM_LITLEN];
        for (s, c) in ll.iter_mut().enumerate() {
            *c = 1 + (s as u64 * 7919) % 1000 + if s < 128 { 5000 } else { 0 };
        }
        let d: Vec<u64> = (0..NUM_DIST as u64).map(|s| 1 + (30 - s) * 40).collect();
        Table::from_lengths(
            &limited_code_lengths(&ll, 15),
            &limited_code_lengths(&d, 15),
        )
        .unwrap()
    }

    #[test]
    fn counts_give_back_exactly_the_lengths() {
        let t = complete_table();
        let q = QplExport::new(&t).unwrap();
        let (ll, d) = parse_counts(&q.counts_bytes()).unwrap();
        assert_eq!(limited_code_lengths(&ll, 15), t.lengths().litlen.to_vec());
        assert_eq!(limited_code_lengths(&d, 15), t.lengths().dist.to_vec());
        assert_eq!(
            table_from_counts(&q.counts_bytes()).unwrap().lengths(),
            t.lengths()
        );
        // Layout: symbol 0's count first, little-endian.
        let b = q.counts_bytes();
        assert_eq!(b.len(), 1264);
        let c0 = 1u32 << (15 - t.lengths().litlen[0]);
        assert_eq!(&b[..4], &c0.to_le_bytes());
        let d29 = 1u32 << (15 - t.lengths().dist[29]);
        assert_eq!(&b[1260..], &d29.to_le_bytes());
    }

    #[test]
    fn damaged_counts_files_are_refused_naming_what_is_wrong() {
        let b = QplExport::new(&complete_table()).unwrap().counts_bytes();
        let e = parse_counts(&b[..1263]).unwrap_err();
        assert_eq!(e, CountsError::Length { found: 1263 });
        assert!(e.to_string().contains("1264 bytes"), "{e}");
        let mut bad = b.clone();
        bad[4 * 290..4 * 291].copy_from_slice(&3u32.to_le_bytes());
        let e = parse_counts(&bad).unwrap_err();
        assert_eq!(e.to_string(), "distance symbol 4 (byte offset 1160): count 3 is not 2^(15 - length) for a code length 1..=15");
        bad[4 * 290..4 * 291].copy_from_slice(&(1u32 << 15).to_le_bytes());
        assert!(matches!(
            parse_counts(&bad),
            Err(CountsError::NotALength { count: 32768, .. })
        ));
        // Every count 2^14: 316 codes of length 1, over-subscribed.
        let short: Vec<u8> = (0..316).flat_map(|_| (1u32 << 14).to_le_bytes()).collect();
        let e = table_from_counts(&short).unwrap_err();
        assert!(
            matches!(e, CountsError::Table(TableError::OverSubscribed { .. })),
            "{e}"
        );
    }

    #[test]
    fn uncoded_incomplete_and_over_budget_tables_are_refused() {
        let refusal = |t: &Table| match QplExport::new(t) {
            Err(ExportError::BreaksRule { rule, reason, .. }) => {
                assert_eq!(rule, Rule::QplLoadable);
                reason
            }
            other => panic!("expected a refusal, got {other:?}"),
        };
        let k = Table::kernel_2024();
        assert!(refusal(&k).starts_with("distance symbols 24..=29 have no code"));
        assert!(refusal(&Table::fixed()).contains("incomplete"));
        // Geometric weights: 15-bit codes on both alphabets, 15 + 20 + 28.
        let ll: Vec<u64> = (0..286u64).map(|i| 1 + (1u64 << (40 - i % 40))).collect();
        let d: Vec<u64> = (0..30u64).map(|i| 1 + (1u64 << (40 - i))).collect();
        let long = Table::from_lengths(
            &limited_code_lengths(&ll, 15),
            &limited_code_lengths(&d, 15),
        )
        .unwrap();
        assert!(!BitBudget::of(long.lengths()).fits());
        assert!(refusal(&long).contains("56-bit budget is exceeded"));
    }

    #[test]
    fn sidecar_names_the_table_and_the_budget() {
        let mut t = complete_table();
        t.provenance.corpus = Some("synthetic".into());
        let q = QplExport::new(&t).unwrap();
        let v: serde_json::Value = serde_json::from_str(&q.sidecar_json(&t, "cannery x")).unwrap();
        assert_eq!(v["format"], SIDECAR_FORMAT);
        assert_eq!(v["table"]["id"], t.id());
        assert_eq!(v["table"]["provenance"]["corpus"], "synthetic");
        assert_eq!(v["bit_budget"]["total"], q.budget.total());
        assert_eq!(v["table"]["litlen_lengths"].as_array().unwrap().len(), 286);
    }
}
