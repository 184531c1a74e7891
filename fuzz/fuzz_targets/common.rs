//! Shared by the fuzz targets: turning fuzzer bytes into a valid table.

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::Table;

/// Bytes a table consumes from the input.
pub const TABLE_BYTES: usize = 316;

/// A valid table from 316 bytes: each byte is a symbol count (0 allowed
/// when `allow_uncoded`, else at least 1), lengths from package-merge with
/// a limit of 15 (or the byte-chosen smaller limit), so every table this
/// returns passes `Table::from_lengths`.
pub fn table_from(bytes: &[u8], allow_uncoded: bool) -> Option<Table> {
    if bytes.len() < TABLE_BYTES {
        return None;
    }
    let floor = u64::from(!allow_uncoded);
    let mut ll: Vec<u64> = bytes[..286].iter().map(|&b| b as u64 + floor).collect();
    let d: Vec<u64> = bytes[286..316].iter().map(|&b| b as u64 + floor).collect();
    // A table needs an end-of-block code; a code needs two symbols.
    ll[256] = ll[256].max(1);
    if ll.iter().filter(|&&c| c > 0).count() < 2 {
        ll[0] = ll[0].max(1);
    }
    let mut d = d;
    if d.iter().filter(|&&c| c > 0).count() < 2 {
        d[0] = d[0].max(1);
        d[1] = d[1].max(1);
    }
    let limit = 9 + bytes[0] % 7; // 9..=15
    Table::from_lengths(
        &limited_code_lengths(&ll, limit),
        &limited_code_lengths(&d, limit.min(15)),
    )
    .ok()
}
