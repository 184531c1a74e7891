//! QPL as a *training target*: what QPL's own statistics, its own table
//! builder and its canned compressor make of a page, at QPL's two levels,
//! on the software path. The trainer uses these to gather statistics with
//! QPL's parse (`--target qpl-default|qpl-high`) and to compare its tables
//! with the table QPL builds from the same counts, under QPL's compressor.
//!
//! - [`QplParser`]: the symbols QPL's canned compressor emits for a page at
//!   a level (compressed with a fixed-code-like table, decoded back to
//!   tokens). Its parse does not depend on the table (tests/qpl_target.rs),
//!   and QPL's own statistics function parses differently (it agreed with
//!   the compressor on 0 of 196 corpus pages at the default level, 17 of
//!   196 at the high level), so this is what a table for QPL's compressor
//!   is trained on.
//! - [`gather_page_statistics`]: `qpl_gather_deflate_statistics` on one page
//!   (QPL's own training workflow, for QPL's own table),
//!   with QPL's fill of zero counts kept out (QPL turns every zero into a 1
//!   after each call, docs/canned-format.md §3.3; the histogram starts with
//!   a 1 in every entry, so nothing is zero, and the 1 is taken off after),
//!   and exactly one end-of-block per page.
//! - [`QplTable`]: a QPL table built by QPL from training counts
//!   ([`Qpl::trained_table`]) or loaded unchanged from a cannery table
//!   ([`Qpl::loaded_table`]).
//! - [`Qpl::canned_stream`]: one page compressed in canned mode at a level
//!   with a given table.
//!
//! This module does not decide which table is better; the trainer does.

use super::{check, ffi, HuffTable, Qpl};
use crate::backend::{EngineError, LibraryCounts};
use cannery_codec::constants::{END_OF_BLOCK, PAGE_SIZE};
use cannery_codec::table::{CodeLengths, Table};

/// QPL's compression levels (its software path has both; IAA hardware
/// only the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QplLevel {
    /// `qpl_default_level`: ISA-L's single-probe greedy matcher.
    Default,
    /// `qpl_high_level`: QPL's own lazy hash-chain matcher (software only).
    High,
}

impl QplLevel {
    fn raw(self) -> ffi::qpl_compression_levels {
        match self {
            QplLevel::Default => ffi::qpl_default_level,
            QplLevel::High => ffi::qpl_high_level,
        }
    }
}

/// The symbols QPL's statistics gatherer (software path) finds in `page` at
/// `level`, with one end-of-block.
pub fn gather_page_statistics(page: &[u8], level: QplLevel) -> Result<LibraryCounts, EngineError> {
    crate::engine::check_page(page)?;
    // QPL's gatherer takes a mutable pointer; it does not write through it.
    let mut input = page.to_vec();
    // SAFETY: qpl_histogram is plain u32 arrays; all-zero is valid.
    let mut hist: ffi::qpl_histogram = unsafe { std::mem::zeroed() };
    hist.literal_lengths.fill(1);
    hist.distances.fill(1);
    // SAFETY: `input` and `hist` live across the call; the length is theirs.
    check("qpl_gather_deflate_statistics", unsafe {
        ffi::qpl_gather_deflate_statistics(
            input.as_mut_ptr(),
            input.len() as u32,
            &mut hist,
            level.raw(),
            ffi::qpl_path_software,
        )
    })?;
    let mut c = LibraryCounts::zero();
    for (o, &n) in c.litlen.iter_mut().zip(&hist.literal_lengths) {
        *o = n.saturating_sub(1) as u64;
    }
    for (o, &n) in c.dist.iter_mut().zip(&hist.distances) {
        *o = n.saturating_sub(1) as u64;
    }
    // Whether or not the level counts an end-of-block, a page has one.
    c.litlen[END_OF_BLOCK as usize] = 1;
    Ok(c)
}

/// A table inside QPL, for canned compression.
pub struct QplTable(HuffTable);

impl std::fmt::Debug for QplTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QplTable")
    }
}

/// Counts as QPL's u32 histogram: scaled down (rounding up, so no symbol
/// seen becomes unseen) when the largest count does not fit.
fn to_qpl_histogram(counts: &LibraryCounts) -> ffi::qpl_histogram {
    let max = counts
        .litlen
        .iter()
        .chain(&counts.dist)
        .copied()
        .max()
        .unwrap_or(0);
    let scale = max.div_ceil(u32::MAX as u64).max(1);
    // SAFETY: qpl_histogram is plain u32 arrays; all-zero is valid.
    let mut hist: ffi::qpl_histogram = unsafe { std::mem::zeroed() };
    for (o, &n) in hist.literal_lengths.iter_mut().zip(&counts.litlen) {
        *o = n.div_ceil(scale) as u32;
    }
    for (o, &n) in hist.distances.iter_mut().zip(&counts.dist) {
        *o = n.div_ceil(scale) as u32;
    }
    hist
}

