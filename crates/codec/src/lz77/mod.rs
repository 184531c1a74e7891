//! LZ77 match finding within one page (at most 4096 bytes, so every earlier
//! byte of the page is inside IAA's 4 KiB window; nothing crosses pages).
//!
//! Three named levels (Fast and Default walk hash chains; Best walks binary
//! trees):
//! - [`Level::Fast`]: greedy, short chains: IAA-like speed; the trainer's
//!   `iaa` parse.
//! - [`Level::Default`]: lazy matching (a match is deferred when the next
//!   position has a longer one), longer chains.
//! - [`Level::Best`]: a cost-aware parse: shortest path over all positions,
//!   pricing every literal and match with the code lengths of the table in
//!   use ([`Costs`]), so it adapts to the table and avoids symbols the table
//!   cannot code. Its matches come from binary trees (libdeflate's
//!   `bt_matchfinder`) instead of the chains; inside a match of the nice
//!   length or more it only offers that match's end and the full length of
//!   the matches found there, which keeps its work linear in long runs.
//!
//! A parse hands its tokens to a [`TokenSink`]: a `Vec<Token>`, a symbol
//! counter (the trainer's statistics need no token buffer), or the
//! encoder's code writer (fixed and canned pages are coded as they parse).
//!
//! Files: this one holds the tunables, the sinks, the levels and the
//! [`MatchFinder`] front door; `hash_chains.rs` the Fast and Default
//! parses; `bt.rs` the binary trees; `optimal.rs` [`Costs`] and Best's
//! shortest path.
//!
//! This module produces tokens only; coding them is [`crate::encode`]'s job.

use crate::constants::{MAX_MATCH, MIN_MATCH, PAGE_SIZE, WINDOW_SIZE};
use crate::token::Token;

mod bt;
mod hash_chains;
mod optimal;

pub use optimal::Costs;

// Tunables. Changing any of them changes the tokens, so the golden streams
// (`tests/golden*`) and the reference parses in the tests change with them.

// Window: the whole page. A page is never longer than IAA's window, so every
// earlier byte of the page is a legal distance and the finder needs no window
// limit of its own.
const _: () = assert!(PAGE_SIZE <= WINDOW_SIZE);

/// Bits of the hash of the 3 bytes at a position: one chain (or tree) head
/// per hash value, as many heads as a page has positions.
const HASH_BITS: u32 = 12;
const HASH_SIZE: usize = 1 << HASH_BITS;
// `hash3` keeps the top `HASH_BITS` bits of a 32-bit product.
const _: () = assert!(HASH_BITS >= 1 && HASH_BITS < 32);

/// [`Level::Fast`]: chain links walked per position (the newest first).
const FAST_CHAIN_DEPTH: usize = 8;
/// [`Level::Fast`]: the match length at which the walk stops looking.
const FAST_NICE: usize = 32;
/// [`Level::Default`]: chain links walked per position.
const DEFAULT_CHAIN_DEPTH: usize = 64;
/// [`Level::Default`]: the match length that is taken at once, without
/// looking at the next position for a longer one.
const DEFAULT_NICE: usize = 128;
/// [`Level::Best`]: binary-tree nodes visited per position.
const BEST_TREE_DEPTH: usize = 32;
/// [`Level::Best`]: the match length that ends a tree walk and is taken
/// without searching the positions inside it.
const BEST_NICE: usize = 128;

// The chain walk counts its links down and stops at zero (Default's four at
// a time), and a tree walk of no nodes finds nothing: every depth is at
// least 1, Default's a multiple of 4. Fast is the cheap level:
// it walks no deeper and stops no later than Default.
const _: () = assert!(FAST_CHAIN_DEPTH >= 1 && FAST_CHAIN_DEPTH <= DEFAULT_CHAIN_DEPTH);
const _: () = assert!(DEFAULT_CHAIN_DEPTH % 4 == 0);
const _: () = assert!(BEST_TREE_DEPTH >= 1);
// A nice length is a match length: MIN_MATCH..=MAX_MATCH.
const _: () = assert!(MIN_MATCH <= FAST_NICE && FAST_NICE <= DEFAULT_NICE);
const _: () = assert!(DEFAULT_NICE <= MAX_MATCH);
const _: () = assert!(MIN_MATCH <= BEST_NICE && BEST_NICE <= MAX_MATCH);

