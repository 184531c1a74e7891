//! ISA-L as a training target (feature `isal`, Debian's libisal-dev): on
//! pages of the shipped corpus, ISA-L's level-0 compressor parses a page
//! the same way whatever table it is given (so the symbols it emits are a
//! table-independent statistic to train on), and `isal_update_histogram`'s
//! counts are compared with those symbols.
//! Run: `cargo test -p cannery-engines --features isal --test isal_target -- --nocapture`.

#![cfg(feature = "isal")]

use std::path::Path;

use cannery_codec::decode::inflate_blocks;
use cannery_codec::token::Token;
use cannery_codec::Table;
use cannery_engines::backend::LibraryCounts;
use cannery_engines::isal::{compressor_counts, update_histogram, Hufftables};

/// Every `step`-th page of each workload, up to `per_workload` pages,
/// same-filled ones left out.
fn corpus_pages(per_workload: usize, step: usize) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fleet-snapshots");
    let corpus = cannery_capture::Corpus::open(&dir).expect("the shipped corpus");
    let (pages, _) = corpus
        .read_pages_every(step, Some(per_workload))
        .expect("workload pages");
    pages
        .into_iter()
        .filter(|d| d.iter().any(|&b| b != d[0]))
        .collect()
}

fn tokens(t: &Hufftables, page: &[u8]) -> Vec<Token> {
    let s = t.compress(page).unwrap();
    let blocks = inflate_blocks(&s, 4096).unwrap();
    blocks.into_iter().flat_map(|b| b.tokens).collect()
}

#[test]
fn the_level_0_parse_does_not_depend_on_the_table() {
    let pages = corpus_pages(40, 37);
    assert!(pages.len() >= 100, "{} pages", pages.len());
    let mut total = LibraryCounts::zero();
    pages.iter().for_each(|p| total.add(&update_histogram(p)));
    let own = Hufftables::trained(&total).unwrap();
    let fixed = Hufftables::exported(&Table::fixed()).unwrap();
    let (mut same_parse, mut same_stats) = (0, 0);
    for p in &pages {
        let a = tokens(&own, p);
        let mut back = Vec::new();
        cannery_codec::token::expand(&a, &mut back).unwrap();
        assert_eq!(&back, p);
        same_parse += usize::from(a == tokens(&fixed, p));
        let emitted = LibraryCounts::of_tokens(&a);
        assert_eq!(compressor_counts(&fixed, p).unwrap(), emitted);
        same_stats += usize::from(emitted == update_histogram(p));
    }
    eprintln!(
        "{} pages: same tokens under two tables {same_parse}, isal_update_histogram equal to \
         the compressor's symbols {same_stats}",
        pages.len()
    );
    assert_eq!(same_parse, pages.len());
}
