//! Table validation from raw code lengths: `Table::from_lengths` either
//! refuses for a true reason or returns a table whose codes are prefix-free
//! and canonical, whose header reads back to the same lengths, and whose
//! IAA verdict agrees with its violations list.
#![no_main]

use cannery_codec::decode::read_block_header;
use cannery_codec::huffman::kraft_sum;
use cannery_codec::table::Alphabet;
use cannery_codec::{Table, TableError};
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

#[path = "common.rs"]
mod common;

/// Length sets remembered; past this, the set starts over.
const SEEN_CAP: usize = 1 << 16;

thread_local! {
    /// Length sets already checked: the checks depend on the lengths
    /// alone, and most mutations change bytes past the 316th or give the
    /// same lengths mod 16, so they would check the same table again.
    static SEEN: RefCell<common::Seen> = RefCell::new(common::Seen::new(SEEN_CAP));
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 316 {
        return;
    }
    // Mostly small lengths, sometimes out of range.
    let lens: Vec<u8> = data[..316]
        .iter()
        .map(|&b| if b >= 0xf0 { b } else { b % 16 })
        .collect();
    if !SEEN.with_borrow_mut(|seen| seen.first_time(&lens)) {
        return;
    }
    let (ll, d) = lens.split_at(286);
    match Table::from_lengths(ll, d) {
        // Literal/length lengths are checked before distance lengths, so an
        // error names the first alphabet that is wrong.
        Err(TableError::LengthTooLong {
            alphabet,
            symbol,
            length,
        }) => {
            let l = if alphabet == Alphabet::LitLen { ll } else { d };
            assert!(length > 15 && l[symbol] == length);
            assert!(l[..symbol].iter().all(|&x| x <= 15));
        }
        Err(TableError::OverSubscribed { alphabet, kraft }) => {
            let l = if alphabet == Alphabet::LitLen { ll } else { d };
            assert!(l.iter().all(|&x| x <= 15));
            assert_eq!(kraft, kraft_sum(l));
            assert!(kraft > 1 << 15);
        }
        Err(TableError::NoEndOfBlock) => assert_eq!(ll[256], 0),
        Err(e) => panic!("unexpected error {e}"),
        Ok(t) => {
            assert!(kraft_sum(ll) <= 1 << 15 && kraft_sum(d) <= 1 << 15);
            // Codes are prefix-free: no code is a prefix of another. Each
            // code walks a binary trie from the root, one node per bit; a
            // walk that passes another code's end, or ends where another
            // ended or passed, finds a prefix (the pairwise check, in about
            // 15 steps a code).
            let mut child: Vec<[usize; 2]> = vec![[0, 0]];
            let mut ends = vec![false];
            for s in (0..286).filter(|&s| ll[s] > 0) {
                let (code, len) = (t.litlen_codes()[s], ll[s]);
                assert_eq!(
                    u32::from(code) >> len,
                    0,
                    "symbol {s}'s code is longer than {len} bits"
                );
                let mut node = 0;
                for bit in (0..len).rev().map(|b| usize::from(code >> b & 1)) {
                    assert!(!ends[node], "a code is a prefix of symbol {s}'s");
                    if child[node][bit] == 0 {
                        child[node][bit] = child.len();
                        child.push([0, 0]);
                        ends.push(false);
                    }
                    node = child[node][bit];
                }
                assert!(!ends[node], "symbol {s}'s code is another's");
                assert_eq!(child[node], [0, 0], "symbol {s}'s code is a prefix");
                ends[node] = true;
            }
            // Every table's header reads back to its lengths, incomplete
            // codes included (the kernel's 2024 table is one).
            let h = read_block_header(&t.header().bytes).expect("own header parses");
            assert_eq!(&h.litlen[..286], ll);
            assert_eq!(&h.dist[..30], d);
            assert_eq!(h.bits, t.header().bits);
            assert!(!h.crosses_boundary);
            assert_eq!(t.check_iaa().is_ok(), t.iaa_violations().is_empty());
        }
    }
});
