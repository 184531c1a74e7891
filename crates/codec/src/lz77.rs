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
//!   `bt_matchfinder`, 32 nodes deep) instead of the chains; inside a match
//!   of 128 bytes or more it only offers that match's end and the full
//!   length of the matches found there. Against the former 256-deep chain
//!   walk that priced every length everywhere: 3.7x fewer instructions, and
//!   0.1 % smaller Best output on the shipped corpus.
//!
//! A parse hands its tokens to a [`TokenSink`]: a `Vec<Token>`, or a
//! symbol counter (the trainer's statistics need no token buffer).
//!
//! This module produces tokens only; coding them is [`crate::encode`]'s job.

use crate::constants::{MAX_MATCH, MIN_MATCH, NUM_DIST, NUM_LITLEN, PAGE_SIZE};
use crate::table::CodeLengths;
use crate::token::{dist_extra, dist_symbol, length_extra, length_symbol, Token};

/// Where a parse puts its tokens: a `Vec<Token>`, or a consumer that only
/// counts symbols (the trainer's statistics), which then needs no token
/// buffer at all.
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
/// Length of the finder's buffer: a power of two above `PAGE_SIZE + PAD`,
/// plus 8, so that an index masked with [`INDEX_MASK`] and 8 bytes past it
/// are always inside: hot loads are masked instead of bounds-checked. (No
/// index ever reaches `PAGE_SIZE + PAD`; the mask changes none.)
const BUF_LEN: usize = 2 * PAGE_SIZE + 8;
const INDEX_MASK: usize = 2 * PAGE_SIZE - 1;

/// Length at which [`Level::Fast`] stops looking for a longer match.
const FAST_NICE: usize = 32;

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
                nice: FAST_NICE,
            },
            Level::Default => Search {
                max_chain: 64,
                nice: 128,
            },
            // Best: nodes visited per binary-tree search, and the length
            // whose match is taken without searching the positions inside.
            Level::Best => Search {
                max_chain: 32,
                nice: 128,
            },
        }
    }
}