/// Chain and tree links are positions + 1; 0 ends a chain.
const NIL: u16 = 0;
// Positions + 1 and distances fit a link (u16); the chain, tree and buffer
// masks below need a power of two.
const _: () = assert!(PAGE_SIZE <= u16::MAX as usize);
const _: () = assert!(PAGE_SIZE.is_power_of_two());

/// Zero bytes after the page in the finder's buffer, so 4- and 8-byte loads
/// near the end stay in bounds.
const PAD: usize = 16;
/// Length of the finder's buffer: a power of two above `PAGE_SIZE + PAD`,
/// plus 8, so that an index masked with [`INDEX_MASK`] and 8 bytes past it
/// are always inside: hot loads are masked instead of bounds-checked. (No
/// index ever reaches `PAGE_SIZE + PAD`; the mask changes none.)
const BUF_LEN: usize = 2 * PAGE_SIZE + 8;
const INDEX_MASK: usize = 2 * PAGE_SIZE - 1;
// An 8-byte load at the page's last byte reads 7 bytes past it.
const _: () = assert!(PAD >= 7);
// The mask changes no index a load can reach, and keeps 8 bytes in the buffer.
const _: () = assert!((INDEX_MASK + 1).is_power_of_two());
const _: () = assert!(PAGE_SIZE + PAD <= INDEX_MASK + 1);
const _: () = assert!(INDEX_MASK + 8 <= BUF_LEN);

/// Length of [`MatchFinder::win`]: any link, plus any offset into a match
/// (`u8`), plus the 4 bytes a cheap reject loads.
const WIN_LEN: usize = u8::MAX as usize + WIN_SPAN;
/// Bytes of `win` a cheap reject indexes by link: any link, and the 4
/// bytes loaded.
const WIN_SPAN: usize = u16::MAX as usize + 4;
// A cheap reject's offset is below a match's length: it fits a u8.
const _: () = assert!(MAX_MATCH - MIN_MATCH <= u8::MAX as usize);
const _: () = assert!(PAGE_SIZE + 1 + PAD <= WIN_LEN);

/// Where a parse puts its tokens: a `Vec<Token>`, or a consumer that needs
/// no token buffer at all (the trainer's symbol counts, the encoder's code
/// writer).
pub trait TokenSink {
    /// A literal byte.
    fn literal(&mut self, byte: u8);
    /// A match of `length` (3..=258) bytes at `distance` (1..=4096).
    fn copy(&mut self, length: u16, distance: u16);
}

impl TokenSink for Vec<Token> {
    #[inline]
    fn literal(&mut self, byte: u8) {
        self.push(Token::Literal(byte));
    }

    #[inline]
    fn copy(&mut self, length: u16, distance: u16) {
        self.push(Token::Match { length, distance });
    }
}

/// Hands `tokens` to `sink` in order.
pub fn feed<S: TokenSink>(tokens: &[Token], sink: &mut S) {
    for t in tokens {
        match *t {
            Token::Literal(b) => sink.literal(b),
            Token::Match { length, distance } => sink.copy(length, distance),
        }
    }
}

/// How hard the match finder works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Greedy, short hash chains.
    Fast,
    /// Lazy matching, longer chains.
    Default,
    /// Cost-aware shortest-path parse with the table's code lengths.
    Best,
}

impl Level {
    /// All levels, fastest first.
    pub const ALL: [Level; 3] = [Level::Fast, Level::Default, Level::Best];

