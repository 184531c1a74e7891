//! LZ77 match finding within one page (at most 4096 bytes, so every earlier
//! byte of the page is inside IAA's 4 KiB window; nothing crosses pages).
//!
//! Three named levels share one hash-chain match finder:
//! - [`Level::Fast`]: greedy, short chains: IAA-like speed; the trainer's
//!   `iaa` parse.
//! - [`Level::Default`]: lazy matching (a match is deferred when the next
//!   position has a longer one), longer chains.
//! - [`Level::Best`]: a cost-aware parse: shortest path over all positions,
//!   pricing every literal and match with the code lengths of the table in
//!   use ([`Costs`]), so it adapts to the table and avoids symbols the table
//!   cannot code.
//!
//! This module produces tokens only; coding them is [`crate::encode`]'s job.

use crate::constants::{MAX_MATCH, MIN_MATCH, NUM_DIST, NUM_LITLEN, PAGE_SIZE};
use crate::table::CodeLengths;
use crate::token::{dist_extra, dist_symbol, length_extra, length_symbol, Token};

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

/// Bit costs of every symbol under some code, for [`Level::Best`].
#[derive(Clone, Debug)]
pub struct Costs {
    /// Bits of each literal/length symbol; uncoded symbols cost [`Costs::FORBIDDEN`].
    pub litlen: [u32; NUM_LITLEN],
    /// Bits of each distance symbol; uncoded symbols cost [`Costs::FORBIDDEN`].
    pub dist: [u32; NUM_DIST],
}

impl Costs {
    /// Cost of a symbol that has no code: large enough that no parse uses it
    /// while any alternative exists.
    pub const FORBIDDEN: u32 = 1 << 20;

    /// Costs from code lengths (length 0 = forbidden).
    pub fn from_lengths(l: &CodeLengths) -> Costs {
        let f = |x: &u8| if *x == 0 { Costs::FORBIDDEN } else { *x as u32 };
        Costs {
            litlen: std::array::from_fn(|i| f(&l.litlen[i])),
            dist: std::array::from_fn(|i| f(&l.dist[i])),
        }
    }

    #[inline]
    fn literal(&self, b: u8) -> u32 {
        self.litlen[b as usize]
    }

    #[inline]
    fn length(&self, len: usize) -> u32 {
        let sym = length_symbol(len as u16) as usize;
        self.litlen[sym] + length_extra(len as u16).0 as u32
    }

    #[inline]
    fn distance(&self, d: usize) -> u32 {
        self.dist[dist_symbol(d as u16) as usize] + dist_extra(d as u16).0 as u32
    }
}

const HASH_BITS: u32 = 12;
const HASH_SIZE: usize = 1 << HASH_BITS;
/// Chain links are positions + 1; 0 ends a chain.
const NIL: u16 = 0;
/// Zero bytes after the page in the finder's buffer, so 4- and 8-byte loads
/// near the end stay in bounds.
const PAD: usize = 16;

/// Chain depth and the length at which a match is good enough to stop looking.
struct Search {
    max_chain: usize,
    nice: usize,
}

impl Level {
    fn search(self) -> Search {
        match self {
            Level::Fast => Search {
                max_chain: 8,
                nice: 32,
            },
            Level::Default => Search {
                max_chain: 64,
                nice: 128,
            },
            Level::Best => Search {
                max_chain: 256,
                nice: MAX_MATCH,
            },
        }
    }
}

