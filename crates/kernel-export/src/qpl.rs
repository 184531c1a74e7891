//! The histogram route for Intel QPL (canned-format.md §3.3, §7): QPL cannot
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
//! 56-bit-rule terms ([`crate::limits`]).
//!
//! Refused: tables with an uncoded symbol (QPL raises zero counts to 1, so
//! it would code that symbol and change the lengths; e.g. the 2024 kernel
//! table, whose distance symbols 24..=29 are uncoded) and incomplete codes
//! (never optimal; this includes the fixed code over 286 + 30 symbols).
//! Tables breaking the 56-bit rule are exported, but QPL would rebuild them
//! with limits 13/12: callers should warn ([`QplExport::budget`]).

use cannery_codec::constants::{NUM_DIST, NUM_LITLEN};
use cannery_codec::huffman::kraft_sum;
use cannery_codec::table::{Alphabet, KRAFT_COMPLETE};
use cannery_codec::Table;
use serde_json::json;

use crate::error::ExportError;
use crate::limits::{BitBudget, MAX_BITBUF_BIT_WRITE};

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
        let l = table.lengths();
        for (alphabet, lens) in [
            (Alphabet::LitLen, &l.litlen[..]),
            (Alphabet::Dist, &l.dist[..]),
        ] {
            if let Some(symbol) = lens.iter().position(|&x| x == 0) {
                return Err(ExportError::QplUncoded {
                    id: table.id(),
                    alphabet,
                    symbol,
                });
            }
            let kraft = kraft_sum(lens);
            if kraft != KRAFT_COMPLETE {
                return Err(ExportError::QplIncomplete {
                    id: table.id(),
                    alphabet,
                    kraft,
                });
            }
        }
        let count = |len: u8| 1u32 << (15 - len as u32);
        Ok(QplExport {
            litlen: l.litlen.map(count),
            dist: l.dist.map(count),
            budget: BitBudget::of(table),
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

    /// True if QPL would rebuild the table with maximum lengths 13/12.
    pub fn breaks_56_bit_rule(&self) -> bool {
        self.budget.exceeds_limit()
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
                "limit": MAX_BITBUF_BIT_WRITE,
                "qpl_rebuilds_with_13_12": self.breaks_56_bit_rule(),
            },
        });
        let mut s = serde_json::to_string_pretty(&v).expect("JSON values always serialize");
        s.push('\n');
        s
    }
}

/// Reads a counts file back into (literal/length, distance) counts.
pub fn parse_counts(bytes: &[u8]) -> Option<(Vec<u64>, Vec<u64>)> {
    if bytes.len() != COUNTS_LEN {
        return None;
    }
    let all: Vec<u64> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")) as u64)
        .collect();
    Some((all[..NUM_LITLEN].to_vec(), all[NUM_LITLEN..].to_vec()))
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
        // Layout: symbol 0's count first, little-endian.
        let b = q.counts_bytes();
        assert_eq!(b.len(), 1264);
        let c0 = 1u32 << (15 - t.lengths().litlen[0]);
        assert_eq!(&b[..4], &c0.to_le_bytes());
        let d29 = 1u32 << (15 - t.lengths().dist[29]);
        assert_eq!(&b[1260..], &d29.to_le_bytes());
    }

    #[test]
    fn uncoded_and_incomplete_tables_are_refused() {
        let k = Table::kernel_2024();
        assert_eq!(
            QplExport::new(&k),
            Err(ExportError::QplUncoded {
                id: k.id(),
                alphabet: Alphabet::Dist,
                symbol: 24
            })
        );
        let f = Table::fixed();
        assert!(matches!(
            QplExport::new(&f),
            Err(ExportError::QplIncomplete {
                alphabet: Alphabet::LitLen,
                ..
            })
        ));
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