    /// The level's CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Fast => "fast",
            Level::Default => "default",
            Level::Best => "best",
        }
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fast" => Ok(Level::Fast),
            "default" => Ok(Level::Default),
            "best" => Ok(Level::Best),
            _ => Err(format!(
                "unknown level {s:?} (expected fast, default or best)"
            )),
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Hash of the low 3 bytes of `v` (the 3 bytes at a position, little-endian).
#[inline]
fn hash3(v: u32) -> usize {
    ((v & 0x00ff_ffff).wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

/// A reusable match finder (hash chains for Fast and Default, binary trees
/// for Best); keeps its buffers between pages.
pub struct MatchFinder {
    /// The page, followed by `PAD` zero bytes.
    buf: Box<[u8; BUF_LEN]>,
    /// Bytes of `buf` that are the page.
    len: usize,
    /// The page again, one byte later (`win[l]` is the byte at link `l`:
    /// position `l - 1`), followed by `PAD` zero bytes: the chain walks'
    /// cheap rejects load from it by link, in bounds whatever the link.
    win: Box<[u8; WIN_LEN]>,
    head: Box<[u16; HASH_SIZE]>,
    /// Default's chain links by link: `prev[l]` holds the link that follows
    /// link `l` (position `l - 1`) in its chain (low 16 bits) and the three
    /// after that (higher 16-bit fields, 0 past the end). Indexed by the
    /// link itself, so a chain walk loads the next links straight from the
    /// last one: one load per four links on its dependent path. `prev[0]`
    /// stays 0: NIL is followed by NIL.
    prev: Box<[u64; PAGE_SIZE + 1]>,
    /// Fast's chain links by link: `prev16[l]` is the link after link `l`
    /// (a quarter of `prev`'s size: Fast's tables stay in the L1 cache).
    /// `prev16[0]` stays NIL.
    prev16: Box<[u16; PAGE_SIZE + 1]>,
    /// Best-level scratch: cost to reach each position, and how.
    cost: Vec<u32>,
    step: Vec<(u16, u16)>,
    candidates: Vec<(u16, u16)>,
    /// Best-level binary trees: the lesser and the greater child of each
    /// position (at `2 * i` and `2 * i + 1`), as positions + 1.
    kids: Box<[u16; 2 * PAGE_SIZE]>,
    /// Best-level tokens, found back to front, before they go to the sink.
    best_tokens: Vec<Token>,
}

impl Default for MatchFinder {
    fn default() -> Self {
        MatchFinder::new()
    }
}

impl std::fmt::Debug for MatchFinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MatchFinder")
    }
}

impl MatchFinder {
    /// A finder with empty chains.
    pub fn new() -> Self {
        MatchFinder {
            buf: Box::new([0; BUF_LEN]),
            win: Box::new([0; WIN_LEN]),
            len: 0,
            head: Box::new([NIL; HASH_SIZE]),
            prev: Box::new([0; PAGE_SIZE + 1]),
            prev16: Box::new([NIL; PAGE_SIZE + 1]),
            cost: Vec::new(),
            step: Vec::new(),
            candidates: Vec::new(),
            kids: Box::new([NIL; 2 * PAGE_SIZE]),
            best_tokens: Vec::new(),
        }
    }

    /// Parses `page` (at most 4096 bytes) into `tokens` (cleared first).
    ///
    /// `costs` prices symbols for [`Level::Best`]; without it, Best prices
    /// with the RFC fixed code's lengths. Fast and Default ignore it.
    ///
    /// # Panics
    /// If `page` is longer than 4096 bytes.
    pub fn parse(
        &mut self,
        page: &[u8],
        level: Level,
        costs: Option<&Costs>,
        tokens: &mut Vec<Token>,
    ) {
        tokens.clear();
        self.parse_into(page, level, costs, tokens);
    }

    /// Parses `page` (at most 4096 bytes), handing its tokens in order to
    /// `sink`: [`MatchFinder::parse`] without a token buffer. The end of
    /// block is not a token; the sink adds it if it counts one.
    ///
    /// # Panics
    /// If `page` is longer than 4096 bytes.
    pub fn parse_into<S: TokenSink>(
        &mut self,
        page: &[u8],
        level: Level,
        costs: Option<&Costs>,
        sink: &mut S,
    ) {
        assert!(page.len() <= PAGE_SIZE, "a page is at most 4096 bytes");
        self.buf[..page.len()].copy_from_slice(page);
        self.buf[page.len()..page.len() + PAD].fill(0);
        self.len = page.len();
        self.head.fill(NIL);
        match level {
            Level::Fast => self.parse_greedy(sink),
            Level::Default => self.parse_lazy(sink),
            Level::Best => {
                let fixed;
                let costs = match costs {
                    Some(c) => c,
                    None => {
                        fixed = Costs::from_lengths(crate::Table::fixed().lengths());
                        &fixed
                    }
                };
                let mut tokens = std::mem::take(&mut self.best_tokens);
                tokens.clear();
                self.parse_best(costs, &mut tokens);
                feed(&tokens, sink);
                self.best_tokens = tokens;
            }
        }
    }

