//! QPL as a training target (feature `qpl`, software path), on pages of the
//! shipped corpus: QPL's canned compressor parses a page the same way
//! whatever table it is given, so the symbols it emits (`QplParser`) are a
//! table-independent statistic to train on; every stream decodes to its
//! page; and how often QPL's own statistics function agrees with its
//! compressor is printed (0 of 196 pages at the default level, 17 of 196 at
//! the high level when this was written).
//! Run: `QPL_DIR=/opt/qpl cargo test -p cannery-engines --features qpl --test
//! qpl_target -- --nocapture`.

#![cfg(feature = "qpl")]

mod common;

use cannery_codec::decode::CannedDecoder;
use cannery_codec::Table;
use cannery_engines::backend::qpl::{
    gather_page_statistics, qpl_loadable_default_table, Qpl, QplLevel, QplParser,
};
use cannery_engines::backend::LibraryCounts;

#[test]
fn the_compressor_parses_alike_under_any_table() {
    let pages: Vec<Vec<u8>> = common::corpus_pages(40, 37)
        .into_iter()
        .filter(|d| d.iter().any(|&b| b != d[0]))
        .collect();
    assert!(pages.len() >= 100, "{} pages", pages.len());
    let mut q = Qpl::open_software().unwrap();
    for level in [QplLevel::Default, QplLevel::High] {
        let stats: Vec<LibraryCounts> = pages
            .iter()
            .map(|p| gather_page_statistics(p, level).unwrap())
            .collect();
        let mut total = LibraryCounts::zero();
        stats.iter().for_each(|s| total.add(s));
        // Two very different tables: QPL's own from these pages, and a
        // fixed-code-like one.
        let trained = q.trained_table(&total).unwrap();
        let l = q.table_lengths(&trained).unwrap();
        let trained_lengths = Table::from_lengths(&l.litlen, &l.dist).unwrap();
        let other = qpl_loadable_default_table();
        let other_q = q.loaded_table(&other).unwrap();
        let mut parser = QplParser::new(level).unwrap();
        let (mut compared, mut same_parse, mut same_stats) = (0, 0, 0);
        for (p, s) in pages.iter().zip(&stats) {
            let (Some(a), Some(b)) = (
                q.canned_stream(&trained, level, p).unwrap(),
                q.canned_stream(&other_q, level, p).unwrap(),
            ) else {
                continue;
            };
            let ta = CannedDecoder::new(&trained_lengths)
                .tokens(&a, 4096)
                .unwrap();
            let tb = CannedDecoder::new(&other).tokens(&b, 4096).unwrap();
            let mut back = Vec::new();
            cannery_codec::token::expand(&ta, &mut back).unwrap();
            assert_eq!(&back, p);
            compared += 1;
            same_parse += usize::from(ta == tb);
            let emitted = LibraryCounts::of_tokens(&ta);
            assert_eq!(parser.count(p).unwrap(), emitted, "{level:?}");
            same_stats += usize::from(&emitted == s);
        }
        eprintln!(
            "{level:?}: {compared} pages; same tokens under two tables: {same_parse}; \
             qpl_gather_deflate_statistics equal to the compressor's symbols: {same_stats}"
        );
        assert!(compared >= 100);
        assert_eq!(same_parse, compared, "{level:?}");
    }
}