impl Qpl {
    /// The table QPL itself builds from training counts (QPL's own
    /// training route: `qpl_huffman_table_init_with_histogram`).
    pub fn trained_table(&mut self, counts: &LibraryCounts) -> Result<QplTable, EngineError> {
        let h = self.new_table()?;
        let hist = to_qpl_histogram(counts);
        // SAFETY: `h.0` is a live table; `hist` outlives the call.
        check("qpl_huffman_table_init_with_histogram", unsafe {
            ffi::qpl_huffman_table_init_with_histogram(h.0, &hist)
        })?;
        Ok(QplTable(h))
    }

    /// `table` inside QPL with exactly its code lengths, or why QPL would
    /// change them ([`EngineError::QplTableChanged`]).
    pub fn loaded_table(&mut self, table: &Table) -> Result<QplTable, EngineError> {
        Ok(QplTable(self.load_table(table)?))
    }

    /// The code lengths of a table inside QPL.
    pub fn table_lengths(&mut self, table: &QplTable) -> Result<CodeLengths, EngineError> {
        self.read_back(table.0 .0)
    }

    /// `page` compressed in canned mode at `level` with `table` (QPL's
    /// stream: body, end-of-block and its software path's trailer), or
    /// `None` if QPL finds it incompressible (it never writes a stored
    /// block in canned mode).
    pub fn canned_stream(
        &mut self,
        table: &QplTable,
        level: QplLevel,
        page: &[u8],
    ) -> Result<Option<Vec<u8>>, EngineError> {
        self.canned_stream_within(table, level, page, PAGE_SIZE)
    }

    /// [`Qpl::canned_stream`] with room for `limit` output bytes.
    fn canned_stream_within(
        &mut self,
        table: &QplTable,
        level: QplLevel,
        page: &[u8],
        limit: usize,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        crate::engine::check_page(page)?;
        let mut out = Vec::new();
        let n = self.run_compress(
            ffi::QPL_FLAG_CANNED_MODE,
            level.raw(),
            table.0 .0,
            page,
            &mut out,
            limit,
        )?;
        Ok(n.map(|_| out))
    }
}

/// The symbols QPL's canned compressor emits, page by page, at one level.
pub struct QplParser {
    qpl: Qpl,
    table: QplTable,
    decoder: cannery_codec::decode::CannedDecoder,
    level: QplLevel,
}

impl std::fmt::Debug for QplParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QplParser({:?})", self.level)
    }
}

impl QplParser {
    /// A parser on QPL's software path.
    pub fn new(level: QplLevel) -> Result<QplParser, EngineError> {
        let mut qpl = Qpl::open_software()?;
        let reference = super::qpl_loadable_default_table();
        let table = qpl.loaded_table(&reference)?;
        Ok(QplParser {
            qpl,
            table,
            decoder: cannery_codec::decode::CannedDecoder::new(&reference),
            level,
        })
    }

    /// The symbols (and end-of-block) QPL's compressor emits for `page`.
    pub fn count(&mut self, page: &[u8]) -> Result<LibraryCounts, EngineError> {
        // Room for any page, so QPL never stops short of the whole parse.
        let s = self
            .qpl
            .canned_stream_within(&self.table, self.level, page, 2 * PAGE_SIZE)?
            .ok_or(EngineError::OutputLimit {
                backend: "qpl",
                limit: 2 * PAGE_SIZE,
            })?;
        let tokens = self.decoder.tokens(&s, PAGE_SIZE)?;
        Ok(LibraryCounts::of_tokens(&tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::backend::stress::words_page as page;

    #[test]
    fn statistics_are_counts_of_one_parse() {
        for level in [QplLevel::Default, QplLevel::High] {
            let c = gather_page_statistics(&page(), level).unwrap();
            let lengths: u64 = c.litlen[257..].iter().sum();
            let dists: u64 = c.dist.iter().sum();
            assert_eq!(lengths, dists, "{level:?}");
            assert_eq!(c.litlen[256], 1);
            assert!(lengths > 0, "{level:?}: a repetitive page has matches");
            // Some symbols are unseen: QPL's fill of zeros was undone.
            assert!(c.litlen.contains(&0), "{level:?}");
        }
    }

    #[test]
    fn trained_tables_code_every_symbol_and_compress() {
        let c = gather_page_statistics(&page(), QplLevel::Default).unwrap();
        let mut q = Qpl::open_software().unwrap();
        let t = q.trained_table(&c).unwrap();
        let l = q.table_lengths(&t).unwrap();
        assert!(l
            .litlen
            .iter()
            .chain(&l.dist)
            .all(|&n| (1..=15).contains(&n)));
        for level in [QplLevel::Default, QplLevel::High] {
            let s = q.canned_stream(&t, level, &page()).unwrap().unwrap();
            assert!(s.len() < PAGE_SIZE / 2, "{level:?}: {}", s.len());
        }
    }
}