    /// The 4 bytes at `i` (zero past the page), little-endian.
    #[inline]
    fn load4(&self, i: usize) -> u32 {
        let i = i & INDEX_MASK;
        u32::from_le_bytes(self.buf[i..i + 4].try_into().expect("4 bytes"))
    }

    /// Hash of the 3 bytes at `i`.
    #[inline]
    fn hash(&self, i: usize) -> usize {
        hash3(self.load4(i))
    }

    /// The 8 bytes at `i`, little-endian.
    #[inline]
    fn load8(&self, i: usize) -> u64 {
        let i = i & INDEX_MASK;
        u64::from_le_bytes(self.buf[i..i + 8].try_into().expect("8 bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::expand;
    use proptest::prelude::*;

    fn check(page: &[u8]) {
        let mut mf = MatchFinder::new();
        let mut toks = Vec::new();
        for level in Level::ALL {
            mf.parse(page, level, None, &mut toks);
            let mut out = Vec::new();
            expand(&toks, &mut out).expect("valid distances");
            assert_eq!(out, page, "level {level}");
            for t in &toks {
                if let Token::Match { length, distance } = *t {
                    assert!((3..=258).contains(&length) && (1..=4096).contains(&distance));
                }
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "whole pages at every level are too slow under Miri")]
    fn runs_and_patterns() {
        check(&[0u8; 4096]);
        check(&[7u8; 4095]);
        check(b"abcabcabcabcabcabcxyzabcab");
        check(&(0..4096).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        check(b"");
        check(b"ab");
    }

    #[test]
    #[cfg_attr(miri, ignore = "whole pages at every level are too slow under Miri")]
    fn levels_find_real_matches() {
        let page: Vec<u8> = b"The quick brown fox jumps over the lazy dog. "
            .iter()
            .cycle()
            .take(4096)
            .copied()
            .collect();
        let mut mf = MatchFinder::new();
        let mut toks = Vec::new();
        for level in Level::ALL {
            mf.parse(&page, level, None, &mut toks);
            assert!(toks.len() < 100, "{level}: {} tokens", toks.len());
        }
    }

    /// A page built of pieces: random bytes of a small alphabet, periodic
    /// runs, and copies of earlier bytes with one byte changed: the long,
    /// overlapping, nearly equal matches a chain walk meets in memory pages.
    pub(super) fn structured_page(pieces: &[(u8, usize, usize, u64)]) -> Vec<u8> {
        let mut page: Vec<u8> = Vec::new();
        for &(kind, p, len, seed) in pieces {
            let mut rng = crate::rng::XorShift64::new(seed | 1);
            let mut next = move || rng.next_u64();
            match kind {
                0 => page.extend((0..len).map(|_| (next() % 4) as u8)),
                1 => {
                    let unit: Vec<u8> = (0..p).map(|_| (next() % 3) as u8).collect();
                    page.extend(unit.iter().cycle().take(len));
                }
                _ if !page.is_empty() => {
                    let from = (next() as usize) % page.len();
                    let copy: Vec<u8> = page[from..].iter().take(len).copied().collect();
                    page.extend(copy);
                    let at = (next() as usize) % page.len();
                    page[at] ^= 1;
                }
                _ => {}
            }
        }
        page.truncate(PAGE_SIZE);
        page
    }

    proptest! {
        #[test]
        #[cfg_attr(miri, ignore)]
        fn every_level_round_trips(page in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..4096)) {
            check(&page);
        }
    }
}