/// A reusable hash-chain match finder; keeps its buffers between pages.
pub struct MatchFinder {
    /// The page, followed by `PAD` zero bytes.
    buf: Box<[u8; PAGE_SIZE + PAD]>,
    /// Bytes of `buf` that are the page.
    len: usize,
    head: Box<[u16; HASH_SIZE]>,
    prev: Box<[u16; PAGE_SIZE]>,
    /// Best-level scratch: cost to reach each position, and how.
    cost: Vec<u32>,
    step: Vec<(u16, u16)>,
    candidates: Vec<(u16, u16)>,
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
            buf: Box::new([0; PAGE_SIZE + PAD]),
            len: 0,
            head: Box::new([NIL; HASH_SIZE]),
            prev: Box::new([NIL; PAGE_SIZE]),
            cost: Vec::new(),
            step: Vec::new(),
            candidates: Vec::new(),
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
        assert!(page.len() <= PAGE_SIZE, "a page is at most 4096 bytes");
        tokens.clear();
        self.head.fill(NIL);
        self.buf[..page.len()].copy_from_slice(page);
        self.buf[page.len()..page.len() + PAD].fill(0);
        self.len = page.len();
        match level {
            Level::Fast => self.parse_greedy(tokens),
            Level::Default => self.parse_lazy(tokens),
            Level::Best => match costs {
                Some(c) => self.parse_best(c, tokens),
                None => {
                    let fixed = Costs::from_lengths(crate::Table::fixed().lengths());
                    self.parse_best(&fixed, tokens)
                }
            },
        }
    }

    /// The 4 bytes at `i` (zero past the page), little-endian.
    #[inline]
    fn load4(&self, i: usize) -> u32 {
        u32::from_le_bytes(self.buf[i..i + 4].try_into().expect("4 bytes"))
    }

    /// Hash of the 3 bytes at `i`.
    #[inline]
    fn hash(&self, i: usize) -> usize {
        ((self.load4(i) & 0x00ff_ffff).wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
    }

    /// Adds position `i` (with hash `h`) to its chain.
    #[inline]
    fn insert(&mut self, i: usize, h: usize) {
        self.prev[i] = self.head[h];
        self.head[h] = (i + 1) as u16;
    }

    /// Adds position `i` to its chain if 3 bytes start there.
    #[inline]
    fn insert_at(&mut self, i: usize) {
        if i + MIN_MATCH <= self.len {
            let h = self.hash(i);
            self.insert(i, h);
        }
    }

    /// Length of the common prefix at `a` and `b` (a < b), up to `max`.
    #[inline]
    fn common_len(&self, a: usize, b: usize, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let x = u64::from_le_bytes(self.buf[a + n..a + n + 8].try_into().expect("8 bytes"));
            let y = u64::from_le_bytes(self.buf[b + n..b + n + 8].try_into().expect("8 bytes"));
            let diff = x ^ y;
            if diff != 0 {
                return (n + (diff.trailing_zeros() / 8) as usize).min(max);
            }
            n += 8;
        }
        max
    }

    /// Longest match at `i` along the chain starting at `link` (the chain of
    /// `i`'s hash before `i` is inserted). Returns (length, distance), length
    /// 0 if none reaches 3.
    #[inline]
    fn longest(&self, i: usize, mut link: u16, s: &Search) -> (usize, usize) {
        let max = (self.len - i).min(MAX_MATCH);
        if max < MIN_MATCH {
            return (0, 0);
        }
        let nice = s.nice.min(max);
        let here = self.load4(i);
        let mut best = (0, 0);
        let mut depth = 0;
        while link != NIL && depth < s.max_chain {
            let j = link as usize - 1;
            // Cheap rejects: the first three bytes, then the byte that
            // would extend the best match so far.
            if (self.load4(j) ^ here) & 0x00ff_ffff == 0
                && (best.0 < MIN_MATCH || self.buf[j + best.0] == self.buf[i + best.0])
            {
                let n = self.common_len(j, i, max);
                if n > best.0 {
                    best = (n, i - j);
                    if n >= nice {
                        break;
                    }
                }
            }
            link = self.prev[j];
            depth += 1;
        }
        if best.0 >= MIN_MATCH {
            best
        } else {
            (0, 0)
        }
    }

    /// Longest match at `i`, inserting `i` into its chain.
    #[inline]
    fn find_and_insert(&mut self, i: usize, s: &Search) -> (usize, usize) {
        if i + MIN_MATCH > self.len {
            return (0, 0);
        }
        let h = self.hash(i);
        let link = self.head[h];
        self.insert(i, h);
        self.longest(i, link, s)
    }

    fn parse_greedy(&mut self, tokens: &mut Vec<Token>) {
        let s = Level::Fast.search();
        let mut i = 0;
        while i < self.len {
            let (len, dist) = self.find_and_insert(i, &s);
            if len >= MIN_MATCH {
                tokens.push(Token::Match {
                    length: len as u16,
                    distance: dist as u16,
                });
                for k in i + 1..i + len {
                    self.insert_at(k);
                }
                i += len;
            } else {
                tokens.push(Token::Literal(self.buf[i]));
                i += 1;
            }
        }
    }

    fn parse_lazy(&mut self, tokens: &mut Vec<Token>) {
        let s = Level::Default.search();
        let mut i = 0;
        let mut cur = self.find_and_insert(0, &s);
        while i < self.len {
            if cur.0 < MIN_MATCH {
                tokens.push(Token::Literal(self.buf[i]));
                i += 1;
                cur = self.find_and_insert(i, &s);
                continue;
            }
            // Defer if the next position starts a longer match.
            let next = if cur.0 < s.nice {
                self.find_and_insert(i + 1, &s)
            } else {
                (0, 0)
            };
            if next.0 > cur.0 {
                tokens.push(Token::Literal(self.buf[i]));
                i += 1;
                cur = next;
                continue;
            }
            tokens.push(Token::Match {
                length: cur.0 as u16,
                distance: cur.1 as u16,
            });
            // i + 1 was inserted while looking ahead, unless the match was nice.
            let first = if cur.0 < s.nice { i + 2 } else { i + 1 };
            for k in first..i + cur.0 {
                self.insert_at(k);
            }
            i += cur.0;
            cur = self.find_and_insert(i, &s);
        }
    }

    /// Shortest path from position 0 to the end, where each edge is a literal
    /// or a match priced by `costs`.
    fn parse_best(&mut self, costs: &Costs, tokens: &mut Vec<Token>) {
        let s = Level::Best.search();
        let n = self.len;
        self.cost.clear();
        self.cost.resize(n + 1, u32::MAX);
        self.step.clear();
        self.step.resize(n + 1, (0, 0));
        self.cost[0] = 0;
        for i in 0..n {
            // Candidate matches at i: for each new longest length, the
            // nearest (cheapest-distance) position reaching it.
            self.candidates.clear();
            if i + MIN_MATCH <= n {
                let max = (n - i).min(MAX_MATCH);
                let h = self.hash(i);
                let mut link = self.head[h];
                self.insert(i, h);
                let here = self.load4(i);
                let mut best_len = MIN_MATCH - 1;
                let mut depth = 0;
                while link != NIL && depth < s.max_chain {
                    let j = link as usize - 1;
                    if (self.load4(j) ^ here) & 0x00ff_ffff == 0
                        && self.buf[j + best_len] == self.buf[i + best_len]
                    {
                        let len = self.common_len(j, i, max);
                        if len > best_len {
                            best_len = len;
                            self.candidates.push((len as u16, (i - j) as u16));
                            if len >= max {
                                break;
                            }
                        }
                    }
                    link = self.prev[j];
                    depth += 1;
                }
            }
            let base = self.cost[i];
            if base == u32::MAX {
                continue;
            }
            let lit = base.saturating_add(costs.literal(self.buf[i]));
            if lit < self.cost[i + 1] {
                self.cost[i + 1] = lit;
                self.step[i + 1] = (1, 0);
            }
            let mut from_len = MIN_MATCH;
            for &(len, dist) in &self.candidates {
                let dcost = base.saturating_add(costs.distance(dist as usize));
                for l in from_len..=len as usize {
                    let c = dcost.saturating_add(costs.length(l));
                    if c < self.cost[i + l] {
                        self.cost[i + l] = c;
                        self.step[i + l] = (l as u16, dist);
                    }
                }
                from_len = len as usize + 1;
            }
        }
        // Walk back from the end, then emit in order.
        let mut i = n;
        let start = tokens.len();
        while i > 0 {
            let (len, dist) = self.step[i];
            if dist == 0 {
                tokens.push(Token::Literal(self.buf[i - 1]));
                i -= 1;
            } else {
                tokens.push(Token::Match {
                    length: len,
                    distance: dist,
                });
                i -= len as usize;
            }
        }
        tokens[start..].reverse();
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
    fn runs_and_patterns() {
        check(&[0u8; 4096]);
        check(&[7u8; 4095]);
        check(b"abcabcabcabcabcabcxyzabcab");
        check(&(0..4096).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        check(b"");
        check(b"ab");
    }

    #[test]
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

    #[test]
    fn best_avoids_uncoded_symbols() {
        // A table whose length-3 symbol (257) and distance symbol 0 have no code.
        let mut l = *crate::Table::kernel_2024().lengths();
        l.litlen[257] = 0;
        let costs = Costs::from_lengths(&l);
        let page = b"aaaaaaaaaaaaaaaaaaaaxyzxyzqqqxyz".repeat(20);
        let mut mf = MatchFinder::new();
        let mut toks = Vec::new();
        mf.parse(&page, Level::Best, Some(&costs), &mut toks);
        assert!(toks
            .iter()
            .all(|t| !matches!(t, Token::Match { length: 3, .. })));
    }

    proptest! {
        #[test]
        fn every_level_round_trips(page in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..4096)) {
            check(&page);
        }
    }
}