/// Hash of the low 3 bytes of `v` (the 3 bytes at a position, little-endian).
#[inline]
fn hash3(v: u32) -> usize {
    ((v & 0x00ff_ffff).wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

/// A reusable hash-chain match finder; keeps its buffers between pages.
pub struct MatchFinder {
    /// The page, followed by `PAD` zero bytes.
    buf: Box<[u8; BUF_LEN]>,
    /// Bytes of `buf` that are the page.
    len: usize,
    head: Box<[u16; HASH_SIZE]>,
    prev: Box<[u16; PAGE_SIZE]>,
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
            len: 0,
            head: Box::new([NIL; HASH_SIZE]),
            prev: Box::new([NIL; PAGE_SIZE]),
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

    /// Adds position `i` (with hash `h`) to its chain.
    #[inline]
    fn insert(&mut self, i: usize, h: usize) {
        // `i < PAGE_SIZE`: the mask only spares the bounds check.
        self.prev[i & (PAGE_SIZE - 1)] = self.head[h];
        self.head[h] = (i + 1) as u16;
    }

    /// Adds positions `from..end` (each with 3 bytes in the page) to their
    /// chains, in order.
    #[inline]
    fn insert_run(&mut self, from: usize, end: usize) {
        let mut k = from;
        // Four at a time: one bounds check for the bytes, one for the links.
        while k + 4 <= end {
            let bytes = &self.buf[k..k + 7];
            let prev = &mut self.prev[k..k + 4];
            for (s, p) in prev.iter_mut().enumerate() {
                let h = hash3(u32::from_le_bytes(
                    bytes[s..s + 4].try_into().expect("4 bytes"),
                ));
                *p = self.head[h];
                self.head[h] = (k + s + 1) as u16;
            }
            k += 4;
        }
        // The rest (at most 3) without a loop. (The mask below only spares
        // a bounds check: k + s < end <= PAGE_SIZE.)
        let bytes = &self.buf[k..k + 6];
        for s in 0..3 {
            if k + s < end {
                let h = hash3(u32::from_le_bytes(
                    bytes[s..s + 4].try_into().expect("4 bytes"),
                ));
                self.prev[(k + s) & (PAGE_SIZE - 1)] = self.head[h];
                self.head[h] = (k + s + 1) as u16;
            }
        }
    }

    /// Adds position `i` to its chain if 3 bytes start there.
    #[inline]
    fn insert_at(&mut self, i: usize) {
        if i + MIN_MATCH <= self.len {
            let h = self.hash(i);
            self.insert(i, h);
        }
    }

    /// The 8 bytes at `i`, little-endian.
    #[inline]
    fn load8(&self, i: usize) -> u64 {
        let i = i & INDEX_MASK;
        u64::from_le_bytes(self.buf[i..i + 8].try_into().expect("8 bytes"))
    }

    /// Length of the common prefix at `a` and `b` (a < b), up to `max`.
    #[inline]
    fn common_len(&self, a: usize, b: usize, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let x = self.load8(a + n);
            let y = self.load8(b + n);
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
        // Cheap reject, one load: bytes a longer match must share with `i`.
        // Before any match, the first three (at `off` 0, masked); after a
        // match of n bytes, the four ending at byte n, the one that would
        // extend it. (A candidate passing with different first bytes only
        // costs a compare: its common length is below n.)
        let mut off = 0;
        let mut mask = 0x00ff_ffff;
        let mut key = self.load4(i) & mask;
        let mut best = (0, 0);
        if link == NIL {
            return best;
        }
        let mut left = s.max_chain;
        loop {
            let j = link as usize - 1;
            if self.load4(j + off) & mask == key {
                let n = self.common_len(j, i, max);
                if n > best.0 {
                    // n >= 3: the first three bytes matched.
                    best = (n, i - j);
                    if n >= nice {
                        break;
                    }
                    off = n - MIN_MATCH;
                    mask = u32::MAX;
                    key = self.load4(i + off);
                }
            }
            link = self.prev[j & (PAGE_SIZE - 1)];
            left -= 1;
            if link == NIL || left == 0 {
                break;
            }
        }
        best
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

    /// Fast level: greedy, each position's hash chain walked at most 8
    /// deep (one loop, everything inlined: it is the trainer's hot path).
    fn parse_greedy<S: TokenSink>(&mut self, sink: &mut S) {
        let s = Level::Fast.search();
        let n = self.len;
        // Positions below `last` have the 3 bytes a match needs. (`min` is a
        // no-op that bounds `last` for the compiler: fewer bounds checks.)
        let last = (n.min(PAGE_SIZE) + 1).saturating_sub(MIN_MATCH);
        // Every position goes into its chain first, in one pass without
        // data-dependent branches. The walk at `i` starts at `prev[i]`,
        // which links only earlier positions, newest first: the same chain
        // inserting while parsing builds, so the same tokens.
        self.insert_run(0, last);
        let mut i = 0;
        while i < last {
            let link = self.prev[i];
            // An empty chain (common) is a literal: no walk to set up.
            if link != NIL {
                let (len, dist) = self.longest(i, link, &s);
                if len >= MIN_MATCH {
                    sink.copy(len as u16, dist as u16);
                    i += len;
                    continue;
                }
            }
            sink.literal(self.buf[i]);
            i += 1;
        }
        while i < n {
            sink.literal(self.buf[i]);
            i += 1;
        }
    }

    fn parse_lazy<S: TokenSink>(&mut self, sink: &mut S) {
        let s = Level::Default.search();
        let mut i = 0;
        let mut cur = self.find_and_insert(0, &s);
        while i < self.len {
            if cur.0 < MIN_MATCH {
                sink.literal(self.buf[i]);
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
                sink.literal(self.buf[i]);
                i += 1;
                cur = next;
                continue;
            }
            sink.copy(cur.0 as u16, cur.1 as u16);
            // i + 1 was inserted while looking ahead, unless the match was nice.
            let first = if cur.0 < s.nice { i + 2 } else { i + 1 };
            for k in first..i + cur.0 {
                self.insert_at(k);
            }
            i += cur.0;
            cur = self.find_and_insert(i, &s);
        }
    }

    /// Common prefix length of the strings at `j` and `i` (j < i), known to
    /// be at least `from` (< `max`), up to `max`; and whether the string at
    /// `i` is the greater at the first byte that differs (false at `max`).
    #[inline]
    fn bt_compare(&self, j: usize, i: usize, from: usize, max: usize) -> (usize, bool) {
        let mut n = from;
        loop {
            let a = self.load8(j + n);
            let b = self.load8(i + n);
            let diff = a ^ b;
            if diff != 0 {
                let shift = diff.trailing_zeros() & !7;
                let len = n + (shift / 8) as usize;
                if len >= max {
                    return (max, false);
                }
                return (len, (b >> shift) as u8 > (a >> shift) as u8);
            }
            n += 8;
            if n >= max {
                return (max, false);
            }
        }
    }

    /// Binary-tree match finder step at `i` (libdeflate's `bt_matchfinder`):
    /// each hash bucket holds a tree of its earlier positions, ordered by
    /// the strings that start there, the most recent at the root. `i`
    /// becomes the root; the walk down visits, for every length, the
    /// nearest position whose match is at least that long (as a hash-chain
    /// walk of unbounded depth would find it, up to the cut-offs below),
    /// and pushes to `candidates` each match longer than all before it,
    /// nearest first. Visits at most `s.max_chain` nodes; at a match of
    /// `s.nice` (or `max`) bytes it stops, giving `i` that node's children.
    /// Returns the longest length seen (2 if none reaches 3).
    fn bt_advance(&mut self, i: usize, max: usize, s: &Search) -> usize {
        const KIDS_MASK: usize = 2 * PAGE_SIZE - 1;
        let nice = s.nice.min(max);
        let h = self.hash(i);
        let mut cur = std::mem::replace(&mut self.head[h], (i + 1) as u16);
        // Where the next node less than / greater than `i`'s string goes.
        let mut lt_slot = 2 * i;
        let mut gt_slot = 2 * i + 1;
        // Common prefix lengths of `i` with the last node put on each side:
        // every node below shares at least the smaller one.
        let mut lt_len = 0;
        let mut gt_len = 0;
        let mut best = MIN_MATCH - 1;
        for _ in 0..s.max_chain {
            if cur == NIL {
                break;
            }
            let j = cur as usize - 1;
            let (len, greater) = self.bt_compare(j, i, lt_len.min(gt_len), max);
            if len > best {
                best = len;
                self.candidates.push((len as u16, (i - j) as u16));
            }
            if len >= nice {
                self.kids[lt_slot & KIDS_MASK] = self.kids[(2 * j) & KIDS_MASK];
                self.kids[gt_slot & KIDS_MASK] = self.kids[(2 * j + 1) & KIDS_MASK];
                return best;
            }
            if greater {
                self.kids[lt_slot & KIDS_MASK] = cur;
                lt_slot = 2 * j + 1;
                lt_len = len;
                cur = self.kids[lt_slot & KIDS_MASK];
            } else {
                self.kids[gt_slot & KIDS_MASK] = cur;
                gt_slot = 2 * j;
                gt_len = len;
                cur = self.kids[gt_slot & KIDS_MASK];
            }
        }
        self.kids[lt_slot & KIDS_MASK] = NIL;
        self.kids[gt_slot & KIDS_MASK] = NIL;
        best
    }

    /// Shortest path from position 0 to the end, where each edge is a literal
    /// or a match priced by `costs`. Matches come from [`Self::bt_advance`]:
    /// every length of every candidate is an edge, except inside a match of
    /// the nice length (or to the end of the page): there each position
    /// offers only the rest of that match and each match found there at its
    /// full length, which keeps the work linear in long matches.
    fn parse_best(&mut self, costs: &Costs, tokens: &mut Vec<Token>) {
        let s = Level::Best.search();
        let n = self.len;
        self.cost.clear();
        self.cost.resize(n + 1, u32::MAX);
        self.step.clear();
        self.step.resize(n + 1, (0, 0));
        self.cost[0] = 0;
        let mut len_cost = [0u32; MAX_MATCH + 1];
        for (l, c) in len_cost.iter_mut().enumerate().skip(MIN_MATCH) {
            *c = costs.length(l);
        }
        // The long match being skipped: where it ends, and its distance.
        let mut skip_end = 0;
        let mut skip_dist = 0;
        for i in 0..n {
            self.candidates.clear();
            let searched = i >= skip_end;
            if i + MIN_MATCH <= n {
                let max = (n - i).min(MAX_MATCH);
                let best = self.bt_advance(i, max, &s);
                if searched && best >= s.nice.min(max) {
                    skip_end = i + best;
                    skip_dist = self.candidates.last().map_or(0, |c| c.1);
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
            if !searched {
                // Inside a long match: its rest, and each match found here
                // at its full length only.
                let rest = skip_end - i;
                if rest >= MIN_MATCH {
                    self.candidates.push((rest as u16, skip_dist));
                }
                for &(len, dist) in &self.candidates {
                    let len = len as usize;
                    let c = base
                        .saturating_add(costs.distance(dist as usize))
                        .saturating_add(len_cost[len]);
                    if c < self.cost[i + len] {
                        self.cost[i + len] = c;
                        self.step[i + len] = (len as u16, dist);
                    }
                }
                continue;
            }
            // Every length of every candidate: lengths up to a candidate's
            // own that an earlier (nearer) candidate lacks.
            let mut from_len = MIN_MATCH;
            for &(len, dist) in &self.candidates {
                let len = len as usize;
                let dcost = base.saturating_add(costs.distance(dist as usize));
                let m = len + 1 - from_len;
                let cost = &mut self.cost[i + from_len..][..m];
                let step = &mut self.step[i + from_len..][..m];
                let lc = &len_cost[from_len..][..m];
                for k in 0..m {
                    let c = dcost.saturating_add(lc[k]);
                    if c < cost[k] {
                        cost[k] = c;
                        step[k] = ((from_len + k) as u16, dist);
                    }
                }
                from_len = len + 1;
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

    /// Bits of `tokens` (and the end of block) under `costs`.
    fn parse_cost(tokens: &[Token], costs: &Costs) -> u64 {
        let bits: u64 = tokens
            .iter()
            .map(|t| match *t {
                Token::Literal(b) => costs.literal(b) as u64,
                Token::Match { length, distance } => {
                    (costs.length(length as usize) + costs.distance(distance as usize)) as u64
                }
            })
            .sum();
        bits + costs.litlen[256] as u64
    }

    /// Checks that Best round-trips `page` and costs no more than the Fast
    /// parse under the same prices.
    fn best_beats_fast(page: &[u8], costs: &Costs) {
        let mut mf = MatchFinder::new();
        let mut toks = Vec::new();
        mf.parse(page, Level::Best, Some(costs), &mut toks);
        let mut out = Vec::new();
        expand(&toks, &mut out).expect("valid distances");
        assert_eq!(out, page, "Best round-trips");
        let best = parse_cost(&toks, costs);
        mf.parse(page, Level::Fast, None, &mut toks);
        let fast = parse_cost(&toks, costs);
        assert!(best <= fast, "Best {best} bits > Fast {fast} bits");
    }

    #[test]
    #[cfg_attr(miri, ignore = "whole pages at every level are too slow under Miri")]
    fn best_is_no_costlier_than_fast_on_runs_and_periodic_pages() {
        // Runs and periods around the nice length (128) and the longest
        // match (258), where Best takes a match without searching inside
        // it; pages that end inside such a match.
        let mut pages: Vec<Vec<u8>> = vec![vec![0; 4096], vec![9; 4095], vec![1; 200]];
        for period in [
            1usize, 2, 3, 5, 8, 13, 40, 127, 128, 129, 257, 258, 259, 300,
        ] {
            let unit: Vec<u8> = (0..period).map(|k| (k * 37 % 251) as u8).collect();
            pages.push(unit.iter().cycle().take(4096).copied().collect());
        }
        let mut mixed = Vec::new();
        for (k, run) in [127usize, 128, 129, 257, 258, 259, 3, 4, 600]
            .iter()
            .enumerate()
        {
            mixed.extend(std::iter::repeat_n(k as u8, *run));
            mixed.extend_from_slice(b"header:");
            mixed.extend((0..k * 11).map(|x| (x * 7 % 13) as u8));
        }
        let copy = mixed.clone();
        mixed.extend_from_slice(&copy);
        mixed.truncate(4096);
        pages.push(mixed);
        // A period-4 run with one byte changed, then a copy across it.
        pages.push(structured_page(&[
            (1, 4, 250, 60632250711510),
            (2, 1, 222, 2856469488800610638),
        ]));
        let kernel = Costs::from_lengths(crate::Table::kernel_2024().lengths());
        let fixed = Costs::from_lengths(crate::Table::fixed().lengths());
        for page in &pages {
            best_beats_fast(page, &kernel);
            best_beats_fast(page, &fixed);
        }
    }

    /// The Fast parse as its definition reads: every position inserted,
    /// the 8 most recent earlier positions with the same hash tried, newest
    /// first, the first longest match kept, stop at 32 bytes.
    fn reference_fast(page: &[u8]) -> Vec<Token> {
        let mut buf = page.to_vec();
        buf.extend_from_slice(&[0; 4]);
        let hash = |i: usize| hash3(u32::from_le_bytes(buf[i..i + 4].try_into().unwrap()));
        let mut seen: Vec<Vec<usize>> = vec![Vec::new(); HASH_SIZE];
        let n = page.len();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < n {
            let mut best = (0, 0);
            if i + MIN_MATCH <= n {
                let max = (n - i).min(MAX_MATCH);
                for &j in seen[hash(i)].iter().rev().take(8) {
                    let m = (0..max).take_while(|&k| page[j + k] == page[i + k]).count();
                    if m >= MIN_MATCH && m > best.0 {
                        best = (m, i - j);
                        if m >= FAST_NICE.min(max) {
                            break;
                        }
                    }
                }
            }
            let step = if best.0 >= MIN_MATCH {
                toks.push(Token::Match {
                    length: best.0 as u16,
                    distance: best.1 as u16,
                });
                best.0
            } else {
                toks.push(Token::Literal(page[i]));
                1
            };
            for k in i..i + step {
                if k + MIN_MATCH <= n {
                    seen[hash(k)].push(k);
                }
            }
            i += step;
        }
        toks
    }

    #[test]
    #[cfg_attr(miri, ignore = "whole pages are too slow under Miri")]
    fn fast_parse_equals_its_definition_on_runs() {
        // Long periodic matches: deep chains of one hash, where the 8-deep
        // walk limit decides which candidate is found.
        let mut page = Vec::new();
        for period in [1usize, 2, 3, 7, 8, 40, 300] {
            let unit: Vec<u8> = (0..period).map(|k| (k * 37 % 251) as u8).collect();
            page.extend(unit.iter().cycle().take(period * 9 + 50));
            page.extend_from_slice(b"xyz");
        }
        page.truncate(PAGE_SIZE);
        assert_eq!(fast_tokens(&page), reference_fast(&page));
    }

    /// The tokens of the Fast parse of `page`.
    fn fast_tokens(page: &[u8]) -> Vec<Token> {
        let mut toks = Vec::new();
        MatchFinder::new().parse(page, Level::Fast, None, &mut toks);
        toks
    }

    /// A page built of pieces: random bytes of a small alphabet, periodic
    /// runs, and copies of earlier bytes with one byte changed: the long,
    /// overlapping, nearly equal matches a chain walk meets in memory pages.
    fn structured_page(pieces: &[(u8, usize, usize, u64)]) -> Vec<u8> {
        let mut page: Vec<u8> = Vec::new();
        for &(kind, p, len, seed) in pieces {
            let mut x = seed | 1;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
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
        fn fast_parse_equals_its_definition_on_structured_pages(
            pieces in proptest::collection::vec((0u8..3, 1usize..20, 1usize..400, any::<u64>()), 1..40)
        ) {
            let page = structured_page(&pieces);
            prop_assert_eq!(fast_tokens(&page), reference_fast(&page));
        }

        #[test]
        #[cfg_attr(miri, ignore)]
        fn fast_parse_equals_its_definition(
            page in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), 0u8..4, any::<u8>()], 0..4096)
        ) {
            prop_assert_eq!(fast_tokens(&page), reference_fast(&page));
        }

        #[test]
        #[cfg_attr(miri, ignore)]
        fn every_level_round_trips(page in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..4096)) {
            check(&page);
        }
    }

    // Best pricing no more than Fast is a quality property, not a theorem
    // (Best skips the search inside long matches), so this one runs a fixed
    // sample: 30,000 random cases passed when it was written, and CI must
    // not depend on the draw.
    proptest! {
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x6361_6e6e_6572_7931),
            ..ProptestConfig::default()
        })]
        #[test]
        #[cfg_attr(miri, ignore)]
        fn best_is_no_costlier_than_fast_on_structured_pages(
            pieces in proptest::collection::vec((0u8..3, 1usize..20, 1usize..400, any::<u64>()), 1..40)
        ) {
            let page = structured_page(&pieces);
            best_beats_fast(&page, &Costs::from_lengths(crate::Table::kernel_2024().lengths()));
        }
    }
}
